//! Types and helpers shared by the wellness tools: local dates and minute-precision times, the
//! stress levels and exact integer rounding.
//!
//! It owns no tool logic and must not read a clock: every instant comes from the args or the
//! tick context. It must not keep its own time or argument helpers: RFC 3339, "HH:MM", offsets
//! and minute rounding are `aura_sdk::time`'s, ranges and lengths `aura_sdk::args`'. Times are
//! whole Unix seconds (UTC) once parsed (fractions are dropped); the tools work in whole minutes
//! from there. No floating point anywhere: every fractional value (percentages, weights,
//! averages) is an exact integer ratio rounded once, half away from zero
//! (`aura_sdk::round::div_round`); dates are `aura_sdk::date`'s.

use aura_sdk::ToolResult;
use aura_sdk::time::{SECS_PER_MINUTE, format_time};
use serde::{Deserialize, Serialize};

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

/// Formats whole minutes since the epoch as RFC 3339 at `offset_minutes`.
pub fn format_minute(minute: i64, offset_minutes: i32) -> ToolResult<String> {
    format_time(minute * SECS_PER_MINUTE, offset_minutes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use aura_sdk::date::format_date;
    use aura_sdk::time::{
        format_hh_mm, minutes_ceil, minutes_floor, parse_hh_mm, parse_time, weekday_of_day,
    };

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
        assert_eq!(format_date(20_780), "2026-11-23");
        assert_eq!(weekday_of_day(20_780), 1);
        assert_eq!(format_date(0), "1970-01-01");
        assert_eq!(format_date(-1), "1969-12-31");
        assert_eq!(format_hh_mm(0), "00:00");
        assert_eq!(format_hh_mm(1410), "23:30");
        assert_eq!(format_hh_mm(1470), "00:30");
        assert_eq!(format_hh_mm(-30), "23:30");
        assert_eq!(parse_hh_mm("09:30", "f").ok(), Some(570));
        assert_eq!(parse_hh_mm("24:00", "f").ok(), Some(1440));
        for bad in ["24:01", "9:00", "09:60", "0900", ""] {
            assert_eq!(parse_hh_mm(bad, "f").ok(), None, "{bad}");
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
