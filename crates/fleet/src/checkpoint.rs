//! A held person's checkpoint: their session's data dir as of a journal sequence, kept as an
//! object of the fleet's store (JetStream's object store) so that a host taking them over
//! resumes from it instead of living their whole journal again, and so that the journal
//! before it can be purged (`store::checkpoints`).
//!
//! It owns the checkpoint's form (the person, the journal sequence and the inbox sequence it
//! covers, and the session's files: its life's `life.json`, then the open day's checkpoint
//! and logs, and the setup and journal of the day before, whose ids a resent signal is still
//! known by), capturing it from a scratch data dir and restoring it into one. The closed
//! days before those are not the session's state: they are not held. A checkpoint is captured while no signal is
//! being taken, right after one was journaled, so the signals in it are exactly the journal's
//! up to its sequence; the journal's records up to there never change (the fence), so a
//! checkpoint stays true whoever wrote it and however late it was stored. Only the files named
//! here are read back, never a path a stored checkpoint names. It must not decide when to
//! checkpoint (the assistant does) nor resume a session (the live session does, from the files).

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use aura_contract::limits::FLEET_CHECKPOINT_BYTES_MAX;
use aura_contract::limits::LIFE_STATE_BYTES_MAX;
use aura_contract::person::Person;
use aura_day::checkpoint::{CHECKPOINT_PATH, LIVE_SETUP_PATH};
use aura_day::live::life::{DAYS_DIR, LIFE_PATH, is_day_name};
use aura_day::logs::{DELIVERIES_PATH, SIGNALS_PATH};
use aura_host::journal::{QUARANTINE_PATH, TRACES_PATH};

use crate::protocol::{Covered, Seq};

/// The open day's files a checkpoint holds, in the order they are read: its checkpoint before
/// the logs it refers to (logs only grow, so each holds at least what the checkpoint says).
pub const FILES: [&str; 6] = [
    CHECKPOINT_PATH,
    LIVE_SETUP_PATH,
    SIGNALS_PATH,
    TRACES_PATH,
    DELIVERIES_PATH,
    QUARANTINE_PATH,
];

/// The day before's files a checkpoint holds: what the session reads of it (the ids it took).
pub const PREVIOUS_FILES: [&str; 2] = [LIVE_SETUP_PATH, SIGNALS_PATH];

/// One person's session as of a journal sequence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Checkpoint {
    /// Whose.
    pub person: Person,
    /// The epoch of the host that captured it.
    pub epoch: u64,
    /// The journal's last sequence it covers.
    pub fence: Seq,
    /// The decisions journaled up to `fence`.
    pub decisions: u64,
    /// The first inbox sequence it does not hold.
    pub inbox_next: u64,
    /// The session's files by path relative to its data dir (`life.json`, the open day's of
    /// [`FILES`] and the day before's of [`PREVIOUS_FILES`] it had), as text.
    pub files: BTreeMap<String, String>,
}

/// Why a checkpoint could not be captured or used.
#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    /// A file could not be read or written.
    #[error("checkpoint file {path}: {source}")]
    Io {
        /// Which.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The session has not checkpointed yet: nothing to resume from.
    #[error("the session has no checkpoint yet")]
    NotYet,
    /// Larger than a checkpoint may be.
    #[error(
        "a checkpoint of {bytes} bytes, more than the {FLEET_CHECKPOINT_BYTES_MAX} one may have"
    )]
    TooLarge {
        /// Its size.
        bytes: usize,
    },
    /// A stored checkpoint that does not fit the journal read at the takeover.
    #[error("the stored checkpoint does not fit: {0}")]
    Mismatch(String),
}

/// Captures `person`'s session in `dir` as of what `covered` says (the journal's sequence and
/// decisions, the inbox read up to `inbox_next`, exclusive, by the holder of its epoch).
/// `life.json` is read first: a rollover that commits meanwhile leaves the day it named whole
/// and closed, which a restored session closes again.
pub fn capture(
    dir: &Path,
    person: &Person,
    covered: Covered,
) -> Result<Checkpoint, CheckpointError> {
    let mut files = BTreeMap::new();
    let mut bytes = 0;
    let mut read = |path: String, required: bool| -> Result<Option<String>, CheckpointError> {
        let text = match std::fs::read_to_string(dir.join(&path)) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                return match required {
                    true => Err(CheckpointError::NotYet),
                    false => Ok(None),
                };
            }
            Err(source) => return Err(CheckpointError::Io { path, source }),
        };
        bytes += text.len();
        if bytes > FLEET_CHECKPOINT_BYTES_MAX {
            return Err(CheckpointError::TooLarge { bytes });
        }
        files.insert(path, text.clone());
        Ok(Some(text))
    };
    let life = read(LIFE_PATH.to_owned(), true)?.unwrap_or_default();
    let (open, previous) = days_of(&life)?;
    for file in FILES {
        read(day_file(&open, file), file == CHECKPOINT_PATH)?;
    }
    if let Some(previous) = previous {
        for file in PREVIOUS_FILES {
            read(day_file(&previous, file), false)?;
        }
    }
    Ok(Checkpoint {
        person: person.clone(),
        epoch: covered.epoch,
        fence: covered.fence,
        decisions: covered.decisions,
        inbox_next: covered.inbox_next,
        files,
    })
}

/// `days/<day>/<file>`.
fn day_file(day: &str, file: &str) -> String {
    format!("{DAYS_DIR}/{day}/{file}")
}

/// The open day and the day before that `life.json`'s text names.
fn days_of(life: &str) -> Result<(String, Option<String>), CheckpointError> {
    let mismatch = |why: String| CheckpointError::Mismatch(format!("{LIFE_PATH}: {why}"));
    let state = aura_contract::canonical::parse_i_json(life, LIFE_STATE_BYTES_MAX)
        .map_err(|e| mismatch(e.to_string()))?;
    let day = |field: &str| match &state[field] {
        serde_json::Value::String(name) if is_day_name(name) => Ok(Some(name.clone())),
        serde_json::Value::Null => Ok(None),
        other => Err(mismatch(format!("`{field}` is {other}, not a day"))),
    };
    let open = day("open")?.ok_or_else(|| mismatch("no open day".to_owned()))?;
    Ok((open, day("previous")?))
}

/// Whether `path` is one a checkpoint of a life whose open day is `open` and day before
/// `previous` may hold.
fn is_held(path: &str, open: &str, previous: Option<&str>) -> bool {
    path == LIFE_PATH
        || FILES.iter().any(|file| path == day_file(open, file))
        || previous.is_some_and(|previous| {
            PREVIOUS_FILES
                .iter()
                .any(|file| path == day_file(previous, file))
        })
}

impl Checkpoint {
    /// What it covers of its person's journal and inbox.
    pub fn covered(&self) -> Covered {
        Covered {
            fence: self.fence,
            decisions: self.decisions,
            epoch: self.epoch,
            inbox_next: self.inbox_next,
        }
    }

    /// Checks that this checkpoint is `person`'s and within a journal whose last sequence is
    /// `journal_last` and whose newest epoch is `newest_epoch`, and, when the journal was
    /// replayed from a checkpoint (`replayed_from`, its records before may be purged), at or
    /// past that one.
    pub fn fits(
        &self,
        person: &Person,
        journal_last: Seq,
        newest_epoch: u64,
        replayed_from: Option<Covered>,
    ) -> Result<(), CheckpointError> {
        let mismatch = |why: String| Err(CheckpointError::Mismatch(why));
        if &self.person != person {
            return mismatch(format!("it is {}'s, not {person}'s", self.person));
        }
        if let Some(from) = replayed_from
            && (self.fence < from.fence || self.decisions < from.decisions)
        {
            return mismatch(format!(
                "it covers the journal to {} ({} decisions), before the checkpoint it was replayed from ({}, {})",
                self.fence, self.decisions, from.fence, from.decisions
            ));
        }
        if self.fence > journal_last || self.epoch > newest_epoch {
            return mismatch(format!(
                "it covers the journal to {} (epoch {}), past its {journal_last} (epoch {newest_epoch})",
                self.fence, self.epoch
            ));
        }
        let Some(life) = self.files.get(LIFE_PATH) else {
            return mismatch(format!("it holds no {LIFE_PATH}"));
        };
        let (open, previous) = days_of(life)?;
        if !self.files.contains_key(&day_file(&open, CHECKPOINT_PATH)) {
            return mismatch(format!(
                "it holds no session checkpoint of its open day {open}"
            ));
        }
        if let Some(path) = self
            .files
            .keys()
            .find(|path| !is_held(path, &open, previous.as_deref()))
        {
            return mismatch(format!("it names a file no session has: {path:?}"));
        }
        Ok(())
    }

    /// Writes the checkpoint's files into the empty scratch dir `dir` (only those
    /// [`Checkpoint::fits`] allows: a stored checkpoint names no other path).
    pub fn restore(&self, dir: &Path) -> Result<(), CheckpointError> {
        let life = self
            .files
            .get(LIFE_PATH)
            .map(String::as_str)
            .unwrap_or_default();
        let (open, previous) = days_of(life)?;
        for (path, text) in &self.files {
            if !is_held(path, &open, previous.as_deref()) {
                return Err(CheckpointError::Mismatch(format!(
                    "it names a file no session has: {path:?}"
                )));
            }
            let target = dir.join(path);
            let io = |source| CheckpointError::Io {
                path: path.clone(),
                source,
            };
            if let Some(parent) = target.parent() {
                std::fs::create_dir_all(parent).map_err(io)?;
            }
            std::fs::write(&target, text).map_err(io)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn person() -> Person {
        Person::new("acme", "alice").unwrap()
    }

    /// What a checkpoint of the holder of `epoch` covers at `fence`, the inbox read to
    /// `inbox_next`, with a decision for every other record before the fence.
    fn covered(epoch: u64, fence: Seq, inbox_next: u64) -> Covered {
        Covered {
            fence,
            decisions: fence / 2,
            epoch,
            inbox_next,
        }
    }

    fn dir(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("aura-fleet-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("errors")).unwrap();
        dir
    }

    /// A life whose open day is 2026-10-26, the day before 2026-10-25.
    const LIFE: &str = r#"{"open":"2026-10-26","previous":"2026-10-25"}"#;

    fn write(dir: &std::path::Path, path: &str, text: &str) {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn a_session_without_its_life_or_its_open_days_checkpoint_is_not_captured() {
        let dir = dir("not-yet");
        write(&dir, "days/2026-10-26/signals.jsonl", "{}\n");
        assert!(matches!(
            capture(&dir, &person(), covered(1, 5, 3)),
            Err(CheckpointError::NotYet)
        ));
        write(&dir, LIFE_PATH, LIFE);
        write(&dir, "days/2026-10-25/run.json", "{}");
        assert!(matches!(
            capture(&dir, &person(), covered(1, 5, 3)),
            Err(CheckpointError::NotYet)
        ));
    }

    #[test]
    fn the_life_the_open_day_and_the_ids_of_the_day_before_are_restored_byte_for_byte_and_nothing_else()
     {
        let from = dir("from");
        write(&from, LIFE_PATH, LIFE);
        let open = [
            ("days/2026-10-26/run.json", "{\"run\":1}"),
            ("days/2026-10-26/traces.jsonl", "{\"t\":1}\n{\"t\":2}\n"),
            (
                "days/2026-10-26/errors/quarantine_calls.jsonl",
                "{\"q\":1}\n",
            ),
            ("days/2026-10-25/signals.jsonl", "{\"s\":1}\n"),
            ("days/2026-10-25/live.json", "{\"start\":1}"),
        ];
        for (path, text) in open {
            write(&from, path, text);
        }
        // Not the session's state: the lock, the day before's traces and record, an older day.
        write(&from, "days/2026-10-26/run.lock", "");
        write(&from, "days/2026-10-25/traces.jsonl", "{}\n");
        write(&from, "days/2026-10-25/day.json", "{}");
        write(&from, "days/2026-10-24/run.json", "{}");
        let checkpoint = capture(&from, &person(), covered(7, 40, 12)).unwrap();
        let mut expected: Vec<&str> = open.iter().map(|(path, _)| *path).collect();
        expected.push(LIFE_PATH);
        expected.sort();
        assert_eq!(
            checkpoint
                .files
                .keys()
                .map(String::as_str)
                .collect::<Vec<_>>(),
            expected
        );
        checkpoint.fits(&person(), 40, 7, None).unwrap();
        let to = dir("to");
        checkpoint.restore(&to).unwrap();
        for path in expected {
            assert_eq!(
                std::fs::read(to.join(path)).unwrap(),
                std::fs::read(from.join(path)).unwrap()
            );
        }
        assert!(!to.join("days/2026-10-26/run.lock").exists());
        assert!(!to.join("days/2026-10-24").exists());
    }

    #[test]
    fn a_stored_checkpoint_that_is_anothers_past_the_journal_or_names_a_stranger_is_refused() {
        let mut checkpoint = Checkpoint {
            person: person(),
            epoch: 3,
            fence: 10,
            decisions: 5,
            inbox_next: 4,
            files: BTreeMap::from([
                (LIFE_PATH.to_owned(), LIFE.to_owned()),
                ("days/2026-10-26/run.json".to_owned(), "{}".to_owned()),
            ]),
        };
        assert!(checkpoint.fits(&person(), 10, 3, None).is_ok());
        let bob = Person::new("acme", "bob").unwrap();
        assert!(checkpoint.fits(&bob, 10, 3, None).is_err());
        assert!(checkpoint.fits(&person(), 9, 3, None).is_err());
        assert!(checkpoint.fits(&person(), 10, 2, None).is_err());
        // A journal replayed from a checkpoint: this one must be it or a later one.
        let earlier = covered(3, 8, 3);
        assert!(checkpoint.fits(&person(), 10, 3, Some(earlier)).is_ok());
        assert!(
            checkpoint
                .fits(&person(), 10, 3, Some(checkpoint.covered()))
                .is_ok()
        );
        let later = covered(3, 12, 5);
        assert!(checkpoint.fits(&person(), 14, 3, Some(later)).is_err());
        for stranger in [
            "../../etc/passwd",
            "days/../../etc/passwd",
            "days/2026-10-24/run.json",
            "days/2026-10-25/run.json",
            "run.lock",
        ] {
            let mut forged = checkpoint.clone();
            forged.files.insert(stranger.to_owned(), String::new());
            assert!(forged.fits(&person(), 10, 3, None).is_err(), "{stranger}");
            assert!(forged.restore(&dir("forged")).is_err(), "{stranger}");
        }
        // A life.json that names no day, or a path as its day, holds nothing to resume.
        for life in [r#"{"open":"../x"}"#, r#"{"previous":"2026-10-25"}"#, "[]"] {
            checkpoint
                .files
                .insert(LIFE_PATH.to_owned(), life.to_owned());
            assert!(checkpoint.fits(&person(), 10, 3, None).is_err(), "{life}");
        }
    }
}
