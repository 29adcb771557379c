//! Types and helpers shared by the calendar tools: the event shape, working hours, RFC 3339
//! parsing and formatting, and the argument checks every tool repeats.
//!
//! Times are handled as whole Unix seconds (UTC) internally; fractions of a second in the input
//! are dropped. `find_free_slots` then works in whole minutes (see that module).

use aura_sdk::{ToolError, ToolResult};
use serde::{Deserialize, Serialize};
use time::format_description::well_known::Rfc3339;
use time::{OffsetDateTime, UtcOffset};

pub use aura_sdk::args::{check_len, check_range, parse_time, weekday_of_day};

/// Most events (busy spans, existing events) one call accepts.
pub const MAX_EVENTS: usize = 500;
/// Longest event id, in characters.
pub const MAX_ID_CHARS: usize = 128;
/// Longest title or location, in characters.
pub const MAX_TEXT_CHARS: usize = 200;
/// Longest RFC 3339 string accepted.
pub const MAX_TIME_CHARS: usize = 40;
/// Largest `utc_offset_minutes` magnitude (UTC-14:00 .. UTC+14:00).
pub const MAX_OFFSET_MINUTES: i32 = 840;
/// Largest `travel_gap_minutes`.
pub const MAX_TRAVEL_GAP_MINUTES: u32 = 240;
/// Default `travel_gap_minutes`.
pub const DEFAULT_TRAVEL_GAP_MINUTES: u32 = 15;

pub const SECS_PER_MINUTE: i64 = 60;
pub const MINUTES_PER_DAY: i64 = 1440;
pub const SECS_PER_DAY: i64 = 86_400;

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

/// Working hours in the user's local time.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct WorkingHours {
    /// Local start of the working day, "HH:MM" (00:00..23:59).
    pub start: String,
    /// Local end of the working day, "HH:MM" (00:01..24:00); must be after `start`.
    pub end: String,
    /// ISO weekdays that are working days (1 = Monday .. 7 = Sunday). Default Monday–Friday.
    #[serde(default = "default_weekdays")]
    pub weekdays: Vec<u8>,
}

/// Monday to Friday.
pub fn default_weekdays() -> Vec<u8> {
    vec![1, 2, 3, 4, 5]
}

/// Working hours after checking: minutes after local midnight, and a weekday mask.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hours {
    /// Minutes after local midnight the working day starts (0..1439).
    pub start_min: i64,
    /// Minutes after local midnight the working day ends (1..1440), > `start_min`.
    pub end_min: i64,
    /// `weekdays[d]` for ISO weekday d (index 0 unused).
    pub weekdays: [bool; 8],
}

impl Hours {
    /// Whether ISO weekday `weekday` (1..7) is a working day.
    pub fn works_on(&self, weekday: u8) -> bool {
        self.weekdays[usize::from(weekday)]
    }
}

impl WorkingHours {
    /// Checks the working hours; `field` names them in error messages.
    pub fn check(&self, field: &str) -> ToolResult<Hours> {
        let start_min = parse_hh_mm(&self.start, &format!("{field}.start"))?;
        let end_min = parse_hh_mm(&self.end, &format!("{field}.end"))?;
        if end_min <= start_min {
            return Err(ToolError::invalid_args(format!(
                "{field}: end {:?} must be after start {:?} (overnight working hours are not \
                 supported; split them or use 00:00/24:00)",
                self.end, self.start
            )));
        }
        if self.weekdays.is_empty() || self.weekdays.len() > 7 {
            return Err(ToolError::invalid_args(format!(
                "{field}.weekdays: give 1 to 7 ISO weekdays"
            )));
        }
        let mut weekdays = [false; 8];
        for (i, &day) in self.weekdays.iter().enumerate() {
            if !(1..=7).contains(&day) {
                return Err(ToolError::invalid_args(format!(
                    "{field}.weekdays[{i}]: {day} is not an ISO weekday (1 = Monday .. 7 = Sunday)"
                )));
            }
            weekdays[usize::from(day)] = true;
        }
        Ok(Hours {
            start_min,
            end_min,
            weekdays,
        })
    }
}

/// Parses "HH:MM" (00:00..23:59, or 24:00) into minutes after midnight.
pub fn parse_hh_mm(s: &str, field: &str) -> ToolResult<i64> {
    let bad = || ToolError::invalid_args(format!("{field}: {s:?} is not a time \"HH:MM\""));
    let b = s.as_bytes();
    if b.len() != 5 || b[2] != b':' {
        return Err(bad());
    }
    let digits = [b[0], b[1], b[3], b[4]];
    if !digits.iter().all(u8::is_ascii_digit) {
        return Err(bad());
    }
    let [h1, h2, m1, m2] = digits.map(|d| i64::from(d - b'0'));
    let (hours, minutes) = (h1 * 10 + h2, m1 * 10 + m2);
    if minutes > 59 || hours > 24 || (hours == 24 && minutes != 0) {
        return Err(bad());
    }
    Ok(hours * 60 + minutes)
}

/// Formats Unix seconds as RFC 3339 at `offset_minutes` ("Z" when the offset is 0).
pub fn format_time(unix_secs: i64, offset_minutes: i32) -> ToolResult<String> {
    let offset = UtcOffset::from_whole_seconds(offset_minutes * 60)
        .map_err(|e| ToolError::invalid_args(format!("utc offset {offset_minutes}: {e}")))?;
    OffsetDateTime::from_unix_timestamp(unix_secs)
        .ok()
        .map(|t| t.to_offset(offset))
        .and_then(|t| t.format(&Rfc3339).ok())
        .ok_or_else(|| {
            ToolError::invalid_args(format!(
                "time {unix_secs}s after the epoch is outside the RFC 3339 year range 0000..9999"
            ))
        })
}

/// Formats Unix seconds as RFC 3339 in UTC, e.g. "2026-11-23T08:00:00Z".
pub fn format_utc(unix_secs: i64) -> ToolResult<String> {
    format_time(unix_secs, 0)
}

/// Whole minutes in `secs` seconds, rounded up (a positive span never shows as 0 minutes).
pub fn minutes_ceil(secs: i64) -> i64 {
    secs.div_euclid(SECS_PER_MINUTE) + i64::from(secs.rem_euclid(SECS_PER_MINUTE) != 0)
}

/// Whole minutes in `secs` seconds, rounded down.
pub fn minutes_floor(secs: i64) -> i64 {
    secs.div_euclid(SECS_PER_MINUTE)
}

/// Checks that `s` has between `min` and `max` characters.
pub fn check_chars(s: &str, field: &str, min: usize, max: usize) -> ToolResult<()> {
    let n = s.chars().count();
    if n < min || n > max {
        return Err(ToolError::invalid_args(format!(
            "{field}: must have {min} to {max} characters, has {n}"
        )));
    }
    Ok(())
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
    pub fn check(&self, field: &str) -> ToolResult<Span<'_>> {
        check_chars(&self.id, &format!("{field}.id"), 1, MAX_ID_CHARS)?;
        if let Some(title) = &self.title {
            check_chars(title, &format!("{field}.title"), 0, MAX_TEXT_CHARS)?;
        }
        if let Some(location) = &self.location {
            check_chars(location, &format!("{field}.location"), 0, MAX_TEXT_CHARS)?;
        }
        let start = parse_time(&self.start, &format!("{field}.start"))?;
        let end = parse_time(&self.end, &format!("{field}.end"))?;
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
pub fn check_events<'a>(events: &'a [CalendarEvent], field: &str) -> ToolResult<Vec<Span<'a>>> {
    check_len(events, field, MAX_EVENTS)?;
    let spans = events
        .iter()
        .enumerate()
        .map(|(i, event)| event.check(&format!("{field}[{i}]")))
        .collect::<ToolResult<Vec<_>>>()?;
    let mut seen = std::collections::HashMap::with_capacity(spans.len());
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

/// This agent's schemas, checked with the validator the host uses (see `aura-testkit`).
#[cfg(test)]
pub mod schema_check {
    pub use aura_testkit::{assert_house_rules, assert_valid, is_valid};
    use serde_json::Value;

    const SCHEMAS: aura_testkit::AgentSchemas = aura_testkit::AgentSchemas { agent: "calendar" };

    /// Loads `schemas/calendar/<name>`.
    pub fn load(name: &str) -> Value {
        SCHEMAS.load(name)
    }

    /// Checks the top of one of the schemas: draft, `$id`, object, house rules.
    pub fn assert_header(schema: &Value, name: &str) {
        SCHEMAS.assert_header(schema, name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use aura_sdk::ToolErrorKind;

    #[test]
    fn hh_mm_parses_and_rejects() {
        assert_eq!(parse_hh_mm("00:00", "f").unwrap(), 0);
        assert_eq!(parse_hh_mm("09:30", "f").unwrap(), 570);
        assert_eq!(parse_hh_mm("23:59", "f").unwrap(), 1439);
        assert_eq!(parse_hh_mm("24:00", "f").unwrap(), 1440);
        for bad in [
            "24:01", "9:00", "09:60", "25:00", "0900", "09:0a", "", "09:000",
        ] {
            let e = parse_hh_mm(bad, "f").unwrap_err();
            assert_eq!(e.kind, ToolErrorKind::InvalidArgs, "{bad}");
        }
    }

    #[test]
    fn rfc3339_round_trips_and_drops_fractions() {
        // 2026-11-23 is a Monday; 09:00+01:00 = 08:00Z = 1_795_420_800.
        let t = parse_time("2026-11-23T09:00:00+01:00", "t").unwrap();
        assert_eq!(t, 1_795_420_800);
        assert_eq!(parse_time("2026-11-23T08:00:00Z", "t").unwrap(), t);
        assert_eq!(parse_time("2026-11-23T08:00:00.999Z", "t").unwrap(), t);
        assert_eq!(format_utc(t).unwrap(), "2026-11-23T08:00:00Z");
        assert_eq!(format_time(t, 60).unwrap(), "2026-11-23T09:00:00+01:00");
        assert_eq!(format_time(t, -330).unwrap(), "2026-11-23T02:30:00-05:30");
        assert_eq!(weekday_of_day(t.div_euclid(SECS_PER_DAY)), 1);
        assert!(parse_time("2026-11-23T09:00:00", "t").is_err());
        assert!(parse_time("2026-11-23", "t").is_err());
        assert!(format_utc(253_402_300_800).is_err()); // 10000-01-01T00:00:00Z
    }

    #[test]
    fn weekdays_of_known_days() {
        assert_eq!(weekday_of_day(0), 4); // 1970-01-01 Thursday
        assert_eq!(weekday_of_day(3), 7); // Sunday
        assert_eq!(weekday_of_day(4), 1); // Monday
        assert_eq!(weekday_of_day(-1), 3); // 1969-12-31 Wednesday
    }

    #[test]
    fn minute_rounding() {
        assert_eq!(minutes_ceil(0), 0);
        assert_eq!(minutes_ceil(1), 1);
        assert_eq!(minutes_ceil(60), 1);
        assert_eq!(minutes_ceil(61), 2);
        assert_eq!(minutes_floor(119), 1);
        assert_eq!(minutes_floor(-1), -1);
    }

    #[test]
    fn working_hours_checks() {
        let wh = |s: &str, e: &str, d: Vec<u8>| WorkingHours {
            start: s.into(),
            end: e.into(),
            weekdays: d,
        };
        let h = wh("09:00", "17:00", default_weekdays())
            .check("wh")
            .unwrap();
        assert_eq!((h.start_min, h.end_min), (540, 1020));
        assert!(h.works_on(1) && h.works_on(5) && !h.works_on(6) && !h.works_on(7));
        let e = wh("22:00", "06:00", vec![1]).check("wh").unwrap_err();
        assert_eq!(e.kind, ToolErrorKind::InvalidArgs);
        assert!(e.message.contains("overnight"), "{}", e.message);
        assert!(wh("09:00", "09:00", vec![1]).check("wh").is_err());
        assert!(wh("09:00", "17:00", vec![]).check("wh").is_err());
        assert!(wh("09:00", "17:00", vec![0]).check("wh").is_err());
        assert!(wh("09:00", "17:00", vec![8]).check("wh").is_err());
        assert!(wh("00:00", "24:00", vec![7]).check("wh").is_ok());
    }

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
