//! People's checkpoints in JetStream's object store: one object per person, replaced by each
//! newer one.
//!
//! It owns the bucket's settings, storing a checkpoint and reading a person's back with its
//! size bounded before it is read. It must not decide what a checkpoint holds nor whether it
//! fits the journal ([`crate::checkpoint`] does).

use std::time::Duration;

use async_nats::jetstream::{self, object_store, stream};
use tokio::io::AsyncReadExt;

use aura_contract::limits::{FLEET_CHECKPOINT_BYTES_MAX, FLEET_CHECKPOINT_STORE_MS};
use aura_contract::person::Person;

use super::{FleetError, JetStreamFleet, nats, step, within};
use crate::checkpoint::Checkpoint;

/// The object store of checkpoints (which does not say itself in Debug).
#[derive(Clone)]
pub(super) struct Checkpoints(pub(super) object_store::ObjectStore);

impl std::fmt::Debug for Checkpoints {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(CHECKPOINTS_BUCKET)
    }
}

impl std::ops::Deref for Checkpoints {
    type Target = object_store::ObjectStore;
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

/// The object store of people's checkpoints, an object per person (`<tenant>.<user>`).
pub const CHECKPOINTS_BUCKET: &str = "aura-checkpoints";

/// The checkpoints bucket, created if it is not there.
pub(super) async fn open(
    context: &jetstream::Context,
) -> Result<object_store::ObjectStore, FleetError> {
    match within(
        "open the checkpoints",
        context.get_object_store(CHECKPOINTS_BUCKET),
    )
    .await?
    {
        Ok(store) => Ok(store),
        Err(_) => {
            step(
                "create the checkpoints",
                context.create_object_store(object_store::Config {
                    bucket: CHECKPOINTS_BUCKET.to_owned(),
                    storage: stream::StorageType::File,
                    ..Default::default()
                }),
            )
            .await
        }
    }
}

impl JetStreamFleet {
    /// Stores `checkpoint` as its person's, replacing the one before.
    pub async fn save_checkpoint(&self, checkpoint: &Checkpoint) -> Result<(), FleetError> {
        let doing = "store a checkpoint";
        let bytes = serde_json::to_vec(checkpoint).map_err(|e| nats(doing)(&e))?;
        if bytes.len() > FLEET_CHECKPOINT_BYTES_MAX {
            return Err(FleetError::TooLarge {
                person: checkpoint.person.to_string(),
                bytes: bytes.len(),
            });
        }
        let wait = Duration::from_millis(FLEET_CHECKPOINT_STORE_MS);
        let name = checkpoint.person.key();
        let mut reader = bytes.as_slice();
        let put = self.checkpoints.put(name.as_str(), &mut reader);
        match tokio::time::timeout(wait, put).await {
            Ok(stored) => stored.map(|_| ()).map_err(|e| nats(doing)(&e)),
            Err(_) => Err(FleetError::TimedOut { doing }),
        }
    }

    /// `person`'s last stored checkpoint, if there is one.
    pub async fn checkpoint(&self, person: &Person) -> Result<Option<Checkpoint>, FleetError> {
        let doing = "read a checkpoint";
        let got = within(doing, self.checkpoints.get(person.key())).await?;
        let mut object = match got {
            Ok(object) => object,
            Err(error) if error.kind() == object_store::GetErrorKind::NotFound => return Ok(None),
            Err(error) => return Err(nats(doing)(&error)),
        };
        let size = object.info().size;
        if size > FLEET_CHECKPOINT_BYTES_MAX {
            return Err(FleetError::TooLarge {
                person: person.to_string(),
                bytes: size,
            });
        }
        let mut bytes = Vec::with_capacity(size);
        let wait = Duration::from_millis(FLEET_CHECKPOINT_STORE_MS);
        let mut bounded = (&mut object).take(FLEET_CHECKPOINT_BYTES_MAX as u64 + 1);
        let read = bounded.read_to_end(&mut bytes);
        match tokio::time::timeout(wait, read).await {
            Ok(Ok(_)) => {}
            Ok(Err(error)) => return Err(nats(doing)(&error)),
            Err(_) => return Err(FleetError::TimedOut { doing }),
        }
        serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| FleetError::Record {
                person: person.to_string(),
                seq: 0,
                detail: format!("its checkpoint: {e}"),
            })
    }
}
