//! The deterministic simulation's seam into the host: what a simulation (seed 002's DST)
//! observes of every call dispatched (root or nested; an agent's tick is not a call and is
//! neither observed nor faulted here, though the calls it makes are) and every refusal, and
//! the faults it injects where a call is about to run.
//!
//! It owns [`Simulation`] (given to a host through [`crate::HostConfig::simulation`]; none in
//! normal use) and the faults a call can be given instead of its normal run: out of fuel
//! partway, a trap, refused, its agent not found, the host busy. An injected fault takes the
//! same path as the real one (a real fuel trap, a real epoch trap, the refusals' own errors,
//! quarantined like any other), so what the simulation checks is the host's behaviour, not a
//! stand-in. The storage faults are the journal's ([`crate::journal::StorageFaults`]). It must
//! not decide anything itself: with no simulation, the host behaves exactly as before.

/// A call about to run (root or nested), as the simulation sees it.
#[derive(Debug, Clone, Copy)]
pub struct CallPoint<'a> {
    /// Its call_id.
    pub call_id: &'a str,
    /// The agent it runs.
    pub agent: &'a str,
    /// The tool.
    pub tool: &'a str,
    /// The agents of the calls above it, root first; empty for a root call.
    pub chain_above: &'a [&'static str],
    /// The fuel it may burn.
    pub fuel: u64,
}

/// What happens to a call instead of its normal run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallFault {
    /// It runs with only this much fuel, and runs out partway (a real fuel trap).
    OutOfFuel {
        /// The fuel it gets (less than its budget).
        fuel: u64,
    },
    /// It traps at its first interrupt check (a real epoch trap of the running instance).
    Trap,
    /// Refused as a call the catalogue does not allow.
    Refused,
    /// Its agent is not found (not served by this host).
    NotFound,
    /// The host is at its in-flight bound.
    Busy,
}

/// A deterministic simulation driving a host.
pub trait Simulation: std::fmt::Debug + Send + Sync {
    /// A call passed its checks and is about to run: what happens instead, if anything.
    fn call_starts(&self, call: CallPoint<'_>) -> Option<CallFault>;
    /// A call that started has ended with `outcome` (`ok`, a tool error's kind or a refusal's).
    fn call_ends(&self, call: CallPoint<'_>, outcome: &str);
    /// A refusal was quarantined (`written`: its record was written and is durable) or could
    /// not be, or its record was already there (an interrupted run's, produced again: not
    /// written twice, so not `written`).
    fn refused(&self, call_id: Option<&str>, kind: &str, written: bool);
}
