//! The percentiles harness's day sections: one tick of the four agents over the day's
//! contexts (through the host, natively, on both cores), and crossings per second.

use super::*;

/// Ticks: the day's contexts through the host as the orchestrator runs them (the four agents
/// joined on one task), natively, spawned on both cores, and the orchestrator's own figure.
pub(super) fn tick(b: &Bench, figures: &mut Figures) {
    let (rt, host) = (&b.rt, &b.host);
    let agents = host.agents();
    let scenario = common::day_scenario(host);
    let contexts = common::day_contexts(&scenario);
    let context_texts: Vec<String> = contexts
        .iter()
        .map(|c| to_canonical_string(c).unwrap_or_default())
        .collect();
    let mut through_host = Vec::new();
    let mut native = Vec::new();
    for _ in 0..scaled(DAY_PASSES) {
        for (context, text) in contexts.iter().zip(&context_texts) {
            let started = Instant::now();
            black_box(rt.block_on(common::tick_all(host, &agents, context)));
            through_host.push(nanos(started.elapsed()));
            let started = Instant::now();
            black_box(common::native_tick_all(text));
            native.push(nanos(started.elapsed()));
        }
    }
    figures.record("tick_day_all_four", Series(through_host).summary());
    // What the host does to a context before any agent sees it: its canonical text, once
    // per tick (Host::tick_all).
    let mut canonicalize = Vec::new();
    for context in &contexts {
        let started = Instant::now();
        black_box(to_canonical_string(context).unwrap_or_default());
        canonicalize.push(nanos(started.elapsed()));
    }
    figures.record("tick_context_canonicalize", Series(canonicalize).summary());
    let mut bytes: Vec<u64> = context_texts.iter().map(|t| t.len() as u64).collect();
    bytes.sort_unstable();
    figures.record(
        "tick_context_bytes",
        json!({ "median": common::nearest_rank(&bytes, 50), "max": bytes.last().copied().unwrap_or(0) }),
    );
    figures.record("tick_day_all_four_native", Series(native).summary());
    for agent in &agents {
        let mut ns = Vec::new();
        for text in &context_texts {
            let started = Instant::now();
            black_box(common::native_tick(agent, text));
            ns.push(nanos(started.elapsed()));
        }
        figures.record(&format!("tick_day_native_{agent}"), Series(ns).summary());
    }

    let mt = common::multi_thread_runtime(CORES);
    let shared = Arc::new(mt.block_on(common::open_host("percentiles-mt")));
    let contexts = Arc::new(contexts);
    let mut spawned = Vec::new();
    for _ in 0..scaled(DAY_PASSES) {
        for index in 0..contexts.len() {
            let started = Instant::now();
            mt.block_on(async {
                let handles: Vec<_> = agents
                    .iter()
                    .map(|&agent| {
                        let (host, contexts) = (shared.clone(), contexts.clone());
                        tokio::spawn(
                            async move { host.tick(agent, &contexts[index]).await.is_ok() },
                        )
                    })
                    .collect();
                for handle in handles {
                    assert!(handle.await.unwrap_or(false), "a tick failed");
                }
            });
            spawned.push(nanos(started.elapsed()));
        }
    }
    figures.record(
        "tick_day_all_four_spawned_2_cores",
        Series(spawned).summary(),
    );

    // Decisions and traces included; the figure covers the ticks only. On a runtime like
    // `aura run`'s.
    let summary = mt
        .block_on(aura_day::orchestrator::run(
            &shared,
            &scenario,
            0,
            aura_day::orchestrator::Start::Fresh,
            |_| {},
        ))
        .unwrap_or_else(|e| panic!("the day did not run: {e}"));
    figures.record(
        "tick_orchestrator_day",
        json!({
            "ticks": summary.ticks,
            "median_us": summary.tick_us_median,
            "p95_us": summary.tick_us_p95,
            "tick_fuel": summary.tick_fuel,
        }),
    );
}

/// Crossings per second: THROUGHPUT_TASKS tasks issuing calls on 1 and on 2 workers.
pub(super) fn throughput(b: &Bench, figures: &mut Figures) {
    for workers in [1, CORES] {
        let rt = common::multi_thread_runtime(workers);
        let host = Arc::new(rt.block_on(common::open_host(&format!("throughput-{workers}"))));
        let text = Arc::new(b.small.text.clone());
        let (calls, took) = calls_concurrently(&rt, move || {
            let (host, text) = (host.clone(), text.clone());
            async move {
                common::dispatch_ok(&host, &text).await;
            }
        });
        figures.record(
            &format!("throughput_{workers}_workers"),
            json!({
                "workers": workers,
                "tasks": THROUGHPUT_TASKS,
                "calls": calls,
                "seconds": took.as_secs_f64(),
                "per_second": (calls as f64 / took.as_secs_f64()).round(),
            }),
        );
    }
}
