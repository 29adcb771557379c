//! The envelopes an agent writes: `toolcall.v1` calls (the calls its tick proposes and the
//! calls it makes through the host, [`crate::call`]) and `proposals.v1` proposals, with the one
//! rule that caps a proposal's signals.
//!
//! A [`ToolCall`] is built from what the call is about: its id is [`call_id_from`] a seed the
//! agent chooses (deterministic, so a repeated tick proposes the same id), the optional members
//! are present only when set. A [`Proposal`] is a call, its [`Signals`] and a priority; a tick
//! answers with [`answer`].
//!
//! It also reads the one envelope an agent is handed, the call to answer ([`read_call`]).
//!
//! This module owns the shape of those envelopes and the bounds proposals.v1 and toolcall.v1
//! set. It must not decide what an agent proposes, with which signals or priority (the agents'
//! ticks do), and it must not validate args (the host checks them against the tool's schema).

use std::borrow::Cow;

use serde::de::IgnoredAny;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::{ToolError, ToolResult, call_id_from};

/// The shortest and longest `deadline_ms` toolcall.v1 accepts.
pub use aura_protocol::contract::{DEADLINE_MS_MAX, DEADLINE_MS_MIN};
/// proposals.v1's bounds, as the host enforces them (read out of the schema by the build):
/// most signals in one proposal (when there are more, the last kept one is `more:<n>`, see
/// [`Signals`]), the longest signal in characters, and most proposals in one tick's answer.
pub use aura_protocol::contract::{PROPOSALS_MAX, SIGNAL_CHARS_MAX, SIGNALS_MAX};
/// Highest priority (proposals.v1: 0..100).
pub const PRIORITY_MAX: i64 = aura_protocol::contract::PRIORITY_MAX as i64;

/// Where the orchestrator is expected to show a call's outcome (toolcall.v1
/// `expected_surface`), as the host names it too.
pub use aura_protocol::Surface;

/// One toolcall.v1 envelope, built by [`ToolCall::new`] and the setters after it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolCall {
    call_id: String,
    agent: String,
    tool: String,
    args: Value,
    ts: String,
    confirm_required: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    expected_surface: Option<Surface>,
    #[serde(skip_serializing_if = "Option::is_none")]
    deadline_ms: Option<u64>,
}

impl ToolCall {
    /// A call of `agent`'s `tool` with `args` (any serializable value, a `Value` included),
    /// about the moment `ts` (RFC 3339; agents have no clock, so it is the tick's `now` or the
    /// instant the call is about), its `call_id` [`call_id_from`]`(call_id_seed)`. Not for
    /// confirmation, no surface, no deadline until set. Fails only when `args` cannot be JSON
    /// (a map with non-string keys).
    pub fn new(
        call_id_seed: &str,
        agent: &str,
        tool: &str,
        args: impl Serialize,
        ts: &str,
    ) -> ToolResult<Self> {
        let args = serde_json::to_value(args).map_err(|e| {
            ToolError::failed(format!(
                "{agent}.{tool} args are not serializable as JSON: {e}"
            ))
        })?;
        Ok(Self {
            call_id: call_id_from(call_id_seed),
            agent: agent.to_owned(),
            tool: tool.to_owned(),
            args,
            ts: ts.to_owned(),
            confirm_required: false,
            expected_surface: None,
            deadline_ms: None,
        })
    }

    /// Sets `confirm_required`: whether the user must confirm before the call runs (the
    /// catalogue's value for the tool).
    pub fn confirm_required(mut self, confirm_required: bool) -> Self {
        self.confirm_required = confirm_required;
        self
    }

    /// Sets `expected_surface`.
    pub fn expected_surface(mut self, surface: Surface) -> Self {
        self.expected_surface = Some(surface);
        self
    }

    /// Sets `deadline_ms`, which must lie in toolcall.v1's
    /// [`DEADLINE_MS_MIN`]..=[`DEADLINE_MS_MAX`] (else the host would refuse the call).
    pub fn deadline_ms(mut self, deadline_ms: u64) -> ToolResult<Self> {
        if !(DEADLINE_MS_MIN..=DEADLINE_MS_MAX).contains(&deadline_ms) {
            return Err(ToolError::failed(format!(
                "{}.{} deadline_ms {deadline_ms} is outside toolcall.v1's \
                 {DEADLINE_MS_MIN}..{DEADLINE_MS_MAX}",
                self.agent, self.tool
            )));
        }
        self.deadline_ms = Some(deadline_ms);
        Ok(self)
    }

    /// The call's id (`t_` + 10 of `[a-z0-9]`).
    pub fn call_id(&self) -> &str {
        &self.call_id
    }

    /// The agent called.
    pub fn agent(&self) -> &str {
        &self.agent
    }

    /// The tool called.
    pub fn tool(&self) -> &str {
        &self.tool
    }

    /// The call's args.
    pub fn args(&self) -> &Value {
        &self.args
    }

    /// The envelope as a JSON object (moving the args, never copying them).
    pub fn into_value(self) -> Value {
        let mut object = Map::new();
        object.insert("call_id".into(), self.call_id.into());
        object.insert("agent".into(), self.agent.into());
        object.insert("tool".into(), self.tool.into());
        object.insert("args".into(), self.args);
        object.insert("ts".into(), self.ts.into());
        object.insert("confirm_required".into(), self.confirm_required.into());
        if let Some(surface) = self.expected_surface {
            object.insert("expected_surface".into(), surface.as_str().into());
        }
        if let Some(deadline_ms) = self.deadline_ms {
            object.insert("deadline_ms".into(), deadline_ms.into());
        }
        Value::Object(object)
    }
}

/// A proposal's signals, capped by one rule: at most [`SIGNALS_MAX`]; when more are given, the
/// first `SIGNALS_MAX - 1` are kept and the last slot says `more:<n>`, n being how many were
/// left out. Signals are kept as given otherwise (their text is the agent's to bound).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
#[serde(transparent)]
pub struct Signals(Vec<String>);

impl Signals {
    /// `signals`, capped. Only the kept ones are taken from the iterator (a tick may have
    /// thousands of findings and show fifteen).
    pub fn capped<I>(signals: I) -> Self
    where
        I: IntoIterator<Item = String>,
        I::IntoIter: ExactSizeIterator,
    {
        Self::capped_after(Vec::new(), signals)
    }

    /// `leading` (fixed signals that come first, e.g. which invitation a proposal is about)
    /// then `rest`, capped as one list: `leading` always keeps its place, so when the whole is
    /// over the bound it is `rest` that gives way to `more:<n>`.
    pub fn capped_after<I>(mut leading: Vec<String>, rest: I) -> Self
    where
        I: IntoIterator<Item = String>,
        I::IntoIter: ExactSizeIterator,
    {
        let rest = rest.into_iter();
        let total = leading.len() + rest.len();
        if total <= SIGNALS_MAX {
            leading.extend(rest);
            return Self(leading);
        }
        let kept = SIGNALS_MAX - 1;
        leading.truncate(kept);
        let room = kept - leading.len();
        leading.extend(rest.take(room));
        leading.push(format!("more:{}", total - kept));
        Self(leading)
    }

    /// The signals.
    pub fn as_slice(&self) -> &[String] {
        &self.0
    }

    /// The signals joined by `separator` (e.g. for a call id's seed).
    pub fn join(&self, separator: &str) -> String {
        self.0.join(separator)
    }
}

/// One proposals.v1 proposal: a call, what drove it and how much it matters now.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Proposal {
    call: ToolCall,
    signals: Signals,
    priority: i64,
}

impl Proposal {
    /// A proposal of `call`, with `signals` and `priority` (clamped to 0..=[`PRIORITY_MAX`]).
    pub fn new(call: ToolCall, signals: Signals, priority: i64) -> Self {
        Self {
            call,
            signals,
            priority: priority.clamp(0, PRIORITY_MAX),
        }
    }

    /// The proposed call.
    pub fn call(&self) -> &ToolCall {
        &self.call
    }

    /// The proposal's signals.
    pub fn signals(&self) -> &Signals {
        &self.signals
    }

    /// The proposal's priority (0..=100).
    pub fn priority(&self) -> i64 {
        self.priority
    }

    /// The proposal as a JSON object.
    pub fn into_value(self) -> Value {
        let mut object = Map::new();
        object.insert("call".into(), self.call.into_value());
        object.insert(
            "signals".into(),
            Value::Array(self.signals.0.into_iter().map(Value::String).collect()),
        );
        object.insert("priority".into(), self.priority.into());
        Value::Object(object)
    }
}

/// A tick's answer (proposals.v1): `{"proposals": [...]}`.
pub fn answer(proposals: Vec<Proposal>) -> Value {
    let list = proposals.into_iter().map(Proposal::into_value).collect();
    let mut object = Map::new();
    object.insert("proposals".into(), Value::Array(list));
    Value::Object(object)
}

/// What an agent reads of the toolcall.v1 envelope it is handed: the tool's name and the text of
/// its args (`{}` when the call has none); the host has validated the rest.
#[derive(Debug, PartialEq, Eq)]
pub struct CallParts<'a> {
    pub tool: Cow<'a, str>,
    pub args: &'a str,
}

/// Reads a call's tool and args, scanning the args' text only once, in the tool's typed parse.
///
/// The host hands every agent its call in canonical form (RFC 8785), whose members are in order:
/// `agent`, `args`, `call_id`, … `tool`, `ts`. So the tool comes after the args, and reading the
/// envelope by serde alone scans the args twice: once to capture their text, once more in the
/// tool's parse (the first scan was 9 % of calendar's small call's fuel). Here the args' text is
/// cut out by where the members around it start:
/// - the text opens with `{"agent":"<a name without escapes>","args":`;
/// - the args end where the last `,"call_id":` starts (no string can hold `"call_id":`, since
///   every `"` inside a string is escaped; `call_id` is required, and no member after it is an
///   object);
/// - what follows, read as an object, must parse, and holds `tool` but not `args` again.
///
/// When the whole text is valid JSON and those hold, the cut is the parse: the members after the
/// cut close exactly the one object they are in, so the args between are one whole value. Any
/// text that is not so (another order, no `call_id`, no args) is read by serde as before. Only on
/// invalid JSON can the two ways differ, and then only in the message of their `invalid_args`
/// error: a cut whose args do not parse fails in the tool's parse.
///
/// # Errors
///
/// The serde error of a text that is not a toolcall envelope.
pub fn read_call(call: &str) -> Result<CallParts<'_>, serde_json::Error> {
    if let Some(parts) = cut_canonical_call(call) {
        return Ok(parts);
    }
    let call: CallText<'_> = serde_json::from_str(call)?;
    Ok(CallParts {
        tool: call.tool,
        args: call.args.map_or("{}", RawValue::get),
    })
}

/// [`read_call`]'s cut of a canonical call, or `None` when the text is not laid out so.
fn cut_canonical_call(call: &str) -> Option<CallParts<'_>> {
    let agent_and_rest = call.strip_prefix(r#"{"agent":""#)?;
    let agent_end = agent_and_rest.find('"')?;
    if agent_and_rest[..agent_end].contains('\\') {
        return None;
    }
    let args_and_rest = agent_and_rest[agent_end + 1..].strip_prefix(r#","args":"#)?;
    let args_start = call.len() - args_and_rest.len();
    let args_end = last_call_id(call.as_bytes()).filter(|&end| end > args_start)?;
    let rest = format!("{{{}", &call[args_end + 1..]);
    let rest: CallRest = serde_json::from_str(&rest).ok()?;
    if rest.args.is_some() {
        return None;
    }
    Some(CallParts {
        tool: Cow::Owned(rest.tool),
        args: call[args_start..args_end].trim_matches(|c| matches!(c, ' ' | '\t' | '\n' | '\r')),
    })
}

/// Where the last `,"call_id":` in `text` starts: commas found from the end, a few members back
/// (`str::rfind` sets up a substring searcher on each call, which cost more than this scan).
fn last_call_id(text: &[u8]) -> Option<usize> {
    const MEMBER: &[u8] = br#","call_id":"#;
    let mut end = text.len();
    while let Some(comma) = text[..end].iter().rposition(|&byte| byte == b',') {
        if text[comma..].starts_with(MEMBER) {
            return Some(comma);
        }
        end = comma;
    }
    None
}

/// The members of a toolcall.v1 envelope an agent reads, read by serde.
#[derive(Deserialize)]
struct CallText<'a> {
    #[serde(borrow)]
    tool: Cow<'a, str>,
    #[serde(borrow)]
    args: Option<&'a RawValue>,
}

/// The members after a canonical call's args (parsed from a copy, so `tool` is owned): `tool`
/// is read, `args` must be absent.
#[derive(Deserialize)]
struct CallRest {
    tool: String,
    args: Option<IgnoredAny>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn signals(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("s{i}")).collect()
    }

    #[test]
    fn a_call_has_its_optional_members_only_when_set() {
        let call = ToolCall::new(
            "seed",
            "calendar",
            "detect_conflicts",
            json!({"events": []}),
            "2026-11-23T08:00:00Z",
        )
        .unwrap();
        assert_eq!(call.call_id(), call_id_from("seed"));
        assert_eq!(
            call.clone().into_value(),
            json!({"call_id": call_id_from("seed"), "agent": "calendar",
                   "tool": "detect_conflicts", "args": {"events": []},
                   "ts": "2026-11-23T08:00:00Z", "confirm_required": false})
        );
        let call = call
            .confirm_required(true)
            .expected_surface(Surface::EarbudTts)
            .deadline_ms(300)
            .unwrap();
        let value = call.clone().into_value();
        assert_eq!(value["confirm_required"], true);
        assert_eq!(value["expected_surface"], "EARBUD_TTS");
        assert_eq!(value["deadline_ms"], 300);
        // One encoding: the derived one (for sizes and canonical text) agrees.
        assert_eq!(serde_json::to_value(&call).unwrap(), value);
    }

    #[test]
    fn typed_args_and_surfaces_encode_as_json() {
        #[derive(Serialize)]
        struct Args {
            now: &'static str,
            utc_offset_minutes: i32,
        }
        let args = Args {
            now: "T",
            utc_offset_minutes: -60,
        };
        let call = ToolCall::new("s", "wellness", "sleep_summary", &args, "T").unwrap();
        assert_eq!(call.args(), &json!({"now": "T", "utc_offset_minutes": -60}));
        for (surface, text) in [
            (Surface::Watch, "WATCH"),
            (Surface::PhoneCard, "PHONE_CARD"),
            (Surface::EarbudTts, "EARBUD_TTS"),
            (Surface::Silent, "SILENT"),
        ] {
            assert_eq!(surface.as_str(), text);
            assert_eq!(serde_json::to_value(surface).unwrap(), text);
        }
        let mut keys = std::collections::BTreeMap::new();
        keys.insert(vec![1u8], 1);
        let error = ToolCall::new("s", "a", "t", keys, "T").unwrap_err();
        assert_eq!(error.kind, crate::ToolErrorKind::Failed);
    }

    #[test]
    fn deadlines_at_their_bounds() {
        let call = || ToolCall::new("s", "calendar", "find_free_slots", json!({}), "T").unwrap();
        assert!(call().deadline_ms(50).is_ok());
        assert!(call().deadline_ms(10_000).is_ok());
        assert!(call().deadline_ms(49).is_err());
        let error = call().deadline_ms(10_001).unwrap_err();
        assert_eq!(
            error.message,
            "calendar.find_free_slots deadline_ms 10001 is outside toolcall.v1's 50..10000"
        );
    }

    #[test]
    fn signals_cap_at_sixteen() {
        // 16 fit as given; 17 keep 15 and say the 2 left out.
        assert_eq!(Signals::capped(signals(16)).as_slice(), signals(16));
        let capped = Signals::capped(signals(17));
        assert_eq!(capped.as_slice().len(), SIGNALS_MAX);
        assert_eq!(capped.as_slice()[..15], signals(15)[..]);
        assert_eq!(capped.as_slice()[15], "more:2");
        // 124 750 findings: 15 shown, more:124735.
        let many = (0..124_750).map(|i| format!("f{i}"));
        assert_eq!(Signals::capped(many).as_slice()[15], "more:124735");
        assert!(Signals::capped(Vec::new()).as_slice().is_empty());
    }

    #[test]
    fn leading_signals_keep_their_place() {
        let leading = || vec!["invitation:i".to_owned(), "from:a".to_owned()];
        // 2 leading + 14 = 16: all kept.
        let all = Signals::capped_after(leading(), signals(14));
        assert_eq!(all.as_slice().len(), 16);
        assert_eq!(all.as_slice()[15], "s13");
        // 2 leading + 15 = 17: the leading two, 13 of the rest, more:2 (15 − 13).
        let capped = Signals::capped_after(leading(), signals(15));
        assert_eq!(capped.as_slice()[..2], leading()[..]);
        assert_eq!(capped.as_slice()[14], "s12");
        assert_eq!(capped.as_slice()[15], "more:2");
        // 20 of the rest: 13 shown, more:7.
        let capped = Signals::capped_after(leading(), signals(20));
        assert_eq!(capped.as_slice()[15], "more:7");
        assert_eq!(capped.join("|").matches('|').count(), 15);
        // The same rule as capping the whole list.
        let mut whole = leading();
        whole.extend(signals(20));
        assert_eq!(Signals::capped(whole), capped);
        // Leading signals past the bound give way too (15 kept, more counts the rest).
        let capped = Signals::capped_after(signals(17), signals(3));
        assert_eq!(capped.as_slice()[14], "s14");
        assert_eq!(capped.as_slice()[15], "more:5");
    }

    #[test]
    fn proposals_clamp_their_priority_and_answer_as_proposals_v1() {
        let call = || ToolCall::new("s", "finance", "budget_status", json!({}), "T").unwrap();
        let signals = || Signals::capped(vec!["over:food/EUR".to_owned()]);
        assert_eq!(Proposal::new(call(), signals(), 101).priority(), 100);
        assert_eq!(Proposal::new(call(), signals(), -1).priority(), 0);
        assert_eq!(Proposal::new(call(), signals(), 100).priority(), 100);
        assert_eq!(Proposal::new(call(), signals(), 0).priority(), 0);
        let proposal = Proposal::new(call().expected_surface(Surface::PhoneCard), signals(), 65);
        assert_eq!(proposal.call().tool(), "budget_status");
        assert_eq!(proposal.signals().as_slice(), ["over:food/EUR"]);
        let value = proposal.clone().into_value();
        assert_eq!(serde_json::to_value(&proposal).unwrap(), value);
        assert_eq!(
            answer(vec![proposal]),
            json!({"proposals": [{"call": call().expected_surface(Surface::PhoneCard).into_value(),
                                  "signals": ["over:food/EUR"], "priority": 65}]})
        );
        assert_eq!(answer(Vec::new()), json!({"proposals": []}));
    }

    /// read_call's answer, and whether the cut gave it (else serde did).
    fn read(call: &str) -> (Result<(String, String), String>, bool) {
        let parts = read_call(call)
            .map(|parts| (parts.tool.into_owned(), parts.args.to_owned()))
            .map_err(|e| e.to_string());
        (parts, cut_canonical_call(call).is_some())
    }

    fn parts(tool: &str, args: &str) -> Result<(String, String), String> {
        Ok((tool.to_owned(), args.to_owned()))
    }

    #[test]
    fn a_canonical_call_is_cut_around_its_args_even_when_they_hold_its_keys() {
        // Nested members named call_id, tool, agent and args, and a string that spells
        // `","call_id":"` with its quotes escaped: the args end at the top level's call_id.
        let args = r#"{"agent":"x","args":{"tool":"x"},"n":[1,{"a":0,"call_id":"t_0000000000"}],"s":"\",\"call_id\":\"y"}"#;
        let call = format!(
            r#"{{"agent":"calendar","args":{args},"call_id":"t_bench00001","confirm_required":false,"deadline_ms":500,"expected_surface":"WATCH","tool":"detect_conflicts","ts":"2026-11-23T08:00:00Z"}}"#
        );
        assert_eq!(read(&call), (parts("detect_conflicts", args), true));
        // A tool name with an escape is read as serde reads it.
        let call = r#"{"agent":"calendar","args":{},"call_id":"t_1","tool":"a\u0062"}"#;
        assert_eq!(read(call), (parts("ab", "{}"), true));
        // Whitespace around the args is not theirs.
        let call =
            "{\"agent\":\"calendar\",\"args\": {\"a\":1}\n,\"call_id\":\"t_1\",\"tool\":\"t\"}";
        assert_eq!(read(call), (parts("t", r#"{"a":1}"#), true));
    }

    #[test]
    fn a_call_laid_out_otherwise_is_read_by_serde() {
        // Another member order, where the args' own call_id is the last one in the text.
        let call =
            r#"{"agent":"calendar","args":{"k":1,"call_id":"x","tool":"evil"},"tool":"real"}"#;
        assert_eq!(
            read(call),
            (
                parts("real", r#"{"k":1,"call_id":"x","tool":"evil"}"#),
                false
            )
        );
        let call = r#"{"tool":"add","args":{"b":2,"a":40},"agent":"calendar","call_id":"t_1"}"#;
        assert_eq!(read(call), (parts("add", r#"{"b":2,"a":40}"#), false));
        // No args: `{}`.
        let call = r#"{"agent":"calendar","call_id":"t_1","tool":"t"}"#;
        assert_eq!(read(call), (parts("t", "{}"), false));
        // An agent's name with an escape.
        let call = r#"{"agent":"cal\"","args":{},"call_id":"t_1","tool":"t"}"#;
        assert_eq!(read(call), (parts("t", "{}"), false));
        // A second args after the call_id: serde refuses the duplicate.
        let call = r#"{"agent":"calendar","args":{},"call_id":"t_1","tool":"t","args":{"x":1}}"#;
        let (answer, cut) = read(call);
        assert!(!cut);
        assert!(answer.unwrap_err().starts_with("duplicate field `args`"));
        // No tool at all.
        let (answer, cut) = read(r#"{"agent":"calendar","args":{},"call_id":"t_1"}"#);
        assert!(!cut);
        assert!(answer.unwrap_err().starts_with("missing field `tool`"));
    }

    #[test]
    fn invalid_args_in_a_canonical_layout_fail_in_the_tools_parse() {
        // The one difference the doc states: the cut hands on args that are not JSON, and the
        // tool's typed parse refuses them (serde alone would have refused the envelope).
        let call = r#"{"agent":"calendar","args":{"a":,"call_id":"t_1","tool":"t"}"#;
        assert_eq!(read(call), (parts("t", r#"{"a":"#), true));
        assert!(serde_json::from_str::<Value>(r#"{"a":"#).is_err());
        assert!(serde_json::from_str::<Value>(call).is_err());
    }
}
