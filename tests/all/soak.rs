//! The soak: 10,000 calls, concurrent, mixing the hostile liar (posing as calendar) with the
//! healthy finance agent, through one host. Ignored by default; `just soak` runs it (and CI).
//! Zero host crashes, every healthy call answered with the same correct bytes, every hostile
//! call refused with its exact kind and quarantined, and RSS at the end within a small margin
//! of RSS after warm-up (both printed).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};

use crate::support::{
    envelope, guest_path, plugins_dir, plugins_dir_of, quarantine_lines, temp_dir,
};

/// Calls in all.
pub(crate) const SOAK_CALLS: usize = 10_000;
/// Calls before the warm-up RSS reading: every pool slot and code path used at least once.
const WARMUP_CALLS: usize = 500;
/// Tasks issuing calls at once (more than the 2 cores, fewer than the pool's slots).
pub(crate) const SOAK_TASKS: usize = 8;
/// RSS may grow this much past warm-up: allocator caches and the quarantine file's page
/// cache, not a leak (a leak of even 1 KiB per call would be ~10 MiB).
const RSS_GROWTH_BYTES_MAX: u64 = 8 * 1024 * 1024;

/// The liar's misbehaviours (by call_id stem) and the error kind each must get.
const HOSTILE: [(&str, &str); 7] = [
    ("badjson", "malformed_json"),
    ("dupkey", "duplicate_key"),
    ("bignum", "number_out_of_range"),
    ("noresult", "schema_error"),
    ("badresult", "schema_error"),
    ("panic", "agent_trapped"),
    ("spin", "deadline_exceeded"),
];

fn rss_bytes() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    let kib: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    kib * 1024
}

pub(crate) fn soak_plugins() -> std::path::PathBuf {
    plugins_dir_of(
        "soak",
        &[
            ("calendar", guest_path("liar")),
            ("finance", plugins_dir().join("finance.wasm")),
        ],
    )
}

/// Call `i`: every third is hostile, cycling through the misbehaviours; the rest healthy.
pub(crate) fn call_for(i: usize) -> (String, Option<&'static str>) {
    if i.is_multiple_of(3) {
        let (stem, kind) = HOSTILE[(i / 3) % HOSTILE.len()];
        let call_id = format!(
            "t_{stem}{:0width$}",
            i % 10_usize.pow((10 - stem.len()) as u32),
            width = 10 - stem.len()
        );
        let mut call = envelope(
            &call_id,
            "calendar",
            "detect_conflicts",
            json!({"events": []}),
        );
        call["deadline_ms"] = json!(50);
        (call.to_string(), Some(kind))
    } else {
        let call = envelope(
            &format!("t_soak{i:06}"),
            "finance",
            "categorize_transactions",
            healthy_args(),
        );
        (call.to_string(), None)
    }
}

fn healthy_args() -> Value {
    json!({"transactions": [
        {"id": "t1", "merchant": "Corner Grocery", "mcc": "5411", "amount_minor": 2350, "currency": "EUR", "time": "2026-11-20T10:00:00Z"},
        {"id": "t2", "merchant": "City Metro", "mcc": "4111", "amount_minor": 290, "currency": "EUR", "time": "2026-11-20T08:10:00Z"}
    ]})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "soak: run with `just soak`"]
async fn ten_thousand_mixed_calls_leave_the_host_whole() {
    let plugins = soak_plugins();
    let data = temp_dir("soak-data");
    let host = Arc::new(
        aura_host::Host::open(&crate::support::config(&plugins, &data))
            .await
            .unwrap(),
    );
    assert!(host.load_failures().is_empty());

    // The healthy answer, once: every later healthy call must match it byte for byte.
    let (probe, _) = call_for(1);
    let reference = host.dispatch(&probe).await.unwrap();
    assert!(reference.ok, "{reference:?}");
    let reference_result = reference.result.clone().unwrap();

    let next = Arc::new(AtomicUsize::new(0));
    let hostile_count = Arc::new(AtomicUsize::new(0));
    let run = |limit: usize| {
        let mut tasks = tokio::task::JoinSet::new();
        for _ in 0..SOAK_TASKS {
            let (host, next, hostile_count, reference_result) = (
                host.clone(),
                next.clone(),
                hostile_count.clone(),
                reference_result.clone(),
            );
            tasks.spawn(async move {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= limit {
                        next.fetch_sub(1, Ordering::Relaxed);
                        return;
                    }
                    let (text, hostile) = call_for(i);
                    match (host.dispatch(&text).await, hostile) {
                        (Ok(result), None) => {
                            assert!(result.ok, "call {i}");
                            assert_eq!(result.result.unwrap(), reference_result, "call {i}");
                        }
                        (Err(refused), Some(kind)) => {
                            assert_eq!(refused.error.kind(), kind, "call {i}: {}", refused.error);
                            assert!(refused.journal_error.is_none());
                            hostile_count.fetch_add(1, Ordering::Relaxed);
                        }
                        (outcome, expected) => {
                            panic!("call {i}: {outcome:?}, expected {expected:?}")
                        }
                    }
                }
            });
        }
        tasks
    };
    run(WARMUP_CALLS).join_all().await;
    let rss_warm = rss_bytes();
    run(SOAK_CALLS).join_all().await;
    let rss_end = rss_bytes();

    let hostile = hostile_count.load(Ordering::Relaxed);
    assert_eq!(
        hostile,
        (0..SOAK_CALLS).filter(|i| i.is_multiple_of(3)).count()
    );
    let lines = quarantine_lines(&data);
    assert_eq!(lines.len(), hostile, "one quarantine line per hostile call");
    println!(
        "soak: {SOAK_CALLS} calls ({hostile} hostile), RSS after warm-up {:.1} MiB, at the end {:.1} MiB",
        rss_warm as f64 / 1048576.0,
        rss_end as f64 / 1048576.0
    );
    assert!(
        rss_end <= rss_warm + RSS_GROWTH_BYTES_MAX,
        "RSS grew from {rss_warm} to {rss_end} bytes"
    );
}
