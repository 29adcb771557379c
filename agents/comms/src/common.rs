//! Types and helpers shared by the comms tools: the message shape, quiet hours, addresses,
//! calendar dates of local days, fixed-point scores and signal text.
//!
//! It must not hold tool logic, and it must not keep its own time or argument helpers: times
//! (whole Unix seconds, fractions dropped), the user's fixed `utc_offset_minutes`, "HH:MM" and
//! local-day arithmetic are `aura_sdk::time`'s, ranges and lengths `aura_sdk::args`'. Scores are
//! integers in thousandths ("milli") and become JSON numbers with at most 3 decimals only when
//! serialized.

use std::fmt::Display;

use aura_sdk::args::{Item, check_chars};
use aura_sdk::time::{local_minute_of_day, parse_time, parse_time_of_day, try_parse_time};
use aura_sdk::{ToolError, ToolResult};
use serde::{Deserialize, Serialize};
use time::Date;

/// Longest message or thread id, in characters.
pub const MAX_ID_CHARS: usize = 128;
/// Longest sender or recipient, in characters: a 254-character address plus a display name.
pub const MAX_ADDRESS_CHARS: usize = 320;
/// Longest subject, in characters.
pub const MAX_SUBJECT_CHARS: usize = 500;
/// Longest message body, in characters.
pub const MAX_BODY_CHARS: usize = 20_000;
/// One inbox message, as `triage_inbox` takes it (and the tick context carries it).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Message {
    /// Caller's id of the message; unique within one call.
    pub id: String,
    /// Id of the conversation the message belongs to.
    pub thread_id: String,
    /// Sender: an address, optionally with a display name ("Ann Lee <ann@example.com>").
    pub sender: String,
    /// Subject line (may be empty).
    pub subject: String,
    /// Plain-text body (may be empty).
    pub body: String,
    /// RFC 3339 time the message was received.
    pub received_at: String,
}

impl Message {
    /// Checks the bounds of one message and parses its time; `list` and `index` name it in
    /// error messages (e.g. "messages[3].id"; formatted only on error).
    pub fn check(&self, list: &str, index: usize) -> ToolResult<i64> {
        let at = Item(list, index);
        check_chars(&self.id, format_args!("{at}.id"), 1, MAX_ID_CHARS)?;
        check_chars(
            &self.thread_id,
            format_args!("{at}.thread_id"),
            1,
            MAX_ID_CHARS,
        )?;
        check_chars(
            &self.sender,
            format_args!("{at}.sender"),
            1,
            MAX_ADDRESS_CHARS,
        )?;
        check_chars(
            &self.subject,
            format_args!("{at}.subject"),
            0,
            MAX_SUBJECT_CHARS,
        )?;
        check_chars(&self.body, format_args!("{at}.body"), 0, MAX_BODY_CHARS)?;
        match try_parse_time(&self.received_at) {
            Some(t) => Ok(t),
            None => parse_time(&self.received_at, format_args!("{at}.received_at")),
        }
    }
}

/// Quiet hours in the user's local time. `start > end` wraps midnight.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct QuietHours {
    /// Local start, "HH:MM" (00:00..23:59), inclusive.
    pub start: String,
    /// Local end, "HH:MM" (00:00..23:59), exclusive; must differ from `start`.
    pub end: String,
}

/// Quiet hours after checking: minutes after local midnight.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quiet {
    pub start_min: i64,
    pub end_min: i64,
}

impl QuietHours {
    /// Checks the quiet hours; `field` names them in error messages.
    pub fn check(&self, field: impl Display) -> ToolResult<Quiet> {
        // Quiet hours are moments in the day: 24:00 is none (use 00:00).
        let start_min = parse_time_of_day(&self.start, format_args!("{field}.start"))?;
        let end_min = parse_time_of_day(&self.end, format_args!("{field}.end"))?;
        if start_min == end_min {
            return Err(ToolError::invalid_args(format!(
                "{field}: start and end are both {:?}; quiet hours must have a length (leave \
                 quiet_hours out for none)",
                self.start
            )));
        }
        Ok(Quiet { start_min, end_min })
    }
}

impl Quiet {
    /// Whether the instant `unix` falls in the quiet hours at `offset_minutes`: the local
    /// minute m is quiet when start <= m < end, or, when the hours wrap midnight (start > end),
    /// when m >= start or m < end.
    pub fn contains(&self, unix: i64, offset_minutes: i32) -> bool {
        let minute = local_minute_of_day(unix, offset_minutes);
        if self.start_min < self.end_min {
            self.start_min <= minute && minute < self.end_min
        } else {
            minute >= self.start_min || minute < self.end_min
        }
    }
}

/// The calendar date of Unix day `day` (the one conversion of [`aura_sdk::date`]), if `time`
/// can represent it.
pub fn date_of_day(day: i64) -> Option<Date> {
    let (year, month, day) = aura_sdk::date::civil_from_days(day);
    let month = time::Month::try_from(u8::try_from(month).ok()?).ok()?;
    Date::from_calendar_date(i32::try_from(year).ok()?, month, u8::try_from(day).ok()?).ok()
}

/// The Unix day of a calendar date.
pub fn day_of_date(date: Date) -> i64 {
    aura_sdk::date::days_from_civil(
        i64::from(date.year()),
        u32::from(u8::from(date.month())),
        u32::from(date.day()),
    )
}

/// The address part of a sender or recipient, trimmed: the text inside the last `<…>` when
/// there is one ("Ann Lee <ann@example.com>" → "ann@example.com", "Ann <>" → ""), else the
/// whole string.
pub fn address_of(sender: &str) -> &str {
    let trimmed = sender.trim();
    if let Some(open) = trimmed.rfind('<')
        && let Some(close) = trimmed[open..].find('>')
    {
        return trimmed[open + 1..open + close].trim();
    }
    trimmed
}

/// The address used to compare senders: [`address_of`], lower-cased character by character
/// (the first character of each lower-case mapping, so the length in characters never grows
/// past the bound of the field it came from).
pub fn normalize_address(sender: &str) -> String {
    address_of(sender)
        .chars()
        .map(|c| c.to_lowercase().next().unwrap_or(c))
        .collect()
}

/// The display name in "Ann Lee <ann@example.com>" (quotes stripped), if any.
pub fn display_name_of(sender: &str) -> Option<&str> {
    let trimmed = sender.trim();
    let open = trimmed.rfind('<')?;
    trimmed[open..].find('>')?;
    let name = trimmed[..open]
        .trim()
        .trim_matches(|c| c == '"' || c == '\'')
        .trim();
    (!name.is_empty()).then_some(name)
}

/// A display name cleaned for greetings: surrounding quotes dropped, whitespace collapsed.
pub fn collapse_name(raw: &str) -> String {
    let trimmed = raw.trim().trim_matches(|c| c == '"' || c == '\'');
    trimmed.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A score in thousandths as a JSON number with at most 3 decimals (e.g. 734 → 0.734).
///
/// The division yields the double nearest to the decimal, which serde_json and RFC 8785 both
/// print with the shortest round-tripping digits, so the JSON text has at most 3 decimals.
pub fn milli_to_number(milli: i64) -> f64 {
    milli as f64 / 1000.0
}

/// Replaces control characters (which JSON escapes to 6 bytes each) with '?' and cuts to
/// `max` characters: for the short machine-readable strings of tick signals.
pub fn signal_text(s: &str, max: usize) -> String {
    s.chars()
        .take(max)
        .map(|c| if c.is_control() { '?' } else { c })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use aura_sdk::ToolErrorKind;
    use aura_sdk::time::{format_time, local_day, local_instant, weekday_of_day};

    #[test]
    fn hh_mm_parses_and_rejects() {
        // Quiet hours read "HH:MM" as a moment in the day: 24:00 is refused.
        assert_eq!(parse_time_of_day("00:00", "f").unwrap(), 0);
        assert_eq!(parse_time_of_day("22:30", "f").unwrap(), 1350); // 22·60 + 30
        assert_eq!(parse_time_of_day("23:59", "f").unwrap(), 1439);
        for bad in ["24:00", "9:00", "09:60", "0900", "ab:cd", ""] {
            let e = parse_time_of_day(bad, "f").unwrap_err();
            assert_eq!(e.kind, ToolErrorKind::InvalidArgs, "{bad}");
        }
    }

    #[test]
    fn quiet_hours_wrap_midnight() {
        // 22:00–07:00 at +01:00. 2026-11-23T21:30Z is 22:30 local → quiet; 06:59Z is 07:59
        // local → not; 05:59Z is 06:59 local → quiet; 21:00Z is 22:00 local → quiet (start
        // inclusive); 06:00Z is 07:00 local → not (end exclusive).
        let quiet = QuietHours {
            start: "22:00".into(),
            end: "07:00".into(),
        }
        .check("q")
        .unwrap();
        let at = |s: &str| parse_time(s, "t").unwrap();
        assert!(quiet.contains(at("2026-11-23T21:30:00Z"), 60));
        assert!(!quiet.contains(at("2026-11-23T06:59:00Z"), 60));
        assert!(quiet.contains(at("2026-11-23T05:59:00Z"), 60));
        assert!(quiet.contains(at("2026-11-23T21:00:00Z"), 60));
        assert!(!quiet.contains(at("2026-11-23T06:00:00Z"), 60));
        // A daytime window 12:00–13:00 UTC does not wrap.
        let lunch = QuietHours {
            start: "12:00".into(),
            end: "13:00".into(),
        }
        .check("q")
        .unwrap();
        assert!(lunch.contains(at("2026-11-23T12:00:00Z"), 0));
        assert!(!lunch.contains(at("2026-11-23T13:00:00Z"), 0));
        assert!(!lunch.contains(at("2026-11-23T11:59:00Z"), 0));
        let e = QuietHours {
            start: "22:00".into(),
            end: "22:00".into(),
        }
        .check("quiet_hours")
        .unwrap_err();
        assert_eq!(e.kind, ToolErrorKind::InvalidArgs);
        assert!(e.message.starts_with("quiet_hours"), "{}", e.message);
    }

    #[test]
    fn local_days_and_instants() {
        // 2026-11-23T00:00Z = 20780 days × 86400 = 1_795_392_000 (a Monday).
        let midnight = 1_795_392_000;
        assert_eq!(parse_time("2026-11-23T00:00:00Z", "t").unwrap(), midnight);
        assert_eq!(local_day(midnight, 0), 20_780);
        assert_eq!(weekday_of_day(20_780), 1);
        // 23:30 local at -05:00 on the 22nd is 04:30Z on the 23rd.
        let t = midnight + 4 * 3600 + 1800;
        assert_eq!(local_day(t, -300), 20_779);
        assert_eq!(local_minute_of_day(t, -300), 23 * 60 + 30);
        assert_eq!(local_instant(20_779, 23 * 60 + 30, -300), t);
        let date = date_of_day(20_780).unwrap();
        assert_eq!(
            (date.year(), u8::from(date.month()), date.day()),
            (2026, 11, 23)
        );
        assert_eq!(day_of_date(date), 20_780);
        assert_eq!(format_time(t, -300).unwrap(), "2026-11-22T23:30:00-05:00");
        assert_eq!(format_time(t, 0).unwrap(), "2026-11-23T04:30:00Z");
        assert!(format_time(253_402_300_800, 0).ok().is_none()); // 10000-01-01T00:00:00Z
        assert!(format_time(253_402_300_000, 60).ok().is_none()); // 9999-12-31T23:46:40Z → 10000 at +01:00
    }

    #[test]
    fn addresses_and_names() {
        assert_eq!(address_of(" Ann Lee <ann@example.com> "), "ann@example.com");
        assert_eq!(address_of("ann@example.com"), "ann@example.com");
        assert_eq!(address_of("broken <"), "broken <");
        assert_eq!(address_of("Ann < >"), "");
        assert_eq!(
            normalize_address("Ann <Ann@Example.COM>"),
            "ann@example.com"
        );
        assert_eq!(
            display_name_of("\"Lee, Ann\" <ann@example.com>"),
            Some("Lee, Ann")
        );
        assert_eq!(display_name_of("ann@example.com"), None);
        assert_eq!(display_name_of("<ann@example.com>"), None);
    }

    #[test]
    fn milli_numbers_print_with_three_decimals_at_most() {
        let v = |m| serde_json::to_string(&milli_to_number(m)).unwrap();
        assert_eq!(v(734), "0.734");
        assert_eq!(v(600), "0.6");
        assert_eq!(v(1), "0.001");
        assert_eq!(v(-125), "-0.125");
        assert_eq!(v(1000), "1.0");
        assert_eq!(aura_sdk::to_canonical(&milli_to_number(1000)).unwrap(), "1");
        assert_eq!(
            aura_sdk::to_canonical(&milli_to_number(70)).unwrap(),
            "0.07"
        );
    }

    #[test]
    fn signal_text_is_bounded_and_printable() {
        assert_eq!(signal_text("a\u{1}b\nc", 10), "a?b?c");
        assert_eq!(signal_text("abcdef", 3), "abc");
    }
}
