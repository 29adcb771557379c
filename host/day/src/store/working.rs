//! A life's working copy: what a session runs on, whichever home keeps the life.
//!
//! A day's host writes its records (traces, quarantine, deliveries, narrations, the run's
//! checkpoint) into a data dir, synchronously, through the journal; a home over a network
//! answers futures. So a session runs on a [`WorkingCopy`]: the files home in its own data
//! dir, alone when the life is kept there, or as a cache of another home (JetStream's, the
//! memory home), made again from that home at each open. Every write through the copy goes to
//! the home first (durable there when it returns) and then into the cache; the records the
//! host wrote into the cache are copied to the home by [`WorkingCopy::ship`], which the
//! session calls before it answers a push, after each tick and before a day is closed. The
//! cache holds the open day and the day before it (the session reads both); older days are
//! read from the home.
//!
//! What a crash leaves, beyond the home's contract: records the host wrote and the session
//! had not yet shipped are not in the home. A resumed day runs again from the home's last
//! checkpoint over its journal and writes them again (live = replay), except what was handed
//! to a sink and not yet shipped, which is handed over again (at least once across a crash,
//! as the files home's deliveries are across a kill between a hand-over and its record).
//! It must not decide anything a life does, nor lay out files (the files home does).

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use serde_json::Value;
use sha2::{Digest, Sha256};

use aura_host::journal::Journal;

use super::{
    Appended, BlockingStore, DayLog, FileStore, LifeState, LifeStore, ReadPosition, Step,
    StoreError, day_order,
};

/// Every log of a day, in the order they are shipped.
const LOGS: [DayLog; 4] = [
    DayLog::Quarantine,
    DayLog::Traces,
    DayLog::Deliveries,
    DayLog::Narrations,
];

/// What of the cache's records the home holds.
#[derive(Debug, Default)]
struct Shipped {
    /// Lines of each day's log the home holds (the cache's first so many).
    logs: HashMap<(String, DayLog), usize>,
    /// The bytes of each day's log in the cache when it was last shipped.
    bytes: HashMap<(String, DayLog), u64>,
    /// The sha256 of each day's checkpoint as the home holds it.
    checkpoints: HashMap<String, [u8; 32]>,
}

impl Shipped {
    /// Forgets what it knew of the day `day` (begun again, or deleted).
    fn forget(&mut self, day: &str) {
        self.logs.retain(|(kept, _), _| kept != day);
        self.bytes.retain(|(kept, _), _| kept != day);
        self.checkpoints.remove(day);
    }
}

/// A life as a session runs on it: the files home, alone or as a cache of another home.
#[derive(Debug)]
pub struct WorkingCopy {
    work: FileStore,
    home: Option<Box<dyn LifeStore>>,
    shipped: tokio::sync::Mutex<Shipped>,
}

impl WorkingCopy {
    /// The life kept in `work`'s data dir itself.
    pub fn files(work: FileStore) -> Self {
        Self {
            work,
            home: None,
            shipped: Default::default(),
        }
    }

    /// The life `home` keeps (opened by this opener), copied into `work`'s data dir: what
    /// that dir held of a life is discarded first, then the open day and the day before it
    /// are copied whole (setup, journal, logs, record, checkpoint) and where the life stands.
    pub async fn over(home: Box<dyn LifeStore>, work: FileStore) -> Result<Self, StoreError> {
        work.discard()?;
        let mut shipped = Shipped::default();
        if let Some(state) = home.life().await? {
            let days = home.days().await?;
            let cached = days
                .iter()
                .filter(|day| Some(*day) == state.previous.as_ref() || **day == state.open);
            for day in cached {
                let setup = home.setup(day).await?;
                let lines = parsed(&home.lines(day).await?)?;
                BlockingStore::begin_day(&work, day, &setup, &lines)?;
                for log in LOGS {
                    let records = home.log(day, log).await?;
                    for record in parsed(&records)? {
                        BlockingStore::append_log(&work, day, log, &record)?;
                    }
                    shipped.logs.insert((day.clone(), log), records.len());
                }
                if let Some(record) = home.record(day).await? {
                    BlockingStore::put_record(&work, day, &record)?;
                }
                if let Some(bytes) = home.checkpoint(day).await? {
                    BlockingStore::put_checkpoint(&work, day, &bytes)?;
                    shipped.checkpoints.insert(day.clone(), sha256(&bytes));
                }
            }
            BlockingStore::commit(&work, &state)?;
        }
        Ok(Self {
            work,
            home: Some(home),
            shipped: tokio::sync::Mutex::new(shipped),
        })
    }

    /// The day's journal in the cache, shared with the day's host (its records go there,
    /// and to the home once shipped).
    pub fn day_journal(&self, day: &str) -> Result<Arc<Journal>, StoreError> {
        self.work.day_journal(day)
    }

    /// Copies what the host wrote into the day's logs and checkpoint since the last ship to
    /// the home (nothing for a life kept in the files alone): the logs in order, then the
    /// checkpoint, so the home never holds a checkpoint ahead of its logs.
    pub async fn ship(&self, day: &str) -> Result<(), StoreError> {
        self.shipping(day, true).await
    }

    /// Copies what the host wrote into the day's logs since the last ship to the home, not
    /// its checkpoint (a push writes none; the home's may stay behind its logs, never ahead).
    pub async fn ship_logs(&self, day: &str) -> Result<(), StoreError> {
        self.shipping(day, false).await
    }

    async fn shipping(&self, day: &str, checkpoint: bool) -> Result<(), StoreError> {
        let Some(home) = &self.home else {
            return Ok(());
        };
        let mut shipped = self.shipped.lock().await;
        if !self.work.holds(day) {
            return Ok(());
        }
        for log in LOGS {
            self.ship_log(home.as_ref(), &mut shipped, day, log).await?;
        }
        if !checkpoint {
            return Ok(());
        }
        if let Some(bytes) = BlockingStore::checkpoint(&self.work, day)? {
            let digest = sha256(&bytes);
            if shipped.checkpoints.get(day) != Some(&digest) {
                home.put_checkpoint(day, &bytes).await?;
                shipped.checkpoints.insert(day.to_owned(), digest);
            }
        }
        Ok(())
    }

    async fn ship_log(
        &self,
        home: &dyn LifeStore,
        shipped: &mut Shipped,
        day: &str,
        log: DayLog,
    ) -> Result<(), StoreError> {
        let key = (day.to_owned(), log);
        let bytes = self.work.log_bytes(day, log)?;
        if shipped.bytes.get(&key) == Some(&bytes) {
            return Ok(());
        }
        let lines = BlockingStore::log(&self.work, day, log)?;
        let done = shipped.logs.entry(key.clone()).or_insert(0);
        for line in lines.iter().skip(*done) {
            home.append_log(day, log, &parse(line)?).await?;
            *done += 1;
        }
        // (Lines the host wrote after `bytes` was read are shipped, and read again next time.)
        shipped.bytes.insert(key, bytes);
        Ok(())
    }

    /// The cache's days older than the day before `state`'s open one, deleted (the home
    /// keeps them).
    fn evict(&self, state: &LifeState) -> Result<(), StoreError> {
        let oldest = state.previous.as_deref().unwrap_or(&state.open);
        for day in BlockingStore::days(&self.work)? {
            if day_order(&day) < day_order(oldest) {
                BlockingStore::delete_day(&self.work, &day)?;
            }
        }
        Ok(())
    }

    /// Where a day is read from: the cache when it holds it, else the home.
    fn reads(&self, day: &str) -> Option<&dyn LifeStore> {
        match &self.home {
            Some(home) if !self.work.holds(day) => Some(home.as_ref()),
            _ => None,
        }
    }
}

fn sha256(bytes: &[u8]) -> [u8; 32] {
    Sha256::digest(bytes).into()
}

fn parse(line: &str) -> Result<Value, StoreError> {
    serde_json::from_str(line).map_err(|e| StoreError::Damaged(format!("a stored line: {e}")))
}

fn parsed(lines: &[String]) -> Result<Vec<Value>, StoreError> {
    lines.iter().map(|line| parse(line)).collect()
}

impl LifeStore for WorkingCopy {
    fn life(&self) -> Step<'_, Option<LifeState>> {
        Box::pin(async move {
            match &self.home {
                Some(home) => home.life().await,
                None => BlockingStore::life(&self.work),
            }
        })
    }

    fn commit<'a>(&'a self, state: &'a LifeState) -> Step<'a, ()> {
        Box::pin(async move {
            let Some(home) = &self.home else {
                return BlockingStore::commit(&self.work, state);
            };
            home.commit(state).await?;
            let committed = home.life().await?.unwrap_or_else(|| state.clone());
            BlockingStore::commit(&self.work, &committed)?;
            self.evict(&committed)
        })
    }

    fn set_aside(&self) -> Step<'_, ()> {
        Box::pin(async move {
            let Some(home) = &self.home else {
                return BlockingStore::set_aside(&self.work);
            };
            home.set_aside().await?;
            *self.shipped.lock().await = Shipped::default();
            self.work.discard()
        })
    }

    fn days(&self) -> Step<'_, Vec<String>> {
        Box::pin(async move {
            match &self.home {
                Some(home) => home.days().await,
                None => BlockingStore::days(&self.work),
            }
        })
    }

    fn begin_day<'a>(&'a self, day: &'a str, setup: &'a Value, lines: &'a [Value]) -> Step<'a, ()> {
        Box::pin(async move {
            if let Some(home) = &self.home {
                home.begin_day(day, setup, lines).await?;
                let mut shipped = self.shipped.lock().await;
                shipped.forget(day);
            }
            BlockingStore::begin_day(&self.work, day, setup, lines)
        })
    }

    fn setup<'a>(&'a self, day: &'a str) -> Step<'a, Value> {
        Box::pin(async move {
            match self.reads(day) {
                Some(home) => home.setup(day).await,
                None => BlockingStore::setup(&self.work, day),
            }
        })
    }

    fn delete_day<'a>(&'a self, day: &'a str) -> Step<'a, ()> {
        Box::pin(async move {
            if let Some(home) = &self.home {
                home.delete_day(day).await?;
                let mut shipped = self.shipped.lock().await;
                shipped.forget(day);
            }
            BlockingStore::delete_day(&self.work, day)
        })
    }

    fn append<'a>(
        &'a self,
        day: &'a str,
        lines: &'a [Value],
        positions: &'a [ReadPosition],
    ) -> Step<'a, Vec<Appended>> {
        Box::pin(async move {
            let Some(home) = &self.home else {
                return BlockingStore::append(&self.work, day, lines, positions);
            };
            let answers = home.append(day, lines, positions).await?;
            // The cache takes what the home stored (the lines it held already, it holds too).
            let stored: Vec<Value> = lines
                .iter()
                .zip(&answers)
                .filter(|(_, answer)| **answer == Appended::Stored)
                .map(|(line, _)| line.clone())
                .collect();
            if !stored.is_empty() || !positions.is_empty() {
                BlockingStore::append(&self.work, day, &stored, positions)?;
            }
            Ok(answers)
        })
    }

    fn lines<'a>(&'a self, day: &'a str) -> Step<'a, Vec<String>> {
        Box::pin(async move {
            match self.reads(day) {
                Some(home) => home.lines(day).await,
                None => BlockingStore::lines(&self.work, day),
            }
        })
    }

    fn positions(&self) -> Step<'_, BTreeMap<String, String>> {
        Box::pin(async move {
            match &self.home {
                Some(home) => home.positions().await,
                None => BlockingStore::positions(&self.work),
            }
        })
    }

    fn put_record<'a>(&'a self, day: &'a str, record: &'a Value) -> Step<'a, ()> {
        Box::pin(async move {
            if let Some(home) = &self.home {
                home.put_record(day, record).await?;
                if !self.work.holds(day) {
                    return Ok(());
                }
            }
            BlockingStore::put_record(&self.work, day, record)
        })
    }

    fn record<'a>(&'a self, day: &'a str) -> Step<'a, Option<Value>> {
        Box::pin(async move {
            match self.reads(day) {
                Some(home) => home.record(day).await,
                None => BlockingStore::record(&self.work, day),
            }
        })
    }

    fn append_log<'a>(&'a self, day: &'a str, log: DayLog, record: &'a Value) -> Step<'a, ()> {
        Box::pin(async move {
            let Some(home) = &self.home else {
                return BlockingStore::append_log(&self.work, day, log, record);
            };
            let mut shipped = self.shipped.lock().await;
            if !self.work.holds(day) {
                return home.append_log(day, log, record).await;
            }
            // What the host wrote before it goes first, in its order.
            self.ship_log(home.as_ref(), &mut shipped, day, log).await?;
            home.append_log(day, log, record).await?;
            BlockingStore::append_log(&self.work, day, log, record)?;
            *shipped.logs.entry((day.to_owned(), log)).or_insert(0) += 1;
            Ok(())
        })
    }

    fn log<'a>(&'a self, day: &'a str, log: DayLog) -> Step<'a, Vec<String>> {
        Box::pin(async move {
            match self.reads(day) {
                Some(home) => home.log(day, log).await,
                None => BlockingStore::log(&self.work, day, log),
            }
        })
    }

    fn put_checkpoint<'a>(&'a self, day: &'a str, bytes: &'a [u8]) -> Step<'a, ()> {
        Box::pin(async move {
            if let Some(home) = &self.home {
                let mut shipped = self.shipped.lock().await;
                home.put_checkpoint(day, bytes).await?;
                if !self.work.holds(day) {
                    return Ok(());
                }
                shipped.checkpoints.insert(day.to_owned(), sha256(bytes));
            }
            BlockingStore::put_checkpoint(&self.work, day, bytes)
        })
    }

    fn checkpoint<'a>(&'a self, day: &'a str) -> Step<'a, Option<Vec<u8>>> {
        Box::pin(async move {
            match self.reads(day) {
                Some(home) => home.checkpoint(day).await,
                None => BlockingStore::checkpoint(&self.work, day),
            }
        })
    }
}

/// A home kept through a working copy in a data dir of its own: what the suite opens to check
/// a [`WorkingCopy`] over another home as a home of its own.
#[derive(Debug)]
pub struct WorkingHome<H> {
    /// The home the life is kept in.
    pub home: H,
    /// The working copy's data dir.
    pub work: std::path::PathBuf,
}

impl<H: super::Home> super::Home for WorkingHome<H> {
    fn open(
        &self,
        faults: Option<Arc<dyn aura_host::journal::StorageFaults>>,
    ) -> Step<'_, Box<dyn LifeStore>> {
        Box::pin(async move {
            let home = self.home.open(faults).await?;
            let work = FileStore::open(&self.work, None)?;
            let store: Box<dyn LifeStore> = Box::new(WorkingCopy::over(home, work).await?);
            Ok(store)
        })
    }
}
