//! A run's own logs in its data dir, beside the host's quarantine and traces: a live session's
//! signals and deliveries, and the narrator's records. It owns their names and what each is
//! opened with and appended to, as the journal's side logs ([`aura_host::journal::Journal`]
//! writes them durably and knows nothing of what they are). It must not decide what a record
//! holds (the live session and the narration pass do).

use aura_host::journal::{Appended, Journal, JournalError};

/// A live session's signals and answers as it acknowledged them, each a scenario.v1 signal:
/// the day it lives, in the order it took them.
pub const SIGNALS_PATH: &str = "signals.jsonl";
/// The narrator's records: one per novel case narrated, after its trace (kept, discarded or
/// failed; a kept one's text replaces the trace's template rationale where a person reads it).
pub const NARRATIONS_PATH: &str = "narrations.jsonl";
/// What a live session's sinks were handed: one record per delivery and sink, once it was
/// delivered or given up on.
pub const DELIVERIES_PATH: &str = "deliveries.jsonl";

/// A live session's logs.
const LIVE_LOGS: [&str; 2] = [SIGNALS_PATH, DELIVERIES_PATH];

/// A run's logs on its host's journal.
pub trait RunLogs {
    /// Opens (creating) a live session's logs, repairing a torn last line: by the session
    /// that holds the run lock ([`Journal::lock_run`]), whose tails they are.
    fn open_live(&self) -> Result<(), JournalError>;
    /// Opens (creating) the narrations log: by the run that holds the run lock, after the
    /// data dir's earlier run was set aside.
    fn open_narrations(&self) -> Result<(), JournalError>;
    /// Appends one acknowledged signal (a scenario.v1 signal), durable before this returns.
    fn signal(&self, signal: &serde_json::Value) -> Result<Appended, JournalError>;
    /// Appends acknowledged signals, all durable (one write, one sync) before this returns.
    fn signals(&self, signals: &[serde_json::Value]) -> Result<(), JournalError>;
    /// Appends one delivery record, durable before this returns.
    fn delivery(&self, record: &serde_json::Value) -> Result<Appended, JournalError>;
    /// Appends one narration record, durable before this returns.
    fn narration(&self, record: &serde_json::Value) -> Result<Appended, JournalError>;
}

impl RunLogs for Journal {
    fn open_live(&self) -> Result<(), JournalError> {
        self.open_logs(&LIVE_LOGS)
    }

    fn open_narrations(&self) -> Result<(), JournalError> {
        self.open_logs(&[NARRATIONS_PATH])
    }

    fn signal(&self, signal: &serde_json::Value) -> Result<Appended, JournalError> {
        self.append(SIGNALS_PATH, signal)
    }

    fn signals(&self, signals: &[serde_json::Value]) -> Result<(), JournalError> {
        self.append_all(SIGNALS_PATH, signals)
    }

    fn delivery(&self, record: &serde_json::Value) -> Result<Appended, JournalError> {
        self.append(DELIVERIES_PATH, record)
    }

    fn narration(&self, record: &serde_json::Value) -> Result<Appended, JournalError> {
        self.append(NARRATIONS_PATH, record)
    }
}
