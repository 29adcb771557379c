//! The narrator's bounds (seed 000, ADR-0009: a small local model writes the rationale of a
//! novel case): the component that holds the model, the sandbox it runs in, and how much of a
//! run it may take. Numbers only, as the rest of `limits`. Measured figures are in
//! BENCHMARKS.md, "The narrator".

/// Bytes of the narrator's component (.wasm): SmolLM2-135M-Instruct's Q4_1 weights are
/// 98,362,432 bytes in its data segment, its code about 0.3 MB. An agent's bound
/// (`COMPONENT_BYTES_MAX`, 16 MiB) could never hold a model; this one holds this model with a
/// quarter to spare and refuses anything twice its size.
pub const NARRATOR_COMPONENT_BYTES_MAX: u64 = 128 * 1024 * 1024;

/// Bytes of the narrator's precompiled code (.cwasm): its data segment is copied in whole, and
/// code compiled for Pulley or ARM64 is a few times larger than the wasm it comes from.
pub const NARRATOR_COMPILED_BYTES_MAX: u64 = 192 * 1024 * 1024;

/// Bytes the narrator's linear memory may reach: its initial memory holds the weights (1,518
/// pages, 99.5 MB), then it allocates the KV cache (30 layers × 2 × 512 tokens × 192 floats,
/// 23.6 MB), the tokenizer's tables and a step's buffers. Its own engine allocates it on demand
/// (the agents' pool slots are `MEMORY_BYTES_CEILING`, 64 MiB); on ARM64 and Pulley every
/// access is checked against this reservation.
pub const NARRATOR_MEMORY_BYTES_MAX: usize = 192 * 1024 * 1024;

/// Fuel one narration may burn: reading the model and its tokenizer, a prompt of up to
/// `NARRATOR_PROMPT_TOKENS_MAX` tokens and the text. Fuel, not time, ends a narration that runs
/// long, so one ends the same way on every machine; its text is the same bytes everywhere.
pub const NARRATOR_FUEL_MAX: u64 = 400_000_000_000;

/// Wall-clock time one narration may take before the backstop stops it: only a guard against a
/// hang, never what decides a narration (fuel does). Pulley, the slowest engine, runs
/// `NARRATOR_FUEL_MAX` in about 25 minutes on this project's 2-core machine.
pub const NARRATOR_BACKSTOP_MS: u64 = 60 * 60 * 1_000;

/// Bytes of the facts sent to the narrator: one trace's facts, every string of them already cut
/// by the component's own bounds; a trace is a few KiB.
pub const NARRATOR_FACTS_BYTES_MAX: usize = 64 * 1024;

/// Bytes of the narrator's answer read back: a text of at most `NARRATION_TOKENS` tokens
/// (a few hundred bytes) in a small JSON object.
pub const NARRATOR_ANSWER_BYTES_MAX: usize = 16 * 1024;

/// Novel cases one run narrates at most: the queue behind the day is bounded; cases past it
/// keep their template and are counted as not narrated.
pub const NARRATIONS_PER_RUN_MAX: usize = 256;

/// Percent of a narration's content words that may be in none of the trace's facts (the
/// template's rationale among them). A small model's text that restates the case in its own
/// joining words passes; one that tells of something else ("a company's decision to prioritize
/// sleep, which affects millions of people") is discarded and the template stays.
pub const NARRATION_FOREIGN_WORDS_PERCENT_MAX: usize = 20;
