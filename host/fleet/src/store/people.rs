//! The people a fleet serves and what is sent to them: each person's enrolment (their
//! assistant's setup and seed), the hosts present, and the signals sent to a person (a subject
//! per person, kept while nobody holds them).
//!
//! It owns enrolling and listing people, announcing and listing hosts, sending a signal (or the
//! end of a person's inputs) and reading a person's inbox from a sequence on. It must not
//! decide who holds a person (the lease does) nor what a signal means (the session does).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use aura_contract::limits::{
    FLEET_ENROLMENT_BYTES_MAX, FLEET_HOSTS_SCANNED_MAX, FLEET_PEOPLE_SCANNED_MAX,
    LIVE_SIGNAL_BYTES_MAX,
};
use aura_contract::person::Person;

use super::{
    Bucket, DECISION_HEADER, Fleet, FleetError, Log, Messages, decisions_subject, during, failed,
};
use crate::protocol::Stored;

/// The header that marks the end of a person's inputs (a replayed day may then run to its
/// end) instead of a signal.
pub const INPUTS_END_HEADER: &str = "Aura-Inputs-End";

/// The header naming whom a message is for (`tenant/user`): on every signal sent, journal
/// record and decision, so a message on one person's subject that names another is caught.
pub const PERSON_HEADER: &str = "Aura-Person";

/// The header under which the store deduplicates a resent signal (for
/// [`aura_contract::limits::FLEET_SIGNAL_DEDUPE_MS`] on JetStream): the same signal sent twice (a sender that lost the answer) is stored once.
pub const MSG_ID_HEADER: &str = "Nats-Msg-Id";

/// The message id of `signal` sent to `person`: sha256 of the person and the signal in its
/// canonical form (RFC 8785), in hex, for a signal with an `id` of its own. The same signal
/// sent again has the same message id however its JSON was spelled; another signal under the
/// same id does not (the session refuses that one, `id_reused`, and quarantines it: the stream
/// must not drop it unseen). A signal with no id has none: only the session can tell repeats
/// of it apart.
fn msg_id(person: &Person, signal: &[u8]) -> Option<String> {
    use sha2::Digest;
    let value: serde_json::Value = serde_json::from_slice(signal).ok()?;
    value.get("id")?.as_str()?;
    let canonical = aura_contract::canonical::to_canonical_string(&value).ok()?;
    let mut hash = sha2::Sha256::new();
    hash.update(person.key().as_bytes());
    hash.update([0]);
    hash.update(canonical.as_bytes());
    Some(format!("{:x}", hash.finalize()))
}

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
    Signal(bytes::Bytes),
    /// The sender will send nothing more.
    InputsEnd,
    /// A message on this person's subject that names another person: refused, never taken.
    Misaddressed {
        /// Whom it names.
        named: String,
        /// What it said.
        bytes: bytes::Bytes,
    },
}

/// A person's inbox from a sequence on: each message with its sequence.
pub struct Inbox {
    messages: Box<dyn Messages>,
    person: Person,
}

impl Inbox {
    /// The next message, when it comes (cancel-safe: a message is not lost when the wait is
    /// dropped).
    pub async fn next(&mut self) -> Result<(u64, Sent), FleetError> {
        let message = self.messages.next().await?;
        let sent = match (
            message.header(PERSON_HEADER),
            message.header(INPUTS_END_HEADER),
        ) {
            (Some(named), _) if named != self.person.to_string() => Sent::Misaddressed {
                named: named.to_owned(),
                bytes: message.payload.clone(),
            },
            (_, Some(_)) => Sent::InputsEnd,
            (_, None) => Sent::Signal(message.payload.clone()),
        };
        Ok((message.seq, sent))
    }
}

impl Fleet {
    /// Enrols `person` (or sets their enrolment again): a host takes them from now on.
    pub async fn enrol(&self, person: &Person, enrolment: &Enrolment) -> Result<(), FleetError> {
        let bytes = serde_json::to_vec(enrolment).map_err(|e| failed("encode an enrolment")(&e))?;
        if bytes.len() > FLEET_ENROLMENT_BYTES_MAX {
            return Err(FleetError::TooLarge {
                what: "enrolment",
                person: person.to_string(),
                bytes: bytes.len(),
                max: FLEET_ENROLMENT_BYTES_MAX,
            });
        }
        let key = person.key();
        let put = self.store.put(Bucket::People, &key, bytes.into());
        put.await.map_err(during("enrol a person"))
    }

    /// Says host `me` is present for another lease.
    pub async fn announce(&self, me: &str) -> Result<(), FleetError> {
        let put = self.store.put(Bucket::Hosts, me, bytes::Bytes::new());
        put.await.map_err(during("announce a host"))
    }

    /// The hosts present (announced within a lease), at most [`FLEET_HOSTS_SCANNED_MAX`].
    pub async fn hosts(&self) -> Result<Vec<String>, FleetError> {
        self.store
            .keys(Bucket::Hosts, FLEET_HOSTS_SCANNED_MAX)
            .await
            .map_err(during("list the hosts"))
    }

    /// The keys of the people held now (`<tenant>.<user>`), at most
    /// [`FLEET_PEOPLE_SCANNED_MAX`].
    pub async fn leased(&self) -> Result<std::collections::HashSet<String>, FleetError> {
        let keys = self.store.keys(Bucket::Leases, FLEET_PEOPLE_SCANNED_MAX);
        Ok(keys
            .await
            .map_err(during("list the leases"))?
            .into_iter()
            .collect())
    }

    /// `person`'s enrolment, if they are enrolled.
    pub async fn enrolment(&self, person: &Person) -> Result<Option<Enrolment>, FleetError> {
        let key = person.key();
        let get = self.store.get(Bucket::People, &key);
        let Some(entry) = get.await.map_err(during("read an enrolment"))? else {
            return Ok(None);
        };
        serde_json::from_slice(&entry.value)
            .map(Some)
            .map_err(|e| FleetError::Enrolment {
                person: person.to_string(),
                detail: e.to_string(),
            })
    }

    /// The people enrolled, at most [`FLEET_PEOPLE_SCANNED_MAX`] of them (a key that is not a
    /// person's is skipped: the bucket is the fleet's, but its keys are read, not trusted).
    pub async fn people(&self) -> Result<Vec<Person>, FleetError> {
        let keys = self.store.keys(Bucket::People, FLEET_PEOPLE_SCANNED_MAX);
        let mut people = Vec::new();
        for key in keys.await.map_err(during("list the people"))? {
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
    /// signals log once the store kept it.
    pub async fn send(&self, person: &Person, signal: Option<&[u8]>) -> Result<u64, FleetError> {
        let mut headers = vec![(PERSON_HEADER, person.to_string())];
        match signal {
            Some(bytes) if bytes.len() > LIVE_SIGNAL_BYTES_MAX => {
                return Err(FleetError::TooLarge {
                    what: "signal",
                    person: person.to_string(),
                    bytes: bytes.len(),
                    max: LIVE_SIGNAL_BYTES_MAX,
                });
            }
            Some(_) => {}
            None => headers.push((INPUTS_END_HEADER, "1".to_owned())),
        }
        if let Some(id) = signal.and_then(|bytes| msg_id(person, bytes)) {
            headers.push((MSG_ID_HEADER, id));
        }
        let payload = bytes::Bytes::copy_from_slice(signal.unwrap_or_default());
        let subject = signals_subject(person);
        match self
            .store
            .publish(Log::Signals, subject, headers, payload, None)
            .await
            .map_err(during("send a signal"))?
        {
            Stored::At(seq) => Ok(seq),
            Stored::Conflict => Err(failed("send a signal")(
                &"refused with no sequence expected",
            )),
        }
    }

    /// `person`'s decisions as delivered, in order, from decision `from` on (at most
    /// `max` of them): what a person's devices read.
    pub async fn decisions(
        &self,
        person: &Person,
        from: u64,
        max: usize,
    ) -> Result<Vec<Value>, FleetError> {
        let subject = decisions_subject(person);
        let mut decisions = Vec::new();
        let read = self.store.read(Log::Decisions, &subject, max);
        let mut unnumbered = 0;
        for message in read.await.map_err(during("read the decisions"))? {
            let number = message
                .header(DECISION_HEADER)
                .and_then(|value| value.parse::<u64>().ok());
            // Only a host delivers here, and it numbers every decision: another message on
            // the subject is not the person's decision, and is passed over (and said).
            unnumbered += u32::from(number.is_none());
            if number.is_some_and(|number| number >= from) {
                let decision =
                    serde_json::from_slice(&message.payload).map_err(|e| FleetError::Record {
                        person: person.to_string(),
                        seq: message.seq,
                        detail: e.to_string(),
                    })?;
                decisions.push(decision);
            }
        }
        if unnumbered > 0 {
            tracing::warn!(person = %person, unnumbered, "messages without a decision number passed over");
        }
        Ok(decisions)
    }

    /// `person`'s inbox from sequence `from` on (1: from the first).
    pub async fn inbox(&self, person: &Person, from: u64) -> Result<Inbox, FleetError> {
        let subject = signals_subject(person);
        let messages = self
            .store
            .follow(Log::Signals, &subject, from.max(1))
            .await
            .map_err(during("open an inbox"))?;
        Ok(Inbox {
            messages,
            person: person.clone(),
        })
    }
}
