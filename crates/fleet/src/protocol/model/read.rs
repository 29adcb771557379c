//! What a host of the model reads from the modelled store: the journal's whole history (what
//! the properties compare with) and what a host taking the person over rebuilds from the kept
//! records and the head's checkpoint, as the fleet does. It must not step the model (`model`
//! does) nor decide what a record means (the protocol's `replay_from` does).

use super::{Fleet, State};
use crate::protocol::{Epoch, Record, Seq, replay, replay_from};

/// What a host taking the person over rebuilds ([`Fleet::taken_over`]).
pub(super) struct TakenOver {
    pub(super) applied: Vec<u8>,
    pub(super) decided: Vec<u64>,
    pub(super) base: u64,
    pub(super) newest: Epoch,
    /// From a checkpoint.
    pub(super) restored: bool,
}

impl Fleet {
    /// A host's state rebuilt from the journal's whole history, or `None` when the journal
    /// does not replay (two decisions under one number: written without the fence).
    pub(super) fn replay(state: &State) -> Option<(Vec<u8>, Vec<u64>, Epoch)> {
        let records = state
            .journal
            .iter()
            .enumerate()
            .map(|(index, (_, record))| (index as Seq + 1, record.clone()));
        let replayed = replay(records).ok()?;
        let applied = replayed.signals.into_iter().map(|(_, s)| s).collect();
        Some((applied, replayed.decisions, replayed.epoch))
    }

    /// [`Fleet::replay`], or nothing when the journal does not replay (a property says so).
    pub(super) fn replayed(state: &State) -> (Vec<u8>, Vec<u64>, Epoch) {
        Self::replay(state).unwrap_or_default()
    }

    /// What a host taking the person over rebuilds, as `store::Fleet::read_journal` and
    /// `assistant::session_dir::restore` do: the journal's kept records, whole when they start
    /// with the first takeover, else from the checkpoint's head, then the checkpoint if it
    /// fits (its signals and decisions, then the journal's after it): the signals applied,
    /// the decisions made, the first one held as journaled, and the newest epoch. `None` when
    /// it cannot be rebuilt (the journal purged past what the head holds).
    pub(super) fn taken_over(state: &State) -> Option<TakenOver> {
        let kept = state
            .journal
            .iter()
            .enumerate()
            .map(|(index, (_, record))| (index as Seq + 1, record.clone()))
            .filter(|(seq, _)| *seq >= state.purged_below);
        let records: Vec<_> = kept.collect();
        let whole = records
            .first()
            .is_none_or(|(_, r)| matches!(r, Record::Takeover { .. }));
        let head = state.checkpoint.as_ref();
        let from = match whole {
            true => None,
            false => Some(head?.covered()),
        };
        let replayed = replay_from(from, records).ok()?;
        let (base, newest) = (replayed.decisions_base(), replayed.epoch);
        let last = state.journal.len() as Seq;
        let mut applied: Vec<u8> = replayed.signals.into_iter().map(|(_, s)| s).collect();
        let mut decided = replayed.decisions;
        let mut restored = false;
        match head {
            Some(snapshot) if snapshot.fence <= last && snapshot.epoch <= newest => {
                if from.is_some_and(|from| snapshot.fence < from.fence) {
                    return None;
                }
                // The journal's decisions after the checkpoint's, on top of the checkpoint's.
                let made = snapshot.decided.len() as u64;
                let after =
                    decided.split_off((made.saturating_sub(base) as usize).min(decided.len()));
                decided = snapshot.decided.iter().copied().chain(after).collect();
                let after = applied.iter().filter(|s| **s >= snapshot.inbox_next);
                applied = snapshot.applied.iter().chain(after).copied().collect();
                restored = true;
            }
            // A journal read from a head must resume from a checkpoint.
            _ if from.is_some() => return None,
            _ => {}
        }
        Some(TakenOver {
            applied,
            decided,
            base,
            newest,
            restored,
        })
    }
}
