//! `schedule_event`: checks a proposed event against the calendar and normalizes it.
//!
//! The tool validates and reports; it stores nothing (the catalogue requires the user's
//! confirmation before the call runs at all).
//!
//! Rules (also stated in `schemas/calendar/schedule_event.*.json`):
//! - The returned event: title and location trimmed (a blank location is left out), attendees
//!   trimmed with blanks dropped and case-insensitive duplicates removed (first spelling kept;
//!   left out when none remain), `start`/`end` in UTC "Z" at second precision (fractions
//!   dropped), `duration_minutes` rounded up.
//! - `id` is `"ev_"` followed by the 10 characters of
//!   `aura_sdk::call_id_from("calendar/event\n" + title + "\n" + start + "\n" + end)` after its
//!   `t_`, with the normalized title, start and end: the same event written in another offset
//!   gets the same id.
//! - Conflicts are computed exactly as `detect_conflicts` does over `existing` plus the new
//!   event, keeping those that involve the new event: `overlap` / `double_booking` (`minutes` =
//!   intersection, rounded up) and `tight_transition` in either direction (`minutes` = gap,
//!   rounded down). Listed in the order of the other event (start, then id).
//! - `outside_working_hours` is true when working hours are given and the event does not lie
//!   entirely within one working day's hours (local time at `utc_offset_minutes`, on a listed
//!   weekday). `working_hours` requires `utc_offset_minutes`.
//! - `break_after` (optional): once the event is placed, calendar asks `wellness.suggest_break`
//!   for a break after it, and the result gets `break` (`suggested`, `none` or
//!   `unavailable`); see [`crate::break_after`]. Invalid `break_after` args are
//!   `invalid_args`, but a break that cannot be obtained never fails the scheduling. Calendar
//!   sends wellness the free time it finds after the event, so wellness does not call
//!   calendar back.

use aura_sdk::args::{check_chars, check_len, check_range};
use aura_sdk::time::{
    SECS_PER_DAY, SECS_PER_MINUTE, check_offset, format_utc, minutes_ceil, parse_time,
    weekday_of_day,
};
use aura_sdk::{ToolError, ToolResult, call_id_from};
use serde::{Deserialize, Serialize};

use crate::break_after::{BreakAfter, BreakOutcome, ask_wellness};
use crate::common::{
    CalendarEvent, Hours, MAX_TEXT_CHARS, MAX_TRAVEL_GAP_MINUTES, Span, WorkingHours, check_events,
    default_travel_gap_minutes, trimmed_location,
};
use crate::conflicts::{ConflictKind, analyze};

/// Most attendees of one event.
pub const MAX_ATTENDEES: usize = 50;
/// Longest attendee, in characters (an e-mail address fits).
pub const MAX_ATTENDEE_CHARS: usize = 254;

/// The event to schedule.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct NewEvent {
    /// Title, 1..200 characters, not blank.
    pub title: String,
    /// RFC 3339 start.
    pub start: String,
    /// RFC 3339 end; must be after `start`.
    pub end: String,
    /// Optional location.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location: Option<String>,
    /// Optional attendees (names or e-mail addresses).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attendees: Option<Vec<String>>,
}

/// Args of `schedule_event`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ScheduleEventArgs {
    /// The event to schedule.
    pub event: NewEvent,
    /// The calendar's events to check against. Default none.
    #[serde(default)]
    pub existing: Vec<CalendarEvent>,
    /// As in `detect_conflicts` (0..240). Default 15.
    #[serde(default = "default_travel_gap_minutes")]
    pub travel_gap_minutes: u32,
    /// Optional working hours; needs `utc_offset_minutes`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub working_hours: Option<WorkingHours>,
    /// The user's offset east of UTC in minutes (-840..840), for `working_hours`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub utc_offset_minutes: Option<i32>,
    /// Optional: ask wellness for a break after the event (see [`crate::break_after`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub break_after: Option<BreakAfter>,
}

/// The normalized event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ScheduledEvent {
    /// Deterministic id, `ev_` + 10 of `[a-z0-9]`.
    pub id: String,
    /// Trimmed title.
    pub title: String,
    /// Start, RFC 3339 UTC.
    pub start: String,
    /// End, RFC 3339 UTC.
    pub end: String,
    /// Length in minutes, rounded up.
    pub duration_minutes: i64,
    /// Trimmed location, when not blank.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub location: Option<String>,
    /// Trimmed, de-duplicated attendees, when any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attendees: Option<Vec<String>>,
}

/// One conflict of the new event with an existing one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Conflict {
    /// Id of the existing event.
    pub with: String,
    /// The kind of conflict.
    pub kind: ConflictKind,
    /// Intersection (rounded up) or, for a tight transition, gap (rounded down), in minutes.
    pub minutes: i64,
}

/// Result of `schedule_event`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ScheduleEventResult {
    /// The normalized event.
    pub event: ScheduledEvent,
    /// Its conflicts with `existing`.
    pub conflicts: Vec<Conflict>,
    /// Whether it falls outside the working hours (false when none were given).
    pub outside_working_hours: bool,
    /// The break after the event, when `break_after` was given.
    #[serde(rename = "break", skip_serializing_if = "Option::is_none")]
    pub break_after: Option<BreakOutcome>,
}

/// The id of a normalized event. See the module documentation.
pub fn event_id(title: &str, start: &str, end: &str) -> String {
    let call_id = call_id_from(&format!("calendar/event\n{title}\n{start}\n{end}"));
    let suffix = call_id.strip_prefix("t_").unwrap_or(&call_id);
    format!("ev_{suffix}")
}

/// Validates and normalizes a proposed event and reports its conflicts, then, with
/// `break_after`, asks wellness for a break after it. Stores nothing.
pub fn schedule_event(args: ScheduleEventArgs) -> ToolResult<ScheduleEventResult> {
    let mut result = place_event(&args)?;
    if let Some(break_after) = &args.break_after {
        result.break_after = Some(ask_wellness(break_after, &args.existing, &result.event));
    }
    Ok(result)
}

/// `schedule_event` without the break: validates and normalizes the event and reports its
/// conflicts (checks `break_after` too, so invalid args fail before anything is asked).
pub fn place_event(args: &ScheduleEventArgs) -> ToolResult<ScheduleEventResult> {
    check_range(
        args.travel_gap_minutes,
        "travel_gap_minutes",
        0,
        MAX_TRAVEL_GAP_MINUTES,
    )?;
    let new = &args.event;
    check_chars(&new.title, "event.title", 1, MAX_TEXT_CHARS)?;
    let title = new.title.trim();
    if title.is_empty() {
        return Err(ToolError::invalid_args("event.title: must not be blank"));
    }
    if let Some(location) = &new.location {
        check_chars(location, "event.location", 0, MAX_TEXT_CHARS)?;
    }
    let start = parse_time(&new.start, "event.start")?;
    let end = parse_time(&new.end, "event.end")?;
    if end <= start {
        return Err(ToolError::invalid_args(format!(
            "event: end {:?} must be after start {:?}",
            new.end, new.start
        )));
    }
    let attendees = match &new.attendees {
        Some(list) => normalize_attendees(list)?,
        None => Vec::new(),
    };
    let hours = match (&args.working_hours, args.utc_offset_minutes) {
        (Some(hours), Some(offset)) => {
            check_offset(offset, "utc_offset_minutes")?;
            Some((hours.check("working_hours")?, offset))
        }
        (Some(_), None) => {
            return Err(ToolError::invalid_args(
                "working_hours: needs utc_offset_minutes to place them in time",
            ));
        }
        (None, offset) => {
            if let Some(offset) = offset {
                check_offset(offset, "utc_offset_minutes")?;
            }
            None
        }
    };
    if let Some(break_after) = &args.break_after {
        break_after.check()?;
    }
    let existing = check_events(&args.existing, "existing")?;

    let start_text = format_utc(start)?;
    let end_text = format_utc(end)?;
    let id = event_id(title, &start_text, &end_text);
    let location = trimmed_location(new.location.as_deref());

    // The new event goes last; findings that involve it name the other event.
    let mut spans = existing;
    let new_index = spans.len();
    spans.push(Span {
        id: &id,
        start,
        end,
        location,
    });
    let mut conflicts: Vec<(usize, Conflict)> = analyze(&spans, args.travel_gap_minutes)
        .into_iter()
        .filter_map(|finding| {
            let other = match (finding.a == new_index, finding.b == new_index) {
                (true, false) => finding.b,
                (false, true) => finding.a,
                _ => return None,
            };
            Some((
                other,
                Conflict {
                    with: spans[other].id.to_owned(),
                    kind: finding.kind,
                    minutes: finding.minutes(),
                },
            ))
        })
        .collect();
    // Each existing event has at most one finding with the new one (an intersecting pair is
    // never a tight transition), so this orders by the other event alone.
    conflicts.sort_by(|(x, _), (y, _)| {
        let (a, b) = (&spans[*x], &spans[*y]);
        (a.start, a.id.as_bytes()).cmp(&(b.start, b.id.as_bytes()))
    });

    let outside_working_hours = match hours {
        Some((hours, offset)) => !within_working_hours(start, end, &hours, offset),
        None => false,
    };

    Ok(ScheduleEventResult {
        event: ScheduledEvent {
            title: title.to_owned(),
            start: start_text,
            end: end_text,
            duration_minutes: minutes_ceil(end - start),
            location: location.map(str::to_owned),
            attendees: (!attendees.is_empty()).then_some(attendees),
            id,
        },
        conflicts: conflicts.into_iter().map(|(_, c)| c).collect(),
        outside_working_hours,
        break_after: None,
    })
}

/// Trims attendees, drops blanks and case-insensitive duplicates (first spelling kept).
fn normalize_attendees(list: &[String]) -> ToolResult<Vec<String>> {
    check_len(list, "event.attendees", MAX_ATTENDEES)?;
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    for (i, attendee) in list.iter().enumerate() {
        check_chars(
            attendee,
            format_args!("event.attendees[{i}]"),
            0,
            MAX_ATTENDEE_CHARS,
        )?;
        let attendee = attendee.trim();
        if !attendee.is_empty() && seen.insert(attendee.to_lowercase()) {
            out.push(attendee.to_owned());
        }
    }
    Ok(out)
}

/// Whether `[start, end)` (Unix seconds) lies within one working day's hours, local time at
/// `offset_minutes`.
fn within_working_hours(start: i64, end: i64, hours: &Hours, offset_minutes: i32) -> bool {
    let offset = i64::from(offset_minutes) * SECS_PER_MINUTE;
    let local_start = start + offset;
    let local_end = end + offset;
    let day = local_start.div_euclid(SECS_PER_DAY);
    let midnight = day * SECS_PER_DAY;
    hours.works_on(weekday_of_day(day))
        && local_start >= midnight + hours.start_min * SECS_PER_MINUTE
        && local_end <= midnight + hours.end_min * SECS_PER_MINUTE
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SCHEMAS;
    use aura_sdk::ToolErrorKind;
    use serde_json::{Value, json};

    fn new_event(start: &str, end: &str) -> NewEvent {
        NewEvent {
            title: "  Dentist ".into(),
            start: start.into(),
            end: end.into(),
            location: Some(" Main St 5 ".into()),
            attendees: None,
        }
    }

    fn existing(id: &str, start: &str, end: &str, location: Option<&str>) -> CalendarEvent {
        CalendarEvent {
            id: id.into(),
            title: None,
            start: start.into(),
            end: end.into(),
            location: location.map(Into::into),
        }
    }

    fn args(event: NewEvent, existing: Vec<CalendarEvent>) -> ScheduleEventArgs {
        ScheduleEventArgs {
            event,
            existing,
            travel_gap_minutes: 15,
            working_hours: None,
            utc_offset_minutes: None,
            break_after: None,
        }
    }

    fn run(args: ScheduleEventArgs) -> ScheduleEventResult {
        let result = schedule_event(args).unwrap();
        let schema = SCHEMAS.load("schedule_event.result.json");
        aura_testkit::assert_valid(&schema, &serde_json::to_value(&result).unwrap());
        result
    }

    #[test]
    fn normalizes_the_event() {
        let mut event = new_event("2026-11-23T14:00:00+01:00", "2026-11-23T14:45:30.250+01:00");
        event.attendees = Some(vec![
            " ana@example.org".into(),
            "Ben".into(),
            "ANA@example.org ".into(),
            "   ".into(),
        ]);
        let result = run(args(event, vec![]));
        let e = &result.event;
        assert_eq!(e.title, "Dentist");
        assert_eq!(e.start, "2026-11-23T13:00:00Z");
        assert_eq!(e.end, "2026-11-23T13:45:30Z");
        assert_eq!(e.duration_minutes, 46);
        assert_eq!(e.location.as_deref(), Some("Main St 5"));
        assert_eq!(
            e.attendees,
            Some(vec!["ana@example.org".to_owned(), "Ben".to_owned()])
        );
        assert!(result.conflicts.is_empty());
        assert!(!result.outside_working_hours);
        // Deterministic id of the normalized fields.
        assert_eq!(
            e.id,
            event_id("Dentist", "2026-11-23T13:00:00Z", "2026-11-23T13:45:30Z")
        );
        assert_eq!(e.id.len(), 13);
        assert!(e.id.starts_with("ev_"));
        assert!(
            e.id[3..]
                .bytes()
                .all(|b| b.is_ascii_digit() || b.is_ascii_lowercase())
        );
    }

    #[test]
    fn id_is_the_same_in_any_offset_and_differs_with_content() {
        let a = run(args(
            new_event("2026-11-23T14:00:00+01:00", "2026-11-23T15:00:00+01:00"),
            vec![],
        ));
        let b = run(args(
            new_event("2026-11-23T13:00:00Z", "2026-11-23T16:00:00+02:00"),
            vec![],
        ));
        assert_eq!(a.event.id, b.event.id);
        let mut other = new_event("2026-11-23T13:00:00Z", "2026-11-23T14:00:00Z");
        other.title = "Doctor".into();
        assert_ne!(run(args(other, vec![])).event.id, a.event.id);
        // Blank location and empty attendee list are left out.
        let mut bare = new_event("2026-11-23T13:00:00Z", "2026-11-23T14:00:00Z");
        bare.location = Some("  ".into());
        bare.attendees = Some(vec![]);
        let value = serde_json::to_value(run(args(bare, vec![])).event).unwrap();
        assert!(value.get("location").is_none() && value.get("attendees").is_none());
    }

    #[test]
    fn reports_conflicts_in_order_of_the_other_event() {
        // New: 13:00Z–14:00Z @ "Main St 5".
        // w (12:30–13:15): overlap 15. x (13:10–13:40): within new → double booking 30.
        // v (12:00–12:50 @ "Office"): gap 10 before new, different place → tight 10.
        // y (14:05–15:00 @ "main st 5"): same place → nothing. z (16:00–17:00): nothing.
        let events = vec![
            existing("z", "2026-11-23T16:00:00Z", "2026-11-23T17:00:00Z", None),
            existing(
                "y",
                "2026-11-23T14:05:00Z",
                "2026-11-23T15:00:00Z",
                Some("main st 5"),
            ),
            existing("x", "2026-11-23T13:10:00Z", "2026-11-23T13:40:00Z", None),
            existing("w", "2026-11-23T12:30:00Z", "2026-11-23T13:15:00Z", None),
            existing(
                "v",
                "2026-11-23T12:00:00Z",
                "2026-11-23T12:50:00Z",
                Some("Office"),
            ),
        ];
        let result = run(args(
            new_event("2026-11-23T13:00:00Z", "2026-11-23T14:00:00Z"),
            events,
        ));
        let got: Vec<_> = result
            .conflicts
            .iter()
            .map(|c| (&*c.with, c.kind, c.minutes))
            .collect();
        assert_eq!(
            got,
            [
                ("v", ConflictKind::TightTransition, 10),
                ("w", ConflictKind::Overlap, 15),
                ("x", ConflictKind::DoubleBooking, 30),
            ]
        );
        let value = serde_json::to_value(&result).unwrap();
        assert_eq!(value["conflicts"][0]["kind"], "tight_transition");
        assert_eq!(value["conflicts"][2]["kind"], "double_booking");
    }

    #[test]
    fn new_event_inside_existing_is_double_booking_and_tight_after() {
        // Existing all-day block 08:00–18:00 contains the new event → double booking 60.
        // Existing "train" 14:05 @ "Station" right after the new event (13:00–14:00 @ Main
        // St 5) → tight 5.
        let events = vec![
            existing(
                "block",
                "2026-11-23T08:00:00Z",
                "2026-11-23T18:00:00Z",
                None,
            ),
            existing(
                "train",
                "2026-11-23T14:05:00Z",
                "2026-11-23T15:00:00Z",
                Some("Station"),
            ),
        ];
        let result = run(args(
            new_event("2026-11-23T13:00:00Z", "2026-11-23T14:00:00Z"),
            events,
        ));
        let got: Vec<_> = result
            .conflicts
            .iter()
            .map(|c| (&*c.with, c.kind, c.minutes))
            .collect();
        assert_eq!(
            got,
            [
                ("block", ConflictKind::DoubleBooking, 60),
                ("train", ConflictKind::TightTransition, 5)
            ]
        );
    }

    #[test]
    fn working_hours() {
        let hours = WorkingHours {
            start: "09:00".into(),
            end: "17:00".into(),
            weekdays: vec![1, 2, 3, 4, 5],
        };
        let check = |start: &str, end: &str| {
            let mut a = args(new_event(start, end), vec![]);
            a.working_hours = Some(hours.clone());
            a.utc_offset_minutes = Some(60);
            run(a).outside_working_hours
        };
        // Monday 2026-11-23, +01:00.
        assert!(!check(
            "2026-11-23T09:00:00+01:00",
            "2026-11-23T17:00:00+01:00"
        ));
        assert!(!check("2026-11-23T08:00:00Z", "2026-11-23T09:00:00Z")); // 09:00–10:00 local
        assert!(check(
            "2026-11-23T08:59:00+01:00",
            "2026-11-23T10:00:00+01:00"
        ));
        assert!(check(
            "2026-11-23T16:30:00+01:00",
            "2026-11-23T17:01:00+01:00"
        ));
        assert!(check("2026-11-23T16:00:00Z", "2026-11-23T16:30:00Z")); // 17:00–17:30 local
        // Saturday 2026-11-28.
        assert!(check(
            "2026-11-28T10:00:00+01:00",
            "2026-11-28T11:00:00+01:00"
        ));
        // Spanning two working days.
        assert!(check(
            "2026-11-23T10:00:00+01:00",
            "2026-11-24T10:00:00+01:00"
        ));
        // Without working hours: false.
        let result = run(args(
            new_event("2026-11-28T03:00:00Z", "2026-11-28T04:00:00Z"),
            vec![],
        ));
        assert!(!result.outside_working_hours);
    }

    #[test]
    fn invalid_inputs() {
        let invalid = |a: ScheduleEventArgs, needle: &str| {
            let e = schedule_event(a).unwrap_err();
            assert_eq!(e.kind, ToolErrorKind::InvalidArgs);
            assert!(
                e.message.contains(needle),
                "{needle:?} not in {:?}",
                e.message
            );
        };
        invalid(
            args(
                new_event("2026-11-23T14:00:00Z", "2026-11-23T14:00:00Z"),
                vec![],
            ),
            "end",
        );
        invalid(
            args(
                new_event("2026-11-23T14:00:00Z", "2026-11-23T13:00:00Z"),
                vec![],
            ),
            "end",
        );
        invalid(
            args(new_event("14:00", "2026-11-23T13:00:00Z"), vec![]),
            "event.start",
        );
        let mut blank = new_event("2026-11-23T13:00:00Z", "2026-11-23T14:00:00Z");
        blank.title = "   ".into();
        invalid(args(blank, vec![]), "blank");
        let mut a = args(
            new_event("2026-11-23T13:00:00Z", "2026-11-23T14:00:00Z"),
            vec![],
        );
        a.working_hours = Some(WorkingHours {
            start: "09:00".into(),
            end: "17:00".into(),
            weekdays: vec![1],
        });
        invalid(a.clone(), "utc_offset_minutes");
        a.utc_offset_minutes = Some(60);
        a.working_hours.as_mut().unwrap().end = "08:00".into();
        invalid(a, "overnight");
        let events = vec![
            existing("a", "2026-11-23T09:00:00Z", "2026-11-23T10:00:00Z", None),
            existing("a", "2026-11-23T11:00:00Z", "2026-11-23T12:00:00Z", None),
        ];
        invalid(
            args(
                new_event("2026-11-23T13:00:00Z", "2026-11-23T14:00:00Z"),
                events,
            ),
            "duplicate",
        );
    }

    #[test]
    fn break_after_never_fails_the_scheduling() {
        use crate::break_after::{BreakAfter, DayHours};
        let mut a = args(
            new_event("2026-11-23T13:00:00Z", "2026-11-23T14:00:00Z"),
            vec![existing(
                "x",
                "2026-11-23T13:30:00Z",
                "2026-11-23T15:00:00Z",
                None,
            )],
        );
        a.break_after = Some(BreakAfter {
            stress_score: 72,
            working_hours: DayHours {
                start: "09:00".into(),
                end: "17:00".into(),
            },
            utc_offset_minutes: 60,
        });
        // Natively there is no host to ask: the event is placed as without break_after (x
        // 13:30–15:00 overlaps 13:00–14:00 by 30 min) and the break is unavailable.
        let result = run(a.clone());
        let without = run(ScheduleEventArgs {
            break_after: None,
            ..a.clone()
        });
        assert_eq!(result.event, without.event);
        assert_eq!(result.conflicts, without.conflicts);
        assert_eq!(result.conflicts[0].minutes, 30);
        assert!(without.break_after.is_none());
        let value = serde_json::to_value(&result).unwrap();
        assert_eq!(
            value["break"],
            json!({"status": "unavailable", "reason":
                "call_failed: agent-to-agent calls need the aura host (not available natively)"})
        );
        assert!(
            serde_json::to_value(&without)
                .unwrap()
                .get("break")
                .is_none()
        );

        // Invalid break_after args are the caller's error, before anything is asked.
        a.break_after.as_mut().unwrap().working_hours.end = "08:00".into();
        let e = schedule_event(a).unwrap_err();
        assert_eq!(e.kind, ToolErrorKind::InvalidArgs);
        assert!(
            e.message.contains("break_after.working_hours"),
            "{}",
            e.message
        );
    }

    #[test]
    fn result_schema_ties_break_fields_to_the_status() {
        let schema = SCHEMAS.load("schedule_event.result.json");
        let base = serde_json::to_value(run(args(
            new_event("2026-11-23T13:00:00Z", "2026-11-23T14:00:00Z"),
            vec![],
        )))
        .unwrap();
        let with = |brk: Value| {
            let mut value = base.clone();
            value["break"] = brk;
            aura_testkit::is_valid(&schema, &value)
        };
        let suggested = json!({"status": "suggested", "start": "2026-11-23T14:00:00Z",
            "end": "2026-11-23T14:10:00Z", "minutes": 10, "kind": "stretch", "reason": "r"});
        assert!(with(suggested.clone()));
        let mut no_kind = suggested.clone();
        no_kind.as_object_mut().unwrap().remove("kind");
        assert!(!with(no_kind));
        let mut too_long = suggested;
        too_long["minutes"] = json!(61);
        assert!(!with(too_long));
        assert!(with(
            json!({"status": "none", "none_reason": "stress_low", "reason": "r"})
        ));
        assert!(with(json!({"status": "none", "reason": "r"})));
        assert!(!with(
            json!({"status": "none", "minutes": 5, "reason": "r"})
        ));
        assert!(with(
            json!({"status": "unavailable", "reason": "cycle_detected (tool_failed): x"})
        ));
        assert!(!with(
            json!({"status": "unavailable", "none_reason": "x", "reason": "r"})
        ));
        assert!(!with(
            json!({"status": "unavailable", "reason": "r".repeat(201)})
        ));
        assert!(!with(json!({"status": "unavailable"})));
    }

    #[test]
    fn schema_examples_deserialize_and_run() {
        let schema = SCHEMAS.load("schedule_event.args.json");
        SCHEMAS.assert_header(&schema, "schedule_event.args.json");
        let result_schema = SCHEMAS.load("schedule_event.result.json");
        SCHEMAS.assert_header(&result_schema, "schedule_event.result.json");
        let examples = schema["examples"].as_array().unwrap();
        assert!(!examples.is_empty());
        for example in examples {
            aura_testkit::assert_valid(&schema, example);
            let args: ScheduleEventArgs = serde_json::from_value(example.clone()).unwrap();
            let result = schedule_event(args).unwrap();
            aura_testkit::assert_valid(&result_schema, &serde_json::to_value(&result).unwrap());
        }
        let minimal = json!({"event": {"title": "x", "start": "2026-11-23T13:00:00Z",
                                       "end": "2026-11-23T14:00:00Z"}});
        let args: ScheduleEventArgs = serde_json::from_value(minimal).unwrap();
        assert!(args.existing.is_empty());
        assert_eq!(args.travel_gap_minutes, 15);
        assert_eq!(schema["properties"]["travel_gap_minutes"]["default"], 15);
        assert_eq!(schema["properties"]["existing"]["default"], json!([]));
        // The schema, like the Rust code, wants an offset with working hours.
        let no_offset = json!({"event": {"title": "x", "start": "2026-11-23T13:00:00Z",
                                         "end": "2026-11-23T14:00:00Z"},
                               "working_hours": {"start": "09:00", "end": "17:00"}});
        assert!(!aura_testkit::is_valid(&schema, &no_offset));
    }
}
