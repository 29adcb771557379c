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

use serde_json::{Value, json};
use tokio::sync::watch;

use aura_contract::limits::{FLEET_LEASE_MS, FLEET_RENEW_EVERY_MS, LIVE_SIGNAL_BYTES_MAX};
use aura_contract::person::Person;
use aura_day::live::{self, Clock, Delivery, Live, LiveConfig, Sink};
use aura_day::orchestrator::Start;
use aura_host::Host;
use aura_host::journal::SIGNALS_PATH;

use crate::jetstream::{Claim, Enrolment, JetStreamFleet, Journaled, Sent};
use crate::protocol::{AfterAppend, Holding, LeaseStep, Outbox, Record};

/// What journals a person's end of inputs (a replayed day may then run to its end).
const INPUTS_END: &str = "inputs_end";
/// What journals an inbox message the session refused (quarantined where it was refused): the
/// next holder passes over it rather than refusing and quarantining it again.
const REFUSED: &str = "refused";

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
    fleet: JetStreamFleet,
    person: Person,
    me: String,
    /// The lease and the fence (never held across an await).
    holding: Mutex<Holding>,
    /// Journal writes one at a time, in the order the session made them.
    writer: tokio::sync::Mutex<Writer>,
    ended: watch::Sender<Option<Ended>>,
}

/// The journal's decisions and their delivery.
struct Writer {
    /// The decisions journaled, in order (the ones read at the takeover first).
    journaled: Vec<Value>,
    outbox: Outbox,
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

    fn ended(&self) -> Option<Ended> {
        self.ended.borrow().clone()
    }

    /// Appends `record` under the fence: `Err` ends the hold (fenced, or a failed step).
    async fn append(&self, record: &Journaled, what: &str) -> Result<(), Ended> {
        if let Some(ended) = self.ended() {
            return Err(ended);
        }
        let mut holding = self
            .holding
            .lock()
            .map_or_else(|e| e.into_inner().clone(), |h| h.clone());
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

    /// Journals decision `delivery` (or checks it against the journaled one) and delivers
    /// what is due.
    async fn decided(&self, delivery: &Delivery) -> Result<(), String> {
        let mut writer = self.writer.lock().await;
        if let Some(ended) = self.ended() {
            return Err(format!(
                "{} is not held here any more ({ended:?})",
                self.person
            ));
        }
        let value = serde_json::to_value(delivery).map_err(|e| e.to_string())?;
        let known = writer.journaled.len() as u64;
        if delivery.seq < known {
            if writer.journaled[delivery.seq as usize] != value {
                let why = format!(
                    "decision {} differs from the journaled one: the run does not replay",
                    delivery.seq
                );
                self.end(Ended::Failed(why.clone()));
                return Err(why);
            }
        } else if delivery.seq == known {
            let record = Record::Decision {
                number: delivery.seq,
                decision: value.clone(),
            };
            self.append(&record, "decision")
                .await
                .map_err(|e| format!("{e:?}"))?;
            writer.journaled.push(value);
        } else {
            let why = format!("decision {} came before decision {known}", delivery.seq);
            self.end(Ended::Failed(why.clone()));
            return Err(why);
        }
        let Writer { journaled, outbox } = &mut *writer;
        match self.fleet.deliver(&self.person, outbox, journaled).await {
            Ok(published) => {
                if published > 0 {
                    tracing::info!(target: "aura_fleet::audit", event = "delivered", person = %self.person,
                        host = %self.me, next = outbox.next);
                }
                Ok(())
            }
            Err(error) => {
                self.end(Ended::Failed(error.to_string()));
                Err(error.to_string())
            }
        }
    }
}

/// The sink that journals and delivers a held person's decisions.
struct Decisions(Arc<Holder>);

impl Sink for Decisions {
    fn name(&self) -> &str {
        "fleet"
    }

    fn takes(&self, _: aura_contract::envelope::Surface) -> bool {
        true
    }

    fn deliver<'a>(&'a self, delivery: &'a Delivery) -> live::deliver::Delivering<'a> {
        Box::pin(self.0.decided(delivery))
    }
}

/// What a host hands a person's hold.
pub struct Hold {
    /// The fleet's streams and buckets.
    pub fleet: JetStreamFleet,
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
        Err(error) => return Ended::Failed(error.to_string()),
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
            outbox: claim.outbox.clone(),
        }),
        ended,
    });
    let why = match run(
        &holder,
        &host,
        &root,
        &enrolment,
        clock,
        &claim,
        &mut stop,
        &mut ended_rx,
    )
    .await
    {
        Ok(()) => holder.ended().unwrap_or(Ended::Stopped),
        Err(why) => {
            holder.end(why);
            holder.ended().unwrap_or(Ended::Stopped)
        }
    };
    if matches!(why, Ended::Stopped | Ended::Failed(_)) {
        let holding = holder
            .holding
            .lock()
            .map_or_else(|e| e.into_inner().clone(), |h| h.clone());
        if let Err(error) = fleet.release(&person, &holding).await {
            tracing::warn!(person = %person, %error, "lease not released: it runs out instead");
        }
    }
    tracing::info!(target: "aura_fleet::audit", event = "stop", person = %person, host = %me,
        why = ?why);
    why
}

/// The hold's body: the session, its inbox and the renewals, until something ends it.
#[allow(clippy::too_many_arguments)]
async fn run(
    holder: &Arc<Holder>,
    base: &Host,
    root: &Path,
    enrolment: &Enrolment,
    clock: Clock,
    claim: &Claim,
    stop: &mut watch::Receiver<bool>,
    ended: &mut watch::Receiver<Option<Ended>>,
) -> Result<(), Ended> {
    let failed = |what: &str| {
        let what = what.to_owned();
        move |error: &dyn std::fmt::Display| Ended::Failed(format!("{what}: {error}"))
    };
    let dir = scratch(root, &holder.person).map_err(|e| failed("scratch dir")(&e))?;
    let host = base
        .for_person(&dir, enrolment.seed)
        .map_err(|e| failed("data dir")(&e))?;
    host.journal()
        .open_live()
        .map_err(|e| failed("data dir")(&e))?;
    // The journal is the state: its signals go into the scratch dir as the session's own, so
    // the session starts as if it had taken them itself.
    let mut inputs_ended = false;
    let mut next_inbox = 1;
    for (id, signal) in &claim.replayed.signals {
        let seq: u64 = id.parse().map_err(|_| {
            failed("journal")(&format!("signal id `{id}` is not an inbox sequence"))
        })?;
        next_inbox = next_inbox.max(seq + 1);
        match (signal.get(INPUTS_END), signal.get(REFUSED)) {
            (Some(_), _) => inputs_ended = true,
            (None, Some(_)) => {}
            (None, None) => {
                host.journal()
                    .signal(signal)
                    .map_err(|e| failed("data dir")(&e))?;
            }
        }
    }
    let config = LiveConfig {
        is_scenario: enrolment.setup.get("signals").is_some(),
        setup: enrolment.setup.clone(),
        tick_on: None,
        seed: enrolment.seed,
        clock,
        start: Start::Resume,
    };
    let (handle, inbox) = live::channel(&host);
    let sinks: Vec<Arc<dyn Sink>> = vec![Arc::new(Decisions(holder.clone()))];
    let session_host = host.clone();
    let mut session =
        tokio::spawn(async move { live::live(&session_host, config, sinks, inbox, |_| {}).await });
    if inputs_ended {
        handle.close().await;
    }
    let mut messages = holder
        .fleet
        .inbox(&holder.person, next_inbox)
        .await
        .map_err(|e| failed("inbox")(&e))?;
    let mut renew = tokio::time::interval(Duration::from_millis(FLEET_RENEW_EVERY_MS));
    renew.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut finished = false;
    let outcome = loop {
        tokio::select! {
            _ = stop.changed() => break Ok(()),
            _ = ended.changed() => break Ok(()),
            _ = renew.tick() => {
                if let Err(why) = renewed(holder).await {
                    break Err(why);
                }
            }
            done = &mut session, if !finished => {
                finished = true;
                match done {
                    Ok(Ok(_summary)) => tracing::info!(target: "aura_fleet::audit",
                        event = "day_finished", person = %holder.person, host = %holder.me),
                    Ok(Err(error)) => break Err(failed("session")(&error)),
                    Err(error) => break Err(failed("session")(&error)),
                }
            }
            next = messages.next(Duration::from_millis(FLEET_RENEW_EVERY_MS)) => match next {
                Ok(None) => {}
                Ok(Some((seq, sent))) => {
                    if let Err(why) = take(holder, &host, &handle, seq, sent).await {
                        break Err(why);
                    }
                }
                Err(error) => break Err(failed("inbox")(&error)),
            },
        }
    };
    handle.stop().await;
    if !finished {
        // The session checkpoints and returns; its sink refuses anything more.
        let _ = tokio::time::timeout(Duration::from_millis(FLEET_LEASE_MS), &mut session).await;
        session.abort();
    }
    outcome
}

/// Renews the lease; `Err` when it is not this host's any more.
async fn renewed(holder: &Holder) -> Result<(), Ended> {
    let mut holding = holder
        .holding
        .lock()
        .map_or_else(|e| e.into_inner().clone(), |h| h.clone());
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

/// Hands inbox message `seq` to the session and journals it once taken.
async fn take(
    holder: &Holder,
    host: &Host,
    live: &Live,
    seq: u64,
    sent: Sent,
) -> Result<(), Ended> {
    let _writer = holder.writer.lock().await;
    let id = seq.to_string();
    let bytes = match sent {
        Sent::InputsEnd => {
            let record = Record::Signal {
                id,
                signal: json!({ INPUTS_END: true }),
            };
            holder.append(&record, "inputs_end").await?;
            live.close().await;
            return Ok(());
        }
        Sent::Signal(bytes) => bytes,
        Sent::Misaddressed { named, bytes } => {
            let reason = format!(
                "a message on {}'s subject names {}: one person's signal is never taken for another",
                holder.person,
                aura_contract::visible::visible(&named)
            );
            live.refuse_request("wrong_person", reason, &String::from_utf8_lossy(&bytes));
            return refused(holder, id, "wrong_person").await;
        }
    };
    loop {
        match live.push(&bytes).await {
            Ok(ack) if ack.again => return Ok(()),
            Ok(ack) => {
                let lines = host
                    .journal()
                    .lines(SIGNALS_PATH, ack.seq, 2 * LIVE_SIGNAL_BYTES_MAX as u64)
                    .map_err(|e| Ended::Failed(format!("data dir: {e}")))?;
                let signal: Value = lines
                    .first()
                    .and_then(|line| serde_json::from_str(line).ok())
                    .ok_or_else(|| {
                        Ended::Failed(format!("signal {} is not in the data dir", ack.seq))
                    })?;
                return holder
                    .append(&Record::Signal { id, signal }, "signal")
                    .await;
            }
            Err(refused) if refused.kind == "busy" => {
                let wait = refused.recovery.retry_after_ms.unwrap_or(10);
                tokio::time::sleep(Duration::from_millis(wait)).await;
            }
            // Quarantined by the session.
            Err(failure) => return refused(holder, id, &failure.kind).await,
        }
    }
}

/// Journals that inbox message `id` was refused for `kind`.
async fn refused(holder: &Holder, id: String, kind: &str) -> Result<(), Ended> {
    tracing::info!(target: "aura_fleet::audit", event = "refused", person = %holder.person,
        host = %holder.me, inbox = %id, kind);
    let record = Record::Signal {
        id,
        signal: json!({ REFUSED: kind }),
    };
    holder.append(&record, "refused").await
}

/// `person`'s scratch data dir under `root`, emptied of an earlier hold's session (its
/// quarantine log stays: refusals are never dropped).
fn scratch(root: &Path, person: &Person) -> std::io::Result<PathBuf> {
    let dir = root.join(person.tenant()).join(person.user());
    std::fs::create_dir_all(&dir)?;
    for entry in std::fs::read_dir(&dir)? {
        let entry = entry?;
        let name = entry.file_name();
        if name == "errors" || name == "code-cache" {
            continue;
        }
        match entry.file_type()?.is_dir() {
            true => std::fs::remove_dir_all(entry.path())?,
            false => std::fs::remove_file(entry.path())?,
        }
    }
    Ok(dir)
}
