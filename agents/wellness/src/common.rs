//! Types and helpers shared by the wellness tools: RFC 3339 parsing and formatting, local dates
//! and clock times, the stress levels, exact integer rounding, and the argument checks every
//! tool repeats.
//!
//! It owns no tool logic and must not read a clock: every instant comes from the args or the
//! tick context. Times are whole Unix seconds (UTC) once parsed (fractions are dropped); the
//! tools work in whole minutes from there. No floating point anywhere: every fractional value
//! (percentages, weights, averages) is an exact integer ratio rounded once, half away from zero.

use aura_sdk::{ToolError, ToolResult};
use serde::{Deserialize, Serialize};
use time::format_description::well_known::Rfc3339;
use time::{OffsetDateTime, UtcOffset};

pub use aura_sdk::args::{check_len, check_range, parse_time, weekday_of_day};

/// Longest RFC 3339 string accepted (the schemas' `maxLength` for date-times).
pub const MAX_TIME_CHARS: usize = 40;
/// Largest `utc_offset_minutes` magnitude (UTC-14:00 .. UTC+14:00, the real-world extremes).
pub const MAX_OFFSET_MINUTES: i32 = 840;

pub const SECS_PER_MINUTE: i64 = 60;
pub const MINUTES_PER_DAY: i64 = 1440;

/// Lowest score labelled `moderate`: below it the readings are within everyday variation
/// (every factor inside or barely past its dead zone).
pub const LEVEL_MODERATE_MIN: u32 = 30;
/// Lowest score labelled `high`: at least one strong factor (e.g. HRV down by more than a third
/// with a raised resting heart rate) or several medium ones.
pub const LEVEL_HIGH_MIN: u32 = 60;
/// Highest score.
pub const SCORE_MAX: u32 = 100;

/// A stress level label, from the score by [`LEVEL_MODERATE_MIN`] and [`LEVEL_HIGH_MIN`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Level {
    /// 0 ..= 29.
    Low,
    /// 30 ..= 59.
    Moderate,
    /// 60 ..= 100.
    High,
}

impl Level {
    /// The level of a score 0..=100.
    pub fn from_score(score: u32) -> Self {
        if score >= LEVEL_HIGH_MIN {
            Level::High
        } else if score >= LEVEL_MODERATE_MIN {
            Level::Moderate
        } else {
            Level::Low
        }
    }

    /// The label as it appears in JSON and in user-facing text.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Low => "low",
            Level::Moderate => "moderate",
            Level::High => "high",
        }
    }
}

/// `num / den` rounded to the nearest integer, halves away from zero. `den` must be positive.
pub fn div_round(num: i64, den: i64) -> i64 {
    debug_assert!(den > 0);
    let q = num.div_euclid(den);
    let r = num.rem_euclid(den);
    // num = q·den + r with 0 <= r < den. Round up when r/den > 1/2, or == 1/2 and num >= 0
    // (for negative num, q is already the floor, i.e. away from zero at a half).
    if 2 * r > den || (2 * r == den && num >= 0) {
        q + 1
    } else {
        q
    }
}

/// Splits `target` into integer parts proportional to `numerators / den` (largest-remainder
/// method): every part is the floor of its exact share, and the units still missing to reach
/// `target` go to the largest remainders (ties: the earlier part). All numerators must be
/// non-negative and `target` must lie between the sum of the floors and that sum plus the
/// number of parts; both hold when `target` is the rounded sum of the exact shares.
pub fn largest_remainder(numerators: &[i64], den: i64, target: i64) -> Vec<i64> {
    let mut parts: Vec<i64> = numerators.iter().map(|n| n / den).collect();
    let missing = target - parts.iter().sum::<i64>();
    let mut order: Vec<usize> = (0..numerators.len()).collect();
    // Stable sort: equal remainders keep their order.
    order.sort_by_key(|&i| std::cmp::Reverse(numerators[i] % den));
    for &i in order.iter().take(usize::try_from(missing).unwrap_or(0)) {
        parts[i] += 1;
    }
    parts
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

/// Formats whole minutes since the epoch as RFC 3339 at `offset_minutes`.
pub fn format_minute(minute: i64, offset_minutes: i32) -> ToolResult<String> {
    format_time(minute * SECS_PER_MINUTE, offset_minutes)
}

/// The local calendar date "YYYY-MM-DD" of day number `day` (days since 1970-01-01).
pub fn format_date(day: i64) -> ToolResult<String> {
    let date = OffsetDateTime::from_unix_timestamp(day * MINUTES_PER_DAY * SECS_PER_MINUTE)
        .map_err(|_| ToolError::invalid_args(format!("day {day} is outside the year range")))?
        .date();
    Ok(format!(
        "{:04}-{:02}-{:02}",
        date.year(),
        u8::from(date.month()),
        date.day()
    ))
}

/// "HH:MM" of a minute of the day; any integer is taken modulo a day first.
pub fn format_hh_mm(minute_of_day: i64) -> String {
    let m = minute_of_day.rem_euclid(MINUTES_PER_DAY);
    format!("{:02}:{:02}", m / 60, m % 60)
}

/// Parses "HH:MM" (00:00..23:59, or 24:00) into minutes after midnight.
pub fn parse_hh_mm(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if b.len() != 5 || b[2] != b':' {
        return None;
    }
    let digits = [b[0], b[1], b[3], b[4]];
    if !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let [h1, h2, m1, m2] = digits.map(|d| i64::from(d - b'0'));
    let (hours, minutes) = (h1 * 10 + h2, m1 * 10 + m2);
    if minutes > 59 || hours > 24 || (hours == 24 && minutes != 0) {
        return None;
    }
    Some(hours * 60 + minutes)
}

/// Whole minutes since the epoch at or after `secs` (rounded up).
pub fn minutes_ceil(secs: i64) -> i64 {
    secs.div_euclid(SECS_PER_MINUTE) + i64::from(secs.rem_euclid(SECS_PER_MINUTE) != 0)
}

/// Whole minutes since the epoch at or before `secs` (rounded down).
pub fn minutes_floor(secs: i64) -> i64 {
    secs.div_euclid(SECS_PER_MINUTE)
}

/// Checks a `utc_offset_minutes` argument.
pub fn check_offset(offset: i32, field: &str) -> ToolResult<()> {
    check_range(offset, field, -MAX_OFFSET_MINUTES, MAX_OFFSET_MINUTES)
}

/// This agent's schemas, checked with the validator the host uses (see `aura-testkit`).
#[cfg(test)]
pub mod schema_check {
    pub use aura_testkit::{assert_house_rules, assert_valid, is_valid};
    use serde_json::Value;

    const SCHEMAS: aura_testkit::AgentSchemas = aura_testkit::AgentSchemas { agent: "wellness" };

    /// Loads `schemas/wellness/<name>`.
    pub fn load(name: &str) -> Value {
        SCHEMAS.load(name)
    }

    /// Checks the top of one of the schemas: draft, `$id`, object, house rules.
    pub fn assert_header(schema: &Value, name: &str) {
        SCHEMAS.assert_header(schema, name)
    }

    /// Both schemas of `tool`, checked, with its args examples.
    pub fn tool_schemas(tool: &str) -> (Value, Value, Vec<Value>) {
        SCHEMAS.tool_schemas(tool)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_is_half_away_from_zero() {
        assert_eq!(div_round(7, 2), 4); // 3.5
        assert_eq!(div_round(-7, 2), -4); // -3.5
        assert_eq!(div_round(5, 3), 2); // 1.67
        assert_eq!(div_round(-5, 3), -2); // -1.67
        assert_eq!(div_round(4, 3), 1); // 1.33
        assert_eq!(div_round(-4, 3), -1); // -1.33
        assert_eq!(div_round(0, 9), 0);
        assert_eq!(div_round(-1, 3), 0); // -0.33
    }

    #[test]
    fn largest_remainder_sums_to_target() {
        // 500·1000/700 = 714.29, 200·1000/700 = 285.71: floors 714 + 285 = 999, the missing
        // unit goes to the larger remainder (0.71) → 714 + 286.
        assert_eq!(
            largest_remainder(&[500_000, 200_000], 700, 1000),
            [714, 286]
        );
        // Three equal thirds of 100: floors 33 each, one unit missing, tie → the first.
        assert_eq!(largest_remainder(&[100, 100, 100], 3, 100), [34, 33, 33]);
        // Already exact.
        assert_eq!(largest_remainder(&[3000, 2000], 10, 500), [300, 200]);
    }

    #[test]
    fn dates_and_clock_times() {
        // 2026-11-23T00:00Z = 1 795 392 000 s = 20 780 × 86 400 s: day 20 780, a Monday
        // ((20 780 + 3) mod 7 = 0 → ISO 1).
        assert_eq!(format_date(20_780).unwrap(), "2026-11-23");
        assert_eq!(weekday_of_day(20_780), 1);
        assert_eq!(format_date(0).unwrap(), "1970-01-01");
        assert_eq!(format_date(-1).unwrap(), "1969-12-31");
        assert_eq!(format_hh_mm(0), "00:00");
        assert_eq!(format_hh_mm(1410), "23:30");
        assert_eq!(format_hh_mm(1470), "00:30");
        assert_eq!(format_hh_mm(-30), "23:30");
        assert_eq!(parse_hh_mm("09:30"), Some(570));
        assert_eq!(parse_hh_mm("24:00"), Some(1440));
        for bad in ["24:01", "9:00", "09:60", "0900", ""] {
            assert_eq!(parse_hh_mm(bad), None, "{bad}");
        }
    }

    #[test]
    fn times_round_trip() {
        // 2026-11-23T09:00:00+01:00 = 08:00Z = 1 795 420 800.
        let t = parse_time("2026-11-23T09:00:00+01:00", "t").unwrap();
        assert_eq!(t, 1_795_420_800);
        assert_eq!(parse_time("2026-11-23T08:00:00.5Z", "t").unwrap(), t);
        assert_eq!(format_time(t, 0).unwrap(), "2026-11-23T08:00:00Z");
        assert_eq!(
            format_minute(t / 60, 60).unwrap(),
            "2026-11-23T09:00:00+01:00"
        );
        assert!(parse_time("2026-11-23T09:00:00", "t").is_err());
        assert_eq!(minutes_ceil(61), 2);
        assert_eq!(minutes_floor(119), 1);
        assert_eq!(minutes_ceil(-1), 0);
    }

    #[test]
    fn levels() {
        assert_eq!(Level::from_score(0), Level::Low);
        assert_eq!(Level::from_score(29), Level::Low);
        assert_eq!(Level::from_score(30), Level::Moderate);
        assert_eq!(Level::from_score(59), Level::Moderate);
        assert_eq!(Level::from_score(60), Level::High);
        assert_eq!(Level::from_score(100), Level::High);
    }
}
