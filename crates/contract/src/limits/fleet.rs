//! The fleet's bounds (many people's assistants over hosts on NATS): people, leases, their
//! journals and deliveries. Numbers only, as the rest of `limits`.

/// Bytes of a tenant or user id: a NATS subject token and a lease key each, with room for a
/// UUID (36) or a slug; a longer id is a client's mistake, not a person.
pub const PERSON_ID_BYTES_MAX: usize = 64;

/// How long a person's lease lasts without renewal before the server removes it (the lease
/// bucket's max age): what a host's death costs its people before another host takes them.
/// Renewed every third of it, so two renewals may be lost before a holder stops.
pub const FLEET_LEASE_MS: u64 = 3_000;

/// Bytes of one record of a person's journal: a signal is at most LIVE_SIGNAL_BYTES_MAX and a
/// decision's trace is a few KiB; the nats-server's default max_payload is 1 MiB.
pub const FLEET_RECORD_BYTES_MAX: usize = 256 * 1024;

/// Records one person's journal may hold (JetStream discards new past it, per subject): a day
/// is ~300 signals and ~60 decisions; a checkpoint lets the older ones go. One person cannot
/// fill the stream that every other person's journal shares.
pub const FLEET_RECORDS_PER_PERSON_MAX: i64 = 100_000;

/// Times a new holder appends its takeover after reading what landed since: each refusal means
/// the old holder wrote one more record, and it stops within a lease; past this it lets go.
pub const FLEET_TAKEOVER_ATTEMPTS_MAX: u32 = 16;

/// How long a host waits for JetStream to answer one step (an append, a read, a renewal)
/// before it counts the step as failed: a third of the lease, so a host that cannot reach the
/// server stops before its lease can expire under it.
pub const FLEET_STEP_TIMEOUT_MS: u64 = FLEET_LEASE_MS / 3;

/// States the model checker of the fleet's protocol may visit before a check gives up (and
/// fails) rather than take the machine's memory: the checks visit ~0.5 million.
pub const MODEL_CHECK_STATES_MAX: usize = 5_000_000;

const _: () = assert!(FLEET_STEP_TIMEOUT_MS * 3 <= FLEET_LEASE_MS);
