//! The small readers the tools' summaries share: a field's length, a string or a placeholder,
//! an amount of money in its currency's minor unit.
//!
//! It owns how a summary reads a result leniently (a missing field reads as 0 or `?`, never a
//! panic: results are checked against their schema, but a summary must not be the place a
//! schema change crashes the host). It must not hold any tool's wording (each tool's entry
//! does).

use serde_json::Value;
use time::format_description::well_known::Rfc3339;
use time::{Date, OffsetDateTime, UtcOffset};

/// How a text is told to the user: their clock, when the front knows it, and their calendar.
/// A front that does not know the user's clock (an MCP client) tells times as they were
/// written.
#[derive(Debug, Clone, Copy, Default)]
pub struct Telling<'a> {
    /// The user's offset east of UTC and the current time.
    pub clock: Option<(UtcOffset, OffsetDateTime)>,
    /// The user's calendar events (each an object with `id`, `start`, `end`, maybe `title`).
    pub events: &'a [Value],
}

impl Telling<'_> {
    /// `value` (an RFC 3339 time) in the user's words: "today 16:30", "tomorrow 10:00",
    /// "Thu 26 Nov 19:00"; as written when the clock is unknown or the text is not a time.
    pub fn when(&self, value: &Value) -> String {
        match (self.clock, parse(value)) {
            (Some((offset, now)), Some(at)) => {
                let at = at.to_offset(offset);
                format!(
                    "{} {:02}:{:02}",
                    day_words(at.date(), now.to_offset(offset).date()),
                    at.hour(),
                    at.minute()
                )
            }
            _ => text(value),
        }
    }

    /// From `start` to `end` in the user's words: "tomorrow 10:00-11:00" on one day.
    pub fn span(&self, start: &Value, end: &Value) -> String {
        match (self.clock, parse(start), parse(end)) {
            (Some((offset, _)), Some(a), Some(b))
                if a.to_offset(offset).date() == b.to_offset(offset).date() =>
            {
                let b = b.to_offset(offset);
                format!("{}-{:02}:{:02}", self.when(start), b.hour(), b.minute())
            }
            (Some(_), _, _) => format!("{} to {}", self.when(start), self.when(end)),
            _ => format!("{} to {}", text(start), text(end)),
        }
    }

    /// `value` (a date, `YYYY-MM-DD`) in the user's words: "today", "tomorrow", "Thu 26 Nov";
    /// as written when the clock is unknown or the text is not a date.
    pub fn day(&self, value: &Value) -> String {
        let format = time::macros::format_description!("[year]-[month]-[day]");
        let date = value.as_str().and_then(|d| Date::parse(d, format).ok());
        match (self.clock, date) {
            (Some((offset, now)), Some(date)) => day_words(date, now.to_offset(offset).date()),
            _ => text(value),
        }
    }

    /// The titles (or ids) of the user's events that overlap [`start`, `end`), in calendar
    /// order.
    pub fn overlapping(&self, start: &Value, end: &Value) -> Vec<String> {
        let (Some(start), Some(end)) = (parse(start), parse(end)) else {
            return Vec::new();
        };
        self.events
            .iter()
            .filter(|e| match (parse(&e["start"]), parse(&e["end"])) {
                (Some(s), Some(e)) => s < end && start < e,
                _ => false,
            })
            .map(|e| {
                e["title"]
                    .as_str()
                    .map_or_else(|| text(&e["id"]), str::to_owned)
            })
            .collect()
    }
}

fn parse(value: &Value) -> Option<OffsetDateTime> {
    value
        .as_str()
        .and_then(|t| OffsetDateTime::parse(t, &Rfc3339).ok())
}

/// `date` seen from `today`.
fn day_words(date: Date, today: Date) -> String {
    match (date - today).whole_days() {
        0 => "today".to_owned(),
        1 => "tomorrow".to_owned(),
        -1 => "yesterday".to_owned(),
        _ => format!(
            "{} {} {}",
            &format!("{:?}", date.weekday())[..3],
            date.day(),
            &format!("{:?}", date.month())[..3]
        ),
    }
}

/// How many items `result[field]` holds (0 when it is not an array).
pub(super) fn count(result: &Value, field: &str) -> usize {
    result[field].as_array().map_or(0, Vec::len)
}

/// A string value, or `?`.
pub(super) fn text(value: &Value) -> String {
    value.as_str().unwrap_or("?").to_owned()
}

/// An unsigned integer value, or 0.
pub(super) fn number(value: &Value) -> u64 {
    value.as_u64().unwrap_or(0)
}

/// ISO 4217 currencies whose minor unit is not a hundredth: (code, decimals).
const MINOR_UNIT_EXCEPTIONS: &[(&str, u32)] = &[
    ("BHD", 3),
    ("CLP", 0),
    ("IQD", 3),
    ("ISK", 0),
    ("JOD", 3),
    ("JPY", 0),
    ("KRW", 0),
    ("KWD", 3),
    ("LYD", 3),
    ("OMR", 3),
    ("TND", 3),
    ("UGX", 0),
    ("VND", 0),
];

/// An amount in minor units as `12.34 EUR`.
pub(super) fn money(amount_minor: &Value, currency: &Value) -> String {
    let currency = currency.as_str().unwrap_or("?");
    let Some(amount) = amount_minor.as_i64() else {
        return format!("? {currency}");
    };
    let decimals = MINOR_UNIT_EXCEPTIONS
        .iter()
        .find(|(code, _)| *code == currency)
        .map_or(2, |(_, d)| *d);
    if decimals == 0 {
        return format!("{amount} {currency}");
    }
    let scale = 10u64.pow(decimals);
    let sign = if amount < 0 { "-" } else { "" };
    let abs = amount.unsigned_abs();
    format!(
        "{sign}{}.{:0width$} {currency}",
        abs / scale,
        abs % scale,
        width = decimals as usize
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_told_in_the_users_offset_and_words() {
        // Monday 2026-11-23 08:15 in Berlin (+01:00) is 07:15 UTC.
        let now = time::macros::datetime!(2026-11-23 07:15 UTC);
        let berlin = time::macros::offset!(+1);
        let events = [
            serde_json::json!({"id": "e1", "title": "Sprint prep", "start": "2026-11-23T15:00:00Z",
                "end": "2026-11-23T16:00:00Z"}),
            serde_json::json!({"id": "e2", "start": "2026-11-23T15:45:00+01:00",
                "end": "2026-11-23T17:00:00+01:00"}),
        ];
        let told = Telling {
            clock: Some((berlin, now)),
            events: &events,
        };
        let at = |t: &str| Value::from(t);
        // 09:00Z is 10:00 local tomorrow; 23:30Z on the 23rd is 00:30 on the 24th local.
        assert_eq!(told.when(&at("2026-11-24T09:00:00Z")), "tomorrow 10:00");
        assert_eq!(told.when(&at("2026-11-23T23:30:00Z")), "tomorrow 00:30");
        assert_eq!(told.when(&at("2026-11-23T16:30:00+01:00")), "today 16:30");
        assert_eq!(
            told.when(&at("2026-11-26T19:00:00+01:00")),
            "Thu 26 Nov 19:00"
        );
        assert_eq!(
            told.when(&at("2026-11-22T20:00:00+01:00")),
            "yesterday 20:00"
        );
        assert_eq!(told.when(&at("soon")), "soon", "not a time: as written");
        assert_eq!(
            told.span(&at("2026-11-24T09:00:00Z"), &at("2026-11-24T10:00:00Z")),
            "tomorrow 10:00-11:00"
        );
        assert_eq!(
            told.span(&at("2026-11-23T22:00:00Z"), &at("2026-11-23T23:30:00Z")),
            "today 23:00 to tomorrow 00:30"
        );
        assert_eq!(told.day(&at("2026-11-24")), "tomorrow");
        assert_eq!(told.day(&at("2026-11-30")), "Mon 30 Nov");
        // 16:00-16:45 local overlaps Sprint prep (16:00-17:00 local) and e2 (15:45-17:00),
        // named by title, else id; touching end to start is no overlap.
        let (start, end) = (
            at("2026-11-23T16:00:00+01:00"),
            at("2026-11-23T16:45:00+01:00"),
        );
        assert_eq!(told.overlapping(&start, &end), ["Sprint prep", "e2"]);
        assert!(
            told.overlapping(
                &at("2026-11-23T17:00:00+01:00"),
                &at("2026-11-23T18:00:00+01:00")
            )
            .is_empty()
        );
        // A front without the user's clock tells times as written.
        let plain = Telling::default();
        assert_eq!(
            plain.when(&at("2026-11-24T09:00:00Z")),
            "2026-11-24T09:00:00Z"
        );
        assert_eq!(plain.span(&at("S"), &at("E")), "S to E");
    }
    use serde_json::json;

    #[test]
    fn money_follows_the_currency_minor_unit() {
        assert_eq!(money(&json!(123456), &json!("EUR")), "1234.56 EUR");
        assert_eq!(money(&json!(-5), &json!("EUR")), "-0.05 EUR");
        assert_eq!(money(&json!(1500), &json!("JPY")), "1500 JPY");
        assert_eq!(money(&json!(1500), &json!("KWD")), "1.500 KWD");
        assert_eq!(money(&json!("x"), &json!("EUR")), "? EUR");
    }

    #[test]
    fn missing_fields_read_as_nothing() {
        let result = json!({"slots": [1, 2], "name": 7});
        assert_eq!(count(&result, "slots"), 2);
        assert_eq!(count(&result, "name"), 0);
        assert_eq!(text(&result["name"]), "?");
        assert_eq!(number(&result["missing"]), 0);
    }
}
