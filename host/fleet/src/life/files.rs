//! A day's files on a fleet's store (its setup, record and checkpoint): each a batch on a
//! subject of its own, the last whole batch the file, the ones before it purged once it is
//! stored. It must not decide what a file holds.

use bytes::Bytes;

use aura_contract::limits::FLEET_RECORD_BYTES_MAX;
use aura_day::checkpoint::{CHECKPOINT_PATH, LIVE_SETUP_PATH};
use aura_day::live::life::RECORD_PATH;
use aura_day::store::StoreError;
use aura_host::journal::StorageStep;

use super::fence::whole_batches;
use super::{FleetLife, failed, fleet, io};
use crate::store::Log;

/// The subjects of a day: its journal, its logs and its files.
pub(super) const DAY_SUBJECTS: [&str; 8] = [
    "signals",
    "traces",
    "quarantine",
    "deliveries",
    "narrations",
    "setup",
    "record",
    "checkpoint",
];

/// The subject token of a day's file (its setup, record or checkpoint: the only ones a life
/// writes).
fn file_subject(file: &str) -> &'static str {
    match file {
        LIVE_SETUP_PATH => "setup",
        RECORD_PATH => "record",
        CHECKPOINT_PATH => "checkpoint",
        _ => "file",
    }
}

impl FleetLife {
    /// Replaces file `file` of the day (a batch on its subject, the ones before purged once
    /// it is stored), open to the faults' steps.
    pub(super) async fn put_file(
        &self,
        day: &str,
        file: &'static str,
        bytes: Vec<u8>,
    ) -> Result<(), StoreError> {
        self.holding()?;
        let ordinal = self.ordinal(&format!("{day}/{file}"));
        for step in [StorageStep::Write, StorageStep::Sync] {
            if let Some(error) = failed(self.at(file, step, ordinal)) {
                return Err(io(file, error));
            }
        }
        let subject = self.subject(day, file_subject(file));
        let parts: Vec<Bytes> = match bytes.is_empty() {
            true => vec![Bytes::new()],
            false => bytes
                .chunks(FLEET_RECORD_BYTES_MAX)
                .map(Bytes::copy_from_slice)
                .collect(),
        };
        let first = self.publish_parts(&subject, parts, || Ok(())).await?.0;
        self.store
            .purge(Log::Days, &subject, first)
            .await
            .map_err(fleet)?;
        if let Some(error) = failed(self.at(file, StorageStep::Synced, ordinal)) {
            return Err(io(file, error));
        }
        let _ = self.at(file, StorageStep::Done, ordinal);
        Ok(())
    }

    /// File `file` of the day: its last whole batch, refused past `max` bytes.
    pub(super) async fn get_file(
        &self,
        day: &str,
        file: &str,
        max: usize,
    ) -> Result<Option<Vec<u8>>, StoreError> {
        let messages = self.messages(day, file_subject(file)).await?;
        let Some(batch) = whole_batches(&messages).pop() else {
            return Ok(None);
        };
        let size: usize = batch.iter().map(|m| m.payload.len()).sum();
        if size > max {
            return Err(StoreError::Damaged(format!(
                "{file} is {size} bytes, past its bound of {max}"
            )));
        }
        Ok(Some(
            batch
                .iter()
                .flat_map(|m| m.payload.iter().copied())
                .collect(),
        ))
    }
}
