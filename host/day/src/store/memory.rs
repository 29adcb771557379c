//! The memory home: a life held in memory, for the deterministic simulation and the model
//! check, under the same contract and suite as the others.
//!
//! It owns a [`MemoryHome`] (what a disk would hold: the life, its days, what was set aside,
//! and who holds it), shared by its clones, and [`MemoryStore`], one opener's hold of it.
//! Each write asks the home's [`StorageFaults`] at the steps a file's write has, named as the
//! files home names them (`signals.jsonl`, `life.json`, `days/<day>`), and takes effect where
//! a file's write would survive a killed process: an append once its bytes are written (before
//! its sync), a replacement once renamed into place (after its sync). A fault that fails a
//! step before that leaves nothing; a failed append stops the day's journal until the life
//! is opened again, as the files home does. It must not decide anything a life does.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::Value;

use aura_host::journal::{
    QUARANTINE_PATH, StorageFault, StorageFaults, StoragePoint, StorageStep, TRACES_PATH,
};

use super::files::{DAYS_DIR, LIFE_PATH, RECORD_PATH};
use super::{
    Appended, BlockingStore, DayLog, LifeState, ReadPosition, StoreError, canonical, checked,
    day_order, fault_error, ids_of, positions_of, sort_out, step_error,
};
use crate::checkpoint::{CHECKPOINT_PATH, LIVE_SETUP_PATH};
use crate::logs::{DELIVERIES_PATH, NARRATIONS_PATH, SIGNALS_PATH};

/// One day as the home holds it.
#[derive(Debug, Clone, Default)]
struct Day {
    setup: Option<Value>,
    /// Its journal, read positions' lines among the signals' (as the files home writes it).
    journal: Vec<String>,
    /// The ids of its journal's lines, each with its line.
    ids: HashMap<String, String>,
    logs: BTreeMap<DayLog, Vec<String>>,
    record: Option<Value>,
    checkpoint: Option<Vec<u8>>,
}

impl Day {
    /// Appends `lines` to the journal (`keep`), or withdraws them (the last `lines.len()`).
    fn journal(&mut self, lines: &[String], keep: bool) {
        match keep {
            true => {
                self.ids.extend(ids_of(lines));
                self.journal.extend(lines.iter().cloned());
            }
            false => {
                for id in ids_of(lines).keys() {
                    self.ids.remove(id);
                }
                self.journal.truncate(self.journal.len() - lines.len());
            }
        }
    }
}

/// What the home holds.
#[derive(Debug, Default)]
struct Disk {
    held: bool,
    life: Option<LifeState>,
    days: BTreeMap<String, Day>,
    /// Days a deletion renamed aside and did not remove (a kill in between).
    deleting: Vec<String>,
    /// Lives set aside, oldest first.
    aside: Vec<(Option<LifeState>, BTreeMap<String, Day>)>,
    /// Writes of each path, for [`StoragePoint::ordinal`] (counted per opening, as the files
    /// home's journals count them).
    writes: HashMap<String, u64>,
}

/// A life's home in memory, shared by its clones (what a disk is to the files home).
#[derive(Debug, Clone, Default)]
pub struct MemoryHome {
    disk: Arc<Mutex<Disk>>,
    faults: Option<Arc<dyn StorageFaults>>,
}

/// One opener's hold of a [`MemoryHome`]: let go when dropped.
#[derive(Debug)]
pub struct MemoryStore {
    home: MemoryHome,
    /// An append failed: the day's journal writes nothing more until the life is opened again.
    stopped: super::Stop,
}

impl MemoryHome {
    /// An empty home.
    pub fn new() -> Self {
        Self::default()
    }

    /// This home with every write open to `faults`.
    pub fn with_faults(&self, faults: Option<Arc<dyn StorageFaults>>) -> Self {
        Self {
            disk: self.disk.clone(),
            faults,
        }
    }

    /// Opens the life for this opener alone (a second opener: [`StoreError::Busy`]); finishes
    /// what a crash cut short (a deletion, a rollover not committed).
    pub fn open(&self) -> Result<MemoryStore, StoreError> {
        let mut disk = self.disk.lock().unwrap_or_else(|p| p.into_inner());
        if disk.held {
            return Err(StoreError::Busy);
        }
        // A deletion a kill cut short: the day was aside, gone.
        for day in std::mem::take(&mut disk.deleting) {
            disk.days.remove(&day);
        }
        disk.writes.clear();
        match disk.life.clone() {
            Some(state) => disk
                .days
                .retain(|name, _| day_order(name) <= day_order(&state.open)),
            None => {
                let days: Vec<&Day> = disk.days.values().collect();
                match days.as_slice() {
                    [] => {}
                    [first] if first.record.is_none() => disk.days.clear(),
                    _ => {
                        return Err(StoreError::Damaged(
                            "the home holds days but no life".to_owned(),
                        ));
                    }
                }
            }
        }
        // A day begun and not whole (a kill before its setup was in place) is not a day.
        disk.days.retain(|_, day| day.setup.is_some());
        disk.held = true;
        drop(disk);
        Ok(MemoryStore {
            home: self.clone(),
            stopped: super::Stop::default(),
        })
    }

    /// Whether an opener holds the life now.
    pub fn held(&self) -> bool {
        self.disk.lock().unwrap_or_else(|p| p.into_inner()).held
    }
}

impl super::Home for MemoryHome {
    fn open(
        &self,
        faults: Option<Arc<dyn StorageFaults>>,
    ) -> super::Step<'_, Box<dyn super::LifeStore>> {
        Box::pin(async move {
            // The opener's faults, else the home's own (a simulation's home given to a
            // session, which names none).
            let faults = faults.or_else(|| self.faults.clone());
            let store: Box<dyn super::LifeStore> = Box::new(self.with_faults(faults).open()?);
            Ok(store)
        })
    }
}

impl Drop for MemoryStore {
    fn drop(&mut self) {
        self.disk().held = false;
    }
}

/// The path the files home writes `log` to.
fn log_path(log: DayLog) -> &'static str {
    match log {
        DayLog::Traces => TRACES_PATH,
        DayLog::Quarantine => QUARANTINE_PATH,
        DayLog::Deliveries => DELIVERIES_PATH,
        DayLog::Narrations => NARRATIONS_PATH,
    }
}

impl MemoryStore {
    fn disk(&self) -> MutexGuard<'_, Disk> {
        self.home.disk.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Asks the faults at `step` of the write of `path` numbered `ordinal`.
    fn at(&self, path: &str, step: StorageStep, ordinal: u64) -> Option<StorageFault> {
        self.home.faults.as_ref()?.at(StoragePoint {
            path,
            step,
            ordinal,
        })
    }

    fn ordinal(&self, key: &str) -> u64 {
        let mut disk = self.disk();
        let count = disk.writes.entry(key.to_owned()).or_default();
        *count += 1;
        *count - 1
    }

    /// A replacement of `path` (counted under `key`): `apply` once renamed into place.
    fn replace(
        &self,
        path: &'static str,
        key: &str,
        apply: impl FnOnce(&mut Disk),
    ) -> Result<(), StoreError> {
        let ordinal = self.ordinal(key);
        for step in [StorageStep::Write, StorageStep::Sync] {
            if let Some(error) = fault_error(self.at(path, step, ordinal)) {
                return Err(step_error(path, error));
            }
        }
        apply(&mut self.disk());
        if let Some(error) = fault_error(self.at(path, StorageStep::Synced, ordinal)) {
            return Err(step_error(path, error));
        }
        let _ = self.at(path, StorageStep::Done, ordinal);
        Ok(())
    }

    /// An append to `path` (counted under `key`): `apply` once written; a failure before the
    /// write or at the sync stops the day's journal (a failed sync's record withdrawn).
    fn append_step(
        &self,
        path: &'static str,
        key: &str,
        apply: impl Fn(&mut Disk, bool),
    ) -> Result<(), StoreError> {
        self.stopped.check()?;
        let ordinal = self.ordinal(key);
        let stop = |error: std::io::Error| self.stopped.stop(step_error(path, error));
        if let Some(error) = fault_error(self.at(path, StorageStep::Write, ordinal)) {
            return Err(stop(error));
        }
        apply(&mut self.disk(), true);
        if let Some(error) = fault_error(self.at(path, StorageStep::Sync, ordinal)) {
            // Withdrawn, as the files home withdraws a record whose sync failed.
            apply(&mut self.disk(), false);
            return Err(stop(error));
        }
        let _ = self.at(path, StorageStep::Synced, ordinal);
        let _ = self.at(path, StorageStep::Done, ordinal);
        Ok(())
    }

    fn with_day<T>(&self, day: &str, read: impl FnOnce(&Day) -> T) -> Result<T, StoreError> {
        let day = checked(day)?;
        let disk = self.disk();
        disk.days
            .get(day)
            .map(read)
            .ok_or_else(|| StoreError::NoDay(day.to_owned()))
    }
}

impl BlockingStore for MemoryStore {
    fn life(&self) -> Result<Option<LifeState>, StoreError> {
        Ok(self.disk().life.clone())
    }

    fn commit(&self, state: &LifeState) -> Result<(), StoreError> {
        let open = checked(&state.open)?.to_owned();
        if !self.disk().days.contains_key(&open) {
            return Err(StoreError::NoDay(open));
        }
        let mut state = state.clone();
        state.positions = self.positions()?;
        self.replace(LIFE_PATH, LIFE_PATH, |disk| disk.life = Some(state))
    }

    fn set_aside(&self) -> Result<(), StoreError> {
        let mut disk = self.disk();
        let life = disk.life.take();
        let days = std::mem::take(&mut disk.days);
        disk.aside.push((life, days));
        Ok(())
    }

    fn days(&self) -> Result<Vec<String>, StoreError> {
        let disk = self.disk();
        let mut names: Vec<String> = disk
            .days
            .keys()
            .filter(|name| !disk.deleting.contains(name))
            .cloned()
            .collect();
        names.sort_by(|a, b| day_order(a).cmp(&day_order(b)));
        Ok(names)
    }

    fn begin_day(&self, day: &str, setup: &Value, lines: &[Value]) -> Result<(), StoreError> {
        let day = checked(day)?.to_owned();
        self.delete_day(&day)?;
        let setup = setup.clone();
        let texts = lines.iter().map(canonical).collect::<Result<Vec<_>, _>>()?;
        let key = format!("{DAYS_DIR}/{day}/{LIVE_SETUP_PATH}");
        self.replace(LIVE_SETUP_PATH, &key, |disk| {
            disk.days.insert(
                day.clone(),
                Day {
                    setup: Some(setup),
                    ..Day::default()
                },
            );
        })?;
        if texts.is_empty() {
            return Ok(());
        }
        let key = format!("{DAYS_DIR}/{day}/{SIGNALS_PATH}");
        self.append_step(SIGNALS_PATH, &key, |disk, keep| {
            if let Some(held) = disk.days.get_mut(&day) {
                held.journal(&texts, keep);
            }
        })
    }

    fn setup(&self, day: &str) -> Result<Value, StoreError> {
        self.with_day(day, |day| day.setup.clone().unwrap_or_default())
    }

    fn delete_day(&self, day: &str) -> Result<(), StoreError> {
        let open = self.disk().life.as_ref().map(|life| life.open.clone());
        let day = super::deletable(day, open.as_deref())?.to_owned();
        if !self.disk().days.contains_key(&day) {
            return Ok(());
        }
        let path = format!("{DAYS_DIR}/{day}");
        if let Some(error) = fault_error(self.at(&path, StorageStep::Write, 0)) {
            return Err(step_error(&path, error));
        }
        self.disk().deleting.push(day.clone());
        if let Some(error) = fault_error(self.at(&path, StorageStep::Synced, 0)) {
            return Err(step_error(&path, error));
        }
        let mut disk = self.disk();
        disk.days.remove(&day);
        disk.deleting.retain(|name| *name != day);
        drop(disk);
        let _ = self.at(&path, StorageStep::Done, 0);
        Ok(())
    }

    fn append(
        &self,
        day: &str,
        lines: &[Value],
        positions: &[ReadPosition],
    ) -> Result<Vec<Appended>, StoreError> {
        let kept = match positions.is_empty() {
            true => BTreeMap::new(),
            false => self.positions()?,
        };
        let open = self.disk().life.as_ref().map(|life| life.open.clone());
        let sorted = self.with_day(day, |held| {
            sort_out((day, open.as_deref()), &held.ids, &kept, lines, positions)
        })??;
        let answers = sorted.answers;
        let written = sorted
            .written
            .iter()
            .map(canonical)
            .collect::<Result<Vec<_>, _>>()?;
        if written.is_empty() {
            return Ok(answers);
        }
        let key = format!("{DAYS_DIR}/{day}/{SIGNALS_PATH}");
        self.append_step(SIGNALS_PATH, &key, |disk, keep| {
            if let Some(held) = disk.days.get_mut(day) {
                held.journal(&written, keep);
            }
        })?;
        Ok(answers)
    }

    fn lines(&self, day: &str) -> Result<Vec<String>, StoreError> {
        self.with_day(day, |day| {
            day.journal
                .iter()
                .filter(|line| positions_of(line).is_none())
                .cloned()
                .collect()
        })
    }

    fn positions(&self) -> Result<BTreeMap<String, String>, StoreError> {
        let disk = self.disk();
        let Some(life) = disk.life.as_ref() else {
            return Ok(BTreeMap::new());
        };
        let journal = disk.days.get(&life.open).map(|open| &open.journal[..]);
        Ok(super::positions_after(
            life.positions.clone(),
            journal.unwrap_or_default(),
        ))
    }

    fn put_record(&self, day: &str, record: &Value) -> Result<(), StoreError> {
        self.with_day(day, |_| ())?;
        let key = format!("{DAYS_DIR}/{day}/{RECORD_PATH}");
        let record = record.clone();
        self.replace(RECORD_PATH, &key, |disk| {
            if let Some(held) = disk.days.get_mut(day) {
                held.record = Some(record);
            }
        })
    }

    fn record(&self, day: &str) -> Result<Option<Value>, StoreError> {
        self.with_day(day, |day| day.record.clone())
    }

    fn append_log(&self, day: &str, log: DayLog, record: &Value) -> Result<(), StoreError> {
        self.with_day(day, |_| ())?;
        let text = canonical(record)?;
        let path = log_path(log);
        let key = format!("{DAYS_DIR}/{day}/{path}");
        self.append_step(path, &key, |disk, keep| {
            if let Some(held) = disk.days.get_mut(day) {
                let lines = held.logs.entry(log).or_default();
                match keep {
                    true => lines.push(text.clone()),
                    false => {
                        lines.pop();
                    }
                }
            }
        })
    }

    fn log(&self, day: &str, log: DayLog) -> Result<Vec<String>, StoreError> {
        self.with_day(day, |day| day.logs.get(&log).cloned().unwrap_or_default())
    }

    fn put_checkpoint(&self, day: &str, bytes: &[u8]) -> Result<(), StoreError> {
        self.with_day(day, |_| ())?;
        let key = format!("{DAYS_DIR}/{day}/{CHECKPOINT_PATH}");
        let bytes = bytes.to_vec();
        self.replace(CHECKPOINT_PATH, &key, |disk| {
            if let Some(held) = disk.days.get_mut(day) {
                held.checkpoint = Some(bytes);
            }
        })
    }

    fn checkpoint(&self, day: &str) -> Result<Option<Vec<u8>>, StoreError> {
        self.with_day(day, |day| day.checkpoint.clone())
    }
}
