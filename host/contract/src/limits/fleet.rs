//! The fleet's bounds (many people's assistants over hosts on NATS): people, leases, their
//! journals and deliveries. Numbers only, as the rest of `limits`.

/// Bytes of a tenant or user id: a NATS subject token and a lease key each, with room for a
/// UUID (36) or a slug; a longer id is a client's mistake, not a person.
pub const PERSON_ID_BYTES_MAX: usize = 64;

/// How long a person's lease lasts without renewal before the server removes it (the lease
/// bucket's max age): what a host's death costs its people before another host takes them.
/// Renewed every third of it; a renewal that fails ends the hold at once, so a holder stops
/// well before its lease can run out under it.
pub const FLEET_LEASE_MS: u64 = 3_000;

/// How often a holder renews its lease and a host announces itself and looks for people: a
/// third of the lease, so a renewal held up by one slow step still lands before it runs out.
pub const FLEET_RENEW_EVERY_MS: u64 = FLEET_LEASE_MS / 3;

/// How long a starting host announces itself before it first takes people: two announcing
/// periods, so it sees the hosts started with it or before it (without this the first to
/// start would own everyone until the others announced).
pub const FLEET_STARTUP_GRACE_MS: u64 = 2 * FLEET_RENEW_EVERY_MS;

/// Bytes of one record of a person's journal: a signal is at most LIVE_SIGNAL_BYTES_MAX and a
/// decision's trace is a few KiB; the nats-server's default max_payload is 1 MiB.
pub const FLEET_RECORD_BYTES_MAX: usize = 256 * 1024;

/// Bytes of the headers a journal record or delivered decision carries (its epoch or number, its
/// person of up to 2 × PERSON_ID_BYTES_MAX, the expected last sequence, NATS's own lines): the
/// server counts them in a message's size, so a stream admits a record of FLEET_RECORD_BYTES_MAX
/// with them.
pub const FLEET_RECORD_HEADER_BYTES_MAX: usize = 1024;

/// Records one person's journal may hold (JetStream discards new past it, per subject): a day
/// is ~60 decisions (the signals are the life's), and the journal is compacted at each new
/// day, so a person's holds about a day's; this is the backstop for a person whose
/// compaction keeps failing (or whose inputs ended: the journal keeps that record). One person
/// cannot fill the stream that every other person's journal shares.
pub const FLEET_RECORDS_PER_PERSON_MAX: i64 = 100_000;

/// Times a new holder appends its takeover after reading what landed since: each refusal means
/// the old holder wrote one more record, and it stops within a lease; past this it lets go.
pub const FLEET_TAKEOVER_ATTEMPTS_MAX: u32 = 16;

/// How long a host waits for JetStream to answer one step (an append, a read, a renewal)
/// before it counts the step as failed: a third of the lease, so a host that cannot reach the
/// server stops before its lease can expire under it.
pub const FLEET_STEP_TIMEOUT_MS: u64 = FLEET_LEASE_MS / 3;

/// States the model checker of the fleet's protocol may visit before a check gives up (and
/// fails) rather than take the machine's memory: the largest check (3 hosts) visits ~2.2
/// million.
pub const MODEL_CHECK_STATES_MAX: usize = 5_000_000;

const _: () = assert!(FLEET_STEP_TIMEOUT_MS * 3 <= FLEET_LEASE_MS);

/// Bytes of one person's enrolment (their assistant's setup and seed, in the people bucket): a
/// live.v1 or a scenario's setup without its signals is a few KiB; a 64 KiB one is not a setup.
pub const FLEET_ENROLMENT_BYTES_MAX: usize = 64 * 1024;

/// People one host holds at most, whatever its --capacity says: each is a live session with a
/// journal of its own and an inbox consumer; past this a host is one failure away from
/// overloading whichever hosts take its people over.
pub const FLEET_PEOPLE_PER_HOST_MAX: usize = 10_000;

/// People a host reads from the people bucket in one placement pass: it claims among them in
/// its rendezvous order, so a bucket of millions is not read whole every lease.
pub const FLEET_PEOPLE_SCANNED_MAX: usize = 100_000;

/// Hosts a host reads from the hosts bucket in one placement pass: rendezvous hashing costs a
/// hash per host for each free person it considers, and a fleet past a thousand hosts would
/// place by partition, not by person (BENCHMARKS, "The fleet").
pub const FLEET_HOSTS_SCANNED_MAX: usize = 1_024;

/// Signals a held person's inbox consumer may have fetched and not yet handed to the session:
/// one person's burst waits in JetStream, not in the host's memory.
pub const FLEET_INBOX_PENDING_MAX: i64 = 64;

/// Bytes of a person's head (what their journal's compaction covers: four numbers as JSON,
/// under 200 bytes); the heads bucket refuses a larger value.
pub const FLEET_CHECKPOINT_HEAD_BYTES_MAX: usize = 1024;

/// Times a holder's compaction tries to move a person's head forward: each refusal means
/// another holder moved it meanwhile (once a day a holder); past this the move is given up
/// (the head before stays).
pub const FLEET_HEAD_ATTEMPTS_MAX: u32 = 16;

/// How long a host taking a person over waits for the hold of their life (in the fleet's
/// home) by the host before to end: that host lets it go when it stops for the person, and a
/// host that died holds it at most a lease after its last renewal, which comes at most a
/// renewal after its last renewal of the person's lease; twice the lease covers both.
pub const FLEET_LIFE_OPEN_WAIT_MS: u64 = 2 * FLEET_LEASE_MS;

/// How long a held person's session may take to take one signal (its queue, the ticks due
/// before it, the rate bound's waits) before the host stops for the person: a session that
/// cannot take a signal in a minute is stuck, and the next holder lives the journal again.
pub const FLEET_SIGNAL_TAKE_MS: u64 = 60_000;

/// Longest a host waits before taking again a person whose holds keep failing (the wait
/// doubles from a lease with each failure in a row): a journal that cannot be lived costs a
/// takeover record every five minutes, not every second, and is retried once the cause (a
/// host's version, a full disk) may be gone.
pub const FLEET_RETRY_AFTER_MAX_MS: u64 = 300_000;

/// How long a host sees a person free, whom another host present owns, before it takes them
/// itself: two leases, so an owner with room claims them first (within a second), and a person
/// whose owner is full or cut off is not left without an assistant.
pub const FLEET_ORPHAN_AFTER_MS: u64 = 2 * FLEET_LEASE_MS;

/// How long the signals stream remembers a signal's message id (`Nats-Msg-Id`, JetStream's
/// `duplicate_window`): a sender that lost its answer resends within seconds or minutes, and
/// the stream then stores it once. Past it, the session still answers a repeated signal id
/// (its day's and the day before's) as taken before, so it is applied once either way; the
/// window costs the server an id per signal sent in it.
pub const FLEET_SIGNAL_DEDUPE_MS: u64 = 10 * 60 * 1000;

/// Messages of one of a life's day's subjects a fleet's home reads back (its journal's
/// batches, its traces): a day holds at most DAY_JOURNAL_SIGNALS_MAX signals and a decision a
/// tick; past this the subject is not one a life wrote.
pub const LIFE_DAY_MESSAGES_MAX: usize = 200_000;
