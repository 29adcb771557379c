//! The journal: the host's records in the data dir, reached through cap-std.
//!
//! It owns `<data-dir>/errors/quarantine_calls.jsonl` (one canonical JSON line per refused or
//! dropped call; on a fleet's host each names its person) and `<data-dir>/traces.jsonl` (one
//! reasoning trace per orchestrator decision), the side logs a run names (a live session's
//! signals and deliveries, the narrator's records: the day crate names them, the host knows
//! nothing of days), and the data dir's small files replaced whole (a run's checkpoint). Each
//! record is written and fsynced before it is reported, and a torn last line left by a crash
//! is truncated when the log is opened. A write that fails (a full disk, an I/O error, a short
//! write, a failed fsync) is withdrawn from the file and stops the journal: it says which file,
//! and the next start repairs and resumes. A replaced file's failed write stops only that write
//! (the old file stays whole; a stale `.tmp` is overwritten by the next one). A log's torn tail
//! is repaired at open only when no run is live in the data dir, and a failed record is
//! withdrawn only if no other process appended after it. Records an interrupted run left past
//! its last checkpoint are taken as already written when the resumed run produces them again,
//! so none is lost or written twice. Every write step is open to injected faults
//! ([`StorageFaults`]), for the deterministic simulation and the crash tests.
//! It must not interpret agent output or decide what is quarantined, nor what a checkpoint
//! holds; it records what it is handed, and touches nothing outside the data dir.
mod dirs;
mod faults;
mod log;
mod side_logs;

use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;

use cap_std::ambient_authority;
use cap_std::fs::{Dir, OpenOptions};
use serde::Serialize;
use sha2::{Digest, Sha256};

use aura_contract::digest::hex;
use aura_contract::quarantine::QuarantineRecord;

pub use dirs::DELETING_SUFFIX;
use faults::{Faults, injected};
pub use faults::{StopAt, StorageFault, StorageFaults, StoragePoint, StorageStep};
pub use log::Appended;
use log::{Already, Log, hash_prefix};

/// The quarantine log, relative to the data dir (ADR-0009).
pub const QUARANTINE_PATH: &str = "errors/quarantine_calls.jsonl";
/// The reasoning traces, relative to the data dir.
pub const TRACES_PATH: &str = "traces.jsonl";

/// Why the journal could not be opened or written.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    /// Creating or opening the data dir or a log failed.
    #[error("cannot open {path}")]
    Open {
        /// The path, relative to the data dir where there is one.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// Writing a record failed (a full disk, an I/O error, a short write): what reached the
    /// file was withdrawn, and the journal stopped.
    #[error("cannot write to {path}")]
    Append {
        /// The file, relative to the data dir.
        path: &'static str,
        /// The I/O error.
        source: std::io::Error,
    },
    /// Syncing a record to disk failed: it is not durable, was withdrawn, and the journal
    /// stopped (after a failed fsync the kernel's view of the file cannot be trusted).
    #[error("cannot make {path} durable (fsync failed)")]
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

/// The data dir's logs, and its small files replaced whole (a run's checkpoint).
#[derive(Debug)]
pub struct Journal {
    dir: Dir,
    /// Where the data dir is.
    path: std::path::PathBuf,
    /// The data dir opened for reading, to sync its entries (fsync refuses cap-std's handle).
    dir_file: std::fs::File,
    quarantine: Log,
    traces: Log,
    /// The side logs a run opened ([`Journal::open_logs`]) once it held the run lock.
    side: std::sync::Mutex<Vec<std::sync::Arc<Log>>>,
    /// Quarantine records appended (or found already there, see [`Journal::expect`]) since
    /// this journal was opened.
    quarantined: std::sync::atomic::AtomicU64,
    faults: Faults,
    /// Writes of each replaced file, for [`StoragePoint::ordinal`].
    replacements: std::sync::Mutex<std::collections::BTreeMap<&'static str, u64>>,
    /// Whose records these are (a fleet's host's): every quarantine record names them.
    person: Option<aura_contract::person::PersonIds>,
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
            path: data_dir.to_path_buf(),
            quarantine: Log::open(&dir, QUARANTINE_PATH, false, repair, faults.clone())?,
            traces: Log::open(&dir, TRACES_PATH, true, repair, faults.clone())?,
            dir,
            side: Default::default(),
            quarantined: std::sync::atomic::AtomicU64::new(0),
            faults,
            replacements: Default::default(),
            person: None,
        })
    }

    /// A journal of its own in `data_dir`, open to this one's faults and naming its person.
    pub fn beside(&self, data_dir: &Path) -> Result<Self, JournalError> {
        let mut journal = Self::open_with(data_dir, self.faults.clone())?;
        journal.person = self.person.clone();
        Ok(journal)
    }

    /// Where the data dir is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// This journal, its quarantine records naming `person` (a fleet's host's, one a person).
    pub fn of_person(mut self, person: &aura_contract::person::Person) -> Self {
        self.person = Some(person.clone().into());
        self
    }

    /// Appends one quarantine record, durable before this returns.
    pub fn quarantine(&self, record: &QuarantineRecord) -> Result<Appended, JournalError> {
        let person = self.person.clone().filter(|_| record.person.is_none());
        let named = person.map(|person| QuarantineRecord {
            person: Some(person),
            ..record.clone()
        });
        let appended = self.quarantine.append(named.as_ref().unwrap_or(record))?;
        self.quarantined
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Ok(appended)
    }

    /// Appends one quarantine record already in JSON (a store's copy of one, written as it
    /// is), durable before this returns.
    pub fn quarantine_value(&self, record: &serde_json::Value) -> Result<Appended, JournalError> {
        let appended = self.quarantine.append_value(record)?;
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

    /// How many bytes one of the data dir's logs (the traces, the quarantine, an open side
    /// log) holds: what [`Journal::lines`] would read.
    pub fn log_bytes(&self, path: &'static str) -> Result<u64, JournalError> {
        Ok(self.log_at(path)?.lock().len)
    }

    /// The complete lines of one of the data dir's logs (the traces, the quarantine, an open
    /// side log), oldest first, after the first `skip`: at most `max` bytes of the file, or an
    /// error that says it is larger than a run writes.
    pub fn lines(
        &self,
        path: &'static str,
        skip: usize,
        max: u64,
    ) -> Result<Vec<String>, JournalError> {
        let log = self.log_at(path)?;
        let mut state = log.lock();
        let read = |source| JournalError::Open {
            path: path.to_owned(),
            source,
        };
        if state.len > max {
            return Err(read(std::io::Error::other(format!(
                "{} bytes, more than the {max} a run writes",
                state.len
            ))));
        }
        let len = state.len;
        state.file.seek(SeekFrom::Start(0)).map_err(read)?;
        let mut text = String::new();
        (&state.file)
            .take(len)
            .read_to_string(&mut text)
            .map_err(read)?;
        Ok(text.lines().skip(skip).map(str::to_owned).collect())
    }

    /// The first failure of any log, if one failed: the journal writes nothing more.
    pub fn failure(&self) -> Option<JournalError> {
        let side = self.side_logs();
        for log in [&self.traces, &self.quarantine]
            .into_iter()
            .chain(side.iter().map(|log| &**log))
        {
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
            if bytes > aura_contract::limits::RESUME_TAIL_BYTES_MAX {
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
        let ordinal = {
            let mut counts = self.replacements.lock().unwrap_or_else(|p| p.into_inner());
            let count = counts.entry(path).or_default();
            *count += 1;
            *count - 1
        };
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

    /// Moves the traces and each of `also` (if there) aside as `traces.<n>.jsonl` and
    /// `<stem>.<n>.<ext>`, `n` the first number free for all, and starts an empty traces.jsonl.
    /// The name the traces went to. A side log among `also` must not be open yet.
    pub fn set_aside(&self, also: &[&'static str]) -> Result<String, JournalError> {
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
                std::iter::once(&TRACES_PATH)
                    .chain(also)
                    .all(|path| !self.dir.exists(numbered(path, n)))
            })
            .unwrap_or(u32::MAX);
        let mut state = self.traces.lock();
        let aside = numbered(TRACES_PATH, n);
        self.dir
            .rename(TRACES_PATH, &self.dir, &aside)
            .map_err(error(TRACES_PATH))?;
        for path in also {
            if self.dir.exists(path) {
                self.dir
                    .rename(path, &self.dir, numbered(path, n))
                    .map_err(error(path))?;
            }
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

#[cfg(test)]
mod tests {
    use super::*;
    use aura_contract::canonical::to_canonical_string;
    use aura_contract::quarantine::CallIds;
    use aura_contract::quarantine::tests::{error, replan};

    fn temp_dir(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("aura-journal-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
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
