//! The files home: a life in a data dir, as a phone's app container or a desktop's disk holds
//! it, written through the host's journal (each write synced before it returns, each file
//! replaced whole by a synced rename, a torn tail repaired at open).
//!
//! It owns the layout: `<data-dir>/life.json` (where the life stands), `<data-dir>/days/<day>/`
//! a day each (`live.json` its setup, `signals.jsonl` its journal, `day.json` its record once
//! closed, `run.json` its checkpoint, `traces.jsonl`, `errors/quarantine_calls.jsonl`,
//! `deliveries.jsonl`, `narrations.jsonl`), the run lock (`run.lock`) that makes one opener
//! hold the life, and `life.<n>.json` with `days.<n>/` where a life is set aside. A read
//! position is a line of its own in the day's journal, `{"read_positions":{..}}`, written in
//! the same write as the signals it follows (one write, one fsync), and never handed out as a
//! signal. It must not decide anything a life does (see [`super`]'s contract).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde_json::Value;

use aura_contract::canonical::{parse_i_json, to_canonical_string};
use aura_contract::limits::{CHECKPOINT_BYTES_MAX, LIFE_STATE_BYTES_MAX, SCENARIO_BYTES_MAX};
use aura_host::journal::{
    Journal, JournalError, QUARANTINE_PATH, RunLock, StorageFaults, TRACES_PATH,
};

use super::{
    Appended, BlockingStore, DayLog, LIFE_FORMAT, LifeState, ReadPosition, Sorted, StoreError,
    checked, day_order, ids_of, is_day_name, positions_of, sort_out,
};
use crate::checkpoint::{CHECKPOINT_PATH, LIVE_SETUP_PATH};
use crate::logs::{DELIVERIES_PATH, NARRATIONS_PATH, RunLogs, SIGNALS_PATH};

/// Where the life stands, relative to the data dir.
pub const LIFE_PATH: &str = "life.json";
/// The days, relative to the data dir: one directory each.
pub const DAYS_DIR: &str = "days";
/// A closed day's record, in its directory: the scenario `aura run` runs to its traces.
pub const RECORD_PATH: &str = "day.json";

/// A data dir that keeps a life.
#[derive(Debug, Clone)]
pub struct FileHome {
    /// The data dir.
    pub path: PathBuf,
}

impl super::Home for FileHome {
    fn open(
        &self,
        faults: Option<Arc<dyn StorageFaults>>,
    ) -> super::Step<'_, Box<dyn super::LifeStore>> {
        Box::pin(async move {
            let store: Box<dyn super::LifeStore> = Box::new(FileStore::open(&self.path, faults)?);
            Ok(store)
        })
    }
}

/// A life in a data dir.
#[derive(Debug)]
pub struct FileStore {
    /// The data dir's own journal (life.json, the days' deletions).
    root: Journal,
    path: PathBuf,
    /// No other opener holds the life meanwhile.
    _lock: RunLock,
    /// Where the life stands, as last read or committed.
    state: Mutex<Option<LifeState>>,
    /// The days' journals opened so far (the open day's is the one the session's host
    /// writes its traces and quarantine through).
    journals: Mutex<BTreeMap<String, Arc<Journal>>>,
    /// The ids of each day appended to, with their lines, once read.
    ids: Mutex<BTreeMap<String, HashMap<String, String>>>,
    /// The read positions as they stand, once read.
    read: Mutex<Option<BTreeMap<String, String>>>,
}

fn damaged(what: &str, why: impl std::fmt::Display) -> StoreError {
    StoreError::Damaged(format!("{what}: {why}"))
}

fn canonical(value: &Value) -> Result<String, StoreError> {
    to_canonical_string(value).map_err(|e| StoreError::Refused(e.to_string()))
}

fn io(path: &Path, source: std::io::Error) -> StoreError {
    StoreError::Journal(JournalError::Open {
        path: path.display().to_string(),
        source,
    })
}

/// Where the life in `data_dir` stands, if it holds one: read as it is, without holding the
/// life (`aura report` beside a running session).
pub fn read_life(data_dir: &Path) -> Result<Option<LifeState>, StoreError> {
    let Some(bytes) = read_bounded(&data_dir.join(LIFE_PATH), LIFE_STATE_BYTES_MAX)? else {
        return Ok(None);
    };
    let text = String::from_utf8(bytes).map_err(|e| damaged(LIFE_PATH, e))?;
    let value = parse_i_json(&text, LIFE_STATE_BYTES_MAX).map_err(|e| damaged(LIFE_PATH, e))?;
    let state: LifeState = serde_json::from_value(value).map_err(|e| damaged(LIFE_PATH, e))?;
    if state.format != LIFE_FORMAT || !is_day_name(&state.open) {
        return Err(damaged(
            LIFE_PATH,
            format!("format `{}`, open day `{}`", state.format, state.open),
        ));
    }
    Ok(Some(state))
}

/// The file at `path`, if it is there: at most `max` bytes (one more says it is larger).
fn read_bounded(path: &Path, max: usize) -> Result<Option<Vec<u8>>, StoreError> {
    use std::io::Read;
    let mut bytes = Vec::new();
    match std::fs::File::open(path) {
        Ok(file) => file
            .take(max as u64 + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| io(path, e))?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io(path, e)),
    };
    Ok(Some(bytes))
}

/// Each source's read position in `data_dir`'s life as it stands on disk, read without
/// holding the life (`aura live --positions`): what its state carried into the open day, moved
/// by the open day's durable journal lines (a torn last line is not one).
pub fn positions_in(data_dir: &Path) -> Result<BTreeMap<String, String>, StoreError> {
    let Some(state) = read_life(data_dir)? else {
        return Ok(BTreeMap::new());
    };
    let path = data_dir.join(DAYS_DIR).join(&state.open).join(SIGNALS_PATH);
    let bytes = read_bounded(&path, SCENARIO_BYTES_MAX)?.unwrap_or_default();
    if bytes.len() > SCENARIO_BYTES_MAX {
        return Err(damaged(SIGNALS_PATH, "larger than a day's journal is"));
    }
    let text = String::from_utf8_lossy(&bytes);
    let whole = text.rsplit_once('\n').map_or("", |(whole, _)| whole);
    let lines: Vec<String> = whole.lines().map(str::to_owned).collect();
    Ok(super::positions_after(state.positions, &lines))
}

/// The days in `data_dir`, in the life's order (none being deleted): read as they are,
/// without holding the life.
pub fn days_in(data_dir: &Path) -> Result<Vec<String>, StoreError> {
    let dir = data_dir.join(DAYS_DIR);
    let entries = match std::fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io(&dir, e)),
    };
    let mut names = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| io(&dir, e))?;
        if let Some(name) = entry.file_name().to_str()
            && is_day_name(name)
        {
            names.push(name.to_owned());
        }
    }
    names.sort_by(|a, b| day_order(a).cmp(&day_order(b)));
    Ok(names)
}

/// The signals' lines of a day's journal (`journal`, the day dir's), oldest first: its read
/// positions' lines left out.
pub fn signal_lines(journal: &Journal) -> Result<Vec<String>, JournalError> {
    journal.open_live()?;
    let mut lines = journal.lines(SIGNALS_PATH, 0, SCENARIO_BYTES_MAX as u64)?;
    lines.retain(|line| positions_of(line).is_none());
    Ok(lines)
}

impl FileStore {
    /// Opens the life in `data_dir` for this opener alone (a second opener: [`StoreError::Busy`]),
    /// every write open to `faults`; finishes what a crash cut short (a deletion, a rollover
    /// not committed).
    pub fn open(
        data_dir: &Path,
        faults: Option<Arc<dyn StorageFaults>>,
    ) -> Result<Self, StoreError> {
        Self::on(Journal::open_with(data_dir, faults)?)
    }

    /// Opens the life in the data dir of `journal` (a host's), its writes open to the same
    /// faults and its quarantine records naming the same person.
    pub fn beside(journal: &Journal) -> Result<Self, StoreError> {
        Self::on(journal.beside(journal.path())?)
    }

    fn on(root: Journal) -> Result<Self, StoreError> {
        let lock = root.lock_run()?;
        let path = root.path().to_path_buf();
        if root.exists(LIVE_SETUP_PATH) && !root.exists(LIFE_PATH) {
            return Err(StoreError::Damaged(format!(
                "this data dir holds a live session of an earlier aura ({LIVE_SETUP_PATH} with no days): start the life in a new data dir"
            )));
        }
        // What an interrupted deletion left aside.
        root.remove_aside(DAYS_DIR)?;
        let store = Self {
            root,
            path,
            _lock: lock,
            state: Mutex::new(None),
            journals: Mutex::default(),
            ids: Mutex::default(),
            read: Mutex::default(),
        };
        let state = store.read_state()?;
        let days = store.days()?;
        match &state {
            // A day a rollover began and did not commit holds nothing acknowledged.
            Some(state) => {
                for name in days {
                    if day_order(&name) > day_order(&state.open) {
                        store.delete_day(&name)?;
                    }
                }
            }
            // The first day begun and never committed.
            None => match days.as_slice() {
                [] => {}
                [first] if !store.day_dir(first).join(RECORD_PATH).exists() => {
                    store.delete_day(first)?
                }
                _ => {
                    return Err(StoreError::Damaged(format!(
                        "{} holds days but no {LIFE_PATH}",
                        store.path.display()
                    )));
                }
            },
        }
        *store.state.lock().unwrap_or_else(|p| p.into_inner()) = state;
        Ok(store)
    }

    /// Where the data dir is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Where the day `day`'s directory is.
    pub fn day_dir(&self, day: &str) -> PathBuf {
        self.path.join(DAYS_DIR).join(day)
    }

    /// The day's journal, shared with whoever writes the day through it (the session's host
    /// on the open day: its traces and quarantine go to the same files).
    pub fn day_journal(&self, day: &str) -> Result<Arc<Journal>, StoreError> {
        let day = checked(day)?;
        let mut journals = self.journals.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(journal) = journals.get(day) {
            return Ok(journal.clone());
        }
        if !self.day_dir(day).join(LIVE_SETUP_PATH).exists() {
            return Err(StoreError::NoDay(day.to_owned()));
        }
        let journal = Arc::new(self.root.beside(&self.day_dir(day))?);
        journal.open_live()?;
        journals.insert(day.to_owned(), journal.clone());
        Ok(journal)
    }

    /// How many bytes the day's log `log` holds (a working copy ships what is past what it
    /// shipped, and reads nothing when that did not change).
    pub fn log_bytes(&self, day: &str, log: DayLog) -> Result<u64, StoreError> {
        let journal = self.day_journal(day)?;
        if log == DayLog::Narrations {
            journal.open_narrations()?;
        }
        Ok(journal.log_bytes(Self::log_path(log))?)
    }

    /// Whether the data dir holds the day `day` (begun, whether or not committed).
    pub fn holds(&self, day: &str) -> bool {
        checked(day).is_ok() && self.day_dir(day).join(LIVE_SETUP_PATH).exists()
    }

    /// Deletes the life the data dir holds, and every life set aside in it: what a working
    /// copy does with itself before it is made again from the home it copies (a copy is
    /// never the only place a life is kept, so nothing is lost).
    pub fn discard(&self) -> Result<(), StoreError> {
        let entries = std::fs::read_dir(&self.path).map_err(|e| io(&self.path, e))?;
        for entry in entries {
            let entry = entry.map_err(|e| io(&self.path, e))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let numbered = |prefix: &str, suffix: &str| {
                name.strip_prefix(prefix)
                    .and_then(|rest| rest.strip_suffix(suffix))
                    .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
            };
            let path = entry.path();
            let removed = match () {
                _ if name == DAYS_DIR || numbered("days.", "") => std::fs::remove_dir_all(&path),
                _ if name == LIFE_PATH || numbered("life.", ".json") => std::fs::remove_file(&path),
                _ => continue,
            };
            removed.map_err(|e| io(&path, e))?;
        }
        std::fs::File::open(&self.path)
            .and_then(|dir| dir.sync_all())
            .map_err(|e| io(&self.path, e))?;
        self.forget_life();
        Ok(())
    }

    fn read_state(&self) -> Result<Option<LifeState>, StoreError> {
        read_life(&self.path)
    }

    fn open_day(&self) -> Option<String> {
        let state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        state.as_ref().map(|state| state.open.clone())
    }

    /// Forgets what it keeps of days other than `open`.
    fn forget_all_but(&self, open: &str) {
        self.journals
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .retain(|day, _| day == open);
        self.ids
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .retain(|day, _| day == open);
    }

    /// Forgets all it keeps of the life (set aside, or discarded).
    fn forget_life(&self) {
        self.forget_all_but("");
        *self.read.lock().unwrap_or_else(|p| p.into_inner()) = None;
        *self.state.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }

    fn forget(&self, day: &str) {
        self.journals
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(day);
        self.ids
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(day);
    }

    fn sync_days(&self) -> Result<(), StoreError> {
        let days = self.path.join(DAYS_DIR);
        std::fs::File::open(&days)
            .and_then(|dir| dir.sync_all())
            .map_err(|e| io(&days, e))
    }

    fn log_path(log: DayLog) -> &'static str {
        match log {
            DayLog::Traces => TRACES_PATH,
            DayLog::Quarantine => QUARANTINE_PATH,
            DayLog::Deliveries => DELIVERIES_PATH,
            DayLog::Narrations => NARRATIONS_PATH,
        }
    }
}

impl BlockingStore for FileStore {
    fn life(&self) -> Result<Option<LifeState>, StoreError> {
        Ok(self.state.lock().unwrap_or_else(|p| p.into_inner()).clone())
    }

    fn commit(&self, state: &LifeState) -> Result<(), StoreError> {
        let open = checked(&state.open)?;
        if !self.day_dir(open).join(LIVE_SETUP_PATH).exists() {
            return Err(StoreError::NoDay(open.to_owned()));
        }
        let mut state = state.clone();
        state.positions = self.positions()?;
        // Strings, integers and a map of strings: always serializes.
        let value = serde_json::to_value(&state).unwrap_or_default();
        self.root
            .replace_file(LIFE_PATH, canonical(&value)?.as_bytes())?;
        self.forget_all_but(&state.open);
        *self.read.lock().unwrap_or_else(|p| p.into_inner()) = Some(state.positions.clone());
        *self.state.lock().unwrap_or_else(|p| p.into_inner()) = Some(state);
        Ok(())
    }

    fn set_aside(&self) -> Result<(), StoreError> {
        let path = &self.path;
        let n = (1..)
            .find(|n| {
                !path.join(format!("life.{n}.json")).exists()
                    && !path.join(format!("{DAYS_DIR}.{n}")).exists()
            })
            .unwrap_or(u32::MAX);
        let days = path.join(DAYS_DIR);
        if days.exists() {
            std::fs::rename(&days, path.join(format!("{DAYS_DIR}.{n}")))
                .map_err(|e| io(&days, e))?;
        }
        let life = path.join(LIFE_PATH);
        if life.exists() {
            std::fs::rename(&life, path.join(format!("life.{n}.json")))
                .map_err(|e| io(&life, e))?;
        }
        std::fs::File::open(path)
            .and_then(|dir| dir.sync_all())
            .map_err(|e| io(path, e))?;
        tracing::warn!(n, "the data dir's life was set aside");
        self.forget_life();
        Ok(())
    }

    fn days(&self) -> Result<Vec<String>, StoreError> {
        days_in(&self.path)
    }

    fn begin_day(&self, day: &str, setup: &Value, lines: &[Value]) -> Result<(), StoreError> {
        let day = checked(day)?;
        self.delete_day(day)?;
        let dir = self.day_dir(day);
        let journal = Arc::new(self.root.beside(&dir)?);
        journal.replace_file(LIVE_SETUP_PATH, canonical(setup)?.as_bytes())?;
        journal.open_live()?;
        if !lines.is_empty() {
            journal.signals(lines)?;
        }
        self.sync_days()?;
        // The day's journal, kept: the session writes the day through it once it is open.
        self.journals
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(day.to_owned(), journal);
        Ok(())
    }

    fn setup(&self, day: &str) -> Result<Value, StoreError> {
        let journal = self.day_journal(day)?;
        let bytes = journal
            .read_file(LIVE_SETUP_PATH, SCENARIO_BYTES_MAX as u64)?
            .ok_or_else(|| StoreError::NoDay(day.to_owned()))?;
        let text = String::from_utf8(bytes).map_err(|e| damaged(LIVE_SETUP_PATH, e))?;
        parse_i_json(&text, SCENARIO_BYTES_MAX).map_err(|e| damaged(LIVE_SETUP_PATH, e))
    }

    fn delete_day(&self, day: &str) -> Result<(), StoreError> {
        let day = super::deletable(day, self.open_day().as_deref())?;
        self.forget(day);
        self.root.remove_dir_whole(&format!("{DAYS_DIR}/{day}"))?;
        Ok(())
    }

    fn append(
        &self,
        day: &str,
        lines: &[Value],
        positions: &[ReadPosition],
    ) -> Result<Vec<Appended>, StoreError> {
        let journal = self.day_journal(day)?;
        let kept = match positions.is_empty() {
            true => BTreeMap::new(),
            false => self.positions()?,
        };
        let mut ids = self.ids.lock().unwrap_or_else(|p| p.into_inner());
        if !ids.contains_key(day) {
            ids.insert(day.to_owned(), ids_of(&self.lines(day)?));
        }
        let known = ids.get_mut(day).expect("inserted above");
        let open = self.open_day();
        let Sorted {
            answers,
            written,
            new_ids,
        } = sort_out((day, open.as_deref()), known, &kept, lines, positions)?;
        if written.is_empty() {
            return Ok(answers);
        }
        // (A failed write is withdrawn from the file: its ids are not the day's.)
        journal.signals(&written)?;
        known.extend(new_ids);
        if let Some(kept) = self.read.lock().unwrap_or_else(|p| p.into_inner()).as_mut() {
            for moved in positions {
                kept.insert(moved.source.clone(), moved.position.clone());
            }
        }
        Ok(answers)
    }

    fn lines(&self, day: &str) -> Result<Vec<String>, StoreError> {
        let journal = self.day_journal(day)?;
        Ok(signal_lines(&journal)?)
    }

    fn positions(&self) -> Result<BTreeMap<String, String>, StoreError> {
        let mut read = self.read.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(positions) = read.as_ref() {
            return Ok(positions.clone());
        }
        let (carried, open) = {
            let state = self.state.lock().unwrap_or_else(|p| p.into_inner());
            match state.as_ref() {
                Some(state) => (state.positions.clone(), state.open.clone()),
                None => return Ok(BTreeMap::new()),
            }
        };
        let journal = self.day_journal(&open)?;
        let lines = journal.lines(SIGNALS_PATH, 0, SCENARIO_BYTES_MAX as u64)?;
        let positions = super::positions_after(carried, &lines);
        *read = Some(positions.clone());
        Ok(positions)
    }

    fn put_record(&self, day: &str, record: &Value) -> Result<(), StoreError> {
        let journal = self.day_journal(day)?;
        Ok(journal.replace_file(RECORD_PATH, canonical(record)?.as_bytes())?)
    }

    fn record(&self, day: &str) -> Result<Option<Value>, StoreError> {
        let journal = self.day_journal(day)?;
        let Some(bytes) = journal.read_file(RECORD_PATH, SCENARIO_BYTES_MAX as u64)? else {
            return Ok(None);
        };
        let text = String::from_utf8(bytes).map_err(|e| damaged(RECORD_PATH, e))?;
        let value = parse_i_json(&text, SCENARIO_BYTES_MAX).map_err(|e| damaged(RECORD_PATH, e))?;
        Ok(Some(value))
    }

    fn append_log(&self, day: &str, log: DayLog, record: &Value) -> Result<(), StoreError> {
        let journal = self.day_journal(day)?;
        match log {
            DayLog::Traces => journal.trace(record)?,
            DayLog::Quarantine => journal.quarantine_value(record)?,
            DayLog::Deliveries => journal.delivery(record)?,
            DayLog::Narrations => {
                journal.open_narrations()?;
                journal.narration(record)?
            }
        };
        Ok(())
    }

    fn log(&self, day: &str, log: DayLog) -> Result<Vec<String>, StoreError> {
        let journal = self.day_journal(day)?;
        if log == DayLog::Narrations {
            journal.open_narrations()?;
        }
        Ok(journal.lines(Self::log_path(log), 0, SCENARIO_BYTES_MAX as u64)?)
    }

    fn put_checkpoint(&self, day: &str, bytes: &[u8]) -> Result<(), StoreError> {
        Ok(self
            .day_journal(day)?
            .replace_file(CHECKPOINT_PATH, bytes)?)
    }

    fn checkpoint(&self, day: &str) -> Result<Option<Vec<u8>>, StoreError> {
        Ok(self
            .day_journal(day)?
            .read_file(CHECKPOINT_PATH, CHECKPOINT_BYTES_MAX)?)
    }
}
