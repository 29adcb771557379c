//! What a host tells the world as it works: seed 003's events, each an AgentMessage envelope
//! (event.v1, `schemas/event.v1.json`).
//!
//! It owns [`EventKind`] (`agent.started`, `agent.completed`, `agent.error`, `tool.executed`,
//! `context.updated`, `quarantine`), [`AgentMessage`] and [`EventSink`], where a host hands
//! them (the wire's JetStream publisher; none in normal use). A message's id is derived from
//! its trace, its call and its kind, so the same event published twice (a call retried on
//! another worker) is one message to a store that deduplicates by id. Events come after the
//! fact: a quarantine record is durable in the local log before its event exists. It must not
//! deliver them (the sink does) nor let a slow sink hold a call up.

use serde::Serialize;
use serde_json::Value;
use sha2::Digest;

use crate::telemetry::TraceContext;

/// The events' format name (event.v1 `format`).
pub const EVENT_FORMAT: &str = "event.v1";

/// How long an event is worth reading (seed 003's AgentMessage default).
pub const EVENT_TTL_SECONDS: u32 = 300;

/// Which event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum EventKind {
    /// A call (or tick) passed the crossing and its agent starts.
    #[serde(rename = "agent.started")]
    AgentStarted,
    /// The agent answered (its answer still to be checked).
    #[serde(rename = "agent.completed")]
    AgentCompleted,
    /// The agent failed: trap, deadline, memory, or no agent to run it.
    #[serde(rename = "agent.error")]
    AgentError,
    /// A call crossed both ways: its result, or the tool's own error.
    #[serde(rename = "tool.executed")]
    ToolExecuted,
    /// The orchestrator built a tick's context.
    #[serde(rename = "context.updated")]
    ContextUpdated,
    /// A refusal was quarantined (its record is durable in the host's log).
    #[serde(rename = "quarantine")]
    Quarantine,
}

impl EventKind {
    /// Every kind.
    pub const ALL: [EventKind; 6] = [
        EventKind::AgentStarted,
        EventKind::AgentCompleted,
        EventKind::AgentError,
        EventKind::ToolExecuted,
        EventKind::ContextUpdated,
        EventKind::Quarantine,
    ];

    /// Its name (and, after `aura.evt.`, its subject).
    pub fn as_str(self) -> &'static str {
        match self {
            EventKind::AgentStarted => "agent.started",
            EventKind::AgentCompleted => "agent.completed",
            EventKind::AgentError => "agent.error",
            EventKind::ToolExecuted => "tool.executed",
            EventKind::ContextUpdated => "context.updated",
            EventKind::Quarantine => "quarantine",
        }
    }

    /// How urgent (1-10, higher more): failures and refusals above routine work.
    fn priority(self) -> u8 {
        match self {
            EventKind::AgentError | EventKind::Quarantine => 8,
            _ => 5,
        }
    }
}

/// One event: seed 003's AgentMessage, canonical JSON on the wire.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AgentMessage {
    /// Always [`EVENT_FORMAT`].
    pub format: &'static str,
    /// Which event.
    pub event: EventKind,
    /// `m_` + 32 hex digits, derived from the trace, the call and the event.
    pub message_id: String,
    /// The request's W3C trace id (32 hex digits).
    pub trace_id: String,
    /// The message this one follows (a call's `agent.started` for what comes after it).
    pub parent_message_id: Option<String>,
    /// Who asked: the calling agent, or `host` for a root call.
    pub source_agent: String,
    /// The agent that ran, or `host`.
    pub target_agent: String,
    /// The tool, or `tick`, or the orchestrator's step.
    pub action: String,
    /// What happened (its members depend on the event).
    pub payload: Value,
    /// When, RFC 3339 UTC (wall clock of the publishing host).
    pub timestamp: String,
    /// 1-10, higher more urgent.
    pub priority: u8,
    /// How long it is worth reading.
    pub ttl_seconds: u32,
    /// Whose assistant it was, on a fleet's host (seed 003's `tenant_id` and `user_id`).
    #[serde(flatten)]
    pub person: Option<aura_contract::person::PersonIds>,
}

/// The id of `event` about `subject` (a call_id, a tick's) in `trace`.
pub fn message_id(trace: &TraceContext, subject: &str, event: EventKind) -> String {
    let digest = sha2::Sha256::digest(
        format!("{}\n{subject}\n{}", trace.trace_id_hex(), event.as_str()).as_bytes(),
    );
    let hex: String = digest[..16].iter().map(|b| format!("{b:02x}")).collect();
    format!("m_{hex}")
}

impl AgentMessage {
    /// `event` about `subject` (a call_id, or a tick's id) of `target` by `source`.
    pub fn new(
        event: EventKind,
        trace: &TraceContext,
        subject: &str,
        (source, target, action): (&str, &str, &str),
        payload: Value,
    ) -> Self {
        let parent = (event != EventKind::AgentStarted && event != EventKind::ContextUpdated)
            .then(|| message_id(trace, subject, EventKind::AgentStarted));
        Self {
            format: EVENT_FORMAT,
            event,
            message_id: message_id(trace, subject, event),
            trace_id: trace.trace_id_hex(),
            parent_message_id: parent,
            source_agent: source.to_owned(),
            target_agent: target.to_owned(),
            action: action.to_owned(),
            payload,
            timestamp: aura_contract::envelope::now_rfc3339(),
            priority: event.priority(),
            ttl_seconds: EVENT_TTL_SECONDS,
            person: None,
        }
    }

    /// Canonical JSON (RFC 8785) of the message.
    pub fn to_canonical(&self) -> String {
        // Strings, integers and a JSON value built by the host: always encodable.
        serde_json::to_value(self)
            .ok()
            .and_then(|value| aura_contract::canonical::to_canonical_string(&value).ok())
            .unwrap_or_default()
    }
}

/// Where a host hands its events. `publish` must not block: a sink queues, and says (logs and
/// counts) what it could not queue.
pub trait EventSink: Send + Sync + std::fmt::Debug {
    /// One event.
    fn publish(&self, message: AgentMessage);

    /// Completes once every event published before the call is stored (or given up on): a
    /// worker waits for it before it answers, so a call whose answer went out has its events
    /// stored even if the worker dies right after.
    fn settled(&self) -> futures_util::future::BoxFuture<'static, ()> {
        Box::pin(std::future::ready(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_is_event_v1_and_its_id_names_trace_call_and_kind() {
        let trace = TraceContext::for_call("t_0123456789");
        let message = AgentMessage::new(
            EventKind::ToolExecuted,
            &trace,
            "t_0123456789",
            ("host", "calendar", "find_free_slots"),
            serde_json::json!({"call_id": "t_0123456789", "outcome": "ok", "fuel_used": 5}),
        );
        let schema: Value =
            serde_json::from_str(include_str!("../../../schemas/event.v1.json")).unwrap();
        let validator = jsonschema::validator_for(&schema).unwrap();
        let value: Value = serde_json::from_str(&message.to_canonical()).unwrap();
        assert!(validator.is_valid(&value), "{value}");
        assert_eq!(value["event"], "tool.executed");
        assert_eq!(
            message.parent_message_id.as_deref(),
            Some(message_id(&trace, "t_0123456789", EventKind::AgentStarted).as_str())
        );
        assert_eq!(message.message_id.len(), 34);
        assert_ne!(
            message.message_id,
            message_id(&trace, "t_0123456789", EventKind::AgentCompleted)
        );
        assert_ne!(
            message.message_id,
            message_id(
                &TraceContext::for_call("t_x"),
                "t_0123456789",
                EventKind::ToolExecuted
            )
        );
    }
}
