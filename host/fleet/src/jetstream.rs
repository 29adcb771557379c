//! The fleet's store on JetStream: the lease, people, hosts and heads buckets (key-value), the
//! journal, decisions and signals streams (a subject per person), and the lives' bucket and
//! days stream ([`crate::life`]).
//!
//! It owns the buckets' and streams' settings (the same from every host; bounds in
//! `limits::fleet`) and each [`FleetStore`] step as JetStream requests: a create or an update
//! at a revision is the key-value's own compare-and-set, a publish with an expected last
//! sequence is `Nats-Expected-Last-Subject-Sequence`. Every request waits at most
//! [`FLEET_STEP_TIMEOUT_MS`]. It must not decide
//! anything of the protocol's ([`crate::store::Fleet`] does).

use std::future::IntoFuture;
use std::sync::Arc;
use std::time::Duration;

use async_nats::HeaderMap;
use async_nats::jetstream::message::PublishMessage;
use async_nats::jetstream::stream::DiscardPolicy;
use async_nats::jetstream::{self, consumer, context::PublishErrorKind, kv, stream};
use bytes::Bytes;
use futures_util::StreamExt;

use aura_contract::limits::{
    FLEET_INBOX_PENDING_MAX, FLEET_LEASE_MS, FLEET_RECORD_BYTES_MAX, FLEET_RECORD_HEADER_BYTES_MAX,
    FLEET_RECORDS_PER_PERSON_MAX, FLEET_STEP_TIMEOUT_MS,
};

mod heads;
mod people;
mod read;
pub use heads::HEADS_BUCKET;
pub use people::{HOSTS_BUCKET, PEOPLE_BUCKET, SIGNALS_STREAM};
use read::{last_message, read_subject};

use crate::protocol::{Seq, Stored};
use crate::store::{
    Bucket, Entry, Fleet, FleetError, FleetStore, Log, Message, Messages, Step, failed,
};

/// The key-value bucket of leases: a person's key names the host that holds them.
pub const LEASES_BUCKET: &str = "aura-leases";
/// The stream of every person's journal.
pub const JOURNAL_STREAM: &str = "AURA_JOURNAL";
/// The stream of every person's delivered decisions.
pub const DECISIONS_STREAM: &str = "AURA_DECISIONS";
/// The key-value bucket of lives kept on the fleet's store (where each stands, its days).
pub const LIVES_BUCKET: &str = "aura-lives";
/// The key-value bucket of who holds a life: a key lasts a lease after it was last written.
pub const LIFE_HOLDS_BUCKET: &str = "aura-life-holds";
/// The stream of lives' days: a subject per day and log.
pub const DAYS_STREAM: &str = "AURA_DAYS";

/// Awaits `future` for at most the step timeout.
async fn within<T>(
    doing: &'static str,
    future: impl std::future::Future<Output = T>,
) -> Result<T, FleetError> {
    tokio::time::timeout(Duration::from_millis(FLEET_STEP_TIMEOUT_MS), future)
        .await
        .map_err(|_elapsed| FleetError::TimedOut {
            doing,
            ms: FLEET_STEP_TIMEOUT_MS,
        })
}

/// Runs one step with the step timeout; any error of the server's is [`FleetError::Store`].
async fn step<T, E: std::fmt::Display>(
    doing: &'static str,
    future: impl std::future::Future<Output = Result<T, E>>,
) -> Result<T, FleetError> {
    within(doing, future)
        .await?
        .map_err(|error| failed(doing)(&error))
}

/// The stream `name` of a subject per person (created if it is not there): each person's
/// subject holds at most [`FLEET_RECORDS_PER_PERSON_MAX`] messages, past which the journal
/// refuses new ones (`discard` New, per subject) and the decisions forget the oldest (Old);
/// a message whose `Nats-Msg-Id` came within `dedupe` is stored once (none: JetStream's
/// default window, for streams whose writers send none).
async fn per_person(
    context: &jetstream::Context,
    name: &str,
    subjects: &str,
    discard: DiscardPolicy,
    dedupe: Option<Duration>,
) -> Result<stream::Stream, FleetError> {
    let config = stream::Config {
        duplicate_window: dedupe.unwrap_or_default(),
        name: name.to_owned(),
        subjects: vec![subjects.to_owned()],
        max_messages_per_subject: FLEET_RECORDS_PER_PERSON_MAX,
        max_message_size: (FLEET_RECORD_BYTES_MAX + FLEET_RECORD_HEADER_BYTES_MAX) as i32,
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

/// The key-value bucket `config` names, created with `config` if it is not there (or not
/// readable: creating it then says why). Every bucket of the fleet's keeps one revision a key
/// on file.
async fn key_value(
    context: &jetstream::Context,
    config: kv::Config,
) -> Result<kv::Store, FleetError> {
    match within(
        "open a bucket",
        context.get_key_value(config.bucket.clone()),
    )
    .await?
    {
        Ok(store) => Ok(store),
        Err(_) => {
            let config = kv::Config {
                history: 1,
                storage: stream::StorageType::File,
                ..config
            };
            step("create a bucket", context.create_key_value(config)).await
        }
    }
}

/// The fleet's buckets and streams on one JetStream.
#[derive(Debug, Clone)]
pub struct JetStreamStore {
    context: jetstream::Context,
    leases: kv::Store,
    journal: stream::Stream,
    decisions: stream::Stream,
    people: kv::Store,
    hosts: kv::Store,
    signals: stream::Stream,
    heads: kv::Store,
    lives: kv::Store,
    life_holds: kv::Store,
    days: stream::Stream,
}

/// The fleet on `client`'s JetStream: its buckets and streams, created if they are not there
/// (the same settings from every host; a lease lasts [`FLEET_LEASE_MS`]).
pub async fn open(client: &async_nats::Client) -> Result<Fleet, FleetError> {
    let context = jetstream::new(client.clone());
    let lease = Duration::from_millis(FLEET_LEASE_MS);
    let config = kv::Config {
        bucket: LEASES_BUCKET.to_owned(),
        max_age: lease,
        ..Default::default()
    };
    let leases = key_value(&context, config).await?;
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
        None,
    )
    .await?;
    let decisions = per_person(
        &context,
        DECISIONS_STREAM,
        "aura.decision.>",
        DiscardPolicy::Old,
        None,
    )
    .await?;
    let (people, hosts, signals) = people::open(&context).await?;
    let heads = heads::open_heads(&context).await?;
    let lives = key_value(
        &context,
        kv::Config {
            bucket: LIVES_BUCKET.to_owned(),
            ..Default::default()
        },
    )
    .await?;
    let life_holds = key_value(
        &context,
        kv::Config {
            bucket: LIFE_HOLDS_BUCKET.to_owned(),
            max_age: lease,
            ..Default::default()
        },
    )
    .await?;
    let days = per_person(
        &context,
        DAYS_STREAM,
        "aura.days.>",
        DiscardPolicy::New,
        None,
    )
    .await?;
    Ok(Fleet::over(Arc::new(JetStreamStore {
        context,
        leases,
        journal,
        decisions,
        people,
        hosts,
        signals,
        heads,
        lives,
        life_holds,
        days,
    })))
}

impl JetStreamStore {
    fn bucket(&self, bucket: Bucket) -> &kv::Store {
        match bucket {
            Bucket::Leases => &self.leases,
            Bucket::People => &self.people,
            Bucket::Hosts => &self.hosts,
            Bucket::Heads => &self.heads,
            Bucket::Lives => &self.lives,
            Bucket::LifeHolds => &self.life_holds,
        }
    }

    fn log(&self, log: Log) -> &stream::Stream {
        match log {
            Log::Journal => &self.journal,
            Log::Decisions => &self.decisions,
            Log::Signals => &self.signals,
            Log::Days => &self.days,
        }
    }
}

/// A stored message as the store's steps read it.
fn message(seq: Seq, headers: Option<&HeaderMap>, payload: Bytes) -> Message {
    let headers = headers
        .map(|headers| {
            headers
                .iter()
                .filter_map(|(name, values)| {
                    let value = values.first()?;
                    Some((name.to_string(), value.as_str().to_owned()))
                })
                .collect()
        })
        .unwrap_or_default();
    Message {
        seq,
        headers,
        payload,
    }
}

/// A person's subject followed by an ordered consumer.
struct Following {
    messages: consumer::pull::Ordered,
    subject: String,
}

impl Messages for Following {
    fn next(&mut self) -> Step<'_, Message> {
        Box::pin(async move {
            let doing = "read an inbox";
            let Some(next) = self.messages.next().await else {
                return Err(failed(doing)(&format!("{}'s consumer ended", self.subject)));
            };
            let next = next.map_err(|e| failed(doing)(&e))?;
            let seq = next.info().map_err(|e| failed(doing)(&e))?.stream_sequence;
            Ok(message(seq, next.headers.as_ref(), next.payload.clone()))
        })
    }
}

impl FleetStore for JetStreamStore {
    fn get(&self, bucket: Bucket, key: &str) -> Step<'_, Option<Entry>> {
        let key = key.to_owned();
        Box::pin(async move {
            let entry = step("read a key", self.bucket(bucket).entry(key)).await?;
            Ok(entry
                .filter(|entry| entry.operation == kv::Operation::Put)
                .map(|entry| Entry {
                    value: entry.value,
                    revision: entry.revision,
                }))
        })
    }

    fn create(&self, bucket: Bucket, key: &str, value: Bytes) -> Step<'_, Stored> {
        let key = key.to_owned();
        Box::pin(async move {
            let doing = "create a key";
            match within(doing, self.bucket(bucket).create(key, value)).await? {
                Ok(revision) => Ok(Stored::At(revision)),
                Err(error) if error.kind() == kv::CreateErrorKind::AlreadyExists => {
                    Ok(Stored::Conflict)
                }
                Err(error) => Err(failed(doing)(&error)),
            }
        })
    }

    fn update(&self, bucket: Bucket, key: &str, value: Bytes, revision: u64) -> Step<'_, Stored> {
        let key = key.to_owned();
        Box::pin(async move {
            let doing = "update a key";
            let update = self.bucket(bucket).update(key, value, revision);
            match within(doing, update).await? {
                Ok(revision) => Ok(Stored::At(revision)),
                Err(error) if error.kind() == kv::UpdateErrorKind::WrongLastRevision => {
                    Ok(Stored::Conflict)
                }
                Err(error) => Err(failed(doing)(&error)),
            }
        })
    }

    fn put(&self, bucket: Bucket, key: &str, value: Bytes) -> Step<'_, ()> {
        let key = key.to_owned();
        Box::pin(async move {
            step("write a key", self.bucket(bucket).put(key, value)).await?;
            Ok(())
        })
    }

    fn delete(&self, bucket: Bucket, key: &str, revision: u64) -> Step<'_, ()> {
        let key = key.to_owned();
        Box::pin(async move {
            let delete = self
                .bucket(bucket)
                .delete_expect_revision(key, Some(revision));
            step("delete a key", delete).await
        })
    }

    fn keys(&self, bucket: Bucket, max: usize) -> Step<'_, Vec<String>> {
        Box::pin(async move {
            let doing = "list a bucket's keys";
            let mut keys = step(doing, self.bucket(bucket).keys()).await?;
            let mut listed = Vec::new();
            while listed.len() < max {
                match within(doing, keys.next()).await? {
                    Some(key) => listed.push(key.map_err(|e| failed(doing)(&e))?),
                    None => break,
                }
            }
            Ok(listed)
        })
    }

    fn publish(
        &self,
        _log: Log,
        subject: String,
        headers: Vec<(&'static str, String)>,
        payload: Bytes,
        expected_last: Option<Seq>,
    ) -> Step<'_, Stored> {
        Box::pin(async move {
            let doing = "publish to a stream";
            let mut map = HeaderMap::new();
            for (name, value) in headers {
                map.insert(name, value.as_str());
            }
            let mut publish = PublishMessage::build().payload(payload).headers(map);
            if let Some(expected) = expected_last {
                publish = publish.expected_last_subject_sequence(expected);
            }
            let sent = async {
                let ack = self.context.send_publish(subject, publish).await?;
                ack.await
            };
            match within(doing, sent).await? {
                Ok(ack) => Ok(Stored::At(ack.sequence)),
                Err(error) if error.kind() == PublishErrorKind::WrongLastSequence => {
                    Ok(Stored::Conflict)
                }
                Err(error) => Err(failed(doing)(&error)),
            }
        })
    }

    fn last(&self, log: Log, subject: &str) -> Step<'_, Option<Message>> {
        let subject = subject.to_owned();
        Box::pin(async move {
            let last = last_message(self.log(log), &subject, "read a subject's last message");
            Ok(last
                .await?
                .map(|m| message(m.sequence, Some(&m.headers), m.payload)))
        })
    }

    fn read(&self, log: Log, subject: &str, max: usize) -> Step<'_, Vec<Message>> {
        let subject = subject.to_owned();
        Box::pin(async move {
            let read = read_subject(self.log(log), subject, max, "read a subject").await?;
            Ok(read
                .into_iter()
                .map(|(seq, m)| message(seq, m.headers.as_ref(), m.payload.clone()))
                .collect())
        })
    }

    fn follow(&self, log: Log, subject: &str, from: Seq) -> Step<'_, Box<dyn Messages>> {
        let subject = subject.to_owned();
        Box::pin(async move {
            let doing = "follow a subject";
            let consumer = step(
                doing,
                self.log(log)
                    .create_consumer(consumer::pull::OrderedConfig {
                        filter_subject: subject.clone(),
                        deliver_policy: consumer::DeliverPolicy::ByStartSequence {
                            start_sequence: from.max(1),
                        },
                        max_batch: FLEET_INBOX_PENDING_MAX,
                        ..Default::default()
                    }),
            )
            .await?;
            let messages = step(doing, consumer.messages()).await?;
            Ok(Box::new(Following { messages, subject }) as Box<dyn Messages>)
        })
    }

    fn purge(&self, log: Log, subject: &str, below: Seq) -> Step<'_, u64> {
        let subject = subject.to_owned();
        Box::pin(async move {
            let purge = self.log(log).purge().filter(subject).sequence(below);
            let purged = step("purge a subject", purge.into_future()).await?;
            Ok(purged.purged)
        })
    }
}
