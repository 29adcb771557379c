//! The catalogue: the locked set of (agent, tool) pairs the host will dispatch (ADR-0009), and
//! everything the host knows about each tool.
//!
//! It owns the list itself, compiled into the binary with every schema it names, so a phone
//! build carries it and nothing is read from disk at run time. Each tool has one home, its
//! entry in its agent's file (`catalogue/<agent>.rs`): its two schemas
//! (`schemas/<agent>/<tool>.{args,result}.json`), its default deadline, whether the user must
//! confirm it, the lead of every rationale about it, how a surface tells its result, how it is
//! asked as a question and what confirming it changes. Adding a tool is that entry plus its two
//! schema files. It must not validate anything itself (the crossing does, with the schema
//! registry) and it must not learn tools from plugins: a plugin that claims a tool outside this
//! list is refused.

use serde::Serialize;
use serde_json::Value;

use crate::limits::AGENTS_MAX;
use crate::schema::{DerivedSchema, SchemaSource};
use crate::schema_source;

mod calendar;
mod comms;
mod finance;
mod text;

pub use text::{Telling, fit_line, fit_speech, raw_numbers};
mod wellness;

/// One tool an agent implements, and everything the host knows about it.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct ToolSpec {
    /// Tool name as it appears in toolcall.v1 `tool`.
    pub name: &'static str,
    /// Schema the call's `args` must satisfy.
    #[serde(serialize_with = "serialize_schema_id")]
    pub args_schema: SchemaSource,
    /// Schema the agent's result must satisfy.
    #[serde(serialize_with = "serialize_schema_id")]
    pub result_schema: SchemaSource,
    /// Deadline when the envelope carries no `deadline_ms`.
    pub deadline_ms_default: u64,
    /// Whether the user must confirm before the orchestrator executes this tool.
    pub confirm_required: bool,
    /// Why an agent proposes this tool at all: the lead of every rationale about it.
    pub rationale_lead: &'static str,
    /// What a phone card shows for a result (valid against the result schema), in the words
    /// a person uses (names, titles, local times, amounts; never an id, a raw score or a
    /// float); the caller cuts it to [`SUMMARY_CHARS_MAX`](crate::limits::SUMMARY_CHARS_MAX).
    #[serde(skip)]
    pub summarize: fn(&Value, &Telling<'_>) -> String,
    /// The same result as one short sentence: the line on the watch and what the earbuds
    /// say. Written to fit [`WATCH_LINE_CHARS_MAX`](crate::limits::WATCH_LINE_CHARS_MAX) and
    /// [`SPEECH_WORDS_MAX`](crate::limits::SPEECH_WORDS_MAX) when names are of usual length;
    /// the caller cuts a longer one at a word.
    #[serde(skip)]
    pub headline: fn(&Value, &Telling<'_>) -> String,
    /// When what a result tells stops being true (the clash it names has ended), if the tool
    /// can say: news kept for a digest is left out of one after that.
    #[serde(skip)]
    pub ends: Option<fn(&Value, &Telling<'_>) -> Option<time::OffsetDateTime>>,
    /// For a tool asked before it runs: the question, from the call's args (valid against the
    /// args schema). `None`: the rationale's lead and "Go ahead? (yes / no)"; every tool that
    /// needs the user's yes has its own (the catalogue's tests hold it to that).
    #[serde(skip)]
    pub question: Option<fn(&Value, &Telling<'_>) -> String>,
    /// What running it on the user's yes changes in the user's world, from its result.
    #[serde(skip)]
    pub on_confirm: Option<fn(&Value) -> Option<Effect>>,
    /// For a tool asked before it runs: which of the user's pending items a question is about,
    /// decided by the host from the call's args (never from what the proposing agent claims),
    /// so the user's answer about that item reaches exactly that question.
    #[serde(skip)]
    pub about: Option<About>,
    /// Which of a proposal's signals name news for the user, and how much each matters. The
    /// orchestrator interrupts only for news the user has not been told (a subject not told
    /// yet, or told at a lower level); signals not listed here are context, never news.
    pub news: &'static [NewsSignal],
    /// For a tool whose news is known only from its answer: which items of the result are
    /// news. The card shows only the items the user has not been told; a result with none is
    /// recorded, not shown.
    #[serde(skip)]
    pub news_in_result: Option<ResultNews>,
}

/// The news items in a tool's result: an array member whose elements each name a subject.
#[derive(Debug, Clone, Copy)]
pub struct ResultNews {
    /// The result's array member that holds the items (`items`).
    pub items: &'static str,
    /// The subject an item tells (the same item gives the same subject in every result).
    pub subject: fn(&Value) -> String,
    /// How much the item matters to the user at the given time, 0-100.
    pub importance: fn(&Value, time::OffsetDateTime) -> u8,
}

/// One kind of signal that names something the user may need to know.
///
/// A signal `<kind>:<value>` matches when its kind is `kind` and, if `value` is given, its
/// value is that. Its subject is `<subject>:<value>` when the value names an item
/// (`interrupt:<message id>`), else `subject` alone (a state, like the stress level, or a
/// measure, like the stress score of a break, whose value changes without being news).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct NewsSignal {
    /// The signal's kind (`interrupt`, `over`, `level`).
    pub kind: &'static str,
    /// Only this value matches (`level:high`); `None`: any value.
    pub value: Option<&'static str>,
    /// Whether the value names the item (and so is part of the subject).
    pub keyed: bool,
    /// What the news is about, the same across ticks and across kinds that escalate each
    /// other (`at_risk:dining/EUR` and `over:dining/EUR` are both `budget:dining/EUR`).
    pub subject: &'static str,
    /// How far the subject has gone: told at one level, it is news again only at a higher one
    /// (a budget at risk = 1, over = 2).
    pub level: u8,
    /// How much it matters to the user, 0-100: arbitration ranks a tick's news by it.
    pub importance: u8,
    /// Whether it may be spoken in the earbuds (EARBUD_TTS is only for what is urgent).
    pub urgent: bool,
    /// When a subject told once is news again.
    pub retell: Retell,
}

/// When news already told is news again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Retell {
    /// Told once is told for the run (an item: a message, a charge).
    Never,
    /// A state still true this many minutes after it was told (a stress level).
    AfterMinutes(i64),
    /// Once a day: news again on a later day of the person's than the one it was told on
    /// (last night's sleep, this month's budget as it stands today).
    NewDay,
}

impl Retell {
    /// When a subject told at `told` stops being told, in the person's day (`told` is in
    /// their offset): `None` for never.
    pub fn until(self, told: time::OffsetDateTime) -> Option<time::OffsetDateTime> {
        match self {
            Self::Never => None,
            Self::AfterMinutes(minutes) => Some(told + time::Duration::minutes(minutes)),
            Self::NewDay => told
                .date()
                .next_day()
                .map(|day| day.midnight().assume_offset(told.offset())),
        }
    }
}

impl NewsSignal {
    /// The same rule, news again `minutes` after it was told.
    pub const fn retell_after(self, minutes: i64) -> Self {
        Self {
            retell: Retell::AfterMinutes(minutes),
            ..self
        }
    }

    /// The same rule, news again on the person's next day.
    pub const fn retell_daily(self) -> Self {
        Self {
            retell: Retell::NewDay,
            ..self
        }
    }

    /// The subject `signal` names under this rule, if it matches.
    pub fn subject_of(&self, signal: &str) -> Option<String> {
        let (kind, value) = signal.split_once(':')?;
        if kind != self.kind {
            return None;
        }
        if self.value.is_some_and(|wanted| wanted != value) {
            return None;
        }
        Some(match self.keyed {
            true => format!("{}:{value}", self.subject),
            false => self.subject.to_owned(),
        })
    }
}

/// A news rule whose signal value names the item (see [`NewsSignal`]).
pub(crate) const fn news(
    kind: &'static str,
    subject: &'static str,
    level: u8,
    importance: u8,
    urgent: bool,
) -> NewsSignal {
    NewsSignal {
        kind,
        value: None,
        keyed: true,
        subject,
        level,
        importance,
        urgent,
        retell: Retell::Never,
    }
}

/// A news rule for a signal whose value is a measure, not an item: any value is the one
/// subject (see [`NewsSignal`]).
pub(crate) const fn measure(
    kind: &'static str,
    subject: &'static str,
    importance: u8,
) -> NewsSignal {
    NewsSignal {
        kind,
        value: None,
        keyed: false,
        subject,
        level: 0,
        importance,
        urgent: false,
        retell: Retell::Never,
    }
}

/// A news rule for a state whose value is its level (see [`NewsSignal`]).
pub(crate) const fn state(
    kind: &'static str,
    value: &'static str,
    subject: &'static str,
    level: u8,
    importance: u8,
) -> NewsSignal {
    NewsSignal {
        kind,
        value: Some(value),
        keyed: false,
        subject,
        level,
        importance,
        urgent: false,
        retell: Retell::Never,
    }
}

/// How a question is bound to the item of the user's world it asks about.
#[derive(Debug, Clone, Copy)]
pub struct About {
    /// The kind of item (`invitation`): the world keeps items of this kind pending, and the
    /// user's answers name one as `<kind>:<id>`.
    pub kind: &'static str,
    /// Whether a call with these args asks about this pending item (as the scenario gave it).
    pub matches: fn(args: &Value, item: &Value) -> bool,
    /// When a question about a call with these args can no longer be carried out (the event
    /// it adds has started): it expires then, if no answer came.
    pub moot_at: fn(args: &Value) -> Option<time::OffsetDateTime>,
}

impl ToolSpec {
    /// The question that asks the user to confirm a call of this tool with `args`: its
    /// entry's, else its rationale's lead (never the agent's or the tool's internal name).
    pub fn question_text(&self, args: &Value, telling: &Telling<'_>) -> String {
        match self.question {
            Some(question) => question(args, telling),
            None => format!("{}. Go ahead? (yes / no)", self.rationale_lead),
        }
    }
}

/// What a confirmed call changes in the user's world (the orchestrator applies it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    /// An event joins the calendar: an object with `id`, `start`, `end` and, when known,
    /// `title` and `location`.
    AddEvent(Value),
}

/// One agent and the tools it must implement, exactly.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct AgentSpec {
    /// Agent name as it appears in toolcall.v1 `agent` and in plugins/manifest.json.
    pub name: &'static str,
    /// Linear memory one call of this agent may grow to (at most
    /// [`MEMORY_BYTES_CEILING`](crate::limits::MEMORY_BYTES_CEILING)).
    pub memory_bytes_max: usize,
    /// Largest component file of this agent the host reads (at most
    /// [`INTERPRETED_COMPONENT_BYTES_MAX`](crate::limits::INTERPRETED_COMPONENT_BYTES_MAX)):
    /// [`COMPONENT_BYTES_MAX`](crate::limits::COMPONENT_BYTES_MAX) unless the entry allows an
    /// implementation that carries an interpreter, with its reason.
    pub component_bytes_max: u64,
    /// Every tool of the agent, no more and no less than its manifest must claim.
    pub tools: &'static [ToolSpec],
    /// The tools of other agents this agent may call through `host.call`, as (agent, tool):
    /// anything else is refused (`call_not_allowed`) before the callee is touched. A tool that
    /// needs the user's confirmation may never be listed: only the user's yes starts one.
    pub may_call: &'static [(&'static str, &'static str)],
    /// Tick contexts with the proposals a faithful implementation makes for each, worked out
    /// by hand (`schemas/<agent>/tick.examples.json`): what `aura test-agent` runs its tick
    /// on, beside each tool's args `examples` and their answers in its result schema's.
    #[serde(skip)]
    pub tick_examples: &'static str,
}

impl AgentSpec {
    /// Whether this agent may call `agent`.`tool` through `host.call`.
    pub fn may_call(&self, agent: &str, tool: &str) -> bool {
        self.may_call.iter().any(|&(a, t)| a == agent && t == tool)
    }
}

fn serialize_schema_id<S: serde::Serializer>(
    source: &SchemaSource,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(&source.id())
}

/// One tool's entry: its two schemas follow one naming rule,
/// `schemas/<agent>/<tool>.{args,result}.json`.
macro_rules! tool_entry {
    (
        $agent:literal, $tool:literal,
        deadline_ms: $deadline:expr,
        confirm: $confirm:expr,
        rationale: $lead:expr,
        summary: $summary:expr,
        headline: $headline:expr,
        ends: $ends:expr,
        question: $question:expr,
        on_confirm: $effect:expr,
        about: $about:expr,
        news: $news:expr,
        news_in_result: $news_in_result:expr $(,)?
    ) => {
        $crate::catalogue::ToolSpec {
            name: $tool,
            args_schema: $crate::schema_source!(concat!($agent, "/", $tool, ".args.json")),
            result_schema: $crate::schema_source!(concat!($agent, "/", $tool, ".result.json")),
            deadline_ms_default: $deadline,
            confirm_required: $confirm,
            rationale_lead: $lead,
            summarize: $summary,
            headline: $headline,
            ends: $ends,
            question: $question,
            on_confirm: $effect,
            about: $about,
            news: $news,
            news_in_result: $news_in_result,
        }
    };
}
pub(crate) use tool_entry;

/// An agent's tick examples, `schemas/<agent>/tick.examples.json`, embedded like its schemas.
macro_rules! tick_examples {
    ($agent:literal) => {
        include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../schemas/",
            $agent,
            "/tick.examples.json"
        ))
    };
}
pub(crate) use tick_examples;

/// The envelope schemas every crossing uses.
pub const TOOLCALL_SCHEMA: SchemaSource = schema_source!("toolcall.v1.json");
/// See [`TOOLCALL_SCHEMA`].
pub const RESULT_SCHEMA: SchemaSource = schema_source!("result.v1.json");
/// See [`TOOLCALL_SCHEMA`].
pub const REPLY_SCHEMA: SchemaSource = schema_source!("reply.v1.json");
/// See [`TOOLCALL_SCHEMA`].
pub const MANIFEST_SCHEMA: SchemaSource = schema_source!("manifest.v1.json");
/// See [`TOOLCALL_SCHEMA`].
pub const PROPOSALS_SCHEMA: SchemaSource = schema_source!("proposals.v1.json");

/// The orchestrator's input (a scenario file) and output (a reasoning trace).
pub const SCENARIO_SCHEMA: SchemaSource = schema_source!("scenario.v1.json");
/// See [`SCENARIO_SCHEMA`].
pub const TRACE_SCHEMA: SchemaSource = schema_source!("trace.v1.json");

/// One signal as `aura live` takes it: scenario.v1's `$defs/signal` (its `at` filled in with
/// the arrival time when the sender gave none) and the sender's optional `id`.
pub const LIVE_SIGNAL_SCHEMA: DerivedSchema = DerivedSchema {
    path: "live/signal.v1.json",
    from: SCENARIO_SCHEMA,
    make: |scenario| {
        let mut defs = scenario["$defs"].clone();
        let mut signal = defs["signal"].clone();
        signal["properties"]["id"] = serde_json::json!({
            "type": "string", "minLength": 1, "maxLength": 128,
            "description": "The sender's id for this signal: the same signal sent again with the same id (no acknowledgement came) is acknowledged again and applied once."
        });
        defs["live_signal"] = signal;
        serde_json::json!({
            "title": "live signal.v1",
            "$ref": "#/$defs/live_signal",
            "$defs": defs,
        })
    },
};

/// What `aura live` starts from (live.v1): a scenario's setup without its day (no end or
/// signals: the clock and the channels give those), with an optional `start` (where a
/// replayed clock begins a life) and the person's IANA `time_zone`.
pub const LIVE_SETUP_SCHEMA: DerivedSchema = DerivedSchema {
    path: "live.v1.json",
    from: SCENARIO_SCHEMA,
    make: |mut scenario| {
        if let Some(properties) = scenario["properties"].as_object_mut() {
            for day in ["end", "signals", "unfinished"] {
                properties.remove(day);
            }
            properties.insert("start".to_owned(), serde_json::json!({
                "type": "string", "format": "date-time", "maxLength": 40,
                "description": "Where a replayed clock (`aura live --clock replay`) begins the life; the machine's clock begins it now."
            }));
            properties.insert("time_zone".to_owned(), serde_json::json!({
                "type": "string", "minLength": 1, "maxLength": 64, "pattern": "^[A-Za-z0-9_+/-]+$",
                "description": "The person's IANA time zone (e.g. `Europe/Berlin`): their midnight, when the session closes the day, and their daylight-saving changes follow it. Without it the offset is `utc_offset_minutes`, changed only by `utc_offset` signals."
            }));
        }
        scenario["title"] = "live.v1".into();
        scenario["description"] = "What `aura live` starts from: a person's profile and initial state, their offset and time zone, the tick interval and the kinds of signal that tick at once; the days themselves come as they happen.".into();
        scenario["required"] =
            serde_json::json!(["scenario", "tick_minutes", "utc_offset_minutes", "profile"]);
        scenario
    },
};

/// The schemas made from others when a registry is built.
pub const DERIVED_SCHEMAS: [DerivedSchema; 2] = [LIVE_SIGNAL_SCHEMA, LIVE_SETUP_SCHEMA];

/// What a refused call tells its caller to do next (the recovery module's output).
pub const RECOVERY_SCHEMA: SchemaSource = schema_source!("recovery.v1.json");

/// What a host publishes on the event stream (`aura.evt.>`, seed 003's AgentMessage).
pub const EVENT_SCHEMA: SchemaSource = schema_source!("event.v1.json");

/// The host's own schemas (envelopes, scenario, trace, recovery, event), in one list.
pub const ENVELOPE_SCHEMAS: [SchemaSource; 9] = [
    TOOLCALL_SCHEMA,
    RESULT_SCHEMA,
    REPLY_SCHEMA,
    MANIFEST_SCHEMA,
    PROPOSALS_SCHEMA,
    SCENARIO_SCHEMA,
    TRACE_SCHEMA,
    RECOVERY_SCHEMA,
    EVENT_SCHEMA,
];

/// The locked catalogue. Its order is the order ticks are taken in (and ties broken).
pub const CATALOGUE: &[AgentSpec] = &[
    calendar::AGENT,
    wellness::AGENT,
    finance::AGENT,
    comms::AGENT,
];

const _: () = assert!(CATALOGUE.len() <= AGENTS_MAX);

/// The agent named `agent`, if the catalogue has it.
pub fn agent(agent: &str) -> Option<&'static AgentSpec> {
    CATALOGUE.iter().find(|spec| spec.name == agent)
}

/// The largest component file of `agent` the host reads: its entry's bound, or
/// [`COMPONENT_BYTES_MAX`](crate::limits::COMPONENT_BYTES_MAX) for a name outside the catalogue.
pub fn component_bytes_max(agent: &str) -> u64 {
    self::agent(agent).map_or(crate::limits::COMPONENT_BYTES_MAX, |spec| {
        spec.component_bytes_max
    })
}

/// `agent` and every agent a call to it can reach through `host.call` (its `may_call`,
/// followed transitively), each once, `agent` first; empty for an agent the catalogue does not
/// have. What a host loads before a call to `agent` starts, so loading a callee never spends
/// the call's deadline.
pub fn reachable_from(agent: &str) -> Vec<&'static str> {
    let mut reached: Vec<&'static str> = Vec::new();
    let mut pending: Vec<&'static AgentSpec> = self::agent(agent).into_iter().collect();
    while let Some(spec) = pending.pop() {
        if reached.contains(&spec.name) {
            continue;
        }
        reached.push(spec.name);
        for &(callee, _) in spec.may_call.iter().rev() {
            pending.extend(self::agent(callee));
        }
    }
    reached
}

/// The tool `tool` of `agent`, if the catalogue has the pair.
pub fn tool(agent: &str, tool: &str) -> Option<&'static ToolSpec> {
    self::agent(agent)?
        .tools
        .iter()
        .find(|spec| spec.name == tool)
}

/// Every schema the host compiles: the envelopes plus each tool's args and result.
pub fn all_schemas() -> impl Iterator<Item = &'static SchemaSource> {
    ENVELOPE_SCHEMAS.iter().chain(
        CATALOGUE
            .iter()
            .flat_map(|agent| agent.tools.iter())
            .flat_map(|tool| [&tool.args_schema, &tool.result_schema]),
    )
}

/// The catalogue as JSON, for `aura catalogue`.
pub fn to_json() -> serde_json::Value {
    serde_json::json!({ "agents": CATALOGUE })
}

#[cfg(test)]
mod tests;
