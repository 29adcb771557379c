//! The fence over a life's messages on a fleet's store: each open's marker, every message
//! published with the life's last sequence as its opener last wrote it (over all the life's
//! subjects), and batches of parts. It must not decide what a message holds.

use bytes::Bytes;

use aura_day::store::StoreError;

use super::{BATCH_HEADER, FleetLife, PART_HEADER, fleet};
use crate::protocol::{Seq, Stored};
use crate::store::{Bucket, EXPECTED_FILTER_HEADER, Log, Message};

impl FleetLife {
    /// Publishes this opener's marker (an older opener's next publish is refused from here on)
    /// and rewrites the generation key at the revision read after it (so is its set-aside).
    pub(super) async fn fence_older_openers(&self) -> Result<(), StoreError> {
        let marker = self.marker();
        let holder = Bytes::from(self.holder.clone());
        let stored = self
            .store
            .publish(Log::Days, marker.clone(), Vec::new(), holder, None)
            .await
            .map_err(fleet)?;
        let Stored::At(seq) = stored else {
            return Err(StoreError::Busy);
        };
        *self.fence.lock().await = seq;
        self.store
            .purge(Log::Days, &marker, seq)
            .await
            .map_err(fleet)?;
        let key = format!("{}.generation", self.life);
        let (generation, stored) = match self.store.get(Bucket::Lives, &key).await.map_err(fleet)? {
            Some(entry) => {
                let generation = std::str::from_utf8(&entry.value)
                    .ok()
                    .and_then(|text| text.parse::<u64>().ok())
                    .ok_or_else(|| StoreError::Damaged(format!("{}'s generation", self.life)))?;
                let update = self
                    .store
                    .update(Bucket::Lives, &key, entry.value, entry.revision);
                (generation, update.await)
            }
            None => {
                let create = self.store.create(Bucket::Lives, &key, Bytes::from("0"));
                (0, create.await)
            }
        };
        self.generation_at(generation, stored.map_err(fleet)?)
    }

    /// This opener reads and writes `generation` from here on, its key stored at `stored`
    /// ([`StoreError::Busy`] when the key was written since this opener last did).
    pub(super) fn generation_at(&self, generation: u64, stored: Stored) -> Result<(), StoreError> {
        let Stored::At(revision) = stored else {
            return Err(StoreError::Busy);
        };
        *self.generation.lock().unwrap_or_else(|p| p.into_inner()) = (generation, revision);
        Ok(())
    }

    /// The subject an opener's marker is published on.
    fn marker(&self) -> String {
        format!("aura.days.{}.opened", self.life)
    }

    /// Publishes `payload` on `subject` under the fence: its sequence, or
    /// [`StoreError::Busy`] (and this opener writes no more) when another opener wrote since.
    pub(super) async fn publish_fenced(
        &self,
        fence: &mut Seq,
        subject: String,
        mut headers: Vec<(&'static str, String)>,
        payload: Bytes,
    ) -> Result<Seq, StoreError> {
        self.holding()?;
        headers.push((EXPECTED_FILTER_HEADER, format!("aura.days.{}.>", self.life)));
        let stored = self
            .store
            .publish(Log::Days, subject, headers, payload, Some(*fence))
            .await
            .map_err(fleet)?;
        match stored {
            Stored::At(seq) => {
                *fence = seq;
                Ok(seq)
            }
            Stored::Conflict => {
                tracing::warn!(life = %self.life, "another opener wrote the life: this one writes no more");
                self.hold.lock().unwrap_or_else(|p| p.into_inner()).1 = true;
                Err(StoreError::Busy)
            }
        }
    }

    /// Publishes a marker under the fence (an older opener cannot: it stops there) and
    /// purges the markers before it: the step before a purge, which then reaches no further
    /// than this opener's own last message.
    pub(super) async fn touch(&self) -> Result<Seq, StoreError> {
        let mut fence = self.fence.lock().await;
        let marker = self.marker();
        let holder = Bytes::from(self.holder.clone());
        let seq = self
            .publish_fenced(&mut fence, marker.clone(), Vec::new(), holder)
            .await?;
        self.store
            .purge(Log::Days, &marker, seq)
            .await
            .map_err(fleet)?;
        Ok(seq)
    }

    /// Publishes `parts` as one batch on `subject` under the fence, asking `before_last`
    /// before the last part: the first part's sequence and the last's.
    pub(super) async fn publish_parts(
        &self,
        subject: &str,
        parts: Vec<Bytes>,
        before_last: impl Fn() -> Result<(), StoreError>,
    ) -> Result<(Seq, Seq), StoreError> {
        let mut fence = self.fence.lock().await;
        let batch = format!(
            "{}-{}",
            self.holder,
            self.batches
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        );
        let count = parts.len();
        let mut first = None;
        for (index, part) in parts.into_iter().enumerate() {
            if index + 1 == count {
                before_last()?;
            }
            let headers = vec![
                (BATCH_HEADER, batch.clone()),
                (PART_HEADER, format!("{}/{count}", index + 1)),
            ];
            let seq = self
                .publish_fenced(&mut fence, subject.to_owned(), headers, part)
                .await?;
            first.get_or_insert(seq);
        }
        Ok((first.unwrap_or(*fence), *fence))
    }
}

/// The whole batches among a subject's messages, in order: a batch's parts (`i/n`, the same
/// batch id), all `n` of them; a message without parts is a batch of one.
pub(super) fn whole_batches(messages: &[Message]) -> Vec<Vec<&Message>> {
    let mut whole = Vec::new();
    let mut batch: Vec<&Message> = Vec::new();
    for message in messages {
        let (part, of) = message
            .header(PART_HEADER)
            .and_then(|p| p.split_once('/'))
            .and_then(|(i, n)| Some((i.parse::<usize>().ok()?, n.parse::<usize>().ok()?)))
            .unwrap_or((1, 1));
        let same = batch
            .first()
            .is_some_and(|first| first.header(BATCH_HEADER) == message.header(BATCH_HEADER));
        if part == 1 || !same {
            batch.clear();
        }
        batch.push(message);
        if part == of && batch.len() == of {
            whole.push(std::mem::take(&mut batch));
        }
    }
    whole
}
