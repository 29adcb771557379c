//! The journal: the host's append-only records in the data dir, reached through cap-std.
//!
//! It owns `<data-dir>/errors/quarantine_calls.jsonl` (one canonical JSON line per refused or
//! dropped call) and `<data-dir>/traces.jsonl` (one reasoning trace per orchestrator decision).
//! Each record is written and fsynced before it is reported, and a torn last line left by a
//! crash is truncated when the log is opened. It must not interpret agent output or decide what is
//! quarantined; it records what the crossing hands it, and touches nothing outside the data dir.

use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;
use std::sync::Mutex;

use cap_std::ambient_authority;
use cap_std::fs::{Dir, File, OpenOptions};
use serde::Serialize;

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
    /// Writing or syncing a record failed: the record may not be durable.
    #[error("cannot append to {path}: {source}")]
    Append {
        /// The log.
        path: &'static str,
        /// The I/O error.
        source: std::io::Error,
    },
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

/// The data dir's logs.
#[derive(Debug)]
pub struct Journal {
    quarantine: Log,
    traces: Log,
    /// Quarantine records appended since this journal was opened.
    quarantined: std::sync::atomic::AtomicU64,
}

/// One append-only log file.
#[derive(Debug)]
struct Log {
    path: &'static str,
    file: Mutex<File>,
}

impl Log {
    /// Opens (creating) `path` under `dir` for appending, repairing a torn last line.
    fn open(dir: &Dir, path: &'static str) -> Result<Self, JournalError> {
        let open_error = |source| JournalError::Open {
            path: path.to_owned(),
            source,
        };
        let mut options = OpenOptions::new();
        options.read(true).append(true).create(true);
        let mut file = dir.open_with(path, &options).map_err(open_error)?;
        repair_torn_tail(&mut file, path).map_err(open_error)?;
        Ok(Self {
            path,
            file: Mutex::new(file),
        })
    }

    /// Appends `record` as one canonical JSON line and syncs it to disk before returning.
    fn append(&self, record: &impl Serialize) -> Result<(), JournalError> {
        let value = serde_json::to_value(record).map_err(|e| JournalError::Append {
            path: self.path,
            source: std::io::Error::other(e),
        })?;
        self.append_value(&value)
    }

    /// [`Log::append`] of a record already turned into JSON.
    fn append_value(&self, value: &serde_json::Value) -> Result<(), JournalError> {
        let append_error = |source| JournalError::Append {
            path: self.path,
            source,
        };
        let mut line =
            to_canonical_string(value).map_err(|e| append_error(std::io::Error::other(e)))?;
        line.push('\n');
        // A poisoned lock means another append panicked mid-write; the file itself is still
        // append-only and repaired on the next open, so keep recording.
        let mut file = self.file.lock().unwrap_or_else(|p| p.into_inner());
        file.write_all(line.as_bytes()).map_err(append_error)?;
        file.sync_data().map_err(append_error)
    }
}

impl Journal {
    /// Opens (creating if needed) the data dir and its quarantine log, repairing a torn last
    /// line left by a crash.
    pub fn open(data_dir: &Path) -> Result<Self, JournalError> {
        let open_error = |path: &str| {
            let path = path.to_owned();
            move |source| JournalError::Open { path, source }
        };
        std::fs::create_dir_all(data_dir).map_err(open_error(&data_dir.display().to_string()))?;
        let dir = Dir::open_ambient_dir(data_dir, ambient_authority())
            .map_err(open_error(&data_dir.display().to_string()))?;
        dir.create_dir_all("errors").map_err(open_error("errors"))?;
        Ok(Self {
            quarantine: Log::open(&dir, QUARANTINE_PATH)?,
            traces: Log::open(&dir, TRACES_PATH)?,
            quarantined: std::sync::atomic::AtomicU64::new(0),
        })
    }

    /// Appends one quarantine record, durable before this returns.
    pub fn quarantine(&self, record: &QuarantineRecord) -> Result<(), JournalError> {
        self.quarantine.append(record)?;
        self.quarantined
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Ok(())
    }

    /// Quarantine records durably appended since this journal was opened.
    pub fn quarantined(&self) -> u64 {
        self.quarantined.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Appends one reasoning trace (already checked against trace.v1 by the host), durable
    /// before this returns.
    pub fn trace(&self, trace: &serde_json::Value) -> Result<(), JournalError> {
        self.traces.append_value(trace)
    }
}

/// Truncates a last line that has no newline (a write cut short by a crash).
fn repair_torn_tail(file: &mut File, log: &'static str) -> std::io::Result<()> {
    let len = file.metadata()?.len();
    if len == 0 {
        return Ok(());
    }
    let scan = len.min(REPAIR_SCAN_BYTES_MAX);
    file.seek(SeekFrom::Start(len - scan))?;
    let mut tail = Vec::with_capacity(scan as usize);
    file.take(scan).read_to_end(&mut tail)?;
    if tail.last() == Some(&b'\n') {
        return Ok(());
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
    file.sync_data()
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
