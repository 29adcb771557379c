//! A live session between its inputs and its ticks, over the days of its life: what comes
//! next (a tick, the day's close, a wait), taking an input into the open day's journal, and
//! what the session keeps from one day to the next (its clock, its rate bound, the ids it
//! took).
//!
//! It owns the loop and [`Today`] (what belongs to the open day: its host, sinks, narration,
//! where it ends). It must not decide anything (the orchestrator's [`Day`] does) nor lay out
//! the data dir (the life does, [`super::life`]).

use aura_contract::caused::Caused;
use std::collections::HashMap;
use std::sync::Arc;

use serde_json::Value;
use time::OffsetDateTime;
use tokio::sync::broadcast;

use aura_contract::limits::{
    BUSY_RETRY_AFTER_MS, DAY_JOURNAL_SIGNALS_MAX, DAY_JOURNAL_URGENT_RESERVED, DAY_SIGNALS_MAX,
    URGENT_TICK_QUANTUM_MS,
};
use aura_contract::quarantine::InputRefusal;
use aura_contract::recovery::Action;
use aura_contract::trace::narration::NarrationRecord;
use aura_host::Host;

use super::batch::Batch;
use super::clock::{Clock, Reading};
use super::deliver::{Deliveries, Delivery, Sink};
use super::handle::{Ack, Input, Lanes, Refused, refuse};
use super::input::{self, Sent, Standing, Taken};
use super::narrate::{self, LiveNarration, Narrating};
use super::setup::{LINE_CLOSES_AT, LINE_SEQ};
use super::{LiveError, zone};
use crate::orchestrator::{Day, RunEvent};
use crate::scenario::{UTC_OFFSET, urgent_tick};
use crate::store::LifeStore;

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
    /// The pushes being taken, the front one first: one a day's close came in the middle
    /// of, and an urgent one that came while a batch was taken (it goes first).
    pub(super) pushes: std::collections::VecDeque<Batch>,
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
    /// The life's place (`seq`) of the next new signal.
    pub(super) next_seq: usize,
    /// The day's closing tick once it holds [`DAY_SIGNALS_MAX`] signals.
    closes_at: Option<OffsetDateTime>,
    /// The life's place of the day's first decision.
    decided_base: u64,
    /// The day's name in the life.
    pub(super) name: String,
    /// The life's store, where the day's signals are journaled.
    pub(super) store: std::sync::Arc<crate::store::WorkingCopy>,
    /// When the day ends: the person's local midnight, or just after its closing tick once
    /// it holds [`DAY_SIGNALS_MAX`] signals.
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
    /// What the day `day` on `host` (its first decision the life's `base`th, its ids `seen`,
    /// its next new signal the life's `next_seq`th, its closing tick `closes_at` if it
    /// filled) needs of the session.
    pub(super) fn today(
        &self,
        host: &Host,
        day: &Day<'_>,
        base: super::life::Bases,
        seen: Seen,
        next_seq: usize,
        closes_at: Option<OffsetDateTime>,
    ) -> Result<Today, LiveError> {
        let mut today = Today {
            host: host.clone(),
            deliveries: Deliveries::start(
                host,
                self.sinks.clone(),
                base.decided,
                Some(base.day.as_str()),
            )?,
            seq: day.decisions() as u64,
            narrating: self
                .narration
                .clone()
                .map(|narration| Narrating::new(narration, host, self.narrations.clone())),
            seen,
            next_seq,
            closes_at,
            decided_base: base.decided,
            name: base.day.clone(),
            store: base.store.clone(),
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
        lanes: &mut Lanes,
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
            // A push being taken goes on before anything else is read but an urgent push,
            // which goes first. A day that fills closes at once: the push waits for its
            // closing tick and the next part takes the rest. (A day that began full of
            // signals stamped ahead closes when the latest of them is due: until then it
            // takes what comes, up to its journal's bound.)
            if !self.pushes.is_empty() && !lanes.urgent_waiting() {
                let quantum = std::time::Duration::from_millis(URGENT_TICK_QUANTUM_MS as u64);
                match today.filled(day) && wait.is_none_or(|wait| wait <= quantum) {
                    true => tokio::time::sleep(wait.unwrap_or(quantum)).await,
                    false => {
                        let until_filled = !today.filled(day);
                        self.take_batch(today, day, until_filled, lanes).await?;
                    }
                }
                continue;
            }
            let received = async {
                match wait {
                    Some(wait) => tokio::time::timeout(wait, lanes.recv()).await.ok(),
                    None => Some(lanes.recv().await),
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
                Some(Input::Signals {
                    texts,
                    reply,
                    urgent,
                    read,
                }) => {
                    let push = Batch::new(texts, reply, read);
                    match urgent {
                        true => self.pushes.push_front(push),
                        false => self.pushes.push_back(push),
                    }
                }
                Some(Input::Positions { reply }) => {
                    let positions = today.store.positions().await;
                    let _ = reply.send(positions.map_err(|e| e.to_string()));
                }
                Some(Input::Closed) => self.closed = true,
                Some(Input::Stop) | None => return Ok(Ended::Stopped),
            }
        }
    }

    /// At the session's end: what is still queued is refused (its senders are told the
    /// session stopped), the open day's narration and sinks finish.
    pub(super) async fn stop(&mut self, today: Today, lanes: &mut Lanes, ended: bool) {
        lanes.close();
        for batch in self.pushes.drain(..) {
            batch.stopped(&today.host);
        }
        while let Some(input) = lanes.try_recv() {
            if let Input::Signals { texts, reply, .. } = input {
                Batch::new(texts, reply, None).stopped(&today.host);
            }
        }
        // A replayed day that ran to its end leaves every narration `aura run --narrate` would.
        today.finish(ended && self.clock.replays()).await;
    }

    /// The next tick if it is due, the day's close once its last tick ran, else how long to
    /// wait for an input. A day that filled runs its closing tick and closes at once, on
    /// every clock.
    fn next(&self, today: &Today, day: &Day<'_>) -> Next {
        let scenario = &day.scenario;
        let due = match day.last_tick {
            None => Some(scenario.start),
            Some(last) => scenario.tick_after(last),
        };
        let due = match today.closing(day) {
            Some(closing) => Some(due.map_or(closing, |due| due.min(closing))),
            None => due,
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
                // came (and, for the last tick, one after the end), or the inputs ended. A
                // day that filled does not wait: what comes later is the next part's.
                let known = match last {
                    true => self.end.is_some_and(|end| self.horizon > end),
                    false => self.horizon > at,
                } || today.closes_at.is_some();
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

    /// Checks one input and takes it into the open day (not yet journaled: the caller
    /// journals what a push took at once): its acknowledgement and its journal line (none
    /// for a signal taken before under its id: that acknowledgement again), or its refusal
    /// (quarantined). What is stamped after the day's last tick waits for the next.
    pub(super) fn take(
        &mut self,
        today: &mut Today,
        day: &mut Day<'_>,
        text: &str,
    ) -> Result<(Ack, Option<Value>), Refused> {
        let host = today.host.clone();
        let refused = |refusal: InputRefusal| refuse(&host, &refusal, text);
        let now = self.reading.now().unwrap_or(self.horizon);
        let reaches = |answer: &crate::scenario::Answer| day.reaches(answer);
        let answered = day.answered_unapplied();
        // The day before first: a signal it carried into this day keeps the acknowledgement
        // it was first given.
        let seen = |id: &str| {
            self.yesterday
                .get(id)
                .or_else(|| today.seen.get(id))
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
        let (signal, mut record, key) = match taken {
            Taken::New {
                signal,
                record,
                sent,
            } => (signal, record, sent),
            Taken::Again(id) => {
                let before = self.yesterday.get(&id).or_else(|| today.seen.get(&id));
                let mut ack = before.map(|(_, ack)| ack.clone()).ok_or_else(|| {
                    refused(input::refusal(
                        "id_reused",
                        "the id was taken before".to_owned(),
                        Action::CorrectCall,
                    ))
                })?;
                ack.again = true;
                return Ok((ack, None));
            }
        };
        // Readings that fill the journal leave room for what ticks at once.
        let held = day.scenario.signals.len();
        let room = match day.scenario.tick_on.contains(&signal.kind) {
            true => DAY_JOURNAL_SIGNALS_MAX,
            false => DAY_JOURNAL_SIGNALS_MAX - DAY_JOURNAL_URGENT_RESERVED,
        };
        if held >= room {
            let wait = today.closes_at.and_then(|at| self.reading.until(at));
            let wait_ms = wait.map_or(0, |wait| wait.as_millis() as u64);
            return Err(refused(input::busy(
                format!("the day's journal holds {held} signals; its closing tick is due"),
                wait_ms.max(BUSY_RETRY_AFTER_MS),
            )));
        }
        let seq = today.next_seq;
        today.next_seq += 1;
        record[LINE_SEQ] = seq.into();
        let ack = Ack::of(seq, &signal, &day.scenario);
        if let Some((id, what)) = key {
            today.seen.insert(id, (what, ack.clone()));
        }
        self.horizon = self.horizon.max(signal.at);
        let moves = signal.kind == UTC_OFFSET;
        day.scenario.accept(signal);
        // The signal that fills the day fixes its closing tick: now, on the session's clock.
        if day.scenario.signals.len() >= DAY_SIGNALS_MAX && today.closes_at.is_none() {
            let after = day.last_tick.map_or(day.scenario.start, |last| {
                last + time::Duration::milliseconds(1)
            });
            let closes_at = urgent_tick(now.max(after));
            today.closes_at = Some(closes_at);
            record[LINE_CLOSES_AT] = Value::String(day.scenario.format(closes_at));
        }
        today.bound(day, moves);
        Ok((ack, Some(record)))
    }
}

impl Today {
    /// When the day ends: at the person's local midnight, where they are (worked out again
    /// when `moved`: an offset change came, flying west makes the day longer), never at or
    /// before its last tick (a change stamped before it takes effect after it: the day ends
    /// at its next tick); and a day that filled just after its closing tick, whichever comes
    /// first.
    fn bound(&mut self, day: &Day<'_>, moved: bool) {
        let scenario = &day.scenario;
        if moved {
            let midnight = zone::day_end(scenario);
            self.ends = match day.last_tick {
                Some(last) if midnight <= last => scenario.tick_after(last).unwrap_or(midnight),
                _ => midnight,
            };
        }
        if let Some(closes_at) = self.closes_at {
            let closing = day.last_tick.map_or(closes_at, |last| last.max(closes_at));
            self.ends = self.ends.min(closing + time::Duration::milliseconds(1));
        }
    }

    /// The day's closing tick, if it filled and that tick has not run yet.
    fn closing(&self, day: &Day<'_>) -> Option<OffsetDateTime> {
        self.closes_at
            .filter(|at| day.last_tick.is_none_or(|last| last < *at))
    }

    /// Whether the day filled and its closing tick has not run yet: it takes nothing more
    /// of a push until it ran.
    pub(super) fn filled(&self, day: &Day<'_>) -> bool {
        self.closing(day).is_some()
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
        let (before, decided_base, name) = (*seq, self.decided_base, Some(self.name.as_str()));
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
        // The tick's records are the life's home's too.
        self.store.ship(&self.name).await?;
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
        // What the day wrote last (its deliveries and narrations, the refusals at a stop).
        if let Err(error) = self.store.ship(&self.name).await {
            tracing::error!(error = %Caused(&error), "the day's last records could not be copied to the life's home");
        }
    }
}
