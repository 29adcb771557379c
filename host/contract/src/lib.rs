//! aura's contract: what crosses between the host and an agent, and the checks it must pass.
//!
//! Everything here is pure (no wasmtime, no tokio, no files): the same checks run in the host,
//! on a worker, in a front, on a phone and in a fuzzer. Read it in this order:
//! - [`limits`]: every bound, each with its reason;
//! - [`canonical`]: I-JSON and RFC 8785, the only way JSON text crosses;
//! - [`schema`]: the compiled validators of every schema file, and their typed violations;
//! - [`catalogue`]: the locked (agent, tool) pairs, one home per tool: its schemas, deadline,
//!   confirmation, and how its result is told, asked and confirmed;
//! - [`envelope`]: toolcall.v1 and result.v1;
//! - [`crossing`]: the checks a call, a reply and a tick's proposals pass, and the chain and
//!   privilege checks of a call an agent makes;
//! - [`error`] (why a crossing refused) and [`recovery`] (what a refused caller should do);
//! - [`trace`]: reasoning traces (trace.v1), their rationales and summaries;
//! - [`visible`] (agent text made safe to show), [`digest`] (sha256 as text) and
//!   [`traceparent`] (W3C trace context).
//!
//! It must not run an agent, touch a file or hold a runtime: the layers above do (plugins,
//! sandbox, host, day, fronts), and the arrows between them point down to here.

#![warn(missing_docs)]

pub mod canonical;
pub mod catalogue;
pub mod caused;
pub mod crossing;
pub mod digest;
pub mod envelope;
pub mod error;
pub mod limits;
pub mod person;
pub mod quarantine;
pub mod recovery;
pub mod schema;
pub mod trace;
pub mod traceparent;
pub mod visible;

pub use crossing::{CheckedCall, Crossing};
pub use envelope::{ResultEnvelope, Surface, ToolCall};
pub use error::{CrossingError, Phase};
