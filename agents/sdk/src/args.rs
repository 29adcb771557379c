//! Checks every agent makes on args that passed their schema: ranges, lengths and RFC 3339
//! times, each failing with a [`ToolError::invalid_args`] that names the field. (The host checks
//! the schema before an agent runs; these checks are for what a schema cannot say, and for
//! agents called natively in tests.)
//!
//! This module owns the wording of those errors; it must not hold any agent's domain rules.

use serde_json::{Map, Value};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use crate::{ToolError, ToolResult};

/// Longest RFC 3339 date-time accepted (the schemas' `maxLength` for `date-time` strings).
pub const TIME_CHARS_MAX: usize = 40;

/// Checks that `value` lies in `min..=max`.
pub fn check_range<T: PartialOrd + std::fmt::Display>(
    value: T,
    field: &str,
    min: T,
    max: T,
) -> ToolResult<()> {
    if value < min || value > max {
        return Err(ToolError::invalid_args(format!(
            "{field}: {value} is outside {min}..{max}"
        )));
    }
    Ok(())
}

/// Checks the number of items of an array argument.
pub fn check_len<T>(items: &[T], field: &str, max: usize) -> ToolResult<()> {
    if items.len() > max {
        return Err(ToolError::invalid_args(format!(
            "{field}: at most {max} items, got {}",
            items.len()
        )));
    }
    Ok(())
}

/// Parses an RFC 3339 date-time with offset into Unix seconds (UTC), dropping any fraction.
pub fn parse_time(s: &str, field: &str) -> ToolResult<i64> {
    if s.chars().count() > TIME_CHARS_MAX {
        return Err(ToolError::invalid_args(format!(
            "{field}: longer than {TIME_CHARS_MAX} characters"
        )));
    }
    OffsetDateTime::parse(s, &Rfc3339)
        .map(|t| t.unix_timestamp())
        .map_err(|e| {
            ToolError::invalid_args(format!(
                "{field}: {s:?} is not an RFC 3339 date-time with offset ({e})"
            ))
        })
}

/// Reads a tick context: it must be an object with an RFC 3339 `now`. Returns the object, the
/// `now` text as given and `now` in Unix seconds. Every other field is the agent's to read,
/// leniently.
pub fn tick_context(context: &Value) -> ToolResult<(&Map<String, Value>, &str, i64)> {
    let object = context
        .as_object()
        .ok_or_else(|| ToolError::invalid_args("tick context: expected a JSON object"))?;
    let Some(Value::String(now_text)) = object.get("now") else {
        return Err(ToolError::invalid_args(
            "tick context: `now` must be an RFC 3339 string",
        ));
    };
    let now = parse_time(now_text, "tick context: now")?;
    Ok((object, now_text, now))
}

/// ISO weekday (1 = Monday .. 7 = Sunday) of the day `day` days after 1970-01-01 (a Thursday).
pub fn weekday_of_day(day: i64) -> u8 {
    // rem_euclid(7) is in 0..7, so the cast cannot truncate.
    ((day + 3).rem_euclid(7) + 1) as u8
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ToolErrorKind;

    #[test]
    fn ranges_and_lengths_at_their_bounds() {
        assert!(check_range(5, "x", 5, 10).is_ok());
        assert!(check_range(10, "x", 5, 10).is_ok());
        let error = check_range(11, "x", 5, 10).unwrap_err();
        assert_eq!(error.kind, ToolErrorKind::InvalidArgs);
        assert_eq!(error.message, "x: 11 is outside 5..10");
        assert!(check_len(&[1, 2], "xs", 2).is_ok());
        assert_eq!(
            check_len(&[1, 2, 3], "xs", 2).unwrap_err().message,
            "xs: at most 2 items, got 3"
        );
    }

    #[test]
    fn times_and_weekdays() {
        // The same instant written with an offset and in UTC.
        assert_eq!(
            parse_time("2026-11-23T09:00:00+01:00", "t").unwrap(),
            parse_time("2026-11-23T08:00:00Z", "t").unwrap()
        );
        assert_eq!(parse_time("1970-01-02T00:00:00.9Z", "t").unwrap(), 86_400);
        assert!(parse_time("2026-11-23 08:00", "t").is_err());
        assert!(parse_time(&"9".repeat(41), "t").is_err());
        // Day 0 (1970-01-01) was a Thursday; day 4 a Monday; day -1 a Wednesday.
        assert_eq!(weekday_of_day(0), 4);
        assert_eq!(weekday_of_day(4), 1);
        assert_eq!(weekday_of_day(-1), 3);
    }

    #[test]
    fn tick_contexts_need_an_object_with_now() {
        let context = serde_json::json!({"now": "1970-01-01T00:01:00Z", "events": []});
        let (object, now_text, now) = tick_context(&context).unwrap();
        assert_eq!((now_text, now), ("1970-01-01T00:01:00Z", 60));
        assert!(object.contains_key("events"));
        assert!(tick_context(&serde_json::json!([])).is_err());
        assert!(tick_context(&serde_json::json!({"now": 5})).is_err());
        assert!(tick_context(&serde_json::json!({"now": "today"})).is_err());
    }
}
