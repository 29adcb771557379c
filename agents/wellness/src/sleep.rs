//! `sleep_summary`: nightly sleep, sleep debt and bedtime consistency over a window of nights.
//!
//! Rules (also stated in `schemas/wellness/sleep_summary.*.json`):
//! - Sessions are taken in whole minutes (start and end rounded down). A session must end after
//!   it starts, last at most 24 hours ([`MAX_SESSION_MINUTES`]) and end no later than `now`;
//!   otherwise the call is `invalid_args` naming the session.
//! - Overlapping or touching sessions (two devices recording the same night, a split record)
//!   are merged into one block of continuous sleep; `merged_sessions` counts the sessions
//!   absorbed. Naps are ordinary sessions.
//! - A *night* is named by a local date D (at `utc_offset_minutes`, a fixed offset) and
//!   collects every block that **ends** between 18:00 local on D−1 and 18:00 local on D
//!   ([`NIGHT_BOUNDARY_MINUTE`]): so a night ending on the morning of D, a late sleeper waking
//!   at 12:30 on D, a first sleep ending at 23:50 on D−1 and an afternoon nap on D all count
//!   for night D; a doze ending at 19:00 on D counts for the next night.
//! - The window is the `nights` nights (default 7, at most 31) ending with night N = the local
//!   date of `now`. Blocks attributed to other nights are left out and counted in
//!   `ignored_sessions`. A night without sleep counts as 0 minutes.
//! - Per night: total minutes, the number of blocks, the shortfall against `target_minutes`
//!   (default 480), and — when it has sleep — its bedtime and wake time: the local start and
//!   end of its longest block (ties: the earlier block), as "HH:MM".
//! - `sleep_debt_minutes` is the sum of the nightly shortfalls: surplus is **not** carried (a
//!   long night does not repay an earlier short one); the surplus is reported separately as
//!   `surplus_minutes`. `average_minutes` is the mean over all nights of the window (nights
//!   without sleep count as 0), rounded.
//! - Bedtime consistency, over the nights with sleep: bedtimes are clock times on a circle, so
//!   they are first unwrapped by cutting the circle at the largest gap between consecutive
//!   bedtimes (ties: the gap across midnight, then the earliest): 23:30 and 00:30 become 23:30
//!   and 24:30, 60 minutes apart. `bedtime_mean` is the rounded mean taken back to a clock time;
//!   `bedtime_sd_minutes` the population standard deviation, rounded (from 2 nights with sleep
//!   on; absent below).
//!
//! It must not invent sleep that is not in the sessions, nor read a clock.

use aura_sdk::{ToolError, ToolResult};
use serde::{Deserialize, Serialize};

use aura_sdk::args::{check_len, check_range};
use aura_sdk::time::{MINUTES_PER_DAY, check_offset, format_hh_mm, minutes_floor, parse_time};

use aura_sdk::date::format_date;
use aura_sdk::round::div_round;

/// Most sessions one call accepts (two weeks of nights plus naps, with room to spare).
pub const MAX_SESSIONS: usize = 100;
/// Longest single session in minutes: longer records are device errors.
pub const MAX_SESSION_MINUTES: i64 = 1440;
/// Smallest and largest `nights`: a month at most keeps the result small.
pub const NIGHTS: (u32, u32) = (1, 31);
/// Default `nights`: one week.
pub const DEFAULT_NIGHTS: u32 = 7;
/// Smallest and largest `target_minutes`.
pub const TARGET_MINUTES: (u32, u32) = (60, 1440);
/// Default `target_minutes`: 8 hours.
pub const DEFAULT_TARGET_MINUTES: u32 = 480;
/// Local minute of the day at which one night hands over to the next (18:00): late enough
/// that afternoon naps and late wake-ups belong to the night just past, early enough that
/// sleep ending before midnight belongs to the coming one.
pub const NIGHT_BOUNDARY_MINUTE: i64 = 18 * 60;

/// One sleep session.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SleepSession {
    /// RFC 3339 start.
    pub start: String,
    /// RFC 3339 end; after `start`, at most 24 h later, not after `now`.
    pub end: String,
}

/// Args of `sleep_summary`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SleepSummaryArgs {
    /// Sleep sessions in any order (≤ 100). Default none.
    #[serde(default)]
    pub sessions: Vec<SleepSession>,
    /// Nightly sleep target in minutes (60..1440). Default 480.
    #[serde(default = "default_target_minutes")]
    pub target_minutes: u32,
    /// The user's offset east of UTC in minutes (-840..840).
    pub utc_offset_minutes: i32,
    /// Nights in the window (1..31). Default 7.
    #[serde(default = "default_nights")]
    pub nights: u32,
    /// RFC 3339 instant; the window's last night is its local date.
    pub now: String,
}

fn default_target_minutes() -> u32 {
    DEFAULT_TARGET_MINUTES
}

fn default_nights() -> u32 {
    DEFAULT_NIGHTS
}

/// One night of the window.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Night {
    /// Local date "YYYY-MM-DD" the night ends on.
    pub date: String,
    /// Minutes asleep.
    pub minutes: i64,
    /// Sleep blocks (after merging) counted for the night.
    pub sessions: u32,
    /// max(0, target − minutes).
    pub shortfall_minutes: i64,
    /// Local start of the longest block, "HH:MM"; absent without sleep.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bedtime: Option<String>,
    /// Local end of the longest block, "HH:MM"; absent without sleep.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wake_time: Option<String>,
}

/// Result of `sleep_summary`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SleepSummaryResult {
    /// The window's nights, oldest first.
    pub nights: Vec<Night>,
    pub target_minutes: u32,
    /// Sum of the nightly shortfalls.
    pub sleep_debt_minutes: i64,
    /// Sum of the minutes above target (not set against the debt).
    pub surplus_minutes: i64,
    /// Mean nightly minutes over the whole window, rounded.
    pub average_minutes: i64,
    /// Nights of the window with any sleep.
    pub nights_with_sleep: u32,
    /// Mean bedtime "HH:MM" over the nights with sleep; absent when there are none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bedtime_mean: Option<String>,
    /// Population standard deviation of the bedtimes, minutes; absent below 2 nights with sleep.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bedtime_sd_minutes: Option<i64>,
    /// Sessions absorbed into another by merging overlapping or touching ones.
    pub merged_sessions: u32,
    /// Blocks (after merging) attributed to nights outside the window.
    pub ignored_sessions: u32,
}

/// A merged block of sleep, in UTC minutes since the epoch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Block {
    start: i64,
    end: i64,
}

/// Summarizes the sessions. See the module documentation for the rules.
pub fn sleep_summary(args: SleepSummaryArgs) -> ToolResult<SleepSummaryResult> {
    check_len(&args.sessions, "sessions", MAX_SESSIONS)?;
    let (lo, hi) = TARGET_MINUTES;
    check_range(args.target_minutes, "target_minutes", lo, hi)?;
    check_offset(args.utc_offset_minutes, "utc_offset_minutes")?;
    let (lo, hi) = NIGHTS;
    check_range(args.nights, "nights", lo, hi)?;
    let now = parse_time(&args.now, "now")?;

    let mut spans = Vec::with_capacity(args.sessions.len());
    for (i, session) in args.sessions.iter().enumerate() {
        let field = format!("sessions[{i}]");
        let start = parse_time(&session.start, format_args!("{field}.start"))?;
        let end = parse_time(&session.end, format_args!("{field}.end"))?;
        if end <= start {
            return Err(ToolError::invalid_args(format!(
                "{field}: end {:?} must be after start {:?}",
                session.end, session.start
            )));
        }
        if end > now {
            return Err(ToolError::invalid_args(format!(
                "{field}.end: {:?} is after now {:?}",
                session.end, args.now
            )));
        }
        let (start, end) = (minutes_floor(start), minutes_floor(end));
        if end - start > MAX_SESSION_MINUTES {
            return Err(ToolError::invalid_args(format!(
                "{field}: lasts {} minutes, more than {MAX_SESSION_MINUTES}",
                end - start
            )));
        }
        spans.push(Block { start, end });
    }
    let blocks = merge(spans);
    let merged_sessions = u32::try_from(args.sessions.len() - blocks.len()).unwrap_or(0);

    let offset = i64::from(args.utc_offset_minutes);
    let night_of = |minute: i64| {
        (minute + offset + MINUTES_PER_DAY - NIGHT_BOUNDARY_MINUTE).div_euclid(MINUTES_PER_DAY)
    };
    let last_night = (minutes_floor(now) + offset).div_euclid(MINUTES_PER_DAY);
    let window = i64::from(args.nights);
    let first_night = last_night - window + 1;

    // Per night of the window: (minutes, blocks, longest block).
    let mut per_night: Vec<(i64, u32, Option<Block>)> = vec![(0, 0, None); args.nights as usize];
    let mut ignored_sessions = 0;
    for block in blocks {
        let night = night_of(block.end);
        if night < first_night || night > last_night {
            ignored_sessions += 1;
            continue;
        }
        let (minutes, count, longest) = &mut per_night[(night - first_night) as usize];
        let length = block.end - block.start;
        *minutes += length;
        *count += 1;
        // Blocks arrive in start order, so on a tie the earlier block stays.
        if longest.is_none_or(|l| length > l.end - l.start) {
            *longest = Some(block);
        }
    }

    let target = i64::from(args.target_minutes);
    let mut nights = Vec::with_capacity(per_night.len());
    let mut bedtimes = Vec::new();
    let (mut debt, mut surplus, mut total) = (0, 0, 0);
    for (i, (minutes, count, longest)) in per_night.into_iter().enumerate() {
        let date = format_date(first_night + i as i64);
        let asleep = minutes > 0;
        let longest = longest.filter(|_| asleep);
        if let Some(block) = longest {
            bedtimes.push((block.start + offset).rem_euclid(MINUTES_PER_DAY));
        }
        debt += (target - minutes).max(0);
        surplus += (minutes - target).max(0);
        total += minutes;
        nights.push(Night {
            date,
            minutes,
            sessions: count,
            shortfall_minutes: (target - minutes).max(0),
            bedtime: longest.map(|b| format_hh_mm(b.start + offset)),
            wake_time: longest.map(|b| format_hh_mm(b.end + offset)),
        });
    }

    let (bedtime_mean, bedtime_sd_minutes) = match bedtime_stats(&bedtimes) {
        None => (None, None),
        Some((mean, sd)) => (Some(format_hh_mm(mean)), sd),
    };
    Ok(SleepSummaryResult {
        nights_with_sleep: u32::try_from(bedtimes.len()).unwrap_or(0),
        nights,
        target_minutes: args.target_minutes,
        sleep_debt_minutes: debt,
        surplus_minutes: surplus,
        average_minutes: div_round(total, window),
        bedtime_mean,
        bedtime_sd_minutes,
        merged_sessions,
        ignored_sessions,
    })
}

/// Sorts blocks and joins those that overlap or touch.
fn merge(mut spans: Vec<Block>) -> Vec<Block> {
    spans.sort_unstable_by_key(|b| (b.start, b.end));
    let mut merged: Vec<Block> = Vec::with_capacity(spans.len());
    for span in spans {
        match merged.last_mut() {
            Some(last) if span.start <= last.end => last.end = last.end.max(span.end),
            _ => merged.push(span),
        }
    }
    merged
}

/// Mean (minute of the day, 0..1440) and rounded population standard deviation (from two
/// values on) of clock times given as minutes of the day, unwrapped at the largest gap.
pub fn bedtime_stats(minutes_of_day: &[i64]) -> Option<(i64, Option<i64>)> {
    if minutes_of_day.is_empty() {
        return None;
    }
    let mut v = minutes_of_day.to_vec();
    v.sort_unstable();
    let n = v.len();
    // The gap across midnight, from the last value round to the first, wins ties.
    let mut best_gap = v[0] + MINUTES_PER_DAY - v[n - 1];
    let mut cut_after = None;
    for k in 0..n - 1 {
        let gap = v[k + 1] - v[k];
        if gap > best_gap {
            best_gap = gap;
            cut_after = Some(k);
        }
    }
    if let Some(k) = cut_after {
        // The values up to the cut come after the others: move them a day on.
        for x in &mut v[..=k] {
            *x += MINUTES_PER_DAY;
        }
    }
    let count = n as i64;
    let sum: i64 = v.iter().sum();
    let mean = div_round(sum, count).rem_euclid(MINUTES_PER_DAY);
    if n < 2 {
        return Some((mean, None));
    }
    // n²·variance = n·Σx² − (Σx)²; sd = √(that)/n, rounded half up as
    // floor((⌊√(4·that)⌋ + n) / (2n)).
    let sum_sq: i64 = v.iter().map(|x| x * x).sum();
    let scaled = count * sum_sq - sum * sum;
    let root = u64::try_from(4 * scaled).unwrap_or(0).isqrt() as i64;
    Some((mean, Some((root + count) / (2 * count))))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SCHEMAS;
    use aura_sdk::ToolErrorKind;
    use serde_json::json;

    fn s(start: &str, end: &str) -> SleepSession {
        SleepSession {
            start: start.into(),
            end: end.into(),
        }
    }

    fn args(sessions: Vec<SleepSession>) -> SleepSummaryArgs {
        SleepSummaryArgs {
            sessions,
            target_minutes: 480,
            utc_offset_minutes: 60,
            nights: 3,
            now: "2026-11-25T08:00:00+01:00".into(),
        }
    }

    fn run(args: SleepSummaryArgs) -> SleepSummaryResult {
        let result = sleep_summary(args).unwrap();
        let schema = SCHEMAS.load("sleep_summary.result.json");
        aura_testkit::assert_valid(&schema, &serde_json::to_value(&result).unwrap());
        result
    }

    fn minutes(result: &SleepSummaryResult) -> Vec<(&str, i64, u32)> {
        result
            .nights
            .iter()
            .map(|n| (n.date.as_str(), n.minutes, n.sessions))
            .collect()
    }

    #[test]
    fn bedtimes_wrap_at_midnight() {
        // 23:30 and 00:30: gaps 1380 (00:30→23:30) and 60 across midnight; cut at 1380 →
        // 1410 and 1470, mean 1440 → 00:00; each 30 from the mean → sd 30.
        assert_eq!(bedtime_stats(&[1410, 30]), Some((0, Some(30))));
        // 22:00, 23:00, 01:00 (1320, 1380, 60): gaps 1260 (01:00→22:00), 60, and 120 across
        // midnight. Cut after 01:00 → 1320, 1380, 1500; mean 4200/3 = 1400 → 23:20.
        // Deviations −80, −20, 100: Σ² = 6400 + 400 + 10 000 = 16 800; /3 = 5600;
        // √5600 = 74.83 → 75.
        assert_eq!(bedtime_stats(&[1320, 60, 1380]), Some((1400, Some(75))));
        // Daytime sleepers do not wrap: 09:00 and 10:00 → mean 09:30, sd 30.
        assert_eq!(bedtime_stats(&[540, 600]), Some((570, Some(30))));
        // One bedtime: its own mean, no sd. None: nothing.
        assert_eq!(bedtime_stats(&[1410]), Some((1410, None)));
        assert_eq!(bedtime_stats(&[]), None);
        // Equal values: sd 0.
        assert_eq!(bedtime_stats(&[1380, 1380, 1380]), Some((1380, Some(0))));
    }

    #[test]
    fn three_nights_with_a_nap_a_split_night_and_a_missing_night() {
        // Offset +01:00, now Wed 2026-11-25 08:00 local, 3 nights: 23, 24, 25 November.
        // Night 23: nothing → 0 min, shortfall 480, no bedtime.
        // Night 24: 23:30 (23rd) → 06:30 = 420 min; a second device's 00:00–06:00 lies inside
        //   it and is merged; a nap 14:00–14:30 on the 24th (ends before 18:00) = 30 min →
        //   450 min, 2 blocks, shortfall 30; bedtime 23:30, wake 06:30 (the longest block).
        // Night 25: 00:30 → 03:00 local (150) and 03:20 → 08:00 local (280), given in UTC
        //   (23:30Z on the 24th is 00:30 local on the 25th) → 430 min, 2 blocks, shortfall
        //   50; the longest block is 03:20–08:00 → bedtime 03:20, wake 08:00. It ends exactly
        //   at now, which is allowed.
        // A night of the 19th–20th is outside the window: ignored.
        // Debt 480 + 30 + 50 = 560, no surplus; average (0 + 450 + 430)/3 = 293.3 → 293.
        // Bedtimes 23:30 (1410) and 03:20 (200): gap 200→1410 is 1210, across midnight 230 →
        // cut at 1210: 1410 and 1640, mean 3050/2 = 1525 → 01:25; each is 115 from it → sd 115.
        let result = run(args(vec![
            s("2026-11-25T02:20:00Z", "2026-11-25T07:00:00Z"),
            s("2026-11-23T23:30:00+01:00", "2026-11-24T06:30:00+01:00"),
            s("2026-11-24T14:00:00+01:00", "2026-11-24T14:30:00+01:00"),
            s("2026-11-24T23:30:00Z", "2026-11-25T02:00:00Z"),
            s("2026-11-19T23:00:00+01:00", "2026-11-20T07:00:00+01:00"),
            s("2026-11-24T00:00:00+01:00", "2026-11-24T06:00:00+01:00"),
        ]));
        assert_eq!(
            minutes(&result),
            [
                ("2026-11-23", 0, 0),
                ("2026-11-24", 450, 2),
                ("2026-11-25", 430, 2)
            ]
        );
        let shortfalls: Vec<i64> = result.nights.iter().map(|n| n.shortfall_minutes).collect();
        assert_eq!(shortfalls, [480, 30, 50]);
        assert_eq!(result.nights[0].bedtime, None);
        assert_eq!(result.nights[0].wake_time, None);
        assert_eq!(result.nights[1].bedtime.as_deref(), Some("23:30"));
        assert_eq!(result.nights[1].wake_time.as_deref(), Some("06:30"));
        assert_eq!(result.nights[2].bedtime.as_deref(), Some("03:20"));
        assert_eq!(result.nights[2].wake_time.as_deref(), Some("08:00"));
        assert_eq!(result.sleep_debt_minutes, 560);
        assert_eq!(result.surplus_minutes, 0);
        assert_eq!(result.average_minutes, 293);
        assert_eq!(result.nights_with_sleep, 2);
        assert_eq!(result.bedtime_mean.as_deref(), Some("01:25"));
        assert_eq!(result.bedtime_sd_minutes, Some(115));
        assert_eq!(result.merged_sessions, 1);
        assert_eq!(result.ignored_sessions, 1);
        assert_eq!(result.target_minutes, 480);
    }

    #[test]
    fn surplus_is_not_carried_against_debt() {
        // Target 420, 2 nights (24th and 25th) at UTC. Night 24: 22:00–08:00 = 600 min,
        // surplus 180. Night 25: 01:00–05:00 = 240 min, shortfall 180. Debt 180 (not 0),
        // surplus 180, average (600 + 240)/2 = 420. Touching sessions 01:00–03:00 and
        // 03:00–05:00 merge into one block.
        let mut a = args(vec![
            s("2026-11-23T22:00:00Z", "2026-11-24T08:00:00Z"),
            s("2026-11-25T03:00:00Z", "2026-11-25T05:00:00Z"),
            s("2026-11-25T01:00:00Z", "2026-11-25T03:00:00Z"),
        ]);
        a.target_minutes = 420;
        a.utc_offset_minutes = 0;
        a.nights = 2;
        a.now = "2026-11-25T12:00:00Z".into();
        let result = run(a);
        assert_eq!(
            minutes(&result),
            [("2026-11-24", 600, 1), ("2026-11-25", 240, 1)]
        );
        assert_eq!(result.sleep_debt_minutes, 180);
        assert_eq!(result.surplus_minutes, 180);
        assert_eq!(result.average_minutes, 420);
        assert_eq!(result.merged_sessions, 1);
        // Bedtimes 22:00 (1320) and 01:00 (60): cut at the gap 60→1320 (1260) → 1320 and
        // 1500, mean 1410 → 23:30, sd 90.
        assert_eq!(result.bedtime_mean.as_deref(), Some("23:30"));
        assert_eq!(result.bedtime_sd_minutes, Some(90));
    }

    #[test]
    fn the_night_hands_over_at_six_in_the_evening() {
        // UTC, now 2026-11-25T20:00Z, 2 nights: 24th and 25th. A doze 17:00–17:59 on the 24th
        // alone belongs to night 24 (checked at the end), but here a second record
        // 17:59:30–18:00 (rounded down to 17:59–18:00) touches it: the merged block ends at
        // 18:00 and belongs to night 25. A doze ending 19:00 on the 25th belongs to night 26
        // (outside the window, ignored). A late sleeper's 04:00–12:30 (510 min) on the 25th
        // counts for night 25.
        let mut a = args(vec![
            s("2026-11-24T17:00:00Z", "2026-11-24T17:59:00Z"),
            s("2026-11-24T17:59:30Z", "2026-11-24T18:00:00Z"),
            s("2026-11-25T18:30:00Z", "2026-11-25T19:00:00Z"),
            s("2026-11-25T04:00:00Z", "2026-11-25T12:30:00Z"),
        ]);
        a.utc_offset_minutes = 0;
        a.nights = 2;
        a.now = "2026-11-25T20:00:00Z".into();
        let result = run(a);
        // Night 25: 60 + 510 = 570 min in 2 blocks; the longest starts 04:00.
        assert_eq!(
            minutes(&result),
            [("2026-11-24", 0, 0), ("2026-11-25", 570, 2)]
        );
        assert_eq!(result.merged_sessions, 1);
        assert_eq!(result.ignored_sessions, 1);
        assert_eq!(result.nights[1].bedtime.as_deref(), Some("04:00"));
        // One night with sleep: a mean, no spread.
        assert_eq!(result.bedtime_mean.as_deref(), Some("04:00"));
        assert_eq!(result.bedtime_sd_minutes, None);

        // Without the second session the 17:59 doze stays on night 24.
        let mut a = args(vec![s("2026-11-24T17:00:00Z", "2026-11-24T17:59:00Z")]);
        a.utc_offset_minutes = 0;
        a.nights = 2;
        a.now = "2026-11-25T20:00:00Z".into();
        assert_eq!(
            minutes(&run(a)),
            [("2026-11-24", 59, 1), ("2026-11-25", 0, 0)]
        );
    }

    #[test]
    fn no_sessions_is_a_week_of_empty_nights() {
        // Default 7 nights ending Wed 25th (local +01:00): 19th..25th, each 0 min, debt
        // 7 × 480 = 3360, average 0, no bedtimes.
        let a: SleepSummaryArgs = serde_json::from_value(json!({
            "utc_offset_minutes": 60, "now": "2026-11-25T08:00:00+01:00"
        }))
        .unwrap();
        let result = run(a);
        assert_eq!(result.nights.len(), 7);
        assert_eq!(result.nights[0].date, "2026-11-19");
        assert_eq!(result.nights[6].date, "2026-11-25");
        assert!(result.nights.iter().all(|n| n.minutes == 0));
        assert_eq!(result.sleep_debt_minutes, 3360);
        assert_eq!(result.average_minutes, 0);
        assert_eq!(result.nights_with_sleep, 0);
        assert_eq!(result.bedtime_mean, None);
        assert_eq!(result.bedtime_sd_minutes, None);
    }

    #[test]
    fn the_local_date_of_now_names_the_last_night() {
        // now 2026-11-25T23:30Z at −05:00 is 18:30 on the 25th local: last night is the 25th.
        // At +01:00 the same instant is 00:30 on the 26th: last night is the 26th.
        let mut a = args(vec![]);
        a.nights = 1;
        a.now = "2026-11-25T23:30:00Z".into();
        a.utc_offset_minutes = -300;
        assert_eq!(run(a.clone()).nights[0].date, "2026-11-25");
        a.utc_offset_minutes = 60;
        assert_eq!(run(a).nights[0].date, "2026-11-26");
    }

    #[test]
    fn invalid_inputs() {
        let expect = |a: SleepSummaryArgs, needle: &str| {
            let e = sleep_summary(a).unwrap_err();
            assert_eq!(e.kind, ToolErrorKind::InvalidArgs);
            assert!(e.message.contains(needle), "{needle}: {}", e.message);
        };
        let ok = s("2026-11-24T23:00:00+01:00", "2026-11-25T07:00:00+01:00");
        expect(
            args(vec![
                ok.clone(),
                s("2026-11-24T07:00:00Z", "2026-11-24T06:00:00Z"),
            ]),
            "sessions[1]: end",
        );
        expect(
            args(vec![s(
                "2026-11-25T01:00:00+01:00",
                "2026-11-25T08:01:00+01:00",
            )]),
            "sessions[0].end",
        );
        expect(
            args(vec![s("2026-11-23T06:00:00Z", "2026-11-24T06:01:00Z")]),
            "more than 1440",
        );
        expect(
            args(vec![s("2026-11-24T23:00:00", "2026-11-25T07:00:00Z")]),
            "sessions[0].start",
        );
        let mut a = args(vec![ok.clone()]);
        a.nights = 32;
        expect(a, "nights");
        let mut a = args(vec![ok.clone()]);
        a.target_minutes = 59;
        expect(a, "target_minutes");
        let mut a = args(vec![ok]);
        a.utc_offset_minutes = 900;
        expect(a, "utc_offset_minutes");
        expect(args(vec![s("a", "b"); 101]), "at most 100");
    }

    #[test]
    fn schema_examples_deserialize_and_run() {
        let (args_schema, result_schema, examples) = SCHEMAS.tool_schemas("sleep_summary");
        for example in examples {
            let args: SleepSummaryArgs = serde_json::from_value(example).unwrap();
            let result = sleep_summary(args).unwrap();
            aura_testkit::assert_valid(&result_schema, &serde_json::to_value(&result).unwrap());
        }
        let props = &args_schema["properties"];
        assert_eq!(props["target_minutes"]["default"], DEFAULT_TARGET_MINUTES);
        assert_eq!(props["nights"]["default"], DEFAULT_NIGHTS);
        assert_eq!(props["sessions"]["default"], json!([]));
        let extra = json!({"utc_offset_minutes": 0, "now": "2026-11-25T08:00:00Z", "tz": "x"});
        assert!(serde_json::from_value::<SleepSummaryArgs>(extra.clone()).is_err());
        assert!(!aura_testkit::is_valid(&args_schema, &extra));
    }
}
