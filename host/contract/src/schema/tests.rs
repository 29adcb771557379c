//! Tests of the schema registry and of reading its violations.

use super::*;
use serde_json::json;

const TOOLCALL: SchemaSource = crate::schema_source!("toolcall.v1.json");

fn registry() -> SchemaRegistry {
    SchemaRegistry::compile([&TOOLCALL]).unwrap()
}

fn envelope() -> Value {
    json!({
        "call_id": "t_abcdef0123",
        "agent": "calendar",
        "tool": "find_free_slots",
        "args": {},
        "ts": "2026-11-22T09:00:00Z",
        "confirm_required": false
    })
}

#[test]
fn a_valid_envelope_passes() {
    registry()
        .validate("toolcall.v1.json", &envelope(), "")
        .unwrap();
}

#[test]
fn formats_are_checked() {
    let mut bad = envelope();
    bad["ts"] = json!("2026-13-45T25:00:00Z");
    let violation = registry()
        .validate("toolcall.v1.json", &bad, "")
        .unwrap_err();
    assert_eq!(violation.instance_path, "/ts");
    assert_eq!(violation.schema_path, "/properties/ts/format");
    assert_eq!(
        violation.schema_id,
        "https://aura.local/schemas/toolcall.v1.json"
    );
}

#[test]
fn each_toolcall_rule_fires() {
    let cases: [(&str, Value, &str); 6] = [
        (
            "call_id",
            json!("t_ABCDEF0123"),
            "/properties/call_id/pattern",
        ),
        (
            "call_id",
            json!("t_abcdef012"),
            "/properties/call_id/pattern",
        ),
        ("agent", json!("mallory"), "/properties/agent/enum"),
        ("deadline_ms", json!(49), "/properties/deadline_ms/minimum"),
        (
            "deadline_ms",
            json!(10001),
            "/properties/deadline_ms/maximum",
        ),
        (
            "expected_surface",
            json!("TV"),
            "/properties/expected_surface/enum",
        ),
    ];
    for (field, value, schema_path) in cases {
        let mut bad = envelope();
        bad[field] = value;
        let violation = registry()
            .validate("toolcall.v1.json", &bad, "")
            .unwrap_err();
        assert_eq!(violation.schema_path, schema_path, "{field}");
        assert_eq!(violation.instance_path, format!("/{field}"));
    }
    for (field, value) in [("deadline_ms", json!(50)), ("deadline_ms", json!(10000))] {
        let mut good = envelope();
        good[field] = value;
        registry().validate("toolcall.v1.json", &good, "").unwrap();
    }
    let mut extra = envelope();
    extra["priority"] = json!(1);
    let violation = registry()
        .validate("toolcall.v1.json", &extra, "")
        .unwrap_err();
    assert_eq!(violation.schema_path, "/additionalProperties");
    let mut missing = envelope();
    missing.as_object_mut().unwrap().remove("confirm_required");
    let violation = registry()
        .validate("toolcall.v1.json", &missing, "")
        .unwrap_err();
    assert_eq!(violation.schema_path, "/required");
}

#[test]
fn the_prefix_is_prepended_to_the_instance_path() {
    let violation = registry()
        .validate("toolcall.v1.json", &json!({"x": 1}), "/args")
        .unwrap_err();
    assert!(violation.instance_path.starts_with("/args"));
}

#[test]
fn headers_are_enforced() {
    let bad_id = SchemaSource {
        path: "x.json",
        text: r#"{"$schema":"https://json-schema.org/draft/2020-12/schema","$id":"https://aura.local/schemas/y.json"}"#,
    };
    assert!(matches!(
        SchemaRegistry::compile([&bad_id]),
        Err(SchemaCompileError::BadHeader { .. })
    ));
    assert!(matches!(
        SchemaRegistry::compile([&TOOLCALL, &TOOLCALL]),
        Err(SchemaCompileError::Duplicate { .. })
    ));
}

/// One property per keyword a recovery issue names.
const KEYWORDS: SchemaSource = SchemaSource {
    path: "keywords.json",
    text: r#"{"$schema":"https://json-schema.org/draft/2020-12/schema",
        "$id":"https://aura.local/schemas/keywords.json",
        "type":"object","additionalProperties":false,"required":["id"],
        "properties":{
          "id":{"type":"string","pattern":"^t_[a-z]{3}$"},
          "name":{"type":"string","minLength":2,"maxLength":4},
          "kind":{"enum":["walk","stretch"]},
          "v":{"const":1},
          "when":{"type":"string","format":"date-time"},
          "n":{"type":["integer","null"],"minimum":1,"maximum":10},
          "x":{"type":"number","exclusiveMinimum":0,"exclusiveMaximum":1},
          "tags":{"type":"array","minItems":1,"maxItems":2,"uniqueItems":true},
          "step":{"type":"integer","multipleOf":5}
        }}"#,
};

/// The constraint and instance path of `instance`'s first violation.
fn constraint_of(instance: Value) -> (Constraint, String) {
    let registry = SchemaRegistry::compile([&KEYWORDS]).unwrap();
    let violation = registry
        .validate("keywords.json", &instance, "/args")
        .unwrap_err();
    (*violation.constraint, violation.instance_path)
}

#[test]
fn each_violated_keyword_is_read_as_its_constraint() {
    use Constraint::*;
    let cases: Vec<(Value, Constraint, &str)> = vec![
        (json!({}), MissingField { field: "id".into() }, "/args"),
        (
            json!({"id": "t_abc", "extra": 1}),
            UnknownField {
                fields: vec!["extra".into()],
            },
            "/args",
        ),
        (
            json!({"id": 7}),
            InvalidFieldType {
                expected: vec!["string"],
                actual: "integer",
            },
            "/args/id",
        ),
        (
            json!({"id": "t_abc", "n": 2.5}),
            InvalidFieldType {
                // The type set's own order.
                expected: vec!["null", "integer"],
                actual: "number",
            },
            "/args/n",
        ),
        (
            json!({"id": "t_abc", "kind": "run"}),
            InvalidEnumValue {
                allowed: vec![json!("walk"), json!("stretch")],
            },
            "/args/kind",
        ),
        (
            json!({"id": "t_abc", "v": 2}),
            InvalidEnumValue {
                allowed: vec![json!(1)],
            },
            "/args/v",
        ),
        (
            json!({"id": "t_abc", "when": "2026-13-01T00:00:00Z"}),
            InvalidFormat {
                format: "date-time".into(),
            },
            "/args/when",
        ),
        (
            json!({"id": "t_ABC"}),
            InvalidPattern {
                pattern: "^t_[a-z]{3}$".into(),
            },
            "/args/id",
        ),
        (
            json!({"id": "t_abc", "n": 0}),
            InvalidRange {
                minimum: Some(json!(1)),
                maximum: None,
                exclusive: false,
            },
            "/args/n",
        ),
        (
            json!({"id": "t_abc", "n": 11}),
            InvalidRange {
                minimum: None,
                maximum: Some(json!(10)),
                exclusive: false,
            },
            "/args/n",
        ),
        (
            json!({"id": "t_abc", "x": 0}),
            InvalidRange {
                minimum: Some(json!(0)),
                maximum: None,
                exclusive: true,
            },
            "/args/x",
        ),
        (
            json!({"id": "t_abc", "x": 1}),
            InvalidRange {
                minimum: None,
                maximum: Some(json!(1)),
                exclusive: true,
            },
            "/args/x",
        ),
        (
            json!({"id": "t_abc", "tags": []}),
            InvalidLength {
                min_length: Some(1),
                max_length: None,
            },
            "/args/tags",
        ),
        (
            json!({"id": "t_abc", "tags": [1, 2, 3]}),
            InvalidLength {
                min_length: None,
                max_length: Some(2),
            },
            "/args/tags",
        ),
        (
            json!({"id": "t_abc", "tags": [1, 1]}),
            Other {
                keyword: "uniqueItems".into(),
            },
            "/args/tags",
        ),
        (
            json!({"id": "t_abc", "step": 7}),
            Other {
                keyword: "multipleOf".into(),
            },
            "/args/step",
        ),
    ];
    for (instance, expected, path) in cases {
        let (constraint, instance_path) = constraint_of(instance.clone());
        assert_eq!(constraint, expected, "{instance}");
        assert_eq!(instance_path, path, "{instance}");
    }
}

#[test]
fn a_string_length_counts_characters_not_bytes() {
    let length = |name: &str| constraint_of(json!({"id": "t_abc", "name": name})).0;
    assert_eq!(
        length("a"),
        Constraint::InvalidLength {
            min_length: Some(2),
            max_length: None
        }
    );
    // Five characters, 13 bytes: over the four allowed.
    assert_eq!(
        length("日本語éé"),
        Constraint::InvalidLength {
            min_length: None,
            max_length: Some(4)
        }
    );
    // Two characters, six bytes: within bounds.
    let registry = SchemaRegistry::compile([&KEYWORDS]).unwrap();
    registry
        .validate("keywords.json", &json!({"id": "t_abc", "name": "日本"}), "")
        .unwrap();
    assert_eq!(
        Constraint::MissingField { field: "x".into() }.name(),
        "missing_field"
    );
    assert_eq!(
        Constraint::Other {
            keyword: "not".into()
        }
        .name(),
        "invalid_value"
    );
}

#[test]
fn a_schema_that_does_not_compile_refuses_what_it_checks_instead_of_panicking() {
    let bad = SchemaSource {
        path: "bad.json",
        text: r#"{"$schema":"https://json-schema.org/draft/2020-12/schema","$id":"https://aura.local/schemas/bad.json","type":"nonsense"}"#,
    };
    let registry = SchemaRegistry::compile([&bad, &TOOLCALL]).unwrap();
    let violation = registry
        .validate("bad.json", &json!({}), "/args")
        .unwrap_err();
    assert_eq!(violation.schema_id, "https://aura.local/schemas/bad.json");
    assert_eq!(violation.instance_path, "/args");
    assert!(
        violation.message.contains("does not compile"),
        "{violation}"
    );
    assert!(matches!(
        registry.compile_all(),
        Err(SchemaCompileError::Invalid {
            path: "bad.json",
            ..
        })
    ));
}
