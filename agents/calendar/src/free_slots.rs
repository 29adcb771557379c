//! `find_free_slots`: maximal free windows inside working hours.
//!
//! Rules (also stated in `schemas/calendar/find_free_slots.*.json`):
//! - Everything is computed in whole UTC minutes. `from` is rounded up to the next whole minute;
//!   busy starts are rounded down and busy ends up (a busy event never shrinks).
//! - The search window is `[from, from + horizon_days × 24 h)`.
//! - Working hours apply in the user's local time, `utc_offset_minutes` east of UTC (a fixed
//!   offset: no daylight-saving changes inside the horizon). A day is a working day when its
//!   local ISO weekday is in `weekdays`. Overnight working hours (end <= start) are refused;
//!   "24:00" is allowed as an end, and back-to-back working days (00:00–24:00) join into one
//!   window.
//! - Each busy event is widened by `buffer_minutes` on both sides; the buffer does not apply at
//!   the edges of working hours or of the search window.
//! - A free window is kept when it is at least `duration_minutes` long. Windows are returned
//!   earliest first, at most `max_slots`; `truncated` says a further window was left out.
//! - Output times are RFC 3339 at minute precision in the user's offset, e.g.
//!   "2026-11-23T09:00:00+01:00" ("Z" when the offset is 0).

use aura_sdk::args::{check_chars, check_len, check_range};
use aura_sdk::time::{
    MINUTES_PER_DAY, SECS_PER_MINUTE, check_offset, format_time, minutes_ceil, minutes_floor,
    parse_time, weekday_of_day,
};
use aura_sdk::{ToolError, ToolResult};
use serde::{Deserialize, Serialize};

use crate::common::{MAX_EVENTS, MAX_ID_CHARS, WorkingHours};

/// Smallest and largest `duration_minutes`.
pub const DURATION_MINUTES: (u32, u32) = (5, 480);
/// Largest `buffer_minutes`.
pub const MAX_BUFFER_MINUTES: u32 = 120;
/// Smallest and largest `horizon_days`.
pub const HORIZON_DAYS: (u32, u32) = (1, 31);
/// Largest `max_slots`.
pub const MAX_SLOTS: u32 = 100;
/// Default `max_slots`.
pub const DEFAULT_MAX_SLOTS: u32 = 20;

/// One busy span.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct BusySpan {
    /// RFC 3339 start.
    pub start: String,
    /// RFC 3339 end; must be after `start`.
    pub end: String,
    /// Optional caller's id, only echoed in error messages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
}

/// Args of `find_free_slots`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FindFreeSlotsArgs {
    /// Busy spans: any order, may overlap, may span days. Default none.
    #[serde(default)]
    pub busy: Vec<BusySpan>,
    /// Working hours in local time.
    pub working_hours: WorkingHours,
    /// The user's offset east of UTC, in minutes (-840..840).
    pub utc_offset_minutes: i32,
    /// Shortest useful slot (5..480).
    pub duration_minutes: u32,
    /// Free time kept on both sides of every busy span (0..120). Default 0.
    #[serde(default)]
    pub buffer_minutes: u32,
    /// RFC 3339 instant the search starts at.
    pub from: String,
    /// Length of the search window in days (1..31).
    pub horizon_days: u32,
    /// Most slots returned (1..100). Default 20.
    #[serde(default = "default_max_slots")]
    pub max_slots: u32,
}

fn default_max_slots() -> u32 {
    DEFAULT_MAX_SLOTS
}

/// One free window.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Slot {
    /// Start, RFC 3339 in the user's offset.
    pub start: String,
    /// End, RFC 3339 in the user's offset.
    pub end: String,
    /// Length in minutes.
    pub minutes: i64,
}

/// Result of `find_free_slots`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FindFreeSlotsResult {
    /// Free windows, earliest first.
    pub slots: Vec<Slot>,
    /// Whether more windows than `max_slots` qualified.
    pub truncated: bool,
}

/// A half-open interval of UTC minutes since the Unix epoch.
type Minutes = (i64, i64);

/// Finds the free windows inside working hours. See the module documentation for the rules.
pub fn find_free_slots(args: FindFreeSlotsArgs) -> ToolResult<FindFreeSlotsResult> {
    let hours = args.working_hours.check("working_hours")?;
    check_offset(args.utc_offset_minutes, "utc_offset_minutes")?;
    let (dmin, dmax) = DURATION_MINUTES;
    check_range(args.duration_minutes, "duration_minutes", dmin, dmax)?;
    check_range(args.buffer_minutes, "buffer_minutes", 0, MAX_BUFFER_MINUTES)?;
    let (hmin, hmax) = HORIZON_DAYS;
    check_range(args.horizon_days, "horizon_days", hmin, hmax)?;
    check_range(args.max_slots, "max_slots", 1, MAX_SLOTS)?;
    check_len(&args.busy, "busy", MAX_EVENTS)?;

    let offset = i64::from(args.utc_offset_minutes);
    let window_start = minutes_ceil(parse_time(&args.from, "from")?);
    let window_end = window_start + i64::from(args.horizon_days) * MINUTES_PER_DAY;
    // Refuse a window whose end cannot be written as RFC 3339 before doing any work.
    format_time(window_end * SECS_PER_MINUTE, args.utc_offset_minutes)
        .map_err(|_| ToolError::invalid_args("from: the search window runs past year 9999"))?;

    let buffer = i64::from(args.buffer_minutes);
    let mut busy = Vec::with_capacity(args.busy.len());
    for (i, span) in args.busy.iter().enumerate() {
        let field = format!("busy[{i}]");
        if let Some(id) = &span.id {
            check_chars(id, format_args!("{field}.id"), 1, MAX_ID_CHARS)?;
        }
        let start = parse_time(&span.start, format_args!("{field}.start"))?;
        let end = parse_time(&span.end, format_args!("{field}.end"))?;
        if end <= start {
            let id = span
                .id
                .as_ref()
                .map(|id| format!(" (id {id:?})"))
                .unwrap_or_default();
            return Err(ToolError::invalid_args(format!(
                "{field}{id}: end {:?} must be after start {:?}",
                span.end, span.start
            )));
        }
        busy.push((minutes_floor(start) - buffer, minutes_ceil(end) + buffer));
    }
    let busy = merge(busy);

    // Working-hour intervals (UTC minutes) clipped to the search window, in order; intervals
    // that touch (00:00–24:00 on consecutive days) are joined.
    let mut working: Vec<Minutes> = Vec::new();
    let first_day = (window_start + offset).div_euclid(MINUTES_PER_DAY);
    let last_day = (window_end - 1 + offset).div_euclid(MINUTES_PER_DAY);
    for day in first_day..=last_day {
        if !hours.works_on(weekday_of_day(day)) {
            continue;
        }
        let midnight = day * MINUTES_PER_DAY - offset;
        let start = (midnight + hours.start_min).max(window_start);
        let end = (midnight + hours.end_min).min(window_end);
        if start >= end {
            continue;
        }
        match working.last_mut() {
            Some(last) if last.1 == start => last.1 = end,
            _ => working.push((start, end)),
        }
    }

    let duration = i64::from(args.duration_minutes);
    let max_slots = args.max_slots as usize;
    let mut free = Vec::new();
    let mut truncated = false;
    let mut first_busy = 0;
    'windows: for &(work_start, work_end) in &working {
        // Busy spans are merged and sorted, so those ending before this working interval
        // also end before every later one.
        while first_busy < busy.len() && busy[first_busy].1 <= work_start {
            first_busy += 1;
        }
        let mut cursor = work_start;
        let mut candidates = Vec::new();
        for &(busy_start, busy_end) in &busy[first_busy..] {
            if busy_start >= work_end {
                break;
            }
            if busy_start > cursor {
                candidates.push((cursor, busy_start));
            }
            cursor = cursor.max(busy_end);
        }
        if cursor < work_end {
            candidates.push((cursor, work_end));
        }
        for window in candidates {
            if window.1 - window.0 < duration {
                continue;
            }
            if free.len() == max_slots {
                truncated = true;
                break 'windows;
            }
            free.push(window);
        }
    }

    let slots = free
        .into_iter()
        .map(|(start, end)| {
            Ok(Slot {
                start: format_time(start * SECS_PER_MINUTE, args.utc_offset_minutes)?,
                end: format_time(end * SECS_PER_MINUTE, args.utc_offset_minutes)?,
                minutes: end - start,
            })
        })
        .collect::<ToolResult<Vec<_>>>()?;
    Ok(FindFreeSlotsResult { slots, truncated })
}

/// Sorts intervals and joins those that overlap or touch.
fn merge(mut spans: Vec<Minutes>) -> Vec<Minutes> {
    spans.sort_unstable();
    let mut merged: Vec<Minutes> = Vec::with_capacity(spans.len());
    for (start, end) in spans {
        match merged.last_mut() {
            Some(last) if start <= last.1 => last.1 = last.1.max(end),
            _ => merged.push((start, end)),
        }
    }
    merged
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SCHEMAS;
    use aura_sdk::ToolErrorKind;
    use serde_json::json;

    /// Monday 2026-11-23 onwards at +01:00, 09:00–17:00 Mon–Fri, 30 minutes, one day.
    fn base() -> FindFreeSlotsArgs {
        FindFreeSlotsArgs {
            busy: vec![],
            working_hours: WorkingHours {
                start: "09:00".into(),
                end: "17:00".into(),
                weekdays: vec![1, 2, 3, 4, 5],
            },
            utc_offset_minutes: 60,
            duration_minutes: 30,
            buffer_minutes: 0,
            from: "2026-11-23T00:00:00+01:00".into(),
            horizon_days: 1,
            max_slots: 20,
        }
    }

    fn busy(start: &str, end: &str) -> BusySpan {
        BusySpan {
            start: start.into(),
            end: end.into(),
            id: None,
        }
    }

    fn pairs(result: &FindFreeSlotsResult) -> Vec<(&str, &str, i64)> {
        result
            .slots
            .iter()
            .map(|s| (s.start.as_str(), s.end.as_str(), s.minutes))
            .collect()
    }

    fn check_result_schema(result: &FindFreeSlotsResult) {
        let schema = SCHEMAS.load("find_free_slots.result.json");
        aura_testkit::assert_valid(&schema, &serde_json::to_value(result).unwrap());
    }

    #[test]
    fn buffer_shrinks_around_busy_event() {
        // Busy 10:00–11:00 local, buffer 15: blocked 09:45–11:15.
        // Free: 09:00–09:45 (45 min) and 11:15–17:00 (345 min).
        let mut args = base();
        args.busy = vec![busy(
            "2026-11-23T10:00:00+01:00",
            "2026-11-23T11:00:00+01:00",
        )];
        args.buffer_minutes = 15;
        let result = find_free_slots(args).unwrap();
        assert_eq!(
            pairs(&result),
            [
                ("2026-11-23T09:00:00+01:00", "2026-11-23T09:45:00+01:00", 45),
                (
                    "2026-11-23T11:15:00+01:00",
                    "2026-11-23T17:00:00+01:00",
                    345
                ),
            ]
        );
        assert!(!result.truncated);
        check_result_schema(&result);
    }

    #[test]
    fn busy_given_in_utc_is_placed_in_local_time() {
        // 09:00Z–10:00Z is 10:00–11:00 at +01:00: same answer as above without the buffer.
        let mut args = base();
        args.busy = vec![busy("2026-11-23T09:00:00Z", "2026-11-23T10:00:00Z")];
        let result = find_free_slots(args).unwrap();
        assert_eq!(
            pairs(&result),
            [
                ("2026-11-23T09:00:00+01:00", "2026-11-23T10:00:00+01:00", 60),
                (
                    "2026-11-23T11:00:00+01:00",
                    "2026-11-23T17:00:00+01:00",
                    360
                ),
            ]
        );
    }

    #[test]
    fn overlapping_unsorted_busy_merge() {
        // Local: 14:00–15:00, 09:30–10:30, 10:00–11:00 (overlaps the previous), 10:45–11:20
        // (overlaps too), 16:40–17:30 (runs past the working day).
        // Blocked: 09:30–11:20, 14:00–15:00, 16:40–. Free: 09:00–09:30 (30), 11:20–14:00 (160),
        // 15:00–16:40 (100). With duration 30 all three qualify.
        let mut args = base();
        args.busy = vec![
            busy("2026-11-23T14:00:00+01:00", "2026-11-23T15:00:00+01:00"),
            busy("2026-11-23T09:30:00+01:00", "2026-11-23T10:30:00+01:00"),
            busy("2026-11-23T10:00:00+01:00", "2026-11-23T11:00:00+01:00"),
            busy("2026-11-23T10:45:00+01:00", "2026-11-23T11:20:00+01:00"),
            busy("2026-11-23T16:40:00+01:00", "2026-11-23T17:30:00+01:00"),
        ];
        let result = find_free_slots(args.clone()).unwrap();
        assert_eq!(
            pairs(&result),
            [
                ("2026-11-23T09:00:00+01:00", "2026-11-23T09:30:00+01:00", 30),
                (
                    "2026-11-23T11:20:00+01:00",
                    "2026-11-23T14:00:00+01:00",
                    160
                ),
                (
                    "2026-11-23T15:00:00+01:00",
                    "2026-11-23T16:40:00+01:00",
                    100
                ),
            ]
        );
        // Duration 31 drops the 30-minute window.
        args.duration_minutes = 31;
        let result = find_free_slots(args).unwrap();
        assert_eq!(result.slots.len(), 2);
        assert_eq!(result.slots[0].start, "2026-11-23T11:20:00+01:00");
    }

    #[test]
    fn weekend_is_skipped_and_horizon_is_exclusive() {
        // From Friday 2026-11-27 12:00 local, 4 days: the window ends Tuesday 2026-12-01 12:00.
        // Fri 12:00–17:00 (300), Sat and Sun skipped, Mon 09:00–17:00 (480), Tue 09:00–12:00
        // (180, cut by the horizon).
        let mut args = base();
        args.from = "2026-11-27T12:00:00+01:00".into();
        args.horizon_days = 4;
        let result = find_free_slots(args).unwrap();
        assert_eq!(
            pairs(&result),
            [
                (
                    "2026-11-27T12:00:00+01:00",
                    "2026-11-27T17:00:00+01:00",
                    300
                ),
                (
                    "2026-11-30T09:00:00+01:00",
                    "2026-11-30T17:00:00+01:00",
                    480
                ),
                (
                    "2026-12-01T09:00:00+01:00",
                    "2026-12-01T12:00:00+01:00",
                    180
                ),
            ]
        );
    }

    #[test]
    fn horizon_boundary_cuts_short_window_below_duration() {
        // From Monday 08:40 local, 1 day: the window ends Tuesday 08:40, before Tuesday's
        // working hours, so only Monday 09:00–17:00.
        let mut args = base();
        args.from = "2026-11-23T08:40:00+01:00".into();
        let result = find_free_slots(args.clone()).unwrap();
        assert_eq!(
            pairs(&result),
            [(
                "2026-11-23T09:00:00+01:00",
                "2026-11-23T17:00:00+01:00",
                480
            )]
        );
        // From Monday 16:45 local: 15 minutes left on Monday (< 30), Tuesday 09:00–16:45.
        args.from = "2026-11-23T16:45:00+01:00".into();
        let result = find_free_slots(args).unwrap();
        assert_eq!(
            pairs(&result),
            [(
                "2026-11-24T09:00:00+01:00",
                "2026-11-24T16:45:00+01:00",
                465
            )]
        );
    }

    #[test]
    fn from_with_seconds_rounds_up_and_busy_rounds_outwards() {
        // from 09:00:30 → 09:01. Busy 12:00:30–12:59:30 → blocks 12:00–13:00.
        let mut args = base();
        args.from = "2026-11-23T09:00:30+01:00".into();
        args.busy = vec![busy(
            "2026-11-23T12:00:30+01:00",
            "2026-11-23T12:59:30+01:00",
        )];
        let result = find_free_slots(args).unwrap();
        assert_eq!(
            pairs(&result),
            [
                (
                    "2026-11-23T09:01:00+01:00",
                    "2026-11-23T12:00:00+01:00",
                    179
                ),
                (
                    "2026-11-23T13:00:00+01:00",
                    "2026-11-23T17:00:00+01:00",
                    240
                ),
            ]
        );
    }

    #[test]
    fn busy_spanning_days_and_buffer_not_at_working_edges() {
        // Busy Monday 16:00 → Wednesday 10:00 local with buffer 30: blocked Mon 15:30 – Wed
        // 10:30. Monday 09:00–15:30 (390), Wednesday 10:30–17:00 (390). The buffer is not
        // applied at 09:00 or 17:00.
        let mut args = base();
        args.horizon_days = 3;
        args.buffer_minutes = 30;
        args.busy = vec![busy(
            "2026-11-23T16:00:00+01:00",
            "2026-11-25T10:00:00+01:00",
        )];
        let result = find_free_slots(args).unwrap();
        assert_eq!(
            pairs(&result),
            [
                (
                    "2026-11-23T09:00:00+01:00",
                    "2026-11-23T15:30:00+01:00",
                    390
                ),
                (
                    "2026-11-25T10:30:00+01:00",
                    "2026-11-25T17:00:00+01:00",
                    390
                ),
            ]
        );
    }

    #[test]
    fn negative_offset_crosses_utc_midnight() {
        // At -05:00, 09:00–17:00 local is 14:00Z–22:00Z. From Monday 00:00 local (05:00Z),
        // 1 day; busy 20:00Z–21:00Z = 15:00–16:00 local.
        let mut args = base();
        args.utc_offset_minutes = -300;
        args.from = "2026-11-23T05:00:00Z".into();
        args.busy = vec![busy("2026-11-23T20:00:00Z", "2026-11-23T21:00:00Z")];
        let result = find_free_slots(args).unwrap();
        assert_eq!(
            pairs(&result),
            [
                (
                    "2026-11-23T09:00:00-05:00",
                    "2026-11-23T15:00:00-05:00",
                    360
                ),
                ("2026-11-23T16:00:00-05:00", "2026-11-23T17:00:00-05:00", 60),
            ]
        );
    }

    #[test]
    fn utc_offset_zero_writes_z_and_full_days_join() {
        // 00:00–24:00 every day at UTC over 2 days from Monday 00:00Z: one 2880-minute window.
        let mut args = base();
        args.utc_offset_minutes = 0;
        args.from = "2026-11-23T00:00:00Z".into();
        args.horizon_days = 2;
        args.working_hours = WorkingHours {
            start: "00:00".into(),
            end: "24:00".into(),
            weekdays: vec![1, 2, 3, 4, 5, 6, 7],
        };
        let result = find_free_slots(args).unwrap();
        assert_eq!(
            pairs(&result),
            [("2026-11-23T00:00:00Z", "2026-11-25T00:00:00Z", 2880)]
        );
        check_result_schema(&result);
    }

    #[test]
    fn max_slots_truncates() {
        // Mon–Fri, 5 days from Monday: 5 whole working days; max_slots 3 → 3 slots, truncated.
        let mut args = base();
        args.horizon_days = 5;
        args.max_slots = 3;
        let result = find_free_slots(args.clone()).unwrap();
        assert_eq!(result.slots.len(), 3);
        assert_eq!(result.slots[2].start, "2026-11-25T09:00:00+01:00");
        assert!(result.truncated);
        // Exactly as many as qualify: not truncated.
        args.max_slots = 5;
        let result = find_free_slots(args).unwrap();
        assert_eq!(result.slots.len(), 5);
        assert!(!result.truncated);
    }

    #[test]
    fn fully_busy_gives_nothing() {
        let mut args = base();
        args.busy = vec![busy(
            "2026-11-23T08:00:00+01:00",
            "2026-11-23T18:00:00+01:00",
        )];
        let result = find_free_slots(args).unwrap();
        assert!(result.slots.is_empty());
        assert!(!result.truncated);
        check_result_schema(&result);
    }

    #[test]
    fn invalid_inputs_are_invalid_args() {
        let expect_invalid = |args: FindFreeSlotsArgs, needle: &str| {
            let e = find_free_slots(args).unwrap_err();
            assert_eq!(e.kind, ToolErrorKind::InvalidArgs);
            assert!(
                e.message.contains(needle),
                "{needle:?} not in {:?}",
                e.message
            );
        };
        let mut args = base();
        args.busy = vec![
            busy("2026-11-23T10:00:00+01:00", "2026-11-23T11:00:00+01:00"),
            busy("2026-11-23T12:00:00+01:00", "2026-11-23T12:00:00+01:00"),
        ];
        expect_invalid(args, "busy[1]");
        let mut args = base();
        args.busy = vec![busy(
            "2026-11-23T10:00:00+01:00",
            "2026-11-23T09:00:00+01:00",
        )];
        expect_invalid(args, "busy[0]");
        let mut args = base();
        args.busy = vec![busy("yesterday", "2026-11-23T09:00:00+01:00")];
        expect_invalid(args, "busy[0].start");
        let mut args = base();
        args.working_hours.start = "17:00".into();
        args.working_hours.end = "09:00".into();
        expect_invalid(args, "overnight");
        let mut args = base();
        args.working_hours.end = "09:00".into();
        expect_invalid(args, "working_hours");
        let mut args = base();
        args.duration_minutes = 4;
        expect_invalid(args, "duration_minutes");
        let mut args = base();
        args.utc_offset_minutes = 841;
        expect_invalid(args, "utc_offset_minutes");
        let mut args = base();
        args.horizon_days = 32;
        expect_invalid(args, "horizon_days");
        let mut args = base();
        args.from = "9999-12-31T00:00:00Z".into();
        expect_invalid(args, "year 9999");
    }

    #[test]
    fn schema_examples_deserialize_and_run() {
        let schema = SCHEMAS.load("find_free_slots.args.json");
        SCHEMAS.assert_header(&schema, "find_free_slots.args.json");
        let examples = schema["examples"].as_array().unwrap();
        assert!(!examples.is_empty());
        for example in examples {
            aura_testkit::assert_valid(&schema, example);
            let args: FindFreeSlotsArgs = serde_json::from_value(example.clone()).unwrap();
            let result = find_free_slots(args).unwrap();
            check_result_schema(&result);
        }
        // Defaults as stated in the schema.
        let args: FindFreeSlotsArgs = serde_json::from_value(json!({
            "working_hours": {"start": "09:00", "end": "17:00"},
            "utc_offset_minutes": 0, "duration_minutes": 30,
            "from": "2026-11-23T00:00:00Z", "horizon_days": 1
        }))
        .unwrap();
        assert_eq!(args.busy, vec![]);
        assert_eq!(args.buffer_minutes, 0);
        assert_eq!(args.max_slots, 20);
        assert_eq!(args.working_hours.weekdays, vec![1, 2, 3, 4, 5]);
        let props = &schema["properties"];
        assert_eq!(props["buffer_minutes"]["default"], 0);
        assert_eq!(props["max_slots"]["default"], 20);
        assert_eq!(props["busy"]["default"], json!([]));
        assert_eq!(
            props["working_hours"]["properties"]["weekdays"]["default"],
            json!([1, 2, 3, 4, 5])
        );
        // Unknown fields are refused, like the schema's additionalProperties: false.
        let e = serde_json::from_value::<FindFreeSlotsArgs>(json!({
            "working_hours": {"start": "09:00", "end": "17:00"},
            "utc_offset_minutes": 0, "duration_minutes": 30,
            "from": "2026-11-23T00:00:00Z", "horizon_days": 1, "colour": "red"
        }));
        assert!(e.is_err());
    }
}
