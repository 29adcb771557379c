//! Calendar dates as every agent reads and writes them: a day is a number of days since
//! 1970-01-01 (what `time::local_day` gives), a date "YYYY-MM-DD", a month "YYYY-MM", in the
//! proleptic Gregorian calendar.
//!
//! It owns the one conversion between day numbers and dates (Howard Hinnant's algorithms:
//! exact for every year, so formatting never fails), month lengths and month arithmetic, and
//! the one strict reading of a date: four, two and two ASCII digits, a real calendar day. It
//! must not read a clock nor know an agent's rules.

use std::fmt::Display;

use crate::{ToolError, ToolResult};

/// Day numbers of 0000-01-01 and 9999-12-31: the dates "YYYY-MM-DD" can write. A local date
/// outside them (a time at the edge of RFC 3339's range shifted by an offset) is not reported.
pub const FIRST_DAY: i64 = -719_528;
/// See [`FIRST_DAY`].
pub const LAST_DAY: i64 = 2_932_896;

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
pub fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400; // 0..=399
    let m = i64::from(month);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy; // 0..=146096
    era * 146_097 + doe - 719_468
}

/// The date (year, month 1..12, day 1..31) of a day number (Hinnant's `civil_from_days`).
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097; // 0..=146096
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365; // 0..=399
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100); // 0..=365
    let mp = (5 * doy + 2) / 153; // 0..=11
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// Whether `year` is a Gregorian leap year.
pub fn is_leap(year: i64) -> bool {
    (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
}

/// Days in `month` (1..12) of `year`.
pub fn days_in_month(year: i64, month: u32) -> u32 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// The day `months` calendar months after `day`, keeping the day of month and clamping it to the
/// target month's length (Jan 31 + 1 month = Feb 28/29).
pub fn add_months(day: i64, months: i64) -> i64 {
    let (y, m, d) = civil_from_days(day);
    let index = y * 12 + i64::from(m) - 1 + months;
    let (ty, tm) = (index.div_euclid(12), (index.rem_euclid(12) + 1) as u32);
    days_from_civil(ty, tm, d.min(days_in_month(ty, tm)))
}

/// Formats a day number as "YYYY-MM-DD".
pub fn format_date(day: i64) -> String {
    let (y, m, d) = civil_from_days(day);
    format!("{y:04}-{m:02}-{d:02}")
}

fn digits(b: &[u8]) -> Option<u32> {
    b.iter().try_fold(0u32, |acc, &c| {
        c.is_ascii_digit().then(|| acc * 10 + u32::from(c - b'0'))
    })
}

/// Parses "YYYY-MM-DD" (years 0000..9999, a real calendar date) into a day number.
pub fn parse_date(s: &str, field: impl Display) -> ToolResult<i64> {
    date_parts(s)
        .map(|(y, m, d)| days_from_civil(y, m, d))
        .ok_or_else(|| {
            ToolError::invalid_args(format!("{field}: {s:?} is not a date \"YYYY-MM-DD\""))
        })
}

/// Parses "YYYY-MM" into (year, month).
pub fn parse_month(s: &str, field: impl Display) -> ToolResult<(i64, u32)> {
    let bad = || ToolError::invalid_args(format!("{field}: {s:?} is not a month \"YYYY-MM\""));
    let b = s.as_bytes();
    if b.len() != 7 || b[4] != b'-' {
        return Err(bad());
    }
    let y = digits(&b[..4]).ok_or_else(bad)?;
    let m = digits(&b[5..]).ok_or_else(bad)?;
    if !(1..=12).contains(&m) {
        return Err(bad());
    }
    Ok((i64::from(y), m))
}

/// Year, month and day of a strict "YYYY-MM-DD" that names a real calendar day; `None`
/// otherwise. What every date an agent reads passes (args and dates written in text alike).
pub fn date_parts(s: &str) -> Option<(i64, u32, u32)> {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let (y, m, d) = (digits(&b[..4])?, digits(&b[5..7])?, digits(&b[8..])?);
    let y = i64::from(y);
    is_calendar_day(y, m, d).then_some((y, m, d))
}

/// Whether month `month` (1..12) of `year` has a day `day`.
#[inline]
pub fn is_calendar_day(year: i64, month: u32, day: u32) -> bool {
    (1..=12).contains(&month) && day >= 1 && day <= days_in_month(year, month)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ToolErrorKind;

    #[test]
    fn dates_round_trip_through_day_numbers() {
        // 1970-01-01 is day 0; 2000-03-01 is 30 years (7 leap days: 72,76,80,84,88,92,96)
        // + Jan + Feb 2000 (31 + 29): 30·365 + 7 + 60 = 11_017.
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
        assert_eq!(civil_from_days(11_017), (2000, 3, 1));
        assert_eq!(civil_from_days(-1), (1969, 12, 31));
        // 2026-11-23 00:00Z = 1_795_392_000 s = 20_780 days.
        assert_eq!(days_from_civil(2026, 11, 23), 20_780);
        // 0000-01-01 is 1970 years back. Leap years among 0000..1969: 493 multiples of 4
        // (0..1968), minus 20 multiples of 100 (0..1900), plus 5 multiples of 400 (0..1600):
        // 478. 1970 × 365 + 478 = 719_528.
        assert_eq!(days_from_civil(0, 1, 1), FIRST_DAY);
        assert_eq!(format_date(FIRST_DAY), "0000-01-01");
        assert_eq!(format_date(LAST_DAY), "9999-12-31");
        assert_eq!(format_date(LAST_DAY + 1), "10000-01-01");
        for day in [-800_000, -1, 0, 59, 60, 11_016, 20_780, 2_932_896] {
            let (y, m, d) = civil_from_days(day);
            assert_eq!(days_from_civil(y, m, d), day);
        }
        assert_eq!(format_date(20_780), "2026-11-23");
        assert_eq!(parse_date("2026-11-23", "d").unwrap(), 20_780);
        assert_eq!(
            parse_date("2028-02-29", "d").unwrap(),
            days_from_civil(2028, 2, 29)
        );
        for bad in [
            "2026-02-29",
            "2026-13-01",
            "2026-00-10",
            "2026-1-01",
            "26-11-23",
            "2026-11-3x",
        ] {
            assert_eq!(
                parse_date(bad, "d").unwrap_err().kind,
                ToolErrorKind::InvalidArgs,
                "{bad}"
            );
        }
        assert_eq!(parse_month("2026-02", "m").unwrap(), (2026, 2));
        assert!(parse_month("2026-13", "m").is_err());
        assert!(parse_month("2026-2", "m").is_err());
    }

    #[test]
    fn month_lengths_and_adding_months() {
        assert_eq!(days_in_month(2026, 2), 28);
        assert_eq!(days_in_month(2028, 2), 29);
        assert_eq!(days_in_month(1900, 2), 28);
        assert_eq!(days_in_month(2000, 2), 29);
        assert_eq!(days_in_month(2026, 4), 30);
        assert_eq!(days_in_month(2026, 12), 31);
        let d = |y, m, d| days_from_civil(y, m, d);
        assert_eq!(add_months(d(2026, 1, 31), 1), d(2026, 2, 28));
        assert_eq!(add_months(d(2026, 12, 15), 1), d(2027, 1, 15));
        assert_eq!(add_months(d(2028, 2, 29), 12), d(2029, 2, 28));
        assert_eq!(add_months(d(2026, 3, 31), -1), d(2026, 2, 28));
    }

    #[test]
    fn a_date_is_four_two_and_two_digits_naming_a_real_day() {
        assert_eq!(date_parts("2026-12-01"), Some((2026, 12, 1)));
        assert_eq!(date_parts("0000-02-29"), Some((0, 2, 29)));
        for bad in [
            "2026-12-+1",
            "+026-12-01",
            "2026-12-1 ",
            "2026/12/01",
            "2026-02-30",
            "",
        ] {
            assert_eq!(date_parts(bad), None, "{bad}");
        }
    }
}
