//! Recovery: what a refused call tells its caller to do next (seed 004's planner/runtime
//! boundary, modelled on goa-ai's ToolFailure / RecoveryDirective / FieldIssue).
//!
//! It owns [`ToolFailure`] (recovery.v1: kind, phase, message, recovery), the [`Action`] a
//! planner should take, and the [`FieldIssue`]s read from the validator's typed violations
//! ([`crate::schema::Constraint`], never parsed out of messages), bounded in count and size.
//! Every front shows the same object: `aura call` prints it, the quarantine record keeps its
//! recovery, and an MCP `tools/call` answers it as `structuredContent`. It must not decide
//! whether a call is refused (the crossing does) nor know which front asks.

use serde::Serialize;
use serde_json::Value;

use crate::canonical::to_canonical_string;
use crate::catalogue;
use crate::envelope::cut_chars;
use crate::error::{CrossingError, Phase};
use crate::limits::{
    BUSY_RETRY_AFTER_MS, RECOVERY_ALLOWED_MAX, RECOVERY_ISSUES_MAX, RECOVERY_TEXT_CHARS_MAX,
    RESULT_MESSAGE_CHARS_MAX,
};
use crate::schema::{Constraint, Violated};

/// What the caller should do after a refusal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// The call is wrong in ways the issues name: fix them and send it again.
    CorrectCall,
    /// This tool cannot do it (unknown, not allowed, or it failed on these args and would fail
    /// the same way again: agents are deterministic): choose another way.
    Replan,
    /// Stop: the user said no, or the call cannot be confirmed here.
    Finish,
    /// The call was right but the host is at its in-flight bound: send it again, unchanged,
    /// after `retry_after_ms`.
    Retry,
}

/// One thing wrong with one field of the call.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FieldIssue {
    /// JSON Pointer (RFC 6901) to the field: into the tool's arguments for an args refusal,
    /// into the toolcall.v1 envelope for an envelope refusal. For a missing or unknown
    /// member, the member itself (which is absent, or must go).
    pub field: String,
    /// What is wrong: `missing_field`, `unknown_field`, `invalid_field_type`,
    /// `invalid_enum_value`, `invalid_format`, `invalid_pattern`, `invalid_range`,
    /// `invalid_length`, or `invalid_value` for any other keyword.
    pub constraint: &'static str,
    /// The values allowed (`invalid_enum_value`), at most [`RECOVERY_ALLOWED_MAX`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allowed: Option<Vec<Value>>,
    /// Inclusive lower bound.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub minimum: Option<Value>,
    /// Inclusive upper bound.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub maximum: Option<Value>,
    /// Exclusive lower bound.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exclusive_minimum: Option<Value>,
    /// Exclusive upper bound.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exclusive_maximum: Option<Value>,
    /// Least length (characters, items or members).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_length: Option<u64>,
    /// Greatest length (characters, items or members).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_length: Option<u64>,
    /// The regular expression a string must match.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
    /// The format a string must have (`date-time`, ...).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    /// The JSON type(s) allowed, several joined with " or ".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected_type: Option<String>,
    /// The JSON type given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub actual_type: Option<&'static str>,
    /// For `invalid_value`: the schema keyword violated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub keyword: Option<String>,
}

impl FieldIssue {
    fn at(field: String, constraint: &'static str) -> Self {
        Self {
            field: cut_chars(field, RECOVERY_TEXT_CHARS_MAX),
            constraint,
            allowed: None,
            minimum: None,
            maximum: None,
            exclusive_minimum: None,
            exclusive_maximum: None,
            min_length: None,
            max_length: None,
            pattern: None,
            format: None,
            expected_type: None,
            actual_type: None,
            keyword: None,
        }
    }

    /// A value of type `actual` where `expected` belongs (a field a front reads itself, such
    /// as an MCP call's `_meta` deadline).
    pub fn type_mismatch(field: String, expected: &str, actual: &'static str) -> Self {
        Self {
            expected_type: Some(expected.to_owned()),
            actual_type: Some(actual),
            ..Self::at(
                field,
                Constraint::InvalidFieldType {
                    expected: Vec::new(),
                    actual,
                }
                .name(),
            )
        }
    }

    /// The issues one violation makes: one, or one per unknown member. `strip` is removed
    /// from the front of the instance path (`/args` for an args refusal, whose pointers the
    /// caller reads against its own arguments).
    fn of(violated: &Violated, strip: &str) -> Vec<Self> {
        let path = violated
            .instance_path
            .strip_prefix(strip)
            .unwrap_or(&violated.instance_path);
        let member = |name: &str| format!("{path}/{}", escape_pointer_token(name));
        let one = |issue: Self| vec![issue];
        match &violated.constraint {
            Constraint::MissingField { field } => {
                one(Self::at(member(field), violated.constraint.name()))
            }
            Constraint::UnknownField { fields } => fields
                .iter()
                .map(|name| Self::at(member(name), violated.constraint.name()))
                .collect(),
            Constraint::InvalidFieldType { expected, actual } => one(Self {
                expected_type: Some(expected.join(" or ")),
                actual_type: Some(actual),
                ..Self::at(path.to_owned(), violated.constraint.name())
            }),
            Constraint::InvalidEnumValue { allowed } => one(Self {
                allowed: Some(allowed.iter().take(RECOVERY_ALLOWED_MAX).cloned().collect()),
                ..Self::at(path.to_owned(), violated.constraint.name())
            }),
            Constraint::InvalidFormat { format } => one(Self {
                format: Some(cut_chars(format.clone(), RECOVERY_TEXT_CHARS_MAX)),
                ..Self::at(path.to_owned(), violated.constraint.name())
            }),
            Constraint::InvalidPattern { pattern } => one(Self {
                pattern: Some(cut_chars(pattern.clone(), RECOVERY_TEXT_CHARS_MAX)),
                ..Self::at(path.to_owned(), violated.constraint.name())
            }),
            Constraint::InvalidRange {
                minimum,
                maximum,
                exclusive,
            } => {
                let mut issue = Self::at(path.to_owned(), violated.constraint.name());
                if *exclusive {
                    issue.exclusive_minimum = minimum.clone();
                    issue.exclusive_maximum = maximum.clone();
                } else {
                    issue.minimum = minimum.clone();
                    issue.maximum = maximum.clone();
                }
                one(issue)
            }
            Constraint::InvalidLength {
                min_length,
                max_length,
            } => one(Self {
                min_length: *min_length,
                max_length: *max_length,
                ..Self::at(path.to_owned(), violated.constraint.name())
            }),
            Constraint::Other { keyword } => one(Self {
                keyword: Some(cut_chars(keyword.clone(), RECOVERY_TEXT_CHARS_MAX)),
                ..Self::at(path.to_owned(), violated.constraint.name())
            }),
        }
    }
}

/// What to do next, and what to fix.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Recovery {
    /// The next step.
    pub action: Action,
    /// What to fix (for `correct_call`), at most [`RECOVERY_ISSUES_MAX`].
    pub issues: Vec<FieldIssue>,
    /// Issues not listed: violations past
    /// [`SCHEMA_VIOLATIONS_MAX`](crate::limits::SCHEMA_VIOLATIONS_MAX) count one each, and
    /// issues past [`RECOVERY_ISSUES_MAX`].
    #[serde(skip_serializing_if = "is_zero")]
    pub issues_omitted: usize,
    /// For `retry`: how long to wait first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry_after_ms: Option<u64>,
    /// For an args correction: arguments this tool accepts, from its schema's `examples`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub example: Option<Value>,
}

fn is_zero(count: &usize) -> bool {
    *count == 0
}

impl Recovery {
    /// A recovery with no field issues.
    pub fn plain(action: Action) -> Self {
        Self {
            action,
            issues: Vec::new(),
            issues_omitted: 0,
            retry_after_ms: None,
            example: None,
        }
    }

    /// What the caller of `agent.tool` (as far as they are known) should do after the crossing
    /// refused the call with `error`.
    pub fn for_refusal(error: &CrossingError, agent: Option<&str>, tool: Option<&str>) -> Self {
        match error {
            CrossingError::Schema { phase, violation }
                if matches!(phase, Phase::Envelope | Phase::Args | Phase::Signal) =>
            {
                let strip = if *phase == Phase::Args { "/args" } else { "" };
                let mut issues = Vec::new();
                for violated in &violation.violated.list {
                    issues.extend(FieldIssue::of(violated, strip));
                }
                if issues.is_empty() {
                    // A schema the validator could not build lists nothing; the first
                    // violation still says where.
                    issues.extend(FieldIssue::of(
                        &Violated {
                            instance_path: violation.instance_path.clone(),
                            constraint: (*violation.constraint).clone(),
                        },
                        strip,
                    ));
                }
                let mut omitted = violation.violated.omitted;
                if issues.len() > RECOVERY_ISSUES_MAX {
                    omitted += issues.len() - RECOVERY_ISSUES_MAX;
                    issues.truncate(RECOVERY_ISSUES_MAX);
                }
                let example = match (phase, agent, tool) {
                    (Phase::Args, Some(agent), Some(tool)) => args_example(agent, tool),
                    _ => None,
                };
                Self {
                    issues,
                    issues_omitted: omitted,
                    example,
                    ..Self::plain(Action::CorrectCall)
                }
            }
            // Text that is not I-JSON, or too big or deep: the caller sends other text.
            CrossingError::Json {
                phase: Phase::Envelope | Phase::Signal,
                ..
            } => Self::plain(Action::CorrectCall),
            // The user's yes is not proven here: asking again is the front's to do, not the
            // caller's to retry.
            CrossingError::Unconfirmed { .. } => Self::plain(Action::Finish),
            CrossingError::Busy { .. } | CrossingError::Unreachable { .. } => Self {
                retry_after_ms: Some(BUSY_RETRY_AFTER_MS),
                ..Self::plain(Action::Retry)
            },
            CrossingError::Remote(remote) if remote.kind == "busy" => Self {
                retry_after_ms: Some(BUSY_RETRY_AFTER_MS),
                ..Self::plain(Action::Retry)
            },
            // The tool is not there, or not here, or failed on these args (the agent is
            // deterministic: the same call fails the same way).
            _ => Self::plain(Action::Replan),
        }
    }

    /// What to do after the agent itself reported an error (result.v1 `ok: false` of kind
    /// `tool_invalid_args` or `tool_failed`): correct the args the agent named, or replan.
    pub fn for_tool_error(kind: &str, agent: &str, tool: &str) -> Self {
        if kind == "tool_invalid_args" {
            Self {
                example: args_example(agent, tool),
                ..Self::plain(Action::CorrectCall)
            }
        } else {
            Self::plain(Action::Replan)
        }
    }
}

/// A refused or failed call as its caller reads it: recovery.v1.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolFailure {
    /// Stable machine name (result.v1's error kinds, plus `busy`, `declined` and
    /// `confirmation_unavailable` for what a front refuses before the crossing).
    pub kind: String,
    /// Which check failed, where one did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub phase: Option<Phase>,
    /// What went wrong, for people (cut to the result.v1 bound).
    pub message: String,
    /// The call's call_id, where it was read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub call_id: Option<String>,
    /// What to do next.
    pub recovery: Recovery,
}

impl ToolFailure {
    /// A failure with its recovery.
    pub fn new(kind: &str, message: String, recovery: Recovery) -> Self {
        Self {
            kind: kind.to_owned(),
            phase: None,
            message: cut_chars(message, RESULT_MESSAGE_CHARS_MAX),
            call_id: None,
            recovery,
        }
    }

    /// The failure a crossing refusal reports.
    pub fn refused(error: &CrossingError, call_id: Option<&str>, recovery: Recovery) -> Self {
        Self {
            phase: Some(error.phase()),
            call_id: call_id.map(str::to_owned),
            ..Self::new(error.kind(), error.to_string(), recovery)
        }
    }

    /// recovery.v1 as a JSON value.
    pub fn to_value(&self) -> Value {
        // Strings, integers, enums and JSON values from our own schemas: always serializable.
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// recovery.v1 as canonical JSON (RFC 8785).
    pub fn to_canonical(&self) -> String {
        to_canonical_string(&self.to_value()).unwrap_or_else(|_| {
            r#"{"kind":"canonicalize_failed","message":"failure could not be encoded","recovery":{"action":"replan","issues":[]}}"#.to_owned()
        })
    }
}

/// The first of the `examples` the args schema of `agent.tool` carries.
fn args_example(agent: &str, tool: &str) -> Option<Value> {
    let spec = catalogue::tool(agent, tool)?;
    let schema: Value = serde_json::from_str(spec.args_schema.text).ok()?;
    schema.get("examples")?.as_array()?.first().cloned()
}

/// RFC 6901: `~` → `~0`, `/` → `~1`.
pub fn escape_pointer_token(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

#[cfg(test)]
mod tests;
