//! The crossing: every check a string passes on its way into or out of an agent.
//!
//! Into an agent: size cap → parse, refusing what is not I-JSON → canonicalize (RFC 8785) →
//! toolcall.v1 → catalogue (agent, then tool) → the tool's args schema. Out of an agent: size
//! cap → parse → canonicalize → reply.v1 → the tool's result schema. Each check fails with a
//! typed [`CrossingError`] naming its phase. The crossing owns these checks and their order; it
//! must not run agents (the sandbox does) or write records (the dispatcher quarantines what the
//! crossing refuses), and it must do each step once per crossing.

use serde_json::Value;

use crate::canonical::parse_canonical;
use crate::catalogue::{self, REPLY_SCHEMA, TOOLCALL_SCHEMA, ToolSpec};
use crate::envelope::ToolCall;
use crate::error::{CrossingError, Phase};
use crate::limits::CROSSING_BYTES_MAX;
use crate::schema::{SchemaCompileError, SchemaRegistry};

/// A call that passed every inbound check.
#[derive(Debug, Clone)]
pub struct CheckedCall {
    /// The envelope.
    pub call: ToolCall,
    /// Its canonical text: exactly what the agent receives.
    pub canonical: String,
    /// The catalogue entry of its tool.
    pub spec: &'static ToolSpec,
    /// The envelope's deadline, else the tool's default.
    pub deadline_ms: u64,
}

/// What an agent answered, after every outbound check.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// The tool's result, valid against its result schema.
    Ok(Value),
    /// The agent reported that the tool could not run.
    ToolError {
        /// reply.v1 `error.kind`.
        kind: String,
        /// reply.v1 `error.message`.
        message: String,
    },
}

/// The checks, with every schema compiled once.
#[derive(Debug)]
pub struct Crossing {
    schemas: SchemaRegistry,
}

impl Crossing {
    /// Compiles every schema of the catalogue.
    pub fn new() -> Result<Self, SchemaCompileError> {
        Ok(Self {
            schemas: SchemaRegistry::compile(catalogue::all_schemas())?,
        })
    }

    /// The compiled schemas.
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
        self.schemas
            .validate(TOOLCALL_SCHEMA.path, &canonical.value, "")
            .map_err(|violation| CrossingError::Schema {
                phase: Phase::Envelope,
                violation,
            })?;
        // toolcall.v1 guarantees every field's type, so this cannot fail; map it anyway.
        let call: ToolCall =
            serde_json::from_value(canonical.value).map_err(|e| CrossingError::Json {
                phase: Phase::Envelope,
                error: crate::canonical::JsonError::Malformed {
                    line: 0,
                    column: 0,
                    message: e.to_string(),
                },
            })?;
        if catalogue::agent(&call.agent).is_none() {
            return Err(CrossingError::UnknownAgent { agent: call.agent });
        }
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
            canonical: canonical.text,
            spec,
            deadline_ms,
        })
    }

    /// Checks an agent's answer to `call` on its way out.
    pub fn check_reply(&self, call: &CheckedCall, output: &str) -> Result<Reply, CrossingError> {
        let canonical =
            parse_canonical(output, CROSSING_BYTES_MAX).map_err(|error| CrossingError::Json {
                phase: Phase::Reply,
                error,
            })?;
        let mut reply = canonical.value;
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
            let text = |field: &str| {
                reply["error"][field]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned()
            };
            Ok(Reply::ToolError {
                kind: text("kind"),
                message: text("message"),
            })
        }
    }
}

/// The call_id, agent and tool of an envelope, read leniently for a quarantine record after
/// the envelope failed its checks. Only on the error path.
pub fn read_ids(text: &str) -> (Option<String>, Option<String>, Option<String>) {
    if text.len() > CROSSING_BYTES_MAX {
        return (None, None, None);
    }
    let Ok(Value::Object(map)) = serde_json::from_str::<Value>(text) else {
        return (None, None, None);
    };
    let field = |name: &str| {
        map.get(name)
            .and_then(Value::as_str)
            .filter(|s| s.len() <= 64)
            .map(str::to_owned)
    };
    (field("call_id"), field("agent"), field("tool"))
}
