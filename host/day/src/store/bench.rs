//! The store's benchmark (`just bench-store`): a signal's durable append and a rollover, on
//! each home, through the trait, beside the same writes made straight through the host's
//! journal as the session made them before the trait (interleaved in one run, so the ratio is
//! measured side by side). It is a figure for BENCHMARKS.md, not a test: it asserts nothing
//! about time.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use aura_contract::canonical::to_canonical_string;
use aura_host::journal::Journal;

use super::files::{DAYS_DIR, LIFE_PATH, RECORD_PATH};
use super::{FileStore, LIFE_FORMAT, LifeState, LifeStore, MemoryHome};
use crate::checkpoint::LIVE_SETUP_PATH;
use crate::logs::RunLogs;

const APPENDS: usize = 2_000;
const ROLLOVERS: usize = 200;

fn reading(n: usize) -> Value {
    json!({
        "at": "2026-11-09T08:00:00+01:00",
        "data": {"metric": "heart_rate", "value": 60 + n % 40},
        "id": format!("watch-{n}"),
        "kind": "reading",
        "seq": n,
    })
}

fn setup() -> Value {
    json!({"name": "bench", "start": "2026-11-09T00:00:00+01:00", "initial": {"events": []}})
}

fn day_name(n: usize) -> String {
    // One date a day from 2026-01-01 on, past the 200 the bench takes.
    let date = time::Date::from_calendar_date(2026, time::Month::January, 1).expect("a date")
        + time::Duration::days(n as i64);
    date.to_string()
}

fn state(open: &str) -> LifeState {
    LifeState {
        format: LIFE_FORMAT.to_owned(),
        setup_sha256: "ab".repeat(32),
        open: open.to_owned(),
        previous: None,
        base: 0,
        decided_base: 0,
        time_zone: None,
        positions: Default::default(),
    }
}

/// Median and p99 of `samples`, in µs.
fn figures(samples: &mut [Duration]) -> (f64, f64) {
    samples.sort();
    let at = |q: f64| {
        let index = ((samples.len() as f64 - 1.0) * q).round() as usize;
        samples[index].as_secs_f64() * 1e6
    };
    (at(0.5), at(0.99))
}

/// The rollover as the life made it before the trait: the record, the next day's setup and
/// first line, the days dir synced, `life.json` replaced.
fn rollover_straight(root: &Journal, closing: &Journal, next: &str) {
    let record = to_canonical_string(&json!({"name": "bench", "signals": []})).unwrap();
    closing
        .replace_file(RECORD_PATH, record.as_bytes())
        .unwrap();
    let dir = root.path().join(DAYS_DIR).join(next);
    let day = root.beside(&dir).unwrap();
    let text = to_canonical_string(&setup()).unwrap();
    day.replace_file(LIVE_SETUP_PATH, text.as_bytes()).unwrap();
    day.open_live().unwrap();
    day.signal(&reading(0)).unwrap();
    std::fs::File::open(root.path().join(DAYS_DIR))
        .and_then(|d| d.sync_all())
        .unwrap();
    let life = to_canonical_string(&serde_json::to_value(state(next)).unwrap()).unwrap();
    root.replace_file(LIFE_PATH, life.as_bytes()).unwrap();
}

async fn rollover_store(store: &dyn LifeStore, closing: &str, next: &str) {
    store
        .put_record(closing, &json!({"name": "bench", "signals": []}))
        .await
        .unwrap();
    store
        .begin_day(next, &setup(), &[reading(0)])
        .await
        .unwrap();
    store.commit(&state(next)).await.unwrap();
}

#[tokio::test]
#[ignore = "a benchmark: just bench-store"]
async fn bench_store_appends_and_rollovers() {
    let root = std::env::temp_dir().join(format!("aura-bench-store-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    // Before: the journal straight, as the session wrote a day's signals.
    let straight_root = Journal::open(&root.join("straight")).unwrap();
    let first = day_name(0);
    let straight_day = straight_root
        .beside(&root.join("straight").join(DAYS_DIR).join(&first))
        .unwrap();
    straight_day.open_live().unwrap();
    // After: the files home, through the trait.
    let files = Arc::new(FileStore::open(&root.join("files"), None).unwrap());
    let store: Arc<dyn LifeStore> = files.clone();
    store.begin_day(&first, &setup(), &[]).await.unwrap();
    store.commit(&state(&first)).await.unwrap();
    // The memory home.
    let memory: Box<dyn LifeStore> = Box::new(MemoryHome::new().open().unwrap());
    memory.begin_day(&first, &setup(), &[]).await.unwrap();
    memory.commit(&state(&first)).await.unwrap();

    let (mut straight, mut through, mut in_memory) = (Vec::new(), Vec::new(), Vec::new());
    for n in 0..APPENDS {
        let line = reading(n);
        // Which goes first alternates, so neither pays for the other's sync.
        for first_straight in [n % 2 == 0, n % 2 == 1] {
            match first_straight {
                true => {
                    let started = Instant::now();
                    straight_day.signals(std::slice::from_ref(&line)).unwrap();
                    straight.push(started.elapsed());
                }
                false => {
                    let started = Instant::now();
                    store
                        .append(&first, std::slice::from_ref(&line), &[])
                        .await
                        .unwrap();
                    through.push(started.elapsed());
                }
            }
        }
        let started = Instant::now();
        memory
            .append(&first, std::slice::from_ref(&line), &[])
            .await
            .unwrap();
        in_memory.push(started.elapsed());
    }
    let report = |what: &str, samples: &mut Vec<Duration>| {
        let (median, p99) = figures(samples);
        println!("{what:<48} median {median:>9.1} µs   p99 {p99:>9.1} µs");
        median
    };
    println!("A signal's durable append ({APPENDS} each, interleaved):");
    let a = report("  the journal straight (before the trait)", &mut straight);
    let b = report("  the files home, through LifeStore", &mut through);
    report("  the memory home, through LifeStore", &mut in_memory);
    println!("  files home / straight: {:.3}", b / a);

    let (mut straight, mut through, mut in_memory) = (Vec::new(), Vec::new(), Vec::new());
    let mut closing_straight = straight_day;
    for n in 1..=ROLLOVERS {
        let (closing, next) = (day_name(n - 1), day_name(n));
        // The closing day's journal is open, as the session's is (the straight path's too).
        files.day_journal(&closing).unwrap();
        for first_straight in [n % 2 == 0, n % 2 == 1] {
            match first_straight {
                true => {
                    let started = Instant::now();
                    rollover_straight(&straight_root, &closing_straight, &next);
                    straight.push(started.elapsed());
                }
                false => {
                    let started = Instant::now();
                    rollover_store(&*store, &closing, &next).await;
                    through.push(started.elapsed());
                }
            }
        }
        closing_straight = straight_root
            .beside(&root.join("straight").join(DAYS_DIR).join(&next))
            .unwrap();
        let started = Instant::now();
        rollover_store(&*memory, &closing, &next).await;
        in_memory.push(started.elapsed());
    }
    println!(
        "A rollover: the record, the next day begun, the commit ({ROLLOVERS} each, interleaved):"
    );
    let a = report("  the journal straight (before the trait)", &mut straight);
    let b = report("  the files home, through LifeStore", &mut through);
    report("  the memory home, through LifeStore", &mut in_memory);
    println!("  files home / straight: {:.3}", b / a);
    drop(files);
    let _ = std::fs::remove_dir_all(&root);
}
