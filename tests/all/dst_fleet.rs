//! Deterministic simulation of a fleet (seed 002's DST, extended to many hosts): three hosts
//! run the real placement, holds, live sessions and protocol steps (`aura_fleet::placement::
//! serve`, the same code as `aura fleet host`) over a simulated store, an in-memory
//! [`FleetStore`] on tokio's paused clock, so leases and host presence expire on simulated
//! time and a run of minutes takes the CPU it needs. One seed decides every fault:
//! - host crashes (the host's tasks dropped and its store connection dead mid-step, as a
//!   SIGKILL leaves it; restarted later under the same id, its disk kept or lost);
//! - partitions (every step of one host waits out its timeout, its inbox stalls, until healed:
//!   its leases expire and other hosts take its people);
//! - storage faults on a host's steps: refused before they apply, applied with the answer
//!   lost (the host sees a timeout), timed out and applied later (a write that lands after its
//!   writer gave up), or slow; an inbox read that fails or comes late;
//! - a freeze at a journal write (a paused VM, a delayed packet): the write lands seconds
//!   later, after another host took the person over.
//!
//! The store checks the protocol's invariants on every write it accepts (a journal record only
//! from the host whose takeover is the journal's newest, epochs only growing, decisions
//! delivered once, in order, each equal to its journaled record) and the host's simulation hook
//! checks seed 002's on every call (no agent twice in a chain, depth and pending calls
//! bounded). At the end: the inbox positions each person's life (in the fleet's home over the
//! same store) recorded are exactly the signals sent, each once and in order, and the end of
//! their inputs is journaled; every journal replays and its decisions are the ones delivered,
//! and every person's delivered decisions equal their single-machine run, trace by trace. Over
//! the seeds, the run must have done what it is for: people moved, a stale write met the fence,
//! a takeover opened a life another host had lived, a journal was compacted below its head
//! (each purge checked: the person's head covers it and every decision it takes was delivered;
//! at the end what is kept replays from the head). `DST_FLEET_EVENTS=FILE` writes a seed's
//! event log. Every seed runs twice and must give the same event log (every choice is the seed's,
//! tokio's paused clock the only time, and the fleet's selects biased). `just dst-fleet N` runs
//! N seeds; a failing seed prints how to replay it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use serde_json::Value;
use tokio::sync::{Notify, watch};
use tokio::time::Instant;

use aura_contract::limits::{FLEET_LEASE_MS, FLEET_STEP_TIMEOUT_MS};
use aura_day::live::Clock;
use aura_fleet::placement::{FleetHost, serve};
use aura_fleet::protocol::{Covered, Record, Seq, Stored, replay, replay_from};
use aura_fleet::store::{
    Bucket, DECISION_HEADER, EPOCH_HEADER, EXPECTED_FILTER_HEADER, Enrolment, Entry, Fleet,
    FleetError, FleetStore, Journaled, Log, MSG_ID_HEADER, Message, Messages, Step,
    decisions_subject, journal_subject,
};
use aura_host::Host;
use aura_host::simulation::{CallFault, CallPoint, Simulation};

use crate::dst::{Rng, call_violations};
use crate::fleet_day::{Plan, plans, single_machine};
use crate::support::{config, plugins_dir, temp_dir};

/// The hosts of the simulated fleet.
const HOSTS: [&str; 3] = ["h1", "h2", "h3"];
/// The people: one lives the generated life's three days (its checkpoints are restored after
/// takeovers, its days roll over), the others a weekend morning.
const PEOPLE: usize = 5;
const FULL_DAYS: usize = 1;
/// Each person's signals are spread over this much simulated time.
const SENDING_MS: u64 = 20_000;
/// Faults happen in this window of simulated time.
const FAULTS_MS: (u64, u64) = (2_500, 24_000);
/// A run that has not delivered every decision by then is stuck.
const GIVE_UP_MS: u64 = 900_000;

/// A key of a bucket.
struct Key {
    value: Bytes,
    revision: u64,
    written: Instant,
}

/// What a step of a host's meets.
enum Fate {
    /// Its host is dead: it never returns.
    Dead,
    /// Its host is cut off: it times out.
    Cut,
    /// Refused before it applied.
    Fail,
    /// Applied, its answer lost: the host sees a timeout.
    LostAck,
    /// Not answered in time (the host sees a timeout), then applied this much later: a write
    /// that lands after its writer gave up on it.
    Late(u64),
    /// Applied after a delay.
    Slow(u64),
    /// Applied.
    Go,
}

/// The simulated store and the simulation's record.
struct State {
    rng: Rng,
    fault_percent: u64,
    revisions: BTreeMap<Bucket, u64>,
    keys: BTreeMap<(Bucket, String), Key>,
    sequences: BTreeMap<Log, Seq>,
    subjects: BTreeMap<(Log, String), Vec<Message>>,
    /// What purges took from each subject, in order: with what is left, its whole history.
    purged: BTreeMap<(Log, String), Vec<Message>>,
    /// Purges that took journal records.
    purges: u64,
    /// Hosts cut off, until when.
    cut: BTreeMap<String, Instant>,
    /// Hosts frozen (a stopped process, a paused VM), until when: their steps wait, then
    /// apply as if nothing happened, however much the others did meanwhile.
    frozen: BTreeMap<String, Instant>,
    /// Hosts that freeze at their next journal write, for how long (ms): the write is in
    /// flight while they are frozen, as a write delayed in the network or a paused VM's.
    freeze_at_write: BTreeMap<String, u64>,
    /// Host incarnations that died (`h1#2`).
    dead: BTreeSet<String>,
    /// Each journal's newest takeover: its epoch and the incarnation that wrote it.
    holder: BTreeMap<String, (u64, String)>,
    events: Vec<String>,
    violations: Vec<String>,
    /// Decisions delivered by a holder superseded after it journaled them (allowed: each is
    /// delivered once, and is the journaled one).
    late_deliveries: u64,
    /// Lives a host opened that another had lived (their state key read back).
    resumed: u64,
    /// Journal appends of a superseded holder (its epoch below the newest takeover's) refused
    /// by the fence; a new holder's takeover refused because the old one wrote meanwhile is
    /// not counted.
    fenced: u64,
    /// The mutation under test: the journal's expected-last-sequence check left out (the
    /// fence removed), so a holder that lost its lease can still write.
    unfenced: bool,
}

/// The simulated store (shared by every host's handle) on the paused clock.
struct Sim {
    state: Mutex<State>,
    changed: Notify,
    start: Instant,
}

impl Sim {
    fn new(seed: u64, fault_percent: u64) -> Arc<Self> {
        Arc::new(Self {
            state: Mutex::new(State {
                rng: Rng(seed),
                fault_percent,
                revisions: BTreeMap::new(),
                keys: BTreeMap::new(),
                sequences: BTreeMap::new(),
                subjects: BTreeMap::new(),
                purged: BTreeMap::new(),
                purges: 0,
                cut: BTreeMap::new(),
                frozen: BTreeMap::new(),
                freeze_at_write: BTreeMap::new(),
                dead: BTreeSet::new(),
                holder: BTreeMap::new(),
                events: Vec::new(),
                violations: Vec::new(),
                late_deliveries: 0,
                resumed: 0,
                fenced: 0,
                unfenced: false,
            }),
            changed: Notify::new(),
            start: Instant::now(),
        })
    }

    fn ms(&self) -> u128 {
        self.start.elapsed().as_millis()
    }

    fn event(&self, state: &mut State, event: String) {
        state.events.push(format!("{:>7} {event}", self.ms()));
    }

    /// What `who`'s (of host `host`) next step meets.
    fn fate(&self, who: &str, host: &str, what: &str) -> Fate {
        let mut state = self.state.lock().unwrap();
        if state.dead.contains(who) {
            return Fate::Dead;
        }
        if state
            .cut
            .get(host)
            .is_some_and(|until| *until > Instant::now())
        {
            return Fate::Cut;
        }
        let percent = state.fault_percent;
        if host == DRIVER || !state.rng.chance(percent) {
            return Fate::Go;
        }
        let fate = match state.rng.below(4) {
            0 => Fate::Fail,
            1 => Fate::LostAck,
            2 => Fate::Late(FLEET_STEP_TIMEOUT_MS + 1 + state.rng.below(2 * FLEET_LEASE_MS)),
            _ => Fate::Slow(1 + state.rng.below(FLEET_STEP_TIMEOUT_MS / 2)),
        };
        let name = match fate {
            Fate::Fail => "fail",
            Fate::LostAck => "lost-ack",
            Fate::Late(_) => "late",
            _ => "slow",
        };
        self.event(&mut state, format!("{who} {what}: {name}"));
        fate
    }

    /// Applies a step of `who`'s to the store.
    fn apply<T>(&self, who: &str, apply: impl FnOnce(&mut State, &str) -> T) -> T {
        let mut state = self.state.lock().unwrap();
        let answer = apply(&mut state, who);
        drop(state);
        self.changed.notify_waiters();
        answer
    }

    /// Every fault and the partition end: the run is calm from now on.
    fn calm(&self) {
        let mut state = self.state.lock().unwrap();
        state.fault_percent = 0;
        state.cut.clear();
        state.freeze_at_write.clear();
    }
}

/// The driver's handle: enrols people and sends their signals, never faulted.
const DRIVER: &str = "driver";

/// Whether a bucket's keys expire a lease after they were written.
fn expiring(bucket: Bucket) -> bool {
    matches!(bucket, Bucket::Leases | Bucket::Hosts | Bucket::LifeHolds)
}

impl State {
    fn live(&self, bucket: Bucket, key: &str) -> Option<&Key> {
        let found = self.keys.get(&(bucket, key.to_owned()))?;
        let age = Instant::now().duration_since(found.written);
        match expiring(bucket) && age >= Duration::from_millis(FLEET_LEASE_MS) {
            true => None,
            false => Some(found),
        }
    }

    fn write(&mut self, bucket: Bucket, key: &str, value: Bytes) -> u64 {
        let revision = self.revisions.entry(bucket).or_insert(0);
        *revision += 1;
        let revision = *revision;
        let written = Instant::now();
        let key = (bucket, key.to_owned());
        self.keys.insert(
            key,
            Key {
                value,
                revision,
                written,
            },
        );
        revision
    }

    fn last_seq(&self, log: Log, subject: &str) -> Seq {
        self.last_message(log, subject).map_or(0, |m| m.seq)
    }

    /// The last message on `subject`, or on every subject it matches when it ends in `>`
    /// (as JetStream reads a filter).
    fn last_message(&self, log: Log, subject: &str) -> Option<&Message> {
        match subject.strip_suffix('>') {
            Some(prefix) => self
                .subjects
                .iter()
                .filter(|((of, name), _)| *of == log && name.starts_with(prefix))
                .filter_map(|(_, messages)| messages.last())
                .max_by_key(|m| m.seq),
            None => self
                .subjects
                .get(&(log, subject.to_owned()))
                .and_then(|messages| messages.last()),
        }
    }

    /// The compaction's invariants on a purge `who` is about to have applied: the person's head
    /// covers what goes (the journal's records before `below`, the inbox's signals), and every
    /// decision purged from the journal was delivered.
    fn check_purge(&self, who: &str, log: Log, subject: &str, below: Seq) -> Vec<String> {
        let mut violations = Vec::new();
        let person = match log {
            Log::Journal => subject.trim_start_matches("aura.journal.").to_owned(),
            // aura.signal.<tenant>.<user>: the person's key is <tenant>.<user>.
            Log::Signals => subject.trim_start_matches("aura.signal.").to_owned(),
            Log::Decisions => return vec![format!("{who} purged decisions of {subject}")],
            // A life's days are its own to delete (retention): no protocol invariant.
            Log::Days => return Vec::new(),
        };
        let head: Option<Covered> = self
            .keys
            .get(&(Bucket::Heads, person.clone()))
            .and_then(|key| serde_json::from_slice(&key.value).ok());
        let covers = head.is_some_and(|head| match log {
            Log::Journal => head.fence >= below,
            _ => head.inbox_next >= below,
        });
        if !covers {
            violations.push(format!(
                "{who} purged {subject} below {below}, past its head {head:?}"
            ));
        }
        if log == Log::Journal {
            let delivered = self
                .subjects
                .get(&(Log::Decisions, format!("aura.decision.{person}")))
                .map_or(0, Vec::len) as u64;
            let undelivered = self
                .subjects
                .get(&(Log::Journal, subject.to_owned()))
                .into_iter()
                .flatten()
                .filter(|m| m.seq < below)
                .filter_map(|m| match serde_json::from_slice::<Journaled>(&m.payload) {
                    Ok(Record::Decision { number, .. }) => Some(number),
                    _ => None,
                })
                .find(|number| *number >= delivered);
            if let Some(number) = undelivered {
                violations.push(format!(
                    "{who} purged {subject} below {below}: decision {number} was not delivered"
                ));
            }
        }
        violations
    }

    /// The protocol's invariants on a write `who` is about to have accepted.
    fn check(&mut self, who: &str, log: Log, subject: &str, message: &Message) -> Vec<String> {
        let mut violations = Vec::new();
        match log {
            Log::Journal => {
                let epoch: u64 = message
                    .header(EPOCH_HEADER)
                    .and_then(|e| e.parse().ok())
                    .unwrap_or(0);
                let record: Journaled = serde_json::from_slice(&message.payload).unwrap();
                let holder = self.holder.get(subject).cloned();
                match record {
                    Record::Takeover { epoch: taken, .. } => {
                        if holder.as_ref().is_some_and(|(e, _)| *e >= taken) {
                            violations.push(format!(
                                "{subject}: takeover at epoch {taken} by {who} after epoch {holder:?}"
                            ));
                        }
                        self.holder
                            .insert(subject.to_owned(), (taken, who.to_owned()));
                    }
                    _ if holder.as_ref() != Some(&(epoch, who.to_owned())) => {
                        violations.push(format!(
                            "{subject}: a record by {who} at epoch {epoch} while {holder:?} holds it"
                        ));
                    }
                    _ => {}
                }
            }
            Log::Decisions => {
                let number: u64 = message
                    .header(DECISION_HEADER)
                    .and_then(|n| n.parse().ok())
                    .unwrap_or(u64::MAX);
                let delivered = self
                    .subjects
                    .get(&(log, subject.to_owned()))
                    .map_or(0, Vec::len) as u64;
                if number != delivered {
                    violations.push(format!(
                        "{subject}: decision {number} delivered after {delivered} decisions"
                    ));
                }
                let person = subject.trim_start_matches("aura.decision.");
                let journal = format!("aura.journal.{person}");
                let journaled = self
                    .subjects
                    .get(&(Log::Journal, journal.clone()))
                    .into_iter()
                    .flatten()
                    .find_map(|m| match serde_json::from_slice::<Journaled>(&m.payload) {
                        Ok(Record::Decision {
                            number: n,
                            decision,
                        }) if n == number => Some(decision),
                        _ => None,
                    });
                let sent: Value = serde_json::from_slice(&message.payload).unwrap();
                if journaled.as_ref() != Some(&sent) {
                    violations.push(format!(
                        "{subject}: decision {number} delivered is not the journaled one"
                    ));
                }
                if self.holder.get(&journal).is_some_and(|(_, w)| w != who) {
                    self.late_deliveries += 1;
                }
            }
            Log::Signals | Log::Days => {}
        }
        violations
    }
}

/// One host incarnation's connection to the simulated store.
#[derive(Clone)]
struct Handle {
    sim: Arc<Sim>,
    /// `h1#2`: host h1's second life.
    who: String,
    /// `h1`.
    host: String,
}

impl std::fmt::Debug for Handle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "simulated store ({})", self.who)
    }
}

impl Handle {
    /// A step answered within [`FLEET_STEP_TIMEOUT_MS`], as the JetStream store's are.
    fn step<'a, T: Send + 'static>(
        &'a self,
        doing: &'static str,
        apply: impl FnOnce(&mut State, &str) -> Result<T, FleetError> + Send + 'static,
    ) -> Step<'a, T> {
        self.step_within(doing, FLEET_STEP_TIMEOUT_MS, apply)
    }

    /// A step: its fate first, then (if it applies) `apply` on the store; a step that is not
    /// answered times out after `ms`.
    fn step_within<'a, T: Send + 'static>(
        &'a self,
        doing: &'static str,
        ms: u64,
        apply: impl FnOnce(&mut State, &str) -> Result<T, FleetError> + Send + 'static,
    ) -> Step<'a, T> {
        Box::pin(async move {
            let timeout = Duration::from_millis(ms);
            let frozen = self
                .sim
                .state
                .lock()
                .unwrap()
                .frozen
                .get(&self.host)
                .copied();
            if let Some(until) = frozen {
                tokio::time::sleep_until(until).await;
            }
            match self.sim.fate(&self.who, &self.host, doing) {
                Fate::Dead => std::future::pending().await,
                Fate::Cut => {
                    tokio::time::sleep(timeout).await;
                    Err(FleetError::TimedOut { doing, ms })
                }
                Fate::Fail => Err(FleetError::Store {
                    doing,
                    detail: "simulated storage fault".to_owned(),
                }),
                Fate::LostAck => {
                    let _ = self.sim.apply(&self.who, apply);
                    tokio::time::sleep(timeout).await;
                    Err(FleetError::TimedOut { doing, ms })
                }
                Fate::Late(ms) => {
                    let (sim, who) = (self.sim.clone(), self.who.clone());
                    tokio::spawn(async move {
                        tokio::time::sleep(Duration::from_millis(ms)).await;
                        let _ = sim.apply(&who, apply);
                    });
                    tokio::time::sleep(timeout).await;
                    Err(FleetError::TimedOut { doing, ms })
                }
                Fate::Slow(ms) => {
                    tokio::time::sleep(Duration::from_millis(ms)).await;
                    self.sim.apply(&self.who, apply)
                }
                Fate::Go => self.sim.apply(&self.who, apply),
            }
        })
    }
}

impl FleetStore for Handle {
    fn get(&self, bucket: Bucket, key: &str) -> Step<'_, Option<Entry>> {
        let key = key.to_owned();
        self.step("read a key", move |state, _| {
            let found = state.live(bucket, &key).map(|k| Entry {
                value: k.value.clone(),
                revision: k.revision,
            });
            let a_life = bucket == Bucket::Lives && key.ends_with(".state");
            state.resumed += u64::from(a_life && found.is_some());
            Ok(found)
        })
    }

    fn create(&self, bucket: Bucket, key: &str, value: Bytes) -> Step<'_, Stored> {
        let key = key.to_owned();
        self.step("create a key", move |state, _| {
            Ok(match state.live(bucket, &key) {
                Some(_) => Stored::Conflict,
                None => Stored::At(state.write(bucket, &key, value)),
            })
        })
    }

    fn update(&self, bucket: Bucket, key: &str, value: Bytes, revision: u64) -> Step<'_, Stored> {
        let key = key.to_owned();
        self.step("update a key", move |state, _| {
            Ok(match state.live(bucket, &key) {
                Some(k) if k.revision == revision => Stored::At(state.write(bucket, &key, value)),
                _ => Stored::Conflict,
            })
        })
    }

    fn put(&self, bucket: Bucket, key: &str, value: Bytes) -> Step<'_, ()> {
        let key = key.to_owned();
        self.step("write a key", move |state, _| {
            state.write(bucket, &key, value);
            Ok(())
        })
    }

    fn delete(&self, bucket: Bucket, key: &str, revision: u64) -> Step<'_, ()> {
        let key = key.to_owned();
        self.step("delete a key", move |state, _| {
            match state.live(bucket, &key) {
                Some(k) if k.revision == revision => {}
                _ => {
                    return Err(FleetError::Store {
                        doing: "delete a key",
                        detail: "wrong last revision".to_owned(),
                    });
                }
            }
            state.keys.remove(&(bucket, key));
            Ok(())
        })
    }

    fn keys(&self, bucket: Bucket, max: usize) -> Step<'_, Vec<String>> {
        self.step("list a bucket's keys", move |state, _| {
            let keys: Vec<String> = state
                .keys
                .keys()
                .filter(|(b, _)| *b == bucket)
                .map(|(_, key)| key.clone())
                .collect();
            Ok(keys
                .into_iter()
                .filter(|key| state.live(bucket, key).is_some())
                .take(max)
                .collect())
        })
    }

    fn publish(
        &self,
        log: Log,
        subject: String,
        headers: Vec<(&'static str, String)>,
        payload: Bytes,
        expected_last: Option<Seq>,
    ) -> Step<'_, Stored> {
        let sim = self.sim.clone();
        if log == Log::Journal {
            let mut state = self.sim.state.lock().unwrap();
            if let Some(for_ms) = state.freeze_at_write.remove(&self.host) {
                let until = Instant::now() + Duration::from_millis(for_ms);
                state.frozen.insert(self.host.clone(), until);
                let event = format!(
                    "{} frozen at a write to {subject} for {for_ms} ms",
                    self.who
                );
                self.sim.event(&mut state, event);
            }
        }
        self.step("publish to a stream", move |state, who| {
            let fenced = !(state.unfenced && log == Log::Journal);
            let filter = headers
                .iter()
                .find(|(name, _)| *name == EXPECTED_FILTER_HEADER)
                .map_or(subject.as_str(), |(_, filter)| filter.as_str());
            if fenced && expected_last.is_some_and(|e| e != state.last_seq(log, filter)) {
                let epoch = headers
                    .iter()
                    .find(|(name, _)| *name == EPOCH_HEADER)
                    .and_then(|(_, epoch)| epoch.parse::<u64>().ok());
                let superseded = epoch.is_some_and(|epoch| {
                    state
                        .holder
                        .get(&subject)
                        .is_some_and(|(newest, _)| epoch < *newest)
                });
                state.fenced += u64::from(log == Log::Journal && superseded);
                return Ok(Stored::Conflict);
            }
            // A message id seen before on the subject: stored once, its first sequence
            // answered (JetStream's duplicate window; a simulation is shorter than it).
            let msg_id = headers.iter().find(|(name, _)| *name == MSG_ID_HEADER);
            if let Some((_, id)) = msg_id
                && let Some(first) = state.subjects.get(&(log, subject.clone())).and_then(|all| {
                    all.iter()
                        .find(|m| m.header(MSG_ID_HEADER) == Some(id.as_str()))
                })
            {
                return Ok(Stored::At(first.seq));
            }
            let sequence = state.sequences.entry(log).or_insert(0);
            *sequence += 1;
            let message = Message {
                seq: *sequence,
                headers: headers
                    .into_iter()
                    .map(|(n, v)| (n.to_owned(), v))
                    .collect(),
                payload,
            };
            for violation in state.check(who, log, &subject, &message) {
                sim.event(state, format!("VIOLATION {violation}"));
                state.violations.push(violation);
            }
            let seq = message.seq;
            if log != Log::Signals {
                sim.event(state, format!("{who} stored {subject} #{seq}"));
            }
            state
                .subjects
                .entry((log, subject))
                .or_default()
                .push(message);
            Ok(Stored::At(seq))
        })
    }

    fn last(&self, log: Log, subject: &str) -> Step<'_, Option<Message>> {
        let subject = subject.to_owned();
        self.step("read a subject's last message", move |state, _| {
            Ok(state.last_message(log, &subject).cloned())
        })
    }

    fn read(&self, log: Log, subject: &str, max: usize) -> Step<'_, Vec<Message>> {
        let subject = subject.to_owned();
        self.step("read a subject", move |state, _| {
            let messages = state.subjects.get(&(log, subject)).into_iter().flatten();
            Ok(messages.take(max).cloned().collect())
        })
    }

    fn follow(&self, log: Log, subject: &str, from: Seq) -> Step<'_, Box<dyn Messages>> {
        let following = Following {
            handle: self.clone(),
            log,
            subject: subject.to_owned(),
            next: from,
        };
        self.step("follow a subject", move |_, _| {
            Ok(Box::new(following) as Box<dyn Messages>)
        })
    }

    fn purge(&self, log: Log, subject: &str, below: Seq) -> Step<'_, u64> {
        let subject = subject.to_owned();
        self.step("purge a subject", move |state, who| {
            let violations = state.check_purge(who, log, &subject, below);
            state.violations.extend(violations);
            let key = (log, subject);
            let messages = state.subjects.entry(key.clone()).or_default();
            let kept = messages.split_off(messages.partition_point(|m| m.seq < below));
            let gone = std::mem::replace(messages, kept);
            let count = gone.len() as u64;
            state.purges += u64::from(log == Log::Journal && count > 0);
            state.purged.entry(key).or_default().extend(gone);
            Ok(count)
        })
    }
}

/// A subject followed from a sequence: each message as it is stored, stalled while its host is
/// cut off, never again once it is dead.
struct Following {
    handle: Handle,
    log: Log,
    subject: String,
    next: Seq,
}

impl Messages for Following {
    fn next(&mut self) -> Step<'_, Message> {
        /// What the subject holds for its follower now.
        enum Now {
            Dead,
            Stalled(Instant),
            Found(Message),
            Nothing,
        }
        Box::pin(async move {
            let sim = self.handle.sim.clone();
            let (who, host) = (self.handle.who.clone(), self.handle.host.clone());
            loop {
                let changed = sim.changed.notified();
                tokio::pin!(changed);
                changed.as_mut().enable();
                let now = {
                    let state = sim.state.lock().unwrap();
                    let at = Instant::now();
                    let stalled = |until: Option<&Instant>| until.filter(|u| **u > at).copied();
                    let key = (self.log, self.subject.clone());
                    let found = state
                        .subjects
                        .get(&key)
                        .and_then(|messages| messages.iter().find(|m| m.seq >= self.next).cloned());
                    if state.dead.contains(&who) {
                        Now::Dead
                    } else if let Some(until) =
                        stalled(state.cut.get(&host)).max(stalled(state.frozen.get(&host)))
                    {
                        Now::Stalled(until)
                    } else {
                        found.map_or(Now::Nothing, Now::Found)
                    }
                };
                match now {
                    Now::Dead => std::future::pending::<()>().await,
                    Now::Stalled(until) => tokio::time::sleep_until(until).await,
                    Now::Nothing => changed.await,
                    Now::Found(message) => {
                        // The consumer's own faults: an error ends the hold (the message is
                        // read again by the next), a slow one comes later.
                        match sim.fate(&who, &host, "read an inbox") {
                            Fate::Go => {}
                            Fate::Slow(ms) => tokio::time::sleep(Duration::from_millis(ms)).await,
                            Fate::Dead => std::future::pending::<()>().await,
                            _ => {
                                return Err(FleetError::Store {
                                    doing: "read an inbox",
                                    detail: "simulated consumer failure".to_owned(),
                                });
                            }
                        }
                        self.next = message.seq + 1;
                        return Ok(message);
                    }
                }
            }
        })
    }
}

/// Seed 002's invariants on every call the fleet's hosts make (no faults: a fleet's day must
/// equal its single-machine run).
#[derive(Debug, Default)]
struct Calls {
    pending: Mutex<usize>,
    violations: Mutex<Vec<String>>,
    calls: Mutex<u64>,
}

impl Simulation for Calls {
    fn call_starts(&self, call: CallPoint<'_>) -> Option<CallFault> {
        let pending = {
            let mut pending = self.pending.lock().unwrap();
            *pending += 1;
            *pending
        };
        *self.calls.lock().unwrap() += 1;
        let agents = aura_contract::catalogue::CATALOGUE.len();
        let found = call_violations(&call, pending, agents);
        self.violations.lock().unwrap().extend(found);
        None
    }

    fn call_ends(&self, _call: CallPoint<'_>, _outcome: &str) {
        *self.pending.lock().unwrap() -= 1;
    }

    fn refused(&self, _call_id: Option<&str>, _kind: &str, _written: bool) {}
}

/// A fault the seed planned.
#[derive(Debug, Clone, Copy)]
enum Planned {
    /// Host `HOSTS[i]` dies, and starts again after `down_ms` (its scratch disk lost or kept).
    Crash {
        host: usize,
        down_ms: u64,
        disk_lost: bool,
    },
    /// Host `HOSTS[i]` is cut off for `for_ms`.
    Partition { host: usize, for_ms: u64 },
    /// Host `HOSTS[i]` freezes at its next journal write for `for_ms`, then goes on where it
    /// was: the write lands then.
    Freeze { host: usize, for_ms: u64 },
}

/// What one seed's run left: its event log, and what went wrong.
struct Outcome {
    events: Vec<String>,
    /// The protocol's invariants the store saw broken, as they were.
    violations: Vec<String>,
    /// Everything that went wrong (the violations first).
    failures: Vec<String>,
    /// Takeover records, journal appends refused by the fence, checkpoints read back.
    takeovers: usize,
    fenced: u64,
    resumed: u64,
    /// Purges that took journal records.
    purges: u64,
    summary: String,
}

/// A host incarnation running.
struct Running {
    who: String,
    task: tokio::task::JoinHandle<()>,
    stop: watch::Sender<bool>,
}

fn start(sim: &Arc<Sim>, base: &Host, root: &Path, host: usize, life: u32) -> Running {
    let handle = Handle {
        sim: sim.clone(),
        who: format!("{}#{life}", HOSTS[host]),
        host: HOSTS[host].to_owned(),
    };
    let who = handle.who.clone();
    let fleet_host = FleetHost {
        fleet: Fleet::over(Arc::new(handle)),
        host: base.clone(),
        root: root.join(HOSTS[host]),
        me: HOSTS[host].to_owned(),
        capacity: PEOPLE,
        clock: Clock::Replay,
    };
    let (stop, stopped) = watch::channel(false);
    let task = tokio::spawn(serve(fleet_host, stopped));
    Running { who, task, stop }
}

/// Runs seed `seed` over `plans` (whose single-machine traces are `reference`) in a dir named
/// for `name` and the seed; `unfenced`: the mutation.
async fn run_seed(
    name: &str,
    seed: u64,
    plans: &[Plan],
    reference: &[Vec<Value>],
    unfenced: bool,
) -> Outcome {
    let mut rng = Rng(seed);
    let fault_percent = rng.below(4);
    // One of each kind of fault, then up to two more of any kind, at random times and hosts.
    let kinds: Vec<u64> = [0, 1, 2]
        .into_iter()
        .chain((0..rng.below(3)).map(|_| rng.below(3)))
        .collect();
    let mut planned: Vec<(u64, Planned)> = kinds
        .into_iter()
        .map(|kind| {
            let at = FAULTS_MS.0 + rng.below(FAULTS_MS.1 - FAULTS_MS.0);
            let host = rng.below(HOSTS.len() as u64) as usize;
            let fault = match kind {
                0 => Planned::Crash {
                    host,
                    down_ms: 500 + rng.below(9_500),
                    disk_lost: rng.chance(50),
                },
                1 => Planned::Partition {
                    host,
                    for_ms: 500 + rng.below(8_500),
                },
                _ => Planned::Freeze {
                    host,
                    for_ms: 500 + rng.below(8_500),
                },
            };
            (at, fault)
        })
        .collect();
    planned.sort_by_key(|(at, _)| *at);
    let sim = Sim::new(rng.next(), fault_percent);
    sim.state.lock().unwrap().unfenced = unfenced;
    let root = temp_dir(&format!("{name}-{seed}"));
    // A host of its own for each run (its agents, engine and caches; the three simulated
    // machines share it), so a run's second time starts as cold as its first.
    let calls = Arc::new(Calls::default());
    let mut host_config = config(plugins_dir(), root.join("host"));
    host_config.simulation = Some(calls.clone());
    let base = &Host::open(&host_config).await.unwrap();
    let driver = Fleet::over(Arc::new(Handle {
        sim: sim.clone(),
        who: DRIVER.to_owned(),
        host: DRIVER.to_owned(),
    }));
    for plan in plans {
        let enrolment = Enrolment {
            setup: plan.setup.clone(),
            seed: plan.seed,
        };
        driver.enrol(&plan.person, &enrolment).await.unwrap();
    }
    let mut running: Vec<Option<Running>> = (0..HOSTS.len())
        .map(|i| Some(start(&sim, base, &root, i, 1)))
        .collect();
    let mut lives = vec![1u32; HOSTS.len()];

    // The senders: each person's signals spread over SENDING_MS, then the end of their inputs.
    let mut acked: BTreeMap<String, Vec<Seq>> = BTreeMap::new();
    let mut sends: Vec<(u64, usize, Option<usize>)> = Vec::new();
    for (p, plan) in plans.iter().enumerate() {
        let every = SENDING_MS / plan.signals.len() as u64;
        for k in 0..plan.signals.len() {
            sends.push((k as u64 * every, p, Some(k)));
        }
        sends.push((SENDING_MS, p, None));
    }
    sends.sort();
    let mut restarts: Vec<(u64, usize, bool)> = Vec::new();
    let mut sends = sends.into_iter().peekable();
    let mut planned = planned.into_iter().peekable();
    let started = Instant::now();
    let mut failures = Vec::new();
    loop {
        let now = started.elapsed().as_millis() as u64;
        while let Some((_, p, k)) = sends.next_if(|(at, ..)| *at <= now) {
            let plan = &plans[p];
            let signal = k.map(|k| plan.signals[k].as_bytes());
            let seq = driver.send(&plan.person, signal).await.unwrap();
            acked.entry(plan.person.key()).or_default().push(seq);
        }
        while let Some((_, fault)) = planned.next_if(|(at, _)| *at <= now) {
            let mut state = sim.state.lock().unwrap();
            sim.event(&mut state, format!("FAULT {fault:?}"));
            match fault {
                Planned::Crash {
                    host,
                    down_ms,
                    disk_lost,
                } => {
                    if let Some(dead) = running[host].take() {
                        state.dead.insert(dead.who.clone());
                        dead.task.abort();
                        restarts.push((now + down_ms, host, disk_lost));
                    }
                }
                Planned::Partition { host, for_ms } => {
                    let until = Instant::now() + Duration::from_millis(for_ms);
                    state.cut.insert(HOSTS[host].to_owned(), until);
                }
                Planned::Freeze { host, for_ms } => {
                    state.freeze_at_write.insert(HOSTS[host].to_owned(), for_ms);
                }
            }
        }
        for (_, host, disk_lost) in restarts.extract_if(.., |(at, ..)| *at <= now) {
            if disk_lost {
                let _ = std::fs::remove_dir_all(root.join(HOSTS[host]));
            }
            lives[host] += 1;
            sim.event(
                &mut sim.state.lock().unwrap(),
                format!("START {}#{}", HOSTS[host], lives[host]),
            );
            running[host] = Some(start(&sim, base, &root, host, lives[host]));
        }
        if now >= FAULTS_MS.1 + 10_000 {
            sim.calm();
        }
        let delivered = {
            let state = sim.state.lock().unwrap();
            plans
                .iter()
                .zip(reference)
                .filter(|(plan, traces)| {
                    let key = (Log::Decisions, decisions_subject(&plan.person));
                    state.subjects.get(&key).map_or(0, Vec::len) >= traces.len()
                })
                .count()
        };
        let idle = sends.peek().is_none() && planned.peek().is_none() && restarts.is_empty();
        if idle && delivered == plans.len() {
            break;
        }
        if now > GIVE_UP_MS {
            failures.push(format!(
                "only {delivered} of {} people had every decision delivered after {GIVE_UP_MS} ms",
                plans.len()
            ));
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // Decisions made after the last one expected would show now.
    tokio::time::sleep(Duration::from_millis(2 * FLEET_LEASE_MS)).await;
    for host in running.iter_mut().filter_map(Option::take) {
        let _ = host.stop.send(true);
        let _ = host.task.await;
    }

    let state = sim.state.lock().unwrap();
    let mut failures: Vec<String> = state.violations.iter().cloned().chain(failures).collect();
    failures.extend(calls.violations.lock().unwrap().drain(..));
    for (plan, traces) in plans.iter().zip(reference) {
        let person = &plan.person;
        let key = (Log::Journal, journal_subject(person));
        let kept = state.subjects.get(&key).cloned().unwrap_or_default();
        // The journal's whole history: what purges took, then what is kept.
        let mut journal = state.purged.get(&key).cloned().unwrap_or_default();
        journal.extend(kept.iter().cloned());
        let positions = inbox_positions(&state, person);
        let sent = acked.get(&person.key()).cloned().unwrap_or_default();
        // The journal replays (each signal once, decisions numbered in order, epochs
        // growing), and its decisions are the ones delivered.
        let records = journal.iter().map(|m| {
            let record: Journaled = serde_json::from_slice(&m.payload).unwrap();
            (m.seq, record)
        });
        match replay(records) {
            Ok(replayed) => {
                let delivered: Vec<Value> = state
                    .subjects
                    .get(&(Log::Decisions, decisions_subject(person)))
                    .into_iter()
                    .flatten()
                    .map(|m| serde_json::from_slice(&m.payload).unwrap())
                    .collect();
                if replayed.decisions != delivered {
                    failures.push(format!(
                        "{person}: {} decisions journaled, {} delivered, or not the same",
                        replayed.decisions.len(),
                        delivered.len()
                    ));
                }
            }
            Err(error) => failures.push(format!("{person}: the journal does not replay: {error}")),
        }
        // What is kept replays from the head, as a takeover reads it, to the same decisions.
        if state.purged.get(&key).is_some_and(|gone| !gone.is_empty()) {
            let head: Option<Covered> = state
                .keys
                .get(&(Bucket::Heads, person.key()))
                .and_then(|key| serde_json::from_slice(&key.value).ok());
            let records = kept.iter().map(|m| {
                let record: Journaled = serde_json::from_slice(&m.payload).unwrap();
                (m.seq, record)
            });
            let whole = replay(journal.iter().map(|m| {
                (
                    m.seq,
                    serde_json::from_slice::<Journaled>(&m.payload).unwrap(),
                )
            }));
            match (replay_from(head, records), whole) {
                (Ok(from), Ok(whole)) => {
                    let base = from.decisions_base() as usize;
                    if whole.decisions.get(base..) != Some(&from.decisions[..]) {
                        failures.push(format!(
                            "{person}: the purged journal replays from its head to other decisions than the whole one"
                        ));
                    }
                }
                (Err(error), _) => failures.push(format!(
                    "{person}: the purged journal does not replay from its head {head:?}: {error}"
                )),
                (_, Err(_)) => {}
            }
        }
        // Every signal sent is the life's once, with its position; the end of the inputs (the
        // last message sent) is journaled, not a position.
        let (end, signals) = sent
            .split_last()
            .map_or((None, &[][..]), |(end, s)| (Some(*end), s));
        if positions != signals {
            failures.push(format!(
                "{person}: the life's inbox positions {positions:?}, signals sent {signals:?}"
            ));
        }
        let ended = journal.iter().any(|m| {
            let record = serde_json::from_slice::<Journaled>(&m.payload);
            let Ok(Record::Signal { id, signal }) = record else {
                return false;
            };
            Some(id) == end.map(|e| e.to_string()) && signal.get("inputs_end").is_some()
        });
        if !ended {
            failures.push(format!(
                "{person}: the end of inputs ({end:?}) is not journaled"
            ));
        }
        let decisions = state
            .subjects
            .get(&(Log::Decisions, decisions_subject(person)))
            .cloned()
            .unwrap_or_default();
        if decisions.len() != traces.len() {
            failures.push(format!(
                "{person}: {} decisions delivered, {} in their single-machine run",
                decisions.len(),
                traces.len()
            ));
        }
        for (number, (message, trace)) in decisions.iter().zip(traces).enumerate() {
            let decision: Value = serde_json::from_slice(&message.payload).unwrap();
            if &decision["trace"] != trace {
                failures.push(format!(
                    "{person}: decision {number} differs from their single-machine run"
                ));
            }
        }
    }
    let takeovers = state
        .subjects
        .iter()
        .chain(&state.purged)
        .filter(|((log, _), _)| *log == Log::Journal)
        .flat_map(|(_, messages)| messages)
        .filter(|m| {
            let record = serde_json::from_slice::<Journaled>(&m.payload);
            matches!(record, Ok(Record::Takeover { .. }))
        })
        .count();
    let summary = format!(
        "seed {seed}: {} planned faults, {fault_percent}% of steps faulted ({} times), {takeovers} takeovers of {} people, {} appends fenced, {} lives opened again, {} journal purges, {} late deliveries, {} ms simulated",
        state.events.iter().filter(|e| e.contains("FAULT")).count(),
        state
            .events
            .iter()
            .filter(|e| [": fail", ": lost-ack", ": late", ": slow"]
                .iter()
                .any(|fate| e.ends_with(fate)))
            .count(),
        plans.len(),
        state.fenced,
        state.resumed,
        state.purges,
        state.late_deliveries,
        sim.ms()
    );
    Outcome {
        events: state.events.clone(),
        violations: state.violations.clone(),
        failures,
        takeovers,
        fenced: state.fenced,
        resumed: state.resumed,
        purges: state.purges,
        summary,
    }
}

/// The inbox positions `person`'s life recorded, in the order it wrote them (each day's
/// journal on the simulation's days stream, its whole batches): each inbox message the life
/// took or passed over, once.
fn inbox_positions(state: &State, person: &aura_contract::person::Person) -> Vec<Seq> {
    let prefix = format!("aura.days.{}.", aura_fleet::assistant::life_name(person));
    let mut messages: Vec<&Message> = state
        .subjects
        .iter()
        .filter(|((log, subject), _)| {
            *log == Log::Days && subject.starts_with(&prefix) && subject.ends_with(".signals")
        })
        .flat_map(|(_, messages)| messages)
        .collect();
    messages.sort_by_key(|m| m.seq);
    // A batch counts once all its parts are there.
    let mut parts: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for message in &messages {
        let batch = message.header("Aura-Batch").unwrap_or_default();
        let of = message
            .header("Aura-Part")
            .and_then(|p| p.split_once('/'))
            .and_then(|(_, n)| n.parse().ok())
            .unwrap_or(1);
        let entry = parts.entry(batch).or_insert((0, of));
        entry.0 += 1;
    }
    messages
        .iter()
        .filter(|m| {
            let (seen, of) = parts[m.header("Aura-Batch").unwrap_or_default()];
            seen == of
        })
        .flat_map(|m| {
            let text = String::from_utf8_lossy(&m.payload).into_owned();
            text.lines()
                .filter_map(|line| {
                    let positions = aura_day::store::positions_of(line)?;
                    positions
                        .get(aura_fleet::assistant::INBOX_SOURCE)?
                        .parse()
                        .ok()
                })
                .collect::<Vec<Seq>>()
        })
        .collect()
}

/// The seeds to run: `DST_FLEET_SEED` alone, or `DST_FLEET_SEEDS` of them (2 by default).
fn seeds() -> Vec<u64> {
    if let Ok(seed) = std::env::var("DST_FLEET_SEED") {
        return vec![seed.parse().expect("DST_FLEET_SEED is a number")];
    }
    let n: u64 = std::env::var("DST_FLEET_SEEDS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(2);
    (0..n).map(|i| 0x5eed_f1ee_7000 + i).collect()
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_fleet_through_crashes_partitions_and_storage_faults_lives_every_day_as_one_machine_would()
 {
    let plans = plans(PEOPLE, FULL_DAYS);
    let reference = single_machine("dst-fleet-single", &plans).await;
    for (plan, traces) in plans.iter().zip(&reference) {
        assert!(!traces.is_empty(), "{}'s day decides nothing", plan.person);
    }
    let seeds = seeds();
    let (mut takeovers, mut fenced, mut resumed, mut purges) = (0, 0, 0, 0);
    for seed in &seeds {
        let outcome = run_seed("dst-fleet", *seed, &plans, &reference, false).await;
        eprintln!("{}", outcome.summary);
        if let Some(path) = std::env::var_os("DST_FLEET_EVENTS") {
            std::fs::write(path, outcome.events.join("\n")).unwrap();
        }
        let mut failures = outcome.failures;
        // The same seed, the same run: its event log again, byte for byte.
        let again = run_seed("dst-fleet", *seed, &plans, &reference, false).await;
        if again.events != outcome.events {
            let first = outcome
                .events
                .iter()
                .zip(&again.events)
                .position(|(a, b)| a != b);
            failures.push(format!(
                "the same seed gave another event log (first difference at event {first:?})"
            ));
        }
        assert!(
            failures.is_empty(),
            "seed {seed} failed (replay: DST_FLEET_SEED={seed} cargo test -p aura --test all \
             dst_fleet::a_fleet -- --nocapture):\n{}\nlast events:\n{}",
            failures.join("\n"),
            outcome.events[outcome.events.len().saturating_sub(40)..].join("\n")
        );
        takeovers += outcome.takeovers;
        fenced += outcome.fenced;
        resumed += outcome.resumed;
        purges += outcome.purges;
    }
    // The seeds did what they are for: people moved between hosts, a stale holder's write met
    // the fence, a takeover opened a life another host had lived, and a journal was purged
    // below its head.
    if std::env::var_os("DST_FLEET_SEED").is_none() {
        assert!(
            takeovers > seeds.len() * PEOPLE,
            "nobody moved: {takeovers} takeovers"
        );
        assert!(fenced > 0, "no write met the fence");
        assert!(
            resumed > 0,
            "no takeover opened a life another host had lived"
        );
        assert!(purges > 0, "no journal was purged below its head");
    }
}

/// The mutation: without the journal's fence, a host that lost its lease still writes, and the
/// store must see a second writer in one of the first `DST_FLEET_MUTANT_SEEDS` seeds (8 by
/// default). Only that violation counts: a stall or another failure is not the fence's.
#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn without_the_fence_the_simulation_finds_a_second_writer() {
    let plans = plans(PEOPLE, FULL_DAYS);
    let reference = single_machine("dst-fleet-mutant-single", &plans).await;
    let n: u64 = std::env::var("DST_FLEET_MUTANT_SEEDS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(8);
    for seed in (0..n).map(|i| 0x5eed_f1ee_7000 + i) {
        let outcome = run_seed("dst-fleet-mutant", seed, &plans, &reference, true).await;
        eprintln!("unfenced {}", outcome.summary);
        let second_writer = outcome.violations.iter().find(|v| {
            v.contains("while") && v.contains("holds it") || v.contains("takeover at epoch")
        });
        if let Some(violation) = second_writer {
            eprintln!("seed {seed} found: {violation}");
            return;
        }
    }
    panic!("{n} seeds without the fence found no second writer");
}

/// The simulation's store keeps a life as every home must: the fleet's home of a life
/// (`aura_fleet::life::FleetHome`) over it, on the paused clock, passes the suite of
/// `aura_day::store` (its own storage faults off: the suite breaks each step itself).
#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn the_simulations_store_keeps_a_life_as_every_home_must() {
    let sim = Sim::new(0x5eed_11fe, 0);
    let n = std::sync::atomic::AtomicU64::new(0);
    aura_day::store::suite::conformance(|| {
        let handle = Handle {
            sim: sim.clone(),
            who: "suite".to_owned(),
            host: "suite".to_owned(),
        };
        let life = format!(
            "suite-{}",
            n.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        );
        aura_fleet::life::FleetHome::new(Arc::new(handle), &life).unwrap()
    })
    .await;
}

/// The simulation's store fences a life's opener whose lease lapsed while it was paused (on
/// the paused clock its renewal never comes): every kind of write it tries first is refused.
#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn the_simulations_store_fences_an_opener_whose_lease_lapsed() {
    let sim = Sim::new(0x5eed_1a95, 0);
    let store: Arc<dyn FleetStore> = Arc::new(Handle {
        sim: sim.clone(),
        who: "lapse".to_owned(),
        host: "lapse".to_owned(),
    });
    let n = std::sync::atomic::AtomicU64::new(0);
    aura_day::store::suite::a_lapsed_opener_writes_nothing(
        || {
            let life = format!(
                "lapse-{}",
                n.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            );
            aura_fleet::life::FleetHome::new(store.clone(), &life).unwrap()
        },
        |_| crate::store_homes::lapse_every_hold(store.clone()),
    )
    .await;
}
