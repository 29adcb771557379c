//! The narrator's pass over a run (seed 000, ADR-0009): the novel cases' rationales in words,
//! after the run's decisions, never on a tick's budget.
//!
//! It owns which traces are narrated (a run's first trace of each case
//! ([`aura_contract::trace::narration::case`]), up to a bound), narrating them one at a time in
//! the order of traces.jsonl off the executor, and writing each record to narrations.jsonl,
//! durable before it is reported, with the counts of a run's narrations. The template's
//! rationale is written first, with its trace, as always; a kept narration replaces it where a
//! person reads the run (the report), and one that is discarded or fails leaves it. It resumes:
//! traces already narrated in narrations.jsonl are not narrated again, so a run interrupted in
//! its pass goes on where it stopped. It must not judge a narration (the host's narrator does)
//! nor change a trace.

use aura_contract::caused::Caused;
use std::collections::{BTreeSet, HashSet};
use std::sync::Arc;

use serde::Serialize;

use aura_contract::catalogue;
use aura_contract::limits::{LIVE_TRACES_BYTES_MAX, NARRATIONS_PER_RUN_MAX};
use aura_contract::trace::Trace;
use aura_contract::trace::narration::{NarrationOutcome, NarrationRecord, case};
use aura_host::journal::{JournalError, TRACES_PATH};

use crate::logs::{NARRATIONS_PATH, RunLogs};
use aura_host::{Host, Narrator};

/// Why the narration pass stopped.
#[derive(Debug, thiserror::Error)]
pub enum NarrationError {
    /// narrations.jsonl or traces.jsonl could not be read or written: the pass stops, and the
    /// next run resumes it.
    #[error("the narration pass stopped")]
    Journal(#[from] JournalError),
    /// A narration's thread panicked or was cancelled: nothing was written for its trace, so
    /// the next pass narrates it again.
    #[error("the narration of {trace_id} did not finish: {message}")]
    Unfinished {
        /// The trace it was narrating.
        trace_id: String,
        /// Why.
        message: String,
    },
    /// The narrator was stopped (its owner is stopping): what it was narrating has no record,
    /// and the next pass narrates it.
    #[error("the narrator was stopped: the next pass narrates what has no record")]
    Stopped,
    /// A line of traces.jsonl is not a trace (the journal checked each against trace.v1).
    #[error("traces.jsonl line {line} is not a trace: {message}")]
    Trace {
        /// Its line, from 1.
        line: usize,
        /// Why.
        message: String,
    },
}

/// What a run's narration pass did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct NarrationSummary {
    /// Traces of the run (decisions).
    pub traces: usize,
    /// Novel cases: the first trace of each case.
    pub novel: usize,
    /// Novel cases narrated by an earlier pass of the same run (resumed).
    pub already: usize,
    /// Narrated by this pass.
    pub narrated: usize,
    /// Grounded, and kept.
    pub kept: usize,
    /// Not grounded: the template stays.
    pub discarded: usize,
    /// No text (out of fuel, a bound, a trap): the template stays.
    pub failed: usize,
    /// Novel cases past the pass's bound: not narrated, the template stays.
    pub not_narrated: usize,
    /// Fuel the narrations burned.
    pub fuel_used: u64,
    /// Tokens the narrator read (prompts) and wrote.
    pub prompt_tokens: u64,
    /// Tokens it wrote.
    pub tokens: u64,
}

/// The run's novel cases, in the order of traces.jsonl: each case's first trace.
pub fn novel_cases(traces: &[Trace]) -> Vec<(&Trace, String)> {
    let mut seen = HashSet::new();
    traces
        .iter()
        .filter_map(|trace| {
            let case = case(trace)?;
            seen.insert(case.clone()).then_some((trace, case))
        })
        .collect()
}

/// The traces of the data dir's run, in order.
fn read_traces(host: &Host) -> Result<Vec<Trace>, NarrationError> {
    let lines = host
        .journal()
        .lines(TRACES_PATH, 0, LIVE_TRACES_BYTES_MAX)?;
    lines
        .iter()
        .enumerate()
        .map(|(i, line)| {
            serde_json::from_str(line).map_err(|e| NarrationError::Trace {
                line: i + 1,
                message: e.to_string(),
            })
        })
        .collect()
}

/// The records of narrations.jsonl, by trace_id (a line that is not one is logged and
/// skipped: its trace is narrated again).
fn read_narrations(host: &Host) -> Result<Vec<NarrationRecord>, NarrationError> {
    let lines = host
        .journal()
        .lines(NARRATIONS_PATH, 0, LIVE_TRACES_BYTES_MAX)?;
    Ok(lines
        .iter()
        .filter_map(|line| match serde_json::from_str(line) {
            Ok(record) => Some(record),
            Err(error) => {
                tracing::error!(error = %Caused(&error), "a line of narrations.jsonl is not a narration; ignored");
                None
            }
        })
        .collect())
}

/// Narrates the novel cases of the run in the data dir of `host` that are not narrated yet, at
/// most `max` (capped at [`NARRATIONS_PER_RUN_MAX`]) in this run, one at a time with
/// `narrator`, each record written to narrations.jsonl and then handed to `report`.
pub async fn narrate_run(
    host: &Host,
    narrator: Arc<Narrator>,
    max: usize,
    mut report: impl FnMut(&NarrationRecord),
) -> Result<NarrationSummary, NarrationError> {
    host.journal().open_narrations()?;
    let traces = read_traces(host)?;
    let done: BTreeSet<String> = read_narrations(host)?
        .into_iter()
        .map(|record| record.trace_id)
        .collect();
    let novel = novel_cases(&traces);
    let max = max.min(NARRATIONS_PER_RUN_MAX);
    let mut summary = NarrationSummary {
        traces: traces.len(),
        novel: novel.len(),
        ..NarrationSummary::default()
    };
    for (trace, case) in novel {
        if done.contains(&trace.trace_id) {
            summary.already += 1;
            continue;
        }
        if summary.already + summary.narrated >= max {
            summary.not_narrated += 1;
            continue;
        }
        let lead = trace
            .call
            .as_ref()
            .and_then(|call| catalogue::tool(&call.agent, &call.tool))
            .map_or("", |spec| spec.rationale_lead);
        let (narrating, trace, lead) = (narrator.clone(), trace.clone(), lead.to_owned());
        let trace_id = trace.trace_id.clone();
        let record = tokio::task::spawn_blocking(move || narrating.narrate(&trace, &lead, &case))
            .await
            .map_err(|error| NarrationError::Unfinished {
                trace_id,
                message: error.to_string(),
            })?;
        if narrator.stopped() {
            return Err(NarrationError::Stopped);
        }
        // A record always serializes (strings, integers, an enum).
        let value = serde_json::to_value(&record).unwrap_or_default();
        host.journal().narration(&value)?;
        summary.narrated += 1;
        summary.fuel_used += record.fuel_used;
        summary.prompt_tokens += u64::from(record.prompt_tokens);
        summary.tokens += u64::from(record.tokens);
        match record.outcome {
            NarrationOutcome::Kept => summary.kept += 1,
            NarrationOutcome::Discarded => summary.discarded += 1,
            NarrationOutcome::Failed => summary.failed += 1,
        }
        report(&record);
    }
    Ok(summary)
}
