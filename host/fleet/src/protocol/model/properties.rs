//! What must hold of the fleet's protocol in every state the model reaches (`always`), and
//! what the search must reach at least once (`sometimes`: the races and resumes the
//! protocol is for). It must not step the model (`model` does).

use stateright::Property;

use aura_contract::limits::AGENT_CALL_DEPTH_MAX;

use super::{Fleet, State};
use crate::protocol::Record;

/// The model's properties.
pub(super) fn properties() -> Vec<Property<Fleet>> {
    let mut properties = vec![
        Property::always("the journal replays", |_, s: &State| {
            Fleet::replay(s).is_some()
        }),
        Property::always(
            "one writer at a time (no stale record after a takeover)",
            |_, s: &State| {
                let mut newest = 0;
                s.journal.iter().all(|(epoch, record)| {
                    if let Record::Takeover { epoch: taken, .. } = record {
                        newest = newest.max(*taken);
                    }
                    *epoch >= newest
                })
            },
        ),
        Property::always(
            "one writer at a time in the life (no stale signal after an open)",
            |_, s: &State| {
                let mut newest = 0;
                s.life.iter().all(|(open, signal)| {
                    if signal.is_none() {
                        newest = newest.max(*open);
                    }
                    *open >= newest
                })
            },
        ),
        Property::always(
            "the life holds each signal once, in the inbox's order",
            |_, s: &State| {
                Fleet::life_signals(s)
                    .iter()
                    .enumerate()
                    .all(|(index, signal)| usize::from(*signal) == index)
            },
        ),
        Property::always(
            "the newest opener applied every signal the life holds",
            |_, s: &State| {
                let signals = Fleet::life_signals(s);
                s.hosts.iter().filter_map(|h| h.run.as_ref()).all(|run| {
                    let newest = run.life.is_some_and(|(open, _)| open == s.opens);
                    !newest || run.applied == signals
                })
            },
        ),
        Property::always(
            "every decision saw only signals the life holds",
            |_, s: &State| {
                let held = Fleet::life_signals(s).len() as u64;
                Fleet::replayed(s).iter().all(|saw| *saw <= held)
            },
        ),
        Property::always(
            "no decision delivered twice or out of order",
            |_, s: &State| {
                s.delivered
                    .iter()
                    .enumerate()
                    .all(|(index, (number, _))| *number == index as u64)
            },
        ),
        Property::always(
            "every decision delivered is the journal's",
            |_, s: &State| {
                let decided = Fleet::replayed(s);
                s.delivered
                    .iter()
                    .all(|(number, saw)| decided.get(*number as usize) == Some(saw))
            },
        ),
        Property::always(
            "at most one active host (when the lease's timing holds)",
            |m: &Fleet, s: &State| {
                m.pauses || s.hosts.iter().filter(|h| h.run.is_some()).count() <= 1
            },
        ),
    ];
    properties.extend(calls());
    properties.extend(compaction());
    properties.extend(reached());
    properties
}

/// Seed 002's bounds on agent-to-agent calls, on the host's own check.
fn calls() -> Vec<Property<Fleet>> {
    vec![
        Property::always("no agent twice in a call stack", |_, s: &State| {
            s.hosts.iter().filter_map(|h| h.run.as_ref()).all(|run| {
                let mut seen = run.stack.clone();
                seen.sort_unstable();
                seen.windows(2).all(|w| w[0] != w[1])
            })
        }),
        Property::always("call depth bounded", |_, s: &State| {
            s.hosts
                .iter()
                .filter_map(|h| h.run.as_ref())
                .all(|run| run.stack.len() <= AGENT_CALL_DEPTH_MAX)
        }),
        Property::always("pending calls bounded", |m: &Fleet, s: &State| {
            let pending: usize = s
                .hosts
                .iter()
                .filter_map(|h| h.run.as_ref())
                .map(|run| run.stack.len())
                .sum();
            pending <= m.agents.len() * AGENT_CALL_DEPTH_MAX
        }),
    ]
}

/// The journal's compaction: read from its head, losing no decision.
fn compaction() -> Vec<Property<Fleet>> {
    vec![
        Property::always(
            "a purged journal is rebuilt from its head",
            |_, s: &State| s.purged_below == 0 || Fleet::taken_over(s).is_some(),
        ),
        Property::always(
            "no decision purged before it was delivered",
            |_, s: &State| !s.lost_decision,
        ),
        Property::sometimes(
            "a holder started from a purged journal",
            |m: &Fleet, s: &State| {
                !m.compaction.purges()
                    || s.purged_below > 1
                        && s.hosts
                            .iter()
                            .filter_map(|h| h.run.as_ref())
                            .any(|run| run.base > 0 && run.holding.taken_over)
            },
        ),
    ]
}

/// What the search must reach: the races the fences are for, a resume, a whole run.
fn reached() -> Vec<Property<Fleet>> {
    vec![
        Property::sometimes(
            "a stale holder's append refused by the fence",
            |_, s: &State| s.fenced,
        ),
        Property::sometimes(
            "a takeover refused, the journal read again",
            |_, s: &State| s.reread,
        ),
        Property::sometimes(
            "a holder opened a life another had taken signals into",
            |m: &Fleet, s: &State| m.signals == 0 || s.resumed,
        ),
        Property::sometimes(
            "a takeover, then every signal taken and every decision delivered",
            |m: &Fleet, s: &State| {
                let takeovers = s
                    .journal
                    .iter()
                    .filter(|(_, r)| matches!(r, Record::Takeover { .. }))
                    .count();
                let decided = Fleet::replayed(s);
                takeovers >= 2
                    && Fleet::life_signals(s).len() == usize::from(m.signals)
                    && !decided.is_empty()
                    && s.delivered.len() == decided.len()
            },
        ),
    ]
}
