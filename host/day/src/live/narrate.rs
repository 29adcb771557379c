//! A live session's narrations: the novel cases of its decisions narrated in the background, as
//! the day goes on, never on a tick's budget.
//!
//! It owns when a narration pass runs in a session: after each tick that recorded a decision, a
//! pass of the day's own ([`crate::narration::narrate_run`]: traces.jsonl in order, the cases
//! not narrated yet, one at a time off the executor, each record durable in narrations.jsonl
//! before it is told); one pass at a time, and another after it when decisions came meanwhile.
//! Each record goes to the session's subscribers as it is written (a kept one is the rationale
//! that replaces the template where a person reads it). A session on a replayed clock waits for
//! its passes at its end, so it leaves the narrations `aura run --narrate` leaves; one stopped
//! gives the running pass [`LIVE_STOP_WAIT_MS`], then stops the narrator (its narration ends
//! within an epoch tick, unrecorded) and leaves the rest to the next start, which narrates what
//! has no record. It must not judge a narration nor change a trace.

use aura_contract::caused::Caused;
use std::sync::Arc;

use tokio::sync::broadcast;
use tokio::task::JoinHandle;

use aura_contract::limits::LIVE_STOP_WAIT_MS;
use aura_contract::trace::narration::NarrationRecord;
use aura_host::{Host, Narrator};

use crate::narration::{NarrationError, NarrationSummary, narrate_run};

/// A session's narrator and how many novel cases of its run it narrates at most.
#[derive(Debug, Clone)]
pub struct LiveNarration {
    /// The narrator (the host's: [`Host::narrator`]).
    pub narrator: Arc<Narrator>,
    /// Novel cases narrated at most over the run (capped at
    /// [`aura_contract::limits::NARRATIONS_PER_RUN_MAX`]).
    pub max: usize,
}

type Pass = JoinHandle<Result<NarrationSummary, NarrationError>>;

/// How a pass ended.
pub(super) type Ended = Result<Result<NarrationSummary, NarrationError>, tokio::task::JoinError>;

/// The end of `narrating`'s running pass; pending forever when it has none or the session does
/// not narrate (a branch of the session's wait that never fires).
pub(super) async fn running(narrating: Option<&mut Narrating>) -> Ended {
    match narrating {
        Some(narrating) => narrating.running().await,
        None => std::future::pending().await,
    }
}

/// The passes of one session.
pub(super) struct Narrating {
    config: LiveNarration,
    host: Host,
    records: broadcast::Sender<Arc<NarrationRecord>>,
    /// The pass running now.
    pass: Option<Pass>,
    /// Decisions were recorded after the running pass read traces.jsonl.
    again: bool,
}

impl Narrating {
    pub(super) fn new(
        config: LiveNarration,
        host: &Host,
        records: broadcast::Sender<Arc<NarrationRecord>>,
    ) -> Self {
        Self {
            config,
            host: host.clone(),
            records,
            pass: None,
            again: false,
        }
    }

    /// Decisions were recorded: a pass starts now, or after the one running.
    pub(super) fn decided(&mut self) {
        match &self.pass {
            Some(_) => self.again = true,
            None => self.start(),
        }
    }

    fn start(&mut self) {
        let (host, narrator, records) = (
            self.host.clone(),
            self.config.narrator.clone(),
            self.records.clone(),
        );
        let max = self.config.max;
        self.again = false;
        self.pass = Some(tokio::spawn(async move {
            narrate_run(&host, narrator, max, |record| {
                // Nobody listening is no error: the record is in narrations.jsonl.
                let _ = records.send(Arc::new(record.clone()));
            })
            .await
        }));
    }

    /// The running pass's end (pending while none runs): hand it to [`Self::ended`].
    async fn running(&mut self) -> Ended {
        match &mut self.pass {
            Some(pass) => pass.await,
            None => std::future::pending().await,
        }
    }

    /// A pass ended: the next starts if decisions came meanwhile. A pass that failed (the
    /// journal, a thread) is logged: the session goes on, and the next pass narrates what has
    /// no record.
    pub(super) fn ended(&mut self, outcome: Ended) {
        self.pass = None;
        match outcome {
            Ok(Ok(summary)) => tracing::info!(
                narrated = summary.narrated,
                kept = summary.kept,
                "narration pass done"
            ),
            Ok(Err(error)) => tracing::error!(error = %Caused(&error), "narration pass stopped"),
            Err(error) => tracing::error!(error = %Caused(&error), "narration pass did not finish"),
        }
        if self.again {
            self.start();
        }
    }

    /// At the session's end: on a replayed clock, every pass runs to its end (`all`); else the
    /// running one gets [`LIVE_STOP_WAIT_MS`], then the narrator is stopped, and what it has
    /// not written is narrated at the next start.
    pub(super) async fn finish(&mut self, all: bool) {
        if !all {
            if self.pass.is_none() {
                return;
            }
            self.again = false;
            let wait = std::time::Duration::from_millis(LIVE_STOP_WAIT_MS);
            if let Ok(outcome) = tokio::time::timeout(wait, self.running()).await {
                self.ended(outcome);
                return;
            }
            tracing::warn!("a narration is still running at stop: the next start narrates it");
            self.config.narrator.stop();
            match tokio::time::timeout(wait, self.running()).await {
                Ok(outcome) => self.ended(outcome),
                Err(_) => {
                    if let Some(pass) = self.pass.take() {
                        pass.abort();
                    }
                }
            }
            return;
        }
        while self.pass.is_some() {
            let outcome = self.running().await;
            self.ended(outcome);
        }
    }
}
