//! aura-llm: the narrator's engine. A small llama-architecture language model (SmolLM2-135M-
//! Instruct, from its GGUF file) run in plain Rust: the file read in place ([`gguf`]), its
//! quantized weights multiplied block by block ([`quant`]), the forward pass and greedy decoding
//! ([`model`]) and the byte-level BPE tokenizer ([`tokenizer`]).
//!
//! It is built for wasm32-wasip2, inside the narrator's component, where the host bounds it with
//! fuel and memory; it is also built natively for its tests. It must not depend on the machine
//! it runs on: no threads, no SIMD chosen at run time, no fused multiply-add, every sum in one
//! fixed order, so one prompt gives the same tokens wherever the component runs. It must not
//! read files or the clock, and must not panic on a malformed file: every shape and offset is
//! checked when the file is read, and errors are [`Error`]s.

pub mod gguf;
mod kernels;
pub mod limits;
pub mod model;
pub mod quant;
pub mod tokenizer;

pub use gguf::Gguf;
pub use model::{Config, Model, Session};
pub use tokenizer::Tokenizer;

/// What can go wrong reading a model or running it.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum Error {
    /// The file is not a GGUF file this engine reads, or its parts disagree.
    #[error("model file: {0}")]
    Format(String),
    /// An input past one of the engine's bounds.
    #[error("{what} of {len} is over the bound of {max}")]
    TooLong {
        what: &'static str,
        len: usize,
        max: usize,
    },
    /// A token id past the vocabulary.
    #[error("token {0} is past the vocabulary")]
    Token(u32),
}
