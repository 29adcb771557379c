//! Tests of the recovery module.

use super::*;
use crate::crossing::Crossing;
use serde_json::json;

/// The recovery of the args `args` of `agent.tool`, through the real crossing.
fn recovery_of(agent: &str, tool: &str, args: Value) -> Recovery {
    let call = json!({"call_id": "t_recovery01", "ts": "2026-11-23T08:00:00Z",
        "agent": agent, "tool": tool, "confirm_required": false, "args": args});
    let error = Crossing::new()
        .unwrap()
        .check_call(&call.to_string())
        .expect_err("the call must be refused");
    Recovery::for_refusal(&error, Some(agent), Some(tool))
}

fn issue(field: &str, constraint: &'static str) -> FieldIssue {
    FieldIssue::at(field.to_owned(), constraint)
}

const BASELINES: &str = r#"{"hrv_ms": 60, "resting_hr_bpm": 58, "sleep_minutes": 450}"#;

fn stress(readings: Value) -> Value {
    json!({"readings": readings, "baselines": serde_json::from_str::<Value>(BASELINES).unwrap()})
}

#[test]
fn missing_field_points_at_the_member_itself() {
    // stress_score requires readings and baselines: without baselines, the issue is the
    // pointer to where it belongs (root "" + "/baselines").
    let recovery = recovery_of(
        "wellness",
        "stress_score",
        json!({"readings": {"hrv_ms": 42}}),
    );
    assert_eq!(recovery.action, Action::CorrectCall);
    assert_eq!(recovery.issues, vec![issue("/baselines", "missing_field")]);
    // The example is the schema's first, and it is valid args (a correct call).
    assert_eq!(
        recovery.example.as_ref().unwrap()["readings"]["hrv_ms"],
        json!(42)
    );
}

#[test]
fn each_unknown_member_is_its_own_issue() {
    let mut args = stress(json!({"hrv_ms": 42}));
    args["mood"] = json!("ok");
    args["a/b"] = json!(1);
    let recovery = recovery_of("wellness", "stress_score", args);
    let mut fields: Vec<&str> = recovery.issues.iter().map(|i| i.field.as_str()).collect();
    fields.sort();
    // "a/b" escaped per RFC 6901.
    assert_eq!(fields, ["/a~1b", "/mood"]);
    assert!(
        recovery
            .issues
            .iter()
            .all(|i| i.constraint == "unknown_field")
    );
}

#[test]
fn wrong_type_names_both_types() {
    let recovery = recovery_of("wellness", "stress_score", stress(json!({"hrv_ms": "42"})));
    assert_eq!(
        recovery.issues,
        vec![FieldIssue {
            expected_type: Some("integer".into()),
            actual_type: Some("string"),
            ..issue("/readings/hrv_ms", "invalid_field_type")
        }]
    );
}

#[test]
fn enum_lists_the_allowed_values() {
    // draft_reply's intent is one of accept, decline, defer, acknowledge (its schema).
    let recovery = recovery_of(
        "comms",
        "draft_reply",
        json!({"message": {"sender": "a@b.example", "subject": "s", "body": "b"},
               "intent": "maybe", "tone": "friendly"}),
    );
    let issue = &recovery.issues[0];
    assert_eq!(
        (issue.field.as_str(), issue.constraint),
        ("/intent", "invalid_enum_value")
    );
    let schema: Value = serde_json::from_str(
        catalogue::tool("comms", "draft_reply")
            .unwrap()
            .args_schema
            .text,
    )
    .unwrap();
    assert_eq!(
        issue.allowed.as_ref().unwrap(),
        schema["properties"]["intent"]["enum"].as_array().unwrap()
    );
}

#[test]
fn format_range_and_length_carry_their_bounds() {
    // sleep_minutes: 0..=1440 in stress_score's readings; start: date-time, maxLength 40.
    let recovery = recovery_of(
        "wellness",
        "stress_score",
        stress(json!({"sleep_minutes": 1441})),
    );
    assert_eq!(
        recovery.issues,
        vec![FieldIssue {
            maximum: Some(json!(1440)),
            ..issue("/readings/sleep_minutes", "invalid_range")
        }]
    );
    let recovery = recovery_of(
        "calendar",
        "detect_conflicts",
        json!({"events": [{"id": "a", "start": "tomorrow", "end": "2026-11-23T09:00:00Z"}]}),
    );
    assert_eq!(
        recovery.issues,
        vec![FieldIssue {
            format: Some("date-time".into()),
            ..issue("/events/0/start", "invalid_format")
        }]
    );
    let long = "2026-11-23T09:00:00.000000000000000000000Z";
    assert_eq!(long.chars().count(), 42);
    let recovery = recovery_of(
        "calendar",
        "detect_conflicts",
        json!({"events": [{"id": "a", "start": long, "end": "2026-11-23T09:00:00Z"}]}),
    );
    assert!(recovery.issues.contains(&FieldIssue {
        max_length: Some(40),
        ..issue("/events/0/start", "invalid_length")
    }));
}

#[test]
fn pattern_names_the_expression() {
    // working_hours.start is HH:MM by pattern in find_free_slots.
    let schema: Value = serde_json::from_str(
        catalogue::tool("calendar", "find_free_slots")
            .unwrap()
            .args_schema
            .text,
    )
    .unwrap();
    let pattern = schema["properties"]["working_hours"]["properties"]["start"]["pattern"]
        .as_str()
        .unwrap()
        .to_owned();
    let recovery = recovery_of(
        "calendar",
        "find_free_slots",
        json!({"working_hours": {"start": "09-00", "end": "17:00"}, "utc_offset_minutes": 0,
               "from": "2026-11-23T08:00:00Z", "duration_minutes": 30, "horizon_days": 7}),
    );
    assert_eq!(
        recovery.issues,
        vec![FieldIssue {
            pattern: Some(pattern),
            ..issue("/working_hours/start", "invalid_pattern")
        }]
    );
}

#[test]
fn several_violations_are_listed_at_once_and_bounded() {
    // Two wrong fields, one missing member: three issues in one refusal.
    let recovery = recovery_of(
        "wellness",
        "stress_score",
        json!({"readings": {"hrv_ms": "x", "sleep_minutes": -1}}),
    );
    let mut seen: Vec<(&str, &str)> = recovery
        .issues
        .iter()
        .map(|i| (i.field.as_str(), i.constraint))
        .collect();
    seen.sort();
    assert_eq!(
        seen,
        [
            ("/baselines", "missing_field"),
            ("/readings/hrv_ms", "invalid_field_type"),
            ("/readings/sleep_minutes", "invalid_range"),
        ]
    );
    // 40 unknown members: one violation (the validator reports them together), one issue
    // each, listed up to the bound, the rest counted.
    let mut args = stress(json!({}));
    for i in 0..40 {
        args[format!("x{i}")] = json!(i);
    }
    let recovery = recovery_of("wellness", "stress_score", args);
    assert_eq!(recovery.issues.len(), RECOVERY_ISSUES_MAX);
    assert_eq!(recovery.issues_omitted, 40 - RECOVERY_ISSUES_MAX);
    // 30 bad items: the list stops at the bound and counts the rest.
    let events: Vec<Value> = (0..30)
        .map(|i| json!({"id": format!("e{i}"), "start": "x", "end": "2026-11-23T09:00:00Z"}))
        .collect();
    let recovery = recovery_of("calendar", "detect_conflicts", json!({ "events": events }));
    assert_eq!(recovery.issues.len(), crate::limits::SCHEMA_VIOLATIONS_MAX);
    assert_eq!(
        recovery.issues_omitted,
        30 - crate::limits::SCHEMA_VIOLATIONS_MAX
    );
    // A member name as long as the crossing allows is cut in the pointer.
    let mut args = stress(json!({}));
    args["y".repeat(5000)] = json!(1);
    let recovery = recovery_of("wellness", "stress_score", args);
    assert_eq!(
        recovery.issues[0].field.chars().count(),
        RECOVERY_TEXT_CHARS_MAX
    );
}

#[test]
fn envelope_issues_point_into_the_envelope_and_other_refusals_replan() {
    let error = Crossing::new()
        .unwrap()
        .check_call(
            r#"{"call_id":"t_recovery02","ts":"2026-11-23T08:00:00Z","agent":"wellness",
            "tool":"stress_score","confirm_required":false,"deadline_ms":5,"args":{}}"#,
        )
        .unwrap_err();
    let recovery = Recovery::for_refusal(&error, Some("wellness"), Some("stress_score"));
    assert_eq!(recovery.action, Action::CorrectCall);
    assert_eq!(recovery.issues[0].field, "/deadline_ms");
    assert_eq!(recovery.issues[0].constraint, "invalid_range");
    assert_eq!(
        recovery.example, None,
        "an envelope refusal has no args example"
    );
    let unknown = CrossingError::UnknownTool {
        agent: "wellness".into(),
        tool: "nap".into(),
    };
    assert_eq!(
        Recovery::for_refusal(&unknown, Some("wellness"), Some("nap")),
        Recovery::plain(Action::Replan)
    );
}

#[test]
fn the_failure_is_valid_recovery_v1_in_canonical_form() {
    let crossing = Crossing::new().unwrap();
    let error = crossing
        .check_call(
            &json!({"call_id": "t_recovery03", "ts": "2026-11-23T08:00:00Z",
                "agent": "wellness", "tool": "stress_score", "confirm_required": false,
                "args": {"readings": {"hrv_ms": "x"}, "extra": true}})
            .to_string(),
        )
        .unwrap_err();
    let failure = ToolFailure::refused(
        &error,
        Some("t_recovery03"),
        Recovery::for_refusal(&error, Some("wellness"), Some("stress_score")),
    );
    let value = failure.to_value();
    crossing
        .schemas()
        .validate(crate::catalogue::RECOVERY_SCHEMA.path, &value, "")
        .unwrap();
    let text = failure.to_canonical();
    assert_eq!(text, to_canonical_string(&value).unwrap());
    assert!(text.starts_with(r#"{"call_id":"t_recovery03","kind":"schema_error""#));
}
