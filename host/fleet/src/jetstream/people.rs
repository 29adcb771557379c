//! The people's and hosts' buckets and the signals stream on JetStream: their settings (the
//! same from every host), created if they are not there. It must not read or write them (the
//! store's steps do).

use std::time::Duration;

use async_nats::jetstream::stream::DiscardPolicy;
use async_nats::jetstream::{self, kv, stream};

use aura_contract::limits::{FLEET_ENROLMENT_BYTES_MAX, FLEET_LEASE_MS, FLEET_SIGNAL_DEDUPE_MS};

use super::{key_value, per_person};
use crate::store::FleetError;

/// The key-value bucket of people: a person's key holds their enrolment.
pub const PEOPLE_BUCKET: &str = "aura-people";
/// The key-value bucket of hosts present: each host's key, renewed as its leases are, names it
/// while it runs (the bucket's max age is the lease).
pub const HOSTS_BUCKET: &str = "aura-hosts";
/// The stream of signals sent to people, a subject per person.
pub const SIGNALS_STREAM: &str = "AURA_SIGNALS";

/// The hosts bucket, the people bucket and the signals stream, created if they are not there.
pub(super) async fn open(
    context: &jetstream::Context,
) -> Result<(kv::Store, kv::Store, stream::Stream), FleetError> {
    let config = kv::Config {
        bucket: HOSTS_BUCKET.to_owned(),
        max_age: Duration::from_millis(FLEET_LEASE_MS),
        ..Default::default()
    };
    let hosts = key_value(context, config).await?;
    let config = kv::Config {
        bucket: PEOPLE_BUCKET.to_owned(),
        max_value_size: FLEET_ENROLMENT_BYTES_MAX as i32,
        ..Default::default()
    };
    let people = key_value(context, config).await?;
    // Discard new per subject: a sender told its signal was not stored can say so, where
    // dropping the oldest would lose signals a person has not been served yet.
    // A signal resent under the same message id is stored once (Fleet::send names each by
    // its own id).
    let dedupe = Duration::from_millis(FLEET_SIGNAL_DEDUPE_MS);
    let signals = per_person(
        context,
        SIGNALS_STREAM,
        "aura.signal.>",
        DiscardPolicy::New,
        Some(dedupe),
    )
    .await?;
    Ok((people, hosts, signals))
}
