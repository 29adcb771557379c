//! A run's durability between its ticks: the checkpoint that seals each tick, the records the
//! first tick of a resumed run must produce again, and going on from the checkpoint an
//! interrupted run left.
//!
//! It owns when a tick counts as whole ([`Day::seal`]) and what a checkpoint holds of the run;
//! it must not decide anything (the tick does) nor write the file (the checkpoint module does).

use super::{Day, RunError, RunState};
use crate::checkpoint::{self, Checkpoint, CheckpointError, DayInput};

impl Day<'_> {
    /// Goes on from the checkpoint of the interrupted run.
    pub(super) fn restore(&mut self, found: Checkpoint) -> Result<(), RunError> {
        let fits = match self.ticks {
            Some(ticks) => found.ticks == ticks && found.next_tick <= ticks,
            None => found.ticks == found.next_tick,
        };
        if !fits {
            let reason = match self.ticks {
                Some(ticks) => format!(
                    "tick {} of {}, and the scenario has {ticks}",
                    found.next_tick, found.ticks
                ),
                None => format!(
                    "tick {} of {}, where a live session counts the ticks it ran",
                    found.next_tick, found.ticks
                ),
            };
            return Err(CheckpointError::Unreadable { reason }.into());
        }
        let (world, memory, was_quiet, summary) =
            RunState::restore(found.state, self.host, found.next_tick)?;
        let set_aside = self.summary.set_aside.take();
        (self.world, self.memory, self.was_quiet, self.summary) =
            (world, memory, was_quiet, summary);
        self.summary.set_aside = set_aside;
        self.first_tick = found.next_tick;
        self.next_tick = found.next_tick;
        self.last_tick = match found.day {
            DayInput::Live { last_tick } => last_tick,
            // A scenario's ticks are known: the last one run is the one before the next.
            DayInput::Scenario(_) => found
                .next_tick
                .checked_sub(1)
                .and_then(|last| self.scenario.ticks().get(last).copied()),
        };
        self.ended = found.finished;
        self.quarantined_earlier = found.quarantined;
        Ok(())
    }

    /// Checkpoints the run as it stands before its next tick.
    pub(super) fn checkpoint(&self) -> Result<(), CheckpointError> {
        let journal = self.host.journal();
        let (traces, quarantine) = journal.marks();
        let ticks = self.ticks.unwrap_or(self.next_tick);
        let checkpoint = Checkpoint {
            format: checkpoint::CHECKPOINT_FORMAT.to_owned(),
            run: self.run_id.clone(),
            identity: self.identity.clone(),
            day: match &self.input {
                DayInput::Scenario(digest) => DayInput::Scenario(digest.clone()),
                DayInput::Live { .. } => DayInput::Live {
                    last_tick: self.last_tick,
                },
            },
            ticks,
            next_tick: self.next_tick,
            finished: self.ended || self.ticks == Some(self.next_tick),
            traces,
            quarantine,
            quarantined: self.quarantined(),
            state: RunState::save(&self.world, &self.memory, self.was_quiet, &self.summary),
        };
        checkpoint::save(journal, &checkpoint)
    }

    /// Before tick `index` is checkpointed: a record that could not be written (a refusal's
    /// quarantine record) stops the run here, before the checkpoint claims the tick whole; and
    /// the first tick of a resumed run must have produced again every trace its interrupted
    /// run had written.
    pub(super) fn seal(&self, index: usize) -> Result<(), RunError> {
        let journal = self.host.journal();
        if let Some(failure) = journal.failure() {
            return Err(RunError::Journal(failure));
        }
        if index == self.first_tick && self.resumed {
            let (traces, quarantine) = journal.unmatched();
            if traces > 0 {
                return Err(RunError::Diverged {
                    tick: index,
                    traces,
                });
            }
            if quarantine > 0 {
                tracing::warn!(
                    tick = index,
                    records = quarantine,
                    "quarantine records of the interrupted tick were not produced again; kept"
                );
            }
            journal.expect_nothing_more();
        }
        Ok(())
    }
}
