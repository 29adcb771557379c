//! Test support for the crates above (feature `test-support`): a valid trace to change; and
//! the tests of the trace module.

use super::*;

/// A trace as the orchestrator writes one, valid against trace.v1.
pub fn sample() -> Trace {
    Trace {
        trace_id: "tr_00000_000".into(),
        run: "run_0123456789abcdef".into(),
        scenario: "short".into(),
        seed: 7,
        tick: 0,
        at: "2026-11-23T08:45:00+01:00".into(),
        decision: Decision::Executed,
        call: Some(TracedCall {
            call_id: "t_0123456789".into(),
            agent: "calendar".into(),
            tool: "detect_conflicts".into(),
            confirm_required: false,
        }),
        proposed_by: Some("calendar".into()),
        about: None,
        answer: None,
        signals: vec!["overlap:e1/e2".into()],
        priority: 90,
        requested_surface: Surface::Watch,
        surface: Surface::Watch,
        rationale: "Calendar conflicts need resolving.".into(),
        outcome: Outcome::held(),
        fuel_used: 0,
        not_chosen: vec![NotChosen {
            call_id: "t_abcdefghij".into(),
            agent: "wellness".into(),
            tool: "stress_score".into(),
            priority: 20,
            reason: LostReason::SurfaceBusy,
        }],
    }
}

#[test]
fn rationales_fill_the_tool_template_and_stay_in_bounds() {
    let signals = vec!["double_booking:e1/e2".to_owned()];
    let facts = RationaleFacts {
        lead: "Calendar conflicts need resolving",
        agent: "calendar",
        tool: "detect_conflicts",
        signals: &signals,
        priority: 90,
        decision: Decision::Executed,
        requested: Surface::Watch,
        surface: Surface::Watch,
        beaten: 1,
        moved: None,
        news: &[],
        failure: None,
    };
    assert_eq!(
        rationale(&facts),
        "Calendar conflicts need resolving (calendar.detect_conflicts): double_booking:e1/e2. \
         Priority 90, the highest of 2 proposals for WATCH; shown on WATCH."
    );
    let news = vec!["conflict:e1/e2".to_owned()];
    let budget = RationaleFacts {
        requested: Surface::PhoneCard,
        surface: Surface::Silent,
        beaten: 0,
        moved: Some(Moved::Budget),
        news: &news,
        ..facts
    };
    assert!(rationale(&budget).ends_with(
        "Priority 90; new: conflict:e1/e2; this hour's interruptions of that surface are used \
         up: SILENT instead of PHONE_CARD."
    ));
    let quiet = RationaleFacts {
        requested: Surface::PhoneCard,
        surface: Surface::Silent,
        beaten: 0,
        ..facts
    };
    assert!(rationale(&quiet).ends_with("Priority 90; quiet hours: SILENT instead of PHONE_CARD."));
    let long: Vec<String> = (0..16).map(|i| format!("{i:0>199}")).collect();
    let long = RationaleFacts {
        signals: &long,
        ..facts
    };
    let text = rationale(&long);
    assert_eq!(text.chars().count(), RATIONALE_CHARS_MAX);
    assert!(text.ends_with('…'));
}

#[test]
fn outcomes_serialize_as_trace_v1_names_them() {
    let spec = crate::catalogue::tool("wellness", "stress_score").unwrap();
    let ok = Outcome::ok(
        spec,
        &serde_json::json!({"score": 40, "level": "moderate"}),
        &Telling::default(),
    );
    assert_eq!(
        serde_json::to_value(&ok).unwrap(),
        serde_json::json!({"status": "ok", "summary": "Your stress is moderate"})
    );
    let refused = Outcome::refused(&CrossingError::UnknownAgent {
        agent: "mallory".into(),
    });
    assert_eq!(
        serde_json::to_value(&refused).unwrap(),
        serde_json::json!({"status": "refused", "kind": "unknown_agent",
            "summary": "That could not be done just now; nothing was changed"})
    );
    let failed = Outcome::tool_error("tool_failed".into());
    assert_eq!(failed.status, Status::ToolError);
    assert_eq!(failed.kind.as_deref(), Some("tool_failed"));
    assert_eq!(
        failed.summary,
        "That could not be done just now; nothing was changed"
    );
    assert_eq!(
        serde_json::to_value(LostReason::SurfaceBusy).unwrap(),
        "surface_busy"
    );
}

#[test]
fn a_long_summary_is_cut_and_marked() {
    let long = Outcome::pending("q".repeat(SUMMARY_CHARS_MAX + 5));
    assert_eq!(long.summary.chars().count(), SUMMARY_CHARS_MAX);
    assert!(long.summary.ends_with('…'));
    let exact = Outcome::pending("q".repeat(SUMMARY_CHARS_MAX));
    assert_eq!(exact.summary, "q".repeat(SUMMARY_CHARS_MAX));
}
