//! The words the tools' summaries share: a person's name from a mail address, an event's
//! title from its id, a time in the person's day, an amount in its currency, a length of time,
//! and the cuts that fit a line to the watch and a sentence to the ear.
//!
//! It owns how a summary reads a result leniently (a missing field reads as 0 or `?`, never a
//! panic: results are checked against their schema, but a summary must not be the place a
//! schema change crashes the host), and that what it gives a person names things the way the
//! person does: never an internal id (an item it cannot find is "an event", "a message").
//! It must not hold any tool's wording (each tool's entry does).

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
    /// The user's messages (each an object with `id`, `sender`, `subject`): what a result that
    /// names a message by id is told by.
    pub messages: &'a [Value],
    /// The news subjects this decision tells (`budget:dining/EUR`, `conflict:e1/e2`): a
    /// summary of a result that holds more than its news leads with them.
    pub news: &'a [String],
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

    /// `value` (an RFC 3339 time) as said in a sentence: "at 16:30" today, "tomorrow at
    /// 10:00", "Thu 26 Nov at 19:00"; "at" and the text as written when the clock is unknown.
    pub fn at(&self, value: &Value) -> String {
        let when = self.when(value);
        match when.strip_prefix("today ") {
            Some(time) => format!("at {time}"),
            None => match when.rsplit_once(' ') {
                Some((day, time)) if self.clock.is_some() && parse(value).is_some() => {
                    format!("{day} at {time}")
                }
                _ => format!("at {when}"),
            },
        }
    }

    /// The event with id `id`, if the user's calendar has it.
    pub fn event(&self, id: &Value) -> Option<&Value> {
        id.as_str()
            .and_then(|id| self.events.iter().find(|e| e["id"] == id))
    }

    /// The title of the event with id `id`: "an event" when the calendar does not have it or
    /// it has no title (never the id).
    pub fn event_title(&self, id: &Value) -> String {
        self.event(id)
            .and_then(|e| e["title"].as_str())
            .map_or_else(|| "an event".to_owned(), str::to_owned)
    }

    /// Whether `subject` is news this decision tells.
    pub fn is_news(&self, subject: &str) -> bool {
        self.news.iter().any(|s| s == subject)
    }

    /// The message with id `id`, if the user's inbox has it.
    pub fn message(&self, id: &Value) -> Option<&Value> {
        id.as_str()
            .and_then(|id| self.messages.iter().find(|m| m["id"] == id))
    }

    /// The titles of the user's events that overlap [`start`, `end`), in calendar order
    /// ("an event" for one without a title).
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
                    .map_or_else(|| "an event".to_owned(), str::to_owned)
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

/// The person a mail address names: the display name of `Ute Hartmann <ute@example.de>`,
/// else the address's local part in words (`markus.vogel@x` → "Markus Vogel"); "someone"
/// when there is neither.
pub fn person(sender: &Value) -> String {
    let sender = sender.as_str().unwrap_or("").trim();
    if let Some((name, _)) = sender.split_once('<') {
        let name = name.trim().trim_matches('"').trim();
        if !name.is_empty() {
            return name.to_owned();
        }
    }
    let address = sender.trim_start_matches('<').trim_end_matches('>');
    let local = address.split('@').next().unwrap_or("");
    let words: Vec<String> = local
        .split(['.', '_', '-', '+'])
        .filter(|w| !w.is_empty() && !w.bytes().all(|b| b.is_ascii_digit()))
        .map(capitalized)
        .collect();
    match words.is_empty() {
        true => "someone".to_owned(),
        false => words.join(" "),
    }
}

/// `word` with its first letter in upper case.
pub fn capitalized(word: &str) -> String {
    let mut chars = word.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// `n` and the noun, singular or plural: "1 bill", "3 bills".
pub fn counted(n: usize, one: &str, many: &str) -> String {
    match n {
        1 => format!("1 {one}"),
        _ => format!("{n} {many}"),
    }
}

/// A length of time as a person says it: "45 min", "6 h", "5 h 52 min".
pub fn duration(minutes: u64) -> String {
    match (minutes / 60, minutes % 60) {
        (0, m) => format!("{m} min"),
        (h, 0) => format!("{h} h"),
        (h, m) => format!("{h} h {m} min"),
    }
}

/// `text` fitted to a line of at most `max` characters: cut at the last word that fits, with
/// an ellipsis (a single word longer than the line is cut inside it).
pub fn fit_line(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let room = max.saturating_sub(1);
    let head: String = text.chars().take(room).collect();
    let cut = match text.chars().nth(room) {
        // The cut falls between words: keep the whole of the head.
        Some(next) if next.is_whitespace() => head.trim_end().to_owned(),
        _ => match head.rfind(char::is_whitespace) {
            Some(at) if at > 0 => head[..at].to_owned(),
            _ => head,
        },
    };
    let cut = cut.trim_end_matches([',', ';', ':', ' ']);
    format!("{cut}…")
}

/// `text` fitted to a sentence of at most `max` words: cut after the last word that fits, the
/// sentence closed with a full stop.
pub fn fit_speech(text: &str, max: usize) -> String {
    let words: Vec<&str> = text.split_whitespace().collect();
    if words.len() <= max {
        return words.join(" ");
    }
    let kept = words[..max].join(" ");
    let kept = kept.trim_end_matches([',', ';', ':', '.', '-']);
    format!("{kept}.")
}

/// The decimal numbers in `text` that are not amounts of money: "0.75" in "urgency 0.75",
/// not "649.00" in "649.00 EUR" (digits, a point, digits, then a space and a three-letter
/// currency code). What a person is shown must have none: a score or a float is not a word.
pub fn raw_numbers(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut found = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if !chars[i].is_ascii_digit() {
            i += 1;
            continue;
        }
        let start = i;
        while i < chars.len() && chars[i].is_ascii_digit() {
            i += 1;
        }
        let decimals = i + 1 < chars.len() && chars[i] == '.' && chars[i + 1].is_ascii_digit();
        if !decimals {
            continue;
        }
        i += 1;
        while i < chars.len() && chars[i].is_ascii_digit() {
            i += 1;
        }
        let currency = chars.get(i) == Some(&' ')
            && chars.len() >= i + 4
            && chars[i + 1..i + 4].iter().all(char::is_ascii_uppercase)
            && chars.get(i + 4).is_none_or(|c| !c.is_alphanumeric());
        if !currency {
            found.push(chars[start..i].iter().collect());
        }
    }
    found
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
            ..Telling::default()
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
        // named by title, else "an event" (never its id); touching end to start is no overlap.
        let (start, end) = (
            at("2026-11-23T16:00:00+01:00"),
            at("2026-11-23T16:45:00+01:00"),
        );
        assert_eq!(told.overlapping(&start, &end), ["Sprint prep", "an event"]);
        assert_eq!(told.event_title(&at("e1")), "Sprint prep");
        assert_eq!(told.event_title(&at("e2")), "an event");
        assert_eq!(told.event_title(&at("gone")), "an event");
        // In a sentence: today drops its day, other days keep theirs.
        assert_eq!(told.at(&at("2026-11-23T16:30:00+01:00")), "at 16:30");
        assert_eq!(told.at(&at("2026-11-24T09:00:00Z")), "tomorrow at 10:00");
        assert_eq!(
            told.at(&at("2026-11-26T19:00:00+01:00")),
            "Thu 26 Nov at 19:00"
        );
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
        assert_eq!(plain.at(&at("noon")), "at noon");
    }

    #[test]
    fn raw_numbers_are_found_and_money_is_not_one() {
        assert_eq!(raw_numbers("top: m1 (urgency 0.75)"), ["0.75"]);
        assert_eq!(
            raw_numbers("Amazon.de charged 649.00 EUR, far above"),
            [] as [&str; 0]
        );
        assert_eq!(raw_numbers("1.500 KWD and 3.14"), ["3.14"]);
        assert_eq!(raw_numbers("12.50 EURO"), ["12.50"]);
        assert_eq!(raw_numbers("v1.2, 10:30, 5 h"), ["1.2"]);
        assert!(raw_numbers("version 2. Next").is_empty());
    }

    #[test]
    fn people_are_named_as_they_sign() {
        let name = |s: &str| person(&Value::from(s));
        assert_eq!(
            name("Ute Hartmann <ute.hartmann@t-online.de>"),
            "Ute Hartmann"
        );
        assert_eq!(name("\"Dubois, Claire\" <c@lumenpay.eu>"), "Dubois, Claire");
        assert_eq!(name("markus.vogel@halden-systems.de"), "Markus Vogel");
        assert_eq!(name("<jonas_richter@gmx.de>"), "Jonas Richter");
        assert_eq!(name("noreply-42@github.com"), "Noreply");
        assert_eq!(name(""), "someone");
        assert_eq!(person(&Value::Null), "someone");
    }

    #[test]
    fn lines_fit_the_watch_and_sentences_the_ear() {
        assert_eq!(fit_line("short", 80), "short");
        // 20 characters: "Interview with" is the last whole word before the 19th.
        assert_eq!(
            fit_line("Interview with Ortega overlaps training", 20),
            "Interview with…"
        );
        // The cut falls on a space: the head is kept whole.
        assert_eq!(fit_line("abc def ghi", 8), "abc def…");
        assert_eq!(fit_line("abcdefghij", 5), "abcd…");
        assert_eq!(fit_line("Markus Vogel: late, call me", 16), "Markus Vogel…");
        assert_eq!(fit_speech("one two three", 3), "one two three");
        assert_eq!(fit_speech("one two, three four", 2), "one two.");
        assert_eq!(duration(45), "45 min");
        assert_eq!(duration(360), "6 h");
        assert_eq!(duration(352), "5 h 52 min");
        assert_eq!(counted(1, "bill", "bills"), "1 bill");
        assert_eq!(counted(3, "bill", "bills"), "3 bills");
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
