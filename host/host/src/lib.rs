//! aura's host: catalogue-checked plugins behind the crossing, and the one seam every front
//! uses.
//!
//! A front (the CLI, the orchestrator, the MCP server, a NATS worker) opens a [`Host`] and
//! hands it calls through [`Host::dispatch`], each a [`CallRequest`] (or just the call): the
//! in-flight bound, the crossing in (from `aura-contract`), the sandbox (`aura-sandbox`) or
//! the remote that serves the agent, the crossing out; every refusal quarantined in the data
//! dir's journal before it is returned. `impl Host` is all in `host`; the modules behind it
//! are private. Read it in this order: `host` (opening one: [`HostConfig`], [`Host::open`],
//! and every method), `admission` (how a plugin is admitted, and why not: [`LoadError`]),
//! `request` (what a front hands the seam), `dispatch` (how a call runs),
//! `tick` (how an agent's proposals are checked), `agent_calls` (how agents call agents),
//! [`remote`], `client` and `worker` (a call on another host, both sides), `narrator` (the
//! model that writes novel cases' rationales, [`Narrator`]), [`journal`] (the quarantine log
//! and traces), [`events`], [`telemetry`], [`simulation`] and [`calibrate`].
//!
//! It must not check anything itself (the contract's crossing does), touch wasmtime (the
//! sandbox does), decide what a person is shown (the day does) nor know a transport (the
//! fronts do).
//!
//! ```no_run
//! # async fn front() -> Result<(), Box<dyn std::error::Error>> {
//! let host = aura_host::Host::open(&aura_host::HostConfig::new("plugins", "aura-data")).await?;
//! let args = serde_json::json!({"readings": {"hrv_ms": 42},
//!     "baselines": {"hrv_ms": 60, "resting_hr_bpm": 58, "sleep_minutes": 450}});
//! let call = aura_host::ToolCall::new("wellness", "stress_score", args, None); // call_id, ts: new
//! match host.dispatch(&call).await {
//!     Ok(result) => println!("{}", result.to_canonical()), // ok, or the tool's own error
//!     Err(refused) => eprintln!("refused: {}", refused.error), // typed; in the quarantine log
//! }
//! # Ok(())
//! # }
//! ```
#![warn(missing_docs)]
// The orchestrator awaits a call through the front, the trace scope, the crossing and the
// sandbox: the compiler needs more than its default depth of 128 to lay that future out.
#![recursion_limit = "256"]

mod admission;
mod agent_calls;
pub mod calibrate;
mod client;
mod config;
pub mod confirmation;
#[cfg(feature = "conformance")]
pub mod conformance;
mod dispatch;
pub mod events;
mod host;
pub mod journal;
mod measure;
mod narrator;
pub mod remote;
mod request;
mod shared;
#[cfg(feature = "simulation")]
pub mod simulation;
// Without the feature the hook stays (always empty): nothing outside can drive it.
#[cfg(not(feature = "simulation"))]
#[allow(dead_code)]
mod simulation;
pub mod telemetry;
mod tick;
mod worker;

pub use admission::{LoadError, Loading, precompile_plugins};
pub use aura_contract::{CheckedCall, CrossingError, ResultEnvelope, ToolCall};
pub use config::HostConfig;
pub use host::{Host, TraceRecordError};
pub use narrator::Narrator;
pub use request::{CallInput, CallRequest};
pub use shared::Refused;
pub use tick::{Proposal, TickOutcome};
