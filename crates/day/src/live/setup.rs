//! A live session's setup: reading its file (live.v1, or a scenario's setup), the scenario it
//! lives (its `tick_on` resolved, its start where the data dir's session started or by the
//! clock), the setup saved in the data dir, and the session's journal read back as a scenario.
//!
//! It owns `<data-dir>/live.json` and reading `signals.jsonl` back; it must not take or
//! refuse inputs (the session does) nor decide anything.

use std::path::Path;

use serde_json::Value;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use aura_contract::canonical::parse_i_json;
use aura_contract::catalogue::{LIVE_SETUP_SCHEMA, SCENARIO_SCHEMA};
use aura_contract::limits::{LIVE_SIGNAL_BYTES_MAX, SCENARIO_BYTES_MAX};
use aura_host::Host;
use aura_host::journal::SIGNALS_PATH;

use super::clock::{Clock, Reading};
use super::input::{Sent, sent};
use super::{LIVE_TICK_ON, LiveConfig, LiveError};
use crate::checkpoint::{LIVE_SETUP_PATH, Start};
use crate::scenario::{Scenario, ScenarioError, Signal};

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
        })
    }
}

/// The session's setup as a scenario with no signals yet: the file's, `tick_on` resolved,
/// starting where the data dir's session started (when it holds this setup and resumes) or
/// by the clock.
pub(super) fn setup(host: &Host, config: &LiveConfig) -> Result<Scenario, LiveError> {
    let mut setup = config.setup.clone();
    let tick_on: Vec<Value> = match (&config.tick_on, setup.get("tick_on")) {
        (Some(kinds), _) => kinds.iter().map(|k| Value::String(k.clone())).collect(),
        (None, Some(Value::Array(kinds))) => kinds.clone(),
        (None, _) => LIVE_TICK_ON
            .iter()
            .map(|k| Value::String((*k).to_owned()))
            .collect(),
    };
    if let Some(object) = setup.as_object_mut() {
        for day in ["start", "end", "signals", "unfinished", "description"] {
            object.remove(day);
        }
        object.remove("tick_on");
        if !tick_on.is_empty() {
            object.insert("tick_on".to_owned(), Value::Array(tick_on));
        }
    }
    let time = |what: &str| {
        let text = config.setup[what].as_str().unwrap_or_default();
        OffsetDateTime::parse(text, &Rfc3339)
            .map_err(|e| LiveError::Clock(format!("the scenario's {what} `{text}`: {e}")))
    };
    let mut scenario = match (config.clock.replays(), config.is_scenario) {
        (true, false) => {
            return Err(LiveError::Clock(
                "a replayed clock runs a recorded day: give a scenario file (its start and end)"
                    .to_owned(),
            ));
        }
        (true, true) => {
            let mut scenario = Scenario::setup_of(&setup, time("start")?)?;
            scenario.end = time("end")?;
            scenario
        }
        (false, _) => {
            let now = Reading::wall_now();
            let minute = now.replace_second(0).and_then(|t| t.replace_nanosecond(0));
            let start = match (config.start, started_at(host, &setup)) {
                (Start::Resume, Some(start)) => start,
                _ => minute.unwrap_or(now),
            };
            Scenario::setup_of(&setup, start)?
        }
    };
    scenario.unfinished = !config.clock.replays();
    Ok(scenario)
}

/// When the data dir's session of this setup started, if it holds one.
fn started_at(host: &Host, setup: &Value) -> Option<OffsetDateTime> {
    let bytes = host
        .journal()
        .read_file(LIVE_SETUP_PATH, SCENARIO_BYTES_MAX as u64)
        .ok()??;
    let saved: Value = serde_json::from_slice(&bytes).ok()?;
    let start = OffsetDateTime::parse(saved["start"].as_str()?, &Rfc3339).ok()?;
    // The same setup, defaults filled in the same way (a file without `initial` and the saved
    // `"initial": {}` are one setup), started then.
    let digest = |value: &Value| {
        Scenario::setup_of(value, start)
            .ok()
            .map(|s| s.setup_sha256)
    };
    (digest(&saved)? == digest(setup)?).then_some(start)
}

/// Writes the session's setup with its start into the data dir (what [`export`] makes a
/// scenario of, and where a restarted session finds its start).
pub(super) fn save_setup(host: &Host, scenario: &Scenario) -> Result<(), LiveError> {
    let mut setup = scenario.to_value(&[]);
    if let Some(object) = setup.as_object_mut() {
        for day in ["end", "signals", "unfinished"] {
            object.remove(day);
        }
    }
    let text = aura_contract::canonical::to_canonical_string(&setup)
        .map_err(|e| LiveError::Damaged(e.to_string()))?;
    Ok(host
        .journal()
        .replace_file(LIVE_SETUP_PATH, text.as_bytes())?)
}

/// One line of the session's journal: the signal it recorded, and the sender's id and what it
/// sent under it, if it gave an id.
pub(super) fn read_signal(
    line: &str,
    seq: usize,
) -> Result<(Signal, Option<(String, Sent)>), LiveError> {
    let damaged = |why: String| LiveError::Damaged(format!("signal {seq}: {why}"));
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
    Ok((signal, id))
}

/// A journal line as the scenario.v1 signal it is (what the session added to it taken off).
fn scenario_signal(mut record: Value) -> Value {
    if let Some(object) = record.as_object_mut() {
        for added in ["id", "sent", "stamped"] {
            object.remove(added);
        }
    }
    record
}

/// The data dir's live session as a scenario.v1: its setup as it started, its signals as
/// acknowledged, ending at its last tick (`unfinished` unless its day ended). `aura run`
/// over it gives the session's traces.
pub fn export(host: &Host) -> Result<Value, LiveError> {
    let journal = host.journal();
    let bytes = journal
        .read_file(LIVE_SETUP_PATH, SCENARIO_BYTES_MAX as u64)?
        .ok_or_else(|| {
            LiveError::Damaged(format!(
                "no {LIVE_SETUP_PATH}: this data dir holds no live session"
            ))
        })?;
    let text = std::str::from_utf8(&bytes).map_err(|e| LiveError::Damaged(e.to_string()))?;
    let setup =
        parse_i_json(text, SCENARIO_BYTES_MAX).map_err(|e| LiveError::Damaged(e.to_string()))?;
    let start = OffsetDateTime::parse(setup["start"].as_str().unwrap_or_default(), &Rfc3339)
        .map_err(|e| LiveError::Damaged(format!("its start: {e}")))?;
    let mut scenario = Scenario::setup_of(&setup, start)?;
    let (last_tick, finished) = crate::checkpoint::live_progress(journal)?;
    scenario.end = last_tick.unwrap_or(start);
    scenario.unfinished = !finished;
    journal.open_live()?;
    let mut signals = Vec::new();
    for (seq, line) in journal
        .lines(SIGNALS_PATH, 0, SCENARIO_BYTES_MAX as u64)?
        .into_iter()
        .enumerate()
    {
        let value = parse_i_json(&line, LIVE_SIGNAL_BYTES_MAX * 2)
            .map_err(|e| LiveError::Damaged(format!("signal {seq}: {e}")))?;
        signals.push(scenario_signal(value));
    }
    Ok(scenario.to_value(&signals))
}
