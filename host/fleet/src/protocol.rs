//! The fleet's protocol: which host runs a person's assistant, and what a host may still write
//! and deliver for that person.
//!
//! It owns the rules, as decisions over what a host last read and what the store answered:
//! - **the lease**: a person's key in the lease bucket (JetStream key-value) names the host
//!   that holds them. A host takes a person only by creating the key (it exists for nobody
//!   else), keeps them by updating it at the revision it last wrote (compare-and-set), and has
//!   lost them the moment an update is refused. The bucket's own age limit removes a key that
//!   was not renewed in time, so expiry is the server's clock, never a host's. The revision at
//!   which a host created the key is its **epoch**: revisions only grow, so a later holder
//!   always has a larger epoch.
//! - **the fence**: every record a host appends to a person's journal (a JetStream subject)
//!   carries the journal's last sequence as that host knows it (`Nats-Expected-Last-Subject-
//!   Sequence`). A new holder's first record is its takeover; once it is in, every older holder's
//!   next append is refused, whatever that holder believes about its lease (a paused process,
//!   a partition, a clock that jumped), and a refused holder stops for that person.
//! - **delivery**: decision `n` is published to the person's decisions subject only after the
//!   journal holds it, and only as the message after decision `n - 1` (the same header). A
//!   refusal means another holder delivered it: the host reads the last message and goes on
//!   from there. No decision is delivered twice or out of order.
//!
//! It must not touch NATS, a clock or a file: the fleet's steps over a store (`store::Fleet`,
//! on JetStream or the simulation's store) carry out what these
//! decisions say, and the model checker (`model`, in the tests) explores every interleaving of
//! them with crashes, expiries and pauses.

use serde::{Deserialize, Serialize};

/// A lease's epoch: the lease bucket's revision at which its holder created the person's key.
pub type Epoch = u64;

/// A sequence number in a JetStream stream (the journal's or the decisions'); 0 is "nothing yet".
pub type Seq = u64;

/// What a host read of a person's key in the lease bucket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeaseEntry<'a> {
    /// No key: nobody holds the person (never held, released, or expired by the server).
    Absent,
    /// The key, naming its holder, at the bucket's revision `revision`.
    Held {
        /// The holder's host id.
        host: &'a str,
        /// The key's last revision.
        revision: u64,
    },
}

/// What a host does next about one person's lease.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeaseStep {
    /// Create the key (fails if it exists): the person is free.
    Create,
    /// Update the key at `revision`: this host holds the person and keeps them.
    Renew {
        /// The revision the update must find.
        revision: u64,
    },
    /// Another host holds the person: leave them.
    Wait,
    /// The key is no longer this host's: stop for the person at once.
    Lost,
}

/// What `me` does about a person's lease, given what it holds and what it read.
pub fn lease_step(me: &str, holding: Option<&Holding>, entry: LeaseEntry<'_>) -> LeaseStep {
    match (holding, entry) {
        (None, LeaseEntry::Absent) => LeaseStep::Create,
        (None, LeaseEntry::Held { .. }) => LeaseStep::Wait,
        (Some(holding), LeaseEntry::Held { host, revision })
            if host == me && revision == holding.revision =>
        {
            LeaseStep::Renew { revision }
        }
        (Some(_), _) => LeaseStep::Lost,
    }
}

/// What the store answered to an append or a publish made with an expected last sequence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stored {
    /// Stored at this sequence.
    At(Seq),
    /// Refused: the subject's last sequence was not the one expected.
    Conflict,
}

/// What a host does after its append to a person's journal was answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AfterAppend {
    /// The record is durable; go on.
    Go,
    /// The takeover record was refused: a record came after this host read the journal. Read
    /// the journal again from its fence, then append the takeover again.
    Reread,
    /// Another host took the person over: stop for them now, acknowledge nothing more.
    Fenced,
}

/// A host's holding of one person, from creating their lease key until it stops for them.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Holding {
    /// The revision at which this host created the key.
    pub epoch: Epoch,
    /// The key's revision as this host last wrote it.
    pub revision: u64,
    /// The journal's last sequence as this host last wrote or read it: what its next append
    /// must find.
    pub fence: Seq,
    /// Whether this host's takeover record is in the journal: until it is, the host reads
    /// and takes nothing.
    pub taken_over: bool,
}

impl Holding {
    /// A host that created the key at `revision` and read the journal up to `fence`.
    pub fn acquired(revision: u64, fence: Seq) -> Self {
        Self {
            epoch: revision,
            revision,
            fence,
            taken_over: false,
        }
    }

    /// The key was updated at `revision`.
    pub fn renewed(&mut self, revision: u64) {
        self.revision = revision;
    }

    /// The sequence the next append must find (its `Nats-Expected-Last-Subject-Sequence`).
    pub fn expected(&self) -> Seq {
        self.fence
    }

    /// Takes the store's answer to this host's append.
    pub fn appended(&mut self, answer: Stored) -> AfterAppend {
        match answer {
            Stored::At(seq) => {
                self.fence = seq;
                self.taken_over = true;
                AfterAppend::Go
            }
            Stored::Conflict if self.taken_over => AfterAppend::Fenced,
            Stored::Conflict => AfterAppend::Reread,
        }
    }

    /// The journal was read again after a refused takeover, up to `fence`, its newest takeover
    /// of epoch `newest`. If a newer holder took the person over meanwhile, this host stops
    /// ([`AfterAppend::Fenced`]): an older lease must never override a newer one (the model
    /// checker found that a bare retry would); otherwise it appends its takeover again.
    pub fn reread(&mut self, fence: Seq, newest: Epoch) -> AfterAppend {
        if newest > self.epoch {
            return AfterAppend::Fenced;
        }
        self.fence = fence;
        AfterAppend::Go
    }
}

/// A person's decisions as delivered: where the next one goes on their decisions subject.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Outbox {
    /// The number of the next decision to deliver (decisions count from 0).
    pub next: u64,
    /// The subject's last sequence: what the next publish must find.
    pub last: Seq,
}

/// What a host does after its publish of a decision was answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AfterPublish {
    /// Delivered; go on with the next.
    Delivered,
    /// Another holder delivered it (or more): read the subject's last message and
    /// [`Outbox::caught_up`] with it.
    ReadLast,
}

impl Outbox {
    /// The outbox a host reads at takeover: the subject's last message was decision `number`
    /// at `seq`, or there is none.
    pub fn read(last: Option<(u64, Seq)>) -> Self {
        match last {
            Some((number, seq)) => Self {
                next: number + 1,
                last: seq,
            },
            None => Self::default(),
        }
    }

    /// Whether decision `next` may be published: the journal holds `journaled` decisions,
    /// and a decision is delivered only once the journal holds it.
    pub fn due(&self, journaled: u64) -> bool {
        self.next < journaled
    }

    /// Takes the store's answer to the publish of decision `next`.
    pub fn published(&mut self, answer: Stored) -> AfterPublish {
        match answer {
            Stored::At(seq) => {
                self.next += 1;
                self.last = seq;
                AfterPublish::Delivered
            }
            Stored::Conflict => AfterPublish::ReadLast,
        }
    }

    /// The subject's last message, read after a refused publish. A refusal means another
    /// holder delivered this decision or later ones: a last message older than the one this
    /// host delivered before is not a holder's (decisions only go forward), and is refused
    /// rather than followed back into delivering decisions again.
    pub fn caught_up(&mut self, last: Option<(u64, Seq)>) -> Result<(), Regressed> {
        let read = Self::read(last);
        if read.next < self.next || read.last <= self.last {
            return Err(Regressed {
                next: self.next,
                last: last.map(|(number, _)| number),
            });
        }
        *self = read;
        Ok(())
    }
}

/// A person's decisions subject went back: its last message is not the one after what this
/// host delivered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "the decisions subject's last message is decision {last:?}, but this host delivered up to decision {next} (exclusive)"
)]
pub struct Regressed {
    /// The next decision this host would deliver.
    pub next: u64,
    /// The number of the subject's last decision, if it has one.
    pub last: Option<u64>,
}

/// One record of a person's journal.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "record", rename_all = "snake_case")]
pub enum Record<S, D> {
    /// A host took the person over.
    Takeover {
        /// Its host id.
        host: String,
        /// Its epoch.
        epoch: Epoch,
    },
    /// An input the holder journals under the fence: the end of a person's inputs (their
    /// signals are their life's, in the fleet's home of lives).
    Signal {
        /// The sender's id for it: a signal sent again under the same id is applied once.
        id: String,
        /// What was sent.
        signal: S,
    },
    /// A decision, delivered only once this record is durable.
    Decision {
        /// Its number among the person's decisions, from 0.
        number: u64,
        /// What was decided.
        decision: D,
    },
}

/// What a person's head covers of their journal: the journal's records up to `fence` may be
/// purged once it is the person's head and the decisions it counts were delivered, since no
/// session makes them again (it resumes from its life's open day, past them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Covered {
    /// The journal's last sequence it covers (a record kept when the journal is purged below
    /// it, so the subject always has a last sequence to fence on).
    pub fence: Seq,
    /// The decisions journaled up to `fence`: the journal's next decision after it is numbered
    /// this.
    pub decisions: u64,
    /// The newest takeover's epoch up to `fence` (the holder's that moved the head).
    pub epoch: Epoch,
    /// The first inbox sequence the person's life did not hold when the head moved (the
    /// inbox is purged below it).
    pub inbox_next: u64,
}

/// What a host rebuilds from a person's journal when it takes them over.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Replayed<S, D> {
    /// The inputs journaled (the end of inputs), in order, each id once (after `covered`'s
    /// fence, when the journal was replayed from a head).
    pub signals: Vec<(String, S)>,
    /// The decisions the journal holds, from decision [`Replayed::decisions_base`] (the
    /// first the journal keeps: when it was replayed from a head, those before its fence that
    /// a purge left, then those after).
    pub decisions: Vec<D>,
    /// The number of the first of `decisions`.
    pub first_decision: u64,
    /// The journal's last sequence (0 when it is empty).
    pub last: Seq,
    /// The newest takeover's epoch (0 when none).
    pub epoch: Epoch,
    /// The head the journal was replayed from, when its records up to the head's fence were
    /// not replayed (they may have been purged).
    pub covered: Option<Covered>,
}

impl<S, D> Replayed<S, D> {
    /// The number of the first decision in [`Replayed::decisions`].
    pub fn decisions_base(&self) -> u64 {
        self.first_decision
    }
}

/// Rebuilds a person's state from their journal's records with their sequences, in order. A
/// signal whose id came before is not applied again (a holder that journaled it may have died
/// before acknowledging it, and its sender sent it again); a decision numbered other than the
/// next is an error: the journal was not written under the fence.
pub fn replay<S, D>(
    records: impl IntoIterator<Item = (Seq, Record<S, D>)>,
) -> Result<Replayed<S, D>, ReplayError> {
    replay_from(None, records)
}

/// [`replay`] after what head `covered` covers (or from the journal's start): the inputs and
/// takeovers up to its fence are passed over, its decisions are kept (one may not be delivered
/// yet: the journal is purged below a head only once the decisions it covers were delivered,
/// and may not be yet), numbered back from the head's count. A purge keeps the record at the fence, so the journal must hold it; a
/// journal replayed from its start must start with its first holder's takeover (sequences are
/// the stream's, shared by every person, so a first record's number says nothing).
pub fn replay_from<S, D>(
    covered: Option<Covered>,
    records: impl IntoIterator<Item = (Seq, Record<S, D>)>,
) -> Result<Replayed<S, D>, ReplayError> {
    let records: Vec<_> = records.into_iter().collect();
    let fence = covered.map(|covered| covered.fence);
    // The decisions kept up to the fence are the last the head counts.
    let kept_before = records
        .iter()
        .filter(|(seq, record)| {
            fence.is_some_and(|fence| *seq <= fence) && matches!(record, Record::Decision { .. })
        })
        .count() as u64;
    let counted = covered.map_or(0, |covered| covered.decisions);
    let Some(base) = counted.checked_sub(kept_before) else {
        return Err(ReplayError::DecisionOutOfOrder {
            seq: fence.unwrap_or(0),
            number: kept_before,
            expected: counted,
        });
    };
    let mut replayed = Replayed {
        signals: Vec::new(),
        decisions: Vec::new(),
        first_decision: base,
        last: 0,
        epoch: covered.map_or(0, |covered| covered.epoch),
        covered,
    };
    let mut at_fence = fence.is_none();
    let mut ids = std::collections::HashSet::new();
    for (seq, record) in records {
        if seq <= replayed.last {
            return Err(ReplayError::OutOfOrder {
                seq,
                after: replayed.last,
            });
        }
        let first = replayed.last == 0;
        replayed.last = seq;
        match fence {
            None if first && !matches!(record, Record::Takeover { .. }) => {
                return Err(ReplayError::Purged {
                    first: seq,
                    covered: 0,
                });
            }
            Some(fence) if seq <= fence => {
                at_fence |= seq == fence;
                if !matches!(record, Record::Decision { .. }) {
                    continue;
                }
            }
            Some(fence) if !at_fence => {
                return Err(ReplayError::Purged {
                    first: seq,
                    covered: fence,
                });
            }
            _ => {}
        }
        match record {
            Record::Takeover { epoch, .. } => replayed.epoch = replayed.epoch.max(epoch),
            Record::Signal { id, signal } => {
                if ids.insert(id.clone()) {
                    replayed.signals.push((id, signal));
                }
            }
            Record::Decision { number, decision } => {
                let expected = base + replayed.decisions.len() as u64;
                if number != expected {
                    return Err(ReplayError::DecisionOutOfOrder {
                        seq,
                        number,
                        expected,
                    });
                }
                replayed.decisions.push(decision);
            }
        }
    }
    match fence {
        Some(fence) if !at_fence => Err(ReplayError::Ahead {
            last: replayed.last,
            covered: fence,
        }),
        _ => Ok(replayed),
    }
}

/// Why a person's journal cannot be replayed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReplayError {
    /// Sequences must grow.
    #[error("journal record {seq} comes after record {after}")]
    OutOfOrder {
        /// The record's sequence.
        seq: Seq,
        /// The sequence before it.
        after: Seq,
    },
    /// Decisions are journaled in order, each once.
    #[error("journal record {seq} is decision {number}, but the next decision is {expected}")]
    DecisionOutOfOrder {
        /// The record's sequence.
        seq: Seq,
        /// Its decision number.
        number: u64,
        /// The number the journal's decisions so far call for.
        expected: u64,
    },
    /// The journal's records before `first` are gone and no head covers them.
    #[error(
        "the journal's first record read is {first}, but its head covers it only to {covered} (0: none): records were purged that no head covers"
    )]
    Purged {
        /// The first record read past the head (or the journal's first).
        first: Seq,
        /// The head's fence (0: no head).
        covered: Seq,
    },
    /// The head covers records after the last one read: the journal moved since it was
    /// read (read it again).
    #[error("the journal was read to record {last}, but its head covers it to {covered}")]
    Ahead {
        /// The journal's last record read.
        last: Seq,
        /// The head's fence.
        covered: Seq,
    },
}

#[cfg(test)]
mod model;
#[cfg(test)]
mod tests;
