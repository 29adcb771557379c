//! Every bound the host enforces, each a named constant with the reason for its value.
//!
//! It owns numbers only and must not read configuration or the environment: a bound that can
//! be overridden (per agent, per device) is overridden where that happens, and the value here
//! stays the default. The fleet's are in [`fleet`], the narrator's in [`narrator`], a person's
//! days' (scenarios, contexts, what a day carries) in [`days`].

mod days;
mod fleet;
mod live;
mod narrator;
pub use days::*;
pub use fleet::*;
pub use live::*;
pub use narrator::*;

/// Largest string accepted across the boundary in either direction (call envelopes, agent
/// replies, host-call arguments), checked before parsing. The biggest legitimate payload is an
/// args object at its schema bounds (500 events × ~300 bytes ≈ 150 KiB); 1 MiB leaves room and
/// still keeps a hostile guest from making the host parse megabytes.
pub const CROSSING_BYTES_MAX: usize = 1024 * 1024;

/// `host.call` imports one call may make. Agent-to-agent calls are few (depth is bounded at 5
/// and a tool asks another agent once or twice); a guest looping on the import is flooding.
pub const HOST_CALLS_PER_CALL_MAX: u32 = 32;

/// `host.emit` imports one call may make: events are a handful of milestones per call.
pub const EMITS_PER_CALL_MAX: u32 = 64;

/// Largest string an agent may hand to the host's `emit` import. Events are small structured
/// records; anything bigger is a guest trying to flood the trace.
pub const EMIT_BYTES_MAX: usize = 16 * 1024;

/// How much of the offending JSON a quarantine record keeps. Enough to see what was wrong with
/// any real envelope; a 100 MiB payload must not become a 100 MiB log line.
pub const QUARANTINE_OFFENDING_BYTES_MAX: usize = 16 * 1024;

/// Largest component file the host reads. Agents built with the SDK are ~200-400 KiB; 16 MiB
/// is generous and still keeps a stray file from being read whole.
pub const COMPONENT_BYTES_MAX: u64 = 16 * 1024 * 1024;

/// Largest component file of an agent whose catalogue entry allows an implementation that
/// carries its language's interpreter: componentize-py bundles CPython and the part of its
/// standard library the agent imports, so the Python wellness is 18.5 MB (the Rust one 0.5
/// MB). 24 MiB leaves it room to grow and still refuses anything much larger. Only the
/// entries that say so get it (see `AgentSpec::component_bytes_max`); the others keep
/// [`COMPONENT_BYTES_MAX`].
pub const INTERPRETED_COMPONENT_BYTES_MAX: u64 = 24 * 1024 * 1024;

/// Largest compiled component the host maps (a precompiled .cwasm, or a compilation cache
/// entry). Cranelift's code for our agents is 3.7-4.5x their .wasm (bounds, fuel and NaN
/// checks; BENCHMARKS.md, "On a phone"), so 8x [`COMPONENT_BYTES_MAX`] covers the largest
/// component the host reads; the code is mapped, not read into memory. An interpreter's
/// component compiles to about twice its size (the Python wellness: 18.5 MB to 40 MB), well
/// inside the bound.
pub const COMPILED_BYTES_MAX: u64 = 8 * COMPONENT_BYTES_MAX;

/// Largest the compilation cache grows (all entries together) before the least recently used
/// entries are removed. The four agents' code is ~8 MiB per engine setting; 512 MiB holds it
/// for many settings and wasmtime versions side by side, plus a few components of the largest
/// size the host reads, and is still a disk budget nobody needs to manage by hand.
pub const CODE_CACHE_BYTES_MAX: u64 = 512 * 1024 * 1024;

/// Age after which a compilation cache's temporary file is a crashed writer's leftover and
/// removed. Writing an entry takes milliseconds; an hour can only mean the writer died.
pub const CODE_CACHE_TMP_STALE_S: u64 = 3600;

/// Chunk in which the host hashes a file it maps (a precompiled component, a cache entry)
/// through its open handle: small enough to stay in cache, large enough that the syscalls
/// do not show.
pub const HASH_CHUNK_BYTES: usize = 64 * 1024;

/// Largest plugins/manifest.json the host reads.
pub const PLUGIN_MANIFEST_BYTES_MAX: u64 = 64 * 1024;

/// Largest plugin signatures file: a key and one 64-byte signature (128 hex digits) per
/// component, so it grows like the manifest; the manifest's bound fits hundreds of agents.
pub const SIGNATURES_BYTES_MAX: u64 = PLUGIN_MANIFEST_BYTES_MAX;

/// Deadline bounds from toolcall.v1 (ADR-0009): `deadline_ms` is 50..=10000, read out of the
/// schema by the build (`aura_protocol::contract`), so the crossing, the SDK and the schema
/// cannot disagree.
pub use aura_protocol::contract::{DEADLINE_MS_MAX, DEADLINE_MS_MIN};
/// Deadline of a tool whose catalogue entry names none.
pub const DEADLINE_MS_DEFAULT: u64 = 1_000;

/// Deadline of one agent's `tick`: the ADR's p95 tick budget (ADR-0009: median 300 ms, p95
/// 700 ms per agent).
pub const TICK_DEADLINE_MS: u64 = 700;

/// Fuel per millisecond of deadline when the device has no calibration. Wasmtime charges about
/// one unit per wasm operator. This machine's Cranelift code burns ~5.8 million per ms (see
/// BENCHMARKS.md, `aura calibrate`); an interpreter (Pulley, the iOS path) on a phone core runs
/// roughly 10-30× slower. 100,000 per ms under-estimates every device we target, so a deadline
/// never allows more work than the device can do in that time.
pub const FUEL_PER_MS_DEFAULT: u64 = 100_000;

/// Fuel burned between async yields, so one busy agent cannot starve other calls on the same
/// tokio worker: at most ~1 ms of work at [`FUEL_PER_MS_DEFAULT`].
pub const FUEL_YIELD_INTERVAL: u64 = 100_000;

/// Fuel for loading-time calls (`manifest`): small, fixed, independent of any deadline.
pub const MANIFEST_FUEL: u64 = 10_000_000;

/// Period of the epoch ticker that backs up fuel with time.
pub const EPOCH_TICK_MS: u64 = 10;

/// Margin past the deadline before the backstop interrupts a call fuel did not stop (a blocking
/// import, a device slower than its calibration), in served time (`aura_sandbox::served`).
pub const EPOCH_BACKSTOP_MARGIN_MS: u64 = 500;

/// The backstop's margin under a deterministic simulation, where a call's outcome must follow
/// from the seed (a loaded CI once took a 50 ms call past 550 ms of wall time in one run of a
/// seed only): fuel and the simulation's injected interrupts decide; this only ends a hang.
pub const SIMULATED_BACKSTOP_MARGIN_MS: u64 = 60_000;

/// Linear memory one call's instance may grow to, by default: a phone has little memory to
/// spare per call, and every agent works on bounded inputs (the schemas cap every array and
/// string). An agent's catalogue entry may set its own limit, up to [`MEMORY_BYTES_CEILING`].
pub const MEMORY_BYTES_MAX: usize = 32 * 1024 * 1024;

/// The most any agent's catalogue entry may allow. On ARM64 and Pulley it is also the size of
/// each memory slot the pooling allocator reserves (address space, not RAM: [`INSTANCE_SLOTS`]
/// × [`MEMORIES_PER_COMPONENT_MAX`] slots of 64 MiB plus guards, about 5.4 GiB of a phone's
/// 512 GiB (39-bit) address space); x86_64 reserves 4 GiB per slot instead, to compile without
/// bounds checks (`sandbox::MemoryLayout`).
pub const MEMORY_BYTES_CEILING: usize = 64 * 1024 * 1024;

/// Address space reserved per linear memory where code is compiled without bounds checks
/// (x86_64): the whole 32-bit index space, so no index can leave the reservation and the guard
/// pages trap instead (`sandbox::engine::MemoryLayout::Guarded`). Address space, not RAM: the
/// pool's ~330 GiB fit x86_64's 128 TiB.
pub const MEMORY_RESERVATION_GUARDED_BYTES: u64 = 4 << 30;

/// Guard after such a memory: wasmtime's default, which covers the static offsets compilers
/// emit, so `index + offset` needs no check either.
pub const MEMORY_GUARD_GUARDED_BYTES: u64 = 32 << 20;

/// Guard after a bounds-checked memory (ARM64, Pulley), whose reservation is exactly
/// [`MEMORY_BYTES_CEILING`]: accesses are checked, so the guard only catches what slips past;
/// 2 MiB keeps the pool's footprint within a phone's 39-bit address space.
pub const MEMORY_GUARD_BOUNDED_BYTES: u64 = 2 * 1024 * 1024;

/// Bytes of a freed instance's linear memory the pool resets in place instead of returning to
/// the kernel: faulting pages in again cost ~19 µs of the small call, and each `madvise`
/// flushes the other core's TLB. Agents' memories (1 MiB stack plus a small heap) stay whole.
/// Costs RSS: at most this per pool slot used (`just soak` and `just bench-phone` report it).
pub const MEMORY_KEEP_RESIDENT_BYTES: usize = 4 * 1024 * 1024;

/// Bytes of a freed instance's table the pool resets in place: all of it (TABLE_ELEMENTS_MAX
/// function references of 16 bytes on 64-bit), for the same reason.
pub const TABLE_KEEP_RESIDENT_BYTES: usize = TABLE_ELEMENTS_MAX * 16;

/// Table elements one instance may hold (function pointers of the guest's indirect calls).
pub const TABLE_ELEMENTS_MAX: usize = 20_000;

/// Core instances, memories and tables one component instance may create. A Rust wasm32-wasip2
/// component has one main module plus a few canonical-ABI shims.
pub const CORE_INSTANCES_PER_COMPONENT_MAX: u32 = 16;
/// See [`CORE_INSTANCES_PER_COMPONENT_MAX`].
pub const MEMORIES_PER_COMPONENT_MAX: u32 = 2;
/// See [`CORE_INSTANCES_PER_COMPONENT_MAX`].
pub const TABLES_PER_COMPONENT_MAX: u32 = 8;

/// Root calls (host → agent, and ticks) running at once. Two cores on the target devices: 8 in
/// flight keeps both busy across async yields. Each root call may hold up to
/// [`AGENT_CALL_DEPTH_MAX`] instances (its chain of agent-to-agent calls), so the pooling
/// allocator reserves [`INSTANCE_SLOTS`].
pub const CONCURRENT_CALLS_MAX: u32 = 8;

/// Calls a host takes at once through its seam (`Host::dispatch`): those running plus those
/// waiting for a slot (the last of 256 waits about 256 / 8 × 5 ms ≈ 160 ms). Past it a caller
/// is told `busy` at once; each waiting call holds its envelope (a few KiB in practice).
pub const CALLS_IN_FLIGHT_MAX: usize = 256;

/// How long a `busy` refusal tells the caller to wait before sending the call again: about the
/// time the whole queue takes to drain (see [`CALLS_IN_FLIGHT_MAX`]).
pub const BUSY_RETRY_AFTER_MS: u64 = 200;

/// Agents in one call chain (the root call's agent included): seed 002's bound. A call whose
/// chain already holds this many is refused (DepthExceeded). With agent-level cycle detection
/// the catalogue's four agents cannot reach it; it bounds the chain should the catalogue grow.
pub const AGENT_CALL_DEPTH_MAX: usize = 5;

/// Component instances the pool holds: every root call's deepest chain, plus one for loading.
pub const INSTANCE_SLOTS: u32 = CONCURRENT_CALLS_MAX * AGENT_CALL_DEPTH_MAX as u32 + 1;

/// Each read of a guest's virtual clocks advances them by this much. Guests never see the
/// machine's time: the wall clock starts at the call's `ts` (a tick's `now`), the monotonic
/// clock at zero, and both move only when read. A guest measuring elapsed time sees progress
/// (a loop waiting for time ends, or runs out of fuel), yet what it reads depends only on how
/// often it reads, so replays are identical.
pub const GUEST_CLOCK_STEP_NS: u64 = 1_000;

/// Random bytes a guest may ask the host for in one WASI request (`get-random-bytes`); agents
/// use 16. The host builds the answer outside fuel and the epoch: 64 MiB ran ~11 s with a
/// 50 ms deadline. Past this bound the call ends (`host_work_limit`).
pub const GUEST_RANDOM_BYTES_PER_REQUEST_MAX: u64 = 64 * 1024;

/// Fuel charged to a guest per byte its random generators produce for it (taken when the
/// import returns, like a callee's fuel), so host work done for a guest counts against its
/// deadline at least as dearly as it costs, and fuel, not the wall clock, ends a guest that
/// keeps the host generating. wasmtime-wasi draws a `u32` per byte asked: 64 fuel a byte.
/// Measured (BENCHMARKS.md, "Host work for a guest"): 3.05 ns of host time per byte in a
/// release build, where 64 fuel is 6.8 ns of guest work (×2.2 the cost, ×4.5 calibrated).
/// Agents draw none (they read the 16-byte insecure seed).
pub const FUEL_PER_RANDOM_BYTE: u64 = 16;

/// Deadline of an agent's `manifest` export when it is loaded: it answers three strings, and
/// every start waits for it. Its fuel is [`MANIFEST_FUEL`]; this also bounds its wall time
/// (with [`EPOCH_BACKSTOP_MARGIN_MS`]), which was 10.5 s for a manifest that slept.
pub const MANIFEST_DEADLINE_MS: u64 = 100;

/// Guest wasm stack. 512 KiB is ample for the agents' recursion depth (bounded JSON) and far
/// below the host thread's stack.
pub const WASM_STACK_BYTES_MAX: usize = 512 * 1024;

/// Stack of the fiber each async call runs on: the wasm stack plus room for host frames.
pub const ASYNC_STACK_BYTES: usize = WASM_STACK_BYTES_MAX + 512 * 1024;

/// What a guest may write to stdout or stderr during one call. Past it the stream reports
/// itself closed to the guest (a write fails, as on a closed pipe) and nothing more is kept;
/// the call goes on, and what was written is logged. Agents report through their reply and
/// `emit`, not by printing, so this only bounds the host's buffer.
pub const GUEST_OUTPUT_BYTES_MAX: usize = 64 * 1024;

/// Agents the host loads at once (the catalogue has four; room for the agents issue to grow).
pub const AGENTS_MAX: usize = 16;

/// A signal of a kind that ticks at once (scenario.v1 `tick_on`) gets its tick at its time
/// rounded up to this many ms: signals arriving within the same 10 ms share one tick (a burst
/// is one tick, not one each), and a person cannot tell 10 ms from at once.
pub const URGENT_TICK_QUANTUM_MS: i64 = 10;

/// A surface's command (`aura live --on SURFACE=CMD`) is stopped after this long: a notifier
/// that hangs must not hold the decisions behind it for ever.
pub const SINK_COMMAND_TIMEOUT_MS: u64 = 10_000;
/// Attempts a sink makes to deliver one decision before it records a failure and moves on.
pub const SINK_ATTEMPTS_MAX: u32 = 3;
/// Wait before a sink's second attempt; it doubles for each next one.
pub const SINK_RETRY_AFTER_MS: u64 = 250;
/// Decisions waiting for one sink: past it (a sink that stopped taking them), a decision is
/// recorded as not delivered rather than queued without bound, and the ticks go on.
pub const SINK_QUEUE_MAX: usize = 1024;
/// How long a stopping live session waits for its sinks to take what they were handed: what
/// is left is handed over again at the next start, so a stop never waits on a hung notifier
/// for long.
pub const LIVE_STOP_WAIT_MS: u64 = 5_000;
/// Longest a live session sleeps before it looks at the clock again, in seconds: a tick a
/// week away is waited for a day at a time (and a paced clock's arithmetic stays small).
pub const LIVE_WAKE_AFTER_SECONDS_MAX: f64 = 86_400.0;
/// Largest traces file a live session reads back at start, to hand its sinks what they were
/// not handed: a week of ticks every minute, a few decisions each, at under 2 KiB a trace.
pub const LIVE_TRACES_BYTES_MAX: u64 = 256 * 1024 * 1024;
/// Largest deliveries log a live session reads back at start (what its sinks were handed):
/// a record is under 1 KiB and a week of decisions is a few thousand.
pub const DELIVERIES_BYTES_MAX: u64 = 64 * 1024 * 1024;

/// Longest rationale (ADR-0009: ≤ 500 characters; trace.v1's bound), signals a trace carries
/// (trace.v1 `signals` maxItems: a digest names at most this many of its subjects) and the
/// longest of them: read out of trace.v1 by the build (`aura_protocol::contract`).
pub use aura_protocol::contract::{RATIONALE_CHARS_MAX, TRACE_SIGNAL_CHARS_MAX, TRACE_SIGNALS_MAX};

/// News less important than this (0-100) never interrupts: it is recorded and kept for the
/// digest. Below it: an action item with no due time, a budget merely at risk.
pub const INTERRUPT_IMPORTANCE_MIN: u8 = 40;

/// News this important (0-100) is never held back by the budget: a charge that looks like
/// fraud, something the user must do within the hour. Being late for it costs more than one
/// interruption too many.
pub const BUDGET_EXEMPT_IMPORTANCE_MIN: u8 = 85;
/// An action item asked of the user due within this many minutes cannot wait for a digest.
pub const ACTION_DUE_SOON_MINUTES: i64 = 90;
/// A question no answer came to in this long expires (not run, told in the next digest): a
/// day, time to answer tomorrow morning what was asked this morning. It expires earlier when
/// what it asks about starts (an invitation to a meeting that has begun).
pub const QUESTION_EXPIRY_MINUTES: i64 = 24 * 60;
/// A digest of what was kept back is shown at most this often during the day (and always at
/// the end of quiet hours and of the run): a few times a day is what a person reads.
pub const DIGEST_INTERVAL_MINUTES: i64 = 240;

/// The morning briefing is the morning's: due at the end of quiet hours or the first tick of a
/// day, it is given up at noon in the person's day if nothing was kept back to tell by then
/// (what is kept later waits for the next digest, not for a "good morning" in the afternoon).
pub const BRIEFING_UNTIL_HOUR: u8 = 12;

/// Records `aura report` reads from one file: a week of ticks every minute with a few
/// decisions each fits; a page past this would not load in a browser anyway.
pub const REPORT_RECORDS_MAX: usize = 200_000;
/// Longest line `aura report` reads: a trace or quarantine record is bounded well below this
/// (the quarantine keeps at most 16 KiB of offending JSON); a longer line is not aura's.
pub const REPORT_LINE_BYTES_MAX: usize = 256 * 1024;

/// The window the interruption budget counts over: the past hour, the unit people judge
/// "how often did it bother me" in.
pub const INTERRUPTION_WINDOW_MINUTES: i64 = 60;
/// Taps on the watch in any [`INTERRUPTION_WINDOW_MINUTES`]: one every 20 minutes at most on
/// average, so a tap still means something; more news waits for the digest.
pub const WATCH_INTERRUPTIONS_PER_WINDOW_MAX: usize = 3;
/// Cards on the phone in any window: two an hour keeps a day of cards near the 20 a person
/// reads without starting to ignore them (issue 18's target for cards and speech together).
pub const PHONE_CARD_INTERRUPTIONS_PER_WINDOW_MAX: usize = 2;
/// Speech in the earbuds in any window: it stops what the user is doing, so once an hour at
/// most, and only for what is urgent and new.
pub const EARBUD_TTS_INTERRUPTIONS_PER_WINDOW_MAX: usize = 1;
/// Longest summary: a phone card's two lines, or a sentence spoken in the earbuds (trace.v1's
/// `outcome.summary` bound, read out of the schema by the build).
pub use aura_protocol::contract::SUMMARY_CHARS_MAX;
/// Longest line on the watch, in characters: a notification on a 41-45 mm watch face shows
/// about four lines of 20 characters before the wearer has to scroll, and a glance reads no
/// more. A tool's headline longer than this is cut at a word, with an ellipsis.
pub const WATCH_LINE_CHARS_MAX: usize = 80;
/// Longest sentence spoken in the earbuds, in words: at the 150-160 words a minute of
/// synthetic speech, 20 words take about 8 seconds, as long as a person listens to an
/// interruption before losing the thread of what they were doing. Longer is cut at a word.
pub const SPEECH_WORDS_MAX: usize = 20;
/// Most items a digest (or the morning briefing) names, most important first; the rest are
/// counted ("and 3 more"). A card of more than five lines is skimmed, not read.
pub const DIGEST_ITEMS_MAX: usize = 5;
/// Longest value `aura test-agent` shows where an answer differs from its reference: enough
/// for a member or a sentence, one line of a report; an author reads the whole answer with
/// `aura call`.
pub const DIFFERENCE_CHARS_MAX: usize = 200;

/// Longest `error.message` in a result.v1 (its schema's bound, read out of it by the build):
/// enough for any refusal the host explains, and an agent's message cannot make a result large.
pub use aura_protocol::contract::RESULT_MESSAGE_CHARS_MAX;

/// Longest call_id, agent or tool read leniently from a refused envelope for its quarantine
/// record: every valid one is shorter, and a hostile one must not fill the record.
pub const LENIENT_ID_CHARS_MAX: usize = 64;

/// Deepest nesting of arrays and objects accepted, counting the outermost container as depth 1
/// (a bare scalar has depth 0).
///
/// Why 64: the messages that cross the boundary are envelopes holding small records; a dozen
/// levels is already unusual, so 64 is generous headroom for legitimate data. It sits well
/// below `serde_json`'s own recursion limit of 128, so the structured `JsonError::TooDeep`
/// always fires first rather than a generic "recursion limit exceeded" `JsonError::Malformed`.
/// And it bounds the stack used by every recursive walk of a value: the canonical module's
/// visitor, the canonicalizing serializer, `Value`'s drop, and the parsers inside agents,
/// which run on small WebAssembly stacks.
pub const JSON_DEPTH_MAX: usize = 64;

/// Longest integer literal quoted verbatim in `JsonError::NumberOutOfRange`; longer ones are
/// cut (the input may be megabytes of digits and the error ends up in logs).
pub const LITERAL_SHOWN_MAX: usize = 64;

/// Longest tail of a journal log scanned for the last newline when repairing a torn last line
/// after a crash. A record is at most a few times
/// [`QUARANTINE_OFFENDING_BYTES_MAX`] (escaping can grow it up to 6×), so a torn record is
/// always shorter than this.
pub const REPAIR_SCAN_BYTES_MAX: u64 = 8 * QUARANTINE_OFFENDING_BYTES_MAX as u64 + 4096;

/// Most bytes of records a resumed run reads back from past its last checkpoint (the
/// interrupted tick's traces and quarantine records, which it is about to produce again).
/// One tick writes at most a few hundred traces of a few KiB and as many quarantine records
/// of at most [`REPAIR_SCAN_BYTES_MAX`]; 64 MiB is far above that, and more means the log was
/// appended to by something other than this run: refused, never read into memory.
pub const RESUME_TAIL_BYTES_MAX: u64 = 64 * 1024 * 1024;

/// Largest run checkpoint (`<data-dir>/run.json`): the state of a run between ticks, which
/// holds the scenario's world so far (the scenario's signals, [`SCENARIO_BYTES_MAX`] at most,
/// plus the events confirmed calls added) and what the user was told and asked. Twice the
/// scenario's bound; a run whose state outgrows it stops with a typed error rather than write
/// a checkpoint it could not read back.
pub const CHECKPOINT_BYTES_MAX: u64 = 2 * SCENARIO_BYTES_MAX as u64;

/// Least fuel per ms a calibration may store: a rate below the built-in default would mean the
/// measurement went wrong (a stalled machine), and would starve every call.
pub const FUEL_PER_MS_MIN: u64 = FUEL_PER_MS_DEFAULT;

/// Largest calibration file read (it is a few hundred bytes).
pub const CALIBRATION_FILE_BYTES_MAX: u64 = 4096;

/// Largest envelope `aura dispatch` reads: one byte past the crossing's cap reports the size.
pub const DISPATCH_INPUT_BYTES_MAX: u64 = CROSSING_BYTES_MAX as u64 + 1;

/// Schema violations of one instance a refusal lists (on the error path only): a planner fixes
/// a handful of fields per retry; past 16 the list is noise, and a refusal stays small.
pub const SCHEMA_VIOLATIONS_MAX: usize = 16;

/// Field issues one recovery lists. One violation can name many members (every unknown member
/// of an object is its own issue); 32 covers [`SCHEMA_VIOLATIONS_MAX`] violations with room,
/// and the rest is counted, not listed.
pub const RECOVERY_ISSUES_MAX: usize = 32;

/// Characters of a recovery issue's text taken from the call or its schema (a field pointer
/// names members the caller chose). Real pointers and patterns are far shorter.
pub const RECOVERY_TEXT_CHARS_MAX: usize = 256;

/// Allowed values an `invalid_enum_value` issue lists. The catalogue's largest enum has fewer;
/// a longer list would be a schema to read, not a hint.
pub const RECOVERY_ALLOWED_MAX: usize = 32;

/// Largest MCP message (one JSON-RPC line on stdio, one HTTP request body): a `tools/call`
/// whose args are at the crossing's cap, escaped (up to 2× for a string-heavy call), plus the
/// JSON-RPC frame and `_meta`. The crossing still refuses args past its own cap.
pub const MCP_MESSAGE_BYTES_MAX: usize = 2 * CROSSING_BYTES_MAX + 64 * 1024;

/// How long the MCP server waits for the user to answer a confirmation (and how long an
/// `input_required` question stays answerable). A person reads one sentence and taps yes or
/// no; two minutes is patient. Past it nothing runs: the call is answered `finish`.
pub const CONFIRMATION_TIMEOUT_MS: u64 = 120_000;

/// Confirmations asked in band (2026-07-28 `input_required`) and not yet answered. Each holds
/// 32 bytes and a handle; the bound stops a client that asks without ever answering from
/// growing the table. A person answers a few at a time.
pub const PENDING_CONFIRMATIONS_MAX: usize = 1024;

/// How long an MCP client may cache `tools/list` (2026-07-28 `ttlMs`). The list is locked in
/// the binary and never changes while a server runs; an hour lets a client notice an upgraded
/// server the same day.
pub const TOOLS_LIST_TTL_MS: u64 = 3_600_000;

// Relations between the bounds, checked at compile time.
// serde_json refuses the 128th level of nesting; ours must be reached first.
const _: () = assert!(JSON_DEPTH_MAX < 127);
const _: () =
    assert!(DEADLINE_MS_MIN <= DEADLINE_MS_DEFAULT && DEADLINE_MS_DEFAULT <= DEADLINE_MS_MAX);
const _: () = assert!(QUARANTINE_OFFENDING_BYTES_MAX <= CROSSING_BYTES_MAX);
const _: () = assert!(DEADLINE_MS_MIN <= TICK_DEADLINE_MS && TICK_DEADLINE_MS <= DEADLINE_MS_MAX);
const _: () = assert!(EMIT_BYTES_MAX <= CROSSING_BYTES_MAX);
const _: () = assert!(ASYNC_STACK_BYTES > WASM_STACK_BYTES_MAX);
const _: () = assert!(MEMORY_BYTES_MAX <= MEMORY_BYTES_CEILING);
const _: () = assert!(EPOCH_TICK_MS < EPOCH_BACKSTOP_MARGIN_MS);
const _: () =
    assert!(DEADLINE_MS_MIN <= MANIFEST_DEADLINE_MS && MANIFEST_DEADLINE_MS <= DEADLINE_MS_MAX);
const _: () = assert!(GUEST_RANDOM_BYTES_PER_REQUEST_MAX <= CROSSING_BYTES_MAX as u64);
// One entry of the largest size fits the compilation cache.
const _: () = assert!(COMPILED_BYTES_MAX <= CODE_CACHE_BYTES_MAX);
// The largest fuel budget must not overflow u64.
const _: () = assert!(DEADLINE_MS_MAX.checked_mul(FUEL_PER_MS_DEFAULT).is_some());

/// Largest message body on the wire (a call, a tick context, an answer): the crossing's own
/// bound, so nothing the crossing would refuse by size is ever sent, and nothing bigger is
/// read. A nats-server's `max_payload` must be at least this plus the headers (its default,
/// 1 MiB, is not: the tests' servers set 2 MiB).
pub const WIRE_BODY_BYTES_MAX: usize = CROSSING_BYTES_MAX;

/// Time past a call's deadline and backstop margin a client waits for its answer before it
/// tries again: the hop (sub-millisecond on a LAN, BENCHMARKS.md) and a worker's queue. A
/// worker stops every call by deadline + [`EPOCH_BACKSTOP_MARGIN_MS`], so waiting longer only
/// delays noticing a dead worker.
pub const WIRE_REPLY_GRACE_MS: u64 = 250;

/// Attempts per request (same call_id). A nats-server restart (1–2 s here) costs every
/// attempt until workers resubscribe; 8 wait 6.3 s of backoff. 4 were measured too few
/// (`wire::ten_thousand_calls_survive_a_killed_worker_and_a_restarted_server`).
pub const WIRE_ATTEMPTS_MAX: u32 = 8;

/// Wait before the second attempt; doubled for each further one.
pub const WIRE_BACKOFF_MS_BASE: u64 = 100;

/// Longest wait between attempts: a server restart takes about a second here.
pub const WIRE_BACKOFF_MS_MAX: u64 = 1_600;

/// Answers a worker keeps for a client's retry (same subject, frame and body) instead of
/// running it again: ~1.6 s of traffic at ~10,000 calls/s; the bytes bound below caps memory.
/// An evicted one runs again: the agents are pure functions of the call.
pub const WIRE_ANSWERS_KEPT_MAX: usize = 16_384;

/// Bytes of kept answers (see [`WIRE_ANSWERS_KEPT_MAX`]): all 16,384 at 4 KiB.
pub const WIRE_ANSWERS_KEPT_BYTES_MAX: usize = 64 * 1024 * 1024;

/// Requests a worker takes off the wire at once: the host's in-flight bound. Past it the
/// worker stops reading, and the server holds (then, past its own bound, drops) what comes;
/// the client's retries cover a drop.
pub const WIRE_REQUESTS_IN_FLIGHT_MAX: usize = CALLS_IN_FLIGHT_MAX;

/// How long a client listens for workers answering discovery (`$SRV.INFO.aura`).
pub const WIRE_DISCOVERY_MS: u64 = 500;

/// Workers a client reads in discovery: more answers than this are not read.
pub const WIRE_WORKERS_MAX: usize = 256;

/// Bytes read of a NATS credentials or TLS file (a `.creds` is about 1 KiB, a PEM chain a few
/// certificates): a file past this is not one, refused before it is read whole.
pub const NATS_CREDENTIALS_BYTES_MAX: u64 = 64 * 1024;

/// How long a front's proof of the user's yes lasts: past every retry of the call (8 attempts
/// at the largest deadline and their backoff: about 92 s); an older proof is a replay.
pub const CONFIRMATION_TTL_MS: u64 = 120_000;

/// How far apart the clocks of a front and a worker may be when a proof's expiry is checked.
pub const CONFIRMATION_CLOCK_SKEW_MS: u64 = 5_000;

/// Proofs a worker remembers as taken, each until it expires (to refuse a replay); past it a
/// new confirmed call is refused, to be sent again shortly, rather than the record grow.
pub const CONFIRMATIONS_SEEN_MAX: usize = 65_536;

/// Bytes read of an HTTP front's PEM certificate chain or key (a few KiB each): a file past
/// this is not one, refused before it is read whole.
pub const HTTP_TLS_FILE_BYTES_MAX: u64 = 256 * 1024;

/// How long a client has to finish its TLS handshake with an HTTP front (each in a task of
/// its own: one that never finishes holds only its connection, this long).
pub const HTTP_TLS_HANDSHAKE_MS: u64 = 10_000;

/// TLS connections accepted and not yet taken by the HTTP server (in their handshake, or done
/// and waiting): past it, no more are accepted until one is (the kernel's backlog holds them).
pub const HTTP_TLS_PENDING_MAX: usize = 128;

/// Bytes of a bearer token (a JWT access token is under 2 KiB).
pub const AUTH_TOKEN_BYTES_MAX: usize = 8 * 1024;

/// Bytes of an issuer's JWKS (a few keys of a few hundred bytes), and keys read of it.
pub const AUTH_JWKS_BYTES_MAX: usize = 256 * 1024;
/// See [`AUTH_JWKS_BYTES_MAX`].
pub const AUTH_JWKS_KEYS_MAX: usize = 64;

/// How long fetching the JWKS may take (a front starts without waiting longer).
pub const AUTH_JWKS_FETCH_MS: u64 = 5_000;

/// Least time between two readings of the JWKS for tokens naming an unknown key (a stream
/// of forged key ids costs one fetch a minute).
pub const AUTH_JWKS_REFRESH_MIN_MS: u64 = 60_000;

/// Age past which the JWKS is read again anyway: a key the issuer withdrew stops working then.
pub const AUTH_JWKS_MAX_AGE_MS: u64 = 3_600_000;
/// Clock difference allowed between the issuer and this server for `exp` and `nbf`.
pub const AUTH_CLOCK_SKEW_S: u64 = 30;

/// Verified tokens a front remembers until they expire (a signature checked once a token, not
/// once a request: ~120 µs of a 1 ms round trip, BENCHMARKS.md); 32-byte digests, not tokens.
pub const AUTH_TOKENS_REMEMBERED_MAX: usize = 4_096;

/// Answers from untrusted workers one request takes before it fails: each is quarantined and
/// the request sent again (one impostor subscription beside one honest worker gets this many
/// in a row once in 2^32; many impostor subscriptions can still starve a client).
pub const WIRE_UNTRUSTED_ANSWERS_MAX: u32 = 32;

/// Refusals of one NATS connection kept to be named (a permissions violation): the first is
/// what a front reports; more only repeat it.
pub const WIRE_REFUSALS_KEPT_MAX: usize = 16;

/// How long a front waits after a flush for the server's refusals of what it sent to arrive
/// (the client hands them over in a task of its own): paid when a worker starts, and when a
/// client found no worker, to say why.
pub const WIRE_REFUSAL_SETTLE_MS: u64 = 100;
/// How long a connect to the nats-server may take before a front gives up on it.
pub const WIRE_CONNECT_TIMEOUT_MS: u64 = 5_000;

/// Events queued for publishing: a burst of calls queues up to this many, then the oldest
/// waiting is kept and the newest are counted as dropped (and logged), never blocking a call.
pub const EVENTS_QUEUED_MAX: usize = 16_384;

/// Attempts to publish one event before it is counted as failed: eight wait about 6.3 s of
/// backoff (several nats-server restarts), each up to [`EVENTS_ACK_TIMEOUT_MS`] besides.
pub const EVENTS_PUBLISH_ATTEMPTS_MAX: u32 = 8;

/// How long a publisher waits for the stream to acknowledge an event before sending it again
/// (same id): a stored event is acknowledged in well under a millisecond on a LAN; JetStream's
/// default of 5 s would hold a worker's answers that long per lost ack while a server restarts.
pub const EVENTS_ACK_TIMEOUT_MS: u64 = 1_000;

/// Events sent whose acks are not awaited yet (one round trip per batch, not per event); past
/// it the publisher awaits them, so a server that stops acknowledging holds a bounded number.
pub const EVENTS_ACKS_PENDING_MAX: usize = 256;

/// Events the JetStream stream keeps (seed 003's bound), the oldest discarded first.
pub const EVENTS_STREAM_MESSAGES_MAX: i64 = 1_000_000;
/// How long the event stream keeps an event: a week of a household's history.
pub const EVENTS_STREAM_AGE_S: u64 = 7 * 24 * 3600;

/// Window in which the stream drops a second event with the same message_id (a call retried on
/// another worker): the longest a request's retries can take.
pub const EVENTS_DUPLICATE_WINDOW_S: u64 = 120;

/// Finished spans waiting for the OTLP exporter (the SDK's default): a slow or gone collector
/// costs at most this many spans (dropped, counted), never a call's time. A day is ~2,000.
pub const OTLP_SPANS_QUEUED_MAX: usize = 2_048;

/// How long one OTLP export request may take before it is abandoned (its batch dropped): a
/// collector on a LAN answers in milliseconds; the SDK's 10 s default would hold a
/// process's exit that long per batch when the collector is gone.
pub const OTLP_EXPORT_TIMEOUT_MS: u64 = 3_000;
