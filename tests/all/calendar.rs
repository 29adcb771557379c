//! The calendar agent through the real host: every tool with expected values worked out by
//! hand, bad input refused before the agent runs, and inconsistent input answered with a typed
//! tool error.

use serde_json::{Value, json};

use crate::support::{
    assert_proposed, assert_tool_invalid_args, call_tool, host_with, quarantine_lines,
};

async fn call(
    host: &aura_host::Host,
    call_id: &str,
    tool: &str,
    args: Value,
) -> aura_host::ResultEnvelope {
    call_tool(host, "calendar", call_id, tool, args).await
}

#[tokio::test]
async fn find_free_slots_respects_buffers_working_hours_and_weekends() {
    let (host, _) = host_with("calendar-slots", &["calendar"]).await;
    // Monday 2026-11-23 at +01:00, working 09:00-17:00, busy 10:00-11:00 local, buffer 15:
    // the busy span blocks 09:45-11:15; the window [09:00 Mon, 09:00 Tue) local holds
    // 09:00-09:45 (45 min) and 11:15-17:00 (345 min).
    let args = json!({
        "busy": [{"start": "2026-11-23T10:00:00+01:00", "end": "2026-11-23T11:00:00+01:00"}],
        "working_hours": {"start": "09:00", "end": "17:00"},
        "utc_offset_minutes": 60,
        "duration_minutes": 30,
        "buffer_minutes": 15,
        "from": "2026-11-23T08:00:00Z",
        "horizon_days": 1
    });
    let result = call(&host, "t_slots00001", "find_free_slots", args).await;
    assert!(result.ok);
    assert_eq!(
        result.result.unwrap(),
        json!({"slots": [
            {"start": "2026-11-23T09:00:00+01:00", "end": "2026-11-23T09:45:00+01:00", "minutes": 45},
            {"start": "2026-11-23T11:15:00+01:00", "end": "2026-11-23T17:00:00+01:00", "minutes": 345}
        ], "truncated": false})
    );

    // From Friday 16:00 UTC for 4 days, nothing busy, 60-minute meetings: Friday 16:00-17:00,
    // the weekend skipped, Monday 09:00-17:00, Tuesday 09:00-16:00 (the window ends 16:00).
    let args = json!({
        "working_hours": {"start": "09:00", "end": "17:00"},
        "utc_offset_minutes": 0,
        "duration_minutes": 60,
        "from": "2026-11-27T16:00:00Z",
        "horizon_days": 4
    });
    let result = call(&host, "t_slots00002", "find_free_slots", args.clone()).await;
    assert_eq!(
        result.result.unwrap(),
        json!({"slots": [
            {"start": "2026-11-27T16:00:00Z", "end": "2026-11-27T17:00:00Z", "minutes": 60},
            {"start": "2026-11-30T09:00:00Z", "end": "2026-11-30T17:00:00Z", "minutes": 480},
            {"start": "2026-12-01T09:00:00Z", "end": "2026-12-01T16:00:00Z", "minutes": 420}
        ], "truncated": false})
    );
    // The same with max_slots 2: the first two, and truncated.
    let mut capped = args;
    capped["max_slots"] = json!(2);
    let result = call(&host, "t_slots00003", "find_free_slots", capped).await;
    let result = result.result.unwrap();
    assert_eq!(result["slots"].as_array().unwrap().len(), 2);
    assert_eq!(result["truncated"], true);
}

#[tokio::test]
async fn detect_conflicts_finds_overlaps_double_bookings_and_tight_transitions() {
    let (host, _) = host_with("calendar-conflicts", &["calendar"]).await;
    // a 09:00-10:00 and b 09:30-10:30 overlap 30 min, neither inside the other;
    // d 11:15-11:45 lies inside c 11:00-12:00: a double booking of 30 min;
    // c ends 12:00 at the Office, e starts 12:05 at the Cafe: 5 min < 15 min travel gap.
    let args = json!({"events": [
        {"id": "e", "start": "2026-11-23T12:05:00Z", "end": "2026-11-23T13:00:00Z", "location": "Cafe"},
        {"id": "a", "start": "2026-11-23T09:00:00Z", "end": "2026-11-23T10:00:00Z", "location": "Office"},
        {"id": "b", "start": "2026-11-23T09:30:00Z", "end": "2026-11-23T10:30:00Z"},
        {"id": "c", "start": "2026-11-23T11:00:00Z", "end": "2026-11-23T12:00:00Z", "location": " office "},
        {"id": "d", "start": "2026-11-23T11:15:00Z", "end": "2026-11-23T11:45:00Z"}
    ]});
    let result = call(&host, "t_conflict01", "detect_conflicts", args).await;
    assert_eq!(
        result.result.unwrap(),
        json!({
            "overlaps": [{"a": "a", "b": "b", "overlap_minutes": 30}],
            "double_bookings": [{"a": "c", "b": "d", "overlap_minutes": 30}],
            "tight_transitions": [{"from": "c", "to": "e", "gap_minutes": 5,
                                   "from_location": "office", "to_location": "Cafe"}],
            "truncated": false
        })
    );
    // An empty calendar has no conflicts.
    let result = call(
        &host,
        "t_conflict02",
        "detect_conflicts",
        json!({"events": []}),
    )
    .await;
    assert_eq!(
        result.result.unwrap(),
        json!({"overlaps": [], "double_bookings": [], "tight_transitions": [], "truncated": false})
    );
}

#[tokio::test]
async fn schedule_event_normalizes_and_reports_what_it_would_break() {
    let (host, _) = host_with("calendar-schedule", &["calendar"]).await;
    // 16:00-17:00 at +01:00 is 15:00-16:00 UTC; the 15:30-15:45 stand-up lies inside it.
    let args = json!({
        "event": {"title": "  Dentist ", "start": "2026-11-24T16:00:00+01:00",
                  "end": "2026-11-24T17:00:00+01:00", "location": "Clinic"},
        "existing": [{"id": "standup", "start": "2026-11-24T15:30:00Z", "end": "2026-11-24T15:45:00Z"}],
        "working_hours": {"start": "09:00", "end": "17:00"},
        "utc_offset_minutes": 60
    });
    let result = call(&host, "t_schedule01", "schedule_event", args)
        .await
        .result
        .unwrap();
    let event = &result["event"];
    assert_eq!(event["title"], "Dentist");
    assert_eq!(event["start"], "2026-11-24T15:00:00Z");
    assert_eq!(event["end"], "2026-11-24T16:00:00Z");
    assert_eq!(event["duration_minutes"], 60);
    assert_eq!(event["location"], "Clinic");
    let id = event["id"].as_str().unwrap();
    assert!(id.len() == 13 && id.starts_with("ev_"), "{id}");
    assert_eq!(
        result["conflicts"],
        json!([{"with": "standup", "kind": "double_booking", "minutes": 15}])
    );
    assert_eq!(result["outside_working_hours"], false);

    // The same event written in UTC gets the same id; an hour later it ends past 17:00 local.
    let same = json!({"event": {"title": "Dentist", "start": "2026-11-24T15:00:00Z",
                                "end": "2026-11-24T16:00:00Z"}});
    let again = call(&host, "t_schedule02", "schedule_event", same)
        .await
        .result
        .unwrap();
    assert_eq!(again["event"]["id"], id);
    let late = json!({
        "event": {"title": "Dentist", "start": "2026-11-24T16:30:00Z", "end": "2026-11-24T17:30:00Z"},
        "working_hours": {"start": "09:00", "end": "17:00"},
        "utc_offset_minutes": 60
    });
    let late = call(&host, "t_schedule03", "schedule_event", late)
        .await
        .result
        .unwrap();
    assert_eq!(late["outside_working_hours"], true);
    assert_eq!(late["conflicts"], json!([]));
}

#[tokio::test]
async fn inconsistent_args_get_a_typed_tool_error() {
    let (host, data) = host_with("calendar-invalid", &["calendar"]).await;
    let cases = [
        (
            "find_free_slots",
            json!({
            "busy": [{"start": "2026-11-23T11:00:00Z", "end": "2026-11-23T10:00:00Z"}],
            "working_hours": {"start": "09:00", "end": "17:00"},
            "utc_offset_minutes": 0, "duration_minutes": 30,
            "from": "2026-11-23T08:00:00Z", "horizon_days": 1}),
        ),
        (
            "find_free_slots",
            json!({
            "working_hours": {"start": "17:00", "end": "09:00"},
            "utc_offset_minutes": 0, "duration_minutes": 30,
            "from": "2026-11-23T08:00:00Z", "horizon_days": 1}),
        ),
        (
            "detect_conflicts",
            json!({"events": [
            {"id": "x", "start": "2026-11-23T09:00:00Z", "end": "2026-11-23T10:00:00Z"},
            {"id": "x", "start": "2026-11-23T11:00:00Z", "end": "2026-11-23T12:00:00Z"}]}),
        ),
        (
            "schedule_event",
            json!({"event": {"title": "t",
            "start": "2026-11-23T10:00:00Z", "end": "2026-11-23T10:00:00Z"}}),
        ),
    ];
    assert_tool_invalid_args(&host, &data, "calendar", Vec::from(cases)).await;
}

#[tokio::test]
async fn bad_input_is_refused_before_the_agent_runs() {
    let (host, data) = host_with("calendar-refused", &["calendar"]).await;
    let slots = json!({
        "working_hours": {"start": "09:00", "end": "17:00"},
        "utc_offset_minutes": 0, "duration_minutes": 30,
        "from": "2026-11-23T08:00:00Z", "horizon_days": 1});
    let with = |mut base: Value, field: &str, value: Value| {
        base[field] = value;
        base
    };
    let event = |start: &str| json!({"id": "x", "start": start, "end": "2026-11-23T10:00:00Z"});
    let cases = [
        (
            "find_free_slots",
            with(slots.clone(), "duration_minutes", json!(4)),
            "/args/duration_minutes",
        ),
        (
            "find_free_slots",
            with(slots.clone(), "horizon_days", json!(32)),
            "/args/horizon_days",
        ),
        (
            "find_free_slots",
            with(slots.clone(), "from", json!("monday")),
            "/args/from",
        ),
        (
            "find_free_slots",
            with(
                slots.clone(),
                "working_hours",
                json!({"start": "9:00", "end": "17:00"}),
            ),
            "/args/working_hours/start",
        ),
        (
            "find_free_slots",
            with(
                slots.clone(),
                "busy",
                json!(vec![event("2026-11-23T09:00:00Z"); 501]),
            ),
            "/args/busy",
        ),
        (
            "find_free_slots",
            with(slots, "utc_offset_minutes", json!(841)),
            "/args/utc_offset_minutes",
        ),
        (
            "detect_conflicts",
            json!({"events": [event("2026-11-23 09:00")]}),
            "/args/events/0/start",
        ),
        (
            "detect_conflicts",
            json!({"events": [], "travel_gap_minutes": -1}),
            "/args/travel_gap_minutes",
        ),
        (
            "schedule_event",
            json!({"event": {"title": "", "start": "2026-11-23T09:00:00Z", "end": "2026-11-23T10:00:00Z"}}),
            "/args/event/title",
        ),
        ("schedule_event", json!({}), "/args"),
    ];
    crate::support::assert_refused_at_args(&host, &data, "calendar", &cases).await;
}

#[tokio::test]
async fn tick_proposes_detect_conflicts_when_todays_events_clash() {
    let (host, data) = host_with("calendar-tick", &["calendar"]).await;
    // a 09:30-10:30 and b 10:00-11:00 overlap; at 08:00 the clash starts in 90 minutes:
    // overlap weight 50 + within-3-hours urgency 25 = priority 75, shown as a phone card.
    let context = json!({
        "now": "2026-11-23T08:00:00Z",
        "events": [
            {"id": "a", "start": "2026-11-23T09:30:00Z", "end": "2026-11-23T10:30:00Z"},
            {"id": "b", "start": "2026-11-23T10:00:00Z", "end": "2026-11-23T11:00:00Z"}
        ]
    });
    let outcome = host.tick("calendar", &context).await.unwrap();
    assert!(outcome.refused.is_empty());
    assert_eq!(outcome.proposals.len(), 1);
    let proposal = &outcome.proposals[0];
    assert_eq!(proposal.priority, 75);
    assert_eq!(proposal.signals, ["overlap:a/b"]);
    let call = assert_proposed(
        proposal,
        ("calendar", "detect_conflicts"),
        "2026-11-23T08:00:00Z",
        false,
        aura_contract::envelope::Surface::PhoneCard,
    );
    assert_eq!(call.args["events"].as_array().unwrap().len(), 2);
    // The proposal is a call the host can dispatch as it is.
    let result = host.dispatch(call).await.unwrap();
    assert_eq!(result.result.unwrap()["overlaps"][0]["overlap_minutes"], 30);

    // A quiet day proposes nothing.
    let quiet = json!({"now": "2026-11-23T08:00:00Z", "events": [
        {"id": "a", "start": "2026-11-23T09:00:00Z", "end": "2026-11-23T10:00:00Z"}]});
    assert!(
        host.tick("calendar", &quiet)
            .await
            .unwrap()
            .proposals
            .is_empty()
    );
    assert!(quarantine_lines(&data).is_empty());
}

/// schedule_event's args with `break_after`: Design review 10:00–11:00 at +01:00 (09:00–10:00
/// UTC) over a stand-up 10:30–10:45 local, which lies inside it: a double booking of 15 min.
fn schedule_with_break_after() -> Value {
    json!({
        "event": {"title": "Design review", "start": "2026-11-23T10:00:00+01:00",
                  "end": "2026-11-23T11:00:00+01:00"},
        "existing": [{"id": "standup", "start": "2026-11-23T10:30:00+01:00",
                      "end": "2026-11-23T10:45:00+01:00"}],
        "break_after": {"stress_score": 72, "working_hours": {"start": "09:00", "end": "17:00"},
                        "utc_offset_minutes": 60}
    })
}

/// The event part of the result is what it is without `break_after`.
fn assert_scheduled(result: &Value) {
    assert_eq!(result["event"]["title"], "Design review");
    assert_eq!(result["event"]["start"], "2026-11-23T09:00:00Z");
    assert_eq!(result["event"]["end"], "2026-11-23T10:00:00Z");
    assert_eq!(result["event"]["duration_minutes"], 60);
    assert_eq!(
        result["conflicts"],
        json!([{"with": "standup", "kind": "double_booking", "minutes": 15}])
    );
    assert_eq!(result["outside_working_hours"], false);
}

#[tokio::test]
async fn schedule_event_gets_its_break_from_wellness_without_a_cycle() {
    let (host, data) = host_with("calendar-break-after", &["calendar", "wellness"]).await;
    // calendar.schedule_event → wellness.suggest_break, with the free time calendar found
    // itself: wellness places the break in it and does not call calendar back, so the chain
    // never comes back to calendar (no cycle_detected, nothing quarantined).
    let result = call(
        &host,
        "t_breakafter",
        "schedule_event",
        schedule_with_break_after(),
    )
    .await;
    assert!(result.ok, "{:?}", result.error);
    let result = result.result.unwrap();
    assert_scheduled(&result);
    // Worked out by hand: the review ends 11:00 local; the stand-up (10:30-10:45) ends before
    // it, so Monday is free from 11:00 to 17:00 local. Stress 72 is high (60..79): a
    // 10-minute stretch at the earliest free minute, 11:00-11:10 local.
    assert_eq!(
        result["break"],
        json!({"status": "suggested", "start": "2026-11-23T11:00:00+01:00",
               "end": "2026-11-23T11:10:00+01:00", "minutes": 10, "kind": "stretch",
               "reason": "Stress is high (72/100). Take a 10-minute stretch at 11:00."})
    );
    assert!(quarantine_lines(&data).is_empty());
}

#[tokio::test]
async fn schedule_event_passes_on_wellness_answering_without_calling_back() {
    let (host, data) = host_with("calendar-break-low", &["calendar", "wellness"]).await;
    // At stress 20 wellness needs no free time (below 40 no break), so it answers without
    // calling calendar: no cycle, and its `none` comes back whole. 20 is `low` (below 30).
    let mut args = schedule_with_break_after();
    args["break_after"]["stress_score"] = json!(20);
    let result = call(&host, "t_breaklow01", "schedule_event", args).await;
    let result = result.result.unwrap();
    assert_scheduled(&result);
    assert_eq!(
        result["break"],
        json!({"status": "none", "none_reason": "stress_low",
               "reason": "Stress is low (20/100): no break needed right now."})
    );
    assert!(quarantine_lines(&data).is_empty());
}

#[tokio::test]
async fn schedule_event_without_wellness_loaded_still_schedules() {
    let (host, _) = host_with("calendar-break-alone", &["calendar"]).await;
    let result = call(
        &host,
        "t_breakalon1",
        "schedule_event",
        schedule_with_break_after(),
    )
    .await;
    assert!(result.ok, "{:?}", result.error);
    let result = result.result.unwrap();
    assert_scheduled(&result);
    assert_eq!(result["break"]["status"], "unavailable", "{result}");
    let reason = result["break"]["reason"].as_str().unwrap();
    assert!(reason.contains("agent_unavailable"), "{reason}");
}

#[tokio::test]
async fn tick_proposes_pending_invitations_for_confirmation() {
    let (host, data) = host_with("calendar-tick-invitation", &["calendar"]).await;
    // now 08:00; invitation i1 10:00–11:00 UTC from ana, clashing with nothing: 40, +20 as it
    // starts within 24 h = 60. The profile wants a break after meetings, at the default
    // stress 60; i0 has already started and is skipped.
    let context = json!({
        "now": "2026-11-23T08:00:00Z",
        "utc_offset_minutes": 60,
        "profile": {"working_hours": {"start": "09:00", "end": "17:00"},
                    "break_after_meetings": true},
        "events": [{"id": "a", "start": "2026-11-23T12:00:00Z", "end": "2026-11-23T13:00:00Z"}],
        "invitations": [
            {"id": "i0", "from": "ben@example.org", "title": "Early",
             "start": "2026-11-23T07:30:00Z", "end": "2026-11-23T08:30:00Z"},
            {"id": "i1", "from": "ana@example.org", "title": "Design review",
             "start": "2026-11-23T10:00:00Z", "end": "2026-11-23T11:00:00Z"}
        ]
    });
    let outcome = host.tick("calendar", &context).await.unwrap();
    assert!(outcome.refused.is_empty(), "{:?}", outcome.refused);
    assert_eq!(outcome.proposals.len(), 1);
    let proposal = &outcome.proposals[0];
    assert_eq!(proposal.priority, 60);
    assert_eq!(proposal.signals, ["invitation:i1", "from:ana@example.org"]);
    let call = assert_proposed(
        proposal,
        ("calendar", "schedule_event"),
        "2026-11-23T08:00:00Z",
        true,
        aura_contract::envelope::Surface::PhoneCard,
    );
    assert_eq!(
        call.args["break_after"],
        json!({"stress_score": 60, "working_hours": {"start": "09:00", "end": "17:00"},
               "utc_offset_minutes": 60})
    );
    assert_eq!(call.args["existing"].as_array().unwrap().len(), 1);
    // A later tick proposes the same call_id for the same invitation: it is asked once.
    let mut later = context;
    later["now"] = json!("2026-11-23T09:00:00Z");
    let again = host.tick("calendar", &later).await.unwrap();
    assert_eq!(again.proposals[0].call.call().call_id, call.call_id);
    assert!(quarantine_lines(&data).is_empty());
}
