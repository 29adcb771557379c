use super::*;
use crate::ToolErrorKind;

/// `time`'s reading of `s` in Unix seconds: the reference the fast reading must match.
fn time_crate(s: &str) -> Option<i64> {
    OffsetDateTime::parse(s, &Rfc3339)
        .ok()
        .map(OffsetDateTime::unix_timestamp)
}

#[test]
fn date_times_read_to_the_second() {
    // Expected values from Python's datetime (fromisoformat(...).timestamp()), except year
    // 0, which it lacks: 0001-01-01 (-62_135_596_800) less the 366 days of leap year 0.
    let cases = [
        ("2026-11-23T09:00:00+01:00", 1_795_420_800),
        ("2026-11-23T09:05:00Z", 1_795_424_700),
        ("2026-11-23t09:05:00z", 1_795_424_700),
        ("2026-11-23 09:05:00.999999999999Z", 1_795_424_700),
        ("1970-01-01T00:00:00-00:00", 0),
        ("1969-12-31T23:59:59.5Z", -1),
        ("2024-02-29T12:00:00-05:30", 1_709_227_800),
        ("0001-01-01T00:00:00Z", -62_135_596_800),
        ("0000-01-01T00:00:00Z", -62_135_596_800 - 366 * SECS_PER_DAY),
        ("9999-12-31T23:59:59Z", 253_402_300_799),
        // Leap seconds, read as the second before: 2016-12-31T23:59:59Z is 1_483_228_799.
        ("2016-12-31T23:59:60Z", 1_483_228_799),
        ("2016-12-31T22:59:60-01:00", 1_483_228_799),
        ("2017-01-01T00:59:60.25+01:00", 1_483_228_799),
        ("2015-06-30T23:59:60Z", 1_435_708_799),
    ];
    for (text, unix_secs) in cases {
        assert_eq!(
            rfc3339_unix_secs(text.as_bytes()),
            Some(unix_secs),
            "{text}"
        );
        assert_eq!(time_crate(text), Some(unix_secs), "{text}");
        assert_eq!(parse_time(text, "t").unwrap(), unix_secs, "{text}");
    }
    for text in [
        "2016-12-30T23:59:60Z",      // not a month's last day
        "2016-12-31T23:58:60Z",      // not its last minute
        "2016-12-31T23:59:60+01:00", // 22:59:60 UTC
        "9999-12-31T23:59:60-01:00", // 00:59:59 UTC, not a month's last second
        "2026-02-29T09:00:00Z",
        "2026-11-31T09:00:00Z",
        "2026-13-01T09:00:00Z",
        "2026-00-01T09:00:00Z",
        "2026-11-00T09:00:00Z",
        "2026-11-23T24:00:00Z",
        "2026-11-23T09:60:00Z",
        "2026-11-23T09:00:61Z",
        "2026-11-23T09:00:00+24:00",
        "2026-11-23T09:00:00+01:60",
        "2026-11-23T09:00:00+0100",
        "2026-11-23T09:00:00",
        "2026-11-23T09:00:00.Z",
        "2026-11-23T09:00:00Z ",
        "2026-11-23\u{e9}09:00:00Z",
        "2026-11-23T09:00Z",
        "+2026-11-23T09:00:00Z",
        "",
    ] {
        assert_eq!(rfc3339_unix_secs(text.as_bytes()), None, "{text}");
        assert_eq!(time_crate(text), None, "{text}");
    }
}

#[test]
fn leap_seconds_are_read_at_every_offset() {
    // For a month's last second in UTC (a leap second's place), the same instant written at
    // each offset with second 60 is accepted, as that instant; a day earlier it is not.
    let mut accepted = 0;
    for (year, month) in [(2016, 12), (2015, 6), (2024, 2), (0, 1), (9999, 12)] {
        let last = crate::date::days_in_month(year, month);
        for (day, leap) in [(last, true), (last - 1, false)] {
            let utc =
                crate::date::days_from_civil(year, month, day) * SECS_PER_DAY + SECS_PER_DAY - 1;
            for offset_minutes in (-1439..=1439_i64).step_by(7).chain([-1439, 0, 1439]) {
                let local = utc + offset_minutes * SECS_PER_MINUTE;
                let (y, m, d) = crate::date::civil_from_days(local.div_euclid(SECS_PER_DAY));
                let time_of_day = local.rem_euclid(SECS_PER_DAY);
                if !(0..=9999).contains(&y) {
                    continue;
                }
                let (hh, mm) = (time_of_day / SECS_PER_HOUR, time_of_day % 3600 / 60);
                let sign = if offset_minutes < 0 { '-' } else { '+' };
                let (oh, om) = (offset_minutes.abs() / 60, offset_minutes.abs() % 60);
                let text = format!("{y:04}-{m:02}-{d:02}T{hh:02}:{mm:02}:60{sign}{oh:02}:{om:02}");
                let want = leap.then_some(utc);
                assert_eq!(rfc3339_unix_secs(text.as_bytes()), want, "{text}");
                assert_eq!(time_crate(&text), want, "{text}");
                accepted += usize::from(leap);
            }
        }
    }
    // 415 offsets (412 stepped from -1439 to 1438, and -1439, 0, 1439) for each month; for
    // 9999-12 the 207 positive ones write the year 10000 and are skipped: 4·415 + 208.
    assert_eq!(accepted, 1_868);
}

#[test]
fn the_fast_reading_agrees_with_time_on_every_text_tried() {
    // A fixed xorshift, so a failure names a text that fails again. Each text is built
    // from parts at and past their bounds, then one byte of it may be changed.
    let mut state = 0x9E37_79B9_7F4A_7C15_u64;
    let mut next = move |below: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % below
    };
    let mut agreed_on_some = 0;
    for _ in 0..300_000 {
        let last_day = next(2) == 0;
        let year = [next(10_000), 2016, 9999, 0][next(4) as usize];
        let month = if last_day {
            [6, 12, 2][next(3) as usize]
        } else {
            next(14)
        };
        let day = if last_day {
            [30, 31, 29, 28][next(4) as usize]
        } else {
            next(33)
        };
        let (hour, minute) = if last_day {
            (23, 59)
        } else {
            (next(25), next(61))
        };
        let second = if next(3) == 0 { 60 } else { next(62) };
        let separator = ["T", "t", " ", "x", "\u{e9}", ""][next(6) as usize];
        let fraction = ["", ".", ".5", ".123456789", ".1234567891234"][next(5) as usize];
        let offset = match next(6) {
            0 => "Z".to_owned(),
            1 => "z".to_owned(),
            2 => String::new(),
            _ => {
                let sign = ["+", "-", "±"][next(3) as usize];
                let (h, m) = if next(2) == 0 {
                    (next(25), next(61))
                } else {
                    (1, 0)
                };
                format!("{sign}{h:02}:{m:02}")
            }
        };
        let mut text = format!(
            "{year:04}-{month:02}-{day:02}{separator}{hour:02}:{minute:02}:{second:02}\
             {fraction}{offset}"
        )
        .into_bytes();
        if next(4) == 0 {
            let at = next(text.len() as u64) as usize;
            text[at] = b"0123456789:-+.TZ "[next(17) as usize];
        }
        let Ok(text) = String::from_utf8(text) else {
            continue;
        };
        let fast = rfc3339_unix_secs(text.as_bytes());
        assert_eq!(fast, time_crate(&text), "{text:?}");
        if text.len() <= TIME_CHARS_MAX {
            assert_eq!(try_parse_time(&text), fast, "{text:?}");
            assert_eq!(parse_time(&text, "t").ok(), fast, "{text:?}");
        }
        agreed_on_some += usize::from(fast.is_some());
    }
    // The generator must reach the accepting side often, not only the refusals.
    assert!(
        agreed_on_some > 30_000,
        "only {agreed_on_some} texts were accepted"
    );
}

#[test]
fn units_multiply_out() {
    // 60 s × 60 = 3600 s an hour; 24 h × 60 = 1440 min a day; 1440 × 60 = 86 400 s.
    assert_eq!(SECS_PER_HOUR, 3_600);
    assert_eq!(MINUTES_PER_DAY, 1_440);
    assert_eq!(SECS_PER_DAY, 86_400);
}

#[test]
fn offsets_at_their_bounds() {
    assert!(check_offset(840, "o").is_ok());
    assert!(check_offset(-840, "o").is_ok());
    let e = check_offset(841, "utc_offset_minutes").unwrap_err();
    assert_eq!(e.kind, ToolErrorKind::InvalidArgs);
    assert_eq!(e.message, "utc_offset_minutes: 841 is outside -840..840");
    assert!(check_offset(-841, "o").is_err());
    let of = |v: Value| offset_minutes_of(&v);
    assert_eq!(of(serde_json::json!(840)), Some(840));
    assert_eq!(of(serde_json::json!(-840)), Some(-840));
    assert_eq!(of(serde_json::json!(841)), None);
    assert_eq!(of(serde_json::json!(-841)), None);
    assert_eq!(of(serde_json::json!(60.5)), None);
    assert_eq!(of(serde_json::json!("+01:00")), None);
    assert_eq!(of(Value::Null), None);
}

#[test]
fn hh_mm_spans_take_24_00_and_moments_do_not() {
    // 09:30 = 9·60 + 30 = 570; 23:59 = 23·60 + 59 = 1439; 24:00 = 24·60 = 1440.
    for parse in [parse_hh_mm, parse_time_of_day] {
        assert_eq!(parse("00:00", "f").unwrap(), 0);
        assert_eq!(parse("09:30", "f").unwrap(), 570);
        assert_eq!(parse("22:30", "f").unwrap(), 1350); // 22·60 + 30
        assert_eq!(parse("23:59", "f").unwrap(), 1439);
        for bad in [
            "24:01", "9:00", "09:60", "25:00", "0900", "09:0a", "ab:cd", "", "09:000", "+9:00",
            "09-00",
        ] {
            let e = parse(bad, "f").unwrap_err();
            assert_eq!(e.kind, ToolErrorKind::InvalidArgs, "{bad}");
        }
    }
    // The end of the day bounds a span; it is no moment in the day.
    assert_eq!(parse_hh_mm("24:00", "f").unwrap(), 1440);
    let e = parse_time_of_day("24:00", "quiet_hours.end").unwrap_err();
    assert_eq!(e.kind, ToolErrorKind::InvalidArgs);
    assert_eq!(
        e.message,
        "quiet_hours.end: \"24:00\" is not a time \"HH:MM\" (00:00..23:59)"
    );
    assert_eq!(
        parse_hh_mm("24:01", "working_hours.end")
            .unwrap_err()
            .message,
        "working_hours.end: \"24:01\" is not a time \"HH:MM\" (00:00..24:00)"
    );
}

#[test]
fn hh_mm_formats_modulo_a_day() {
    assert_eq!(format_hh_mm(0), "00:00");
    assert_eq!(format_hh_mm(1410), "23:30"); // 23·60 + 30
    assert_eq!(format_hh_mm(1439), "23:59");
    assert_eq!(format_hh_mm(1440), "00:00"); // a whole day: the next midnight
    assert_eq!(format_hh_mm(1470), "00:30"); // 1470 − 1440 = 30
    assert_eq!(format_hh_mm(-30), "23:30"); // −30 + 1440 = 1410
}

#[test]
fn rfc3339_round_trips_and_drops_fractions() {
    // 2026-11-23T00:00Z is day 20 780 (20 780 × 86 400 = 1 795 392 000 s), a Monday.
    // 09:00+01:00 = 08:00Z = 1 795 392 000 + 8 × 3600 = 1 795 420 800.
    let t = parse_time("2026-11-23T09:00:00+01:00", "t").unwrap();
    assert_eq!(t, 1_795_420_800);
    assert_eq!(parse_time("2026-11-23T08:00:00Z", "t").unwrap(), t);
    assert_eq!(parse_time("2026-11-23T08:00:00.999Z", "t").unwrap(), t);
    assert_eq!(parse_time("2026-11-23T08:00:00.5Z", "t").unwrap(), t);
    assert_eq!(parse_time("1970-01-02T00:00:00.9Z", "t").unwrap(), 86_400);
    assert_eq!(format_utc(t).unwrap(), "2026-11-23T08:00:00Z");
    assert_eq!(format_time(t, 0).unwrap(), "2026-11-23T08:00:00Z");
    assert_eq!(format_time(t, 60).unwrap(), "2026-11-23T09:00:00+01:00");
    // −330 min = −05:30: 08:00 − 5:30 = 02:30.
    assert_eq!(format_time(t, -330).unwrap(), "2026-11-23T02:30:00-05:30");
    assert_eq!(weekday_of_day(t.div_euclid(SECS_PER_DAY)), 1);
    for bad in [
        "2026-11-23T09:00:00",
        "2026-11-23",
        "2026-11-23 08:00",
        "today",
    ] {
        assert!(parse_time(bad, "t").is_err(), "{bad}");
        assert_eq!(try_parse_time(bad), None, "{bad}");
    }
    assert_eq!(try_parse_time("2026-11-23T09:00:00+01:00"), Some(t));
    let written = parse_date_time("2026-11-23T09:00:00+01:00", "t").unwrap();
    assert_eq!(written.unix_timestamp(), t);
    assert_eq!(written.offset().whole_minutes(), 60);
    assert_eq!(written.hour(), 9);
}

#[test]
fn time_strings_at_their_length_bound() {
    // "2026-11-23T09:00:00" (19) + "." + 14 digits (15) + "+01:00" (6) = 40: accepted.
    let at_bound = format!("2026-11-23T09:00:00.{}+01:00", "0".repeat(14));
    assert_eq!(at_bound.len(), TIME_CHARS_MAX);
    assert_eq!(parse_time(&at_bound, "t").unwrap(), 1_795_420_800);
    assert_eq!(try_parse_time(&at_bound), Some(1_795_420_800));
    // One more digit: 41, refused before parsing.
    let over = format!("2026-11-23T09:00:00.{}+01:00", "0".repeat(15));
    assert_eq!(
        parse_time(&over, "now").unwrap_err().message,
        "now: longer than 40 characters"
    );
    assert_eq!(try_parse_time(&over), None);
    assert!(parse_time(&"9".repeat(41), "t").is_err());
    // The bound is in characters: 40 two-byte ones (80 bytes) are not too long, just not
    // a date-time.
    let message = parse_time(&"é".repeat(40), "t").unwrap_err().message;
    assert!(message.starts_with("t: \"éé"), "{message}");
    assert!(
        message.contains("is not an RFC 3339 date-time"),
        "{message}"
    );
}

#[test]
fn formatting_outside_the_years_fails_without_panicking() {
    // 10000-01-01T00:00:00Z = 253 402 300 800 s: one second past 9999-12-31T23:59:59Z.
    assert_eq!(format_utc(253_402_300_799).unwrap(), "9999-12-31T23:59:59Z");
    assert!(format_utc(253_402_300_800).is_err());
    // 9999-12-31T23:46:40Z is 10000-01-01T00:46:40 at +01:00.
    assert!(format_time(253_402_300_000, 0).is_ok());
    assert!(format_time(253_402_300_000, 60).is_err());
    assert!(format_time(253_402_300_000, 60).ok().is_none());
    // The offsets in use, ±14:00 (840 min), format; beyond ±25:59:59 (1560 min = 26 h) is
    // no offset, and i32::MAX minutes overflows the seconds.
    assert_eq!(format_time(0, 840).unwrap(), "1970-01-01T14:00:00+14:00");
    assert_eq!(format_time(0, -840).unwrap(), "1969-12-31T10:00:00-14:00");
    assert!(format_time(0, 1560).is_err());
    assert!(format_time(0, i32::MAX).is_err());
    assert!(format_time(i64::MAX, 0).is_err());
}

#[test]
fn minute_rounding() {
    assert_eq!(minutes_ceil(0), 0);
    assert_eq!(minutes_ceil(1), 1);
    assert_eq!(minutes_ceil(60), 1);
    assert_eq!(minutes_ceil(61), 2);
    assert_eq!(minutes_ceil(-1), 0); // −1 s is in the minute −1 .. 0: up to 0
    assert_eq!(minutes_floor(119), 1);
    assert_eq!(minutes_floor(120), 2);
    assert_eq!(minutes_floor(-1), -1);
}

#[test]
fn local_days_minutes_and_instants() {
    // 2026-11-23T00:00Z = day 20 780 = 1 795 392 000 s.
    let midnight = 1_795_392_000;
    assert_eq!(local_day(midnight, 0), 20_780);
    assert_eq!(local_day(midnight - 1, 0), 20_779);
    // At −00:01 the last second before midnight UTC is still the 22nd; at +00:01 the
    // midnight minute is already the 23rd.
    assert_eq!(local_day(midnight, -1), 20_779);
    assert_eq!(local_day(midnight - 60, 1), 20_780);
    // 04:30Z on the 23rd (+ 4·3600 + 1800) is 23:30 on the 22nd at −05:00.
    let t = midnight + 4 * 3600 + 1800;
    assert_eq!(local_day(t, -300), 20_779);
    assert_eq!(local_minute_of_day(t, -300), 23 * 60 + 30);
    assert_eq!(local_minute_of_day(t, 0), 4 * 60 + 30);
    assert_eq!(local_instant(20_779, 23 * 60 + 30, -300), t);
    assert_eq!(local_instant(20_780, 0, 0), midnight);
    assert_eq!(local_day(-1, 0), -1);
    assert_eq!(local_minute_of_day(-1, 0), 1439);
}

#[test]
fn weekdays_of_known_days() {
    assert_eq!(weekday_of_day(0), 4); // 1970-01-01 Thursday
    assert_eq!(weekday_of_day(3), 7); // Sunday: (3 + 3) mod 7 + 1
    assert_eq!(weekday_of_day(4), 1); // Monday: (4 + 3) mod 7 = 0
    assert_eq!(weekday_of_day(-1), 3); // 1969-12-31 Wednesday
    assert_eq!(weekday_of_day(20_780), 1); // 2026-11-23: (20 783 mod 7) = 0
}
