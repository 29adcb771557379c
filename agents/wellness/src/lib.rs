//! aura's wellness agent: stress score, sleep summary, break suggestions.
//!
//! Tools (each a plain `fn(Args) -> aura_sdk::ToolResult<Result>`; schemas in
//! `schemas/wellness/<tool>.{args,result}.json`; none changes anything for the user, so the
//! catalogue asks no confirmation for any):
//! - [`stress::stress_score`]: a 0..100 score from HRV, resting heart rate and sleep against the
//!   user's baselines, with each factor's deviation, sub-score, weight and contribution.
//! - [`sleep::sleep_summary`]: nightly sleep over a window of nights, sleep debt, bedtime
//!   consistency.
//! - [`breaks::suggest_break`]: a break sized by stress in the earliest free slot that fits, or
//!   why there is none. The free slots come from `calendar.find_free_slots`, asked through the
//!   host (an agent-to-agent call); the only call this agent makes.
//!
//! The tick, [`tick::tick`], proposes `stress_score` for new readings, `suggest_break` when the
//! stress is high during a working day, and `sleep_summary` in the morning.
//! Everything is deterministic integer arithmetic: no clock, no randomness, no floating point;
//! `now` comes from the args or the tick context. The agent holds no state between calls.

pub mod breaks;
pub mod common;
pub mod sleep;
pub mod stress;
pub mod tick;

aura_sdk::agent! {
    Wellness {
        name: "wellness",
        tools: {
            "stress_score" => stress::stress_score,
            "sleep_summary" => sleep::sleep_summary,
            "suggest_break" => breaks::suggest_break,
        },
        tick: tick::tick,
        tick_reads: ["now", "utc_offset_minutes", "profile", "readings", "sleep_sessions", "events"],
    }
}

/// This agent's schemas, checked in the unit tests with the validator the host uses (see
/// `aura-testkit`).
#[cfg(test)]
const SCHEMAS: aura_testkit::AgentSchemas = aura_testkit::AgentSchemas::new(Wellness::NAME);
