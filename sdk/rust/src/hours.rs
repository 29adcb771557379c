//! Working hours as every agent reads them: a working day's local "HH:MM" start and end (the
//! end up to 24:00 and after the start), and, where an agent takes them, the ISO weekdays they
//! apply to.
//!
//! It owns the one reading of working hours: strictly from a tool's args (each error a
//! [`ToolError::invalid_args`] naming the field), and leniently from a tick's profile
//! ([`ProfileHours`]: unusable hours are none). Overnight hours are refused (split them, or use
//! 00:00/24:00). It must not decide what working hours are for (the agents do).

use std::fmt::Display;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::time::{hh_mm_refused, try_parse_hh_mm};
use crate::{ToolError, ToolResult};

/// A working day's span in the user's local time (calendar's `break_after` and wellness'
/// `suggest_break` take only this).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct DayHours {
    /// Local start of the working day, "HH:MM" (00:00..23:59).
    pub start: String,
    /// Local end of the working day, "HH:MM" (00:01..24:00); after `start`.
    pub end: String,
}

impl DayHours {
    /// Minutes after local midnight of the start and the end; `field` names them in errors.
    pub fn check(&self, field: impl Display) -> ToolResult<(i64, i64)> {
        check_span(&self.start, &self.end, field)
    }
}

/// Working hours in the user's local time, on the ISO weekdays they apply to (calendar's
/// `find_free_slots` and `schedule_event` take these).
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
    pub fn check(&self, field: impl Display) -> ToolResult<Hours> {
        let (start_min, end_min) = check_span(&self.start, &self.end, &field)?;
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

/// A working day from `start` to `end` ("HH:MM" each, the end after the start): minutes after
/// local midnight of both. The field names of an error are only made when there is one.
pub fn check_span(start: &str, end: &str, field: impl Display) -> ToolResult<(i64, i64)> {
    let minute = |text: &str, part: &str| {
        try_parse_hh_mm(text).ok_or_else(|| hh_mm_refused(text, format_args!("{field}.{part}")))
    };
    let (start_min, end_min) = (minute(start, "start")?, minute(end, "end")?);
    if end_min <= start_min {
        return Err(ToolError::invalid_args(format!(
            "{field}: end {end:?} must be after start {start:?} (overnight working hours are not \
             supported; split them or use 00:00/24:00)"
        )));
    }
    Ok((start_min, end_min))
}

/// Working hours as a tick's profile states them (`{start, end, weekdays?}`), read leniently:
/// usable when start and end are "HH:MM" with the end after the start, and `weekdays`, when
/// given, is an array of ISO weekdays 1..7 (repeats dropped, at least one). Anything else makes
/// them unusable (`None` from [`ProfileHours::read`]); members beside these are ignored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfileHours {
    /// "HH:MM" start, as the profile gives it.
    pub start: String,
    /// "HH:MM" end, as the profile gives it.
    pub end: String,
    /// The weekdays as given, repeats dropped; `None` when the profile gives none.
    pub weekdays: Option<Vec<u8>>,
    /// Minutes after local midnight the working day starts.
    pub start_min: i64,
    /// Minutes after local midnight it ends, after `start_min`.
    pub end_min: i64,
}

impl ProfileHours {
    /// The profile's working hours, when usable.
    pub fn read(value: &Value) -> Option<Self> {
        let hours = value.as_object()?;
        let start = hours.get("start")?.as_str()?;
        let end = hours.get("end")?.as_str()?;
        let (start_min, end_min) = check_span(start, end, "working_hours").ok()?;
        let weekdays = match hours.get("weekdays") {
            None | Some(Value::Null) => None,
            Some(Value::Array(days)) => {
                let mut kept: Vec<u8> = Vec::with_capacity(7);
                for day in days {
                    let day = day.as_u64().filter(|d| (1..=7).contains(d))? as u8;
                    if !kept.contains(&day) {
                        kept.push(day);
                    }
                }
                if kept.is_empty() {
                    return None;
                }
                Some(kept)
            }
            Some(_) => return None,
        };
        Some(Self {
            start: start.to_owned(),
            end: end.to_owned(),
            weekdays,
            start_min,
            end_min,
        })
    }

    /// Whether ISO weekday `weekday` (1..7) is a working day: one of the given weekdays, or
    /// Monday to Friday when the profile gives none.
    pub fn works_on(&self, weekday: u8) -> bool {
        match &self.weekdays {
            Some(days) => days.contains(&weekday),
            None => (1..=5).contains(&weekday),
        }
    }

    /// The working day's span, as a tool's `working_hours` {start, end} takes it.
    pub fn day(&self) -> DayHours {
        DayHours {
            start: self.start.clone(),
            end: self.end.clone(),
        }
    }

    /// As a tool's `working_hours` {start, end, weekdays?} takes them (weekdays only when the
    /// profile gave them).
    pub fn to_json(&self) -> Value {
        let mut hours = json!({ "start": self.start, "end": self.end });
        if let Some(days) = &self.weekdays {
            hours["weekdays"] = json!(days);
        }
        hours
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ToolErrorKind;

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
    fn a_day_span_is_the_same_rule_without_weekdays() {
        let day = |s: &str, e: &str| DayHours {
            start: s.into(),
            end: e.into(),
        };
        assert_eq!(day("09:00", "17:00").check("wh").unwrap(), (540, 1020));
        assert_eq!(day("00:00", "24:00").check("wh").unwrap(), (0, 1440));
        let e = day("17:00", "09:00").check("working_hours").unwrap_err();
        assert_eq!(
            e.message,
            "working_hours: end \"09:00\" must be after start \"17:00\" (overnight working hours \
             are not supported; split them or use 00:00/24:00)"
        );
        assert!(
            day("9:00", "17:00")
                .check("wh")
                .unwrap_err()
                .message
                .contains("wh.start")
        );
        assert!(
            day("09:00", "24:01")
                .check("wh")
                .unwrap_err()
                .message
                .contains("wh.end")
        );
    }

    #[test]
    fn a_profiles_hours_are_read_leniently_by_one_rule() {
        let read = |v: Value| ProfileHours::read(&v);
        let hours =
            read(json!({"start": "09:00", "end": "17:30", "weekdays": [3, 1, 3], "tz": "x"}))
                .unwrap();
        assert_eq!(hours.weekdays, Some(vec![3, 1]));
        assert_eq!((hours.start_min, hours.end_min), (540, 1050));
        assert!(hours.works_on(1) && hours.works_on(3) && !hours.works_on(2));
        assert_eq!(
            hours.to_json(),
            json!({"start": "09:00", "end": "17:30", "weekdays": [3, 1]})
        );
        let weekdays = read(json!({"start": "09:00", "end": "17:00"})).unwrap();
        assert_eq!(weekdays.weekdays, None);
        assert!(weekdays.works_on(5) && !weekdays.works_on(6));
        assert_eq!(
            weekdays.to_json(),
            json!({"start": "09:00", "end": "17:00"})
        );
        assert!(read(json!({"start": "09:00", "end": "17:00", "weekdays": null})).is_some());
        // Eight entries, repeats dropped: one weekday.
        let repeated =
            read(json!({"start": "09:00", "end": "17:00", "weekdays": [1, 1, 1, 1, 1, 1, 1, 1]}));
        assert_eq!(repeated.unwrap().weekdays, Some(vec![1]));
        for unusable in [
            json!({"start": "17:00", "end": "09:00"}),
            json!({"start": "9:00", "end": "17:00"}),
            json!({"start": "09:00"}),
            json!({"start": "09:00", "end": "17:00", "weekdays": []}),
            json!({"start": "09:00", "end": "17:00", "weekdays": [0]}),
            json!({"start": "09:00", "end": "17:00", "weekdays": "mon"}),
            json!("09:00-17:00"),
        ] {
            assert_eq!(read(unusable.clone()), None, "{unusable}");
        }
    }
}
