//! People's checkpoints as a store's objects, their heads, and the purge of what a head covers.
//!
//! A checkpoint is stored as its own object (`<tenant>.<user>.<fence>`), then the person's head
//! (a key of [`Bucket::Heads`], holding the [`Covered`] of their newest checkpoint) is moved to
//! it by compare-and-set, and only forward: a holder that was fenced and stores its last
//! checkpoint late cannot move the head back under a newer one. Once the head covers a fence,
//! the journal's records before it (the record at the fence stays, so the subject always has a
//! last sequence to fence on) and the inbox's signals before its `inbox_next` are purged, if
//! every decision journaled up to the fence was delivered (a purged decision is never one that
//! still has to go out). The object the head named before is deleted.
//!
//! It owns storing and reading checkpoints (sizes bounded before they are read), the heads and
//! the purge. It must not decide what a checkpoint holds nor whether it fits the journal
//! ([`crate::checkpoint`] does), nor when to checkpoint (the holder does).

use bytes::Bytes;

use aura_contract::limits::{FLEET_CHECKPOINT_BYTES_MAX, FLEET_HEAD_ATTEMPTS_MAX};
use aura_contract::person::Person;

use super::{Bucket, Fleet, FleetError, Log, during, failed, journal_subject, signals_subject};
use crate::checkpoint::Checkpoint;
use crate::protocol::{Covered, Seq, Stored};

/// The object a person's checkpoint to journal sequence `fence` is stored as.
fn object_name(person: &Person, fence: Seq) -> String {
    format!("{}.{fence}", person.key())
}

/// What storing a checkpoint came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Saved {
    /// Stored, and the person's head moved to it.
    Head(Covered),
    /// Stored, but the head already covers as far or further (a newer holder's): deleted again.
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
    /// Stores `checkpoint` and moves its person's head to it unless the head is as far already.
    pub async fn save_checkpoint(&self, checkpoint: &Checkpoint) -> Result<Saved, FleetError> {
        let bytes = serde_json::to_vec(checkpoint).map_err(|e| failed("store a checkpoint")(&e))?;
        let person = &checkpoint.person;
        if bytes.len() > FLEET_CHECKPOINT_BYTES_MAX {
            return Err(FleetError::TooLarge {
                what: "checkpoint",
                person: person.to_string(),
                bytes: bytes.len(),
                max: FLEET_CHECKPOINT_BYTES_MAX,
            });
        }
        let name = object_name(person, checkpoint.fence);
        let put = self.store.put_object(&name, bytes);
        put.await
            .map_err(during("store a checkpoint"))
            .map(|_| ())?;
        let saved = self.move_head(person, checkpoint.covered()).await?;
        match saved {
            Saved::Head(_) => {}
            Saved::Behind(head) if head.fence > checkpoint.fence => self.delete_object(&name).await,
            Saved::Behind(_) => {}
        }
        Ok(saved)
    }

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
                if let Some((before, _)) = head {
                    self.delete_object(&object_name(person, before.fence)).await;
                }
                return Ok(Saved::Head(mine));
            }
        }
        Err(FleetError::Contended {
            person: person.to_string(),
        })
    }

    /// Deletes checkpoint object `name`; one left behind costs space, never a person's state.
    async fn delete_object(&self, name: &str) {
        if let Err(error) = self.store.delete_object(name).await {
            tracing::warn!(object = name, %error, "an old checkpoint was not deleted");
        }
    }

    /// What `person`'s newest stored checkpoint covers, and the head's revision.
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

    /// What `person`'s newest stored checkpoint covers, if they have one.
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

    /// `person`'s newest stored checkpoint, if there is one. The head is moved only once its
    /// object is stored, and the object it named before is deleted after: an object gone
    /// between reading the head and reading it means the head moved, and is read again.
    pub async fn checkpoint(&self, person: &Person) -> Result<Option<Checkpoint>, FleetError> {
        let mut named = None;
        for _ in 0..FLEET_HEAD_ATTEMPTS_MAX {
            let Some(head) = self.head(person).await? else {
                return Ok(None);
            };
            if named == Some(head.fence) {
                return Err(FleetError::Record {
                    person: person.to_string(),
                    seq: head.fence,
                    detail: "its checkpoint head names a checkpoint that is not stored".to_owned(),
                });
            }
            named = Some(head.fence);
            if let Some(checkpoint) = self.checkpoint_object(person, head.fence).await? {
                return Ok(Some(checkpoint));
            }
        }
        Err(FleetError::Contended {
            person: person.to_string(),
        })
    }

    /// `person`'s checkpoint to journal sequence `fence`, if it is stored.
    async fn checkpoint_object(
        &self,
        person: &Person,
        fence: Seq,
    ) -> Result<Option<Checkpoint>, FleetError> {
        let name = object_name(person, fence);
        let got = self.store.get_object(&name, FLEET_CHECKPOINT_BYTES_MAX);
        let bytes = match got.await {
            Ok(Some(bytes)) => bytes,
            Ok(None) => return Ok(None),
            // The store names the object; the error names the person.
            Err(FleetError::TooLarge {
                what, bytes, max, ..
            }) => {
                return Err(FleetError::TooLarge {
                    what,
                    person: person.to_string(),
                    bytes,
                    max,
                });
            }
            Err(error) => return Err(during("read a checkpoint")(error)),
        };
        serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| FleetError::Record {
                person: person.to_string(),
                seq: fence,
                detail: format!("its checkpoint: {e}"),
            })
    }
}
