//! The scenario's unit tests: the tick grid, signals in time order, quiet hours, typed errors.
use super::*;

fn schemas() -> SchemaRegistry {
    SchemaRegistry::compile(aura_contract::catalogue::all_schemas()).unwrap()
}

const SMALL: &str = r#"{
    "scenario": "small", "start": "2026-11-23T06:00:00+01:00",
    "end": "2026-11-23T07:00:00+01:00", "tick_minutes": 30, "utc_offset_minutes": 60,
    "profile": {"quiet_hours": {"start": "22:00", "end": "06:30"}},
    "initial": {"events": [{"id": "e0", "start": "2026-11-23T09:00:00+01:00", "end": "2026-11-23T10:00:00+01:00"}]},
    "signals": [
        {"at": "2026-11-23T06:40:00+01:00", "kind": "cancel_event", "data": {"id": "e0"}},
        {"at": "2026-11-23T06:10:00+01:00", "kind": "reading", "data": {"hrv_ms": 40}},
        {"at": "2026-11-23T06:20:00+01:00", "kind": "reading", "data": {"hrv_ms": 35, "resting_hr_bpm": 70}},
        {"at": "2026-11-23T06:30:00+01:00", "kind": "answer", "data": {"agent": "calendar", "tool": "schedule_event", "signal": "invitation:i1", "confirm": true}}
    ]
}"#;

#[test]
fn ticks_are_on_the_grid_and_signals_apply_in_time_order() {
    let scenario = Scenario::parse(SMALL, &schemas()).unwrap();
    let ticks = scenario.ticks();
    // 06:00, 06:30, 07:00 (end included).
    assert_eq!(ticks.len(), 3);
    assert_eq!(scenario.format(ticks[1]), "2026-11-23T06:30:00+01:00");
    let mut world = scenario.world();
    assert!(world.advance(&scenario, ticks[0]).is_empty());
    let first = world.context(&scenario, ticks[0]);
    assert_eq!(first["readings"], json!({}));
    assert_eq!(first["events"].as_array().unwrap().len(), 1);
    // At 06:30: both readings (the later one wins field by field) and the answer.
    let answers = world.advance(&scenario, ticks[1]);
    assert_eq!(answers.len(), 1);
    assert_eq!(
        answers[0],
        Answer::Item {
            agent: "calendar".into(),
            tool: "schedule_event".into(),
            signal: "invitation:i1".into(),
            confirm: true
        }
    );
    let second = world.context(&scenario, ticks[1]);
    assert_eq!(
        second["readings"],
        json!({"hrv_ms": 35, "resting_hr_bpm": 70})
    );
    assert_eq!(second["now"], "2026-11-23T06:30:00+01:00");
    // At 07:00 the event is cancelled.
    world.advance(&scenario, ticks[2]);
    assert_eq!(world.context(&scenario, ticks[2])["events"], json!([]));
    assert_eq!(world.signals_applied(), 4);
}

#[test]
fn invitations_are_pending_until_answered_whatever_the_answer() {
    let text = SMALL.replace(
        r#"{"at": "2026-11-23T06:40:00+01:00", "kind": "cancel_event", "data": {"id": "e0"}},"#,
        r#"{"at": "2026-11-23T06:05:00+01:00", "kind": "invitation", "data": {"id": "i1", "from": "a@b.c", "title": "T", "start": "2026-11-23T09:00:00+01:00", "end": "2026-11-23T10:00:00+01:00"}},"#,
    );
    let scenario = Scenario::parse(&text, &schemas()).unwrap();
    let mut world = scenario.world();
    world.advance(&scenario, scenario.ticks()[1]);
    assert_eq!(world.pending(INVITATION).len(), 1);
    assert_eq!(world.pending(INVITATION)[0]["id"], "i1");
    assert!(world.pending("parcel").is_empty());
    world.answered("invitation:i2");
    assert_eq!(world.pending(INVITATION).len(), 1, "another item");
    world.answered("invitationi1");
    assert_eq!(world.pending(INVITATION).len(), 1, "not an item's name");
    world.answered("invitation:i1");
    assert!(world.pending(INVITATION).is_empty());
}

#[test]
fn quiet_hours_wrap_midnight_in_local_time() {
    let scenario = Scenario::parse(SMALL, &schemas()).unwrap();
    let at = |s: &str| OffsetDateTime::parse(s, &Rfc3339).unwrap();
    // 22:00–06:30 local (+01:00).
    assert!(scenario.is_quiet(at("2026-11-23T05:29:00Z"))); // 06:29 local
    assert!(!scenario.is_quiet(at("2026-11-23T05:30:00Z"))); // 06:30 local
    assert!(!scenario.is_quiet(at("2026-11-23T20:59:00Z"))); // 21:59 local
    assert!(scenario.is_quiet(at("2026-11-23T21:00:00Z"))); // 22:00 local
    assert!(scenario.is_quiet(at("2026-11-23T23:30:00Z"))); // 00:30 local
}

#[test]
fn bad_scenarios_get_typed_errors() {
    let schemas = schemas();
    assert!(matches!(
        Scenario::parse("{", &schemas),
        Err(ScenarioError::Json(_))
    ));
    let no_signals = SMALL.replace("\"signals\"", "\"signalz\"");
    assert!(matches!(
        Scenario::parse(&no_signals, &schemas),
        Err(ScenarioError::Schema(_))
    ));
    let backwards = SMALL.replace("\"end\": \"2026-11-23T07", "\"end\": \"2026-11-23T05");
    assert!(matches!(
        Scenario::parse(&backwards, &schemas),
        Err(ScenarioError::Inconsistent(_))
    ));
    let unknown_kind = SMALL.replace("\"cancel_event\"", "\"teleport\"");
    assert!(matches!(
        Scenario::parse(&unknown_kind, &schemas),
        Err(ScenarioError::Schema(_))
    ));
}

#[test]
fn urgent_signals_add_ticks_of_their_own_rounded_up_to_10_ms() {
    let text = SMALL.replace(
        r#""profile":"#,
        r#""tick_on": ["message", "reading"], "profile":"#,
    );
    let mut scenario = Scenario::parse(&text, &schemas()).unwrap();
    let at = |s: &str| OffsetDateTime::parse(s, &Rfc3339).unwrap();
    // The grid: 06:00, 06:30, 07:00. The readings at 06:10 and 06:20 tick at once; the
    // cancel_event (06:40) and the answer (06:30) are not tick_on kinds.
    let shown: Vec<String> = scenario
        .ticks()
        .iter()
        .map(|t| scenario.format(*t))
        .collect();
    assert_eq!(
        shown,
        [
            "2026-11-23T06:00:00+01:00",
            "2026-11-23T06:10:00+01:00",
            "2026-11-23T06:20:00+01:00",
            "2026-11-23T06:30:00+01:00",
            "2026-11-23T07:00:00+01:00"
        ]
    );
    // A message at 06:44:12.345 ticks at 06:44:12.35 (10 ms up); one at 06:44:12.350 shares
    // that tick; one at 06:30 exactly is the grid's tick, not a second one.
    for stamp in ["06:44:12.345", "06:44:12.350", "06:30:00"] {
        scenario.accept(Signal {
            at: at(&format!("2026-11-23T{stamp}+01:00")),
            kind: "message".into(),
            data: json!({}),
        });
    }
    let ticks = scenario.ticks();
    assert_eq!(ticks.len(), 6);
    assert_eq!(scenario.format(ticks[4]), "2026-11-23T06:44:12.35+01:00");
    assert_eq!(
        scenario.tick_after(at("2026-11-23T06:44:12.35+01:00")),
        Some(at("2026-11-23T07:00:00+01:00"))
    );
    // Accepted signals keep time order, ties in arrival order (after the one at 06:30 the
    // file had: the answer).
    let kinds: Vec<&str> = scenario.signals.iter().map(|s| s.kind.as_str()).collect();
    assert_eq!(
        kinds,
        [
            "reading",
            "reading",
            "answer",
            "message",
            "cancel_event",
            "message",
            "message"
        ]
    );
}

#[test]
fn the_setup_digest_ignores_the_day_and_fills_in_defaults() {
    let schemas = schemas();
    let small = Scenario::parse(SMALL, &schemas).unwrap();
    // Another day of the same setup: other signals, end, description.
    let other_day = SMALL
        .replace("\"end\": \"2026-11-23T07:00", "\"end\": \"2026-11-23T09:00")
        .replace("\"hrv_ms\": 40", "\"hrv_ms\": 41");
    let other_day = Scenario::parse(&other_day, &schemas).unwrap();
    assert_eq!(small.setup_sha256, other_day.setup_sha256);
    assert_ne!(small.sha256, other_day.sha256);
    // The scenario it makes of itself has the same setup.
    let made = small.to_value(&[]);
    let again = Scenario::setup_of(&made, small.start).unwrap();
    assert_eq!(again.setup_sha256, small.setup_sha256);
    // The profile is the setup.
    let other_profile = SMALL.replace("\"22:00\"", "\"23:00\"");
    let other_profile = Scenario::parse(&other_profile, &schemas).unwrap();
    assert_ne!(small.setup_sha256, other_profile.setup_sha256);
}
