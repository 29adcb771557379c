//! What must hold of the fleet's protocol in every state the model reaches (`always`), and
//! what the search must reach at least once (`sometimes`: the races and restores the
//! protocol is for). It must not step the model (`model` does).

use stateright::Property;

use aura_contract::limits::AGENT_CALL_DEPTH_MAX;

use super::{Checkpoints, Fleet, State};
use crate::protocol::{Record, Seq};

/// The model's properties.
pub(super) fn properties() -> Vec<Property<Fleet>> {
    vec![
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
        Property::always("no acknowledged signal lost", |_, s: &State| {
            let journaled: Vec<u8> = s
                .journal
                .iter()
                .filter_map(|(_, r)| match r {
                    Record::Signal { signal, .. } => Some(*signal),
                    _ => None,
                })
                .collect();
            s.acked.iter().all(|a| journaled.contains(a))
        }),
        Property::always(
            "the current holder applied every journaled signal once",
            |_, s: &State| {
                let (applied, _, _) = Fleet::replayed(s);
                s.hosts.iter().filter_map(|h| h.run.as_ref()).all(|run| {
                    let current =
                        run.holding.taken_over && run.holding.fence == s.journal.len() as Seq;
                    !current || run.applied == applied
                })
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
                let (_, decided, _) = Fleet::replayed(s);
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
                !m.checkpoints.purges()
                    || s.purged_below > 1
                        && s.hosts
                            .iter()
                            .filter_map(|h| h.run.as_ref())
                            .any(|run| run.base > 0 && run.holding.taken_over)
            },
        ),
        Property::sometimes(
            "a stale holder's append refused by the fence",
            |_, s: &State| s.fenced,
        ),
        Property::sometimes(
            "a takeover refused, the journal read again",
            |_, s: &State| s.reread,
        ),
        Property::sometimes(
            "a holder started from a checkpoint",
            |m: &Fleet, s: &State| m.checkpoints == Checkpoints::Off || s.restored,
        ),
        Property::sometimes(
            "a takeover, then every signal acknowledged and every decision delivered",
            |m: &Fleet, s: &State| {
                let takeovers = s
                    .journal
                    .iter()
                    .filter(|(_, r)| matches!(r, Record::Takeover { .. }))
                    .count();
                let (_, decided, _) = Fleet::replayed(s);
                takeovers >= 2
                    && s.acked.len() == usize::from(m.signals)
                    && !decided.is_empty()
                    && s.delivered.len() == decided.len()
            },
        ),
    ]
}
