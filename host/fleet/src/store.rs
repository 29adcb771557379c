//! The seam between the fleet's steps and where a fleet keeps its state: the [`FleetStore`]
//! trait (key-value buckets with compare-and-set on a key's revision and expiry, subjects of
//! append-only logs with an expected-last-sequence check and a purge below a sequence), and
//! [`Fleet`], the protocol's steps carried out over any such store.
//!
//! It owns the steps (a claim is a create, a renewal an update at the holder's revision, an
//! append or a delivery a publish with the expected last sequence; each answer goes back to
//! [`crate::protocol`]'s rules), the subjects, keys and headers every store uses, and what a
//! step's error means. There are two stores: JetStream ([`crate::jetstream`]), what a fleet
//! runs on, and the deterministic simulation's (tests/all/dst_fleet.rs), an in-memory store
//! on a simulated clock that injects faults. A step that fails or times out is an error, after
//! which the host stops for the person, since it cannot know what the store kept (the model
//! checks that this is safe: it is a write followed by a stop). It must not decide who holds a
//! person or what a refusal means (the protocol does), nor what a record says (the live
//! session does).

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use bytes::Bytes;
use serde_json::Value;

use aura_contract::limits::{
    FLEET_RECORD_BYTES_MAX, FLEET_RECORDS_PER_PERSON_MAX, FLEET_TAKEOVER_ATTEMPTS_MAX,
};
use aura_contract::person::Person;

mod heads;
pub use heads::{Purged, Saved};
mod error;
pub use error::FleetError;
pub(crate) use error::during;
pub(crate) use error::failed;
mod people;
pub use people::{
    Enrolment, INPUTS_END_HEADER, Inbox, MSG_ID_HEADER, PERSON_HEADER, Sent, signals_subject,
};

use crate::protocol::{
    AfterAppend, AfterPublish, Holding, LeaseEntry, LeaseStep, Outbox, Record, ReplayError,
    Replayed, Seq, Stored, lease_step, replay, replay_from,
};

/// The header naming a journal record's writer's epoch.
pub const EPOCH_HEADER: &str = "Aura-Epoch";
/// The header naming a delivered decision's number.
pub const DECISION_HEADER: &str = "Aura-Decision";
/// The header that makes a publish's expected last sequence that of every subject matching
/// its value (a filter ending in `>`), not of the subject published to: JetStream's own
/// (nats-server 2.11 and later). A life kept on the fleet's store fences all its subjects on
/// one sequence this way.
pub const EXPECTED_FILTER_HEADER: &str = "Nats-Expected-Last-Subject-Sequence-Subject";

/// The subject of `person`'s journal.
pub fn journal_subject(person: &Person) -> String {
    format!("aura.journal.{}", person.key())
}

/// The subject of `person`'s delivered decisions (what their apps read).
pub fn decisions_subject(person: &Person) -> String {
    format!("aura.decision.{}", person.key())
}

/// A journal record as a store holds it: signals and decisions as JSON.
pub type Journaled = Record<Value, Value>;

/// One step on a store, answered later.
pub type Step<'a, T> = Pin<Box<dyn Future<Output = Result<T, FleetError>> + Send + 'a>>;

/// A key-value bucket of the fleet's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Bucket {
    /// Leases: a person's key names the host that holds them; a key lasts
    /// [`FLEET_LEASE_MS`](aura_contract::limits::FLEET_LEASE_MS) after it was last written.
    Leases,
    /// People: a person's key holds their [`Enrolment`].
    People,
    /// Hosts present: a host's key lasts [`FLEET_LEASE_MS`](aura_contract::limits::FLEET_LEASE_MS) after it was last written.
    Hosts,
    /// Heads: a person's key holds what their journal's compaction covers
    /// ([`crate::protocol::Covered`]), moved only forward.
    Heads,
    /// Lives kept on the fleet's store ([`crate::life`]): where each stands, its days.
    Lives,
    /// Who holds a life kept on the fleet's store: a key lasts [`FLEET_LEASE_MS`](aura_contract::limits::FLEET_LEASE_MS) after it
    /// was last written.
    LifeHolds,
}

/// An append-only log of the fleet's, a subject per person.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Log {
    /// The people's journals (a full subject refuses new records).
    Journal,
    /// The people's delivered decisions (a full subject forgets its oldest).
    Decisions,
    /// The signals sent to people (a full subject refuses new ones).
    Signals,
    /// The days of lives kept on the fleet's store: a subject per day and log (a full subject
    /// refuses new messages).
    Days,
}

/// A key's value and the revision it was written at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The value.
    pub value: Bytes,
    /// Its revision: what an update must name to replace it.
    pub revision: u64,
}

/// A message of a log: where it was stored, its headers (the first value of each) and body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    /// Its sequence in its log.
    pub seq: Seq,
    /// Its headers.
    pub headers: BTreeMap<String, String>,
    /// Its body.
    pub payload: Bytes,
}

impl Message {
    /// Header `name`'s value, if it has one.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).map(String::as_str)
    }
}

/// A subject's messages as they are stored, from a sequence on.
pub trait Messages: Send {
    /// The next message, when it comes (cancel-safe: a message is not lost when the wait is
    /// dropped).
    fn next(&mut self) -> Step<'_, Message>;
}

/// Where a fleet keeps its state. Each step is answered within the store's own bound (a step
/// that is not answered in time is [`FleetError::TimedOut`]: what it did is unknown); a
/// listing or a read of many messages, within that bound for each key or message.
pub trait FleetStore: std::fmt::Debug + Send + Sync {
    /// Key `key` of `bucket`, if it is there (and, in an expiring bucket, not expired).
    fn get(&self, bucket: Bucket, key: &str) -> Step<'_, Option<Entry>>;
    /// Creates `key`: its revision, or [`Stored::Conflict`] when it is there already.
    fn create(&self, bucket: Bucket, key: &str, value: Bytes) -> Step<'_, Stored>;
    /// Writes `key` if its last revision is `revision`: its new revision, or
    /// [`Stored::Conflict`] when it is not (written since, deleted or expired).
    fn update(&self, bucket: Bucket, key: &str, value: Bytes, revision: u64) -> Step<'_, Stored>;
    /// Writes `key` whatever was there.
    fn put(&self, bucket: Bucket, key: &str, value: Bytes) -> Step<'_, ()>;
    /// Deletes `key` if its last revision is `revision`.
    fn delete(&self, bucket: Bucket, key: &str, revision: u64) -> Step<'_, ()>;
    /// The keys of `bucket` (at most `max`).
    fn keys(&self, bucket: Bucket, max: usize) -> Step<'_, Vec<String>>;
    /// Appends a message to `subject` of `log`, if the subject's last sequence is
    /// `expected_last` (when given; 0: the subject is empty; with an [`EXPECTED_FILTER_HEADER`],
    /// the last of every subject its filter matches): where it was stored, or
    /// [`Stored::Conflict`]. A message whose [`MSG_ID_HEADER`] a message of the log had
    /// within the store's window is not stored again: the first one's sequence is the answer.
    fn publish(
        &self,
        log: Log,
        subject: String,
        headers: Vec<(&'static str, String)>,
        payload: Bytes,
        expected_last: Option<Seq>,
    ) -> Step<'_, Stored>;
    /// The last message on `subject` of `log` (or of every subject it matches, when it ends
    /// in `>`), if it has one.
    fn last(&self, log: Log, subject: &str) -> Step<'_, Option<Message>>;
    /// The messages on `subject` of `log` up to its last as of now (at most `max`).
    fn read(&self, log: Log, subject: &str, max: usize) -> Step<'_, Vec<Message>>;
    /// The messages on `subject` of `log` from sequence `from` on, as they come.
    fn follow(&self, log: Log, subject: &str, from: Seq) -> Step<'_, Box<dyn Messages>>;
    /// Removes the messages on `subject` of `log` before sequence `below` (it and those after
    /// stay): how many went.
    fn purge(&self, log: Log, subject: &str, below: Seq) -> Step<'_, u64>;
}

/// A lease as [`crate::protocol::lease_step`] reads it.
fn entry(lease: &Option<(String, u64)>) -> LeaseEntry<'_> {
    match lease {
        None => LeaseEntry::Absent,
        Some((host, revision)) => LeaseEntry::Held {
            host,
            revision: *revision,
        },
    }
}

/// A person claimed: the lease key created by this host, the journal read up to its fence.
#[derive(Debug)]
pub struct Claim {
    /// The holding, not yet taken over.
    pub holding: Holding,
    /// What the journal held when it was read.
    pub replayed: Replayed<Value, Value>,
    /// The person's decisions as delivered.
    pub outbox: Outbox,
}

/// The fleet's steps over a store (cheap to clone: the store is shared).
#[derive(Debug, Clone)]
pub struct Fleet {
    store: Arc<dyn FleetStore>,
}

impl Fleet {
    /// The fleet's steps over `store`.
    pub fn over(store: Arc<dyn FleetStore>) -> Self {
        Self { store }
    }

    /// The store the fleet's steps are carried out on (what a life kept on it opens:
    /// [`crate::life::FleetHome`]).
    pub fn store(&self) -> Arc<dyn FleetStore> {
        self.store.clone()
    }

    /// Who holds `person` now, and at which revision of their key.
    pub async fn lease(&self, person: &Person) -> Result<Option<(String, u64)>, FleetError> {
        let entry = self.store.get(Bucket::Leases, &person.key());
        let entry = entry.await.map_err(during("read a lease"))?;
        Ok(entry.map(|entry| {
            let host = String::from_utf8_lossy(&entry.value).into_owned();
            (host, entry.revision)
        }))
    }

    /// Claims `person` for host `me` if nobody holds them: creates their key, then reads their
    /// journal and their decisions. `None` when another host holds them.
    pub async fn claim(&self, person: &Person, me: &str) -> Result<Option<Claim>, FleetError> {
        let lease = self.lease(person).await?;
        if lease_step(me, None, entry(&lease)) != LeaseStep::Create {
            return Ok(None);
        }
        let value = Bytes::copy_from_slice(me.as_bytes());
        let revision = match self
            .store
            .create(Bucket::Leases, &person.key(), value)
            .await
            .map_err(during("create a lease"))?
        {
            Stored::At(revision) => revision,
            Stored::Conflict => return Ok(None),
        };
        let read = async {
            let replayed = self.read_journal(person).await?;
            let outbox = Outbox::read(self.last_decision(person).await?);
            Ok::<_, FleetError>((replayed, outbox))
        };
        match read.await {
            Ok((replayed, outbox)) => Ok(Some(Claim {
                holding: Holding::acquired(revision, replayed.last),
                replayed,
                outbox,
            })),
            Err(error) => {
                // A person this host cannot take is let go at once, not held until the lease
                // runs out (the error says why; another host will meet the same).
                let delete = self.store.delete(Bucket::Leases, &person.key(), revision);
                if let Err(failed) = delete.await {
                    tracing::warn!(person = %person, error = %failed,
                        "lease not released after a failed claim: it runs out instead");
                }
                Err(error)
            }
        }
    }

    /// Appends `me`'s takeover record to `person`'s journal, reading again what landed after
    /// each refusal: `false` when a newer holder took them over meanwhile (the claim is dead).
    pub async fn take_over(
        &self,
        person: &Person,
        me: &str,
        claim: &mut Claim,
    ) -> Result<bool, FleetError> {
        for _ in 0..FLEET_TAKEOVER_ATTEMPTS_MAX {
            let record = Record::Takeover {
                host: me.to_owned(),
                epoch: claim.holding.epoch,
            };
            match self.append(person, &mut claim.holding, &record).await? {
                AfterAppend::Go => return Ok(true),
                AfterAppend::Fenced => return Ok(false),
                AfterAppend::Reread => {
                    claim.replayed = self.read_journal(person).await?;
                    let (last, newest) = (claim.replayed.last, claim.replayed.epoch);
                    if claim.holding.reread(last, newest) == AfterAppend::Fenced {
                        return Ok(false);
                    }
                }
            }
        }
        Err(FleetError::Contended {
            person: person.to_string(),
        })
    }

    /// Renews `me`'s lease on `person`: [`LeaseStep::Renew`] when it is kept (the holding has
    /// its new revision), [`LeaseStep::Lost`] when it is not this host's any more. The key is
    /// not read first: the update at the holding's revision succeeds exactly when the key is
    /// still the one this host last wrote (an expired, deleted or rewritten key has another
    /// last revision), which is what reading it would have checked, at half the requests (a
    /// renewal a second is most of what holding a person costs).
    pub async fn renew(
        &self,
        person: &Person,
        me: &str,
        holding: &mut Holding,
    ) -> Result<LeaseStep, FleetError> {
        let believed = LeaseEntry::Held {
            host: me,
            revision: holding.revision,
        };
        let step_now = lease_step(me, Some(holding), believed);
        let LeaseStep::Renew { revision } = step_now else {
            return Ok(step_now);
        };
        let value = Bytes::copy_from_slice(me.as_bytes());
        let key = person.key();
        match self
            .store
            .update(Bucket::Leases, &key, value, revision)
            .await
            .map_err(during("renew a lease"))?
        {
            Stored::At(revision) => {
                holding.renewed(revision);
                Ok(step_now)
            }
            Stored::Conflict => Ok(LeaseStep::Lost),
        }
    }

    /// Lets `person` go (a host that stops cleanly): their key is deleted at this host's
    /// revision, so the next host need not wait for it to expire.
    pub async fn release(&self, person: &Person, holding: &Holding) -> Result<(), FleetError> {
        let key = person.key();
        self.store
            .delete(Bucket::Leases, &key, holding.revision)
            .await
            .map_err(during("release a lease"))
    }

    /// Appends `record` to `person`'s journal under `holding`'s fence.
    pub async fn append(
        &self,
        person: &Person,
        holding: &mut Holding,
        record: &Journaled,
    ) -> Result<AfterAppend, FleetError> {
        let bytes = serde_json::to_vec(record).map_err(|e| failed("encode a record")(&e))?;
        if bytes.len() > FLEET_RECORD_BYTES_MAX {
            return Err(FleetError::TooLarge {
                what: "journal record",
                person: person.to_string(),
                bytes: bytes.len(),
                max: FLEET_RECORD_BYTES_MAX,
            });
        }
        let headers = vec![
            (EPOCH_HEADER, holding.epoch.to_string()),
            (PERSON_HEADER, person.to_string()),
        ];
        let subject = journal_subject(person);
        let expected = Some(holding.expected());
        let answer = self
            .store
            .publish(Log::Journal, subject, headers, bytes.into(), expected);
        let answer = answer.await.map_err(during("append to a journal"))?;
        Ok(holding.appended(answer))
    }

    /// Delivers `person`'s journaled decisions (`journaled`, from decision `base`) that are
    /// due: each once, in order, after the one before it. Returns how many this host published.
    pub async fn deliver(
        &self,
        person: &Person,
        outbox: &mut Outbox,
        journaled: &[Value],
        base: u64,
    ) -> Result<u64, FleetError> {
        let mut published = 0;
        while outbox.due(base + journaled.len() as u64) {
            if outbox.next < base {
                // The journal is purged only below what was delivered: another holder
                // delivered this one since this host read the subject.
                self.catch_up(person, outbox).await?;
                if outbox.next < base {
                    return Err(FleetError::Record {
                        person: person.to_string(),
                        seq: outbox.last,
                        detail: format!(
                            "decision {} is not delivered but the journal keeps decisions from {base} on",
                            outbox.next
                        ),
                    });
                }
                continue;
            }
            let number = outbox.next;
            let decision = &journaled[(number - base) as usize];
            let bytes =
                serde_json::to_vec(decision).map_err(|e| failed("encode a decision")(&e))?;
            let headers = vec![
                (DECISION_HEADER, number.to_string()),
                (PERSON_HEADER, person.to_string()),
            ];
            let subject = decisions_subject(person);
            let expected = Some(outbox.last);
            let answer = self
                .store
                .publish(Log::Decisions, subject, headers, bytes.into(), expected)
                .await
                .map_err(during("deliver a decision"))?;
            match outbox.published(answer) {
                AfterPublish::Delivered => published += 1,
                AfterPublish::ReadLast => self.catch_up(person, outbox).await?,
            }
        }
        Ok(published)
    }

    /// Moves `outbox` to the decisions subject's last message (another holder delivered).
    async fn catch_up(&self, person: &Person, outbox: &mut Outbox) -> Result<(), FleetError> {
        let last = self.last_decision(person).await?;
        outbox
            .caught_up(last)
            .map_err(|regressed| FleetError::Record {
                person: person.to_string(),
                seq: outbox.last,
                detail: regressed.to_string(),
            })
    }

    /// The last decision delivered for `person`: its number and sequence.
    pub(crate) async fn last_decision(
        &self,
        person: &Person,
    ) -> Result<Option<(u64, Seq)>, FleetError> {
        let subject = decisions_subject(person);
        let last = self.store.last(Log::Decisions, &subject);
        let Some(message) = last.await.map_err(during("read the last decision"))? else {
            return Ok(None);
        };
        let number = message
            .header(DECISION_HEADER)
            .and_then(|value| value.parse::<u64>().ok())
            .ok_or_else(|| FleetError::Record {
                person: person.to_string(),
                seq: message.seq,
                detail: format!("a delivered decision without a numeric {DECISION_HEADER} header"),
            })?;
        // The subject is writable by whoever may publish decisions: a number past any journal
        // or a message naming another person is not a holder's, and is not followed.
        let named = message.header(PERSON_HEADER).map(str::to_owned);
        if number >= FLEET_RECORDS_PER_PERSON_MAX as u64 || named != Some(person.to_string()) {
            return Err(FleetError::Record {
                person: person.to_string(),
                seq: message.seq,
                detail: format!(
                    "a delivered decision numbered {number} for {:?}: not one a holder delivered",
                    named.as_deref().map(aura_contract::visible::visible)
                ),
            });
        }
        Ok(Some((number, message.seq)))
    }

    /// Reads `person`'s journal to its last record as of now, and replays it: whole when it
    /// starts with its first holder's takeover (never purged), else from the checkpoint its
    /// head names (read after the journal: a head only moves forward, so it covers at least
    /// what any purge took). A head past the journal's last record read means the journal
    /// moved since: it is read again.
    pub async fn read_journal(
        &self,
        person: &Person,
    ) -> Result<Replayed<Value, Value>, FleetError> {
        for _ in 0..FLEET_TAKEOVER_ATTEMPTS_MAX {
            let records = self.journal_records(person).await?;
            let whole = records
                .first()
                .is_none_or(|(_, record)| matches!(record, Record::Takeover { .. }));
            if whole {
                return Ok(replay(records)?);
            }
            let head = self.head(person).await?;
            match replay_from(head, records) {
                Err(ReplayError::Ahead { .. }) => continue,
                replayed => return Ok(replayed?),
            }
        }
        Err(FleetError::Contended {
            person: person.to_string(),
        })
    }

    /// `person`'s journal records to the last as of now.
    async fn journal_records(&self, person: &Person) -> Result<Vec<(Seq, Journaled)>, FleetError> {
        let subject = journal_subject(person);
        // The stream keeps at most this many per person (it refuses more), so this bounds
        // what is read, whatever the stream was made with.
        let max = FLEET_RECORDS_PER_PERSON_MAX as usize;
        let read = self.store.read(Log::Journal, &subject, max);
        let read = read.await.map_err(during("read a journal"))?;
        let mut records = Vec::with_capacity(read.len());
        for message in read {
            let seq = message.seq;
            let record: Journaled =
                serde_json::from_slice(&message.payload).map_err(|e| FleetError::Record {
                    person: person.to_string(),
                    seq,
                    detail: e.to_string(),
                })?;
            records.push((seq, record));
        }
        Ok(records)
    }
}
