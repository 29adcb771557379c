//! A live session's setup: reading its file (live.v1, or a scenario's setup), what its life
//! begins with (its `tick_on` resolved, its start by the file or the clock, its time zone),
//! and each day's setup and journal read back as a scenario.
//!
//! It owns a day's `live.json` (its setup with its start) and reading its `signals.jsonl`
//! back as a scenario; it must not take or refuse inputs (the session does), lay out the
//! days (the life does) nor decide anything.

use std::path::Path;

use serde_json::Value;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use aura_contract::canonical::parse_i_json;
use aura_contract::catalogue::{LIVE_SETUP_SCHEMA, SCENARIO_SCHEMA};
use aura_contract::limits::{LIVE_SIGNAL_BYTES_MAX, SCENARIO_BYTES_MAX};
use aura_host::Host;

use super::clock::{Clock, Reading};
use super::input::{Sent, sent};
use super::{LIVE_TICK_ON, LiveConfig, LiveError, zone};
use crate::checkpoint::{LIVE_SETUP_PATH, Start};
use crate::scenario::{Scenario, ScenarioError, Signal, UTC_OFFSET};

impl LiveConfig {
    /// Reads a setup file: a scenario.v1 or a live.v1 (checked against its schema).
    pub fn load(
        path: &Path,
        schemas: &aura_contract::schema::SchemaRegistry,
        seed: u64,
        clock: Clock,
    ) -> Result<Self, LiveError> {
        let text = crate::scenario::read_text(path)?;
        let setup = parse_i_json(&text, SCENARIO_BYTES_MAX).map_err(ScenarioError::Json)?;
        let is_scenario = setup.get("signals").is_some();
        let schema = match is_scenario {
            true => SCENARIO_SCHEMA.path,
            false => LIVE_SETUP_SCHEMA.path,
        };
        schemas
            .validate(schema, &setup, "")
            .map_err(ScenarioError::Schema)?;
        Ok(Self {
            setup,
            is_scenario,
            tick_on: None,
            seed,
            clock,
            start: Start::Resume,
            narration: None,
            keep_days: aura_contract::limits::LIVE_KEEP_DAYS_DEFAULT,
            home: None,
        })
    }
}

/// A session's setup resolved: what its life begins with.
#[derive(Debug, Clone)]
pub(super) struct Resolved {
    /// The setup without its day (`tick_on` resolved; no start, end or signals).
    pub(super) setup: Value,
    /// sha256 of `setup`: the life's identity.
    pub(super) setup_sha256: String,
    /// Where the life begins: the file's start on a replayed clock, else the minute now.
    pub(super) start: OffsetDateTime,
    /// Where it ends: a replayed scenario's end; a life has none.
    pub(super) end: Option<OffsetDateTime>,
    /// The person's time zone, when the setup names one.
    pub(super) time_zone: Option<String>,
}

impl Resolved {
    /// The first day's setup: the setup with its start, at the zone's offset then.
    pub(super) fn day_setup(&self) -> Value {
        let mut setup = self.setup.clone();
        let minutes = self
            .time_zone
            .as_deref()
            .and_then(|zone| super::zone::offset_minutes(zone, self.start).ok())
            .unwrap_or_else(|| setup["utc_offset_minutes"].as_i64().unwrap_or(0) as i32);
        let offset =
            time::UtcOffset::from_whole_seconds(minutes * 60).unwrap_or(time::UtcOffset::UTC);
        setup["utc_offset_minutes"] = minutes.into();
        setup["start"] = Value::String(
            self.start
                .to_offset(offset)
                .format(&Rfc3339)
                .unwrap_or_default(),
        );
        setup
    }

    /// The first day's name: its local date.
    pub(super) fn start_date(&self) -> String {
        let setup = self.day_setup();
        let start = setup["start"].as_str().unwrap_or_default();
        start.get(..10).unwrap_or_default().to_owned()
    }
}

/// The session's setup as its life begins: the file's, `tick_on` resolved, starting at the
/// file's start on a replayed clock (a scenario's also ending at its end) or at the minute
/// now.
pub(super) fn resolve(config: &LiveConfig) -> Result<Resolved, LiveError> {
    let mut setup = config.setup.clone();
    let tick_on: Vec<Value> = match (&config.tick_on, setup.get("tick_on")) {
        (Some(kinds), _) => kinds.iter().map(|k| Value::String(k.clone())).collect(),
        (None, Some(Value::Array(kinds))) => kinds.clone(),
        (None, _) => LIVE_TICK_ON
            .iter()
            .map(|k| Value::String((*k).to_owned()))
            .collect(),
    };
    let time_zone = setup["time_zone"].as_str().map(str::to_owned);
    if let Some(zone) = &time_zone {
        super::zone::check(zone).map_err(|e| LiveError::Clock(e.to_string()))?;
    }
    if let Some(object) = setup.as_object_mut() {
        for day in [
            "start",
            "end",
            "signals",
            "unfinished",
            "description",
            "time_zone",
        ] {
            object.remove(day);
        }
        object.remove("tick_on");
        if !tick_on.is_empty() {
            object.insert("tick_on".to_owned(), Value::Array(tick_on));
        }
        object
            .entry("initial")
            .or_insert_with(|| serde_json::json!({}));
    }
    let time = |what: &str| {
        let text = config.setup[what].as_str().unwrap_or_default();
        OffsetDateTime::parse(text, &Rfc3339)
            .map_err(|e| LiveError::Clock(format!("the setup's {what} `{text}`: {e}")))
    };
    let (start, end) = match (config.clock.replays(), config.is_scenario) {
        (true, _) if config.setup.get("start").is_none() => {
            return Err(LiveError::Clock(
                "a replayed clock lives a recorded life: give a scenario file, or a live setup with its `start`"
                    .to_owned(),
            ));
        }
        (true, true) => (time("start")?, Some(time("end")?)),
        (true, false) => (time("start")?, None),
        (false, _) => {
            let now = Reading::wall_now();
            let minute = now.replace_second(0).and_then(|t| t.replace_nanosecond(0));
            (minute.unwrap_or(now), None)
        }
    };
    Ok(Resolved {
        setup_sha256: crate::scenario::sha256_of(&setup),
        setup,
        start,
        end,
        time_zone,
    })
}

/// The day of `host`'s data dir: its setup as its directory holds it (with its start).
pub(super) fn read_day_setup(host: &Host) -> Result<Value, LiveError> {
    let bytes = host
        .journal()
        .read_file(LIVE_SETUP_PATH, SCENARIO_BYTES_MAX as u64)?
        .ok_or_else(|| {
            LiveError::Damaged(format!(
                "no {LIVE_SETUP_PATH}: this data dir holds no live session"
            ))
        })?;
    let text = std::str::from_utf8(&bytes).map_err(|e| LiveError::Damaged(e.to_string()))?;
    parse_i_json(text, SCENARIO_BYTES_MAX).map_err(|e| LiveError::Damaged(e.to_string()))
}

/// The day of `host`'s data dir as the scenario its setup makes: no signals, ending where it
/// starts.
fn setup_scenario(host: &Host) -> Result<Scenario, LiveError> {
    let setup = read_day_setup(host)?;
    let start = OffsetDateTime::parse(setup["start"].as_str().unwrap_or_default(), &Rfc3339)
        .map_err(|e| LiveError::Damaged(format!("the day's start: {e}")))?;
    Ok(Scenario::setup_of(&setup, start)?)
}

/// The day of `host`'s data dir as a scenario with no signals yet, ending at the life's `end`
/// (a life without one: where it starts, moved as it goes).
pub(super) fn day_scenario(
    host: &Host,
    end: Option<OffsetDateTime>,
) -> Result<Scenario, LiveError> {
    let mut scenario = setup_scenario(host)?;
    let start = scenario.start;
    scenario.end = end.unwrap_or(start);
    scenario.unfinished = end.is_none();
    Ok(scenario)
}

/// One line of a day's journal, read.
pub(super) struct Line {
    /// The signal it records.
    pub(super) signal: Signal,
    /// The sender's id and what was sent under it, if it gave an id.
    pub(super) id: Option<(String, Sent)>,
    /// Its place among the life's signals (`seq` of its acknowledgement): the line's own
    /// `seq`, or, for a line of an earlier aura, its place in the day (`None` for the life's
    /// own lines, a time zone's offset changes, which no sender sent).
    pub(super) seq: Option<usize>,
    /// The tick that closes a day full of signals, on the line that filled it.
    pub(super) closes_at: Option<OffsetDateTime>,
    /// The line as JSON.
    pub(super) value: Value,
}

/// What a journal line records of its acknowledgement: its place among the life's signals.
pub(super) const LINE_SEQ: &str = "seq";
/// What the line that fills a day records: the tick that closes it.
pub(super) const LINE_CLOSES_AT: &str = "closes_at";

/// The `index`th line of a day's journal, the life's `base + index`th signal if it does not
/// say which it is (a line an earlier aura wrote).
pub(super) fn read_line(line: &str, index: usize, base: usize) -> Result<Line, LiveError> {
    let damaged = |why: String| LiveError::Damaged(format!("signal {index}: {why}"));
    let value =
        parse_i_json(line, LIVE_SIGNAL_BYTES_MAX * 2).map_err(|e| damaged(e.to_string()))?;
    let time = |field: &str| {
        let text = value[field].as_str().unwrap_or_default();
        OffsetDateTime::parse(text, &Rfc3339).map_err(|e| damaged(format!("`{field}`: {e}")))
    };
    let signal = Signal {
        at: time("at")?,
        kind: value["kind"]
            .as_str()
            .ok_or_else(|| damaged("no kind".to_owned()))?
            .to_owned(),
        data: value["data"].clone(),
    };
    let at = match (value.get("stamped"), value.get("sent")) {
        (Some(_), _) => None,
        (None, Some(_)) => Some(time("sent")?),
        (None, None) => Some(signal.at),
    };
    let id = value["id"].as_str().map(|id| {
        let what = sent(at, &signal.kind, &signal.data);
        (id.to_owned(), what)
    });
    let own = value.get(LINE_SEQ).is_none()
        && signal.kind == UTC_OFFSET
        && id
            .as_ref()
            .is_some_and(|(id, _)| id.starts_with(zone::ZONE_ID_PREFIX));
    let seq = match value.get(LINE_SEQ) {
        Some(seq) => Some(
            seq.as_u64()
                .and_then(|seq| usize::try_from(seq).ok())
                .ok_or_else(|| damaged(format!("`{LINE_SEQ}` {seq}")))?,
        ),
        None if own => None,
        None => Some(base + index),
    };
    let closes_at = match value.get(LINE_CLOSES_AT) {
        Some(_) => Some(time(LINE_CLOSES_AT)?),
        None => None,
    };
    Ok(Line {
        signal,
        id,
        seq,
        closes_at,
        value,
    })
}

/// A journal line as the scenario.v1 signal it is (what the session added to it taken off).
pub(super) fn scenario_signal(mut record: Value) -> Value {
    if let Some(object) = record.as_object_mut() {
        for added in ["id", "sent", "stamped", LINE_SEQ, LINE_CLOSES_AT] {
            object.remove(added);
        }
    }
    record
}

/// The day of `host`'s data dir as a scenario.v1 with `signals`, ending at `end`.
pub(super) fn record(
    host: &Host,
    signals: &[Value],
    end: OffsetDateTime,
) -> Result<Value, LiveError> {
    let mut scenario = setup_scenario(host)?;
    scenario.end = end;
    Ok(scenario.to_value(signals))
}

/// The open day of a live session (on its host, `days/<day>/` of the data dir) as a
/// scenario.v1: its setup as it began, its signals as acknowledged, ending at its last tick
/// (`unfinished` unless its day ended). `aura run` over it gives the day's traces.
pub fn export(host: &Host) -> Result<Value, LiveError> {
    let journal = host.journal();
    let (last_tick, finished) = crate::checkpoint::live_progress(journal)?;
    let start = setup_scenario(host)?.start;
    let mut signals = Vec::new();
    for (seq, line) in crate::store::files::signal_lines(journal)?
        .into_iter()
        .enumerate()
    {
        let value = parse_i_json(&line, LIVE_SIGNAL_BYTES_MAX * 2)
            .map_err(|e| LiveError::Damaged(format!("signal {seq}: {e}")))?;
        signals.push(scenario_signal(value));
    }
    let mut record = record(host, &signals, last_tick.unwrap_or(start))?;
    if !finished {
        record["unfinished"] = Value::Bool(true);
    }
    Ok(record)
}
