//! One person's assistant on the host that holds them: from the takeover record to the stop.
//!
//! It owns a held person's run: the takeover (the fence), the live session on their life in
//! the fleet's home ([`crate::life::FleetHome`], through a working copy in a scratch data dir
//! of this host's: the home is the state, the dir a cache), their inbox read from the message
//! after the life's read position of source `inbox` (each message taken with its sequence as
//! that position, in the life's one write), each decision journaled under the fence and then
//! delivered once (a decision the session makes again after a takeover must equal the
//! journaled one, or the person stops: a run that does not replay is a defect, never
//! delivered), the journal compacted as the days go by, and the lease renewed every
//! `FLEET_RENEW_EVERY_MS`. Every stop (lease lost, fenced, an error, the host
//! stopping) ends the session without writing or delivering anything more. Each step is
//! written to the host's audit log (`aura_fleet::audit`), so who held whom, and which journal
//! records each host wrote, can be checked from the hosts' own logs. It must not decide who
//! holds a person (the placement and the lease do) nor what the assistant does (the
//! orchestrator does).

use aura_contract::caused::Caused;
use aura_contract::caused::caused;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use tokio::sync::watch;

use aura_contract::limits::{FLEET_LEASE_MS, FLEET_LIFE_OPEN_WAIT_MS};
use aura_contract::person::Person;
use aura_day::live::{self, Clock, Delivery, LiveConfig, Sink};
use aura_day::orchestrator::Start;
use aura_host::Host;

mod inbox;
mod lease;
mod missed;
mod session_dir;
pub use inbox::INBOX_SOURCE;
use inbox::{INPUTS_END, take};
use lease::renewals;
use missed::{missed, recorded};
use session_dir::{compact, forget, scratch};

use crate::life::FleetHome;
use crate::protocol::{AfterAppend, Covered, Holding, Outbox, Record, Seq};
use crate::store::{Claim, Enrolment, Fleet, Journaled};

/// Why a host stopped for a person.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ended {
    /// The host stops (SIGTERM, SIGINT): the lease was let go.
    Stopped,
    /// The lease is another host's now.
    Lost,
    /// An append was refused: a newer holder took the person over.
    Fenced,
    /// A step failed; the lease was let go for another host (or this one) to take them again.
    Failed(String),
}

/// What a holder shares between its inbox loop and its decisions' sink.
struct Holder {
    fleet: Fleet,
    person: Person,
    me: String,
    /// The lease and the fence (never held across an await).
    holding: Mutex<Holding>,
    /// Journal writes one at a time, in the order the session made them.
    writer: tokio::sync::Mutex<Writer>,
    ended: watch::Sender<Option<Ended>>,
}

/// The journal's decisions and their delivery, and the journal's compaction.
struct Writer {
    /// The decisions journaled, in order, from decision `base` (the ones read at the takeover
    /// first): those before the head are let go.
    journaled: Vec<Value>,
    /// The number of `journaled`'s first decision.
    base: u64,
    outbox: Outbox,
    /// The day of the last decision journaled or checked, and the journal sequence of the
    /// last one this hold journaled itself.
    last_day: Option<String>,
    last_decision_at: Option<Seq>,
    /// The first inbox sequence the life does not hold (every one before it is taken or
    /// passed over, durable in the life).
    inbox_next: u64,
    /// The inputs ended: the journal keeps its record, so it is compacted no more.
    inputs_ended: bool,
    /// Where the head moves once the decisions before it were delivered: the first decision
    /// of the newest day.
    compact_to: Option<Covered>,
    /// The head being moved and the journal purged (one at a time).
    compacting: Option<tokio::task::JoinHandle<()>>,
}

impl Holder {
    /// Ends the hold (the first reason stays).
    fn end(&self, why: Ended) {
        self.ended.send_if_modified(|ended| match ended {
            Some(_) => false,
            None => {
                *ended = Some(why);
                true
            }
        });
    }

    /// A copy of the holding (a poisoned lock still holds the last one written).
    fn holding(&self) -> Holding {
        self.holding
            .lock()
            .map_or_else(|e| e.into_inner().clone(), |h| h.clone())
    }

    fn ended(&self) -> Option<Ended> {
        self.ended.borrow().clone()
    }

    /// Appends `record` under the fence: `Err` ends the hold (fenced, or a failed step).
    async fn append(&self, record: &Journaled, what: &str) -> Result<(), Ended> {
        if let Some(ended) = self.ended() {
            return Err(ended);
        }
        let mut holding = self.holding();
        let after = self.fleet.append(&self.person, &mut holding, record).await;
        let stop = match after {
            Ok(AfterAppend::Go) => {
                if let Ok(mut held) = self.holding.lock() {
                    held.fence = holding.fence;
                }
                tracing::info!(target: "aura_fleet::audit", event = "appended", person = %self.person,
                    host = %self.me, epoch = holding.epoch, seq = holding.fence, record = what);
                return Ok(());
            }
            // Past the takeover, any refusal means a newer holder wrote.
            Ok(AfterAppend::Fenced | AfterAppend::Reread) => Ended::Fenced,
            Err(error) => Ended::Failed(caused(&error)),
        };
        self.end(stop.clone());
        Err(stop)
    }

    /// Journals decision `delivery` (or checks it against the journaled one), and any the
    /// session recorded before it that its sink was not handed (a full queue), from the
    /// traces of the session's days in `host`'s data dir; then delivers what is due.
    async fn decided(&self, host: &Host, delivery: &Delivery) -> Result<(), String> {
        let mut writer = self.writer.lock().await;
        if let Some(ended) = self.ended() {
            return Err(format!(
                "{} is not held here any more ({ended:?})",
                self.person
            ));
        }
        let known = writer.base + writer.journaled.len() as u64;
        if delivery.life_seq > known {
            let missed = missed(host, delivery, known).map_err(|why| self.fail(why))?;
            for missed in &missed {
                self.journal_decision(&mut writer, missed).await?;
            }
        }
        self.journal_decision(&mut writer, delivery).await?;
        self.deliver_due(&mut writer).await?;
        compact(self, &mut writer);
        Ok(())
    }

    /// Journals the decisions the life in `host`'s data dir recorded that the journal does not
    /// hold yet, in order, then delivers what is due.
    async fn recorded(&self, host: &Host) -> Result<(), String> {
        let mut writer = self.writer.lock().await;
        let known = writer.base + writer.journaled.len() as u64;
        for delivery in &recorded(host, known).map_err(|why| self.fail(why))? {
            self.journal_decision(&mut writer, delivery).await?;
        }
        self.deliver_due(&mut writer).await
    }

    /// Ends the hold for `why`, and returns it.
    fn fail(&self, why: String) -> String {
        self.end(Ended::Failed(why.clone()));
        why
    }

    /// Journals `delivery` if it is the next decision, or checks it against the journaled one.
    async fn journal_decision(
        &self,
        writer: &mut Writer,
        delivery: &Delivery,
    ) -> Result<(), String> {
        let value = serde_json::to_value(delivery).map_err(|e| e.to_string())?;
        let known = writer.base + writer.journaled.len() as u64;
        let number = delivery.life_seq;
        if number < writer.base {
            // A session resumes from a checkpoint at or past the one its journal was replayed
            // from: it makes again only decisions after it.
            return Err(self.fail(format!(
                "decision {number} was made again, but this hold keeps decisions from {} on",
                writer.base
            )));
        }
        if number < known {
            if writer.journaled[(number - writer.base) as usize] != value {
                return Err(self.fail(format!(
                    "decision {number} differs from the journaled one: the run does not replay"
                )));
            }
            writer.last_day.clone_from(&delivery.day);
            writer.last_decision_at = None;
            return Ok(());
        }
        if number > known {
            return Err(self.fail(format!("decision {number} came before decision {known}")));
        }
        // The first decision of a new day: the session never makes the ones before it again
        // (it resumes from its life's open day), so the journal may be compacted up to the
        // decision before it, once delivered; the inbox up to what the life holds.
        let new_day = writer.last_day.is_some() && writer.last_day != delivery.day;
        if let (true, Some(fence), false) = (new_day, writer.last_decision_at, writer.inputs_ended)
        {
            writer.compact_to = Some(Covered {
                fence,
                decisions: number,
                epoch: self.holding().epoch,
                inbox_next: writer.inbox_next,
            });
        }
        let record = Record::Decision {
            number,
            decision: value.clone(),
        };
        self.append(&record, "decision")
            .await
            .map_err(|e| format!("{e:?}"))?;
        writer.journaled.push(value);
        writer.last_day.clone_from(&delivery.day);
        writer.last_decision_at = Some(self.holding().fence);
        Ok(())
    }

    /// Delivers the journaled decisions not delivered yet.
    async fn deliver_due(&self, writer: &mut Writer) -> Result<(), String> {
        let Writer {
            journaled,
            base,
            outbox,
            ..
        } = &mut *writer;
        match self
            .fleet
            .deliver(&self.person, outbox, journaled, *base)
            .await
        {
            Ok(published) => {
                if published > 0 {
                    tracing::info!(target: "aura_fleet::audit", event = "delivered", person = %self.person,
                        host = %self.me, next = outbox.next);
                }
                Ok(())
            }
            Err(error) => Err(self.fail(error.to_string())),
        }
    }
}

/// The sink that journals and delivers a held person's decisions (their session's host, for
/// the traces it was not handed).
struct Decisions(Arc<Holder>, Host);

impl Sink for Decisions {
    fn name(&self) -> &str {
        "fleet"
    }

    fn takes(&self, _: aura_contract::envelope::Surface) -> bool {
        true
    }

    fn deliver<'a>(&'a self, delivery: &'a Delivery) -> live::deliver::Delivering<'a> {
        Box::pin(self.0.decided(&self.1, delivery))
    }
}

/// A task that is aborted when its handle is dropped: a hold that is itself aborted (its
/// host stopping, or its task dropped) leaves no renewals and no session behind it.
struct Aborting<T>(tokio::task::JoinHandle<T>);

impl<T> Drop for Aborting<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Ends its hold when dropped (the first reason stays: a hold that returned said why).
struct EndedOnDrop(Arc<Holder>);

impl Drop for EndedOnDrop {
    fn drop(&mut self) {
        self.0.end(Ended::Stopped);
    }
}

/// What a host hands a person's hold.
pub struct Hold {
    /// The fleet's streams and buckets.
    pub fleet: Fleet,
    /// This host (its agents, engine and crossing, shared by every person it holds).
    pub host: Host,
    /// Where this host keeps its people's scratch data dirs.
    pub root: PathBuf,
    /// This host's id.
    pub me: String,
    /// The person.
    pub person: Person,
    /// Their enrolment.
    pub enrolment: Enrolment,
    /// The clock their sessions live on.
    pub clock: Clock,
}

/// Holds `hold.person` from `claim` until the lease is lost, a newer holder fences this one,
/// a step fails, or `stop` turns true; says why it ended.
pub async fn hold(hold: Hold, mut claim: Claim, mut stop: watch::Receiver<bool>) -> Ended {
    let Hold {
        fleet,
        host,
        root,
        me,
        person,
        enrolment,
        clock,
    } = hold;
    match fleet.take_over(&person, &me, &mut claim).await {
        Ok(true) => {}
        Ok(false) => return Ended::Fenced,
        Err(error) => {
            // Let go at once: what the server stored is unknown, and the next holder fences it.
            if let Err(error) = fleet.release(&person, &claim.holding).await {
                tracing::warn!(person = %person, error = %Caused(&error), "lease not released: it runs out instead");
            }
            let why = Ended::Failed(error.to_string());
            tracing::info!(target: "aura_fleet::audit", event = "stop", person = %person,
                host = %me, epoch = claim.holding.epoch, why = ?why);
            return why;
        }
    }
    tracing::info!(target: "aura_fleet::audit", event = "hold", person = %person, host = %me,
        epoch = claim.holding.epoch, seq = claim.holding.fence,
        signals = claim.replayed.signals.len(), decisions = claim.replayed.decisions.len());
    // An earlier aura's fleet journaled each signal (and kept the person's state in checkpoint
    // objects); this one keeps signals in the person's life. Such a journal is not migrated:
    // the person is let go with the reason, never lived from half their state.
    let earlier = claim
        .replayed
        .signals
        .iter()
        .find(|(_, signal)| signal.get(INPUTS_END).is_none());
    if let Some((id, _)) = earlier {
        if let Err(error) = fleet.release(&person, &claim.holding).await {
            tracing::warn!(person = %person, error = %Caused(&error), "lease not released: it runs out instead");
        }
        let why = Ended::Failed(format!(
            "{person}'s journal holds inbox message {id} as a signal: an earlier aura's fleet wrote it, and its people are not migrated to lives in the fleet's home"
        ));
        tracing::info!(target: "aura_fleet::audit", event = "stop", person = %person,
            host = %me, epoch = claim.holding.epoch, why = ?why);
        return why;
    }
    let inputs_ended = !claim.replayed.signals.is_empty();
    let (ended, mut ended_rx) = watch::channel(None);
    let holder = Arc::new(Holder {
        fleet: fleet.clone(),
        person: person.clone(),
        me: me.clone(),
        holding: Mutex::new(claim.holding.clone()),
        writer: tokio::sync::Mutex::new(Writer {
            journaled: claim.replayed.decisions.clone(),
            base: claim.replayed.decisions_base(),
            outbox: claim.outbox.clone(),
            last_day: None,
            last_decision_at: None,
            inbox_next: 1,
            inputs_ended,
            compact_to: None,
            compacting: None,
        }),
        ended,
    });
    // However the hold ends (returned, or its task dropped), nothing is written for the
    // person after: the session's sink and a late append see the hold ended.
    let _ended_on_drop = EndedOnDrop(holder.clone());
    let renewing = Aborting(tokio::spawn(renewals(holder.clone())));
    // Decisions the last holder journaled and did not deliver go out now, not at the next one.
    let delivered = holder.deliver_due(&mut *holder.writer.lock().await).await;
    let outcome = match delivered {
        Err(why) => Err(Ended::Failed(why)),
        Ok(()) => {
            let session = Session {
                base: &host,
                root: &root,
                enrolment: &enrolment,
                clock,
            };
            run(&holder, session, &mut stop, &mut ended_rx).await
        }
    };
    drop(renewing);
    // The working copy goes with the hold (the life is the home's): a host's disk holds the
    // copies of the people it holds now, two days each.
    forget(&root, &person, claim.holding.epoch);
    let why = match outcome {
        Ok(()) => holder.ended().unwrap_or(Ended::Stopped),
        Err(why) => {
            holder.end(why);
            holder.ended().unwrap_or(Ended::Stopped)
        }
    };
    // Let go first, then wait for a compaction being made: renewals have stopped, and a
    // compaction does not need the lease (its head only moves forward).
    if matches!(why, Ended::Stopped | Ended::Failed(_)) {
        let holding = holder.holding();
        if let Err(error) = fleet.release(&person, &holding).await {
            tracing::warn!(person = %person, error = %Caused(&error), "lease not released: it runs out instead");
        }
    }
    if let Some(compacting) = holder.writer.lock().await.compacting.take() {
        let _ = compacting.await;
    }
    tracing::info!(target: "aura_fleet::audit", event = "stop", person = %person, host = %me,
        epoch = claim.holding.epoch, why = ?why);
    why
}

/// What a hold's session is made from.
struct Session<'a> {
    base: &'a Host,
    root: &'a Path,
    enrolment: &'a Enrolment,
    clock: Clock,
}

/// The name `person`'s life is kept under in the fleet's home: their key as a token (a
/// digest: a person's key holds a `.`, a life's name may not).
pub fn life_name(person: &Person) -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(person.key().as_bytes());
    let hex: String = digest.iter().take(16).map(|b| format!("{b:02x}")).collect();
    format!("p-{hex}")
}

/// The hold's body: the session and its inbox, until something ends it.
async fn run(
    holder: &Arc<Holder>,
    session_of: Session<'_>,
    stop: &mut watch::Receiver<bool>,
    ended: &mut watch::Receiver<Option<Ended>>,
) -> Result<(), Ended> {
    let Session {
        base,
        root,
        enrolment,
        clock,
    } = session_of;
    let failed = |what: &str| {
        let what = what.to_owned();
        move |error: &dyn std::fmt::Display| Ended::Failed(format!("{what}: {error}"))
    };
    let epoch = holder.holding().epoch;
    let dir = scratch(root, &holder.person, epoch).map_err(|e| failed("scratch dir")(&e))?;
    let host = base
        .for_person(&holder.person, &dir, enrolment.seed)
        .map_err(|e| failed("data dir")(&e))?;
    // The host before may hold the life a little longer than the person (its hold ends as
    // its session stops, or runs out): the open waits for it.
    let home = FleetHome::new(holder.fleet.store(), &life_name(&holder.person))
        .map_err(|e| failed("the person's life")(&e))?
        .waiting(FLEET_LIFE_OPEN_WAIT_MS);
    let config = LiveConfig {
        is_scenario: enrolment.setup.get("signals").is_some(),
        setup: enrolment.setup.clone(),
        tick_on: None,
        seed: enrolment.seed,
        clock,
        start: Start::Resume,
        narration: None,
        keep_days: aura_contract::limits::LIVE_KEEP_DAYS_DEFAULT,
        home: Some(Arc::new(home)),
    };
    // The session opens the life (once: a second opener would wait for the first's hold).
    // Nothing is pushed before it answered where the inbox stands, so every refusal goes to
    // the open day it took over.
    let (handle, inbox) = live::channel(&host);
    let sinks: Vec<Arc<dyn Sink>> = vec![Arc::new(Decisions(holder.clone(), host.clone()))];
    let session_host = host.clone();
    let mut session = Aborting(tokio::spawn(async move {
        live::live(&session_host, config, sinks, inbox, |_| {}).await
    }));
    // The inbox goes on after the last message the life holds: the session says (once it
    // took its open day over), or, if its life had ended and it finished at once, the data
    // dir it left.
    let mut finished = false;
    let positions = match handle.positions().await {
        Ok(positions) => positions,
        Err(refused) => {
            let done = tokio::time::timeout(Duration::from_millis(FLEET_LEASE_MS), &mut session.0);
            match done.await {
                Ok(Ok(Ok(_summary))) => {
                    finished = true;
                    tracing::info!(target: "aura_fleet::audit", event = "day_finished",
                        person = %holder.person, host = %holder.me);
                    aura_day::store::files::positions_in(&dir)
                        .map_err(|e| failed("the life's read positions")(&e))?
                }
                _ => return Err(failed("the life's read positions")(&refused.message)),
            }
        }
    };
    let inbox_next = match positions.get(INBOX_SOURCE) {
        Some(position) => position
            .parse::<u64>()
            .ok()
            .and_then(|seq| seq.checked_add(1))
            .ok_or_else(|| failed("the life's inbox position")(&position))?,
        None => 1,
    };
    tracing::info!(target: "aura_fleet::audit", event = "life", person = %holder.person,
        host = %holder.me, inbox = inbox_next);
    let inputs_ended = {
        let mut writer = holder.writer.lock().await;
        writer.inbox_next = inbox_next;
        writer.inputs_ended
    };
    // Decisions the life recorded that the journal does not hold (a hold that ended between
    // a tick and its decisions' records): the session resumed past them, so they are
    // journaled now, in order, and delivered.
    holder
        .recorded(&host)
        .await
        .map_err(|why| Ended::Failed(format!("the life's decisions: {why}")))?;
    if inputs_ended {
        handle.close().await;
    }
    let mut messages = holder
        .fleet
        .inbox(&holder.person, inbox_next)
        .await
        .map_err(|e| failed("inbox")(&e))?;
    let outcome = loop {
        tokio::select! {
            // In this order, every time: a deterministic simulation's seed gives one run.
            biased;
            _ = stop.changed() => break Ok(()),
            _ = ended.changed() => break Ok(()),
            done = &mut session.0, if !finished => {
                finished = true;
                match done {
                    Ok(Ok(_summary)) => tracing::info!(target: "aura_fleet::audit",
                        event = "day_finished", person = %holder.person, host = %holder.me),
                    Ok(Err(error)) => break Err(failed("session")(&error)),
                    Err(error) => break Err(failed("session")(&error)),
                }
            }
            next = messages.next() => match next {
                Ok((seq, sent)) => {
                    if let Err(why) = take(holder, &handle, seq, sent).await {
                        break Err(why);
                    }
                    holder.writer.lock().await.inbox_next = seq + 1;
                }
                Err(error) => break Err(failed("inbox")(&error)),
            },
        }
    };
    handle.stop().await;
    if !finished {
        // The session checkpoints and returns; its sink refuses anything more.
        let _ = tokio::time::timeout(Duration::from_millis(FLEET_LEASE_MS), &mut session.0).await;
    }
    outcome
}
