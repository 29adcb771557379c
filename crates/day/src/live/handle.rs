//! A live session's handle: what its fronts hold to push inputs and follow decisions, and
//! what they are told back (an acknowledgement, or a refusal with recovery.v1).
//!
//! It owns [`Live`] and its [`Inbox`], [`Ack`] and [`Refused`], and quarantining a refusal
//! before its sender hears it. It must not check an input beyond what a front can see (its
//! bytes: UTF-8, size, the queue) nor take one: the session does.

use std::sync::Arc;

use serde::Serialize;
use tokio::sync::{broadcast, mpsc, oneshot};

use aura_contract::error::Phase;
use aura_contract::limits::{LIVE_INPUT_QUEUE_MAX, LIVE_SIGNAL_BYTES_MAX};
use aura_contract::quarantine::{InputRefusal, QuarantineRecord};
use aura_contract::recovery::{Action, ToolFailure};
use aura_contract::trace::narration::NarrationRecord;
use aura_host::Host;

use super::deliver::Delivery;
use super::input;
use crate::scenario::{Scenario, Signal};

/// What a session acknowledged: the input is in its journal, durable.
#[derive(Debug, Clone, Serialize)]
pub struct Ack {
    /// Its place among the inputs the session's life took, from 0 (over all its days).
    pub seq: usize,
    /// When it takes effect (RFC 3339, the person's offset).
    pub at: String,
    /// Its kind.
    pub kind: String,
    /// It was taken before under its id: this is that acknowledgement again, and it is
    /// applied once.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub again: bool,
    /// The journal line the session wrote for it (its arrival stamped), when it was taken
    /// now: what a fleet journals as the signal. Not told to the sender.
    #[serde(skip)]
    pub record: Option<serde_json::Value>,
}

impl Ack {
    /// The acknowledgement of `signal`, the `seq`th of the life.
    pub(super) fn of(seq: usize, signal: &Signal, scenario: &Scenario) -> Self {
        Self {
            seq,
            at: scenario.format(signal.at),
            kind: signal.kind.clone(),
            again: false,
            record: None,
        }
    }
}

/// An input refused, as its sender reads it (recovery.v1, phase `signal`); its quarantine
/// record is written.
pub type Refused = Box<ToolFailure>;

/// What a front hands a session.
#[derive(Debug)]
pub(super) enum Input {
    /// One signal or answer as sent, and where its acknowledgement goes.
    Signal {
        text: String,
        reply: oneshot::Sender<Result<Ack, Refused>>,
    },
    /// A front will send nothing more (stdin closed): a replayed clock may run to the end.
    Closed,
    /// Stop (SIGINT, SIGTERM, an app closing).
    Stop,
}

/// A handle on a live session: what its fronts hold to push inputs and follow decisions.
#[derive(Debug, Clone)]
pub struct Live {
    queue: mpsc::Sender<Input>,
    decisions: broadcast::Sender<Arc<Delivery>>,
    narrations: broadcast::Sender<Arc<NarrationRecord>>,
    /// The rate bound, shared by every front of the session.
    bucket: Arc<std::sync::Mutex<input::Bucket>>,
    /// The open day's host (its quarantine is where a refusal goes): the session's until the
    /// session sets its first day's.
    host: OpenDay,
}

/// The host of the day a session has open, shared by its handle and the session.
pub(super) type OpenDay = Arc<std::sync::RwLock<Host>>;

/// The receiving end of a session's handle: what [`live`] runs on.
#[derive(Debug)]
pub struct Inbox {
    pub(super) queue: mpsc::Receiver<Input>,
    pub(super) decisions: broadcast::Sender<Arc<Delivery>>,
    pub(super) narrations: broadcast::Sender<Arc<NarrationRecord>>,
    /// Set to each day's host as the session opens it.
    pub(super) open_day: OpenDay,
}

/// A handle and the inbox it feeds, for one session on `host`.
pub fn channel(host: &Host) -> (Live, Inbox) {
    let open_day: OpenDay = Arc::new(std::sync::RwLock::new(host.clone()));
    let (queue, receiver) = mpsc::channel(LIVE_INPUT_QUEUE_MAX);
    let (decisions, _) = broadcast::channel(aura_contract::limits::SINK_QUEUE_MAX);
    let (narrations, _) = broadcast::channel(aura_contract::limits::SINK_QUEUE_MAX);
    (
        Live {
            queue,
            decisions: decisions.clone(),
            narrations: narrations.clone(),
            host: open_day.clone(),
            bucket: Arc::new(std::sync::Mutex::new(input::Bucket::new())),
        },
        Inbox {
            queue: receiver,
            decisions,
            narrations,
            open_day,
        },
    )
}

impl Live {
    /// The open day's host.
    fn host(&self) -> Host {
        match self.host.read() {
            Ok(host) => host.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// Pushes one signal or answer (a scenario.v1 signal, `at` optional); acknowledged once it
    /// is durable, or refused (and quarantined).
    pub async fn push(&self, bytes: &[u8]) -> Result<Ack, Refused> {
        self.push_with(bytes, true).await
    }

    /// [`Live::push`], taking a token of the rate bound when `bounded`.
    async fn push_with(&self, bytes: &[u8], bounded: bool) -> Result<Ack, Refused> {
        let text = match std::str::from_utf8(bytes) {
            Ok(text) => text.to_owned(),
            Err(e) => {
                let refusal = input::refusal(
                    "malformed_json",
                    format!("the input is not UTF-8 text: {e}"),
                    Action::CorrectCall,
                );
                return Err(refuse(
                    &self.host(),
                    &refusal,
                    &String::from_utf8_lossy(bytes),
                ));
            }
        };
        if text.len() > LIVE_SIGNAL_BYTES_MAX {
            let refusal = input::refusal(
                "too_large",
                format!(
                    "the input is {} bytes, more than the {LIVE_SIGNAL_BYTES_MAX} one signal may have",
                    text.len()
                ),
                Action::CorrectCall,
            );
            return Err(refuse(&self.host(), &refusal, &text));
        }
        // An unbounded front takes no token either: it leaves the bound to the others.
        if bounded && let Err(wait_ms) = self.take_token() {
            return Err(refuse(&self.host(), &input::too_fast(wait_ms), &text));
        }
        let (reply, answer) = oneshot::channel();
        let sent = self.queue.try_send(Input::Signal {
            text: text.clone(),
            reply,
        });
        if let Err(error) = sent {
            let refusal = match error {
                mpsc::error::TrySendError::Full(_) => input::busy(
                    format!("{LIVE_INPUT_QUEUE_MAX} inputs are waiting for the session"),
                    aura_contract::limits::BUSY_RETRY_AFTER_MS,
                ),
                mpsc::error::TrySendError::Closed(_) => closed(),
            };
            return Err(refuse(&self.host(), &refusal, &text));
        }
        answer
            .await
            .unwrap_or_else(|_| Err(refuse(&self.host(), &closed(), &text)))
    }

    /// [`Live::push`] for a front that is one stream read in order, each input waiting for
    /// the answer to the one before (stdin): such a front has one input in flight at most, so
    /// it goes at the session's own pace (each input durable before the next is read, as a
    /// pipe's writer waits for its reader) and the rate bound, which is there for fronts with
    /// many senders at once (HTTP, an app's threads), neither paces nor refuses it.
    pub async fn push_in_order(&self, bytes: &[u8]) -> Result<Ack, Refused> {
        self.push_with(bytes, false).await
    }

    /// Takes a token of the rate bound, or says how many milliseconds until one is there.
    fn take_token(&self) -> Result<(), u64> {
        match self.bucket.lock() {
            Ok(mut bucket) => bucket.take(),
            Err(poisoned) => poisoned.into_inner().take(),
        }
    }

    /// Refuses an input its front could not even read (a line longer than a signal may be),
    /// with what was read of it.
    pub fn refuse_unread(&self, bytes: u64, start: &[u8]) -> Refused {
        let refusal = input::refusal(
            "too_large",
            format!(
                "the input is {bytes} bytes or more, more than the {LIVE_SIGNAL_BYTES_MAX} one signal may have"
            ),
            Action::CorrectCall,
        );
        refuse(&self.host(), &refusal, &String::from_utf8_lossy(start))
    }

    /// Refuses a request a front turned away before it became an input (another site's page,
    /// say), with the reason and what it said: quarantined like any refusal.
    pub fn refuse_request(&self, kind: &'static str, reason: String, offending: &str) -> Refused {
        refuse(
            &self.host(),
            &input::refusal(kind, reason, Action::Finish),
            offending,
        )
    }

    /// Tells the session one front will send nothing more.
    pub async fn close(&self) {
        let _ = self.queue.send(Input::Closed).await;
    }

    /// Stops the session: it finishes the tick it is in, checkpoints, and returns.
    pub async fn stop(&self) {
        let _ = self.queue.send(Input::Stop).await;
    }

    /// Every decision from now on, as it is delivered (a subscriber that falls more than
    /// [`aura_contract::limits::SINK_QUEUE_MAX`] behind misses the oldest and is told so).
    pub fn subscribe(&self) -> broadcast::Receiver<Arc<Delivery>> {
        self.decisions.subscribe()
    }

    /// Every narration record from now on, once durable in narrations.jsonl (a kept one's text
    /// replaces its trace's template); one that falls behind misses the oldest.
    pub fn narrations(&self) -> broadcast::Receiver<Arc<NarrationRecord>> {
        self.narrations.subscribe()
    }
}

/// The refusal of an input to a session that has stopped.
pub(super) fn closed() -> InputRefusal {
    input::refusal(
        "closed",
        "the live session has stopped".to_owned(),
        Action::Finish,
    )
}

/// Quarantines `refusal` of the input `offending` and returns what its sender is told.
pub(super) fn refuse(host: &Host, refusal: &InputRefusal, offending: &str) -> Refused {
    tracing::warn!(kind = refusal.kind, reason = %refusal.reason, "input refused and quarantined");
    if let Err(error) = host
        .journal()
        .quarantine(&QuarantineRecord::input(refusal, offending))
    {
        tracing::error!(%error, "quarantine record could not be written");
    }
    Box::new(ToolFailure {
        phase: Some(Phase::Signal),
        ..ToolFailure::new(
            refusal.kind,
            refusal.reason.clone(),
            (*refusal.recovery).clone(),
        )
    })
}
