//! The live assistant: the orchestrator's days lived as they happen, for one person, until it
//! is stopped: a life, one day after another.
//!
//! It owns a session: its setup (a live.v1 file, or a scenario's setup), its clock
//! ([`Clock`]), the inputs it takes from its fronts through one queue ([`Live`]: a handle any
//! front holds, stdin, HTTP or an app), each checked ([`input`]), refused with recovery.v1 and
//! quarantined, or journaled and fsynced before it is acknowledged; its ticks (every
//! `tick_minutes`, and at once for a signal of a `tick_on` kind); the decisions handed to the
//! sinks ([`deliver`]) and to subscribers; each day closed at the person's midnight
//! ([`zone`]) into a record `aura run` runs to the day's traces, the next begun from what it
//! carried, old days deleted ([`life`]); resuming after a crash from the open day's checkpoint
//! and journal, with every acknowledged signal applied once; and a day's journal as a
//! scenario ([`export`]). It must not decide anything itself: the orchestrator's one
//! implementation ([`crate::orchestrator`]) does, on either clock.

mod batch;
mod clock;
pub mod deliver;
mod handle;
mod input;
pub mod life;
mod narrate;
mod session;
mod setup;
mod zone;

use std::sync::Arc;

use serde_json::Value;

use aura_host::Host;
use aura_host::journal::JournalError;

pub use clock::Clock;
pub use deliver::{CommandSink, Delivery, LinesSink, Sink};
pub use handle::{Ack, Inbox, Live, Refused, batch_answers, channel};
pub use input::BatchForm;
pub use narrate::LiveNarration;
pub use setup::export;

use crate::checkpoint::{CheckpointError, DayInput, Start};
use crate::orchestrator::{Day, RunError, RunEvent, RunSummary};
use crate::scenario::ScenarioError;
use aura_contract::limits::DAY_SIGNALS_MAX;
use clock::Reading;
use session::{Ended, Seen, Session};

/// The kinds of signal a live session ticks on at once unless its file says otherwise: what
/// may need the person now (a message, a charge, an invitation) and their answers.
pub const LIVE_TICK_ON: [&str; 4] = ["message", "transaction", "invitation", "answer"];

/// Why a live session could not start or stopped.
#[derive(Debug, thiserror::Error)]
pub enum LiveError {
    /// The setup file cannot be used.
    #[error(transparent)]
    Setup(#[from] ScenarioError),
    /// The setup file does not suit the clock.
    #[error("{0}")]
    Clock(String),
    /// The run stopped (the journal, the checkpoint, a trace).
    #[error(transparent)]
    Run(#[from] RunError),
    /// The data dir's live logs could not be opened, read or written.
    #[error(transparent)]
    Journal(#[from] JournalError),
    /// The life's store refused or failed (held by another session, stopped, past a bound).
    #[error(transparent)]
    Store(crate::store::StoreError),
    /// The data dir's journal is not one this session wrote.
    #[error("the data dir's live journal is damaged: {0}")]
    Damaged(String),
}

impl From<CheckpointError> for LiveError {
    fn from(error: CheckpointError) -> Self {
        Self::Run(RunError::Checkpoint(error))
    }
}

/// How a session is set up.
#[derive(Debug, Clone)]
pub struct LiveConfig {
    /// The setup: a live.v1 or a scenario.v1 file's JSON (a scenario's signals are not read:
    /// they come as they happen).
    pub setup: Value,
    /// Whether `setup` is a scenario (with a start and an end a replayed clock runs).
    pub is_scenario: bool,
    /// The kinds that tick at once, when not the file's (`--tick-on`).
    pub tick_on: Option<Vec<String>>,
    /// The seed of the agents' random sources.
    pub seed: u64,
    /// The clock.
    pub clock: Clock,
    /// Resume the data dir's session, or set it aside and start over.
    pub start: Start,
    /// Narrate the novel cases of its decisions in the background (`--narrate`).
    pub narration: Option<LiveNarration>,
    /// Closed days kept, then deleted whole, oldest first (`--keep-days`).
    pub keep_days: usize,
    /// Where the life is kept: the data dir when none is named, else this home (the data
    /// dir then holds the session's working copy of it, [`crate::store::WorkingCopy`]).
    pub home: Option<Arc<dyn crate::store::Home>>,
}

/// Lives the session `config` sets up on `host` until it is stopped (or, on a replayed clock,
/// until its inputs or its scenario end), day after day in `host`'s data dir, taking inputs
/// from `inbox` and handing each decision to `sinks` and the handle's subscribers; `report`
/// hears each event once it is durable. The summary is the last day's.
pub async fn live(
    host: &Host,
    config: LiveConfig,
    sinks: Vec<Arc<dyn Sink>>,
    inbox: Inbox,
    mut report: impl FnMut(RunEvent<'_>),
) -> Result<RunSummary, LiveError> {
    let resolved = setup::resolve(&config)?;
    let mut life = life::Life::open(
        host,
        &resolved,
        config.start == Start::Fresh,
        config.keep_days,
        config.home.as_deref(),
    )
    .await?;
    let mut lanes = inbox.lanes;
    let inbox_open_day = inbox.open_day;
    // The handle's fronts send what ticks at once in the urgent lane.
    // (The resolved setup names none when none does.)
    let kinds: Vec<String> = resolved.setup["tick_on"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|kind| kind.as_str().map(str::to_owned))
        .collect();
    match inbox.tick_on.write() {
        Ok(mut tick_on) => *tick_on = kinds,
        Err(poisoned) => *poisoned.into_inner() = kinds,
    }
    let mut session = Session {
        end: resolved.end,
        horizon: resolved.start,
        reading: Reading::new(config.clock, resolved.start),
        clock: config.clock,
        closed: false,
        decisions: inbox.decisions,
        sinks,
        narration: config.narration,
        narrations: inbox.narrations,
        yesterday: match life.previous() {
            Some(previous) => {
                let scenario = setup::day_scenario(&previous, None)?;
                journal_ids(&previous, &scenario, Base::Before(life.state.base))?.seen
            }
            None => Seen::new(),
        },
        pushes: std::collections::VecDeque::new(),
    };
    let mut first = true;
    // When the day before began to close: a rollover's time is until the next day runs.
    let mut closing: Option<std::time::Instant> = None;
    loop {
        let day_host = life.day()?;
        // The fronts' refusals go to the open day's quarantine, with the session's own.
        match inbox_open_day.write() {
            Ok(mut open) => *open = day_host.clone(),
            Err(poisoned) => *poisoned.into_inner() = day_host.clone(),
        }
        let scenario = setup::day_scenario(&day_host, resolved.end)?;
        let (mut day, lock) = Day::begin(
            &day_host,
            scenario,
            config.seed,
            DayInput::Live { last_tick: None },
            // The life set itself aside if it was to.
            Start::Resume,
            None,
        )
        .await?;
        let journaled = journal_ids(&day_host, &day.scenario, Base::At(life.state.base))?;
        for signal in journaled.signals {
            // What the journal holds was taken: a replayed clock is at least that late.
            session.horizon = session.horizon.max(signal.at);
            day.scenario.accept(signal);
        }
        day.started(&mut report);
        if let Some(since) = closing.take() {
            tracing::info!(
                day = %day.scenario.start.date(),
                rollover_ms = since.elapsed().as_secs_f64() * 1000.0,
                "the day before closed and this one began"
            );
        }
        let begins = day.last_tick.unwrap_or(day.scenario.start);
        session.horizon = session.horizon.max(begins);
        if first {
            session.reading = Reading::new(config.clock, begins);
            first = false;
        }
        let mut today = session.today(
            &day_host,
            &day,
            life.bases(),
            journaled.seen,
            journaled.next_seq,
            journaled.closes_at,
        )?;
        let ended = session
            .run(&mut today, &mut day, &mut lanes, &mut report)
            .await;
        match ended {
            Ok(Ended::Closes { next }) => {
                closing = Some(std::time::Instant::now());
                let seen = std::mem::take(&mut today.seen);
                let next_seq = today.next_seq;
                today.finish(config.clock.replays()).await;
                life.close(&day_host, &day, next, next_seq).await?;
                session.yesterday = seen;
                drop(day);
                drop(lock);
            }
            Ok(outcome) => {
                let finished = matches!(outcome, Ended::Finished);
                session.stop(today, &mut lanes, finished).await;
                let summary = day.finish();
                drop(lock);
                return Ok(summary);
            }
            Err(error) => {
                session.stop(today, &mut lanes, false).await;
                return Err(error);
            }
        }
    }
}

/// Where a day's journal lines stand among the life's.
enum Base {
    /// Its first new signal is the life's this-th.
    At(usize),
    /// Its lines end before the life's this-th (the day before the open one).
    Before(usize),
}

/// What a day's journal holds, read back.
struct Journaled {
    /// Its signals, in the order they were taken.
    signals: Vec<crate::scenario::Signal>,
    /// The ids taken in it, each with its acknowledgement.
    seen: Seen,
    /// The life's place of the next new signal.
    next_seq: usize,
    /// The tick that closes it, if it filled: the one the line that filled it says, or, for
    /// a day that began full (what came after the closing tick of the part before, stamped
    /// later), the latest time of its first [`DAY_SIGNALS_MAX`] signals (so that tick takes
    /// them and the next part begins with fewer: the parts end).
    closes_at: Option<time::OffsetDateTime>,
}

/// The signals of `host`'s day journal and the ids taken in it, each with its
/// acknowledgement, written in the offset of `scenario` (the day's).
fn journal_ids(
    host: &Host,
    scenario: &crate::scenario::Scenario,
    base: Base,
) -> Result<Journaled, LiveError> {
    let lines = crate::store::files::signal_lines(host.journal())?;
    let base = match base {
        Base::At(base) => base,
        Base::Before(end) => end.saturating_sub(lines.len()),
    };
    let mut journaled = Journaled {
        signals: Vec::with_capacity(lines.len()),
        seen: Seen::new(),
        next_seq: base,
        closes_at: None,
    };
    let mut filled_by: Option<time::OffsetDateTime> = None;
    for (index, line) in lines.iter().enumerate() {
        let line = setup::read_line(line, index, base)?;
        if index < DAY_SIGNALS_MAX {
            filled_by = filled_by.max(Some(line.signal.at));
        }
        if let Some(seq) = line.seq {
            journaled.next_seq = journaled.next_seq.max(seq + 1);
            if let Some((id, what)) = line.id {
                journaled
                    .seen
                    .insert(id, (what, Ack::of(seq, &line.signal, scenario)));
            }
        }
        journaled.closes_at = journaled.closes_at.or(line.closes_at);
        journaled.signals.push(line.signal);
    }
    if journaled.closes_at.is_none() && lines.len() >= DAY_SIGNALS_MAX {
        journaled.closes_at = filled_by
            .map(|at| crate::scenario::urgent_tick(at.max(scenario.start)))
            .or(Some(scenario.start));
    }
    Ok(journaled)
}
