//! The bounds of what comes into a live session: one signal, a batch of them, how fast, and
//! how many may wait for the session. Numbers only, as the rest of `limits`.

/// Longest signal or answer `aura live` takes (one JSON line, one HTTP body, one item of a
/// batch): a message at scenario.v1's bounds (a 20,000-character body) fits; the journal's
/// torn-tail repair scans further back than this, so a signal's record can always be repaired.
pub const LIVE_SIGNAL_BYTES_MAX: usize = 64 * 1024;
/// Pushes (one signal or answer, or one batch of them) a live session takes per second, over
/// any second (a bucket that refills at this rate and holds as many): each push is fsynced
/// once before it is acknowledged (a batch once for all its signals), and a person's devices
/// send a few a minute. Past it a sender is told to retry.
pub const LIVE_PUSHES_PER_SECOND_MAX: u32 = 100;
/// Of the rate bound's tokens, those only a push carrying a signal of a `tick_on` kind (a
/// message, an invitation, an answer) may take: a flood of readings leaves them, so an urgent
/// push is not refused while the bucket refills (ten urgent pushes in a tenth of a second
/// would have to come first).
pub const LIVE_URGENT_PUSHES_RESERVED: u32 = 10;
/// Pushes waiting for a live session between its ticks: past it a sender is told to retry
/// rather than queued without bound.
pub const LIVE_INPUT_QUEUE_MAX: usize = 256;
/// Pushes carrying a signal of a `tick_on` kind waiting for the session, in a lane of their
/// own that the session takes first: an urgent message waits behind no backlog.
pub const LIVE_URGENT_QUEUE_MAX: usize = 64;
/// Signals in one batch (`POST /signals` as NDJSON or a JSON array, `Live::push_batch`): a
/// week of a watch's readings every 5 minutes (2,016) fits twice. Each is checked and
/// acknowledged or refused on its own; the batch is journaled with one fsync.
pub const LIVE_BATCH_SIGNALS_MAX: usize = 4_096;
/// Bytes of one batch: 4,096 readings of ~150 bytes are 0.6 MiB. A batch is held whole
/// while the session takes it.
pub const LIVE_BATCH_BYTES_MAX: usize = 4 * 1024 * 1024;
/// Signals of a batch the session takes between two looks at the urgent lane: an urgent push
/// waits behind at most this many checks (about 6 ms in the release build) and one fsync of
/// what was taken before it.
pub const LIVE_BATCH_SLICE_SIGNALS: usize = 256;
/// Batches waiting for the session at once: past it a sender is told to retry, so the
/// batches waiting hold at most 16 MiB.
pub const LIVE_BATCHES_WAITING_MAX: usize = 4;
/// Furthest ahead of the session's clock a signal may be stamped (`at`): a reminder set for
/// tomorrow, not a year of invented future.
pub const LIVE_SIGNAL_AHEAD_MAX_MINUTES: i64 = 24 * 60;
