//! A day's journal on a fleet's store: its batches (one message, or parts where a batch is
//! larger than a message may be, read only once all are there), its ids and last sequence read
//! once, and the read positions as they stand. It must not decide what a line says.

use std::collections::BTreeMap;

use bytes::Bytes;

use aura_contract::limits::{FLEET_RECORD_BYTES_MAX, LIFE_DAY_MESSAGES_MAX};
use aura_day::logs::SIGNALS_PATH;
use aura_day::store::StoreError;
use aura_host::journal::StorageStep;

use super::fence::whole_batches;
use super::{FleetLife, Mark, failed, fleet, io};
use crate::store::{Log, Message};

impl FleetLife {
    /// The messages of the day's `log`, in order; for the journal, the batches whole.
    pub(super) async fn messages(&self, day: &str, log: &str) -> Result<Vec<Message>, StoreError> {
        self.store
            .read(Log::Days, &self.subject(day, log), LIFE_DAY_MESSAGES_MAX)
            .await
            .map_err(fleet)
    }

    /// The day's journal lines (read positions' lines among them), from its whole batches.
    pub(super) async fn journal(&self, day: &str) -> Result<Vec<String>, StoreError> {
        let messages = self.messages(day, "signals").await?;
        let mut lines = Vec::new();
        for batch in whole_batches(&messages) {
            for part in batch {
                let text = std::str::from_utf8(&part.payload)
                    .map_err(|e| StoreError::Damaged(e.to_string()))?;
                lines.extend(text.lines().map(str::to_owned));
            }
        }
        Ok(lines)
    }

    /// Reads the day's ids into the cache, once.
    pub(super) async fn known(&self, day: &str) -> Result<(), StoreError> {
        if self.cache().days.contains_key(day) {
            return Ok(());
        }
        let lines = self.journal(day).await?;
        let ids = aura_day::store::ids_of(&lines);
        self.cache().days.insert(day.to_owned(), ids);
        Ok(())
    }

    /// Publishes `lines` as one batch on the day's journal.
    pub(super) async fn publish_batch(
        &self,
        day: &str,
        lines: &[String],
    ) -> Result<(), StoreError> {
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
        if let Some(error) = failed(self.at(SIGNALS_PATH, StorageStep::Write, ordinal)) {
            return Err(stop(io(SIGNALS_PATH, error)));
        }
        let subject = self.subject(day, "signals");
        let parts = parts.into_iter().map(Bytes::from).collect();
        let before_last = || match failed(self.at(SIGNALS_PATH, StorageStep::Sync, ordinal)) {
            Some(error) => Err(io(SIGNALS_PATH, error)),
            None => Ok(()),
        };
        self.publish_parts(&subject, parts, before_last)
            .await
            .map_err(stop)?;
        let _ = self.at(SIGNALS_PATH, StorageStep::Synced, ordinal);
        let _ = self.at(SIGNALS_PATH, StorageStep::Done, ordinal);
        Ok(())
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
            true => self.journal(&state.open).await?,
            false => Vec::new(),
        };
        let positions = aura_day::store::positions_after(state.positions.clone(), &journal);
        self.cache().positions = Some(positions.clone());
        Ok(positions)
    }
}
