//! aura: a WebAssembly plugin host for sandboxed personal-assistant agents.
//!
//! Agents are WebAssembly components that take and return only canonical JSON strings. The
//! host loads them (digest-checked, admitted only if they match the locked catalogue), and
//! checks every crossing in both directions: the toolcall.v1 envelope, the catalogue, each
//! tool's args and result schemas. Whatever fails is quarantined and dropped; the host keeps
//! serving.
//!
//! Read it in this order:
//! - the contract: [`limits`] (every bound, with its reason), [`canonical`] (I-JSON and
//!   RFC 8785), [`schema`] (compiled validators), [`catalogue`] (the locked tools, one home
//!   per tool: schemas, deadline, confirmation, how a result is told), [`envelope`]
//!   (toolcall.v1 and result.v1), [`crossing`] (the checks), [`error`] (why a call was
//!   refused) and [`recovery`] (what a refused call tells its caller to do next);
//! - the host, one module per question: [`host`] (the [`Host`] every front holds, and how it
//!   opens), [`admission`] (how a plugin is admitted, and why not), [`call`] (how a call runs:
//!   [`Host::dispatch`], the one seam every front uses), [`tick`] (how an agent's proposals are
//!   checked), [`agent_calls`] (how agents call agents);
//! - what it stands on: [`sandbox`] (wasmtime: engine, store, guest, imports), [`plugins`]
//!   (components on disk), [`signing`] (who may have written them), [`code_cache`] (compiled code kept between starts), [`journal`]
//!   (the quarantine log and traces), [`simulation`] (the deterministic simulation's seam), [`calibrate`] (fuel per ms on this device);
//! - the day: [`scenario`] (a day of signals), [`orchestrator`] (ticks and arbitration),
//!   [`checkpoint`] (which run a data dir holds, and resuming it), [`trace`] (reasoning traces), [`visible`] (agent text made safe to read) and [`report`]
//!   (a run as one HTML page);
//!
//! - the fronts beside the CLI: `mcp` (the catalogue as MCP tools, stdio and HTTP; feature
//!   `mcp`, on by default).
//!
//! A front opens a host and hands it calls through [`Host::dispatch`]:
//!
//! ```no_run
//! # async fn front() -> Result<(), Box<dyn std::error::Error>> {
//! let host = aura::Host::open(&aura::HostConfig::new("plugins", "aura-data")).await?;
//! let args = serde_json::json!({"readings": {"hrv_ms": 42},
//!     "baselines": {"hrv_ms": 60, "resting_hr_bpm": 58, "sleep_minutes": 450}});
//! let call = aura::ToolCall::new("wellness", "stress_score", args, None); // call_id, ts: new
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

pub mod admission;
pub mod agent_calls;
/// The agents the build compiles into plugins/ (shared with build.rs).
pub mod agent_crates;
pub mod calibrate;
pub mod call;
pub mod canonical;
pub mod catalogue;
pub mod checkpoint;
pub mod code_cache;
pub mod conformance;
pub mod crossing;
pub mod envelope;
pub mod error;
pub mod events;
pub mod host;
pub mod journal;
pub mod limits;
#[cfg(feature = "mcp")]
pub mod mcp;
pub mod orchestrator;
/// The target the agents are built for, and what the build says when it is missing (shared
/// with build.rs).
pub mod plugin_target;
pub mod plugins;
pub mod recovery;
pub mod remote;
pub mod report;
pub mod sandbox;
pub mod scenario;
pub mod schema;
pub mod signing;
pub mod simulation;
pub mod telemetry;
pub mod tick;
pub mod trace;
pub mod visible;
#[cfg(feature = "nats")]
pub mod wire;

pub use admission::Loading;
pub use call::{CallInput, Refused};
pub use envelope::{ResultEnvelope, ToolCall};
pub use error::CrossingError;
pub use host::{Host, HostConfig};

/// The plugins dir of the source tree this binary was built from (where the build script
/// writes the components), used when neither `--plugins-dir` nor `AURA_PLUGINS_DIR` is given.
pub const BUILT_PLUGINS_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../plugins");

/// The plugins dir a host uses when none is given: the build's plugins/ for a host that
/// compiles; for a runtime-only host, the precompiled dir for the target it runs,
/// plugins/<target>/ (written by `aura compile --target <target>`).
pub fn default_plugins_dir() -> std::path::PathBuf {
    let built = std::path::PathBuf::from(BUILT_PLUGINS_DIR);
    if cfg!(feature = "jit") {
        built
    } else {
        built.join(sandbox::CodeTarget::runtime_default().name())
    }
}
