//! A live session's life: one day after another, the open one named by the life's state, each
//! closed one holding its record, and the old ones deleted whole, kept in a store
//! ([`crate::store`]: the data dir's files, or another home through the data dir's working
//! copy of it).
//!
//! It owns the rollover: the closing day's record written, the next day made whole (its setup
//! carrying the state the day handed on, its journal the inputs that came after the last tick
//! and the time zone's changes), then the store's commit naming it: the one step that
//! commits. A kill before it leaves the day open, to close again; after it, the next day open.
//! It owns the retention (the closed days past `keep_days` deleted whole, a sweep a kill cut
//! short going on at the next start) and reading a data dir's days without holding its life
//! (`aura report`, the fleet's checks). It must not decide anything, nor take inputs (the
//! session does), nor lay out files (the store does).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use aura_contract::quarantine::QuarantineRecord;
use aura_contract::recovery::Action;
use aura_host::Host;

use super::{LiveError, input, setup, zone};
use crate::orchestrator::Day;
use crate::scenario::UTC_OFFSET;
pub use crate::store::files::{DAYS_DIR, LIFE_PATH, RECORD_PATH};
use crate::store::{FileStore, Home, LIFE_FORMAT, LifeState, LifeStore, StoreError, WorkingCopy};
pub use crate::store::{day_order, is_day_name};

impl From<StoreError> for LiveError {
    fn from(error: StoreError) -> Self {
        match error {
            StoreError::Journal(error) => Self::Journal(error),
            error => Self::Store(error),
        }
    }
}

/// Where a day's decisions stand among the life's (its first is the life's this-th), and
/// where its signals are journaled.
#[derive(Debug, Clone)]
pub(super) struct Bases {
    /// Decisions.
    pub(super) decided: u64,
    /// The day's name.
    pub(super) day: String,
    /// The life's store.
    pub(super) store: Arc<WorkingCopy>,
}

/// A life held by one session: its store, which no other session opens meanwhile.
pub(super) struct Life {
    root: Host,
    store: Arc<WorkingCopy>,
    pub(super) state: LifeState,
    keep_days: usize,
}

/// The data dir's days, oldest first: closed ones and the open one (none being deleted).
pub fn days(data_dir: &Path) -> Result<Vec<String>, LiveError> {
    Ok(crate::store::files::days_in(data_dir)?)
}

/// The open day's name, if the data dir holds a life.
pub fn open_day(data_dir: &Path) -> Result<Option<String>, LiveError> {
    Ok(crate::store::files::read_life(data_dir)?.map(|state| state.open))
}

/// The directory of a run to look at in `data_dir`: its life's day `day` (by default the open
/// one), or the data dir itself when it holds no life (an `aura run`'s, a fleet's person's).
pub fn run_dir(data_dir: &Path, day: Option<&str>) -> Result<PathBuf, LiveError> {
    let open = open_day(data_dir)?;
    match (open, day) {
        (None, None) => Ok(data_dir.to_path_buf()),
        (None, Some(day)) => Err(LiveError::Damaged(format!(
            "{} holds no live session's days, so no day {day}",
            data_dir.display()
        ))),
        (Some(open), day) => {
            let name = day.unwrap_or(&open);
            match days(data_dir)?.iter().any(|kept| kept == name) {
                true => Ok(day_dir(data_dir, name)),
                false => Err(LiveError::Damaged(format!(
                    "no day {name} is kept (days: {})",
                    days(data_dir)?.join(", ")
                ))),
            }
        }
    }
}

/// Where the day `name` of the data dir's life is.
pub fn day_dir(data_dir: &Path, name: &str) -> PathBuf {
    data_dir.join(DAYS_DIR).join(name)
}

impl Life {
    /// Opens the life of `root`'s data dir: the one it holds (of the same setup), or a new one
    /// whose first day is `first` (the setup with its start), `setup_sha256` its identity.
    /// `fresh` sets a life it holds aside first. The life is kept in `home` when one is
    /// named (the data dir then holds its working copy), else in the data dir.
    pub(super) async fn open(
        root: &Host,
        first: &setup::Resolved,
        fresh: bool,
        keep_days: usize,
        home: Option<&dyn Home>,
    ) -> Result<Self, LiveError> {
        let work = FileStore::beside(root.journal())?;
        let store = Arc::new(match home {
            None => WorkingCopy::files(work),
            Some(home) => WorkingCopy::over(home.open(None).await?, work).await?,
        });
        let mut state = store.life().await?;
        if fresh && state.is_some() {
            store.set_aside().await?;
            state = None;
        }
        let mut life = Self {
            root: root.clone(),
            store,
            state: LifeState {
                format: LIFE_FORMAT.to_owned(),
                setup_sha256: first.setup_sha256.clone(),
                open: String::new(),
                previous: None,
                base: 0,
                decided_base: 0,
                time_zone: first.time_zone.clone(),
                positions: Default::default(),
            },
            keep_days,
        };
        match state {
            Some(state) if state.setup_sha256 != first.setup_sha256 => {
                Err(LiveError::Damaged(format!(
                    "the data dir's life began with another setup (sha256 {}): `--fresh` sets it aside",
                    &state.setup_sha256[..state.setup_sha256.len().min(12)]
                )))
            }
            Some(state) => {
                life.state = state;
                // (The store deleted a day a rollover began and did not commit.)
                // A sweep a kill cut short goes on.
                life.sweep().await?;
                Ok(life)
            }
            None => {
                let name = first.start_date();
                let journal = match &first.time_zone {
                    Some(zone) => zone::changes(zone, first.start)
                        .map_err(|e| LiveError::Clock(e.to_string()))?,
                    None => Vec::new(),
                };
                life.begin(&name, &first.day_setup(), &journal).await?;
                life.commit(LifeState {
                    open: name,
                    ..life.state.clone()
                })
                .await?;
                Ok(life)
            }
        }
    }

    /// Where the open day stands among the life's lines and decisions.
    pub(super) fn bases(&self) -> Bases {
        Bases {
            decided: self.state.decided_base,
            day: self.state.open.clone(),
            store: self.store.clone(),
        }
    }

    /// A host on the open day, writing through the store's journal of it.
    pub(super) fn day(&self) -> Result<Host, LiveError> {
        Ok(self
            .root
            .on_journal(self.store.day_journal(&self.state.open)?))
    }

    /// A host on the day before the open one, if it is kept.
    pub(super) fn previous(&self) -> Option<Host> {
        let name = self.state.previous.as_ref()?;
        let journal = self.store.day_journal(name).ok()?;
        Some(self.root.on_journal(journal))
    }

    /// Closes the open day (on `closing`, its last tick run) and opens the next, beginning at
    /// `next`, its new signals numbered from `next_seq` (the life's next); then deletes the
    /// days past the retention.
    pub(super) async fn close(
        &mut self,
        closing: &Host,
        day: &Day<'_>,
        next: OffsetDateTime,
        next_seq: usize,
    ) -> Result<(), LiveError> {
        let last_tick = day.last_tick.unwrap_or(day.scenario.start);
        let lines = self.store.lines(&self.state.open).await?;
        let (kept, tail) = self.split(&lines, last_tick)?;
        let mut record = setup::record(closing, &kept, last_tick)?;
        record["unfinished"] = Value::Bool(true);
        self.store.put_record(&self.state.open, &record).await?;
        let carry = day.carry();
        for item in &carry.left_out {
            let refusal = input::refusal(
                "not_carried",
                "the next day carries the events and invitations not over that end soonest, and this one did not fit".to_owned(),
                Action::Finish,
            );
            closing
                .journal()
                .quarantine(&QuarantineRecord::input(&refusal, &item.to_string()))?;
        }
        let (time_zone, offset_minutes) = self.where_next(day, next)?;
        let offset = time::UtcOffset::from_whole_seconds(offset_minutes * 60)
            .unwrap_or(time::UtcOffset::UTC);
        let mut next_setup = setup::read_day_setup(closing)?;
        next_setup["start"] =
            Value::String(next.to_offset(offset).format(&Rfc3339).unwrap_or_default());
        next_setup["utc_offset_minutes"] = offset_minutes.into();
        next_setup["initial"] = carry.initial;
        let next_journal = next_journal(time_zone.as_deref(), next, offset, tail)?;
        let name = self.next_name(next, offset);
        // The closing day's records (its last tick's, what it did not carry) are the home's
        // before the next day is begun.
        self.store.ship(&self.state.open).await?;
        self.begin(&name, &next_setup, &next_journal).await?;
        let closed = std::mem::replace(&mut self.state.open, name.clone());
        self.commit(LifeState {
            open: name,
            previous: Some(closed),
            base: next_seq,
            decided_base: self.state.decided_base + day.decisions() as u64,
            time_zone,
            ..self.state.clone()
        })
        .await?;
        self.sweep().await
    }

    /// The open day's journal `lines` split at its last tick: the signals it took (as its
    /// record holds them), and what came after, which goes to the next day, each line
    /// keeping its place among the life's signals (its acknowledgement stays the same).
    fn split(
        &self,
        lines: &[String],
        last_tick: OffsetDateTime,
    ) -> Result<(Vec<Value>, Vec<Value>), LiveError> {
        let (mut kept, mut tail) = (Vec::new(), Vec::new());
        for (index, line) in lines.iter().enumerate() {
            let line = setup::read_line(line, index, self.state.base)?;
            match line.signal.at <= last_tick {
                true => kept.push(setup::scenario_signal(line.value)),
                false => {
                    let mut value = line.value;
                    if let Some(object) = value.as_object_mut() {
                        object.remove(setup::LINE_CLOSES_AT);
                        if let Some(seq) = line.seq {
                            object.insert(setup::LINE_SEQ.to_owned(), seq.into());
                        }
                    }
                    tail.push(value);
                }
            }
        }
        Ok((kept, tail))
    }

    /// Where the person is as the next day begins at `next`: the latest offset change at or
    /// before it, one that came after the last tick included (a landing that ended the day
    /// names the next one where they landed), as a time zone (an offset change that names
    /// none leaves it unknown: offsets only) and the offset in minutes.
    fn where_next(
        &self,
        day: &Day<'_>,
        next: OffsetDateTime,
    ) -> Result<(Option<String>, i32), LiveError> {
        let time_zone = match day
            .scenario
            .signals
            .iter()
            .rfind(|s| s.kind == UTC_OFFSET && s.at <= next)
        {
            Some(change) => change.data["time_zone"].as_str().map(str::to_owned),
            None => self.state.time_zone.clone(),
        };
        let offset_minutes = match &time_zone {
            Some(zone) => {
                zone::offset_minutes(zone, next).map_err(|e| LiveError::Clock(e.to_string()))?
            }
            None => day.scenario.offset_minutes(next),
        };
        Ok((time_zone, offset_minutes))
    }

    /// The next day's name: its date in `offset`, or the next part of the open day's date
    /// when the open day filled before its midnight.
    fn next_name(&self, next: OffsetDateTime, offset: time::UtcOffset) -> String {
        let date = next.to_offset(offset).date().to_string();
        match self.state.open.split_once('.') {
            _ if !self.state.open.starts_with(&date) => date,
            Some((_, part)) => format!("{date}.{}", part.parse::<u32>().unwrap_or(1) + 1),
            None => format!("{date}.1"),
        }
    }

    /// Makes the day `name` whole: its setup and its first journal lines (a day of that name
    /// a rollover began and did not commit is replaced).
    async fn begin(&self, name: &str, setup: &Value, journal: &[Value]) -> Result<(), LiveError> {
        Ok(self.store.begin_day(name, setup, journal).await?)
    }

    /// Names `state`'s open day open: the commit.
    async fn commit(&mut self, state: LifeState) -> Result<(), LiveError> {
        self.store.commit(&state).await?;
        self.state = self.store.life().await?.unwrap_or(state);
        Ok(())
    }

    /// Deletes the oldest closed days past the retention, each whole. The retention counts
    /// the person's dates: the parts a flood split one date into are one day of theirs, and
    /// evict no other date.
    async fn sweep(&self) -> Result<(), LiveError> {
        let closed: Vec<String> = self
            .store
            .days()
            .await?
            .into_iter()
            .filter(|name| day_order(name) < day_order(&self.state.open))
            .collect();
        let mut dates: Vec<&str> = closed.iter().map(|name| day_order(name).0).collect();
        dates.dedup();
        let over = dates.len().saturating_sub(self.keep_days);
        let dropped = &dates[..over];
        for name in &closed {
            if dropped.contains(&day_order(name).0) {
                self.delete_day(name).await?;
            }
        }
        Ok(())
    }

    /// Deletes the day `name` whole, if it is there.
    async fn delete_day(&self, name: &str) -> Result<(), LiveError> {
        Ok(self.store.delete_day(name).await?)
    }
}

/// The next day's first journal lines: the time zone's changes (those the tail does not
/// hold), then the tail as the next day would have taken it: its times in that day's
/// `offset`, at the day's start `next` when stamped before it.
fn next_journal(
    time_zone: Option<&str>,
    next: OffsetDateTime,
    offset: time::UtcOffset,
    tail: Vec<Value>,
) -> Result<Vec<Value>, LiveError> {
    let mut journal: Vec<Value> = Vec::new();
    if let Some(zone) = time_zone {
        let changes = zone::changes(zone, next).map_err(|e| LiveError::Clock(e.to_string()))?;
        for change in changes {
            if !tail.iter().any(|line| line["id"] == change["id"]) {
                journal.push(change);
            }
        }
    }
    let in_offset = |at: OffsetDateTime| at.to_offset(offset).format(&Rfc3339).unwrap_or_default();
    for mut line in tail {
        let time = |field: &str| {
            OffsetDateTime::parse(line[field].as_str().unwrap_or_default(), &Rfc3339).ok()
        };
        let (Some(at), sent) = (time("at"), time("sent")) else {
            return Err(LiveError::Damaged(format!("a journal line's time: {line}")));
        };
        let stamped = line.get("stamped").is_some();
        let given = sent.unwrap_or(at);
        let taken = given.max(next).max(at);
        line["at"] = Value::String(in_offset(taken));
        if let Some(object) = line.as_object_mut() {
            object.remove("sent");
        }
        if !stamped && given != taken {
            line["sent"] = Value::String(in_offset(given));
        }
        journal.push(line);
    }
    Ok(journal)
}
