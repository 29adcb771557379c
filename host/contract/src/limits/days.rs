//! The bounds of a person's days: a scenario (a recorded day), the context each tick gives the
//! agents, and what one day carries into the next, so that a day's start costs the same on
//! day 300 as on day 2. Numbers only, as the rest of `limits`.

/// Largest scenario file: a week of signals at the schema's bounds fits with room to spare,
/// and the whole file is held in memory.
pub const SCENARIO_BYTES_MAX: usize = 32 * 1024 * 1024;
/// Messages in a tick's context: the latest ones (comms reads only the recent ones anyway).
pub const CONTEXT_MESSAGES_MAX: usize = 200;
/// Transactions in a tick's context, and carried into the next day: the latest ones, as many
/// as the finance agent's tick reads (its `TICK_TRANSACTIONS_MAX`, the most recent 300). More
/// were parsed by every agent at every tick and written into every checkpoint without being
/// read: at 2000, a year and a half into the generated life (3.3 a day), a day cost 4.7 CPU s
/// instead of 2.5 (BENCHMARKS.md, "A life").
pub const CONTEXT_TRANSACTIONS_MAX: usize = 300;
/// Sleep sessions in a tick's context: the latest ones (wellness keeps at most 100).
pub const CONTEXT_SLEEP_SESSIONS_MAX: usize = 100;
/// Longest scenario: seven days (at one tick a minute, 10,080 ticks).
pub const SCENARIO_DAYS_MAX: i64 = 7;
/// Signals in one scenario (scenario.v1's `signals` maxItems): what a busy week brings, held
/// in memory whole.
pub const SCENARIO_SIGNALS_MAX: usize = 10_000;

/// Signals a live session's day holds before it closes early: the signal that fills it
/// fixes its closing tick at once (the session's clock then), and the next part of the same
/// local day goes on from just after it. A watch every 5 minutes and a busy inbox bring about
/// 600 a day, so only a flood (a phone's backlog) closes a day before midnight, and a day's
/// record stays a scenario `aura run` holds in memory.
pub const DAY_SIGNALS_MAX: usize = 5_000;

/// Signals one day's journal holds at most: those that come while its closing tick is due (a
/// batch that filled it goes on in the next part, so few) come on top of
/// [`DAY_SIGNALS_MAX`]; past this they are refused as busy until that tick ran. A day's record
/// is a scenario: at most [`SCENARIO_SIGNALS_MAX`].
pub const DAY_JOURNAL_SIGNALS_MAX: usize = SCENARIO_SIGNALS_MAX;

/// Of [`DAY_JOURNAL_SIGNALS_MAX`], the room only signals of a `tick_on` kind (a message, an
/// invitation, an answer) may take: readings that fill a day's journal never keep the
/// urgent mail out.
pub const DAY_JOURNAL_URGENT_RESERVED: usize = 1_000;

/// Closed days a live session keeps by default (`aura live --keep-days`): a month of the
/// person's dates to look at or replay (a date a flood split into parts counts once); older
/// ones are deleted whole at a rollover.
pub const LIVE_KEEP_DAYS_DEFAULT: usize = 31;

/// Bytes of a life's `life.json` (which day is open, where it stands): a few hundred; more is
/// not one a session wrote.
pub const LIFE_STATE_BYTES_MAX: usize = 64 * 1024;

/// Sources whose read position a life keeps (a mailbox, a calendar, a statement folder, a
/// watch export each): a person has a handful; with [`READ_POSITION_BYTES_MAX`] and
/// [`SOURCE_NAME_BYTES_MAX`] each, all of them fit in [`LIFE_STATE_BYTES_MAX`] twice over.
pub const LIFE_SOURCES_MAX: usize = 32;

/// Bytes of one source's read position: an IMAP UIDVALIDITY and UID are ~25, a CalDAV sync
/// token a URL of a few hundred, a file's sha256 64.
pub const READ_POSITION_BYTES_MAX: usize = 1024;

/// Bytes of a source's name, as a setup names it.
pub const SOURCE_NAME_BYTES_MAX: usize = 128;

/// Closed days a session may be asked to keep: ten years of a person's days, each a few MiB
/// at most.
pub const LIVE_KEEP_DAYS_MAX: usize = 3_660;

/// Calendar events a day carries from the day before (scenario.v1's `initial.events`
/// maxItems): the ones not over, ending soonest. A person's coming weeks hold far fewer.
pub const CARRIED_EVENTS_MAX: usize = 500;

/// Unanswered invitations a day carries (scenario.v1's `initial.invitations` maxItems): those
/// whose meeting is not over, ending soonest. One ignored a week for years stays far below.
pub const CARRIED_INVITATIONS_MAX: usize = 500;

/// How long a person's assistant remembers what it showed, asked, held, was answered and told
/// (days before the last tick of the day that hands its memory on): a month, past the longest
/// the same item comes back on its own (a monthly bill, a weekly meeting's invitations, the
/// 13 days a generated invitation stays unanswered). What is older is forgotten at the day's
/// end, so a day's memory is a month's, however many days were lived; a subject told before
/// that is news again if it comes back, as a state past its retell window is.
pub const MEMORY_HORIZON_DAYS: i64 = 31;

/// Keys of each kind of memory a day carries (scenario.v1's `initial.memory` `shown`, `held`,
/// `answered` and `told` maxProperties), the newest kept: a month of a busy person's cards is
/// about 6,000 (the generated life: about 200 a day, two keys each). A flood that shows more
/// within the horizon forgets its oldest first.
pub const CARRIED_MEMORY_KEYS_MAX: usize = 20_000;
