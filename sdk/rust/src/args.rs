//! Checks every agent makes on args that passed their schema: ranges, lengths in items and in
//! characters, and the tick context's shape, each failing with a [`ToolError::invalid_args`]
//! that names the field. (The host checks the schema before an agent runs; these checks are
//! for what a schema cannot say, and for agents called natively in tests.) Times and offsets
//! are [`crate::time`]'s.
//!
//! This module owns the wording of those errors; it must not hold any agent's domain rules.

use std::fmt::Display;

use serde_json::{Map, Value};

use crate::time::parse_time;
use crate::{ToolError, ToolResult};

/// A field's name made only when an error shows it: the list `0` (a field name itself), then
/// `[1]`. The checks below take any [`Display`] as the field, so a check that passes formats
/// nothing (a call's checks ran a format and an allocation for each name, per item).
#[derive(Debug, Clone, Copy)]
pub struct Item<F>(pub F, pub usize);

impl<F: Display> Display for Item<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}[{}]", self.0, self.1)
    }
}

/// Checks that `value` lies in `min..=max`.
pub fn check_range<T: PartialOrd + Display>(
    value: T,
    field: impl Display,
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
pub fn check_len<T>(items: &[T], field: impl Display, max: usize) -> ToolResult<()> {
    if items.len() > max {
        return Err(ToolError::invalid_args(format!(
            "{field}: at most {max} items, got {}",
            items.len()
        )));
    }
    Ok(())
}

/// Checks that `s` has between `min` and `max` characters; `field` is formatted only on error.
#[inline]
pub fn check_chars(s: &str, field: impl Display, min: usize, max: usize) -> ToolResult<()> {
    // A string has at most as many characters as bytes, and is non-empty iff it has one:
    // the common case needs no count.
    if min <= 1 && s.len() <= max && (min == 0 || !s.is_empty()) {
        return Ok(());
    }
    let n = s.chars().count();
    if n < min || n > max {
        return Err(ToolError::invalid_args(format!(
            "{field}: must have {min} to {max} characters, has {n}"
        )));
    }
    Ok(())
}

/// A string member of a JSON object (a tick context's item, read leniently) with `min_chars`
/// to `max_chars` characters, else None: absent, not a string or out of bounds are alike, and
/// what None means is the caller's rule.
pub fn str_member<'a>(
    object: &'a Map<String, Value>,
    key: &str,
    min_chars: usize,
    max_chars: usize,
) -> Option<&'a str> {
    object
        .get(key)
        .and_then(Value::as_str)
        .filter(|s| (min_chars..=max_chars).contains(&s.chars().count()))
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
    fn characters_at_their_bounds() {
        // "é" is one character in two bytes: bounds count characters.
        assert!(check_chars("ab", "f", 1, 2).is_ok());
        assert!(check_chars("éé", "f", 1, 2).is_ok());
        assert_eq!(
            check_chars("ééé", "title", 1, 2).unwrap_err().message,
            "title: must have 1 to 2 characters, has 3"
        );
        assert_eq!(
            check_chars("", "id", 1, 128).unwrap_err().message,
            "id: must have 1 to 128 characters, has 0"
        );
        assert!(check_chars("", "subject", 0, 500).is_ok());
        assert!(check_chars("a", "id", 1, 1).is_ok());
        assert!(check_chars("ab", "id", 2, 3).is_ok());
        assert!(check_chars("a", "id", 2, 3).is_err());
        let sender = Item("messages", 7);
        let error =
            check_chars(&"x".repeat(321), format_args!("{sender}.sender"), 1, 320).unwrap_err();
        assert_eq!(error.kind, ToolErrorKind::InvalidArgs);
        assert_eq!(
            error.message,
            "messages[7].sender: must have 1 to 320 characters, has 321"
        );
        // A check that passes never formats its field's name.
        struct Unformatted;
        impl Display for Unformatted {
            fn fmt(&self, _: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                unreachable!("a passing check formatted its field's name")
            }
        }
        assert!(check_chars(&"x".repeat(320), Unformatted, 1, 320).is_ok());
        assert!(check_chars(&"x".repeat(320), Unformatted, 2, 320).is_ok());
    }

    #[test]
    fn string_members_within_their_bounds() {
        let object = serde_json::json!({"id": "ab", "title": "é", "n": 5, "none": null});
        let object = object.as_object().unwrap();
        assert_eq!(str_member(object, "id", 1, 2), Some("ab"));
        assert_eq!(str_member(object, "id", 1, 1), None); // 2 > 1
        assert_eq!(str_member(object, "id", 3, 9), None); // 2 < 3
        assert_eq!(str_member(object, "title", 1, 1), Some("é")); // one character, two bytes
        assert_eq!(str_member(object, "n", 0, 9), None);
        assert_eq!(str_member(object, "none", 0, 9), None);
        assert_eq!(str_member(object, "absent", 0, 9), None);
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
