//! One person's assistant on the host that holds them: from the takeover record to the stop.
//!
//! It owns a held person's run: the takeover (the fence), the live session rebuilt from their
//! journal (every journaled signal applied again, in order, in a scratch data dir of this
//! host's: the journal in JetStream is the state, the dir is a cache), their inbox read from
//! the signal after the last one journaled, each new signal journaled under the fence once the
//! session took it, each decision journaled under the fence and then delivered once (a
//! decision the session makes again after a takeover must equal the journaled one, or the
//! person stops: a run that does not replay is a defect, never delivered), and the lease
//! renewed every `FLEET_RENEW_EVERY_MS`. Every stop (lease lost, fenced, an error, the host
//! stopping) ends the session without writing or delivering anything more. Each step is
//! written to the host's audit log (`aura_fleet::audit`), so who held whom, and which journal
//! records each host wrote, can be checked from the hosts' own logs. It must not decide who
//! holds a person (the placement and the lease do) nor what the assistant does (the
//! orchestrator does).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use tokio::sync::watch;

use aura_contract::limits::{FLEET_LEASE_MS, FLEET_RENEW_EVERY_MS};
use aura_contract::person::Person;
use aura_day::live::{self, Clock, Delivery, LiveConfig, Sink};
use aura_day::orchestrator::Start;
use aura_host::Host;

mod inbox;
mod missed;
mod session_dir;
use inbox::{INPUTS_END, REFUSED, take};
use missed::missed;
use session_dir::{restore, scratch};

use crate::protocol::{AfterAppend, Holding, LeaseStep, Outbox, Record};
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

/// The journal's decisions and their delivery, and the checkpoints.
struct Writer {
    /// The decisions journaled, in order, from decision `base` (the ones read at the takeover
    /// first): those delivered and covered by a checkpoint before the last are let go.
    journaled: Vec<Value>,
    /// The number of `journaled`'s first decision.
    base: u64,
    /// The decisions the last checkpoint captured covers.
    captured_decisions: u64,
    outbox: Outbox,
    /// Signals taken that no stored checkpoint holds: those journaled since the last capture,
    /// and, after a takeover, those of the journal after the checkpoint it restored.
    since_checkpoint: u64,
    /// A checkpoint being stored (one at a time: a slow store skips the ones in between).
    storing: Option<tokio::task::JoinHandle<()>>,
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
            Err(error) => Ended::Failed(error.to_string()),
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
            return Ok(());
        }
        if number > known {
            return Err(self.fail(format!("decision {number} came before decision {known}")));
        }
        let record = Record::Decision {
            number,
            decision: value.clone(),
        };
        self.append(&record, "decision")
            .await
            .map_err(|e| format!("{e:?}"))?;
        writer.journaled.push(value);
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
                tracing::warn!(person = %person, %error, "lease not released: it runs out instead");
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
    let (ended, mut ended_rx) = watch::channel(None);
    let holder = Arc::new(Holder {
        fleet: fleet.clone(),
        person: person.clone(),
        me: me.clone(),
        holding: Mutex::new(claim.holding.clone()),
        writer: tokio::sync::Mutex::new(Writer {
            journaled: claim.replayed.decisions.clone(),
            base: claim.replayed.decisions_base(),
            captured_decisions: claim.replayed.decisions_base(),
            outbox: claim.outbox.clone(),
            since_checkpoint: 0,
            storing: None,
        }),
        ended,
    });
    // However the hold ends (returned, or its task dropped), nothing is written for the
    // person after: the session's sink and a late append see the hold ended.
    let _ended_on_drop = EndedOnDrop(holder.clone());
    let renewing = Aborting(tokio::spawn(renewals(holder.clone())));
    // Decisions the last holder journaled and did not deliver go out now, not at the next one.
    let delivered = holder.deliver_due(&mut *holder.writer.lock().await).await;
    let mut from_checkpoint = true;
    let outcome = loop {
        if let Err(why) = delivered {
            break Err(Ended::Failed(why));
        }
        let session = Session {
            base: &host,
            root: &root,
            enrolment: &enrolment,
            clock,
            claim: &claim,
            from_checkpoint,
        };
        match run(&holder, session, &mut stop, &mut ended_rx).await {
            // Nothing was taken or decided: live the journal again without the checkpoint.
            Err(Stop::ResumeRefused(why)) if from_checkpoint => {
                tracing::warn!(target: "aura_fleet::audit", event = "checkpoint_refused",
                    person = %person, host = %me, why);
                from_checkpoint = false;
            }
            Err(Stop::ResumeRefused(why)) => break Err(Ended::Failed(why)),
            Err(Stop::Ended(why)) => break Err(why),
            Ok(()) => break Ok(()),
        }
    };
    drop(renewing);
    let why = match outcome {
        Ok(()) => holder.ended().unwrap_or(Ended::Stopped),
        Err(why) => {
            holder.end(why);
            holder.ended().unwrap_or(Ended::Stopped)
        }
    };
    // Let go first, then wait for a checkpoint being stored: renewals have stopped, and a
    // checkpoint does not need the lease (a takeover checks that it fits the journal).
    if matches!(why, Ended::Stopped | Ended::Failed(_)) {
        let holding = holder.holding();
        if let Err(error) = fleet.release(&person, &holding).await {
            tracing::warn!(person = %person, %error, "lease not released: it runs out instead");
        }
    }
    if let Some(storing) = holder.writer.lock().await.storing.take() {
        let _ = storing.await;
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
    claim: &'a Claim,
    /// Resume from the person's stored checkpoint, if it fits.
    from_checkpoint: bool,
}

/// Why a hold's body returned early.
enum Stop {
    /// The hold ends.
    Ended(Ended),
    /// The session refused to resume from the restored checkpoint before taking anything.
    ResumeRefused(String),
}

impl From<Ended> for Stop {
    fn from(ended: Ended) -> Self {
        Self::Ended(ended)
    }
}

/// The hold's body: the session and its inbox, until something ends it.
async fn run(
    holder: &Arc<Holder>,
    session_of: Session<'_>,
    stop: &mut watch::Receiver<bool>,
    ended: &mut watch::Receiver<Option<Ended>>,
) -> Result<(), Stop> {
    let Session {
        base,
        root,
        enrolment,
        clock,
        claim,
        from_checkpoint,
    } = session_of;
    let failed = |what: &str| {
        let what = what.to_owned();
        move |error: &dyn std::fmt::Display| Ended::Failed(format!("{what}: {error}"))
    };
    let dir = scratch(root, &holder.person).map_err(|e| failed("scratch dir")(&e))?;
    let restored = match from_checkpoint {
        true => restore(holder, claim, root, &dir).await,
        false => None,
    };
    // A journal replayed from a checkpoint is lived only from one: without it, the person
    // waits for a host (this one or another, later) that can read it.
    if let Some(covered) = claim.replayed.covered
        && restored.is_none()
    {
        return Err(Ended::Failed(format!(
            "{}'s journal was purged below record {} and no checkpoint at or past it could be restored",
            holder.person, covered.fence
        ))
        .into());
    }
    // The signals taken that no stored checkpoint holds count toward the next one (as the
    // inbox counts what it takes: not a refusal, not the end of the inputs): a person whose
    // holds keep ending before FLEET_CHECKPOINT_EVERY_SIGNALS new signals is still
    // checkpointed, not lived whole at every takeover.
    let unsaved = claim.replayed.signals.iter().filter(|(id, signal)| {
        let seq = id.parse::<u64>().unwrap_or(u64::MAX);
        signal.get(INPUTS_END).is_none()
            && signal.get(REFUSED).is_none()
            && restored.is_none_or(|inbox_next| seq >= inbox_next)
    });
    holder.writer.lock().await.since_checkpoint = unsaved.count() as u64;
    let host = base
        .for_person(&holder.person, &dir, enrolment.seed)
        .map_err(|e| failed("data dir")(&e))?;
    let config = LiveConfig {
        is_scenario: enrolment.setup.get("signals").is_some(),
        setup: enrolment.setup.clone(),
        tick_on: None,
        seed: enrolment.seed,
        clock,
        start: Start::Resume,
        narration: None,
        keep_days: aura_contract::limits::LIVE_KEEP_DAYS_DEFAULT,
        home: None,
    };
    // The journal is the state: its signals go into the open day's journal (the first day's,
    // or the restored checkpoint's) as the session's own, so the session starts as if it had
    // taken them itself and closes each day past them as it did.
    let mut inputs_ended = false;
    let mut next_inbox = restored.unwrap_or(1);
    let mut replayed = Vec::new();
    for (id, signal) in &claim.replayed.signals {
        let seq: u64 = id
            .parse()
            .ok()
            .filter(|seq| *seq < u64::MAX)
            .ok_or_else(|| {
                failed("journal")(&format!("signal id `{id}` is not an inbox sequence"))
            })?;
        next_inbox = next_inbox.max(seq + 1);
        let in_checkpoint = restored.is_some_and(|inbox_next| seq < inbox_next);
        match (signal.get(INPUTS_END), signal.get(REFUSED)) {
            (Some(_), _) => inputs_ended = true,
            (None, Some(_)) => {}
            (None, None) if in_checkpoint => {}
            (None, None) => replayed.push(signal.clone()),
        }
    }
    let open_day = live::open_life(&host, &config, &replayed)
        .await
        .map_err(|e| failed("data dir")(&e))?;
    // The handle refuses on the open day's host until the session takes the day over, so a
    // refusal that comes before the session began is the day's (not the data dir's).
    let (handle, inbox) = live::channel(&open_day);
    drop(open_day);
    let sinks: Vec<Arc<dyn Sink>> = vec![Arc::new(Decisions(holder.clone(), host.clone()))];
    let session_host = host.clone();
    let mut session = Aborting(tokio::spawn(async move {
        live::live(&session_host, config, sinks, inbox, |_| {}).await
    }));
    if inputs_ended {
        handle.close().await;
    }
    let mut messages = holder
        .fleet
        .inbox(&holder.person, next_inbox)
        .await
        .map_err(|e| failed("inbox")(&e))?;
    let mut finished = false;
    let mut taken = false;
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
                    Ok(Err(error)) if restored.is_some() && !taken => {
                        break Err(Stop::ResumeRefused(error.to_string()));
                    }
                    Ok(Err(error)) => break Err(failed("session")(&error).into()),
                    Err(error) => break Err(failed("session")(&error).into()),
                }
            }
            next = messages.next() => match next {
                Ok((seq, sent)) => {
                    taken = true;
                    if let Err(why) = take(holder, &handle, &dir, seq, sent).await {
                        break Err(why.into());
                    }
                }
                Err(error) => break Err(failed("inbox")(&error).into()),
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

/// Renews the lease every `FLEET_RENEW_EVERY_MS`, whatever the session and its inbox are
/// doing, until it is not this host's any more (the hold then ends).
async fn renewals(holder: Arc<Holder>) {
    let mut renew = tokio::time::interval(Duration::from_millis(FLEET_RENEW_EVERY_MS));
    renew.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        renew.tick().await;
        if let Err(why) = renewed(&holder).await {
            holder.end(why);
            return;
        }
    }
}

/// Renews the lease once; `Err` when it is not this host's any more.
async fn renewed(holder: &Holder) -> Result<(), Ended> {
    let mut holding = holder.holding();
    match holder
        .fleet
        .renew(&holder.person, &holder.me, &mut holding)
        .await
    {
        Ok(LeaseStep::Renew { .. }) => {
            if let Ok(mut held) = holder.holding.lock() {
                held.revision = holding.revision;
            }
            Ok(())
        }
        Ok(_) => Err(Ended::Lost),
        Err(error) => Err(Ended::Failed(error.to_string())),
    }
}
