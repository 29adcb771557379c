//! The suite's check for a home whose hold is a lease (a home over a network): an opener paused
//! past its lease, and woken after another opened the life, writes nothing more, whichever
//! write it tries first. Its home's test calls [`a_lapsed_opener_writes_nothing`] with a way
//! to make an empty home and a way to end a hold as the lease's expiry does (the opener is not
//! told: it finds out only from the store's answer).
//!
//! It owns the writes tried (each on its own life, since the first refused one tells the
//! opener): an append, a log's record, a checkpoint, a record, a day begun, a commit, a
//! closed day deleted and a set-aside; each must be refused ([`StoreError::Busy`]), leave the
//! life as the newer opener reads it, and the newer opener go on. It must not know how a home
//! fences its writes.

use std::future::Future;

use serde_json::{Value, json};

use super::{D1, D2, D3, begun, open, setup, signal, state};
use crate::store::{DayLog, Home, LifeStore, StoreError};

/// The writes an opener whose lease lapsed may try first.
const WRITES: [&str; 8] = [
    "append",
    "append_log",
    "put_checkpoint",
    "put_record",
    "begin_day",
    "commit",
    "delete_day",
    "set_aside",
];

/// Runs the check on homes `fresh` makes, `lapse` ending a home's hold as its lease's expiry
/// does. Panics with what failed.
pub async fn a_lapsed_opener_writes_nothing<H, F>(fresh: impl Fn() -> H, lapse: impl Fn(&H) -> F)
where
    H: Home + 'static,
    F: Future<Output = ()>,
{
    for write in WRITES {
        let home = fresh();
        let older = open(&home).await;
        lived(&*older).await;
        lapse(&home).await;
        let newer = open(&home).await;
        let before = everything(&*newer).await;
        let tried = attempt(&*older, write).await;
        assert!(
            matches!(tried, Err(StoreError::Busy)),
            "an opener whose lease lapsed wrote ({write}: {tried:?}) after another opened the life"
        );
        assert_eq!(
            everything(&*newer).await,
            before,
            "{write} of an opener whose lease lapsed changed the life"
        );
        let line = signal(D2, 40, Some("newer"), 9);
        newer
            .append(D2, std::slice::from_ref(&line), &[])
            .await
            .unwrap_or_else(|e| panic!("the newer opener cannot go on after {write}: {e}"));
        newer
            .put_checkpoint(D2, b"newer")
            .await
            .unwrap_or_else(|e| panic!("the newer opener cannot go on after {write}: {e}"));
        drop(newer);
        drop(older);
        let again = open(&home).await;
        let lines = again.lines(D2).await.expect("the open day's lines");
        assert!(
            lines.iter().any(|l| l.contains("\"newer\"")),
            "the newer opener's append after {write} was lost"
        );
        assert_eq!(
            again.checkpoint(D2).await.unwrap().as_deref(),
            Some(&b"newer"[..])
        );
    }
}

/// A life two days long: D1 closed with its record, D2 open with a line, a trace and a
/// checkpoint.
async fn lived(store: &dyn LifeStore) {
    begun(store, D1, &[signal(D1, 1, Some("a"), 0)], None).await;
    store
        .put_record(D1, &json!({"day": D1}))
        .await
        .expect("record");
    store
        .begin_day(D2, &setup(D2), &[signal(D2, 2, Some("b"), 1)])
        .await
        .expect("begin");
    store.commit(&state(D2, Some(D1), 1)).await.expect("commit");
    store
        .append(D2, &[signal(D2, 3, Some("c"), 2)], &[])
        .await
        .expect("append");
    store
        .append_log(D2, DayLog::Traces, &json!({"trace": 1}))
        .await
        .expect("trace");
    store
        .put_checkpoint(D2, b"older")
        .await
        .expect("checkpoint");
}

/// Tries `write` on `store` (the opener whose lease lapsed).
async fn attempt(store: &dyn LifeStore, write: &str) -> Result<(), StoreError> {
    match write {
        "append" => store
            .append(D2, &[signal(D2, 30, Some("older"), 3)], &[])
            .await
            .map(|_| ()),
        "append_log" => {
            store
                .append_log(D2, DayLog::Traces, &json!({"trace": 2}))
                .await
        }
        "put_checkpoint" => store.put_checkpoint(D2, b"older again").await,
        "put_record" => store.put_record(D1, &json!({"day": "older"})).await,
        "begin_day" => store.begin_day(D3, &setup(D3), &[]).await,
        "commit" => store.commit(&state(D2, Some(D1), 2)).await,
        "delete_day" => store.delete_day(D1).await,
        "set_aside" => store.set_aside().await,
        other => unreachable!("no write {other}"),
    }
}

/// What an opener reads of the life: where it stands, its days, each day's lines, traces,
/// record and checkpoint.
async fn everything(store: &dyn LifeStore) -> Value {
    let mut days = Vec::new();
    for day in store.days().await.expect("days") {
        days.push(json!({
            "day": day,
            "lines": store.lines(&day).await.expect("lines"),
            "traces": store.log(&day, DayLog::Traces).await.expect("traces"),
            "record": store.record(&day).await.expect("record"),
            "checkpoint": store.checkpoint(&day).await.expect("checkpoint")
                .map(|bytes| String::from_utf8_lossy(&bytes).into_owned()),
        }));
    }
    json!({
        "life": serde_json::to_value(store.life().await.expect("life")).unwrap_or_default(),
        "days": days,
    })
}
