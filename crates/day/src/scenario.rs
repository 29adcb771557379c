//! Scenarios: a day of signals as a timeline, and the world it describes at each tick.
//!
//! It owns reading a scenario file (size cap, I-JSON, `schemas/scenario.v1.json`), the tick
//! grid, applying signals in time order, and the context snapshot each agent's tick receives
//! (its shape is documented in the schema's description). It must not run agents or decide
//! anything: the orchestrator does, and tells the world what executed calls changed.

use serde_json::{Map, Value, json};
use sha2::Digest;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use aura_contract::canonical::parse_i_json;
use aura_contract::catalogue::{Effect, SCENARIO_SCHEMA};
use aura_contract::limits::{
    CONTEXT_MESSAGES_MAX, CONTEXT_SLEEP_SESSIONS_MAX, CONTEXT_TRANSACTIONS_MAX, SCENARIO_BYTES_MAX,
    SCENARIO_DAYS_MAX,
};
use aura_contract::schema::{SchemaRegistry, SchemaViolation};

/// The kind of the items the user is asked about: a pending invitation, named in answers as
/// `invitation:<id>`.
pub const INVITATION: &str = "invitation";

/// Why a scenario could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    /// The file could not be read.
    #[error("cannot read scenario {path}: {source}")]
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
    #[error("scenario is not valid JSON: {0}")]
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
pub struct Answer {
    /// The agent of the question's call.
    pub agent: String,
    /// Its tool.
    pub tool: String,
    /// A signal of the question's proposal that identifies it.
    pub signal: String,
    /// Confirm (run it) or decline.
    pub confirm: bool,
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
    /// The signals in time order (ties: file order).
    pub signals: Vec<Signal>,
    /// sha256 (hex) of the scenario's canonical JSON: what a run's identity names (the same
    /// scenario however its file is laid out).
    pub sha256: String,
}

impl Scenario {
    /// Reads and checks a scenario file.
    pub fn load(path: &std::path::Path, schemas: &SchemaRegistry) -> Result<Self, ScenarioError> {
        let shown = path.display().to_string();
        let read = |source| ScenarioError::Read {
            path: shown.clone(),
            source,
        };
        let bytes = std::fs::metadata(path).map_err(read)?.len();
        if bytes > SCENARIO_BYTES_MAX as u64 {
            return Err(ScenarioError::TooLarge { path: shown, bytes });
        }
        let text = std::fs::read_to_string(path).map_err(read)?;
        Self::parse(&text, schemas)
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
        // The value came from parse_i_json, so it is I-JSON and has a canonical form.
        let canonical = aura_contract::canonical::to_canonical_string(&value).unwrap_or_default();
        let sha256 = aura_contract::digest::hex(&sha2::Sha256::digest(canonical.as_bytes()));
        Ok(Self {
            sha256,
            name: value["scenario"].as_str().unwrap_or_default().to_owned(),
            start,
            end,
            tick_minutes: value["tick_minutes"].as_i64().unwrap_or(1),
            utc_offset_minutes: value["utc_offset_minutes"].as_i64().unwrap_or(0) as i32,
            profile: value["profile"].clone(),
            initial: value.get("initial").cloned().unwrap_or_else(|| json!({})),
            signals,
        })
    }

    /// The tick times, `start` first, every `tick_minutes`, none after `end`.
    pub fn ticks(&self) -> Vec<OffsetDateTime> {
        let step = time::Duration::minutes(self.tick_minutes);
        std::iter::successors(Some(self.start), |t| Some(*t + step))
            .take_while(|t| *t <= self.end)
            .collect()
    }

    /// The world before the first tick.
    pub fn world(&self) -> World {
        let list = |name: &str| self.initial[name].as_array().cloned().unwrap_or_default();
        World {
            messages: Vec::new(),
            events: list("events"),
            transactions: list("transactions"),
            readings: Map::new(),
            sleep_sessions: list("sleep_sessions"),
            invitations: Vec::new(),
            next_signal: 0,
        }
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

    /// The user's offset east of UTC.
    pub fn offset(&self) -> time::UtcOffset {
        time::UtcOffset::from_whole_seconds(self.utc_offset_minutes * 60)
            .unwrap_or(time::UtcOffset::UTC)
    }

    /// `at` in the user's offset.
    pub fn local(&self, at: OffsetDateTime) -> OffsetDateTime {
        at.to_offset(self.offset())
    }

    /// `at` as RFC 3339 in the user's offset, e.g. `2026-11-23T08:15:00+01:00`.
    pub fn format(&self, at: OffsetDateTime) -> String {
        self.local(at).format(&Rfc3339).unwrap_or_default()
    }
}

/// The state the signals so far describe. Agents never see it whole: each tick gets a
/// bounded snapshot ([`World::context`]). A run's checkpoint keeps it whole.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct World {
    messages: Vec<Value>,
    events: Vec<Value>,
    transactions: Vec<Value>,
    readings: Map<String, Value>,
    sleep_sessions: Vec<Value>,
    invitations: Vec<Value>,
    next_signal: usize,
}

impl World {
    /// Applies every signal up to and including `now`; returns the answers among them, in
    /// order, for the orchestrator.
    pub fn advance(&mut self, scenario: &Scenario, now: OffsetDateTime) -> Vec<Answer> {
        let mut answers = Vec::new();
        while let Some(signal) = scenario.signals.get(self.next_signal) {
            if signal.at > now {
                break;
            }
            self.next_signal += 1;
            let data = &signal.data;
            match signal.kind.as_str() {
                "message" => self.messages.push(data.clone()),
                "event" => {
                    self.events.retain(|e| e["id"] != data["id"]);
                    self.events.push(data.clone());
                }
                "cancel_event" => self.events.retain(|e| e["id"] != data["id"]),
                "transaction" => self.transactions.push(data.clone()),
                "reading" => {
                    for (field, value) in data.as_object().into_iter().flatten() {
                        self.readings.insert(field.clone(), value.clone());
                    }
                }
                "sleep_session" => self.sleep_sessions.push(data.clone()),
                "invitation" => {
                    self.invitations.retain(|i| i["id"] != data["id"]);
                    self.invitations.push(data.clone());
                }
                "answer" => answers.push(Answer {
                    agent: data["agent"].as_str().unwrap_or_default().to_owned(),
                    tool: data["tool"].as_str().unwrap_or_default().to_owned(),
                    signal: data["signal"].as_str().unwrap_or_default().to_owned(),
                    confirm: data["confirm"].as_bool().unwrap_or(false),
                }),
                // The schema admits no other kind.
                _ => {}
            }
        }
        answers
    }

    /// Signals applied so far.
    pub fn signals_applied(&self) -> usize {
        self.next_signal
    }

    /// The user's calendar events so far, in the order they were added.
    pub fn events(&self) -> &[Value] {
        &self.events
    }

    /// The user's pending items of `kind`, as the scenario gave them (each with an `id`): what
    /// a question can be about.
    pub fn pending(&self, kind: &str) -> &[Value] {
        match kind {
            INVITATION => &self.invitations,
            _ => &[],
        }
    }

    /// The user answered the question about `item` (`<kind>:<id>`): an invitation is no longer
    /// pending, whatever the answer.
    pub fn answered(&mut self, item: &str) {
        if let Some(id) = item
            .strip_prefix(INVITATION)
            .and_then(|rest| rest.strip_prefix(':'))
        {
            self.invitations.retain(|i| i["id"] != id);
        }
    }

    /// Applies what a call the user confirmed changed (from the tool's catalogue entry).
    pub fn apply(&mut self, effect: Effect) {
        match effect {
            Effect::AddEvent(event) => {
                self.events.retain(|e| e["id"] != event["id"]);
                self.events.push(event);
            }
        }
    }

    /// The context snapshot every agent's tick receives at `now`.
    pub fn context(&self, scenario: &Scenario, now: OffsetDateTime) -> Value {
        fn latest(items: &[Value], max: usize) -> &[Value] {
            &items[items.len().saturating_sub(max)..]
        }
        json!({
            "now": scenario.format(now),
            "utc_offset_minutes": scenario.utc_offset_minutes,
            "profile": scenario.profile,
            "messages": latest(&self.messages, CONTEXT_MESSAGES_MAX),
            "events": self.events,
            "transactions": latest(&self.transactions, CONTEXT_TRANSACTIONS_MAX),
            "readings": self.readings,
            "sleep_sessions": latest(&self.sleep_sessions, CONTEXT_SLEEP_SESSIONS_MAX),
            "invitations": self.invitations,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schemas() -> SchemaRegistry {
        SchemaRegistry::compile(aura_contract::catalogue::all_schemas()).unwrap()
    }

    const SMALL: &str = r#"{
        "scenario": "small", "start": "2026-11-23T06:00:00+01:00",
        "end": "2026-11-23T07:00:00+01:00", "tick_minutes": 30, "utc_offset_minutes": 60,
        "profile": {"quiet_hours": {"start": "22:00", "end": "06:30"}},
        "initial": {"events": [{"id": "e0", "start": "2026-11-23T09:00:00+01:00", "end": "2026-11-23T10:00:00+01:00"}]},
        "signals": [
            {"at": "2026-11-23T06:40:00+01:00", "kind": "cancel_event", "data": {"id": "e0"}},
            {"at": "2026-11-23T06:10:00+01:00", "kind": "reading", "data": {"hrv_ms": 40}},
            {"at": "2026-11-23T06:20:00+01:00", "kind": "reading", "data": {"hrv_ms": 35, "resting_hr_bpm": 70}},
            {"at": "2026-11-23T06:30:00+01:00", "kind": "answer", "data": {"agent": "calendar", "tool": "schedule_event", "signal": "invitation:i1", "confirm": true}}
        ]
    }"#;

    #[test]
    fn ticks_are_on_the_grid_and_signals_apply_in_time_order() {
        let scenario = Scenario::parse(SMALL, &schemas()).unwrap();
        let ticks = scenario.ticks();
        // 06:00, 06:30, 07:00 (end included).
        assert_eq!(ticks.len(), 3);
        assert_eq!(scenario.format(ticks[1]), "2026-11-23T06:30:00+01:00");
        let mut world = scenario.world();
        assert!(world.advance(&scenario, ticks[0]).is_empty());
        let first = world.context(&scenario, ticks[0]);
        assert_eq!(first["readings"], json!({}));
        assert_eq!(first["events"].as_array().unwrap().len(), 1);
        // At 06:30: both readings (the later one wins field by field) and the answer.
        let answers = world.advance(&scenario, ticks[1]);
        assert_eq!(answers.len(), 1);
        assert!(answers[0].confirm);
        assert_eq!(answers[0].signal, "invitation:i1");
        let second = world.context(&scenario, ticks[1]);
        assert_eq!(
            second["readings"],
            json!({"hrv_ms": 35, "resting_hr_bpm": 70})
        );
        assert_eq!(second["now"], "2026-11-23T06:30:00+01:00");
        // At 07:00 the event is cancelled.
        world.advance(&scenario, ticks[2]);
        assert_eq!(world.context(&scenario, ticks[2])["events"], json!([]));
        assert_eq!(world.signals_applied(), 4);
    }

    #[test]
    fn invitations_are_pending_until_answered_whatever_the_answer() {
        let text = SMALL.replace(
            r#"{"at": "2026-11-23T06:40:00+01:00", "kind": "cancel_event", "data": {"id": "e0"}},"#,
            r#"{"at": "2026-11-23T06:05:00+01:00", "kind": "invitation", "data": {"id": "i1", "from": "a@b.c", "title": "T", "start": "2026-11-23T09:00:00+01:00", "end": "2026-11-23T10:00:00+01:00"}},"#,
        );
        let scenario = Scenario::parse(&text, &schemas()).unwrap();
        let mut world = scenario.world();
        world.advance(&scenario, scenario.ticks()[1]);
        assert_eq!(world.pending(INVITATION).len(), 1);
        assert_eq!(world.pending(INVITATION)[0]["id"], "i1");
        assert!(world.pending("parcel").is_empty());
        world.answered("invitation:i2");
        assert_eq!(world.pending(INVITATION).len(), 1, "another item");
        world.answered("invitationi1");
        assert_eq!(world.pending(INVITATION).len(), 1, "not an item's name");
        world.answered("invitation:i1");
        assert!(world.pending(INVITATION).is_empty());
    }

    #[test]
    fn quiet_hours_wrap_midnight_in_local_time() {
        let scenario = Scenario::parse(SMALL, &schemas()).unwrap();
        let at = |s: &str| OffsetDateTime::parse(s, &Rfc3339).unwrap();
        // 22:00–06:30 local (+01:00).
        assert!(scenario.is_quiet(at("2026-11-23T05:29:00Z"))); // 06:29 local
        assert!(!scenario.is_quiet(at("2026-11-23T05:30:00Z"))); // 06:30 local
        assert!(!scenario.is_quiet(at("2026-11-23T20:59:00Z"))); // 21:59 local
        assert!(scenario.is_quiet(at("2026-11-23T21:00:00Z"))); // 22:00 local
        assert!(scenario.is_quiet(at("2026-11-23T23:30:00Z"))); // 00:30 local
    }

    #[test]
    fn bad_scenarios_get_typed_errors() {
        let schemas = schemas();
        assert!(matches!(
            Scenario::parse("{", &schemas),
            Err(ScenarioError::Json(_))
        ));
        let no_signals = SMALL.replace("\"signals\"", "\"signalz\"");
        assert!(matches!(
            Scenario::parse(&no_signals, &schemas),
            Err(ScenarioError::Schema(_))
        ));
        let backwards = SMALL.replace("\"end\": \"2026-11-23T07", "\"end\": \"2026-11-23T05");
        assert!(matches!(
            Scenario::parse(&backwards, &schemas),
            Err(ScenarioError::Inconsistent(_))
        ));
        let unknown_kind = SMALL.replace("\"cancel_event\"", "\"teleport\"");
        assert!(matches!(
            Scenario::parse(&unknown_kind, &schemas),
            Err(ScenarioError::Schema(_))
        ));
    }
}
