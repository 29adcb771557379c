//! Types and helpers shared by the calendar tools: the event shape, working hours, and the
//! event checks every tool repeats.
//!
//! It must not hold tool logic, and it must not keep its own time or argument helpers: times
//! (whole Unix seconds, fractions dropped; `find_free_slots` then works in whole minutes),
//! offsets and "HH:MM" are `aura_sdk::time`'s, ranges and lengths `aura_sdk::args`'.

use std::fmt::Display;

use aura_sdk::args::{Item, check_chars, check_len};
pub use aura_sdk::hours::{Hours, WorkingHours, default_weekdays};

use aura_sdk::time::parse_time;
use aura_sdk::{ToolError, ToolResult};
use serde::{Deserialize, Serialize};

/// Most events (busy spans, existing events) one call accepts.
pub const MAX_EVENTS: usize = 500;
/// Longest event id, in characters.
pub const MAX_ID_CHARS: usize = 128;
/// Longest title or location, in characters.
pub const MAX_TEXT_CHARS: usize = 200;
/// Largest `travel_gap_minutes`.
pub const MAX_TRAVEL_GAP_MINUTES: u32 = 240;
/// Default `travel_gap_minutes`.
pub const DEFAULT_TRAVEL_GAP_MINUTES: u32 = 15;

/// A calendar event as `detect_conflicts` takes it (and `schedule_event` takes `existing`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CalendarEvent {
    /// Caller's id of the event; unique within one call.
    pub id: String,
    /// Optional title; not used by the algorithms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// RFC 3339 start.
    pub start: String,
    /// RFC 3339 end; must be after `start`.
    pub end: String,
    /// Optional location; used for tight-transition detection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location: Option<String>,
}

/// Default `travel_gap_minutes` (serde default).
pub fn default_travel_gap_minutes() -> u32 {
    DEFAULT_TRAVEL_GAP_MINUTES
}

/// An event after checking: times in Unix seconds, location trimmed (None when blank).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Span<'a> {
    /// The event's id (or, for `schedule_event`'s new event, its generated id).
    pub id: &'a str,
    pub start: i64,
    pub end: i64,
    /// Trimmed location, None when absent or blank.
    pub location: Option<&'a str>,
}

/// Trims a location; blank means none.
pub fn trimmed_location(location: Option<&str>) -> Option<&str> {
    location.map(str::trim).filter(|l| !l.is_empty())
}

impl CalendarEvent {
    /// Checks one event; `field` names it in error messages (e.g. "events[3]").
    pub fn check(&self, field: impl Display) -> ToolResult<Span<'_>> {
        check_chars(&self.id, format_args!("{field}.id"), 1, MAX_ID_CHARS)?;
        if let Some(title) = &self.title {
            check_chars(title, format_args!("{field}.title"), 0, MAX_TEXT_CHARS)?;
        }
        if let Some(location) = &self.location {
            check_chars(
                location,
                format_args!("{field}.location"),
                0,
                MAX_TEXT_CHARS,
            )?;
        }
        let start = parse_time(&self.start, format_args!("{field}.start"))?;
        let end = parse_time(&self.end, format_args!("{field}.end"))?;
        if end <= start {
            return Err(ToolError::invalid_args(format!(
                "{field}: end {:?} must be after start {:?}",
                self.end, self.start
            )));
        }
        Ok(Span {
            id: &self.id,
            start,
            end,
            location: trimmed_location(self.location.as_deref()),
        })
    }
}

/// Checks a list of events (at most [`MAX_EVENTS`], ids unique); `field` names the list.
pub fn check_events<'a>(
    events: &'a [CalendarEvent],
    field: impl Display,
) -> ToolResult<Vec<Span<'a>>> {
    check_len(events, &field, MAX_EVENTS)?;
    let spans = events
        .iter()
        .enumerate()
        .map(|(i, event)| event.check(Item(&field, i)))
        .collect::<ToolResult<Vec<_>>>()?;
    // Not a HashMap: its hasher's seed is a WASI import call on each fresh instance.
    let mut seen = std::collections::BTreeMap::new();
    for (i, span) in spans.iter().enumerate() {
        if let Some(first) = seen.insert(span.id, i) {
            return Err(ToolError::invalid_args(format!(
                "{field}[{i}].id: duplicate id {:?} (also {field}[{first}])",
                span.id
            )));
        }
    }
    Ok(spans)
}

#[cfg(test)]
mod tests {
    use super::*;
    use aura_sdk::ToolErrorKind;

    #[test]
    fn duplicate_ids_are_refused() {
        let ev = |id: &str| CalendarEvent {
            id: id.into(),
            title: None,
            start: "2026-11-23T09:00:00Z".into(),
            end: "2026-11-23T10:00:00Z".into(),
            location: None,
        };
        let events = [ev("a"), ev("b"), ev("a")];
        let e = check_events(&events, "events").unwrap_err();
        assert_eq!(e.kind, ToolErrorKind::InvalidArgs);
        assert!(e.message.contains("events[2].id") && e.message.contains("events[0]"));
    }
}
