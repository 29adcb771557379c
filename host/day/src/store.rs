//! What a life stores, behind one trait: [`LifeStore`], with its homes ([`files`]: the
//! phone's and the desktop's data dir; [`memory`]: the deterministic simulation's; the
//! fleet's, on JetStream, is `aura_fleet::life`), the working copy a session runs on whichever
//! home keeps its life ([`working`]), and the suite every home passes ([`suite`], behind the
//! `store-suite` feature). docs/store.md is the map.
//!
//! It owns the contract: what a life keeps (where it stands, [`LifeState`], replaced whole by
//! the rollover's one commit; its days, each a setup, a journal of the signals it took, the
//! read positions of the sources they came from, its logs, its checkpoint and, once closed,
//! its record), what is durable when a call returns, what a crash at each step leaves, and how
//! a life is held by one opener only. It must not decide anything a life does (when a day
//! closes, what it carries, which days are kept: the live session and its life do) nor read
//! what a record says beyond the signal ids it deduplicates by.
//!
//! # The contract, for every home
//!
//! - **One opener.** A home opens a life for one holder; a second open while it is held fails
//!   with [`StoreError::Busy`] and changes nothing. Dropping the store lets it go (a killed
//!   process lets it go too; a home over a network may take a moment, or a lease, to). A
//!   home whose hold is a lease fences its writes: an opener paused past its lease and woken
//!   after another opened the life has every write refused ([`StoreError::Busy`]) and
//!   changes nothing (the suite's [`suite::a_lapsed_opener_writes_nothing`]).
//! - **Durable on return.** Every write is durable when it returns `Ok`: a crash after that
//!   loses none of it. A write that returns an error may or may not have reached the store,
//!   but never in part: a batch of lines appended with its read positions is there whole or
//!   not at all, a replaced value (the life's state, a day's setup, record or checkpoint) is
//!   the old one or the new one, a day being deleted is there whole or gone.
//! - **A failed append stops the day's journal**: nothing more is appended to it until the
//!   life is opened again (which repairs what the failure left, so the store says what it
//!   holds). A failed replacement stops only itself.
//! - **Nothing applied twice.** A signal line with an `id` is stored once in its day: an
//!   append of a line whose id the day holds stores nothing and answers
//!   [`Appended::Already`]. (The session's own window, the day before included, is the
//!   session's.)
//! - **No half day.** [`LifeStore::begin_day`] makes a day whole (its setup, then its first
//!   lines) before [`LifeStore::commit`] names it open; a day begun past the open one and not
//!   committed (a rollover a crash cut short) is deleted when the life is opened again, as is
//!   a deletion a crash cut short.
//! - **Read positions go with their signals.** A source's read position (an IMAP UID, a sync
//!   token, a file's digest) is appended in the same step as the signals it produced, so after
//!   a crash a source resumes from a position whose signals are all stored. A commit carries
//!   the positions as they stand into the next day.

pub mod files;
pub mod memory;
mod steps;
#[cfg(any(test, feature = "store-suite"))]
pub mod suite;
pub mod working;

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::pin::Pin;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use aura_contract::canonical::to_canonical_string;
use aura_host::journal::JournalError;

pub use files::{FileHome, FileStore};
pub use memory::{MemoryHome, MemoryStore};
pub use steps::{Stop, canonical, fault_error, step_error};
pub use working::{WorkingCopy, WorkingHome};

/// What `life.json` says it is.
pub const LIFE_FORMAT: &str = "aura.life.v1";

/// Where a life stands: its open day and what the days before handed on. Replaced whole by
/// [`LifeStore::commit`].
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LifeState {
    /// Always [`LIFE_FORMAT`].
    pub format: String,
    /// sha256 of the setup the life began with, less its start: a session of another setup
    /// must not go on with it.
    pub setup_sha256: String,
    /// The open day.
    pub open: String,
    /// The day before it, if it was kept.
    pub previous: Option<String>,
    /// The life's place (`seq`) of the open day's first new signal: the one after the last
    /// the days before took (a line carried into the open day keeps its own).
    pub base: usize,
    /// The life's place of the open day's first decision (a life of an earlier aura: 0).
    #[serde(default)]
    pub decided_base: u64,
    /// The time zone the person is in as the open day begins, if known.
    pub time_zone: Option<String>,
    /// Each source's read position as the open day began (the store carries them over at
    /// each commit; a life of an earlier aura: none).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub positions: BTreeMap<String, String>,
}

/// Where a source stands: what it has read, as the source names it (an IMAP mailbox's
/// UIDVALIDITY and last UID, a CalDAV sync token, a statement file's digest).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReadPosition {
    /// The source, as the setup names it.
    pub source: String,
    /// Its position, opaque to the store.
    pub position: String,
}

/// What an append did with one line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Appended {
    /// Stored now.
    Stored,
    /// The day holds a line with its id already: that line, stored nothing.
    Already(String),
}

/// A day's logs besides its journal of signals.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum DayLog {
    /// The reasoning traces, one per decision.
    Traces,
    /// The refused and dropped calls and inputs.
    Quarantine,
    /// What the sinks were handed.
    Deliveries,
    /// The narrator's records.
    Narrations,
}

/// Why a store could not do what it was asked.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The life is held by another opener.
    #[error("another session holds this life (its store is open elsewhere)")]
    Busy,
    /// The life has no day of that name.
    #[error("the life holds no day {0}")]
    NoDay(String),
    /// What the store holds is not what a life writes.
    #[error("the life's store is damaged: {0}")]
    Damaged(String),
    /// A write of the day's journal failed before: nothing more is appended to it until the
    /// life is opened again.
    #[error("the day's journal stopped after a failed write: {0}")]
    Stopped(String),
    /// What was asked is past one of the life's bounds (it stored nothing).
    #[error("refused: {0}")]
    Refused(String),
    /// A write or a read failed (the files' journal says which file and why).
    #[error(transparent)]
    Journal(JournalError),
}

impl From<JournalError> for StoreError {
    fn from(error: JournalError) -> Self {
        match error {
            JournalError::Busy => Self::Busy,
            JournalError::Stopped { path, first } => Self::Stopped(format!("{path}: {first}")),
            error => Self::Journal(error),
        }
    }
}

/// Where a life is kept: what opens it for one holder.
pub trait Home: std::fmt::Debug + Send + Sync {
    /// Opens the life for this opener alone (a second opener while it is held:
    /// [`StoreError::Busy`]), every write open to `faults` (the deterministic simulation's,
    /// the suite's), finishing what a crash cut short (a deletion, a rollover not committed).
    fn open(
        &self,
        faults: Option<std::sync::Arc<dyn aura_host::journal::StorageFaults>>,
    ) -> Step<'_, Box<dyn LifeStore>>;
}

/// One call on a store, answered when it is done.
pub type Step<'a, T> = Pin<Box<dyn Future<Output = Result<T, StoreError>> + Send + 'a>>;

/// What a life stores. Each call is durable when its answer is `Ok`; see the module's
/// contract for what an error and a crash leave.
pub trait LifeStore: std::fmt::Debug + Send + Sync {
    /// Where the life stands, if the store holds one.
    fn life(&self) -> Step<'_, Option<LifeState>>;
    /// The rollover's one commit: replaces where the life stands with `state`, the read
    /// positions as they stand carried into it (its own `positions` are not read). Before it
    /// answers `Ok` the life is as it was; after, as `state` says. `state.open` must be a day
    /// the store holds whole.
    fn commit<'a>(&'a self, state: &'a LifeState) -> Step<'a, ()>;
    /// Moves the whole life aside (a fresh start): the store then holds none, and what was
    /// there is kept where the home says, never deleted.
    fn set_aside(&self) -> Step<'_, ()>;
    /// The days the store holds, in the life's order (date, then part): the closed ones kept,
    /// the open one, and none being begun or deleted.
    fn days(&self) -> Step<'_, Vec<String>>;
    /// Makes the day `day` whole: its setup and its first journal lines, durable together
    /// (a day of that name begun before and never committed is replaced). Not open until a
    /// commit names it.
    fn begin_day<'a>(&'a self, day: &'a str, setup: &'a Value, lines: &'a [Value]) -> Step<'a, ()>;
    /// The setup the day was begun with.
    fn setup<'a>(&'a self, day: &'a str) -> Step<'a, Value>;
    /// Deletes the day whole (nothing when it is not there). The open day is not deleted.
    fn delete_day<'a>(&'a self, day: &'a str) -> Step<'a, ()>;
    /// Appends signal lines (canonical JSON objects, in the order taken) to the day's journal
    /// and the read positions they were read up to, all durable in one step: what each line
    /// became. `lines` may be empty (a source read nothing new, its position moved).
    fn append<'a>(
        &'a self,
        day: &'a str,
        lines: &'a [Value],
        positions: &'a [ReadPosition],
    ) -> Step<'a, Vec<Appended>>;
    /// The day's journal lines, oldest first (canonical JSON; read positions not among them).
    fn lines<'a>(&'a self, day: &'a str) -> Step<'a, Vec<String>>;
    /// Each source's read position as it stands: the open day's latest, else the one the
    /// life's state carried in.
    fn positions(&self) -> Step<'_, BTreeMap<String, String>>;
    /// Replaces the day's record (what a closed day is replayed from).
    fn put_record<'a>(&'a self, day: &'a str, record: &'a Value) -> Step<'a, ()>;
    /// The day's record, if it was closed.
    fn record<'a>(&'a self, day: &'a str) -> Step<'a, Option<Value>>;
    /// Appends one record to one of the day's logs.
    fn append_log<'a>(&'a self, day: &'a str, log: DayLog, record: &'a Value) -> Step<'a, ()>;
    /// One of the day's logs, oldest first.
    fn log<'a>(&'a self, day: &'a str, log: DayLog) -> Step<'a, Vec<String>>;
    /// Replaces the day's checkpoint (opaque bytes: the run's own).
    fn put_checkpoint<'a>(&'a self, day: &'a str, bytes: &'a [u8]) -> Step<'a, ()>;
    /// The day's checkpoint, if it has one.
    fn checkpoint<'a>(&'a self, day: &'a str) -> Step<'a, Option<Vec<u8>>>;
}

/// A home whose every step is done before it returns (its own disk, memory): what it
/// implements to be a [`LifeStore`] (the same calls, answered at once). The calls' contract
/// is [`LifeStore`]'s.
#[allow(missing_docs)]
pub trait BlockingStore: std::fmt::Debug + Send + Sync {
    fn life(&self) -> Result<Option<LifeState>, StoreError>;
    fn commit(&self, state: &LifeState) -> Result<(), StoreError>;
    fn set_aside(&self) -> Result<(), StoreError>;
    fn days(&self) -> Result<Vec<String>, StoreError>;
    fn begin_day(&self, day: &str, setup: &Value, lines: &[Value]) -> Result<(), StoreError>;
    fn setup(&self, day: &str) -> Result<Value, StoreError>;
    fn delete_day(&self, day: &str) -> Result<(), StoreError>;
    fn append(
        &self,
        day: &str,
        lines: &[Value],
        positions: &[ReadPosition],
    ) -> Result<Vec<Appended>, StoreError>;
    fn lines(&self, day: &str) -> Result<Vec<String>, StoreError>;
    fn positions(&self) -> Result<BTreeMap<String, String>, StoreError>;
    fn put_record(&self, day: &str, record: &Value) -> Result<(), StoreError>;
    fn record(&self, day: &str) -> Result<Option<Value>, StoreError>;
    fn append_log(&self, day: &str, log: DayLog, record: &Value) -> Result<(), StoreError>;
    fn log(&self, day: &str, log: DayLog) -> Result<Vec<String>, StoreError>;
    fn put_checkpoint(&self, day: &str, bytes: &[u8]) -> Result<(), StoreError>;
    fn checkpoint(&self, day: &str) -> Result<Option<Vec<u8>>, StoreError>;
}

impl<S: BlockingStore> LifeStore for S {
    fn life(&self) -> Step<'_, Option<LifeState>> {
        Box::pin(async move { BlockingStore::life(self) })
    }
    fn commit<'a>(&'a self, state: &'a LifeState) -> Step<'a, ()> {
        Box::pin(async move { BlockingStore::commit(self, state) })
    }
    fn set_aside(&self) -> Step<'_, ()> {
        Box::pin(async move { BlockingStore::set_aside(self) })
    }
    fn days(&self) -> Step<'_, Vec<String>> {
        Box::pin(async move { BlockingStore::days(self) })
    }
    fn begin_day<'a>(&'a self, day: &'a str, setup: &'a Value, lines: &'a [Value]) -> Step<'a, ()> {
        Box::pin(async move { BlockingStore::begin_day(self, day, setup, lines) })
    }
    fn setup<'a>(&'a self, day: &'a str) -> Step<'a, Value> {
        Box::pin(async move { BlockingStore::setup(self, day) })
    }
    fn delete_day<'a>(&'a self, day: &'a str) -> Step<'a, ()> {
        Box::pin(async move { BlockingStore::delete_day(self, day) })
    }
    fn append<'a>(
        &'a self,
        day: &'a str,
        lines: &'a [Value],
        positions: &'a [ReadPosition],
    ) -> Step<'a, Vec<Appended>> {
        Box::pin(async move { BlockingStore::append(self, day, lines, positions) })
    }
    fn lines<'a>(&'a self, day: &'a str) -> Step<'a, Vec<String>> {
        Box::pin(async move { BlockingStore::lines(self, day) })
    }
    fn positions(&self) -> Step<'_, BTreeMap<String, String>> {
        Box::pin(async move { BlockingStore::positions(self) })
    }
    fn put_record<'a>(&'a self, day: &'a str, record: &'a Value) -> Step<'a, ()> {
        Box::pin(async move { BlockingStore::put_record(self, day, record) })
    }
    fn record<'a>(&'a self, day: &'a str) -> Step<'a, Option<Value>> {
        Box::pin(async move { BlockingStore::record(self, day) })
    }
    fn append_log<'a>(&'a self, day: &'a str, log: DayLog, record: &'a Value) -> Step<'a, ()> {
        Box::pin(async move { BlockingStore::append_log(self, day, log, record) })
    }
    fn log<'a>(&'a self, day: &'a str, log: DayLog) -> Step<'a, Vec<String>> {
        Box::pin(async move { BlockingStore::log(self, day, log) })
    }
    fn put_checkpoint<'a>(&'a self, day: &'a str, bytes: &'a [u8]) -> Step<'a, ()> {
        Box::pin(async move { BlockingStore::put_checkpoint(self, day, bytes) })
    }
    fn checkpoint<'a>(&'a self, day: &'a str) -> Step<'a, Option<Vec<u8>>> {
        Box::pin(async move { BlockingStore::checkpoint(self, day) })
    }
}

/// What an append writes, sorted out from what it was handed.
pub struct Sorted {
    /// What each line became.
    pub answers: Vec<Appended>,
    /// The lines to write in one step: the new ones, then the read positions' line.
    pub written: Vec<Value>,
    /// The ids the new lines brought, each with its line (the day's once the write is
    /// durable).
    pub new_ids: Vec<(String, String)>,
}

/// The ids of a day's journal lines, each with its line.
pub fn ids_of(lines: &[String]) -> HashMap<String, String> {
    lines
        .iter()
        .filter_map(|line| {
            let value: Value = serde_json::from_str(line).ok()?;
            Some((line_id(&value)?.to_owned(), line.clone()))
        })
        .collect()
}

/// Sorts an append to `day` (the life's open day `open`, its positions `kept`) out: read
/// positions only with the open day's signals and within the bounds, a line whose id `known`
/// holds (or an earlier line of the batch brought) not written again.
pub fn sort_out(
    (day, open): (&str, Option<&str>),
    known: &HashMap<String, String>,
    kept: &BTreeMap<String, String>,
    lines: &[Value],
    positions: &[ReadPosition],
) -> Result<Sorted, StoreError> {
    if !positions.is_empty() {
        if open != Some(day) {
            return Err(StoreError::Refused(format!(
                "read positions go with the open day's signals, not {day}'s"
            )));
        }
        check_positions(kept, positions)?;
    }
    let mut sorted = Sorted {
        answers: Vec::with_capacity(lines.len()),
        written: Vec::with_capacity(lines.len() + 1),
        new_ids: Vec::new(),
    };
    let mut batch: HashMap<&str, usize> = HashMap::new();
    for line in lines {
        if let Some(id) = line_id(line) {
            let before = known
                .get(id)
                .or_else(|| batch.get(id).map(|at| &sorted.new_ids[*at].1));
            if let Some(before) = before {
                sorted.answers.push(Appended::Already(before.clone()));
                continue;
            }
            let text = to_canonical_string(line).map_err(|e| StoreError::Refused(e.to_string()))?;
            batch.insert(id, sorted.new_ids.len());
            sorted.new_ids.push((id.to_owned(), text));
        }
        sorted.answers.push(Appended::Stored);
        sorted.written.push(line.clone());
    }
    if !positions.is_empty() {
        sorted.written.push(positions_line(positions));
    }
    Ok(sorted)
}

/// `positions` checked against the life's bounds, with those already kept (`kept`): the
/// sources, the size of each ([`StoreError::Refused`] says which).
pub fn check_positions(
    kept: &BTreeMap<String, String>,
    positions: &[ReadPosition],
) -> Result<(), StoreError> {
    use aura_contract::limits::{LIFE_SOURCES_MAX, READ_POSITION_BYTES_MAX, SOURCE_NAME_BYTES_MAX};
    let mut sources: std::collections::BTreeSet<&str> = kept.keys().map(String::as_str).collect();
    for read in positions {
        if read.source.is_empty() || read.source.len() > SOURCE_NAME_BYTES_MAX {
            return Err(StoreError::Refused(format!(
                "a source's name is 1 to {SOURCE_NAME_BYTES_MAX} bytes; this one is {}",
                read.source.len()
            )));
        }
        if read.position.len() > READ_POSITION_BYTES_MAX {
            return Err(StoreError::Refused(format!(
                "a read position is at most {READ_POSITION_BYTES_MAX} bytes; {} bytes for one source",
                read.position.len()
            )));
        }
        sources.insert(&read.source);
    }
    match sources.len() > LIFE_SOURCES_MAX {
        true => Err(StoreError::Refused(format!(
            "a life keeps the positions of at most {LIFE_SOURCES_MAX} sources"
        ))),
        false => Ok(()),
    }
}

/// The key of a journal line that holds read positions, not a signal.
const POSITIONS_KEY: &str = "read_positions";

/// The journal line that holds `positions` (`{"read_positions":{source: position}}`).
pub fn positions_line(positions: &[ReadPosition]) -> Value {
    let map: BTreeMap<&str, &str> = positions
        .iter()
        .map(|read| (read.source.as_str(), read.position.as_str()))
        .collect();
    serde_json::json!({ POSITIONS_KEY: map })
}

/// The read positions a journal line holds, or `None` for a signal's line (canonical JSON: a
/// signal's first key is `at`, a positions line's only key is [`POSITIONS_KEY`]).
pub fn positions_of(line: &str) -> Option<BTreeMap<String, String>> {
    if !line.starts_with(&format!("{{\"{POSITIONS_KEY}\":")) {
        return None;
    }
    let value: Value = serde_json::from_str(line).ok()?;
    serde_json::from_value(value.get(POSITIONS_KEY)?.clone()).ok()
}

/// Each source's read position as it stands: `carried` (where the life's state says they
/// stood as the open day began) moved by the positions' lines among `journal` (the open
/// day's), in order.
pub fn positions_after<'a>(
    mut carried: BTreeMap<String, String>,
    journal: impl IntoIterator<Item = &'a String>,
) -> BTreeMap<String, String> {
    for line in journal {
        if let Some(moved) = positions_of(line) {
            carried.extend(moved);
        }
    }
    carried
}

/// A line's `id`, if it has one.
pub fn line_id(line: &Value) -> Option<&str> {
    line.get("id").and_then(Value::as_str)
}

/// `YYYY-MM-DD`, or `YYYY-MM-DD.N` for a later part of the same local day.
pub fn is_day_name(name: &str) -> bool {
    let (date, part) = name.split_once('.').unwrap_or((name, "1"));
    let date_ok = date.len() == 10
        && date.bytes().enumerate().all(|(i, b)| match i {
            4 | 7 => b == b'-',
            _ => b.is_ascii_digit(),
        });
    date_ok && !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit())
}

/// Where a day's name stands among the life's: its date, then its part (`2026-11-10.10`
/// after `2026-11-10.9`, which text order would put first).
pub fn day_order(name: &str) -> (&str, u64) {
    match name.split_once('.') {
        Some((date, part)) => (date, part.parse::<u64>().unwrap_or(u64::MAX)),
        None => (name, 0),
    }
}

/// A day a home may delete: its name checked, and not the life's open day `open`.
pub fn deletable<'a>(day: &'a str, open: Option<&str>) -> Result<&'a str, StoreError> {
    let day = checked(day)?;
    match open == Some(day) {
        true => Err(StoreError::Refused(format!(
            "the open day {day} is not deleted"
        ))),
        false => Ok(day),
    }
}

/// A day name checked, or [`StoreError::NoDay`].
pub fn checked(day: &str) -> Result<&str, StoreError> {
    match is_day_name(day) {
        true => Ok(day),
        false => Err(StoreError::NoDay(
            aura_contract::visible::visible(day)
                .chars()
                .take(40)
                .collect(),
        )),
    }
}

#[cfg(test)]
mod bench;
#[cfg(test)]
mod earlier;

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU64, Ordering};

    use super::{FileHome, MemoryHome, suite};

    #[tokio::test]
    async fn the_memory_home_passes_the_suite() {
        suite::conformance(MemoryHome::new).await;
    }

    #[tokio::test]
    async fn a_working_copy_over_the_memory_home_passes_the_suite() {
        let root = std::env::temp_dir().join(format!("aura-store-working-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let n = AtomicU64::new(0);
        suite::conformance(|| super::WorkingHome {
            home: MemoryHome::new(),
            work: root.join(n.fetch_add(1, Ordering::Relaxed).to_string()),
        })
        .await;
        let _ = std::fs::remove_dir_all(&root);
    }

    #[tokio::test]
    async fn the_files_home_passes_the_suite() {
        let root = std::env::temp_dir().join(format!("aura-store-files-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let n = AtomicU64::new(0);
        suite::conformance(|| FileHome {
            path: root.join(n.fetch_add(1, Ordering::Relaxed).to_string()),
        })
        .await;
        let _ = std::fs::remove_dir_all(&root);
    }
}
