//! What a checkpoint keeps of a run between ticks, and reading it back.
//!
//! It owns [`RunState`]: the world so far, the memory, the pending questions (each call kept as
//! its canonical JSON and checked by the crossing again when it is read back: the file is input
//! like any other), whether the last tick was in quiet hours, and the summary so far. It must
//! not decide when a checkpoint is written (the run does) nor how (the checkpoint module does).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use aura_contract::canonical::parse_i_json;
use aura_contract::catalogue;
use aura_contract::crossing::check_own_tool;
use aura_contract::envelope::Surface;
use aura_contract::limits::CROSSING_BYTES_MAX;
use aura_host::{Host, Proposal};

use super::memory::Memory;
use super::questions::Question;
use super::summary::RunSummary;
use crate::checkpoint::CheckpointError;
use crate::scenario::World;

/// A pending question as a checkpoint keeps it: the call as the agent's canonical JSON,
/// checked again by the crossing when it is read back.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct SavedQuestion {
    proposed_by: String,
    call: String,
    signals: Vec<String>,
    priority: u8,
    surface: Surface,
    about: Option<String>,
    #[serde(with = "time::serde::rfc3339")]
    asked_at: time::OffsetDateTime,
}

/// Everything a run carries from one tick to the next: what a checkpoint saves.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RunState {
    world: World,
    memory: Memory,
    pending: Vec<SavedQuestion>,
    was_quiet: bool,
    summary: RunSummary,
}

/// The pending questions of `memory` as a checkpoint or a next day keeps them.
pub(super) fn saved_questions(memory: &Memory) -> Vec<SavedQuestion> {
    memory
        .pending
        .iter()
        .map(|q| SavedQuestion {
            proposed_by: q.proposal.proposed_by.to_owned(),
            call: q.proposal.call.canonical().to_owned(),
            signals: q.proposal.signals.clone(),
            priority: q.proposal.priority,
            surface: q.surface,
            about: q.about.clone(),
            asked_at: q.asked_at,
        })
        .collect()
}

/// Puts `saved` questions back into `memory`, each call through the crossing again (a file
/// is input like any other).
pub(super) fn restore_questions(
    saved: Vec<SavedQuestion>,
    host: &Host,
    memory: &mut Memory,
) -> Result<(), String> {
    for saved in saved {
        let call = parse_i_json(&saved.call, CROSSING_BYTES_MAX)
            .map_err(|e| format!("a pending question: {e}"))?;
        let call = host
            .crossing()
            .check_proposed_call(call)
            .map_err(|e| format!("a pending question: {e}"))?;
        let proposed_by = catalogue::agent(&saved.proposed_by)
            .ok_or_else(|| format!("unknown agent {}", saved.proposed_by))?
            .name;
        check_own_tool(proposed_by, &call).map_err(|e| format!("a pending question: {e}"))?;
        memory.pending.push(Question {
            proposal: Proposal {
                proposed_by,
                call,
                signals: saved.signals,
                priority: saved.priority,
            },
            surface: saved.surface,
            about: saved.about,
            asked_at: saved.asked_at,
        });
    }
    Ok(())
}

impl RunState {
    /// The state as a checkpoint's JSON.
    pub(super) fn save(
        world: &World,
        memory: &Memory,
        was_quiet: bool,
        summary: &RunSummary,
    ) -> Value {
        let pending = saved_questions(memory);
        /// [`RunState`] borrowed, to write.
        #[derive(Serialize)]
        struct Saving<'a> {
            world: &'a World,
            memory: &'a Memory,
            pending: Vec<SavedQuestion>,
            was_quiet: bool,
            summary: RunSummary,
        }
        // Timings are this process's, never part of a run's record.
        let summary = RunSummary {
            tick_us_median: 0,
            tick_us_p95: 0,
            ..summary.clone()
        };
        // Strings, integers, times as RFC 3339 and JSON values: always serializes.
        serde_json::to_value(Saving {
            world,
            memory,
            pending,
            was_quiet,
            summary,
        })
        .unwrap_or_default()
    }

    /// Reads a checkpoint's state back; each pending question's call passes the crossing
    /// again (the file is input like any other).
    pub(super) fn restore(
        value: Value,
        host: &Host,
        next_tick: usize,
    ) -> Result<(World, Memory, bool, RunSummary), CheckpointError> {
        let unreadable = |reason: String| CheckpointError::Unreadable { reason };
        // Every count a real run keeps is far below 2^40; a larger one is not a run's, and
        // adding to it could overflow.
        let counts_ok = value["summary"].as_object().is_some_and(|summary| {
            summary
                .values()
                .all(|v| !v.is_u64() || v.as_u64() < Some(1 << 40))
        });
        if !counts_ok || value["summary"]["ticks"].as_u64() != Some(next_tick as u64) {
            return Err(unreadable("its summary is not the run's so far".to_owned()));
        }
        let state: RunState =
            serde_json::from_value(value).map_err(|e| unreadable(format!("state: {e}")))?;
        let mut memory = state.memory;
        restore_questions(state.pending, host, &mut memory).map_err(unreadable)?;
        Ok((state.world, memory, state.was_quiet, state.summary))
    }
}
