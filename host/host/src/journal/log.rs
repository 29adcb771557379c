//! One append-only log of the journal: a record written and fsynced before it is reported, a
//! failed write withdrawn, a torn tail repaired at open, and the records an interrupted run
//! left past its checkpoint taken as already written when they come again.
//!
//! It must not know what a record means (the journal's callers do).

use std::io::{Read, Seek, SeekFrom, Write};
use std::sync::Mutex;

use cap_std::fs::{Dir, File, OpenOptions};
use serde::Serialize;
use sha2::{Digest, Sha256};

use aura_contract::canonical::to_canonical_string;
use aura_contract::limits::REPAIR_SCAN_BYTES_MAX;

use super::JournalError;
use super::faults::{Faults, StorageFault, StorageStep, injected};

/// One append-only log file.
#[derive(Debug)]
pub(super) struct Log {
    pub(super) path: &'static str,
    pub(super) faults: Faults,
    pub(super) state: Mutex<LogState>,
}

#[derive(Debug)]
pub(super) struct LogState {
    pub(super) file: File,
    /// Bytes of complete records in the file.
    pub(super) len: u64,
    /// sha256 of those bytes (kept for the traces only: a checkpoint seals them).
    pub(super) digest: Option<Sha256>,
    /// Records written since open.
    pub(super) writes: u64,
    /// The first failure. Once a write or a sync failed, what is on disk is no longer known
    /// to this process: nothing more is written until a restart repairs the tail.
    pub(super) failed: Option<String>,
    /// Records an interrupted run left after its last checkpoint, which the resumed run is
    /// about to write again ([`Journal::expect`]).
    pub(super) already: Already,
}

/// Records already on disk that the next appends will produce again.
#[derive(Debug, Default)]
pub(super) enum Already {
    #[default]
    Nothing,
    /// In this order (the traces: one writer, one order).
    InOrder(std::collections::VecDeque<String>),
    /// In any order (the quarantine log: an interrupted tick's agents run concurrently).
    AnyOrder(Vec<String>),
}

/// What became of an appended record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Appended {
    /// Written and synced.
    Written,
    /// It was on disk already, left there by the interrupted run this one resumes.
    AlreadyThere,
}

impl Log {
    /// Opens (creating) `path` under `dir` for appending, repairing a torn last line.
    pub(super) fn open(
        dir: &Dir,
        path: &'static str,
        digest: bool,
        repair: bool,
        faults: Faults,
    ) -> Result<Self, JournalError> {
        let open_error = |source| JournalError::Open {
            path: path.to_owned(),
            source,
        };
        let mut options = OpenOptions::new();
        options.read(true).append(true).create(true);
        let mut file = dir.open_with(path, &options).map_err(open_error)?;
        let len = match repair {
            true => repair_torn_tail(&mut file, path).map_err(open_error)?,
            // A live run owns the tail: leave it; its own next start repairs it.
            false => file.metadata().map_err(open_error)?.len(),
        };
        let digest = match digest {
            true => Some(hash_prefix(&mut file, len).map_err(open_error)?),
            false => None,
        };
        Ok(Self {
            path,
            faults,
            state: Mutex::new(LogState {
                file,
                len,
                digest,
                writes: 0,
                failed: None,
                already: Already::Nothing,
            }),
        })
    }

    pub(super) fn lock(&self) -> std::sync::MutexGuard<'_, LogState> {
        // A poisoned lock means another append panicked mid-write; the file itself is still
        // append-only and repaired on the next open, so keep recording.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Appends `record` as one canonical JSON line and syncs it to disk before returning.
    pub(super) fn append(&self, record: &impl Serialize) -> Result<Appended, JournalError> {
        let value = serde_json::to_value(record).map_err(|e| JournalError::Append {
            path: self.path,
            source: std::io::Error::other(e),
        })?;
        self.append_value(&value)
    }

    /// [`Log::append`] of a record already turned into JSON.
    pub(super) fn append_value(&self, value: &serde_json::Value) -> Result<Appended, JournalError> {
        let line = self.line_of(value)?;
        let mut state = self.running()?;
        match state.already.take(&line) {
            Ok(true) => return Ok(Appended::AlreadyThere),
            Ok(false) => {}
            Err(on_disk) => {
                let error = JournalError::Diverged {
                    path: self.path,
                    on_disk: aura_contract::visible::visible(&on_disk)
                        .chars()
                        .take(160)
                        .collect(),
                    now: aura_contract::visible::visible(&line)
                        .chars()
                        .take(160)
                        .collect(),
                };
                state.failed = Some(error.to_string());
                return Err(error);
            }
        }
        self.write_whole(&mut state, &line)?;
        Ok(Appended::Written)
    }

    /// Appends `values` as canonical JSON lines with one write and one sync, durable before
    /// returning (a side log's batch); none is kept if it fails. One value is
    /// [`Log::append_value`]'s.
    pub(super) fn append_values(&self, values: &[serde_json::Value]) -> Result<(), JournalError> {
        if let [value] = values {
            return self.append_value(value).map(|_| ());
        }
        let mut lines = String::new();
        for value in values {
            lines.push_str(&self.line_of(value)?);
        }
        let mut state = self.running()?;
        if !matches!(state.already, Already::Nothing) {
            // A resumed run's own records are matched one by one.
            drop(state);
            for value in values {
                self.append_value(value)?;
            }
            return Ok(());
        }
        self.write_whole(&mut state, &lines)
    }

    /// `value` as the canonical JSON line it is written as.
    fn line_of(&self, value: &serde_json::Value) -> Result<String, JournalError> {
        let mut line = to_canonical_string(value).map_err(|e| JournalError::Append {
            path: self.path,
            source: std::io::Error::other(e),
        })?;
        line.push('\n');
        Ok(line)
    }

    /// The log's state, unless an append failed before (then nothing more is written).
    fn running(&self) -> Result<std::sync::MutexGuard<'_, LogState>, JournalError> {
        let state = self.lock();
        match &state.failed {
            Some(first) => Err(JournalError::Stopped {
                path: self.path,
                first: first.clone(),
            }),
            None => Ok(state),
        }
    }

    /// Writes `line` (whole lines) and syncs it, or withdraws what reached the file.
    fn write_whole(&self, state: &mut LogState, line: &str) -> Result<(), JournalError> {
        let ordinal = state.writes;
        state.writes += 1;
        match self.write_synced(state, line.as_bytes(), ordinal) {
            Ok(()) => {
                state.len += line.len() as u64;
                if let Some(digest) = &mut state.digest {
                    digest.update(line.as_bytes());
                }
                if let Some(fault) = injected(&self.faults, self.path, StorageStep::Done, ordinal) {
                    tracing::debug!(?fault, "a fault after a durable write changes nothing");
                }
                Ok(())
            }
            Err(error) => {
                // Withdraw what may have reached the file, so no torn or unacknowledged record
                // is left, unless another process appended since (its records are not ours
                // to cut); if the withdrawal fails, the next open repairs the tail.
                let keep = state.len;
                let ours = state
                    .file
                    .metadata()
                    .is_ok_and(|m| m.len() <= keep + line.len() as u64);
                let undone = match ours {
                    true => state
                        .file
                        .set_len(keep)
                        .and_then(|()| state.file.sync_data()),
                    false => Err(std::io::Error::other("another process appended since")),
                };
                if let Err(undo) = undone {
                    tracing::error!(log = self.path, %undo, "cannot withdraw a failed record");
                }
                state.failed = Some(error.to_string());
                Err(error)
            }
        }
    }

    /// Writes `bytes` and syncs them, each step open to an injected fault.
    pub(super) fn write_synced(
        &self,
        state: &mut LogState,
        bytes: &[u8],
        ordinal: u64,
    ) -> Result<(), JournalError> {
        let append = |source| JournalError::Append {
            path: self.path,
            source,
        };
        match injected(&self.faults, self.path, StorageStep::Write, ordinal) {
            Some(StorageFault::Fail(error)) => return Err(append(error)),
            Some(StorageFault::Short { bytes: cut, error }) => {
                state
                    .file
                    .write_all(&bytes[..cut.min(bytes.len())])
                    .map_err(append)?;
                return Err(append(error));
            }
            None => state.file.write_all(bytes).map_err(append)?,
        }
        let sync = |source| JournalError::Sync {
            path: self.path,
            source,
        };
        match injected(&self.faults, self.path, StorageStep::Sync, ordinal) {
            Some(StorageFault::Fail(error) | StorageFault::Short { error, .. }) => Err(sync(error)),
            None => state.file.sync_data().map_err(sync),
        }?;
        if let Some(fault) = injected(&self.faults, self.path, StorageStep::Synced, ordinal) {
            tracing::debug!(?fault, "a fault after a sync changes nothing");
        }
        Ok(())
    }
}

impl Already {
    /// Whether `line` is one of the records already there (and takes it); `Err` with the
    /// record on disk when the records must come in order and this is not the next one.
    pub(super) fn take(&mut self, line: &str) -> Result<bool, String> {
        match self {
            Self::Nothing => Ok(false),
            Self::InOrder(lines) => match lines.front() {
                Some(next) if next == line => {
                    lines.pop_front();
                    Ok(true)
                }
                Some(next) => Err(next.clone()),
                None => Ok(false),
            },
            Self::AnyOrder(lines) => match lines.iter().position(|l| l == line) {
                Some(at) => {
                    lines.swap_remove(at);
                    Ok(true)
                }
                None => Ok(false),
            },
        }
    }

    pub(super) fn remaining(&self) -> usize {
        match self {
            Self::Nothing => 0,
            Self::InOrder(lines) => lines.len(),
            Self::AnyOrder(lines) => lines.len(),
        }
    }
}

/// The sha256 of the first `len` bytes of `file`.
pub(super) fn hash_prefix(file: &mut File, len: u64) -> std::io::Result<Sha256> {
    file.seek(SeekFrom::Start(0))?;
    let mut digest = Sha256::new();
    let mut reader = (&*file).take(len);
    let mut chunk = vec![0u8; aura_contract::limits::HASH_CHUNK_BYTES];
    loop {
        let n = reader.read(&mut chunk)?;
        if n == 0 {
            break;
        }
        digest.update(&chunk[..n]);
    }
    Ok(digest)
}

/// Truncates a last line that has no newline (a write cut short by a crash); the length
/// left.
pub(super) fn repair_torn_tail(file: &mut File, log: &'static str) -> std::io::Result<u64> {
    let len = file.metadata()?.len();
    if len == 0 {
        return Ok(0);
    }
    let scan = len.min(REPAIR_SCAN_BYTES_MAX);
    file.seek(SeekFrom::Start(len - scan))?;
    let mut tail = Vec::with_capacity(scan as usize);
    file.take(scan).read_to_end(&mut tail)?;
    if tail.last() == Some(&b'\n') {
        return Ok(len);
    }
    let keep = match tail.iter().rposition(|&b| b == b'\n') {
        Some(i) => len - scan + i as u64 + 1,
        None if scan == len => 0,
        // No newline within the scan window of a longer file: not something this host wrote.
        None => {
            return Err(std::io::Error::other(
                "last record is longer than any record the host writes",
            ));
        }
    };
    tracing::warn!(
        log,
        dropped_bytes = len - keep,
        "repairing a torn last line"
    );
    file.set_len(keep)?;
    file.sync_data()?;
    Ok(keep)
}
