//! Digests: what was held back and is still news, told on one card, most important first.
//!
//! It owns when a digest is told rather than kept (the phone free, not quiet hours), what it
//! leaves out (told since, or over), its words (a lead that says why it comes now, then each
//! item's line), and the watch's release of what waited only for the watch (one line). It must
//! not decide when a digest is due (the day's tick does) nor hold anything back (the
//! decisions do).

use time::OffsetDateTime;

use aura_contract::envelope::Surface;
use aura_contract::limits::{TRACE_SIGNAL_CHARS_MAX, TRACE_SIGNALS_MAX};
use aura_contract::trace::{Decision, Outcome, Trace, digest_rationale};

use super::decide::TickRun;
use super::memory::{HeldBack, Interruption, Memory, Wait};
use super::summary::RunSummary;
use super::{RunError, RunEvent};

/// Which digest: its lead words say why it comes now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum DigestKind {
    /// The morning briefing: the end of quiet hours, or the first tick of the day.
    Morning,
    /// What waited only for the phone (the budget, a busy tick) leaves at the first tick the
    /// phone is free.
    Freed,
    /// What waited for the digest, every few hours.
    Interval,
    /// The end of the run.
    End,
}

impl DigestKind {
    fn lead(self, delivered: bool) -> &'static str {
        match (self, delivered) {
            (_, false) => "Kept for later",
            (Self::Morning, true) => "Good morning",
            (Self::Freed, true) => "While you were busy",
            (Self::Interval, true) => "In case you missed it",
            (Self::End, true) => "Before the day ends",
        }
    }
}

/// The held-back items that are still news at `now`: not told since they were held, and not
/// over; the most important first, among equals the oldest.
fn still_news(memory: &Memory, held: Vec<HeldBack>, now: OffsetDateTime) -> Vec<HeldBack> {
    let mut untold: Vec<HeldBack> = held
        .into_iter()
        .filter(|h| memory.untold_since(&h.subjects, h.at))
        .filter(|h| h.until.is_none_or(|until| now < until))
        .collect();
    untold.sort_by_key(|h| std::cmp::Reverse(h.importance));
    untold
}

/// The subjects of `items`, each once, in order.
fn subjects_of(items: &[HeldBack]) -> Vec<String> {
    let mut subjects: Vec<String> = Vec::new();
    for item in items {
        for (subject, _) in &item.subjects {
            if !subjects.contains(subject) {
                subjects.push(subject.clone());
            }
        }
    }
    subjects
}

impl TickRun<'_> {
    /// Gathers what was held back and is still news on one card, most important first: left
    /// out is what was told since, or is over (a state past its retell window, a clash that
    /// has ended). On the phone it tells them all; `quiet` (the run ends in quiet hours), or
    /// the phone already used this tick, records them SILENT and they stay untold. Whether it
    /// told anything.
    pub(super) fn digest(
        &mut self,
        kind: DigestKind,
        quiet: bool,
        memory: &mut Memory,
        summary: &mut RunSummary,
        report: &mut impl FnMut(RunEvent<'_>),
    ) -> Result<bool, RunError> {
        let now = self.now;
        let held = std::mem::take(&mut memory.held_back);
        let untold = still_news(memory, held, now);
        if untold.is_empty() {
            memory.kept.clear();
            return Ok(false);
        }
        let delivered = !quiet && !self.taken.contains(&Surface::PhoneCard);
        let surface = match delivered {
            true => Surface::PhoneCard,
            false => Surface::Silent,
        };
        let subjects = subjects_of(&untold);
        let summaries: Vec<String> = untold.iter().map(|h| h.summary.clone()).collect();
        if delivered {
            for item in &untold {
                memory.tell(&item.subjects, now);
            }
            memory.kept.clear();
            memory.interruptions.push(Interruption { surface, at: now });
            memory.last_digest = Some(now);
            self.taken.push(surface);
        } else {
            // Recorded, not told: it waits for the next time the phone may show it.
            memory.held_back = untold;
        }
        let outcome = Outcome::digest(kind.lead(delivered), &summaries);
        self.record_digest(surface, subjects, summaries.len(), outcome, summary, report)?;
        Ok(delivered)
    }

    /// Tells on `surface` (the watch) what waited only for it, now that it is free: the most
    /// important item's line, and how many more. Those items are told; the rest still wait.
    pub(super) fn release(
        &mut self,
        surface: Surface,
        memory: &mut Memory,
        summary: &mut RunSummary,
        report: &mut impl FnMut(RunEvent<'_>),
    ) -> Result<(), RunError> {
        let now = self.now;
        let (waiting, rest): (Vec<HeldBack>, Vec<HeldBack>) = std::mem::take(&mut memory.held_back)
            .into_iter()
            .partition(|h| h.waits == Wait::Surface && h.wanted == surface);
        memory.held_back = rest;
        let untold = still_news(memory, waiting, now);
        for item in &untold {
            for (subject, _) in &item.subjects {
                memory.kept.remove(subject);
            }
        }
        if untold.is_empty() {
            return Ok(());
        }
        for item in &untold {
            memory.tell(&item.subjects, now);
        }
        memory.interruptions.push(Interruption { surface, at: now });
        self.taken.push(surface);
        let subjects = subjects_of(&untold);
        let summaries: Vec<String> = untold.iter().map(|h| h.summary.clone()).collect();
        let outcome = Outcome::line(&summaries);
        self.record_digest(surface, subjects, summaries.len(), outcome, summary, report)
    }

    /// Records a digest of `items` results about `subjects` on `surface`.
    fn record_digest(
        &mut self,
        surface: Surface,
        subjects: Vec<String>,
        items: usize,
        outcome: Outcome,
        summary: &mut RunSummary,
        report: &mut impl FnMut(RunEvent<'_>),
    ) -> Result<(), RunError> {
        summary.shown.add(surface);
        summary.digests += 1;
        let trace = Trace {
            rationale: digest_rationale(items, subjects.len(), surface),
            signals: subjects
                .into_iter()
                .take(TRACE_SIGNALS_MAX)
                .map(|s| s.chars().take(TRACE_SIGNAL_CHARS_MAX).collect())
                .collect(),
            surface,
            ..self.trace(Decision::Digest, outcome)
        };
        self.record(trace, summary, report)
    }
}
