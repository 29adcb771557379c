//! aura's calendar agent: free slots, conflicts, scheduling.
//!
//! Tools (each a plain `fn(Args) -> aura_sdk::ToolResult<Result>`; schemas in
//! `schemas/calendar/<tool>.{args,result}.json`):
//! - [`free_slots::find_free_slots`]: maximal free windows inside working hours.
//! - [`conflicts::detect_conflicts`]: overlaps, double bookings, tight transitions.
//! - [`schedule::schedule_event`]: validates and normalizes a proposed event and reports its
//!   conflicts (stores nothing; the catalogue requires confirmation). With `break_after` it
//!   asks `wellness.suggest_break` for a break after the event ([`break_after`]): the one
//!   agent-to-agent call calendar makes. It sends the free time it found itself, so wellness
//!   does not call calendar back (calendar → wellness → calendar would be a cycle the host
//!   refuses).
//!
//! The tick, [`tick::tick`], proposes `detect_conflicts` when the context's events clash and
//! `schedule_event` (for the user to confirm) for each pending meeting invitation.
//! Everything is deterministic: no clock, no randomness; `now` comes from the tick context.

pub mod break_after;
pub mod common;
pub mod conflicts;
pub mod free_slots;
pub mod schedule;
pub mod tick;

aura_sdk::agent! {
    Calendar {
        name: "calendar",
        tools: {
            "find_free_slots" => free_slots::find_free_slots,
            "detect_conflicts" => conflicts::detect_conflicts,
            "schedule_event" => schedule::schedule_event,
        },
        tick: tick::tick,
        tick_reads: ["now", "utc_offset_minutes", "profile", "events", "invitations"],
    }
}

/// This agent's schemas, checked in the unit tests with the validator the host uses (see
/// `aura-testkit`).
#[cfg(test)]
const SCHEMAS: aura_testkit::AgentSchemas = aura_testkit::AgentSchemas::new(Calendar::NAME);
