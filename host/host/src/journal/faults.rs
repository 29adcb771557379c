//! The journal's fault seam: what happens at each step of writing a record.
//!
//! It owns [`StorageFaults`] (the deterministic simulation injects ENOSPC, EIO, short writes
//! and fsync failures through it) and [`StopAt`] (the crash tests stop a process at a chosen
//! step, to kill it there). It must not write anything itself.

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
pub(super) type Faults = Option<std::sync::Arc<dyn StorageFaults>>;

pub(super) fn injected(
    faults: &Faults,
    path: &str,
    step: StorageStep,
    ordinal: u64,
) -> Option<StorageFault> {
    faults.as_ref()?.at(StoragePoint {
        path,
        step,
        ordinal,
    })
}
