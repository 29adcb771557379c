//! A live session's handle: what its fronts hold to push inputs (one signal, or a batch) and
//! follow decisions, and what they are told back (an acknowledgement, or a refusal with
//! recovery.v1, for each signal).
//!
//! It owns [`Live`] and its [`Inbox`], [`Ack`] and [`Refused`], the rate bound and the two
//! lanes a push waits in (an urgent one, for pushes carrying a signal of a `tick_on` kind,
//! that the session takes first, and the rest), and quarantining a refusal before its sender
//! hears it. It must not check an input beyond what a front can see (its bytes: UTF-8, size,
//! a batch's items, the kind it says it is, the queue) nor take one: the session does.

use aura_contract::caused::Caused;
use std::collections::BTreeMap;
use std::sync::Arc;

use serde::Serialize;
use tokio::sync::{Semaphore, broadcast, mpsc, oneshot};

use aura_contract::error::Phase;
use aura_contract::limits::{
    BUSY_RETRY_AFTER_MS, LIVE_BATCH_BYTES_MAX, LIVE_BATCHES_WAITING_MAX, LIVE_INPUT_QUEUE_MAX,
    LIVE_SIGNAL_BYTES_MAX, LIVE_URGENT_QUEUE_MAX,
};
use aura_contract::quarantine::{InputRefusal, QuarantineRecord};
use aura_contract::recovery::{Action, ToolFailure};
use aura_contract::trace::narration::NarrationRecord;
use aura_host::Host;

use super::deliver::Delivery;
use super::input::{self, BatchForm};
use crate::scenario::{Scenario, Signal};
use crate::store::{ReadPosition, check_positions};

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
}

impl Ack {
    /// The acknowledgement of `signal`, the `seq`th of the life.
    pub(super) fn of(seq: usize, signal: &Signal, scenario: &Scenario) -> Self {
        Self {
            seq,
            at: scenario.format(signal.at),
            kind: signal.kind.clone(),
            again: false,
        }
    }
}

/// An input refused, as its sender reads it (recovery.v1, phase `signal`); its quarantine
/// record is written.
pub type Refused = Box<ToolFailure>;

/// What a front hands a session.
#[derive(Debug)]
pub(super) enum Input {
    /// Signals or answers as sent (one, or a batch), and where their answers go: one each,
    /// in order.
    Signals {
        texts: Vec<String>,
        reply: oneshot::Sender<Vec<Result<Ack, Refused>>>,
        /// It carries a signal of a `tick_on` kind: it goes before a batch being taken.
        urgent: bool,
        /// The read position of the source they came from, durable with them.
        read: Option<ReadPosition>,
    },
    /// Where each source's read position stands (what a source resumes from).
    Positions {
        reply: oneshot::Sender<Result<BTreeMap<String, String>, String>>,
    },
    /// A front will send nothing more (stdin closed): a replayed clock may run to the end.
    Closed,
    /// Stop (SIGINT, SIGTERM, an app closing).
    Stop,
}

/// The kinds that tick at once, as the session's setup has them (shared with its handle).
pub(super) type TickOn = Arc<std::sync::RwLock<Vec<String>>>;

/// A handle on a live session: what its fronts hold to push inputs and follow decisions.
#[derive(Debug, Clone)]
pub struct Live {
    /// Pushes carrying a signal of a `tick_on` kind, and stopping: taken first.
    urgent: mpsc::Sender<Input>,
    /// The other pushes, and a front's end.
    queue: mpsc::Sender<Input>,
    decisions: broadcast::Sender<Arc<Delivery>>,
    narrations: broadcast::Sender<Arc<NarrationRecord>>,
    /// The rate bound, shared by every front of the session.
    bucket: Arc<std::sync::Mutex<input::Bucket>>,
    /// Batches waiting for the session.
    batches: Arc<Semaphore>,
    /// The kinds that tick at once.
    tick_on: TickOn,
    /// The open day's host (its quarantine is where a refusal goes): the session's until the
    /// session sets its first day's.
    host: OpenDay,
}

/// The host of the day a session has open, shared by its handle and the session.
pub(super) type OpenDay = Arc<std::sync::RwLock<Host>>;

/// The receiving end of a session's handle: what [`live`] runs on.
#[derive(Debug)]
pub struct Inbox {
    pub(super) lanes: Lanes,
    pub(super) decisions: broadcast::Sender<Arc<Delivery>>,
    pub(super) narrations: broadcast::Sender<Arc<NarrationRecord>>,
    /// Set to each day's host as the session opens it.
    pub(super) open_day: OpenDay,
    /// Set to the session's setup's as it starts.
    pub(super) tick_on: TickOn,
}

/// The two lanes a session takes its inputs from: the urgent one first.
#[derive(Debug)]
pub(super) struct Lanes {
    urgent: mpsc::Receiver<Input>,
    queue: mpsc::Receiver<Input>,
}

impl Lanes {
    /// The next input, an urgent one first; `None` once every handle is gone.
    pub(super) async fn recv(&mut self) -> Option<Input> {
        tokio::select! {
            biased;
            Some(input) = self.urgent.recv() => Some(input),
            Some(input) = self.queue.recv() => Some(input),
            else => None,
        }
    }

    /// An input already waiting, an urgent one first.
    pub(super) fn try_recv(&mut self) -> Option<Input> {
        self.urgent
            .try_recv()
            .or_else(|_| self.queue.try_recv())
            .ok()
    }

    /// Whether an urgent push is waiting.
    pub(super) fn urgent_waiting(&self) -> bool {
        !self.urgent.is_empty()
    }

    /// Takes no more inputs (those waiting can still be read).
    pub(super) fn close(&mut self) {
        self.urgent.close();
        self.queue.close();
    }
}

/// A handle and the inbox it feeds, for one session on `host`.
pub fn channel(host: &Host) -> (Live, Inbox) {
    let open_day: OpenDay = Arc::new(std::sync::RwLock::new(host.clone()));
    let tick_on: TickOn = Arc::new(std::sync::RwLock::new(
        super::LIVE_TICK_ON
            .iter()
            .map(|kind| kind.to_string())
            .collect(),
    ));
    let (urgent, urgent_receiver) = mpsc::channel(LIVE_URGENT_QUEUE_MAX);
    let (queue, receiver) = mpsc::channel(LIVE_INPUT_QUEUE_MAX);
    let (decisions, _) = broadcast::channel(aura_contract::limits::SINK_QUEUE_MAX);
    let (narrations, _) = broadcast::channel(aura_contract::limits::SINK_QUEUE_MAX);
    (
        Live {
            urgent,
            queue,
            decisions: decisions.clone(),
            narrations: narrations.clone(),
            host: open_day.clone(),
            bucket: Arc::new(std::sync::Mutex::new(input::Bucket::new())),
            batches: Arc::new(Semaphore::new(LIVE_BATCHES_WAITING_MAX)),
            tick_on: tick_on.clone(),
        },
        Inbox {
            lanes: Lanes {
                urgent: urgent_receiver,
                queue: receiver,
            },
            decisions,
            narrations,
            open_day,
            tick_on,
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
        self.push_with(bytes, true, None).await
    }

    /// [`Live::push`] of one signal a source read, with the position it read up to: the
    /// position is durable with the signal, in the same write, whether the session took the
    /// signal or refused it for what it is (quarantined). A refusal before the session saw it
    /// (not UTF-8, too large, too fast, busy, stopped) moves nothing: the source moves its
    /// position alone ([`Live::push_read`] of an empty batch) if it passes over the signal.
    pub async fn push_from(&self, bytes: &[u8], read: ReadPosition) -> Result<Ack, Refused> {
        if let Err(refused) = check_positions(&BTreeMap::new(), std::slice::from_ref(&read)) {
            let refusal = input::refusal("too_large", refused.to_string(), Action::CorrectCall);
            return Err(refuse(
                &self.host(),
                &refusal,
                &String::from_utf8_lossy(bytes),
            ));
        }
        self.push_with(bytes, true, Some(read)).await
    }

    /// [`Live::push`], taking a token of the rate bound when `bounded`, with the position
    /// `read` the signal was read up to.
    async fn push_with(
        &self,
        bytes: &[u8],
        bounded: bool,
        read: Option<ReadPosition>,
    ) -> Result<Ack, Refused> {
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
        let shown = text.clone();
        let mut answers = self.send(vec![text], bounded, &shown, read).await?;
        answers
            .pop()
            .unwrap_or_else(|| Err(refuse(&self.host(), &closed(), &shown)))
    }

    /// Pushes a batch of signals and answers (`form`: NDJSON or a JSON array, at most
    /// [`aura_contract::limits::LIVE_BATCH_SIGNALS_MAX`] of them, each as [`Live::push`]
    /// takes one): one answer each, in order, an acknowledgement or a refusal (quarantined),
    /// once every signal taken is durable (one fsync for the batch, or one for each part of
    /// it a day's close split it into). Refused whole (and quarantined) when it cannot be
    /// read as a batch, is too large, or the session is busy or stopped.
    pub async fn push_batch(
        &self,
        bytes: &[u8],
        form: BatchForm,
    ) -> Result<Vec<Result<Ack, Refused>>, Refused> {
        self.push_read(bytes, form, None).await
    }

    /// [`Live::push_batch`] of what a source read, with the position it read up to (`read`):
    /// the position is durable with the batch's signals, in the same write, once the whole
    /// batch is taken (those refused quarantined), so the source resumes from a position
    /// whose signals are all the life's. A batch may be empty: the source read nothing new.
    /// A position past the life's bounds refuses the batch whole.
    pub async fn push_read(
        &self,
        bytes: &[u8],
        form: BatchForm,
        read: Option<ReadPosition>,
    ) -> Result<Vec<Result<Ack, Refused>>, Refused> {
        let shown = || String::from_utf8_lossy(&bytes[..bytes.len().min(LIVE_SIGNAL_BYTES_MAX)]);
        if bytes.len() > LIVE_BATCH_BYTES_MAX {
            let refusal = input::refusal(
                "too_large",
                format!(
                    "the batch is {} bytes, more than the {LIVE_BATCH_BYTES_MAX} one may have",
                    bytes.len()
                ),
                Action::CorrectCall,
            );
            return Err(refuse(&self.host(), &refusal, &shown()));
        }
        let text = std::str::from_utf8(bytes).map_err(|e| {
            let refusal = input::refusal(
                "malformed_json",
                format!("the batch is not UTF-8 text: {e}"),
                Action::CorrectCall,
            );
            refuse(&self.host(), &refusal, &shown())
        })?;
        let texts = input::split_batch(text, form)
            .map_err(|refusal| refuse(&self.host(), &refusal, &shown()))?;
        if let Some(read) = &read
            && let Err(refused) = check_positions(&BTreeMap::new(), std::slice::from_ref(read))
        {
            let refusal = input::refusal("too_large", refused.to_string(), Action::CorrectCall);
            return Err(refuse(&self.host(), &refusal, &shown()));
        }
        if texts.is_empty() && read.is_none() {
            return Ok(Vec::new());
        }
        // Held whole while it waits: at most so many wait at once.
        let Ok(_waiting) = self.batches.clone().try_acquire_owned() else {
            let refusal = input::busy(
                format!("{LIVE_BATCHES_WAITING_MAX} batches are waiting for the session"),
                BUSY_RETRY_AFTER_MS,
            );
            return Err(refuse(&self.host(), &refusal, &shown()));
        };
        self.send(texts, true, &shown(), read).await
    }

    /// Where each source's read position stands: what a source resumes from.
    pub async fn positions(&self) -> Result<BTreeMap<String, String>, Refused> {
        let (reply, answer) = oneshot::channel();
        let asked = self.queue.send(Input::Positions { reply }).await;
        match (asked, answer.await) {
            (Ok(()), Ok(Ok(positions))) => Ok(positions),
            (Ok(()), Ok(Err(why))) => {
                let refusal = input::refusal("not_durable", why, Action::Retry);
                Err(refuse(&self.host(), &refusal, "positions"))
            }
            _ => Err(refuse(&self.host(), &closed(), "positions")),
        }
    }

    /// Hands `texts` to the session in their lane, taking a token of the rate bound when
    /// `bounded`; their answers. `shown`: the push as a refusal of it whole quotes it.
    async fn send(
        &self,
        texts: Vec<String>,
        bounded: bool,
        shown: &str,
        read: Option<ReadPosition>,
    ) -> Result<Vec<Result<Ack, Refused>>, Refused> {
        let urgent = {
            let tick_on = self.tick_on.read().unwrap_or_else(|p| p.into_inner());
            texts
                .iter()
                .any(|text| input::kind_of(text).is_some_and(|kind| tick_on.contains(&kind)))
        };
        // An unbounded front takes no token either: it leaves the bound to the others.
        if bounded && let Err(wait_ms) = self.take_token(urgent) {
            return Err(refuse(&self.host(), &input::too_fast(wait_ms), shown));
        }
        let (reply, answer) = oneshot::channel();
        let lane = match urgent {
            true => &self.urgent,
            false => &self.queue,
        };
        if let Err(error) = lane.try_send(Input::Signals {
            texts,
            reply,
            urgent,
            read,
        }) {
            let refusal = match error {
                mpsc::error::TrySendError::Full(_) => input::busy(
                    format!("{} pushes are waiting for the session", lane.max_capacity()),
                    BUSY_RETRY_AFTER_MS,
                ),
                mpsc::error::TrySendError::Closed(_) => closed(),
            };
            return Err(refuse(&self.host(), &refusal, shown));
        }
        answer
            .await
            .map_err(|_| refuse(&self.host(), &closed(), shown))
    }

    /// [`Live::push`] for a front that is one stream read in order, each input waiting for
    /// the answer to the one before (stdin): such a front has one input in flight at most, so
    /// it goes at the session's own pace (each input durable before the next is read, as a
    /// pipe's writer waits for its reader) and the rate bound, which is there for fronts with
    /// many senders at once (HTTP, an app's threads), neither paces nor refuses it.
    pub async fn push_in_order(&self, bytes: &[u8]) -> Result<Ack, Refused> {
        self.push_with(bytes, false, None).await
    }

    /// Takes a token of the rate bound (`urgent`: the reserved ones too), or says how many
    /// milliseconds until one is there.
    fn take_token(&self, urgent: bool) -> Result<(), u64> {
        match self.bucket.lock() {
            Ok(mut bucket) => bucket.take(urgent),
            Err(poisoned) => poisoned.into_inner().take(urgent),
        }
    }

    /// Refuses an input its front could not even read (a line longer than a signal may be,
    /// a body longer than a batch: `max` bytes), with what was read of it.
    pub fn refuse_unread(&self, bytes: u64, max: usize, start: &[u8]) -> Refused {
        let refusal = input::refusal(
            "too_large",
            format!("the input is {bytes} bytes or more, more than the {max} it may have"),
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
        let _ = self.urgent.send(Input::Stop).await;
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

/// A batch's answers as its fronts give them: `{"results": [{"ack": …} or {"refused": …},
/// …], "acked": n, "refused": m}`, in the batch's order.
pub fn batch_answers(results: Vec<Result<Ack, Refused>>) -> serde_json::Value {
    let acked = results.iter().filter(|result| result.is_ok()).count();
    let shown: Vec<serde_json::Value> = results
        .into_iter()
        .map(|result| match result {
            Ok(ack) => serde_json::json!({ "ack": ack }),
            Err(refused) => serde_json::json!({ "refused": refused }),
        })
        .collect();
    let refused = shown.len() - acked;
    serde_json::json!({ "results": shown, "acked": acked, "refused": refused })
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
        tracing::error!(error = %Caused(&error), "quarantine record could not be written");
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
