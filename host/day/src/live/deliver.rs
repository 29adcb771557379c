//! What goes out of a live session: each decision handed to the sinks that take its surface,
//! once, and never in a tick's way.
//!
//! It owns [`Delivery`] (a decision as a sink gets it, with an id that is the same however
//! often it is handed over), the [`Sink`] trait, the built-in sinks (JSON lines to a writer, a
//! command per surface), and the delivery of each sink in a task of its own: a bounded queue,
//! attempts with a growing wait, a durable record per delivery and sink
//! (`deliveries.jsonl`), and at start the decisions a sink was not yet handed (a session
//! killed mid-delivery hands them over again, never one already recorded). It must not decide
//! anything nor write a trace.

use aura_contract::caused::Caused;
use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;
use tokio::sync::mpsc;

use aura_contract::envelope::Surface;
use aura_contract::limits::{
    DELIVERIES_BYTES_MAX, LIVE_TRACES_BYTES_MAX, SINK_ATTEMPTS_MAX, SINK_COMMAND_TIMEOUT_MS,
    SINK_QUEUE_MAX, SINK_RETRY_AFTER_MS,
};
use aura_contract::trace::{Decision, Trace};
use aura_host::Host;
use aura_host::journal::{JournalError, TRACES_PATH};

use crate::logs::{DELIVERIES_PATH, RunLogs};

/// A decision as a sink gets it.
#[derive(Debug, Clone, Serialize)]
pub struct Delivery {
    /// `<run>:<trace_id>`: the same decision has the same id however often it is handed over,
    /// so a sink can keep its effect once.
    pub id: String,
    /// Its place among the run's decisions, from 0.
    pub seq: u64,
    /// Where it is shown.
    pub surface: Surface,
    /// What the surface shows or says.
    pub text: String,
    /// When it was decided (the tick's time, in the person's offset).
    pub at: String,
    /// For a question: its id, what an answer names (`{"question": id, "reply": "yes"}`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub question: Option<String>,
    /// Its reasoning trace (trace.v1), as recorded.
    pub trace: Value,
    /// Its place among the decisions of the session's life, from 0 (over all its days):
    /// `seq` plus the decisions of the days before.
    #[serde(skip)]
    pub life_seq: u64,
    /// The life's day it was decided in (`days/<day>/`); none for a session of one day.
    #[serde(skip)]
    pub day: Option<String>,
}

impl Delivery {
    /// The delivery of `trace`, the `seq`th decision of its run.
    pub fn of(trace: &Trace, seq: u64) -> Self {
        // A Trace holds only strings, integers, booleans and enums: it always serializes.
        let value = serde_json::to_value(trace).unwrap_or_default();
        let question = match trace.decision {
            Decision::Asked => trace.call.as_ref().map(|call| call.call_id.clone()),
            _ => None,
        };
        Self {
            id: format!("{}:{}", trace.run, trace.trace_id),
            seq,
            surface: trace.surface,
            text: trace.outcome.summary.clone(),
            at: trace.at.clone(),
            question,
            trace: value,
            life_seq: seq,
            day: None,
        }
    }

    /// The delivery of a trace read back from traces.jsonl (the `seq`th line); `None` for a
    /// line that is not a trace this host wrote.
    pub fn read(line: &str, seq: u64) -> Option<Self> {
        let trace: Value = serde_json::from_str(line).ok()?;
        let field = |name: &str| trace[name].as_str().map(str::to_owned);
        let surface: Surface = serde_json::from_value(trace["surface"].clone()).ok()?;
        let question = match trace["decision"].as_str() {
            Some("asked") => trace["call"]["call_id"].as_str().map(str::to_owned),
            _ => None,
        };
        Some(Self {
            id: format!("{}:{}", field("run")?, field("trace_id")?),
            seq,
            surface,
            text: trace["outcome"]["summary"].as_str()?.to_owned(),
            at: field("at")?,
            question,
            trace,
            life_seq: seq,
            day: None,
        })
    }

    /// This delivery in the life's day `day`, whose first decision is the life's `base`th.
    pub fn in_life(mut self, base: u64, day: Option<&str>) -> Self {
        self.life_seq = base + self.seq;
        self.day = day.map(str::to_owned);
        self
    }
}

/// A future a sink returns.
pub type Delivering<'a> = Pin<Box<dyn Future<Output = Result<(), String>> + Send + 'a>>;

/// Where decisions go: a surface's device, a pipe, an app's callback.
pub trait Sink: Send + Sync + 'static {
    /// Its name in delivery records (`stdout`, `on:WATCH`, …): stable across restarts.
    fn name(&self) -> &str;
    /// Whether it takes decisions shown on `surface`.
    fn takes(&self, surface: Surface) -> bool;
    /// Hands one decision over; an error is retried, then recorded.
    fn deliver<'a>(&'a self, delivery: &'a Delivery) -> Delivering<'a>;
}

/// JSON lines to a writer (stdout): every decision, `{"decision": …}` a line.
pub struct LinesSink<W> {
    name: String,
    out: std::sync::Mutex<W>,
}

impl<W: std::io::Write + Send + 'static> LinesSink<W> {
    /// A sink named `name` writing to `out`.
    pub fn new(name: &str, out: W) -> Self {
        Self {
            name: name.to_owned(),
            out: std::sync::Mutex::new(out),
        }
    }
}

impl<W: std::io::Write + Send + 'static> Sink for LinesSink<W> {
    fn name(&self) -> &str {
        &self.name
    }

    fn takes(&self, _: Surface) -> bool {
        true
    }

    fn deliver<'a>(&'a self, delivery: &'a Delivery) -> Delivering<'a> {
        Box::pin(async move {
            let line = serde_json::json!({ "decision": delivery }).to_string();
            let mut out = self.out.lock().unwrap_or_else(|p| p.into_inner());
            writeln!(out, "{line}")
                .and_then(|()| out.flush())
                .map_err(|e| e.to_string())
        })
    }
}

/// A command run for each decision on one surface (`--on WATCH='notify-send aura'`): `sh -c`
/// with the decision's text on stdin and `AURA_DELIVERY_ID`, `AURA_SURFACE`,
/// `AURA_QUESTION` in its environment, stopped after [`SINK_COMMAND_TIMEOUT_MS`]; a failure
/// is an exit status other than 0.
#[derive(Debug)]
pub struct CommandSink {
    name: String,
    surface: Surface,
    command: String,
}

impl CommandSink {
    /// The sink that runs `command` for decisions shown on `surface`.
    pub fn new(surface: Surface, command: &str) -> Self {
        Self {
            name: format!("on:{}", surface.as_str()),
            surface,
            command: command.to_owned(),
        }
    }

    async fn run(&self, delivery: &Delivery) -> Result<(), String> {
        use tokio::io::AsyncWriteExt;
        let mut child = tokio::process::Command::new("sh")
            .arg("-c")
            .arg(&self.command)
            .env("AURA_DELIVERY_ID", &delivery.id)
            .env("AURA_SURFACE", delivery.surface.as_str())
            .env("AURA_QUESTION", delivery.question.as_deref().unwrap_or(""))
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| format!("cannot start `{}`: {e}", self.command))?;
        if let Some(mut stdin) = child.stdin.take() {
            // A command that does not read its stdin is not a failure.
            let _ = stdin.write_all(delivery.text.as_bytes()).await;
            let _ = stdin.write_all(b"\n").await;
        }
        let timeout = std::time::Duration::from_millis(SINK_COMMAND_TIMEOUT_MS);
        match tokio::time::timeout(timeout, child.wait_with_output()).await {
            Err(_) => Err(format!(
                "`{}` ran past {SINK_COMMAND_TIMEOUT_MS} ms",
                self.command
            )),
            Ok(Err(e)) => Err(format!("`{}`: {e}", self.command)),
            Ok(Ok(output)) if output.status.success() => Ok(()),
            Ok(Ok(output)) => {
                let said = String::from_utf8_lossy(&output.stderr);
                let said: String = aura_contract::visible::visible(said.trim())
                    .chars()
                    .take(200)
                    .collect();
                Err(format!(
                    "`{}` exited with {}: {said}",
                    self.command, output.status
                ))
            }
        }
    }
}

impl Sink for CommandSink {
    fn name(&self) -> &str {
        &self.name
    }

    fn takes(&self, surface: Surface) -> bool {
        surface == self.surface
    }

    fn deliver<'a>(&'a self, delivery: &'a Delivery) -> Delivering<'a> {
        Box::pin(self.run(delivery))
    }
}

/// One delivery record (`deliveries.jsonl`).
#[derive(Debug, Serialize)]
struct Record<'a> {
    delivery: &'a str,
    seq: u64,
    sink: &'a str,
    /// `delivered`, or `failed` (given up on after its attempts, or never queued).
    status: &'static str,
    attempts: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

/// A sink and the queue its task takes deliveries from.
type Fed = (Arc<dyn Sink>, mpsc::Sender<Arc<Delivery>>);

/// The sinks of a session, each fed by a task of its own.
pub(crate) struct Deliveries {
    sinks: Vec<Fed>,
    /// Per sink, the last seq handed to it (none: nothing yet).
    handed: Vec<Option<u64>>,
    host: Host,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl Deliveries {
    /// Starts a task per sink, and hands each the decisions of the run it was not handed
    /// before (those after the last one its records name); the run is the life's `day`, its
    /// first decision the life's `life_base`th.
    pub(crate) fn start(
        host: &Host,
        sinks: Vec<Arc<dyn Sink>>,
        life_base: u64,
        day: Option<&str>,
    ) -> Result<Self, JournalError> {
        let journal = host.journal();
        let mut recorded: BTreeMap<String, u64> = BTreeMap::new();
        for line in journal.lines(DELIVERIES_PATH, 0, DELIVERIES_BYTES_MAX)? {
            let Ok(record) = serde_json::from_str::<Value>(&line) else {
                continue;
            };
            if let (Some(sink), Some(seq)) = (record["sink"].as_str(), record["seq"].as_u64()) {
                let last = recorded.entry(sink.to_owned()).or_insert(seq);
                *last = (*last).max(seq);
            }
        }
        let mut deliveries = Self {
            sinks: Vec::new(),
            handed: Vec::new(),
            host: host.clone(),
            tasks: Vec::new(),
        };
        for sink in sinks {
            let (sender, receiver) = mpsc::channel(SINK_QUEUE_MAX);
            deliveries
                .tasks
                .push(tokio::spawn(feed(host.clone(), sink.clone(), receiver)));
            deliveries.handed.push(recorded.get(sink.name()).copied());
            deliveries.sinks.push((sink, sender));
        }
        let from = deliveries
            .handed
            .iter()
            .map(|h| h.map_or(0, |seq| seq + 1))
            .min()
            .unwrap_or(0);
        let lines = journal.lines(TRACES_PATH, from as usize, LIVE_TRACES_BYTES_MAX)?;
        for (offset, line) in lines.iter().enumerate() {
            let seq = from + offset as u64;
            match Delivery::read(line, seq) {
                Some(delivery) => deliveries.hand(delivery.in_life(life_base, day)),
                // The journal checked each trace against trace.v1 before writing it.
                None => tracing::error!(
                    seq,
                    "a trace in traces.jsonl is not one this host wrote; not handed over"
                ),
            }
        }
        Ok(deliveries)
    }

    /// Hands `delivery` to every sink that takes its surface and was not handed it yet,
    /// without waiting: a sink whose queue is full gets a failure record instead.
    pub(crate) fn hand(&mut self, delivery: Delivery) {
        let delivery = Arc::new(delivery);
        for ((sink, sender), handed) in self.sinks.iter().zip(self.handed.iter_mut()) {
            if handed.is_some_and(|seq| delivery.seq <= seq) || !sink.takes(delivery.surface) {
                continue;
            }
            *handed = Some(delivery.seq);
            if sender.try_send(delivery.clone()).is_err() {
                record(
                    &self.host,
                    &delivery,
                    sink.name(),
                    0,
                    Some(format!("{SINK_QUEUE_MAX} decisions were waiting for it")),
                );
            }
        }
    }

    /// Waits until every sink has taken what it was handed (the end of a session).
    pub(crate) async fn finish(self) {
        drop(self.sinks);
        for task in self.tasks {
            let _ = task.await;
        }
    }
}

/// One sink's task: each delivery attempted until it succeeds or its attempts run out, then
/// recorded.
async fn feed(host: Host, sink: Arc<dyn Sink>, mut queue: mpsc::Receiver<Arc<Delivery>>) {
    while let Some(delivery) = queue.recv().await {
        let mut wait_ms = SINK_RETRY_AFTER_MS;
        let mut attempts = 0;
        let error = loop {
            attempts += 1;
            match sink.deliver(&delivery).await {
                Ok(()) => break None,
                Err(error) if attempts >= SINK_ATTEMPTS_MAX => break Some(error),
                Err(error) => {
                    tracing::warn!(sink = sink.name(), delivery = %delivery.id, %error, "delivery failed; trying again");
                    tokio::time::sleep(std::time::Duration::from_millis(wait_ms)).await;
                    wait_ms *= 2;
                }
            }
        };
        record(&host, &delivery, sink.name(), attempts, error);
    }
}

/// Records what became of `delivery` at `sink` (failed when `error`).
fn record(host: &Host, delivery: &Delivery, sink: &str, attempts: u32, error: Option<String>) {
    if let Some(error) = &error {
        tracing::error!(sink, delivery = %delivery.id, %error, "decision not delivered");
    }
    let record = Record {
        delivery: &delivery.id,
        seq: delivery.seq,
        sink,
        status: match error {
            None => "delivered",
            Some(_) => "failed",
        },
        attempts,
        error,
    };
    // Strings and integers: always serializes.
    let value = serde_json::to_value(&record).unwrap_or_default();
    if let Err(error) = host.journal().delivery(&value) {
        tracing::error!(error = %Caused(&error), "delivery record not written; the decision is handed over again at the next start");
    }
}
