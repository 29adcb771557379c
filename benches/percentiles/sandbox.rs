//! The percentiles harness's sandbox sections: the sandbox's whole call and the probe's stages
//! (store, instantiate, call), the whole crossing explained by its parts (in sequence and alone,
//! page faults, the bytes a call's reset copies), and the pool's reset settings side by side.

use super::*;

/// The sandbox: the real one (Host::measure times each run around the sandbox alone), then
/// the probe's split into instantiation and the call.
pub(super) fn sandbox(b: &Bench, figures: &mut Figures) {
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
pub(super) fn whole(b: &Bench, figures: &mut Figures) {
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
    // call alone, then after the day's ticks ran: in the tick twin's own slots (as the host
    // runs them), and in the calls' slots (as before the twin), two probes side by side.
    let fuel = DEADLINE_MS_DEFAULT * FUEL_PER_MS_DEFAULT;
    let scenario = common::day_scenario(host);
    let contexts: Vec<String> = common::day_contexts(&scenario)
        .iter()
        .map(|c| to_canonical_string(c).unwrap_or_default())
        .collect();
    let probes = [("", true), ("_ticks_in_call_slots", false)].map(|(suffix, own_slots)| {
        let probe = Probe::new(true, &["calendar"]);
        for _ in 0..10 {
            black_box(small_probe_call(b, &probe));
        }
        if own_slots {
            figures.record(
                "whole_reset_bytes_small_call",
                json!(probe.resident_bytes()),
            );
        }
        let tick_fuel = TICK_DEADLINE_MS * FUEL_PER_MS_DEFAULT;
        for text in &contexts {
            black_box(rt.block_on(probe.run_tick(
                "calendar",
                text,
                tick_fuel,
                TICK_DEADLINE_MS,
                own_slots,
            )));
        }
        black_box(rt.block_on(probe.run(
            "calendar",
            b.checked.canonical(),
            fuel,
            DEADLINE_MS_DEFAULT,
        )));
        // The pool's free slots together: with the twin, the ticks' pages sit in a slot calls
        // never get, and the probe calls' timings below show what a call's slot resets.
        figures.record(
            &format!("whole_reset_bytes_after_the_day{suffix}"),
            json!(probe.resident_bytes()),
        );
        (suffix, probe)
    });
    let mut series = [Vec::new(), Vec::new()];
    for _ in 0..scaled(SANDBOX_ITERS).div_ceil(POOL_BLOCK_CALLS) {
        for ((_, probe), ns) in probes.iter().zip(series.iter_mut()) {
            ns.extend((0..POOL_BLOCK_CALLS).map(|_| small_probe_call(b, probe)));
        }
    }
    for ((suffix, _), ns) in probes.iter().zip(series) {
        figures.record(
            &format!("whole_probe_call_after_the_day{suffix}"),
            Series(ns).summary(),
        );
    }
}

/// The small call's whole sandboxed call by this build's calendar and by one built from
/// another revision (`AURA_BENCH_GUEST_BEFORE`: its calendar.wasm), taking turns in blocks of
/// POOL_BLOCK_CALLS, with each one's fuel (what the guest's work costs, free of the machine's
/// noise). Only on request: `AURA_BENCH_ONLY=guest_ab`.
pub fn guest_ab(b: &Bench, figures: &mut Figures) {
    let Some(before) = std::env::var_os("AURA_BENCH_GUEST_BEFORE") else {
        println!("guest_ab: set AURA_BENCH_GUEST_BEFORE to another build's calendar.wasm");
        return;
    };
    let tuning = EngineTuning::default();
    let probes = [
        ("guest_after", Probe::tuned(tuning, &["calendar"])),
        (
            "guest_before",
            Probe::from_files(tuning, &[("calendar", before.into())]),
        ),
    ];
    let fuel = DEADLINE_MS_DEFAULT * FUEL_PER_MS_DEFAULT;
    for (name, probe) in &probes {
        let call = probe.run("calendar", b.checked.canonical(), fuel, DEADLINE_MS_DEFAULT);
        let (output, fuel_used) = b.rt.block_on(call);
        assert_eq!(output, b.reply, "{name}: another reply");
        figures.record(&format!("{name}_fuel"), json!(fuel_used));
    }
    let mut series = [Vec::new(), Vec::new()];
    for _ in 0..scaled(SANDBOX_ITERS).div_ceil(POOL_BLOCK_CALLS) {
        for ((_, probe), ns) in probes.iter().zip(series.iter_mut()) {
            ns.extend((0..POOL_BLOCK_CALLS).map(|_| small_probe_call(b, probe)));
        }
    }
    for ((name, _), ns) in probes.iter().zip(series) {
        figures.record(name, Series(ns).summary());
    }
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
pub(super) fn pool(b: &Bench, figures: &mut Figures) {
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
                        true,
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
