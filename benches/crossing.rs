//! Criterion benches of a crossing (`just bench`; BENCHMARKS.md): the full crossing of a small
//! real tool call, its parts, the agent's logic called natively (the floor), an agent-to-agent
//! hop, fuel metering on and off on a compute-heavy tool, and one tick of all four agents.
//!
//! Criterion reports means and medians with confidence intervals; the p50/p99 figures and the
//! throughput come from the `percentiles` bench. Both read `bench/instances.json`, which
//! `bench/reference.py` reads too. Run one group with e.g. `cargo bench --bench crossing --
//! crossing/`.

/// The binary's allocator (its `mimalloc` feature), so these figures are the binary's.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod common;

use std::hint::black_box;
use std::time::{Duration, Instant};

use aura_contract::canonical::{parse_canonical, to_canonical_string};
use aura_contract::catalogue::{REPLY_SCHEMA, TOOLCALL_SCHEMA};
use aura_contract::limits::{CROSSING_BYTES_MAX, FUEL_PER_MS_DEFAULT};
use criterion::{Criterion, criterion_group, criterion_main};

use common::probe::Probe;

/// Warm-up and measurement per bench of the fast groups: short, so the suite stays within a
/// few minutes on 2 cores; criterion's medians settle well within this on µs-scale work.
const WARM_UP: Duration = Duration::from_millis(1_000);
/// See [`WARM_UP`].
const MEASUREMENT: Duration = Duration::from_millis(3_000);
/// Samples per fast bench (criterion's default is 100).
const SAMPLES: usize = 50;
/// Samples per slow bench (milliseconds per iteration: fuel on/off, ticks); criterion's least.
const SLOW_SAMPLES: usize = 10;
/// Measurement of a slow bench.
const SLOW_MEASUREMENT: Duration = Duration::from_millis(5_000);

/// The criterion configuration of this suite.
fn config() -> Criterion {
    Criterion::default()
        .warm_up_time(WARM_UP)
        .measurement_time(MEASUREMENT)
        .sample_size(SAMPLES)
        .without_plots()
}

/// The full crossing, the native floor, and the crossing's checks one by one.
fn crossing(c: &mut Criterion) {
    let rt = common::current_thread_runtime();
    let host = rt.block_on(common::open_host("crossing"));
    let (small, checked, reply, reply_value) = common::small_call(&host);
    let schemas = host.crossing().schemas();
    let result_schema = checked.spec().result_schema.path;

    let mut group = c.benchmark_group("crossing");
    group.bench_function("full", |b| {
        b.iter(|| rt.block_on(common::dispatch_ok(&host, black_box(&small.text))))
    });
    group.bench_function("native", |b| {
        b.iter(|| common::native_invoke("calendar", black_box(checked.canonical())))
    });
    group.bench_function("check_call", |b| {
        b.iter(|| host.crossing().check_call(black_box(&small.text)))
    });
    group.bench_function("check_reply", |b| {
        b.iter(|| host.crossing().check_reply(&checked, black_box(&reply)))
    });
    group.finish();

    let mut group = c.benchmark_group("parts");
    group.bench_function("parse_canonical_envelope", |b| {
        b.iter(|| parse_canonical(black_box(&small.text), CROSSING_BYTES_MAX))
    });
    group.bench_function("canonicalize_envelope", |b| {
        b.iter(|| to_canonical_string(black_box(&small.envelope)))
    });
    group.bench_function("validate_envelope", |b| {
        b.iter(|| schemas.validate(TOOLCALL_SCHEMA.path, black_box(&small.envelope), ""))
    });
    group.bench_function("validate_args", |b| {
        b.iter(|| schemas.validate(&small.args_schema, black_box(&small.envelope["args"]), ""))
    });
    group.bench_function("validate_reply_and_result", |b| {
        b.iter(|| {
            schemas.validate(REPLY_SCHEMA.path, black_box(&reply_value), "")?;
            schemas.validate(result_schema, black_box(&reply_value["result"]), "")
        })
    });
    // Least privilege (issue 15): the check each proposal of a tick passes (its own agent's
    // tool), and the one each host.call passes (the caller's catalogue entry lists the tool),
    // on the small call (calendar.detect_conflicts), both the allowed and the refused way.
    group.bench_function("check_own_tool", |b| {
        b.iter(|| {
            aura_contract::crossing::check_own_tool(black_box("calendar"), black_box(&checked))
        })
    });
    group.bench_function("check_own_tool_refused", |b| {
        b.iter(|| {
            aura_contract::crossing::check_own_tool(black_box("wellness"), black_box(&checked))
        })
    });
    let slots = serde_json::json!({"call_id": "t_bench00001", "agent": "calendar",
        "tool": "find_free_slots", "ts": "2026-11-23T08:00:00Z", "confirm_required": false,
        "args": {"working_hours": {"start": "09:00", "end": "17:00"}, "utc_offset_minutes": 0,
            "duration_minutes": 30, "from": "2026-11-23T08:00:00Z", "horizon_days": 1}});
    let slots = host
        .crossing()
        .check_call(&slots.to_string())
        .unwrap_or_else(|e| panic!("find_free_slots: {e}"));
    group.bench_function("check_may_call", |b| {
        b.iter(|| aura_contract::crossing::check_may_call(black_box("wellness"), black_box(&slots)))
    });
    group.bench_function("check_may_call_refused", |b| {
        b.iter(|| {
            aura_contract::crossing::check_may_call(black_box("wellness"), black_box(&checked))
        })
    });
    group.finish();

    let mut group = c.benchmark_group("sandbox");
    // Host::measure times each run of the checked call around the sandbox alone (fresh
    // store, instantiation, the call): the real sandbox, not the probe.
    group.bench_function("instantiate_and_call", |b| {
        b.iter_custom(|iters| {
            let runs = rt
                .block_on(host.measure(&checked, iters as usize))
                .unwrap_or_else(|e| panic!("measure: {e}"));
            runs.iter().map(|(_, took)| *took).sum()
        })
    });
    let probe = Probe::new(true, &["calendar"]);
    let fuel = aura_contract::limits::DEADLINE_MS_DEFAULT * FUEL_PER_MS_DEFAULT;
    let deadline_ms = aura_contract::limits::DEADLINE_MS_DEFAULT;
    group.bench_function("probe_instantiate", |b| {
        b.iter_custom(|iters| {
            let mut took = Duration::ZERO;
            for _ in 0..iters {
                let started = Instant::now();
                let mut store = probe.store("calendar", fuel, deadline_ms);
                let instance = rt.block_on(Probe::instantiate(&mut store));
                took += started.elapsed();
                drop(black_box((instance, store)));
            }
            took
        })
    });
    group.bench_function("probe_call", |b| {
        b.iter_custom(|iters| {
            let mut took = Duration::ZERO;
            for _ in 0..iters {
                let mut store = probe.store("calendar", fuel, deadline_ms);
                let instance = rt.block_on(Probe::instantiate(&mut store));
                let started = Instant::now();
                let output = rt.block_on(Probe::invoke(&mut store, &instance, checked.canonical()));
                took += started.elapsed();
                black_box(output);
            }
            took
        })
    });
    group.finish();
}

/// An agent-to-agent hop: wellness.suggest_break asking calendar.find_free_slots through the
/// host import `call`, against the same call at a stress that asks nothing.
fn hop(c: &mut Criterion) {
    let rt = common::current_thread_runtime();
    let host = rt.block_on(common::open_host("hop"));
    let hop = common::instance("hop_call");
    let no_hop = common::instance("no_hop_call");
    let mut group = c.benchmark_group("hop");
    group.bench_function("suggest_break_with_hop", |b| {
        b.iter(|| rt.block_on(common::dispatch_ok(&host, black_box(&hop.text))))
    });
    group.bench_function("suggest_break_without_hop", |b| {
        b.iter(|| rt.block_on(common::dispatch_ok(&host, black_box(&no_hop.text))))
    });
    group.finish();
}

/// Fuel metering on and off, on the calibration workload (detect_conflicts over 400 events),
/// through the probe: the same store set-up but for fuel.
fn fuel(c: &mut Criterion) {
    let rt = common::current_thread_runtime();
    let call = aura_host::calibrate::workload_call();
    let text = serde_json::to_string(&call).unwrap_or_default();
    let canonical = parse_canonical(&text, CROSSING_BYTES_MAX)
        .unwrap_or_else(|e| panic!("workload: {e}"))
        .text;
    let deadline_ms = aura_contract::limits::DEADLINE_MS_MAX;
    let fuel = deadline_ms * FUEL_PER_MS_DEFAULT;
    let mut group = c.benchmark_group("fuel");
    group
        .sample_size(SLOW_SAMPLES)
        .measurement_time(SLOW_MEASUREMENT);
    for (name, metered) in [("on", true), ("off", false)] {
        let probe = Probe::new(metered, &["calendar"]);
        group.bench_function(name, |b| {
            b.iter(|| rt.block_on(probe.run("calendar", black_box(&canonical), fuel, deadline_ms)))
        });
    }
    group.bench_function("native", |b| {
        b.iter(|| common::native_invoke("calendar", black_box(&canonical)))
    });
    group.finish();
}

/// One tick of all four agents on the day's mid-day context: through the host (concurrent,
/// proposals checked, as the orchestrator runs it) and natively (one after the other).
fn tick(c: &mut Criterion) {
    let rt = common::current_thread_runtime();
    let host = rt.block_on(common::open_host("tick"));
    let agents = host.agents();
    let scenario = common::day_scenario(&host);
    let contexts = common::day_contexts(&scenario);
    let context = &contexts[common::DAY_TICK_MID.min(contexts.len() - 1)];
    let context_text = to_canonical_string(context).unwrap_or_default();
    let mut group = c.benchmark_group("tick");
    group
        .sample_size(SLOW_SAMPLES)
        .measurement_time(SLOW_MEASUREMENT);
    group.bench_function("all_four", |b| {
        b.iter(|| rt.block_on(common::tick_all(&host, &agents, black_box(context))))
    });
    group.bench_function("all_four_native", |b| {
        b.iter(|| common::native_tick_all(black_box(&context_text)))
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = config();
    targets = crossing, hop, fuel, tick
}
criterion_main!(benches);
