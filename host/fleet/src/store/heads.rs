//! People's heads and the purge of what a head covers.
//!
//! A person's head (a key of [`Bucket::Heads`], holding a [`Covered`]) is moved by
//! compare-and-set, and only forward: a holder that was fenced and moves it late cannot move it
//! back under a newer one. Once the head covers a fence, the journal's records before it (the
//! record at the fence stays, so the subject always has a last sequence to fence on) and the
//! inbox's signals before its `inbox_next` (the person's life holds them) are purged, if every
//! decision journaled up to the fence was delivered (a purged decision is never one that still
//! has to go out).
//!
//! It owns the heads and the purge. It must not decide when a head moves (the holder does).

use bytes::Bytes;

use aura_contract::limits::FLEET_HEAD_ATTEMPTS_MAX;
use aura_contract::person::Person;

use super::{Bucket, Fleet, FleetError, Log, during, failed, journal_subject, signals_subject};
use crate::protocol::{Covered, Stored};

/// What moving a head came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Saved {
    /// The person's head moved to it.
    Head(Covered),
    /// The head already covers as far or further (a newer holder's).
    Behind(Covered),
}

/// What a purge took away.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Purged {
    /// Journal records.
    pub records: u64,
    /// Inbox signals.
    pub signals: u64,
}

impl Fleet {
    /// Moves `person`'s head to `mine` by compare-and-set, only forward: [`Saved::Behind`]
    /// when it covers as far or further already (a newer holder's).
    pub async fn move_head(&self, person: &Person, mine: Covered) -> Result<Saved, FleetError> {
        let value =
            Bytes::from(serde_json::to_vec(&mine).map_err(|e| failed("encode a head")(&e))?);
        for _ in 0..FLEET_HEAD_ATTEMPTS_MAX {
            let head = self.head_entry(person).await?;
            let stored = match head {
                Some((head, _)) if head.fence >= mine.fence => return Ok(Saved::Behind(head)),
                Some((_, revision)) => {
                    let update =
                        self.store
                            .update(Bucket::Heads, &person.key(), value.clone(), revision);
                    update.await.map_err(during("move a checkpoint head"))?
                }
                None => {
                    let create = self
                        .store
                        .create(Bucket::Heads, &person.key(), value.clone());
                    create.await.map_err(during("move a checkpoint head"))?
                }
            };
            if let Stored::At(_) = stored {
                return Ok(Saved::Head(mine));
            }
        }
        Err(FleetError::Contended {
            person: person.to_string(),
        })
    }

    /// What `person`'s head covers, and its revision.
    async fn head_entry(&self, person: &Person) -> Result<Option<(Covered, u64)>, FleetError> {
        let entry = self.store.get(Bucket::Heads, &person.key());
        let Some(entry) = entry.await.map_err(during("read a checkpoint head"))? else {
            return Ok(None);
        };
        let covered = serde_json::from_slice(&entry.value).map_err(|e| FleetError::Record {
            person: person.to_string(),
            seq: 0,
            detail: format!("its checkpoint head: {e}"),
        })?;
        Ok(Some((covered, entry.revision)))
    }

    /// What `person`'s head covers, if it moved.
    pub async fn head(&self, person: &Person) -> Result<Option<Covered>, FleetError> {
        Ok(self.head_entry(person).await?.map(|(covered, _)| covered))
    }

    /// Purges what `covered` (the person's head, or one before it) holds of their journal and
    /// inbox, if every decision up to its fence was delivered; nothing otherwise.
    pub async fn purge_covered(
        &self,
        person: &Person,
        covered: Covered,
    ) -> Result<Purged, FleetError> {
        let delivered = self.last_decision(person).await?.map_or(0, |(n, _)| n + 1);
        if delivered < covered.decisions {
            return Ok(Purged::default());
        }
        let journal = self
            .store
            .purge(Log::Journal, &journal_subject(person), covered.fence);
        let records = journal.await.map_err(during("purge a journal"))?;
        let inbox = self
            .store
            .purge(Log::Signals, &signals_subject(person), covered.inbox_next);
        let signals = inbox.await.map_err(during("purge an inbox"))?;
        Ok(Purged { records, signals })
    }
}
