//! What a host of the model reads from the modelled store: the journal's whole history (what
//! the properties compare with) and what a host taking the person over rebuilds from the kept
//! records and the head, as the fleet does. It must not step the model (`model` does) nor
//! decide what a record means (the protocol's `replay_from` does).

use super::{Fleet, State};
use crate::protocol::{Epoch, Record, Seq, replay, replay_from};

/// What a host taking the person over rebuilds ([`Fleet::taken_over`]).
pub(super) struct TakenOver {
    /// The decisions journaled from `base` on, each with what it saw.
    pub(super) decided: Vec<u64>,
    pub(super) base: u64,
    pub(super) newest: Epoch,
}

impl Fleet {
    /// The journal's whole history replayed (its decisions, the newest epoch), or `None` when
    /// it does not replay (two decisions under one number: written without the fence).
    pub(super) fn replay(state: &State) -> Option<(Vec<u64>, Epoch)> {
        let records = state
            .journal
            .iter()
            .enumerate()
            .map(|(index, (_, record))| (index as Seq + 1, record.clone()));
        let replayed = replay(records).ok()?;
        Some((replayed.decisions, replayed.epoch))
    }

    /// [`Fleet::replay`]'s decisions, or none when the journal does not replay (a property
    /// says so).
    pub(super) fn replayed(state: &State) -> Vec<u64> {
        Self::replay(state)
            .map(|(decided, _)| decided)
            .unwrap_or_default()
    }

    /// What a host taking the person over rebuilds, as `store::Fleet::read_journal` does: the
    /// journal's kept records, whole when they start with the first takeover, else from the
    /// head: the decisions from the first one held as journaled, and the newest epoch. `None`
    /// when it cannot be rebuilt (the journal purged past what the head covers).
    pub(super) fn taken_over(state: &State) -> Option<TakenOver> {
        let records: Vec<_> = state
            .journal
            .iter()
            .enumerate()
            .map(|(index, (_, record))| (index as Seq + 1, record.clone()))
            .filter(|(seq, _)| *seq >= state.purged_below)
            .collect();
        let whole = records
            .first()
            .is_none_or(|(_, r)| matches!(r, Record::Takeover { .. }));
        let from = match whole {
            true => None,
            false => Some(state.head?),
        };
        let replayed = replay_from(from, records).ok()?;
        Some(TakenOver {
            base: replayed.decisions_base(),
            newest: replayed.epoch,
            decided: replayed.decisions,
        })
    }
}
