//! What a run counts, for the person who ran it: decisions per surface, questions, proposals
//! and their fates, fuel, and the wall time of its ticks.
//!
//! It owns [`RunSummary`] and its arithmetic. It must not decide anything.

use serde::{Deserialize, Serialize};

use aura_contract::envelope::Surface;

/// Counts for the end of a run.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunSummary {
    /// The run's id (every trace carries it).
    pub run: String,
    /// The tick this process went on from, when it resumed an interrupted run.
    pub resumed_at_tick: Option<usize>,
    /// Where the data dir's earlier run was set aside (`--fresh`, or the same run finished).
    pub set_aside: Option<String>,
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
    /// Answers that matched no pending question (each traced; nothing ran).
    pub answers_unmatched: usize,
    /// Answers that matched more than one pending question (each traced; nothing ran).
    pub answers_ambiguous: usize,
    /// "Later" to a pending question: it stays pending (no trace).
    #[serde(default)]
    pub answers_later: usize,
    /// Questions no answer came to in time (each traced, none run).
    #[serde(default)]
    pub expired: usize,
    /// Proposals suppressed as repeats of something already shown or asked.
    pub repeats: usize,
    /// Proposals not run because the user had been told all their news already.
    pub stale: usize,
    /// Proposals kept off their surface by the interruption budget (their news stays untold).
    pub held_back: usize,
    /// Digests of what was held back (at the end of quiet hours and of the run).
    pub digests: usize,
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
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
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
    pub(super) fn add(&mut self, surface: Surface) {
        match surface {
            Surface::Watch => self.WATCH += 1,
            Surface::PhoneCard => self.PHONE_CARD += 1,
            Surface::EarbudTts => self.EARBUD_TTS += 1,
            Surface::Silent => self.SILENT += 1,
        }
    }
}

/// The `percent`th percentile of sorted `values` by nearest rank; 0 when empty.
pub(super) fn nearest_rank(sorted: &[u64], percent: usize) -> u64 {
    match sorted.len() {
        0 => 0,
        n => sorted[(percent * n).div_ceil(100).clamp(1, n) - 1],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
