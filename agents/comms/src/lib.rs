//! aura's comms agent: inbox triage, reply drafts, action items.
//!
//! Tools (each a plain `fn(Args) -> aura_sdk::ToolResult<Result>`; schemas in
//! `schemas/comms/<tool>.{args,result}.json`):
//! - [`triage::triage_inbox`]: ranks messages by urgency (0..1, 3 decimals) with the signals
//!   behind each score, flags arrivals in quiet hours and which messages should interrupt now.
//! - [`draft::draft_reply`]: a templated reply (accept, decline, defer, ask for details) in a
//!   formal, friendly or brief tone. A user-facing artefact (ADR-0009): no other agent consumes
//!   it, and nothing is sent.
//! - [`actions::extract_action_items`]: requests, commitments and deadlines in a thread, each
//!   with an owner and a due time parsed by [`dates`].
//!
//! The tick, [`tick::tick`], proposes `triage_inbox` when the context holds new messages and
//! `extract_action_items` for threads whose new messages carry deadlines; it never proposes
//! `draft_reply` (a reply needs the user's intent). Everything is deterministic: no clock, no
//! randomness; `now` comes from the args or the tick context.
//!
//! Shared pieces: [`common`] (message shape, times, checks), [`text`] (tokens, sentences,
//! clean cuts), [`dates`] (the date-phrase parser).

pub mod actions;
pub mod common;
pub mod dates;
pub mod draft;
pub mod text;
pub mod tick;
pub mod triage;

aura_sdk::agent! {
    Comms {
        name: "comms",
        tools: {
            "triage_inbox" => triage::triage_inbox,
            "draft_reply" => draft::draft_reply,
            "extract_action_items" => actions::extract_action_items,
        },
        tick: tick::tick,
        tick_reads: ["now", "utc_offset_minutes", "profile", "messages", "events"],
    }
}

/// This agent's schemas, checked in the unit tests with the validator the host uses (see
/// `aura-testkit`).
#[cfg(test)]
const SCHEMAS: aura_testkit::AgentSchemas = aura_testkit::AgentSchemas::new(Comms::NAME);
