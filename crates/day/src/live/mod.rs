//! The live assistant: the orchestrator's day lived as it happens, for one person, until it is
//! stopped.
//!
//! It owns a session: its setup (a live.v1 file, or a scenario's setup), its clock
//! ([`Clock`]), the inputs it takes from its fronts through one queue ([`Live`]: a handle any
//! front holds, stdin, HTTP or an app), each checked ([`input`]), refused with recovery.v1 and
//! quarantined, or journaled and fsynced before it is acknowledged; its ticks (every
//! `tick_minutes`, and at once for a signal of a `tick_on` kind); the decisions handed to the
//! sinks ([`deliver`]) and to subscribers; resuming after a crash from the checkpoint and the
//! journal, with every acknowledged signal applied once; and the journal as a scenario
//! ([`export`]), which `aura run` runs to the same traces. It must not decide anything itself:
//! the orchestrator's one implementation ([`crate::orchestrator`]) does, on either clock.

mod clock;
pub mod deliver;
mod input;
mod narrate;
mod setup;

use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;
use time::OffsetDateTime;
use tokio::sync::{broadcast, mpsc, oneshot};

use aura_contract::error::Phase;
use aura_contract::limits::{
    LIVE_INPUT_QUEUE_MAX, LIVE_SIGNAL_BYTES_MAX, SCENARIO_BYTES_MAX, SCENARIO_SIGNALS_MAX,
};
use aura_contract::quarantine::{InputRefusal, QuarantineRecord};
use aura_contract::recovery::{Action, ToolFailure};
use aura_contract::trace::narration::NarrationRecord;
use aura_host::Host;
use aura_host::journal::{JournalError, SIGNALS_PATH};

pub use clock::Clock;
pub use deliver::{CommandSink, Delivery, LinesSink, Sink};
pub use narrate::LiveNarration;
pub use setup::export;

use crate::checkpoint::{CheckpointError, DayInput, Start};
use crate::orchestrator::{Day, RunError, RunEvent, RunSummary};
use crate::scenario::{Scenario, ScenarioError, Signal};
use clock::Reading;
use deliver::Deliveries;
use input::{Bucket, Standing, Taken};
use narrate::Narrating;

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
}

/// What a session acknowledged: the input is in its journal, durable.
#[derive(Debug, Clone, Serialize)]
pub struct Ack {
    /// Its place in the session's journal, from 0.
    pub seq: usize,
    /// When it takes effect (RFC 3339, the person's offset).
    pub at: String,
    /// Its kind.
    pub kind: String,
    /// It was taken before under its id: this is that acknowledgement again, and it is
    /// applied once.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub again: bool,
}

impl Ack {
    /// The acknowledgement of `signal`, the `seq`th of the journal.
    fn of(seq: usize, signal: &Signal, scenario: &Scenario) -> Self {
        Self {
            seq,
            at: scenario.format(signal.at),
            kind: signal.kind.clone(),
            again: false,
        }
    }
}

/// An input refused, as its sender reads it (recovery.v1, phase `signal`); its quarantine
/// record is written.
pub type Refused = Box<ToolFailure>;

/// What a front hands a session.
#[derive(Debug)]
enum Input {
    /// One signal or answer as sent, and where its acknowledgement goes.
    Signal {
        text: String,
        reply: oneshot::Sender<Result<Ack, Refused>>,
    },
    /// A front will send nothing more (stdin closed): a replayed clock may run to the end.
    Closed,
    /// Stop (SIGINT, SIGTERM, an app closing).
    Stop,
}

/// A handle on a live session: what its fronts hold to push inputs and follow decisions.
#[derive(Debug, Clone)]
pub struct Live {
    queue: mpsc::Sender<Input>,
    decisions: broadcast::Sender<Arc<Delivery>>,
    narrations: broadcast::Sender<Arc<NarrationRecord>>,
    host: Host,
}

/// The receiving end of a session's handle: what [`live`] runs on.
#[derive(Debug)]
pub struct Inbox {
    queue: mpsc::Receiver<Input>,
    decisions: broadcast::Sender<Arc<Delivery>>,
    narrations: broadcast::Sender<Arc<NarrationRecord>>,
}

/// A handle and the inbox it feeds, for one session on `host`.
pub fn channel(host: &Host) -> (Live, Inbox) {
    let (queue, receiver) = mpsc::channel(LIVE_INPUT_QUEUE_MAX);
    let (decisions, _) = broadcast::channel(aura_contract::limits::SINK_QUEUE_MAX);
    let (narrations, _) = broadcast::channel(aura_contract::limits::SINK_QUEUE_MAX);
    (
        Live {
            queue,
            decisions: decisions.clone(),
            narrations: narrations.clone(),
            host: host.clone(),
        },
        Inbox {
            queue: receiver,
            decisions,
            narrations,
        },
    )
}

impl Live {
    /// Pushes one signal or answer (a scenario.v1 signal, `at` optional); acknowledged once it
    /// is durable, or refused (and quarantined).
    pub async fn push(&self, bytes: &[u8]) -> Result<Ack, Refused> {
        let text = match std::str::from_utf8(bytes) {
            Ok(text) => text.to_owned(),
            Err(e) => {
                let refusal = input::refusal(
                    "malformed_json",
                    format!("the input is not UTF-8 text: {e}"),
                    Action::CorrectCall,
                );
                return Err(refuse(
                    &self.host,
                    &refusal,
                    &String::from_utf8_lossy(bytes),
                ));
            }
        };
        if text.len() > LIVE_SIGNAL_BYTES_MAX {
            let refusal = input::refusal(
                "too_large",
                format!(
                    "the input is {} bytes, more than the {LIVE_SIGNAL_BYTES_MAX} one signal may have",
                    text.len()
                ),
                Action::CorrectCall,
            );
            return Err(refuse(&self.host, &refusal, &text));
        }
        let (reply, answer) = oneshot::channel();
        let sent = self.queue.try_send(Input::Signal {
            text: text.clone(),
            reply,
        });
        if let Err(error) = sent {
            let refusal = match error {
                mpsc::error::TrySendError::Full(_) => input::busy(
                    format!("{LIVE_INPUT_QUEUE_MAX} inputs are waiting for the session"),
                    aura_contract::limits::BUSY_RETRY_AFTER_MS,
                ),
                mpsc::error::TrySendError::Closed(_) => closed(),
            };
            return Err(refuse(&self.host, &refusal, &text));
        }
        answer
            .await
            .unwrap_or_else(|_| Err(refuse(&self.host, &closed(), &text)))
    }

    /// Refuses an input its front could not even read (a line longer than a signal may be),
    /// with what was read of it.
    pub fn refuse_unread(&self, bytes: u64, start: &[u8]) -> Refused {
        let refusal = input::refusal(
            "too_large",
            format!(
                "the input is {bytes} bytes or more, more than the {LIVE_SIGNAL_BYTES_MAX} one signal may have"
            ),
            Action::CorrectCall,
        );
        refuse(&self.host, &refusal, &String::from_utf8_lossy(start))
    }

    /// Refuses a request a front turned away before it became an input (another site's page,
    /// say), with the reason and what it said: quarantined like any refusal.
    pub fn refuse_request(&self, kind: &'static str, reason: String, offending: &str) -> Refused {
        refuse(
            &self.host,
            &input::refusal(kind, reason, Action::Finish),
            offending,
        )
    }

    /// Tells the session one front will send nothing more.
    pub async fn close(&self) {
        let _ = self.queue.send(Input::Closed).await;
    }

    /// Stops the session: it finishes the tick it is in, checkpoints, and returns.
    pub async fn stop(&self) {
        let _ = self.queue.send(Input::Stop).await;
    }

    /// Every decision from now on, as it is delivered (a subscriber that falls more than
    /// [`aura_contract::limits::SINK_QUEUE_MAX`] behind misses the oldest and is told so).
    pub fn subscribe(&self) -> broadcast::Receiver<Arc<Delivery>> {
        self.decisions.subscribe()
    }

    /// Every narration record from now on, once durable in narrations.jsonl (a kept one's text
    /// replaces its trace's template); one that falls behind misses the oldest.
    pub fn narrations(&self) -> broadcast::Receiver<Arc<NarrationRecord>> {
        self.narrations.subscribe()
    }
}

/// The refusal of an input to a session that has stopped.
fn closed() -> InputRefusal {
    input::refusal(
        "closed",
        "the live session has stopped".to_owned(),
        Action::Finish,
    )
}

/// Quarantines `refusal` of the input `offending` and returns what its sender is told.
fn refuse(host: &Host, refusal: &InputRefusal, offending: &str) -> Refused {
    tracing::warn!(kind = refusal.kind, reason = %refusal.reason, "input refused and quarantined");
    if let Err(error) = host
        .journal()
        .quarantine(&QuarantineRecord::input(refusal, offending))
    {
        tracing::error!(%error, "quarantine record could not be written");
    }
    Box::new(ToolFailure {
        phase: Some(Phase::Signal),
        ..ToolFailure::new(
            refusal.kind,
            refusal.reason.clone(),
            (*refusal.recovery).clone(),
        )
    })
}

/// Lives the session `config` sets up on `host` until it is stopped (or, on a replayed clock,
/// until its day ends), taking inputs from `inbox` and handing each decision to `sinks` and the
/// handle's subscribers; `report` hears each event once it is durable.
pub async fn live(
    host: &Host,
    config: LiveConfig,
    sinks: Vec<Arc<dyn Sink>>,
    inbox: Inbox,
    mut report: impl FnMut(RunEvent<'_>),
) -> Result<RunSummary, LiveError> {
    let scenario = setup::setup(host, &config)?;
    let (mut day, lock) = Day::begin(
        host,
        scenario,
        config.seed,
        DayInput::Live { last_tick: None },
        config.start,
        None,
    )
    .await?;
    let journal = host.journal();
    journal.open_live()?;
    setup::save_setup(host, &day.scenario)?;
    let mut seen = std::collections::HashMap::new();
    for (seq, line) in journal
        .lines(SIGNALS_PATH, 0, SCENARIO_BYTES_MAX as u64)?
        .into_iter()
        .enumerate()
    {
        let (signal, id) = setup::read_signal(&line, seq)?;
        if let Some((id, what)) = id {
            seen.insert(id, (what, Ack::of(seq, &signal, &day.scenario)));
        }
        day.scenario.accept(signal);
    }
    day.started(&mut report);
    let session = Session {
        end: config.clock.replays().then_some(day.scenario.end),
        horizon: day.last_tick.unwrap_or(day.scenario.start),
        reading: Reading::new(config.clock, day.last_tick.unwrap_or(day.scenario.start)),
        clock: config.clock,
        bucket: Bucket::new(),
        seen,
        closed: false,
        deliveries: Deliveries::start(host, sinks)?,
        decisions: inbox.decisions,
        seq: day.decisions() as u64,
        narrating: config
            .narration
            .map(|narration| Narrating::new(narration, host, inbox.narrations)),
    };
    let summary = session.run(host, &mut day, inbox.queue, &mut report).await;
    let summary = summary.map(|()| day.finish());
    drop(lock);
    summary
}

/// A session between its inputs and its ticks.
struct Session {
    clock: Clock,
    reading: Reading,
    /// The day's end, on a replayed clock.
    end: Option<OffsetDateTime>,
    /// A replayed clock's now: the latest time an input was stamped with.
    horizon: OffsetDateTime,
    bucket: Bucket,
    /// The senders' ids of the signals taken, what was sent under each, and its
    /// acknowledgement.
    seen: std::collections::HashMap<String, (input::Sent, Ack)>,
    /// Whether the inputs ended.
    closed: bool,
    deliveries: Deliveries,
    decisions: broadcast::Sender<Arc<Delivery>>,
    /// The next decision's place among the run's.
    seq: u64,
    /// The background narration of novel cases, when the session narrates.
    narrating: Option<Narrating>,
}

/// What the loop does next.
enum Next {
    Tick { at: OffsetDateTime, last: bool },
    Wait(Option<std::time::Duration>),
    Finished,
}

impl Session {
    async fn run(
        mut self,
        host: &Host,
        day: &mut Day<'_>,
        mut queue: mpsc::Receiver<Input>,
        report: &mut impl FnMut(RunEvent<'_>),
    ) -> Result<(), LiveError> {
        let agents = host.agents();
        // At the start, what an earlier session of this run decided and left unnarrated.
        if let Some(narrating) = self.narrating.as_mut() {
            narrating.decided();
        }
        // Whether the day ran to its end (not stopped).
        let mut ended = false;
        let outcome = loop {
            let wait = match self.next(day) {
                Next::Finished => {
                    ended = true;
                    break Ok(());
                }
                Next::Tick { at, last } => match self.tick(day, at, last, &agents, report).await {
                    Ok(decided) => {
                        if let Some(narrating) = self.narrating.as_mut().filter(|_| decided > 0) {
                            narrating.decided();
                        }
                        continue;
                    }
                    Err(error) => break Err(error),
                },
                Next::Wait(wait) => wait,
            };
            let received = async {
                match wait {
                    Some(wait) => tokio::time::timeout(wait, queue.recv()).await.ok(),
                    None => Some(queue.recv().await),
                }
            };
            let input = tokio::select! {
                received = received => match received {
                    Some(input) => input,
                    None => continue,
                },
                // A narration pass ended: the next starts if decisions came meanwhile.
                outcome = narrate::running(self.narrating.as_mut()) => {
                    if let Some(narrating) = self.narrating.as_mut() {
                        narrating.ended(outcome);
                    }
                    continue;
                }
            };
            match input {
                Some(Input::Signal { text, reply }) => match self.take(host, day, &text) {
                    Ok(ack) => {
                        let _ = reply.send(Ok(ack));
                    }
                    Err(refusal) => {
                        let (refused, failed) = *refusal;
                        let _ = reply.send(Err(refused));
                        if let Some(error) = failed {
                            break Err(LiveError::Journal(error));
                        }
                    }
                },
                Some(Input::Closed) => self.closed = true,
                Some(Input::Stop) | None => break Ok(()),
            }
        };
        // Whatever is still queued is not taken: its senders are told the session stopped.
        queue.close();
        while let Ok(input) = queue.try_recv() {
            if let Input::Signal { text, reply } = input {
                let _ = reply.send(Err(refuse(host, &closed(), &text)));
            }
        }
        // A replayed day that ran to its end leaves every narration `aura run --narrate` would.
        if let Some(narrating) = self.narrating.as_mut() {
            narrating.finish(ended && self.clock.replays()).await;
        }
        let stop_wait = std::time::Duration::from_millis(aura_contract::limits::LIVE_STOP_WAIT_MS);
        if tokio::time::timeout(stop_wait, self.deliveries.finish())
            .await
            .is_err()
        {
            tracing::warn!("sinks still busy at stop: the rest is handed over at the next start");
        }
        outcome
    }

    /// The next tick if it is due, else how long to wait for an input.
    fn next(&self, day: &Day<'_>) -> Next {
        let scenario = &day.scenario;
        let due = match day.last_tick {
            None => Some(scenario.start),
            Some(last) => scenario.tick_after(last),
        };
        let Some(due) = due.filter(|due| self.end.is_none_or(|end| *due <= end)) else {
            return Next::Finished;
        };
        // The day's last tick, if it has an end and nothing can come before it any more.
        let last = self
            .end
            .is_some_and(|end| scenario.tick_after(due).is_none_or(|after| after > end));
        match self.clock {
            Clock::Replay => {
                // Run once nothing stamped at or before it can come: an input stamped later
                // came (and, for the last tick, one after the end), or the inputs ended.
                let known = match last {
                    true => self.end.is_some_and(|end| self.horizon > end),
                    false => self.horizon > due,
                };
                match self.closed || known {
                    true => Next::Tick { at: due, last },
                    false => Next::Wait(None),
                }
            }
            Clock::Wall | Clock::Paced { .. } => match self.reading.until(due) {
                Some(wait) if wait.is_zero() => Next::Tick { at: due, last },
                wait => Next::Wait(wait),
            },
        }
    }

    /// Runs the tick at `at`, handing each decision over as it is recorded; how many it
    /// recorded.
    async fn tick(
        &mut self,
        day: &mut Day<'_>,
        at: OffsetDateTime,
        last: bool,
        agents: &[&str],
        report: &mut impl FnMut(RunEvent<'_>),
    ) -> Result<u64, LiveError> {
        let (deliveries, decisions, seq) = (&mut self.deliveries, &self.decisions, &mut self.seq);
        let before = *seq;
        day.tick(at, last, agents, &mut |event| {
            if let RunEvent::Decision(trace) = &event {
                let delivery = Delivery::of(trace, *seq);
                *seq += 1;
                let _ = decisions.send(Arc::new(delivery.clone()));
                deliveries.hand(delivery);
            }
            report(event);
        })
        .await?;
        Ok(self.seq - before)
    }

    /// Checks one input and journals it: its acknowledgement, or its refusal (quarantined)
    /// and, when the journal failed, the failure that stops the session.
    fn take(
        &mut self,
        host: &Host,
        day: &mut Day<'_>,
        text: &str,
    ) -> Result<Ack, Box<(Refused, Option<JournalError>)>> {
        let refused = |refusal: InputRefusal| Box::new((refuse(host, &refusal, text), None));
        self.bucket.take().map_err(refused)?;
        if day.scenario.signals.len() >= SCENARIO_SIGNALS_MAX {
            return Err(refused(input::refusal(
                "session_full",
                format!("the session holds {SCENARIO_SIGNALS_MAX} signals, as many as a day may"),
                Action::Finish,
            )));
        }
        let now = self.reading.now().unwrap_or(self.horizon);
        let reaches = |answer: &crate::scenario::Answer| day.reaches(answer);
        let answered = day.answered_unapplied();
        let seen = |id: &str| self.seen.get(id).map(|(what, _)| *what);
        let standing = Standing {
            now,
            last_tick: day.last_tick,
            end: self.end,
            reaches: &reaches,
            answered: &answered,
            seen: &seen,
        };
        let taken = input::check(text, host.crossing().schemas(), &day.scenario, &standing)
            .map_err(refused)?;
        let (signal, record, key) = match taken {
            Taken::New {
                signal,
                record,
                sent,
            } => (signal, record, sent),
            Taken::Again(id) => {
                let mut ack = self.seen[&id].1.clone();
                ack.again = true;
                return Ok(ack);
            }
        };
        if let Err(error) = host.journal().signal(&record) {
            let refusal = input::refusal(
                "not_durable",
                format!("the input could not be made durable: {error}"),
                Action::Retry,
            );
            return Err(Box::new((refuse(host, &refusal, text), Some(error))));
        }
        let ack = Ack::of(day.scenario.signals.len(), &signal, &day.scenario);
        if let Some((id, what)) = key {
            self.seen.insert(id, (what, ack.clone()));
        }
        self.horizon = self.horizon.max(signal.at);
        day.scenario.accept(signal);
        Ok(ack)
    }
}
