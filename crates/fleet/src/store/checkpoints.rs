//! People's checkpoints as a store's objects: one object per person (`<tenant>.<user>`),
//! replaced by each newer one.
//!
//! It owns storing a checkpoint and reading a person's back with its size bounded before it is
//! read. It must not decide what a checkpoint holds nor whether it fits the journal
//! ([`crate::checkpoint`] does).

use aura_contract::limits::FLEET_CHECKPOINT_BYTES_MAX;
use aura_contract::person::Person;

use super::{Fleet, FleetError, during, failed};
use crate::checkpoint::Checkpoint;

impl Fleet {
    /// Stores `checkpoint` as its person's, replacing the one before.
    pub async fn save_checkpoint(&self, checkpoint: &Checkpoint) -> Result<(), FleetError> {
        let bytes = serde_json::to_vec(checkpoint).map_err(|e| failed("store a checkpoint")(&e))?;
        if bytes.len() > FLEET_CHECKPOINT_BYTES_MAX {
            return Err(FleetError::TooLarge {
                what: "checkpoint",
                person: checkpoint.person.to_string(),
                bytes: bytes.len(),
                max: FLEET_CHECKPOINT_BYTES_MAX,
            });
        }
        let name = checkpoint.person.key();
        let put = self.store.put_object(&name, bytes);
        put.await.map_err(during("store a checkpoint"))
    }

    /// `person`'s last stored checkpoint, if there is one.
    pub async fn checkpoint(&self, person: &Person) -> Result<Option<Checkpoint>, FleetError> {
        let name = person.key();
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
                seq: 0,
                detail: format!("its checkpoint: {e}"),
            })
    }
}
