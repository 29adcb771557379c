//! Canonical JSON at the sandbox boundary.
//!
//! Agents and the host exchange nothing but JSON text, and every such text that crosses the
//! sandbox boundary passes through this module exactly once. It owns three things:
//!
//! - **Parsing untrusted JSON text** into a [`serde_json::Value`], with a size cap checked before
//!   any byte is parsed ([`JsonError::TooLarge`]) and a nesting bound ([`JSON_DEPTH_MAX`]).
//! - **I-JSON checks (RFC 7493)** that `serde_json` does not do on its own: duplicate object keys
//!   are rejected instead of silently keeping the last one, and integer literals that an IEEE-754
//!   double cannot hold exactly (outside ±(2^53−1)) are rejected. Lone surrogates, `NaN`,
//!   `Infinity` and trailing data are already refused by `serde_json` as malformed JSON.
//! - **The RFC 8785 (JCS) canonical form** of a value, via `aura_jcs` (checked against
//!   `serde_json_canonicalizer`, the reference vectors and 20k ES6 numbers): object
//!   members sorted by UTF-16 code units, minimal string escaping, ECMAScript number formatting,
//!   no whitespace.
//!
//! What it must not do: it validates no schema and knows nothing of envelopes, agents, capabilities
//! or any other meaning of the values it handles. Callers layer those checks on top of the value
//! returned here.

use std::cell::Cell;
use std::fmt;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

/// Deepest nesting of arrays and objects accepted, counting the outermost container as depth 1
/// (a bare scalar has depth 0).
///
/// Why 64: the messages that cross the boundary are envelopes holding small records; a dozen
/// levels is already unusual, so 64 is generous headroom for legitimate data. It sits well below
/// `serde_json`'s own recursion limit of 128, so this structured [`JsonError::TooDeep`] always
/// fires first rather than a generic "recursion limit exceeded" [`JsonError::Malformed`]. And it
/// bounds the stack used by every recursive walk of a value — this module's visitor, the
/// canonicalizing serializer, `Value`'s drop, and the parsers inside agents, which run on small
/// WebAssembly stacks.
pub const JSON_DEPTH_MAX: usize = 64;

// serde_json refuses the 128th level of nesting; ours must be reached first.
const _: () = assert!(JSON_DEPTH_MAX < 127);

/// Largest integer magnitude an IEEE-754 double represents exactly together with all its
/// neighbours: 2^53 − 1 (RFC 7493 section 2.2).
const I_JSON_INTEGER_MAX: u64 = (1 << 53) - 1;

/// The smallest magnitude ECMAScript's Number::toString writes with an exponent (`1e+21`);
/// smaller integral values are written out digit by digit.
const ES6_EXPONENT_FORM_MIN: f64 = 1e21;

/// Longest integer literal quoted verbatim in [`JsonError::NumberOutOfRange`]; longer ones are cut
/// (the input may be megabytes of digits and the error ends up in logs).
const LITERAL_SHOWN_MAX: usize = 64;

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
    #[error("JSON text is {bytes} bytes, more than the limit of {bytes_max} bytes")]
    TooLarge {
        /// Length of the text in bytes.
        bytes: usize,
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

/// Parses untrusted JSON text and applies the I-JSON checks, without canonicalizing.
///
/// One pass of `serde_json` builds the value; a custom visitor rejects duplicate keys, integers
/// outside ±(2^53−1) and nesting beyond [`JSON_DEPTH_MAX`], reporting the first problem in
/// document order. Integer literals too long for `u64`/`i64` reach the visitor as doubles,
/// indistinguishable from exponent literals like `1E30`, so a cheap lexical pre-scan of the text
/// finds them first and the visitor reports them at their place.
///
/// # Errors
///
/// [`JsonError::TooLarge`] (checked before parsing), [`JsonError::Malformed`],
/// [`JsonError::DuplicateKey`], [`JsonError::NumberOutOfRange`], [`JsonError::TooDeep`]; the
/// first problem in document order wins.
pub fn parse_i_json(input: &str, input_bytes_max: usize) -> Result<Value, JsonError> {
    if input.len() > input_bytes_max {
        return Err(JsonError::TooLarge {
            bytes: input.len(),
            bytes_max: input_bytes_max,
        });
    }
    let context = Context {
        input,
        unsafe_integer: first_unsafe_integer(input.as_bytes()),
        numbers_seen: Cell::new(0),
        error: Cell::new(None),
    };
    let root = Path {
        parent: None,
        segment: Segment::Root,
    };
    let mut deserializer = serde_json::Deserializer::from_str(input);
    let parsed = ValueSeed {
        context: &context,
        path: &root,
        depth: 0,
    }
    .deserialize(&mut deserializer)
    .and_then(|value| deserializer.end().map(|()| value));
    match parsed {
        Ok(value) => Ok(value),
        // The visitor stores its structured error before aborting the parse through serde.
        Err(error) => Err(context.error.take().unwrap_or_else(|| malformed(&error))),
    }
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

fn malformed(error: &serde_json::Error) -> JsonError {
    let (line, column) = (error.line(), error.column());
    let mut message = error.to_string();
    // serde_json appends the position to its message; it has fields of its own here.
    let position = format!(" at line {line} column {column}");
    if message.ends_with(&position) {
        message.truncate(message.len() - position.len());
    }
    JsonError::Malformed {
        line,
        column,
        message,
    }
}

/// The first integer literal outside ±(2^53−1) in the text, found lexically.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct UnsafeInteger {
    /// How many number tokens precede it in the text, i.e. how many numbers the visitor has seen
    /// when it reaches this one.
    ordinal: usize,
    /// Byte range of the literal in the text.
    start: usize,
    end: usize,
}

/// Lexical pre-scan for integer literals (no `.`, `e`, `E`) outside ±(2^53−1).
///
/// Outside strings, a JSON text holds digits and `-` only inside number tokens (`true`, `false`,
/// `null`, whitespace and punctuation have none), and a string is skipped by honouring `\`
/// escapes up to its closing quote. So for every prefix that `serde_json` accepts, the n-th number
/// token found here is the n-th number the visitor is handed — which lets the visitor attribute
/// the finding to the right place and build its JSON Pointer. Past a syntax error the two may
/// disagree, but `serde_json` stops there anyway. Linear in the text, no allocation.
fn first_unsafe_integer(text: &[u8]) -> Option<UnsafeInteger> {
    let mut ordinal = 0;
    let mut at = 0;
    while let Some(&byte) = text.get(at) {
        match byte {
            b'"' => {
                at += 1;
                while let Some(&byte) = text.get(at) {
                    match byte {
                        b'\\' => at += 2,
                        b'"' => {
                            at += 1;
                            break;
                        }
                        _ => at += 1,
                    }
                }
            }
            b'-' | b'0'..=b'9' => {
                let start = at;
                while let Some(b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E') = text.get(at) {
                    at += 1;
                }
                let token = &text[start..at];
                if integer_literal_out_of_range(token) {
                    return Some(UnsafeInteger {
                        ordinal,
                        start,
                        end: at,
                    });
                }
                ordinal += 1;
            }
            _ => at += 1,
        }
    }
    None
}

/// Whether a number token is an integer literal whose magnitude exceeds 2^53−1.
fn integer_literal_out_of_range(token: &[u8]) -> bool {
    if token.iter().any(|byte| matches!(byte, b'.' | b'e' | b'E')) {
        return false; // a fraction or exponent: a float literal, rounding is expected
    }
    let magnitude = token.strip_prefix(b"-").unwrap_or(token);
    if !magnitude.iter().all(u8::is_ascii_digit) {
        return false; // not a number serde_json accepts; it reports the syntax error
    }
    let first_significant = magnitude
        .iter()
        .position(|&digit| digit != b'0')
        .unwrap_or(magnitude.len());
    let significant = &magnitude[first_significant..];
    // 2^53−1 = 9007199254740991 has 16 digits, so 16 digits always fit a u64.
    if significant.len() > 16 {
        return true;
    }
    let value = significant
        .iter()
        .fold(0u64, |value, digit| value * 10 + u64::from(digit - b'0'));
    value > I_JSON_INTEGER_MAX
}

/// Shared by every level of one parse.
struct Context<'i> {
    input: &'i str,
    unsafe_integer: Option<UnsafeInteger>,
    /// Numbers handed to the visitor so far, in document order.
    numbers_seen: Cell<usize>,
    /// The structured error behind a visitor's abort (serde only carries a message).
    error: Cell<Option<JsonError>>,
}

impl Context<'_> {
    /// Records `error` and returns the serde error that aborts the parse.
    fn fail<E: de::Error>(&self, error: JsonError) -> E {
        let message = error.to_string();
        self.error.set(Some(error));
        E::custom(message)
    }

    /// Counts a number and reports it if the pre-scan found it to be an out-of-range integer.
    fn check_number<E: de::Error>(&self, path: &Path<'_>) -> Result<(), E> {
        let ordinal = self.numbers_seen.get();
        self.numbers_seen.set(ordinal + 1);
        match self.unsafe_integer {
            Some(found) if found.ordinal == ordinal => {
                let literal = self.input.get(found.start..found.end).unwrap_or("");
                let literal_or_value = if literal.len() > LITERAL_SHOWN_MAX {
                    // Literals are ASCII, so any byte index is a char boundary.
                    format!("{}...", &literal[..LITERAL_SHOWN_MAX])
                } else {
                    literal.to_owned()
                };
                Err(self.fail(JsonError::NumberOutOfRange {
                    literal_or_value,
                    pointer: path.pointer(),
                }))
            }
            _ => Ok(()),
        }
    }
}

/// Where the value being parsed sits, as a stack-allocated linked list from the value up to the
/// root; turned into a JSON Pointer string only when an error needs one.
struct Path<'a> {
    parent: Option<&'a Path<'a>>,
    segment: Segment<'a>,
}

#[derive(Clone, Copy)]
enum Segment<'a> {
    Root,
    Index(usize),
    Key(&'a str),
}

impl Path<'_> {
    /// The RFC 6901 JSON Pointer of this place (`""` for the root).
    fn pointer(&self) -> String {
        let mut segments = Vec::new();
        let mut path = Some(self);
        while let Some(step) = path {
            segments.push(step.segment);
            path = step.parent;
        }
        let mut pointer = String::new();
        for segment in segments.iter().rev() {
            match segment {
                Segment::Root => {}
                Segment::Index(index) => {
                    pointer.push('/');
                    pointer.push_str(&index.to_string());
                }
                Segment::Key(key) => {
                    pointer.push('/');
                    for character in key.chars() {
                        match character {
                            '~' => pointer.push_str("~0"),
                            '/' => pointer.push_str("~1"),
                            other => pointer.push(other),
                        }
                    }
                }
            }
        }
        pointer
    }
}

/// Deserializes one JSON value at `path`, nested inside `depth` containers.
struct ValueSeed<'c, 'i, 'p> {
    context: &'c Context<'i>,
    path: &'p Path<'p>,
    depth: usize,
}

impl<'de> DeserializeSeed<'de> for ValueSeed<'_, '_, '_> {
    type Value = Value;

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl ValueSeed<'_, '_, '_> {
    /// Depth of a container opening here, or the abort if it is too deep.
    fn enter<E: de::Error>(&self) -> Result<usize, E> {
        let depth = self.depth + 1;
        if depth > JSON_DEPTH_MAX {
            return Err(self.context.fail(JsonError::TooDeep {
                depth_max: JSON_DEPTH_MAX,
            }));
        }
        Ok(depth)
    }

    fn integer_out_of_range<E: de::Error>(&self, value: impl fmt::Display) -> E {
        self.context.fail(JsonError::NumberOutOfRange {
            literal_or_value: value.to_string(),
            pointer: self.path.pointer(),
        })
    }
}

impl<'de> Visitor<'de> for ValueSeed<'_, '_, '_> {
    type Value = Value;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("a JSON value")
    }

    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_bool<E: de::Error>(self, value: bool) -> Result<Value, E> {
        Ok(Value::Bool(value))
    }

    fn visit_u64<E: de::Error>(self, value: u64) -> Result<Value, E> {
        self.context.check_number(self.path)?;
        // Redundant with the pre-scan for literals; kept so the rule holds on its own here.
        if value > I_JSON_INTEGER_MAX {
            return Err(self.integer_out_of_range(value));
        }
        Ok(Value::Number(Number::from(value)))
    }

    fn visit_i64<E: de::Error>(self, value: i64) -> Result<Value, E> {
        self.context.check_number(self.path)?;
        if value.unsigned_abs() > I_JSON_INTEGER_MAX {
            return Err(self.integer_out_of_range(value));
        }
        Ok(Value::Number(Number::from(value)))
    }

    fn visit_f64<E: de::Error>(self, value: f64) -> Result<Value, E> {
        // Float literals, `-0`, and integer literals beyond u64/i64 (caught by the pre-scan).
        self.context.check_number(self.path)?;
        // A float literal with an integral value in the exact range (`1e1`, `10.0`, `-0`) is
        // the integer its canonical text spells ("10", "0"): hold it as that integer, so the
        // value the schemas check is the value an agent parses from the canonical text. (Found
        // by the crossing_envelope fuzz target: `1e1` parsed as 10.0 but its canonical text
        // "10" parses as 10.)
        if value.fract() == 0.0 && value.abs() <= I_JSON_INTEGER_MAX as f64 {
            return Ok(Value::Number(Number::from(value as i64)));
        }
        // Past 2^53 every double is integral, and below 1e21 ECMAScript writes it out in full:
        // `1e16` canonicalizes to "10000000000000000", an integer literal this parser refuses.
        // Refuse the value now, so whatever the crossing accepts, its canonical text is
        // accepted again on the next crossing.
        if value.abs() > I_JSON_INTEGER_MAX as f64 && value.abs() < ES6_EXPONENT_FORM_MIN {
            return Err(self.integer_out_of_range(value));
        }
        Number::from_f64(value)
            .map(Value::Number)
            .ok_or_else(|| E::custom("number is not a finite double"))
    }

    fn visit_str<E: de::Error>(self, value: &str) -> Result<Value, E> {
        Ok(Value::String(value.to_owned()))
    }

    fn visit_string<E: de::Error>(self, value: String) -> Result<Value, E> {
        Ok(Value::String(value))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let depth = self.enter()?;
        let mut items = Vec::new();
        loop {
            let path = Path {
                parent: Some(self.path),
                segment: Segment::Index(items.len()),
            };
            let seed = ValueSeed {
                context: self.context,
                path: &path,
                depth,
            };
            match seq.next_element_seed(seed)? {
                Some(item) => items.push(item),
                None => break,
            }
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let depth = self.enter()?;
        let mut members = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            match members.entry(key) {
                serde_json::map::Entry::Occupied(occupied) => {
                    return Err(self.context.fail(JsonError::DuplicateKey {
                        key: occupied.key().clone(),
                        pointer: self.path.pointer(),
                    }));
                }
                serde_json::map::Entry::Vacant(vacant) => {
                    let path = Path {
                        parent: Some(self.path),
                        segment: Segment::Key(vacant.key()),
                    };
                    let member = map.next_value_seed(ValueSeed {
                        context: self.context,
                        path: &path,
                        depth,
                    })?;
                    vacant.insert(member);
                }
            }
        }
        Ok(Value::Object(members))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const JCS_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/data/jcs/");
    const JCS_VECTORS: [&str; 6] = [
        "arrays",
        "french",
        "structures",
        "unicode",
        "values",
        "weird",
    ];
    const BIG: usize = 1 << 20;

    fn err(input: &str) -> JsonError {
        parse_canonical(input, BIG).expect_err(input)
    }

    fn canon(input: &str) -> String {
        parse_canonical(input, BIG)
            .unwrap_or_else(|error| panic!("{input}: {error}"))
            .text
    }

    fn out_of_range(literal: &str, pointer: &str) -> JsonError {
        JsonError::NumberOutOfRange {
            literal_or_value: literal.to_owned(),
            pointer: pointer.to_owned(),
        }
    }

    fn nested_arrays(depth: usize) -> String {
        format!("{}{}", "[".repeat(depth), "]".repeat(depth))
    }

    fn nested_objects(depth: usize) -> String {
        format!("{}1{}", r#"{"a":"#.repeat(depth), "}".repeat(depth))
    }

    #[test]
    fn rfc8785_reference_vectors() {
        let mut on_disk: Vec<String> = std::fs::read_dir(format!("{JCS_DIR}input"))
            .expect("input dir")
            .map(|entry| entry.expect("dir entry").file_name().into_string().unwrap())
            .collect();
        on_disk.sort();
        let listed: Vec<String> = JCS_VECTORS
            .iter()
            .map(|name| format!("{name}.json"))
            .collect();
        assert_eq!(on_disk, listed, "every reference vector is tested");

        for name in JCS_VECTORS {
            let input = std::fs::read_to_string(format!("{JCS_DIR}input/{name}.json")).unwrap();
            let expected = std::fs::read(format!("{JCS_DIR}output/{name}.json")).unwrap();
            // The reference outputs are the exact canonical bytes: no trailing newline.
            assert_ne!(
                expected.last(),
                Some(&b'\n'),
                "{name}: output has a newline"
            );
            let hex = std::fs::read_to_string(format!("{JCS_DIR}outhex/{name}.txt")).unwrap();
            let from_hex: Vec<u8> = hex
                .split_ascii_whitespace()
                .map(|pair| u8::from_str_radix(pair, 16).unwrap())
                .collect();
            assert_eq!(expected, from_hex, "{name}: output and outhex agree");

            let canonical = parse_canonical(&input, BIG).unwrap();
            assert_eq!(canonical.text.as_bytes(), expected.as_slice(), "{name}");
            // Canonical text is a fixed point.
            assert_eq!(canon(&canonical.text), canonical.text, "{name}");
            assert_eq!(
                to_canonical_string(&canonical.value).unwrap(),
                canonical.text
            );
        }
    }

    #[test]
    fn es6_number_serialization_20k() {
        let lines = std::fs::read_to_string(format!("{JCS_DIR}es6_numbers_20k.txt")).unwrap();
        let mut count = 0;
        for line in lines.lines() {
            let (hex, expected) = line.split_once(',').expect(line);
            let float = f64::from_bits(u64::from_str_radix(hex, 16).expect(line));
            let value = Value::Number(Number::from_f64(float).expect(line));
            assert_eq!(to_canonical_string(&value).unwrap(), expected, "{line}");
            count += 1;
        }
        assert_eq!(count, 20_000);
    }

    #[test]
    fn negative_zero_is_zero() {
        assert_eq!(to_canonical_string(&json!(-0.0)).unwrap(), "0");
        assert_eq!(canon("-0"), "0");
        assert_eq!(canon("-0.0"), "0");
    }

    #[test]
    fn too_large_boundary_and_checked_before_parsing() {
        let text = r#"{"a":1}"#; // 7 bytes
        assert!(parse_canonical(text, 7).is_ok());
        assert_eq!(
            parse_canonical(text, 6),
            Err(JsonError::TooLarge {
                bytes: 7,
                bytes_max: 6
            })
        );
        // Malformed, but too large wins: nothing is parsed.
        assert_eq!(
            parse_i_json("{{{{", 3),
            Err(JsonError::TooLarge {
                bytes: 4,
                bytes_max: 3
            })
        );
        // Bytes, not characters.
        assert!(matches!(
            parse_canonical("\"é\"", 3),
            Err(JsonError::TooLarge { bytes: 4, .. })
        ));
    }

    #[test]
    fn malformed_inputs() {
        for input in [
            "NaN",
            "Infinity",
            "-Infinity",
            r#"{"a":1,}"#,
            "[1,]",
            r#""\ud800""#,
            r#""\udc00""#,
            r#"{"\ud800":1}"#,
            "{} x",
            "{}{}",
            "",
            "   ",
            "01",
            "1e400",
            "'a'",
            "\u{feff}{}",
            "\"tab\there\"",
            "[1 2]",
            "{\"a\" 1}",
            "\"unterminated",
        ] {
            let error = err(input);
            assert!(
                matches!(error, JsonError::Malformed { .. }),
                "{input:?}: {error:?}"
            );
            assert_eq!(error.kind(), "malformed_json");
        }
        match err("{} x") {
            JsonError::Malformed {
                line,
                column,
                message,
            } => {
                assert_eq!((line, column), (1, 4));
                assert_eq!(message, "trailing characters");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn duplicate_keys() {
        assert_eq!(
            err(r#"{"a":[{"b":1,"b":2}]}"#),
            JsonError::DuplicateKey {
                key: "b".into(),
                pointer: "/a/0".into()
            }
        );
        assert_eq!(
            err(r#"{"x":1,"x":1}"#),
            JsonError::DuplicateKey {
                key: "x".into(),
                pointer: String::new()
            }
        );
        // Compared after unescaping.
        assert_eq!(
            err(r#"{"a":1,"\u0061":2}"#),
            JsonError::DuplicateKey {
                key: "a".into(),
                pointer: String::new()
            }
        );
        // RFC 6901 escaping of the pointer.
        assert_eq!(
            err(r#"{"a/b":{"m~n":[0,{"k":1,"k":2}]}}"#),
            JsonError::DuplicateKey {
                key: "k".into(),
                pointer: "/a~1b/m~0n/1".into()
            }
        );
        // Same key in different objects is fine.
        assert_eq!(
            canon(r#"{"b":{"a":1},"a":{"a":2}}"#),
            r#"{"a":{"a":2},"b":{"a":1}}"#
        );
        assert_eq!(err(r#"{"a":1,"a":2}"#).kind(), "duplicate_key");
    }

    #[test]
    fn integer_range() {
        assert_eq!(
            err("123456789012345678901234567890"),
            out_of_range("123456789012345678901234567890", "")
        );
        assert_eq!(canon("9007199254740991"), "9007199254740991");
        assert_eq!(canon("-9007199254740991"), "-9007199254740991");
        assert_eq!(
            err("9007199254740992"),
            out_of_range("9007199254740992", "")
        );
        assert_eq!(
            err("-9007199254740992"),
            out_of_range("-9007199254740992", "")
        );
        // Float literals are doubles by nature and stay legal, unless their canonical text
        // would be an integer literal beyond the exact range (below 1e21 it is written out).
        assert_eq!(canon("1E30"), "1e+30");
        assert_eq!(canon("1.0e2"), "100");
        assert!(matches!(
            parse_canonical("9007199254740993.0", 64),
            Err(JsonError::NumberOutOfRange { .. })
        ));
    }

    #[test]
    fn integer_range_every_path_into_the_visitor() {
        // u64 path, i64 path, beyond-i64-but-within-u64 negative (f64 path), beyond u64 (f64).
        for literal in [
            "18446744073709551615",
            "-9223372036854775808",
            "-9223372036854775809",
            "-18446744073709551616",
            "18446744073709551616",
            "100000000000000000000000000000000000000000000000000000000000000000000000000000000",
        ] {
            let shown = if literal.len() > LITERAL_SHOWN_MAX {
                format!("{}...", &literal[..LITERAL_SHOWN_MAX])
            } else {
                literal.to_owned()
            };
            assert_eq!(
                err(&format!(r#"{{"n":[{literal}]}}"#)),
                out_of_range(&shown, "/n/0"),
                "{literal}"
            );
        }
    }

    #[test]
    fn integer_range_pointer_follows_document_order() {
        // Digits, '-' and escaped quotes inside strings and keys must not shift the count.
        let input = r#"{"12-3":[1.5,"123456789012345678901234567890","\"99999999999999999999",-2,1E30,{"k\\":123456789012345678901234567890}],"z":true}"#;
        assert_eq!(
            err(input),
            out_of_range("123456789012345678901234567890", "/12-3/5/k\\")
        );
        // A later duplicate key does not mask an earlier number, and vice versa.
        assert_eq!(
            err(r#"[9007199254740992,{"a":1,"a":2}]"#),
            out_of_range("9007199254740992", "/0")
        );
        assert_eq!(
            err(r#"[{"a":1,"a":2},9007199254740992]"#),
            JsonError::DuplicateKey {
                key: "a".into(),
                pointer: "/0".into()
            }
        );
        assert_eq!(err("[1e999999999999999999999]").kind(), "malformed_json");
        assert_eq!(err("[9007199254740992]").kind(), "number_out_of_range");
    }

    #[test]
    fn pre_scan_is_lexical() {
        assert_eq!(first_unsafe_integer(br#"["9007199254740992"]"#), None);
        assert_eq!(first_unsafe_integer(b"[1e30, 4.50, -0, 0]"), None);
        assert_eq!(
            first_unsafe_integer(br#"[1, "\\", 2, 90071992547409920]"#),
            Some(UnsafeInteger {
                ordinal: 2,
                start: 13,
                end: 30
            })
        );
        // Unterminated string or dangling escape: no panic.
        assert_eq!(first_unsafe_integer(br#""\"#), None);
        assert_eq!(first_unsafe_integer(b"-"), None);
        assert!(integer_literal_out_of_range(b"0000009007199254740992"));
        assert!(!integer_literal_out_of_range(b"0000009007199254740991"));
    }

    #[test]
    fn depth_boundary() {
        assert!(parse_canonical(&nested_arrays(JSON_DEPTH_MAX), BIG).is_ok());
        assert!(parse_canonical(&nested_objects(JSON_DEPTH_MAX), BIG).is_ok());
        let too_deep = JsonError::TooDeep {
            depth_max: JSON_DEPTH_MAX,
        };
        assert_eq!(err(&nested_arrays(JSON_DEPTH_MAX + 1)), too_deep);
        assert_eq!(err(&nested_objects(JSON_DEPTH_MAX + 1)), too_deep);
        // Ours fires well before serde_json's own limit of 128 would say "malformed".
        assert_eq!(err(&nested_arrays(1000)), too_deep);
        assert_eq!(err(&"[".repeat(100_000)), too_deep);
        assert_eq!(too_deep.kind(), "too_deep");
    }

    #[test]
    fn host_values() {
        assert_eq!(
            to_canonical_string(&json!({"b": [1, 2.5, "x"], "a": null, "é": true})).unwrap(),
            r#"{"a":null,"b":[1,2.5,"x"],"é":true}"#
        );
        // Host-built integers beyond 2^53 are printed as the nearest double.
        assert_eq!(
            to_canonical_string(&json!(u64::MAX)).unwrap(),
            "18446744073709552000"
        );
        let mut deep = json!(1);
        for _ in 0..JSON_DEPTH_MAX {
            deep = json!([deep]);
        }
        assert!(to_canonical_string(&deep).is_ok());
        deep = json!({ "a": deep });
        assert_eq!(
            to_canonical_string(&deep),
            Err(JsonError::TooDeep {
                depth_max: JSON_DEPTH_MAX
            })
        );
    }

    #[test]
    fn parse_i_json_does_not_canonicalize() {
        let value = parse_i_json(r#"{ "b" : 1.50, "a" : [ ] }"#, BIG).unwrap();
        assert_eq!(value, json!({"a": [], "b": 1.5}));
        assert_eq!(
            parse_i_json(r#"{"a":1,"a":1}"#, BIG).unwrap_err().kind(),
            "duplicate_key"
        );
    }

    #[test]
    fn every_kind_is_stable_and_displayed() {
        let errors = [
            (
                JsonError::TooLarge {
                    bytes: 2,
                    bytes_max: 1,
                },
                "too_large",
            ),
            (err("x"), "malformed_json"),
            (err(r#"{"a":1,"a":2}"#), "duplicate_key"),
            (err("9007199254740992"), "number_out_of_range"),
            (err(&nested_arrays(JSON_DEPTH_MAX + 1)), "too_deep"),
            (
                JsonError::Canonicalize {
                    message: "x".into(),
                },
                "canonicalize_failed",
            ),
        ];
        for (error, kind) in errors {
            assert_eq!(error.kind(), kind);
            assert!(!error.to_string().is_empty());
        }
        assert_eq!(
            err(r#"{"a":[{"b":1,"b":2}]}"#).to_string(),
            r#"duplicate key "b" in the object at JSON pointer "/a/0""#
        );
    }

    #[test]
    fn no_panic_on_odd_inputs() {
        for input in [
            "\"\\",
            "\"\\u",
            "\"\\u12",
            "[",
            "{",
            "{\"a\"",
            "{\"a\":",
            "-",
            "--1",
            "1-",
            "+1",
            ".5",
            "1.",
            "1e",
            "1e+",
            "\u{0}",
            "\"\u{0}\"",
            "[-]",
            "[\"\\\"]",
            "nul",
            "tru",
        ] {
            assert!(parse_canonical(input, BIG).is_err(), "{input:?}");
        }
    }

    #[test]
    fn integral_floats_are_held_as_the_integers_their_canonical_text_spells() {
        for (text, canonical) in [
            ("1e1", "10"),
            ("10.0", "10"),
            ("-0", "0"),
            ("-0.0", "0"),
            ("-2.50e1", "-25"),
        ] {
            let parsed = parse_canonical(text, 64).unwrap();
            assert_eq!(parsed.text, canonical, "{text}");
            assert_eq!(
                parsed.value,
                parse_canonical(canonical, 64).unwrap().value,
                "{text}"
            );
            assert!(parsed.value.is_i64(), "{text}");
        }
        // Fractions stay doubles; so do magnitudes written with an exponent in canonical form.
        assert!(parse_canonical("2.5", 64).unwrap().value.is_f64());
        assert_eq!(parse_canonical("1E21", 64).unwrap().text, "1e+21");
        assert_eq!(parse_canonical("1E30", 64).unwrap().text, "1e+30");
    }

    #[test]
    fn doubles_whose_canonical_text_is_an_unsafe_integer_are_refused() {
        // 1e16 canonicalizes to "10000000000000000", which no crossing may accept: refused.
        for text in [
            "1e16",
            "9007199254740992.0",
            "-1.5e20",
            "9.999999999999999e20",
        ] {
            assert!(
                matches!(
                    parse_canonical(text, 64),
                    Err(JsonError::NumberOutOfRange { .. })
                ),
                "{text}"
            );
        }
        // Whatever is accepted re-parses to the same text.
        for text in ["9007199254740991.0", "1e21", "-1e300", "5e-324", "0.1"] {
            let once = parse_canonical(text, 64).unwrap();
            assert_eq!(
                parse_canonical(&once.text, 64).unwrap().text,
                once.text,
                "{text}"
            );
        }
    }
}
