//! The wellness agent's tools: a stress score from wearable readings, a summary of the last
//! nights' sleep, and a break sized by stress in a free slot.
//!
//! Each tool's whole entry is here; it must not hold any check (the schemas and the crossing
//! do) nor any decision (the orchestrator does).

use serde_json::Value;

use super::text::{count, counted, duration, number};
use super::{AgentSpec, Telling, measure, state, tick_examples, tool_entry};
use crate::limits::{DEADLINE_MS_DEFAULT, INTERPRETED_COMPONENT_BYTES_MAX, MEMORY_BYTES_MAX};

pub(super) const AGENT: AgentSpec = AgentSpec {
    name: "wellness",
    memory_bytes_max: MEMORY_BYTES_MAX,
    // wellness also ships in Python (agents-py/wellness, built by componentize-py): the same
    // tools and answers, with CPython inside the component.
    component_bytes_max: INTERPRETED_COMPONENT_BYTES_MAX,
    tools: &[
        tool_entry!("wellness", "stress_score",
            deadline_ms: DEADLINE_MS_DEFAULT,
            confirm: false,
            rationale: "New wearable readings arrived",
            summary: stress,
            headline: stress_headline,
            ends: None,
            question: None,
            on_confirm: None,
            about: None,
            news: &[
                // A level, told again when it still holds an hour later.
                state("level", "moderate", "stress", 1, 30).retell_after(60),
                state("level", "high", "stress", 2, 60).retell_after(60),
            ],
            news_in_result: None),
        tool_entry!("wellness", "sleep_summary",
            deadline_ms: DEADLINE_MS_DEFAULT,
            confirm: false,
            rationale: "Last nights' sleep can be summed up",
            summary: sleep,
            headline: sleep_headline,
            ends: None,
            question: None,
            on_confirm: None,
            about: None,
            news: &[
                // Last night's sleep: each new day's is news (the day it is about, not 24
                // hours after the last was told).
                measure("last_night_min", "sleep", 30).retell_daily(),
            ],
            news_in_result: None),
        tool_entry!("wellness", "suggest_break",
            deadline_ms: DEADLINE_MS_DEFAULT,
            confirm: false,
            rationale: "Stress is high and the day has room for a break",
            summary: suggested_break,
            headline: suggested_break,
            ends: None,
            question: None,
            on_confirm: None,
            about: None,
            news: &[
                // A break (its stress score is a measure): at most one an hour.
                measure("stress", "break", 70).retell_after(60),
            ],
            news_in_result: None),
    ],
    // suggest_break asks calendar for the free slots a break can go in.
    may_call: &[("calendar", "find_free_slots")],
    tick_examples: tick_examples!("wellness"),
};

fn stress_headline(result: &Value, _telling: &Telling<'_>) -> String {
    format!("Your stress is {}", level(&result["level"]))
}

/// A stress level as said (the score itself is never shown).
fn level(value: &Value) -> &str {
    match value.as_str() {
        Some(level @ ("low" | "moderate" | "high")) => level,
        _ => "unknown",
    }
}

/// The card: the level, and what drives it against the person's own usual (heart-rate
/// variability down, resting heart rate up, sleep short), largest first.
fn stress(result: &Value, telling: &Telling<'_>) -> String {
    let mut factors: Vec<&Value> = result["factors"]
        .as_array()
        .map_or(&[][..], Vec::as_slice)
        .iter()
        .filter(|f| f["deviation"].as_i64().is_some_and(|d| d > 0))
        .collect();
    factors.sort_by_key(|f| std::cmp::Reverse(f["contribution"].as_i64().unwrap_or(0)));
    let why: Vec<String> = factors
        .iter()
        .filter_map(|f| {
            let deviation = f["deviation"].as_u64()?;
            Some(
                match (f["factor"].as_str()?, f["deviation_unit"].as_str()?) {
                    ("hrv", "percent_drop") => {
                        format!("heart-rate variability {deviation}% below your usual")
                    }
                    ("resting_hr", "bpm_rise") => {
                        format!("resting heart rate {deviation} bpm above your usual")
                    }
                    ("sleep", "minutes_short") => {
                        format!("{} less sleep than you need", duration(deviation))
                    }
                    _ => return None,
                },
            )
        })
        .collect();
    match why.is_empty() {
        true => stress_headline(result, telling),
        false => format!("{}: {}", stress_headline(result, telling), why.join(", ")),
    }
}

/// The last night of the summary (its latest date).
fn last_night(result: &Value) -> Option<&Value> {
    result["nights"]
        .as_array()?
        .iter()
        .max_by_key(|n| n["date"].as_str().unwrap_or(""))
}

fn sleep_headline(result: &Value, _telling: &Telling<'_>) -> String {
    match last_night(result) {
        Some(night) => match night["minutes"].as_u64().unwrap_or(0) {
            0 => "No sleep was recorded last night".to_owned(),
            slept => format!("You slept {} last night", duration(slept)),
        },
        None => "No sleep was recorded".to_owned(),
    }
}

/// The card: last night against what the person needs, then the debt over the nights.
fn sleep(result: &Value, telling: &Telling<'_>) -> String {
    let mut summary = sleep_headline(result, telling);
    if let Some(short) = last_night(result)
        .and_then(|n| n["shortfall_minutes"].as_u64())
        .filter(|s| *s > 0)
    {
        summary.push_str(&format!(", {} less than you need", duration(short)));
    }
    match number(&result["sleep_debt_minutes"]) {
        0 => summary.push_str("; no sleep debt"),
        debt => summary.push_str(&format!(
            "; {} of sleep debt over {}",
            duration(debt),
            counted(count(result, "nights"), "night", "nights")
        )),
    }
    summary
}

/// The break as said: "Stress is high: take a 10-minute stretch at 11:00"; no break when the
/// day has no room says so.
fn suggested_break(result: &Value, telling: &Telling<'_>) -> String {
    let level = level(&result["level"]);
    let brk = &result["break"];
    match result["status"].as_str() {
        Some("suggested") => format!(
            "Stress is {level}: take a {}-minute {} {}",
            brk["minutes"].as_u64().unwrap_or(0),
            super::calendar::break_kind(&brk["kind"]),
            telling.at(&brk["start"])
        ),
        _ => match result["none_reason"].as_str() {
            Some("stress_low") => format!("Stress is {level}: no break needed"),
            _ => format!("Stress is {level}, and no free time is left for a break today"),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn summaries_say_levels_and_lengths_never_scores() {
        let high = json!({"score": 82, "level": "high", "factors": [
            {"factor": "hrv", "deviation": 40, "deviation_unit": "percent_drop",
             "contribution": 50},
            {"factor": "resting_hr", "deviation": 9, "deviation_unit": "bpm_rise",
             "contribution": 30},
            {"factor": "sleep", "deviation": 0, "deviation_unit": "minutes_short",
             "contribution": 0}]});
        assert_eq!(
            stress(&high, &Telling::default()),
            "Your stress is high: heart-rate variability 40% below your usual, resting heart \
             rate 9 bpm above your usual"
        );
        assert_eq!(
            stress_headline(&high, &Telling::default()),
            "Your stress is high"
        );
        let nights = json!({"sleep_debt_minutes": 195, "nights": [
            {"date": "2026-11-22", "minutes": 352, "shortfall_minutes": 98},
            {"date": "2026-11-21", "minutes": 450, "shortfall_minutes": 0}, {"date": "2026-11-20"}],
            "nights_with_sleep": 2, "average_minutes": 415});
        assert_eq!(
            sleep(&nights, &Telling::default()),
            "You slept 5 h 52 min last night, 1 h 38 min less than you need; 3 h 15 min of \
             sleep debt over 3 nights"
        );
        assert_eq!(
            sleep_headline(&nights, &Telling::default()),
            "You slept 5 h 52 min last night"
        );
        let suggested = json!({"status": "suggested", "level": "high", "stress_score": 72,
            "break": {"start": "10:30", "minutes": 10, "kind": "stretch"},
            "reason": "Stress is high (72/100). Take a 10-minute stretch at 10:30."});
        assert_eq!(
            suggested_break(&suggested, &Telling::default()),
            "Stress is high: take a 10-minute stretch at 10:30"
        );
        let none = json!({"status": "none", "level": "high", "none_reason": "no_free_slot"});
        assert_eq!(
            suggested_break(&none, &Telling::default()),
            "Stress is high, and no free time is left for a break today"
        );
    }
}
