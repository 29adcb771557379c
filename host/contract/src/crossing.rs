//! The crossing: every check a string passes on its way into or out of an agent.
//!
//! Into an agent: size cap → parse, refusing what is not I-JSON → canonicalize (RFC 8785) →
//! toolcall.v1 → catalogue (agent, then tool) → the tool's args schema. Out of an agent: size
//! cap → parse → canonicalize → reply.v1 → the tool's result schema. Each check fails with a
//! typed [`CrossingError`] naming its phase. The crossing owns these checks and their order; it
//! must not run agents (the sandbox does) or write records (the dispatcher quarantines what the
//! crossing refuses), and it must do each step once per crossing.

use serde_json::Value;

use crate::canonical::{parse_canonical, parse_i_json, to_canonical_string};
use crate::catalogue::{self, PROPOSALS_SCHEMA, REPLY_SCHEMA, TOOLCALL_SCHEMA, ToolSpec};
use crate::envelope::ToolCall;
use crate::error::{CrossingError, Phase};
use crate::limits::{AGENT_CALL_DEPTH_MAX, CROSSING_BYTES_MAX};
use crate::schema::{SchemaCompileError, SchemaRegistry};

/// A call that passed every inbound check. Only the crossing makes one, so holding one is
/// proof the checks ran: the host runs it as it is, never checking it twice.
#[derive(Debug, Clone)]
pub struct CheckedCall {
    call: ToolCall,
    canonical: String,
    agent: &'static str,
    spec: &'static ToolSpec,
    deadline_ms: u64,
}

impl CheckedCall {
    /// The envelope.
    pub fn call(&self) -> &ToolCall {
        &self.call
    }

    /// Its canonical text: exactly what the agent receives.
    pub fn canonical(&self) -> &str {
        &self.canonical
    }

    /// The catalogue entry of its tool.
    pub fn spec(&self) -> &'static ToolSpec {
        self.spec
    }

    /// Its agent's name, as the catalogue spells it.
    pub fn agent(&self) -> &'static str {
        self.agent
    }

    /// The envelope's deadline, else the tool's default.
    pub fn deadline_ms(&self) -> u64 {
        self.deadline_ms
    }

    /// Whether the user must confirm it before it runs: its envelope or the catalogue says so.
    pub fn needs_confirmation(&self) -> bool {
        self.call.confirm_required || self.spec.confirm_required
    }
}

/// What an agent answered, after every outbound check.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// The tool's result, valid against its result schema.
    Ok(Value),
    /// The agent reported that the tool could not run.
    ToolError {
        /// reply.v1 `error.kind`.
        kind: ReplyErrorKind,
        /// reply.v1 `error.message`.
        message: String,
    },
}

/// The kinds of tool failure an agent may report (reply.v1 `error.kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplyErrorKind {
    /// `invalid_args`: the args passed the schema but make no sense together.
    InvalidArgs,
    /// `failed`: the tool could not complete.
    Failed,
    /// `unknown_tool`: the agent does not implement the tool (the catalogue should have
    /// refused the call first).
    UnknownTool,
}

impl ReplyErrorKind {
    /// The kind named in a reply.v1; `None` for a name reply.v1 does not have.
    pub fn named(name: &str) -> Option<Self> {
        match name {
            "invalid_args" => Some(Self::InvalidArgs),
            "failed" => Some(Self::Failed),
            "unknown_tool" => Some(Self::UnknownTool),
            _ => None,
        }
    }

    /// Its name in reply.v1.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::InvalidArgs => "invalid_args",
            Self::Failed => "failed",
            Self::UnknownTool => "unknown_tool",
        }
    }

    /// The result.v1 `error.kind` the caller sees: the caller must change its input
    /// (`tool_invalid_args`), or the tool failed (`tool_failed`).
    pub fn result_kind(self) -> &'static str {
        match self {
            Self::InvalidArgs => "tool_invalid_args",
            Self::Failed | Self::UnknownTool => "tool_failed",
        }
    }
}

impl std::fmt::Display for ReplyErrorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One proposal from a tick that passed proposals.v1. Its call has yet to pass
/// [`Crossing::check_call`], on its own: one bad proposal does not spoil the others.
#[derive(Debug, Clone, PartialEq)]
pub struct RawProposal {
    /// The proposed toolcall.v1, parsed (I-JSON already checked with the tick output).
    pub call: Value,
    /// What drove the proposal.
    pub signals: Vec<String>,
    /// 0..=100.
    pub priority: u8,
}

/// Checks an agent-to-agent call against its call chain (root first, the caller last), before
/// anything runs: a target already in the chain is a cycle (A → B → A), and a chain already
/// [`AGENT_CALL_DEPTH_MAX`] long may not grow (seed 002: cycles first, then depth).
pub fn check_chain(chain: &[&str], target: &str) -> Result<(), CrossingError> {
    let caller = chain.last().copied().unwrap_or_default().to_owned();
    let owned = || chain.iter().map(|agent| agent.to_string()).collect();
    if chain.contains(&target) {
        return Err(CrossingError::CycleDetected {
            caller,
            target: target.to_owned(),
            chain: owned(),
        });
    }
    if chain.len() >= AGENT_CALL_DEPTH_MAX {
        return Err(CrossingError::DepthExceeded {
            caller,
            target: target.to_owned(),
            depth: chain.len() + 1,
            max_depth: AGENT_CALL_DEPTH_MAX,
            chain: owned(),
        });
    }
    Ok(())
}

/// Checks that a tick of `agent` proposes one of its own tools: an agent may suggest what it
/// can do, never what another agent does.
pub fn check_own_tool(agent: &str, proposed: &CheckedCall) -> Result<(), CrossingError> {
    let call = proposed.call();
    if call.agent == agent {
        return Ok(());
    }
    Err(CrossingError::CallNotAllowed {
        caller: agent.to_owned(),
        agent: call.agent.clone(),
        tool: call.tool.clone(),
        reason: "a tick proposes only its own agent's tools",
    })
}

/// Checks that `caller` may reach `target` through `host.call`: its catalogue entry lists the
/// tool (`may_call`), and the tool needs no confirmation, which only the user's yes gives.
pub fn check_may_call(caller: &str, target: &CheckedCall) -> Result<(), CrossingError> {
    let call = target.call();
    let refused = |reason| CrossingError::CallNotAllowed {
        caller: caller.to_owned(),
        agent: call.agent.clone(),
        tool: call.tool.clone(),
        reason,
    };
    if target.spec().confirm_required {
        return Err(refused(
            "it needs the user's confirmation, and only the user's yes starts it",
        ));
    }
    if !catalogue::agent(caller).is_some_and(|spec| spec.may_call(&call.agent, &call.tool)) {
        return Err(refused(
            "its catalogue entry does not list it among the calls it may make",
        ));
    }
    Ok(())
}

/// The checks, with every schema compiled once.
#[derive(Debug)]
pub struct Crossing {
    schemas: SchemaRegistry,
}

impl Crossing {
    /// Registers every schema of the catalogue (each compiled on first use).
    pub fn new() -> Result<Self, SchemaCompileError> {
        let mut schemas = SchemaRegistry::compile(catalogue::all_schemas())?;
        schemas.derive(&catalogue::DERIVED_SCHEMAS)?;
        Ok(Self { schemas })
    }

    /// The schemas.
    pub fn schemas(&self) -> &SchemaRegistry {
        &self.schemas
    }

    /// Checks a toolcall.v1 envelope on its way into an agent.
    pub fn check_call(&self, text: &str) -> Result<CheckedCall, CrossingError> {
        let json = |error| CrossingError::Json {
            phase: Phase::Envelope,
            error,
        };
        let canonical = parse_canonical(text, CROSSING_BYTES_MAX).map_err(json)?;
        self.check_envelope(canonical.value, canonical.text)
    }

    /// Checks an agent's `host.call` envelope as [`Crossing::check_call`] does, after giving it
    /// `call_id` (the host names nested calls; whatever id the guest wrote is replaced).
    pub fn check_nested_call(
        &self,
        text: &str,
        call_id: &str,
    ) -> Result<CheckedCall, CrossingError> {
        let json = |error| CrossingError::Json {
            phase: Phase::Envelope,
            error,
        };
        let mut value = parse_i_json(text, CROSSING_BYTES_MAX).map_err(json)?;
        if let Value::Object(members) = &mut value {
            members.insert("call_id".to_owned(), Value::String(call_id.to_owned()));
        }
        let canonical = to_canonical_string(&value).map_err(json)?;
        self.check_envelope(value, canonical)
    }

    /// Checks a call an agent proposed in its tick output: the output was already parsed and
    /// I-JSON-checked as a whole, so only the envelope, catalogue and args checks remain.
    pub fn check_proposed_call(&self, call: Value) -> Result<CheckedCall, CrossingError> {
        let text = to_canonical_string(&call).map_err(|error| CrossingError::Json {
            phase: Phase::Envelope,
            error,
        })?;
        self.check_envelope(call, text)
    }

    fn check_envelope(
        &self,
        mut value: Value,
        canonical: String,
    ) -> Result<CheckedCall, CrossingError> {
        self.schemas
            .validate(TOOLCALL_SCHEMA.path, &value, "")
            .map_err(|violation| CrossingError::Schema {
                phase: Phase::Envelope,
                violation,
            })?;
        // The args are moved into the call as they are: read through serde, a `Value` is built
        // again node by node.
        let args = value.get_mut("args").map(Value::take);
        // toolcall.v1 guarantees every field's type, so this cannot fail; map it anyway.
        let mut call: ToolCall =
            serde_json::from_value(value).map_err(|e| CrossingError::Json {
                phase: Phase::Envelope,
                error: crate::canonical::JsonError::Malformed {
                    line: 0,
                    column: 0,
                    message: e.to_string(),
                },
            })?;
        if let Some(args) = args {
            call.args = args;
        }
        let Some(agent) = catalogue::agent(&call.agent) else {
            return Err(CrossingError::UnknownAgent { agent: call.agent });
        };
        let spec =
            catalogue::tool(&call.agent, &call.tool).ok_or_else(|| CrossingError::UnknownTool {
                agent: call.agent.clone(),
                tool: call.tool.clone(),
            })?;
        self.schemas
            .validate(spec.args_schema.path, &call.args, "/args")
            .map_err(|violation| CrossingError::Schema {
                phase: Phase::Args,
                violation,
            })?;
        let deadline_ms = call.deadline_ms.unwrap_or(spec.deadline_ms_default);
        Ok(CheckedCall {
            call,
            canonical,
            agent: agent.name,
            spec,
            deadline_ms,
        })
    }

    /// Checks an agent's answer to `call` on its way out.
    pub fn check_reply(&self, call: &CheckedCall, output: &str) -> Result<Reply, CrossingError> {
        // The reply's own canonical text is never used (the result is re-encoded once, in its
        // result.v1): parse and check it, without writing it out.
        let mut reply =
            parse_i_json(output, CROSSING_BYTES_MAX).map_err(|error| CrossingError::Json {
                phase: Phase::Reply,
                error,
            })?;
        self.schemas
            .validate(REPLY_SCHEMA.path, &reply, "")
            .map_err(|violation| CrossingError::Schema {
                phase: Phase::Reply,
                violation,
            })?;
        // reply.v1 guarantees the shape read below.
        if reply["ok"] == Value::Bool(true) {
            let result = reply["result"].take();
            self.schemas
                .validate(call.spec.result_schema.path, &result, "/result")
                .map_err(|violation| CrossingError::Schema {
                    phase: Phase::Result,
                    violation,
                })?;
            Ok(Reply::Ok(result))
        } else {
            let text = |field: &str| reply["error"][field].as_str().unwrap_or_default();
            Ok(Reply::ToolError {
                // reply.v1's enum admits only the three kinds.
                kind: ReplyErrorKind::named(text("kind")).unwrap_or(ReplyErrorKind::Failed),
                message: text("message").to_owned(),
            })
        }
    }
}

impl Crossing {
    /// Checks an agent's tick output (proposals.v1) on its way out.
    pub fn check_tick(&self, output: &str) -> Result<Vec<RawProposal>, CrossingError> {
        // Each proposed call is canonicalized on its own when checked; the whole output's
        // canonical text is never used.
        let mut output =
            parse_i_json(output, CROSSING_BYTES_MAX).map_err(|error| CrossingError::Json {
                phase: Phase::Tick,
                error,
            })?;
        self.schemas
            .validate(PROPOSALS_SCHEMA.path, &output, "")
            .map_err(|violation| CrossingError::Schema {
                phase: Phase::Tick,
                violation,
            })?;
        // proposals.v1 guarantees the shape read below.
        let proposals = output["proposals"].as_array_mut().map(std::mem::take);
        Ok(proposals
            .unwrap_or_default()
            .into_iter()
            .map(|mut proposal| RawProposal {
                call: proposal["call"].take(),
                signals: proposal["signals"]
                    .as_array_mut()
                    .map(std::mem::take)
                    .unwrap_or_default()
                    .into_iter()
                    .filter_map(|signal| signal.as_str().map(str::to_owned))
                    .collect(),
                priority: proposal["priority"].as_u64().unwrap_or(0) as u8,
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limits::DEADLINE_MS_DEFAULT;

    const CALL: &str = r#"{"ts":"2026-11-23T08:00:00Z","tool":"detect_conflicts","confirm_required":false,
        "call_id":"t_unit000001","args":{"travel_gap_minutes":10,"events":[]},"agent":"calendar"}"#;

    fn crossing() -> Crossing {
        Crossing::new().unwrap()
    }

    #[test]
    fn a_nested_call_gets_the_id_the_host_gives_it() {
        let checked = crossing().check_nested_call(CALL, "t_nested0001").unwrap();
        assert_eq!(checked.call().call_id, "t_nested0001");
        assert!(checked.canonical().contains(r#""call_id":"t_nested0001""#));
        // With no call_id at all, or one toolcall.v1 would refuse, it still gets its own.
        let bare = CALL.replace(r#""call_id":"t_unit000001","#, "");
        assert_eq!(
            crossing()
                .check_nested_call(&bare, "t_nested0002")
                .unwrap()
                .call()
                .call_id,
            "t_nested0002"
        );
        let error = crossing()
            .check_nested_call("[1]", "t_nested0003")
            .unwrap_err();
        assert_eq!(
            (error.phase(), error.kind()),
            (Phase::Envelope, "schema_error")
        );
    }

    #[test]
    fn least_privilege_holds_in_ticks_and_host_calls() {
        let crossing = crossing();
        let detect = crossing.check_call(CALL).unwrap();
        assert!(check_own_tool("calendar", &detect).is_ok());
        let error = check_own_tool("wellness", &detect).unwrap_err();
        assert_eq!(error.kind(), "call_not_allowed");
        assert_eq!(
            error.to_string(),
            "agent `wellness` may not call `calendar.detect_conflicts`: a tick proposes only its \
             own agent's tools"
        );
        // wellness may ask calendar for free slots, and for nothing else.
        let slots = CALL
            .replace("detect_conflicts", "find_free_slots")
            .replace(
                r#""args":{"travel_gap_minutes":10,"events":[]}"#,
                r#""args":{"working_hours":{"start":"09:00","end":"17:00"},"utc_offset_minutes":0,"duration_minutes":30,"from":"2026-11-23T08:00:00Z","horizon_days":1}"#,
            );
        let slots = crossing.check_call(&slots).unwrap();
        assert!(check_may_call("wellness", &slots).is_ok());
        assert_eq!(
            check_may_call("wellness", &detect).unwrap_err().kind(),
            "call_not_allowed"
        );
        assert_eq!(
            check_may_call("comms", &slots).unwrap_err().kind(),
            "call_not_allowed"
        );
        // A tool that needs the user's yes is refused to everyone, whatever the envelope says.
        let schedule = crossing
            .check_call(&CALL.replace("detect_conflicts", "schedule_event").replace(
                r#""args":{"travel_gap_minutes":10,"events":[]}"#,
                r#""args":{"event":{"title":"t","start":"2026-11-23T10:00:00Z","end":"2026-11-23T11:00:00Z"}}"#,
            ))
            .unwrap();
        let error = check_may_call("wellness", &schedule).unwrap_err();
        assert!(
            error.to_string().contains("only the user's yes starts it"),
            "{error}"
        );
    }

    #[test]
    fn a_target_already_in_the_chain_is_a_cycle() {
        // A → B → A.
        let error = check_chain(&["calendar", "wellness"], "calendar").unwrap_err();
        assert_eq!(error.kind(), "cycle_detected");
        assert_eq!(
            error.to_string(),
            "agent `wellness` called `calendar`, already in the call chain calendar → wellness"
        );
        // A → A.
        assert_eq!(
            check_chain(&["comms"], "comms").unwrap_err().kind(),
            "cycle_detected"
        );
        assert!(check_chain(&["calendar", "wellness"], "comms").is_ok());
    }

    #[test]
    fn the_sixth_agent_of_a_chain_is_refused() {
        // Depth counts agents, root = 1: a chain of 5 is the deepest allowed.
        let four = ["a1", "a2", "a3", "a4"];
        assert!(check_chain(&four, "a5").is_ok());
        let five = ["a1", "a2", "a3", "a4", "a5"];
        let error = check_chain(&five, "a6").unwrap_err();
        assert_eq!(error.kind(), "depth_exceeded");
        assert!(matches!(
            error,
            CrossingError::DepthExceeded {
                depth: 6,
                max_depth: 5,
                ..
            }
        ));
        // A cycle is reported as a cycle even at the depth limit.
        assert_eq!(
            check_chain(&five, "a2").unwrap_err().kind(),
            "cycle_detected"
        );
    }

    #[test]
    fn a_good_call_is_canonicalized_and_gets_the_catalogue_deadline() {
        let checked = crossing().check_call(CALL).unwrap();
        assert_eq!(
            checked.canonical(),
            r#"{"agent":"calendar","args":{"events":[],"travel_gap_minutes":10},"call_id":"t_unit000001","confirm_required":false,"tool":"detect_conflicts","ts":"2026-11-23T08:00:00Z"}"#
        );
        assert_eq!(checked.deadline_ms(), DEADLINE_MS_DEFAULT);
        assert_eq!(checked.spec().name, "detect_conflicts");
        let with_deadline = CALL.replace(r#""ts""#, r#""deadline_ms":50,"ts""#);
        assert_eq!(
            crossing().check_call(&with_deadline).unwrap().deadline_ms(),
            50
        );
    }

    #[test]
    fn the_catalogue_is_checked_after_the_envelope_and_before_the_args() {
        // An unknown tool with bad args: the catalogue refuses first.
        let text = CALL
            .replace("detect_conflicts", "transfer_money")
            .replace(r#""events":[]"#, r#""events":7"#);
        let error = crossing().check_call(&text).unwrap_err();
        assert!(
            matches!(error, CrossingError::UnknownTool { .. }),
            "{error}"
        );
        // A bad envelope with an unknown tool: the envelope refuses first.
        let text = text.replace("t_unit000001", "t_x");
        let error = crossing().check_call(&text).unwrap_err();
        assert_eq!(error.phase(), Phase::Envelope);
        assert_eq!(error.kind(), "schema_error");
    }

    #[test]
    fn replies_are_checked_against_reply_v1_and_the_result_schema() {
        let crossing = crossing();
        let checked = crossing.check_call(CALL).unwrap();
        let ok = r#"{"ok":true,"result":{"overlaps":[],"double_bookings":[],"tight_transitions":[],"truncated":false}}"#;
        assert!(matches!(
            crossing.check_reply(&checked, ok),
            Ok(Reply::Ok(_))
        ));
        let failed = r#"{"ok":false,"error":{"kind":"failed","message":"m"}}"#;
        assert_eq!(
            crossing.check_reply(&checked, failed).unwrap(),
            Reply::ToolError {
                kind: ReplyErrorKind::Failed,
                message: "m".into()
            }
        );
        let both = r#"{"ok":true,"result":{},"error":{"kind":"failed","message":"m"}}"#;
        let error = crossing.check_reply(&checked, both).unwrap_err();
        assert_eq!(error.phase(), Phase::Reply);
        let wrong = r#"{"ok":true,"result":{"overlaps":[{"a":"x"}],"double_bookings":[],"tight_transitions":[],"truncated":false}}"#;
        let error = crossing.check_reply(&checked, wrong).unwrap_err();
        assert_eq!(error.phase(), Phase::Result);
        assert_eq!(error.instance_path(), Some("/result/overlaps/0"));
    }
}
