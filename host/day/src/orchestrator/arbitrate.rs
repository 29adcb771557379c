//! Arbitration: one tick's proposals turned into the tick's decisions.
//!
//! It owns the rules the orchestrator's doc lists, in order: repeats suppressed, questions
//! bound to their item, novelty (a proposal with nothing new does not run), quiet hours, minor
//! news, speech only for urgent news, the interruption budget, then one interruption per
//! surface per tick, counting what this tick already showed there (the most important news
//! wins, then the agent's priority; the others are recorded as not chosen). It must not run
//! anything nor record anything.

use std::collections::{HashMap, HashSet};

use time::OffsetDateTime;

use aura_contract::envelope::Surface;
use aura_contract::limits::{BUDGET_EXEMPT_IMPORTANCE_MIN, INTERRUPT_IMPORTANCE_MIN};
use aura_contract::trace::{Decision, LostReason, Moved, NotChosen, TracedAnswer};
use aura_host::Proposal;

use super::memory::{Fresh, Memory};
use super::questions::bind_question;
use super::summary::RunSummary;
use crate::scenario::World;

/// One candidate decision of a tick.
pub(super) struct Choice {
    pub(super) proposal: Proposal,
    pub(super) decision: Decision,
    pub(super) requested: Surface,
    pub(super) surface: Surface,
    pub(super) beaten: Vec<NotChosen>,
    /// For a question: the item it is about.
    pub(super) about: Option<String>,
    /// For a confirmed or declined question: the answer.
    pub(super) answer: Option<TracedAnswer>,
    /// What it tells the user that the user had not been told (`None`: its tool names no
    /// news; questions and answers).
    pub(super) fresh: Option<Fresh>,
    /// Why it is not on the surface its agent asked for, when it is not.
    pub(super) moved: Option<Moved>,
}

impl Choice {
    /// Arbitration's order on a surface: the most important news first, then the agent's
    /// priority. A question's importance is its priority: it names no news, but waiting for
    /// it is what delays the user's decision.
    fn rank(&self) -> (u8, u8) {
        let importance = match self.decision {
            Decision::Asked => self.proposal.priority,
            _ => self.fresh.as_ref().map_or(0, |f| f.importance),
        };
        (importance, self.proposal.priority)
    }
}

/// Where the tick stands when its proposals are arbitrated.
#[derive(Debug, Clone, Copy)]
pub(super) struct Moment<'a> {
    /// Whether it is in quiet hours.
    pub(super) quiet: bool,
    /// Its time, in the person's offset.
    pub(super) now: OffsetDateTime,
    /// The surfaces already used this tick (the outcome of an answer) or kept (a digest).
    pub(super) taken: &'a [Surface],
}

/// The surface a proposal asks for (PHONE_CARD when it names none).
pub(super) fn requested_surface(proposal: &Proposal) -> Surface {
    proposal
        .call
        .call()
        .expected_surface
        .unwrap_or(Surface::PhoneCard)
}

/// The content key of a proposal: the same agent, tool, surface and signals is the same news.
pub(super) fn content_key(proposal: &Proposal) -> String {
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
pub(super) fn arbitrate(
    proposals: Vec<Proposal>,
    moment: Moment<'_>,
    world: &World,
    memory: &mut Memory,
    summary: &mut RunSummary,
) -> Vec<Choice> {
    let mut choices: Vec<Choice> = Vec::new();
    // Index into `choices` of the current holder of each interrupting surface.
    let mut holder: HashMap<Surface, usize> = HashMap::new();
    let mut seen_this_tick: HashSet<String> = HashSet::new();
    for proposal in proposals {
        let Some(choice) = place(
            proposal,
            moment,
            world,
            memory,
            summary,
            &mut seen_this_tick,
        ) else {
            continue;
        };
        if choice.surface == Surface::Silent {
            choices.push(choice);
            continue;
        }
        match holder.get(&choice.surface).copied() {
            None => {
                holder.insert(choice.surface, choices.len());
                choices.push(choice);
            }
            Some(at) if choice.rank() > choices[at].rank() => {
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

/// One proposal's decision and the surface it may use before the tick's competition for
/// surfaces: `None` when it does not run at all (a repeat, or nothing new).
fn place(
    proposal: Proposal,
    moment: Moment<'_>,
    world: &World,
    memory: &mut Memory,
    summary: &mut RunSummary,
    seen_this_tick: &mut HashSet<String>,
) -> Option<Choice> {
    let Moment { quiet, now, taken } = moment;
    let call_id = proposal.call.call().call_id.clone();
    let asks = proposal.call.needs_confirmation();
    let about = match asks {
        true => bind_question(&proposal, world),
        false => None,
    };
    if is_repeat(&proposal, about.as_deref(), memory, seen_this_tick) {
        summary.repeats += 1;
        return None;
    }
    // Novelty, not identity: a call whose news the user has all been told (a count that
    // moved, the same top item again) does not run at all.
    let fresh = match asks {
        true => None,
        false => memory.fresh_news(&proposal, now),
    };
    if fresh.as_ref().is_some_and(|f| f.subjects.is_empty()) {
        summary.stale += 1;
        return None;
    }
    let requested = requested_surface(&proposal);
    let (decision, surface) = match asks {
        true if quiet => {
            if memory.held.contains_key(&call_id) {
                summary.repeats += 1;
                return None;
            }
            memory.held.insert(call_id, now);
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
    let moved = (surface != requested).then_some(Moved::QuietHours);
    let (surface, moved) =
        interruption_rules(decision, surface, moved, fresh.as_ref(), now, memory);
    if moved == Some(Moved::Budget) && surface == Surface::Silent {
        summary.held_back += 1;
    }
    // One interruption per surface per tick, whatever showed there first (a digest, the
    // outcome of an answer): speech may still tap the watch; a question waits for a later
    // tick; other news is recorded and waits for the first tick the surface is free.
    let (surface, moved) = match surface {
        Surface::Silent => (surface, moved),
        free if !taken.contains(&free) => (free, moved),
        Surface::EarbudTts
            if decision == Decision::Executed
                && !taken.contains(&Surface::Watch)
                && memory.within_budget(Surface::Watch, now) =>
        {
            (Surface::Watch, Some(Moved::Busy))
        }
        _ if decision == Decision::Asked => {
            summary.not_chosen += 1;
            return None;
        }
        _ => {
            summary.not_chosen += 1;
            (Surface::Silent, Some(Moved::Busy))
        }
    };
    Some(Choice {
        proposal,
        decision,
        requested,
        surface,
        beaten: Vec::new(),
        about,
        answer: None,
        fresh,
        moved,
    })
}

/// Whether `proposal` repeats something already shown, asked or answered, or proposed earlier
/// this tick (same call_id, or same agent, tool, surface and signals), or asks about an item
/// a question already holds. One question per item: a second one about an item already asked,
/// or asked this tick, is a repeat (the first one asked holds the item until it is answered).
fn is_repeat(
    proposal: &Proposal,
    about: Option<&str>,
    memory: &Memory,
    seen_this_tick: &mut HashSet<String>,
) -> bool {
    let call_id = &proposal.call.call().call_id;
    let item_taken = about.is_some_and(|item| {
        memory
            .pending
            .iter()
            .any(|q| q.about.as_deref() == Some(item))
            || !seen_this_tick.insert(item.to_owned())
    });
    memory.shown.contains_key(call_id)
        || memory.shown.contains_key(&content_key(proposal))
        || memory.answered.contains_key(call_id)
        || memory
            .pending
            .iter()
            .any(|q| &q.proposal.call.call().call_id == call_id)
        || !seen_this_tick.insert(call_id.clone())
        || item_taken
}

/// The surface a decision may interrupt on at `now`, after the rules that keep news off a
/// surface, in order, and why it moved (the last rule that moved it).
fn interruption_rules(
    decision: Decision,
    surface: Surface,
    mut moved: Option<Moved>,
    fresh: Option<&Fresh>,
    now: OffsetDateTime,
    memory: &Memory,
) -> (Surface, Option<Moved>) {
    // Minor news never interrupts; the digest tells it.
    let surface = match surface {
        Surface::Silent => Surface::Silent,
        _ if fresh.is_some_and(|f| f.importance < INTERRUPT_IMPORTANCE_MIN) => {
            moved = Some(Moved::Minor);
            Surface::Silent
        }
        other => other,
    };
    // The earbuds speak only what is urgent and new; anything else may tap the watch.
    let surface = match surface {
        Surface::EarbudTts if !fresh.is_some_and(|f| f.urgent) => {
            moved = Some(Moved::NotUrgent);
            Surface::Watch
        }
        other => other,
    };
    // The budget: a surface that used up its interruptions for the past hour shows nothing
    // more; the news stays untold, so it is still news for the digest. Speech over its budget
    // may still tap the watch.
    let surface = match surface {
        Surface::EarbudTts
            if decision == Decision::Executed
                && !memory.within_budget(Surface::EarbudTts, now)
                && memory.within_budget(Surface::Watch, now) =>
        {
            moved = Some(Moved::Budget);
            Surface::Watch
        }
        other => other,
    };
    let surface = match surface {
        Surface::Silent => Surface::Silent,
        _ if decision == Decision::Executed
            && !memory.within_budget(surface, now)
            && fresh.is_none_or(|f| f.importance < BUDGET_EXEMPT_IMPORTANCE_MIN) =>
        {
            moved = Some(Moved::Budget);
            Surface::Silent
        }
        other => other,
    };
    (surface, moved)
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
