//! The orchestrator: drives the agents through a scenario, tick by tick, and decides what the
//! user sees.
//!
//! Each tick it applies the scenario's signals, resolves the user's answers, runs every agent's
//! `tick` on the same context snapshot (concurrently; results taken in catalogue order, so
//! runs are deterministic), then arbitrates the proposals that passed the crossing:
//! - a proposal already shown (same call_id, or same agent, tool, surface and signals) is a
//!   repeat and is suppressed;
//! - confirm_required calls are never run unasked: they become questions on PHONE_CARD, run
//!   only when the scenario's user confirms (held back during quiet hours);
//! - in quiet hours PHONE_CARD and EARBUD_TTS become SILENT (only SILENT and WATCH at night);
//! - one interruption per surface per tick (WATCH, PHONE_CARD, EARBUD_TTS): the highest
//!   priority wins, ties by catalogue order of agents then the agent's own order; the others
//!   are listed as not chosen (surface_busy) and may win a later tick. SILENT takes them all.
//!
//! Every decision is written to traces.jsonl (durable, checked against trace.v1) before it is
//! reported. A chosen proposal runs as the checked call it already is. It owns these rules; it
//! must not check calls (the crossing does, through [`Host`]), know any tool (each tool's
//! catalogue entry says how it is told, asked and what confirming it changes) nor read the
//! machine's clock: time is the scenario's.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use crate::envelope::Surface;
use crate::host::{Host, TraceRecordError};
use crate::scenario::{Answer, Scenario, World};
use crate::tick::Proposal;
use crate::trace::{
    Decision, LostReason, NotChosen, Outcome, RationaleFacts, Status, Trace, TracedCall, rationale,
};

/// Why a run stopped.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// A trace could not be recorded (not durable, or not valid trace.v1): the run stops
    /// rather than report a decision that may be lost.
    #[error("cannot record a trace: {0}")]
    Record(#[from] TraceRecordError),
}

/// What the run reports as it goes, after the record is durable.
#[derive(Debug)]
pub enum RunEvent<'a> {
    /// A tick is about to run.
    Tick {
        /// Its number, from 0.
        index: usize,
        /// How many ticks the run has.
        of: usize,
        /// Its time, RFC 3339 in the user's offset.
        at: &'a str,
    },
    /// A decision, already in traces.jsonl.
    Decision(&'a Trace),
}

/// Counts for the end of a run.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct RunSummary {
    /// The scenario's name.
    pub scenario: String,
    /// The seed.
    pub seed: u64,
    /// Ticks run.
    pub ticks: usize,
    /// Signals applied.
    pub signals: usize,
    /// Traces written.
    pub decisions: usize,
    /// Calls run and shown, per surface (WATCH, PHONE_CARD, EARBUD_TTS, SILENT).
    pub shown: SurfaceCounts,
    /// Questions asked.
    pub asked: usize,
    /// Questions confirmed (and run).
    pub confirmed: usize,
    /// Questions declined.
    pub declined: usize,
    /// Questions held for quiet hours.
    pub held: usize,
    /// Answers that matched no pending question.
    pub answers_unmatched: usize,
    /// Proposals suppressed as repeats of something already shown or asked.
    pub repeats: usize,
    /// Proposals that lost their surface in their tick.
    pub not_chosen: usize,
    /// Proposals the crossing refused (each quarantined).
    pub proposals_refused: usize,
    /// Ticks that failed (each quarantined).
    pub ticks_failed: usize,
    /// Chosen calls that came back with a tool error or were refused.
    pub calls_failed: usize,
    /// Quarantine records written during the run: refused proposals, failed ticks and calls,
    /// and refused agent-to-agent calls nested inside calls that went on to succeed.
    pub quarantined: u64,
    /// Fuel burned by ticks.
    pub tick_fuel: u64,
    /// Fuel burned by the chosen calls (their agent-to-agent calls included).
    pub call_fuel: u64,
    /// Wall time of one tick of all agents (run concurrently, checks included), median over
    /// the run's ticks, in µs. Measured, so it differs run to run: never written to a trace.
    pub tick_us_median: u64,
    /// The same, 95th percentile (nearest rank).
    pub tick_us_p95: u64,
}

/// Decisions per surface.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
#[allow(non_snake_case)]
pub struct SurfaceCounts {
    /// On the watch.
    pub WATCH: usize,
    /// Cards on the phone.
    pub PHONE_CARD: usize,
    /// Spoken in the earbuds.
    pub EARBUD_TTS: usize,
    /// Recorded only.
    pub SILENT: usize,
}

impl SurfaceCounts {
    fn add(&mut self, surface: Surface) {
        match surface {
            Surface::Watch => self.WATCH += 1,
            Surface::PhoneCard => self.PHONE_CARD += 1,
            Surface::EarbudTts => self.EARBUD_TTS += 1,
            Surface::Silent => self.SILENT += 1,
        }
    }
}

/// A question put to the user, waiting for an answer.
#[derive(Debug, Clone)]
struct Question {
    proposal: Proposal,
    surface: Surface,
}

/// What a run remembers between ticks.
#[derive(Debug, Default)]
struct Memory {
    /// call_ids and content keys of what was shown or asked.
    shown: HashSet<String>,
    /// Questions waiting for an answer, in the order asked.
    pending: Vec<Question>,
    /// call_ids of questions held for quiet hours (traced once).
    held: HashSet<String>,
    /// call_ids of answered questions (never asked again).
    answered: HashSet<String>,
}

/// One candidate decision of a tick.
struct Choice {
    proposal: Proposal,
    decision: Decision,
    requested: Surface,
    surface: Surface,
    beaten: Vec<NotChosen>,
}

/// Runs `scenario` on `host`, writing every decision to the data dir's traces.jsonl and
/// reporting it to `report` once durable.
pub async fn run(
    host: &Host,
    scenario: &Scenario,
    seed: u64,
    mut report: impl FnMut(RunEvent<'_>),
) -> Result<RunSummary, RunError> {
    let agents = host.agents();
    let ticks = scenario.ticks();
    let mut world = scenario.world();
    let mut memory = Memory::default();
    let mut tick_us = Vec::with_capacity(ticks.len());
    let quarantined_before = host.quarantined();
    let mut summary = RunSummary {
        scenario: scenario.name.clone(),
        seed,
        ..RunSummary::default()
    };
    for (index, now) in ticks.iter().copied().enumerate() {
        let at = scenario.format(now);
        report(RunEvent::Tick {
            index,
            of: ticks.len(),
            at: &at,
        });
        let mut tick = TickRun {
            host,
            scenario,
            seed,
            index,
            at: &at,
            decisions: 0,
        };
        let answers = world.advance(scenario, now);
        for answer in answers {
            tick.answer(&answer, &mut world, &mut memory, &mut summary, &mut report)
                .await?;
        }
        let context = world.context(scenario, now);
        let started = std::time::Instant::now();
        let outcomes = host.tick_all(&agents, &context).await;
        tick_us.push(u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX));
        let mut proposals = Vec::new();
        for outcome in outcomes {
            match outcome {
                Ok(outcome) => {
                    summary.tick_fuel += outcome.fuel_used;
                    summary.proposals_refused += outcome.refused.len();
                    proposals.extend(outcome.proposals);
                }
                Err(_quarantined) => summary.ticks_failed += 1,
            }
        }
        let quiet = scenario.is_quiet(now);
        for choice in arbitrate(proposals, quiet, &mut memory, &mut summary) {
            tick.decide(choice, &mut world, &mut memory, &mut summary, &mut report)
                .await?;
        }
        summary.ticks += 1;
    }
    summary.signals = world.signals_applied();
    summary.quarantined = host.quarantined().saturating_sub(quarantined_before);
    tick_us.sort_unstable();
    summary.tick_us_median = nearest_rank(&tick_us, 50);
    summary.tick_us_p95 = nearest_rank(&tick_us, 95);
    Ok(summary)
}

/// The `percent`th percentile of sorted `values` by nearest rank; 0 when empty.
fn nearest_rank(sorted: &[u64], percent: usize) -> u64 {
    match sorted.len() {
        0 => 0,
        n => sorted[(percent * n).div_ceil(100).clamp(1, n) - 1],
    }
}

/// The surface a proposal asks for (PHONE_CARD when it names none).
fn requested_surface(proposal: &Proposal) -> Surface {
    proposal
        .call
        .call()
        .expected_surface
        .unwrap_or(Surface::PhoneCard)
}

/// The content key of a proposal: the same agent, tool, surface and signals is the same news.
fn content_key(proposal: &Proposal) -> String {
    let call = proposal.call.call();
    format!(
        "{}\n{}\n{:?}\n{}",
        call.agent,
        call.tool,
        requested_surface(proposal),
        proposal.signals.join("\n")
    )
}

/// Turns one tick's proposals (catalogue order of agents, then each agent's order) into the
/// tick's decisions, in that same order.
fn arbitrate(
    proposals: Vec<Proposal>,
    quiet: bool,
    memory: &mut Memory,
    summary: &mut RunSummary,
) -> Vec<Choice> {
    let mut choices: Vec<Choice> = Vec::new();
    // Index into `choices` of the current holder of each interrupting surface.
    let mut holder: HashMap<Surface, usize> = HashMap::new();
    let mut seen_this_tick: HashSet<String> = HashSet::new();
    for proposal in proposals {
        let call_id = proposal.call.call().call_id.clone();
        let key = content_key(&proposal);
        let repeat = memory.shown.contains(&call_id)
            || memory.shown.contains(&key)
            || memory.answered.contains(&call_id)
            || memory
                .pending
                .iter()
                .any(|q| q.proposal.call.call().call_id == call_id)
            || !seen_this_tick.insert(call_id.clone());
        if repeat {
            summary.repeats += 1;
            continue;
        }
        let requested = requested_surface(&proposal);
        let (decision, surface) = match proposal.call.needs_confirmation() {
            true if quiet => {
                if !memory.held.insert(call_id) {
                    summary.repeats += 1;
                    continue;
                }
                (Decision::Held, Surface::Silent)
            }
            true => (Decision::Asked, Surface::PhoneCard),
            false => match requested {
                Surface::PhoneCard | Surface::EarbudTts if quiet => {
                    (Decision::Executed, Surface::Silent)
                }
                other => (Decision::Executed, other),
            },
        };
        let choice = Choice {
            proposal,
            decision,
            requested,
            surface,
            beaten: Vec::new(),
        };
        if surface == Surface::Silent {
            choices.push(choice);
            continue;
        }
        match holder.get(&surface).copied() {
            None => {
                holder.insert(surface, choices.len());
                choices.push(choice);
            }
            Some(at) if choice.proposal.priority > choices[at].proposal.priority => {
                // The newcomer takes the surface; the old holder and whatever it beat lose.
                let mut old = std::mem::replace(&mut choices[at], choice);
                let mut beaten = std::mem::take(&mut old.beaten);
                beaten.insert(0, not_chosen(&old.proposal));
                choices[at].beaten = beaten;
            }
            Some(at) => choices[at].beaten.push(not_chosen(&choice.proposal)),
        }
    }
    summary.not_chosen += choices.iter().map(|c| c.beaten.len()).sum::<usize>();
    choices
}

fn not_chosen(proposal: &Proposal) -> NotChosen {
    let call = proposal.call.call();
    NotChosen {
        call_id: call.call_id.clone(),
        agent: call.agent.clone(),
        tool: call.tool.clone(),
        priority: proposal.priority,
        reason: LostReason::SurfaceBusy,
    }
}

/// One tick's decisions as they are made.
struct TickRun<'a> {
    host: &'a Host,
    scenario: &'a Scenario,
    seed: u64,
    index: usize,
    at: &'a str,
    decisions: usize,
}

impl TickRun<'_> {
    /// Resolves the user's answer to a pending question: confirm runs the call, decline drops
    /// it. An answer for no pending question is counted and logged.
    async fn answer(
        &mut self,
        answer: &Answer,
        world: &mut World,
        memory: &mut Memory,
        summary: &mut RunSummary,
        report: &mut impl FnMut(RunEvent<'_>),
    ) -> Result<(), RunError> {
        let found = memory.pending.iter().position(|q| {
            let call = q.proposal.call.call();
            call.agent == answer.agent
                && call.tool == answer.tool
                && q.proposal.signals.contains(&answer.signal)
        });
        let Some(found) = found else {
            summary.answers_unmatched += 1;
            tracing::warn!(
                agent = %answer.agent,
                tool = %answer.tool,
                signal = %answer.signal,
                "answer matches no pending question"
            );
            return Ok(());
        };
        let question = memory.pending.remove(found);
        memory
            .answered
            .insert(question.proposal.call.call().call_id.clone());
        world.answered(&answer.signal);
        let choice = Choice {
            proposal: question.proposal,
            decision: match answer.confirm {
                true => Decision::Confirmed,
                false => Decision::Declined,
            },
            requested: question.surface,
            surface: question.surface,
            beaten: Vec::new(),
        };
        self.decide(choice, world, memory, summary, report).await
    }

    /// Carries out one decision, records its trace, then reports it.
    async fn decide(
        &mut self,
        choice: Choice,
        world: &mut World,
        memory: &mut Memory,
        summary: &mut RunSummary,
        report: &mut impl FnMut(RunEvent<'_>),
    ) -> Result<(), RunError> {
        let Choice {
            proposal,
            decision,
            requested,
            surface,
            beaten,
        } = choice;
        let call = proposal.call.call();
        let spec = proposal.call.spec();
        let (outcome, fuel_used) = match decision {
            Decision::Executed | Decision::Confirmed => {
                memory.shown.insert(call.call_id.clone());
                memory.shown.insert(content_key(&proposal));
                let (outcome, fuel_used, result) = self.execute(&proposal).await;
                if outcome.status == Status::Ok {
                    summary.shown.add(surface);
                } else {
                    summary.calls_failed += 1;
                }
                summary.call_fuel += fuel_used;
                if decision == Decision::Confirmed {
                    summary.confirmed += 1;
                    let effect = spec.on_confirm.zip(result).and_then(|(f, r)| f(&r));
                    if let Some(effect) = effect {
                        world.apply(effect);
                    }
                }
                (outcome, fuel_used)
            }
            Decision::Asked => {
                memory.pending.push(Question {
                    proposal: proposal.clone(),
                    surface,
                });
                summary.asked += 1;
                let question = spec.question_text(&call.agent, &call.args);
                (Outcome::pending(question), 0)
            }
            Decision::Declined => {
                summary.declined += 1;
                (Outcome::declined(), 0)
            }
            Decision::Held => {
                summary.held += 1;
                (Outcome::held(), 0)
            }
        };
        let rationale = rationale(&RationaleFacts {
            lead: spec.rationale_lead,
            agent: &call.agent,
            tool: &call.tool,
            signals: &proposal.signals,
            priority: proposal.priority,
            decision,
            requested,
            surface,
            beaten: beaten.len(),
        });
        let trace = Trace {
            trace_id: format!("tr_{:05}_{:03}", self.index, self.decisions),
            scenario: self.scenario.name.clone(),
            seed: self.seed,
            tick: self.index,
            at: self.at.to_owned(),
            decision,
            call: TracedCall {
                call_id: call.call_id.clone(),
                agent: call.agent.clone(),
                tool: call.tool.clone(),
                confirm_required: proposal.call.needs_confirmation(),
            },
            signals: proposal.signals.clone(),
            priority: proposal.priority,
            requested_surface: requested,
            surface,
            rationale,
            outcome,
            fuel_used,
            not_chosen: beaten,
        };
        self.host.record_trace(&trace)?;
        self.decisions += 1;
        summary.decisions += 1;
        report(RunEvent::Decision(&trace));
        Ok(())
    }

    /// Runs a chosen call: it passed the crossing when it was proposed, so it runs as it is
    /// (its answer is checked now). The outcome, the fuel burned, and the result if any.
    async fn execute(&self, proposal: &Proposal) -> (Outcome, u64, Option<Value>) {
        let call = proposal.call.call();
        match self.host.dispatch(&proposal.call).await {
            Ok(result) => match (result.result, result.error) {
                (Some(value), _) => {
                    let outcome = Outcome::ok(proposal.call.spec(), &value);
                    (outcome, result.fuel_used, Some(value))
                }
                (None, error) => {
                    let (kind, message) =
                        error.map_or((String::new(), String::new()), |e| (e.kind, e.message));
                    let outcome = Outcome::tool_error(&call.agent, &call.tool, kind, &message);
                    (outcome, result.fuel_used, None)
                }
            },
            Err(refused) => (Outcome::refused(&refused.error), refused.fuel_used, None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::nearest_rank;

    #[test]
    fn percentiles_by_nearest_rank() {
        let values: Vec<u64> = (1..=20).collect();
        // Rank ceil(0.5 · 20) = 10 → 10; rank ceil(0.95 · 20) = 19 → 19.
        assert_eq!(nearest_rank(&values, 50), 10);
        assert_eq!(nearest_rank(&values, 95), 19);
        assert_eq!(nearest_rank(&[7], 95), 7);
        assert_eq!(nearest_rank(&[], 50), 0);
    }
}
