//! Tests of the error module.

use super::*;

/// Fails to compile when a variant is added: add it to [`one_of_each`] too (or, when it
/// reuses a kind, to `the_wire_variants_reuse_existing_kinds`).
#[allow(dead_code)]
fn exhaustive(error: &CrossingError) {
    match error {
        CrossingError::Json { .. }
        | CrossingError::Schema { .. }
        | CrossingError::UnknownAgent { .. }
        | CrossingError::UnknownTool { .. }
        | CrossingError::AgentUnavailable { .. }
        | CrossingError::AgentTrapped { .. }
        | CrossingError::StackOverflow { .. }
        | CrossingError::DeadlineExceeded { .. }
        | CrossingError::WallClockExceeded { .. }
        | CrossingError::AgentCallUnsupported { .. }
        | CrossingError::CallNotAllowed { .. }
        | CrossingError::CycleDetected { .. }
        | CrossingError::DepthExceeded { .. }
        | CrossingError::ImportLimit { .. }
        | CrossingError::HostWorkLimit { .. }
        | CrossingError::AgentExited { .. }
        | CrossingError::MemoryLimit { .. }
        | CrossingError::Busy { .. }
        | CrossingError::Remote(_)
        | CrossingError::Unreachable { .. }
        | CrossingError::AnswerUntrusted { .. }
        | CrossingError::Unconfirmed { .. }
        | CrossingError::WireReply { .. } => {}
    }
}

/// One of each variant (and each JSON error), so a new kind cannot miss result.v1.
fn one_of_each() -> Vec<CrossingError> {
    let agent = || "a".to_owned();
    let json = |error| CrossingError::Json {
        phase: Phase::Envelope,
        error,
    };
    vec![
        json(JsonError::TooLarge {
            bytes: Some(2),
            bytes_max: 1,
        }),
        json(JsonError::Malformed {
            line: 1,
            column: 1,
            message: String::new(),
        }),
        json(JsonError::DuplicateKey {
            key: String::new(),
            pointer: String::new(),
        }),
        json(JsonError::NumberOutOfRange {
            literal_or_value: String::new(),
            pointer: String::new(),
        }),
        json(JsonError::Noncharacter {
            code_point: 0xFFFF,
            pointer: String::new(),
        }),
        json(JsonError::TooDeep { depth_max: 1 }),
        json(JsonError::Canonicalize {
            message: String::new(),
        }),
        CrossingError::Schema {
            phase: Phase::Args,
            violation: SchemaViolation {
                schema_id: String::new(),
                instance_path: String::new(),
                schema_path: String::new(),
                message: String::new(),
                constraint: Box::new(crate::schema::Constraint::Other {
                    keyword: String::new(),
                }),
                violated: Box::default(),
            },
        },
        CrossingError::UnknownAgent { agent: agent() },
        CrossingError::UnknownTool {
            agent: agent(),
            tool: agent(),
        },
        CrossingError::AgentUnavailable { agent: agent() },
        CrossingError::AgentTrapped {
            agent: agent(),
            reason: String::new(),
            fuel_used: 0,
        },
        CrossingError::StackOverflow {
            agent: agent(),
            fuel_used: 0,
        },
        CrossingError::DeadlineExceeded {
            agent: agent(),
            deadline_ms: 50,
            fuel_used: 0,
        },
        CrossingError::WallClockExceeded {
            agent: agent(),
            deadline_ms: 50,
            margin_ms: 1,
            fuel_used: 0,
        },
        CrossingError::AgentCallUnsupported {
            caller: agent(),
            reason: String::new(),
        },
        CrossingError::CallNotAllowed {
            caller: agent(),
            agent: agent(),
            tool: agent(),
            reason: "",
        },
        CrossingError::CycleDetected {
            caller: agent(),
            target: agent(),
            chain: vec![agent()],
        },
        CrossingError::DepthExceeded {
            caller: agent(),
            target: agent(),
            depth: 6,
            max_depth: 5,
            chain: vec![agent()],
        },
        CrossingError::ImportLimit {
            agent: agent(),
            import: "host.call",
            limit: 1,
            fuel_used: 0,
        },
        CrossingError::HostWorkLimit {
            agent: agent(),
            what: String::new(),
            fuel_used: 0,
        },
        CrossingError::AgentExited {
            agent: agent(),
            status: 1,
            fuel_used: 0,
        },
        CrossingError::MemoryLimit {
            agent: agent(),
            reason: String::new(),
            fuel_used: 0,
        },
        CrossingError::Busy { in_flight_max: 1 },
    ]
}

/// The wire's variants reuse kinds the sandbox already has: a worker's refusal keeps
/// the worker's kind, phase and fuel; a worker nobody reaches is an unavailable agent;
/// a reply that is not result.v1 is a schema error of the reply; an answer no trusted worker
/// signed leaves the agent unavailable, refused at the reply.
#[test]
fn the_wire_variants_reuse_existing_kinds() {
    let remote = CrossingError::Remote(Box::new(RemoteRefusal {
        agent: "a".to_owned(),
        kind: "agent_trapped",
        phase: Phase::Agent,
        message: "trapped".to_owned(),
        instance_path: None,
        schema_path: None,
        fuel_used: 3,
    }));
    assert_eq!(
        (remote.kind(), remote.phase(), remote.fuel_used()),
        ("agent_trapped", Phase::Agent, 3)
    );
    assert_eq!(remote.to_string(), "trapped");
    let unreachable = CrossingError::Unreachable {
        agent: "a".to_owned(),
        attempts: 4,
        reason: String::new(),
    };
    assert_eq!(
        (
            unreachable.kind(),
            unreachable.phase(),
            unreachable.fuel_used()
        ),
        ("agent_unavailable", Phase::Agent, 0)
    );
    let reply = CrossingError::WireReply {
        agent: "a".to_owned(),
        reason: String::new(),
    };
    assert_eq!(
        (reply.kind(), reply.phase(), reply.fuel_used()),
        ("schema_error", Phase::Reply, 0)
    );
    let unconfirmed = CrossingError::Unconfirmed {
        agent: "calendar".to_owned(),
        tool: "schedule_event".to_owned(),
        reason: "it carries no proof of the user's yes".to_owned(),
    };
    assert_eq!(
        (unconfirmed.kind(), unconfirmed.phase()),
        ("call_not_allowed", Phase::Envelope)
    );
    assert_eq!(
        unconfirmed.to_string(),
        "`calendar.schedule_event` needs the user's yes, and it carries no proof of the user's yes"
    );
    let untrusted = CrossingError::AnswerUntrusted {
        agent: "a".to_owned(),
        reason: "it is not signed".to_owned(),
    };
    assert_eq!(
        (untrusted.kind(), untrusted.phase(), untrusted.fuel_used()),
        ("agent_unavailable", Phase::Reply, 0)
    );
    assert_eq!(
        untrusted.to_string(),
        "reply: an answer for `a` does not come from a trusted worker: it is not signed"
    );
}

#[test]
fn every_kind_and_phase_is_in_result_v1() {
    let schema: serde_json::Value =
        serde_json::from_str(crate::catalogue::RESULT_SCHEMA.text).unwrap();
    let error = &schema["$defs"]["error"]["properties"];
    let kinds: Vec<&str> = error["kind"]["enum"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k.as_str().unwrap())
        .collect();
    let phases: Vec<&str> = error["phase"]["enum"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k.as_str().unwrap())
        .collect();
    let errors = one_of_each();
    let mut seen = std::collections::BTreeSet::new();
    for error in &errors {
        assert!(kinds.contains(&error.kind()), "{} missing", error.kind());
        assert!(phases.contains(&error.phase().as_str()));
        assert!(seen.insert(error.kind()), "{} used twice", error.kind());
    }
    // The agent-reported kinds are the dispatcher's, not a CrossingError's.
    for kind in ["tool_invalid_args", "tool_failed"] {
        assert!(kinds.contains(&kind));
    }
    assert_eq!(
        kinds.len(),
        errors.len() + 2,
        "result.v1 lists a kind nothing produces"
    );
    assert_eq!(
        kinds,
        aura_protocol::ERROR_KINDS,
        "the guests' list is result.v1's"
    );
}
