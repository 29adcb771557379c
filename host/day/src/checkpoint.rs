//! A run's checkpoint: which run a data dir holds, and where it stood after its last whole
//! tick, so a run killed at any point resumes where it was and ends byte-identical to a run
//! never interrupted.
//!
//! It owns the run's identity (scenario digest, seed, aura's version, the agents' source
//! digests: the same identity, the same traces) and its id (`run_<16 hex>` of that identity,
//! written in every trace); `<data-dir>/run.json` (`aura-run.v1`), replaced whole after each
//! tick once the tick's traces are durable, sealing their bytes (length and sha256) and the
//! quarantine log's length; and deciding at start whether a data dir starts a run, resumes
//! one, sets a finished one aside, or is refused because it holds another run. The records an
//! interrupted tick left past the checkpoint are not discarded: the journal takes them as
//! already written when the resumed tick produces them again ([`Journal::expect`]).
//!
//! It must not know what the orchestrator keeps between ticks (its state is an opaque JSON
//! value here, checked by the orchestrator when it reads it back) nor write anything but
//! through the journal.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use aura_contract::canonical::to_canonical_string;
use aura_contract::digest::hex;
use aura_contract::limits::CHECKPOINT_BYTES_MAX;
pub use aura_host::journal::RunLock;
use aura_host::journal::{Journal, JournalError, LogMark, TRACES_PATH};

/// The checkpoint, relative to the data dir.
pub const CHECKPOINT_PATH: &str = "run.json";

/// What a run leaves in the data dir besides its traces, set aside with them when another run
/// starts there: its checkpoint, its narrations, and a live session's signals, deliveries and
/// setup.
const SET_ASIDE_WITH_TRACES: [&str; 5] = [
    CHECKPOINT_PATH,
    crate::logs::NARRATIONS_PATH,
    crate::logs::SIGNALS_PATH,
    crate::logs::DELIVERIES_PATH,
    LIVE_SETUP_PATH,
];

/// A live session's setup as it started (live.v1 with its `start`), relative to the data dir:
/// what its journal makes a scenario of.
pub const LIVE_SETUP_PATH: &str = "live.json";

/// The checkpoint's format.
pub const CHECKPOINT_FORMAT: &str = "aura-run.v2";

/// What makes two runs the same run: the same inputs give the same traces.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunIdentity {
    /// The scenario's name.
    pub scenario: String,
    /// sha256 of the scenario's setup (its canonical JSON without its day: the same for a live
    /// session and the scenario its journal makes).
    pub setup_sha256: String,
    /// The seed.
    pub seed: u64,
    /// The seed of the agents' random sources.
    pub guest_seed: u64,
    /// The fuel rate deadlines become budgets at (the calibration).
    pub fuel_per_ms: u64,
    /// The aura version that runs it.
    pub aura: String,
    /// Each agent's component, by the sha256 of its source (the same on every target).
    pub plugins: BTreeMap<String, String>,
}

impl RunIdentity {
    /// `run_` and the first 16 hex digits of the sha256 of the identity's canonical JSON.
    pub fn id(&self) -> String {
        // Strings, an integer and a map of strings: always serializes.
        let value = serde_json::to_value(self).unwrap_or_default();
        let canonical = to_canonical_string(&value).unwrap_or_default();
        let digest = hex(&Sha256::digest(canonical.as_bytes()));
        format!("run_{}", &digest[..16])
    }

    /// How `self` (the run in the data dir) differs from `other` (the one asked for), in words.
    fn differences(&self, other: &Self) -> Vec<String> {
        // What a file says is shown as text, cut: never raw, never long.
        let shown = |text: &str, max: usize| -> String {
            aura_contract::visible::visible(text)
                .chars()
                .take(max)
                .collect()
        };
        let mut said = Vec::new();
        if self.scenario != other.scenario || self.setup_sha256 != other.setup_sha256 {
            said.push(format!(
                "scenario `{}` ({}) where `{}` ({}) was asked",
                shown(&self.scenario, 64),
                shown(&self.setup_sha256, 12),
                shown(&other.scenario, 64),
                shown(&other.setup_sha256, 12)
            ));
        }
        if self.fuel_per_ms != other.fuel_per_ms {
            said.push(format!(
                "{} fuel per ms where this host has {}",
                self.fuel_per_ms, other.fuel_per_ms
            ));
        }
        if self.guest_seed != other.guest_seed {
            said.push(format!(
                "guest seed {} where this host has {}",
                self.guest_seed, other.guest_seed
            ));
        }
        if self.seed != other.seed {
            said.push(format!("seed {} where {} was asked", self.seed, other.seed));
        }
        if self.aura != other.aura {
            said.push(format!(
                "aura {} where this is {}",
                shown(&self.aura, 32),
                other.aura
            ));
        }
        if self.plugins != other.plugins {
            let changed: Vec<String> = self
                .plugins
                .keys()
                .chain(other.plugins.keys())
                .filter(|agent| self.plugins.get(*agent) != other.plugins.get(*agent))
                .map(String::as_str)
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .take(8)
                .map(|agent| shown(agent, 32))
                .collect();
            said.push(format!("other plugins ({} differ)", changed.join(", ")));
        }
        said
    }
}

/// `<data-dir>/run.json`: a run after its last whole tick.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Checkpoint {
    /// Always [`CHECKPOINT_FORMAT`].
    pub format: String,
    /// The run's id ([`RunIdentity::id`]).
    pub run: String,
    /// What the run is.
    pub identity: RunIdentity,
    /// What it runs through: a scenario's whole day (sha256 of the scenario), or a live
    /// session's journal.
    pub day: DayInput,
    /// Ticks the run has (a live session: the ticks it has run).
    pub ticks: usize,
    /// The tick it goes on with.
    pub next_tick: usize,
    /// Whether it ran its last tick.
    pub finished: bool,
    /// traces.jsonl after the last whole tick.
    pub traces: LogMark,
    /// The quarantine log after the last whole tick.
    pub quarantine: LogMark,
    /// Quarantine records the run wrote so far.
    pub quarantined: u64,
    /// What the orchestrator keeps between ticks (its own format).
    pub state: Value,
}

/// What a run goes through: the day it was given whole, or the one it lives.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub enum DayInput {
    /// A scenario's day, by the sha256 of its canonical JSON: a resumed run must be given the
    /// same day again.
    Scenario(String),
    /// A live session: its signals come from the journal (`signals.jsonl`).
    Live {
        /// When its last tick ran (RFC 3339, in the person's offset): the schedule goes on
        /// after it.
        #[serde(with = "time::serde::rfc3339::option")]
        last_tick: Option<time::OffsetDateTime>,
    },
}

/// Why a run could not start or checkpoint.
#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    /// The data dir could not be read or written.
    #[error(transparent)]
    Journal(#[from] JournalError),
    /// run.json is not a checkpoint this aura reads.
    #[error(
        "{CHECKPOINT_PATH} is not a checkpoint this aura can read ({reason}); `--fresh` sets it aside and starts over"
    )]
    Unreadable {
        /// Why.
        reason: String,
    },
    /// The data dir holds another run.
    #[error(
        "this data dir holds run {run} ({state}) of {differences}; run it with the same arguments to resume it, or use another --data-dir, or `--fresh` to set it aside and start over"
    )]
    AnotherRun {
        /// Its id.
        run: String,
        /// `finished`, or how far it got.
        state: String,
        /// How it differs, in words.
        differences: String,
    },
    /// The run's state outgrew the checkpoint's bound: the run stops rather than write a
    /// checkpoint it could not read back.
    #[error("the run's checkpoint would be {bytes} bytes, more than {CHECKPOINT_BYTES_MAX}")]
    TooLarge {
        /// Its size.
        bytes: u64,
    },
    /// The data dir holds traces with no checkpoint (an older aura's, or written by hand).
    #[error(
        "{TRACES_PATH} holds {bytes} bytes of traces but there is no {CHECKPOINT_PATH} to say which run they belong to; `--fresh` sets them aside and starts over"
    )]
    Unidentified {
        /// Size of traces.jsonl.
        bytes: u64,
    },
}

/// How a run starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Start {
    /// Resume the data dir's unfinished run of the same identity; else start (a finished one
    /// of the same identity is set aside).
    Resume,
    /// Set aside whatever the data dir holds and start over.
    Fresh,
}

/// A run that may write to the data dir.
#[derive(Debug)]
pub struct Begun {
    /// The checkpoint to go on from; `None`: from the first tick.
    pub resume: Option<Checkpoint>,
    /// Where an earlier run's traces were set aside, if they were.
    pub set_aside: Option<String>,
    /// Held until the run ends: no other run writes to the data dir meanwhile.
    pub lock: RunLock,
}

/// Decides how the run `identity` starts on `journal`'s data dir, and prepares the journal for
/// it (an interrupted tick's records taken as already written).
pub fn begin(
    journal: &Journal,
    identity: &RunIdentity,
    day: &DayInput,
    start: Start,
) -> Result<Begun, CheckpointError> {
    let lock = journal.lock_run()?;
    let (traces, _) = journal.marks();
    if start == Start::Fresh {
        let set_aside = match traces.bytes > 0 || journal.exists(CHECKPOINT_PATH) {
            true => Some(journal.set_aside(&SET_ASIDE_WITH_TRACES)?),
            false => None,
        };
        return Ok(Begun {
            resume: None,
            set_aside,
            lock,
        });
    }
    let Some(found) = read(journal)? else {
        if traces.bytes > 0 {
            return Err(CheckpointError::Unidentified {
                bytes: traces.bytes,
            });
        }
        return Ok(Begun {
            resume: None,
            set_aside: None,
            lock,
        });
    };
    let mut differences = found.identity.differences(identity);
    match (&found.day, day) {
        (DayInput::Scenario(was), DayInput::Scenario(now)) if was != now => {
            differences.push(format!(
                "another day of it ({}, where {} was asked)",
                aura_contract::visible::visible(was)
                    .chars()
                    .take(12)
                    .collect::<String>(),
                &now[..now.len().min(12)]
            ))
        }
        (DayInput::Scenario(_), DayInput::Live { .. }) => {
            differences.push("a scenario's day, where a live session was asked".to_owned());
        }
        (DayInput::Live { .. }, DayInput::Scenario(_)) => {
            differences.push("a live session, where a scenario's day was asked".to_owned());
        }
        _ => {}
    }
    if !differences.is_empty() {
        return Err(CheckpointError::AnotherRun {
            run: found.run,
            state: match found.finished {
                true => "finished".to_owned(),
                false => format!("interrupted at tick {} of {}", found.next_tick, found.ticks),
            },
            differences: differences.join("; "),
        });
    }
    // A scenario's day run again after it finished is a new run (the old one kept aside); a
    // live day that finished (its life ended) resumes finished: its records are the life's,
    // and a session that opens it again (a fleet's next holder) finds it done.
    if found.finished && matches!(day, DayInput::Scenario(_)) {
        // The same run again: nothing to resume, and nothing lost by keeping the old aside.
        return Ok(Begun {
            resume: None,
            set_aside: Some(journal.set_aside(&SET_ASIDE_WITH_TRACES)?),
            lock,
        });
    }
    journal.expect(&found.traces, &found.quarantine)?;
    Ok(Begun {
        resume: Some(found),
        set_aside: None,
        lock,
    })
}

/// The data dir's checkpoint, if it has one.
fn read(journal: &Journal) -> Result<Option<Checkpoint>, CheckpointError> {
    let Some(bytes) = journal.read_file(CHECKPOINT_PATH, CHECKPOINT_BYTES_MAX)? else {
        return Ok(None);
    };
    let unreadable = |reason: String| CheckpointError::Unreadable { reason };
    let text = std::str::from_utf8(&bytes).map_err(|e| unreadable(e.to_string()))?;
    let value = aura_contract::canonical::parse_i_json(text, CHECKPOINT_BYTES_MAX as usize)
        .map_err(|e| unreadable(e.to_string()))?;
    let checkpoint: Checkpoint =
        serde_json::from_value(value).map_err(|e| unreadable(e.to_string()))?;
    if checkpoint.format != CHECKPOINT_FORMAT {
        return Err(unreadable(format!("format `{}`", checkpoint.format)));
    }
    if checkpoint.run != checkpoint.identity.id() {
        return Err(unreadable(format!(
            "its run id {} is not its identity's",
            checkpoint.run
        )));
    }
    if checkpoint.next_tick > checkpoint.ticks {
        return Err(unreadable(format!(
            "tick {} of {}",
            checkpoint.next_tick, checkpoint.ticks
        )));
    }
    let identity = &checkpoint.identity;
    let day_digest = match &checkpoint.day {
        DayInput::Scenario(digest) => Some(digest),
        DayInput::Live { .. } => None,
    };
    let digests = std::iter::once(&identity.setup_sha256)
        .chain(day_digest)
        .chain(identity.plugins.values());
    let hex64 = |d: &String| {
        d.len() == 64
            && d.bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    };
    if !digests.into_iter().all(hex64)
        || identity.plugins.len() > aura_contract::catalogue::CATALOGUE.len()
    {
        return Err(unreadable(
            "its identity's digests are not sha256 hex".to_owned(),
        ));
    }
    Ok(Some(checkpoint))
}

/// Where the data dir's live session stands: when its last tick ran, and whether its day
/// ended. No checkpoint: no tick yet.
pub fn live_progress(
    journal: &Journal,
) -> Result<(Option<time::OffsetDateTime>, bool), CheckpointError> {
    match read(journal)? {
        Some(Checkpoint {
            day: DayInput::Live { last_tick },
            finished,
            ..
        }) => Ok((last_tick, finished)),
        Some(_) => Err(CheckpointError::Unreadable {
            reason: "it holds a scenario's run, not a live session".to_owned(),
        }),
        None => Ok((None, false)),
    }
}

/// Replaces the data dir's checkpoint with `checkpoint`, durably.
pub fn save(journal: &Journal, checkpoint: &Checkpoint) -> Result<(), CheckpointError> {
    // Strings, integers, booleans and JSON values: always serializes.
    let value = serde_json::to_value(checkpoint).unwrap_or_default();
    let text = to_canonical_string(&value).map_err(|e| CheckpointError::Unreadable {
        reason: e.to_string(),
    })?;
    if text.len() as u64 > CHECKPOINT_BYTES_MAX {
        return Err(CheckpointError::TooLarge {
            bytes: text.len() as u64,
        });
    }
    Ok(journal.replace_file(CHECKPOINT_PATH, text.as_bytes())?)
}
