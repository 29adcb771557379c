//! People's heads in JetStream: the key-value bucket where a person's key holds what their
//! journal's compaction covers (moved only forward).
//!
//! It owns the bucket's settings. It must not decide when a head moves
//! ([`crate::store::Fleet`] does).

use async_nats::jetstream::{self, kv};

use aura_contract::limits::FLEET_CHECKPOINT_HEAD_BYTES_MAX;

use super::key_value;
use crate::store::FleetError;

/// The key-value bucket of heads: a person's key holds what their journal's compaction
/// covers, moved only forward (compare-and-set). (Its name is the one it had when checkpoints
/// were objects beside it: a deployment's heads are kept.)
pub const HEADS_BUCKET: &str = "aura-checkpoint-heads";

/// The heads bucket, created if it is not there.
pub(super) async fn open_heads(context: &jetstream::Context) -> Result<kv::Store, FleetError> {
    let config = kv::Config {
        bucket: HEADS_BUCKET.to_owned(),
        max_value_size: FLEET_CHECKPOINT_HEAD_BYTES_MAX as i32,
        ..Default::default()
    };
    key_value(context, config).await
}
