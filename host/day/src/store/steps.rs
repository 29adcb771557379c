//! What every home's writes share: the fault a step was given as the error it fails with,
//! a line in canonical JSON, a step's error naming its file, and the stop a failed append
//! puts on a day's journal. It must not decide when a home writes.

use std::sync::Mutex;

use serde_json::Value;

use aura_contract::canonical::to_canonical_string;
use aura_host::journal::{JournalError, StorageFault};

use super::StoreError;

/// A step's injected fault as the error it fails with, or nothing (a short write fails as a
/// whole: a home withdraws what reached it).
pub fn fault_error(fault: Option<StorageFault>) -> Option<std::io::Error> {
    match fault? {
        StorageFault::Fail(error) | StorageFault::Short { error, .. } => Some(error),
    }
}

/// `value` as the canonical JSON a home stores.
pub fn canonical(value: &Value) -> Result<String, StoreError> {
    to_canonical_string(value).map_err(|e| StoreError::Refused(e.to_string()))
}

/// A write of `path` that failed with `source`.
pub fn step_error(path: &str, source: std::io::Error) -> StoreError {
    StoreError::Journal(JournalError::Open {
        path: path.to_owned(),
        source,
    })
}

/// A day's journal stopped by a failed append, until the life is opened again.
#[derive(Debug, Default)]
pub struct Stop(Mutex<Option<String>>);

impl Stop {
    /// Fails if an append failed before.
    pub fn check(&self) -> Result<(), StoreError> {
        match self.0.lock().unwrap_or_else(|p| p.into_inner()).clone() {
            Some(first) => Err(StoreError::Stopped(first)),
            None => Ok(()),
        }
    }

    /// Stops the journal for `error` (the first one kept), and hands it back.
    pub fn stop(&self, error: StoreError) -> StoreError {
        let mut first = self.0.lock().unwrap_or_else(|p| p.into_inner());
        first.get_or_insert_with(|| error.to_string());
        error
    }
}
