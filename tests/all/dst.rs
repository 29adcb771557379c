//! Deterministic simulation with faults (seed 002's DST): one seed drives the real host (the
//! real agents, the real journal) and the orchestrator through a random sequence of steps
//! (concurrent root calls of every catalogue tool, malformed envelopes, the agents' ticks, a
//! short scenario through the orchestrator), injecting faults where the seed says: a call out
//! of fuel partway, a trap, refused, its agent not found, the host busy, and journal write
//! errors (ENOSPC, EIO, a short write, a failed fsync), after which the "process" restarts on
//! the same data dir, as a crashed host would. Some seeds put the wire between the
//! orchestrator's host and two or three worker hosts ([`SimWire`], a `Remote` that delivers
//! in-process through the real retry rules and the workers' real answer caches), and fault it:
//! requests and replies lost, delayed or duplicated, and workers partitioned from the
//! orchestrator for a number of attempts. After every step it checks seed 002's
//! invariants: no agent twice in any call chain, every chain within the depth bound, pending
//! calls ≤ agents × depth, every refusal quarantined exactly once (acknowledged records, no
//! others, none torn, over every host's log), a run's traces exactly the uninterrupted
//! run's (through the faulted wire too), and no worker running one request twice. The same seed gives
//! the same event log. `just dst N` runs N seeds; a failing seed prints how to replay it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use aura_contract::limits::{AGENT_CALL_DEPTH_MAX, WIRE_ATTEMPTS_MAX};
use aura_day::orchestrator::{self, Start};
use aura_day::scenario::Scenario;
use aura_host::Host;
use aura_host::journal::{
    QUARANTINE_PATH, StorageFault, StorageFaults, StoragePoint, StorageStep, TRACES_PATH,
};
use aura_host::remote::{
    AnswerCache, AttemptFailed, Remote, RemoteRequest, RemoteWork, SentFrame, request_key,
    with_retries,
};
use aura_host::simulation::{CallFault, CallPoint, Simulation};
use serde_json::{Value, json};

use crate::support::{plugins_dir, readme_examples, temp_dir};

/// SplitMix64: the simulation's only source of choices.
#[derive(Debug)]
pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0).
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// True with probability `percent` %.
    pub(crate) fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

/// What the simulation records and decides, shared with the host through its hooks.
#[derive(Debug)]
struct World {
    rng: Mutex<Rng>,
    log: Mutex<Vec<String>>,
    violations: Mutex<Vec<String>>,
    pending: Mutex<usize>,
    /// call_ids of refusals whose quarantine record was acknowledged (durable).
    acknowledged: Mutex<Vec<String>>,
    /// A storage fault planned for this "process": (file, step, ordinal, fault).
    storage: Mutex<Option<(String, StorageStep, u64, StorageFault)>>,
    /// Percent of calls given a fault.
    fault_percent: u64,
    /// Off while the orchestrator runs: its traces are compared with a run without faults
    /// (storage faults stay on).
    call_faults: std::sync::atomic::AtomicBool,
    agents: usize,
}

impl World {
    /// A world drawing its choices from `seed`, faulting `fault_percent` % of calls.
    fn new(seed: u64, fault_percent: u64) -> Self {
        Self {
            rng: Mutex::new(Rng(seed)),
            log: Mutex::new(Vec::new()),
            violations: Mutex::new(Vec::new()),
            pending: Mutex::new(0),
            acknowledged: Mutex::new(Vec::new()),
            storage: Mutex::new(None),
            fault_percent,
            call_faults: std::sync::atomic::AtomicBool::new(true),
            agents: aura_contract::catalogue::CATALOGUE.len(),
        }
    }

    fn event(&self, event: String) {
        self.log.lock().unwrap().push(event);
    }

    fn violation(&self, violation: String) {
        self.event(format!("VIOLATION {violation}"));
        self.violations.lock().unwrap().push(violation);
    }
}

/// Seed 002's invariants on a call about to run with `pending` calls started and not ended
/// (itself included) on a host of `agents` agents: no agent twice in its chain, the chain
/// within the depth bound, pending calls within agents × depth.
pub(crate) fn call_violations(call: &CallPoint<'_>, pending: usize, agents: usize) -> Vec<String> {
    let mut violations = Vec::new();
    let mut chain: Vec<&str> = call.chain_above.to_vec();
    chain.push(call.agent);
    let mut seen = chain.clone();
    seen.sort_unstable();
    seen.dedup();
    if seen.len() != chain.len() {
        violations.push(format!("agent twice in the chain {chain:?}"));
    }
    if chain.len() > AGENT_CALL_DEPTH_MAX {
        violations.push(format!(
            "chain deeper than {AGENT_CALL_DEPTH_MAX}: {chain:?}"
        ));
    }
    if pending > agents * AGENT_CALL_DEPTH_MAX {
        violations.push(format!("{pending} calls pending, more than agents × depth"));
    }
    violations
}

impl Simulation for World {
    fn call_starts(&self, call: CallPoint<'_>) -> Option<CallFault> {
        let pending = {
            let mut pending = self.pending.lock().unwrap();
            *pending += 1;
            *pending
        };
        for violation in call_violations(&call, pending, self.agents) {
            self.violation(violation);
        }
        let mut chain: Vec<&str> = call.chain_above.to_vec();
        chain.push(call.agent);
        let fault = {
            let mut rng = self.rng.lock().unwrap();
            let on = self.call_faults.load(std::sync::atomic::Ordering::Relaxed);
            match on && rng.chance(self.fault_percent) {
                false => None,
                true => Some(match rng.below(5) {
                    0 => CallFault::OutOfFuel {
                        fuel: 1 + rng.below(call.fuel.max(2) / 2),
                    },
                    1 => CallFault::Trap,
                    2 => CallFault::Refused,
                    3 => CallFault::NotFound,
                    _ => CallFault::Busy,
                }),
            }
        };
        self.event(format!(
            "start {} {}.{} chain {} fault {fault:?}",
            call.call_id,
            call.agent,
            call.tool,
            chain.join(">")
        ));
        fault
    }

    fn call_ends(&self, call: CallPoint<'_>, outcome: &str) {
        *self.pending.lock().unwrap() -= 1;
        self.event(format!("end {} {outcome}", call.call_id));
    }

    fn refused(&self, call_id: Option<&str>, kind: &str, acknowledged: bool) {
        let id = call_id.unwrap_or("-").to_owned();
        self.event(format!("refused {id} {kind} acknowledged {acknowledged}"));
        if acknowledged {
            self.acknowledged.lock().unwrap().push(id);
        }
    }
}

impl StorageFaults for World {
    fn at(&self, point: StoragePoint<'_>) -> Option<StorageFault> {
        let mut planned = self.storage.lock().unwrap();
        let hit = planned.as_ref().is_some_and(|(path, step, ordinal, _)| {
            path == point.path && *step == point.step && *ordinal == point.ordinal
        });
        if !hit {
            return None;
        }
        let (path, step, ordinal, fault) = planned.take()?;
        drop(planned);
        self.event(format!(
            "storage fault {path}:{}:{ordinal} {fault:?}",
            step.as_str()
        ));
        Some(fault)
    }
}

/// The orchestrator's host sees refusals (its own quarantine records) but runs no call: call
/// faults are the workers' to inject, where calls run.
#[derive(Debug)]
struct ClientSide(Arc<World>);

impl Simulation for ClientSide {
    fn call_starts(&self, _call: CallPoint<'_>) -> Option<CallFault> {
        None
    }

    fn call_ends(&self, _call: CallPoint<'_>, _outcome: &str) {}

    fn refused(&self, call_id: Option<&str>, kind: &str, written: bool) {
        self.0.refused(call_id, kind, written);
    }
}

/// How often the wire misbehaves, in percent of attempts.
#[derive(Debug, Clone, Copy)]
struct WireFaults {
    /// A request lost on its way (no worker sees it), and, drawn apart, a reply lost on its
    /// way back (the worker ran it): the client's attempt times out either way.
    loss: u64,
    /// A request delivered twice, to the same worker or another.
    duplicate: u64,
    /// A request held back while other messages pass (a few scheduler turns).
    delay: u64,
}

/// One worker host with its answer cache, and how often it made each request's answer.
#[derive(Debug, Clone)]
struct SimWorker {
    host: Arc<Host>,
    answers: Arc<AnswerCache>,
    made: Arc<Mutex<BTreeMap<[u8; 32], usize>>>,
    data: PathBuf,
}

impl SimWorker {
    async fn open(plugins: &Path, data: PathBuf, world: &Arc<World>) -> Self {
        let host = Host::open(&config(plugins, &data, Some(world.clone())))
            .await
            .unwrap();
        Self {
            host: Arc::new(host),
            answers: Arc::new(AnswerCache::default()),
            made: Arc::new(Mutex::new(BTreeMap::new())),
            data,
        }
    }
}

/// The wire between the orchestrator's host and its workers, delivered in-process: each
/// attempt goes to a worker the seed picks among those not cut off, through the worker's real
/// seam ([`Host::serve_call`], [`Host::serve_tick`]) and its real [`AnswerCache`], under the
/// real retry rules ([`with_retries`], with no real pause: the seed decides what is lost,
/// not a clock).
#[derive(Debug)]
struct SimWire {
    world: Arc<World>,
    workers: Mutex<Vec<SimWorker>>,
    faults: WireFaults,
    /// Workers cut off from the orchestrator, for this many more attempts.
    partition: Mutex<Option<(Vec<usize>, u32)>>,
    sources: BTreeMap<String, String>,
}

/// What one attempt does, drawn at once from the seed.
enum Delivery {
    NoResponders,
    To {
        first: usize,
        second: Option<usize>,
        request_lost: bool,
        delay_turns: u64,
        reply_lost: bool,
    },
}

impl SimWire {
    /// Whether the orchestrator's run is on: the wire then never loses more than 5 % of
    /// messages nor cuts every worker off, so each call gets through within its attempts and
    /// the run must write the uninterrupted run's traces.
    fn calm(&self) -> bool {
        !self
            .world
            .call_faults
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Plans a partition from the seed: some or (not during a run) all workers cut off for a
    /// number of attempts, up to more than a request has.
    fn plan_partition(&self, rng: &mut Rng, calm: bool) {
        let workers = self.workers.lock().unwrap().len() as u64;
        *self.partition.lock().unwrap() = None;
        if !rng.chance(30) {
            return;
        }
        let mut cut: Vec<usize> = (0..workers)
            .filter(|_| rng.chance(50))
            .map(|w| w as usize)
            .collect();
        if cut.len() as u64 == workers && calm {
            cut.pop();
        }
        let attempts = 1 + rng.below(u64::from(WIRE_ATTEMPTS_MAX) + 2) as u32;
        self.world
            .event(format!("partition {cut:?} for {attempts} attempts"));
        *self.partition.lock().unwrap() = (!cut.is_empty()).then_some((cut, attempts));
    }

    fn draw(&self) -> Delivery {
        let mut rng = self.world.rng.lock().unwrap();
        let mut partition = self.partition.lock().unwrap();
        let cut = match partition.as_mut() {
            Some((cut, left)) => {
                let cut = cut.clone();
                *left -= 1;
                if *left == 0 {
                    *partition = None;
                }
                cut
            }
            None => Vec::new(),
        };
        let workers = self.workers.lock().unwrap().len();
        let reachable: Vec<usize> = (0..workers).filter(|w| !cut.contains(w)).collect();
        if reachable.is_empty() {
            return Delivery::NoResponders;
        }
        let loss = match self.calm() {
            true => self.faults.loss.min(5),
            false => self.faults.loss,
        };
        let pick = |rng: &mut Rng| reachable[rng.below(reachable.len() as u64) as usize];
        let first = pick(&mut rng);
        let second = match rng.chance(self.faults.duplicate) {
            true => Some(pick(&mut rng)),
            false => None,
        };
        Delivery::To {
            first,
            second,
            request_lost: rng.chance(loss),
            delay_turns: match rng.chance(self.faults.delay) {
                true => 1 + rng.below(16),
                false => 0,
            },
            reply_lost: rng.chance(loss),
        }
    }

    async fn attempt(
        &self,
        request: &RemoteRequest<'_>,
        n: u32,
        subject: &str,
        sent: &SentFrame,
    ) -> Result<String, AttemptFailed> {
        let (first, second, delay_turns, reply_lost) = match self.draw() {
            Delivery::NoResponders => {
                self.world
                    .event(format!("wire {} #{n} no responders", request.id));
                return Err(AttemptFailed::Lost("no responders".into()));
            }
            Delivery::To {
                request_lost: true,
                first,
                ..
            } => {
                self.world
                    .event(format!("wire {} #{n} to w{first} request lost", request.id));
                return Err(AttemptFailed::Lost("timed out".into()));
            }
            Delivery::To {
                first,
                second,
                delay_turns,
                reply_lost,
                ..
            } => (first, second, delay_turns, reply_lost),
        };
        let mut said = format!("wire {} #{n} to w{first}", request.id);
        if let Some(other) = second {
            said.push_str(&format!(" copy w{other}"));
        }
        if delay_turns > 0 {
            said.push_str(&format!(" delayed {delay_turns}"));
        }
        if reply_lost {
            said.push_str(" reply lost");
        }
        self.world.event(said);
        for _ in 0..delay_turns {
            tokio::task::yield_now().await;
        }
        let answer = match second {
            None => self.serve(first, request, subject, sent).await,
            Some(other) => {
                let (answer, _) = futures_util::future::join(
                    self.serve(first, request, subject, sent),
                    self.serve(other, request, subject, sent),
                )
                .await;
                answer
            }
        };
        match reply_lost {
            true => Err(AttemptFailed::Lost("timed out".into())),
            false => Ok(answer),
        }
    }

    /// A request delivered to worker `w`: answered from its cache, or made once.
    async fn serve(
        &self,
        w: usize,
        request: &RemoteRequest<'_>,
        subject: &str,
        sent: &SentFrame,
    ) -> String {
        let worker = self.workers.lock().unwrap()[w].clone();
        let body = request.body.as_bytes();
        let key = request_key(subject, sent, body);
        let make = || async {
            *worker.made.lock().unwrap().entry(key).or_default() += 1;
            match request.work {
                RemoteWork::Call { tool } => {
                    let addressed = Some((request.agent, tool));
                    worker.host.serve_call(body, sent, addressed).await
                }
                RemoteWork::Tick => worker.host.serve_tick(request.agent, body, sent).await,
            }
        };
        worker.answers.answer(key, make).await.to_string()
    }

    /// Reopens every worker whose journal failed, on its data dir (its answer cache lost, as a
    /// restarted process loses it).
    async fn restart_failed(&self, plugins: &Path) {
        let failed: Vec<(usize, PathBuf)> = self
            .workers
            .lock()
            .unwrap()
            .iter()
            .enumerate()
            .filter(|(_, w)| w.host.journal().failure().is_some())
            .map(|(i, w)| (i, w.data.clone()))
            .collect();
        for (i, data) in failed {
            self.world.event(format!("restart w{i}"));
            let reopened = SimWorker::open(plugins, data, &self.world).await;
            self.workers.lock().unwrap()[i] = reopened;
        }
    }

    fn data_dirs(&self) -> Vec<PathBuf> {
        self.workers
            .lock()
            .unwrap()
            .iter()
            .map(|w| w.data.clone())
            .collect()
    }

    /// No worker made one request's answer twice (its cache answers repeats).
    fn check_made_once(&self, step: u64) {
        for (i, worker) in self.workers.lock().unwrap().iter().enumerate() {
            for count in worker.made.lock().unwrap().values() {
                if *count > 1 {
                    self.world
                        .violation(format!("step {step}: w{i} ran one request {count} times"));
                }
            }
        }
    }
}

impl Remote for SimWire {
    fn agents(&self) -> Vec<&'static str> {
        self.workers.lock().unwrap()[0].host.agents()
    }

    fn sources(&self) -> BTreeMap<String, String> {
        self.sources.clone()
    }

    fn send<'a>(
        &'a self,
        request: RemoteRequest<'a>,
    ) -> futures_util::future::BoxFuture<'a, Result<String, aura_host::CrossingError>> {
        Box::pin(async move {
            let subject = match request.work {
                RemoteWork::Call { tool } => format!("aura.tool.{}.{tool}", request.agent),
                RemoteWork::Tick => format!("aura.tick.{}", request.agent),
            };
            let sent = SentFrame::of(request.frame);
            let id = request.id.to_owned();
            with_retries(
                &request,
                |n| self.attempt(&request, n, &subject, &sent),
                |n| {
                    self.world.event(format!("wire {id} pause after #{n}"));
                    std::future::ready(())
                },
            )
            .await
        })
    }
}

/// A storage fault to plan, from the seed.
fn storage_fault(rng: &mut Rng) -> (String, StorageStep, u64, StorageFault) {
    let path = match rng.below(3) {
        0 => QUARANTINE_PATH,
        1 => TRACES_PATH,
        _ => aura_day::checkpoint::CHECKPOINT_PATH,
    };
    let ordinal = rng.below(4);
    let (step, fault) = broken_step(rng);
    (path.to_owned(), step, ordinal, fault)
}

/// A write step broken, from the seed: failed with ENOSPC or EIO, cut short, or its sync
/// failed.
pub(crate) fn broken_step(rng: &mut Rng) -> (StorageStep, StorageFault) {
    // ENOSPC (28) or EIO (5).
    let errno = [28, 5][rng.below(2) as usize];
    match rng.below(3) {
        0 => (
            StorageStep::Write,
            StorageFault::Fail(std::io::Error::from_raw_os_error(errno)),
        ),
        1 => (
            StorageStep::Write,
            StorageFault::Short {
                bytes: 1 + rng.below(30) as usize,
                error: std::io::Error::from_raw_os_error(28),
            },
        ),
        _ => (
            StorageStep::Sync,
            StorageFault::Fail(std::io::Error::from_raw_os_error(5)),
        ),
    }
}

/// What a seed shares with every other: the tools' examples, the short scenario's traces as an
/// uninterrupted run writes them, and tick contexts of the day.
struct Fixtures {
    examples: Vec<(String, String, Value)>,
    /// The zoo's agent-to-agent guests as calendar (relay: calls wellness) and wellness
    /// (boomerang: calls calendar back, a cycle), beside the real comms and finance: chains of
    /// two, a cycle refused, and faults on nested calls.
    zoo: PathBuf,
    short_traces: String,
    contexts: Vec<Value>,
}

fn short_scenario() -> PathBuf {
    crate::orchestrator::scenario_path("short")
}

fn fixtures() -> &'static Fixtures {
    static FIXTURES: std::sync::OnceLock<Fixtures> = std::sync::OnceLock::new();
    FIXTURES.get_or_init(|| {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let data = temp_dir("dst-fixtures");
            let host = Host::open(&config(&plugins_dir(), &data, None))
                .await
                .unwrap();
            let scenario = Scenario::load(&short_scenario(), host.crossing().schemas()).unwrap();
            orchestrator::run(&host, &scenario, 7, Start::Fresh, |_| {})
                .await
                .unwrap();
            let short_traces = std::fs::read_to_string(data.join(TRACES_PATH)).unwrap();
            let day = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/day.json");
            let day = Scenario::load(&day, host.crossing().schemas()).unwrap();
            let mut world = day.world();
            let mut contexts = Vec::new();
            for now in day.ticks().into_iter().step_by(8) {
                world.advance(&day, now);
                contexts.push(world.context(&day, now));
            }
            let examples = readme_examples()
                .into_iter()
                .map(|(agent, tool, args)| (agent, tool, serde_json::from_str(&args).unwrap()))
                .collect();
            let built = plugins_dir();
            let zoo = crate::support::plugins_dir_of(
                "dst-zoo",
                &[
                    ("calendar", crate::support::guest_path("relay")),
                    ("wellness", crate::support::guest_path("boomerang")),
                    ("comms", built.join("comms.wasm")),
                    ("finance", built.join("finance.wasm")),
                ],
            );
            Fixtures {
                zoo,
                examples,
                short_traces,
                contexts,
            }
        })
    })
}

fn config(plugins: &Path, data: &Path, world: Option<Arc<World>>) -> aura_host::HostConfig {
    let mut config = crate::support::config(plugins, data);
    config.guest_seed = 7;
    config.fuel_per_ms = Some(aura_contract::limits::FUEL_PER_MS_DEFAULT);
    config.trusted_keys = Some(aura_plugins::signing::TrustedKeys::none());
    if let Some(world) = world {
        config.storage_faults = Some(world.clone());
        config.simulation = Some(world);
    }
    config
}

/// The orchestrator's host: the agents here, or (with a wire) none, every call and tick sent
/// to the workers.
fn host_config(
    plugins: &Path,
    data: &Path,
    world: &Arc<World>,
    wire: &Option<Arc<SimWire>>,
) -> aura_host::HostConfig {
    let mut config = config(plugins, data, Some(world.clone()));
    if let Some(wire) = wire {
        config.agents = Some(Vec::new());
        config.remote = Some(wire.clone());
        config.simulation = Some(Arc::new(ClientSide(world.clone())));
    }
    config
}

/// The event log of one seed, or the violations it found.
fn simulate(seed: u64) -> Result<Vec<String>, (Vec<String>, Vec<String>)> {
    // Built on a runtime of their own, before this seed's.
    fixtures();
    // With the wire, one thread polls the orchestrator's call and the worker's run of it
    // nested in each other (two processes' stacks in one, in a debug build): more than the
    // 2 MiB of a test thread.
    std::thread::Builder::new()
        .stack_size(SIMULATION_STACK_BYTES)
        .spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(simulate_in(seed))
        })
        .unwrap()
        .join()
        .unwrap()
}

/// The stack of the thread a seed runs on.
const SIMULATION_STACK_BYTES: usize = 32 << 20;

async fn simulate_in(seed: u64) -> Result<Vec<String>, (Vec<String>, Vec<String>)> {
    let fixtures = fixtures();
    let mut rng = Rng(seed);
    let data = temp_dir(&format!("dst-{seed}"));
    let fault_percent = [0, 10, 30][rng.below(3) as usize];
    let world = Arc::new(World::new(rng.next(), fault_percent));
    let plan_storage = |rng: &mut Rng| {
        if rng.chance(40) {
            *world.storage.lock().unwrap() = Some(storage_fault(rng));
        }
    };
    plan_storage(&mut rng);
    let zoo = rng.chance(35);
    let plugins = match zoo {
        true => fixtures.zoo.clone(),
        false => plugins_dir(),
    };
    world.event(format!("plugins {}", if zoo { "zoo" } else { "agents" }));
    let wire = match rng.chance(40) {
        false => None,
        true => {
            let faults = WireFaults {
                loss: [0, 5, 15][rng.below(3) as usize],
                duplicate: [0, 10, 30][rng.below(3) as usize],
                delay: [0, 25][rng.below(2) as usize],
            };
            let workers = 2 + rng.below(2);
            world.event(format!("wire to {workers} workers {faults:?}"));
            let mut opened = Vec::new();
            for i in 0..workers {
                opened.push(SimWorker::open(&plugins, data.join(format!("w{i}")), &world).await);
            }
            let sources = opened[0].host.plugin_sources();
            Some(Arc::new(SimWire {
                world: world.clone(),
                workers: Mutex::new(opened),
                faults,
                partition: Mutex::new(None),
                sources,
            }))
        }
    };
    let mut host = Host::open(&host_config(&plugins, &data, &world, &wire))
        .await
        .unwrap();
    let dirs = || {
        let mut dirs = vec![data.clone()];
        dirs.extend(wire.iter().flat_map(|wire| wire.data_dirs()));
        dirs
    };
    let steps = 3 + rng.below(6);
    let mut next_id = 0u64;
    let mut run_started = false;
    for step in 0..steps {
        // The orchestrator's scenario is compared with the real agents' run: not with the zoo.
        let kind = match rng.below(10) {
            9 if zoo => 0,
            kind => kind,
        };
        world.event(format!("step {step} kind {kind}"));
        if let Some(wire) = &wire {
            // During the orchestrator's run the wire stays calm enough for every call to get
            // through (see SimWire::calm): its traces must be the uninterrupted run's.
            wire.plan_partition(&mut rng, kind == 9);
        }
        match kind {
            // Concurrent root calls, at most as many as there are agents, so pending ≤ agents ×
            // depth is the host's to keep within a step (each chain ≤ depth).
            0..=5 => {
                let calls = 1 + rng.below(world.agents as u64);
                let mut envelopes = Vec::new();
                for _ in 0..calls {
                    let (agent, tool, args) =
                        &fixtures.examples[rng.below(fixtures.examples.len() as u64) as usize];
                    next_id += 1;
                    let call_id = format!(
                        "t_{:010}",
                        seed.wrapping_mul(1000).wrapping_add(next_id) % 10_000_000_000
                    );
                    let mut envelope =
                        crate::support::envelope(&call_id, agent, tool, args.clone());
                    if rng.chance(20) {
                        envelope["deadline_ms"] = json!(50);
                    }
                    envelopes.push(envelope.to_string());
                }
                let results = futures_util::future::join_all(
                    envelopes.iter().map(|text| host.dispatch(text.as_str())),
                )
                .await;
                for result in results {
                    let said = match result {
                        Ok(result) => format!("result {} ok {}", result.call_id, result.ok),
                        Err(refused) => {
                            format!("refusal {:?} {}", refused.call_id, refused.error.kind())
                        }
                    };
                    world.event(said);
                }
            }
            // A malformed envelope: refused at the envelope, quarantined.
            6 => {
                next_id += 1;
                let text = format!(
                    "{{\"call_id\":\"t_bad{:07}\",\"agent\":",
                    next_id % 10_000_000
                );
                let refused = host.dispatch(text.as_str()).await.unwrap_err();
                world.event(format!(
                    "refusal {:?} {}",
                    refused.call_id,
                    refused.error.kind()
                ));
            }
            // Every agent's tick on a context of the day.
            7 | 8 => {
                let context =
                    &fixtures.contexts[rng.below(fixtures.contexts.len() as u64) as usize];
                let agents = host.agents();
                for outcome in host.tick_all(&agents, context).await {
                    world.event(match outcome {
                        Ok(outcome) => format!(
                            "tick proposals {} refused {}",
                            outcome.proposals.len(),
                            outcome.refused.len()
                        ),
                        Err(_) => "tick failed".to_owned(),
                    });
                }
            }
            // The short scenario through the orchestrator (resumed if a fault stopped it).
            _ => {
                let scenario =
                    Scenario::load(&short_scenario(), host.crossing().schemas()).unwrap();
                let start = match run_started {
                    true => Start::Fresh,
                    false => Start::Resume,
                };
                run_started = true;
                world
                    .call_faults
                    .store(false, std::sync::atomic::Ordering::Relaxed);
                let ran = orchestrator::run(&host, &scenario, 7, start, |_| {}).await;
                world
                    .call_faults
                    .store(true, std::sync::atomic::Ordering::Relaxed);
                match ran {
                    Ok(summary) => {
                        world.event(format!("run ok {} decisions", summary.decisions));
                        let traces = std::fs::read_to_string(data.join(TRACES_PATH)).unwrap();
                        if traces != fixtures.short_traces {
                            world.violation(
                                "the run's traces differ from the uninterrupted run's".into(),
                            );
                        }
                    }
                    Err(error) => {
                        world.event(format!(
                            "run stopped: {}",
                            error.to_string().chars().take(120).collect::<String>()
                        ));
                        // Restart and resume, as a user would.
                        run_started = false;
                    }
                }
            }
        }
        // A failed write left no torn record: checked before a restart could repair one.
        untorn(&world, &dirs(), step);
        // A failed journal stops the "process": restart on the same data dir, as after a crash
        // (the journal repairs; an unfinished run resumes at its next run step). A worker's
        // restarts alone.
        if let Some(wire) = &wire {
            wire.restart_failed(&plugins).await;
            wire.check_made_once(step);
        }
        if host.journal().failure().is_some() {
            world.event("restart".into());
            drop(host);
            plan_storage(&mut rng);
            host = Host::open(&host_config(&plugins, &data, &world, &wire))
                .await
                .unwrap();
        }
        check(&world, &dirs(), step);
        let violations = world.violations.lock().unwrap().clone();
        if !violations.is_empty() {
            return Err((violations, world.log.lock().unwrap().clone()));
        }
    }
    // The run left unfinished by a fault: resumed now, to the uninterrupted bytes.
    if run_started || data.join(aura_day::checkpoint::CHECKPOINT_PATH).exists() {
        let scenario = Scenario::load(&short_scenario(), host.crossing().schemas()).unwrap();
        let checkpoint: Value = serde_json::from_slice(
            &std::fs::read(data.join(aura_day::checkpoint::CHECKPOINT_PATH)).unwrap(),
        )
        .unwrap();
        if checkpoint["finished"] != true {
            *world.storage.lock().unwrap() = None;
            if let Some(wire) = &wire {
                *wire.partition.lock().unwrap() = None;
            }
            world
                .call_faults
                .store(false, std::sync::atomic::Ordering::Relaxed);
            match orchestrator::run(&host, &scenario, 7, Start::Resume, |_| {}).await {
                Ok(_) => {
                    let traces = std::fs::read_to_string(data.join(TRACES_PATH)).unwrap();
                    if traces != fixtures.short_traces {
                        world.violation(
                            "the resumed run's traces differ from the uninterrupted run's".into(),
                        );
                    }
                }
                Err(error) => world.violation(format!("the run did not resume: {error}")),
            }
            world.event("resumed to the end".into());
            check(&world, &dirs(), steps);
        }
    }
    let violations = world.violations.lock().unwrap().clone();
    let log = world.log.lock().unwrap().clone();
    let _ = std::fs::remove_dir_all(&data);
    match violations.is_empty() {
        true => Ok(log),
        false => Err((violations, log)),
    }
}

/// Every log of every host ends with a whole record (or is empty).
fn untorn(world: &World, dirs: &[PathBuf], step: u64) {
    for data in dirs {
        for path in [QUARANTINE_PATH, TRACES_PATH] {
            let bytes = std::fs::read(data.join(path)).unwrap_or_default();
            if bytes.last().is_some_and(|&b| b != b'\n') {
                world.violation(format!("step {step}: a torn record at the end of {path}"));
            }
        }
    }
}

/// The invariants that hold between steps, over the quarantine logs of every host (the
/// orchestrator's and its workers').
fn check(world: &World, dirs: &[PathBuf], step: u64) {
    let pending = *world.pending.lock().unwrap();
    if pending != 0 {
        world.violation(format!("step {step}: {pending} calls still pending"));
    }
    untorn(world, dirs, step);
    let text: String = dirs
        .iter()
        .map(|data| std::fs::read_to_string(data.join(QUARANTINE_PATH)).unwrap_or_default())
        .collect();
    let mut logged: BTreeMap<String, usize> = BTreeMap::new();
    for line in text.lines() {
        match serde_json::from_str::<Value>(line) {
            Ok(record) => {
                let id = record["call_id"].as_str().unwrap_or("-").to_owned();
                *logged.entry(id).or_default() += 1;
            }
            Err(_) => world.violation(format!("step {step}: a quarantine line is not JSON")),
        }
    }
    let mut acknowledged: BTreeMap<String, usize> = BTreeMap::new();
    for id in world.acknowledged.lock().unwrap().iter() {
        *acknowledged.entry(id.clone()).or_default() += 1;
    }
    if logged != acknowledged {
        let lost: Vec<_> = acknowledged
            .iter()
            .filter(|(id, n)| logged.get(*id) < Some(n))
            .collect();
        let extra: Vec<_> = logged
            .iter()
            .filter(|(id, n)| acknowledged.get(*id) < Some(n))
            .collect();
        world.violation(format!(
            "step {step}: quarantine log is not the acknowledged refusals: lost {lost:?}, not acknowledged or twice {extra:?}"
        ));
    }
}

/// What a run of seeds covers: each kind of fault and check, and the needle its events carry.
const KINDS: &[(&str, &str)] = &[
    ("call faults", "fault Some"),
    ("out of fuel", "OutOfFuel"),
    ("traps", "fault Some(Trap)"),
    ("refused", "fault Some(Refused)"),
    ("not found", "fault Some(NotFound)"),
    ("busy", "fault Some(Busy)"),
    ("nested calls", ">"),
    ("cycles refused", "cycle_detected acknowledged"),
    ("storage faults", "storage fault"),
    ("refusals not durable", "acknowledged false"),
    ("restarts", "restart"),
    ("runs stopped", "run stopped"),
    ("runs completed", "run ok"),
    ("runs resumed at the end", "resumed to the end"),
    ("seeds over the wire", "wire to "),
    ("requests lost", "request lost"),
    ("replies lost", " reply lost"),
    ("requests delivered twice", " copy w"),
    ("requests delayed", " delayed "),
    ("partitions", "partition ["),
    ("attempts with no responder", "no responders"),
    ("retries", "pause after"),
    ("workers restarted", "restart w"),
];

/// Seeds from `first`, each twice (the same event log both times), until `enough` says the
/// run has done what it must, given the seeds run and how often each of [`KINDS`] happened;
/// at most `max` seeds. Returns the seeds run and the counts.
fn run_seeds(
    first: u64,
    max: u64,
    enough: impl Fn(u64, &BTreeMap<&str, usize>) -> bool,
) -> (u64, BTreeMap<&'static str, usize>) {
    let started = std::time::Instant::now();
    let mut events = 0;
    let mut seen: BTreeMap<&'static str, usize> =
        KINDS.iter().map(|(name, _)| (*name, 0)).collect();
    let mut count = 0;
    for seed in first..first + max {
        if enough(count, &seen) {
            break;
        }
        count += 1;
        let once = simulate(seed);
        match &once {
            Ok(log) => {
                events += log.len();
                for (name, needle) in KINDS {
                    *seen.get_mut(name).unwrap() +=
                        log.iter().filter(|e| e.contains(needle)).count();
                }
                let again = simulate(seed);
                if again.as_ref().ok() != Some(log) {
                    let other = match &again {
                        Ok(other) => other.clone(),
                        Err((violations, other)) => {
                            let mut other = other.clone();
                            other.extend(violations.iter().map(|v| format!("VIOLATION {v}")));
                            other
                        }
                    };
                    let at = log
                        .iter()
                        .zip(&other)
                        .position(|(a, b)| a != b)
                        .unwrap_or(log.len().min(other.len()));
                    panic!(
                        "DST seed {seed}: the same seed gave another event log, from event {at}:\nfirst:  {:?}\nsecond: {:?}\nreplay: DST_SEED={seed} cargo test -p aura --test all dst::replay -- --ignored --nocapture",
                        log.get(at),
                        other.get(at)
                    );
                }
            }
            Err((violations, log)) => {
                let tail: Vec<&String> = log.iter().rev().take(40).rev().collect();
                panic!(
                    "DST seed {seed} violated: {violations:#?}\nlast events:\n{}\nreplay: DST_SEED={seed} cargo test -p aura --test all dst::replay -- --ignored --nocapture",
                    tail.iter()
                        .map(|e| e.as_str())
                        .collect::<Vec<_>>()
                        .join("\n")
                );
            }
        }
    }
    eprintln!(
        "DST: {count} seeds from {first}, each twice, no violation; {events} events; {:.1} s",
        started.elapsed().as_secs_f64()
    );
    eprintln!("DST: {seen:?}");
    (count, seen)
}

/// Each kind of fault and check [`KINDS`] names happens at least this often in CI's share.
const DST_KIND_COVERAGE_MIN: usize = 1;
/// Seeds CI runs at least, whatever the coverage.
const DST_SEEDS_MIN: u64 = 100;
/// Seeds CI runs at most: a run that has not covered every kind by then fails.
const DST_SEEDS_MAX: u64 = 300;

/// CI's share: seeds from 1 until every kind of fault and check has happened at least
/// [`DST_KIND_COVERAGE_MIN`] times (and [`DST_SEEDS_MIN`] seeds have run), each seed's
/// invariants held after every step; failing if [`DST_SEEDS_MAX`] seeds do not cover them.
/// `DST_SEEDS=N` runs exactly N seeds (`just dst N`; from `DST_FIRST_SEED`).
#[test]
fn dst_seeds_hold_the_invariants() {
    let first = std::env::var("DST_FIRST_SEED")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(1);
    if let Some(count) = std::env::var("DST_SEEDS").ok().and_then(|n| n.parse().ok()) {
        run_seeds(first, count, |_, _| false);
        return;
    }
    let covered = |seen: &BTreeMap<&str, usize>| seen.values().all(|n| *n >= DST_KIND_COVERAGE_MIN);
    let (count, seen) = run_seeds(first, DST_SEEDS_MAX, |count, seen| {
        count >= DST_SEEDS_MIN && covered(seen)
    });
    assert!(
        covered(&seen),
        "{count} seeds left kinds under {DST_KIND_COVERAGE_MIN}: {seen:?}"
    );
}

/// One seed with its event log printed: `DST_SEED=N`.
#[test]
#[ignore = "replays one seed: DST_SEED=N"]
fn replay() {
    let seed: u64 = std::env::var("DST_SEED")
        .expect("DST_SEED=N")
        .parse()
        .unwrap();
    match simulate(seed) {
        Ok(log) => {
            for event in log {
                println!("{event}");
            }
        }
        Err((violations, log)) => {
            for event in log {
                println!("{event}");
            }
            panic!("seed {seed}: {violations:#?}");
        }
    }
}

/// The harness can fail: a host that wrote a refusal's record twice breaks the invariant.
#[test]
fn a_duplicated_quarantine_record_is_a_violation() {
    let data = temp_dir("dst-self-check");
    let world = World::new(1, 0);
    world
        .acknowledged
        .lock()
        .unwrap()
        .push("t_0000000001".into());
    std::fs::create_dir_all(data.join("errors")).unwrap();
    let record = "{\"call_id\":\"t_0000000001\"}\n";
    std::fs::write(data.join(QUARANTINE_PATH), record).unwrap();
    check(&world, std::slice::from_ref(&data), 0);
    assert!(world.violations.lock().unwrap().is_empty());
    std::fs::write(data.join(QUARANTINE_PATH), format!("{record}{record}")).unwrap();
    check(&world, std::slice::from_ref(&data), 1);
    assert_eq!(world.violations.lock().unwrap().len(), 1);
    // A chain with an agent twice.
    let chain: &[&'static str] = &["calendar", "wellness"];
    world.call_starts(CallPoint {
        call_id: "t_x",
        agent: "calendar",
        tool: "find_free_slots",
        chain_above: chain,
        fuel: 10,
    });
    assert_eq!(world.violations.lock().unwrap().len(), 2);
}
