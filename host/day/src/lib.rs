//! aura's day: the orchestrator that drives the agents through a scenario, tick by tick, and
//! decides what the person sees, hears and is asked, and when.
//!
//! It owns the scenario ([`scenario`]: a day of signals and the person's answers, and the world
//! they build), the orchestrator ([`orchestrator`]: ticks, arbitration, novelty, the
//! interruption budget, digests, questions, and a reasoning trace for every decision), a run's
//! checkpoint and resuming it ([`checkpoint`]), its own logs ([`logs`]), the day lived as it happens ([`live`]: the same
//! orchestrator on the machine's clock, fed by fronts), the narrator's pass over a run's novel
//! cases ([`narration`]), what a life stores and where ([`store`]) and the picture of a run ([`report`]). It must
//! not check or run a call itself: it hands calls to the host's one seam
//! ([`aura_host::Host::dispatch`]), and it never reads the machine's clock for a decision.

#![warn(missing_docs)]
#![recursion_limit = "256"]

pub mod checkpoint;
pub mod live;
pub mod logs;
pub mod narration;
pub mod orchestrator;
pub mod report;
pub mod scenario;
pub mod store;
