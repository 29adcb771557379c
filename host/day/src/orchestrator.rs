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
//!   of the answer) are news ([`aura_contract::catalogue::NewsSignal`], [`ResultNews`]). A proposal
//!   whose news the user has all been told does not run (`stale`); an answer with nothing new
//!   is recorded SILENT; a card shows only the new items, most important first;
//! - news below [`INTERRUPT_IMPORTANCE_MIN`] never interrupts;
//! - in quiet hours PHONE_CARD and EARBUD_TTS become SILENT (only SILENT and WATCH at night);
//! - EARBUD_TTS only for urgent news (else WATCH);
//! - the interruption budget: per surface, a bounded number of interruptions in any
//!   [`INTERRUPTION_WINDOW_MINUTES`], except for news of [`BUDGET_EXEMPT_IMPORTANCE_MIN`] and
//!   up; speech over its budget falls back to the watch;
//! - one interruption per surface per tick (WATCH, PHONE_CARD, EARBUD_TTS), whatever the
//!   decision (a call, a question, the outcome of an answer, a digest): the person's answers
//!   go first, then a digest that is due keeps the phone for itself; among the proposals the
//!   most important news wins, then the highest priority, ties by catalogue order of agents
//!   then the agent's own order; the others are listed as not chosen (surface_busy), a
//!   question waits for a later tick and other news is kept. SILENT takes them all;
//! - told means delivered: news counts as told only once shown on an interrupting surface (or
//!   answered). What was recorded SILENT (quiet hours, the budget, a busy tick, too minor, or
//!   its agent's wish) waits: the morning briefing (the end of quiet hours, or a day's first
//!   tick) tells what the night kept back, most important first; what waited only for its
//!   surface leaves at the first tick the phone is free; the rest every
//!   [`DIGEST_INTERVAL_MINUTES`], and at the end of the run. A digest tells the latest state
//!   and leaves out what is over (a state past its retell window, a clash that has ended);
//! - every text is in the person's words (each tool's catalogue entry: its card, and its
//!   headline for the watch and the earbuds, cut to a watch line and a spoken sentence).
//!
//! Every decision is written to traces.jsonl (durable, checked against trace.v1) before it is
//! reported. A chosen proposal runs as the checked call it already is. It owns these rules; it
//! must not check calls (the crossing does, through [`Host`]), know any tool (each tool's
//! catalogue entry says how it is told, asked and what confirming it changes) nor read the
//! machine's clock: time is the scenario's.

mod arbitrate;
mod carry;
mod decide;
mod digest;
mod memory;
mod questions;
mod resume;
mod state;
mod summary;

use time::OffsetDateTime;

use aura_contract::envelope::Surface;
use aura_contract::limits::{BRIEFING_UNTIL_HOUR, DIGEST_INTERVAL_MINUTES};
use aura_contract::trace::Trace;
use aura_host::journal::{Journal, JournalError};
use aura_host::{Host, TraceRecordError};

pub use crate::checkpoint::Start;
use crate::checkpoint::{self, CheckpointError, DayInput, RunIdentity};
use crate::scenario::{Answer, Reply, Scenario, ScenarioError, World};
use arbitrate::{Moment, arbitrate};
use carry::Carried;
pub use carry::Carry;
use decide::TickRun;
use digest::DigestKind;
use memory::Memory;
use state::RunState;
use summary::nearest_rank;
pub use summary::{RunSummary, SurfaceCounts};

/// Why a run stopped.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// A trace could not be recorded (not durable, or not valid trace.v1): the run stops
    /// rather than report a decision that may be lost.
    #[error("cannot record a trace")]
    Record(#[from] TraceRecordError),
    /// The data dir cannot start, resume or checkpoint this run.
    #[error(transparent)]
    Checkpoint(#[from] CheckpointError),
    /// A record of the run (a quarantine record, a trace) failed to be written: the run
    /// stops; the next start repairs the file and resumes.
    #[error("the run stopped")]
    Journal(#[from] JournalError),
    /// The scenario cannot be run (its signals and setup disagree with the run asked for).
    #[error(transparent)]
    Scenario(#[from] crate::scenario::ScenarioError),
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
        /// How many ticks the run has (a live session: not known).
        of: Option<usize>,
        /// Where the data dir's earlier run was set aside, if it was.
        set_aside: Option<&'a str>,
    },
    /// A tick is about to run.
    Tick {
        /// Its number, from 0.
        index: usize,
        /// How many ticks the run has (a live session: not known).
        of: Option<usize>,
        /// Its time, RFC 3339 in the user's offset.
        at: &'a str,
    },
    /// A decision, already in traces.jsonl.
    Decision(&'a Trace),
}

/// Clears the records a resumed run expected, when the run ends however it ends.
struct Expecting<'a>(&'a Journal);

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
    report: impl FnMut(RunEvent<'_>),
) -> Result<RunSummary, RunError> {
    run_carrying(host, scenario, seed, start, report)
        .await
        .map(|(summary, _)| summary)
}

/// [`run`], and what the day carries into the next once its last tick ran: the `initial` of
/// a scenario that goes on from there ([`Day::carry`]).
pub async fn run_carrying(
    host: &Host,
    scenario: &Scenario,
    seed: u64,
    start: Start,
    mut report: impl FnMut(RunEvent<'_>),
) -> Result<(RunSummary, Carry), RunError> {
    let ticks = scenario.ticks();
    let input = DayInput::Scenario(scenario.sha256.clone());
    let (mut day, lock) = Day::begin(
        host,
        scenario.clone(),
        seed,
        input,
        start,
        Some(ticks.len()),
    )
    .await?;
    day.started(&mut report);
    let agents = host.agents();
    let closes = !scenario.unfinished;
    for (index, now) in ticks.iter().enumerate().skip(day.next_tick) {
        let last = closes && index + 1 == ticks.len();
        day.tick(*now, last, &agents, &mut report).await?;
    }
    let carry = day.carry();
    let summary = day.finish();
    drop(lock);
    Ok((summary, carry))
}

/// A run between its ticks: what it is, where it stands, and what it carries to the next tick.
/// `aura run` moves it through a scenario's ticks; a live session through its clock's.
pub(crate) struct Day<'a> {
    host: &'a Host,
    /// The setup and the signals so far (a live session adds them as they come).
    pub(crate) scenario: Scenario,
    seed: u64,
    identity: RunIdentity,
    input: DayInput,
    run_id: String,
    /// The ticks a scenario's run has; `None`: a live session, which has as many as it lives.
    ticks: Option<usize>,
    /// The next tick's number.
    pub(crate) next_tick: usize,
    /// When the last tick ran.
    pub(crate) last_tick: Option<OffsetDateTime>,
    /// Whether the day's last tick ran (its closing digest told).
    ended: bool,
    /// The tick this process went on from.
    first_tick: usize,
    /// Whether it resumed an interrupted run.
    resumed: bool,
    world: World,
    memory: Memory,
    /// Whether the last tick was in quiet hours.
    was_quiet: bool,
    /// When the day before this run's first tick last ticked, if the run was carried from it.
    carried_last_tick: Option<OffsetDateTime>,
    summary: RunSummary,
    /// The host's quarantine count when this process started the run, and the count the
    /// interrupted run had reached.
    quarantined_before: u64,
    quarantined_earlier: u64,
    /// Wall time of each tick of all agents, in µs.
    tick_us: Vec<u64>,
    /// Records left expected are not taken as written once the run ends however it ends.
    _expecting: Expecting<'a>,
}

impl<'a> Day<'a> {
    /// Starts or resumes the run of `scenario` (its setup, and for a scenario's run its day)
    /// on `host`'s data dir: the run's identity, the checkpoint to go on from, the state it
    /// restores. `ticks`: how many a scenario's run has (`None` for a live session). The lock
    /// returned keeps other runs out of the data dir until dropped.
    pub(crate) async fn begin(
        host: &'a Host,
        scenario: Scenario,
        seed: u64,
        input: DayInput,
        start: Start,
        ticks: Option<usize>,
    ) -> Result<(Self, checkpoint::RunLock), RunError> {
        // The day ticks every agent: admit them all now, so a host that loads on first use
        // ticks exactly the agents an eagerly loaded one would (a refused plugin is never
        // ticked).
        host.admit_all().await;
        let identity = RunIdentity {
            scenario: scenario.name.clone(),
            setup_sha256: scenario.setup_sha256.clone(),
            seed,
            guest_seed: host.guest_seed(),
            fuel_per_ms: host.fuel_per_ms(),
            aura: env!("CARGO_PKG_VERSION").to_owned(),
            plugins: host.plugin_sources(),
        };
        let journal = host.journal();
        // However the run ends (from `begin` on), records left expected are not taken as
        // written afterwards.
        let expecting = Expecting(journal);
        let begun = checkpoint::begin(journal, &identity, &input, start)?;
        let run_id = identity.id();
        let mut day = Day {
            host,
            seed,
            identity,
            input,
            run_id: run_id.clone(),
            ticks,
            next_tick: 0,
            last_tick: None,
            ended: false,
            first_tick: 0,
            resumed: begun.resume.is_some(),
            world: scenario.world(),
            memory: Memory {
                // The day starts with nothing held back: the first digest is due a digest
                // interval in.
                last_digest: Some(scenario.start),
                ..Memory::default()
            },
            was_quiet: false,
            carried_last_tick: None,
            summary: RunSummary {
                run: run_id,
                scenario: scenario.name.clone(),
                seed,
                set_aside: begun.set_aside,
                ..RunSummary::default()
            },
            quarantined_before: host.quarantined(),
            quarantined_earlier: 0,
            tick_us: Vec::new(),
            scenario,
            _expecting: expecting,
        };
        // A day carried from the one before starts with what that one remembered.
        if let Some(carried) = day.scenario.carried_memory() {
            let carried = Carried::restore(carried, host).map_err(|reason| {
                ScenarioError::Inconsistent(format!("its initial memory: {reason}"))
            })?;
            (day.memory, day.was_quiet, day.carried_last_tick) =
                (carried.memory, carried.was_quiet, carried.last_tick);
        }
        if let Some(found) = begun.resume {
            day.restore(found)?;
        }
        day.summary.resumed_at_tick = (day.first_tick > 0).then_some(day.first_tick);
        // A new run's first checkpoint, before it writes anything. Not when resuming, even at
        // tick 0: the checkpoint on disk already seals what came before the interrupted tick,
        // and sealing now would take the interrupted tick's records for what came before it.
        if !day.resumed {
            day.checkpoint()?;
        }
        Ok((day, begun.lock))
    }

    /// Reports that the run starts, or resumes.
    pub(crate) fn started(&self, report: &mut impl FnMut(RunEvent<'_>)) {
        report(RunEvent::Started {
            run: &self.run_id,
            resumed_at_tick: self.summary.resumed_at_tick,
            of: self.ticks,
            set_aside: self.summary.set_aside.as_deref(),
        });
    }

    /// Traces recorded so far (the next decision's place among the run's).
    pub(crate) fn decisions(&self) -> usize {
        self.summary.decisions
    }

    /// The call_ids of the pending questions `answer` reaches now (one is an answer).
    pub(crate) fn reaches(&self, answer: &Answer) -> Vec<String> {
        questions::questions_answered(&self.memory.pending, answer)
            .into_iter()
            .map(|index| {
                self.memory.pending[index]
                    .proposal
                    .call
                    .call()
                    .call_id
                    .clone()
            })
            .collect()
    }

    /// The questions answered yes or no by signals taken and not applied yet.
    pub(crate) fn answered_unapplied(&self) -> std::collections::BTreeSet<String> {
        self.scenario.signals[self
            .world
            .signals_applied()
            .min(self.scenario.signals.len())..]
            .iter()
            .filter(|signal| signal.kind == "answer")
            .map(|signal| Answer::of(&signal.data))
            .filter(|answer| {
                !matches!(
                    answer,
                    Answer::Question {
                        reply: Reply::Later,
                        ..
                    }
                )
            })
            .flat_map(|answer| self.reaches(&answer))
            .collect()
    }

    /// Quarantine records of the whole run: the interrupted run's and this process's.
    fn quarantined(&self) -> u64 {
        self.quarantined_earlier.saturating_add(
            self.host
                .quarantined()
                .saturating_sub(self.quarantined_before),
        )
    }

    /// The next tick, at `now`: the digest if one is due, the person's answers, every agent's
    /// tick, the decisions, and when it is the `last` of the day the day's last digest; then
    /// the checkpoint that seals the tick.
    pub(crate) async fn tick(
        &mut self,
        now: OffsetDateTime,
        last: bool,
        agents: &[&str],
        report: &mut impl FnMut(RunEvent<'_>),
    ) -> Result<(), RunError> {
        let index = self.next_tick;
        // The person's offset: their day (a new night's sleep, today's budget) is the one
        // news is told in.
        let now = self.scenario.local(now);
        let at = self.scenario.format(now);
        report(RunEvent::Tick {
            index,
            of: self.ticks,
            at: &at,
        });
        let mut tick = TickRun {
            host: self.host,
            scenario: &self.scenario,
            run: &self.run_id,
            seed: self.seed,
            index,
            now,
            at: &at,
            decisions: 0,
            taken: Vec::new(),
        };
        let (memory, summary, world) = (&mut self.memory, &mut self.summary, &mut self.world);
        let quiet = self.scenario.is_quiet(now);
        // The morning: the end of quiet hours, or the first tick of a day (the run's first, or
        // a live session's first after midnight).
        let new_day = self
            .last_tick
            .or(self.carried_last_tick)
            .is_none_or(|last| last.to_offset(now.offset()).date() < now.date());
        if !quiet && (self.was_quiet || new_day) {
            memory.briefing_due = true;
        }
        self.was_quiet = quiet;
        // The person's answers first: what they said yes to is what they wait for.
        for answer in world.advance(&self.scenario, now) {
            tick.answer(&answer, world, memory, summary, report).await?;
        }
        tick.expire(world, memory, summary, report).await?;
        // A digest this tick, if one is due and the phone is free: the morning briefing; what
        // waited only for the phone (the first tick it is free); what waited for the digest,
        // every few hours; the end of the day. When something already waits it keeps the phone
        // for itself, so what would have been a card this tick joins it, most important first.
        // What waited only for the watch goes back to the watch the first tick it is free.
        let local_hour = now.hour();
        if memory.briefing_due && local_hour >= BRIEFING_UNTIL_HOUR {
            // The morning is over: what waits, waits for the next digest.
            memory.briefing_due = false;
        }
        let phone_free = !quiet
            && !tick.taken.contains(&Surface::PhoneCard)
            && memory.within_budget(Surface::PhoneCard, now);
        let interval_due = memory
            .last_digest
            .is_none_or(|last| now - last >= time::Duration::minutes(DIGEST_INTERVAL_MINUTES));
        let waiting = !memory.held_back.is_empty();
        let digest = match () {
            _ if memory.briefing_due => Some(DigestKind::Morning),
            _ if last => Some(DigestKind::End),
            _ if memory.waits_for(Surface::PhoneCard) => Some(DigestKind::Freed),
            _ if interval_due && waiting => Some(DigestKind::Interval),
            _ => None,
        };
        let keeps_phone = phone_free && waiting && digest.is_some();
        if keeps_phone {
            tick.taken.push(Surface::PhoneCard);
        }
        let keeps_watch = memory.waits_for(Surface::Watch)
            && !tick.taken.contains(&Surface::Watch)
            && memory.within_budget(Surface::Watch, now);
        if keeps_watch {
            tick.taken.push(Surface::Watch);
        }
        let context = world.context(&self.scenario, now);
        let started = std::time::Instant::now();
        let outcomes = self.host.tick_all(agents, &context).await;
        self.tick_us
            .push(u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX));
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
        let taken = tick.taken.clone();
        let moment = Moment {
            quiet,
            now,
            taken: &taken,
        };
        for choice in arbitrate(proposals, moment, world, memory, summary) {
            tick.decide(choice, world, memory, summary, report).await?;
        }
        // What was kept for them: the surfaces they keep are theirs now.
        tick.taken.retain(|s| {
            !(keeps_phone && *s == Surface::PhoneCard || keeps_watch && *s == Surface::Watch)
        });
        if keeps_watch {
            tick.release(Surface::Watch, memory, summary, report)?;
        }
        // A digest due when nothing waited yet goes out if this tick's decisions kept some
        // news back and left the phone free; the end of the day goes out in any case (SILENT,
        // its news left untold, when the phone is not free).
        let phone_free_now =
            keeps_phone || (phone_free && !tick.taken.contains(&Surface::PhoneCard));
        match digest {
            Some(kind) if phone_free_now || last => {
                let told = tick.digest(kind, quiet, memory, summary, report)?;
                if kind == DigestKind::Morning && told {
                    memory.briefing_due = false;
                }
                if last && kind != DigestKind::End {
                    tick.digest(DigestKind::End, quiet, memory, summary, report)?;
                }
            }
            Some(_) | None => {}
        }
        summary.ticks += 1;
        self.seal(index)?;
        self.next_tick = index + 1;
        self.last_tick = Some(now);
        self.ended = last;
        self.checkpoint()?;
        Ok(())
    }

    /// The summary of the run as it ended.
    pub(crate) fn finish(mut self) -> RunSummary {
        self.summary.signals = self.world.signals_applied();
        self.summary.quarantined = self.quarantined();
        self.tick_us.sort_unstable();
        self.summary.tick_us_median = nearest_rank(&self.tick_us, 50);
        self.summary.tick_us_p95 = nearest_rank(&self.tick_us, 95);
        self.summary
    }
}
