//! A held person's checkpoint: their session's data dir as of a journal sequence, kept as an
//! object of the fleet's store (JetStream's object store) so that a host taking them over resumes from it instead of living
//! their whole journal again.
//!
//! It owns the checkpoint's form (the person, the journal sequence and the inbox sequence it
//! covers, and the session's files: its checkpoint first, then its logs), capturing it from a
//! scratch data dir and restoring it into one. A checkpoint is captured while no signal is
//! being taken, right after one was journaled, so the signals in it are exactly the journal's
//! up to its sequence; the journal's records up to there never change (the fence), so a
//! checkpoint stays true whoever wrote it and however late it was stored. Only the files named
//! here are read back, never a path a stored checkpoint names. It must not decide when to
//! checkpoint (the assistant does) nor resume a session (the live session does, from the files).

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use aura_contract::limits::FLEET_CHECKPOINT_BYTES_MAX;
use aura_contract::person::Person;
use aura_day::checkpoint::{CHECKPOINT_PATH, LIVE_SETUP_PATH};
use aura_host::journal::{DELIVERIES_PATH, QUARANTINE_PATH, SIGNALS_PATH, TRACES_PATH};

use crate::protocol::Seq;

/// The session's files a checkpoint holds, in the order they are read: its checkpoint before
/// the logs it refers to (logs only grow, so each holds at least what the checkpoint says).
pub const FILES: [&str; 6] = [
    CHECKPOINT_PATH,
    LIVE_SETUP_PATH,
    SIGNALS_PATH,
    TRACES_PATH,
    DELIVERIES_PATH,
    QUARANTINE_PATH,
];

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
    /// The first inbox sequence it does not hold.
    pub inbox_next: u64,
    /// The session's files by path (those of [`FILES`] it had), as text.
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

/// Captures `person`'s session in `dir` as of journal sequence `fence`, its inbox read up to
/// `inbox_next` (exclusive).
pub fn capture(
    dir: &Path,
    person: &Person,
    epoch: u64,
    fence: Seq,
    inbox_next: u64,
) -> Result<Checkpoint, CheckpointError> {
    let mut files = BTreeMap::new();
    let mut bytes = 0;
    for path in FILES {
        let text = match std::fs::read_to_string(dir.join(path)) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                if path == CHECKPOINT_PATH {
                    return Err(CheckpointError::NotYet);
                }
                continue;
            }
            Err(source) => {
                return Err(CheckpointError::Io {
                    path: path.to_owned(),
                    source,
                });
            }
        };
        bytes += text.len();
        if bytes > FLEET_CHECKPOINT_BYTES_MAX {
            return Err(CheckpointError::TooLarge { bytes });
        }
        files.insert(path.to_owned(), text);
    }
    Ok(Checkpoint {
        person: person.clone(),
        epoch,
        fence,
        inbox_next,
        files,
    })
}

impl Checkpoint {
    /// Checks that this checkpoint is `person`'s and within a journal whose last sequence is
    /// `journal_last` and whose newest epoch is `newest_epoch`.
    pub fn fits(
        &self,
        person: &Person,
        journal_last: Seq,
        newest_epoch: u64,
    ) -> Result<(), CheckpointError> {
        let mismatch = |why: String| Err(CheckpointError::Mismatch(why));
        if &self.person != person {
            return mismatch(format!("it is {}'s, not {person}'s", self.person));
        }
        if self.fence > journal_last || self.epoch > newest_epoch {
            return mismatch(format!(
                "it covers the journal to {} (epoch {}), past its {journal_last} (epoch {newest_epoch})",
                self.fence, self.epoch
            ));
        }
        if !self.files.contains_key(CHECKPOINT_PATH) {
            return mismatch("it holds no session checkpoint".to_owned());
        }
        if let Some(path) = self
            .files
            .keys()
            .find(|path| !FILES.contains(&path.as_str()))
        {
            return mismatch(format!("it names a file no session has: {path:?}"));
        }
        Ok(())
    }

    /// Writes the checkpoint's files into the empty scratch dir `dir`.
    pub fn restore(&self, dir: &Path) -> Result<(), CheckpointError> {
        for path in FILES {
            let Some(text) = self.files.get(path) else {
                continue;
            };
            let target = dir.join(path);
            let io = |source| CheckpointError::Io {
                path: path.to_owned(),
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

    fn dir(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("aura-fleet-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("errors")).unwrap();
        dir
    }

    #[test]
    fn a_session_without_its_checkpoint_is_not_captured() {
        let dir = dir("not-yet");
        std::fs::write(dir.join(SIGNALS_PATH), "{}\n").unwrap();
        assert!(matches!(
            capture(&dir, &person(), 1, 5, 3),
            Err(CheckpointError::NotYet)
        ));
    }

    #[test]
    fn what_is_captured_is_restored_byte_for_byte_and_nothing_else() {
        let from = dir("from");
        std::fs::write(from.join(CHECKPOINT_PATH), "{\"run\":1}").unwrap();
        std::fs::write(from.join(TRACES_PATH), "{\"t\":1}\n{\"t\":2}\n").unwrap();
        std::fs::write(from.join(QUARANTINE_PATH), "{\"q\":1}\n").unwrap();
        std::fs::write(from.join("run.lock"), "").unwrap();
        let checkpoint = capture(&from, &person(), 7, 40, 12).unwrap();
        assert_eq!(
            checkpoint.files.keys().collect::<Vec<_>>(),
            [QUARANTINE_PATH, CHECKPOINT_PATH, TRACES_PATH]
        );
        checkpoint.fits(&person(), 40, 7).unwrap();
        let to = dir("to");
        checkpoint.restore(&to).unwrap();
        for path in [CHECKPOINT_PATH, TRACES_PATH, QUARANTINE_PATH] {
            assert_eq!(
                std::fs::read(to.join(path)).unwrap(),
                std::fs::read(from.join(path)).unwrap()
            );
        }
        assert!(!to.join("run.lock").exists());
    }

    #[test]
    fn a_stored_checkpoint_that_is_anothers_past_the_journal_or_names_a_stranger_is_refused() {
        let mut checkpoint = Checkpoint {
            person: person(),
            epoch: 3,
            fence: 10,
            inbox_next: 4,
            files: BTreeMap::from([(CHECKPOINT_PATH.to_owned(), "{}".to_owned())]),
        };
        assert!(checkpoint.fits(&person(), 10, 3).is_ok());
        let bob = Person::new("acme", "bob").unwrap();
        assert!(checkpoint.fits(&bob, 10, 3).is_err());
        assert!(checkpoint.fits(&person(), 9, 3).is_err());
        assert!(checkpoint.fits(&person(), 10, 2).is_err());
        checkpoint
            .files
            .insert("../../etc/passwd".to_owned(), String::new());
        assert!(checkpoint.fits(&person(), 10, 3).is_err());
    }
}
