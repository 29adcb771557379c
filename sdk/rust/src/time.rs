//! Time as every agent handles it: the unit constants, the bound on a UTC offset, "HH:MM"
//! clock times, RFC 3339 date-times in and out, and day arithmetic at a fixed offset.
//!
//! Conventions: an instant is whole Unix seconds (UTC; fractions in the input are dropped); a
//! day is a number of days since 1970-01-01; the user's local time is UTC plus a fixed
//! `offset_minutes` for the whole call (no time-zone rules, no daylight-saving changes).
//!
//! This module owns these conversions and the wording of their errors, each a
//! [`ToolError::invalid_args`] naming the field. It must not read a clock (every instant comes
//! from the args or the tick context), must not panic on bad input (parsing and formatting
//! fail with an error; the day arithmetic takes instants already parsed, within the years
//! 0000..9999), and must not hold an agent's rules (quiet hours, what an absent offset means:
//! the agents decide). Calendar dates are [`crate::date`]'s, working hours [`crate::hours`]'.

use std::fmt::Display;

use ::time::format_description::well_known::Rfc3339;
use ::time::{OffsetDateTime, UtcOffset};
use serde_json::Value;

use crate::args::check_range;
use crate::{ToolError, ToolResult};

/// Seconds in a minute.
pub const SECS_PER_MINUTE: i64 = 60;
/// Minutes in an hour.
pub const MINUTES_PER_HOUR: i64 = 60;
/// Seconds in an hour.
pub const SECS_PER_HOUR: i64 = MINUTES_PER_HOUR * SECS_PER_MINUTE;
/// Minutes in a day (no leap seconds: Unix time has none).
pub const MINUTES_PER_DAY: i64 = 24 * MINUTES_PER_HOUR;
/// Seconds in a day.
pub const SECS_PER_DAY: i64 = MINUTES_PER_DAY * SECS_PER_MINUTE;

/// Largest `utc_offset_minutes` magnitude: UTC-14:00 .. UTC+14:00. The offsets in use reach
/// +14:00 (Kiribati's Line Islands) and -12:00; the schemas take the symmetric ±14:00, so any
/// real user's offset passes and nothing further does.
pub const UTC_OFFSET_MINUTES_MAX: i32 = 840;

/// Longest RFC 3339 date-time accepted (the schemas' `maxLength` for `date-time` strings):
/// "2026-11-23T09:00:00.123456789+01:00" is 35 characters, so 40 holds any real one.
pub const TIME_CHARS_MAX: usize = 40;

/// Checks a `utc_offset_minutes` argument: within ±[`UTC_OFFSET_MINUTES_MAX`].
pub fn check_offset(offset_minutes: i32, field: impl Display) -> ToolResult<()> {
    check_range(
        offset_minutes,
        field,
        -UTC_OFFSET_MINUTES_MAX,
        UTC_OFFSET_MINUTES_MAX,
    )
}

/// A JSON value read as a `utc_offset_minutes`: an integer within ±[`UTC_OFFSET_MINUTES_MAX`],
/// else None (for the lenient tick contexts; what None means is the caller's rule).
pub fn offset_minutes_of(value: &Value) -> Option<i32> {
    value
        .as_i64()
        .filter(|offset| offset.abs() <= i64::from(UTC_OFFSET_MINUTES_MAX))
        .and_then(|offset| i32::try_from(offset).ok())
}

/// Hours and minutes of a strict "HH:MM" (two digits each), not yet range-checked.
fn hh_mm_parts(s: &str) -> Option<(i64, i64)> {
    let b = s.as_bytes();
    if b.len() != 5 || b[2] != b':' {
        return None;
    }
    let digits = [b[0], b[1], b[3], b[4]];
    if !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let [h1, h2, m1, m2] = digits.map(|d| i64::from(d - b'0'));
    Some((h1 * 10 + h2, m1 * 10 + m2))
}

/// Parses "HH:MM" as the bound of a span of the day (working hours): 00:00..23:59 or 24:00,
/// the end of the day. Minutes after midnight, 0..=1440.
pub fn parse_hh_mm(s: &str, field: impl Display) -> ToolResult<i64> {
    try_parse_hh_mm(s).ok_or_else(|| hh_mm_refused(s, field))
}

/// [`parse_hh_mm`] without the error: `None` for what it refuses.
pub fn try_parse_hh_mm(s: &str) -> Option<i64> {
    match hh_mm_parts(s) {
        Some((hours, minutes)) if (hours < 24 && minutes < 60) || (hours, minutes) == (24, 0) => {
            Some(hours * MINUTES_PER_HOUR + minutes)
        }
        _ => None,
    }
}

/// What [`parse_hh_mm`] says of `s`, given as `field`, when it refuses it.
pub fn hh_mm_refused(s: &str, field: impl Display) -> ToolError {
    ToolError::invalid_args(format!(
        "{field}: {s:?} is not a time \"HH:MM\" (00:00..24:00)"
    ))
}

/// Parses "HH:MM" as a moment in the day (quiet hours start and end): 00:00..23:59 only, since
/// 24:00 is the end of a day, not a time in it. Minutes after midnight, 0..=1439.
pub fn parse_time_of_day(s: &str, field: impl Display) -> ToolResult<i64> {
    match hh_mm_parts(s) {
        Some((hours, minutes)) if hours < 24 && minutes < 60 => {
            Ok(hours * MINUTES_PER_HOUR + minutes)
        }
        _ => Err(ToolError::invalid_args(format!(
            "{field}: {s:?} is not a time \"HH:MM\" (00:00..23:59)"
        ))),
    }
}

/// "HH:MM" of a minute of the day; any integer is taken modulo a day first.
pub fn format_hh_mm(minute_of_day: i64) -> String {
    let minute = minute_of_day.rem_euclid(MINUTES_PER_DAY);
    format!(
        "{:02}:{:02}",
        minute / MINUTES_PER_HOUR,
        minute % MINUTES_PER_HOUR
    )
}

/// Parses an RFC 3339 date-time with offset into Unix seconds (UTC), dropping any fraction.
#[inline]
pub fn parse_time(s: &str, field: impl Display) -> ToolResult<i64> {
    if s.len() <= TIME_CHARS_MAX
        && let Some(unix_secs) = rfc3339_unix_secs(s.as_bytes())
    {
        return Ok(unix_secs);
    }
    // What the fast reading refuses, `time` refuses too; it words the error.
    parse_date_time(s, field).map(OffsetDateTime::unix_timestamp)
}

/// Parses an RFC 3339 date-time with offset as written, keeping its offset (for text that
/// shows the time as the sender wrote it); [`parse_time`] is this in Unix seconds.
#[inline]
pub fn parse_date_time(s: &str, field: impl Display) -> ToolResult<OffsetDateTime> {
    // A text has at most as many characters as bytes: nearly every one needs no count.
    if s.len() > TIME_CHARS_MAX && s.chars().count() > TIME_CHARS_MAX {
        return Err(ToolError::invalid_args(format!(
            "{field}: longer than {TIME_CHARS_MAX} characters"
        )));
    }
    OffsetDateTime::parse(s, &Rfc3339).map_err(|e| {
        ToolError::invalid_args(format!(
            "{field}: {s:?} is not an RFC 3339 date-time with offset ({e})"
        ))
    })
}

/// [`parse_time`] without building an error: the same answer as `parse_time(s, _).ok()`, for
/// hot loops that name the field only when a time fails. (It bounds bytes rather than
/// characters: a string over [`TIME_CHARS_MAX`] bytes but not characters has a non-ASCII
/// character, which RFC 3339 never does.)
pub fn try_parse_time(s: &str) -> Option<i64> {
    if s.len() > TIME_CHARS_MAX {
        return None;
    }
    rfc3339_unix_secs(s.as_bytes())
}

/// Unix seconds of an RFC 3339 date-time with offset, read in one pass over its bytes: exactly
/// the texts `time`'s `Rfc3339` parse takes, to the same second (the tests check the two
/// against each other), without building its `OffsetDateTime`. The calendar's small call
/// reads eight times, and `time`'s checks and conversions were ~5 % of its guest's samples.
///
/// As `time` reads RFC 3339: any one byte between the date and the time; `z` as `Z`; a
/// fraction of any length, dropped; `-00:00` as UTC; an offset up to ±23:59; second 60 only
/// as a leap second, the last second of a month in UTC, read as the second before it. `None`
/// for everything else, which [`parse_time`] hands to `time` for its wording.
fn rfc3339_unix_secs(s: &[u8]) -> Option<i64> {
    // The date and the time are at fixed places: read from an array, nothing is bounds-checked.
    let head: &[u8; 19] = s.get(..19)?.try_into().ok()?;
    let two = |at: usize| {
        let (tens, ones) = (head[at].wrapping_sub(b'0'), head[at + 1].wrapping_sub(b'0'));
        (tens < 10 && ones < 10).then(|| u32::from(tens * 10 + ones))
    };
    // head[10] is the separator: any byte.
    if [head[4], head[7], head[13], head[16]] != [b'-', b'-', b':', b':'] {
        return None;
    }
    let (year, month, day) = (two(0)? * 100 + two(2)?, two(5)?, two(8)?);
    let (hour, minute, second) = (two(11)?, two(14)?, two(17)?);
    let digit_at = |at: usize| s.get(at).is_some_and(u8::is_ascii_digit);
    let mut at = 19;
    if s.get(at) == Some(&b'.') {
        if !digit_at(at + 1) {
            return None;
        }
        at += 2;
        while digit_at(at) {
            at += 1;
        }
    }
    let offset_secs = match s.get(at..)? {
        [b'Z' | b'z'] => 0,
        &[sign @ (b'+' | b'-'), h1, h2, b':', m1, m2] => {
            let [h1, h2, m1, m2] = [h1, h2, m1, m2].map(|b| b.wrapping_sub(b'0'));
            if h1 > 9 || h2 > 9 || m1 > 9 || m2 > 9 {
                return None;
            }
            let (offset_hours, offset_minutes) = (h1 * 10 + h2, m1 * 10 + m2);
            if offset_hours > 23 || offset_minutes > 59 {
                return None;
            }
            let magnitude = i64::from(offset_hours) * SECS_PER_HOUR
                + i64::from(offset_minutes) * SECS_PER_MINUTE;
            if sign == b'-' { -magnitude } else { magnitude }
        }
        _ => return None,
    };
    let year = i64::from(year);
    let day_ok = crate::date::is_calendar_day(year, month, day);
    if !day_ok || hour > 23 || minute > 59 || second > 60 {
        return None;
    }
    let local_day = crate::date::days_from_civil(year, month, day);
    let local_secs = local_day * SECS_PER_DAY
        + i64::from(hour) * SECS_PER_HOUR
        + i64::from(minute) * SECS_PER_MINUTE;
    let unix_secs = local_secs + i64::from(second.min(59)) - offset_secs;
    (second < 60 || is_leap_second_stand_in(unix_secs)).then_some(unix_secs)
}

/// Whether the instant `unix_secs` (a second 60 read as 59) is where a leap second may be, as
/// `time` allows one: 23:59:59 UTC on the last day of a month. (`time` also needs that UTC
/// date within its years ±9999; from local years 0000..9999 and offsets under a day, a
/// 23:59:59 in UTC falls in the years -1..9999, so that never decides.)
fn is_leap_second_stand_in(unix_secs: i64) -> bool {
    let (year, month, day) = crate::date::civil_from_days(unix_secs.div_euclid(SECS_PER_DAY));
    unix_secs.rem_euclid(SECS_PER_DAY) == SECS_PER_DAY - 1
        && day == crate::date::days_in_month(year, month)
}

/// Formats Unix seconds as RFC 3339 at `offset_minutes` ("Z" when the offset is 0). Fails when
/// the offset is not one (beyond ±25:59) or the local time falls outside the years 0000..9999;
/// a caller that wants an `Option` uses `.ok()`.
pub fn format_time(unix_secs: i64, offset_minutes: i32) -> ToolResult<String> {
    let offset = offset_minutes
        .checked_mul(SECS_PER_MINUTE as i32)
        .ok_or_else(|| ToolError::invalid_args(format!("utc offset {offset_minutes}: too large")))
        .and_then(|secs| {
            UtcOffset::from_whole_seconds(secs)
                .map_err(|e| ToolError::invalid_args(format!("utc offset {offset_minutes}: {e}")))
        })?;
    OffsetDateTime::from_unix_timestamp(unix_secs)
        .ok()
        .and_then(|t| t.checked_to_offset(offset))
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

/// Whole minutes in `secs` seconds, rounded down (toward the past for instants).
#[inline]
pub fn minutes_floor(secs: i64) -> i64 {
    secs.div_euclid(SECS_PER_MINUTE)
}

/// Whole minutes in `secs` seconds, rounded up (a positive span never shows as 0 minutes).
#[inline]
pub fn minutes_ceil(secs: i64) -> i64 {
    minutes_floor(secs) + i64::from(secs.rem_euclid(SECS_PER_MINUTE) != 0)
}

/// The local day (days since 1970-01-01) of the instant `unix_secs` at `offset_minutes`.
pub fn local_day(unix_secs: i64, offset_minutes: i32) -> i64 {
    (unix_secs + i64::from(offset_minutes) * SECS_PER_MINUTE).div_euclid(SECS_PER_DAY)
}

/// The local minute of the day (0..=1439) of the instant `unix_secs` at `offset_minutes`.
pub fn local_minute_of_day(unix_secs: i64, offset_minutes: i32) -> i64 {
    (unix_secs + i64::from(offset_minutes) * SECS_PER_MINUTE).rem_euclid(SECS_PER_DAY)
        / SECS_PER_MINUTE
}

/// The instant (Unix seconds) of local day `day` at local minute `minute` of the day.
pub fn local_instant(day: i64, minute: i64, offset_minutes: i32) -> i64 {
    day * SECS_PER_DAY + minute * SECS_PER_MINUTE - i64::from(offset_minutes) * SECS_PER_MINUTE
}

/// ISO weekday (1 = Monday .. 7 = Sunday) of the day `day` days after 1970-01-01 (a Thursday).
pub fn weekday_of_day(day: i64) -> u8 {
    // rem_euclid(7) is in 0..7, so the cast cannot truncate.
    ((day + 3).rem_euclid(7) + 1) as u8
}

#[cfg(test)]
mod tests;
