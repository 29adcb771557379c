//! People's checkpoints in JetStream: their objects (the object store, one per checkpoint) and
//! the key-value bucket of checkpoint heads (a person's key names their newest).
//!
//! It owns the buckets' settings and an object's put, delete and bounded get (its size checked
//! before it is read). It must not decide what a checkpoint holds ([`crate::checkpoint`] does)
//! nor when a head moves ([`crate::store::Fleet`] does).

use std::time::Duration;

use async_nats::jetstream::{self, kv, object_store, stream};
use tokio::io::AsyncReadExt;

use aura_contract::limits::{FLEET_CHECKPOINT_HEAD_BYTES_MAX, FLEET_CHECKPOINT_STORE_MS};

use super::{key_value, step, within};
use crate::store::{FleetError, failed};

/// The object store of people's checkpoints, an object per checkpoint
/// (`<tenant>.<user>.<fence>`).
pub const CHECKPOINTS_BUCKET: &str = "aura-checkpoints";
/// The key-value bucket of checkpoint heads: a person's key holds what their newest stored
/// checkpoint covers, moved only forward (compare-and-set).
pub const HEADS_BUCKET: &str = "aura-checkpoint-heads";

/// The object store of checkpoints (which does not say itself in Debug).
#[derive(Clone)]
pub(super) struct Checkpoints(pub(super) object_store::ObjectStore);

impl std::fmt::Debug for Checkpoints {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(CHECKPOINTS_BUCKET)
    }
}

/// The checkpoint heads bucket, created if it is not there.
pub(super) async fn open_heads(context: &jetstream::Context) -> Result<kv::Store, FleetError> {
    let config = kv::Config {
        bucket: HEADS_BUCKET.to_owned(),
        max_value_size: FLEET_CHECKPOINT_HEAD_BYTES_MAX as i32,
        ..Default::default()
    };
    key_value(context, config).await
}

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

impl Checkpoints {
    /// Stores `bytes` as object `name`, replacing the one before.
    pub(super) async fn put(&self, name: &str, bytes: Vec<u8>) -> Result<(), FleetError> {
        let doing = "store a checkpoint";
        let wait = Duration::from_millis(FLEET_CHECKPOINT_STORE_MS);
        let mut reader = bytes.as_slice();
        match tokio::time::timeout(wait, self.0.put(name, &mut reader)).await {
            Ok(stored) => stored.map(|_| ()).map_err(|e| failed(doing)(&e)),
            Err(_) => Err(FleetError::TimedOut {
                doing,
                ms: FLEET_CHECKPOINT_STORE_MS,
            }),
        }
    }

    /// Deletes object `name` (nothing when there is none).
    pub(super) async fn delete(&self, name: &str) -> Result<(), FleetError> {
        let doing = "delete a checkpoint";
        match within(doing, self.0.delete(name)).await? {
            Ok(()) => Ok(()),
            Err(error) if error.kind() == object_store::DeleteErrorKind::NotFound => Ok(()),
            Err(error) => Err(failed(doing)(&error)),
        }
    }

    /// Object `name`, if there is one, refused past `max` bytes.
    pub(super) async fn get(&self, name: &str, max: usize) -> Result<Option<Vec<u8>>, FleetError> {
        let doing = "read a checkpoint";
        let mut object = match within(doing, self.0.get(name)).await? {
            Ok(object) => object,
            Err(error) if error.kind() == object_store::GetErrorKind::NotFound => return Ok(None),
            Err(error) => return Err(failed(doing)(&error)),
        };
        let size = object.info().size;
        if size > max {
            return Err(FleetError::TooLarge {
                what: "checkpoint",
                person: name.to_owned(),
                bytes: size,
                max,
            });
        }
        let mut bytes = Vec::with_capacity(size);
        let wait = Duration::from_millis(FLEET_CHECKPOINT_STORE_MS);
        let mut bounded = (&mut object).take((max as u64).saturating_add(1));
        match tokio::time::timeout(wait, bounded.read_to_end(&mut bytes)).await {
            Ok(Ok(_)) => Ok(Some(bytes)),
            Ok(Err(error)) => Err(failed(doing)(&error)),
            Err(_) => Err(FleetError::TimedOut {
                doing,
                ms: FLEET_CHECKPOINT_STORE_MS,
            }),
        }
    }
}
