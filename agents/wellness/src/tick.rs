//! The wellness agent's tick: proposes `stress_score` for new readings, `suggest_break` when
//! the stress is high during a working day, and `sleep_summary` in the morning.
//!
//! Context (read leniently; unknown fields ignored; everything but `now` may be absent):
//! `now` (RFC 3339, required), `utc_offset_minutes` (integer −840..840, default 0; present but
//! not such an integer fails the tick, since every local-time rule would be wrong),
//! `readings` {hrv_ms, resting_hr_bpm, sleep_minutes}, `profile.baselines` {same fields},
//! `profile.working_hours` {start, end "HH:MM", weekdays? [1..7], default Monday–Friday},
//! `events` [{start, end, ..}] (today's calendar) and `sleep_sessions` [{start, end}] (the
//! sleep tracker's recent sessions; not part of the shared context shape yet — without it no
//! sleep summary is proposed).
//!
//! Rules:
//! 1. **Stress.** A reading is used when it is an integer inside the tool's range (else it is
//!    dropped, signal `dropped:<field>`). When the heart readings (HRV, resting HR) were sent
//!    and all dropped, the sensor is glitching: no score is proposed (a score from sleep
//!    alone would read as the day's stress). Otherwise, with at least one usable reading, the
//!    tick proposes `stress_score` with those readings and the profile's baselines; a baseline that is absent
//!    or out of range is replaced by a population default ([`DEFAULT_BASELINES`]: HRV 50 ms,
//!    resting HR 60 bpm, sleep 480 min; signal `baseline_default:<field>`). The score is
//!    computed here exactly as the tool will. Signals: `stress:<score>`, `level:<level>`, one
//!    per factor (`hrv_drop_pct:<d>`, `rhr_rise_bpm:<d>`, `sleep_short_min:<d>`),
//!    `missing:<factor>`. Priority `score / 2` (0..50). Surface `WATCH` when the level is
//!    moderate or high (a nudge), `SILENT` when low (a record, nothing to show).
//!    `call_id` from `"wellness/tick\nstress_score\n<local date>\n<readings>\n<baselines>"`, so
//!    repeated ticks over the same readings propose the same id (the orchestrator dedupes) and
//!    new readings a new one.
//! 2. **Break.** When that score is at least [`TICK_BREAK_MIN_SCORE`] (60, the `high` level),
//!    the profile has usable working hours ("HH:MM" start and end, end after start; weekdays
//!    1..7, default Monday–Friday), today (the local date of `now`) is one of their weekdays
//!    and `now` is before today's end of working hours, the tick proposes `suggest_break` with
//!    {stress {score, level}, busy, working_hours {start, end} as in the profile, now,
//!    utc_offset_minutes, min_break_minutes 5}. `busy` is today's usable events in context
//!    order: start and end RFC 3339, end after start, ending after `now` and starting before
//!    today's end of working hours (when more than 500, the 500 starting earliest). The tick
//!    does not look for free time itself: the tool asks `calendar.find_free_slots` when it
//!    runs, so the proposal says a break is due, not where it fits. Signals `stress:<score>`,
//!    `busy:<n>`; priority `40 + score / 2` (70..90: above the stress record itself, since a
//!    break is something to do); surface `WATCH`; `call_id` from
//!    `"wellness/tick\nsuggest_break\n<canonical JSON of the args>"`, so repeated ticks over
//!    the same moment and day propose the same id and any change of args a new one.
//! 3. **Sleep.** When the local time of `now` is in [06:00, 10:00) ([`MORNING`]) and the
//!    context has usable sleep sessions (start and end RFC 3339, end after start, at most 24 h,
//!    ending no later than `now`; when more than 100, the 100 ending latest, in context order),
//!    `sleep_summary` over the last 7 nights with the default 480-minute target is computed
//!    here and proposed when last night (the window's latest) has sleep: before the wearable
//!    syncs it there is nothing to tell about it. Signals
//!    `sleep_debt_min:<debt>`, `last_night_min:<minutes>`, `nights_with_sleep:<k>/7`; priority
//!    `20 + min(40, debt / 30)` (20..60); surface `PHONE_CARD`; `call_id` from
//!    `"wellness/tick\nsleep_summary\n<local date>"`: the same all morning, which is how the
//!    orchestrator shows it once.
//!
//! Proposals come in that order; `ts` is `now` as given; `confirm_required` is false for every
//! wellness tool. The tick must not read a clock or keep state.

use aura_sdk::envelope::{Proposal, Signals, Surface, ToolCall, answer};
use aura_sdk::hours::ProfileHours;
use aura_sdk::time::{
    MINUTES_PER_DAY, SECS_PER_MINUTE, minutes_floor, offset_minutes_of, parse_time, weekday_of_day,
};
use aura_sdk::{ToolError, ToolResult};
use serde::Serialize;
use serde_json::{Map, Value};

use crate::breaks::{
    BUSY_MAX, BusySpan, DEFAULT_MIN_BREAK_MINUTES, Stress, SuggestBreakArgs, free_slots_call,
};
use aura_sdk::date::format_date;

use crate::common::{LEVEL_HIGH_MIN, Level};
use crate::sleep::{
    DEFAULT_NIGHTS, DEFAULT_TARGET_MINUTES, MAX_SESSION_MINUTES, MAX_SESSIONS, SleepSession,
    SleepSummaryArgs, sleep_summary,
};
use crate::stress::{
    Baselines, FactorName, HRV_MS, RESTING_HR_BPM, Readings, SLEEP_BASELINE_MINUTES, SLEEP_MINUTES,
    StressScoreArgs, stress_score,
};

/// The agent's name in envelopes.
pub const AGENT: &str = "wellness";
/// Lowest computed stress score for which the tick proposes a break: the `high` level (the
/// tool itself suggests breaks from 40; unasked, only high stress is worth a nudge).
pub const TICK_BREAK_MIN_SCORE: u32 = LEVEL_HIGH_MIN;
/// Population baselines used when the profile has none: typical adult RMSSD (ms), resting
/// heart rate (bpm) and the usual sleep recommendation (minutes).
pub const DEFAULT_BASELINES: Baselines = Baselines {
    hrv_ms: 50,
    resting_hr_bpm: 60,
    sleep_minutes: 480,
};
/// Local minutes of the day [start, end) in which the sleep summary is proposed (06:00–10:00):
/// after most people wake, before the working morning fills the phone.
pub const MORNING: (i64, i64) = (6 * 60, 10 * 60);

/// The orchestrator tick. See the module documentation.
pub fn tick(context: Value) -> ToolResult<Value> {
    let (context, now_text, now) = aura_sdk::args::tick_context(&context)?;
    let offset = match context.get("utc_offset_minutes") {
        None | Some(Value::Null) => 0,
        Some(value) => offset_minutes_of(value).ok_or_else(|| {
            ToolError::invalid_args(
                "tick context: `utc_offset_minutes` must be an integer in -840..840",
            )
        })?,
    };
    let local_minute = minutes_floor(now) + i64::from(offset);
    let today = local_minute.div_euclid(MINUTES_PER_DAY);
    let date = format_date(today);
    let profile = context.get("profile").and_then(Value::as_object);

    let mut proposals = Vec::new();
    if let Some((proposal, score)) = stress_proposal(context, profile, now_text, &date)? {
        proposals.push(proposal);
        if score >= TICK_BREAK_MIN_SCORE
            && let Some(proposal) = break_proposal(context, profile, now_text, now, offset, score)?
        {
            proposals.push(proposal);
        }
    }
    let time_of_day = local_minute.rem_euclid(MINUTES_PER_DAY);
    if (MORNING.0..MORNING.1).contains(&time_of_day)
        && let Some(proposal) = sleep_proposal(context, now_text, now, offset, &date)?
    {
        proposals.push(proposal);
    }
    Ok(answer(proposals))
}

/// A call this agent proposes, about `now`.
fn proposed_call(
    seed: &str,
    tool: &str,
    args: &impl Serialize,
    now: &str,
    surface: Surface,
) -> ToolResult<ToolCall> {
    Ok(ToolCall::new(seed, AGENT, tool, args, now)?.expected_surface(surface))
}

/// An integer field of `object` inside `lo..=hi`.
fn int_in(object: Option<&Map<String, Value>>, key: &str, (lo, hi): (u32, u32)) -> Option<u32> {
    object?
        .get(key)?
        .as_u64()
        .and_then(|v| u32::try_from(v).ok())
        .filter(|v| (lo..=hi).contains(v))
}

/// Rule 1; also returns the score for rule 2.
fn stress_proposal(
    context: &Map<String, Value>,
    profile: Option<&Map<String, Value>>,
    now_text: &str,
    date: &str,
) -> ToolResult<Option<(Proposal, u32)>> {
    let raw = context.get("readings").and_then(Value::as_object);
    let fields = [
        ("hrv_ms", HRV_MS),
        ("resting_hr_bpm", RESTING_HR_BPM),
        ("sleep_minutes", SLEEP_MINUTES),
    ];
    let mut signals = Vec::new();
    let [hrv_ms, resting_hr_bpm, sleep_minutes] = fields.map(|(key, range)| {
        let value = int_in(raw, key, range);
        if value.is_none() && raw.is_some_and(|r| r.get(key).is_some_and(|v| !v.is_null())) {
            signals.push(format!("dropped:{key}"));
        }
        value
    });
    let readings = Readings {
        hrv_ms,
        resting_hr_bpm,
        sleep_minutes,
    };
    if readings == Readings::default() {
        return Ok(None);
    }
    let heart_dropped = signals
        .iter()
        .any(|s| s == "dropped:hrv_ms" || s == "dropped:resting_hr_bpm");
    if heart_dropped && readings.hrv_ms.is_none() && readings.resting_hr_bpm.is_none() {
        return Ok(None);
    }

    let base = profile
        .and_then(|p| p.get("baselines"))
        .and_then(Value::as_object);
    let mut baseline = |key: &str, range, default| {
        int_in(base, key, range).unwrap_or_else(|| {
            signals.push(format!("baseline_default:{key}"));
            default
        })
    };
    let baselines = Baselines {
        hrv_ms: baseline("hrv_ms", HRV_MS, DEFAULT_BASELINES.hrv_ms),
        resting_hr_bpm: baseline(
            "resting_hr_bpm",
            RESTING_HR_BPM,
            DEFAULT_BASELINES.resting_hr_bpm,
        ),
        sleep_minutes: baseline(
            "sleep_minutes",
            SLEEP_BASELINE_MINUTES,
            DEFAULT_BASELINES.sleep_minutes,
        ),
    };
    let args = StressScoreArgs {
        readings,
        baselines,
    };
    let result = stress_score(args.clone())?;

    let mut all = vec![
        format!("stress:{}", result.score),
        format!("level:{}", result.level.as_str()),
    ];
    for factor in &result.factors {
        let name = match factor.factor {
            FactorName::Hrv => "hrv_drop_pct",
            FactorName::RestingHr => "rhr_rise_bpm",
            FactorName::Sleep => "sleep_short_min",
        };
        all.push(format!("{name}:{}", factor.deviation));
    }
    all.extend(
        result
            .missing
            .iter()
            .map(|f| format!("missing:{}", f.as_str())),
    );
    all.extend(signals);

    let show = |v: Option<u32>| v.map_or("-".to_owned(), |v| v.to_string());
    let b = &args.baselines;
    let seed = format!(
        "wellness/tick\nstress_score\n{date}\n{},{},{}\n{},{},{}",
        show(args.readings.hrv_ms),
        show(args.readings.resting_hr_bpm),
        show(args.readings.sleep_minutes),
        b.hrv_ms,
        b.resting_hr_bpm,
        b.sleep_minutes
    );
    let surface = if result.level == Level::Low {
        Surface::Silent
    } else {
        Surface::Watch
    };
    let call = proposed_call(&seed, "stress_score", &args, now_text, surface)?;
    let proposal = Proposal::new(call, Signals::capped(all), i64::from(result.score / 2));
    Ok(Some((proposal, result.score)))
}

/// Rule 2.
fn break_proposal(
    context: &Map<String, Value>,
    profile: Option<&Map<String, Value>>,
    now_text: &str,
    now: i64,
    offset: i32,
    score: u32,
) -> ToolResult<Option<Proposal>> {
    let Some(hours) = profile
        .and_then(|p| p.get("working_hours"))
        .and_then(ProfileHours::read)
    else {
        return Ok(None);
    };
    let offset_min = i64::from(offset);
    let today = (minutes_floor(now) + offset_min).div_euclid(MINUTES_PER_DAY);
    if !hours.works_on(weekday_of_day(today)) {
        return Ok(None);
    }
    let day_end = (today * MINUTES_PER_DAY - offset_min + hours.end_min) * SECS_PER_MINUTE;
    if now >= day_end {
        return Ok(None);
    }
    let events = match context.get("events") {
        Some(Value::Array(events)) => events.as_slice(),
        _ => &[],
    };
    let busy = today_busy(events, now, day_end);
    let signals = [format!("stress:{score}"), format!("busy:{}", busy.len())];
    let args = SuggestBreakArgs {
        stress: Stress {
            score,
            level: Some(Level::from_score(score)),
        },
        busy,
        free_slots: None,
        working_hours: hours.day(),
        now: now_text.to_owned(),
        utc_offset_minutes: offset,
        min_break_minutes: DEFAULT_MIN_BREAK_MINUTES,
        preferred_kinds: vec![],
    };
    // The tool's own checks, so a proposal is always a call it accepts. (It only builds the
    // calendar call; nothing is asked here.)
    free_slots_call(&args)?;
    let seed = format!(
        "wellness/tick\nsuggest_break\n{}",
        aura_sdk::to_canonical(&args)?
    );
    let call = proposed_call(&seed, "suggest_break", &args, now_text, Surface::Watch)?;
    Ok(Some(Proposal::new(
        call,
        Signals::capped(signals),
        i64::from(40 + score / 2),
    )))
}

/// Today's usable events as busy spans, in context order: start and end RFC 3339, end after
/// start, overlapping `[now, day_end)` (Unix seconds); when more than [`BUSY_MAX`], the ones
/// starting earliest (ties: context order).
fn today_busy(events: &[Value], now: i64, day_end: i64) -> Vec<BusySpan> {
    let mut usable: Vec<(usize, i64, BusySpan)> = events
        .iter()
        .enumerate()
        .filter_map(|(i, event)| {
            let object = event.as_object()?;
            let start_text = object.get("start")?.as_str()?;
            let end_text = object.get("end")?.as_str()?;
            let start = parse_time(start_text, "start").ok()?;
            let end = parse_time(end_text, "end").ok()?;
            (end > start && end > now && start < day_end).then(|| {
                let span = BusySpan {
                    start: start_text.to_owned(),
                    end: end_text.to_owned(),
                };
                (i, start, span)
            })
        })
        .collect();
    if usable.len() > BUSY_MAX {
        usable.sort_by_key(|&(i, start, _)| (start, i));
        usable.truncate(BUSY_MAX);
        usable.sort_by_key(|&(i, _, _)| i);
    }
    usable.into_iter().map(|(_, _, span)| span).collect()
}

/// Rule 3.
fn sleep_proposal(
    context: &Map<String, Value>,
    now_text: &str,
    now: i64,
    offset: i32,
    date: &str,
) -> ToolResult<Option<Proposal>> {
    let raw = match context.get("sleep_sessions") {
        Some(Value::Array(sessions)) => sessions.as_slice(),
        _ => return Ok(None),
    };
    let mut usable: Vec<(usize, i64, SleepSession)> = raw
        .iter()
        .enumerate()
        .filter_map(|(i, value)| {
            let object = value.as_object()?;
            let start_text = object.get("start")?.as_str()?;
            let end_text = object.get("end")?.as_str()?;
            let start = parse_time(start_text, "start").ok()?;
            let end = parse_time(end_text, "end").ok()?;
            let minutes = minutes_floor(end) - minutes_floor(start);
            (end > start && end <= now && minutes <= MAX_SESSION_MINUTES).then(|| {
                let session = SleepSession {
                    start: start_text.to_owned(),
                    end: end_text.to_owned(),
                };
                (i, end, session)
            })
        })
        .collect();
    if usable.is_empty() {
        return Ok(None);
    }
    if usable.len() > MAX_SESSIONS {
        usable.sort_by_key(|&(i, end, _)| (std::cmp::Reverse(end), i));
        usable.truncate(MAX_SESSIONS);
        usable.sort_by_key(|&(i, _, _)| i);
    }
    let args = SleepSummaryArgs {
        sessions: usable.into_iter().map(|(_, _, s)| s).collect(),
        target_minutes: DEFAULT_TARGET_MINUTES,
        utc_offset_minutes: offset,
        nights: DEFAULT_NIGHTS,
        now: now_text.to_owned(),
    };
    let result = sleep_summary(args.clone())?;
    let last = result.nights.last().map_or(0, |n| n.minutes);
    // Last night not synced yet: nothing to tell about it (an earlier summary would tell "no
    // sleep" and hold the morning's id).
    if result.nights_with_sleep == 0 || last == 0 {
        return Ok(None);
    }
    let debt = result.sleep_debt_minutes;
    let signals = [
        format!("sleep_debt_min:{debt}"),
        format!("last_night_min:{last}"),
        format!(
            "nights_with_sleep:{}/{}",
            result.nights_with_sleep,
            result.nights.len()
        ),
    ];
    let priority = 20 + (debt / 30).min(40);
    let seed = format!("wellness/tick\nsleep_summary\n{date}");
    let call = proposed_call(&seed, "sleep_summary", &args, now_text, Surface::PhoneCard)?;
    Ok(Some(Proposal::new(
        call,
        Signals::capped(signals),
        priority,
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SCHEMAS;
    use aura_sdk::{ToolErrorKind, call_id_from};
    use serde_json::json;

    /// The tick's proposals, each checked against proposals.v1, toolcall.v1 and its tool's
    /// args schema (see `aura_testkit`), and run.
    fn proposals(context: Value) -> Vec<Value> {
        let list = SCHEMAS.tick_proposals(&tick(context).unwrap());
        for p in &list {
            check_proposal(p);
        }
        list
    }

    fn tools(list: &[Value]) -> Vec<&str> {
        list.iter()
            .map(|p| p["call"]["tool"].as_str().unwrap())
            .collect()
    }

    /// The proposed call (checked by `proposals`) is accepted by the tool.
    fn check_proposal(p: &Value) {
        let call = &p["call"];
        assert_eq!(call["confirm_required"], false);
        let tool = call["tool"].as_str().unwrap();
        let reply =
            crate::Wellness::invoke(&json!({"tool": tool, "args": call["args"]}).to_string());
        if tool == "suggest_break" {
            // The tool checked the args and went on to ask calendar, which natively always
            // fails (the round trip is tested through the host, in tests/all/wellness.rs).
            let reply: Value = serde_json::from_str(&reply).unwrap();
            assert_eq!(reply["error"]["kind"], "failed", "{reply}");
            let message = reply["error"]["message"].as_str().unwrap();
            assert!(message.contains("aura host"), "{message}");
        } else {
            assert!(reply.starts_with(r#"{"ok":true"#), "{reply}");
        }
    }

    /// Monday 2026-11-23 at +01:00; working 09:00–17:00; baselines HRV 60, RHR 58, sleep 450.
    fn context(now: &str) -> Value {
        json!({
            "now": now,
            "utc_offset_minutes": 60,
            "profile": {
                "baselines": {"hrv_ms": 60, "resting_hr_bpm": 58, "sleep_minutes": 450},
                "working_hours": {"start": "09:00", "end": "17:00"},
                "vip_senders": ["boss@example.com"],
            },
        })
    }

    fn ev(id: &str, start: &str, end: &str) -> Value {
        json!({"id": id, "start": format!("2026-11-23T{start}:00+01:00"),
               "end": format!("2026-11-23T{end}:00+01:00")})
    }

    #[test]
    fn stressed_morning_proposes_all_three() {
        // now 09:05 local. Readings HRV 30, RHR 64, sleep 300: as in the stress tests,
        // sub-scores 100, 40, 67 → score 75, high. Priority 75/2 = 37, WATCH.
        // Break: 75 ≥ 60, Monday is a working day and 09:05 is before 17:00. Events
        // 09:00–10:00, 11:30–12:30 and 10:10–12:00 all end after 09:05 and start before
        // 17:00: busy 3, in context order. Priority 40 + 37 = 77.
        // Sleep: the night of the 22nd–23rd, 23:00–06:00 = 420 min → 7-night window 17..23,
        // six empty nights: debt 6·480 + 60 = 2940; priority 20 + min(40, 98) = 60.
        let mut c = context("2026-11-23T09:05:00+01:00");
        c["readings"] = json!({"hrv_ms": 30, "resting_hr_bpm": 64, "sleep_minutes": 300});
        c["events"] = json!([
            ev("standup", "09:00", "10:00"),
            ev("review", "11:30", "12:30"),
            ev("focus", "10:10", "12:00"),
        ]);
        c["sleep_sessions"] =
            json!([{"start": "2026-11-22T23:00:00+01:00", "end": "2026-11-23T06:00:00+01:00"}]);
        let list = proposals(c.clone());
        assert_eq!(
            tools(&list),
            ["stress_score", "suggest_break", "sleep_summary"]
        );

        let stress = &list[0];
        assert_eq!(
            stress["signals"],
            json!([
                "stress:75",
                "level:high",
                "hrv_drop_pct:50",
                "rhr_rise_bpm:6",
                "sleep_short_min:150"
            ])
        );
        assert_eq!(stress["priority"], 37);
        assert_eq!(stress["call"]["expected_surface"], "WATCH");
        assert_eq!(stress["call"]["ts"], "2026-11-23T09:05:00+01:00");
        assert_eq!(
            stress["call"]["args"],
            json!({"readings": {"hrv_ms": 30, "resting_hr_bpm": 64, "sleep_minutes": 300},
                   "baselines": {"hrv_ms": 60, "resting_hr_bpm": 58, "sleep_minutes": 450}})
        );
        assert_eq!(
            stress["call"]["call_id"],
            call_id_from("wellness/tick\nstress_score\n2026-11-23\n30,64,300\n60,58,450")
        );

        let brk = &list[1];
        assert_eq!(brk["signals"], json!(["stress:75", "busy:3"]));
        assert_eq!(brk["priority"], 77);
        assert_eq!(brk["call"]["expected_surface"], "WATCH");
        assert_eq!(
            brk["call"]["args"],
            json!({
                "stress": {"score": 75, "level": "high"},
                "busy": [
                    {"start": "2026-11-23T09:00:00+01:00", "end": "2026-11-23T10:00:00+01:00"},
                    {"start": "2026-11-23T11:30:00+01:00", "end": "2026-11-23T12:30:00+01:00"},
                    {"start": "2026-11-23T10:10:00+01:00", "end": "2026-11-23T12:00:00+01:00"},
                ],
                "working_hours": {"start": "09:00", "end": "17:00"},
                "now": "2026-11-23T09:05:00+01:00",
                "utc_offset_minutes": 60,
                "min_break_minutes": 5
            })
        );
        // The seed is the canonical JSON of those args (keys sorted), written out.
        let key = concat!(
            r#"{"busy":[{"end":"2026-11-23T10:00:00+01:00","start":"2026-11-23T09:00:00+01:00"},"#,
            r#"{"end":"2026-11-23T12:30:00+01:00","start":"2026-11-23T11:30:00+01:00"},"#,
            r#"{"end":"2026-11-23T12:00:00+01:00","start":"2026-11-23T10:10:00+01:00"}],"#,
            r#""min_break_minutes":5,"now":"2026-11-23T09:05:00+01:00","#,
            r#""stress":{"level":"high","score":75},"utc_offset_minutes":60,"#,
            r#""working_hours":{"end":"17:00","start":"09:00"}}"#
        );
        assert_eq!(
            brk["call"]["call_id"],
            call_id_from(&format!("wellness/tick\nsuggest_break\n{key}"))
        );

        let sleep = &list[2];
        assert_eq!(
            sleep["signals"],
            json!([
                "sleep_debt_min:2940",
                "last_night_min:420",
                "nights_with_sleep:1/7"
            ])
        );
        assert_eq!(sleep["priority"], 60);
        assert_eq!(sleep["call"]["expected_surface"], "PHONE_CARD");
        assert_eq!(sleep["call"]["args"]["nights"], 7);
        assert_eq!(
            sleep["call"]["call_id"],
            call_id_from("wellness/tick\nsleep_summary\n2026-11-23")
        );
        // Deterministic.
        assert_eq!(tick(c.clone()).unwrap(), tick(c).unwrap());
    }

    #[test]
    fn calm_afternoon_records_silently() {
        // now 15:00 local: outside the morning window. HRV 66, RHR 57 (better than baseline):
        // score 0, low → SILENT, priority 0; sleep missing; no break.
        let mut c = context("2026-11-23T15:00:00+01:00");
        c["readings"] = json!({"hrv_ms": 66, "resting_hr_bpm": 57});
        c["sleep_sessions"] =
            json!([{"start": "2026-11-22T23:00:00+01:00", "end": "2026-11-23T06:00:00+01:00"}]);
        let list = proposals(c);
        assert_eq!(tools(&list), ["stress_score"]);
        assert_eq!(list[0]["priority"], 0);
        assert_eq!(list[0]["call"]["expected_surface"], "SILENT");
        assert_eq!(
            list[0]["signals"],
            json!([
                "stress:0",
                "level:low",
                "hrv_drop_pct:-10",
                "rhr_rise_bpm:-1",
                "missing:sleep"
            ])
        );
    }

    #[test]
    fn high_stress_break_only_on_working_days_before_the_end() {
        // RHR 75 alone: +17 bpm → 100. Break rules: no working hours → no break.
        let mut c = context("2026-11-23T11:00:00+01:00");
        c["readings"] = json!({"resting_hr_bpm": 75});
        c["profile"]["working_hours"] = Value::Null;
        assert_eq!(tools(&proposals(c.clone())), ["stress_score"]);
        // Unusable working hours (overnight, not "HH:MM", weekday 8) → no break.
        for hours in [
            json!({"start": "17:00", "end": "09:00"}),
            json!({"start": "9:00", "end": "17:00"}),
            json!({"start": "09:00", "end": "17:00", "weekdays": [8]}),
        ] {
            c["profile"]["working_hours"] = hours;
            assert_eq!(tools(&proposals(c.clone())), ["stress_score"]);
        }
        // Working hours and a meeting filling the rest of the day: proposed all the same
        // (whether a break fits is for the tool to find out from calendar), busy 1.
        c["profile"]["working_hours"] = json!({"start": "09:00", "end": "17:00"});
        c["events"] = json!([ev("offsite", "10:30", "18:00")]);
        let list = proposals(c.clone());
        assert_eq!(tools(&list), ["stress_score", "suggest_break"]);
        assert_eq!(list[1]["signals"], json!(["stress:100", "busy:1"]));
        // At 17:00 the working day is over: no break. At 16:59 there is still one minute.
        c["now"] = json!("2026-11-23T17:00:00+01:00");
        assert_eq!(tools(&proposals(c.clone())), ["stress_score"]);
        c["now"] = json!("2026-11-23T16:59:00+01:00");
        assert_eq!(
            tools(&proposals(c.clone())),
            ["stress_score", "suggest_break"]
        );
        // Saturday 28th: not a working day by default; with weekdays [6] it is.
        let mut c = context("2026-11-28T11:00:00+01:00");
        c["readings"] = json!({"resting_hr_bpm": 75});
        assert_eq!(tools(&proposals(c.clone())), ["stress_score"]);
        c["profile"]["working_hours"]["weekdays"] = json!([6]);
        let list = proposals(c);
        assert_eq!(tools(&list), ["stress_score", "suggest_break"]);
        // No events: busy 0; priority 40 + 100/2 = 90.
        assert_eq!(list[1]["signals"], json!(["stress:100", "busy:0"]));
        assert_eq!(list[1]["priority"], 90);
        assert_eq!(list[1]["call"]["args"]["busy"], json!([]));
        assert_eq!(
            list[1]["call"]["args"]["stress"],
            json!({"score": 100, "level": "high"})
        );
    }

    #[test]
    fn lenient_readings_and_default_baselines() {
        // HRV "fast" and sleep 2000 are dropped; RHR 66 against the default baseline 60
        // (the profile has none): +6 bpm → 40 → moderate, WATCH, priority 20.
        let c = json!({
            "now": "2026-11-23T12:00:00Z",
            "readings": {"hrv_ms": "fast", "resting_hr_bpm": 66, "sleep_minutes": 2000,
                         "steps": 9000},
        });
        let list = proposals(c);
        assert_eq!(tools(&list), ["stress_score"]);
        assert_eq!(
            list[0]["signals"],
            json!([
                "stress:40",
                "level:moderate",
                "rhr_rise_bpm:6",
                "missing:hrv",
                "missing:sleep",
                "dropped:hrv_ms",
                "dropped:sleep_minutes",
                "baseline_default:hrv_ms",
                "baseline_default:resting_hr_bpm",
                "baseline_default:sleep_minutes"
            ])
        );
        assert_eq!(list[0]["priority"], 20);
        assert_eq!(list[0]["call"]["expected_surface"], "WATCH");
        assert_eq!(
            list[0]["call"]["args"]["baselines"],
            json!({"hrv_ms": 50, "resting_hr_bpm": 60, "sleep_minutes": 480})
        );
    }

    #[test]
    fn no_score_from_sleep_alone_when_the_heart_readings_are_glitches() {
        // HRV 0 and resting HR 400 are outside the tool's ranges: both dropped. Sleep 200
        // against 450 alone would score high; the tick proposes nothing (nor a break).
        let profile = json!({"baselines": {"hrv_ms": 58, "resting_hr_bpm": 57,
            "sleep_minutes": 450}, "working_hours": {"start": "09:00", "end": "17:30"}});
        let glitch = json!({"now": "2026-11-23T12:00:00Z", "profile": profile,
            "readings": {"hrv_ms": 0, "resting_hr_bpm": 400, "sleep_minutes": 200}});
        assert!(proposals(glitch).is_empty());
        // One heart reading usable: scored as before (sleep counts with it).
        let one = json!({"now": "2026-11-23T12:00:00Z", "profile": profile,
            "readings": {"hrv_ms": 0, "resting_hr_bpm": 57, "sleep_minutes": 200}});
        assert_eq!(tools(&proposals(one))[0], "stress_score");
        // Sleep alone, the heart readings not sent at all (no glitch): scored as before.
        let sleep = json!({"now": "2026-11-23T12:00:00Z", "profile": profile,
            "readings": {"sleep_minutes": 200}});
        assert_eq!(tools(&proposals(sleep))[0], "stress_score");
    }

    #[test]
    fn morning_sleep_summary_only_with_sessions() {
        // No readings. 07:30 local with two nights of sleep (7 h each) → debt 5·480 + 2·60
        // = 2520 → priority 20 + min(40, 84) = 60. Unusable sessions (future, reversed,
        // not objects) are skipped.
        let mut c = context("2026-11-23T07:30:00+01:00");
        c["sleep_sessions"] = json!([
            {"start": "2026-11-21T23:00:00+01:00", "end": "2026-11-22T06:00:00+01:00"},
            {"start": "2026-11-22T23:30:00+01:00", "end": "2026-11-23T06:30:00+01:00"},
            {"start": "2026-11-23T07:00:00+01:00", "end": "2026-11-23T08:00:00+01:00"},
            {"start": "2026-11-23T05:00:00+01:00", "end": "2026-11-23T04:00:00+01:00"},
            "nap",
        ]);
        let list = proposals(c.clone());
        assert_eq!(tools(&list), ["sleep_summary"]);
        assert_eq!(
            list[0]["signals"],
            json!([
                "sleep_debt_min:2520",
                "last_night_min:420",
                "nights_with_sleep:2/7"
            ])
        );
        assert_eq!(
            list[0]["call"]["args"]["sessions"]
                .as_array()
                .unwrap()
                .len(),
            2
        );
        // 10:00 is past the morning window; 05:59 before it.
        c["now"] = json!("2026-11-23T10:00:00+01:00");
        assert!(proposals(c.clone()).is_empty());
        c["now"] = json!("2026-11-23T05:59:00+01:00");
        assert!(proposals(c.clone()).is_empty());
        // Last night not synced yet (only the night before): nothing to tell about it.
        let mut c = context("2026-11-23T07:30:00+01:00");
        c["sleep_sessions"] =
            json!([{"start": "2026-11-21T23:00:00+01:00", "end": "2026-11-22T06:00:00+01:00"}]);
        assert!(proposals(c).is_empty());
        // Sessions all outside the 7-night window: nothing to summarize.
        let mut c = context("2026-11-23T07:30:00+01:00");
        c["sleep_sessions"] =
            json!([{"start": "2026-11-01T23:00:00+01:00", "end": "2026-11-02T06:00:00+01:00"}]);
        assert!(proposals(c).is_empty());
    }

    #[test]
    fn many_sessions_keep_the_latest() {
        // 120 one-hour sessions, one per night ending 06:00 UTC on consecutive days up to
        // 2026-11-23: the 100 latest are kept; the window's 7 nights hold 60 min each.
        let sessions: Vec<Value> = (0..120)
            .map(|i| {
                let end = parse_time("2026-11-23T06:00:00Z", "t").unwrap() - i * 86_400;
                json!({"start": aura_sdk::time::format_time(end - 3600, 0).unwrap(),
                       "end": aura_sdk::time::format_time(end, 0).unwrap()})
            })
            .collect();
        let c = json!({"now": "2026-11-23T07:00:00Z", "sleep_sessions": sessions});
        let list = proposals(c);
        let kept = list[0]["call"]["args"]["sessions"].as_array().unwrap();
        assert_eq!(kept.len(), 100);
        assert_eq!(kept[0]["end"], "2026-11-23T06:00:00Z");
        // 7 × (480 − 60) = 2940.
        assert_eq!(list[0]["signals"][0], "sleep_debt_min:2940");
    }

    #[test]
    fn nothing_to_say() {
        assert!(proposals(json!({"now": "2026-11-23T08:00:00Z"})).is_empty());
        let c = json!({"now": "2026-11-23T08:00:00Z", "readings": {}, "events": null,
                       "sleep_sessions": [], "messages": [{"from": "x"}]});
        assert!(proposals(c).is_empty());
    }

    #[test]
    fn today_busy_keeps_events_between_now_and_the_end_of_the_day() {
        // Minutes since the epoch at UTC; now = minute 600, the working day ends at minute 1020.
        let e = |s: i64, e: i64| {
            json!({"start": crate::common::format_minute(s, 0).unwrap(),
                   "end": crate::common::format_minute(e, 0).unwrap()})
        };
        let events = [
            e(500, 600),   // ends at now: over, dropped
            e(500, 601),   // ends a minute after now: kept
            e(1019, 1100), // starts a minute before the end: kept
            e(1020, 1100), // starts at the end: dropped
            e(700, 650),   // ends before it starts: dropped
            e(700, 700),   // empty: dropped
            json!({"start": "soon", "end": "later"}),
            json!(3),
            e(0, 2000), // covers everything: kept
        ];
        let busy = today_busy(&events, 600 * 60, 1020 * 60);
        let kept: Vec<(&str, &str)> = busy
            .iter()
            .map(|s| (s.start.as_str(), s.end.as_str()))
            .collect();
        let at = |m: i64| crate::common::format_minute(m, 0).unwrap();
        let (a, b, c, d, e2, f) = (at(500), at(601), at(1019), at(1100), at(0), at(2000));
        assert_eq!(
            kept,
            [
                (a.as_str(), b.as_str()),
                (c.as_str(), d.as_str()),
                (e2.as_str(), f.as_str())
            ]
        );
        // 502 events: the 500 starting earliest stay, in context order. Event i starts at
        // minute 1010 − i, so the two dropped are i = 0 and 1 (starting at 1010 and 1009).
        let many: Vec<Value> = (0..BUSY_MAX as i64 + 2)
            .map(|i| e(1010 - i, 1015))
            .collect();
        let busy = today_busy(&many, 600 * 60, 1020 * 60);
        assert_eq!(busy.len(), BUSY_MAX);
        assert_eq!(busy[0].start, at(1008));
        assert_eq!(busy[BUSY_MAX - 1].start, at(1010 - 501));
    }

    #[test]
    fn bad_context_is_invalid_args() {
        // Every tick refuses a context without a usable `now` (see `aura_testkit`).
        let own = [
            json!({"now": "2026-11-23T08:00:00Z", "utc_offset_minutes": 900}),
            json!({"now": "2026-11-23T08:00:00Z", "utc_offset_minutes": "+01:00"}),
        ];
        for context in aura_testkit::contexts_without_a_usable_now()
            .into_iter()
            .chain(own)
        {
            let e = tick(context).unwrap_err();
            assert_eq!(e.kind, ToolErrorKind::InvalidArgs);
        }
    }

    #[test]
    fn through_the_agent_wiring() {
        let mut c = context("2026-11-23T15:00:00+01:00");
        c["readings"] = json!({"hrv_ms": 66});
        let answer: Value = serde_json::from_str(&crate::Wellness::tick(&c.to_string())).unwrap();
        assert_eq!(answer, tick(c).unwrap());
        let manifest: Value = serde_json::from_str(&crate::Wellness::manifest()).unwrap();
        assert_eq!(manifest["name"], "wellness");
        assert_eq!(
            manifest["tools"],
            json!(["stress_score", "sleep_summary", "suggest_break"])
        );
        assert_eq!(crate::Wellness::tick("not json"), r#"{"proposals":[]}"#);
    }
}
