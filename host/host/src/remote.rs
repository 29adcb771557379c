//! The seam a transport to other hosts plugs into, and the delivery rules every transport
//! keeps.
//!
//! A host with a remote ([`crate::HostConfig::remote`]) runs the calls and ticks of agents it
//! does not serve itself on the remote's workers ([`Remote`], one [`RemoteRequest`] at a
//! time). A request carries the call's frame (its budget, deadline, the chain above it and its
//! trace: [`SentFrame`]), and a worker turns what it was sent into a frame of its own that can
//! only lower its budget and whose chain is checked (`frame_from`). It also owns the delivery
//! rules every transport keeps, so a simulated one keeps the very same: [`with_retries`] (the
//! attempts of one request, same id and body, and the pause between them) and [`AnswerCache`]
//! (a worker answers a repeated request once, from its cache, or waits for the copy still
//! running). It must not know the transport (`aura-wire` does), nor check an answer (the
//! client module does) nor serve one (the worker module does).

use std::collections::BTreeMap;
use std::sync::Arc;

use futures_util::future::BoxFuture;

use aura_contract::catalogue;
use aura_contract::crossing::check_chain;
use aura_contract::error::{CrossingError, Phase};
use aura_contract::limits::{
    AGENT_CALL_DEPTH_MAX, WIRE_ANSWERS_KEPT_BYTES_MAX, WIRE_ANSWERS_KEPT_MAX, WIRE_ATTEMPTS_MAX,
    WIRE_BODY_BYTES_MAX, WIRE_UNTRUSTED_ANSWERS_MAX,
};
pub use aura_sandbox::{Budget, Frame};

use crate::telemetry::TraceContext;

/// The `tool` a tick's result.v1 names: a tick is answered like a call whose result is the
/// agent's proposals.v1.
pub const TICK_TOOL: &str = "tick";

/// What a request asks the remote to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RemoteWork<'a> {
    /// A tool call: the body is its checked toolcall.v1, canonical.
    Call {
        /// The tool.
        tool: &'a str,
    },
    /// An agent's tick: the body is the tick context, canonical.
    Tick,
}

/// Where a transport reports an answer it refused before returning any (one no trusted
/// worker signed): the client quarantines each, and the request is sent again.
pub trait RefusedAnswers: Send + Sync {
    /// `answer` (its text as it came) was refused for `error`.
    fn refused(&self, error: CrossingError, answer: &str);
}

/// A client that keeps no record of refused answers (a test's).
#[derive(Debug, Clone, Copy, Default)]
pub struct Unrecorded;

impl RefusedAnswers for Unrecorded {
    fn refused(&self, error: CrossingError, _answer: &str) {
        tracing::warn!(%error, "an answer was refused");
    }
}

/// One request to the remote.
#[derive(Clone, Copy)]
pub struct RemoteRequest<'a> {
    /// The agent that runs it.
    pub agent: &'static str,
    /// A call or a tick.
    pub work: RemoteWork<'a>,
    /// The call's call_id, or the tick's ([`tick_id`]): the same on every attempt, so a
    /// worker that already ran it answers from its cache instead of running it again.
    pub id: &'a str,
    /// What the agent is handed.
    pub body: &'a str,
    /// Where the call sits: its budget and the chain of agents above it.
    pub frame: &'a Frame,
    /// Where answers refused on the way are reported.
    pub refused: &'a dyn RefusedAnswers,
}

impl std::fmt::Debug for RemoteRequest<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteRequest")
            .field("agent", &self.agent)
            .field("work", &self.work)
            .field("id", &self.id)
            .field("body_bytes", &self.body.len())
            .field("frame", &self.frame)
            .finish_non_exhaustive()
    }
}

/// A transport to workers on other hosts (the wire: `aura_wire`).
pub trait Remote: Send + Sync + std::fmt::Debug {
    /// The agents the remote's workers serve, in catalogue order.
    fn agents(&self) -> Vec<&'static str>;

    /// Each served agent's component as built from source (its sha256), by agent: what a run's
    /// identity names.
    fn sources(&self) -> BTreeMap<String, String>;

    /// Sends one request and returns the body of the answer (at most
    /// [`CROSSING_BYTES_MAX`](aura_contract::limits::CROSSING_BYTES_MAX) bytes), unchecked. `Err` when no worker answered
    /// ([`CrossingError::Unreachable`]) or the request cannot be sent (too large).
    fn send<'a>(
        &'a self,
        request: RemoteRequest<'a>,
    ) -> BoxFuture<'a, Result<String, CrossingError>>;
}

/// Why one attempt to deliver a request brought no answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AttemptFailed {
    /// Worth another attempt: a timeout, no responder, the connection lost.
    Lost(String),
    /// The transport refuses a message this large: no attempt will pass.
    TooLarge,
    /// An answer came, and it is not text a result.v1 could be.
    BadAnswer(String),
    /// An answer came that does not prove it comes from a trusted worker: reported to the
    /// request's [`RefusedAnswers`] and the request sent again at once (another worker of
    /// the queue group may take it), up to [`WIRE_UNTRUSTED_ANSWERS_MAX`] such answers.
    Untrusted {
        /// The answer as it came.
        answer: String,
        /// Why it is not trusted.
        reason: String,
    },
}

/// Sends `request` by `attempt` up to [`WIRE_ATTEMPTS_MAX`] times (each with the same id and
/// body, so a worker that already ran it answers from its [`AnswerCache`]), with `pause(n)`
/// awaited before attempt n + 1; the first answer is returned. A body over the crossing's
/// bound is refused (`too_large`) before any attempt. `Unreachable` once every attempt was
/// lost; too large for the transport or a bad answer at once (no attempt would do better). An
/// untrusted answer is reported and the same attempt made again without a pause (it was no
/// loss of the transport), until [`WIRE_UNTRUSTED_ANSWERS_MAX`] came: then `AnswerUntrusted`.
pub async fn with_retries<Attempt, Sent, Pause, Paused>(
    request: &RemoteRequest<'_>,
    mut attempt: Attempt,
    mut pause: Pause,
) -> Result<String, CrossingError>
where
    Attempt: FnMut(u32) -> Sent,
    Sent: std::future::Future<Output = Result<String, AttemptFailed>>,
    Pause: FnMut(u32) -> Paused,
    Paused: std::future::Future<Output = ()>,
{
    if request.body.len() > WIRE_BODY_BYTES_MAX {
        return Err(too_large(request));
    }
    let mut reason = String::new();
    let mut untrusted = 0u32;
    let mut n = 1;
    while n <= WIRE_ATTEMPTS_MAX {
        match attempt(n).await {
            Ok(answer) => return Ok(answer),
            Err(AttemptFailed::TooLarge) => return Err(too_large(request)),
            Err(AttemptFailed::BadAnswer(why)) => {
                return Err(CrossingError::WireReply {
                    agent: request.agent.to_owned(),
                    reason: why,
                });
            }
            Err(AttemptFailed::Untrusted { answer, reason }) => {
                untrusted += 1;
                let error = |reason| CrossingError::AnswerUntrusted {
                    agent: request.agent.to_owned(),
                    reason,
                };
                let last = reason.clone();
                request.refused.refused(error(reason), &answer);
                if untrusted >= WIRE_UNTRUSTED_ANSWERS_MAX {
                    return Err(error(format!(
                        "{untrusted} answers came, none from a trusted worker; the last: {last}"
                    )));
                }
                continue;
            }
            Err(AttemptFailed::Lost(why)) => reason = why,
        }
        n += 1;
        if n <= WIRE_ATTEMPTS_MAX {
            pause(n - 1).await;
            tracing::info!(id = request.id, attempt = n, %reason, "wire.retry");
        }
    }
    Err(CrossingError::Unreachable {
        agent: request.agent.to_owned(),
        attempts: WIRE_ATTEMPTS_MAX,
        reason,
    })
}

/// A request's body too large for the transport, refused before (or as) it is sent.
fn too_large(request: &RemoteRequest<'_>) -> CrossingError {
    let phase = match request.work {
        RemoteWork::Call { .. } => Phase::Envelope,
        RemoteWork::Tick => Phase::Tick,
    };
    CrossingError::Json {
        phase,
        error: aura_contract::canonical::JsonError::TooLarge {
            bytes: Some(request.body.len()),
            bytes_max: WIRE_BODY_BYTES_MAX,
        },
    }
}

/// What makes two requests the same to a worker: the subject (agent and tool, or tick), what
/// the frame sent shapes the run with (fuel, deadline, chain, the proof of a user's yes; not
/// the trace), and the body. A worker signs its answer over it (`aura_wire::provenance`).
pub fn request_key(subject: &str, sent: &SentFrame, body: &[u8]) -> [u8; 32] {
    use sha2::Digest;
    let mut digest = sha2::Sha256::new();
    digest.update(subject.as_bytes());
    for part in [
        sent.fuel.map(|fuel| fuel.to_string()),
        sent.deadline_ms.map(|ms| ms.to_string()),
        Some(sent.chain.join(",")),
        sent.confirmation.clone(),
    ] {
        digest.update(b"\n");
        digest.update(part.unwrap_or_default().as_bytes());
    }
    digest.update(b"\n");
    digest.update(body);
    digest.finalize().into()
}

/// A worker's answers kept for repeated requests ([`request_key`]), each made once: at most
/// [`WIRE_ANSWERS_KEPT_MAX`] answers and [`WIRE_ANSWERS_KEPT_BYTES_MAX`] bytes, the oldest
/// dropped first.
#[derive(Debug, Default)]
pub struct AnswerCache {
    kept: std::sync::Mutex<Kept>,
}

#[derive(Debug, Default)]
struct Kept {
    by_request: std::collections::HashMap<[u8; 32], Arc<tokio::sync::OnceCell<Arc<str>>>>,
    /// Oldest first.
    order: std::collections::VecDeque<[u8; 32]>,
    bytes: usize,
}

impl AnswerCache {
    /// The answer to the request `key`: kept, or being made by an earlier copy of it (waited
    /// for), or made now by the future `make` returns.
    ///
    /// `make` makes the future rather than being it: a future taken by value would sit in this
    /// call's state beside the copy awaited, and a call's future is the largest a worker runs.
    pub async fn answer<M, F>(&self, key: [u8; 32], make: M) -> Arc<str>
    where
        M: FnOnce() -> F,
        F: std::future::Future<Output = String>,
    {
        let cell = {
            let mut kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
            match kept.by_request.get(&key) {
                Some(cell) => cell.clone(),
                None => {
                    let cell = Arc::new(tokio::sync::OnceCell::new());
                    kept.by_request.insert(key, cell.clone());
                    kept.order.push_back(key);
                    cell
                }
            }
        };
        let mut made = false;
        let answer = cell
            .get_or_init(|| async {
                made = true;
                Arc::from(make().await)
            })
            .await
            .clone();
        if made {
            let mut kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
            kept.bytes = kept.bytes.saturating_add(answer.len());
            kept.evict();
        }
        answer
    }
}

impl Kept {
    /// Drops the oldest answers past either bound (never one still being made: its waiters
    /// hold the cell, and a later copy finds it gone and runs again, which is safe).
    fn evict(&mut self) {
        while self.order.len() > WIRE_ANSWERS_KEPT_MAX || self.bytes > WIRE_ANSWERS_KEPT_BYTES_MAX {
            let Some(oldest) = self.order.pop_front() else {
                break;
            };
            if let Some(cell) = self.by_request.remove(&oldest) {
                self.bytes = self.bytes.saturating_sub(cell.get().map_or(0, |a| a.len()));
            }
        }
    }
}

/// The id of a tick of `agent` on `context`: the same tick is the same request (a retry is
/// answered from a worker's cache), another context or agent another id.
pub fn tick_id(agent: &str, context: &str) -> String {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(context.as_bytes());
    aura_protocol::call_id_from(&format!("tick\n{agent}\n{digest:x}"))
}

/// What a request's sender says of where a call sits, as read off the wire (each part still
/// to be checked by the worker: see [`Host::serve_call`](crate::Host::serve_call)).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SentFrame {
    /// The fuel the sender gives the call.
    pub fuel: Option<u64>,
    /// The sender's deadline for it.
    pub deadline_ms: Option<u64>,
    /// The agents above it, root first, as names.
    pub chain: Vec<String>,
    /// The request it belongs to (`traceparent`).
    pub trace: Option<TraceContext>,
    /// A confirming front's proof of the user's yes ([`crate::confirmation`]).
    pub confirmation: Option<String>,
}

impl SentFrame {
    /// What a frame says of itself on the wire.
    pub fn of(frame: &Frame) -> Self {
        Self {
            fuel: Some(frame.budget.fuel),
            deadline_ms: Some(frame.budget.deadline_ms),
            chain: frame.chain_above.iter().map(|a| (*a).to_owned()).collect(),
            trace: frame.trace,
            confirmation: frame.confirmation.as_deref().map(str::to_owned),
        }
    }
}

/// The frame a worker gives a call it was sent for `agent` with `deadline_ms`: never more fuel
/// or a later deadline than its own rate and the call's deadline give, and the chain above
/// it checked (catalogue agents, no repeats, within the depth bound, and not holding the agent
/// called: a cycle).
pub(crate) fn frame_from(
    sent: &SentFrame,
    agent: &'static str,
    deadline_ms: u64,
    fuel_per_ms: u64,
    clock_start_unix_ns: u64,
) -> Result<Frame, CrossingError> {
    let mut chain_above = Vec::with_capacity(sent.chain.len());
    for name in &sent.chain {
        let Some(spec) = catalogue::agent(name) else {
            return Err(CrossingError::UnknownAgent {
                agent: aura_contract::visible::visible(name),
            });
        };
        if chain_above.contains(&spec.name) || chain_above.len() >= AGENT_CALL_DEPTH_MAX {
            return Err(CrossingError::AgentCallUnsupported {
                caller: spec.name.to_owned(),
                reason: format!(
                    "the call chain sent with the call is not a chain: {}",
                    aura_contract::visible::visible(&sent.chain.join(" → "))
                ),
            });
        }
        chain_above.push(spec.name);
    }
    check_chain(&chain_above, agent)?;
    let deadline_ms = sent.deadline_ms.map_or(deadline_ms, |d| d.min(deadline_ms));
    let own = Budget::for_deadline(deadline_ms, fuel_per_ms);
    Ok(Frame {
        budget: Budget {
            fuel: sent.fuel.map_or(own.fuel, |fuel| fuel.min(own.fuel)),
            deadline_ms,
        },
        chain_above,
        clock_start_unix_ns,
        interrupt_at_start: false,
        trace: sent.trace,
        // Checked before the frame is made (crate::confirmation); not sent on.
        confirmation: None,
        // A worker's guests draw from the worker's seed (checked when a client joins).
        guest_seed: None,
    })
}

#[cfg(test)]
mod tests;
