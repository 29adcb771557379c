//! The date-phrase parser: finds phrases like "by Friday", "tomorrow 3pm", "EOD",
//! "by 2026-12-01", "next week" or "in 2 hours" in a sentence and resolves them to an instant,
//! relative to a reference time (the message's time) in the user's fixed UTC offset.
//!
//! It owns the grammar and the resolution rules below and nothing else: it does not decide what
//! is an action item or how urgent a message is, and it never looks at a clock.
//!
//! Grammar (case-insensitive, over the words of [`crate::text::tokenize`]; words of one phrase
//! are separated by spaces and at most one comma):
//! - optional lead-in words, kept in the phrase: `by`, `before`, `until`, `till`, `due`, `on`,
//!   `at`, `no later than` (at most [`LEAD_IN_WORDS_MAX`]); `before X` is read as `by X`.
//! - relative: (`in` | `within`) [`the next`] amount unit, where amount is 1..9999, `a`, `an`
//!   or `one`..`twelve` and unit is minute(s)/min(s), hour(s)/hr(s)/h, day(s), week(s); or the
//!   amount and unit in one word ("2h", "30min", "3d"); or `half an hour`.
//! - a day, optionally followed by a time (after `at`, `by`, `before`, `in the` or nothing):
//!   `today`, `tonight`, `tomorrow` (`tmrw`, `tmr`), `day after tomorrow`, a weekday name
//!   (optionally after `this`/`coming`/`next`), `next week`, `end of (the) week`/`eow`,
//!   `end of (the) month`/`eom`, an ISO date `2026-12-01` (or `2026-12-01t15:00`),
//!   `December 1`/`Dec 1st`/`1 December`/`1st of December` with an optional year.
//! - a time, optionally followed by a day (after `on` or nothing): `3pm`, `3 pm`, `3:30pm`,
//!   `3.30 p.m.`, `15:00` (24-hour needs the colon), `noon`/`midday`, `midnight`,
//!   `eod`/`cob`/`eob`/`end of (the) day`/`close of business`/`end of business`, `morning`
//!   (only together with a day).
//!
//! Resolution (all in local time at the offset; "passed" means not after the reference):
//! - Default time of day: 17:00 ([`END_OF_DAY_MINUTE`], end of the working day) for a day
//!   without a time; 09:00 for `next week` (start of the week) and `morning`; 12:00 noon;
//!   23:59 midnight; 21:00 `tonight`.
//! - `today`/`tonight`/`EOD`/`midnight` alone: that time on the reference's day; when that has
//!   passed and no clock time was written, 23:59 the same day (it is still "today").
//! - `tomorrow` +1 day, `day after tomorrow` +2 days.
//! - a weekday (also `this`/`coming` Friday): the first day with that weekday, from the
//!   reference's day on, whose due time has not passed (so "Friday" said on Friday evening is
//!   next week's Friday). `next Friday`: the Friday of the next ISO week (Monday-based).
//! - `next week`: Monday of the next ISO week. `end of week`: Friday of the current ISO week, or
//!   of the next if passed. `end of month`: the last day of the month, or of the next if passed.
//! - a date without a year: this year, or next year when the date is before the reference's
//!   day. An impossible date (31 April, 29 February of a common year) is no phrase.
//! - a bare clock time: its next occurrence after the reference (today or tomorrow).
//! - `in N minutes/hours`: the reference + N exactly. `in N days/weeks`: 17:00 on the day N
//!   (7·N) days after the reference's day. Amounts over a bound (a week of minutes, 31 days of
//!   hours, 366 days, 52 weeks) are no phrase.
//! - A phrase whose instant falls outside the years 0000..9999 is no phrase.

use aura_sdk::time::{
    MINUTES_PER_DAY, SECS_PER_HOUR, SECS_PER_MINUTE, format_time, local_day, local_instant,
    weekday_of_day,
};

use crate::common::{date_of_day, day_of_date};
use crate::text::{Token, lowered, tokenize};
use time::{Date, Month};

/// Local minute of the default due time: 17:00, the end of a working day.
pub const END_OF_DAY_MINUTE: i64 = 17 * 60;
/// 09:00: the start of a working day, for "next week" and "morning".
pub const START_OF_DAY_MINUTE: i64 = 9 * 60;
/// 12:00.
pub const NOON_MINUTE: i64 = 12 * 60;
/// 21:00, for "tonight".
pub const TONIGHT_MINUTE: i64 = 21 * 60;
/// 23:59: the last minute of a day, for "midnight" and for "today" once 17:00 has passed.
pub const LAST_MINUTE: i64 = MINUTES_PER_DAY - 1;
/// Most lead-in words before a phrase ("due by", "no later than").
pub const LEAD_IN_WORDS_MAX: usize = 3;
/// Largest amount of minutes in "in N minutes": a week.
pub const RELATIVE_MINUTES_MAX: i64 = 7 * 24 * 60;
/// Largest amount of hours in "in N hours": 31 days.
pub const RELATIVE_HOURS_MAX: i64 = 31 * 24;
/// Largest amount of days in "in N days": a year.
pub const RELATIVE_DAYS_MAX: i64 = 366;
/// Largest amount of weeks in "in N weeks": a year.
pub const RELATIVE_WEEKS_MAX: i64 = 52;

/// A due phrase found in a text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Due {
    /// The instant, Unix seconds; its local time at the offset lies in the years 0000..9999.
    pub at: i64,
    /// The user's offset, minutes east of UTC.
    pub offset_minutes: i32,
    /// Byte range of the phrase in the text.
    pub start: usize,
    pub end: usize,
}

impl Due {
    /// The phrase as written.
    pub fn phrase<'a>(&self, text: &'a str) -> &'a str {
        &text[self.start..self.end]
    }

    /// The instant as RFC 3339 at the user's offset (formatted on demand: most callers only
    /// compare instants).
    pub fn rfc3339(&self) -> String {
        format_time(self.at, self.offset_minutes).unwrap_or_default()
    }
}

/// First and last second of the years 0000..9999 (UTC): 0000-01-01T00:00:00 and
/// 9999-12-31T23:59:59.
const FIRST_SECOND: i64 = -62_167_219_200;
const LAST_SECOND: i64 = 253_402_300_799;

/// Whether `at`, in local time at the offset, is within the years 0000..9999 (what RFC 3339
/// can write).
fn writable(at: i64, offset_minutes: i32) -> bool {
    let local = at + i64::from(offset_minutes) * SECS_PER_MINUTE;
    (FIRST_SECOND..=LAST_SECOND).contains(&local)
}

/// A day, before resolution.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Anchor {
    /// Days after the reference's day (today 0, tomorrow 1).
    Days(i64),
    Tonight,
    /// ISO weekday; `next`: in the next ISO week.
    Weekday {
        weekday: u8,
        next: bool,
    },
    NextWeek,
    EndOfWeek,
    EndOfMonth,
    Date {
        year: Option<i32>,
        month: Month,
        day: u8,
    },
}

/// A time of day, before resolution.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Clock {
    /// A written clock time, minutes after midnight.
    At(i64),
    EndOfDay,
    Morning,
    Noon,
    Midnight,
}

impl Clock {
    fn minute(self) -> i64 {
        match self {
            Clock::At(m) => m,
            Clock::EndOfDay => END_OF_DAY_MINUTE,
            Clock::Morning => START_OF_DAY_MINUTE,
            Clock::Noon => NOON_MINUTE,
            Clock::Midnight => LAST_MINUTE,
        }
    }
}

/// What a phrase says, before resolution.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Spec {
    /// A span after the reference: exact seconds, or whole days (due at 17:00).
    AfterSecs(i64),
    AfterDays(i64),
    At {
        anchor: Option<Anchor>,
        clock: Option<Clock>,
    },
}

/// Every due phrase in `text`, left to right, not overlapping.
pub fn find_all(text: &str, reference: i64, offset_minutes: i32) -> Vec<Due> {
    let lower = lowered(text);
    find_all_in(text, &tokenize(text, &lower), reference, offset_minutes)
}

/// [`find_all`] over the words of `text` already tokenized.
pub fn find_all_in(
    text: &str,
    tokens: &[Token<'_>],
    reference: i64,
    offset_minutes: i32,
) -> Vec<Due> {
    let parser = Parser { text, tokens };
    let mut found = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        if !may_start(&tokens[i].lower) {
            i += 1;
            continue;
        }
        match parser.phrase_at(i) {
            Some((spec, end)) => {
                if let Some(at) = resolve(spec, reference, offset_minutes)
                    && writable(at, offset_minutes)
                {
                    found.push(Due {
                        at,
                        offset_minutes,
                        start: tokens[i].start,
                        end: tokens[end - 1].end,
                    });
                }
                i = end;
            }
            None => i += 1,
        }
    }
    found
}

/// The first due phrase in `text`.
pub fn find_first(text: &str, reference: i64, offset_minutes: i32) -> Option<Due> {
    find_all(text, reference, offset_minutes).into_iter().next()
}

/// Whether a phrase can start with `word`: a cheap test (one byte, then a few words) that
/// skips the parser for almost every word of a text. It lists every word the grammar can open
/// with (a test checks it against the grammar's word lists); words starting with a digit pass.
fn may_start(word: &str) -> bool {
    let Some(&first) = word.as_bytes().first() else {
        return false;
    };
    match first {
        b'0'..=b'9' => true,
        b'a' => matches!(word, "at" | "april" | "apr" | "august" | "aug"),
        b'b' => matches!(word, "by" | "before"),
        b'c' => matches!(word, "coming" | "close" | "cob"),
        b'd' => matches!(word, "due" | "day" | "december" | "dec"),
        b'e' => matches!(word, "end" | "eod" | "eob" | "eow" | "eom"),
        b'f' => matches!(word, "friday" | "february" | "feb"),
        b'i' => word == "in",
        b'j' => matches!(word, "january" | "jan" | "june" | "jun" | "july" | "jul"),
        b'm' => matches!(
            word,
            "monday" | "midday" | "midnight" | "morning" | "march" | "mar" | "may"
        ),
        b'n' => matches!(word, "no" | "next" | "noon" | "november" | "nov"),
        b'o' => matches!(word, "on" | "october" | "oct"),
        b's' => matches!(word, "saturday" | "sunday" | "september" | "sep" | "sept"),
        b't' => matches!(
            word,
            "till"
                | "today"
                | "tonight"
                | "tomorrow"
                | "tmrw"
                | "tmr"
                | "tuesday"
                | "thursday"
                | "this"
        ),
        b'u' => word == "until",
        b'w' => matches!(word, "within" | "wednesday"),
        _ => false,
    }
}

struct Parser<'a> {
    text: &'a str,
    tokens: &'a [Token<'a>],
}

const WEEKDAYS: [&str; 7] = [
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
];

const NUMBER_WORDS: [&str; 12] = [
    "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
    "twelve",
];

fn weekday_of(word: &str) -> Option<u8> {
    WEEKDAYS
        .iter()
        .position(|d| *d == word)
        .map(|i| i as u8 + 1)
}

fn month_of(word: &str) -> Option<Month> {
    Some(match word {
        "january" | "jan" => Month::January,
        "february" | "feb" => Month::February,
        "march" | "mar" => Month::March,
        "april" | "apr" => Month::April,
        "may" => Month::May,
        "june" | "jun" => Month::June,
        "july" | "jul" => Month::July,
        "august" | "aug" => Month::August,
        "september" | "sep" | "sept" => Month::September,
        "october" | "oct" => Month::October,
        "november" | "nov" => Month::November,
        "december" | "dec" => Month::December,
        _ => return None,
    })
}

/// "1", "01", "1st", "22nd", "3rd", "4th" → 1..=31.
fn day_of_month(word: &str) -> Option<u8> {
    let digits = word.bytes().take_while(u8::is_ascii_digit).count();
    let (number, suffix) = word.split_at(digits);
    if !(1..=2).contains(&digits) || !["", "st", "nd", "rd", "th"].contains(&suffix) {
        return None;
    }
    let day: u8 = number.parse().ok()?;
    (1..=31).contains(&day).then_some(day)
}

/// A four-digit year 1000..=9999.
fn year_of(word: &str) -> Option<i32> {
    (word.len() == 4 && word.bytes().all(|b| b.is_ascii_digit()))
        .then(|| word.parse().ok())
        .flatten()
        .filter(|y| *y >= 1000)
}

/// "2026-12-01" → (2026, December, 1): a date as every agent reads one
/// ([`aura_sdk::date::date_parts`]).
fn iso_date(word: &str) -> Option<(i32, Month, u8)> {
    let (year, month, day) = aura_sdk::date::date_parts(word)?;
    let year = i32::try_from(year).ok()?;
    Some((year, Month::try_from(month as u8).ok()?, day as u8))
}

/// "3pm", "3:30pm", "3.30am", "15:00", "3" with `meridiem` → minutes after midnight.
/// `meridiem` is a separate following word ("pm", "a.m"), if any.
fn clock_minutes(word: &str, meridiem: Option<&str>) -> Option<i64> {
    let (number, suffix) = match word.find(|c: char| c.is_ascii_alphabetic()) {
        Some(i) => word.split_at(i),
        None => (word, ""),
    };
    let suffix = match (suffix, meridiem) {
        ("", Some(m)) => m,
        (s, None) => s,
        _ => return None,
    };
    let pm = match suffix {
        "am" | "a.m" => Some(false),
        "pm" | "p.m" => Some(true),
        "" => None,
        _ => return None,
    };
    let (hours, minutes, separated) = match number.find([':', '.']) {
        Some(i) => (&number[..i], &number[i + 1..], number[i..].starts_with(':')),
        None => (number, "00", false),
    };
    if !(1..=2).contains(&hours.len())
        || minutes.len() != 2
        || !hours
            .bytes()
            .chain(minutes.bytes())
            .all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let (h, m): (i64, i64) = (hours.parse().ok()?, minutes.parse().ok()?);
    if m > 59 {
        return None;
    }
    match pm {
        Some(pm) if (1..=12).contains(&h) => Some((h % 12 + if pm { 12 } else { 0 }) * 60 + m),
        // A 24-hour time needs the colon ("15:00"); a bare "3" or "9.30" is no time.
        None if separated && h <= 23 => Some(h * 60 + m),
        _ => None,
    }
}

impl Parser<'_> {
    fn word(&self, i: usize) -> Option<&str> {
        self.tokens.get(i).map(|t| t.lower.as_ref())
    }

    /// Whether token `i` follows token `i - 1` within one phrase: only spaces and at most one
    /// comma between them.
    fn joined(&self, i: usize) -> bool {
        if i == 0 || i >= self.tokens.len() {
            return false;
        }
        let gap = &self.text[self.tokens[i - 1].end..self.tokens[i].start];
        gap.chars().all(|c| c.is_whitespace() || c == ',') && gap.matches(',').count() <= 1
    }

    /// The words `words` at `i`, each joined to the previous; the index after them.
    fn words(&self, i: usize, words: &[&str]) -> Option<usize> {
        for (k, w) in words.iter().enumerate() {
            if self.word(i + k)? != *w || (k > 0 && !self.joined(i + k)) {
                return None;
            }
        }
        Some(i + words.len())
    }

    /// The first of `options` found at `i`.
    fn any_words(&self, i: usize, options: &[&[&str]]) -> Option<usize> {
        options.iter().find_map(|words| self.words(i, words))
    }

    /// A phrase starting at token `i`: its spec and the index after its last token.
    fn phrase_at(&self, i: usize) -> Option<(Spec, usize)> {
        let mut j = i;
        for _ in 0..LEAD_IN_WORDS_MAX {
            let next = match self.word(j)? {
                "by" | "before" | "until" | "till" | "due" | "on" | "at" => Some(j + 1),
                "no" => self.words(j, &["no", "later", "than"]),
                _ => None,
            };
            match next {
                Some(next) if self.joined(next) => j = next,
                _ => break,
            }
        }
        if !may_start(self.word(j)?) {
            return None;
        }
        self.core_at(j)
    }

    fn core_at(&self, j: usize) -> Option<(Spec, usize)> {
        if matches!(self.word(j)?, "in" | "within") {
            return self.relative_at(j);
        }
        if let Some((anchor, clock, k)) = self.anchor_at(j) {
            if clock.is_some() {
                return Some((
                    Spec::At {
                        anchor: Some(anchor),
                        clock,
                    },
                    k,
                ));
            }
            // A time after the day: "tomorrow 3pm", "Friday at noon", "Monday morning".
            let connectors: [&[&str]; 5] = [&[], &["at"], &["by"], &["before"], &["in", "the"]];
            for connector in connectors {
                let Some(c) = self.words(k, connector) else {
                    continue;
                };
                if (connector.is_empty() || self.joined(k))
                    && self.joined(c)
                    && let Some((clock, end)) = self.clock_at(c)
                {
                    return Some((
                        Spec::At {
                            anchor: Some(anchor),
                            clock: Some(clock),
                        },
                        end,
                    ));
                }
            }
            return Some((
                Spec::At {
                    anchor: Some(anchor),
                    clock: None,
                },
                k,
            ));
        }
        let (clock, k) = self.clock_at(j)?;
        // A day after the time: "3pm tomorrow", "EOD Friday", "noon on 2026-12-01".
        let connectors: [&[&str]; 2] = [&[], &["on"]];
        for connector in connectors {
            let Some(a) = self.words(k, connector) else {
                continue;
            };
            if (connector.is_empty() || self.joined(k))
                && self.joined(a)
                && let Some((anchor, None, end)) = self.anchor_at(a)
            {
                return Some((
                    Spec::At {
                        anchor: Some(anchor),
                        clock: Some(clock),
                    },
                    end,
                ));
            }
        }
        // "morning" needs a day.
        (clock != Clock::Morning).then_some((
            Spec::At {
                anchor: None,
                clock: Some(clock),
            },
            k,
        ))
    }

    /// "in 2 hours", "within the next 3 days", "in 2h", "in half an hour".
    fn relative_at(&self, j: usize) -> Option<(Spec, usize)> {
        let mut k = self.any_words(j, &[&["in"], &["within"]])?;
        if let Some(after) = self.words(k, &["the", "next"])
            && self.joined(k)
        {
            k = after;
        }
        if !self.joined(k) {
            return None;
        }
        if let Some(end) = self.words(k, &["half", "an", "hour"]) {
            return Some((Spec::AfterSecs(30 * SECS_PER_MINUTE), end));
        }
        let word = self.word(k)?;
        // Amount and unit in one word: "2h", "30min", "3d".
        let digits = word.bytes().take_while(u8::is_ascii_digit).count();
        let (amount, unit, end) = if digits > 0 && digits < word.len() {
            (word[..digits].parse::<i64>().ok()?, &word[digits..], k + 1)
        } else {
            let amount = match word {
                "a" | "an" => 1,
                w if digits == w.len() && digits <= 4 => w.parse().ok()?,
                w => NUMBER_WORDS.iter().position(|n| *n == w)? as i64 + 1,
            };
            if !self.joined(k + 1) {
                return None;
            }
            (amount, self.word(k + 1)?, k + 2)
        };
        if amount < 1 {
            return None;
        }
        let spec = match unit {
            "minute" | "minutes" | "min" | "mins" if amount <= RELATIVE_MINUTES_MAX => {
                Spec::AfterSecs(amount * SECS_PER_MINUTE)
            }
            "hour" | "hours" | "hr" | "hrs" | "h" if amount <= RELATIVE_HOURS_MAX => {
                Spec::AfterSecs(amount * SECS_PER_HOUR)
            }
            "day" | "days" | "d" if amount <= RELATIVE_DAYS_MAX => Spec::AfterDays(amount),
            "week" | "weeks" if amount <= RELATIVE_WEEKS_MAX => Spec::AfterDays(amount * 7),
            _ => return None,
        };
        Some((spec, end))
    }

    /// A day at `j`, possibly with a time written into the same word ("2026-12-01t15:00").
    fn anchor_at(&self, j: usize) -> Option<(Anchor, Option<Clock>, usize)> {
        let word = self.word(j)?;
        if word.as_bytes()[0].is_ascii_digit() {
            // ISO date, optionally with "t15:00" in the same word; else "1 December".
            let (date_part, time_part) = match word.find('t') {
                Some(10) => (&word[..10], Some(&word[11..])),
                _ => (word, None),
            };
            if let Some((year, month, day)) = iso_date(date_part) {
                let anchor = Anchor::Date {
                    year: Some(year),
                    month,
                    day,
                };
                return match time_part {
                    None => Some((anchor, None, j + 1)),
                    Some(t) => clock_minutes(t, None).map(|m| (anchor, Some(Clock::At(m)), j + 1)),
                };
            }
            return self.month_day_at(j);
        }
        let anchor = match word {
            "today" => Anchor::Days(0),
            "tonight" => Anchor::Tonight,
            "tomorrow" | "tmrw" | "tmr" => Anchor::Days(1),
            "eow" => Anchor::EndOfWeek,
            "eom" => Anchor::EndOfMonth,
            "day" => {
                let end = self.words(j, &["day", "after", "tomorrow"])?;
                return Some((Anchor::Days(2), None, end));
            }
            "this" | "coming" | "next" => {
                if let Some(end) = self.words(j, &["next", "week"]) {
                    return Some((Anchor::NextWeek, None, end));
                }
                let weekday = self.word(j + 1).and_then(weekday_of)?;
                if !self.joined(j + 1) {
                    return None;
                }
                let next = word == "next";
                return Some((Anchor::Weekday { weekday, next }, None, j + 2));
            }
            "end" => {
                if let Some(end) =
                    self.any_words(j, &[&["end", "of", "the", "week"], &["end", "of", "week"]])
                {
                    return Some((Anchor::EndOfWeek, None, end));
                }
                let end = self.any_words(
                    j,
                    &[&["end", "of", "the", "month"], &["end", "of", "month"]],
                )?;
                return Some((Anchor::EndOfMonth, None, end));
            }
            w => match weekday_of(w) {
                Some(weekday) => Anchor::Weekday {
                    weekday,
                    next: false,
                },
                None => return self.month_day_at(j),
            },
        };
        Some((anchor, None, j + 1))
    }

    /// "December 1", "Dec 1st, 2026", "1 December", "1st of December 2026".
    fn month_day_at(&self, j: usize) -> Option<(Anchor, Option<Clock>, usize)> {
        let word = self.word(j)?;
        let (month, day, mut k) = if let Some(month) = month_of(word) {
            if !self.joined(j + 1) {
                return None;
            }
            (month, day_of_month(self.word(j + 1)?)?, j + 2)
        } else {
            let day = day_of_month(word)?;
            let mut m = j + 1;
            if let Some(after_of) = self.words(m, &["of"])
                && self.joined(m)
            {
                m = after_of;
            }
            if !self.joined(m) {
                return None;
            }
            (month_of(self.word(m)?)?, day, m + 1)
        };
        let mut year = None;
        if self.joined(k)
            && let Some(y) = self.word(k).and_then(year_of)
        {
            year = Some(y);
            k += 1;
        }
        if let Some(y) = year {
            Date::from_calendar_date(y, month, day).ok()?;
        } else if day > month.length(2000) {
            // Not a day of this month in any year (2000 was a leap year).
            return None;
        }
        Some((Anchor::Date { year, month, day }, None, k))
    }

    /// A time at `j`.
    fn clock_at(&self, j: usize) -> Option<(Clock, usize)> {
        let word = self.word(j)?;
        if word.as_bytes()[0].is_ascii_digit() {
            // A separate "pm" wins over reading "5:30" as a 24-hour time.
            let meridiem = self
                .word(j + 1)
                .filter(|m| matches!(*m, "am" | "pm" | "a.m" | "p.m") && self.joined(j + 1));
            if let Some(meridiem) = meridiem
                && let Some(m) = clock_minutes(word, Some(meridiem))
            {
                return Some((Clock::At(m), j + 2));
            }
            return clock_minutes(word, None).map(|m| (Clock::At(m), j + 1));
        }
        let clock = match word {
            "noon" | "midday" => Clock::Noon,
            "midnight" => Clock::Midnight,
            "eod" | "cob" | "eob" => Clock::EndOfDay,
            "morning" => Clock::Morning,
            "end" | "close" => {
                let end = self.any_words(
                    j,
                    &[
                        &["end", "of", "the", "day"],
                        &["end", "of", "day"],
                        &["end", "of", "business"],
                        &["close", "of", "business"],
                    ],
                )?;
                return Some((Clock::EndOfDay, end));
            }
            _ => return None,
        };
        Some((clock, j + 1))
    }
}

/// The instant a spec names, relative to `reference` at `offset_minutes` (module docs).
fn resolve(spec: Spec, reference: i64, offset_minutes: i32) -> Option<i64> {
    let today = local_day(reference, offset_minutes);
    let at = |day: i64, minute: i64| local_instant(day, minute, offset_minutes);
    let monday = today - i64::from(weekday_of_day(today) - 1);
    let (anchor, clock) = match spec {
        Spec::AfterSecs(secs) => return Some(reference + secs),
        Spec::AfterDays(days) => return Some(at(today + days, END_OF_DAY_MINUTE)),
        Spec::At { anchor, clock } => (anchor, clock),
    };
    // Written clock time, or none (a default applies). EOD counts as none for the 23:59 rule.
    let soft = matches!(clock, None | Some(Clock::EndOfDay));
    let minute = |default: i64| clock.map_or(default, Clock::minute);
    let same_day = |minute: i64| {
        let t = at(today, minute);
        if soft && t <= reference {
            at(today, LAST_MINUTE)
        } else {
            t
        }
    };
    let instant = match anchor {
        None => match clock? {
            Clock::EndOfDay | Clock::Midnight => same_day(minute(END_OF_DAY_MINUTE)),
            Clock::Morning => return None,
            c => {
                let t = at(today, c.minute());
                if t > reference {
                    t
                } else {
                    at(today + 1, c.minute())
                }
            }
        },
        Some(Anchor::Days(0)) => same_day(minute(END_OF_DAY_MINUTE)),
        Some(Anchor::Days(days)) => at(today + days, minute(END_OF_DAY_MINUTE)),
        Some(Anchor::Tonight) => same_day(minute(TONIGHT_MINUTE)),
        Some(Anchor::Weekday {
            weekday,
            next: false,
        }) => {
            let m = minute(END_OF_DAY_MINUTE);
            (0..=7)
                .map(|k| today + k)
                .find(|&day| weekday_of_day(day) == weekday && at(day, m) > reference)
                .map(|day| at(day, m))?
        }
        Some(Anchor::Weekday {
            weekday,
            next: true,
        }) => at(
            monday + 7 + i64::from(weekday) - 1,
            minute(END_OF_DAY_MINUTE),
        ),
        Some(Anchor::NextWeek) => at(monday + 7, minute(START_OF_DAY_MINUTE)),
        Some(Anchor::EndOfWeek) => {
            let m = minute(END_OF_DAY_MINUTE);
            let friday = monday + 4;
            if at(friday, m) > reference {
                at(friday, m)
            } else {
                at(friday + 7, m)
            }
        }
        Some(Anchor::EndOfMonth) => {
            let m = minute(END_OF_DAY_MINUTE);
            let date = date_of_day(today)?;
            let last = |year: i32, month: Month| {
                Date::from_calendar_date(year, month, month.length(year)).ok()
            };
            let this = day_of_date(last(date.year(), date.month())?);
            if at(this, m) > reference {
                at(this, m)
            } else {
                let (year, month) = match date.month() {
                    Month::December => (date.year() + 1, Month::January),
                    month => (date.year(), month.next()),
                };
                at(day_of_date(last(year, month)?), m)
            }
        }
        Some(Anchor::Date { year, month, day }) => {
            let reference_date = date_of_day(today)?;
            let date = match year {
                Some(year) => Date::from_calendar_date(year, month, day).ok()?,
                None => {
                    let this = Date::from_calendar_date(reference_date.year(), month, day).ok();
                    match this {
                        Some(d) if d >= reference_date => d,
                        _ => {
                            Date::from_calendar_date(reference_date.year() + 1, month, day).ok()?
                        }
                    }
                }
            };
            at(day_of_date(date), minute(END_OF_DAY_MINUTE))
        }
    };
    Some(instant)
}

#[cfg(test)]
mod tests {
    use super::*;
    use aura_sdk::time::parse_time;

    /// (phrase, due) of the first phrase in `text`, the message sent at `sent` and the user at
    /// `offset` minutes east of UTC.
    fn first(text: &str, sent: &str, offset: i32) -> Option<(String, String)> {
        let reference = parse_time(sent, "sent").unwrap();
        find_first(text, reference, offset).map(|d| (d.phrase(text).to_owned(), d.rfc3339()))
    }

    fn pair(phrase: &str, due: &str) -> Option<(String, String)> {
        Some((phrase.to_owned(), due.to_owned()))
    }

    // Reference week: Monday 2026-11-23 .. Sunday 2026-11-29 (2026-11-23 is a Monday:
    // 20780 days after 1970-01-01, (20780 + 3) mod 7 = 0 → ISO weekday 1).
    // MON_11 is Monday 11:00 local at +01:00.
    const MON_11: &str = "2026-11-23T10:00:00Z";

    #[test]
    fn weekday_names_take_the_next_day_whose_due_time_has_not_passed() {
        // Monday 11:00 → Friday 27th at 17:00 (the default end of day).
        assert_eq!(
            first("Please send it by Friday.", MON_11, 60),
            pair("by Friday", "2026-11-27T17:00:00+01:00")
        );
        // On Friday at 16:00 local, Friday 17:00 is still ahead: today.
        assert_eq!(
            first("by Friday", "2026-11-27T15:00:00Z", 60),
            pair("by Friday", "2026-11-27T17:00:00+01:00")
        );
        // On Friday at 17:30 local it has passed: next week's Friday, 27 + 7 = 4 December.
        assert_eq!(
            first("by Friday", "2026-11-27T16:30:00Z", 60),
            pair("by Friday", "2026-12-04T17:00:00+01:00")
        );
        // "this Friday" is the same rule; Monday on Monday morning is today.
        assert_eq!(
            first("this friday", MON_11, 60),
            pair("this friday", "2026-11-27T17:00:00+01:00")
        );
        assert_eq!(
            first("Monday", MON_11, 60),
            pair("Monday", "2026-11-23T17:00:00+01:00")
        );
    }

    #[test]
    fn next_weekday_is_in_the_next_iso_week() {
        // Week of Monday 23rd; the next week starts Monday 30th; its Friday is 30 + 4 = 4 Dec.
        assert_eq!(
            first("next Friday", MON_11, 60),
            pair("next Friday", "2026-12-04T17:00:00+01:00")
        );
        // Said on Sunday 29th (still the week of the 23rd): the same Friday.
        assert_eq!(
            first("next Friday", "2026-11-29T10:00:00Z", 60),
            pair("next Friday", "2026-12-04T17:00:00+01:00")
        );
        // Said on Monday 30th: the week of 7 December, Friday 11th.
        assert_eq!(
            first("next Friday", "2026-11-30T10:00:00Z", 60),
            pair("next Friday", "2026-12-11T17:00:00+01:00")
        );
        // "next week": Monday of the next ISO week at 09:00.
        assert_eq!(
            first("Let's talk next week.", MON_11, 60),
            pair("next week", "2026-11-30T09:00:00+01:00")
        );
    }

    #[test]
    fn today_tomorrow_and_end_of_day() {
        assert_eq!(
            first("Can you do it tomorrow 3pm?", MON_11, 60),
            pair("tomorrow 3pm", "2026-11-24T15:00:00+01:00")
        );
        assert_eq!(
            first("tomorrow", MON_11, 60),
            pair("tomorrow", "2026-11-24T17:00:00+01:00")
        );
        assert_eq!(
            first("tomorrow morning", MON_11, 60),
            pair("tomorrow morning", "2026-11-24T09:00:00+01:00")
        );
        assert_eq!(
            first("the day after tomorrow", MON_11, 60),
            pair("day after tomorrow", "2026-11-25T17:00:00+01:00")
        );
        assert_eq!(
            first("by EOD please", MON_11, 60),
            pair("by EOD", "2026-11-23T17:00:00+01:00")
        );
        assert_eq!(
            first("before end of the day", MON_11, 60),
            pair("before end of the day", "2026-11-23T17:00:00+01:00")
        );
        // 17:30Z is 18:30 local: 17:00 has passed, so EOD and today mean 23:59 today.
        assert_eq!(
            first("EOD", "2026-11-23T17:30:00Z", 60),
            pair("EOD", "2026-11-23T23:59:00+01:00")
        );
        assert_eq!(
            first("today", "2026-11-23T17:30:00Z", 60),
            pair("today", "2026-11-23T23:59:00+01:00")
        );
        // A written clock time is kept even when it has passed.
        assert_eq!(
            first("today at 3pm", "2026-11-23T17:30:00Z", 60),
            pair("today at 3pm", "2026-11-23T15:00:00+01:00")
        );
        assert_eq!(
            first("tonight", MON_11, 60),
            pair("tonight", "2026-11-23T21:00:00+01:00")
        );
        assert_eq!(
            first("by midnight", MON_11, 60),
            pair("by midnight", "2026-11-23T23:59:00+01:00")
        );
    }

    #[test]
    fn negative_offsets_use_the_local_day() {
        // 03:00Z on the 24th is 22:00 on Monday 23rd at -05:00.
        let sent = "2026-11-24T03:00:00Z";
        assert_eq!(
            first("tomorrow", sent, -300),
            pair("tomorrow", "2026-11-24T17:00:00-05:00")
        );
        assert_eq!(
            first("EOD", sent, -300),
            pair("EOD", "2026-11-23T23:59:00-05:00")
        );
        // In UTC the same instant is Tuesday 03:00: tomorrow is Wednesday.
        assert_eq!(
            first("tomorrow", sent, 0),
            pair("tomorrow", "2026-11-25T17:00:00Z")
        );
    }

    #[test]
    fn times_before_days_and_lead_ins() {
        assert_eq!(
            first("at 15:00 tomorrow", MON_11, 60),
            pair("at 15:00 tomorrow", "2026-11-24T15:00:00+01:00")
        );
        assert_eq!(
            first("3pm on Friday", MON_11, 60),
            pair("3pm on Friday", "2026-11-27T15:00:00+01:00")
        );
        assert_eq!(
            first("EOD Friday", MON_11, 60),
            pair("EOD Friday", "2026-11-27T17:00:00+01:00")
        );
        assert_eq!(
            first("Friday at noon", MON_11, 60),
            pair("Friday at noon", "2026-11-27T12:00:00+01:00")
        );
        assert_eq!(
            first("It is due by Friday 5:30 pm.", MON_11, 60),
            pair("due by Friday 5:30 pm", "2026-11-27T17:30:00+01:00")
        );
        assert_eq!(
            first("no later than noon tomorrow", MON_11, 60),
            pair("no later than noon tomorrow", "2026-11-24T12:00:00+01:00")
        );
        assert_eq!(
            first("Friday, 9.30am", MON_11, 60),
            pair("Friday, 9.30am", "2026-11-27T09:30:00+01:00")
        );
        // 12am is midnight at the start of the day, 12pm noon.
        assert_eq!(
            first("tomorrow 12am", MON_11, 60),
            pair("tomorrow 12am", "2026-11-24T00:00:00+01:00")
        );
        assert_eq!(
            first("tomorrow 12 p.m.", MON_11, 60),
            pair("tomorrow 12 p.m", "2026-11-24T12:00:00+01:00")
        );
    }

    #[test]
    fn bare_clock_times_take_their_next_occurrence() {
        // 11:00 local: 15:00 is still today.
        assert_eq!(
            first("by 3pm", MON_11, 60),
            pair("by 3pm", "2026-11-23T15:00:00+01:00")
        );
        // 16:00 local (15:00Z): 15:00 has passed, so tomorrow.
        assert_eq!(
            first("by 3pm", "2026-11-23T15:00:00Z", 60),
            pair("by 3pm", "2026-11-24T15:00:00+01:00")
        );
        assert_eq!(
            first("by noon", MON_11, 60),
            pair("by noon", "2026-11-23T12:00:00+01:00")
        );
    }

    #[test]
    fn dates() {
        assert_eq!(
            first("Submit by 2026-12-01.", MON_11, 60),
            pair("by 2026-12-01", "2026-12-01T17:00:00+01:00")
        );
        assert_eq!(
            first("at 2026-12-01T09:30", MON_11, 60),
            pair("at 2026-12-01T09:30", "2026-12-01T09:30:00+01:00")
        );
        assert_eq!(
            first("on December 1", MON_11, 60),
            pair("on December 1", "2026-12-01T17:00:00+01:00")
        );
        assert_eq!(
            first("Dec 1st, 2026 at 3 p.m.", MON_11, 60),
            pair("Dec 1st, 2026 at 3 p.m", "2026-12-01T15:00:00+01:00")
        );
        // 1 March is before 23 November: next year.
        assert_eq!(
            first("by the 1st of March", MON_11, 60),
            pair("1st of March", "2027-03-01T17:00:00+01:00")
        );
        // With a year it is kept, even in the past.
        assert_eq!(
            first("March 1, 2026", MON_11, 60),
            pair("March 1, 2026", "2026-03-01T17:00:00+01:00")
        );
        // The reference's own day counts as this year.
        assert_eq!(
            first("23 November", MON_11, 60),
            pair("23 November", "2026-11-23T17:00:00+01:00")
        );
        // Impossible dates are no phrase: 31 April never; 29 February neither in 2026 nor 2027.
        assert_eq!(first("by 31 April", MON_11, 60), None);
        assert_eq!(first("by 2026-02-29", MON_11, 60), None);
        assert_eq!(first("Feb 29", MON_11, 60), None);
        // From June 2027 the next 29 February is in 2028.
        assert_eq!(
            first("Feb 29", "2027-06-01T10:00:00Z", 0),
            pair("Feb 29", "2028-02-29T17:00:00Z")
        );
    }

    #[test]
    fn end_of_week_and_month() {
        assert_eq!(
            first("by end of the week", MON_11, 60),
            pair("by end of the week", "2026-11-27T17:00:00+01:00")
        );
        // Saturday 28th: Friday 27th has passed → Friday 4 December.
        assert_eq!(
            first("EOW", "2026-11-28T10:00:00Z", 60),
            pair("EOW", "2026-12-04T17:00:00+01:00")
        );
        // November has 30 days.
        assert_eq!(
            first("end of month", MON_11, 60),
            pair("end of month", "2026-11-30T17:00:00+01:00")
        );
        // 31 December at 18:00 local: passed → 31 January 2027.
        assert_eq!(
            first("end of the month", "2026-12-31T17:00:00Z", 60),
            pair("end of the month", "2027-01-31T17:00:00+01:00")
        );
        // February of a leap year.
        assert_eq!(
            first("eom", "2028-02-10T10:00:00Z", 0),
            pair("eom", "2028-02-29T17:00:00Z")
        );
    }

    #[test]
    fn relative_spans() {
        // 10:00Z + 2 h = 12:00Z = 13:00 at +01:00.
        assert_eq!(
            first("Reply in 2 hours please", MON_11, 60),
            pair("in 2 hours", "2026-11-23T13:00:00+01:00")
        );
        assert_eq!(
            first("in 2h", MON_11, 60),
            pair("in 2h", "2026-11-23T13:00:00+01:00")
        );
        assert_eq!(
            first("within the next 30 minutes", MON_11, 60),
            pair("within the next 30 minutes", "2026-11-23T11:30:00+01:00")
        );
        assert_eq!(
            first("in half an hour", MON_11, 60),
            pair("in half an hour", "2026-11-23T11:30:00+01:00")
        );
        assert_eq!(
            first("in an hour", MON_11, 60),
            pair("in an hour", "2026-11-23T12:00:00+01:00")
        );
        // Days land at 17:00: Monday + 2 = Wednesday 25th; a week later = 30th.
        assert_eq!(
            first("in two days", MON_11, 60),
            pair("in two days", "2026-11-25T17:00:00+01:00")
        );
        assert_eq!(
            first("in a week", MON_11, 60),
            pair("in a week", "2026-11-30T17:00:00+01:00")
        );
        // Bounds: 745 hours is over 31 days; 0 is no amount.
        assert_eq!(first("in 745 hours", MON_11, 60), None);
        assert_eq!(first("in 0 days", MON_11, 60), None);
        // Past the year 9999: no phrase; the last writable minute still is one.
        assert_eq!(first("in 52 weeks", "9999-12-20T00:00:00Z", 0), None);
        assert_eq!(
            first("in 1 hour", "9999-12-31T22:59:00Z", 0),
            pair("in 1 hour", "9999-12-31T23:59:00Z")
        );
        assert_eq!(first("in 1 hour", "9999-12-31T22:59:00Z", 60), None);
        assert_eq!(
            first("in 1 hour", "0000-01-01T00:00:00+01:00", 60),
            pair("in 1 hour", "0000-01-01T01:00:00+01:00")
        );
    }

    #[test]
    fn no_false_phrases() {
        for text in [
            "Good morning team",
            "the 3 of us",
            "version 1.2 is at 10 percent",
            "on 12/01",
            "in time",
            "We met at the office",
            "9.30 is the score",
            "",
        ] {
            assert_eq!(first(text, MON_11, 60), None, "{text}");
        }
    }

    #[test]
    fn may_start_knows_every_opening_word() {
        let openings = [
            "by",
            "before",
            "until",
            "till",
            "due",
            "on",
            "at",
            "no",
            "in",
            "within",
            "today",
            "tonight",
            "tomorrow",
            "tmrw",
            "tmr",
            "eow",
            "eom",
            "day",
            "this",
            "coming",
            "next",
            "end",
            "close",
            "noon",
            "midday",
            "midnight",
            "eod",
            "cob",
            "eob",
            "morning",
            "1",
            "2026-12-01",
            "3pm",
        ];
        for word in openings.iter().chain(WEEKDAYS.iter()) {
            assert!(may_start(word), "{word}");
        }
        let months = [
            "january",
            "jan",
            "february",
            "feb",
            "march",
            "mar",
            "april",
            "apr",
            "may",
            "june",
            "jun",
            "july",
            "jul",
            "august",
            "aug",
            "september",
            "sep",
            "sept",
            "october",
            "oct",
            "november",
            "nov",
            "december",
            "dec",
        ];
        for word in months {
            assert!(month_of(word).is_some() && may_start(word), "{word}");
        }
        for word in ["lorem", "the", "send", "x", ""] {
            assert!(!may_start(word), "{word}");
        }
    }

    #[test]
    fn all_phrases_left_to_right() {
        let text = "Draft by Friday, final by Tuesday 10am, or in 3 days.";
        let reference = parse_time(MON_11, "t").unwrap();
        let found: Vec<(&str, String)> = find_all(text, reference, 60)
            .into_iter()
            .map(|d| (d.phrase(text), d.rfc3339()))
            .collect();
        // Tuesday after Monday 23rd is the 24th; Monday + 3 days = Thursday 26th.
        assert_eq!(
            found,
            [
                ("by Friday", "2026-11-27T17:00:00+01:00".to_owned()),
                ("by Tuesday 10am", "2026-11-24T10:00:00+01:00".to_owned()),
                ("in 3 days", "2026-11-26T17:00:00+01:00".to_owned()),
            ]
        );
    }
}
