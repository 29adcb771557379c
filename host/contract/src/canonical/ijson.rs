//! The strict parser behind [`parse_i_json`](super::parse_i_json): one pass of `serde_json`
//! through a visitor that refuses what I-JSON (RFC 7493) forbids and `serde_json` accepts.
//!
//! It owns the visitor (duplicate keys, nesting beyond the bound, each refused at its JSON
//! Pointer) and the lexical scan that finds integer literals outside ±(2^53−1), which reach
//! a visitor as doubles indistinguishable from `1E30`. It must not canonicalize (the parent
//! module does) nor know what the JSON means.

use std::cell::Cell;
use std::fmt;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

use super::{ES6_EXPONENT_FORM_MIN, I_JSON_INTEGER_MAX, JsonError};
use crate::limits::{JSON_DEPTH_MAX, LITERAL_SHOWN_MAX};

/// Parses untrusted JSON text and applies the I-JSON checks, without canonicalizing.
///
/// One pass of `serde_json` builds the value; a custom visitor rejects duplicate keys, integers
/// outside ±(2^53−1) and nesting beyond [`JSON_DEPTH_MAX`], reporting the first problem in
/// document order. Integer literals too long for `u64`/`i64` reach the visitor as doubles,
/// indistinguishable from exponent literals like `1E30`, so when a double beyond the exact range
/// arrives, a lexical scan of the text tells which its literal was (the scan runs only then:
/// nearly every text has no such number, and scanning each one cost ~3 % of a crossing).
///
/// # Errors
///
/// [`JsonError::TooLarge`] (checked before parsing), [`JsonError::Malformed`],
/// [`JsonError::DuplicateKey`], [`JsonError::NumberOutOfRange`], [`JsonError::TooDeep`]; the
/// first problem in document order wins.
pub fn parse_i_json(input: &str, input_bytes_max: usize) -> Result<Value, JsonError> {
    if input.len() > input_bytes_max {
        return Err(JsonError::TooLarge {
            bytes: Some(input.len()),
            bytes_max: input_bytes_max,
        });
    }
    let context = Context {
        input,
        // A noncharacter is either raw (its UTF-8 starts with 0xEF or more) or escaped.
        may_hold_noncharacter: input.bytes().any(|byte| byte >= 0xEF || byte == b'\\'),
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
pub(super) struct UnsafeInteger {
    /// How many number tokens precede it in the text, i.e. how many numbers the visitor has seen
    /// when it reaches this one.
    pub(super) ordinal: usize,
    /// Byte range of the literal in the text.
    pub(super) start: usize,
    pub(super) end: usize,
}

/// Lexical scan for integer literals (no `.`, `e`, `E`) outside ±(2^53−1).
///
/// Outside strings, a JSON text holds digits and `-` only inside number tokens (`true`, `false`,
/// `null`, whitespace and punctuation have none), and a string is skipped by honouring `\`
/// escapes up to its closing quote. So for every prefix that `serde_json` accepts, the n-th number
/// token found here is the n-th number the visitor is handed — which lets the visitor attribute
/// the finding to the right place and build its JSON Pointer. Past a syntax error the two may
/// disagree, but `serde_json` stops there anyway. Linear in the text, no allocation.
pub(super) fn first_unsafe_integer(text: &[u8]) -> Option<UnsafeInteger> {
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
pub(super) fn integer_literal_out_of_range(token: &[u8]) -> bool {
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

/// The first Unicode noncharacter in `text`: U+FDD0..U+FDEF, or a code point whose low 16 bits
/// are FFFE or FFFF (the last two of each of the 17 planes). In UTF-8 every one of them starts
/// with a byte of 0xEF or more, so text without such a byte (nearly all of it) is not decoded.
pub(super) fn first_noncharacter(text: &str) -> Option<u32> {
    if !text.bytes().any(|byte| byte >= 0xEF) {
        return None;
    }
    text.chars().map(u32::from).find(|&code_point| {
        (0xFDD0..=0xFDEF).contains(&code_point) || code_point & 0xFFFE == 0xFFFE
    })
}

/// Shared by every level of one parse.
struct Context<'i> {
    input: &'i str,
    /// Whether any string may hold a noncharacter; when not, strings are not scanned one by one.
    may_hold_noncharacter: bool,
    /// Numbers handed to the visitor so far, in document order.
    numbers_seen: Cell<usize>,
    /// The structured error behind a visitor's abort (serde only carries a message).
    error: Cell<Option<JsonError>>,
}

impl Context<'_> {
    /// Refuses a string (a value or a member name at `path`) that holds a noncharacter.
    fn check_characters<E: de::Error>(&self, text: &str, path: &Path<'_>) -> Result<(), E> {
        if !self.may_hold_noncharacter {
            return Ok(());
        }
        match first_noncharacter(text) {
            None => Ok(()),
            Some(code_point) => Err(self.fail(JsonError::Noncharacter {
                code_point,
                pointer: path.pointer(),
            })),
        }
    }

    /// Records `error` and returns the serde error that aborts the parse.
    fn fail<E: de::Error>(&self, error: JsonError) -> E {
        let message = error.to_string();
        self.error.set(Some(error));
        E::custom(message)
    }

    /// Counts a number, returning its ordinal in document order.
    fn count_number(&self) -> usize {
        let ordinal = self.numbers_seen.get();
        self.numbers_seen.set(ordinal + 1);
        ordinal
    }

    /// Reports the number at `ordinal` if its literal is an integer out of range. Called only for
    /// a double beyond the exact range: any earlier out-of-range integer has already ended the
    /// parse (in `visit_u64`, `visit_i64` or here), so the text's first one is this or a later one.
    fn check_literal<E: de::Error>(&self, ordinal: usize, path: &Path<'_>) -> Result<(), E> {
        match first_unsafe_integer(self.input.as_bytes()) {
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
        self.context.count_number();
        // JSON has no leading zeros, so the value's decimal is its literal.
        if value > I_JSON_INTEGER_MAX {
            return Err(self.integer_out_of_range(value));
        }
        Ok(Value::Number(Number::from(value)))
    }

    fn visit_i64<E: de::Error>(self, value: i64) -> Result<Value, E> {
        self.context.count_number();
        if value.unsigned_abs() > I_JSON_INTEGER_MAX {
            return Err(self.integer_out_of_range(value));
        }
        Ok(Value::Number(Number::from(value)))
    }

    fn visit_f64<E: de::Error>(self, value: f64) -> Result<Value, E> {
        // Float literals, `-0`, and integer literals beyond u64/i64 (told apart by their text).
        let ordinal = self.context.count_number();
        if value.abs() > I_JSON_INTEGER_MAX as f64 {
            self.context.check_literal(ordinal, self.path)?;
        }
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
        self.context.check_characters(value, self.path)?;
        Ok(Value::String(value.to_owned()))
    }

    fn visit_string<E: de::Error>(self, value: String) -> Result<Value, E> {
        self.context.check_characters(&value, self.path)?;
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
                    self.context.check_characters(vacant.key(), &path)?;
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
