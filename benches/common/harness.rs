//! The per-iteration harness of the `percentiles` bench: series of wall times and their
//! percentiles (nearest rank, the orchestrator's rule), the iteration scale
//! (`AURA_BENCH_SCALE`), which sections run (`AURA_BENCH_ONLY`), where figures go
//! (`AURA_BENCH_DIR`) and how they are recorded. It owns no measurement.

use std::hint::black_box;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

/// Untimed iterations before each series, as a share of its timed ones (caches, the pool).
pub const WARM_UP_PERCENT: usize = 5;

/// One series of per-iteration wall times.
pub struct Series(pub Vec<u64>);

impl Series {
    /// p50, p90, p99, mean, min and max in µs, and the count.
    pub fn summary(mut self) -> Value {
        self.0.sort_unstable();
        let us = |ns: u64| (ns as f64 / 1_000.0 * 100.0).round() / 100.0;
        let n = self.0.len();
        let mean = self.0.iter().sum::<u64>() as f64 / n.max(1) as f64;
        json!({
            "n": n,
            "p50_us": us(super::nearest_rank(&self.0, 50)),
            "p90_us": us(super::nearest_rank(&self.0, 90)),
            "p95_us": us(super::nearest_rank(&self.0, 95)),
            "p99_us": us(super::nearest_rank(&self.0, 99)),
            "mean_us": us(mean as u64),
            "min_us": us(self.0.first().copied().unwrap_or(0)),
            "max_us": us(self.0.last().copied().unwrap_or(0)),
        })
    }
}

/// A duration in whole nanoseconds.
pub fn nanos(took: Duration) -> u64 {
    u64::try_from(took.as_nanos()).unwrap_or(u64::MAX)
}

/// The scale factor of every iteration count (`AURA_BENCH_SCALE`, default 1).
pub fn scale() -> f64 {
    std::env::var("AURA_BENCH_SCALE")
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .filter(|s| *s > 0.0)
        .unwrap_or(1.0)
}

/// `iters` times the scale factor, at least 1.
pub fn scaled(iters: usize) -> usize {
    ((iters as f64 * scale()) as usize).max(1)
}

/// Times `f` once per iteration, after an untimed warm-up.
pub fn time<R>(iters: usize, mut f: impl FnMut() -> R) -> Series {
    let iters = scaled(iters);
    for _ in 0..(iters * WARM_UP_PERCENT / 100).max(1) {
        black_box(f());
    }
    let mut ns = Vec::with_capacity(iters);
    for _ in 0..iters {
        let started = Instant::now();
        black_box(f());
        ns.push(nanos(started.elapsed()));
    }
    Series(ns)
}

/// Whether section `name` runs: all do unless `AURA_BENCH_ONLY` lists some (comma-separated:
/// crossing, sandbox, hop, fuel, tick, throughput), e.g. to profile one under perf.
pub fn wanted(name: &str) -> bool {
    std::env::var("AURA_BENCH_ONLY").map_or(true, |only| only.split(',').any(|s| s.trim() == name))
}

/// Where the results go.
pub fn out_dir() -> PathBuf {
    std::env::var_os("AURA_BENCH_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/target/bench")))
}

/// Figures by name, printed as they come.
#[derive(Default)]
pub struct Figures(pub Map<String, Value>);

impl Figures {
    /// Records a figure and prints it.
    pub fn record(&mut self, name: &str, value: Value) {
        println!("{name:<34} {value}");
        self.0.insert(name.to_owned(), value);
    }
}
