//! The suite's crash checks: a life's script run once to list every step of its writes, then
//! once per step with that step killed, failed or cut short, the life opened again each time
//! and checked whole. It must not know which home it checks.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, Once};

use serde_json::{Value, json};

use aura_host::journal::{StorageFault, StorageFaults, StoragePoint, StorageStep};

use super::{D1, D2, D3, read, setup, signal, state, text};
use crate::store::{DayLog, Home, LifeState, LifeStore, ReadPosition, StoreError};

/// How a step is broken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Break {
    /// The process stops there: nothing after it runs.
    Kill,
    /// The step fails (the write stops; the life is opened again).
    Fail,
    /// A write puts down a few bytes, then fails.
    Short,
}

/// A point of a write, as a home names it.
type Point = (String, StorageStep, u64);

/// The payload of a kill: the script stops where it is.
struct Killed;

/// Lists every step of every write, in order; or breaks the `n`th.
#[derive(Debug)]
struct Steps {
    seen: Mutex<Vec<Point>>,
    broken: Option<(usize, Break)>,
}

impl StorageFaults for Steps {
    fn at(&self, point: StoragePoint<'_>) -> Option<StorageFault> {
        let mut seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
        let n = seen.len();
        seen.push((point.path.to_owned(), point.step, point.ordinal));
        drop(seen);
        let error = || std::io::Error::other("injected by the store suite");
        match self.broken {
            Some((at, how)) if at == n => match how {
                Break::Kill => std::panic::panic_any(Killed),
                Break::Fail => Some(StorageFault::Fail(error())),
                Break::Short => Some(StorageFault::Short {
                    bytes: 5,
                    error: error(),
                }),
            },
            _ => None,
        }
    }
}

/// What the script had done when it stopped.
#[derive(Debug, Default, Clone)]
struct Done {
    /// The life as last committed, and a commit in flight.
    life: Option<LifeState>,
    committing: Option<LifeState>,
    /// Each day's lines acknowledged (in order), for days begun.
    days: BTreeMap<String, Vec<String>>,
    /// An append in flight: its day, its new lines, its positions.
    appending: Option<(String, Vec<String>, Vec<ReadPosition>)>,
    /// Positions acknowledged.
    positions: BTreeMap<String, String>,
    /// A day being begun and one being deleted.
    beginning: Option<String>,
    deleting: Option<String>,
    /// Records acknowledged.
    records: BTreeMap<String, Value>,
}

/// The script's store and what it has done so far.
struct Run<'a> {
    store: &'a dyn LifeStore,
    done: &'a Mutex<Done>,
}

impl Run<'_> {
    fn record(&self, f: impl FnOnce(&mut Done)) {
        f(&mut self.done.lock().unwrap_or_else(|p| p.into_inner()));
    }

    async fn begin(&self, day: &str, lines: &[Value]) -> Result<(), StoreError> {
        self.record(|d| d.beginning = Some(day.to_owned()));
        self.store.begin_day(day, &setup(day), lines).await?;
        let texts: Vec<String> = lines.iter().map(text).collect();
        self.record(|d| {
            d.beginning = None;
            d.days.insert(day.to_owned(), texts);
        });
        Ok(())
    }

    async fn commit(&self, life: LifeState) -> Result<(), StoreError> {
        self.record(|d| d.committing = Some(life.clone()));
        self.store.commit(&life).await?;
        self.record(|d| {
            d.committing = None;
            d.life = Some(life);
        });
        Ok(())
    }

    async fn append(
        &self,
        day: &str,
        lines: &[Value],
        positions: &[ReadPosition],
    ) -> Result<(), StoreError> {
        self.record(|d| {
            let held = d.days.get(day).cloned().unwrap_or_default();
            let new: Vec<String> = lines
                .iter()
                .filter(|line| {
                    !held.iter().any(|h| {
                        let h: Value = serde_json::from_str(h).unwrap_or_default();
                        line.get("id").is_some() && h.get("id") == line.get("id")
                    })
                })
                .map(text)
                .collect();
            d.appending = Some((day.to_owned(), new, positions.to_vec()));
        });
        self.store.append(day, lines, positions).await?;
        self.record(|d| {
            if let Some((day, new, positions)) = d.appending.take() {
                d.days.entry(day).or_default().extend(new);
                for read in positions {
                    d.positions.insert(read.source, read.position);
                }
            }
        });
        Ok(())
    }
}

/// A life's days: a first day, appends with positions and a duplicate, logs, a checkpoint, a
/// close, two rollovers (the second a part of the same date), a retention delete.
async fn script(store: &dyn LifeStore, done: &Mutex<Done>) -> Result<(), StoreError> {
    let run = Run { store, done };
    let zone = json!({"at": "2026-11-09T00:00:00+01:00", "id": "time_zone:x", "kind": "utc_offset", "data": {"minutes": 60}});
    run.begin(D1, &[zone]).await?;
    run.commit(state(D1, None, 0)).await?;
    let (a, b) = (signal(D1, 1, Some("a"), 0), signal(D1, 2, Some("b"), 1));
    run.append(D1, &[a.clone(), b], &[read("mail", "1")])
        .await?;
    run.append(D1, &[signal(D1, 3, None, 2)], &[]).await?;
    run.append(D1, &[a], &[]).await?;
    run.append(D1, &[], &[read("calendar", "t1")]).await?;
    store
        .append_log(D1, DayLog::Traces, &json!({"decision": 1}))
        .await?;
    store
        .append_log(D1, DayLog::Deliveries, &json!({"delivered": 1}))
        .await?;
    store
        .put_checkpoint(D1, b"checkpoint of the first day")
        .await?;
    let closed = json!({"name": "suite", "signals": [], "unfinished": true});
    store.put_record(D1, &closed).await?;
    run.record(|d| {
        d.records.insert(D1.to_owned(), closed);
    });
    run.begin(D2, &[signal(D2, 4, Some("d"), 3)]).await?;
    run.commit(state(D2, Some(D1), 4)).await?;
    run.append(D2, &[signal(D2, 5, Some("e"), 4)], &[read("mail", "2")])
        .await?;
    // A batch larger than a message of a store over a network holds (a home may write it in
    // parts: it is there whole or not at all all the same).
    let large: Vec<Value> = (0..3)
        .map(|n| {
            let mut line = signal(D2, 10 + n, Some(&format!("large-{n}")), 5 + n as usize);
            line["data"]["note"] = Value::String("x".repeat(200 * 1024));
            line
        })
        .collect();
    run.append(D2, &large, &[read("mail", "3")]).await?;
    run.begin(D3, &[]).await?;
    run.commit(state(D3, Some(D2), 5)).await?;
    run.record(|d| d.deleting = Some(D1.to_owned()));
    store.delete_day(D1).await?;
    run.record(|d| {
        d.deleting = None;
        d.days.remove(D1);
    });
    let f = signal(D3, 6, Some("f"), 5);
    run.append(D3, &[f], &[read("watch", "sha256:00")]).await?;
    Ok(())
}

/// Checks the life `store` holds against what the script had done (`broken` says where it
/// stopped, for the messages).
async fn check_whole(store: &dyn LifeStore, done: &Done, broken: &str) {
    let life = store
        .life()
        .await
        .unwrap_or_else(|e| panic!("{broken}: the life cannot be read: {e}"));
    // The life: as last committed, or as the commit in flight says.
    let strip = |life: &Option<LifeState>| {
        life.clone().map(|mut l| {
            l.positions.clear();
            l
        })
    };
    let held = strip(&life);
    assert!(
        held == strip(&done.life) || (done.committing.is_some() && held == done.committing.clone()),
        "{broken}: the life is {held:?}, neither the one committed ({:?}) nor the one in flight",
        done.life
    );
    let days = store
        .days()
        .await
        .unwrap_or_else(|e| panic!("{broken}: {e}"));
    let Some(life) = life else {
        assert!(days.is_empty(), "{broken}: no life, yet days {days:?}");
        return;
    };
    // No day past the open one; every day acknowledged and not deleted is there.
    for day in &days {
        assert!(
            crate::store::day_order(day) <= crate::store::day_order(&life.open),
            "{broken}: {day} was begun and never committed, yet it is there"
        );
    }
    for day in done.days.keys() {
        if crate::store::day_order(day) <= crate::store::day_order(&life.open)
            && done.deleting.as_deref() != Some(day)
        {
            assert!(days.contains(day), "{broken}: day {day} was lost");
        }
    }
    for day in &days {
        let lines = store
            .lines(day)
            .await
            .unwrap_or_else(|e| panic!("{broken}: {day}: {e}"));
        let acked = done.days.get(day).cloned().unwrap_or_default();
        let mut whole = acked.clone();
        let in_flight = match &done.appending {
            Some((at, new, _)) if at == day => {
                whole.extend(new.iter().cloned());
                new.len()
            }
            _ => 0,
        };
        assert!(
            lines == acked || (in_flight > 0 && lines == whole),
            "{broken}: {day} holds {lines:#?}, not what was acknowledged ({acked:#?}) nor that with the append in flight whole"
        );
        assert_eq!(
            store
                .setup(day)
                .await
                .unwrap_or_else(|e| panic!("{broken}: {e}")),
            setup(day),
            "{broken}: {day}'s setup"
        );
        if let Some(record) = done.records.get(day) {
            assert_eq!(
                store.record(day).await.unwrap().as_ref(),
                Some(record),
                "{broken}: {day}'s record"
            );
        }
    }
    // Positions: the acknowledged ones, or those with the append in flight, whose lines are
    // then there too.
    let positions = store
        .positions()
        .await
        .unwrap_or_else(|e| panic!("{broken}: {e}"));
    let mut with_flight = done.positions.clone();
    if let Some((day, new, moved)) = &done.appending
        && !moved.is_empty()
    {
        for read in moved {
            with_flight.insert(read.source.clone(), read.position.clone());
        }
        if positions == with_flight && positions != done.positions && !new.is_empty() {
            let lines = store.lines(day).await.unwrap_or_default();
            assert!(
                new.iter().all(|line| lines.contains(line)),
                "{broken}: positions stored without their signals"
            );
        }
    }
    assert!(
        positions == done.positions || positions == with_flight,
        "{broken}: positions {positions:?}, acknowledged {:?}",
        done.positions
    );
}

pub(super) async fn every_step_killed_failed_or_cut_short_leaves_a_whole_life<H: Home>(
    fresh: &impl Fn() -> H,
) {
    static QUIET: Once = Once::new();
    QUIET.call_once(|| {
        let before = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !info.payload().is::<Killed>() {
                before(info);
            }
        }));
    });
    // Every step the script's writes take.
    let home = fresh();
    let listing = Arc::new(Steps {
        seen: Mutex::default(),
        broken: None,
    });
    let store = super::open_with(&home, Some(listing.clone()))
        .await
        .expect("open");
    let done = Mutex::new(Done::default());
    script(&*store, &done)
        .await
        .unwrap_or_else(|e| panic!("the script fails with no fault: {e}"));
    drop(store);
    let points: Vec<Point> = listing.seen.lock().unwrap().clone();
    assert!(
        points.len() >= 60,
        "the script writes in at least 60 steps: {}",
        points.len()
    );
    for (n, point) in points.iter().enumerate() {
        for how in [Break::Kill, Break::Fail, Break::Short] {
            if how == Break::Short && point.1 != StorageStep::Write {
                continue;
            }
            let broken = format!(
                "{how:?} at step {n}, {}:{}:{}",
                point.0,
                point.1.as_str(),
                point.2
            );
            let home = fresh();
            let steps = Arc::new(Steps {
                seen: Mutex::default(),
                broken: Some((n, how)),
            });
            let done = Arc::new(Mutex::new(Done::default()));
            let store: Arc<dyn LifeStore> = super::open_with(&home, Some(steps))
                .await
                .expect("open")
                .into();
            // The script runs as a task of its own: a kill is a panic that ends it there.
            let ran = tokio::spawn({
                let (store, done) = (store.clone(), done.clone());
                async move { script(&*store, &done).await.map(|_| ()) }
            })
            .await;
            match ran {
                Ok(_) => {}
                Err(error) if error.is_panic() => {
                    let payload = error.into_panic();
                    if !payload.is::<Killed>() {
                        std::panic::resume_unwind(payload);
                    }
                }
                Err(error) => panic!("{broken}: the script's task: {error}"),
            }
            drop(store);
            let store = super::open_with(&home, None)
                .await
                .unwrap_or_else(|e| panic!("{broken}: the life does not open again: {e}"));
            let done = done.lock().unwrap_or_else(|p| p.into_inner()).clone();
            check_whole(&*store, &done, &broken).await;
            // And it goes on: an append to the open day, a rollover.
            if let Some(life) = store.life().await.unwrap() {
                store
                    .append(
                        &life.open,
                        &[signal(&life.open, 59, Some("after"), 99)],
                        &[read("mail", "after")],
                    )
                    .await
                    .unwrap_or_else(|e| panic!("{broken}: no append after reopening: {e}"));
                store
                    .begin_day("2026-11-12", &setup("2026-11-12"), &[])
                    .await
                    .unwrap();
                store
                    .commit(&state("2026-11-12", Some(&life.open), 100))
                    .await
                    .unwrap_or_else(|e| panic!("{broken}: no rollover after reopening: {e}"));
                assert_eq!(
                    store.positions().await.unwrap()["mail"],
                    "after",
                    "{broken}"
                );
            }
        }
    }
}
