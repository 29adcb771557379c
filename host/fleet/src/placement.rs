//! A fleet host's loop: which people it takes, and holding each until it stops.
//!
//! It owns the host's presence (announced every `FLEET_RENEW_EVERY_MS` in the hosts bucket, gone a
//! lease after the host is), its placement pass (every person enrolled and held by nobody whose
//! rendezvous owner among the hosts present is this one, up to its capacity: each person has
//! one owner that every host computes alike, so hosts do not race for the same people and a
//! dead host's people spread over the others; and a person free for `FLEET_ORPHAN_AFTER_MS`,
//! whose owner is full or cut off, by any host with room) and its holds, one task each
//! ([`hold`]). It must
//! not decide what a held person's session does (the assistant does) nor hold anyone without
//! the lease (the protocol decides).

use aura_contract::caused::Caused;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::PathBuf;
use std::time::Duration;

use sha2::{Digest, Sha256};
use tokio::sync::watch;
use tokio::task::JoinSet;

use aura_contract::limits::{
    FLEET_LEASE_MS, FLEET_ORPHAN_AFTER_MS, FLEET_PEOPLE_PER_HOST_MAX, FLEET_RENEW_EVERY_MS,
    FLEET_RETRY_AFTER_MAX_MS, FLEET_STARTUP_GRACE_MS,
};
use aura_contract::person::Person;
use aura_day::live::Clock;
use aura_host::Host;

use crate::assistant::{Ended, Hold, hold};
use crate::store::{Fleet, FleetError};

/// A host of a fleet.
pub struct FleetHost {
    /// The fleet's streams and buckets.
    pub fleet: Fleet,
    /// The agents, engine and crossing every person here shares.
    pub host: Host,
    /// Where the people's scratch data dirs go.
    pub root: PathBuf,
    /// This host's id, unique in the fleet.
    pub me: String,
    /// People it holds at most (bounded by [`FLEET_PEOPLE_PER_HOST_MAX`]).
    pub capacity: usize,
    /// The clock its people's sessions live on.
    pub clock: Clock,
}

/// Where rendezvous hashing ranks `host` for `person`: the host with the highest weight among
/// those present owns the person.
pub fn weight(host: &str, person: &Person) -> [u8; 32] {
    let mut hash = Sha256::new();
    hash.update(host.as_bytes());
    hash.update([0]);
    hash.update(person.key().as_bytes());
    hash.finalize().into()
}

/// The host among `hosts` that owns `person`.
pub fn owner<'a>(hosts: &'a [String], person: &Person) -> Option<&'a str> {
    hosts
        .iter()
        .max_by_key(|host| weight(host, person))
        .map(String::as_str)
}

/// Runs host `fleet_host` until `stop` turns true: then every person it holds is let go (their
/// sessions stopped, their leases released).
pub async fn serve(fleet_host: FleetHost, mut stop: watch::Receiver<bool>) {
    let capacity = fleet_host.capacity.min(FLEET_PEOPLE_PER_HOST_MAX);
    let me = fleet_host.me.clone();
    let mut places = Places {
        held: BTreeMap::new(),
        tasks: HashMap::new(),
        holds: JoinSet::new(),
        failing: HashMap::new(),
        free_since: HashMap::new(),
        last_pass: None,
    };
    let (stop_holds, holds_stop) = watch::channel(false);
    let mut pass = tokio::time::interval(Duration::from_millis(FLEET_RENEW_EVERY_MS));
    pass.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    tracing::info!(target: "aura_fleet::audit", event = "host_start", host = %me, capacity);
    // Hosts started together see one another before any takes people: without this the first
    // to start would own everyone until the others announced.
    if let Err(error) = fleet_host.fleet.announce(&me).await {
        tracing::warn!(error = %Caused(&error), "could not announce this host; trying again");
    }
    // Biased (in this order, every time), as every select here: a deterministic simulation's
    // seed gives one run.
    tokio::select! {
        biased;
        _ = stop.changed() => {}
        _ = tokio::time::sleep(Duration::from_millis(FLEET_STARTUP_GRACE_MS)) => {}
    }
    loop {
        tokio::select! {
            biased;
            _ = stop.changed() => break,
            Some(done) = places.holds.join_next_with_id(), if !places.holds.is_empty() => {
                places.ended(done);
            }
            _ = pass.tick() => {
                // A host that cannot reach the server keeps trying: its holds end by themselves
                // (their renewals fail), and it takes people again once it is back.
                if let Err(error) = fleet_host.fleet.announce(&me).await {
                    tracing::warn!(error = %Caused(&error), "could not announce this host; trying again");
                    continue;
                }
                if places.held.len() >= capacity {
                    continue;
                }
                if let Err(error) = place(&fleet_host, capacity, &mut places, &holds_stop).await {
                    tracing::warn!(error = %Caused(&error), "placement pass failed; trying again");
                }
            }
        }
    }
    let _ = stop_holds.send(true);
    let wait = Duration::from_millis(2 * FLEET_LEASE_MS);
    let holds = &mut places.holds;
    let _ = tokio::time::timeout(wait, async { while holds.join_next().await.is_some() {} }).await;
    holds.abort_all();
    tracing::info!(target: "aura_fleet::audit", event = "host_stop", host = %me);
}

/// The people a host holds, and those whose holds keep failing.
struct Places {
    /// Who is held, by the task holding them.
    held: BTreeMap<Person, tokio::task::Id>,
    /// Whose each task is (a task that panicked says only its id).
    tasks: HashMap<tokio::task::Id, Person>,
    holds: JoinSet<Ended>,
    /// People whose last hold failed: how many times in a row, and not before when again.
    failing: HashMap<Person, (u32, tokio::time::Instant)>,
    /// Free people this host does not own, and since when it has seen them free.
    free_since: HashMap<Person, tokio::time::Instant>,
    /// When the last placement pass saw who is free.
    last_pass: Option<tokio::time::Instant>,
}

impl Places {
    /// A hold ended (or its task panicked): the person may be taken again, after a wait that
    /// doubles with each failure in a row, so a person whose journal cannot be lived does not
    /// cost a takeover (and a journal record) every second.
    fn ended(&mut self, done: Result<(tokio::task::Id, Ended), tokio::task::JoinError>) {
        let (id, why) = match done {
            Ok((id, why)) => (id, why),
            Err(error) => (
                error.id(),
                Ended::Failed(format!("the hold's task failed: {error}")),
            ),
        };
        let Some(person) = self.tasks.remove(&id) else {
            return;
        };
        self.held.remove(&person);
        match why {
            Ended::Failed(why) => self.failed(person, &why),
            _ => {
                self.failing.remove(&person);
            }
        }
    }

    /// Taking `person` failed: not again before a wait that doubles with each failure in a row.
    fn failed(&mut self, person: Person, why: &str) {
        let failures = self
            .failing
            .get(&person)
            .map_or(1, |(n, _)| n.saturating_add(1));
        let wait_ms = FLEET_LEASE_MS
            .saturating_mul(1 << failures.min(8))
            .min(FLEET_RETRY_AFTER_MAX_MS);
        tracing::warn!(person = %person, why, failures, wait_ms, "hold failed; taking them again later");
        let at = tokio::time::Instant::now() + Duration::from_millis(wait_ms);
        self.failing.insert(person, (failures, at));
    }

    /// Whether `person` may be claimed now.
    fn may_take(&self, person: &Person) -> bool {
        !self.held.contains_key(person)
            && self
                .failing
                .get(person)
                .is_none_or(|(_, at)| *at <= tokio::time::Instant::now())
    }
}

/// One placement pass: claims the free people this host owns, and those free for
/// `FLEET_ORPHAN_AFTER_MS` that another host owns, up to `capacity`.
async fn place(
    fleet_host: &FleetHost,
    capacity: usize,
    places: &mut Places,
    stop: &watch::Receiver<bool>,
) -> Result<(), FleetError> {
    let fleet = &fleet_host.fleet;
    let me = &fleet_host.me;
    let mut hosts = fleet.hosts().await?;
    if !hosts.contains(me) {
        hosts.push(me.clone());
    }
    let leased = fleet.leased().await?;
    let now = tokio::time::Instant::now();
    let free: Vec<Person> = fleet
        .people()
        .await?
        .into_iter()
        .filter(|person| !leased.contains(&person.key()))
        .collect();
    // A free person this host does not own is taken once they have been free for a while:
    // their owner is full (or cannot reach them), and nobody else would ever take them. What
    // was seen before a gap in the passes (this host full, or the server out of reach) is
    // forgotten: the person may have been held meanwhile.
    let gap = Duration::from_millis(2 * FLEET_RENEW_EVERY_MS);
    if places
        .last_pass
        .is_none_or(|last| now.duration_since(last) > gap)
    {
        places.free_since.clear();
    }
    places.last_pass = Some(now);
    let free_now: HashSet<&Person> = free.iter().collect();
    places
        .free_since
        .retain(|person, _| free_now.contains(person));
    drop(free_now);
    for person in free {
        if places.held.len() >= capacity {
            break;
        }
        let since = *places.free_since.entry(person.clone()).or_insert(now);
        let orphaned = now.duration_since(since) >= Duration::from_millis(FLEET_ORPHAN_AFTER_MS);
        let owned = owner(&hosts, &person) == Some(me.as_str());
        if !places.may_take(&person) || !(owned || orphaned) {
            continue;
        }
        let claim = match fleet.claim(&person, me).await {
            Ok(Some(claim)) => claim,
            Ok(None) => continue,
            // One person whose journal cannot be read does not keep the others waiting.
            Err(error) => {
                tracing::error!(person = %person, error = %Caused(&error), "cannot take this person");
                continue;
            }
        };
        let enrolment = match fleet.enrolment(&person).await {
            Ok(Some(enrolment)) => enrolment,
            found => {
                let why = match found {
                    Err(error) => format!("their enrolment cannot be read: {error}"),
                    _ => "they are not enrolled any more".to_owned(),
                };
                if let Err(error) = fleet.release(&person, &claim.holding).await {
                    tracing::warn!(person = %person, error = %Caused(&error), "lease not released: it runs out instead");
                }
                places.failed(person, &why);
                continue;
            }
        };
        let hold_it = Hold {
            fleet: fleet.clone(),
            host: fleet_host.host.clone(),
            root: fleet_host.root.clone(),
            me: me.clone(),
            person: person.clone(),
            enrolment,
            clock: fleet_host.clock,
        };
        let stop = stop.clone();
        let task = places.holds.spawn(hold(hold_it, claim, stop));
        places.tasks.insert(task.id(), person.clone());
        places.held.insert(person, task.id());
    }
    Ok(())
}
