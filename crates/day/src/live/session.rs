//! A live session between its inputs and its ticks, over the days of its life: what comes
//! next (a tick, the day's close, a wait), taking an input into the open day's journal, and
//! what the session keeps from one day to the next (its clock, its rate bound, the ids it
//! took).
//!
//! It owns the loop and [`Today`] (what belongs to the open day: its host, sinks, narration,
//! where it ends). It must not decide anything (the orchestrator's [`Day`] does) nor lay out
//! the data dir (the life does, [`super::life`]).

use std::collections::HashMap;
use std::sync::Arc;

use time::OffsetDateTime;
use tokio::sync::{broadcast, mpsc};

use aura_contract::limits::{BUSY_RETRY_AFTER_MS, DAY_JOURNAL_SIGNALS_MAX, DAY_SIGNALS_MAX};
use aura_contract::quarantine::InputRefusal;
use aura_contract::recovery::Action;
use aura_contract::trace::narration::NarrationRecord;
use aura_host::Host;
use aura_host::journal::JournalError;

use crate::logs::RunLogs;

use super::clock::{Clock, Reading};
use super::deliver::{Deliveries, Delivery, Sink};
use super::handle::{Ack, Input, Refused, closed, refuse};
use super::input::{self, Sent, Standing, Taken};
use super::narrate::{self, LiveNarration, Narrating};
use super::{LiveError, zone};
use crate::orchestrator::{Day, RunEvent};
use crate::scenario::UTC_OFFSET;

/// The ids a session took, what was sent under each, and its acknowledgement.
pub(super) type Seen = HashMap<String, (Sent, Ack)>;

/// A session between its inputs and its ticks.
pub(super) struct Session {
    pub(super) clock: Clock,
    pub(super) reading: Reading,
    /// The life's end, on a replayed scenario's clock.
    pub(super) end: Option<OffsetDateTime>,
    /// A replayed clock's now: the latest time an input was stamped with.
    pub(super) horizon: OffsetDateTime,
    /// Whether the inputs ended.
    pub(super) closed: bool,
    pub(super) decisions: broadcast::Sender<Arc<Delivery>>,
    pub(super) sinks: Vec<Arc<dyn Sink>>,
    pub(super) narration: Option<LiveNarration>,
    pub(super) narrations: broadcast::Sender<Arc<NarrationRecord>>,
    /// The ids the day before took (a sender resending across midnight is still known).
    pub(super) yesterday: Seen,
}

/// What belongs to the open day.
pub(super) struct Today {
    pub(super) host: Host,
    deliveries: Deliveries,
    /// The next decision's place among the day's.
    seq: u64,
    narrating: Option<Narrating>,
    /// The ids the day took.
    pub(super) seen: Seen,
    /// The life's place of the day's first journal line.
    pub(super) base: usize,
    /// The life's place of the day's first decision.
    decided_base: u64,
    /// The day's name in the life.
    name: Option<String>,
    /// When the day ends: the person's local midnight, or the next tick once the day holds
    /// [`DAY_SIGNALS_MAX`] signals.
    pub(super) ends: OffsetDateTime,
}

/// How a day of the session ended.
pub(super) enum Ended {
    /// Stopped (or its inputs ended before a replayed clock could go on).
    Stopped,
    /// The life's replayed scenario ran to its end.
    Finished,
    /// Its last tick ran: the next day begins at `next`.
    Closes { next: OffsetDateTime },
}

/// What the loop does next.
enum Next {
    Tick { at: OffsetDateTime, last: bool },
    Close { next: OffsetDateTime },
    Wait(Option<std::time::Duration>),
    Stop,
    Finished,
}

impl Session {
    /// What the day `day` on `host` (its journal line 0 and first decision the life's
    /// `base`th, its ids `seen`) needs of the session.
    pub(super) fn today(
        &self,
        host: &Host,
        day: &Day<'_>,
        base: super::life::Bases,
        seen: Seen,
    ) -> Result<Today, LiveError> {
        let mut today = Today {
            host: host.clone(),
            deliveries: Deliveries::start(
                host,
                self.sinks.clone(),
                base.decided,
                base.day.as_deref(),
            )?,
            seq: day.decisions() as u64,
            narrating: self
                .narration
                .clone()
                .map(|narration| Narrating::new(narration, host, self.narrations.clone())),
            seen,
            base: base.signals,
            decided_base: base.decided,
            name: base.day.clone(),
            ends: OffsetDateTime::new_utc(time::Date::MAX, time::Time::MIDNIGHT),
        };
        today.bound(day, true);
        Ok(today)
    }

    /// Lives the open day until it is stopped, the life ends, or its last tick ran.
    pub(super) async fn run(
        &mut self,
        today: &mut Today,
        day: &mut Day<'_>,
        queue: &mut mpsc::Receiver<Input>,
        report: &mut impl FnMut(RunEvent<'_>),
    ) -> Result<Ended, LiveError> {
        let host = today.host.clone();
        let agents = host.agents();
        // At the start, what an earlier session of this day decided and left unnarrated.
        if let Some(narrating) = today.narrating.as_mut() {
            narrating.decided();
        }
        loop {
            let wait = match self.next(today, day) {
                Next::Finished => return Ok(Ended::Finished),
                Next::Stop => return Ok(Ended::Stopped),
                Next::Close { next } => return Ok(Ended::Closes { next }),
                Next::Tick { at, last } => {
                    let decided = today.tick(day, at, last, &agents, &self.decisions, report);
                    if decided.await? > 0
                        && let Some(narrating) = today.narrating.as_mut()
                    {
                        narrating.decided();
                    }
                    continue;
                }
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
                outcome = narrate::running(today.narrating.as_mut()) => {
                    if let Some(narrating) = today.narrating.as_mut() {
                        narrating.ended(outcome);
                    }
                    continue;
                }
            };
            match input {
                Some(Input::Signal { text, reply }) => match self.take(today, day, &text) {
                    Ok(ack) => {
                        let _ = reply.send(Ok(ack));
                    }
                    Err(refusal) => {
                        let (refused, failed) = *refusal;
                        let _ = reply.send(Err(refused));
                        if let Some(error) = failed {
                            return Err(LiveError::Journal(error));
                        }
                    }
                },
                Some(Input::Closed) => self.closed = true,
                Some(Input::Stop) | None => return Ok(Ended::Stopped),
            }
        }
    }

    /// At the session's end: what is still queued is refused (its senders are told the
    /// session stopped), the open day's narration and sinks finish.
    pub(super) async fn stop(
        &mut self,
        today: Today,
        queue: &mut mpsc::Receiver<Input>,
        ended: bool,
    ) {
        queue.close();
        while let Ok(input) = queue.try_recv() {
            if let Input::Signal { text, reply } = input {
                let _ = reply.send(Err(refuse(&today.host, &closed(), &text)));
            }
        }
        // A replayed day that ran to its end leaves every narration `aura run --narrate` would.
        today.finish(ended && self.clock.replays()).await;
    }

    /// The next tick if it is due, the day's close once its last tick ran, else how long to
    /// wait for an input.
    fn next(&self, today: &Today, day: &Day<'_>) -> Next {
        let scenario = &day.scenario;
        let due = match day.last_tick {
            None => Some(scenario.start),
            Some(last) => scenario.tick_after(last),
        };
        let Some(due) = due.filter(|due| self.end.is_none_or(|end| *due <= end)) else {
            return Next::Finished;
        };
        // The day's last tick, if the life has an end and nothing can come before it any more.
        let last = self
            .end
            .is_some_and(|end| scenario.tick_after(due).is_none_or(|after| after > end));
        let ends = today.ends;
        let next = match due >= ends {
            true => Next::Close { next: ends },
            false => Next::Tick { at: due, last },
        };
        // The moment `next` waits for: the tick's, or the day's end.
        let at = due.min(ends);
        match self.clock {
            Clock::Replay => {
                // Run once nothing stamped at or before it can come: an input stamped later
                // came (and, for the last tick, one after the end), or the inputs ended.
                let known = match last {
                    true => self.end.is_some_and(|end| self.horizon > end),
                    false => self.horizon > at,
                };
                match (known, self.closed) {
                    (true, _) => next,
                    // A life without an end waits for its inputs; once they ended, the rest
                    // is the next session's.
                    (false, true) if self.end.is_none() => Next::Stop,
                    (false, true) => next,
                    (false, false) => Next::Wait(None),
                }
            }
            Clock::Wall | Clock::Paced { .. } => match self.reading.until(at) {
                Some(wait) if wait.is_zero() => next,
                wait => Next::Wait(wait),
            },
        }
    }

    /// Checks one input and journals it into the open day: its acknowledgement, or its
    /// refusal (quarantined) and, when the journal failed, the failure that stops the
    /// session. What is stamped after the day's last tick waits in the journal for the next.
    fn take(
        &mut self,
        today: &mut Today,
        day: &mut Day<'_>,
        text: &str,
    ) -> Result<Ack, Box<(Refused, Option<JournalError>)>> {
        let host = today.host.clone();
        let refused = |refusal: InputRefusal| Box::new((refuse(&host, &refusal, text), None));
        if day.scenario.signals.len() >= DAY_JOURNAL_SIGNALS_MAX {
            // Only a flood within one tick gets here: the day closes at its next tick.
            return Err(refused(input::busy(
                format!(
                    "{DAY_JOURNAL_SIGNALS_MAX} signals wait for the day's next tick; it closes the day"
                ),
                BUSY_RETRY_AFTER_MS,
            )));
        }
        let now = self.reading.now().unwrap_or(self.horizon);
        let reaches = |answer: &crate::scenario::Answer| day.reaches(answer);
        let answered = day.answered_unapplied();
        let seen = |id: &str| {
            today
                .seen
                .get(id)
                .or_else(|| self.yesterday.get(id))
                .map(|(what, _)| *what)
        };
        let standing = Standing {
            now,
            begins: day.scenario.start,
            last_tick: day.last_tick,
            end: self.end,
            reaches: &reaches,
            answered: &answered,
            seen: &seen,
        };
        let schemas = host.crossing().schemas();
        let taken = input::check(text, schemas, &day.scenario, &standing).map_err(refused)?;
        let (signal, record, key) = match taken {
            Taken::New {
                signal,
                record,
                sent,
            } => (signal, record, sent),
            Taken::Again(id) => {
                let before = today.seen.get(&id).or_else(|| self.yesterday.get(&id));
                let mut ack = before.map(|(_, ack)| ack.clone()).ok_or_else(|| {
                    refused(input::refusal(
                        "id_reused",
                        "the id was taken before".to_owned(),
                        Action::CorrectCall,
                    ))
                })?;
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
            return Err(Box::new((refuse(&host, &refusal, text), Some(error))));
        }
        let mut ack = Ack::of(
            today.base + day.scenario.signals.len(),
            &signal,
            &day.scenario,
        );
        if let Some((id, what)) = key {
            today.seen.insert(id, (what, ack.clone()));
        }
        ack.record = Some(record);
        self.horizon = self.horizon.max(signal.at);
        let moves = signal.kind == UTC_OFFSET;
        day.scenario.accept(signal);
        today.bound(day, moves);
        Ok(ack)
    }
}

impl Today {
    /// When the day ends: at the person's local midnight, where they are (worked out again
    /// when `moved`: an offset change came, flying west makes the day longer), never at or
    /// before its last tick (a change stamped before it takes effect after it: the day ends
    /// at its next tick); and a day holding [`DAY_SIGNALS_MAX`] signals at its next tick on
    /// the grid, whichever comes first.
    fn bound(&mut self, day: &Day<'_>, moved: bool) {
        let scenario = &day.scenario;
        if moved {
            let midnight = zone::day_end(scenario);
            self.ends = match day.last_tick {
                Some(last) if midnight <= last => scenario.tick_after(last).unwrap_or(midnight),
                _ => midnight,
            };
        }
        if scenario.signals.len() < DAY_SIGNALS_MAX {
            return;
        }
        let last = day.last_tick.unwrap_or(scenario.start);
        let step = time::Duration::minutes(scenario.tick_minutes);
        let steps = (last - scenario.start).whole_minutes() / scenario.tick_minutes + 1;
        let grid = scenario.start + step * steps as i32;
        self.ends = self.ends.min(grid);
    }

    /// Runs the tick at `at`, handing each decision over as it is recorded; how many it
    /// recorded.
    async fn tick(
        &mut self,
        day: &mut Day<'_>,
        at: OffsetDateTime,
        last: bool,
        agents: &[&str],
        decisions: &broadcast::Sender<Arc<Delivery>>,
        report: &mut impl FnMut(RunEvent<'_>),
    ) -> Result<u64, LiveError> {
        let (deliveries, seq) = (&mut self.deliveries, &mut self.seq);
        let (before, decided_base, name) = (*seq, self.decided_base, self.name.as_deref());
        day.tick(at, last, agents, &mut |event| {
            if let RunEvent::Decision(trace) = &event {
                let delivery = Delivery::of(trace, *seq).in_life(decided_base, name);
                *seq += 1;
                let _ = decisions.send(Arc::new(delivery.clone()));
                deliveries.hand(delivery);
            }
            report(event);
        })
        .await?;
        Ok(self.seq - before)
    }

    /// The day's narration (every pass to its end when `all`) and its sinks finish: the day
    /// closed, or the session stops.
    pub(super) async fn finish(mut self, all: bool) {
        if let Some(narrating) = self.narrating.as_mut() {
            narrating.finish(all).await;
        }
        let stop_wait = std::time::Duration::from_millis(aura_contract::limits::LIVE_STOP_WAIT_MS);
        if tokio::time::timeout(stop_wait, self.deliveries.finish())
            .await
            .is_err()
        {
            tracing::warn!("sinks still busy at stop: the rest is handed over at the next start");
        }
    }
}
