//! The quarantine record: one line of `<data-dir>/errors/quarantine_calls.jsonl` (ADR-0009).
//!
//! It owns what a record says of a refused call: its ids as far as they could be read, the
//! chain of agents it was called from, the check that failed and why, the offending JSON as
//! received (cut at a char boundary to a bound), the fuel burned and what the caller was told
//! to do next. It must not write the record (the host's journal does) nor decide what is
//! refused (the crossing does).

use crate::person::PersonIds;
use serde::Serialize;

use crate::error::{CrossingError, Phase};
use crate::limits::QUARANTINE_OFFENDING_BYTES_MAX;
use crate::recovery::Recovery;

/// One quarantine line: what was refused, why, and the offending JSON as received.
#[derive(Debug, Clone, Serialize)]
pub struct QuarantineRecord {
    /// The envelope's call_id, if the envelope could be read that far.
    pub call_id: Option<String>,
    /// The envelope's agent, if known.
    pub agent: Option<String>,
    /// The envelope's tool, if known.
    pub tool: Option<String>,
    /// For a call one agent made to another through `host.call`: the agents of the calls it
    /// was made from, root first, the calling agent last. Empty for a root call or a tick.
    pub callers: Vec<String>,
    /// Which check failed.
    pub phase: Phase,
    /// Stable error kind (as in result.v1).
    pub kind: &'static str,
    /// The error, for people.
    pub reason: String,
    /// JSON Pointer of the offending value, where there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instance_path: Option<String>,
    /// Location of the failing schema keyword, for schema errors.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub schema_path: Option<String>,
    /// The offending string as received, cut to [`QUARANTINE_OFFENDING_BYTES_MAX`].
    pub offending: String,
    /// Length of the offending string before the cut.
    pub offending_bytes: usize,
    /// Whether `offending` was cut.
    pub offending_truncated: bool,
    /// Fuel the agent burned before the failure.
    pub fuel_used: u64,
    /// What the caller was told to do next, with the same field issues (recovery.v1's
    /// `recovery`, without the example, which is the schema's and not the call's).
    pub recovery: Recovery,
    /// Whose assistant it was, on a fleet's host (seed 003's `tenant_id` and `user_id`);
    /// nothing on a host that serves one person.
    #[serde(flatten)]
    pub person: Option<PersonIds>,
}

impl QuarantineRecord {
    /// The record for `error`, with the string that caused it and the recovery its caller was
    /// given.
    pub fn new(
        error: &CrossingError,
        ids: CallIds<'_>,
        offending: &str,
        recovery: &Recovery,
    ) -> Self {
        let cut = floor_char_boundary(offending, QUARANTINE_OFFENDING_BYTES_MAX);
        Self {
            recovery: Recovery {
                example: None,
                ..recovery.clone()
            },
            call_id: ids.call_id.map(str::to_owned),
            agent: ids.agent.map(str::to_owned),
            tool: ids.tool.map(str::to_owned),
            callers: ids.callers.iter().map(|&agent| agent.to_owned()).collect(),
            phase: error.phase(),
            kind: error.kind(),
            reason: error.to_string(),
            instance_path: error.instance_path().map(str::to_owned),
            schema_path: error.schema_path().map(str::to_owned),
            offending: offending[..cut].to_owned(),
            offending_bytes: offending.len(),
            offending_truncated: cut < offending.len(),
            fuel_used: error.fuel_used(),
            person: None,
        }
    }
}

/// Why a signal or an answer was refused on its way into the live assistant (phase
/// `signal`): what its quarantine record and its sender's recovery.v1 say.
#[derive(Debug, Clone, PartialEq)]
pub struct InputRefusal {
    /// Stable machine name (`not_json`, `schema_error`, `too_large`, `busy`, …).
    pub kind: &'static str,
    /// The refusal, for people.
    pub reason: String,
    /// JSON Pointer of the offending value, where there is one.
    pub instance_path: Option<String>,
    /// Location of the failing schema keyword, for schema errors.
    pub schema_path: Option<String>,
    /// What its sender should do next.
    pub recovery: Box<Recovery>,
}

impl QuarantineRecord {
    /// The record of an input the live assistant refused, with the text as received.
    pub fn input(refusal: &InputRefusal, offending: &str) -> Self {
        let cut = floor_char_boundary(offending, QUARANTINE_OFFENDING_BYTES_MAX);
        Self {
            call_id: None,
            agent: None,
            tool: None,
            callers: Vec::new(),
            phase: Phase::Signal,
            kind: refusal.kind,
            reason: refusal.reason.clone(),
            instance_path: refusal.instance_path.clone(),
            schema_path: refusal.schema_path.clone(),
            offending: offending[..cut].to_owned(),
            offending_bytes: offending.len(),
            offending_truncated: cut < offending.len(),
            fuel_used: 0,
            recovery: (*refusal.recovery).clone(),
            person: None,
        }
    }
}

/// What is known of a call's identity when it fails.
#[derive(Debug, Clone, Copy, Default)]
pub struct CallIds<'a> {
    /// The envelope's call_id.
    pub call_id: Option<&'a str>,
    /// The envelope's agent.
    pub agent: Option<&'a str>,
    /// The envelope's tool.
    pub tool: Option<&'a str>,
    /// The agents of the calls above it, root first (see [`QuarantineRecord::callers`]).
    pub callers: &'a [&'static str],
}

/// The largest index ≤ `index` that is a char boundary of `text`.
fn floor_char_boundary(text: &str, index: usize) -> usize {
    if index >= text.len() {
        return text.len();
    }
    (0..=index)
        .rev()
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(0)
}

/// Test support for the crates above (feature `test-support`): a refusal and what its caller
/// was told, to build records of.
#[cfg(any(test, feature = "test-support"))]
pub mod tests {
    use super::*;
    use crate::canonical::JsonError;
    use crate::recovery::Action;

    /// What a caller told to replan is told.
    pub fn replan() -> Recovery {
        Recovery::plain(Action::Replan)
    }

    /// An envelope refused as too large.
    pub fn error() -> CrossingError {
        CrossingError::Json {
            phase: Phase::Envelope,
            error: JsonError::TooLarge {
                bytes: Some(10),
                bytes_max: 5,
            },
        }
    }

    #[test]
    fn offending_json_is_cut_at_a_char_boundary() {
        let big = "é".repeat(QUARANTINE_OFFENDING_BYTES_MAX); // 2 bytes each
        let record = QuarantineRecord::new(&error(), CallIds::default(), &big, &replan());
        assert_eq!(record.offending.len(), QUARANTINE_OFFENDING_BYTES_MAX);
        assert_eq!(record.offending_bytes, 2 * QUARANTINE_OFFENDING_BYTES_MAX);
        assert!(record.offending_truncated);
        let odd = format!("a{big}");
        let record = QuarantineRecord::new(&error(), CallIds::default(), &odd, &replan());
        assert_eq!(record.offending.len(), QUARANTINE_OFFENDING_BYTES_MAX - 1);
        let small = QuarantineRecord::new(&error(), CallIds::default(), "{}", &replan());
        assert!(!small.offending_truncated);
    }
}
