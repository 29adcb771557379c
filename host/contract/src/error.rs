//! Why a call was refused or failed, by concept and phase: the errors of the crossing.
//!
//! It owns [`CrossingError`] and [`Phase`] and their stable machine names (`kind`), which
//! appear in result.v1 envelopes and quarantine records. Errors that keep a host from starting
//! live with loading (`admission::LoadError`). It must not decide what to do about an error
//! (the host quarantines, the CLI picks an exit code).

use crate::canonical::JsonError;
use crate::schema::SchemaViolation;

/// Which check of the crossing a failure belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// The toolcall.v1 envelope, host → agent.
    Envelope,
    /// The call's args against the tool's args schema, host → agent.
    Args,
    /// The agent's reply (reply.v1), agent → host.
    Reply,
    /// The tool's result against its result schema, agent → host.
    Result,
    /// Running the agent itself (traps, fuel, memory).
    Agent,
    /// An agent's tick output (proposals.v1), agent → host.
    Tick,
    /// A signal or an answer into the live assistant, the person's world → host.
    Signal,
}

impl Phase {
    /// Stable name.
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Envelope => "envelope",
            Phase::Args => "args",
            Phase::Reply => "reply",
            Phase::Result => "result",
            Phase::Agent => "agent",
            Phase::Tick => "tick",
            Phase::Signal => "signal",
        }
    }

    /// The phase of a stable name (a result.v1 read off the wire); `None` for another name.
    pub fn named(name: &str) -> Option<Self> {
        [
            Phase::Envelope,
            Phase::Args,
            Phase::Reply,
            Phase::Result,
            Phase::Agent,
            Phase::Tick,
            Phase::Signal,
        ]
        .into_iter()
        .find(|phase| phase.as_str() == name)
    }
}

impl std::fmt::Display for Phase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why the crossing refused a call or dropped its result. Every variant is quarantined.
#[derive(Debug, thiserror::Error)]
pub enum CrossingError {
    /// The string is not I-JSON (or too large to parse).
    #[error("{phase}: {error}")]
    Json {
        /// Where the string came from.
        phase: Phase,
        /// What is wrong with it.
        error: JsonError,
    },
    /// The JSON does not satisfy its schema.
    #[error("{phase}: {violation}")]
    Schema {
        /// Which schema check failed.
        phase: Phase,
        /// Where and why.
        violation: SchemaViolation,
    },
    /// toolcall.v1 names an agent the catalogue does not have.
    #[error("envelope: unknown agent `{agent}`")]
    UnknownAgent {
        /// The agent named.
        agent: String,
    },
    /// toolcall.v1 names a tool the agent does not have in the catalogue.
    #[error("envelope: agent `{agent}` has no tool `{tool}` in the catalogue")]
    UnknownTool {
        /// The agent named.
        agent: String,
        /// The tool named.
        tool: String,
    },
    /// The catalogue has the agent, but its component is not loaded.
    #[error("agent `{agent}` is in the catalogue but its component is not loaded")]
    AgentUnavailable {
        /// The agent named.
        agent: String,
    },
    /// The agent trapped (panic, unreachable, stack overflow, a host import's trap).
    #[error("agent `{agent}` trapped: {reason}")]
    AgentTrapped {
        /// The agent.
        agent: String,
        /// The trap, as wasmtime describes it.
        reason: String,
        /// Fuel burned before the trap.
        fuel_used: u64,
    },
    /// The agent recursed past the wasm stack bound.
    #[error("agent `{agent}` overflowed its stack")]
    StackOverflow {
        /// The agent.
        agent: String,
        /// Fuel burned before the overflow.
        fuel_used: u64,
    },
    /// The call ran out of fuel before it returned: its deadline expired.
    #[error("agent `{agent}` exceeded its deadline of {deadline_ms} ms ({fuel_used} fuel)")]
    DeadlineExceeded {
        /// The agent.
        agent: String,
        /// The deadline that was turned into fuel.
        deadline_ms: u64,
        /// Fuel burned: the whole budget.
        fuel_used: u64,
    },
    /// Fuel did not stop the call but the wall clock did: the epoch backstop fired a margin
    /// after the deadline (a blocking host import, a device slower than its calibration).
    #[error("agent `{agent}` ran past its deadline of {deadline_ms} ms plus {margin_ms} ms")]
    WallClockExceeded {
        /// The agent.
        agent: String,
        /// The call's deadline.
        deadline_ms: u64,
        /// The backstop's margin past the deadline.
        margin_ms: u64,
        /// Fuel burned before the interrupt.
        fuel_used: u64,
    },
    /// An agent asked the host to call another agent where that is not allowed.
    #[error("agent `{caller}` may not call other agents here: {reason}")]
    AgentCallUnsupported {
        /// The calling agent.
        caller: String,
        /// Why not.
        reason: String,
    },
    /// An agent asked for a tool it may not reach: a tick proposing another agent's tool, or a
    /// `host.call` to a tool its catalogue entry does not list (or one that needs the user's
    /// confirmation). Refused before the callee is touched.
    #[error("agent `{caller}` may not call `{agent}.{tool}`: {reason}")]
    CallNotAllowed {
        /// The agent that asked.
        caller: String,
        /// The agent it named.
        agent: String,
        /// The tool it named.
        tool: String,
        /// Which rule refused it.
        reason: &'static str,
    },
    /// An agent called an agent already in its call chain (A → B → A): refused at once, so a
    /// cycle can never hang the host.
    #[error("agent `{caller}` called `{target}`, already in the call chain {}", chain.join(" → "))]
    CycleDetected {
        /// The calling agent.
        caller: String,
        /// The agent it called.
        target: String,
        /// The chain, root first, the caller last.
        chain: Vec<String>,
    },
    /// An agent-to-agent call would make the chain longer than
    /// [`crate::limits::AGENT_CALL_DEPTH_MAX`].
    #[error("agent `{caller}` called `{target}` at depth {depth}, beyond the maximum of {max_depth} ({})", chain.join(" → "))]
    DepthExceeded {
        /// The calling agent.
        caller: String,
        /// The agent it called.
        target: String,
        /// The depth the callee would run at (root = 1).
        depth: usize,
        /// The bound.
        max_depth: usize,
        /// The chain, root first, the caller last.
        chain: Vec<String>,
    },
    /// The agent called a host import more often than one call may.
    #[error("agent `{agent}` called {import} more than {limit} times in one call")]
    ImportLimit {
        /// The agent.
        agent: String,
        /// The import (`host.call` or `host.emit`).
        import: &'static str,
        /// The bound.
        limit: u32,
        /// Fuel burned before the limit was hit.
        fuel_used: u64,
    },
    /// The agent asked the host for more work in one import than the host does for a guest
    /// (more random bytes than one request may have, more data handed to an import than a
    /// crossing carries).
    #[error("agent `{agent}` {what}")]
    HostWorkLimit {
        /// The agent.
        agent: String,
        /// What it asked for.
        what: String,
        /// Fuel burned before the request.
        fuel_used: u64,
    },
    /// The agent exited (WASI `exit`) instead of answering.
    #[error(
        "agent `{agent}` exited before answering (exit status {status}; WASI 0.2 carries only success, 0, or failure, 1)"
    )]
    AgentExited {
        /// The agent.
        agent: String,
        /// The status WASI reported.
        status: i32,
        /// Fuel burned before it exited.
        fuel_used: u64,
    },
    /// The host already has [`crate::limits::CALLS_IN_FLIGHT_MAX`] calls in flight: refused at
    /// once, before any check, rather than queued without bound.
    #[error("the host is busy: {in_flight_max} calls are in flight; send the call again shortly")]
    Busy {
        /// The bound.
        in_flight_max: usize,
    },
    /// The call ran on a worker across the wire, which refused it or saw it fail
    /// ([`RemoteRefusal`]); its words, unchanged, so a trace reads as it would in-process.
    #[error("{}", .0.message)]
    Remote(Box<RemoteRefusal>),
    /// No worker answered a call sent across the wire, after every attempt (the call_id was
    /// the same each time, so a worker that had run it answers from its cache).
    #[error("no worker answered `{agent}` after {attempts} attempt(s): {reason}")]
    Unreachable {
        /// The agent called.
        agent: String,
        /// Attempts made.
        attempts: u32,
        /// The last attempt's failure.
        reason: String,
    },
    /// A confirm_required call that came without a valid proof of the user's yes from a front
    /// this host trusts (none, forged, for another call, expired, or already used).
    #[error("`{agent}.{tool}` needs the user's yes, and {reason}")]
    Unconfirmed {
        /// The agent called.
        agent: String,
        /// The tool.
        tool: String,
        /// Why the proof is not taken.
        reason: String,
    },
    /// An answer across the wire that does not prove it comes from a worker this host trusts
    /// (unsigned, signed by another key, or a signature that does not verify over the request
    /// it claims to answer: forged or replayed). Each one is quarantined and the request sent
    /// again; this is the call's error once [`crate::limits::WIRE_UNTRUSTED_ANSWERS_MAX`] came.
    #[error("reply: an answer for `{agent}` does not come from a trusted worker: {reason}")]
    AnswerUntrusted {
        /// The agent called.
        agent: String,
        /// Why it is not trusted.
        reason: String,
    },
    /// A worker's answer that is not the result.v1 of the request it answers (other ids,
    /// more fuel than was sent, neither result nor error).
    #[error("reply: the worker's answer for `{agent}` is not its call's: {reason}")]
    WireReply {
        /// The agent called.
        agent: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The agent tried to grow memory or tables past its limit.
    #[error("agent `{agent}` exceeded its memory limit: {reason}")]
    MemoryLimit {
        /// The agent.
        agent: String,
        /// The limit hit, as wasmtime describes it.
        reason: String,
        /// Fuel burned before the limit was hit.
        fuel_used: u64,
    },
}

/// What a worker on another host answered for a call it did not run to a result: a refusal
/// of its crossing, or the agent failing there (its quarantine record is on that host). As
/// its result.v1 said, each field checked against result.v1 when it was read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteRefusal {
    /// The agent called.
    pub agent: String,
    /// result.v1 `error.kind` (one of [`aura_protocol::ERROR_KINDS`]).
    pub kind: &'static str,
    /// result.v1 `error.phase`.
    pub phase: Phase,
    /// result.v1 `error.message`: the worker's own words, shown as they are.
    pub message: String,
    /// result.v1 `error.instance_path`.
    pub instance_path: Option<String>,
    /// result.v1 `error.schema_path`.
    pub schema_path: Option<String>,
    /// result.v1 `fuel_used`: what the agent burned there.
    pub fuel_used: u64,
}

impl CrossingError {
    /// Stable machine name of the failure (result.v1 `error.kind`).
    pub fn kind(&self) -> &'static str {
        match self {
            CrossingError::Json { error, .. } => error.kind(),
            CrossingError::Schema { .. } | CrossingError::WireReply { .. } => "schema_error",
            CrossingError::UnknownAgent { .. } => "unknown_agent",
            CrossingError::UnknownTool { .. } => "unknown_tool",
            CrossingError::AgentUnavailable { .. } => "agent_unavailable",
            CrossingError::AgentTrapped { .. } => "agent_trapped",
            CrossingError::StackOverflow { .. } => "stack_overflow",
            CrossingError::DeadlineExceeded { .. } => "deadline_exceeded",
            CrossingError::WallClockExceeded { .. } => "wall_clock_exceeded",
            CrossingError::ImportLimit { .. } => "import_limit",
            CrossingError::HostWorkLimit { .. } => "host_work_limit",
            CrossingError::AgentExited { .. } => "agent_exited",
            CrossingError::AgentCallUnsupported { .. } => "agent_call_unsupported",
            CrossingError::CallNotAllowed { .. } | CrossingError::Unconfirmed { .. } => {
                "call_not_allowed"
            }
            CrossingError::CycleDetected { .. } => "cycle_detected",
            CrossingError::DepthExceeded { .. } => "depth_exceeded",
            CrossingError::MemoryLimit { .. } => "memory_limit",
            CrossingError::Busy { .. } => "busy",
            CrossingError::Remote(remote) => remote.kind,
            CrossingError::Unreachable { .. } | CrossingError::AnswerUntrusted { .. } => {
                "agent_unavailable"
            }
        }
    }

    /// Which check failed.
    pub fn phase(&self) -> Phase {
        match self {
            CrossingError::Json { phase, .. } | CrossingError::Schema { phase, .. } => *phase,
            CrossingError::Remote(remote) => remote.phase,
            CrossingError::WireReply { .. } | CrossingError::AnswerUntrusted { .. } => Phase::Reply,
            CrossingError::UnknownAgent { .. }
            | CrossingError::UnknownTool { .. }
            | CrossingError::AgentCallUnsupported { .. }
            | CrossingError::CallNotAllowed { .. }
            | CrossingError::Unconfirmed { .. }
            | CrossingError::CycleDetected { .. }
            | CrossingError::DepthExceeded { .. }
            | CrossingError::Busy { .. } => Phase::Envelope,
            CrossingError::AgentUnavailable { .. }
            | CrossingError::AgentTrapped { .. }
            | CrossingError::StackOverflow { .. }
            | CrossingError::DeadlineExceeded { .. }
            | CrossingError::WallClockExceeded { .. }
            | CrossingError::ImportLimit { .. }
            | CrossingError::HostWorkLimit { .. }
            | CrossingError::AgentExited { .. }
            | CrossingError::MemoryLimit { .. }
            | CrossingError::Unreachable { .. } => Phase::Agent,
        }
    }

    /// JSON Pointer of the offending value, where there is one.
    pub fn instance_path(&self) -> Option<&str> {
        match self {
            CrossingError::Schema { violation, .. } => Some(&violation.instance_path),
            CrossingError::Remote(remote) => remote.instance_path.as_deref(),
            CrossingError::Json {
                error:
                    JsonError::DuplicateKey { pointer, .. }
                    | JsonError::NumberOutOfRange { pointer, .. }
                    | JsonError::Noncharacter { pointer, .. },
                ..
            } => Some(pointer),
            _ => None,
        }
    }

    /// Schema location of the failing keyword, for schema errors.
    pub fn schema_path(&self) -> Option<&str> {
        match self {
            CrossingError::Schema { violation, .. } => Some(&violation.schema_path),
            CrossingError::Remote(remote) => remote.schema_path.as_deref(),
            _ => None,
        }
    }

    /// Fuel the agent burned before the failure (0 if it never ran).
    pub fn fuel_used(&self) -> u64 {
        match self {
            CrossingError::AgentTrapped { fuel_used, .. }
            | CrossingError::StackOverflow { fuel_used, .. }
            | CrossingError::DeadlineExceeded { fuel_used, .. }
            | CrossingError::WallClockExceeded { fuel_used, .. }
            | CrossingError::ImportLimit { fuel_used, .. }
            | CrossingError::HostWorkLimit { fuel_used, .. }
            | CrossingError::AgentExited { fuel_used, .. }
            | CrossingError::MemoryLimit { fuel_used, .. } => *fuel_used,
            CrossingError::Remote(remote) => remote.fuel_used,
            _ => 0,
        }
    }
}

#[cfg(test)]
mod tests;
