//! The engine's bounds, each with its reason. The engine runs inside the narrator's component,
//! below the host's contract, so its bounds are its own; the host bounds the component (fuel,
//! memory) in `aura-contract`'s limits.

/// Metadata entries in a GGUF file. SmolLM2's has 33; llama.cpp's writers put a few dozen.
pub const GGUF_KV_COUNT_MAX: u64 = 1_024;

/// Tensors in a GGUF file. A llama of 30 layers has 272; 100 layers would have under 1,000.
pub const GGUF_TENSOR_COUNT_MAX: u64 = 4_096;

/// Bytes of one metadata string: a key, a token, a merge, or the chat template (~1 KiB here).
pub const GGUF_STRING_BYTES_MAX: u64 = 1 << 20;

/// Elements of one metadata array: the vocabulary (49,152 tokens) and its merges (48,900).
pub const GGUF_ARRAY_LEN_MAX: u64 = 1 << 20;

/// Dimensions of a tensor, as ggml allows.
pub const GGUF_TENSOR_DIMS_MAX: u32 = 4;

/// Tokens in the context: the prompt and what is generated. The narrator's prompt is a few
/// hundred tokens and its text at most 500 characters; the KV cache is sized by this bound
/// (30 layers × 2 × 512 × 192 floats = 23.6 MB for SmolLM2-135M).
pub const CONTEXT_TOKENS_MAX: usize = 512;

/// Bytes of text given to the tokenizer at once. BPE on one pre-tokenized word is quadratic in
/// its length, so the input is bounded; a prompt is a few KiB.
pub const ENCODE_BYTES_MAX: usize = 16 * 1024;
