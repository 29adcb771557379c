//! The calendar agent's tick: proposes `detect_conflicts` when today's events clash.
//!
//! Context: a JSON object with `now` (RFC 3339, required) and `events` (array of events shaped
//! as in `detect_conflicts`; absent or null means none). Other fields are ignored.
//!
//! Rules:
//! - Events are taken leniently, since the context is a snapshot and not checked against the
//!   tool's schema: an element without a usable `id` (1..128 chars), `start`, `end` (RFC 3339,
//!   end after start) is skipped; a `title` or `location` that is not a string of at most 200
//!   characters is dropped; unknown fields are dropped; a repeated id keeps the first event.
//!   At most 500 events are kept: when there are more, events still running or ahead of `now`
//!   go first (then those that ended most recently); the kept events keep context order.
//! - The kept events are analysed exactly like `detect_conflicts` with the default travel gap
//!   (15 minutes). No conflict → `{"proposals":[]}`. Otherwise one proposal: a
//!   `detect_conflicts` call over the kept events with `"travel_gap_minutes":15`.
//! - `signals`: `"double_booking:<a>/<b>"`, `"overlap:<a>/<b>"`, `"tight_transition:<from>/
//!   <to>"` in the tool's pair order (intersecting pairs first, then transitions); at most 16,
//!   the 16th being `"more:<n>"` when n further conflicts were left out.
//! - `priority`: the highest score among the conflicts. A conflict whose two events have both
//!   ended by `now` scores 5. Otherwise kind (double booking 60, overlap 50, tight transition
//!   30) plus urgency by the time from `now` to the later event's start: already started or
//!   ≤ 60 min +40, ≤ 3 h +25, ≤ 24 h +10, later +0; capped at 100.
//! - `expected_surface`: `"WATCH"` when some conflict not yet over starts within 60 minutes
//!   (or already has), else `"PHONE_CARD"`.
//! - `call_id`: `aura_sdk::call_id_from("calendar/tick\n" + now + "\ndetect_conflicts\n" +
//!   signals joined by "\n")`; `ts`: `now` as given; `confirm_required`: false.

use aura_sdk::{ToolError, ToolResult, call_id_from};
use serde_json::{Value, json};

use crate::common::{
    CalendarEvent, DEFAULT_TRAVEL_GAP_MINUTES, MAX_EVENTS, MAX_ID_CHARS, MAX_TEXT_CHARS,
    SECS_PER_MINUTE, Span, parse_time, trimmed_location,
};
use crate::conflicts::{ConflictKind, analyze};

/// The agent's name in envelopes.
pub const AGENT: &str = "calendar";
/// Most signals in one proposal (the last may be `more:<n>`).
pub const MAX_SIGNALS: usize = 16;

/// The orchestrator tick. See the module documentation.
pub fn tick(context: Value) -> ToolResult<Value> {
    let (context, now_text, now) = aura_sdk::args::tick_context(&context)?;
    let raw = match context.get("events") {
        None | Some(Value::Null) => &[][..],
        Some(Value::Array(events)) => events.as_slice(),
        Some(_) => {
            return Err(ToolError::invalid_args(
                "tick context: `events` must be an array",
            ));
        }
    };

    let events = usable_events(raw, now);
    let spans = events
        .iter()
        .map(|(event, start, end)| Span {
            id: &event.id,
            start: *start,
            end: *end,
            location: trimmed_location(event.location.as_deref()),
        })
        .collect::<Vec<_>>();
    let findings = analyze(&spans, DEFAULT_TRAVEL_GAP_MINUTES);
    if findings.is_empty() {
        return Ok(json!({ "proposals": [] }));
    }

    let mut signals: Vec<String> = findings
        .iter()
        .take(MAX_SIGNALS)
        .map(|f| format!("{}:{}/{}", f.kind.as_str(), spans[f.a].id, spans[f.b].id))
        .collect();
    if findings.len() > MAX_SIGNALS {
        signals.truncate(MAX_SIGNALS - 1);
        signals.push(format!("more:{}", findings.len() - (MAX_SIGNALS - 1)));
    }

    let mut priority = 0;
    let mut urgent = false;
    for f in &findings {
        let (a, b) = (&spans[f.a], &spans[f.b]);
        let over = a.end.max(b.end) <= now;
        let score = if over {
            5
        } else {
            let kind = match f.kind {
                ConflictKind::DoubleBooking => 60,
                ConflictKind::Overlap => 50,
                ConflictKind::TightTransition => 30,
            };
            let until = a.start.max(b.start) - now;
            let bonus = match until {
                u if u <= 60 * SECS_PER_MINUTE => {
                    urgent = true;
                    40
                }
                u if u <= 180 * SECS_PER_MINUTE => 25,
                u if u <= 1440 * SECS_PER_MINUTE => 10,
                _ => 0,
            };
            kind + bonus
        };
        priority = priority.max(score);
    }
    let priority = priority.min(100);

    let call_id = call_id_from(&format!(
        "calendar/tick\n{now_text}\ndetect_conflicts\n{}",
        signals.join("\n")
    ));
    let event_list: Vec<&CalendarEvent> = events.iter().map(|(event, _, _)| event).collect();
    let call = json!({
        "call_id": call_id,
        "agent": AGENT,
        "tool": "detect_conflicts",
        "args": {
            "events": event_list,
            "travel_gap_minutes": DEFAULT_TRAVEL_GAP_MINUTES,
        },
        "ts": now_text,
        "confirm_required": false,
        "expected_surface": if urgent { "WATCH" } else { "PHONE_CARD" },
    });
    Ok(json!({
        "proposals": [{ "call": call, "signals": signals, "priority": priority }]
    }))
}

/// The context's events that `detect_conflicts` would accept, with their times in Unix
/// seconds: see the module documentation for what is skipped, dropped and kept.
fn usable_events(raw: &[Value], now: i64) -> Vec<(CalendarEvent, i64, i64)> {
    let mut seen = std::collections::HashSet::new();
    let mut events: Vec<(CalendarEvent, i64, i64)> = raw
        .iter()
        .filter_map(lenient_event)
        .filter(|(event, _, _)| seen.insert(event.id.clone()))
        .collect();
    if events.len() > MAX_EVENTS {
        // Not yet over first (by position), then the most recently ended.
        let mut order: Vec<usize> = (0..events.len()).collect();
        order.sort_by_key(|&i| {
            let end = events[i].2;
            if end > now { (0, 0, i) } else { (1, -end, i) }
        });
        let mut keep = vec![false; events.len()];
        for &i in &order[..MAX_EVENTS] {
            keep[i] = true;
        }
        let mut index = 0;
        events.retain(|_| {
            index += 1;
            keep[index - 1]
        });
    }
    events
}

/// One context event, if it has a usable id, start and end.
fn lenient_event(value: &Value) -> Option<(CalendarEvent, i64, i64)> {
    let object = value.as_object()?;
    let text = |key: &str, max: usize| {
        object
            .get(key)
            .and_then(Value::as_str)
            .filter(|s| s.chars().count() <= max)
            .map(str::to_owned)
    };
    let id = text("id", MAX_ID_CHARS).filter(|id| !id.is_empty())?;
    let start_text = object.get("start")?.as_str()?;
    let end_text = object.get("end")?.as_str()?;
    let start = parse_time(start_text, "start").ok()?;
    let end = parse_time(end_text, "end").ok()?;
    if end <= start {
        return None;
    }
    let event = CalendarEvent {
        id,
        title: text("title", MAX_TEXT_CHARS),
        start: start_text.to_owned(),
        end: end_text.to_owned(),
        location: text("location", MAX_TEXT_CHARS),
    };
    Some((event, start, end))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::schema_check;
    use crate::conflicts::{DetectConflictsArgs, detect_conflicts};
    use aura_sdk::ToolErrorKind;

    fn ev(id: &str, start: &str, end: &str) -> Value {
        json!({"id": id, "start": format!("2026-11-23T{start}:00Z"),
               "end": format!("2026-11-23T{end}:00Z")})
    }

    fn proposals(context: Value) -> Vec<Value> {
        let answer = tick(context).unwrap();
        assert_eq!(answer.as_object().unwrap().len(), 1);
        answer["proposals"].as_array().unwrap().clone()
    }

    /// The proposed call's args satisfy the tool's schema and run.
    fn check_call(call: &Value) {
        assert_eq!(call["agent"], "calendar");
        assert_eq!(call["tool"], "detect_conflicts");
        assert_eq!(call["confirm_required"], false);
        let id = call["call_id"].as_str().unwrap();
        assert!(id.len() == 12 && id.starts_with("t_"));
        let schema = schema_check::load("detect_conflicts.args.json");
        schema_check::assert_valid(&schema, &call["args"]);
        let args: DetectConflictsArgs = serde_json::from_value(call["args"].clone()).unwrap();
        detect_conflicts(args).unwrap();
    }

    #[test]
    fn no_conflicts_no_proposals() {
        assert!(proposals(json!({"now": "2026-11-23T08:00:00Z"})).is_empty());
        assert!(proposals(json!({"now": "2026-11-23T08:00:00Z", "events": null})).is_empty());
        let context = json!({
            "now": "2026-11-23T08:00:00Z",
            "events": [ev("a", "09:00", "10:00"), ev("b", "10:00", "11:00")],
            "messages": [{"from": "x"}],
        });
        assert!(proposals(context).is_empty());
    }

    #[test]
    fn overlap_soon_goes_to_the_watch() {
        // now 08:30; a 09:00–10:00, b 09:30–10:30 overlap; b starts in 60 min → 50 + 40.
        let context = json!({
            "now": "2026-11-23T08:30:00Z",
            "events": [ev("b", "09:30", "10:30"), ev("a", "09:00", "10:00"), ev("c", "12:00", "13:00")],
        });
        let list = proposals(context.clone());
        assert_eq!(list.len(), 1);
        let p = &list[0];
        assert_eq!(p["signals"], json!(["overlap:a/b"]));
        assert_eq!(p["priority"], 90);
        assert_eq!(p["call"]["expected_surface"], "WATCH");
        assert_eq!(p["call"]["ts"], "2026-11-23T08:30:00Z");
        assert_eq!(p["call"]["args"]["travel_gap_minutes"], 15);
        assert_eq!(p["call"]["args"]["events"].as_array().unwrap().len(), 3);
        assert_eq!(
            p["call"]["call_id"],
            call_id_from("calendar/tick\n2026-11-23T08:30:00Z\ndetect_conflicts\noverlap:a/b")
        );
        check_call(&p["call"]);
        // Deterministic.
        assert_eq!(tick(context.clone()).unwrap(), tick(context).unwrap());
    }

    #[test]
    fn later_conflicts_score_lower_and_go_to_the_phone() {
        // now 06:00; double booking lunch 12:00–13:00 ⊃ call 12:15–12:45: call starts in
        // 6 h 15 min → 60 + 10 = 70. Tight transition office 09:00–10:00 @Office → client
        // 10:05 @Client: client starts in 4 h 5 min → 30 + 10 = 40. Max 70, nothing within
        // the hour → PHONE_CARD.
        let mut office = ev("office", "09:00", "10:00");
        office["location"] = json!("Office");
        let mut client = ev("client", "10:05", "11:00");
        client["location"] = json!("Client");
        let context = json!({
            "now": "2026-11-23T06:00:00Z",
            "events": [ev("lunch", "12:00", "13:00"), ev("call", "12:15", "12:45"), office, client],
        });
        let p = &proposals(context)[0];
        assert_eq!(
            p["signals"],
            json!([
                "double_booking:lunch/call",
                "tight_transition:office/client"
            ])
        );
        assert_eq!(p["priority"], 70);
        assert_eq!(p["call"]["expected_surface"], "PHONE_CARD");
        check_call(&p["call"]);
    }

    #[test]
    fn conflicts_in_the_past_still_propose_at_low_priority() {
        // now 15:00; a 09:00–10:00 and b 09:30–10:30 are over: score 5, PHONE_CARD.
        let context = json!({
            "now": "2026-11-23T15:00:00Z",
            "events": [ev("a", "09:00", "10:00"), ev("b", "09:30", "10:30")],
        });
        let p = &proposals(context)[0];
        assert_eq!(p["priority"], 5);
        assert_eq!(p["call"]["expected_surface"], "PHONE_CARD");
        // Ongoing: now 09:45, b started 15 min ago, not over → 50 + 40, WATCH.
        let context = json!({
            "now": "2026-11-23T09:45:00Z",
            "events": [ev("a", "09:00", "10:00"), ev("b", "09:30", "10:30")],
        });
        let p = &proposals(context)[0];
        assert_eq!(p["priority"], 90);
        assert_eq!(p["call"]["expected_surface"], "WATCH");
    }

    #[test]
    fn malformed_events_are_skipped_or_cleaned() {
        // Skipped: not an object, no id, end before start, duplicate id "a", bad time.
        // Cleaned: unknown field "attendees" and non-string title dropped; too-long location
        // dropped. a 09:00–10:00 and b 09:30–10:30 overlap.
        let mut a = ev("a", "09:00", "10:00");
        a["attendees"] = json!(["x"]);
        a["title"] = json!(5);
        let mut b = ev("b", "09:30", "10:30");
        b["location"] = json!("L".repeat(201));
        let context = json!({
            "now": "2026-11-23T08:00:00Z",
            "events": [
                "nonsense", {"start": "2026-11-23T09:00:00Z", "end": "2026-11-23T10:00:00Z"},
                ev("back", "10:00", "09:00"), a, ev("a", "09:10", "09:20"), b,
                {"id": "t", "start": "today", "end": "2026-11-23T10:00:00Z"},
            ],
        });
        let p = &proposals(context)[0];
        assert_eq!(p["signals"], json!(["overlap:a/b"]));
        assert_eq!(
            p["call"]["args"]["events"],
            json!([
                {"id": "a", "start": "2026-11-23T09:00:00Z", "end": "2026-11-23T10:00:00Z"},
                {"id": "b", "start": "2026-11-23T09:30:00Z", "end": "2026-11-23T10:30:00Z"},
            ])
        );
        check_call(&p["call"]);
    }

    #[test]
    fn many_conflicts_cap_signals_and_events() {
        // 600 identical events 09:00–10:00: too many; now 11:00 so all are over and the
        // first 500 (all ended at the same time) are kept. 500·499/2 = 124 750 double bookings.
        let events: Vec<Value> = (0..600)
            .map(|i| ev(&format!("e{i:03}"), "09:00", "10:00"))
            .collect();
        let context = json!({"now": "2026-11-23T11:00:00Z", "events": events});
        let p = &proposals(context)[0];
        let signals = p["signals"].as_array().unwrap();
        assert_eq!(signals.len(), MAX_SIGNALS);
        assert_eq!(signals[0], "double_booking:e000/e001");
        assert_eq!(signals[15], format!("more:{}", 124_750 - 15));
        let kept = p["call"]["args"]["events"].as_array().unwrap();
        assert_eq!(kept.len(), 500);
        assert_eq!(kept[499]["id"], "e499");
        check_call(&p["call"]);
    }

    #[test]
    fn over_500_keeps_events_not_yet_over() {
        // 499 past events 01:00–02:00 (p000..p498), then 3 future ones at 12:00–13:00 (f0..f2,
        // all overlapping). now 08:00. The 3 future ones and the 497 first past ones are kept.
        let mut events: Vec<Value> = (0..499)
            .map(|i| ev(&format!("p{i:03}"), "01:00", "01:30"))
            .collect();
        events.extend((0..3).map(|i| ev(&format!("f{i}"), "12:00", "13:00")));
        let context = json!({"now": "2026-11-23T08:00:00Z", "events": events});
        let p = &proposals(context)[0];
        let kept = p["call"]["args"]["events"].as_array().unwrap();
        assert_eq!(kept.len(), 500);
        assert_eq!(kept[496]["id"], "p496");
        assert_eq!(kept[497]["id"], "f0");
        assert_eq!(kept[499]["id"], "f2");
    }

    #[test]
    fn through_the_agent_wiring() {
        // The agent! wiring in lib.rs: canonical JSON in and out.
        let context = json!({
            "now": "2026-11-23T08:30:00Z",
            "events": [ev("a", "09:00", "10:00"), ev("b", "09:30", "10:30")],
        });
        let answer: Value =
            serde_json::from_str(&crate::Calendar::tick(&context.to_string())).unwrap();
        assert_eq!(answer, tick(context).unwrap());
        let call = json!({"tool": "detect_conflicts", "args": {"events": [
            ev("a", "09:00", "10:00"), ev("b", "09:30", "10:30")]}});
        assert_eq!(
            crate::Calendar::invoke(&call.to_string()),
            r#"{"ok":true,"result":{"double_bookings":[],"overlaps":[{"a":"a","b":"b","overlap_minutes":30}],"tight_transitions":[],"truncated":false}}"#
        );
        let call = json!({"tool": "detect_conflicts", "args": {"events": [
            ev("a", "10:00", "09:00")]}});
        let reply: Value =
            serde_json::from_str(&crate::Calendar::invoke(&call.to_string())).unwrap();
        assert_eq!(reply["error"]["kind"], "invalid_args");
    }

    #[test]
    fn bad_context_is_invalid_args() {
        for context in [
            json!([]),
            json!({}),
            json!({"now": 5}),
            json!({"now": "soon"}),
            json!({"now": "2026-11-23T08:00:00Z", "events": {}}),
        ] {
            let e = tick(context).unwrap_err();
            assert_eq!(e.kind, ToolErrorKind::InvalidArgs);
        }
    }
}
