//! aura embedded in an app: the live assistant as a library.
//!
//! It owns [`Assistant`]: one person's live session on a runtime of its own (open it with a
//! setup, a data dir and a plugins dir; push signals and answers, each acknowledged once
//! durable or refused with recovery.v1; get each decision through a callback, and with
//! `narrate` each narration record through another; close it), and
//! the C ABI over it ([`ffi`], the header `include/aura.h`) for apps in Kotlin, Swift, C or
//! Python. It must not decide, check or journal anything itself: the session
//! ([`aura_day::live`]) does, exactly as `aura live` runs it.

#![warn(missing_docs)]

pub mod ffi;

use aura_contract::caused::{Caused, caused};
use std::path::PathBuf;
use std::sync::Arc;

use aura_contract::trace::narration::NarrationRecord;
use aura_day::live::{self, Clock, Live, LiveConfig, LiveError, LiveNarration, Sink};
use aura_day::orchestrator::{RunEvent, RunSummary, Start};
use aura_host::{Host, HostConfig};

pub use aura_day::live::{Ack, Delivery, Refused};

/// The C header of the ABI, as the build wrote it (`include/aura.h` is a copy of it).
pub const HEADER: &str = env!("AURA_EMBED_HEADER");

/// How an app opens its assistant (the C ABI takes it as JSON).
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AssistantConfig {
    /// The setup: a live.v1 file, or a scenario (with a replayed clock, its start and end).
    pub setup: PathBuf,
    /// Where the session keeps its journal, checkpoint and deliveries.
    pub data_dir: PathBuf,
    /// The agents' components (on a phone, precompiled for it).
    pub plugins_dir: PathBuf,
    /// The compilation cache (default: in the data dir).
    #[serde(default)]
    pub cache_dir: Option<PathBuf>,
    /// `wall` (default), `replay` or `replay:SPEED` ([`Clock`]).
    #[serde(default = "wall")]
    pub clock: String,
    /// The kinds that tick at once (default: the setup's, else the live default); empty: none.
    #[serde(default)]
    pub tick_on: Option<Vec<String>>,
    /// Seed of the agents' random sources.
    #[serde(default)]
    pub seed: u64,
    /// Set the data dir's session aside and start over, instead of resuming it.
    #[serde(default)]
    pub fresh: bool,
    /// Narrate the novel cases of its decisions in the background (the plugins dir's
    /// narrator), each record to [`Assistant::on_narration`]'s callback.
    #[serde(default)]
    pub narrate: bool,
    /// With `narrate`: at most this many novel cases of the run (default and cap:
    /// [`aura_contract::limits::NARRATIONS_PER_RUN_MAX`]).
    #[serde(default)]
    pub narrations: Option<usize>,
}

fn wall() -> String {
    "wall".to_owned()
}

/// Why an assistant could not open, or ended badly.
#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    /// The configuration is not usable.
    #[error("the assistant's configuration: {0}")]
    Config(String),
    /// The assistant's runtime could not start.
    #[error("cannot start the assistant's runtime")]
    Runtime(#[from] std::io::Error),
    /// The host could not open (its plugins, its data dir).
    #[error("cannot open the host: {0}")]
    Host(String),
    /// Another assistant holds this data dir's life (an app opened twice, or a process that
    /// still runs): nothing was changed.
    #[error(
        "another assistant holds this data dir's life (its store is open elsewhere): close it, or open another data dir"
    )]
    Busy,
    /// The session could not start, or stopped on an error.
    #[error(transparent)]
    Live(#[from] LiveError),
    /// The session's task ended without an answer (a defect: it panicked).
    #[error("the assistant's session ended abnormally: {0}")]
    Ended(String),
}

impl EmbedError {
    /// What kind of failure it is, as the C ABI names it (`{"error": …, "kind": …}`): `busy`
    /// (another assistant holds the life: wait for it or close it), `config`, `runtime`,
    /// `host`, `live`, `ended`.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Config(_) => "config",
            Self::Runtime(_) => "runtime",
            Self::Host(_) => "host",
            Self::Busy => "busy",
            Self::Live(_) => "live",
            Self::Ended(_) => "ended",
        }
    }
}

/// A decision callback as the session holds it.
type OnDecision = Arc<dyn Fn(&Delivery) + Send + Sync>;

/// Hands each decision to the app's callback, on a thread of its own (a callback may block).
struct Callback(OnDecision);

impl Sink for Callback {
    fn name(&self) -> &str {
        "app"
    }

    fn takes(&self, _: aura_contract::envelope::Surface) -> bool {
        true
    }

    fn deliver<'a>(&'a self, delivery: &'a Delivery) -> live::deliver::Delivering<'a> {
        let callback = self.0.clone();
        let delivery = delivery.clone();
        Box::pin(async move {
            tokio::task::spawn_blocking(move || callback(&delivery))
                .await
                .map_err(|e| format!("the app's callback failed: {e}"))
        })
    }
}

/// The session's narration records, from its start until an app takes them.
type Narrations = tokio::sync::broadcast::Receiver<Arc<NarrationRecord>>;

/// One person's live assistant, running until it is closed.
pub struct Assistant {
    runtime: tokio::runtime::Runtime,
    live: Live,
    session: Option<tokio::task::JoinHandle<Result<RunSummary, LiveError>>>,
    /// Subscribed before the session started, so [`Self::on_narration`] misses none.
    narrations: std::sync::Mutex<Option<Narrations>>,
    /// The task handing them to the app, and how to tell it the session ended.
    handing: std::sync::Mutex<
        Option<(
            tokio::sync::oneshot::Sender<()>,
            tokio::task::JoinHandle<()>,
        )>,
    >,
}

impl std::fmt::Debug for Assistant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Assistant").finish_non_exhaustive()
    }
}

/// The live session `config` describes on `host`: its setup, when it ticks, fresh or resumed,
/// and the narrator when it narrates.
fn session_config(
    config: &AssistantConfig,
    host: &Host,
    clock: Clock,
) -> Result<LiveConfig, EmbedError> {
    let mut live_config =
        LiveConfig::load(&config.setup, host.crossing().schemas(), config.seed, clock)?;
    live_config.tick_on = config.tick_on.clone();
    live_config.start = match config.fresh {
        true => Start::Fresh,
        false => Start::Resume,
    };
    if config.narrate {
        let narrator = host
            .narrator()
            .map_err(|e| EmbedError::Host(format!("the narrator: {}", Caused(&e))))?;
        live_config.narration = Some(LiveNarration {
            narrator: Arc::new(narrator),
            max: config
                .narrations
                .unwrap_or(aura_contract::limits::NARRATIONS_PER_RUN_MAX),
        });
    }
    Ok(live_config)
}

impl Assistant {
    /// Opens the session `config` describes (resuming the data dir's, unless `fresh`) and
    /// returns once it has started; each decision then goes to `on_decision` (with an id a
    /// decision keeps however often it is handed over: at least once, never lost).
    pub fn open(
        config: AssistantConfig,
        on_decision: impl Fn(&Delivery) + Send + Sync + 'static,
    ) -> Result<Self, EmbedError> {
        let clock = Clock::parse(&config.clock).ok_or_else(|| {
            EmbedError::Config(format!(
                "clock `{}`: wall, replay or replay:SPEED",
                config.clock
            ))
        })?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("aura")
            .enable_all()
            .build()?;
        let mut host_config = HostConfig::new(&config.plugins_dir, &config.data_dir);
        host_config.guest_seed = config.seed;
        host_config.cache_dir = config.cache_dir.clone();
        let host = runtime
            .block_on(Host::open(&host_config))
            .map_err(|e| EmbedError::Host(caused(&e)))?;
        let live_config = session_config(&config, &host, clock)?;
        let (handle, inbox) = live::channel(&host);
        let narrations = std::sync::Mutex::new(Some(handle.narrations()));
        let sinks: Vec<Arc<dyn Sink>> = vec![Arc::new(Callback(Arc::new(on_decision)))];
        let (started, starting) = tokio::sync::oneshot::channel();
        let session = runtime.spawn(async move {
            let mut started = Some(started);
            live::live(&host, live_config, sinks, inbox, move |event| {
                if let RunEvent::Started { .. } = event
                    && let Some(started) = started.take()
                {
                    let _ = started.send(());
                }
            })
            .await
        });
        let mut assistant = Self {
            runtime,
            live: handle,
            session: Some(session),
            narrations,
            handing: std::sync::Mutex::new(None),
        };
        // It started, or it ended before (the setup, the data dir, a life held elsewhere): say
        // why.
        if assistant.runtime.block_on(starting).is_err() {
            return Err(
                match assistant
                    .wait()
                    .err()
                    .unwrap_or_else(|| EmbedError::Ended("it ended before it started".to_owned()))
                {
                    EmbedError::Live(LiveError::Store(aura_day::store::StoreError::Busy)) => {
                        EmbedError::Busy
                    }
                    error => error,
                },
            );
        }
        Ok(assistant)
    }

    /// Hands each narration record (a session opened with `narrate`), from the session's start,
    /// to `on_narration`, one at a time on a thread of the library's, once it is durable in
    /// narrations.jsonl: a kept one's `rationale` replaces its decision's template. Once per
    /// assistant: a second call is a configuration error.
    pub fn on_narration(
        &self,
        on_narration: impl Fn(&NarrationRecord) + Send + Sync + 'static,
    ) -> Result<(), EmbedError> {
        use tokio::sync::broadcast::error::RecvError;
        let taken = self.narrations.lock().ok().and_then(|mut held| held.take());
        let Some(mut records) = taken else {
            return Err(EmbedError::Config(
                "the narration callback is already set".to_owned(),
            ));
        };
        let callback = Arc::new(on_narration);
        let hand = move |record: Arc<NarrationRecord>| {
            let callback = callback.clone();
            async move {
                let called = tokio::task::spawn_blocking(move || callback(&record)).await;
                if let Err(error) = called {
                    tracing::error!(error = %Caused(&error), "the app's narration callback failed");
                }
            }
        };
        let (ended, mut end) = tokio::sync::oneshot::channel::<()>();
        let task = self.runtime.spawn(async move {
            loop {
                tokio::select! {
                    biased;
                    received = records.recv() => match received {
                        Ok(record) => hand(record).await,
                        Err(RecvError::Lagged(missed)) => tracing::warn!(
                            missed,
                            "narrations not handed to the app (all are in narrations.jsonl)"
                        ),
                        Err(RecvError::Closed) => return,
                    },
                    // The session ended: what it told is handed over, then this ends.
                    _ = &mut end => {
                        while let Ok(record) = records.try_recv() {
                            hand(record).await;
                        }
                        return;
                    }
                }
            }
        });
        if let Ok(mut handing) = self.handing.lock() {
            *handing = Some((ended, task));
        }
        Ok(())
    }

    /// Pushes one signal (a scenario.v1 signal as JSON; `at` and `id` optional): its
    /// acknowledgement once it is durable, or its refusal (quarantined).
    pub fn push(&self, signal_json: &str) -> Result<Ack, Refused> {
        self.runtime
            .block_on(self.live.push(signal_json.as_bytes()))
    }

    /// Pushes a batch of signals (a JSON array of them, or NDJSON: one a line; at most
    /// `LIVE_BATCH_SIGNALS_MAX`): one answer each, in order (an acknowledgement or a
    /// refusal, quarantined), once every signal taken is durable, journaled with one fsync;
    /// refused whole when it cannot be read as a batch, is too large, or the assistant is
    /// busy. A backlog (a week of a watch's readings) goes in as one.
    pub fn push_batch(&self, batch: &str) -> Result<Vec<Result<Ack, Refused>>, Refused> {
        let form = aura_day::live::BatchForm::of(batch.as_bytes())
            .unwrap_or(aura_day::live::BatchForm::Ndjson);
        self.runtime
            .block_on(self.live.push_batch(batch.as_bytes(), form))
    }

    /// Pushes what a source read (a mailbox, a calendar, a statement folder: `batch` as for
    /// [`Self::push_batch`], maybe empty) with the position it read up to (`position`, as the
    /// source names it: an IMAP UIDVALIDITY and UID, a sync token, a file's digest): the
    /// position is durable with the batch's signals, in the same write, so after a crash or a
    /// kill the source resumes from [`Self::positions`] and nothing it read is lost or taken
    /// twice.
    pub fn push_read(
        &self,
        batch: &str,
        source: &str,
        position: &str,
    ) -> Result<Vec<Result<Ack, Refused>>, Refused> {
        let form = aura_day::live::BatchForm::of(batch.as_bytes())
            .unwrap_or(aura_day::live::BatchForm::Ndjson);
        let read = aura_day::store::ReadPosition {
            source: source.to_owned(),
            position: position.to_owned(),
        };
        self.runtime
            .block_on(self.live.push_read(batch.as_bytes(), form, Some(read)))
    }

    /// Where each source's read position stands (what it resumes from after a restart).
    pub fn positions(&self) -> Result<std::collections::BTreeMap<String, String>, Refused> {
        self.runtime.block_on(self.live.positions())
    }

    /// Answers a question (`yes`, `no` or `later`) by its id, as a decision gave it.
    pub fn answer(&self, question: &str, reply: &str) -> Result<Ack, Refused> {
        let signal = serde_json::json!({"kind": "answer",
            "data": {"question": question, "reply": reply}});
        self.push(&signal.to_string())
    }

    /// Says no more input will come: a replayed day then runs to its end.
    pub fn end_input(&self) {
        self.runtime.block_on(self.live.close());
    }

    /// Ends the input and waits for the session to end by itself (a replayed day's end).
    pub fn finish(mut self) -> Result<RunSummary, EmbedError> {
        self.end_input();
        self.wait()
    }

    /// Stops the session (it finishes the tick it is in and checkpoints) and closes it.
    pub fn close(mut self) -> Result<RunSummary, EmbedError> {
        self.runtime.block_on(self.live.stop());
        self.wait()
    }

    /// Waits for the session's task, and its answer.
    fn wait(&mut self) -> Result<RunSummary, EmbedError> {
        let Some(session) = self.session.take() else {
            return Err(EmbedError::Ended("already closed".to_owned()));
        };
        let ended = self.runtime.block_on(session);
        let handing = self
            .handing
            .lock()
            .ok()
            .and_then(|mut handing| handing.take());
        if let Some((end, task)) = handing {
            let _ = end.send(());
            let _ = self.runtime.block_on(task);
        }
        match ended {
            Ok(summary) => Ok(summary?),
            Err(joined) => Err(EmbedError::Ended(joined.to_string())),
        }
    }
}

impl Drop for Assistant {
    /// An assistant dropped unclosed is stopped: the tick it is in finishes and checkpoints.
    fn drop(&mut self) {
        if self.session.is_some() {
            self.runtime.block_on(self.live.stop());
            let _ = self.wait();
        }
    }
}
