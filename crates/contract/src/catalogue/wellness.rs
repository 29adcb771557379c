//! The wellness agent's tools: a stress score from wearable readings, a summary of the last
//! nights' sleep, and a break sized by stress in a free slot.
//!
//! Each tool's whole entry is here; it must not hold any check (the schemas and the crossing
//! do) nor any decision (the orchestrator does).

use serde_json::Value;

use super::text::{count, number, text};
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
            question: None,
            on_confirm: None,
            about: None,
            news: &[
                // Last night's sleep, once a day.
                measure("last_night_min", "sleep", 30).retell_after(24 * 60),
            ],
            news_in_result: None),
        tool_entry!("wellness", "suggest_break",
            deadline_ms: DEADLINE_MS_DEFAULT,
            confirm: false,
            rationale: "Stress is high and the day has room for a break",
            summary: suggested_break,
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

fn stress(result: &Value, _telling: &Telling<'_>) -> String {
    format!(
        "Stress {} ({})",
        number(&result["score"]),
        text(&result["level"])
    )
}

fn sleep(result: &Value, _telling: &Telling<'_>) -> String {
    format!(
        "Sleep debt {} min over {} nights; {} with sleep, average {} min",
        number(&result["sleep_debt_minutes"]),
        count(result, "nights"),
        number(&result["nights_with_sleep"]),
        number(&result["average_minutes"])
    )
}

fn suggested_break(result: &Value, _telling: &Telling<'_>) -> String {
    text(&result["reason"])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn summaries_read_the_result() {
        assert_eq!(
            stress(
                &json!({"score": 40, "level": "moderate"}),
                &Telling::default()
            ),
            "Stress 40 (moderate)"
        );
        let nights = json!({"sleep_debt_minutes": 95, "nights": [{}, {}, {}],
            "nights_with_sleep": 2, "average_minutes": 415});
        assert_eq!(
            sleep(&nights, &Telling::default()),
            "Sleep debt 95 min over 3 nights; 2 with sleep, average 415 min"
        );
        assert_eq!(
            suggested_break(&json!({"reason": "A walk at 10:30"}), &Telling::default()),
            "A walk at 10:30"
        );
    }
}
