//! The wellness agent through the real host: every tool with expected values worked out by
//! hand, bad input refused before the agent runs, inconsistent input answered with a typed tool
//! error, and ticks proposing the right calls for hand-made contexts.

use aura_contract::envelope::Surface;
use serde_json::{Value, json};

use crate::support::{assert_tool_invalid_args, call_tool, host_with, quarantine_lines};

async fn call(
    host: &aura_host::Host,
    call_id: &str,
    tool: &str,
    args: Value,
) -> aura_host::ResultEnvelope {
    call_tool(host, "wellness", call_id, tool, args).await
}

fn baselines() -> Value {
    json!({"hrv_ms": 60, "resting_hr_bpm": 58, "sleep_minutes": 450})
}

#[tokio::test]
async fn stress_score_explains_every_factor() {
    let (host, _) = host_with("wellness-stress", &["wellness"]).await;
    // Baselines HRV 60 ms, RHR 58 bpm, sleep 450 min; readings 42, 65, 360.
    // HRV drop 100·18/60 = 30 % → ramp 10..50 % → (30−10)·100/40 = 50.
    // RHR rise 7 bpm → ramp 2..12 → (7−2)·100/10 = 50.
    // Sleep 90 min short → ramp 30..210 → (90−30)·100/180 = 33.3 → 33.
    // Score (500·50 + 300·50 + 200·33)/1000 = 46.6 → 47, moderate. Contributions 25, 15, 6.6:
    // floors add to 46, the missing point goes to sleep (largest remainder).
    let args = json!({
        "readings": {"hrv_ms": 42, "resting_hr_bpm": 65, "sleep_minutes": 360},
        "baselines": baselines(),
    });
    let result = call(&host, "t_stress0001", "stress_score", args).await;
    assert!(result.ok);
    assert_eq!(
        result.result.unwrap(),
        json!({
            "score": 47,
            "level": "moderate",
            "factors": [
                {"factor": "hrv", "reading": 42, "baseline": 60, "deviation": 30,
                 "deviation_unit": "percent_drop", "sub_score": 50, "weight_permille": 500,
                 "contribution": 25},
                {"factor": "resting_hr", "reading": 65, "baseline": 58, "deviation": 7,
                 "deviation_unit": "bpm_rise", "sub_score": 50, "weight_permille": 300,
                 "contribution": 15},
                {"factor": "sleep", "reading": 360, "baseline": 450, "deviation": 90,
                 "deviation_unit": "minutes_short", "sub_score": 33, "weight_permille": 200,
                 "contribution": 7}
            ],
            "missing": []
        })
    );

    // Without the RHR reading the weights 500 and 200 renormalize over 700: 714.3 and 285.7
    // per mille → 714 + 286. HRV 36: drop 40 % → 75; sleep 420: 30 short → 0.
    // Score 500·75/700 = 53.6 → 54, moderate.
    let args = json!({
        "readings": {"hrv_ms": 36, "sleep_minutes": 420},
        "baselines": baselines(),
    });
    let result = call(&host, "t_stress0002", "stress_score", args)
        .await
        .result
        .unwrap();
    assert_eq!(result["score"], 54);
    assert_eq!(result["missing"], json!(["resting_hr"]));
    let weights: Vec<&Value> = result["factors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| &f["weight_permille"])
        .collect();
    assert_eq!(weights, [&json!(714), &json!(286)]);
}

#[tokio::test]
async fn sleep_summary_counts_nights_debt_and_bedtime_spread() {
    let (host, _) = host_with("wellness-sleep", &["wellness"]).await;
    // At +01:00, now 2026-11-25 08:00 local, 3 nights: the 23rd, 24th and 25th.
    // Night 23: no sleep → 0 min, shortfall 480.
    // Night 24: 23:30–06:30 (420) + nap 14:00–14:30 (30, ends before 18:00) = 450; bedtime
    //   and wake from the longest block: 23:30, 06:30; shortfall 30.
    // Night 25: 23:30Z–06:45Z = 00:30–07:45 local = 435; shortfall 45.
    // Debt 480 + 30 + 45 = 555; average 885/3 = 295. Bedtimes 23:30 and 00:30 are 60 minutes
    // apart across midnight: mean 00:00, standard deviation 30.
    let args = json!({
        "sessions": [
            {"start": "2026-11-23T23:30:00+01:00", "end": "2026-11-24T06:30:00+01:00"},
            {"start": "2026-11-24T14:00:00+01:00", "end": "2026-11-24T14:30:00+01:00"},
            {"start": "2026-11-24T23:30:00Z", "end": "2026-11-25T06:45:00Z"}
        ],
        "utc_offset_minutes": 60,
        "nights": 3,
        "now": "2026-11-25T08:00:00+01:00"
    });
    let result = call(&host, "t_sleep00001", "sleep_summary", args).await;
    assert_eq!(
        result.result.unwrap(),
        json!({
            "nights": [
                {"date": "2026-11-23", "minutes": 0, "sessions": 0, "shortfall_minutes": 480},
                {"date": "2026-11-24", "minutes": 450, "sessions": 2, "shortfall_minutes": 30,
                 "bedtime": "23:30", "wake_time": "06:30"},
                {"date": "2026-11-25", "minutes": 435, "sessions": 1, "shortfall_minutes": 45,
                 "bedtime": "00:30", "wake_time": "07:45"}
            ],
            "target_minutes": 480,
            "sleep_debt_minutes": 555,
            "surplus_minutes": 0,
            "average_minutes": 295,
            "nights_with_sleep": 2,
            "bedtime_mean": "00:00",
            "bedtime_sd_minutes": 30,
            "merged_sessions": 0,
            "ignored_sessions": 0
        })
    );

    // No sessions at all: a default week of empty nights, 7 × 480 = 3360 minutes of debt.
    let args = json!({"utc_offset_minutes": 0, "now": "2026-11-25T08:00:00Z"});
    let result = call(&host, "t_sleep00002", "sleep_summary", args)
        .await
        .result
        .unwrap();
    assert_eq!(result["nights"].as_array().unwrap().len(), 7);
    assert_eq!(result["sleep_debt_minutes"], 3360);
    assert!(result.get("bedtime_mean").is_none());
}

/// suggest_break's args on Monday 2026-11-23 at +01:00, working 09:00–17:00.
fn break_args(score: u32, busy: Value, now: &str) -> Value {
    json!({
        "stress": {"score": score},
        "busy": busy,
        "working_hours": {"start": "09:00", "end": "17:00"},
        "now": now,
        "utc_offset_minutes": 60,
    })
}

#[tokio::test]
async fn suggest_break_asks_calendar_and_picks_the_earliest_slot_that_fits() {
    let (host, data) = host_with("wellness-break", &["wellness", "calendar"]).await;
    // Score 72 (high) → a 10-minute break; walk is preferred and fits 10 minutes.
    // Calendar is asked for Monday from 10:15 to 17:00 around busy 09:30–10:00 (over),
    // 09:20Z–11:30Z = 10:20–12:30 local and 14:00–15:00: gaps of 5 minutes or more are
    // 10:15–10:20 (5, too short for 10), 12:30–14:00 (90) and 15:00–17:00 (120). The break
    // goes to 12:30–12:40.
    let mut args = break_args(
        72,
        json!([
            {"start": "2026-11-23T09:30:00+01:00", "end": "2026-11-23T10:00:00+01:00"},
            {"start": "2026-11-23T09:20:00Z", "end": "2026-11-23T11:30:00Z"},
            {"start": "2026-11-23T14:00:00+01:00", "end": "2026-11-23T15:00:00+01:00"}
        ]),
        "2026-11-23T10:15:00+01:00",
    );
    args["stress"]["level"] = json!("high");
    args["preferred_kinds"] = json!(["walk", "stretch"]);
    let result = call(&host, "t_break00001", "suggest_break", args).await;
    assert_eq!(
        result.result.unwrap(),
        json!({
            "status": "suggested",
            "stress_score": 72,
            "level": "high",
            "wanted_minutes": 10,
            "break": {"start": "2026-11-23T12:30:00+01:00", "end": "2026-11-23T12:40:00+01:00",
                      "minutes": 10, "kind": "walk"},
            "reason": "Stress is high (72/100). Take a 10-minute walk at 12:30."
        })
    );

    // Score 90 → a 15-minute walk. Busy 10:20–16:50 leaves 10:15–10:20 (5) and 16:50–17:00
    // (10): free time, but no gap of 15 minutes.
    let args = break_args(
        90,
        json!([{"start": "2026-11-23T10:20:00+01:00", "end": "2026-11-23T16:50:00+01:00"}]),
        "2026-11-23T10:15:00+01:00",
    );
    let result = call(&host, "t_break00002", "suggest_break", args).await;
    assert_eq!(
        result.result.unwrap(),
        json!({
            "status": "none",
            "stress_score": 90,
            "level": "high",
            "wanted_minutes": 15,
            "none_reason": "no_slot_long_enough",
            "reason": "Stress is high (90/100), but no free gap of 15 minutes is left today. \
                       Try a minute of slow breathing where you are."
        })
    );

    // Score 65 at 16:58: 16:58–17:00 is 2 minutes, below the 5 calendar is asked for: no free
    // time left today.
    let args = break_args(65, json!([]), "2026-11-23T16:58:00+01:00");
    let result = call(&host, "t_break00003", "suggest_break", args).await;
    let result = result.result.unwrap();
    assert_eq!(result["none_reason"], "no_free_slot");
    assert_eq!(result["wanted_minutes"], 10);

    // Score 25: no break needed, whatever the day looks like.
    let args = break_args(25, json!([]), "2026-11-23T10:15:00+01:00");
    let result = call(&host, "t_break00004", "suggest_break", args).await;
    assert_eq!(
        result.result.unwrap(),
        json!({
            "status": "none",
            "stress_score": 25,
            "level": "low",
            "wanted_minutes": 0,
            "none_reason": "stress_low",
            "reason": "Stress is low (25/100): no break needed right now."
        })
    );
    assert!(quarantine_lines(&data).is_empty());
}

#[tokio::test]
async fn suggest_break_without_calendar_is_a_tool_error() {
    let (host, _) = host_with("wellness-break-alone", &["wellness"]).await;
    // Score 72 earns a break, so wellness asks calendar, which is not loaded: the host
    // refuses the inner call (agent_unavailable) and wellness fails, naming it.
    let args = break_args(72, json!([]), "2026-11-23T10:15:00+01:00");
    let result = call(&host, "t_alone00001", "suggest_break", args).await;
    assert!(!result.ok);
    assert!(result.fuel_used > 0, "wellness ran");
    let error = result.error.unwrap();
    assert_eq!(error.kind, "tool_failed");
    assert!(
        error
            .message
            .starts_with("free slots unavailable: agent_unavailable: "),
        "{}",
        error.message
    );

    // Score 25 earns none: calendar is not asked, and the answer comes all the same.
    let args = break_args(25, json!([]), "2026-11-23T10:15:00+01:00");
    let result = call(&host, "t_alone00002", "suggest_break", args).await;
    assert_eq!(result.result.unwrap()["none_reason"], "stress_low");
}

#[tokio::test]
async fn inconsistent_args_get_a_typed_tool_error() {
    let (host, data) = host_with("wellness-invalid", &["wellness"]).await;
    let cases = [
        // No reading at all.
        (
            "stress_score",
            json!({"readings": {}, "baselines": baselines()}),
        ),
        // A session that ends before it starts.
        (
            "sleep_summary",
            json!({"sessions": [{"start": "2026-11-24T07:00:00Z", "end": "2026-11-24T06:00:00Z"}],
                   "utc_offset_minutes": 0, "now": "2026-11-25T08:00:00Z"}),
        ),
        // A session that ends after now.
        (
            "sleep_summary",
            json!({"sessions": [{"start": "2026-11-25T07:00:00Z", "end": "2026-11-25T09:00:00Z"}],
                   "utc_offset_minutes": 0, "now": "2026-11-25T08:00:00Z"}),
        ),
        // A level that is not the score's.
        (
            "suggest_break",
            json!({"stress": {"score": 85, "level": "low"},
                   "working_hours": {"start": "09:00", "end": "17:00"},
                   "now": "2026-11-23T10:00:00Z", "utc_offset_minutes": 0}),
        ),
        // A busy span that ends before it starts (checked before calendar is asked, which
        // is not even loaded here).
        (
            "suggest_break",
            json!({"stress": {"score": 85},
                   "busy": [{"start": "2026-11-23T12:00:00Z", "end": "2026-11-23T11:00:00Z"}],
                   "working_hours": {"start": "09:00", "end": "17:00"},
                   "now": "2026-11-23T10:00:00Z", "utc_offset_minutes": 0}),
        ),
        // Overnight working hours.
        (
            "suggest_break",
            json!({"stress": {"score": 85},
                   "working_hours": {"start": "22:00", "end": "06:00"},
                   "now": "2026-11-23T10:00:00Z", "utc_offset_minutes": 0}),
        ),
    ];
    assert_tool_invalid_args(&host, &data, "wellness", Vec::from(cases)).await;
}

#[tokio::test]
async fn bad_input_is_refused_before_the_agent_runs() {
    let (host, data) = host_with("wellness-refused", &["wellness"]).await;
    let session = json!({"start": "2026-11-24T23:00:00Z", "end": "2026-11-25T07:00:00Z"});
    let cases = [
        (
            "stress_score",
            json!({"readings": {"hrv_ms": 0}, "baselines": baselines()}),
            "/args/readings/hrv_ms",
        ),
        (
            "stress_score",
            json!({"readings": {"resting_hr_bpm": 60},
                   "baselines": {"hrv_ms": 60, "resting_hr_bpm": 58}}),
            "/args/baselines",
        ),
        (
            "stress_score",
            json!({"readings": {"sleep_minutes": 1441}, "baselines": baselines()}),
            "/args/readings/sleep_minutes",
        ),
        (
            "sleep_summary",
            json!({"utc_offset_minutes": 0, "now": "2026-11-25T08:00:00Z", "nights": 32}),
            "/args/nights",
        ),
        (
            "sleep_summary",
            json!({"utc_offset_minutes": 0, "now": "2026-11-25T08:00:00Z",
                   "sessions": vec![session; 101]}),
            "/args/sessions",
        ),
        (
            "sleep_summary",
            json!({"utc_offset_minutes": 0, "now": "this morning"}),
            "/args/now",
        ),
        (
            "suggest_break",
            json!({"stress": {"score": 101}, "now": "2026-11-23T10:00:00Z",
                   "working_hours": {"start": "09:00", "end": "17:00"},
                   "utc_offset_minutes": 0}),
            "/args/stress/score",
        ),
        (
            "suggest_break",
            json!({"stress": {"score": 50}, "now": "2026-11-23T10:00:00Z",
                   "working_hours": {"start": "09:00", "end": "17:00"},
                   "utc_offset_minutes": 0, "preferred_kinds": ["run"]}),
            "/args/preferred_kinds/0",
        ),
        (
            "suggest_break",
            json!({"stress": {"score": 50}, "now": "2026-11-23T10:00:00Z",
                   "working_hours": {"start": "09:00", "end": "17:00"}}),
            "/args",
        ),
        (
            "suggest_break",
            json!({"stress": {"score": 50}, "now": "2026-11-23T10:00:00Z",
                   "utc_offset_minutes": 0}),
            "/args",
        ),
        (
            "suggest_break",
            json!({"stress": {"score": 50}, "now": "2026-11-23T10:00:00Z",
                   "working_hours": {"start": "9:00", "end": "17:00"},
                   "utc_offset_minutes": 0}),
            "/args/working_hours/start",
        ),
        (
            "suggest_break",
            json!({"stress": {"score": 50}, "now": "2026-11-23T10:00:00Z",
                   "working_hours": {"start": "09:00", "end": "17:00"},
                   "utc_offset_minutes": 0,
                   "busy": vec![json!({"start": "2026-11-23T11:00:00Z",
                                       "end": "2026-11-23T12:00:00Z"}); 501]}),
            "/args/busy",
        ),
    ];
    crate::support::assert_refused_at_args(&host, &data, "wellness", &cases).await;
}

#[tokio::test]
async fn tick_proposes_stress_break_and_sleep_from_the_context() {
    let (host, data) = host_with("wellness-tick", &["wellness", "calendar"]).await;
    // Monday 2026-11-23 09:05 at +01:00. Readings HRV 30, RHR 64, sleep 300 against HRV 60,
    // RHR 58, sleep 450: sub-scores 100 (50 % drop), 40 (+6 bpm), 67 (150 min short) →
    // (50 000 + 12 000 + 13 400)/1000 = 75.4 → 75, high: stress_score on the watch,
    // priority 75/2 = 37.
    // 75 ≥ 60 on a working Monday before 17:00: suggest_break, priority 40 + 37 = 77, with
    // both events as busy (both end after 09:05). Dispatched, wellness asks calendar: working
    // 09:05–17:00 minus 09:00–10:00 and 09:10Z–11:30Z (10:10–12:30) leaves 10:00–10:10 and
    // 12:30–17:00; 75 asks for a 10-minute stretch, which fits at 10:00.
    // 09:05 is in the 06:00–10:00 morning window and last night 23:00–06:00 (420 min) is the
    // only sleep of the 7-night window: debt 6 × 480 + 60 = 2940, priority 20 + 40 = 60.
    let context = json!({
        "now": "2026-11-23T09:05:00+01:00",
        "utc_offset_minutes": 60,
        "readings": {"hrv_ms": 30, "resting_hr_bpm": 64, "sleep_minutes": 300},
        "profile": {
            "baselines": baselines(),
            "working_hours": {"start": "09:00", "end": "17:00"},
            "quiet_hours": {"start": "22:00", "end": "07:00"}
        },
        "events": [
            {"id": "standup", "title": "Stand-up", "start": "2026-11-23T09:00:00+01:00",
             "end": "2026-11-23T10:00:00+01:00"},
            {"id": "focus", "start": "2026-11-23T09:10:00Z", "end": "2026-11-23T11:30:00Z"}
        ],
        "sleep_sessions": [
            {"start": "2026-11-22T23:00:00+01:00", "end": "2026-11-23T06:00:00+01:00"}
        ],
        "messages": []
    });
    let outcome = host.tick("wellness", &context).await.unwrap();
    assert!(outcome.refused.is_empty());
    let summary: Vec<(&str, u8, Option<Surface>)> = outcome
        .proposals
        .iter()
        .map(|p| {
            (
                p.call.call().tool.as_str(),
                p.priority,
                p.call.call().expected_surface,
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            ("stress_score", 37, Some(Surface::Watch)),
            ("suggest_break", 77, Some(Surface::Watch)),
            ("sleep_summary", 60, Some(Surface::PhoneCard)),
        ]
    );
    for proposal in &outcome.proposals {
        let call = proposal.call.call();
        assert_eq!(call.agent, "wellness");
        assert_eq!(call.ts, "2026-11-23T09:05:00+01:00");
        assert!(!call.confirm_required);
    }
    assert_eq!(
        outcome.proposals[0].signals,
        [
            "stress:75",
            "level:high",
            "hrv_drop_pct:50",
            "rhr_rise_bpm:6",
            "sleep_short_min:150"
        ]
    );
    assert_eq!(outcome.proposals[1].signals, ["stress:75", "busy:2"]);
    assert_eq!(
        outcome.proposals[2].signals,
        [
            "sleep_debt_min:2940",
            "last_night_min:420",
            "nights_with_sleep:1/7"
        ]
    );

    // Every proposal is a call the host can dispatch as it is, and answers as computed.
    let stress = host
        .dispatch(outcome.proposals[0].call.call())
        .await
        .unwrap();
    assert_eq!(stress.result.unwrap()["score"], 75);
    let brk = host
        .dispatch(outcome.proposals[1].call.call())
        .await
        .unwrap();
    assert_eq!(
        brk.result.unwrap()["break"],
        json!({"start": "2026-11-23T10:00:00+01:00", "end": "2026-11-23T10:10:00+01:00",
               "minutes": 10, "kind": "stretch"})
    );
    let sleep = host
        .dispatch(outcome.proposals[2].call.call())
        .await
        .unwrap();
    let sleep = sleep.result.unwrap();
    assert_eq!(sleep["sleep_debt_minutes"], 2940);
    assert_eq!(sleep["nights"][6]["bedtime"], "23:00");

    // A calm afternoon: HRV 66 vs 60 and RHR 57 vs 58 are better than baseline → score 0,
    // low: recorded silently at priority 0; no break; 15:00 is not morning: no sleep summary.
    let mut calm = context.clone();
    calm["now"] = json!("2026-11-23T15:00:00+01:00");
    calm["readings"] = json!({"hrv_ms": 66, "resting_hr_bpm": 57});
    let outcome = host.tick("wellness", &calm).await.unwrap();
    assert_eq!(outcome.proposals.len(), 1);
    let proposal = &outcome.proposals[0];
    assert_eq!(proposal.call.call().tool, "stress_score");
    assert_eq!(proposal.priority, 0);
    assert_eq!(proposal.call.call().expected_surface, Some(Surface::Silent));

    // Nothing to go on: no readings, afternoon → no proposals.
    let quiet = json!({"now": "2026-11-23T15:00:00+01:00", "utc_offset_minutes": 60});
    assert!(
        host.tick("wellness", &quiet)
            .await
            .unwrap()
            .proposals
            .is_empty()
    );
    assert!(quarantine_lines(&data).is_empty());
}
