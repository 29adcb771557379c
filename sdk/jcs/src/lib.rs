//! RFC 8785 (JCS) canonical JSON for `serde_json::Value`, shared by the host and the guest SDK,
//! and (`ser`, [`write_serialized`]) for any `Serialize` value without a `Value` in between.
//!
//! Why not `serde_json_canonicalizer` directly: it re-serializes and re-parses every object key
//! to sort it, which measured ~13,000-15,000 fuel per key inside an agent (the agents' replies
//! have thousands of keys, so encoding cost more than the tools' own work) and the same work
//! per key on the host's hot path. This writer walks the value once: members sorted by UTF-16
//! code units (compared as iterators, no allocation), strings escaped by serde_json (whose
//! escapes are exactly ECMAScript's JSON.stringify escapes), integers by itoa, doubles by
//! ryu-js (ECMAScript Number::toString). Its output is checked byte for byte against the
//! RFC 8785 reference vectors, 20,000 ES6 number cases and `serde_json_canonicalizer` itself.
//!
//! It owns the canonical form only; it must not parse, validate or bound anything (callers
//! bound depth and size before a value reaches it).

use serde_json::Value;

mod ser;

pub use ser::write_serialized;

/// Largest integer every double neighbour of which is also exact: 2^53.
const EXACT_INTEGER_MAX: u64 = 1 << 53;

/// The canonical text of `value`.
pub fn to_canonical_string(value: &Value) -> String {
    let mut out = Vec::with_capacity(128);
    write_value(value, &mut out);
    // Every byte written is either ASCII punctuation, digits, or serde_json's UTF-8 output.
    String::from_utf8(out).expect("canonical JSON is UTF-8")
}

/// Appends the canonical text of `value` to `out`.
pub fn write_value(value: &Value, out: &mut Vec<u8>) {
    match value {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        Value::Number(number) => match (number.as_i64(), number.as_u64()) {
            (Some(i), _) => write_i64(i, out),
            (_, Some(u)) => write_u64(u, out),
            // serde_json holds only finite doubles.
            _ => write_f64(number.as_f64().unwrap_or(0.0), out),
        },
        Value::String(text) => write_string(text, out),
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_value(item, out);
            }
            out.push(b']');
        }
        Value::Object(members) => {
            // A map iterates its keys in byte order, RFC 8785's order but for keys that differ
            // first at a character past U+DFFF (see `key_order`): checked in one pass, then
            // written as they come; only otherwise are the members sorted.
            let keys = || members.keys();
            if keys()
                .zip(keys().skip(1))
                .all(|(a, b)| key_order(a, b).is_lt())
            {
                write_members(members.iter(), out);
            } else {
                let mut sorted: Vec<(&String, &Value)> = members.iter().collect();
                sorted.sort_unstable_by(|a, b| key_order(a.0, b.0));
                write_members(sorted.into_iter(), out);
            }
        }
    }
}

/// An object's members, in the order given.
fn write_members<'a>(members: impl Iterator<Item = (&'a String, &'a Value)>, out: &mut Vec<u8>) {
    out.push(b'{');
    for (i, (key, member)) in members.enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write_string(key, out);
        out.push(b':');
        write_value(member, out);
    }
    out.push(b'}');
}

/// JSON numbers are IEEE doubles (RFC 8785 §3.2.2.3): an integer a double holds exactly is
/// written by itoa; a larger one as the double it rounds to.
fn write_i64(i: i64, out: &mut Vec<u8>) {
    match i.unsigned_abs() <= EXACT_INTEGER_MAX {
        true => out.extend_from_slice(itoa::Buffer::new().format(i).as_bytes()),
        false => write_f64(i as f64, out),
    }
}

/// [`write_i64`] for an unsigned integer.
fn write_u64(u: u64, out: &mut Vec<u8>) {
    match u <= EXACT_INTEGER_MAX {
        true => out.extend_from_slice(itoa::Buffer::new().format(u).as_bytes()),
        false => write_f64(u as f64, out),
    }
}

/// A finite double as ECMAScript's Number::toString writes it.
fn write_f64(f: f64, out: &mut Vec<u8>) {
    out.extend_from_slice(ryu_js::Buffer::new().format_finite(f).as_bytes());
}

/// RFC 8785's order of member names: by their UTF-16 code units, worked out from the UTF-8
/// bytes without encoding them. UTF-8's byte order is code point order, and so is UTF-16's
/// except that a character past U+FFFF (a surrogate pair, from 0xD800) sorts before
/// U+E000..U+FFFF. The first differing bytes are at the same place in a character of each
/// (the bytes before are equal), so only two lead bytes can fall on either side of that: 0xEE
/// or 0xEF (U+E000..U+FFFF) against 0xF0..0xF4 (past U+FFFF).
fn key_order(a: &str, b: &str) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    let (a, b) = (a.as_bytes(), b.as_bytes());
    match a.iter().zip(b).find(|(x, y)| x != y) {
        None => a.len().cmp(&b.len()),
        Some((0xEE..=0xEF, 0xF0..=0xF4)) => Ordering::Greater,
        Some((0xF0..=0xF4, 0xEE..=0xEF)) => Ordering::Less,
        Some((x, y)) => x.cmp(y),
    }
}

/// A JSON string as ECMAScript's JSON.stringify writes it (RFC 8785 §3.2.2.2): text with
/// nothing to escape (no control character, quote or backslash: most keys and values) as it
/// is, anything else through serde_json, whose escapes are exactly those.
fn write_string(text: &str, out: &mut Vec<u8>) {
    if !needs_escape(text.as_bytes()) {
        out.reserve(text.len() + 2);
        out.push(b'"');
        out.extend_from_slice(text.as_bytes());
        out.push(b'"');
        return;
    }
    // Writing a &str into a Vec cannot fail.
    let _ = serde_json::to_writer(&mut *out, text);
}

/// Whether `bytes` hold a control character, a quote or a backslash: eight bytes at a time (in
/// wasm, which has no vector instructions here, that is 8x fewer steps than byte by byte).
///
/// Per 64-bit word, `(w - 0x01..01 * n) & !w & 0x80..80` is non-zero exactly when some byte of
/// `w` is below `n` (for `n` <= 0x80); a byte equal to `c` is a byte of `w ^ c..c` below 1.
fn needs_escape(bytes: &[u8]) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let below = |word: u64, n: u64| word.wrapping_sub(ONES * n) & !word & HIGHS;
    let mut words = bytes.chunks_exact(8);
    for word in &mut words {
        let word = u64::from_le_bytes([
            word[0], word[1], word[2], word[3], word[4], word[5], word[6], word[7],
        ]);
        let found = below(word, 0x20)
            | below(word ^ (ONES * u64::from(b'"')), 1)
            | below(word ^ (ONES * u64::from(b'\\')), 1);
        if found != 0 {
            return true;
        }
    }
    words
        .remainder()
        .iter()
        .any(|&b| b < 0x20 || b == b'"' || b == b'\\')
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const VECTORS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data/jcs/");

    /// RFC 8785's reference vectors: each input parsed, and its expected canonical text.
    pub(crate) fn reference_vectors() -> Vec<(&'static str, Value, String)> {
        let names = [
            "arrays",
            "french",
            "structures",
            "unicode",
            "values",
            "weird",
        ];
        names
            .into_iter()
            .map(|name| {
                let input = std::fs::read_to_string(format!("{VECTORS}input/{name}.json"));
                let expected = std::fs::read_to_string(format!("{VECTORS}output/{name}.json"));
                (
                    name,
                    serde_json::from_str(&input.unwrap()).unwrap(),
                    expected.unwrap(),
                )
            })
            .collect()
    }

    /// The 20,000 ES6 number cases: each double and its expected text.
    pub(crate) fn es6_numbers() -> Vec<(f64, String)> {
        let cases = std::fs::read_to_string(format!("{VECTORS}es6_numbers_20k.txt")).unwrap();
        let cases: Vec<_> = cases
            .lines()
            .map(|line| {
                let (hex, expected) = line.split_once(',').unwrap();
                let f = f64::from_bits(u64::from_str_radix(hex, 16).unwrap());
                (f, expected.to_owned())
            })
            .collect();
        assert_eq!(cases.len(), 20_000);
        cases
    }

    #[test]
    fn needs_escape_finds_each_byte_to_escape_at_every_place_and_nothing_else() {
        // Every byte value, at each place of a 17-byte text (two words and one byte more),
        // among bytes that never need one: exactly 0x00..0x1F, '"' and '\\' are found.
        for byte in 0..=255u8 {
            let expected = byte < 0x20 || byte == b'"' || byte == b'\\';
            for place in 0..17 {
                let mut text = [b'a'; 17];
                text[place] = byte;
                assert_eq!(needs_escape(&text), expected, "{byte:#04x} at {place}");
            }
        }
        // Bytes next to those the tricks compare against, and UTF-8's high bytes.
        assert!(!needs_escape(" !#[]^\x7f\u{80}é😀".as_bytes()));
        assert!(!needs_escape(b""));
    }

    #[test]
    fn rfc8785_reference_vectors() {
        for (name, value, expected) in reference_vectors() {
            assert_eq!(to_canonical_string(&value), expected, "{name}");
        }
    }

    #[test]
    fn es6_number_serialization() {
        for (f, expected) in es6_numbers() {
            assert_eq!(to_canonical_string(&Value::from(f)), expected, "{f:e}");
        }
    }

    #[test]
    fn member_names_sort_by_utf16_code_units() {
        // Worked out by hand from the code units: U+007F < U+00E9 < U+D800 U+DC00 (U+10000) <
        // U+D83D U+DE00 (the emoji) < U+E000 < U+FFFD < U+FFFF; a prefix sorts first.
        let names = [
            "\u{ffff}",
            "\u{e000}a",
            "\u{10000}",
            "\u{fffd}",
            "\u{e000}",
            "\u{1f600}",
            "\u{e9}",
            "\u{7f}",
            "a",
            "ab",
            "",
        ];
        let mut sorted = names;
        sorted.sort_unstable_by(|a, b| key_order(a, b));
        let expected = [
            "",
            "a",
            "ab",
            "\u{7f}",
            "\u{e9}",
            "\u{10000}",
            "\u{1f600}",
            "\u{e000}",
            "\u{e000}a",
            "\u{fffd}",
            "\u{ffff}",
        ];
        assert_eq!(sorted, expected);
        for a in names {
            for b in names {
                assert_eq!(
                    key_order(a, b),
                    a.encode_utf16().cmp(b.encode_utf16()),
                    "{a:?} {b:?}"
                );
            }
        }
    }

    #[test]
    fn strings_with_nothing_to_escape_are_written_as_they_are() {
        for text in [
            "",
            "plain",
            "ö 😀 \u{2028} \u{7f}",
            "a\"b",
            "a\\b",
            "\u{1f}",
            "\n",
        ] {
            let mut out = Vec::new();
            write_string(text, &mut out);
            assert_eq!(out, serde_json::to_vec(text).unwrap(), "{text:?}");
        }
    }

    #[test]
    fn agrees_with_serde_json_canonicalizer() {
        let values = [
            json!({"b": [1, 2.5, -0.0, 1e21, 1e-7], "a": {"\u{e000}": 1, "\u{1f600}": 2, "z": null}}),
            json!({"ctrl": "\u{0}\u{1f}\u{7f}\"\\/\u{2028}", "ö": true, "é": false, "": []}),
            json!([{"k": 9007199254740991_i64}, {"k": -9007199254740991_i64}, 0.1, 100.0]),
            json!([
                u64::MAX,
                i64::MIN,
                9007199254740993_u64,
                -9007199254740993_i64
            ]),
        ];
        for value in values {
            assert_eq!(
                to_canonical_string(&value),
                serde_json_canonicalizer::to_string(&value).unwrap()
            );
        }
    }
}
