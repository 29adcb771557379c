//! Per-iteration timings of a crossing and its parts (p50/p99), throughput on both cores, the
//! agent-to-agent hop, fuel on and off, the pooling allocator's settings, and the day's ticks
//! (`just bench`; BENCHMARKS.md).
//!
//! Criterion (the `crossing` bench) reports medians; this harness times every iteration with
//! `Instant` so it can report tails, and writes everything to `$AURA_BENCH_DIR/rust.json`
//! (default `target/bench/rust.json` in the workspace), which `bench/report.py` sets beside
//! the Python reference's figures. `AURA_BENCH_SCALE` (default 1) scales every iteration count,
//! e.g. 0.1 for a quick look; `AURA_BENCH_ONLY` (comma-separated section names) runs some
//! sections and writes `rust-partial.json` instead. It owns the timing; the pieces it times
//! are in `common`.

/// The binary's allocator (its `mimalloc` feature), so these figures are the binary's.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod common;
// The day's sections: its ticks, and crossings per second on both cores.
#[path = "percentiles/day.rs"]
mod day;
// The sandbox's sections: its stages, the whole crossing by its parts, the pool's resets.
#[path = "percentiles/sandbox.rs"]
mod sandbox;

use std::hint::black_box;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use aura_contract::canonical::{parse_canonical, to_canonical_string};
use aura_contract::catalogue::{REPLY_SCHEMA, TOOLCALL_SCHEMA};
use aura_contract::limits::{
    CONCURRENT_CALLS_MAX, CROSSING_BYTES_MAX, DEADLINE_MS_DEFAULT, DEADLINE_MS_MAX,
    FUEL_PER_MS_DEFAULT, TICK_DEADLINE_MS,
};
use serde_json::{Value, json};

use aura_sandbox::{EngineTuning, PoolReset};
use common::harness::{
    Figures, Series, WARM_UP_PERCENT, nanos, out_dir, scale, scaled, time, wanted,
};
use common::probe::Probe;
/// Timed iterations of a µs-scale figure (the crossing, its parts, the native call).
const FAST_ITERS: usize = 20_000;
/// Timed iterations of the sandbox-only figures and the hop (tens of µs each).
const SANDBOX_ITERS: usize = 5_000;
/// Timed iterations of a compute-heavy call (milliseconds each): fuel on and off.
const HEAVY_ITERS: usize = 60;
/// Passes over the day's 69 tick contexts (each pass ~1 s through the host).
const DAY_PASSES: usize = 3;
/// Calls one pool variant makes in a row before the next variant's turn.
const POOL_BLOCK_CALLS: usize = 100;
/// Probe calls in the `profile` loop (~40 µs each).
const PROFILE_ITERS: usize = 200_000;
/// Calls in each throughput run.
const THROUGHPUT_CALLS: usize = 20_000;
/// Tasks issuing calls at once in the throughput runs: as many as the sandbox admits.
const THROUGHPUT_TASKS: usize = CONCURRENT_CALLS_MAX as usize;
/// Runs of each random request size in the host-work section (~0.1 ms each at 64 KiB).
const RANDOM_RUNS: usize = 1_000;
/// Runs of the calibration workload there (~5 ms each), for guest code's fuel per ns.
const WORKLOAD_RUNS: usize = 40;
/// The machine's cores: the throughput run on "both cores" uses this many tokio workers.
const CORES: usize = 2;

/// What the sections share: a single-threaded runtime, a host over every agent, and the
/// small call, checked, with its native reply.
struct Bench {
    rt: tokio::runtime::Runtime,
    host: aura_host::Host,
    small: common::Instance,
    checked: aura_contract::crossing::CheckedCall,
    reply: String,
    reply_value: Value,
}

/// One section of the harness.
type Section = fn(&Bench, &mut Figures);

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` runs this too: do nothing then.
    if !std::env::args().any(|arg| arg == "--bench") {
        return;
    }
    let rt = common::current_thread_runtime();
    let host = rt.block_on(common::open_host("percentiles"));
    let (small, checked, reply, reply_value) = common::small_call(&host);
    let bench = Bench {
        rt,
        host,
        small,
        checked,
        reply,
        reply_value,
    };
    let mut figures = Figures::default();
    let sections: [(&str, Section); 9] = [
        ("crossing", crossing),
        ("whole", sandbox::whole),
        ("sandbox", sandbox::sandbox),
        ("pool", sandbox::pool),
        ("hop", hop),
        ("fuel", fuel),
        ("tick", day::tick),
        ("throughput", day::throughput),
        ("host_work", host_work),
    ];
    for (name, section) in sections {
        if wanted(name) {
            section(&bench, &mut figures);
        }
    }
    // Only on request: `AURA_BENCH_ONLY=profile perf record -g <this bench> --bench`.
    let only = std::env::var("AURA_BENCH_ONLY").unwrap_or_default();
    if only.split(',').any(|s| s == "guest_ab") {
        sandbox::guest_ab(&bench, &mut figures);
    }
    if only.split(',').any(|s| s == "profile") {
        profile(&bench);
    }
    // `AURA_BENCH_ONLY=profile_crossing perf record -g <this bench> --bench`: the whole crossing
    // through the host, so a profile splits it by the host's own functions.
    if only.split(',').any(|s| s == "profile_crossing") {
        for _ in 0..scaled(PROFILE_ITERS) {
            black_box(
                bench
                    .rt
                    .block_on(common::dispatch_ok(&bench.host, &bench.small.text)),
            );
        }
    }

    let out = json!({
        "format": "aura-bench.v1",
        "scale": scale(),
        "envelope_text": bench.small.text,
        "small_call_fuel": figures.0.get("small_call_fuel").and_then(Value::as_u64).unwrap_or(0),
        "figures": figures.0,
    });
    let dir = out_dir();
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let name = match std::env::var("AURA_BENCH_ONLY") {
        Ok(_) => "rust-partial.json",
        Err(_) => "rust.json",
    };
    let path = dir.join(name);
    let text = serde_json::to_string_pretty(&out).unwrap_or_default();
    std::fs::write(&path, text + "\n").unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    println!("wrote {}", path.display());
}

/// The full crossing, the native floor, and the checks one by one.
fn crossing(b: &Bench, figures: &mut Figures) {
    let (rt, host, small) = (&b.rt, &b.host, &b.small);
    let schemas = host.crossing().schemas();
    // What a front's `await` of one call moves around: an async fn's state holds its
    // callees' states, each nested in, and moved into, the one above.
    figures.record(
        "dispatch_future_bytes",
        json!(std::mem::size_of_val(&host.dispatch(small.text.as_str()))),
    );
    figures.record(
        "crossing_full",
        time(FAST_ITERS, || {
            rt.block_on(common::dispatch_ok(host, &small.text))
        })
        .summary(),
    );
    figures.record(
        "native_call",
        time(FAST_ITERS, || {
            common::native_invoke("calendar", b.checked.canonical())
        })
        .summary(),
    );
    figures.record(
        "check_call",
        time(FAST_ITERS, || host.crossing().check_call(&small.text)).summary(),
    );
    figures.record(
        "check_reply",
        time(FAST_ITERS, || {
            host.crossing().check_reply(&b.checked, &b.reply)
        })
        .summary(),
    );
    figures.record(
        "parse_canonical_envelope",
        time(FAST_ITERS, || {
            parse_canonical(&small.text, CROSSING_BYTES_MAX)
        })
        .summary(),
    );
    figures.record(
        "parse_plain_serde_json_envelope",
        time(FAST_ITERS, || serde_json::from_str::<Value>(&small.text)).summary(),
    );
    figures.record(
        "parse_i_json_envelope",
        time(FAST_ITERS, || {
            aura_contract::canonical::parse_i_json(&small.text, CROSSING_BYTES_MAX)
        })
        .summary(),
    );
    figures.record(
        "canonicalize_envelope",
        time(FAST_ITERS, || to_canonical_string(&small.envelope)).summary(),
    );
    figures.record(
        "validate_envelope",
        time(FAST_ITERS, || {
            schemas.validate(TOOLCALL_SCHEMA.path, &small.envelope, "")
        })
        .summary(),
    );
    figures.record(
        "validate_args",
        time(FAST_ITERS, || {
            schemas.validate(&small.args_schema, &small.envelope["args"], "")
        })
        .summary(),
    );
    figures.record(
        "validate_envelope_and_args",
        time(FAST_ITERS, || {
            schemas.validate(TOOLCALL_SCHEMA.path, &small.envelope, "")?;
            schemas.validate(&small.args_schema, &small.envelope["args"], "")
        })
        .summary(),
    );
    figures.record(
        "validate_reply_and_result",
        time(FAST_ITERS, || {
            schemas.validate(REPLY_SCHEMA.path, &b.reply_value, "")?;
            schemas.validate(
                b.checked.spec().result_schema.path,
                &b.reply_value["result"],
                "",
            )
        })
        .summary(),
    );
}

/// Makes THROUGHPUT_CALLS calls (scaled) from THROUGHPUT_TASKS tasks on `rt`, after an untimed
/// warm-up of WARM_UP_PERCENT of them; the calls made and the time they took.
fn calls_concurrently<F, Fut>(rt: &tokio::runtime::Runtime, call: F) -> (usize, Duration)
where
    F: Fn() -> Fut + Clone + Send + 'static,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let run = |calls: usize| {
        rt.block_on(async {
            let next = Arc::new(AtomicUsize::new(0));
            let started = Instant::now();
            let tasks: Vec<_> = (0..THROUGHPUT_TASKS)
                .map(|_| {
                    let (call, next) = (call.clone(), next.clone());
                    tokio::spawn(async move {
                        while next.fetch_add(1, Ordering::Relaxed) < calls {
                            call().await;
                        }
                    })
                })
                .collect();
            for task in tasks {
                task.await
                    .unwrap_or_else(|e| panic!("a caller task died: {e}"));
            }
            started.elapsed()
        })
    };
    run(scaled(THROUGHPUT_CALLS) * WARM_UP_PERCENT / 100);
    let calls = scaled(THROUGHPUT_CALLS);
    (calls, run(calls))
}

/// A loop of whole probe calls (the sandbox's pool) with the guest's functions in perf's map, for
/// `perf record`; records nothing.
fn profile(b: &Bench) {
    let tuning = EngineTuning {
        perf_map: true,
        ..EngineTuning::default()
    };
    let probe = Probe::tuned(tuning, &["calendar"]);
    let fuel = DEADLINE_MS_DEFAULT * FUEL_PER_MS_DEFAULT;
    for _ in 0..scaled(PROFILE_ITERS) {
        black_box(b.rt.block_on(probe.run(
            "calendar",
            b.checked.canonical(),
            fuel,
            DEADLINE_MS_DEFAULT,
        )));
    }
}

/// The agent-to-agent hop, and the same tool when it asks nothing.
fn hop(b: &Bench, figures: &mut Figures) {
    let (rt, host) = (&b.rt, &b.host);
    let hop = common::instance("hop_call");
    let no_hop = common::instance("no_hop_call");
    let hop_result = rt.block_on(common::dispatch_ok(host, &hop.text));
    let no_hop_result = rt.block_on(common::dispatch_ok(host, &no_hop.text));
    figures.record(
        "hop_suggest_break_with_hop",
        time(SANDBOX_ITERS, || {
            rt.block_on(common::dispatch_ok(host, &hop.text))
        })
        .summary(),
    );
    figures.record(
        "hop_suggest_break_without_hop",
        time(SANDBOX_ITERS, || {
            rt.block_on(common::dispatch_ok(host, &no_hop.text))
        })
        .summary(),
    );
    figures.record(
        "hop_fuel",
        json!({ "with_hop": hop_result.fuel_used, "without_hop": no_hop_result.fuel_used }),
    );
}

/// Fuel on and off on the compute-heavy calibration workload, through the probe.
fn fuel(b: &Bench, figures: &mut Figures) {
    let rt = &b.rt;
    let workload = aura_host::calibrate::workload_call();
    let workload_text = serde_json::to_string(&workload).unwrap_or_default();
    let canonical = parse_canonical(&workload_text, CROSSING_BYTES_MAX)
        .unwrap_or_else(|e| panic!("workload: {e}"))
        .text;
    let heavy_fuel = DEADLINE_MS_MAX * FUEL_PER_MS_DEFAULT;
    let metered = Probe::new(true, &["calendar"]);
    let unmetered = Probe::new(false, &["calendar"]);
    let (_, workload_fuel) =
        rt.block_on(metered.run("calendar", &canonical, heavy_fuel, DEADLINE_MS_MAX));
    // Alternate on and off run by run, so machine load falls on both alike.
    let (mut on, mut off) = (Vec::new(), Vec::new());
    for _ in 0..scaled(HEAVY_ITERS) {
        for (probe, series) in [(&metered, &mut on), (&unmetered, &mut off)] {
            let started = Instant::now();
            black_box(rt.block_on(probe.run("calendar", &canonical, heavy_fuel, DEADLINE_MS_MAX)));
            series.push(nanos(started.elapsed()));
        }
    }
    figures.record("fuel_on", Series(on).summary());
    figures.record("fuel_off", Series(off).summary());
    figures.record(
        "fuel_native",
        time(HEAVY_ITERS, || {
            common::native_invoke("calendar", &canonical)
        })
        .summary(),
    );
    figures.record(
        "fuel_workload",
        json!({ "events": aura_host::calibrate::WORKLOAD_EVENTS, "fuel_per_run": workload_fuel }),
    );
}

/// Host work done for a guest against what it is charged: tests/guests/randomflood, loaded as
/// wellness, asks WASI random for 1 KiB and for 64 KiB (the most one request may have) in one
/// request, timed in the sandbox alone (`Host::measure`, median of [`RANDOM_RUNS`] each); the
/// difference over 63 KiB is the host's time and the guest's charge per byte asked. Guest
/// code's fuel per ns, from the calibration workload on the same host, turns the charge into
/// time: `charge_over_cost` ≥ 1 means a guest pays for host work at least as dearly as for its
/// own code. The guest stays under target/plugins (never in plugins/).
fn host_work(b: &Bench, figures: &mut Figures) {
    let rt = &b.rt;
    let plugins = common::data_dir("host-work-plugins");
    let read = |path: std::path::PathBuf| {
        std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    };
    let guests = std::path::Path::new(aura_guests::GUESTS_DIR);
    let mut components = vec![("wellness", read(guests.join("randomflood_guest.wasm")))];
    for agent in ["calendar", "finance", "comms"] {
        components.push((
            agent,
            read(common::plugins_dir().join(format!("{agent}.wasm"))),
        ));
    }
    aura_plugins::write_components(&plugins, &components)
        .unwrap_or_else(|e| panic!("{}: {e}", plugins.display()));
    let config = aura_host::HostConfig::new(&plugins, common::data_dir("host-work"));
    let host = rt
        .block_on(aura_host::Host::open(&config))
        .unwrap_or_else(|e| panic!("cannot open the host: {e}"));
    let asking = |kib: u64| {
        let call = json!({"call_id": "t_hostwork01", "agent": "wellness", "tool": "stress_score",
            "ts": "2026-11-23T08:00:00Z", "confirm_required": false,
            "args": {"readings": {"sleep_minutes": kib},
                     "baselines": {"hrv_ms": 60, "resting_hr_bpm": 58, "sleep_minutes": 450}}});
        let checked = host
            .crossing()
            .check_call(&call.to_string())
            .unwrap_or_else(|e| panic!("the random call is refused: {e}"));
        let runs = rt
            .block_on(host.measure(&checked, scaled(RANDOM_RUNS)))
            .unwrap_or_else(|e| panic!("measure: {e}"));
        let fuel = runs.first().map_or(0, |(fuel, _)| *fuel);
        (
            fuel,
            Series(runs.iter().map(|(_, took)| nanos(*took)).collect()),
        )
    };
    let (small_fuel, small) = asking(1);
    let (large_fuel, large) = asking(64);
    let (small, large) = (small.summary(), large.summary());
    let median = |summary: &Value| summary["p50_us"].as_f64().unwrap_or(0.0) * 1_000.0;
    let asked_bytes = 63.0 * 1024.0;
    let ns_per_byte = (median(&large) - median(&small)) / asked_bytes;
    let fuel_per_byte = (large_fuel - small_fuel) as f64 / asked_bytes;

    let workload =
        serde_json::to_string(&aura_host::calibrate::workload_call()).unwrap_or_default();
    let workload = b
        .host
        .crossing()
        .check_call(&workload)
        .unwrap_or_else(|e| panic!("workload: {e}"));
    let runs = rt
        .block_on(b.host.measure(&workload, scaled(WORKLOAD_RUNS)))
        .unwrap_or_else(|e| panic!("measure: {e}"));
    let workload_fuel = runs.first().map_or(0, |(fuel, _)| *fuel);
    let workload_ns =
        median(&Series(runs.iter().map(|(_, took)| nanos(*took)).collect()).summary());
    let guest_fuel_per_ns = workload_fuel as f64 / workload_ns;

    figures.record("host_work_random_1kib", small);
    figures.record("host_work_random_64kib", large);
    figures.record(
        "host_work_random",
        json!({
            "fuel_1kib": small_fuel,
            "fuel_64kib": large_fuel,
            "host_ns_per_asked_byte": ns_per_byte,
            "fuel_per_asked_byte": fuel_per_byte,
            "guest_fuel_per_ns": guest_fuel_per_ns,
            "charge_over_cost": fuel_per_byte / (ns_per_byte * guest_fuel_per_ns),
        }),
    );
}
