//! A live session's life in its data dir: one directory a day, the open one named by
//! `life.json`, each closed one holding its record, and the old ones deleted whole.
//!
//! It owns the layout (`<data-dir>/life.json`, `<data-dir>/days/<local date>[.<part>]/`, each
//! day's `day.json` record) and the rollover: the closing day's record written, the next day's
//! directory made whole (its setup carrying the state the day handed on, its journal the
//! inputs that came after the last tick and the time zone's changes), then `life.json`
//! replaced to name it: the one step that commits. A kill before it leaves the day open, to
//! close again; after it, the next day open. A day is deleted by renaming it aside first
//! (the journal's `remove_dir_whole`), so none is ever half there; a sweep a kill cut short
//! goes on at the next start. It must not decide anything, nor take inputs (the session does).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use aura_contract::canonical::{parse_i_json, to_canonical_string};
use aura_contract::limits::{LIFE_STATE_BYTES_MAX, SCENARIO_BYTES_MAX};
use aura_contract::quarantine::QuarantineRecord;
use aura_contract::recovery::Action;
use aura_host::Host;
use aura_host::journal::RunLock;

use crate::logs::{RunLogs, SIGNALS_PATH};

use super::{LiveError, input, setup, zone};
use crate::checkpoint::LIVE_SETUP_PATH;
use crate::orchestrator::Day;
use crate::scenario::UTC_OFFSET;

/// What names the open day, relative to the data dir.
pub const LIFE_PATH: &str = "life.json";
/// The days, relative to the data dir: one directory each.
pub const DAYS_DIR: &str = "days";
/// A closed day's record, in its directory: the scenario `aura run` runs to its traces.
pub const RECORD_PATH: &str = "day.json";
/// What `life.json` says it is.
const LIFE_FORMAT: &str = "aura.life.v1";

/// `life.json`: where the life stands.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub(super) struct LifeState {
    format: String,
    /// sha256 of the setup the life began with, less its start: a session of another setup
    /// must not go on with it.
    setup_sha256: String,
    /// The open day.
    pub(super) open: String,
    /// The day before it, if it was kept.
    pub(super) previous: Option<String>,
    /// The life's place (`seq`) of the open day's first new signal: the one after the last
    /// the days before took (a line carried into the open day keeps its own).
    pub(super) base: usize,
    /// The life's place of the open day's first decision (a life of an earlier aura: 0).
    #[serde(default)]
    pub(super) decided_base: u64,
    /// The time zone the person is in as the open day begins, if known.
    pub(super) time_zone: Option<String>,
}

/// Where a day's decisions stand among the life's: its first is the life's this-th.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Bases {
    /// Decisions.
    pub(super) decided: u64,
    /// The day's name (none: a session of one day).
    pub(super) day: Option<String>,
}

/// A life held by one session.
pub(super) struct Life {
    root: Host,
    path: PathBuf,
    /// No other session lives this life meanwhile.
    _lock: RunLock,
    pub(super) state: LifeState,
    keep_days: usize,
}

/// The data dir's days, oldest first: closed ones and the open one (none being deleted).
pub fn days(data_dir: &Path) -> Result<Vec<String>, LiveError> {
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

/// The open day's name, if the data dir holds a life.
pub fn open_day(data_dir: &Path) -> Result<Option<String>, LiveError> {
    Ok(read_state(data_dir)?.map(|state| state.open))
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

fn io(path: &Path, source: std::io::Error) -> LiveError {
    LiveError::Journal(aura_host::journal::JournalError::Open {
        path: path.display().to_string(),
        source,
    })
}

fn read_state(data_dir: &Path) -> Result<Option<LifeState>, LiveError> {
    let path = data_dir.join(LIFE_PATH);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io(&path, e)),
    };
    let damaged = |why: String| LiveError::Damaged(format!("{LIFE_PATH}: {why}"));
    let value = parse_i_json(&text, LIFE_STATE_BYTES_MAX).map_err(|e| damaged(e.to_string()))?;
    let state: LifeState = serde_json::from_value(value).map_err(|e| damaged(e.to_string()))?;
    if state.format != LIFE_FORMAT || !is_day_name(&state.open) {
        return Err(damaged(format!(
            "format `{}`, open day `{}`",
            state.format, state.open
        )));
    }
    Ok(Some(state))
}

/// Syncs a directory's entries.
fn sync_dir(path: &Path) -> Result<(), LiveError> {
    std::fs::File::open(path)
        .and_then(|dir| dir.sync_all())
        .map_err(|e| io(path, e))
}

impl Life {
    /// Opens the life of `root`'s data dir: the one it holds (of the same setup), or a new one
    /// whose first day is `first` (the setup with its start), `setup_sha256` its identity.
    /// `fresh` sets a life it holds aside first.
    pub(super) fn open(
        root: &Host,
        first: &setup::Resolved,
        fresh: bool,
        keep_days: usize,
    ) -> Result<Self, LiveError> {
        let path = root.journal().path().to_path_buf();
        let lock = root.journal().lock_run()?;
        if root.journal().exists(LIVE_SETUP_PATH) && !root.journal().exists(LIFE_PATH) {
            return Err(LiveError::Damaged(format!(
                "this data dir holds a live session of an earlier aura ({LIVE_SETUP_PATH} with no days): start the life in a new data dir"
            )));
        }
        // What an interrupted deletion left aside.
        root.journal().remove_aside(DAYS_DIR)?;
        let mut state = read_state(&path)?;
        if fresh && state.is_some() {
            set_aside(&path)?;
            state = None;
        }
        let mut life = Self {
            root: root.clone(),
            path,
            _lock: lock,
            state: LifeState {
                format: LIFE_FORMAT.to_owned(),
                setup_sha256: first.setup_sha256.clone(),
                open: String::new(),
                previous: None,
                base: 0,
                decided_base: 0,
                time_zone: first.time_zone.clone(),
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
                // A day a rollover began and did not commit holds nothing acknowledged.
                for name in days(&life.path)? {
                    if day_order(&name) > day_order(&life.state.open) {
                        life.delete_day(&name)?;
                    }
                }
                // A sweep a kill cut short goes on.
                life.sweep()?;
                Ok(life)
            }
            None => {
                let name = first.start_date();
                let journal = match &first.time_zone {
                    Some(zone) => zone::changes(zone, first.start)
                        .map_err(|e| LiveError::Clock(e.to_string()))?,
                    None => Vec::new(),
                };
                life.begin(&name, &first.day_setup(), &journal)?;
                life.commit(LifeState {
                    open: name,
                    ..life.state.clone()
                })?;
                Ok(life)
            }
        }
    }

    /// Where the open day stands among the life's lines and decisions.
    pub(super) fn bases(&self) -> Bases {
        Bases {
            decided: self.state.decided_base,
            day: Some(self.state.open.clone()),
        }
    }

    /// A host on the open day's directory.
    pub(super) fn day(&self) -> Result<Host, LiveError> {
        Ok(self
            .root
            .in_data_dir(&day_dir(&self.path, &self.state.open))?)
    }

    /// A host on the day before the open one, if it is kept.
    pub(super) fn previous(&self) -> Option<Host> {
        let name = self.state.previous.as_ref()?;
        let dir = day_dir(&self.path, name);
        dir.is_dir().then(|| self.root.in_data_dir(&dir).ok())?
    }

    /// Closes the open day (on `closing`, its last tick run) and opens the next, beginning at
    /// `next`, its new signals numbered from `next_seq` (the life's next); then deletes the
    /// days past the retention.
    pub(super) fn close(
        &mut self,
        closing: &Host,
        day: &Day<'_>,
        next: OffsetDateTime,
        next_seq: usize,
    ) -> Result<(), LiveError> {
        let last_tick = day.last_tick.unwrap_or(day.scenario.start);
        let journal = closing.journal();
        let lines = journal.lines(SIGNALS_PATH, 0, SCENARIO_BYTES_MAX as u64)?;
        // What came after the last tick goes to the next day, each line keeping its place
        // among the life's signals (its acknowledgement stays the same).
        let mut kept = Vec::new();
        let mut tail = Vec::new();
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
        let mut record = setup::record(closing, &kept, last_tick)?;
        record["unfinished"] = Value::Bool(true);
        let text = to_canonical_string(&record).map_err(|e| LiveError::Damaged(e.to_string()))?;
        journal.replace_file(RECORD_PATH, text.as_bytes())?;
        let carry = day.carry();
        for item in &carry.left_out {
            let refusal = input::refusal(
                "not_carried",
                "the next day carries the events and invitations not over that end soonest, and this one did not fit".to_owned(),
                Action::Finish,
            );
            journal.quarantine(&QuarantineRecord::input(&refusal, &item.to_string()))?;
        }
        // Where the person is as the next day begins: the latest offset change at or before
        // it, one that came after the last tick included (a landing that ended the day names
        // the next one where they landed). (An offset change that names no zone leaves the
        // zone unknown: offsets only.)
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
        let offset = time::UtcOffset::from_whole_seconds(offset_minutes * 60)
            .unwrap_or(time::UtcOffset::UTC);
        let next_text = next.to_offset(offset).format(&Rfc3339).unwrap_or_default();
        let mut next_setup = setup::read_day_setup(closing)?;
        next_setup["start"] = Value::String(next_text.clone());
        next_setup["utc_offset_minutes"] = offset_minutes.into();
        next_setup["initial"] = carry.initial;
        // The zone's changes first, then the tail as the next day would have taken it: its
        // times in that day's offset, at its first tick when stamped before it.
        let mut next_journal: Vec<Value> = Vec::new();
        if let Some(zone) = &time_zone {
            let changes = zone::changes(zone, next).map_err(|e| LiveError::Clock(e.to_string()))?;
            for change in changes {
                if !tail.iter().any(|line| line["id"] == change["id"]) {
                    next_journal.push(change);
                }
            }
        }
        let in_offset =
            |at: OffsetDateTime| at.to_offset(offset).format(&Rfc3339).unwrap_or_default();
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
            next_journal.push(line);
        }
        let date = next.to_offset(offset).date().to_string();
        let name = match self.state.open.split_once('.') {
            _ if !self.state.open.starts_with(&date) => date,
            Some((_, part)) => format!("{date}.{}", part.parse::<u32>().unwrap_or(1) + 1),
            None => format!("{date}.1"),
        };
        self.begin(&name, &next_setup, &next_journal)?;
        let closed = std::mem::replace(&mut self.state.open, name.clone());
        self.commit(LifeState {
            open: name,
            previous: Some(closed),
            base: next_seq,
            decided_base: self.state.decided_base + day.decisions() as u64,
            time_zone,
            ..self.state.clone()
        })?;
        self.sweep()
    }

    /// Makes the day `name`'s directory whole: its setup and its first journal lines. A
    /// directory of that name (a rollover that did not commit) is deleted first.
    fn begin(&self, name: &str, setup: &Value, journal: &[Value]) -> Result<(), LiveError> {
        let dir = day_dir(&self.path, name);
        self.delete_day(name)?;
        let host = self.root.in_data_dir(&dir)?;
        let text = to_canonical_string(setup).map_err(|e| LiveError::Damaged(e.to_string()))?;
        host.journal()
            .replace_file(LIVE_SETUP_PATH, text.as_bytes())?;
        host.journal().open_live()?;
        for line in journal {
            host.journal().signal(line)?;
        }
        sync_dir(&self.path.join(DAYS_DIR))
    }

    /// Replaces `life.json` with `state`: the commit.
    fn commit(&mut self, state: LifeState) -> Result<(), LiveError> {
        // Strings and integers: always serializes.
        let value = serde_json::to_value(&state).unwrap_or_default();
        let text = to_canonical_string(&value).map_err(|e| LiveError::Damaged(e.to_string()))?;
        self.root
            .journal()
            .replace_file(LIFE_PATH, text.as_bytes())?;
        self.state = state;
        Ok(())
    }

    /// Deletes the oldest closed days past the retention, each whole. The retention counts
    /// the person's dates: the parts a flood split one date into are one day of theirs, and
    /// evict no other date.
    fn sweep(&self) -> Result<(), LiveError> {
        let closed: Vec<String> = days(&self.path)?
            .into_iter()
            .filter(|name| day_order(name) < day_order(&self.state.open))
            .collect();
        let mut dates: Vec<&str> = closed.iter().map(|name| day_order(name).0).collect();
        dates.dedup();
        let over = dates.len().saturating_sub(self.keep_days);
        let dropped = &dates[..over];
        for name in &closed {
            if dropped.contains(&day_order(name).0) {
                self.delete_day(name)?;
            }
        }
        Ok(())
    }

    /// Deletes the day `name` whole, if it is there: renamed aside (synced), then removed. A
    /// kill in between leaves it aside, removed at the next start.
    fn delete_day(&self, name: &str) -> Result<(), LiveError> {
        Ok(self
            .root
            .journal()
            .remove_dir_whole(&format!("{DAYS_DIR}/{name}"))?)
    }
}

/// Moves a life aside: `life.json` and `days/` to `life.<n>.json` and `days.<n>`, `n` the
/// first number free for both.
fn set_aside(path: &Path) -> Result<(), LiveError> {
    let n = (1..)
        .find(|n| {
            !path.join(format!("life.{n}.json")).exists()
                && !path.join(format!("{DAYS_DIR}.{n}")).exists()
        })
        .unwrap_or(u32::MAX);
    let days = path.join(DAYS_DIR);
    if days.exists() {
        std::fs::rename(&days, path.join(format!("{DAYS_DIR}.{n}"))).map_err(|e| io(&days, e))?;
    }
    let life = path.join(LIFE_PATH);
    std::fs::rename(&life, path.join(format!("life.{n}.json"))).map_err(|e| io(&life, e))?;
    tracing::warn!(n, "the data dir's life was set aside");
    sync_dir(path)
}
