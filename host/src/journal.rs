//! The journal: the host's records in the data dir, reached through cap-std.
//!
//! It owns `<data-dir>/errors/quarantine_calls.jsonl` (one canonical JSON line per refused or
//! dropped call) and `<data-dir>/traces.jsonl` (one reasoning trace per orchestrator decision),
//! and the data dir's small files replaced whole (a run's checkpoint, `run.json`). Each record
//! is written and fsynced before it is reported, and a torn last line left by a crash is
//! truncated when the log is opened. A write that fails (a full disk, an I/O error, a short
//! write, a failed fsync) is withdrawn from the file and stops the journal: it says which file,
//! and the next start repairs and resumes. A replaced file's failed write stops only that
//! write (the old file stays whole; a stale `.tmp` is overwritten by the next one). A log's
//! torn tail is repaired at open only when no run is live in the data dir, and a failed record
//! is withdrawn only if no other process appended after it. Records an interrupted run left past its last
//! checkpoint are taken as already written when the resumed run produces them again, so none
//! is lost or written twice. Every write step is open to injected faults ([`StorageFaults`]),
//! for the deterministic simulation and the crash tests. It must not interpret agent output or
//! decide what is quarantined, nor what a checkpoint holds; it records what it is handed, and
//! touches nothing outside the data dir.

use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;
use std::sync::Mutex;

use cap_std::ambient_authority;
use cap_std::fs::{Dir, File, OpenOptions};
use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::plugins::hex;

use crate::canonical::to_canonical_string;
use crate::error::{CrossingError, Phase};
use crate::limits::{QUARANTINE_OFFENDING_BYTES_MAX, REPAIR_SCAN_BYTES_MAX};
use crate::recovery::Recovery;

/// The quarantine log, relative to the data dir (ADR-0009).
pub const QUARANTINE_PATH: &str = "errors/quarantine_calls.jsonl";
/// The reasoning traces, relative to the data dir.
pub const TRACES_PATH: &str = "traces.jsonl";

/// Why the journal could not be opened or written.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    /// Creating or opening the data dir or a log failed.
    #[error("cannot open {path}: {source}")]
    Open {
        /// The path, relative to the data dir where there is one.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// Writing a record failed (a full disk, an I/O error, a short write): what reached the
    /// file was withdrawn, and the journal stopped.
    #[error("cannot write to {path}: {source}")]
    Append {
        /// The file, relative to the data dir.
        path: &'static str,
        /// The I/O error.
        source: std::io::Error,
    },
    /// Syncing a record to disk failed: it is not durable, was withdrawn, and the journal
    /// stopped (after a failed fsync the kernel's view of the file cannot be trusted).
    #[error("cannot make {path} durable (fsync failed): {source}")]
    Sync {
        /// The file, relative to the data dir.
        path: &'static str,
        /// The I/O error.
        source: std::io::Error,
    },
    /// An earlier write failed; nothing more is written until a restart repairs the file.
    #[error("the journal stopped after {path} failed: {first}")]
    Stopped {
        /// The file that failed.
        path: &'static str,
        /// Its failure.
        first: String,
    },
    /// A resumed run produced a record other than the one its interrupted run left there.
    #[error("the resumed run diverged from what {path} holds: on disk `{on_disk}`, now `{now}`")]
    Diverged {
        /// The log.
        path: &'static str,
        /// The record on disk (cut).
        on_disk: String,
        /// The record produced now (cut).
        now: String,
    },
    /// A log no longer holds records a checkpoint recorded as durable.
    #[error("{path} lost records: {reason}")]
    Lost {
        /// The log.
        path: &'static str,
        /// What is missing.
        reason: String,
    },
    /// Another process holds the data dir's run lock.
    #[error("another run is writing to this data dir (run.lock is held)")]
    Busy,
}

/// One quarantine line: what was refused, why, and the offending JSON as received.
#[derive(Debug, Clone, Serialize)]
pub struct QuarantineRecord {
    /// The envelope's call_id, if the envelope could be read that far.
    pub call_id: Option<String>,
    /// The envelope's agent, if known.
    pub agent: Option<String>,
    /// The envelope's tool, if known.
    pub tool: Option<String>,
    /// For a call one agent made to another through `host.call`: the agents of the calls it
    /// was made from, root first, the calling agent last. Empty for a root call or a tick.
    pub callers: Vec<String>,
    /// Which check failed.
    pub phase: Phase,
    /// Stable error kind (as in result.v1).
    pub kind: &'static str,
    /// The error, for people.
    pub reason: String,
    /// JSON Pointer of the offending value, where there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instance_path: Option<String>,
    /// Location of the failing schema keyword, for schema errors.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub schema_path: Option<String>,
    /// The offending string as received, cut to [`QUARANTINE_OFFENDING_BYTES_MAX`].
    pub offending: String,
    /// Length of the offending string before the cut.
    pub offending_bytes: usize,
    /// Whether `offending` was cut.
    pub offending_truncated: bool,
    /// Fuel the agent burned before the failure.
    pub fuel_used: u64,
    /// What the caller was told to do next, with the same field issues (recovery.v1's
    /// `recovery`, without the example, which is the schema's and not the call's).
    pub recovery: Recovery,
}

impl QuarantineRecord {
    /// The record for `error`, with the string that caused it and the recovery its caller was
    /// given.
    pub fn new(
        error: &CrossingError,
        ids: CallIds<'_>,
        offending: &str,
        recovery: &Recovery,
    ) -> Self {
        let cut = floor_char_boundary(offending, QUARANTINE_OFFENDING_BYTES_MAX);
        Self {
            recovery: Recovery {
                example: None,
                ..recovery.clone()
            },
            call_id: ids.call_id.map(str::to_owned),
            agent: ids.agent.map(str::to_owned),
            tool: ids.tool.map(str::to_owned),
            callers: ids.callers.iter().map(|&agent| agent.to_owned()).collect(),
            phase: error.phase(),
            kind: error.kind(),
            reason: error.to_string(),
            instance_path: error.instance_path().map(str::to_owned),
            schema_path: error.schema_path().map(str::to_owned),
            offending: offending[..cut].to_owned(),
            offending_bytes: offending.len(),
            offending_truncated: cut < offending.len(),
            fuel_used: error.fuel_used(),
        }
    }
}

/// What is known of a call's identity when it fails.
#[derive(Debug, Clone, Copy, Default)]
pub struct CallIds<'a> {
    /// The envelope's call_id.
    pub call_id: Option<&'a str>,
    /// The envelope's agent.
    pub agent: Option<&'a str>,
    /// The envelope's tool.
    pub tool: Option<&'a str>,
    /// The agents of the calls above it, root first (see [`QuarantineRecord::callers`]).
    pub callers: &'a [&'static str],
}

/// The largest index ≤ `index` that is a char boundary of `text`.
fn floor_char_boundary(text: &str, index: usize) -> usize {
    if index >= text.len() {
        return text.len();
    }
    (0..=index)
        .rev()
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(0)
}

/// What happens at each step of writing a record: a seam for the deterministic simulation
/// (injected ENOSPC, EIO, short writes, fsync failures) and for the crash tests (a process
/// stopped at a chosen step, then killed). The host has none unless it is given one
/// ([`crate::HostConfig::storage_faults`]).
pub trait StorageFaults: std::fmt::Debug + Send + Sync {
    /// Called before each step of each write; what it returns happens instead of the step.
    fn at(&self, point: StoragePoint<'_>) -> Option<StorageFault>;
}

/// Where a write is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoragePoint<'a> {
    /// The file, relative to the data dir.
    pub path: &'a str,
    /// The step about to happen.
    pub step: StorageStep,
    /// Which write of this file since the journal was opened, from 0.
    pub ordinal: u64,
}

/// The steps of a durable write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StorageStep {
    /// The record's bytes are about to be written.
    Write,
    /// Written, not yet synced.
    Sync,
    /// Synced (for a replaced file: renamed into place, the dir not yet synced).
    Synced,
    /// Durable; about to be reported.
    Done,
}

impl StorageStep {
    /// Its name in a stop point (`traces.jsonl:sync:12`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Write => "write",
            Self::Sync => "sync",
            Self::Synced => "synced",
            Self::Done => "done",
        }
    }
}

/// A storage failure, as the operating system would report it.
#[derive(Debug)]
pub enum StorageFault {
    /// The step fails with this error (ENOSPC, EIO, ...) and writes nothing.
    Fail(std::io::Error),
    /// The write puts only the first `bytes` bytes down, then fails with this error.
    Short {
        /// How much of the record reaches the file.
        bytes: usize,
        /// Why the rest did not.
        error: std::io::Error,
    },
}

/// A crash test's stop: at `<file>:<step>:<ordinal>` (e.g. `traces.jsonl:sync:12`), the
/// process says so on stderr and waits there forever, for the test to kill it. Read by the
/// `aura` binary from `AURA_STOP_AT`; nothing else uses it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StopAt {
    path: String,
    step: StorageStep,
    ordinal: u64,
}

impl StopAt {
    /// Reads `<file>:<step>:<ordinal>`; `None` if it is not one.
    pub fn parse(text: &str) -> Option<Self> {
        let mut parts = text.rsplitn(3, ':');
        let ordinal = parts.next()?.parse().ok()?;
        let step = match parts.next()? {
            "write" => StorageStep::Write,
            "sync" => StorageStep::Sync,
            "synced" => StorageStep::Synced,
            "done" => StorageStep::Done,
            _ => return None,
        };
        let path = parts.next()?.to_owned();
        Some(Self {
            path,
            step,
            ordinal,
        })
    }
}

impl StorageFaults for StopAt {
    fn at(&self, point: StoragePoint<'_>) -> Option<StorageFault> {
        if point.path == self.path && point.step == self.step && point.ordinal == self.ordinal {
            eprintln!(
                "aura: stopped at {}:{}:{}",
                point.path,
                point.step.as_str(),
                point.ordinal
            );
            loop {
                std::thread::park();
            }
        }
        None
    }
}

/// Shared by the logs of one journal.
type Faults = Option<std::sync::Arc<dyn StorageFaults>>;

fn injected(faults: &Faults, path: &str, step: StorageStep, ordinal: u64) -> Option<StorageFault> {
    faults.as_ref()?.at(StoragePoint {
        path,
        step,
        ordinal,
    })
}

/// The data dir's logs, and its small files replaced whole (a run's checkpoint).
#[derive(Debug)]
pub struct Journal {
    dir: Dir,
    /// The data dir opened for reading, to sync its entries (cap-std's handle is a path
    /// handle, which fsync refuses).
    dir_file: std::fs::File,
    quarantine: Log,
    traces: Log,
    /// Quarantine records appended (or found already there, see [`Journal::expect`]) since
    /// this journal was opened.
    quarantined: std::sync::atomic::AtomicU64,
    faults: Faults,
    /// Writes of replaced files, for [`StoragePoint::ordinal`].
    replacements: std::sync::atomic::AtomicU64,
}

/// One append-only log file.
#[derive(Debug)]
struct Log {
    path: &'static str,
    faults: Faults,
    state: Mutex<LogState>,
}

#[derive(Debug)]
struct LogState {
    file: File,
    /// Bytes of complete records in the file.
    len: u64,
    /// sha256 of those bytes (kept for the traces only: a checkpoint seals them).
    digest: Option<Sha256>,
    /// Records written since open.
    writes: u64,
    /// The first failure. Once a write or a sync failed, what is on disk is no longer known
    /// to this process: nothing more is written until a restart repairs the tail.
    failed: Option<String>,
    /// Records an interrupted run left after its last checkpoint, which the resumed run is
    /// about to write again ([`Journal::expect`]).
    already: Already,
}

/// Records already on disk that the next appends will produce again.
#[derive(Debug, Default)]
enum Already {
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
    fn open(
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

    fn lock(&self) -> std::sync::MutexGuard<'_, LogState> {
        // A poisoned lock means another append panicked mid-write; the file itself is still
        // append-only and repaired on the next open, so keep recording.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Appends `record` as one canonical JSON line and syncs it to disk before returning.
    fn append(&self, record: &impl Serialize) -> Result<Appended, JournalError> {
        let value = serde_json::to_value(record).map_err(|e| JournalError::Append {
            path: self.path,
            source: std::io::Error::other(e),
        })?;
        self.append_value(&value)
    }

    /// [`Log::append`] of a record already turned into JSON.
    fn append_value(&self, value: &serde_json::Value) -> Result<Appended, JournalError> {
        let mut line = to_canonical_string(value).map_err(|e| JournalError::Append {
            path: self.path,
            source: std::io::Error::other(e),
        })?;
        line.push('\n');
        let mut state = self.lock();
        if let Some(first) = &state.failed {
            return Err(JournalError::Stopped {
                path: self.path,
                first: first.clone(),
            });
        }
        match state.already.take(&line) {
            Ok(true) => return Ok(Appended::AlreadyThere),
            Ok(false) => {}
            Err(on_disk) => {
                let error = JournalError::Diverged {
                    path: self.path,
                    on_disk: crate::visible::visible(&on_disk)
                        .chars()
                        .take(160)
                        .collect(),
                    now: crate::visible::visible(&line).chars().take(160).collect(),
                };
                state.failed = Some(error.to_string());
                return Err(error);
            }
        }
        let ordinal = state.writes;
        state.writes += 1;
        match self.write_synced(&mut state, line.as_bytes(), ordinal) {
            Ok(()) => {
                state.len += line.len() as u64;
                if let Some(digest) = &mut state.digest {
                    digest.update(line.as_bytes());
                }
                if let Some(fault) = injected(&self.faults, self.path, StorageStep::Done, ordinal) {
                    tracing::debug!(?fault, "a fault after a durable write changes nothing");
                }
                Ok(Appended::Written)
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
    fn write_synced(
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
    fn take(&mut self, line: &str) -> Result<bool, String> {
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

    fn remaining(&self) -> usize {
        match self {
            Self::Nothing => 0,
            Self::InOrder(lines) => lines.len(),
            Self::AnyOrder(lines) => lines.len(),
        }
    }
}

/// The sha256 of the first `len` bytes of `file`.
fn hash_prefix(file: &mut File, len: u64) -> std::io::Result<Sha256> {
    file.seek(SeekFrom::Start(0))?;
    let mut digest = Sha256::new();
    let mut reader = (&*file).take(len);
    let mut chunk = vec![0u8; crate::limits::HASH_CHUNK_BYTES];
    loop {
        let n = reader.read(&mut chunk)?;
        if n == 0 {
            break;
        }
        digest.update(&chunk[..n]);
    }
    Ok(digest)
}

/// Where a log stood at a checkpoint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LogMark {
    /// Bytes of complete records.
    pub bytes: u64,
    /// sha256 of those bytes, hex (the traces only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
}

/// The data dir's run lock, held while a run writes to it.
#[derive(Debug)]
pub struct RunLock(#[allow(dead_code)] std::fs::File);

impl Journal {
    /// Opens (creating if needed) the data dir and its logs, repairing a torn last line left
    /// by a crash.
    pub fn open(data_dir: &Path) -> Result<Self, JournalError> {
        Self::open_with(data_dir, None)
    }

    /// [`Journal::open`], every write open to `faults`.
    pub fn open_with(data_dir: &Path, faults: Faults) -> Result<Self, JournalError> {
        let open_error = |path: &str| {
            let path = path.to_owned();
            move |source| JournalError::Open { path, source }
        };
        std::fs::create_dir_all(data_dir).map_err(open_error(&data_dir.display().to_string()))?;
        let dir = Dir::open_ambient_dir(data_dir, ambient_authority())
            .map_err(open_error(&data_dir.display().to_string()))?;
        dir.create_dir_all("errors").map_err(open_error("errors"))?;
        let dir_file =
            std::fs::File::open(data_dir).map_err(open_error(&data_dir.display().to_string()))?;
        // A torn tail is repaired only when no run is live in this data dir (its run.lock
        // free): a live run's tail may be a record it is writing right now.
        let repair = match run_lock_file(&dir) {
            Ok(file) => match file.try_lock() {
                Ok(()) => true,
                Err(std::fs::TryLockError::WouldBlock) => {
                    tracing::warn!(
                        "a run is live in this data dir: its logs' tails are left to it"
                    );
                    false
                }
                Err(std::fs::TryLockError::Error(_)) => true,
            },
            Err(_) => true,
        };
        Ok(Self {
            dir_file,
            quarantine: Log::open(&dir, QUARANTINE_PATH, false, repair, faults.clone())?,
            traces: Log::open(&dir, TRACES_PATH, true, repair, faults.clone())?,
            dir,
            quarantined: std::sync::atomic::AtomicU64::new(0),
            faults,
            replacements: std::sync::atomic::AtomicU64::new(0),
        })
    }

    /// Appends one quarantine record, durable before this returns.
    pub fn quarantine(&self, record: &QuarantineRecord) -> Result<Appended, JournalError> {
        let appended = self.quarantine.append(record)?;
        self.quarantined
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Ok(appended)
    }

    /// Quarantine records durably appended (or found already there) since this journal was
    /// opened.
    pub fn quarantined(&self) -> u64 {
        self.quarantined.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Appends one reasoning trace (already checked against trace.v1 by the host), durable
    /// before this returns.
    pub fn trace(&self, trace: &serde_json::Value) -> Result<Appended, JournalError> {
        self.traces.append_value(trace)
    }

    /// The first failure of either log, if one failed: the journal writes nothing more.
    pub fn failure(&self) -> Option<JournalError> {
        for log in [&self.traces, &self.quarantine] {
            if let Some(first) = &log.lock().failed {
                return Some(JournalError::Stopped {
                    path: log.path,
                    first: first.clone(),
                });
            }
        }
        None
    }

    /// Where the traces and the quarantine log stand now.
    pub fn marks(&self) -> (LogMark, LogMark) {
        let mark = |log: &Log| {
            let state = log.lock();
            LogMark {
                bytes: state.len,
                sha256: state.digest.clone().map(|d| hex(&d.finalize())),
            }
        };
        (mark(&self.traces), mark(&self.quarantine))
    }

    /// Takes the records past `traces` and `quarantine` (the marks of an interrupted run's
    /// last checkpoint) as already written: the resumed run produces them again, and they are
    /// not written twice. Fails if a log no longer holds what the mark sealed.
    pub fn expect(&self, traces: &LogMark, quarantine: &LogMark) -> Result<(), JournalError> {
        let tail = |log: &Log, mark: &LogMark, in_order: bool| -> Result<(), JournalError> {
            let mut state = log.lock();
            let lost = |reason: String| JournalError::Lost {
                path: log.path,
                reason,
            };
            if state.len < mark.bytes {
                return Err(lost(format!(
                    "it holds {} bytes; the checkpoint recorded {} as durable",
                    state.len, mark.bytes
                )));
            }
            let read = |source| JournalError::Open {
                path: log.path.to_owned(),
                source,
            };
            if let Some(expected) = &mark.sha256 {
                let digest = hash_prefix(&mut state.file, mark.bytes).map_err(read)?;
                if &hex(&digest.finalize()) != expected {
                    return Err(lost(format!(
                        "its first {} bytes are not the ones the checkpoint sealed",
                        mark.bytes
                    )));
                }
            }
            let bytes = state.len - mark.bytes;
            if bytes > crate::limits::RESUME_TAIL_BYTES_MAX {
                return Err(lost(format!(
                    "{bytes} bytes follow the checkpoint, more than one tick writes"
                )));
            }
            state.file.seek(SeekFrom::Start(mark.bytes)).map_err(read)?;
            let mut text = String::new();
            (&state.file)
                .take(bytes)
                .read_to_string(&mut text)
                .map_err(read)?;
            let lines: Vec<String> = text.split_inclusive('\n').map(str::to_owned).collect();
            state.already = match in_order {
                true => Already::InOrder(lines.into()),
                false => Already::AnyOrder(lines),
            };
            Ok(())
        };
        tail(&self.traces, traces, true)?;
        tail(&self.quarantine, quarantine, false)
    }

    /// Stops taking records as already written: the interrupted tick has been run again, and
    /// whatever it did not produce again stays on disk as it is (acknowledged, never removed).
    pub fn expect_nothing_more(&self) {
        self.traces.lock().already = Already::Nothing;
        self.quarantine.lock().already = Already::Nothing;
    }

    /// Records past the last checkpoint not produced again yet: (traces, quarantine).
    pub fn unmatched(&self) -> (usize, usize) {
        (
            self.traces.lock().already.remaining(),
            self.quarantine.lock().already.remaining(),
        )
    }

    /// Whether the data dir has `path`.
    pub fn exists(&self, path: &str) -> bool {
        self.dir.exists(path)
    }

    /// Reads a small file of the data dir whole, if it exists; at most `max` bytes.
    pub fn read_file(&self, path: &'static str, max: u64) -> Result<Option<Vec<u8>>, JournalError> {
        let read = |source| JournalError::Open {
            path: path.to_owned(),
            source,
        };
        let file = match self.dir.open(path) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(read(e)),
        };
        let mut bytes = Vec::new();
        file.take(max + 1).read_to_end(&mut bytes).map_err(read)?;
        if bytes.len() as u64 > max {
            return Err(read(std::io::Error::other(format!(
                "larger than {max} bytes: not a file this host wrote"
            ))));
        }
        Ok(Some(bytes))
    }

    /// Replaces the data dir's `path` with `bytes` whole, durably: a temporary file written
    /// and synced, renamed over it, then the dir synced. A crash at any point leaves the old
    /// file or the new one, never a mix.
    pub fn replace_file(&self, path: &'static str, bytes: &[u8]) -> Result<(), JournalError> {
        let ordinal = self
            .replacements
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let append = |source| JournalError::Append { path, source };
        let sync = |source| JournalError::Sync { path, source };
        let fault = |step| match injected(&self.faults, path, step, ordinal) {
            Some(StorageFault::Fail(error) | StorageFault::Short { error, .. }) => Some(error),
            None => None,
        };
        let temporary = format!("{path}.tmp");
        let mut options = OpenOptions::new();
        options.write(true).create(true).truncate(true);
        let mut file = self.dir.open_with(&temporary, &options).map_err(append)?;
        if let Some(error) = fault(StorageStep::Write) {
            return Err(append(error));
        }
        file.write_all(bytes).map_err(append)?;
        if let Some(error) = fault(StorageStep::Sync) {
            return Err(sync(error));
        }
        file.sync_all().map_err(sync)?;
        drop(file);
        self.dir
            .rename(&temporary, &self.dir, path)
            .map_err(append)?;
        if let Some(error) = fault(StorageStep::Synced) {
            return Err(sync(error));
        }
        self.sync_dir().map_err(sync)?;
        let _ = fault(StorageStep::Done);
        Ok(())
    }

    /// Syncs the data dir itself (its entries: a rename, a new file).
    fn sync_dir(&self) -> std::io::Result<()> {
        self.dir_file.sync_all()
    }

    /// Moves the traces and `also` (if there) aside as `traces.<n>.jsonl` and `<stem>.<n>.<ext>`,
    /// `n` the first number free, and starts an empty traces.jsonl. The name the traces went to.
    pub fn set_aside(&self, also: &'static str) -> Result<String, JournalError> {
        let error = |path: &str| {
            let path = path.to_owned();
            move |source| JournalError::Open { path, source }
        };
        let numbered = |path: &str, n: u32| match path.rsplit_once('.') {
            Some((stem, ext)) => format!("{stem}.{n}.{ext}"),
            None => format!("{path}.{n}"),
        };
        let n = (1..)
            .find(|&n| {
                !self.dir.exists(numbered(TRACES_PATH, n)) && !self.dir.exists(numbered(also, n))
            })
            .unwrap_or(u32::MAX);
        let mut state = self.traces.lock();
        let aside = numbered(TRACES_PATH, n);
        self.dir
            .rename(TRACES_PATH, &self.dir, &aside)
            .map_err(error(TRACES_PATH))?;
        if self.dir.exists(also) {
            self.dir
                .rename(also, &self.dir, numbered(also, n))
                .map_err(error(also))?;
        }
        let mut options = OpenOptions::new();
        options.read(true).append(true).create(true);
        state.file = self
            .dir
            .open_with(TRACES_PATH, &options)
            .map_err(error(TRACES_PATH))?;
        state.len = 0;
        state.digest = Some(Sha256::new());
        state.already = Already::Nothing;
        drop(state);
        self.sync_dir().map_err(error("."))?;
        Ok(aside)
    }

    /// Takes the data dir's run lock (`run.lock`), or says another process holds it.
    pub fn lock_run(&self) -> Result<RunLock, JournalError> {
        let error = |source| JournalError::Open {
            path: RUN_LOCK_PATH.to_owned(),
            source,
        };
        let file = run_lock_file(&self.dir).map_err(error)?;
        match file.try_lock() {
            Ok(()) => Ok(RunLock(file)),
            Err(std::fs::TryLockError::WouldBlock) => Err(JournalError::Busy),
            Err(std::fs::TryLockError::Error(e)) => Err(error(e)),
        }
    }
}

/// The data dir's run lock file.
pub const RUN_LOCK_PATH: &str = "run.lock";

/// Opens (creating) the run lock file; the lock itself is taken by the caller.
fn run_lock_file(dir: &Dir) -> std::io::Result<std::fs::File> {
    let mut options = OpenOptions::new();
    options.write(true).create(true).truncate(false);
    Ok(dir.open_with(RUN_LOCK_PATH, &options)?.into_std())
}

/// Truncates a last line that has no newline (a write cut short by a crash); the length
/// left.
fn repair_torn_tail(file: &mut File, log: &'static str) -> std::io::Result<u64> {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn replan() -> Recovery {
        Recovery::plain(crate::recovery::Action::Replan)
    }
    use crate::canonical::JsonError;

    fn temp_dir(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("aura-journal-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    fn error() -> CrossingError {
        CrossingError::Json {
            phase: Phase::Envelope,
            error: JsonError::TooLarge {
                bytes: Some(10),
                bytes_max: 5,
            },
        }
    }

    #[test]
    fn records_are_lines_of_canonical_json() {
        let dir = temp_dir("lines");
        let journal = Journal::open(&dir).unwrap();
        let ids = CallIds {
            call_id: Some("t_abcdef0123"),
            ..Default::default()
        };
        journal
            .quarantine(&QuarantineRecord::new(
                &error(),
                ids,
                "{\"a\":1}",
                &replan(),
            ))
            .unwrap();
        journal
            .quarantine(&QuarantineRecord::new(
                &error(),
                CallIds::default(),
                "x",
                &replan(),
            ))
            .unwrap();
        let text = std::fs::read_to_string(dir.join(QUARANTINE_PATH)).unwrap();
        let lines: Vec<_> = text.lines().collect();
        assert_eq!(lines.len(), 2);
        let first: serde_json::Value = serde_json::from_str(lines[0]).unwrap();
        assert_eq!(first["call_id"], "t_abcdef0123");
        assert_eq!(first["kind"], "too_large");
        assert_eq!(first["phase"], "envelope");
        assert_eq!(first["offending"], "{\"a\":1}");
        assert_eq!(lines[0], to_canonical_string(&first).unwrap());
        let second: serde_json::Value = serde_json::from_str(lines[1]).unwrap();
        assert!(second["call_id"].is_null());
    }

    #[test]
    fn offending_json_is_cut_at_a_char_boundary() {
        let big = "é".repeat(QUARANTINE_OFFENDING_BYTES_MAX); // 2 bytes each
        let record = QuarantineRecord::new(&error(), CallIds::default(), &big, &replan());
        assert_eq!(record.offending.len(), QUARANTINE_OFFENDING_BYTES_MAX);
        assert_eq!(record.offending_bytes, 2 * QUARANTINE_OFFENDING_BYTES_MAX);
        assert!(record.offending_truncated);
        let odd = format!("a{big}");
        let record = QuarantineRecord::new(&error(), CallIds::default(), &odd, &replan());
        assert_eq!(record.offending.len(), QUARANTINE_OFFENDING_BYTES_MAX - 1);
        let small = QuarantineRecord::new(&error(), CallIds::default(), "{}", &replan());
        assert!(!small.offending_truncated);
    }

    #[test]
    fn a_torn_last_line_is_truncated_on_open() {
        let dir = temp_dir("torn");
        drop(Journal::open(&dir).unwrap());
        let path = dir.join(QUARANTINE_PATH);
        std::fs::write(&path, "{\"a\":1}\n{\"b\":").unwrap();
        let journal = Journal::open(&dir).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{\"a\":1}\n");
        journal
            .quarantine(&QuarantineRecord::new(
                &error(),
                CallIds::default(),
                "x",
                &replan(),
            ))
            .unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.lines().count(), 2);
        std::fs::write(&path, "{\"b\":").unwrap();
        drop(Journal::open(&dir).unwrap());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "");
    }
}
