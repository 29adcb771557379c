//! The journal's logs a run opens once it holds the data dir's run lock, not when the journal
//! is opened: a live session's signals and deliveries, and the narrator's records. It owns
//! opening them (a torn last line repaired: their tails are the lock holder's) and appending to
//! them, durable before a write returns. It must not decide what they hold.

use super::log::{Appended, Log};
use super::{DELIVERIES_PATH, Journal, JournalError, NARRATIONS_PATH, SIGNALS_PATH};

impl Journal {
    /// Opens (creating) a live session's logs, repairing a torn last line. The session calls
    /// it once it holds the run lock ([`Journal::lock_run`]): their tails are its own.
    pub fn open_live(&self) -> Result<(), JournalError> {
        if self.live.get().is_some() {
            return Ok(());
        }
        let logs = [
            Log::open(&self.dir, SIGNALS_PATH, false, true, self.faults.clone())?,
            Log::open(&self.dir, DELIVERIES_PATH, false, true, self.faults.clone())?,
        ];
        self.synced()?;
        // Only the session that holds the run lock opens them; a second call keeps the first.
        let _ = self.live.set(logs);
        Ok(())
    }

    /// Opens (creating) the narrations log, repairing a torn last line: by the run that holds
    /// the run lock, after the data dir's earlier run was set aside.
    pub fn open_narrations(&self) -> Result<(), JournalError> {
        if self.narrations.get().is_some() {
            return Ok(());
        }
        let log = Log::open(&self.dir, NARRATIONS_PATH, false, true, self.faults.clone())?;
        self.synced()?;
        let _ = self.narrations.set(log);
        Ok(())
    }

    /// Syncs the data dir's entries, so a log just created survives a crash.
    fn synced(&self) -> Result<(), JournalError> {
        self.sync_dir().map_err(|source| JournalError::Open {
            path: ".".to_owned(),
            source,
        })
    }

    /// Appends one narration record, durable before this returns.
    pub fn narration(&self, record: &serde_json::Value) -> Result<Appended, JournalError> {
        self.narrations_log()?.append_value(record)
    }

    pub(super) fn narrations_log(&self) -> Result<&Log, JournalError> {
        self.narrations.get().ok_or_else(|| JournalError::Open {
            path: NARRATIONS_PATH.to_owned(),
            source: std::io::Error::other("the narrations log is not open"),
        })
    }

    /// The live log at `path`, once [`Journal::open_live`] opened it.
    pub(super) fn live_log(&self, path: &'static str) -> Result<&Log, JournalError> {
        self.live
            .get()
            .and_then(|logs| logs.iter().find(|log| log.path == path))
            .ok_or_else(|| JournalError::Open {
                path: path.to_owned(),
                source: std::io::Error::other("the live logs are not open"),
            })
    }

    /// Appends one acknowledged signal (a scenario.v1 signal), durable before this returns.
    pub fn signal(&self, signal: &serde_json::Value) -> Result<Appended, JournalError> {
        self.live_log(SIGNALS_PATH)?.append_value(signal)
    }

    /// Appends one delivery record, durable before this returns.
    pub fn delivery(&self, record: &serde_json::Value) -> Result<Appended, JournalError> {
        self.live_log(DELIVERIES_PATH)?.append_value(record)
    }
}
