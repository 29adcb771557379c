//! The decisions a held person's session made that its sink was not handed (a full queue), or
//! that its life recorded before a hold ended and a resumed session will not make again: read
//! back from the traces of its days in the session's data dir, to be journaled in order.
//!
//! It owns finding them across the kept days (each day's first decision is the life's
//! `base`-th). It must not journal or deliver them (the hold does).

use aura_contract::caused::{Caused, caused};
use aura_contract::limits::LIVE_TRACES_BYTES_MAX;
use aura_day::live::{self, Delivery};
use aura_host::Host;
use aura_host::journal::TRACES_PATH;

/// The decisions of the life in `host`'s data dir from the life's `from`th up to
/// `delivery` (not included), read back from the traces of its days: the day `delivery` was
/// decided in, and as many kept days before it as they reach back to.
pub(super) fn missed(host: &Host, delivery: &Delivery, from: u64) -> Result<Vec<Delivery>, String> {
    let root = host.journal().path().to_path_buf();
    let traces_of = |day: &str| traces(host, &root, day);
    let Some(day) = delivery.day.as_deref() else {
        return Err("a decision of a session of one day: the fleet's holds live days".to_owned());
    };
    // Back from the delivery's day: each day's first decision is the life's base-th.
    let mut days = vec![(day.to_owned(), delivery.life_seq - delivery.seq)];
    let kept = live::life::days(&root).map_err(|e| caused(&e))?;
    let mut earlier = kept
        .iter()
        .rev()
        .filter(|name| live::life::day_order(name) < live::life::day_order(day));
    while days.last().is_some_and(|(_, base)| *base > from) {
        let Some(name) = earlier.next() else {
            return Err(format!(
                "decisions {from}.. were made on a day no longer kept: never journaled"
            ));
        };
        let count = traces_of(name)?.len() as u64;
        let base = days.last().map_or(0, |(_, base)| *base);
        days.push((name.clone(), base.saturating_sub(count)));
    }
    let mut missed = Vec::new();
    for (name, base) in days.iter().rev() {
        for (offset, line) in traces_of(name)?.iter().enumerate() {
            let seq = offset as u64;
            let life_seq = base + seq;
            if life_seq < from {
                continue;
            }
            if life_seq >= delivery.life_seq {
                break;
            }
            let read = Delivery::read(line, seq)
                .ok_or_else(|| format!("trace {seq} of {name} does not read as one"))?;
            missed.push(read.in_life(*base, Some(name)));
        }
    }
    Ok(missed)
}

/// The decisions the life in `host`'s data dir recorded from the life's `from`th on (the
/// traces of its open day and of the day before it, as its working copy keeps them): what a
/// session resumed past, in order.
pub(super) fn recorded(host: &Host, from: u64) -> Result<Vec<Delivery>, String> {
    let root = host.journal().path().to_path_buf();
    let Some(state) = aura_day::store::files::read_life(&root).map_err(|e| e.to_string())? else {
        return Ok(Vec::new());
    };
    let traces_of = |day: &str| traces(host, &root, day);
    let open = traces_of(&state.open)?;
    let mut days = vec![(state.open.clone(), state.decided_base, open)];
    if state.decided_base > from {
        let Some(previous) = state.previous.as_deref() else {
            return Err(format!(
                "decisions {from}.. were made before the life's open day: never journaled"
            ));
        };
        let traces = traces_of(previous)?;
        let base = state.decided_base.saturating_sub(traces.len() as u64);
        if base > from {
            return Err(format!(
                "decisions {from}.. were made on a day no longer kept: never journaled"
            ));
        }
        days.insert(0, (previous.to_owned(), base, traces));
    }
    let mut recorded = Vec::new();
    for (name, base, traces) in &days {
        for (offset, line) in traces.iter().enumerate() {
            let seq = offset as u64;
            if base + seq < from {
                continue;
            }
            let last = *name == state.open && offset + 1 == traces.len();
            match Delivery::read(line, seq) {
                Some(read) => recorded.push(read.in_life(*base, Some(name))),
                // The session may be writing it now: its sink is handed it too.
                None if last => break,
                None => return Err(format!("trace {seq} of {name} does not read as one")),
            }
        }
    }
    Ok(recorded)
}

/// The traces of day `day` of the life in `host`'s data dir `root`.
fn traces(host: &Host, root: &std::path::Path, day: &str) -> Result<Vec<String>, String> {
    let dir = live::life::day_dir(root, day);
    let day_host = host.in_data_dir(&dir).map_err(|e| caused(&e))?;
    day_host
        .journal()
        .lines(TRACES_PATH, 0, LIVE_TRACES_BYTES_MAX)
        .map_err(|e| format!("the session's traces of {day}: {}", Caused(&e)))
}
