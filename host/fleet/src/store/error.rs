//! Why a step on a fleet's store failed ([`FleetError`]), and the functions that make a
//! step's error. It must not decide what an error means for a person (the hold does).

use aura_contract::limits::{FLEET_LEASE_MS, FLEET_TAKEOVER_ATTEMPTS_MAX};

use crate::protocol::{ReplayError, Seq};

/// Why a step on a fleet's store failed. A refusal the protocol expects (a key that exists, a
/// sequence that moved) is not an error: it is the protocol's answer.
#[derive(Debug, thiserror::Error)]
pub enum FleetError {
    /// The store refused or failed a step.
    #[error("the fleet's store could not {doing}: {detail}")]
    Store {
        /// The step.
        doing: &'static str,
        /// The store's or its client's reason.
        detail: String,
    },
    /// The store did not answer within the step's bound (`FLEET_STEP_TIMEOUT_MS`).
    #[error("the fleet's store did not {doing} within {ms} ms")]
    TimedOut {
        /// The step.
        doing: &'static str,
        /// How long it was given.
        ms: u64,
    },
    /// A record in a person's journal that the fleet did not write.
    #[error("record {seq} of {person}'s journal is not a fleet record: {detail}")]
    Record {
        /// Whose journal.
        person: String,
        /// Its sequence.
        seq: Seq,
        /// What is wrong with it.
        detail: String,
    },
    /// A record, enrolment, signal or checkpoint over its bound ([`FLEET_RECORD_BYTES_MAX`](aura_contract::limits::FLEET_RECORD_BYTES_MAX)
    /// for a journal record).
    #[error("a {what} for {person} is {bytes} bytes, more than the {max} one may have")]
    TooLarge {
        /// What it is.
        what: &'static str,
        /// Whose.
        person: String,
        /// Its size.
        bytes: usize,
        /// Its bound.
        max: usize,
    },
    /// A person's enrolment does not read as one.
    #[error("{person}'s enrolment is not one: {detail}")]
    Enrolment {
        /// Whose.
        person: String,
        /// Why.
        detail: String,
    },
    /// The journal does not replay.
    #[error(transparent)]
    Replay(#[from] ReplayError),
    /// The lease bucket was made with another lease than this host's: hosts of one fleet
    /// must renew at the pace the bucket expires at.
    #[error(
        "the lease bucket lets a lease last {found_ms} ms, but this host's lease is {FLEET_LEASE_MS} ms: every host of a fleet runs with the same lease"
    )]
    LeaseMismatch {
        /// The bucket's max age.
        found_ms: u128,
    },
    /// A takeover was refused [`FLEET_TAKEOVER_ATTEMPTS_MAX`] times in a row.
    #[error(
        "{person}'s journal kept moving under {FLEET_TAKEOVER_ATTEMPTS_MAX} takeovers in a row"
    )]
    Contended {
        /// Whose.
        person: String,
    },
}

/// A function making a step's error from `doing` and what went wrong.
pub(crate) fn failed(doing: &'static str) -> impl FnOnce(&dyn std::fmt::Display) -> FleetError {
    move |error| FleetError::Store {
        doing,
        detail: error.to_string(),
    }
}

/// A function that names the fleet's step `doing` in a store step's error (the store names
/// its own, generic one).
pub(crate) fn during(doing: &'static str) -> impl FnOnce(FleetError) -> FleetError {
    move |error| match error {
        FleetError::Store { detail, .. } => FleetError::Store { doing, detail },
        FleetError::TimedOut { ms, .. } => FleetError::TimedOut { doing, ms },
        other => other,
    }
}
