//! The protocol on JetStream: the lease bucket, each person's journal and decisions subjects,
//! and a host's steps on them.
//!
//! It owns the bucket's and the streams' settings (the same from every host; bounds in
//! `limits::fleet`) and carries out what [`crate::protocol`] decides: a claim is a key-value
//! create, a renewal an update at the holder's revision, an append or a delivery a publish with
//! `Nats-Expected-Last-Subject-Sequence`; each answer goes back to the protocol's rules. Each
//! journal record also carries its writer's epoch in a header, for the audit. Every step waits
//! at most [`FLEET_STEP_TIMEOUT_MS`]; a step that fails or times out is an error, after which
//! the host stops for the person, since it cannot know what the server stored (the model
//! checks that this is safe: it is a write followed by a stop). It must not decide who holds a person or what a refusal
//! means (the protocol does), nor what a record says (the live session does).

use std::time::Duration;

use async_nats::HeaderMap;
use async_nats::jetstream::message::PublishMessage;
use async_nats::jetstream::stream::DiscardPolicy;
use async_nats::jetstream::{self, context::PublishErrorKind, kv, stream};
use bytes::Bytes;
use serde_json::Value;

use aura_contract::limits::{
    FLEET_LEASE_MS, FLEET_RECORD_BYTES_MAX, FLEET_RECORDS_PER_PERSON_MAX, FLEET_STEP_TIMEOUT_MS,
    FLEET_TAKEOVER_ATTEMPTS_MAX,
};
use aura_contract::person::Person;

mod checkpoints;
use checkpoints::Checkpoints;
mod people;
mod read;
pub use checkpoints::CHECKPOINTS_BUCKET;
pub use people::{
    Enrolment, HOSTS_BUCKET, INPUTS_END_HEADER, Inbox, PEOPLE_BUCKET, PERSON_HEADER,
    SIGNALS_STREAM, Sent, signals_subject,
};
use read::{last_message, read_subject};

use crate::protocol::{
    AfterAppend, AfterPublish, Holding, LeaseEntry, LeaseStep, Outbox, Record, ReplayError,
    Replayed, Seq, Stored, lease_step, replay,
};

/// The key-value bucket of leases: a person's key names the host that holds them.
pub const LEASES_BUCKET: &str = "aura-leases";
/// The stream of every person's journal.
pub const JOURNAL_STREAM: &str = "AURA_JOURNAL";
/// The stream of every person's delivered decisions.
pub const DECISIONS_STREAM: &str = "AURA_DECISIONS";
/// The header naming a journal record's writer's epoch.
pub const EPOCH_HEADER: &str = "Aura-Epoch";
/// The header naming a delivered decision's number.
pub const DECISION_HEADER: &str = "Aura-Decision";

/// The subject of `person`'s journal.
pub fn journal_subject(person: &Person) -> String {
    format!("aura.journal.{}", person.key())
}

/// The subject of `person`'s delivered decisions (what their apps read).
pub fn decisions_subject(person: &Person) -> String {
    format!("aura.decision.{}", person.key())
}

/// A journal record as JetStream holds it: signals and decisions as JSON.
pub type Journaled = Record<Value, Value>;

/// Why a step on JetStream failed. A refusal the protocol expects (a key that exists, a
/// sequence that moved) is not an error: it is the protocol's answer.
#[derive(Debug, thiserror::Error)]
pub enum FleetError {
    /// The server refused or failed a step.
    #[error("JetStream could not {doing}: {detail}")]
    Nats {
        /// The step.
        doing: &'static str,
        /// The server's or the client's reason.
        detail: String,
    },
    /// The server did not answer within [`FLEET_STEP_TIMEOUT_MS`].
    #[error("JetStream did not {doing} within {FLEET_STEP_TIMEOUT_MS} ms")]
    TimedOut {
        /// The step.
        doing: &'static str,
    },
    /// A record in a person's journal that the fleet did not write.
    #[error("record {seq} of {person}'s journal is not a fleet record: {detail}")]
    Record {
        /// Whose journal.
        person: String,
        /// Its sequence.
        seq: Seq,
        /// What is wrong with it.
        detail: String,
    },
    /// A record too large to journal.
    #[error(
        "a record for {person} is {bytes} bytes, more than the {FLEET_RECORD_BYTES_MAX} one may have"
    )]
    TooLarge {
        /// Whose.
        person: String,
        /// Its size.
        bytes: usize,
    },
    /// A person's enrolment does not read as one.
    #[error("{person}'s enrolment is not one: {detail}")]
    Enrolment {
        /// Whose.
        person: String,
        /// Why.
        detail: String,
    },
    /// The journal does not replay.
    #[error(transparent)]
    Replay(#[from] ReplayError),
    /// The lease bucket was made with another lease than this host's: hosts of one fleet
    /// must renew at the pace the bucket expires at.
    #[error(
        "the lease bucket {LEASES_BUCKET} lets a lease last {found_ms} ms, but this host's lease is {FLEET_LEASE_MS} ms: every host of a fleet runs with the same lease"
    )]
    LeaseMismatch {
        /// The bucket's max age.
        found_ms: u128,
    },
    /// A takeover was refused [`FLEET_TAKEOVER_ATTEMPTS_MAX`] times in a row.
    #[error(
        "{person}'s journal kept moving under {FLEET_TAKEOVER_ATTEMPTS_MAX} takeovers in a row"
    )]
    Contended {
        /// Whose.
        person: String,
    },
}

fn nats(doing: &'static str) -> impl FnOnce(&dyn std::fmt::Display) -> FleetError {
    move |error| FleetError::Nats {
        doing,
        detail: error.to_string(),
    }
}

/// Awaits `future` for at most the step timeout.
async fn within<T>(
    doing: &'static str,
    future: impl std::future::Future<Output = T>,
) -> Result<T, FleetError> {
    tokio::time::timeout(Duration::from_millis(FLEET_STEP_TIMEOUT_MS), future)
        .await
        .map_err(|_elapsed| FleetError::TimedOut { doing })
}

/// Runs one step with the step timeout; any error of the server's is [`FleetError::Nats`].
async fn step<T, E: std::fmt::Display>(
    doing: &'static str,
    future: impl std::future::Future<Output = Result<T, E>>,
) -> Result<T, FleetError> {
    within(doing, future)
        .await?
        .map_err(|error| nats(doing)(&error))
}

/// The stream `name` of a subject per person (created if it is not there): each person's
/// subject holds at most [`FLEET_RECORDS_PER_PERSON_MAX`] messages, past which the journal
/// refuses new ones (`discard` New, per subject) and the decisions forget the oldest (Old).
async fn per_person(
    context: &jetstream::Context,
    name: &str,
    subjects: &str,
    discard: DiscardPolicy,
) -> Result<stream::Stream, FleetError> {
    let config = stream::Config {
        name: name.to_owned(),
        subjects: vec![subjects.to_owned()],
        max_messages_per_subject: FLEET_RECORDS_PER_PERSON_MAX,
        max_message_size: FLEET_RECORD_BYTES_MAX as i32,
        discard,
        discard_new_per_subject: discard == DiscardPolicy::New,
        storage: stream::StorageType::File,
        ..Default::default()
    };
    step(
        "create a fleet stream",
        context.get_or_create_stream(config),
    )
    .await
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

/// The fleet's bucket and streams on one JetStream.
#[derive(Debug, Clone)]
pub struct JetStreamFleet {
    context: jetstream::Context,
    leases: kv::Store,
    journal: stream::Stream,
    decisions: stream::Stream,
    people: kv::Store,
    hosts: kv::Store,
    signals: stream::Stream,
    checkpoints: Checkpoints,
}

impl JetStreamFleet {
    /// The bucket and the streams on `client`'s JetStream, created if they are not there
    /// (the same settings from every host; a lease lasts [`FLEET_LEASE_MS`]).
    pub async fn open(client: &async_nats::Client) -> Result<Self, FleetError> {
        let context = jetstream::new(client.clone());
        let lease = Duration::from_millis(FLEET_LEASE_MS);
        let existing = within(
            "open the lease bucket",
            context.get_key_value(LEASES_BUCKET),
        );
        let leases = match existing.await? {
            Ok(store) => store,
            // Not there yet (or not readable: creating it then says why).
            Err(_) => {
                step(
                    "create the lease bucket",
                    context.create_key_value(kv::Config {
                        bucket: LEASES_BUCKET.to_owned(),
                        history: 1,
                        max_age: lease,
                        storage: stream::StorageType::File,
                        ..Default::default()
                    }),
                )
                .await?
            }
        };
        let status = step("read the lease bucket", leases.status()).await?;
        if status.max_age() != lease {
            return Err(FleetError::LeaseMismatch {
                found_ms: status.max_age().as_millis(),
            });
        }
        let journal = per_person(
            &context,
            JOURNAL_STREAM,
            "aura.journal.>",
            DiscardPolicy::New,
        )
        .await?;
        let decisions = per_person(
            &context,
            DECISIONS_STREAM,
            "aura.decision.>",
            DiscardPolicy::Old,
        )
        .await?;
        let (people, hosts, signals) = people::open(&context).await?;
        let checkpoints = Checkpoints(checkpoints::open(&context).await?);
        Ok(Self {
            context,
            leases,
            journal,
            decisions,
            people,
            hosts,
            signals,
            checkpoints,
        })
    }

    /// Who holds `person` now, and at which revision of their key.
    pub async fn lease(&self, person: &Person) -> Result<Option<(String, u64)>, FleetError> {
        let entry = step("read a lease", self.leases.entry(person.key())).await?;
        Ok(entry
            .filter(|entry| entry.operation == kv::Operation::Put)
            .map(|entry| {
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
        let created = within("create a lease", self.leases.create(person.key(), value)).await?;
        let revision = match created {
            Ok(revision) => revision,
            Err(error) if error.kind() == kv::CreateErrorKind::AlreadyExists => return Ok(None),
            Err(error) => return Err(nats("create a lease")(&error)),
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
                let release = self
                    .leases
                    .delete_expect_revision(person.key(), Some(revision));
                let _ = within("release a lease", release).await;
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
        let update = self.leases.update(person.key(), value, revision);
        let updated = within("renew a lease", update).await?;
        match updated {
            Ok(revision) => {
                holding.renewed(revision);
                Ok(step_now)
            }
            Err(error) if error.kind() == kv::UpdateErrorKind::WrongLastRevision => {
                Ok(LeaseStep::Lost)
            }
            Err(error) => Err(nats("renew a lease")(&error)),
        }
    }

    /// Lets `person` go (a host that stops cleanly): their key is deleted at this host's
    /// revision, so the next host need not wait for it to expire.
    pub async fn release(&self, person: &Person, holding: &Holding) -> Result<(), FleetError> {
        step(
            "release a lease",
            self.leases
                .delete_expect_revision(person.key(), Some(holding.revision)),
        )
        .await
    }

    /// Appends `record` to `person`'s journal under `holding`'s fence.
    pub async fn append(
        &self,
        person: &Person,
        holding: &mut Holding,
        record: &Journaled,
    ) -> Result<AfterAppend, FleetError> {
        let bytes = serde_json::to_vec(record).map_err(|e| nats("encode a record")(&e))?;
        if bytes.len() > FLEET_RECORD_BYTES_MAX {
            return Err(FleetError::TooLarge {
                person: person.to_string(),
                bytes: bytes.len(),
            });
        }
        let mut headers = HeaderMap::new();
        headers.insert(EPOCH_HEADER, holding.epoch.to_string().as_str());
        headers.insert(PERSON_HEADER, person.to_string().as_str());
        let publish = PublishMessage::build()
            .payload(bytes.into())
            .headers(headers)
            .expected_last_subject_sequence(holding.expected());
        let answer = self.stored("append to a journal", journal_subject(person), publish);
        Ok(holding.appended(answer.await?))
    }

    /// Delivers `person`'s journaled decisions (`journaled`, from the first) that are due: each
    /// once, in order, after the one before it. Returns how many this host published.
    pub async fn deliver(
        &self,
        person: &Person,
        outbox: &mut Outbox,
        journaled: &[Value],
    ) -> Result<u64, FleetError> {
        let mut published = 0;
        while outbox.due(journaled.len() as u64) {
            let number = outbox.next;
            let bytes = serde_json::to_vec(&journaled[number as usize])
                .map_err(|e| nats("encode a decision")(&e))?;
            let mut headers = HeaderMap::new();
            headers.insert(DECISION_HEADER, number.to_string().as_str());
            headers.insert(PERSON_HEADER, person.to_string().as_str());
            let publish = PublishMessage::build()
                .payload(bytes.into())
                .headers(headers)
                .expected_last_subject_sequence(outbox.last);
            let answer = self
                .stored("deliver a decision", decisions_subject(person), publish)
                .await?;
            match outbox.published(answer) {
                AfterPublish::Delivered => published += 1,
                AfterPublish::ReadLast => {
                    let last = self.last_decision(person).await?;
                    outbox
                        .caught_up(last)
                        .map_err(|regressed| FleetError::Record {
                            person: person.to_string(),
                            seq: outbox.last,
                            detail: regressed.to_string(),
                        })?;
                }
            }
        }
        Ok(published)
    }

    /// Publishes `publish` to `subject`: where it was stored, or refused because the subject's
    /// last sequence moved.
    async fn stored(
        &self,
        doing: &'static str,
        subject: String,
        publish: PublishMessage,
    ) -> Result<Stored, FleetError> {
        let sent = async {
            let ack = self.context.send_publish(subject, publish).await?;
            ack.await
        };
        match within(doing, sent).await? {
            Ok(ack) => Ok(Stored::At(ack.sequence)),
            Err(error) if error.kind() == PublishErrorKind::WrongLastSequence => {
                Ok(Stored::Conflict)
            }
            Err(error) => Err(nats(doing)(&error)),
        }
    }

    /// The last decision delivered for `person`: its number and sequence.
    async fn last_decision(&self, person: &Person) -> Result<Option<(u64, Seq)>, FleetError> {
        let subject = decisions_subject(person);
        let doing = "read the last decision";
        let Some(message) = last_message(&self.decisions, &subject, doing).await? else {
            return Ok(None);
        };
        let number = message
            .headers
            .get(DECISION_HEADER)
            .and_then(|value| value.as_str().parse::<u64>().ok())
            .ok_or_else(|| FleetError::Record {
                person: person.to_string(),
                seq: message.sequence,
                detail: format!("a delivered decision without a numeric {DECISION_HEADER} header"),
            })?;
        // The subject is writable by whoever may publish decisions: a number past any journal
        // or a message naming another person is not a holder's, and is not followed.
        let named = message
            .headers
            .get(PERSON_HEADER)
            .map(|v| v.as_str().to_owned());
        if number >= FLEET_RECORDS_PER_PERSON_MAX as u64 || named != Some(person.to_string()) {
            return Err(FleetError::Record {
                person: person.to_string(),
                seq: message.sequence,
                detail: format!(
                    "a delivered decision numbered {number} for {:?}: not one a holder delivered",
                    named.as_deref().map(aura_contract::visible::visible)
                ),
            });
        }
        Ok(Some((number, message.sequence)))
    }

    /// Reads `person`'s journal to its last record as of now, and replays it.
    pub async fn read_journal(
        &self,
        person: &Person,
    ) -> Result<Replayed<Value, Value>, FleetError> {
        let subject = journal_subject(person);
        let doing = "read a journal";
        let read = read_subject(&self.journal, subject, usize::MAX, doing).await?;
        let mut records = Vec::with_capacity(read.len());
        for (seq, message) in read {
            let record: Journaled =
                serde_json::from_slice(&message.payload).map_err(|e| FleetError::Record {
                    person: person.to_string(),
                    seq,
                    detail: e.to_string(),
                })?;
            records.push((seq, record));
        }
        Ok(replay(records)?)
    }
}
