//! `write_serialized` against `to_value` + `write_value`, RFC 8785's vectors and the ES6
//! numbers, and what it leaves to serde_json.

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;
use serde_json::Value;
use serde_json::value::RawValue;

use super::write_serialized;
use crate::write_value;

/// What `write_serialized` writes, and what `to_value` then `write_value` write (the
/// reference), both as text or as the error's message.
fn both<T: Serialize + ?Sized>(value: &T) -> (Result<String, String>, Result<String, String>) {
    let mut direct = b"[".to_vec();
    let direct = write_serialized(value, &mut direct)
        .map(|()| String::from_utf8(direct).unwrap())
        .map_err(|e| e.to_string());
    let reference = serde_json::to_value(value)
        .map(|value| {
            let mut out = b"[".to_vec();
            write_value(&value, &mut out);
            String::from_utf8(out).unwrap()
        })
        .map_err(|e| e.to_string());
    (direct, reference)
}

fn agrees<T: Serialize + ?Sized>(value: &T) -> String {
    let (direct, reference) = both(value);
    assert_eq!(direct, reference);
    direct.unwrap_or_default()
}

#[test]
fn rfc8785_reference_vectors_through_serialize() {
    for (name, value, expected) in crate::tests::reference_vectors() {
        let mut out = Vec::new();
        write_serialized(&value, &mut out).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), expected, "{name}");
    }
}

#[test]
fn es6_numbers_through_serialize() {
    for (f, expected) in crate::tests::es6_numbers() {
        let mut out = Vec::new();
        write_serialized(&f, &mut out).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), expected, "{f:e}");
    }
}

#[derive(Serialize)]
struct Unit;

#[derive(Serialize)]
struct Newtype(u8);

#[derive(Serialize)]
struct Pair(i32, &'static str);

#[derive(Serialize)]
enum Shape {
    Dot,
    Circle(f64),
    Line(i8, i8),
    Box { z: u16, a: Option<bool> },
}

#[derive(Serialize)]
struct Event {
    // Declared out of canonical order, with a UTF-16 order that differs from UTF-8's.
    title: Option<String>,
    id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    location: Option<String>,
    #[serde(rename = "\u{e000}")]
    private_use: u8,
    #[serde(rename = "\u{1f600}")]
    emoji: u8,
    shapes: Vec<Shape>,
    unit: Unit,
    newtype: Newtype,
    pair: Pair,
    nothing: (),
    c: char,
    floats: [f32; 3],
    big: [i64; 4],
    huge: [u64; 2],
    map: BTreeMap<String, Value>,
    hash: HashMap<&'static str, u8>,
    #[serde(flatten)]
    extra: BTreeMap<String, i8>,
}

#[test]
fn typed_values_read_as_serde_json_reads_them() {
    let event = Event {
        title: None,
        id: "e\u{0}\"\\/\u{2028}ö".into(),
        location: None,
        private_use: 1,
        emoji: 2,
        shapes: vec![
            Shape::Dot,
            Shape::Circle(-0.0),
            Shape::Circle(f64::NAN),
            Shape::Line(-1, 1),
            Shape::Box { z: 9, a: None },
            Shape::Box {
                z: 0,
                a: Some(true),
            },
        ],
        unit: Unit,
        newtype: Newtype(7),
        pair: Pair(-3, "x"),
        nothing: (),
        c: '\u{1f600}',
        floats: [0.1, f32::INFINITY, 1e21],
        big: [
            9007199254740992,
            9007199254740993,
            -9007199254740993,
            i64::MIN,
        ],
        huge: [u64::MAX, 1 << 53],
        map: BTreeMap::from([
            (
                "b".into(),
                serde_json::json!([1, 2.5, 1e-7, {"y": null, "x": {}}]),
            ),
            ("a".into(), Value::Null),
        ]),
        hash: HashMap::from([("k", 1), ("j", 2), ("", 3)]),
        extra: BTreeMap::from([("aa".into(), 1), ("zz".into(), -1)]),
    };
    let text = agrees(&event);
    // The flattened members among the struct's, sorted; integers past 2^53 as the doubles
    // they round to (2^53 + 1 rounds to even, 2^53; i64::MIN is -2^63).
    let big = r#"[{"aa":1,"big":[9007199254740992,9007199254740992,-9007199254740992,-9223372036854776000],"#;
    assert!(text.starts_with(big), "{text}");
    assert!(
        text.contains(r#""shapes":["Dot",{"Circle":0},{"Circle":null},"#),
        "{text}"
    );
    // A private-use character (U+E000) sorts after an emoji's surrogates (U+D83D) in
    // UTF-16, before it in UTF-8.
    let emoji = text.find("\u{1f600}\":2").unwrap();
    assert!(emoji < text.find("\u{e000}\":1").unwrap(), "{text}");
}

/// A map that names one key twice, as a hand-written `Serialize` may.
struct Repeated;

impl Serialize for Repeated {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("k", &1)?;
        map.serialize_entry("a", &2)?;
        map.serialize_entry("k", &3)?;
        map.end()
    }
}

/// Bytes, as `serde_bytes` and hand-written impls give them.
struct Bytes;

impl Serialize for Bytes {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_bytes(&[0, 7, 255])
    }
}

#[test]
fn what_it_leaves_to_serde_json_comes_out_as_serde_json_writes_it() {
    assert_eq!(agrees(&Repeated), r#"[{"a":2,"k":3}"#);
    assert_eq!(agrees(&Bytes), "[[0,7,255]");
    assert_eq!(
        agrees(&BTreeMap::from([(2, "b"), (10, "a")])),
        r#"[{"10":"a","2":"b"}"#
    );
    assert_eq!(agrees(&HashMap::from([(true, 1)])), r#"[{"true":1}"#);
    let raw: Box<RawValue> = RawValue::from_string(r#"{"b":1, "a":[2.50]}"#.into()).unwrap();
    assert_eq!(agrees(&vec![raw]), r#"[[{"a":[2.5],"b":1}]"#);
    assert_eq!(agrees(&(u64::MAX as u128)), "[18446744073709552000");
    assert_eq!(agrees(&-(1_i128 << 60)), "[-1152921504606847000");
    // Past 64 bits both fail, with serde_json's error.
    let (direct, reference) = both(&(1_u128 << 64));
    assert!(direct.is_err(), "{direct:?}");
    assert_eq!(direct, reference);
    // A map key that is neither a string nor a number: serde_json's refusal.
    let (direct, reference) = both(&BTreeMap::from([((1, 2), 3)]));
    assert!(direct.is_err(), "{direct:?}");
    assert_eq!(direct, reference);
}

#[test]
fn what_was_written_before_stays() {
    let mut out = b"prefix:".to_vec();
    write_serialized(&Repeated, &mut out).unwrap();
    assert_eq!(out, br#"prefix:{"a":2,"k":3}"#);
}
