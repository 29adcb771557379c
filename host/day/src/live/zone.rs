//! The person's local days: where a live session's day ends (their midnight, at the offset
//! they are at then) and their time zone's offset changes, as `utc_offset` signals a day's
//! record keeps, so a record replays with no time zone database.
//!
//! It owns reading the IANA database (compiled in: jiff's bundled copy). It must not read the
//! machine's clock nor write anything: the session journals the signals it makes.

use serde_json::{Value, json};
use time::OffsetDateTime;

use crate::scenario::{Scenario, UTC_OFFSET};

/// How the id of an offset change the life journals itself begins (`time_zone:<zone>:<unix
/// second>`): a line no sender sent.
pub(crate) const ZONE_ID_PREFIX: &str = "time_zone:";

/// Why a time zone cannot be used.
#[derive(Debug, thiserror::Error)]
#[error("time zone `{zone}`: {reason}")]
pub struct ZoneError {
    zone: String,
    reason: String,
}

/// The first instant after the scenario's start whose local date (at the person's offset
/// then, `utc_offset` signals included) is past the start's: the person's next midnight,
/// wherever they are. An offset change that skips the midnight ends the day where it skips.
pub(crate) fn day_end(scenario: &Scenario) -> OffsetDateTime {
    let start = scenario.start;
    let date = scenario.local(start).date();
    let tomorrow = date.next_day().unwrap_or(date);
    let offsets = std::iter::once(scenario.utc_offset_minutes)
        .chain(offset_changes(scenario).map(|(_, minutes)| minutes));
    let midnights = offsets.filter_map(|minutes| {
        let offset = time::UtcOffset::from_whole_seconds(minutes * 60).ok()?;
        Some(
            tomorrow
                .midnight()
                .assume_offset(offset)
                .to_offset(time::UtcOffset::UTC),
        )
    });
    let changes = offset_changes(scenario).map(|(at, _)| at);
    midnights
        .chain(changes)
        .filter(|at| *at > start && scenario.local(*at).date() > date)
        .min()
        .unwrap_or(start + time::Duration::days(1))
}

/// The scenario's `utc_offset` signals: when, and the offset from then on.
fn offset_changes(scenario: &Scenario) -> impl Iterator<Item = (OffsetDateTime, i32)> + '_ {
    scenario
        .signals
        .iter()
        .filter(|signal| signal.kind == UTC_OFFSET)
        .filter_map(|signal| {
            let minutes = signal.data["utc_offset_minutes"].as_i64()?;
            Some((signal.at, i32::try_from(minutes).ok()?))
        })
}

/// The zone named `zone`, from the compiled-in database.
fn zone_named(zone: &str) -> Result<jiff::tz::TimeZone, ZoneError> {
    jiff::tz::TimeZone::get(zone).map_err(|e| ZoneError {
        zone: zone.to_owned(),
        reason: e.to_string(),
    })
}

/// Checks that `zone` names a time zone the database has.
pub(crate) fn check(zone: &str) -> Result<(), ZoneError> {
    zone_named(zone).map(|_| ())
}

/// The offset east of UTC, in minutes, of `zone` at `at`.
pub(crate) fn offset_minutes(zone: &str, at: OffsetDateTime) -> Result<i32, ZoneError> {
    let tz = zone_named(zone)?;
    let timestamp = timestamp(zone, at)?;
    Ok(tz.to_offset(timestamp).seconds() / 60)
}

/// `zone`'s offset changes from `from` (included) to the person's midnight after it in that
/// zone, each as the `utc_offset` signal a day's journal keeps (its id names the zone and the
/// instant, so the same change is never journaled twice).
pub(crate) fn changes(zone: &str, from: OffsetDateTime) -> Result<Vec<Value>, ZoneError> {
    let tz = zone_named(zone)?;
    let start = timestamp(zone, from)?;
    let error = |e: jiff::Error| ZoneError {
        zone: zone.to_owned(),
        reason: e.to_string(),
    };
    let midnight = start
        .to_zoned_datetime(tz.clone())
        .date()
        .tomorrow()
        .and_then(|date| date.to_zoned_datetime(tz.clone()))
        .map_err(error)?
        .timestamp();
    // `following` starts after its instant: one second back includes a change at `from`.
    let before = start
        .checked_sub(jiff::SignedDuration::from_secs(1))
        .map_err(error)?;
    let mut signals = Vec::new();
    for transition in tz.following(before) {
        let at = transition.timestamp();
        if at >= midnight {
            break;
        }
        let minutes = transition.offset().seconds() / 60;
        let Ok(offset) = time::UtcOffset::from_whole_seconds(minutes * 60) else {
            continue;
        };
        let Ok(instant) = OffsetDateTime::from_unix_timestamp(at.as_second()) else {
            continue;
        };
        let at_text = instant
            .to_offset(offset)
            .format(&time::format_description::well_known::Rfc3339)
            .unwrap_or_default();
        signals.push(json!({
            "at": at_text,
            "kind": UTC_OFFSET,
            "data": { "utc_offset_minutes": minutes, "time_zone": zone },
            "id": format!("{ZONE_ID_PREFIX}{zone}:{}", at.as_second()),
        }));
    }
    Ok(signals)
}

fn timestamp(zone: &str, at: OffsetDateTime) -> Result<jiff::Timestamp, ZoneError> {
    jiff::Timestamp::from_second(at.unix_timestamp()).map_err(|e| ZoneError {
        zone: zone.to_owned(),
        reason: e.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn day(
        start: OffsetDateTime,
        offset_minutes: i32,
        signals: &[(OffsetDateTime, i32)],
    ) -> Scenario {
        let setup = json!({"scenario": "z", "tick_minutes": 15,
            "utc_offset_minutes": offset_minutes, "profile": {}});
        let mut scenario = Scenario::setup_of(&setup, start).unwrap();
        for (at, minutes) in signals {
            scenario.accept(crate::scenario::Signal {
                at: *at,
                kind: UTC_OFFSET.to_owned(),
                data: json!({ "utc_offset_minutes": minutes }),
            });
        }
        scenario
    }

    #[test]
    fn berlin_changes_at_three_in_october_and_at_two_in_march() {
        // tzdata: Europe/Berlin leaves CEST (+02:00) on 2026-10-25 at 01:00 UTC and enters it
        // on 2027-03-28 at 01:00 UTC.
        let october = changes(
            "Europe/Berlin",
            time::macros::datetime!(2026-10-25 00:00 +02:00),
        )
        .unwrap();
        assert_eq!(october.len(), 1, "{october:?}");
        assert_eq!(october[0]["at"], "2026-10-25T02:00:00+01:00");
        assert_eq!(october[0]["data"]["utc_offset_minutes"], 60);
        let march = changes(
            "Europe/Berlin",
            time::macros::datetime!(2027-03-28 00:00 +01:00),
        )
        .unwrap();
        assert_eq!(march.len(), 1);
        assert_eq!(march[0]["at"], "2027-03-28T03:00:00+02:00");
        assert_eq!(march[0]["data"]["utc_offset_minutes"], 120);
        // A day with no change has none; the day before the change does not see it.
        assert!(
            changes(
                "Europe/Berlin",
                time::macros::datetime!(2026-10-24 00:00 +02:00)
            )
            .unwrap()
            .is_empty()
        );
        assert_eq!(
            offset_minutes(
                "America/New_York",
                time::macros::datetime!(2026-11-02 12:00 UTC)
            )
            .unwrap(),
            -300
        );
        assert!(check("Europe/Atlantis").is_err());
    }

    #[test]
    fn a_day_ends_at_the_person_s_midnight_at_the_offset_they_are_at_then() {
        // No change: midnight at +02:00.
        let plain = day(time::macros::datetime!(2026-10-24 00:00 +02:00), 120, &[]);
        assert_eq!(
            day_end(&plain),
            time::macros::datetime!(2026-10-24 22:00 UTC)
        );
        // The autumn change inside the day: 25 hours, midnight at +01:00.
        let autumn = day(
            time::macros::datetime!(2026-10-25 00:00 +02:00),
            120,
            &[(time::macros::datetime!(2026-10-25 01:00 UTC), 60)],
        );
        assert_eq!(
            day_end(&autumn),
            time::macros::datetime!(2026-10-25 23:00 UTC)
        );
        // Flying from Berlin to New York at 10:00 UTC: her midnight is New York's.
        let flight = day(
            time::macros::datetime!(2026-10-28 00:00 +01:00),
            60,
            &[(time::macros::datetime!(2026-10-28 10:00 UTC), -240)],
        );
        assert_eq!(
            day_end(&flight),
            time::macros::datetime!(2026-10-29 04:00 UTC)
        );
        // A session that began mid-afternoon ends its first day at that night's midnight.
        let afternoon = day(time::macros::datetime!(2026-11-23 14:37 +01:00), 60, &[]);
        assert_eq!(
            day_end(&afternoon),
            time::macros::datetime!(2026-11-23 23:00 UTC)
        );
        // Flying east at 20:00 UTC (-05:00, 15:00 local) to +09:00 (05:00 the next day
        // there): the day ends as she lands in tomorrow, at the change.
        let east = day(
            time::macros::datetime!(2026-11-10 00:00 -05:00),
            -300,
            &[(time::macros::datetime!(2026-11-10 20:00 UTC), 540)],
        );
        assert_eq!(
            day_end(&east),
            time::macros::datetime!(2026-11-10 20:00 UTC)
        );
    }
}
