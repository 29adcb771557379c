//! The people a fleet serves and what is sent to them: the people bucket (each person's
//! enrolment: their assistant's setup and seed) and the signals stream (a subject per person,
//! where JetStream keeps what arrives while nobody holds them).
//!
//! It owns the bucket's and the stream's settings, enrolling and listing people, sending a
//! signal (or the end of a person's inputs) and reading a person's inbox from a sequence on. It
//! must not decide who holds a person (the lease does) nor what a signal means (the session
//! does).

use std::time::Duration;

use async_nats::HeaderMap;
use async_nats::jetstream::message::PublishMessage;
use async_nats::jetstream::stream::DiscardPolicy;
use async_nats::jetstream::{self, consumer, kv, stream};
use bytes::Bytes;
use futures_util::StreamExt;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use aura_contract::limits::{
    FLEET_ENROLMENT_BYTES_MAX, FLEET_INBOX_PENDING_MAX, FLEET_LEASE_MS, FLEET_PEOPLE_SCANNED_MAX,
    LIVE_SIGNAL_BYTES_MAX,
};
use aura_contract::person::Person;

use super::{FleetError, JetStreamFleet, nats, per_person, step, within};

/// The key-value bucket of people: a person's key holds their [`Enrolment`].
pub const PEOPLE_BUCKET: &str = "aura-people";
/// The key-value bucket of hosts present: each host's key, renewed as its leases are, names it
/// while it runs (the bucket's max age is the lease).
pub const HOSTS_BUCKET: &str = "aura-hosts";
/// The stream of signals sent to people, a subject per person.
pub const SIGNALS_STREAM: &str = "AURA_SIGNALS";
/// The header that marks the end of a person's inputs (a replayed day may then run to its
/// end) instead of a signal.
pub const INPUTS_END_HEADER: &str = "Aura-Inputs-End";

/// The header naming whom a message is for (`tenant/user`): on every signal sent, journal
/// record and decision, so a message on one person's subject that names another is caught.
pub const PERSON_HEADER: &str = "Aura-Person";

/// The subject signals for `person` are sent on.
pub fn signals_subject(person: &Person) -> String {
    format!("aura.signal.{}.{}", person.tenant(), person.user())
}

/// What a person's assistant is set up with, wherever it runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Enrolment {
    /// A live.v1 file's JSON, or a scenario.v1's (its signals are not read: they are sent).
    pub setup: Value,
    /// The seed of the agents' random sources.
    pub seed: u64,
}

/// One message of a person's inbox.
#[derive(Debug, Clone, PartialEq)]
pub enum Sent {
    /// A signal or an answer, as sent (a scenario.v1 signal).
    Signal(Bytes),
    /// The sender will send nothing more.
    InputsEnd,
    /// A message on this person's subject that names another person: refused, never taken.
    Misaddressed {
        /// Whom it names.
        named: String,
        /// What it said.
        bytes: Bytes,
    },
}

/// A person's inbox from a sequence on: each message with its stream sequence.
pub struct Inbox {
    messages: consumer::pull::Ordered,
    person: Person,
}

impl Inbox {
    /// The next message, when it comes (cancel-safe: a message is not lost when the wait is
    /// dropped).
    pub async fn next(&mut self) -> Result<(u64, Sent), FleetError> {
        let doing = "read an inbox";
        let Some(message) = self.messages.next().await else {
            return Err(FleetError::Nats {
                doing,
                detail: format!("{}'s inbox consumer ended", self.person),
            });
        };
        let message = message.map_err(|e| nats(doing)(&e))?;
        let seq = message.info().map_err(|e| nats(doing)(&e))?.stream_sequence;
        let header = |name| {
            message
                .headers
                .as_ref()
                .and_then(|headers| headers.get(name))
                .map(|value| value.as_str().to_owned())
        };
        let sent = match (header(PERSON_HEADER), header(INPUTS_END_HEADER)) {
            (Some(named), _) if named != self.person.to_string() => Sent::Misaddressed {
                named,
                bytes: message.payload.clone(),
            },
            (_, Some(_)) => Sent::InputsEnd,
            (_, None) => Sent::Signal(message.payload.clone()),
        };
        Ok((seq, sent))
    }
}

/// The people bucket and the signals stream, created if they are not there.
pub(super) async fn open(
    context: &jetstream::Context,
) -> Result<(kv::Store, kv::Store, stream::Stream), FleetError> {
    let hosts = match within("open the hosts bucket", context.get_key_value(HOSTS_BUCKET)).await? {
        Ok(store) => store,
        Err(_) => {
            step(
                "create the hosts bucket",
                context.create_key_value(kv::Config {
                    bucket: HOSTS_BUCKET.to_owned(),
                    history: 1,
                    max_age: Duration::from_millis(FLEET_LEASE_MS),
                    storage: stream::StorageType::File,
                    ..Default::default()
                }),
            )
            .await?
        }
    };
    let people = match within(
        "open the people bucket",
        context.get_key_value(PEOPLE_BUCKET),
    )
    .await?
    {
        Ok(store) => store,
        Err(_) => {
            step(
                "create the people bucket",
                context.create_key_value(kv::Config {
                    bucket: PEOPLE_BUCKET.to_owned(),
                    history: 1,
                    max_value_size: FLEET_ENROLMENT_BYTES_MAX as i32,
                    storage: stream::StorageType::File,
                    ..Default::default()
                }),
            )
            .await?
        }
    };
    // Discard new per subject: a sender told its signal was not stored can say so, where
    // dropping the oldest would lose signals a person has not been served yet.
    let signals = per_person(context, SIGNALS_STREAM, "aura.signal.>", DiscardPolicy::New).await?;
    Ok((people, hosts, signals))
}

impl JetStreamFleet {
    /// Enrols `person` (or sets their enrolment again): a host takes them from now on.
    pub async fn enrol(&self, person: &Person, enrolment: &Enrolment) -> Result<(), FleetError> {
        let bytes = serde_json::to_vec(enrolment).map_err(|e| nats("encode an enrolment")(&e))?;
        if bytes.len() > FLEET_ENROLMENT_BYTES_MAX {
            return Err(FleetError::TooLarge {
                person: person.to_string(),
                bytes: bytes.len(),
            });
        }
        step(
            "enrol a person",
            self.people.put(person.key(), bytes.into()),
        )
        .await?;
        Ok(())
    }

    /// Says host `me` is present for another lease.
    pub async fn announce(&self, me: &str) -> Result<(), FleetError> {
        step("announce a host", self.hosts.put(me, Bytes::new())).await?;
        Ok(())
    }

    /// The hosts present (announced within a lease), at most [`FLEET_PEOPLE_SCANNED_MAX`].
    pub async fn hosts(&self) -> Result<Vec<String>, FleetError> {
        let doing = "list the hosts";
        let mut keys = step(doing, self.hosts.keys()).await?;
        let mut hosts = Vec::new();
        while hosts.len() < FLEET_PEOPLE_SCANNED_MAX {
            match within(doing, keys.next()).await? {
                Some(key) => hosts.push(key.map_err(|e| nats(doing)(&e))?),
                None => break,
            }
        }
        Ok(hosts)
    }

    /// The keys of the people held now (`<tenant>.<user>`), at most
    /// [`FLEET_PEOPLE_SCANNED_MAX`].
    pub async fn leased(&self) -> Result<std::collections::HashSet<String>, FleetError> {
        let doing = "list the leases";
        let mut keys = step(doing, self.leases.keys()).await?;
        let mut leased = std::collections::HashSet::new();
        while leased.len() < FLEET_PEOPLE_SCANNED_MAX {
            match within(doing, keys.next()).await? {
                Some(key) => leased.insert(key.map_err(|e| nats(doing)(&e))?),
                None => break,
            };
        }
        Ok(leased)
    }

    /// `person`'s enrolment, if they are enrolled.
    pub async fn enrolment(&self, person: &Person) -> Result<Option<Enrolment>, FleetError> {
        let Some(bytes) = step("read an enrolment", self.people.get(person.key())).await? else {
            return Ok(None);
        };
        serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| FleetError::Enrolment {
                person: person.to_string(),
                detail: e.to_string(),
            })
    }

    /// The people enrolled, at most [`FLEET_PEOPLE_SCANNED_MAX`] of them (a key that is not a
    /// person's is skipped: the bucket is the fleet's, but its keys are read, not trusted).
    pub async fn people(&self) -> Result<Vec<Person>, FleetError> {
        let doing = "list the people";
        let mut keys = step(doing, self.people.keys()).await?;
        let mut people = Vec::new();
        while people.len() < FLEET_PEOPLE_SCANNED_MAX {
            let Some(key) = within(doing, keys.next()).await? else {
                break;
            };
            let key = key.map_err(|e| nats(doing)(&e))?;
            let person = key
                .split_once('.')
                .and_then(|(tenant, user)| Person::new(tenant, user).ok());
            match person {
                Some(person) => people.push(person),
                None => tracing::warn!(key, "a key in the people bucket that names no person"),
            }
        }
        Ok(people)
    }

    /// Sends `signal` to `person` (or, `None`, the end of their inputs): its sequence in the
    /// signals stream once JetStream stored it.
    pub async fn send(&self, person: &Person, signal: Option<&[u8]>) -> Result<u64, FleetError> {
        let mut headers = HeaderMap::new();
        headers.insert(PERSON_HEADER, person.to_string().as_str());
        match signal {
            Some(bytes) if bytes.len() > LIVE_SIGNAL_BYTES_MAX => {
                return Err(FleetError::TooLarge {
                    person: person.to_string(),
                    bytes: bytes.len(),
                });
            }
            Some(_) => {}
            None => headers.insert(INPUTS_END_HEADER, "1"),
        }
        let payload = Bytes::copy_from_slice(signal.unwrap_or_default());
        let publish = PublishMessage::build().payload(payload).headers(headers);
        let doing = "send a signal";
        let sent = async {
            let ack = self
                .context
                .send_publish(signals_subject(person), publish)
                .await?;
            ack.await
        };
        let ack = within(doing, sent).await?.map_err(|e| nats(doing)(&e))?;
        Ok(ack.sequence)
    }

    /// `person`'s decisions as delivered, in order, from decision `from` on (at most
    /// `max` of them): what a person's devices read.
    pub async fn decisions(
        &self,
        person: &Person,
        from: u64,
        max: usize,
    ) -> Result<Vec<Value>, FleetError> {
        let doing = "read the decisions";
        let subject = super::decisions_subject(person);
        let mut decisions = Vec::new();
        for (seq, message) in super::read_subject(&self.decisions, subject, max, doing).await? {
            let number = message
                .headers
                .as_ref()
                .and_then(|headers| headers.get(super::DECISION_HEADER))
                .and_then(|value| value.as_str().parse::<u64>().ok());
            if number.is_some_and(|number| number >= from) {
                let decision =
                    serde_json::from_slice(&message.payload).map_err(|e| FleetError::Record {
                        person: person.to_string(),
                        seq,
                        detail: e.to_string(),
                    })?;
                decisions.push(decision);
            }
        }
        Ok(decisions)
    }

    /// `person`'s inbox from stream sequence `from` on (1: from the first).
    pub async fn inbox(&self, person: &Person, from: u64) -> Result<Inbox, FleetError> {
        let doing = "open an inbox";
        let consumer = step(
            doing,
            self.signals.create_consumer(consumer::pull::OrderedConfig {
                filter_subject: signals_subject(person),
                deliver_policy: consumer::DeliverPolicy::ByStartSequence {
                    start_sequence: from.max(1),
                },
                max_batch: FLEET_INBOX_PENDING_MAX,
                ..Default::default()
            }),
        )
        .await?;
        let messages = step(doing, consumer.messages()).await?;
        Ok(Inbox {
            messages,
            person: person.clone(),
        })
    }
}
