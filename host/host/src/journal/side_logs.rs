//! The journal's side logs: logs beside the quarantine and the traces that a run names and
//! opens once it holds the data dir's run lock, not when the journal is opened (a live
//! session's signals and deliveries, the narrator's records: the day crate names them). It owns
//! opening them (a torn last line repaired: their tails are the lock holder's) and appending to
//! them, durable before a write returns. It must not decide what they are called or hold.

use std::sync::Arc;

use super::log::{Appended, Log};
use super::{Journal, JournalError, QUARANTINE_PATH, TRACES_PATH};

impl Journal {
    /// Opens (creating) the side logs `paths` that are not open yet, repairing a torn last
    /// line. A run calls it once it holds the run lock ([`Journal::lock_run`]): their tails
    /// are its own. A log opened before stays as it is.
    pub fn open_logs(&self, paths: &[&'static str]) -> Result<(), JournalError> {
        let mut side = self.side.lock().unwrap_or_else(|p| p.into_inner());
        let mut opened = false;
        for &path in paths {
            if path == TRACES_PATH || path == QUARANTINE_PATH {
                return Err(JournalError::Open {
                    path: path.to_owned(),
                    source: std::io::Error::other("the journal opens it itself"),
                });
            }
            if side.iter().any(|log| log.path == path) {
                continue;
            }
            let log = Log::open(&self.dir, path, false, true, self.faults.clone())?;
            side.push(Arc::new(log));
            opened = true;
        }
        drop(side);
        match opened {
            true => self.synced(),
            false => Ok(()),
        }
    }

    /// Syncs the data dir's entries, so a log just created survives a crash.
    fn synced(&self) -> Result<(), JournalError> {
        self.sync_dir().map_err(|source| JournalError::Open {
            path: ".".to_owned(),
            source,
        })
    }

    /// Appends one record to the side log `path`, durable before this returns.
    pub fn append(
        &self,
        path: &'static str,
        record: &serde_json::Value,
    ) -> Result<Appended, JournalError> {
        self.side_log(path)?.append_value(record)
    }

    /// Appends records to the side log `path`, as one write and one sync: all durable
    /// before this returns, or (it failed) none kept.
    pub fn append_all(
        &self,
        path: &'static str,
        records: &[serde_json::Value],
    ) -> Result<(), JournalError> {
        self.side_log(path)?.append_values(records)
    }

    /// The side log at `path`, once [`Journal::open_logs`] opened it.
    pub(super) fn side_log(&self, path: &str) -> Result<Arc<Log>, JournalError> {
        let side = self.side.lock().unwrap_or_else(|p| p.into_inner());
        side.iter()
            .find(|log| log.path == path)
            .cloned()
            .ok_or_else(|| JournalError::Open {
                path: path.to_owned(),
                source: std::io::Error::other("the log is not open"),
            })
    }

    /// The log at `path`: the traces, the quarantine, or an open side log.
    pub(super) fn log_at(&self, path: &str) -> Result<LogAt<'_>, JournalError> {
        Ok(match path {
            super::TRACES_PATH => LogAt::Own(&self.traces),
            super::QUARANTINE_PATH => LogAt::Own(&self.quarantine),
            _ => LogAt::Side(self.side_log(path)?),
        })
    }

    /// The side logs open now.
    pub(super) fn side_logs(&self) -> Vec<Arc<Log>> {
        self.side.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

/// One of a journal's logs.
pub(super) enum LogAt<'a> {
    /// The traces or the quarantine.
    Own(&'a Log),
    /// A side log.
    Side(Arc<Log>),
}

impl std::ops::Deref for LogAt<'_> {
    type Target = Log;
    fn deref(&self) -> &Log {
        match self {
            Self::Own(log) => log,
            Self::Side(log) => log,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_side_log_is_appended_once_opened_and_the_journals_own_are_not_side_logs() {
        let dir = std::env::temp_dir().join(format!("aura-side-logs-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let journal = Journal::open(&dir).unwrap();
        let record = serde_json::json!({"b": 2, "a": 1});
        assert!(journal.append("side.jsonl", &record).is_err());
        assert!(journal.lines("side.jsonl", 0, 1024).is_err());
        journal.open_logs(&["side.jsonl"]).unwrap();
        journal.append("side.jsonl", &record).unwrap();
        // A second open keeps the log (and its length) as it is.
        journal.open_logs(&["side.jsonl", "other.jsonl"]).unwrap();
        journal.append("side.jsonl", &record).unwrap();
        let line = "{\"a\":1,\"b\":2}";
        assert_eq!(journal.lines("side.jsonl", 0, 1024).unwrap(), [line, line]);
        assert_eq!(journal.lines("side.jsonl", 1, 1024).unwrap(), [line]);
        assert!(journal.lines("other.jsonl", 0, 1024).unwrap().is_empty());
        for own in [TRACES_PATH, QUARANTINE_PATH] {
            assert!(journal.open_logs(&[own]).is_err(), "{own}");
        }
        // A torn tail a crash left is repaired when the next run opens the log.
        drop(journal);
        let path = dir.join("side.jsonl");
        let mut text = std::fs::read_to_string(&path).unwrap();
        text.push_str("{\"a\":");
        std::fs::write(&path, text).unwrap();
        let journal = Journal::open(&dir).unwrap();
        journal.open_logs(&["side.jsonl"]).unwrap();
        assert_eq!(journal.lines("side.jsonl", 0, 1024).unwrap(), [line, line]);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
