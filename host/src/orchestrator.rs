//! The orchestrator: drives the agents through a scenario, tick by tick, and decides what the
//! user sees.
//!
//! Each tick it applies the scenario's signals, resolves the user's answers, runs every agent's
//! `tick` on the same context snapshot (concurrently; results taken in catalogue order, so
//! runs are deterministic), then arbitrates the proposals that passed the crossing:
//! - a proposal already shown (same call_id, or same agent, tool, surface and signals) is a
//!   repeat and is suppressed;
//! - confirm_required calls are never run unasked: they become questions on PHONE_CARD, run
//!   only when the scenario's user confirms (held back during quiet hours). A question is
//!   bound by the host to the user's pending item it asks about (the tool's catalogue entry
//!   says how its args match one), never to what the agent's signals claim; an answer about an
//!   item runs the one question bound to it, and an answer that matches none, or several, is
//!   recorded and runs nothing. A second question about an item already asked is a repeat;
//! - novelty: each tool's catalogue entry names which signals (and, for some tools, which items
//!   of the answer) are news ([`crate::catalogue::NewsSignal`], [`ResultNews`]). A proposal
//!   whose news the user has all been told does not run (`stale`); an answer with nothing new
//!   is recorded SILENT; a card shows only the new items, most important first;
//! - news below [`INTERRUPT_IMPORTANCE_MIN`] never interrupts;
//! - in quiet hours PHONE_CARD and EARBUD_TTS become SILENT (only SILENT and WATCH at night);
//! - EARBUD_TTS only for urgent news (else WATCH);
//! - the interruption budget: per surface, a bounded number of interruptions in any
//!   [`INTERRUPTION_WINDOW_MINUTES`], except for news of [`BUDGET_EXEMPT_IMPORTANCE_MIN`] and
//!   up; speech over its budget falls back to the watch;
//! - one interruption per surface per tick (WATCH, PHONE_CARD, EARBUD_TTS): the most important
//!   news wins, then the highest priority, ties by catalogue order of agents then the agent's
//!   own order; the others are listed as not chosen (surface_busy) and may win a later tick.
//!   SILENT takes them all;
//! - what was kept back (quiet hours, the budget, minor news) waits, and a digest tells what is
//!   still untold at the end of quiet hours, every [`DIGEST_INTERVAL_MINUTES`] when the phone
//!   may interrupt, and at the end of the run.
//!
//! Every decision is written to traces.jsonl (durable, checked against trace.v1) before it is
//! reported. A chosen proposal runs as the checked call it already is. It owns these rules; it
//! must not check calls (the crossing does, through [`Host`]), know any tool (each tool's
//! catalogue entry says how it is told, asked and what confirming it changes) nor read the
//! machine's clock: time is the scenario's.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use serde::{Deserialize, Serialize};

use serde_json::Value;

use time::OffsetDateTime;

use crate::catalogue::{NewsSignal, ResultNews, Telling};
pub use crate::checkpoint::Start;
use crate::checkpoint::{self, Checkpoint, CheckpointError, RunIdentity};
use crate::envelope::Surface;
use crate::host::{Host, TraceRecordError};
use crate::limits::{
    BUDGET_EXEMPT_IMPORTANCE_MIN, DIGEST_INTERVAL_MINUTES, EARBUD_TTS_INTERRUPTIONS_PER_WINDOW_MAX,
    INTERRUPT_IMPORTANCE_MIN, INTERRUPTION_WINDOW_MINUTES, PHONE_CARD_INTERRUPTIONS_PER_WINDOW_MAX,
    TRACE_SIGNAL_CHARS_MAX, TRACE_SIGNALS_MAX, WATCH_INTERRUPTIONS_PER_WINDOW_MAX,
};
use crate::scenario::{Answer, Scenario, World};
use crate::tick::Proposal;
use crate::trace::{
    Decision, LostReason, Moved, NotChosen, Outcome, RationaleFacts, Status, Trace, TracedAnswer,
    TracedCall, digest_rationale, rationale, unplaced_answer_rationale,
};

/// Why a run stopped.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// A trace could not be recorded (not durable, or not valid trace.v1): the run stops
    /// rather than report a decision that may be lost.
    #[error("cannot record a trace: {0}")]
    Record(#[from] TraceRecordError),
    /// The data dir cannot start, resume or checkpoint this run.
    #[error(transparent)]
    Checkpoint(#[from] CheckpointError),
    /// A record of the run (a quarantine record, a trace) failed to be written: the run
    /// stops; the next start repairs the file and resumes.
    #[error("the run stopped: {0}")]
    Journal(#[from] crate::journal::JournalError),
    /// The resumed tick did not produce every trace its interrupted run had written.
    #[error(
        "the resumed run diverged: tick {tick} left {traces} trace(s) on disk it does not produce again"
    )]
    Diverged {
        /// The tick.
        tick: usize,
        /// Traces left over.
        traces: usize,
    },
}

/// What the run reports as it goes, after the record is durable.
#[derive(Debug)]
pub enum RunEvent<'a> {
    /// The run starts, or resumes.
    Started {
        /// Its id.
        run: &'a str,
        /// The tick it goes on from, when it resumes an interrupted run.
        resumed_at_tick: Option<usize>,
        /// How many ticks the run has.
        of: usize,
        /// Where the data dir's earlier run was set aside, if it was.
        set_aside: Option<&'a str>,
    },
    /// A tick is about to run.
    Tick {
        /// Its number, from 0.
        index: usize,
        /// How many ticks the run has.
        of: usize,
        /// Its time, RFC 3339 in the user's offset.
        at: &'a str,
    },
    /// A decision, already in traces.jsonl.
    Decision(&'a Trace),
}

/// Counts for the end of a run.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunSummary {
    /// The run's id (every trace carries it).
    pub run: String,
    /// The tick this process went on from, when it resumed an interrupted run.
    pub resumed_at_tick: Option<usize>,
    /// Where the data dir's earlier run was set aside (`--fresh`, or the same run finished).
    pub set_aside: Option<String>,
    /// The scenario's name.
    pub scenario: String,
    /// The seed.
    pub seed: u64,
    /// Ticks run.
    pub ticks: usize,
    /// Signals applied.
    pub signals: usize,
    /// Traces written.
    pub decisions: usize,
    /// Calls run and shown, per surface (WATCH, PHONE_CARD, EARBUD_TTS, SILENT).
    pub shown: SurfaceCounts,
    /// Questions asked.
    pub asked: usize,
    /// Questions confirmed (and run).
    pub confirmed: usize,
    /// Questions declined.
    pub declined: usize,
    /// Questions held for quiet hours.
    pub held: usize,
    /// Answers that matched no pending question (each traced; nothing ran).
    pub answers_unmatched: usize,
    /// Answers that matched more than one pending question (each traced; nothing ran).
    pub answers_ambiguous: usize,
    /// Proposals suppressed as repeats of something already shown or asked.
    pub repeats: usize,
    /// Proposals not run because the user had been told all their news already.
    pub stale: usize,
    /// Proposals kept off their surface by the interruption budget (their news stays untold).
    pub held_back: usize,
    /// Digests of what was held back (at the end of quiet hours and of the run).
    pub digests: usize,
    /// Proposals that lost their surface in their tick.
    pub not_chosen: usize,
    /// Proposals the crossing refused (each quarantined).
    pub proposals_refused: usize,
    /// Ticks that failed (each quarantined).
    pub ticks_failed: usize,
    /// Chosen calls that came back with a tool error or were refused.
    pub calls_failed: usize,
    /// Quarantine records written during the run: refused proposals, failed ticks and calls,
    /// and refused agent-to-agent calls nested inside calls that went on to succeed.
    pub quarantined: u64,
    /// Fuel burned by ticks.
    pub tick_fuel: u64,
    /// Fuel burned by the chosen calls (their agent-to-agent calls included).
    pub call_fuel: u64,
    /// Wall time of one tick of all agents (run concurrently, checks included), median over
    /// the run's ticks, in µs. Measured, so it differs run to run: never written to a trace.
    pub tick_us_median: u64,
    /// The same, 95th percentile (nearest rank).
    pub tick_us_p95: u64,
}

/// Decisions per surface.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(non_snake_case)]
pub struct SurfaceCounts {
    /// On the watch.
    pub WATCH: usize,
    /// Cards on the phone.
    pub PHONE_CARD: usize,
    /// Spoken in the earbuds.
    pub EARBUD_TTS: usize,
    /// Recorded only.
    pub SILENT: usize,
}

impl SurfaceCounts {
    fn add(&mut self, surface: Surface) {
        match surface {
            Surface::Watch => self.WATCH += 1,
            Surface::PhoneCard => self.PHONE_CARD += 1,
            Surface::EarbudTts => self.EARBUD_TTS += 1,
            Surface::Silent => self.SILENT += 1,
        }
    }
}

/// A question put to the user, waiting for an answer.
#[derive(Debug, Clone)]
struct Question {
    proposal: Proposal,
    surface: Surface,
    /// The user's item it is about (`<kind>:<id>`), as the host bound it.
    about: Option<String>,
}

/// What a run remembers between ticks (a checkpoint keeps it: [`RunState`]).
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Memory {
    /// call_ids and content keys of what was shown or asked.
    shown: BTreeSet<String>,
    /// Questions waiting for an answer, in the order asked (kept as [`SavedQuestion`]s).
    #[serde(skip)]
    pending: Vec<Question>,
    /// call_ids of questions held for quiet hours (traced once).
    held: BTreeSet<String>,
    /// call_ids of answered questions (never asked again).
    answered: BTreeSet<String>,
    /// News the user has been told, by subject: the highest level told, and when.
    told: BTreeMap<String, Told>,
    /// When each interrupting surface interrupted, oldest first (the budget's window).
    interruptions: Vec<Interruption>,
    /// Results kept from the user (quiet hours, the budget), oldest first, for the digest.
    held_back: Vec<HeldBack>,
    /// The subjects in `held_back`: they wait for the digest and are not news again before.
    kept: BTreeSet<String>,
    /// When the last digest was shown.
    #[serde(with = "time::serde::rfc3339::option")]
    last_digest: Option<OffsetDateTime>,
}

/// An interruption, for the budget.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Interruption {
    surface: Surface,
    #[serde(with = "time::serde::rfc3339")]
    at: OffsetDateTime,
}

/// What the user was told about a subject.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Told {
    /// The highest level told.
    level: u8,
    /// When it was last told.
    #[serde(with = "time::serde::rfc3339")]
    at: OffsetDateTime,
}

/// A result the user was not shown, and the news it carried.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct HeldBack {
    /// Its news subjects and their levels.
    subjects: Vec<(String, u8)>,
    /// What its surface would have shown.
    summary: String,
    /// When it was held back.
    #[serde(with = "time::serde::rfc3339")]
    at: OffsetDateTime,
}

/// A pending question as a checkpoint keeps it: the call as the agent's canonical JSON,
/// checked again by the crossing when it is read back.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct SavedQuestion {
    proposed_by: String,
    call: String,
    signals: Vec<String>,
    priority: u8,
    surface: Surface,
    about: Option<String>,
}

/// Everything a run carries from one tick to the next: what a checkpoint saves.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RunState {
    world: World,
    memory: Memory,
    pending: Vec<SavedQuestion>,
    was_quiet: bool,
    summary: RunSummary,
}

impl RunState {
    /// The state as a checkpoint's JSON.
    fn save(world: &World, memory: &Memory, was_quiet: bool, summary: &RunSummary) -> Value {
        let pending: Vec<SavedQuestion> = memory
            .pending
            .iter()
            .map(|q| SavedQuestion {
                proposed_by: q.proposal.proposed_by.to_owned(),
                call: q.proposal.call.canonical().to_owned(),
                signals: q.proposal.signals.clone(),
                priority: q.proposal.priority,
                surface: q.surface,
                about: q.about.clone(),
            })
            .collect();
        /// [`RunState`] borrowed, to write.
        #[derive(Serialize)]
        struct Saving<'a> {
            world: &'a World,
            memory: &'a Memory,
            pending: Vec<SavedQuestion>,
            was_quiet: bool,
            summary: RunSummary,
        }
        // Timings are this process's, never part of a run's record.
        let summary = RunSummary {
            tick_us_median: 0,
            tick_us_p95: 0,
            ..summary.clone()
        };
        // Strings, integers, times as RFC 3339 and JSON values: always serializes.
        serde_json::to_value(Saving {
            world,
            memory,
            pending,
            was_quiet,
            summary,
        })
        .unwrap_or_default()
    }

    /// Reads a checkpoint's state back; each pending question's call passes the crossing
    /// again (the file is input like any other).
    fn restore(
        value: Value,
        host: &Host,
        next_tick: usize,
    ) -> Result<(World, Memory, bool, RunSummary), CheckpointError> {
        let unreadable = |reason: String| CheckpointError::Unreadable { reason };
        // Every count a real run keeps is far below 2^40; a larger one is not a run's, and
        // adding to it could overflow.
        let counts_ok = value["summary"].as_object().is_some_and(|summary| {
            summary
                .values()
                .all(|v| !v.is_u64() || v.as_u64() < Some(1 << 40))
        });
        if !counts_ok || value["summary"]["ticks"].as_u64() != Some(next_tick as u64) {
            return Err(unreadable("its summary is not the run's so far".to_owned()));
        }
        let state: RunState =
            serde_json::from_value(value).map_err(|e| unreadable(format!("state: {e}")))?;
        let mut memory = state.memory;
        for saved in state.pending {
            let call =
                crate::canonical::parse_i_json(&saved.call, crate::limits::CROSSING_BYTES_MAX)
                    .map_err(|e| unreadable(format!("a pending question: {e}")))?;
            let call = host
                .crossing()
                .check_proposed_call(call)
                .map_err(|e| unreadable(format!("a pending question: {e}")))?;
            let proposed_by = crate::catalogue::agent(&saved.proposed_by)
                .ok_or_else(|| unreadable(format!("unknown agent {}", saved.proposed_by)))?
                .name;
            crate::crossing::check_own_tool(proposed_by, &call)
                .map_err(|e| unreadable(format!("a pending question: {e}")))?;
            memory.pending.push(Question {
                proposal: Proposal {
                    proposed_by,
                    call,
                    signals: saved.signals,
                    priority: saved.priority,
                },
                surface: saved.surface,
                about: saved.about,
            });
        }
        Ok((state.world, memory, state.was_quiet, state.summary))
    }
}

impl Memory {
    /// The subjects of `proposal`'s news that the user has not been told at their level, and
    /// the most important and most urgent of them. `None` when its tool names no news (the
    /// identity rule alone applies to it).
    fn fresh_news(&self, proposal: &Proposal, now: OffsetDateTime) -> Option<Fresh> {
        let rules = proposal.call.spec().news;
        match rules.is_empty() {
            true => None,
            false => Some(self.fresh_in(rules, &proposal.signals, now)),
        }
    }

    /// The news `rules` find in `signals` that the user has not been told (at `now`).
    fn fresh_in(&self, rules: &[NewsSignal], signals: &[String], now: OffsetDateTime) -> Fresh {
        let mut fresh = Fresh::default();
        for signal in signals {
            for rule in rules {
                let Some(subject) = rule.subject_of(signal) else {
                    continue;
                };
                let told = self.told.get(&subject).is_some_and(|told| {
                    let recent = rule
                        .retell_after_minutes
                        .is_none_or(|minutes| now - told.at < time::Duration::minutes(minutes));
                    told.level >= rule.level && recent
                });
                if told || self.kept.contains(&subject) {
                    continue;
                }
                fresh.importance = fresh.importance.max(rule.importance);
                fresh.urgent |= rule.urgent;
                if !fresh.subjects.iter().any(|(s, _)| *s == subject) {
                    fresh.subjects.push((subject, rule.level));
                }
            }
        }
        fresh
    }

    /// Records that the user has been told `subjects` at their levels at `now`.
    fn tell(&mut self, subjects: &[(String, u8)], now: OffsetDateTime) {
        for (subject, level) in subjects {
            let told = self.told.entry(subject.clone()).or_insert(Told {
                level: *level,
                at: now,
            });
            told.level = told.level.max(*level);
            told.at = now;
        }
    }

    /// Whether any of `subjects`, held back at `since`, has not been told since at its level.
    fn untold_since(&self, subjects: &[(String, u8)], since: OffsetDateTime) -> bool {
        subjects.iter().any(|(subject, level)| {
            self.told
                .get(subject)
                .is_none_or(|told| told.level < *level || told.at < since)
        })
    }

    /// Whether `surface` may interrupt once more at `now`: fewer interruptions than its budget
    /// in the past window.
    fn within_budget(&self, surface: Surface, now: OffsetDateTime) -> bool {
        let max = match surface {
            Surface::Watch => WATCH_INTERRUPTIONS_PER_WINDOW_MAX,
            Surface::PhoneCard => PHONE_CARD_INTERRUPTIONS_PER_WINDOW_MAX,
            Surface::EarbudTts => EARBUD_TTS_INTERRUPTIONS_PER_WINDOW_MAX,
            Surface::Silent => return true,
        };
        let since = now - time::Duration::minutes(INTERRUPTION_WINDOW_MINUTES);
        let used = self
            .interruptions
            .iter()
            .filter(|i| i.surface == surface && i.at > since)
            .count();
        used < max
    }
}

/// `result` with only the items of `news.items` the user has not been told, and those items'
/// news.
fn untold_items(
    memory: &Memory,
    news: ResultNews,
    result: &Value,
    now: OffsetDateTime,
) -> (Value, Fresh) {
    let mut fresh = Fresh::default();
    let mut kept = result.clone();
    if let Some(items) = kept.get_mut(news.items).and_then(Value::as_array_mut) {
        let mut untold: Vec<(u8, Value)> = Vec::new();
        for item in std::mem::take(items) {
            // An item's subject is told at level 0: told once is told.
            let subject = (news.subject)(&item);
            let importance = (news.importance)(&item, now);
            // Kept for the digest, it waits, unless it can no longer wait (due soon now).
            let waits = memory.kept.contains(&subject) && importance < BUDGET_EXEMPT_IMPORTANCE_MIN;
            let subject = (subject, 0);
            if memory.told.contains_key(&subject.0) || waits || fresh.subjects.contains(&subject) {
                continue;
            }
            fresh.importance = fresh.importance.max(importance);
            fresh.subjects.push(subject);
            untold.push((importance, item));
        }
        // The card leads with the item that made it important (a stable sort: in the tool's
        // order among equals).
        untold.sort_by_key(|(importance, _)| std::cmp::Reverse(*importance));
        *items = untold.into_iter().map(|(_, item)| item).collect();
    }
    (kept, fresh)
}

/// The news in a proposal that the user has not been told.
#[derive(Debug, Clone, Default)]
struct Fresh {
    /// Subjects and the level each is news at, in the order the signals name them.
    subjects: Vec<(String, u8)>,
    /// The highest importance among them (0-100).
    importance: u8,
    /// Whether any of them is urgent.
    urgent: bool,
}

/// One candidate decision of a tick.
struct Choice {
    proposal: Proposal,
    decision: Decision,
    requested: Surface,
    surface: Surface,
    beaten: Vec<NotChosen>,
    /// For a question: the item it is about.
    about: Option<String>,
    /// For a confirmed or declined question: the answer.
    answer: Option<TracedAnswer>,
    /// What it tells the user that the user had not been told (`None`: its tool names no
    /// news; questions and answers).
    fresh: Option<Fresh>,
    /// Why it is not on the surface its agent asked for, when it is not.
    moved: Option<Moved>,
}

impl Choice {
    /// Arbitration's order on a surface: the most important news first, then the agent's
    /// priority. A question's importance is its priority: it names no news, but waiting for
    /// it is what delays the user's decision.
    fn rank(&self) -> (u8, u8) {
        let importance = match self.decision {
            Decision::Asked => self.proposal.priority,
            _ => self.fresh.as_ref().map_or(0, |f| f.importance),
        };
        (importance, self.proposal.priority)
    }
}

/// Where in `pending` the questions `answer` is about are: those the host bound to the item it
/// names, of its agent and tool. One is an answer; none, or several, run nothing.
fn questions_answered(pending: &[Question], answer: &Answer) -> Vec<usize> {
    pending
        .iter()
        .enumerate()
        .filter(|(_, q)| {
            let call = q.proposal.call.call();
            q.about.as_deref() == Some(answer.signal.as_str())
                && call.agent == answer.agent
                && call.tool == answer.tool
        })
        .map(|(index, _)| index)
        .collect()
}

/// The user's pending item a question of `proposal` is about, as the host binds it: the item
/// of its tool's kind whose content the call's args match (first in the world's order). What
/// the proposing agent's signals say plays no part.
fn bind_question(proposal: &Proposal, world: &World) -> Option<String> {
    let about = proposal.call.spec().about?;
    let args = &proposal.call.call().args;
    world
        .pending(about.kind)
        .iter()
        .find(|item| (about.matches)(args, item))
        .and_then(|item| item["id"].as_str())
        .map(|id| format!("{}:{id}", about.kind))
}

/// Clears the records a resumed run expected, when the run ends however it ends.
struct Expecting<'a>(&'a crate::journal::Journal);

impl Drop for Expecting<'_> {
    fn drop(&mut self) {
        self.0.expect_nothing_more();
    }
}

/// Runs `scenario` on `host`, writing every decision to the data dir's traces.jsonl and
/// reporting it to `report` once durable. A data dir holding an unfinished run of the same
/// scenario, seed, aura and plugins goes on from its last whole tick ([`Start::Resume`]);
/// the traces then end byte-identical to a run never interrupted.
pub async fn run(
    host: &Host,
    scenario: &Scenario,
    seed: u64,
    start: Start,
    mut report: impl FnMut(RunEvent<'_>),
) -> Result<RunSummary, RunError> {
    // The day ticks every agent: admit them all now, so a host that loads on first use ticks
    // exactly the agents an eagerly loaded one would (a refused plugin is never ticked).
    host.admit_all().await;
    let agents = host.agents();
    let ticks = scenario.ticks();
    let identity = RunIdentity {
        scenario: scenario.name.clone(),
        scenario_sha256: scenario.sha256.clone(),
        seed,
        guest_seed: host.guest_seed(),
        fuel_per_ms: host.fuel_per_ms(),
        aura: env!("CARGO_PKG_VERSION").to_owned(),
        plugins: host.plugin_sources(),
    };
    let run_id = identity.id();
    let journal = host.journal();
    // However the run ends (from `begin` on), records left expected are not taken as written
    // afterwards.
    let _expecting = Expecting(journal);
    let begun = checkpoint::begin(journal, &identity, start)?;
    let quarantined_before = host.quarantined();
    let resumed = begun.resume.is_some();
    let (first_tick, mut world, mut memory, mut was_quiet, mut summary, quarantined_earlier) =
        match begun.resume {
            Some(found) => {
                if found.ticks != ticks.len() || found.next_tick > ticks.len() {
                    return Err(CheckpointError::Unreadable {
                        reason: format!(
                            "tick {} of {}, and the scenario has {}",
                            found.next_tick,
                            found.ticks,
                            ticks.len()
                        ),
                    }
                    .into());
                }
                let (world, memory, was_quiet, summary) =
                    RunState::restore(found.state, host, found.next_tick)?;
                (
                    found.next_tick,
                    world,
                    memory,
                    was_quiet,
                    summary,
                    found.quarantined,
                )
            }
            None => {
                let memory = Memory {
                    // The day starts with nothing held back: the first digest is due a
                    // digest interval in.
                    last_digest: ticks.first().copied(),
                    ..Memory::default()
                };
                let summary = RunSummary {
                    run: run_id.clone(),
                    scenario: scenario.name.clone(),
                    seed,
                    ..RunSummary::default()
                };
                (0, scenario.world(), memory, false, summary, 0)
            }
        };
    summary.resumed_at_tick = (first_tick > 0).then_some(first_tick);
    summary.set_aside = begun.set_aside;
    report(RunEvent::Started {
        run: &run_id,
        resumed_at_tick: summary.resumed_at_tick,
        of: ticks.len(),
        set_aside: summary.set_aside.as_deref(),
    });
    let checkpoint_after = |next_tick: usize,
                            world: &World,
                            memory: &Memory,
                            was_quiet: bool,
                            summary: &RunSummary|
     -> Result<(), CheckpointError> {
        let (traces, quarantine) = journal.marks();
        let checkpoint = Checkpoint {
            format: checkpoint::CHECKPOINT_FORMAT.to_owned(),
            run: run_id.clone(),
            identity: identity.clone(),
            ticks: ticks.len(),
            next_tick,
            finished: next_tick == ticks.len(),
            traces,
            quarantine,
            quarantined: quarantined_earlier
                .saturating_add(host.quarantined().saturating_sub(quarantined_before)),
            state: RunState::save(world, memory, was_quiet, summary),
        };
        checkpoint::save(journal, &checkpoint)
    };
    // A new run's first checkpoint, before it writes anything. Not when resuming, even at
    // tick 0: the checkpoint on disk already seals what came before the interrupted tick, and
    // sealing now would take the interrupted tick's records for what came before it.
    if !resumed {
        checkpoint_after(0, &world, &memory, was_quiet, &summary)?;
    }
    let mut tick_us = Vec::with_capacity(ticks.len());
    for (index, now) in ticks.iter().copied().enumerate().skip(first_tick) {
        let at = scenario.format(now);
        report(RunEvent::Tick {
            index,
            of: ticks.len(),
            at: &at,
        });
        let mut tick = TickRun {
            host,
            scenario,
            run: &run_id,
            seed,
            index,
            now,
            at: &at,
            decisions: 0,
        };
        let quiet = scenario.is_quiet(now);
        // Quiet hours are over: first what they kept back. During the day, what the budget
        // kept, every few hours when the phone may interrupt.
        let digest_due = memory
            .last_digest
            .is_none_or(|last| now - last >= time::Duration::minutes(DIGEST_INTERVAL_MINUTES));
        if (was_quiet && !quiet)
            || (!quiet
                && digest_due
                && !memory.held_back.is_empty()
                && memory.within_budget(Surface::PhoneCard, now))
        {
            tick.digest(quiet, &mut memory, &mut summary, &mut report)?;
        }
        was_quiet = quiet;
        let answers = world.advance(scenario, now);
        for answer in answers {
            tick.answer(&answer, &mut world, &mut memory, &mut summary, &mut report)
                .await?;
        }
        let context = world.context(scenario, now);
        let started = std::time::Instant::now();
        let outcomes = host.tick_all(&agents, &context).await;
        tick_us.push(u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX));
        let mut proposals = Vec::new();
        for outcome in outcomes {
            match outcome {
                Ok(outcome) => {
                    summary.tick_fuel += outcome.fuel_used;
                    summary.proposals_refused += outcome.refused.len();
                    proposals.extend(outcome.proposals);
                }
                Err(_quarantined) => summary.ticks_failed += 1,
            }
        }
        let choices = arbitrate(proposals, quiet, now, &world, &mut memory, &mut summary);
        for choice in choices {
            tick.decide(choice, &mut world, &mut memory, &mut summary, &mut report)
                .await?;
        }
        // The end of the day: what it kept back and never told.
        if index + 1 == ticks.len() {
            tick.digest(quiet, &mut memory, &mut summary, &mut report)?;
        }
        summary.ticks += 1;
        // A record that could not be written (a refusal's quarantine record) stops the run
        // here, before the checkpoint claims the tick whole.
        if let Some(failure) = journal.failure() {
            return Err(RunError::Journal(failure));
        }
        if index == first_tick && resumed {
            let (traces, quarantine) = journal.unmatched();
            if traces > 0 {
                return Err(RunError::Diverged {
                    tick: index,
                    traces,
                });
            }
            if quarantine > 0 {
                tracing::warn!(
                    tick = index,
                    records = quarantine,
                    "quarantine records of the interrupted tick were not produced again; kept"
                );
            }
            journal.expect_nothing_more();
        }
        checkpoint_after(index + 1, &world, &memory, was_quiet, &summary)?;
    }
    summary.signals = world.signals_applied();
    summary.quarantined =
        quarantined_earlier.saturating_add(host.quarantined().saturating_sub(quarantined_before));
    tick_us.sort_unstable();
    summary.tick_us_median = nearest_rank(&tick_us, 50);
    summary.tick_us_p95 = nearest_rank(&tick_us, 95);
    drop(begun.lock);
    Ok(summary)
}

/// The `percent`th percentile of sorted `values` by nearest rank; 0 when empty.
fn nearest_rank(sorted: &[u64], percent: usize) -> u64 {
    match sorted.len() {
        0 => 0,
        n => sorted[(percent * n).div_ceil(100).clamp(1, n) - 1],
    }
}

/// The surface a proposal asks for (PHONE_CARD when it names none).
fn requested_surface(proposal: &Proposal) -> Surface {
    proposal
        .call
        .call()
        .expected_surface
        .unwrap_or(Surface::PhoneCard)
}

/// The content key of a proposal: the same agent, tool, surface and signals is the same news.
fn content_key(proposal: &Proposal) -> String {
    let call = proposal.call.call();
    format!(
        "{}\n{}\n{:?}\n{}",
        call.agent,
        call.tool,
        requested_surface(proposal),
        proposal.signals.join("\n")
    )
}

/// Turns one tick's proposals (catalogue order of agents, then each agent's order) into the
/// tick's decisions, in that same order.
fn arbitrate(
    proposals: Vec<Proposal>,
    quiet: bool,
    now: OffsetDateTime,
    world: &World,
    memory: &mut Memory,
    summary: &mut RunSummary,
) -> Vec<Choice> {
    let mut choices: Vec<Choice> = Vec::new();
    // Index into `choices` of the current holder of each interrupting surface.
    let mut holder: HashMap<Surface, usize> = HashMap::new();
    let mut seen_this_tick: HashSet<String> = HashSet::new();
    for proposal in proposals {
        let call_id = proposal.call.call().call_id.clone();
        let key = content_key(&proposal);
        let about = match proposal.call.needs_confirmation() {
            true => bind_question(&proposal, world),
            false => None,
        };
        // One question per item: a second one about an item already asked, or asked this
        // tick, is a repeat (the first one asked holds the item until it is answered).
        let item_taken = about.as_ref().is_some_and(|item| {
            memory
                .pending
                .iter()
                .any(|q| q.about.as_ref() == Some(item))
                || !seen_this_tick.insert(item.clone())
        });
        let repeat = memory.shown.contains(&call_id)
            || memory.shown.contains(&key)
            || memory.answered.contains(&call_id)
            || memory
                .pending
                .iter()
                .any(|q| q.proposal.call.call().call_id == call_id)
            || !seen_this_tick.insert(call_id.clone())
            || item_taken;
        if repeat {
            summary.repeats += 1;
            continue;
        }
        // Novelty, not identity: a call whose news the user has all been told (a count that
        // moved, the same top item again) does not run at all.
        let fresh = match proposal.call.needs_confirmation() {
            true => None,
            false => memory.fresh_news(&proposal, now),
        };
        if fresh.as_ref().is_some_and(|f| f.subjects.is_empty()) {
            summary.stale += 1;
            continue;
        }
        let requested = requested_surface(&proposal);
        let (decision, surface) = match proposal.call.needs_confirmation() {
            true if quiet => {
                if !memory.held.insert(call_id) {
                    summary.repeats += 1;
                    continue;
                }
                (Decision::Held, Surface::Silent)
            }
            true => (Decision::Asked, Surface::PhoneCard),
            false => match requested {
                Surface::PhoneCard | Surface::EarbudTts if quiet => {
                    (Decision::Executed, Surface::Silent)
                }
                other => (Decision::Executed, other),
            },
        };
        let mut moved = (surface != requested).then_some(Moved::QuietHours);
        // Minor news never interrupts; the digest tells it.
        let surface = match surface {
            Surface::Silent => Surface::Silent,
            _ if fresh
                .as_ref()
                .is_some_and(|f| f.importance < INTERRUPT_IMPORTANCE_MIN) =>
            {
                moved = Some(Moved::Minor);
                Surface::Silent
            }
            other => other,
        };
        // The earbuds speak only what is urgent and new; anything else may tap the watch.
        let surface = match surface {
            Surface::EarbudTts if !fresh.as_ref().is_some_and(|f| f.urgent) => {
                moved = Some(Moved::NotUrgent);
                Surface::Watch
            }
            other => other,
        };
        // The budget: a surface that used up its interruptions for the past hour shows
        // nothing more; the news stays untold, so it is still news for the digest. Speech
        // over its budget may still tap the watch.
        let surface = match surface {
            Surface::EarbudTts
                if decision == Decision::Executed
                    && !memory.within_budget(Surface::EarbudTts, now)
                    && memory.within_budget(Surface::Watch, now) =>
            {
                moved = Some(Moved::Budget);
                Surface::Watch
            }
            other => other,
        };
        let surface = match surface {
            Surface::Silent => Surface::Silent,
            _ if decision == Decision::Executed
                && !memory.within_budget(surface, now)
                && fresh
                    .as_ref()
                    .is_none_or(|f| f.importance < BUDGET_EXEMPT_IMPORTANCE_MIN) =>
            {
                moved = Some(Moved::Budget);
                summary.held_back += 1;
                Surface::Silent
            }
            other => other,
        };
        let choice = Choice {
            proposal,
            decision,
            requested,
            surface,
            beaten: Vec::new(),
            about,
            answer: None,
            fresh,
            moved,
        };
        if surface == Surface::Silent {
            choices.push(choice);
            continue;
        }
        match holder.get(&surface).copied() {
            None => {
                holder.insert(surface, choices.len());
                choices.push(choice);
            }
            Some(at) if choice.rank() > choices[at].rank() => {
                // The newcomer takes the surface; the old holder and whatever it beat lose.
                let mut old = std::mem::replace(&mut choices[at], choice);
                let mut beaten = std::mem::take(&mut old.beaten);
                beaten.insert(0, not_chosen(&old.proposal));
                choices[at].beaten = beaten;
            }
            Some(at) => choices[at].beaten.push(not_chosen(&choice.proposal)),
        }
    }
    summary.not_chosen += choices.iter().map(|c| c.beaten.len()).sum::<usize>();
    choices
}

fn not_chosen(proposal: &Proposal) -> NotChosen {
    let call = proposal.call.call();
    NotChosen {
        call_id: call.call_id.clone(),
        agent: call.agent.clone(),
        tool: call.tool.clone(),
        priority: proposal.priority,
        reason: LostReason::SurfaceBusy,
    }
}

/// One tick's decisions as they are made.
struct TickRun<'a> {
    host: &'a Host,
    scenario: &'a Scenario,
    run: &'a str,
    seed: u64,
    index: usize,
    now: OffsetDateTime,
    at: &'a str,
    decisions: usize,
}

impl TickRun<'_> {
    /// Resolves the user's answer: it is about an item, and runs the one pending question the
    /// host bound to that item (confirm runs the call, decline drops it). An answer that
    /// matches no question, or several, runs nothing and is traced as such.
    async fn answer(
        &mut self,
        answer: &Answer,
        world: &mut World,
        memory: &mut Memory,
        summary: &mut RunSummary,
        report: &mut impl FnMut(RunEvent<'_>),
    ) -> Result<(), RunError> {
        let traced = TracedAnswer {
            agent: answer.agent.clone(),
            tool: answer.tool.clone(),
            item: answer.signal.clone(),
            confirm: answer.confirm,
        };
        let questions = questions_answered(&memory.pending, answer);
        let [found] = questions[..] else {
            match questions.len() {
                0 => summary.answers_unmatched += 1,
                _ => summary.answers_ambiguous += 1,
            }
            tracing::warn!(
                agent = %answer.agent,
                tool = %answer.tool,
                item = %crate::visible::visible(&answer.signal),
                questions = questions.len(),
                "answer matches no single pending question"
            );
            return self.record_unplaced(traced, questions.len(), summary, report);
        };
        let question = memory.pending.remove(found);
        memory
            .answered
            .insert(question.proposal.call.call().call_id.clone());
        world.answered(&answer.signal);
        let choice = Choice {
            proposal: question.proposal,
            decision: match answer.confirm {
                true => Decision::Confirmed,
                false => Decision::Declined,
            },
            requested: question.surface,
            surface: question.surface,
            beaten: Vec::new(),
            about: question.about,
            answer: Some(traced),
            fresh: None,
            moved: None,
        };
        self.decide(choice, world, memory, summary, report).await
    }

    /// Records an answer that matched `questions` pending questions (none, or several).
    fn record_unplaced(
        &mut self,
        answer: TracedAnswer,
        questions: usize,
        summary: &mut RunSummary,
        report: &mut impl FnMut(RunEvent<'_>),
    ) -> Result<(), RunError> {
        let decision = match questions {
            0 => Decision::AnswerUnmatched,
            _ => Decision::AnswerAmbiguous,
        };
        let outcome = Outcome::answer_unresolved(&answer.item, questions);
        let trace = Trace {
            signals: vec![answer.item.clone()],
            rationale: unplaced_answer_rationale(&answer, questions),
            answer: Some(answer),
            ..self.trace(decision, outcome)
        };
        self.record(trace, summary, report)
    }

    /// Gathers what was held back and is still untold on one card (SILENT in quiet hours),
    /// and counts it told.
    fn digest(
        &mut self,
        quiet: bool,
        memory: &mut Memory,
        summary: &mut RunSummary,
        report: &mut impl FnMut(RunEvent<'_>),
    ) -> Result<(), RunError> {
        let held: Vec<HeldBack> = std::mem::take(&mut memory.held_back);
        memory.kept.clear();
        let untold: Vec<HeldBack> = held
            .into_iter()
            .filter(|h| memory.untold_since(&h.subjects, h.at))
            .collect();
        if untold.is_empty() {
            return Ok(());
        }
        let mut subjects: Vec<String> = Vec::new();
        for item in &untold {
            memory.tell(&item.subjects, self.now);
            for (subject, _) in &item.subjects {
                if !subjects.contains(subject) {
                    subjects.push(subject.clone());
                }
            }
        }
        let surface = match quiet {
            true => Surface::Silent,
            false => Surface::PhoneCard,
        };
        if surface != Surface::Silent {
            memory.interruptions.push(Interruption {
                surface,
                at: self.now,
            });
        }
        memory.last_digest = Some(self.now);
        summary.shown.add(surface);
        summary.digests += 1;
        let summaries: Vec<String> = untold.into_iter().map(|h| h.summary).collect();
        let trace = Trace {
            rationale: digest_rationale(summaries.len(), subjects.len(), surface),
            signals: subjects
                .into_iter()
                .take(TRACE_SIGNALS_MAX)
                .map(|s| s.chars().take(TRACE_SIGNAL_CHARS_MAX).collect())
                .collect(),
            surface,
            ..self.trace(Decision::Digest, Outcome::digest(&summaries))
        };
        self.record(trace, summary, report)
    }

    /// The next trace of this tick, with `decision` and `outcome`, about no call: the caller
    /// fills in the rest.
    fn trace(&mut self, decision: Decision, outcome: Outcome) -> Trace {
        Trace {
            trace_id: self.next_trace_id(),
            run: self.run.to_owned(),
            scenario: self.scenario.name.clone(),
            seed: self.seed,
            tick: self.index,
            at: self.at.to_owned(),
            decision,
            call: None,
            proposed_by: None,
            about: None,
            answer: None,
            signals: Vec::new(),
            priority: 0,
            requested_surface: Surface::PhoneCard,
            surface: Surface::PhoneCard,
            rationale: String::new(),
            outcome,
            fuel_used: 0,
            not_chosen: Vec::new(),
        }
    }

    /// `tr_<tick>_<n>`, the next decision of this tick.
    fn next_trace_id(&mut self) -> String {
        let id = format!("tr_{:05}_{:03}", self.index, self.decisions);
        self.decisions += 1;
        id
    }

    /// Records a trace (checked against trace.v1, durable), then reports it.
    fn record(
        &mut self,
        trace: Trace,
        summary: &mut RunSummary,
        report: &mut impl FnMut(RunEvent<'_>),
    ) -> Result<(), RunError> {
        self.host.record_trace(&trace)?;
        summary.decisions += 1;
        report(RunEvent::Decision(&trace));
        Ok(())
    }

    /// Carries out one decision, records its trace, then reports it.
    async fn decide(
        &mut self,
        choice: Choice,
        world: &mut World,
        memory: &mut Memory,
        summary: &mut RunSummary,
        report: &mut impl FnMut(RunEvent<'_>),
    ) -> Result<(), RunError> {
        let Choice {
            proposal,
            decision,
            requested,
            mut surface,
            beaten,
            about,
            answer,
            mut fresh,
            mut moved,
        } = choice;
        let call = proposal.call.call();
        let spec = proposal.call.spec();
        // Texts for the user: in their offset, about their calendar as it is now.
        let telling = Telling {
            clock: Some((self.scenario.offset(), self.now)),
            events: world.events(),
        };
        let (outcome, fuel_used) = match decision {
            Decision::Executed | Decision::Confirmed => {
                memory.shown.insert(call.call_id.clone());
                memory.shown.insert(content_key(&proposal));
                let (outcome, fuel_used, result) = self.execute(&proposal, &telling).await;
                // A tool whose news is in its answer: what the answer tells that the user
                // has not been told. Nothing: recorded, not shown.
                let mut outcome = outcome;
                if let (Some(news), Some(result)) = (spec.news_in_result, &result) {
                    let (told, untold) = untold_items(memory, news, result, self.now);
                    if untold.subjects.is_empty() {
                        if surface != Surface::Silent {
                            surface = Surface::Silent;
                            moved = Some(Moved::NothingNew);
                        }
                    } else {
                        if untold.importance < INTERRUPT_IMPORTANCE_MIN
                            && surface != Surface::Silent
                        {
                            surface = Surface::Silent;
                            moved = Some(Moved::Minor);
                        }
                        // The card tells only what is new, leading with it.
                        outcome = Outcome::ok(spec, &told, &telling);
                    }
                    let fresh = fresh.get_or_insert_with(Fresh::default);
                    fresh.importance = fresh.importance.max(untold.importance);
                    for subject in untold.subjects {
                        if !fresh.subjects.contains(&subject) {
                            fresh.subjects.push(subject);
                        }
                    }
                }
                if outcome.status == Status::Ok {
                    summary.shown.add(surface);
                    // Told: shown on an interrupting surface, or recorded silently because
                    // its agent asked for no more. Moved to SILENT (quiet hours, budget), it
                    // is still news.
                    let told = surface != Surface::Silent || requested == Surface::Silent;
                    match fresh.as_ref() {
                        Some(fresh) if told => memory.tell(&fresh.subjects, self.now),
                        Some(fresh) if !fresh.subjects.is_empty() => {
                            memory
                                .kept
                                .extend(fresh.subjects.iter().map(|(s, _)| s.clone()));
                            memory.held_back.push(HeldBack {
                                subjects: fresh.subjects.clone(),
                                summary: outcome.summary.clone(),
                                at: self.now,
                            });
                        }
                        Some(_) => {}
                        None => {}
                    }
                    if surface != Surface::Silent {
                        memory.interruptions.push(Interruption {
                            surface,
                            at: self.now,
                        });
                    }
                } else {
                    summary.calls_failed += 1;
                }
                summary.call_fuel += fuel_used;
                if decision == Decision::Confirmed {
                    summary.confirmed += 1;
                    let effect = spec.on_confirm.zip(result).and_then(|(f, r)| f(&r));
                    if let Some(effect) = effect {
                        world.apply(effect);
                    }
                }
                (outcome, fuel_used)
            }
            Decision::Asked => {
                memory.pending.push(Question {
                    proposal: proposal.clone(),
                    surface,
                    about: about.clone(),
                });
                summary.asked += 1;
                let question = spec.question_text(&call.agent, &call.args, &telling);
                (Outcome::pending(question), 0)
            }
            Decision::Declined => {
                summary.declined += 1;
                (Outcome::declined(), 0)
            }
            Decision::Held => {
                summary.held += 1;
                (Outcome::held(), 0)
            }
            // Answers that reach no single question never come here (`record_unplaced`), nor
            // digests (`digest`).
            Decision::AnswerUnmatched | Decision::AnswerAmbiguous => {
                (Outcome::answer_unresolved(&call.tool, 0), 0)
            }
            Decision::Digest => (Outcome::digest(&[]), 0),
        };
        let rationale = rationale(&RationaleFacts {
            lead: spec.rationale_lead,
            agent: &call.agent,
            tool: &call.tool,
            signals: &proposal.signals,
            priority: proposal.priority,
            decision,
            requested,
            surface,
            beaten: beaten.len(),
            moved,
            news: &fresh
                .as_ref()
                .map(|f| {
                    f.subjects
                        .iter()
                        .map(|(s, _)| s.clone())
                        .collect::<Vec<_>>()
                })
                .unwrap_or_default(),
        });
        let trace = Trace {
            call: Some(TracedCall {
                call_id: call.call_id.clone(),
                agent: call.agent.clone(),
                tool: call.tool.clone(),
                confirm_required: proposal.call.needs_confirmation(),
            }),
            proposed_by: Some(proposal.proposed_by.to_owned()),
            about,
            answer,
            signals: proposal.signals.clone(),
            priority: proposal.priority,
            requested_surface: requested,
            surface,
            rationale,
            fuel_used,
            not_chosen: beaten,
            ..self.trace(decision, outcome)
        };
        self.record(trace, summary, report)
    }

    /// Runs a chosen call: it passed the crossing when it was proposed, so it runs as it is
    /// (its answer is checked now). The outcome, the fuel burned, and the result if any.
    async fn execute(
        &self,
        proposal: &Proposal,
        telling: &Telling<'_>,
    ) -> (Outcome, u64, Option<Value>) {
        let call = proposal.call.call();
        match self.host.dispatch(&proposal.call).await {
            Ok(result) => match (result.result, result.error) {
                (Some(value), _) => {
                    let outcome = Outcome::ok(proposal.call.spec(), &value, telling);
                    (outcome, result.fuel_used, Some(value))
                }
                (None, error) => {
                    let (kind, message) =
                        error.map_or((String::new(), String::new()), |e| (e.kind, e.message));
                    let outcome = Outcome::tool_error(&call.agent, &call.tool, kind, &message);
                    (outcome, result.fuel_used, None)
                }
            },
            Err(refused) => (Outcome::refused(&refused.error), refused.fuel_used, None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pending schedule_event question with `call_id` and `title`, bound to `about`.
    fn question(call_id: &str, title: &str, about: Option<&str>) -> Question {
        let crossing = crate::crossing::Crossing::new().unwrap();
        let envelope = serde_json::json!({"call_id": call_id, "agent": "calendar",
            "tool": "schedule_event", "args": {"event": {"title": title,
                "start": "2026-11-23T14:00:00+01:00", "end": "2026-11-23T14:45:00+01:00"}},
            "ts": "2026-11-23T08:00:00Z", "confirm_required": true});
        Question {
            proposal: Proposal {
                proposed_by: "calendar",
                call: crossing.check_call(&envelope.to_string()).unwrap(),
                signals: vec!["invitation:i1".into()],
                priority: 60,
            },
            surface: Surface::PhoneCard,
            about: about.map(str::to_owned),
        }
    }

    fn yes(item: &str) -> Answer {
        Answer {
            agent: "calendar".into(),
            tool: "schedule_event".into(),
            signal: item.into(),
            confirm: true,
        }
    }

    #[test]
    fn an_answer_reaches_the_question_bound_to_its_item_and_not_the_ones_claiming_it() {
        // The first two carry i1's signal but are not bound to it (another title: the host
        // found no pending invitation they schedule); the third is.
        let pending = [
            question("t_forged0001", "Wire money", None),
            question("t_other00001", "Lunch", Some("invitation:i2")),
            question("t_real000001", "Dentist", Some("invitation:i1")),
        ];
        assert_eq!(questions_answered(&pending, &yes("invitation:i1")), [2]);
        assert_eq!(
            questions_answered(&pending, &yes("invitation:i9")),
            Vec::<usize>::new()
        );
        let mut other_tool = yes("invitation:i1");
        other_tool.tool = "find_free_slots".into();
        assert!(questions_answered(&pending, &other_tool).is_empty());
        // Two bound to the same item (the orchestrator asks only one, but the rule does not
        // lean on that): ambiguous, so nothing runs.
        let twice = [
            question("t_real000001", "Dentist", Some("invitation:i1")),
            question("t_real000002", "Dentist", Some("invitation:i1")),
        ];
        assert_eq!(questions_answered(&twice, &yes("invitation:i1")), [0, 1]);
    }

    /// 2026-11-23 at `hh:mm` UTC.
    fn at(hh: u8, mm: u8) -> OffsetDateTime {
        time::macros::datetime!(2026-11-23 00:00 UTC)
            + time::Duration::hours(i64::from(hh))
            + time::Duration::minutes(i64::from(mm))
    }

    fn signals(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn a_budget_is_news_when_it_first_shows_and_again_only_when_it_rises() {
        let rules = crate::catalogue::tool("finance", "budget_status")
            .unwrap()
            .news;
        let mut memory = Memory::default();
        // at_risk: level 1, importance 35 (catalogue/finance.rs); `top:` is no rule's kind.
        let fresh = memory.fresh_in(rules, &signals(&["at_risk:dining/EUR", "top:x"]), at(9, 0));
        assert_eq!(fresh.subjects, [("budget:dining/EUR".to_owned(), 1)]);
        assert_eq!((fresh.importance, fresh.urgent), (35, false));
        memory.tell(&fresh.subjects, at(9, 0));
        // Told at 1: the same state is no news, a count that moved neither.
        let again = memory.fresh_in(rules, &signals(&["at_risk:dining/EUR"]), at(12, 0));
        assert!(again.subjects.is_empty());
        // Over: level 2 > 1, news at importance 60.
        let over = memory.fresh_in(rules, &signals(&["over:dining/EUR"]), at(13, 30));
        assert_eq!(over.subjects, [("budget:dining/EUR".to_owned(), 2)]);
        assert_eq!(over.importance, 60);
        memory.tell(&over.subjects, at(13, 30));
        // Back at risk after over: lower than told, no news; another budget is.
        let both = signals(&["at_risk:dining/EUR", "at_risk:shopping/EUR"]);
        let fresh = memory.fresh_in(rules, &both, at(14, 0));
        assert_eq!(fresh.subjects, [("budget:shopping/EUR".to_owned(), 1)]);
        // Kept for the digest, it waits for the digest.
        memory.kept.insert("budget:shopping/EUR".to_owned());
        assert!(
            memory
                .fresh_in(rules, &both, at(14, 15))
                .subjects
                .is_empty()
        );
    }

    #[test]
    fn a_state_is_told_again_only_an_hour_later() {
        let rules = crate::catalogue::tool("wellness", "stress_score")
            .unwrap()
            .news;
        let mut memory = Memory::default();
        let high = signals(&["stress:82", "level:high"]);
        let fresh = memory.fresh_in(rules, &high, at(14, 0));
        assert_eq!(fresh.subjects, [("stress".to_owned(), 2)]);
        memory.tell(&fresh.subjects, at(14, 0));
        // retell_after(60): 59 minutes later no news, 60 minutes later news again.
        assert!(
            memory
                .fresh_in(rules, &high, at(14, 59))
                .subjects
                .is_empty()
        );
        assert_eq!(memory.fresh_in(rules, &high, at(15, 0)).subjects.len(), 1);
        // A low level is no rule's value: never news.
        let low = signals(&["stress:10", "level:low"]);
        assert!(memory.fresh_in(rules, &low, at(9, 0)).subjects.is_empty());
    }

    #[test]
    fn the_budget_counts_the_past_hour_per_surface() {
        let mut memory = Memory {
            interruptions: vec![
                Interruption {
                    surface: Surface::PhoneCard,
                    at: at(10, 0),
                },
                Interruption {
                    surface: Surface::Watch,
                    at: at(10, 10),
                },
                Interruption {
                    surface: Surface::PhoneCard,
                    at: at(10, 30),
                },
            ],
            ..Memory::default()
        };
        // PHONE_CARD allows 2 in any 60 minutes: both count at 10:59; at 11:00 the one of
        // 10:00 is out of the window (exactly 60 minutes old).
        assert!(!memory.within_budget(Surface::PhoneCard, at(10, 59)));
        assert!(memory.within_budget(Surface::PhoneCard, at(11, 0)));
        // WATCH allows 3; one was used. SILENT has no budget.
        assert!(memory.within_budget(Surface::Watch, at(10, 59)));
        assert!(memory.within_budget(Surface::Silent, at(10, 59)));
        // EARBUD_TTS allows 1, none used.
        memory.interruptions.push(Interruption {
            surface: Surface::EarbudTts,
            at: at(10, 45),
        });
        assert!(!memory.within_budget(Surface::EarbudTts, at(11, 44)));
        assert!(memory.within_budget(Surface::EarbudTts, at(11, 45)));
    }

    #[test]
    fn a_card_keeps_only_the_untold_items_and_leads_with_the_most_important() {
        let news = crate::catalogue::tool("finance", "detect_anomalies")
            .unwrap()
            .news_in_result
            .unwrap();
        let flagged = |id: &str, reason: &str| serde_json::json!({"id": id, "reasons": [reason]});
        let result = serde_json::json!({"flagged": [flagged("tx-dup", "duplicate"),
            flagged("tx-big", "unusually_large")], "evaluated": 9});
        let mut memory = Memory::default();
        // Both untold: unusually_large (90) before duplicate (65).
        let (card, fresh) = untold_items(&memory, news, &result, at(20, 45));
        assert_eq!(card["flagged"][0]["id"], "tx-big");
        assert_eq!(card["flagged"][1]["id"], "tx-dup");
        assert_eq!(fresh.importance, 90);
        // The duplicate was told at 17:45: only the large charge is on the card.
        memory.tell(&[("transaction:tx-dup".to_owned(), 0)], at(17, 45));
        let (card, fresh) = untold_items(&memory, news, &result, at(20, 45));
        assert_eq!(
            card["flagged"],
            serde_json::json!([flagged("tx-big", "unusually_large")])
        );
        assert_eq!(fresh.subjects, [("transaction:tx-big".to_owned(), 0)]);
        assert_eq!(card["evaluated"], 9, "the rest of the result is kept");
    }

    #[test]
    fn percentiles_by_nearest_rank() {
        let values: Vec<u64> = (1..=20).collect();
        // Rank ceil(0.5 · 20) = 10 → 10; rank ceil(0.95 · 20) = 19 → 19.
        assert_eq!(nearest_rank(&values, 50), 10);
        assert_eq!(nearest_rank(&values, 95), 19);
        assert_eq!(nearest_rank(&[7], 95), 7);
        assert_eq!(nearest_rank(&[], 50), 0);
    }
}
