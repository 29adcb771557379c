//! Scenarios: a day of signals as a timeline, and the world it describes at each tick.
//!
//! It owns reading a scenario file (size cap, I-JSON, `schemas/scenario.v1.json`), the tick
//! grid and the person's clock; the world the signals describe, applied in time order, with
//! the context snapshot each agent's tick receives (its shape is documented in the schema's
//! description) and what a day carries into the next, is [`world`]'s. It must not run agents
//! or decide anything: the orchestrator does, and tells the world what executed calls
//! changed.

use serde_json::{Value, json};
use sha2::Digest;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use aura_contract::canonical::parse_i_json;
use aura_contract::catalogue::SCENARIO_SCHEMA;
use aura_contract::limits::{SCENARIO_BYTES_MAX, SCENARIO_DAYS_MAX, URGENT_TICK_QUANTUM_MS};
use aura_contract::schema::{SchemaRegistry, SchemaViolation};

mod world;
pub use world::World;
pub(crate) use world::start_of_day;

/// The kind of the items the user is asked about: a pending invitation, named in answers as
/// `invitation:<id>`.
pub const INVITATION: &str = "invitation";
/// The kind of signal that moves the person's clock to another offset (they travelled).
pub const UTC_OFFSET: &str = "utc_offset";

/// Why a scenario could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    /// The file could not be read.
    #[error("cannot read scenario {path}")]
    Read {
        /// The path given.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file is larger than [`SCENARIO_BYTES_MAX`].
    #[error("scenario {path} is {bytes} bytes, more than {SCENARIO_BYTES_MAX}")]
    TooLarge {
        /// The path given.
        path: String,
        /// Its size.
        bytes: u64,
    },
    /// Not I-JSON.
    #[error("scenario is not valid JSON")]
    Json(#[from] aura_contract::canonical::JsonError),
    /// Not a scenario.v1.
    #[error("scenario does not match scenario.v1: {0}")]
    Schema(SchemaViolation),
    /// Valid against the schema but inconsistent (end before start, too long).
    #[error("scenario is inconsistent: {0}")]
    Inconsistent(String),
}

/// One signal of the timeline.
#[derive(Debug, Clone)]
pub struct Signal {
    /// When it happens.
    pub at: OffsetDateTime,
    /// `message`, `event`, …
    pub kind: String,
    /// Its payload (shaped per kind by the schema).
    pub data: Value,
}

/// A user's answer to a question, as the scenario carries it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// By the item the question is about.
    Item {
        /// The agent of the question's call.
        agent: String,
        /// Its tool.
        tool: String,
        /// The item (`<kind>:<id>`) the host bound the question to.
        signal: String,
        /// Confirm (run it) or decline.
        confirm: bool,
    },
    /// By the question itself: its call_id, as the question's decision gave it.
    Question {
        /// The call_id.
        question: String,
        /// What the person said.
        reply: Reply,
    },
}

/// What a person says to a question.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reply {
    /// Run it.
    Yes,
    /// Drop it.
    No,
    /// Ask again later: it stays pending.
    Later,
}

impl Reply {
    /// `yes`, `no` or `later` (scenario.v1's words).
    pub fn named(word: &str) -> Option<Self> {
        match word {
            "yes" => Some(Self::Yes),
            "no" => Some(Self::No),
            "later" => Some(Self::Later),
            _ => None,
        }
    }
}

impl Answer {
    /// The answer a signal's `data` holds (the schema fixed its shape).
    pub(crate) fn of(data: &Value) -> Self {
        let text = |field: &str| data[field].as_str().unwrap_or_default().to_owned();
        match data.get("question") {
            Some(_) => Answer::Question {
                question: text("question"),
                reply: Reply::named(data["reply"].as_str().unwrap_or_default())
                    .unwrap_or(Reply::Later),
            },
            None => Answer::Item {
                agent: text("agent"),
                tool: text("tool"),
                signal: text("signal"),
                confirm: data["confirm"].as_bool().unwrap_or(false),
            },
        }
    }
}

/// A scenario, checked.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// Its name.
    pub name: String,
    /// The first tick.
    pub start: OffsetDateTime,
    /// No tick after this.
    pub end: OffsetDateTime,
    /// Minutes between ticks.
    pub tick_minutes: i64,
    /// The user's offset from UTC.
    pub utc_offset_minutes: i32,
    /// The user's profile, passed to every tick.
    pub profile: Value,
    initial: Value,
    /// Kinds of signal that get a tick of their own at their time (scenario.v1 `tick_on`).
    pub tick_on: Vec<String>,
    /// The day went on past `end` (a live session's journal): no closing digest.
    pub unfinished: bool,
    /// The signals in time order (ties: file order).
    pub signals: Vec<Signal>,
    /// sha256 (hex) of the scenario's setup: everything but its day (`end`, `unfinished`,
    /// `signals`, `description`), as canonical JSON. What a run's identity names: a live
    /// session and the scenario its journal makes are the same run.
    pub setup_sha256: String,
    /// sha256 (hex) of the whole scenario's canonical JSON (the same scenario however its
    /// file is laid out): what a resumed run must be given again.
    pub sha256: String,
}

/// The parts of a scenario that are not its day, in scenario.v1's words.
const SETUP_FIELDS: [&str; 7] = [
    "scenario",
    "start",
    "tick_minutes",
    "utc_offset_minutes",
    "profile",
    "initial",
    "tick_on",
];

impl Scenario {
    /// Reads and checks a scenario file.
    pub fn load(path: &std::path::Path, schemas: &SchemaRegistry) -> Result<Self, ScenarioError> {
        Self::parse(&read_text(path)?, schemas)
    }

    /// Checks a scenario given as text.
    pub fn parse(text: &str, schemas: &SchemaRegistry) -> Result<Self, ScenarioError> {
        let value = parse_i_json(text, SCENARIO_BYTES_MAX)?;
        schemas
            .validate(SCENARIO_SCHEMA.path, &value, "")
            .map_err(ScenarioError::Schema)?;
        // The schema guarantees the shapes read below; times are checked again as they parse.
        let time = |v: &Value, what: &str| {
            let text = v.as_str().unwrap_or_default();
            OffsetDateTime::parse(text, &Rfc3339)
                .map_err(|e| ScenarioError::Inconsistent(format!("{what} `{text}`: {e}")))
        };
        let start = time(&value["start"], "start")?;
        let end = time(&value["end"], "end")?;
        if end < start || end - start > time::Duration::days(SCENARIO_DAYS_MAX) {
            return Err(ScenarioError::Inconsistent(format!(
                "end must be after start and at most {SCENARIO_DAYS_MAX} days later"
            )));
        }
        let mut signals = Vec::new();
        for (i, signal) in value["signals"]
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
        {
            signals.push(Signal {
                at: time(&signal["at"], &format!("signals[{i}].at"))?,
                kind: signal["kind"].as_str().unwrap_or_default().to_owned(),
                data: signal["data"].clone(),
            });
        }
        // Stable: ties keep file order.
        signals.sort_by_key(|signal| signal.at);
        let mut scenario = Self::setup_of(&value, start)?;
        scenario.end = end;
        scenario.unfinished = value["unfinished"].as_bool().unwrap_or(false);
        scenario.signals = signals;
        // The value came from parse_i_json, so it is I-JSON and has a canonical form.
        scenario.sha256 = sha256_of(&value);
        Ok(scenario)
    }

    /// A scenario's setup with no day yet: from a scenario.v1 or live.v1 value already
    /// checked against its schema, starting at `start` and ending there (a live session
    /// moves `end` as it goes).
    pub fn setup_of(value: &Value, start: OffsetDateTime) -> Result<Self, ScenarioError> {
        let tick_minutes = value["tick_minutes"].as_i64().unwrap_or(1);
        let utc_offset_minutes = value["utc_offset_minutes"].as_i64().unwrap_or(0) as i32;
        let tick_on = value["tick_on"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|kind| kind.as_str().map(str::to_owned))
            .collect();
        let mut scenario = Self {
            setup_sha256: String::new(),
            sha256: String::new(),
            name: value["scenario"].as_str().unwrap_or_default().to_owned(),
            start,
            end: start,
            tick_minutes,
            utc_offset_minutes,
            profile: value["profile"].clone(),
            initial: value.get("initial").cloned().unwrap_or_else(|| json!({})),
            tick_on,
            unfinished: false,
            signals: Vec::new(),
        };
        // The setup as the scenario it makes writes it (defaults filled in, the start in the
        // person's offset): a file and the scenario a live session's journal makes of it have
        // the same digest.
        let mut setup = scenario.to_value(&[]);
        if let Some(object) = setup.as_object_mut() {
            object.retain(|field, _| SETUP_FIELDS.contains(&field.as_str()));
        }
        scenario.setup_sha256 = sha256_of(&setup);
        Ok(scenario)
    }

    /// The tick times: `start`, then every `tick_minutes`, and a tick of its own for each
    /// signal of a `tick_on` kind at its time (rounded up to [`URGENT_TICK_QUANTUM_MS`]);
    /// in order, none twice, none after `end`. An `unfinished` day (a live session's record)
    /// ends at its last tick, so `end` is one: the closing tick of a day that filled with
    /// signals runs at once, off the grid.
    pub fn ticks(&self) -> Vec<OffsetDateTime> {
        let mut ticks = Vec::new();
        let mut next = Some(self.start);
        while let Some(at) = next.filter(|at| *at <= self.end) {
            ticks.push(at);
            next = self.tick_after(at);
        }
        if self.unfinished && ticks.last().is_some_and(|last| *last < self.end) {
            ticks.push(self.end);
        }
        ticks
    }

    /// The first tick after `last`: the grid's next, or an earlier urgent signal's.
    pub fn tick_after(&self, last: OffsetDateTime) -> Option<OffsetDateTime> {
        let step = time::Duration::minutes(self.tick_minutes);
        let since_start = last - self.start;
        let steps = since_start.whole_minutes().div_euclid(self.tick_minutes) + 1;
        let grid = self.start + step * steps as i32;
        // Signals are in time order (and so are their ticks): the first urgent one due after
        // `last` is the earliest.
        let due = self
            .signals
            .partition_point(|signal| urgent_tick(signal.at) <= last);
        let urgent = self.signals[due..]
            .iter()
            .filter(|signal| self.tick_on.contains(&signal.kind))
            .map(|signal| urgent_tick(signal.at))
            .find(|at| *at > last);
        Some(urgent.map_or(grid, |urgent| urgent.min(grid)))
    }

    /// Takes `signal` into the day (a live session's): after every signal at or before its
    /// time, so ties keep arrival order, as a scenario's ties keep file order.
    pub fn accept(&mut self, signal: Signal) {
        let index = self.signals.partition_point(|s| s.at <= signal.at);
        self.signals.insert(index, signal);
    }

    /// The scenario.v1 a day makes: this setup, its signals as given, ending at `end`
    /// (`unfinished`: the day went on past it). What `aura run` runs to the same traces.
    pub fn to_value(&self, signals: &[Value]) -> Value {
        let mut value = json!({
            "scenario": self.name,
            "start": self.format(self.start),
            "end": self.format(self.end),
            "tick_minutes": self.tick_minutes,
            "utc_offset_minutes": self.utc_offset_minutes,
            "profile": self.profile,
            "initial": self.initial,
            "signals": signals,
        });
        if !self.tick_on.is_empty() {
            value["tick_on"] = json!(self.tick_on);
        }
        if self.unfinished {
            value["unfinished"] = json!(true);
        }
        value
    }

    /// The world before the first tick (a closed day's record carries the day before's).
    pub fn world(&self) -> World {
        World::initial(&self.initial)
    }

    /// What the orchestrator remembered before the first tick (scenario.v1 `initial.memory`),
    /// when the day was carried from another.
    pub(crate) fn carried_memory(&self) -> Option<&Value> {
        self.initial.get("memory")
    }

    /// The user's quiet hours as local minutes of the day `[start, end)`, if set and not empty.
    pub fn quiet_hours(&self) -> Option<(i64, i64)> {
        let minutes = |v: &Value| {
            let (h, m) = v.as_str()?.split_once(':')?;
            Some(h.parse::<i64>().ok()? * 60 + m.parse::<i64>().ok()?)
        };
        let quiet = self.profile.get("quiet_hours")?;
        let (start, end) = (minutes(&quiet["start"])?, minutes(&quiet["end"])?);
        (start != end).then_some((start, end))
    }

    /// Whether `at` falls in the quiet hours (which may wrap midnight).
    pub fn is_quiet(&self, at: OffsetDateTime) -> bool {
        let Some((start, end)) = self.quiet_hours() else {
            return false;
        };
        let local = self.local(at);
        let minute = i64::from(local.hour()) * 60 + i64::from(local.minute());
        match start < end {
            true => start <= minute && minute < end,
            false => minute >= start || minute < end,
        }
    }

    /// The user's offset east of UTC at `at`: the setup's, or the last `utc_offset` signal's
    /// at or before `at` (they crossed time zones).
    pub fn offset(&self, at: OffsetDateTime) -> time::UtcOffset {
        time::UtcOffset::from_whole_seconds(self.offset_minutes(at) * 60)
            .unwrap_or(time::UtcOffset::UTC)
    }

    /// [`Scenario::offset`] in minutes, as the agents' context gives it.
    pub fn offset_minutes(&self, at: OffsetDateTime) -> i32 {
        self.signals
            .iter()
            .take_while(|signal| signal.at <= at)
            .filter(|signal| signal.kind == UTC_OFFSET)
            .filter_map(|signal| signal.data["utc_offset_minutes"].as_i64())
            .filter_map(|minutes| i32::try_from(minutes).ok())
            .last()
            .unwrap_or(self.utc_offset_minutes)
    }

    /// `at` in the user's offset at that moment.
    pub fn local(&self, at: OffsetDateTime) -> OffsetDateTime {
        at.to_offset(self.offset(at))
    }

    /// `at` as RFC 3339 in the user's offset, e.g. `2026-11-23T08:15:00+01:00`.
    pub fn format(&self, at: OffsetDateTime) -> String {
        self.local(at).format(&Rfc3339).unwrap_or_default()
    }
}

/// A scenario's (or a live setup's) file as text, within [`SCENARIO_BYTES_MAX`].
pub fn read_text(path: &std::path::Path) -> Result<String, ScenarioError> {
    let shown = path.display().to_string();
    let read = |source| ScenarioError::Read {
        path: shown.clone(),
        source,
    };
    let bytes = std::fs::metadata(path).map_err(read)?.len();
    if bytes > SCENARIO_BYTES_MAX as u64 {
        return Err(ScenarioError::TooLarge { path: shown, bytes });
    }
    std::fs::read_to_string(path).map_err(read)
}

/// sha256 (hex) of a value's canonical JSON (an I-JSON value: it has one).
pub(crate) fn sha256_of(value: &Value) -> String {
    let canonical = aura_contract::canonical::to_canonical_string(value).unwrap_or_default();
    aura_contract::digest::hex(&sha2::Sha256::digest(canonical.as_bytes()))
}

/// The tick of a signal that ticks at once: its time rounded up to [`URGENT_TICK_QUANTUM_MS`]
/// (from the Unix epoch, so the same instant in any offset).
pub fn urgent_tick(at: OffsetDateTime) -> OffsetDateTime {
    let quantum = i128::from(URGENT_TICK_QUANTUM_MS) * 1_000_000;
    let nanos = at.unix_timestamp_nanos();
    let up = nanos + (quantum - nanos.rem_euclid(quantum)) % quantum;
    at + time::Duration::nanoseconds((up - nanos) as i64)
}

#[cfg(test)]
mod tests;
