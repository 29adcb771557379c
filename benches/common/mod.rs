//! What both benches share: the instances (`bench/instances.json`, which `bench/reference.py`
//! reads too, so the Rust and Python sides check the same envelopes), a host over the built
//! plugins, the day scenario's tick contexts, the agents' native entry points, and the probe
//! sandbox that splits a call into instantiation and the call itself ([`probe`]).
//!
//! It owns no measurement: each bench times what it needs with these pieces.

#![allow(dead_code)] // each bench uses its own subset

pub mod harness;
pub mod probe;

use std::path::{Path, PathBuf};

use aura_day::scenario::Scenario;
use aura_host::{Host, HostConfig};
use serde_json::Value;

/// The shared instances.
pub const INSTANCES_PATH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/bench/instances.json");

/// The day the orchestrator runs (69 ticks).
pub const DAY_SCENARIO_PATH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/scenarios/day.json");

/// Tick of the day whose context the criterion tick bench uses: mid-day (11:00 local), with
/// the morning's messages, events and transactions in the snapshot.
pub const DAY_TICK_MID: usize = 34;

/// The plugins dir: `AURA_PLUGINS_DIR` if set, else the one the build writes.
pub fn plugins_dir() -> PathBuf {
    std::env::var_os("AURA_PLUGINS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(aura_agents::PLUGINS_DIR))
}

/// One instance of `bench/instances.json`.
#[derive(Debug, Clone)]
pub struct Instance {
    /// The toolcall.v1 envelope.
    pub envelope: Value,
    /// Its compact text (keys sorted: serde_json's map is ordered), what the host receives.
    pub text: String,
    /// The tool's args schema, as a path under `schemas/`.
    pub args_schema: String,
}

/// Reads instance `name` from `bench/instances.json`; the bench cannot run without it.
pub fn instance(name: &str) -> Instance {
    let text =
        std::fs::read_to_string(INSTANCES_PATH).unwrap_or_else(|e| panic!("{INSTANCES_PATH}: {e}"));
    let all: Value =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{INSTANCES_PATH}: {e}"));
    let entry = &all[name];
    let envelope = entry["envelope"].clone();
    assert!(
        envelope.is_object(),
        "{INSTANCES_PATH}: no instance `{name}`"
    );
    Instance {
        text: serde_json::to_string(&envelope).unwrap_or_default(),
        envelope,
        args_schema: entry["args_schema"].as_str().unwrap_or_default().to_owned(),
    }
}

/// The small call (`small_call` of the instances), checked by `host`, and the agent's native
/// reply to it, as text and parsed; panics unless the call passes and the reply is ok.
pub fn small_call(
    host: &Host,
) -> (
    Instance,
    aura_contract::crossing::CheckedCall,
    String,
    Value,
) {
    let small = instance("small_call");
    let checked = host
        .crossing()
        .check_call(&small.text)
        .unwrap_or_else(|e| panic!("the small call is refused: {e}"));
    let reply = native_invoke("calendar", checked.canonical());
    let reply_value: Value = serde_json::from_str(&reply).unwrap_or_default();
    assert_eq!(reply_value["ok"], true, "{reply}");
    (small, checked, reply, reply_value)
}

/// A fresh, empty data dir under the system's temp dir (quarantine records of a bench go
/// there; a healthy bench writes none).
pub fn data_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir()
        .join("aura-bench")
        .join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    dir
}

/// A host over the built plugins at the default fuel rate (no calibration file in a fresh
/// data dir), loading every agent.
pub async fn open_host(name: &str) -> Host {
    let config = HostConfig::new(plugins_dir(), data_dir(name));
    let host = Host::open(&config)
        .await
        .unwrap_or_else(|e| panic!("cannot open the host: {e}"));
    assert!(
        host.load_failures().is_empty(),
        "plugins refused: {:?}",
        host.load_failures()
    );
    host
}

/// A single-threaded runtime: one call at a time, timed end to end on one core.
pub fn current_thread_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap_or_else(|e| panic!("tokio runtime: {e}"))
}

/// A runtime with `workers` worker threads, for the throughput figures.
pub fn multi_thread_runtime(workers: usize) -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_time()
        .build()
        .unwrap_or_else(|e| panic!("tokio runtime: {e}"))
}

/// Dispatches `text` and checks it came back with a result: a bench of a refused or failed
/// call would measure the wrong path.
pub async fn dispatch_ok(host: &Host, text: &str) -> aura_host::ResultEnvelope {
    match host.dispatch(text).await {
        Ok(result) if result.ok => result,
        Ok(result) => panic!("the call failed: {:?}", result.error),
        Err(refused) => panic!("the call was refused: {refused}"),
    }
}

/// The scenario file, checked.
pub fn day_scenario(host: &Host) -> Scenario {
    Scenario::load(Path::new(DAY_SCENARIO_PATH), host.crossing().schemas())
        .unwrap_or_else(|e| panic!("{DAY_SCENARIO_PATH}: {e}"))
}

/// The context snapshot of each of the day's ticks, as the orchestrator builds it (without
/// the events a confirmed call adds: the day's answers only add a few).
pub fn day_contexts(scenario: &Scenario) -> Vec<Value> {
    let mut world = scenario.world();
    scenario
        .ticks()
        .into_iter()
        .map(|now| {
            world.advance(scenario, now);
            world.context(scenario, now)
        })
        .collect()
}

/// Runs every agent's tick concurrently on `context` through the host (checks included), as
/// the orchestrator does; panics if a tick failed.
pub async fn tick_all(host: &Host, agents: &[&str], context: &Value) -> usize {
    host.tick_all(agents, context)
        .await
        .into_iter()
        .map(|outcome| match outcome {
            Ok(outcome) => outcome.proposals.len(),
            Err(refused) => panic!("a tick failed: {refused}"),
        })
        .sum()
}

/// The agents' `invoke` export compiled for the host: the same logic, no sandbox, no checks.
pub fn native_invoke(agent: &str, call: &str) -> String {
    match agent {
        "calendar" => calendar_agent::Calendar::invoke(call),
        "comms" => comms_agent::Comms::invoke(call),
        "finance" => finance_agent::Finance::invoke(call),
        "wellness" => wellness_agent::Wellness::invoke(call),
        other => panic!("no native agent `{other}`"),
    }
}

/// An agent's `tick` export compiled for the host.
pub fn native_tick(agent: &str, context: &str) -> String {
    match agent {
        "calendar" => calendar_agent::Calendar::tick(context),
        "comms" => comms_agent::Comms::tick(context),
        "finance" => finance_agent::Finance::tick(context),
        "wellness" => wellness_agent::Wellness::tick(context),
        other => panic!("no native agent `{other}`"),
    }
}

/// The four agents' `tick` export compiled for the host, one after the other on one core.
pub fn native_tick_all(context: &str) -> usize {
    ["calendar", "wellness", "finance", "comms"]
        .iter()
        .map(|agent| native_tick(agent, context).len())
        .sum()
}

/// Nearest-rank percentile of sorted `values` (the orchestrator's rule); 0 when empty.
pub fn nearest_rank(sorted: &[u64], percent: usize) -> u64 {
    match sorted.len() {
        0 => 0,
        n => sorted[(percent * n).div_ceil(100).clamp(1, n) - 1],
    }
}
