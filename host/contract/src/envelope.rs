//! The envelopes: toolcall.v1 (a call) and result.v1 (its answer) as Rust types.
//!
//! It owns building envelopes the host originates (fresh call_id, ts now) and encoding results
//! canonically. It must not validate: an envelope received from outside is checked by the
//! crossing against toolcall.v1 before it is ever turned into a [`ToolCall`].

use serde::{Deserialize, Serialize};
use serde_json::Value;

use aura_protocol::CALL_ID_SUFFIX_CHARS;

use crate::canonical::to_canonical_string;
use crate::error::{CrossingError, Phase};
use crate::limits::{LENIENT_ID_CHARS_MAX, RESULT_MESSAGE_CHARS_MAX};

/// Where the user sees a call's result (toolcall.v1 `expected_surface`), as the guest SDK
/// names it too.
pub use aura_protocol::Surface;

/// The call_id of a nested call (`host.call`): derived by the host from its caller's call and
/// its place among the caller's host calls, never chosen by the guest, so every call in a tree
/// has an id of its own and a replay names them alike.
pub fn nested_call_id(caller_call_id: Option<&str>, caller_agent: &str, index: u32) -> String {
    aura_protocol::call_id_from(&format!(
        "host.call\n{}\n{caller_agent}\n{index}",
        caller_call_id.unwrap_or("tick")
    ))
}

/// One toolcall.v1 envelope.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolCall {
    /// `^t_[a-z0-9]{10}$`.
    pub call_id: String,
    /// The agent addressed.
    pub agent: String,
    /// The tool called.
    pub tool: String,
    /// The tool's args (checked against the tool's args schema).
    pub args: Value,
    /// RFC 3339 time the call was made.
    pub ts: String,
    /// Whether the user must confirm before the call is executed.
    pub confirm_required: bool,
    /// Where the result is meant to be shown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_surface: Option<Surface>,
    /// Deadline for the call, 50..=10000 ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline_ms: Option<u64>,
}

/// A fresh random call_id (`t_` + 10 of `[a-z0-9]`), from the OS's random source.
pub fn new_call_id() -> String {
    const ALPHABET: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    // Rejection sampling: bytes ≥ 252 would bias `% 36`; 64 bytes leave 10 usable ones with
    // overwhelming probability, and the loop refills if not.
    let mut id = String::from("t_");
    let mut pool = [0u8; 64];
    while id.len() < 2 + CALL_ID_SUFFIX_CHARS {
        if getrandom::fill(&mut pool).is_err() {
            // No OS randomness: fall back to the clock, which still yields a valid, likely
            // unique id; call_ids are identifiers, not secrets.
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0);
            pool.iter_mut()
                .enumerate()
                .for_each(|(i, b)| *b = (nanos >> ((i % 16) * 8)) as u8 % 252);
        }
        for &byte in pool.iter().filter(|&&b| b < 252) {
            if id.len() == 2 + CALL_ID_SUFFIX_CHARS {
                break;
            }
            id.push(ALPHABET[(byte % 36) as usize] as char);
        }
    }
    id
}

/// The current UTC time, RFC 3339 with millisecond precision.
pub fn now_rfc3339() -> String {
    let now = time::OffsetDateTime::now_utc();
    let format = time::macros::format_description!(
        "[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z"
    );
    now.format(&format)
        .unwrap_or_else(|_| "1970-01-01T00:00:00.000Z".into())
}

/// An RFC 3339 instant in nanoseconds since the Unix epoch: where a guest's virtual wall clock
/// starts. Instants before the epoch, or that do not parse (a leap second), give 0: the clock
/// is the guest's, and only has to be the same on every replay.
pub fn unix_ns(ts: &str) -> u64 {
    time::OffsetDateTime::parse(ts, &time::format_description::well_known::Rfc3339)
        .ok()
        .and_then(|t| u64::try_from(t.unix_timestamp_nanos()).ok())
        .unwrap_or(0)
}

impl ToolCall {
    /// A call the host originates: fresh call_id, ts now, confirmation per the catalogue.
    pub fn new(agent: &str, tool: &str, args: Value, deadline_ms: Option<u64>) -> Self {
        let confirm_required =
            crate::catalogue::tool(agent, tool).is_some_and(|spec| spec.confirm_required);
        Self {
            call_id: new_call_id(),
            agent: agent.to_owned(),
            tool: tool.to_owned(),
            args,
            ts: now_rfc3339(),
            confirm_required,
            expected_surface: None,
            deadline_ms,
        }
    }
}

/// The error object of a result.v1.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResultError {
    /// Stable machine name (result.v1 `$defs/error/kind`).
    pub kind: String,
    /// For people.
    pub message: String,
    /// Which check failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
    /// JSON Pointer of the offending value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance_path: Option<String>,
    /// Location of the failing schema keyword.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema_path: Option<String>,
}

/// `text` cut to its first `chars_max` characters.
pub fn cut_chars(mut text: String, chars_max: usize) -> String {
    if let Some((cut, _)) = text.char_indices().nth(chars_max) {
        text.truncate(cut);
    }
    text
}

/// One result.v1 envelope.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResultEnvelope {
    /// The call this answers.
    pub call_id: String,
    /// The agent called.
    pub agent: String,
    /// The tool called.
    pub tool: String,
    /// Whether `result` is present.
    pub ok: bool,
    /// The tool's result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// Why there is no result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ResultError>,
    /// Fuel burned.
    pub fuel_used: u64,
}

impl ResultEnvelope {
    /// A successful result.
    pub fn ok(call: &ToolCall, result: Value, fuel_used: u64) -> Self {
        Self {
            call_id: call.call_id.clone(),
            agent: call.agent.clone(),
            tool: call.tool.clone(),
            ok: true,
            result: Some(result),
            error: None,
            fuel_used,
        }
    }

    /// A failed result with an error of `kind`.
    pub fn failed(
        call: &ToolCall,
        kind: &str,
        message: String,
        phase: Option<Phase>,
        fuel_used: u64,
    ) -> Self {
        Self {
            call_id: call.call_id.clone(),
            agent: call.agent.clone(),
            tool: call.tool.clone(),
            ok: false,
            result: None,
            error: Some(ResultError {
                kind: kind.to_owned(),
                message: cut_chars(message, RESULT_MESSAGE_CHARS_MAX),
                phase: phase.map(|p| p.as_str().to_owned()),
                instance_path: None,
                schema_path: None,
            }),
            fuel_used,
        }
    }

    /// The result that reports a crossing refusal of `call` to whoever made it.
    pub fn refused(call: &ToolCall, error: &CrossingError) -> Self {
        let mut result = Self::failed(
            call,
            error.kind(),
            error.to_string(),
            Some(error.phase()),
            error.fuel_used(),
        );
        if let Some(detail) = result.error.as_mut() {
            detail.instance_path = error.instance_path().map(str::to_owned);
            detail.schema_path = error.schema_path().map(str::to_owned);
        }
        result
    }

    /// Canonical JSON (RFC 8785) of this result.
    pub fn to_canonical(&self) -> String {
        // Built from strings, bools, integers and validated JSON: always encodable.
        serde_json::to_value(self)
            .ok()
            .and_then(|v| to_canonical_string(&v).ok())
            .unwrap_or_else(|| {
                r#"{"error":{"kind":"canonicalize_failed","message":"result could not be encoded"},"ok":false}"#.into()
            })
    }
}

/// The call_id, agent and tool of an envelope, read leniently for a quarantine record after
/// the envelope failed its checks. Only on the error path.
pub fn read_ids(text: &str) -> (Option<String>, Option<String>, Option<String>) {
    if text.len() > crate::limits::CROSSING_BYTES_MAX {
        return (None, None, None);
    }
    let Ok(Value::Object(map)) = serde_json::from_str::<Value>(text) else {
        return (None, None, None);
    };
    let field = |name: &str| {
        map.get(name)
            .and_then(Value::as_str)
            .filter(|s| s.len() <= LENIENT_ID_CHARS_MAX)
            .map(str::to_owned)
    };
    (field("call_id"), field("agent"), field("tool"))
}

/// What to answer an agent whose `host.call` envelope `text` was refused: a result.v1 built
/// from whatever of the envelope can be read (placeholders otherwise), under the call_id the
/// host gave the call, if it got that far.
pub fn refusal_for_host_call(text: &str, call_id: Option<&str>, error: &CrossingError) -> String {
    refusal_of(text, call_id, error).to_canonical()
}

/// The result.v1 refusing `text` (see [`refusal_for_host_call`]), before it is written out.
pub fn refusal_of(text: &str, call_id: Option<&str>, error: &CrossingError) -> ResultEnvelope {
    let (guest_call_id, agent, tool) = read_ids(text);
    let call = ToolCall {
        call_id: call_id
            .map(str::to_owned)
            .or(guest_call_id)
            .filter(|id| id.len() == 12 && id.starts_with("t_"))
            .unwrap_or_else(|| "t_0000000000".into()),
        agent: agent.unwrap_or_else(|| "unknown".into()),
        tool: tool.unwrap_or_else(|| "unknown".into()),
        args: Value::Null,
        ts: String::new(),
        confirm_required: false,
        expected_surface: None,
        deadline_ms: None,
    };
    ResultEnvelope::refused(&call, error)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn call_ids_match_the_pattern() {
        for _ in 0..1000 {
            let id = new_call_id();
            assert!(aura_protocol::is_call_id(&id), "{id}");
        }
        assert_ne!(new_call_id(), new_call_id());
    }

    #[test]
    fn unix_ns_reads_the_instant_with_its_offset() {
        // One day after the epoch is 86,400 s.
        assert_eq!(unix_ns("1970-01-02T00:00:00Z"), 86_400_000_000_000);
        // Same instant written at +01:00.
        assert_eq!(unix_ns("1970-01-02T01:00:00+01:00"), 86_400_000_000_000);
        assert_eq!(unix_ns("1970-01-01T00:00:01.5Z"), 1_500_000_000);
        assert_eq!(unix_ns("1969-12-31T23:59:59Z"), 0);
        assert_eq!(unix_ns("not a time"), 0);
    }

    #[test]
    fn now_is_rfc3339_utc() {
        let now = now_rfc3339();
        assert_eq!(now.len(), "2026-11-22T09:00:00.000Z".len());
        time::OffsetDateTime::parse(&now, &time::format_description::well_known::Rfc3339).unwrap();
    }

    #[test]
    fn results_encode_canonically() {
        let call = ToolCall {
            call_id: "t_abcdef0123".into(),
            agent: "calendar".into(),
            tool: "detect_conflicts".into(),
            args: serde_json::json!({}),
            ts: "2026-11-22T09:00:00Z".into(),
            confirm_required: false,
            expected_surface: None,
            deadline_ms: None,
        };
        let ok = ResultEnvelope::ok(&call, serde_json::json!({"b": 1, "a": [2]}), 7);
        assert_eq!(
            ok.to_canonical(),
            r#"{"agent":"calendar","call_id":"t_abcdef0123","fuel_used":7,"ok":true,"result":{"a":[2],"b":1},"tool":"detect_conflicts"}"#
        );
        let failed = ResultEnvelope::failed(&call, "tool_failed", "x".repeat(2000), None, 0);
        assert_eq!(
            failed.error.unwrap().message.len(),
            RESULT_MESSAGE_CHARS_MAX
        );
    }

    #[test]
    fn host_call_refusals_keep_what_can_be_read() {
        let error = CrossingError::UnknownAgent {
            agent: "mallory".into(),
        };
        let text = refusal_for_host_call(
            r#"{"call_id":"t_0123456789","agent":"mallory","tool":"steal"}"#,
            None,
            &error,
        );
        assert_eq!(
            text,
            r#"{"agent":"mallory","call_id":"t_0123456789","error":{"kind":"unknown_agent","message":"envelope: unknown agent `mallory`","phase":"envelope"},"fuel_used":0,"ok":false,"tool":"steal"}"#
        );
        let text = refusal_for_host_call("garbage", None, &error);
        assert!(text.contains(r#""call_id":"t_0000000000""#));
        let text = refusal_for_host_call("garbage", Some("t_hostgiven1"), &error);
        assert!(text.contains(r#""call_id":"t_hostgiven1""#));
    }

    #[test]
    fn ids_are_read_leniently_on_the_error_path() {
        assert_eq!(
            read_ids(r#"{"call_id":"t_bad","agent":7,"tool":"x"}"#),
            (Some("t_bad".into()), None, Some("x".into()))
        );
        assert_eq!(read_ids("not json"), (None, None, None));
    }
}
