//! The seam a transport to other hosts plugs into, and the delivery rules every transport
//! keeps.
//!
//! A host with a remote ([`crate::HostConfig::remote`]) runs the calls and ticks of agents it
//! does not serve itself on the remote's workers ([`Remote`], one [`RemoteRequest`] at a
//! time). A request carries the call's frame (its budget, deadline, the chain above it and its
//! trace: [`SentFrame`]), and a worker turns what it was sent into a frame of its own that can
//! only lower its budget and whose chain is checked ([`frame_from`]). It also owns the delivery
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
    /// [`CROSSING_BYTES_MAX`] bytes), unchecked. `Err` when no worker answered
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
                if untrusted >= WIRE_UNTRUSTED_ANSWERS_MAX {
                    return Err(error(format!(
                        "{untrusted} answers came, none from a trusted worker; the last: {reason}"
                    )));
                }
                request.refused.refused(error(reason), &answer);
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
/// the frame sent shapes the run with (fuel, deadline, chain; not the trace), and the body.
pub fn request_key(subject: &str, sent: &SentFrame, body: &[u8]) -> [u8; 32] {
    use sha2::Digest;
    let mut digest = sha2::Sha256::new();
    digest.update(subject.as_bytes());
    for part in [
        sent.fuel.map(|fuel| fuel.to_string()),
        sent.deadline_ms.map(|ms| ms.to_string()),
        Some(sent.chain.join(",")),
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
    /// for), or made now by `make`.
    pub async fn answer<F>(&self, key: [u8; 32], make: F) -> Arc<str>
    where
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
                Arc::from(make.await)
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
/// to be checked by the worker: see [`Host::serve_call`]).
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
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sent(chain: &[&str], fuel: Option<u64>, deadline_ms: Option<u64>) -> SentFrame {
        SentFrame {
            fuel,
            deadline_ms,
            chain: chain.iter().map(|a| (*a).to_owned()).collect(),
            trace: None,
            confirmation: None,
        }
    }

    /// The budget a worker with its own 1000 ms at 100,000 fuel/ms runs a call sent with
    /// `fuel` and `deadline_ms` at.
    fn budget_sent(fuel: Option<u64>, deadline_ms: Option<u64>) -> Budget {
        frame_from(&sent(&[], fuel, deadline_ms), "calendar", 1000, 100_000, 7)
            .unwrap()
            .budget
    }

    #[test]
    fn a_sent_frame_only_lowers_the_workers_own_budget() {
        let budget = |fuel, deadline_ms| Budget { fuel, deadline_ms };
        // Own: 1000 ms at 100,000 fuel/ms = 100,000,000. Sent less: the sent fuel.
        assert_eq!(budget_sent(Some(5_000_000), None), budget(5_000_000, 1000));
        // Sent more fuel and a later deadline than the call's: its own (1000 ms, 1e8).
        assert_eq!(
            budget_sent(Some(u64::MAX), Some(9000)),
            budget(100_000_000, 1000)
        );
        // An earlier deadline: 300 ms buy 30,000,000.
        assert_eq!(budget_sent(None, Some(300)), budget(30_000_000, 300));
        let frame = frame_from(&sent(&[], None, None), "calendar", 1000, 100_000, 7).unwrap();
        assert_eq!(frame.clock_start_unix_ns, 7);
    }

    #[test]
    fn a_sent_chain_is_checked_before_anything_runs() {
        let frame = frame_from(
            &sent(&["calendar", "wellness"], None, None),
            "finance",
            1000,
            1,
            0,
        )
        .unwrap();
        assert_eq!(frame.chain_above, ["calendar", "wellness"]);
        // The agent called is already above it: a cycle across hosts.
        let error = frame_from(
            &sent(&["calendar", "wellness"], None, None),
            "calendar",
            1000,
            1,
            0,
        )
        .unwrap_err();
        assert_eq!(error.kind(), "cycle_detected");
        // Five above it: the sixth is too deep.
        let five = ["calendar", "comms", "finance", "wellness", "calendar"];
        let error = frame_from(&sent(&five[..4], None, None), "finance", 1000, 1, 0).unwrap_err();
        assert_eq!(error.kind(), "cycle_detected");
        let error = frame_from(&sent(&five, None, None), "finance", 1000, 1, 0).unwrap_err();
        assert_eq!(
            error.kind(),
            "agent_call_unsupported",
            "a repeated name is no chain"
        );
        let error = frame_from(&sent(&["mallory"], None, None), "finance", 1000, 1, 0).unwrap_err();
        assert_eq!(error.kind(), "unknown_agent");
    }

    fn request<'a>(frame: &'a Frame, body: &'a str) -> RemoteRequest<'a> {
        RemoteRequest {
            agent: "wellness",
            work: RemoteWork::Call {
                tool: "stress_score",
            },
            id: "t_0123456789",
            body,
            frame,
            refused: &Unrecorded,
        }
    }

    #[tokio::test]
    async fn a_request_is_tried_the_bounded_number_of_times_then_unreachable() {
        let frame = Frame::root(Budget::for_deadline(100, 1), 0);
        let request = request(&frame, "{}");
        let attempts = std::cell::Cell::new(0u32);
        let pauses = std::cell::RefCell::new(Vec::new());
        let outcome = with_retries(
            &request,
            |n| {
                attempts.set(n);
                std::future::ready(Err(AttemptFailed::Lost(format!("lost {n}"))))
            },
            |n| {
                pauses.borrow_mut().push(n);
                std::future::ready(())
            },
        )
        .await;
        assert_eq!(attempts.get(), WIRE_ATTEMPTS_MAX);
        // A pause before each attempt but the first.
        assert_eq!(*pauses.borrow(), (1..WIRE_ATTEMPTS_MAX).collect::<Vec<_>>());
        match outcome {
            Err(CrossingError::Unreachable {
                attempts, reason, ..
            }) => {
                assert_eq!(attempts, WIRE_ATTEMPTS_MAX);
                assert_eq!(reason, format!("lost {WIRE_ATTEMPTS_MAX}"));
            }
            other => panic!("{other:?}"),
        }
        // The third attempt answers: two pauses, the answer.
        let answered = with_retries(
            &request,
            |n| {
                std::future::ready(match n {
                    3 => Ok("answer".to_owned()),
                    _ => Err(AttemptFailed::Lost("lost".into())),
                })
            },
            |_| std::future::ready(()),
        )
        .await;
        assert_eq!(answered.unwrap(), "answer");
        // Too large or a bad answer: no second attempt.
        for (failed, expected) in [
            (AttemptFailed::TooLarge, "too_large"),
            (AttemptFailed::BadAnswer("x".into()), "schema_error"),
        ] {
            let tried = std::cell::Cell::new(0);
            let kind = with_retries(
                &request,
                |_| {
                    tried.set(tried.get() + 1);
                    std::future::ready(Err(failed.clone()))
                },
                |_| std::future::ready(()),
            )
            .await
            .unwrap_err()
            .kind();
            assert_eq!(tried.get(), 1);
            assert_eq!(kind, expected);
        }
    }

    /// Keeps what it is told of refused answers.
    #[derive(Default)]
    struct Kept(std::sync::Mutex<Vec<(String, String)>>);

    impl RefusedAnswers for Kept {
        fn refused(&self, error: CrossingError, answer: &str) {
            self.0
                .lock()
                .unwrap()
                .push((error.to_string(), answer.to_owned()));
        }
    }

    #[tokio::test]
    async fn untrusted_answers_are_reported_and_sent_again_at_once_up_to_the_bound() {
        let frame = Frame::root(Budget::for_deadline(100, 1), 0);
        let kept = Kept::default();
        let request = RemoteRequest {
            refused: &kept,
            ..request(&frame, "{}")
        };
        // Two impostors' answers, then a trusted one: the trusted one is the answer, the two
        // are reported, and no pause was taken (nothing was lost).
        let calls = std::cell::Cell::new(0u32);
        let pauses = std::cell::Cell::new(0u32);
        let answered = with_retries(
            &request,
            |_| {
                calls.set(calls.get() + 1);
                std::future::ready(match calls.get() {
                    1 | 2 => Err(AttemptFailed::Untrusted {
                        answer: format!("forged {}", calls.get()),
                        reason: "it is not signed".into(),
                    }),
                    _ => Ok("trusted".to_owned()),
                })
            },
            |_| {
                pauses.set(pauses.get() + 1);
                std::future::ready(())
            },
        )
        .await;
        assert_eq!(answered.unwrap(), "trusted");
        assert_eq!(pauses.get(), 0);
        let reported = kept.0.lock().unwrap().clone();
        assert_eq!(
            reported,
            [1, 2]
                .map(|n| (
                    "reply: an answer for `wellness` does not come from a trusted worker: it is not signed".to_owned(),
                    format!("forged {n}")
                ))
                .to_vec()
        );
        // Only impostors: the call fails at the bound, every answer but the last reported
        // (the last is the call's own error).
        let kept = Kept::default();
        let again = RemoteRequest {
            refused: &kept,
            ..request
        };
        let failed = with_retries(
            &again,
            |_| {
                std::future::ready(Err::<String, _>(AttemptFailed::Untrusted {
                    answer: "forged".into(),
                    reason: "it is not signed".into(),
                }))
            },
            |_| std::future::ready(()),
        )
        .await
        .unwrap_err();
        assert_eq!(failed.kind(), "agent_unavailable");
        assert!(
            failed
                .to_string()
                .contains("32 answers came, none from a trusted worker"),
            "{failed}"
        );
        assert_eq!(
            kept.0.lock().unwrap().len(),
            WIRE_UNTRUSTED_ANSWERS_MAX as usize - 1
        );
    }

    #[tokio::test]
    async fn a_repeated_request_is_answered_once_and_its_copies_wait_for_it() {
        let cache = AnswerCache::default();
        let made = std::cell::Cell::new(0);
        let sent = sent(&[], Some(10), Some(100));
        let key = request_key("aura.tool.wellness.stress_score", &sent, b"{}");
        let make = |text: &'static str| {
            let made = &made;
            async move {
                made.set(made.get() + 1);
                // Yields, so the copy arrives while the first is still being made.
                tokio::task::yield_now().await;
                text.to_owned()
            }
        };
        let (first, copy) = tokio::join!(
            cache.answer(key, make("first")),
            cache.answer(key, make("second"))
        );
        assert_eq!((&*first, &*copy), ("first", "first"));
        assert_eq!(made.get(), 1);
        // Another frame is another request.
        let other = request_key("aura.tool.wellness.stress_score", &sent_with_fuel(9), b"{}");
        assert_ne!(key, other);
        assert_eq!(&*cache.answer(other, make("third")).await, "third");
        assert_eq!(made.get(), 2);
    }

    fn sent_with_fuel(fuel: u64) -> SentFrame {
        sent(&[], Some(fuel), Some(100))
    }

    #[test]
    fn a_tick_id_names_the_agent_and_the_context() {
        let id = tick_id("calendar", "{}");
        assert!(aura_protocol::is_call_id(&id), "{id}");
        assert_eq!(id, tick_id("calendar", "{}"));
        assert_ne!(id, tick_id("comms", "{}"));
        assert_ne!(id, tick_id("calendar", "{\"a\":1}"));
    }
}
