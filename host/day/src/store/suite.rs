//! The suite every home of a life passes, as storage libraries ship theirs: a home's test
//! calls [`conformance`] with a way to make an empty home, in one line.
//!
//! It owns the operations' checks (one opener, days begun and committed, appends stored once
//! by id, read positions with their signals and carried by a commit, the logs, the record, the
//! checkpoint, deletion, setting a life aside) and the crash checks: a life's script (two
//! rollovers, appends with positions, a retention delete) is run once to list every step of
//! every write it makes, then once per step with that step killed (the process stops there:
//! nothing after it runs), failed (the step's error, as the deterministic simulation injects
//! ENOSPC and EIO) and, at a write, cut short; each time the life is opened again and must
//! hold every acknowledged write once, the write in flight whole or not at all, no day begun
//! and not committed, and go on. It must not know which home it checks.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{Value, json};

use aura_contract::canonical::to_canonical_string;
use aura_host::journal::{StorageFault, StorageFaults, StoragePoint, StorageStep};

mod crashes;
mod lapse;
pub use lapse::a_lapsed_opener_writes_nothing;

use super::{Appended, DayLog, Home, LIFE_FORMAT, LifeState, LifeStore, ReadPosition, StoreError};

/// Runs the whole suite on homes `fresh` makes (each call: a new, empty home). Panics with
/// what failed.
pub async fn conformance<H: Home + 'static>(fresh: impl Fn() -> H) {
    an_empty_home_holds_no_life(&fresh()).await;
    a_life_has_one_opener(&fresh()).await;
    a_day_begun_is_open_once_committed(&fresh()).await;
    a_line_is_stored_once_by_its_id(&fresh()).await;
    read_positions_go_with_their_signals_and_a_commit_carries_them(&fresh()).await;
    a_days_logs_record_and_checkpoint_read_back(&fresh()).await;
    days_are_in_the_lifes_order_and_deleted_whole(&fresh()).await;
    a_life_set_aside_leaves_room_for_a_new_one(&fresh()).await;
    a_failed_append_stops_the_days_journal_until_reopened(&fresh()).await;
    crashes::every_step_killed_failed_or_cut_short_leaves_a_whole_life(&fresh).await;
}

/// How long a home may take to let a dropped opener's hold go (one released over a network
/// is released by a task of its own): the suite opens again until then.
const LET_GO_MS: u64 = 10_000;

/// Opens the life (`faults` on its writes), waiting up to [`LET_GO_MS`] for a hold just let
/// go.
async fn open_with(
    home: &impl Home,
    faults: Option<Arc<dyn StorageFaults>>,
) -> Result<Box<dyn LifeStore>, StoreError> {
    let started = std::time::Instant::now();
    loop {
        match home.open(faults.clone()).await {
            Err(StoreError::Busy) if started.elapsed().as_millis() < u128::from(LET_GO_MS) => {
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            }
            opened => return opened,
        }
    }
}

async fn open(home: &impl Home) -> Box<dyn LifeStore> {
    open_with(home, None)
        .await
        .unwrap_or_else(|e| panic!("the home did not open: {e}"))
}

fn state(open: &str, previous: Option<&str>, base: usize) -> LifeState {
    LifeState {
        format: LIFE_FORMAT.to_owned(),
        setup_sha256: "ab".repeat(32),
        open: open.to_owned(),
        previous: previous.map(str::to_owned),
        base,
        decided_base: base as u64,
        time_zone: Some("Europe/Berlin".to_owned()),
        positions: BTreeMap::new(),
    }
}

fn setup(day: &str) -> Value {
    json!({"name": "suite", "start": format!("{}T00:00:00+01:00", &day[..10]), "initial": {}})
}

fn signal(day: &str, minute: u32, id: Option<&str>, seq: usize) -> Value {
    let mut line = json!({
        "at": format!("{}T08:{minute:02}:00+01:00", &day[..10]),
        "kind": "reading",
        "data": {"metric": "heart_rate", "value": 60 + minute},
        "seq": seq,
    });
    if let Some(id) = id {
        line["id"] = Value::String(id.to_owned());
    }
    line
}

fn text(value: &Value) -> String {
    to_canonical_string(value).expect("canonical")
}

fn read(source: &str, position: &str) -> ReadPosition {
    ReadPosition {
        source: source.to_owned(),
        position: position.to_owned(),
    }
}

async fn begun(store: &dyn LifeStore, day: &str, lines: &[Value], previous: Option<&str>) {
    store
        .begin_day(day, &setup(day), lines)
        .await
        .expect("begin");
    store
        .commit(&state(day, previous, 0))
        .await
        .expect("commit");
}

const D1: &str = "2026-11-09";
const D2: &str = "2026-11-10";
const D3: &str = "2026-11-10.2";

async fn an_empty_home_holds_no_life(home: &impl Home) {
    let store = open(home).await;
    assert_eq!(
        store.life().await.unwrap(),
        None,
        "an empty home holds no life"
    );
    assert!(store.days().await.unwrap().is_empty());
    assert!(store.positions().await.unwrap().is_empty());
    assert!(matches!(store.lines(D1).await, Err(StoreError::NoDay(_))));
    assert!(matches!(
        store.append(D1, &[signal(D1, 1, None, 0)], &[]).await,
        Err(StoreError::NoDay(_))
    ));
    assert!(matches!(
        store.setup("not a day").await,
        Err(StoreError::NoDay(_))
    ));
}

async fn a_life_has_one_opener(home: &impl Home) {
    let store = open(home).await;
    begun(&*store, D1, &[], None).await;
    assert!(
        matches!(home.open(None).await, Err(StoreError::Busy)),
        "a second opener is refused while the life is held"
    );
    // The refused opener changed nothing.
    assert_eq!(store.life().await.unwrap().unwrap().open, D1);
    drop(store);
    let again = open(home).await;
    assert_eq!(
        again.life().await.unwrap().unwrap().open,
        D1,
        "the life is held again once let go"
    );
}

async fn a_day_begun_is_open_once_committed(home: &impl Home) {
    let store = open(home).await;
    let zone = json!({"at": "2026-11-09T00:00:00+01:00", "id": "time_zone:x", "kind": "utc_offset", "data": {"minutes": 60}});
    store
        .begin_day(D1, &setup(D1), std::slice::from_ref(&zone))
        .await
        .unwrap();
    assert_eq!(
        store.life().await.unwrap(),
        None,
        "a day begun is not open before its commit"
    );
    assert!(
        matches!(
            store.commit(&state(D2, None, 0)).await,
            Err(StoreError::NoDay(_))
        ),
        "a commit names a day the store holds"
    );
    store.commit(&state(D1, None, 0)).await.unwrap();
    assert_eq!(store.life().await.unwrap(), Some(state(D1, None, 0)));
    assert_eq!(store.days().await.unwrap(), [D1]);
    assert_eq!(store.setup(D1).await.unwrap(), setup(D1));
    assert_eq!(store.lines(D1).await.unwrap(), [text(&zone)]);
    drop(store);
    let store = open(home).await;
    assert_eq!(
        store.life().await.unwrap(),
        Some(state(D1, None, 0)),
        "a commit is durable"
    );
    assert_eq!(store.lines(D1).await.unwrap(), [text(&zone)]);
}

async fn a_line_is_stored_once_by_its_id(home: &impl Home) {
    let store = open(home).await;
    begun(&*store, D1, &[], None).await;
    let (a, b, c) = (
        signal(D1, 1, Some("a"), 0),
        signal(D1, 2, None, 1),
        signal(D1, 3, Some("c"), 2),
    );
    assert_eq!(
        store
            .append(D1, &[a.clone(), b.clone()], &[])
            .await
            .unwrap(),
        [Appended::Stored, Appended::Stored]
    );
    // The same id again (other content: a resent signal) and in one batch twice.
    let a_again = signal(D1, 9, Some("a"), 7);
    assert_eq!(
        store
            .append(D1, &[a_again.clone(), c.clone(), c.clone()], &[])
            .await
            .unwrap(),
        [
            Appended::Already(text(&a)),
            Appended::Stored,
            Appended::Already(text(&c))
        ]
    );
    // A line with no id is stored each time.
    assert_eq!(
        store
            .append(D1, std::slice::from_ref(&b), &[])
            .await
            .unwrap(),
        [Appended::Stored]
    );
    let expected = [text(&a), text(&b), text(&c), text(&b)];
    assert_eq!(store.lines(D1).await.unwrap(), expected);
    drop(store);
    let store = open(home).await;
    assert_eq!(
        store.lines(D1).await.unwrap(),
        expected,
        "appends are durable"
    );
    assert_eq!(
        store.append(D1, &[a_again], &[]).await.unwrap(),
        [Appended::Already(text(&a))],
        "ids are known after a reopen"
    );
    assert_eq!(store.lines(D1).await.unwrap(), expected);
}

async fn read_positions_go_with_their_signals_and_a_commit_carries_them(home: &impl Home) {
    let store = open(home).await;
    begun(&*store, D1, &[], None).await;
    let s1 = signal(D1, 1, Some("m1"), 0);
    store
        .append(D1, std::slice::from_ref(&s1), &[read("mail", "7:41")])
        .await
        .unwrap();
    // A source that read nothing new moves its position alone.
    store
        .append(
            D1,
            &[],
            &[read("mail", "7:42"), read("calendar", "token-1")],
        )
        .await
        .unwrap();
    let expected: BTreeMap<String, String> = [("calendar", "token-1"), ("mail", "7:42")]
        .into_iter()
        .map(|(s, p)| (s.to_owned(), p.to_owned()))
        .collect();
    assert_eq!(store.positions().await.unwrap(), expected);
    assert_eq!(
        store.lines(D1).await.unwrap(),
        [text(&s1)],
        "positions are not signals"
    );
    // Past the bounds: refused, nothing stored.
    let long = "x".repeat(aura_contract::limits::READ_POSITION_BYTES_MAX + 1);
    assert!(matches!(
        store
            .append(D1, &[signal(D1, 2, None, 1)], &[read("mail", &long)])
            .await,
        Err(StoreError::Refused(_))
    ));
    let many: Vec<ReadPosition> = (0..aura_contract::limits::LIFE_SOURCES_MAX)
        .map(|n| read(&format!("source-{n}"), "1"))
        .collect();
    assert!(matches!(
        store.append(D1, &[], &many).await,
        Err(StoreError::Refused(_))
    ));
    assert!(matches!(
        store.append(D1, &[], &[read("", "1")]).await,
        Err(StoreError::Refused(_))
    ));
    assert_eq!(store.lines(D1).await.unwrap(), [text(&s1)]);
    assert_eq!(store.positions().await.unwrap(), expected);
    // The rollover carries them; a day not open takes none.
    store.begin_day(D2, &setup(D2), &[]).await.unwrap();
    store.commit(&state(D2, Some(D1), 1)).await.unwrap();
    assert_eq!(
        store.positions().await.unwrap(),
        expected,
        "a commit carries the positions"
    );
    assert_eq!(store.life().await.unwrap().unwrap().positions, expected);
    assert!(matches!(
        store.append(D1, &[], &[read("mail", "8")]).await,
        Err(StoreError::Refused(_))
    ));
    store
        .append(D2, &[], &[read("mail", "7:50")])
        .await
        .unwrap();
    drop(store);
    let store = open(home).await;
    let mut moved = expected.clone();
    moved.insert("mail".to_owned(), "7:50".to_owned());
    assert_eq!(
        store.positions().await.unwrap(),
        moved,
        "positions are durable"
    );
}

async fn a_days_logs_record_and_checkpoint_read_back(home: &impl Home) {
    let store = open(home).await;
    begun(&*store, D1, &[], None).await;
    let logs = [
        DayLog::Traces,
        DayLog::Quarantine,
        DayLog::Deliveries,
        DayLog::Narrations,
    ];
    for (n, log) in logs.iter().enumerate() {
        assert!(
            store.log(D1, *log).await.unwrap().is_empty(),
            "{log:?} starts empty"
        );
        store
            .append_log(D1, *log, &json!({"n": n, "b": [1, 2]}))
            .await
            .unwrap();
        store
            .append_log(D1, *log, &json!({"n": n + 10}))
            .await
            .unwrap();
    }
    assert_eq!(store.checkpoint(D1).await.unwrap(), None);
    store.put_checkpoint(D1, b"first").await.unwrap();
    store.put_checkpoint(D1, b"second").await.unwrap();
    assert_eq!(store.record(D1).await.unwrap(), None);
    let record = json!({"name": "suite", "signals": [], "unfinished": true});
    store.put_record(D1, &record).await.unwrap();
    drop(store);
    let store = open(home).await;
    for (n, log) in logs.iter().enumerate() {
        assert_eq!(
            store.log(D1, *log).await.unwrap(),
            [
                format!("{{\"b\":[1,2],\"n\":{n}}}"),
                format!("{{\"n\":{}}}", n + 10)
            ],
            "{log:?} reads back in order, canonical"
        );
    }
    assert_eq!(
        store.checkpoint(D1).await.unwrap().as_deref(),
        Some(&b"second"[..])
    );
    assert_eq!(store.record(D1).await.unwrap(), Some(record));
    assert!(matches!(
        store.put_record("2026-11-30", &json!({})).await,
        Err(StoreError::NoDay(_))
    ));
}

async fn days_are_in_the_lifes_order_and_deleted_whole(home: &impl Home) {
    let store = open(home).await;
    let names = [
        "2026-11-09",
        "2026-11-10",
        "2026-11-10.2",
        "2026-11-10.9",
        "2026-11-10.10",
    ];
    let mut previous = None;
    for name in names {
        store
            .begin_day(name, &setup(name), &[signal(name, 1, Some(name), 0)])
            .await
            .unwrap();
        store.commit(&state(name, previous, 0)).await.unwrap();
        previous = Some(name);
    }
    assert_eq!(store.days().await.unwrap(), names, "date, then part");
    assert!(
        matches!(
            store.delete_day("2026-11-10.10").await,
            Err(StoreError::Refused(_))
        ),
        "the open day is not deleted"
    );
    store.delete_day("2026-11-10").await.unwrap();
    store.delete_day("2026-11-10").await.unwrap();
    store.delete_day("2026-12-01").await.unwrap();
    assert!(matches!(
        store.lines("2026-11-10").await,
        Err(StoreError::NoDay(_))
    ));
    // A rollover begun and never committed is gone at the next open.
    store
        .begin_day(
            "2026-11-11",
            &setup("2026-11-11"),
            &[signal("2026-11-11", 1, None, 0)],
        )
        .await
        .unwrap();
    drop(store);
    let store = open(home).await;
    assert_eq!(
        store.days().await.unwrap(),
        [
            "2026-11-09",
            "2026-11-10.2",
            "2026-11-10.9",
            "2026-11-10.10"
        ]
    );
    // Begun again over what a rollover left: the day holds the new lines only.
    store
        .begin_day("2026-11-11", &setup("2026-11-11"), &[])
        .await
        .unwrap();
    store
        .begin_day(
            "2026-11-11",
            &setup("2026-11-11"),
            &[signal("2026-11-11", 2, None, 0)],
        )
        .await
        .unwrap();
    assert_eq!(
        store.lines("2026-11-11").await.unwrap(),
        [text(&signal("2026-11-11", 2, None, 0))]
    );
}

async fn a_life_set_aside_leaves_room_for_a_new_one(home: &impl Home) {
    let store = open(home).await;
    begun(&*store, D1, &[signal(D1, 1, None, 0)], None).await;
    store.set_aside().await.unwrap();
    assert_eq!(store.life().await.unwrap(), None);
    assert!(store.days().await.unwrap().is_empty());
    begun(&*store, D2, &[], None).await;
    drop(store);
    let store = open(home).await;
    assert_eq!(store.life().await.unwrap().unwrap().open, D2);
    assert_eq!(store.days().await.unwrap(), [D2]);
}

/// Fails every write at `step` of `path` (any ordinal).
#[derive(Debug)]
struct FailAt(&'static str, StorageStep);

impl StorageFaults for FailAt {
    fn at(&self, point: StoragePoint<'_>) -> Option<StorageFault> {
        (point.path == self.0 && point.step == self.1)
            .then(|| StorageFault::Fail(std::io::Error::other("injected: no space left")))
    }
}

async fn a_failed_append_stops_the_days_journal_until_reopened(home: &impl Home) {
    let store = open(home).await;
    begun(&*store, D1, &[], None).await;
    store
        .append(D1, &[signal(D1, 1, Some("a"), 0)], &[])
        .await
        .unwrap();
    drop(store);
    let failing = open_with(
        home,
        Some(Arc::new(FailAt(
            crate::logs::SIGNALS_PATH,
            StorageStep::Sync,
        ))),
    )
    .await
    .unwrap();
    assert!(
        failing
            .append(D1, &[signal(D1, 2, Some("b"), 1)], &[])
            .await
            .is_err()
    );
    assert!(
        matches!(
            failing
                .append(D1, &[signal(D1, 3, Some("c"), 2)], &[])
                .await,
            Err(StoreError::Stopped(_))
        ),
        "a failed append stops the day's journal"
    );
    drop(failing);
    let store = open(home).await;
    assert_eq!(
        store.lines(D1).await.unwrap(),
        [text(&signal(D1, 1, Some("a"), 0))],
        "the failed append was withdrawn"
    );
    // Its id is not the day's: it is stored when sent again.
    assert_eq!(
        store
            .append(D1, &[signal(D1, 2, Some("b"), 1)], &[])
            .await
            .unwrap(),
        [Appended::Stored]
    );
}
