//! The calendar agent's tools: free slots in working hours, conflicts in a day, and an event
//! put on the calendar with the user's yes.
//!
//! Each tool's whole entry is here; it must not hold any check (the schemas and the crossing
//! do) nor any decision (the orchestrator does).

use serde_json::{Map, Value};

use super::text::{count, counted, duration, text};
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
            headline: free_slots,
            ends: None,
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
            headline: conflicts_headline,
            ends: Some(conflict_ends),
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
        headline: scheduled_headline,
        ends: None,
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
        Some(slot) => {
            let more = count(result, "slots") - 1;
            let more = match more {
                0 => String::new(),
                n => format!(", and {}", counted(n, "more slot", "more slots")),
            };
            format!("Free {}{more}", telling.span(&slot["start"], &slot["end"]))
        }
        None => "No free time found".to_owned(),
    }
}

/// The clash a card leads with, by event titles and when it starts: the first that is news
/// (the same pair's subject, `conflict:<a>/<b>`), else the first of the double bookings, then
/// the overlaps, then the tight transitions.
fn first_conflict(result: &Value, telling: &Telling<'_>) -> Option<Clash> {
    let pairs = |field: &str| {
        result[field]
            .as_array()
            .map_or(&[][..], Vec::as_slice)
            .to_vec()
    };
    let mut clashes: Vec<(&str, Value)> = Vec::new();
    clashes.extend(pairs("double_bookings").into_iter().map(|p| ("double", p)));
    clashes.extend(pairs("overlaps").into_iter().map(|p| ("overlap", p)));
    clashes.extend(pairs("tight_transitions").into_iter().map(|p| ("tight", p)));
    let key = |(kind, pair): &(&str, Value)| match *kind {
        "tight" => format!("conflict:{}/{}", text(&pair["from"]), text(&pair["to"])),
        _ => format!("conflict:{}/{}", text(&pair["a"]), text(&pair["b"])),
    };
    let (kind, pair) = clashes
        .iter()
        .find(|clash| telling.is_news(&key(clash)))
        .or(clashes.first())?;
    let (a, b, when) = match *kind {
        "tight" => (&pair["from"], &pair["to"], start_of(&pair["to"], telling)),
        _ => (&pair["a"], &pair["b"], start_of(&pair["b"], telling)),
    };
    let (a, b) = (telling.event_title(a), telling.event_title(b));
    Some(match *kind {
        "double" => Clash {
            line: format!("Double-booked {when}: {a} and {b}"),
            sentence: format!("{a} and {b} are booked at the same time, {when}"),
        },
        "overlap" => Clash {
            line: format!("Overlap {when}: {a} and {b}"),
            sentence: format!("{a} overlaps {b}, {when}"),
        },
        _ => {
            let gap = duration(pair["gap_minutes"].as_u64().unwrap_or(0));
            let places = match (pair["from_location"].as_str(), pair["to_location"].as_str()) {
                (Some(from), Some(to)) if from != to => format!(" ({from} to {to})"),
                _ => String::new(),
            };
            Clash {
                line: format!("Only {gap} to get to {b}, {when}"),
                sentence: format!("Only {gap} from {a} to {b}{places}, {when}"),
            }
        }
    })
}

/// A clash as a card says it (a sentence) and as the watch and the earbuds do (when first,
/// then what).
struct Clash {
    line: String,
    sentence: String,
}

/// When the event with id `id` starts, in the person's words ("today 15:00"); "soon" when the
/// calendar does not have it.
fn start_of(id: &Value, telling: &Telling<'_>) -> String {
    telling
        .event(id)
        .map_or_else(|| "soon".to_owned(), |event| telling.when(&event["start"]))
}

fn conflicts(result: &Value, telling: &Telling<'_>) -> String {
    let all = count(result, "double_bookings")
        + count(result, "overlaps")
        + count(result, "tight_transitions");
    match first_conflict(result, telling) {
        Some(first) if all > 1 => format!(
            "{}; {} in your calendar",
            first.sentence,
            counted(all - 1, "more clash", "more clashes")
        ),
        Some(first) => first.sentence,
        None => "No clashes in your calendar".to_owned(),
    }
}

/// When the clash a card leads with is over: the earlier end of its two events (for a tight
/// transition, the start of the event it leads into).
fn conflict_ends(result: &Value, telling: &Telling<'_>) -> Option<time::OffsetDateTime> {
    use time::format_description::well_known::Rfc3339;
    let at = |id: &Value, field: &str| {
        telling
            .event(id)
            .and_then(|e| e[field].as_str())
            .and_then(|t| time::OffsetDateTime::parse(t, &Rfc3339).ok())
    };
    let pair = ["double_bookings", "overlaps"]
        .iter()
        .find_map(|field| result[*field].get(0));
    match pair {
        Some(pair) => Some(at(&pair["a"], "end")?.min(at(&pair["b"], "end")?)),
        None => at(&result["tight_transitions"][0]["to"], "start"),
    }
}

fn conflicts_headline(result: &Value, telling: &Telling<'_>) -> String {
    first_conflict(result, telling)
        .map_or_else(|| "No clashes in your calendar".to_owned(), |c| c.line)
}

fn scheduled_headline(result: &Value, telling: &Telling<'_>) -> String {
    let event = &result["event"];
    format!(
        "Added \"{}\" {}",
        text(&event["title"]),
        telling.span(&event["start"], &event["end"])
    )
}

/// The card: what was added, what it clashes with (by title) and the break after it. A break
/// that could not be had is said so; why (an error kind, a call chain) stays in the trace.
fn scheduled(result: &Value, telling: &Telling<'_>) -> String {
    let mut summary = scheduled_headline(result, telling);
    let clashes: Vec<String> = result["conflicts"]
        .as_array()
        .map_or(&[][..], Vec::as_slice)
        .iter()
        .map(|c| telling.event_title(&c["with"]))
        .collect();
    match clashes.len() {
        0 => {}
        1 => summary.push_str(&format!("; it clashes with {}", clashes[0])),
        n => summary.push_str(&format!(
            "; it clashes with {} and {}",
            clashes[0],
            counted(n - 1, "more event", "more events")
        )),
    }
    let brk = &result["break"];
    match brk["status"].as_str() {
        Some("suggested") => summary.push_str(&format!(
            "; then a {}-minute {} {}",
            brk["minutes"].as_u64().unwrap_or(0),
            break_kind(&brk["kind"]),
            telling.at(&brk["start"])
        )),
        Some("none") if brk["none_reason"] == "stress_low" => {}
        Some("none") => summary.push_str("; no room for a break after it"),
        Some(_) => summary.push_str("; no break could be planned after it"),
        None => {}
    }
    summary
}

/// A kind of break as said: `breathing` is "breathing exercise".
pub(super) fn break_kind(kind: &Value) -> &str {
    match kind.as_str() {
        Some("breathing") => "breathing exercise",
        Some(kind) => kind,
        None => "break",
    }
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

    /// Monday 2026-11-23 09:00 in Berlin, with three events.
    fn calendar() -> [Value; 3] {
        [
            json!({"id": "ev-interview", "title": "Interview with Ortega",
                "start": "2026-11-23T15:00:00+01:00", "end": "2026-11-23T16:00:00+01:00"}),
            json!({"id": "ev-training", "title": "Security training",
                "start": "2026-11-23T15:15:00+01:00", "end": "2026-11-23T15:45:00+01:00"}),
            json!({"id": "ev-lunch", "title": "Lunch with Claire",
                "start": "2026-11-23T12:30:00+01:00", "end": "2026-11-23T13:30:00+01:00"}),
        ]
    }

    fn berlin(events: &[Value]) -> Telling<'_> {
        Telling {
            clock: Some((
                time::macros::offset!(+1),
                time::macros::datetime!(2026-11-23 08:00 UTC),
            )),
            events,
            ..Telling::default()
        }
    }

    #[test]
    fn conflicts_name_events_by_title_and_time() {
        let events = calendar();
        let told = berlin(&events);
        let both = json!({"double_bookings": [{"a": "ev-interview", "b": "ev-training",
            "overlap_minutes": 30}], "overlaps": [], "tight_transitions": [{"from": "ev-lunch",
            "to": "ev-interview", "gap_minutes": 90}]});
        assert_eq!(
            conflicts(&both, &told),
            "Interview with Ortega and Security training are booked at the same time, \
             today 15:15; 1 more clash in your calendar"
        );
        assert_eq!(
            conflicts_headline(&both, &told),
            "Double-booked today 15:15: Interview with Ortega and Security training"
        );
        let tight = json!({"double_bookings": [], "overlaps": [],
            "tight_transitions": [{"from": "ev-lunch", "to": "ev-interview", "gap_minutes": 5,
                "from_location": "Mitte", "to_location": "HQ"}]});
        // The clash that is news leads, whatever its kind.
        let news = ["conflict:ev-lunch/ev-interview".to_owned()];
        let leading = Telling {
            news: &news,
            ..told
        };
        assert_eq!(
            conflicts_headline(&both, &leading),
            "Only 1 h 30 min to get to Interview with Ortega, today 15:00"
        );
        assert_eq!(
            conflicts(&tight, &told),
            "Only 5 min from Lunch with Claire to Interview with Ortega (Mitte to HQ), today 15:00"
        );
        // An event the calendar no longer has is "an event", never its id.
        let gone = json!({"overlaps": [{"a": "ev-x", "b": "ev-y", "overlap_minutes": 5}]});
        assert_eq!(
            conflicts(&gone, &Telling::default()),
            "an event overlaps an event, soon"
        );
        assert_eq!(conflicts(&json!({}), &told), "No clashes in your calendar");
    }

    #[test]
    fn a_scheduled_event_is_asked_for_told_and_added() {
        let args = json!({"event": {"title": "Dentist", "start": "2026-11-23T14:00:00+01:00",
            "end": "2026-11-23T14:45:00+01:00"}});
        assert_eq!(
            schedule_question(&args, &Telling::default()),
            "Add \"Dentist\" 2026-11-23T14:00:00+01:00 to 2026-11-23T14:45:00+01:00? (yes / no)"
        );
        let events = calendar();
        let told = berlin(&events);
        let result = json!({"event": {"id": "ev_1", "title": "Dentist",
            "start": "2026-11-23T14:00:00+01:00", "end": "2026-11-23T14:45:00+01:00",
            "attendees": ["a@b.c"]}, "conflicts": [{"with": "ev-lunch"}],
            "break": {"status": "suggested", "start": "2026-11-23T14:45:00+01:00",
                "end": "2026-11-23T14:55:00+01:00", "minutes": 10, "kind": "stretch",
                "reason": "Stress is high (72/100). Take a 10-minute stretch at 14:45."}});
        assert_eq!(
            scheduled(&result, &told),
            "Added \"Dentist\" today 14:00-14:45; it clashes with Lunch with Claire; then a \
             10-minute stretch at 14:45"
        );
        assert_eq!(
            scheduled_headline(&result, &told),
            "Added \"Dentist\" today 14:00-14:45"
        );
        // A break that could not be had says so, and never why.
        let mut failed = result.clone();
        failed["break"] = json!({"status": "unavailable",
            "reason": "cycle_detected (tool_failed): agent `wellness` called `calendar`"});
        failed["conflicts"] = json!([]);
        assert_eq!(
            scheduled(&failed, &told),
            "Added \"Dentist\" today 14:00-14:45; no break could be planned after it"
        );
        assert_eq!(
            event_added(&result),
            Some(Effect::AddEvent(json!({"id": "ev_1", "title": "Dentist",
                "start": "2026-11-23T14:00:00+01:00", "end": "2026-11-23T14:45:00+01:00"})))
        );
        assert_eq!(event_added(&json!({"event": {}})), None);
        assert_eq!(
            free_slots(
                &json!({"slots": [{"start": "2026-11-23T14:45:00+01:00",
                    "end": "2026-11-23T15:00:00+01:00"}, {}]}),
                &told
            ),
            "Free today 14:45-15:00, and 1 more slot"
        );
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
