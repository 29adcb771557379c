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

/// Parses an RFC 3339 date-time with offset into Unix seconds (UTC), dropping any fraction.
pub fn parse_time(s: &str, field: &str) -> ToolResult<i64> {
    if s.chars().count() > MAX_TIME_CHARS {
        return Err(ToolError::invalid_args(format!(
            "{field}: longer than {MAX_TIME_CHARS} characters"
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

/// ISO weekday (1 = Monday .. 7 = Sunday) of the day `day` days after 1970-01-01 (a Thursday).
pub fn weekday_of_day(day: i64) -> u8 {
    // rem_euclid(7) is in 0..7, so the cast cannot truncate.
    ((day + 3).rem_euclid(7) + 1) as u8
}

/// Whole minutes since the epoch at or after `secs` (rounded up).
pub fn minutes_ceil(secs: i64) -> i64 {
    secs.div_euclid(SECS_PER_MINUTE) + i64::from(secs.rem_euclid(SECS_PER_MINUTE) != 0)
}

/// Whole minutes since the epoch at or before `secs` (rounded down).
pub fn minutes_floor(secs: i64) -> i64 {
    secs.div_euclid(SECS_PER_MINUTE)
}

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

/// Checks a `utc_offset_minutes` argument.
pub fn check_offset(offset: i32, field: &str) -> ToolResult<()> {
    check_range(offset, field, -MAX_OFFSET_MINUTES, MAX_OFFSET_MINUTES)
}

/// A tiny JSON Schema checker for the keywords the wellness schemas use, so tests can check that
/// what Rust serializes is exactly what the result schemas allow (the host validates with a real
/// validator; this only catches drift between the two in unit tests). Copied from the calendar
/// agent, reading `schemas/wellness/`.
#[cfg(test)]
pub mod schema_check {
    use serde_json::Value;

    /// Loads `schemas/wellness/<name>` from the workspace.
    pub fn load(name: &str) -> Value {
        let path = format!(
            "{}/../../schemas/wellness/{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    /// Panics with a path if `value` does not satisfy `schema`.
    pub fn assert_valid(schema: &Value, value: &Value) {
        if let Err(e) = check(schema, value, "$") {
            panic!("{e}\nvalue: {value}");
        }
    }

    /// Whether `value` satisfies `schema`.
    pub fn is_valid(schema: &Value, value: &Value) -> bool {
        check(schema, value, "$").is_ok()
    }

    fn check(schema: &Value, value: &Value, at: &str) -> Result<(), String> {
        let s = schema
            .as_object()
            .ok_or(format!("{at}: schema is not an object"))?;
        for key in s.keys() {
            let known = [
                "$schema",
                "$id",
                "title",
                "description",
                "type",
                "properties",
                "required",
                "additionalProperties",
                "items",
                "maxItems",
                "minItems",
                "uniqueItems",
                "maxLength",
                "minLength",
                "minimum",
                "maximum",
                "enum",
                "const",
                "pattern",
                "format",
                "default",
                "examples",
                "dependentRequired",
            ];
            if !known.contains(&key.as_str()) {
                return Err(format!(
                    "{at}: schema keyword {key} unknown to the test checker"
                ));
            }
        }
        if let Some(t) = s.get("type").and_then(Value::as_str) {
            let ok = match t {
                "object" => value.is_object(),
                "array" => value.is_array(),
                "string" => value.is_string(),
                "integer" => value.is_i64() || value.is_u64(),
                "boolean" => value.is_boolean(),
                other => return Err(format!("{at}: type {other} unknown to the test checker")),
            };
            if !ok {
                return Err(format!("{at}: expected {t}, got {value}"));
            }
        }
        if let Some(options) = s.get("enum").and_then(Value::as_array)
            && !options.contains(value)
        {
            return Err(format!("{at}: {value} not in enum"));
        }
        if let Some(c) = s.get("const")
            && c != value
        {
            return Err(format!("{at}: {value} is not {c}"));
        }
        match value {
            Value::Object(map) => {
                if s.get("additionalProperties") != Some(&Value::Bool(false)) {
                    return Err(format!(
                        "{at}: object schema without additionalProperties:false"
                    ));
                }
                let props = s.get("properties").and_then(Value::as_object);
                let empty = serde_json::Map::new();
                let props = props.unwrap_or(&empty);
                for req in s
                    .get("required")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    let req = req.as_str().unwrap();
                    if !map.contains_key(req) {
                        return Err(format!("{at}: missing required {req}"));
                    }
                }
                if let Some(deps) = s.get("dependentRequired").and_then(Value::as_object) {
                    for (key, needs) in deps {
                        if map.contains_key(key) {
                            for need in needs.as_array().unwrap() {
                                if !map.contains_key(need.as_str().unwrap()) {
                                    return Err(format!("{at}: {key} needs {need}"));
                                }
                            }
                        }
                    }
                }
                for (key, v) in map {
                    let sub = props
                        .get(key)
                        .ok_or(format!("{at}: property {key} not allowed"))?;
                    check(sub, v, &format!("{at}.{key}"))?;
                }
            }
            Value::Array(items) => {
                let max = s.get("maxItems").and_then(Value::as_u64);
                let max = max.ok_or(format!("{at}: array schema without maxItems"))?;
                if items.len() as u64 > max {
                    return Err(format!("{at}: more than {max} items"));
                }
                if let Some(min) = s.get("minItems").and_then(Value::as_u64)
                    && (items.len() as u64) < min
                {
                    return Err(format!("{at}: fewer than {min} items"));
                }
                if s.get("uniqueItems") == Some(&Value::Bool(true)) {
                    for (i, item) in items.iter().enumerate() {
                        if items[..i].contains(item) {
                            return Err(format!("{at}: duplicate item {item}"));
                        }
                    }
                }
                let sub = s
                    .get("items")
                    .ok_or(format!("{at}: array schema without items"))?;
                for (i, item) in items.iter().enumerate() {
                    check(sub, item, &format!("{at}[{i}]"))?;
                }
            }
            Value::String(text) => {
                let n = text.chars().count() as u64;
                let max = s.get("maxLength").and_then(Value::as_u64);
                let max = max.ok_or(format!("{at}: string schema without maxLength"))?;
                if n > max {
                    return Err(format!("{at}: longer than {max}"));
                }
                if let Some(min) = s.get("minLength").and_then(Value::as_u64)
                    && n < min
                {
                    return Err(format!("{at}: shorter than {min}"));
                }
                if s.get("format").and_then(Value::as_str) == Some("date-time") {
                    let parsed = time::OffsetDateTime::parse(
                        text,
                        &time::format_description::well_known::Rfc3339,
                    );
                    if parsed.is_err() {
                        return Err(format!("{at}: {text:?} is not a date-time"));
                    }
                }
            }
            Value::Number(n) => {
                let n = n.as_i64().ok_or(format!("{at}: {n} is not an i64"))?;
                let min = s.get("minimum").and_then(Value::as_i64);
                let max = s.get("maximum").and_then(Value::as_i64);
                let (min, max) = min
                    .zip(max)
                    .ok_or(format!("{at}: integer without bounds"))?;
                if n < min || n > max {
                    return Err(format!("{at}: {n} outside {min}..{max}"));
                }
            }
            Value::Bool(_) | Value::Null => {}
        }
        Ok(())
    }

    /// Walks a whole schema and checks the house rules: descriptions everywhere, bounds on
    /// every string, array and integer, `additionalProperties: false` on every object.
    pub fn assert_house_rules(schema: &Value, at: &str) {
        let s = schema
            .as_object()
            .unwrap_or_else(|| panic!("{at}: not an object"));
        assert!(
            s.get("description")
                .and_then(Value::as_str)
                .is_some_and(|d| !d.is_empty()),
            "{at}: no description"
        );
        match s.get("type").and_then(Value::as_str) {
            Some("object") => {
                assert_eq!(
                    s.get("additionalProperties"),
                    Some(&Value::Bool(false)),
                    "{at}"
                );
                let props = s["properties"].as_object().unwrap();
                for req in s
                    .get("required")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    assert!(
                        props.contains_key(req.as_str().unwrap()),
                        "{at}: required {req}"
                    );
                }
                for (key, sub) in props {
                    assert_house_rules(sub, &format!("{at}.{key}"));
                }
            }
            Some("array") => {
                assert!(
                    s.get("maxItems").is_some_and(Value::is_u64),
                    "{at}: maxItems"
                );
                assert_house_rules(&s["items"], &format!("{at}[]"));
            }
            Some("string") => {
                assert!(
                    s.get("maxLength").is_some_and(Value::is_u64),
                    "{at}: maxLength"
                );
                if s.get("format").and_then(Value::as_str) == Some("date-time") {
                    assert_eq!(s["maxLength"], 40, "{at}: date-time maxLength");
                }
            }
            Some("integer") => {
                assert!(s.get("minimum").is_some_and(Value::is_i64), "{at}: minimum");
                assert!(s.get("maximum").is_some_and(Value::is_i64), "{at}: maximum");
            }
            Some("boolean") => {}
            other => panic!("{at}: unexpected type {other:?}"),
        }
    }

    /// Checks the top of a wellness schema: draft, $id, object.
    pub fn assert_header(schema: &Value, name: &str) {
        assert_eq!(
            schema["$schema"], "https://json-schema.org/draft/2020-12/schema",
            "{name}"
        );
        assert_eq!(
            schema["$id"],
            format!("https://aura.local/schemas/wellness/{name}"),
            "{name}"
        );
        assert_eq!(schema["type"], "object", "{name}");
        assert_house_rules(schema, name);
    }

    /// Both schemas of `tool`: headers and house rules checked, every args example valid.
    /// Returns (args schema, result schema, examples).
    pub fn tool_schemas(tool: &str) -> (Value, Value, Vec<Value>) {
        let args_name = format!("{tool}.args.json");
        let result_name = format!("{tool}.result.json");
        let args = load(&args_name);
        assert_header(&args, &args_name);
        let result = load(&result_name);
        assert_header(&result, &result_name);
        let examples = args["examples"].as_array().unwrap().clone();
        assert_eq!(examples.len(), 1, "{args_name}: one example");
        for example in &examples {
            assert_valid(&args, example);
        }
        (args, result, examples)
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
