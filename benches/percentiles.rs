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

mod common;
// The day's sections: its ticks, and crossings per second on both cores.
#[path = "percentiles/day.rs"]
mod day;

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
        ("whole", whole),
        ("sandbox", sandbox),
        ("pool", pool),
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

/// The sandbox: the real one (Host::measure times each run around the sandbox alone), then
/// the probe's split into instantiation and the call.
fn sandbox(b: &Bench, figures: &mut Figures) {
    let rt = &b.rt;
    let runs = rt
        .block_on(b.host.measure(&b.checked, scaled(SANDBOX_ITERS)))
        .unwrap_or_else(|e| panic!("measure: {e}"));
    figures.record(
        "sandbox_instantiate_and_call",
        Series(runs.iter().map(|(_, took)| nanos(*took)).collect()).summary(),
    );
    figures.record(
        "small_call_fuel",
        json!(runs.first().map_or(0, |(fuel, _)| *fuel)),
    );
    let probe = Probe::new(true, &["calendar"]);
    let fuel = DEADLINE_MS_DEFAULT * FUEL_PER_MS_DEFAULT;
    let warm_up = scaled(SANDBOX_ITERS) * WARM_UP_PERCENT / 100;
    let (mut store_ns, mut instantiate_ns, mut invoke_ns) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..warm_up + scaled(SANDBOX_ITERS) {
        let started = Instant::now();
        let mut store = probe.store("calendar", fuel, DEADLINE_MS_DEFAULT);
        let stored = Instant::now();
        let instance = rt.block_on(Probe::instantiate(&mut store));
        let instantiated = Instant::now();
        let output = rt.block_on(Probe::invoke(&mut store, &instance, b.checked.canonical()));
        let called = Instant::now();
        black_box(output);
        if i >= warm_up {
            store_ns.push(nanos(stored - started));
            instantiate_ns.push(nanos(instantiated - started));
            invoke_ns.push(nanos(called - instantiated));
        }
    }
    figures.record("probe_store", Series(store_ns).summary());
    figures.record("probe_instantiate", Series(instantiate_ns).summary());
    figures.record("probe_call", Series(invoke_ns).summary());

    // The same call again on the instance that just ran it: the guest's pages are resident
    // and its allocator warm, so this is the wasm execution alone.
    let mut again_ns = Vec::new();
    for i in 0..warm_up + scaled(SANDBOX_ITERS) {
        let mut store = probe.store("calendar", fuel, DEADLINE_MS_DEFAULT);
        let instance = rt.block_on(Probe::instantiate(&mut store));
        black_box(rt.block_on(Probe::invoke(&mut store, &instance, b.checked.canonical())));
        let started = Instant::now();
        black_box(rt.block_on(Probe::invoke(&mut store, &instance, b.checked.canonical())));
        if i >= warm_up {
            again_ns.push(nanos(started.elapsed()));
        }
    }
    figures.record("probe_call_again", Series(again_ns).summary());
}

/// The whole crossing explained by its parts: the full crossing and its parts run in
/// sequence (check_call, the sandbox's whole call, check_reply, as dispatch runs them), taking
/// turns call by call, each part timed where it runs in a crossing rather than in a loop of its
/// own; the page faults per crossing; and the bytes a call's reset copies or zeroes.
fn whole(b: &Bench, figures: &mut Figures) {
    let (rt, host, small) = (&b.rt, &b.host, &b.small);
    // Five ways of running the small call, taking turns in blocks of POOL_BLOCK_CALLS (each
    // block's first call untimed), so the machine's slow and fast spells fall on all alike:
    // the full crossing; its parts in sequence, each timed in place; and each part alone, in
    // a block of its own.
    let mut series: [Vec<u64>; 8] = Default::default();
    let [
        full,
        inbound,
        sandboxed,
        outbound,
        parts,
        check_alone,
        sandbox_alone,
        reply_alone,
    ] = &mut series;
    let blocks = scaled(FAST_ITERS).div_ceil(POOL_BLOCK_CALLS);
    let faults_before = thread_minor_faults();
    for _ in 0..blocks {
        for variant in 0..5 {
            for call in 0..POOL_BLOCK_CALLS {
                let timed = call > 0;
                let started = Instant::now();
                match variant {
                    0 => {
                        black_box(rt.block_on(common::dispatch_ok(host, &small.text)));
                        if timed {
                            full.push(nanos(started.elapsed()));
                        }
                    }
                    1 => {
                        let checked = host
                            .crossing()
                            .check_call(&small.text)
                            .unwrap_or_else(|e| panic!("check_call: {e}"));
                        let checked_at = Instant::now();
                        let runs = rt
                            .block_on(host.measure(&checked, 1))
                            .unwrap_or_else(|e| panic!("measure: {e}"));
                        let ran_at = Instant::now();
                        let reply = host.crossing().check_reply(&checked, &b.reply);
                        black_box(reply.unwrap_or_else(|e| panic!("check_reply: {e}")));
                        let replied_at = Instant::now();
                        black_box(runs);
                        if timed {
                            inbound.push(nanos(checked_at - started));
                            sandboxed.push(nanos(ran_at - checked_at));
                            outbound.push(nanos(replied_at - ran_at));
                            parts.push(nanos(replied_at - started));
                        }
                    }
                    2 => {
                        black_box(host.crossing().check_call(&small.text)).ok();
                        if timed {
                            check_alone.push(nanos(started.elapsed()));
                        }
                    }
                    3 => {
                        black_box(rt.block_on(host.measure(&b.checked, 1))).ok();
                        if timed {
                            sandbox_alone.push(nanos(started.elapsed()));
                        }
                    }
                    _ => {
                        black_box(host.crossing().check_reply(&b.checked, &b.reply)).ok();
                        if timed {
                            reply_alone.push(nanos(started.elapsed()));
                        }
                    }
                }
            }
        }
    }
    let names = [
        "whole_full_crossing",
        "whole_in_sequence_check_call",
        "whole_in_sequence_sandbox",
        "whole_in_sequence_check_reply",
        "whole_in_sequence_parts",
        "whole_alone_check_call",
        "whole_alone_sandbox",
        "whole_alone_check_reply",
    ];
    for (name, values) in names.into_iter().zip(series) {
        figures.record(name, Series(values).summary());
    }
    let faults = thread_minor_faults().saturating_sub(faults_before);
    figures.record(
        "whole_minor_faults_per_call",
        json!(faults as f64 / (blocks * 5 * POOL_BLOCK_CALLS) as f64),
    );

    // What a call's reset copies or zeroes: every page its slot's calls ever wrote. The small
    // call alone, then after the day's ticks ran in the same slot.
    let probe = Probe::new(true, &["calendar"]);
    let fuel = DEADLINE_MS_DEFAULT * FUEL_PER_MS_DEFAULT;
    for _ in 0..10 {
        black_box(rt.block_on(probe.run(
            "calendar",
            b.checked.canonical(),
            fuel,
            DEADLINE_MS_DEFAULT,
        )));
    }
    figures.record(
        "whole_reset_bytes_small_call",
        json!(probe.resident_bytes()),
    );
    let scenario = common::day_scenario(host);
    for context in common::day_contexts(&scenario) {
        let text = to_canonical_string(&context).unwrap_or_default();
        let tick_fuel = TICK_DEADLINE_MS * FUEL_PER_MS_DEFAULT;
        black_box(rt.block_on(probe.run_tick("calendar", &text, tick_fuel, TICK_DEADLINE_MS)));
    }
    black_box(rt.block_on(probe.run("calendar", b.checked.canonical(), fuel, DEADLINE_MS_DEFAULT)));
    figures.record(
        "whole_reset_bytes_small_call_after_the_day",
        json!(probe.resident_bytes()),
    );
    let warm = Series(
        (0..scaled(SANDBOX_ITERS))
            .map(|_| small_probe_call(b, &probe))
            .collect(),
    );
    figures.record("whole_probe_call_after_the_day", warm.summary());
}

/// The small call through `probe`'s whole call (store, instantiate, call, free): how long it
/// took, in ns.
fn small_probe_call(b: &Bench, probe: &Probe) -> u64 {
    let fuel = DEADLINE_MS_DEFAULT * FUEL_PER_MS_DEFAULT;
    let started = Instant::now();
    let call = probe.run("calendar", b.checked.canonical(), fuel, DEADLINE_MS_DEFAULT);
    black_box(b.rt.block_on(call));
    nanos(started.elapsed())
}

/// This thread's minor page faults so far (/proc/thread-self/stat, field 10).
fn thread_minor_faults() -> u64 {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").unwrap_or_default();
    // The command name (field 2) is in parentheses and may hold spaces: count after it.
    let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    after
        .split_whitespace()
        .nth(7)
        .and_then(|f| f.parse().ok())
        .unwrap_or(0)
}

/// What the pool's reset of a freed slot buys: the probe's whole call (fresh store,
/// instantiate, call, drop) with wasmtime's default (`madvise` everything), with memory kept
/// resident and `memset` whole (kernels before 6.7), and as the sandbox does it (kept resident,
/// only PAGEMAP_SCAN's dirty pages reset), alternating call by call.
fn pool(b: &Bench, figures: &mut Figures) {
    let rt = &b.rt;
    let fuel = DEADLINE_MS_DEFAULT * FUEL_PER_MS_DEFAULT;
    let variants = [
        (
            "pool_madvise",
            EngineTuning {
                pool_reset: PoolReset::Madvise,
                ..EngineTuning::default()
            },
        ),
        (
            "pool_keep_resident_memset",
            EngineTuning {
                pool_reset: PoolReset::InPlaceWhole,
                ..EngineTuning::default()
            },
        ),
        ("pool_sandbox", EngineTuning::default()),
        (
            "pool_sandbox_bounds_checked",
            EngineTuning {
                bounds_checks_always: true,
                ..EngineTuning::default()
            },
        ),
    ];
    let probes: Vec<_> = variants
        .iter()
        .map(|(_, tuning)| Probe::tuned(*tuning, &["calendar"]))
        .collect();
    let mut series: Vec<Vec<u64>> = vec![Vec::new(); probes.len()];
    // Blocks of POOL_BLOCK_CALLS calls per variant, the variants taking turns: load falls on
    // all alike, and one variant's cache footprint (the memset variant clears megabytes per
    // call) does not land on the next variant's every call. Each block's first call is untimed.
    let blocks = scaled(SANDBOX_ITERS).div_ceil(POOL_BLOCK_CALLS);
    for _ in 0..blocks {
        for (probe, ns) in probes.iter().zip(series.iter_mut()) {
            for call in 0..=POOL_BLOCK_CALLS {
                let took = small_probe_call(b, probe);
                if call > 0 {
                    ns.push(took);
                }
            }
        }
    }
    for ((name, _), ns) in variants.iter().zip(series) {
        figures.record(name, Series(ns).summary());
    }

    // The day's ticks, the four agents one after the other, pool by pool.
    let agents = b.host.agents();
    let scenario = common::day_scenario(&b.host);
    let contexts: Vec<String> = common::day_contexts(&scenario)
        .iter()
        .map(|c| to_canonical_string(c).unwrap_or_default())
        .collect();
    let tick_probes: Vec<_> = variants
        .iter()
        .map(|(_, tuning)| Probe::tuned(*tuning, &agents))
        .collect();
    let tick_fuel = TICK_DEADLINE_MS * FUEL_PER_MS_DEFAULT;
    let mut tick_series: Vec<Vec<u64>> = vec![Vec::new(); tick_probes.len()];
    for _ in 0..scaled(DAY_PASSES) {
        for context in &contexts {
            for (probe, ns) in tick_probes.iter().zip(tick_series.iter_mut()) {
                let started = Instant::now();
                for agent in &agents {
                    black_box(rt.block_on(probe.run_tick(
                        agent,
                        context,
                        tick_fuel,
                        TICK_DEADLINE_MS,
                    )));
                }
                ns.push(nanos(started.elapsed()));
            }
        }
    }
    for ((name, _), ns) in variants.iter().zip(tick_series) {
        figures.record(
            &format!("{name}_day_ticks_sequential"),
            Series(ns).summary(),
        );
    }
    drop(tick_probes);

    // Whole probe calls per second on both cores, pool by pool: a
    // decommit is an madvise, and an madvise in a threaded process interrupts the other
    // cores to flush their TLBs.
    let mt = common::multi_thread_runtime(CORES);
    let call = Arc::new(b.checked.canonical().to_owned());
    for ((name, _), probe) in variants.iter().zip(probes) {
        let (probe, call) = (Arc::new(probe), call.clone());
        let (calls, took) = calls_concurrently(&mt, move || {
            let (probe, call) = (probe.clone(), call.clone());
            async move {
                black_box(
                    probe
                        .run("calendar", &call, fuel, DEADLINE_MS_DEFAULT)
                        .await,
                );
            }
        });
        figures.record(
            &format!("{name}_per_second_2_workers"),
            json!((calls as f64 / took.as_secs_f64()).round()),
        );
    }
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
