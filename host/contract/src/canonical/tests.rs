//! The canonical module's tests: RFC 8785 reference vectors, 20k ES6 numbers, and the
//! I-JSON refusals at their bounds.

use super::ijson::{UnsafeInteger, first_unsafe_integer, integer_literal_out_of_range};
use super::*;
use crate::limits::{JSON_DEPTH_MAX, LITERAL_SHOWN_MAX};
use serde_json::{Number, json};

const JCS_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data/jcs/");
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
            bytes: Some(7),
            bytes_max: 6
        })
    );
    // Malformed, but too large wins: nothing is parsed.
    assert_eq!(
        parse_i_json("{{{{", 3),
        Err(JsonError::TooLarge {
            bytes: Some(4),
            bytes_max: 3
        })
    );
    // Bytes, not characters.
    assert!(matches!(
        parse_canonical("\"é\"", 3),
        Err(JsonError::TooLarge { bytes: Some(4), .. })
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
fn the_literal_scan_is_lexical() {
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

/// Every class of noncharacter (RFC 7493 §2.1), at the edges of each range, escaped and raw, in
/// values and in member names, with the pointer of the string that holds it; the code points
/// next to them pass.
#[test]
fn noncharacters_are_refused_escaped_or_raw() {
    let noncharacters = [
        0xFDD0, 0xFDEF, // the block of 32 in the Arabic Presentation Forms-A range
        0xFFFE, 0xFFFF, // the last two of the Basic Multilingual Plane
        0x1FFFE, 0x1FFFF, // ... of plane 1
        0x10FFFE, 0x10FFFF, // ... of plane 16, the last two code points of Unicode
    ];
    for code_point in noncharacters {
        let raw = char::from_u32(code_point).unwrap();
        let escaped = match code_point {
            c if c <= 0xFFFF => format!("\\u{c:04x}"),
            c => {
                // UTF-16 surrogate pair: 0x10000 is subtracted, the high ten bits go to
                // 0xD800, the low ten to 0xDC00.
                let v = c - 0x10000;
                format!(
                    "\\u{:04x}\\u{:04x}",
                    0xD800 + (v >> 10),
                    0xDC00 + (v & 0x3FF)
                )
            }
        };
        let expected = |pointer: &str| JsonError::Noncharacter {
            code_point,
            pointer: pointer.to_owned(),
        };
        for text in [format!("x{raw}"), format!("x{escaped}")] {
            let value = format!(r#"{{"a":[1,"{text}"]}}"#);
            assert_eq!(err(&value), expected("/a/1"), "{value}");
            let key = format!(r#"{{"ok":{{"{text}":1}}}}"#);
            assert_eq!(err(&key), expected(&format!("/ok/x{raw}")), "{key}");
        }
    }
    // Their neighbours are characters like any other.
    for code_point in [0xFDCF, 0xFDF0, 0xFFFD, 0x1FFFD, 0x10000, 0x10FFFD] {
        let raw = char::from_u32(code_point).unwrap();
        let text = format!(r#"["{raw}"]"#);
        assert_eq!(canon(&text), text, "U+{code_point:04X}");
    }
    assert_eq!(
        err(r#"{"k":"\ufdd0"}"#).to_string(),
        r#"the string at JSON pointer "/k" holds the noncharacter U+FDD0"#
    );
}

#[test]
fn the_noncharacter_scan_decodes_only_what_may_hold_one() {
    use super::ijson::first_noncharacter;
    assert_eq!(first_noncharacter("plain ascii, and é, and €"), None);
    assert_eq!(first_noncharacter("emoji 😀 only"), None);
    assert_eq!(first_noncharacter("a\u{FDD5}b\u{FFFF}"), Some(0xFDD5));
    assert_eq!(first_noncharacter(""), None);
}

#[test]
fn every_kind_is_stable_and_displayed() {
    let errors = [
        (
            JsonError::TooLarge {
                bytes: Some(2),
                bytes_max: 1,
            },
            "too_large",
        ),
        (err("x"), "malformed_json"),
        (err(r#"{"a":1,"a":2}"#), "duplicate_key"),
        (err("9007199254740992"), "number_out_of_range"),
        (err(r#""\uffff""#), "noncharacter"),
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
