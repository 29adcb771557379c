//! Canonical JSON at the sandbox boundary.
//!
//! Agents and the host exchange nothing but JSON text, and every such text that crosses the
//! sandbox boundary passes through this module exactly once. It owns three things:
//!
//! - **Parsing untrusted JSON text** into a [`serde_json::Value`], with a size cap checked
//!   before any byte is parsed ([`JsonError::TooLarge`]) and a nesting bound
//!   ([`JSON_DEPTH_MAX`]); the strict parser itself is in `ijson.rs`.
//! - **I-JSON checks (RFC 7493)** that `serde_json` does not do on its own: duplicate object keys
//!   are rejected instead of silently keeping the last one, and integer literals that an IEEE-754
//!   double cannot hold exactly (outside ±(2^53−1)) are rejected, and so are strings holding a
//!   Unicode noncharacter (U+FDD0..U+FDEF, U+xxFFFE, U+xxFFFF), escaped or raw. Lone
//!   surrogates, `NaN`, `Infinity` and trailing data are already refused by `serde_json` as
//!   malformed JSON.
//! - **The RFC 8785 (JCS) canonical form** of a value, via `aura_jcs` (checked against
//!   `serde_json_canonicalizer`, the reference vectors and 20k ES6 numbers): object
//!   members sorted by UTF-16 code units, minimal string escaping, ECMAScript number formatting,
//!   no whitespace.
//!
//! What it must not do: it validates no schema and knows nothing of envelopes, agents, capabilities
//! or any other meaning of the values it handles. Callers layer those checks on top of the value
//! returned here.

use serde_json::Value;

use crate::limits::JSON_DEPTH_MAX;

mod ijson;
#[cfg(test)]
mod tests;

pub use ijson::parse_i_json;

/// Largest integer magnitude an IEEE-754 double represents exactly together with all its
/// neighbours: 2^53 − 1 (RFC 7493 section 2.2).
const I_JSON_INTEGER_MAX: u64 = (1 << 53) - 1;

/// The smallest magnitude ECMAScript's Number::toString writes with an exponent (`1e+21`);
/// smaller integral values are written out digit by digit.
const ES6_EXPONENT_FORM_MIN: f64 = 1e21;

/// A value parsed from untrusted JSON text that passed the I-JSON checks, with its canonical text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Canonical {
    /// The parsed value.
    pub value: Value,
    /// The RFC 8785 canonical form of `value`.
    pub text: String,
}

/// Why a JSON text (or a host-built value) was refused.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum JsonError {
    /// The text is longer than the caller's byte limit; checked before any parsing.
    #[error("JSON text is {}more than the limit of {bytes_max} bytes", bytes.map_or(String::new(), |b| format!("{b} bytes, ")))]
    TooLarge {
        /// Length of the text in bytes; `None` when it was refused before anyone learnt it
        /// (an agent's answer over wasmtime's bound on what a guest hands the host).
        bytes: Option<usize>,
        /// The caller's limit.
        bytes_max: usize,
    },
    /// The text is not JSON at all: syntax errors, `NaN`/`Infinity` literals, lone surrogate
    /// escapes, trailing data after the value, numbers overflowing a double.
    #[error("malformed JSON at line {line}, column {column}: {message}")]
    Malformed {
        /// 1-based line of the error (0 if unknown).
        line: usize,
        /// 1-based column of the error (0 if unknown).
        column: usize,
        /// What the parser found wrong.
        message: String,
    },
    /// An object names the same member twice (compared after unescaping), which I-JSON forbids.
    #[error("duplicate key {key:?} in the object at JSON pointer {pointer:?}")]
    DuplicateKey {
        /// The repeated member name.
        key: String,
        /// JSON Pointer (RFC 6901) of the object holding the duplicate; `""` is the root.
        pointer: String,
    },
    /// An integer literal outside ±(2^53−1), which a double cannot hold exactly (I-JSON).
    #[error(
        "integer {literal_or_value} at JSON pointer {pointer:?} is outside the exact I-JSON range ±(2^53-1)"
    )]
    NumberOutOfRange {
        /// The literal as written (cut after 64 characters), or the parsed value.
        literal_or_value: String,
        /// JSON Pointer (RFC 6901) of the number; `""` is the root.
        pointer: String,
    },
    /// A string (a member name or a value), escaped or raw, holds a Unicode noncharacter:
    /// U+FDD0..U+FDEF, or the last two code points of any plane (U+FFFE, U+FFFF, U+1FFFE, ...,
    /// U+10FFFF). I-JSON (RFC 7493 §2.1) forbids them as it forbids lone surrogates.
    #[error("the string at JSON pointer {pointer:?} holds the noncharacter U+{code_point:04X}")]
    Noncharacter {
        /// The noncharacter's code point.
        code_point: u32,
        /// JSON Pointer (RFC 6901) of the string, or of the member whose name holds it.
        pointer: String,
    },
    /// Arrays and objects are nested deeper than [`JSON_DEPTH_MAX`].
    #[error("JSON nesting is deeper than {depth_max} levels")]
    TooDeep {
        /// The bound that was exceeded.
        depth_max: usize,
    },
    /// The RFC 8785 serializer refused the value.
    #[error("cannot produce the RFC 8785 canonical form: {message}")]
    Canonicalize {
        /// The serializer's reason.
        message: String,
    },
}

impl JsonError {
    /// A stable `snake_case` name for the kind of error, for logs, metrics and error replies.
    #[must_use]
    pub fn kind(&self) -> &'static str {
        match self {
            JsonError::TooLarge { .. } => "too_large",
            JsonError::Malformed { .. } => "malformed_json",
            JsonError::DuplicateKey { .. } => "duplicate_key",
            JsonError::NumberOutOfRange { .. } => "number_out_of_range",
            JsonError::Noncharacter { .. } => "noncharacter",
            JsonError::TooDeep { .. } => "too_deep",
            JsonError::Canonicalize { .. } => "canonicalize_failed",
        }
    }
}

/// Parses untrusted JSON text, applies the I-JSON checks and returns the value with its RFC 8785
/// canonical text.
///
/// # Errors
///
/// [`JsonError::TooLarge`] if `input` is longer than `input_bytes_max` bytes (before
/// parsing), then whatever [`parse_i_json`] reports, then [`JsonError::Canonicalize`].
pub fn parse_canonical(input: &str, input_bytes_max: usize) -> Result<Canonical, JsonError> {
    let value = parse_i_json(input, input_bytes_max)?;
    // The parser already bounded the depth, so the host-value checks are not repeated here.
    let text = canonicalize(&value)?;
    Ok(Canonical { value, text })
}

/// The RFC 8785 canonical text of a value the host built itself.
///
/// # Errors
///
/// Refuses values nested deeper than [`JSON_DEPTH_MAX`] ([`JsonError::TooDeep`]: what the host
/// sends must parse again on the other side) and reports anything the serializer refuses, such as
/// a non-finite number, as [`JsonError::Canonicalize`]; it never panics. Integral numbers beyond
/// 2^53 are allowed here and printed as the double nearest to them, as RFC 8785 prescribes.
pub fn to_canonical_string(value: &Value) -> Result<String, JsonError> {
    check_host_value(value)?;
    canonicalize(value)
}

fn canonicalize(value: &Value) -> Result<String, JsonError> {
    Ok(aura_jcs::to_canonical_string(value))
}

/// Iterative (stack-safe) walk of a host-built value: depth bound and finite numbers.
fn check_host_value(value: &Value) -> Result<(), JsonError> {
    let mut pending: Vec<(&Value, usize)> = vec![(value, 0)];
    while let Some((value, depth)) = pending.pop() {
        match value {
            Value::Array(items) => {
                if depth + 1 > JSON_DEPTH_MAX {
                    return Err(JsonError::TooDeep {
                        depth_max: JSON_DEPTH_MAX,
                    });
                }
                pending.extend(items.iter().map(|item| (item, depth + 1)));
            }
            Value::Object(members) => {
                if depth + 1 > JSON_DEPTH_MAX {
                    return Err(JsonError::TooDeep {
                        depth_max: JSON_DEPTH_MAX,
                    });
                }
                pending.extend(members.values().map(|member| (member, depth + 1)));
            }
            Value::Number(number) => {
                if number.as_f64().is_none_or(|float| !float.is_finite()) {
                    return Err(JsonError::Canonicalize {
                        message: format!("number {number} is not a finite double"),
                    });
                }
            }
            Value::Null | Value::Bool(_) | Value::String(_) => {}
        }
    }
    Ok(())
}
