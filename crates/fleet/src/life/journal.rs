//! A day's journal on a fleet's store: its batches (one message, or parts where a batch is
//! larger than a message may be, read only once all are there), its ids and last sequence read
//! once, and the read positions as they stand. It must not decide what a line says.

use std::collections::BTreeMap;

use bytes::Bytes;

use aura_contract::limits::{FLEET_RECORD_BYTES_MAX, LIFE_DAY_MESSAGES_MAX};
use aura_day::logs::SIGNALS_PATH;
use aura_day::store::StoreError;
use aura_host::journal::StorageStep;

use super::{BATCH_HEADER, FleetLife, Mark, PART_HEADER, failed, fleet, io};
use crate::protocol::{Seq, Stored};
use crate::store::{Log, Message};

impl FleetLife {
    /// The messages of the day's `log`, in order; for the journal, the batches whole.
    pub(super) async fn messages(&self, day: &str, log: &str) -> Result<Vec<Message>, StoreError> {
        self.store
            .read(Log::Days, &self.subject(day, log), LIFE_DAY_MESSAGES_MAX)
            .await
            .map_err(fleet)
    }

    /// The day's journal lines (read positions' lines among them), from its whole batches,
    /// and its subject's last sequence.
    pub(super) async fn journal(&self, day: &str) -> Result<(Vec<String>, Seq), StoreError> {
        let messages = self.messages(day, "signals").await?;
        let last = messages.last().map_or(0, |m| m.seq);
        let mut lines = Vec::new();
        let mut batch: Vec<&Message> = Vec::new();
        for message in &messages {
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
                for whole in batch.drain(..) {
                    let text = std::str::from_utf8(&whole.payload)
                        .map_err(|e| StoreError::Damaged(e.to_string()))?;
                    lines.extend(text.lines().map(str::to_owned));
                }
            }
        }
        Ok((lines, last))
    }

    /// Reads the day's ids and its journal's last sequence into the cache, once.
    pub(super) async fn known(&self, day: &str) -> Result<(), StoreError> {
        if self.cache().days.contains_key(day) {
            return Ok(());
        }
        let (lines, last) = self.journal(day).await?;
        let ids = aura_day::store::ids_of(&lines);
        self.cache().days.insert(day.to_owned(), (ids, last));
        Ok(())
    }

    /// Publishes `lines` as one batch on the day's journal after `last`: its new last.
    pub(super) async fn publish_batch(
        &self,
        day: &str,
        lines: &[String],
        last: Seq,
    ) -> Result<Seq, StoreError> {
        self.writable()?;
        let ordinal = self.ordinal(&format!("{day}/{SIGNALS_PATH}"));
        let stop = |error: StoreError| self.stopped.stop(error);
        let mut parts: Vec<String> = vec![String::new()];
        for line in lines {
            let current = parts.last_mut().expect("one part at least");
            if !current.is_empty() && current.len() + line.len() + 1 > FLEET_RECORD_BYTES_MAX {
                parts.push(String::new());
            }
            let current = parts.last_mut().expect("one part at least");
            current.push_str(line);
            current.push('\n');
        }
        if parts.iter().any(|part| part.len() > FLEET_RECORD_BYTES_MAX) {
            return Err(StoreError::Refused(format!(
                "a journal line is larger than the {FLEET_RECORD_BYTES_MAX} bytes a message holds"
            )));
        }
        let batch = format!(
            "{}-{}",
            self.holder,
            self.batches
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        );
        if let Some(error) = failed(self.at(SIGNALS_PATH, StorageStep::Write, ordinal)) {
            return Err(stop(io(SIGNALS_PATH, error)));
        }
        let subject = self.subject(day, "signals");
        let count = parts.len();
        let mut last = last;
        for (index, part) in parts.into_iter().enumerate() {
            if index + 1 == count
                && let Some(error) = failed(self.at(SIGNALS_PATH, StorageStep::Sync, ordinal))
            {
                return Err(stop(io(SIGNALS_PATH, error)));
            }
            let headers = vec![
                (BATCH_HEADER, batch.clone()),
                (PART_HEADER, format!("{}/{count}", index + 1)),
            ];
            let stored = self
                .store
                .publish(
                    Log::Days,
                    subject.clone(),
                    headers,
                    Bytes::from(part),
                    Some(last),
                )
                .await
                .map_err(|e| stop(fleet(e)))?;
            last = match stored {
                Stored::At(seq) => seq,
                Stored::Conflict => return Err(stop(StoreError::Busy)),
            };
        }
        let _ = self.at(SIGNALS_PATH, StorageStep::Synced, ordinal);
        let _ = self.at(SIGNALS_PATH, StorageStep::Done, ordinal);
        Ok(last)
    }

    pub(super) async fn positions_now(&self) -> Result<BTreeMap<String, String>, StoreError> {
        let (cached, state) = {
            let cache = self.cache();
            (cache.positions.clone(), cache.state.clone())
        };
        if let Some(positions) = cached {
            return Ok(positions);
        }
        let Some(state) = state else {
            return Ok(BTreeMap::new());
        };
        let whole = self.cache().index.get(&state.open) == Some(&Mark::Whole);
        let journal = match whole {
            true => self.journal(&state.open).await?.0,
            false => Vec::new(),
        };
        let positions = aura_day::store::positions_after(state.positions.clone(), &journal);
        self.cache().positions = Some(positions.clone());
        Ok(positions)
    }
}
