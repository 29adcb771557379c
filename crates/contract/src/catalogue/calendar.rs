//! The calendar agent's tools: free slots in working hours, conflicts in a day, and an event
//! put on the calendar with the user's yes.
//!
//! Each tool's whole entry is here; it must not hold any check (the schemas and the crossing
//! do) nor any decision (the orchestrator does).

use serde_json::{Map, Value};

use super::text::{count, text};
use super::{About, AgentSpec, Effect, Telling, news, tick_examples, tool_entry};
use crate::limits::{COMPONENT_BYTES_MAX, DEADLINE_MS_DEFAULT, MEMORY_BYTES_MAX};

pub(super) const AGENT: AgentSpec = AgentSpec {
    name: "calendar",
    memory_bytes_max: MEMORY_BYTES_MAX,
    component_bytes_max: COMPONENT_BYTES_MAX,
    tools: &[
        tool_entry!("calendar", "find_free_slots",
            deadline_ms: DEADLINE_MS_DEFAULT,
            confirm: false,
            rationale: "Free time was looked for",
            summary: free_slots,
            question: None,
            on_confirm: None,
            about: None,
            news: &[],
            news_in_result: None),
        tool_entry!("calendar", "detect_conflicts",
            deadline_ms: DEADLINE_MS_DEFAULT,
            confirm: false,
            rationale: "Calendar conflicts need resolving",
            summary: conflicts,
            question: None,
            on_confirm: None,
            about: None,
            news: &[
                // The same pair of events escalates: a tight transition (1) that becomes an
                // overlap (2) or a double booking (3) is news again.
                news("double_booking", "conflict", 3, 80, false),
                news("overlap", "conflict", 2, 60, false),
                news("tight_transition", "conflict", 1, 40, false),
            ],
            news_in_result: None),
        tool_entry!("calendar", "schedule_event",
        deadline_ms: DEADLINE_MS_DEFAULT,
        confirm: true,
        rationale: "An invitation can go on the calendar, with your yes",
        summary: scheduled,
        question: Some(schedule_question),
        on_confirm: Some(event_added),
        about: Some(About {
            kind: "invitation",
            matches: event_is_invitation,
            moot_at: event_start,
        }),
        news: &[],
        news_in_result: None),
    ],
    // A scheduled event asks wellness for a break after it (`break_after`).
    may_call: &[("wellness", "suggest_break")],
    tick_examples: tick_examples!("calendar"),
};

fn free_slots(result: &Value, telling: &Telling<'_>) -> String {
    match result["slots"].get(0) {
        Some(slot) => format!(
            "{} free slot(s); first {}",
            count(result, "slots"),
            telling.when(&slot["start"])
        ),
        None => "No free slot".to_owned(),
    }
}

fn conflicts(result: &Value, _telling: &Telling<'_>) -> String {
    let first = ["double_bookings", "overlaps"]
        .iter()
        .find_map(|field| result[*field].get(0))
        .map(|pair| format!("; first: {} / {}", text(&pair["a"]), text(&pair["b"])))
        .or_else(|| {
            result["tight_transitions"]
                .get(0)
                .map(|pair| format!("; first: {} → {}", text(&pair["from"]), text(&pair["to"])))
        })
        .unwrap_or_default();
    format!(
        "{} double booking(s), {} overlap(s), {} tight transition(s){first}",
        count(result, "double_bookings"),
        count(result, "overlaps"),
        count(result, "tight_transitions")
    )
}

fn scheduled(result: &Value, telling: &Telling<'_>) -> String {
    let event = &result["event"];
    let mut summary = format!(
        "Added \"{}\" {}",
        text(&event["title"]),
        telling.span(&event["start"], &event["end"])
    );
    if count(result, "conflicts") > 0 {
        summary.push_str(&format!("; {} conflict(s)", count(result, "conflicts")));
    }
    if let Some(status) = result["break"]["status"].as_str() {
        summary.push_str(&format!("; break after it: {status}"));
        if let Some(reason) = result["break"]["reason"].as_str() {
            summary.push_str(&format!(" ({reason})"));
        }
    }
    summary
}

/// The question: what would be added, when (in the user's words, when the front knows their
/// clock) and, when the user's calendar is known, what it would overlap.
fn schedule_question(args: &Value, telling: &Telling<'_>) -> String {
    let event = &args["event"];
    let overlaps = telling.overlapping(&event["start"], &event["end"]);
    let overlaps = match overlaps.is_empty() {
        true => String::new(),
        false => format!(" It overlaps {}.", overlaps.join(", ")),
    };
    format!(
        "Add \"{}\" {}?{overlaps} (yes / no)",
        text(&event["title"]),
        telling.span(&event["start"], &event["end"])
    )
}

/// Whether `schedule_event`'s args put exactly this invitation's event on the calendar: the
/// title, start and end its question shows are the invitation's own.
fn event_is_invitation(args: &Value, invitation: &Value) -> bool {
    let event = &args["event"];
    ["title", "start", "end"]
        .iter()
        .all(|field| event[*field].is_string() && event[*field] == invitation[*field])
}

/// When the event a call would add starts (a question to add it is moot then).
fn event_start(args: &Value) -> Option<time::OffsetDateTime> {
    let start = args["event"]["start"].as_str()?;
    time::OffsetDateTime::parse(start, &time::format_description::well_known::Rfc3339).ok()
}

/// The scheduled event joins the calendar (when the result names it).
fn event_added(result: &Value) -> Option<Effect> {
    let event = &result["event"];
    if !event["id"].is_string() {
        return None;
    }
    let mut added = Map::new();
    for field in ["id", "title", "start", "end", "location"] {
        if let Some(value) = event.get(field).filter(|v| v.is_string()) {
            added.insert(field.to_owned(), value.clone());
        }
    }
    Some(Effect::AddEvent(Value::Object(added)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn conflicts_name_the_first_pair() {
        let result = json!({"double_bookings": [], "overlaps": [{"a": "e1", "b": "e2",
            "overlap_minutes": 30}], "tight_transitions": [], "truncated": false});
        assert_eq!(
            conflicts(&result, &Telling::default()),
            "0 double booking(s), 1 overlap(s), 0 tight transition(s); first: e1 / e2"
        );
        let tight = json!({"double_bookings": [], "overlaps": [],
            "tight_transitions": [{"from": "a", "to": "b"}]});
        assert_eq!(
            conflicts(&tight, &Telling::default()),
            "0 double booking(s), 0 overlap(s), 1 tight transition(s); first: a → b"
        );
    }

    #[test]
    fn a_scheduled_event_is_asked_for_told_and_added() {
        let args = json!({"event": {"title": "Dentist", "start": "2026-11-23T14:00:00+01:00",
            "end": "2026-11-23T14:45:00+01:00"}});
        assert_eq!(
            schedule_question(&args, &Telling::default()),
            "Add \"Dentist\" 2026-11-23T14:00:00+01:00 to 2026-11-23T14:45:00+01:00? (yes / no)"
        );
        let result = json!({"event": {"id": "ev_1", "title": "Dentist", "start": "S", "end": "E",
            "attendees": ["a@b.c"]}, "conflicts": [{"id": "x"}],
            "break": {"status": "skipped", "reason": "calm"}});
        assert_eq!(
            scheduled(&result, &Telling::default()),
            "Added \"Dentist\" S to E; 1 conflict(s); break after it: skipped (calm)"
        );
        assert_eq!(
            event_added(&result),
            Some(Effect::AddEvent(
                json!({"id": "ev_1", "title": "Dentist", "start": "S", "end": "E"})
            ))
        );
        assert_eq!(event_added(&json!({"event": {}})), None);
    }

    #[test]
    fn a_question_is_about_the_invitation_whose_event_it_shows() {
        let invitation = json!({"id": "i1", "from": "ana@example.org", "title": "Dentist",
            "start": "2026-11-23T14:00:00+01:00", "end": "2026-11-23T14:45:00+01:00"});
        let args = json!({"event": {"title": "Dentist", "start": "2026-11-23T14:00:00+01:00",
            "end": "2026-11-23T14:45:00+01:00", "location": "Main St 5"}});
        assert!(event_is_invitation(&args, &invitation));
        // Another title, or another time, is another question, whatever signals it carries.
        let mut forged = args.clone();
        forged["event"]["title"] = json!("Wire 5,000 EUR");
        assert!(!event_is_invitation(&forged, &invitation));
        let mut moved = args.clone();
        moved["event"]["end"] = json!("2026-11-23T15:45:00+01:00");
        assert!(!event_is_invitation(&moved, &invitation));
        assert!(!event_is_invitation(&json!({}), &json!({})));
    }
}
