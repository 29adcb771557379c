//! A life's home on the fleet's store ([`FleetHome`]): JetStream on a fleet, the deterministic
//! simulation's store in its tests, under the contract and the suite of
//! [`aura_day::store`].
//!
//! It owns the layout: a life's opener holds key `<life>` of the holds bucket (it expires
//! [`FLEET_LEASE_MS`] after its last renewal, so a killed opener's hold ends by itself); the
//! lives bucket holds `<life>.generation` (a life set aside starts the next generation, the
//! old one kept), `<life>.<gen>.state` (where the life stands, replaced by compare-and-set:
//! the commit) and `<life>.<gen>.days` (the day index, each day `begun`, `whole` or
//! `deleting`: a day is a day once `whole`); each day's journal and logs are subjects of the
//! days stream (`aura.days.<life>.<gen>.<day>.<log>`, a `.` of a day's name a `_`). An
//! append is one message,
//! or parts of one batch (`Aura-Batch`, `Aura-Part: i/n`) where it is larger than a message
//! may be: a batch is read only when all its parts are there, so an append cut short leaves
//! nothing. A day's setup, record and checkpoint are batches too, on subjects of their own
//! (`…<day>.setup`, `.record`, `.checkpoint`): the last whole batch is the file, the ones
//! before it purged once it is stored.
//!
//! **The fence.** A hold is a lease: an opener paused past it (a stopped process, a partition)
//! may wake after another opened the life and write before its own renewal tells it the hold
//! is gone. So every message of a life is published with the life's last sequence as its
//! opener last wrote it, over all the life's subjects (`aura.days.<life>.>`, through
//! [`EXPECTED_FILTER_HEADER`]); each open publishes a marker (`aura.days.<life>.opened`)
//! first and then rewrites the life's keys (generation, state, day index) at the revisions it
//! read, so an older opener's next publish, compare-and-set or purge is refused (a purge comes
//! only after a fenced marker, and never reaches past it). What an older opener left is what a
//! crash would have left, and the next open repairs it.
//!
//! Each write asks the faults at the steps the files home names (`write` before it,
//! `sync` before a batch's last part, `synced` once stored, `done`). It must not decide
//! anything a life does, nor the fleet's protocol (who holds a person: [`crate::store::Fleet`]).

use aura_contract::caused::Caused;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use serde_json::Value;

use aura_contract::canonical::parse_i_json;
use aura_contract::limits::{
    FLEET_LEASE_MS, FLEET_RENEW_EVERY_MS, LIFE_STATE_BYTES_MAX, SCENARIO_BYTES_MAX,
};
use aura_day::live::life::{LIFE_PATH, RECORD_PATH};
use aura_day::store::{
    DayLog, Home, LIFE_FORMAT, LifeState, LifeStore, Step, Stop, StoreError, canonical, day_order,
    fault_error as failed, is_day_name, step_error as io,
};
use aura_host::journal::{StorageFault, StorageFaults, StoragePoint, StorageStep};

mod calls;
mod fence;
mod files;
mod journal;

use crate::protocol::{Seq, Stored};
use crate::store::{Bucket, FleetError, FleetStore, Log};

/// The header naming the batch a part of an append belongs to.
const BATCH_HEADER: &str = "Aura-Batch";
/// The header numbering a part of its batch (`i/n`).
const PART_HEADER: &str = "Aura-Part";

/// Where a life is kept on a fleet's store: what opens it for one holder.
#[derive(Debug, Clone)]
pub struct FleetHome {
    store: Arc<dyn FleetStore>,
    life: String,
    /// How long an open waits for another opener's hold to end before it is refused.
    wait_ms: u64,
}

impl FleetHome {
    /// The life `life` (letters, digits, `_` and `-`, 1 to 64: a person's key made a token)
    /// on `store`.
    pub fn new(store: Arc<dyn FleetStore>, life: &str) -> Result<Self, StoreError> {
        let token = !life.is_empty()
            && life.len() <= 64
            && life
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
        match token {
            true => Ok(Self {
                store,
                life: life.to_owned(),
                wait_ms: 0,
            }),
            false => Err(StoreError::Refused(
                "a life's name is 1 to 64 letters, digits, `_` or `-`".to_owned(),
            )),
        }
    }
}

impl FleetHome {
    /// This home, its open waiting up to `wait_ms` for another opener's hold to end (one let
    /// go as its opener stops, or run out a lease after its last renewal) before it is
    /// refused.
    pub fn waiting(self, wait_ms: u64) -> Self {
        Self { wait_ms, ..self }
    }
}

impl Home for FleetHome {
    fn open(&self, faults: Option<Arc<dyn StorageFaults>>) -> Step<'_, Box<dyn LifeStore>> {
        Box::pin(async move {
            let started = tokio::time::Instant::now();
            loop {
                match FleetLife::open(self, faults.clone()).await {
                    Err(StoreError::Busy)
                        if started.elapsed() < std::time::Duration::from_millis(self.wait_ms) =>
                    {
                        let retry = std::time::Duration::from_millis(FLEET_RENEW_EVERY_MS / 4);
                        tokio::time::sleep(retry).await;
                    }
                    opened => {
                        let store: Box<dyn LifeStore> = Box::new(opened?);
                        return Ok(store);
                    }
                }
            }
        })
    }
}

/// How far a day in the index is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
enum Mark {
    Begun,
    Whole,
    Deleting,
}

/// What an opener keeps of the life.
#[derive(Debug, Default)]
struct Cache {
    state: Option<LifeState>,
    state_revision: Option<u64>,
    index: BTreeMap<String, Mark>,
    index_revision: Option<u64>,
    /// Each day's ids (with their lines), once read.
    days: HashMap<String, HashMap<String, String>>,
    positions: Option<BTreeMap<String, String>>,
}

/// One opener's hold of a life on a fleet's store: let go when dropped.
#[derive(Debug)]
pub struct FleetLife {
    store: Arc<dyn FleetStore>,
    life: String,
    /// The life's generation this opener reads and writes (a set-aside moves it on), and its
    /// key's revision as this opener last wrote it.
    generation: Mutex<(u64, u64)>,
    /// The life's last sequence as this opener last wrote it (its marker at the open, then
    /// each of its messages): what its next publish must find. Held across a write's parts,
    /// so one opener's writes go one at a time.
    fence: tokio::sync::Mutex<Seq>,
    holder: String,
    /// The hold's revision, and whether it was lost (renewed too late, taken over).
    hold: Arc<Mutex<(u64, bool)>>,
    renew: tokio::task::JoinHandle<()>,
    faults: Option<Arc<dyn StorageFaults>>,
    ordinals: Mutex<HashMap<String, u64>>,
    stopped: Stop,
    batches: std::sync::atomic::AtomicU64,
    cache: Mutex<Cache>,
}

fn fleet(error: FleetError) -> StoreError {
    StoreError::Damaged(format!("the fleet's store: {error}"))
}

fn log_name(log: DayLog) -> &'static str {
    match log {
        DayLog::Traces => "traces",
        DayLog::Quarantine => "quarantine",
        DayLog::Deliveries => "deliveries",
        DayLog::Narrations => "narrations",
    }
}

impl FleetLife {
    async fn open(
        home: &FleetHome,
        faults: Option<Arc<dyn StorageFaults>>,
    ) -> Result<Self, StoreError> {
        let store = home.store.clone();
        let life = home.life.clone();
        let holder = format!("{:016x}", rand_id());
        let revision = match store
            .create(Bucket::LifeHolds, &life, Bytes::from(holder.clone()))
            .await
            .map_err(fleet)?
        {
            Stored::At(revision) => revision,
            Stored::Conflict => return Err(StoreError::Busy),
        };
        let hold = Arc::new(Mutex::new((revision, false)));
        let renew = tokio::spawn(renew(
            store.clone(),
            life.clone(),
            holder.clone(),
            hold.clone(),
        ));
        let opened = Self {
            store,
            life,
            generation: Mutex::new((0, 0)),
            fence: tokio::sync::Mutex::new(0),
            holder,
            hold,
            renew,
            faults,
            ordinals: Mutex::default(),
            stopped: Stop::default(),
            batches: std::sync::atomic::AtomicU64::new(0),
            cache: Mutex::default(),
        };
        opened.fence_older_openers().await?;
        opened.read_life().await?;
        opened.finish_what_a_crash_cut_short().await?;
        Ok(opened)
    }

    fn cache(&self) -> std::sync::MutexGuard<'_, Cache> {
        self.cache.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn generation(&self) -> u64 {
        self.generation.lock().unwrap_or_else(|p| p.into_inner()).0
    }

    fn key(&self, what: &str) -> String {
        format!("{}.{}.{what}", self.life, self.generation())
    }

    fn subject(&self, day: &str, log: &str) -> String {
        format!(
            "aura.days.{}.{}.{}.{log}",
            self.life,
            self.generation(),
            day.replace('.', "_")
        )
    }

    /// Asks the faults at `step` of the write of `path` counted under `key`.
    fn at(&self, path: &str, step: StorageStep, ordinal: u64) -> Option<StorageFault> {
        self.faults.as_ref()?.at(StoragePoint {
            path,
            step,
            ordinal,
        })
    }

    fn ordinal(&self, key: &str) -> u64 {
        let mut ordinals = self.ordinals.lock().unwrap_or_else(|p| p.into_inner());
        let count = ordinals.entry(key.to_owned()).or_default();
        *count += 1;
        *count - 1
    }

    /// Fails unless an append may be made: the day's journal not stopped, the life held.
    fn writable(&self) -> Result<(), StoreError> {
        self.stopped.check()?;
        self.holding()
    }

    /// Fails unless this opener still holds the life.
    fn holding(&self) -> Result<(), StoreError> {
        match self.hold.lock().unwrap_or_else(|p| p.into_inner()).1 {
            true => Err(StoreError::Busy),
            false => Ok(()),
        }
    }

    async fn read_life(&self) -> Result<(), StoreError> {
        let state = self
            .store
            .get(Bucket::Lives, &self.key("state"))
            .await
            .map_err(fleet)?;
        let index = self
            .store
            .get(Bucket::Lives, &self.key("days"))
            .await
            .map_err(fleet)?;
        // Rewritten at the revisions read, so an older opener's compare-and-set is refused.
        let mut revisions = [None, None];
        for (at, (what, entry)) in [("state", &state), ("days", &index)]
            .into_iter()
            .enumerate()
        {
            let stored = match entry {
                Some(entry) => {
                    self.swap(what, entry.value.clone(), Some(entry.revision))
                        .await?
                }
                None if what == "days" => self.swap(what, Bytes::from("{}"), None).await?,
                None => continue,
            };
            revisions[at] = Some(stored);
        }
        let mut cache = self.cache();
        *cache = Cache::default();
        cache.index_revision = revisions[1];
        if let Some(entry) = state {
            let damaged = |why: String| StoreError::Damaged(format!("{LIFE_PATH}: {why}"));
            let text = std::str::from_utf8(&entry.value).map_err(|e| damaged(e.to_string()))?;
            let value =
                parse_i_json(text, LIFE_STATE_BYTES_MAX).map_err(|e| damaged(e.to_string()))?;
            let state: LifeState =
                serde_json::from_value(value).map_err(|e| damaged(e.to_string()))?;
            if state.format != LIFE_FORMAT || !is_day_name(&state.open) {
                return Err(damaged(format!("open day `{}`", state.open)));
            }
            cache.state = Some(state);
            cache.state_revision = revisions[0];
        }
        if let Some(entry) = index {
            cache.index = serde_json::from_slice(&entry.value)
                .map_err(|e| StoreError::Damaged(format!("the day index: {e}")))?;
        }
        Ok(())
    }

    /// Deletes what a crash left half done: a deletion, a day begun and never whole or never
    /// committed.
    async fn finish_what_a_crash_cut_short(&self) -> Result<(), StoreError> {
        let (open, index) = {
            let cache = self.cache();
            let open = cache.state.as_ref().map(|state| state.open.clone());
            (open, cache.index.clone())
        };
        let mut whole: Vec<String> = Vec::new();
        for (day, mark) in &index {
            let past = match &open {
                Some(open) => day_order(day) > day_order(open),
                None => false,
            };
            match mark {
                Mark::Whole if !past => whole.push(day.clone()),
                _ => self.remove_day(day).await?,
            }
        }
        if open.is_none() {
            match whole.as_slice() {
                [] => {}
                [first] if self.record_of(first).await?.is_none() => self.remove_day(first).await?,
                _ => {
                    return Err(StoreError::Damaged(format!(
                        "{} holds days but no life",
                        self.life
                    )));
                }
            }
        }
        Ok(())
    }

    /// Writes `what` of the life (its state, its day index) by compare-and-set at
    /// `revision` (none: it is not there yet): its new revision, or [`StoreError::Busy`] when
    /// another opener wrote it since.
    async fn swap(
        &self,
        what: &str,
        bytes: Bytes,
        revision: Option<u64>,
    ) -> Result<u64, StoreError> {
        let key = self.key(what);
        let stored = match revision {
            Some(revision) => {
                self.store
                    .update(Bucket::Lives, &key, bytes, revision)
                    .await
            }
            None => self.store.create(Bucket::Lives, &key, bytes).await,
        }
        .map_err(fleet)?;
        match stored {
            Stored::At(revision) => Ok(revision),
            Stored::Conflict => Err(StoreError::Busy),
        }
    }

    /// Writes the day index with `change` made, by compare-and-set.
    async fn index(
        &self,
        change: impl FnOnce(&mut BTreeMap<String, Mark>),
    ) -> Result<(), StoreError> {
        self.holding()?;
        let (mut index, revision) = {
            let cache = self.cache();
            (cache.index.clone(), cache.index_revision)
        };
        change(&mut index);
        let bytes = Bytes::from(serde_json::to_vec(&index).unwrap_or_default());
        let revision = self.swap("days", bytes, revision).await?;
        let mut cache = self.cache();
        cache.index = index;
        cache.index_revision = Some(revision);
        Ok(())
    }

    /// Purges the day's subjects and objects and takes it out of the index (marked
    /// `deleting` first, so a crash in between finishes it at the next open).
    async fn remove_day(&self, day: &str) -> Result<(), StoreError> {
        let path = format!("days/{day}");
        if self.cache().index.contains_key(day) {
            if let Some(error) = failed(self.at(&path, StorageStep::Write, 0)) {
                return Err(io(&path, error));
            }
            self.index(|index| {
                index.insert(day.to_owned(), Mark::Deleting);
            })
            .await?;
            if let Some(error) = failed(self.at(&path, StorageStep::Synced, 0)) {
                return Err(io(&path, error));
            }
        }
        self.purge_day(day).await?;
        if self.cache().index.contains_key(day) {
            self.index(|index| {
                index.remove(day);
            })
            .await?;
        }
        self.cache().days.remove(day);
        let _ = self.at(&path, StorageStep::Done, 0);
        Ok(())
    }

    /// Purges the day's subjects, up to this opener's marker (an older opener's purge stops
    /// at its own: it never reaches what a newer one wrote).
    async fn purge_day(&self, day: &str) -> Result<(), StoreError> {
        let below = self.touch().await?;
        for log in files::DAY_SUBJECTS {
            let subject = self.subject(day, log);
            self.store
                .purge(Log::Days, &subject, below)
                .await
                .map_err(fleet)?;
        }
        Ok(())
    }

    async fn record_of(&self, day: &str) -> Result<Option<Value>, StoreError> {
        let Some(bytes) = self.get_file(day, RECORD_PATH, SCENARIO_BYTES_MAX).await? else {
            return Ok(None);
        };
        let text = String::from_utf8(bytes).map_err(|e| StoreError::Damaged(e.to_string()))?;
        let value = parse_i_json(&text, SCENARIO_BYTES_MAX)
            .map_err(|e| StoreError::Damaged(format!("{RECORD_PATH}: {e}")))?;
        Ok(Some(value))
    }

    fn whole(&self, day: &str) -> Result<(), StoreError> {
        let day = aura_day::store::checked(day)?;
        match self.cache().index.get(day) {
            Some(Mark::Whole) => Ok(()),
            _ => Err(StoreError::NoDay(day.to_owned())),
        }
    }
}

/// A random id for a holder and its batches (not a secret: it tells openers apart).
fn rand_id() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    hasher.finish()
}

/// Renews the hold every [`FLEET_RENEW_EVERY_MS`] until it is lost or the opener lets go.
async fn renew(
    store: Arc<dyn FleetStore>,
    life: String,
    holder: String,
    hold: Arc<Mutex<(u64, bool)>>,
) {
    loop {
        tokio::time::sleep(std::time::Duration::from_millis(FLEET_RENEW_EVERY_MS)).await;
        let revision = hold.lock().unwrap_or_else(|p| p.into_inner()).0;
        let renewed = store
            .update(
                Bucket::LifeHolds,
                &life,
                Bytes::from(holder.clone()),
                revision,
            )
            .await;
        let mut hold = hold.lock().unwrap_or_else(|p| p.into_inner());
        match renewed {
            Ok(Stored::At(revision)) => hold.0 = revision,
            Ok(Stored::Conflict) => {
                tracing::warn!(%life, "the life's hold was lost: this opener writes no more");
                hold.1 = true;
                return;
            }
            // A step that failed: the hold lasts FLEET_LEASE_MS; the next renewal tries again.
            Err(error) => {
                tracing::warn!(%life, error = %Caused(&error), lease_ms = FLEET_LEASE_MS, "the life's hold was not renewed")
            }
        }
    }
}

impl Drop for FleetLife {
    fn drop(&mut self) {
        self.renew.abort();
        // Let the hold go now, where a runtime is there to; else it ends by itself.
        let (revision, lost) = *self.hold.lock().unwrap_or_else(|p| p.into_inner());
        if let (Ok(runtime), false) = (tokio::runtime::Handle::try_current(), lost) {
            let (store, life) = (self.store.clone(), self.life.clone());
            runtime.spawn(async move {
                let _ = store.delete(Bucket::LifeHolds, &life, revision).await;
            });
        }
    }
}
