//! The schema registry: every JSON Schema the host checks against, each compiled once, when
//! it is first used.
//!
//! It owns the schemas embedded in the binary: reading each and checking its header at
//! start-up (cheap), compiling it (draft 2020-12, formats checked, no network or file
//! retrieval: jsonschema is built without its resolver features) the first time an instance is
//! checked against it, so a start that checks one call compiles a handful of the ~40 schemas
//! rather than all; and answering "does this instance satisfy schema X" with a typed
//! [`SchemaViolation`]. It must not know what
//! a schema is for (that is the catalogue's and the crossing's business) and it never reads a
//! schema file at run time.

use std::collections::HashMap;
use std::sync::OnceLock;

use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::{Draft, Validator};
use serde_json::Value;

use crate::limits::SCHEMA_VIOLATIONS_MAX;

/// Every schema `$id` starts with this; the rest is the file's path under `schemas/`.
pub const SCHEMA_ID_PREFIX: &str = "https://aura.local/schemas/";

/// The draft every aura schema declares.
pub const SCHEMA_DRAFT_URI: &str = "https://json-schema.org/draft/2020-12/schema";

/// A schema as embedded in the binary: its path under `schemas/` and its text.
#[derive(Debug, Clone, Copy)]
pub struct SchemaSource {
    /// Path under `schemas/`, e.g. `calendar/find_free_slots.args.json`.
    pub path: &'static str,
    /// The file's text, included at compile time.
    pub text: &'static str,
}

impl SchemaSource {
    /// The `$id` this schema must carry.
    pub fn id(&self) -> String {
        format!("{SCHEMA_ID_PREFIX}{}", self.path)
    }
}

/// Embeds `schemas/<path>` into the binary as a [`SchemaSource`].
#[macro_export]
macro_rules! schema_source {
    ($path:expr) => {
        $crate::schema::SchemaSource {
            path: $path,
            text: include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../schemas/", $path)),
        }
    };
}

/// A schema that could not be compiled. Always a build defect: the schemas are embedded.
#[derive(Debug, thiserror::Error)]
pub enum SchemaCompileError {
    /// The file is not JSON.
    #[error("schema {path} is not JSON: {message}")]
    NotJson {
        /// Path under `schemas/`.
        path: &'static str,
        /// The parser's message.
        message: String,
    },
    /// `$id` or `$schema` is not what the registry requires.
    #[error("schema {path} must declare $id {expected_id} and $schema {SCHEMA_DRAFT_URI}")]
    BadHeader {
        /// Path under `schemas/`.
        path: &'static str,
        /// The `$id` its path implies.
        expected_id: String,
    },
    /// The same `$id` was registered twice.
    #[error("schema {path} is registered twice")]
    Duplicate {
        /// Path under `schemas/`.
        path: &'static str,
    },
    /// jsonschema refused the schema.
    #[error("schema {path} does not compile: {message}")]
    Invalid {
        /// Path under `schemas/`.
        path: &'static str,
        /// jsonschema's message.
        message: String,
    },
}

/// Where an instance fails its schema: the first error jsonschema reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaViolation {
    /// The `$id` of the schema the instance failed.
    pub schema_id: String,
    /// JSON Pointer into the instance (RFC 6901).
    pub instance_path: String,
    /// JSON Pointer to the failing keyword in the schema.
    pub schema_path: String,
    /// jsonschema's message.
    pub message: String,
    /// What the failing keyword asked for, read from the validator's error kind (boxed: a
    /// refusal travels in `Result`s, and most never read it).
    pub constraint: Box<Constraint>,
    /// Every keyword the instance violates, as the validator lists them, at most
    /// [`SCHEMA_VIOLATIONS_MAX`]: what a caller fixes in one retry rather than one per retry.
    pub violated: Box<Violations>,
}

/// The violations of one instance, bounded.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Violations {
    /// The first [`SCHEMA_VIOLATIONS_MAX`], in the validator's order.
    pub list: Vec<Violated>,
    /// How many more the validator reported.
    pub omitted: usize,
}

/// One violated keyword, where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violated {
    /// JSON Pointer into the instance (RFC 6901), with the validation's prefix.
    pub instance_path: String,
    /// What the keyword asked for.
    pub constraint: Constraint,
}

/// What a violated keyword asked for, read from jsonschema's error kind (never parsed out of
/// its message): what a caller needs to correct the value. Names follow the field-level
/// recovery of the planner/runtime boundary (seed 004).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Constraint {
    /// `required`: the member `field` is missing from the object at the instance path.
    MissingField {
        /// The missing member's name.
        field: String,
    },
    /// `additionalProperties` / `unevaluatedProperties`: members the schema does not allow.
    UnknownField {
        /// Their names, as the validator lists them.
        fields: Vec<String>,
    },
    /// `type`: the value has another JSON type.
    InvalidFieldType {
        /// The types allowed (`null`, `boolean`, `integer`, `number`, `string`, `array`,
        /// `object`).
        expected: Vec<&'static str>,
        /// The value's own type.
        actual: &'static str,
    },
    /// `enum` / `const`: not one of the allowed values.
    InvalidEnumValue {
        /// The allowed values.
        allowed: Vec<Value>,
    },
    /// `format`: not a valid `format` (e.g. `date-time`).
    InvalidFormat {
        /// The format's name.
        format: String,
    },
    /// `pattern`: the string does not match.
    InvalidPattern {
        /// The regular expression.
        pattern: String,
    },
    /// `minimum` / `maximum` / `exclusiveMinimum` / `exclusiveMaximum`: out of range.
    InvalidRange {
        /// The lower bound, if that is the one violated.
        minimum: Option<Value>,
        /// The upper bound, if that is the one violated.
        maximum: Option<Value>,
        /// Whether the bound itself is excluded.
        exclusive: bool,
    },
    /// `minLength` / `maxLength` (characters), `minItems` / `maxItems` (items),
    /// `minProperties` / `maxProperties` (members): too short or too long.
    InvalidLength {
        /// The least length, if that is the one violated.
        min_length: Option<u64>,
        /// The greatest length, if that is the one violated.
        max_length: Option<u64>,
    },
    /// Any other keyword (`multipleOf`, `uniqueItems`, `oneOf`, `not`, ...).
    Other {
        /// The keyword: the last segment of the schema path.
        keyword: String,
    },
}

impl Constraint {
    /// The constraint a validation error reports; `instance` is the failing value,
    /// `schema_path` the pointer to the failing keyword.
    fn of(kind: &ValidationErrorKind, instance: &Value, schema_path: &str) -> Self {
        use ValidationErrorKind as K;
        let range = |minimum, maximum, exclusive| Self::InvalidRange {
            minimum,
            maximum,
            exclusive,
        };
        let length = |min_length, max_length| Self::InvalidLength {
            min_length,
            max_length,
        };
        match kind {
            K::Required { property } => Self::MissingField {
                field: property
                    .as_str()
                    .map_or_else(|| property.to_string(), str::to_owned),
            },
            K::AdditionalProperties { unexpected } | K::UnevaluatedProperties { unexpected } => {
                Self::UnknownField {
                    fields: unexpected.clone(),
                }
            }
            K::Type { kind } => Self::InvalidFieldType {
                expected: match kind {
                    TypeKind::Single(one) => vec![one.as_str()],
                    TypeKind::Multiple(set) => set.iter().map(|t| t.as_str()).collect(),
                },
                actual: json_type(instance),
            },
            K::Enum { options } => Self::InvalidEnumValue {
                allowed: options.as_array().cloned().unwrap_or_default(),
            },
            K::Constant { expected_value } => Self::InvalidEnumValue {
                allowed: vec![Value::clone(expected_value)],
            },
            K::Format { format } => Self::InvalidFormat {
                format: format.clone(),
            },
            K::Pattern { pattern } => Self::InvalidPattern {
                pattern: pattern.clone(),
            },
            K::Minimum { limit } => range(Some(limit.clone()), None, false),
            K::ExclusiveMinimum { limit } => range(Some(limit.clone()), None, true),
            K::Maximum { limit } => range(None, Some(limit.clone()), false),
            K::ExclusiveMaximum { limit } => range(None, Some(limit.clone()), true),
            K::MinLength { limit } | K::MinItems { limit } | K::MinProperties { limit } => {
                length(Some(*limit), None)
            }
            K::MaxLength { limit } | K::MaxItems { limit } | K::MaxProperties { limit } => {
                length(None, Some(*limit))
            }
            _ => Self::Other {
                keyword: schema_path
                    .rsplit('/')
                    .next()
                    .unwrap_or_default()
                    .to_owned(),
            },
        }
    }

    /// The constraint's name in a recovery issue.
    pub fn name(&self) -> &'static str {
        match self {
            Self::MissingField { .. } => "missing_field",
            Self::UnknownField { .. } => "unknown_field",
            Self::InvalidFieldType { .. } => "invalid_field_type",
            Self::InvalidEnumValue { .. } => "invalid_enum_value",
            Self::InvalidFormat { .. } => "invalid_format",
            Self::InvalidPattern { .. } => "invalid_pattern",
            Self::InvalidRange { .. } => "invalid_range",
            Self::InvalidLength { .. } => "invalid_length",
            Self::Other { .. } => "invalid_value",
        }
    }
}

/// A JSON value's type, as JSON Schema names it (`integer` for whole numbers).
pub(crate) fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

impl std::fmt::Display for SchemaViolation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let at = if self.instance_path.is_empty() {
            "/"
        } else {
            &self.instance_path
        };
        write!(
            f,
            "{at} fails {} ({}): {}",
            self.schema_id, self.schema_path, self.message
        )
    }
}

struct Compiled {
    path: &'static str,
    id: String,
    schema: Value,
    /// Built on first use; a schema jsonschema refuses keeps its message (a build defect,
    /// reported as a violation rather than a panic).
    validator: OnceLock<Result<Validator, String>>,
}

impl Compiled {
    fn validator(&self) -> Result<&Validator, SchemaCompileError> {
        self.validator
            .get_or_init(|| {
                jsonschema::options()
                    .with_draft(Draft::Draft202012)
                    .should_validate_formats(true)
                    .build(&self.schema)
                    .map_err(|e| e.to_string())
            })
            .as_ref()
            .map_err(|message| SchemaCompileError::Invalid {
                path: self.path,
                message: message.clone(),
            })
    }
}

/// Compiled validators, keyed by schema path under `schemas/`.
pub struct SchemaRegistry {
    by_path: HashMap<&'static str, Compiled>,
}

impl std::fmt::Debug for SchemaRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut paths: Vec<_> = self.by_path.keys().collect();
        paths.sort();
        f.debug_struct("SchemaRegistry")
            .field("schemas", &paths)
            .finish()
    }
}

impl SchemaRegistry {
    /// Registers every source, each compiled when first used. Each must be JSON and declare
    /// draft 2020-12 and the `$id` its path implies.
    pub fn compile<'a>(
        sources: impl IntoIterator<Item = &'a SchemaSource>,
    ) -> Result<Self, SchemaCompileError> {
        let mut by_path = HashMap::new();
        for source in sources {
            if by_path.contains_key(source.path) {
                return Err(SchemaCompileError::Duplicate { path: source.path });
            }
            let schema: Value =
                serde_json::from_str(source.text).map_err(|e| SchemaCompileError::NotJson {
                    path: source.path,
                    message: e.to_string(),
                })?;
            let expected_id = source.id();
            if schema.get("$id").and_then(Value::as_str) != Some(expected_id.as_str())
                || schema.get("$schema").and_then(Value::as_str) != Some(SCHEMA_DRAFT_URI)
            {
                return Err(SchemaCompileError::BadHeader {
                    path: source.path,
                    expected_id,
                });
            }
            by_path.insert(
                source.path,
                Compiled {
                    path: source.path,
                    id: expected_id,
                    schema,
                    validator: OnceLock::new(),
                },
            );
        }
        Ok(Self { by_path })
    }

    /// Compiles every schema not compiled yet; the first that does not compile. What a test
    /// runs to catch a bad schema at build time rather than at its first use.
    pub fn compile_all(&self) -> Result<(), SchemaCompileError> {
        let mut paths: Vec<_> = self.by_path.keys().collect();
        paths.sort();
        for path in paths {
            self.by_path[path].validator()?;
        }
        Ok(())
    }

    /// Checks `instance` against the schema at `path`.
    ///
    /// `pointer_prefix` is prepended to the reported instance path, so a violation inside an
    /// envelope's `args` reads `/args/...`.
    ///
    /// # Panics
    /// If `path` was not registered: callers only pass paths from the catalogue, which
    /// registered every one of them at start-up.
    pub fn validate(
        &self,
        path: &str,
        instance: &Value,
        pointer_prefix: &str,
    ) -> Result<(), SchemaViolation> {
        let compiled = self
            .by_path
            .get(path)
            .unwrap_or_else(|| panic!("schema {path} is not in the registry"));
        let validator = compiled.validator().map_err(|error| SchemaViolation {
            schema_id: compiled.id.clone(),
            instance_path: pointer_prefix.to_owned(),
            schema_path: String::new(),
            message: error.to_string(),
            constraint: Box::new(Constraint::Other {
                keyword: String::new(),
            }),
            violated: Box::default(),
        })?;
        match validator.validate(instance) {
            Ok(()) => Ok(()),
            Err(error) => {
                let schema_path = error.schema_path().as_str().to_owned();
                let constraint = Constraint::of(error.kind(), error.instance(), &schema_path);
                let instance_path = format!("{pointer_prefix}{}", error.instance_path().as_str());
                // The error path only: list every violation (the validator collects them for
                // an instance within the crossing's byte cap), keep the first few.
                let mut violated = Violations::default();
                for other in validator.iter_errors(instance) {
                    if violated.list.len() == SCHEMA_VIOLATIONS_MAX {
                        violated.omitted += 1;
                        continue;
                    }
                    violated.list.push(Violated {
                        instance_path: format!(
                            "{pointer_prefix}{}",
                            other.instance_path().as_str()
                        ),
                        constraint: Constraint::of(
                            other.kind(),
                            other.instance(),
                            other.schema_path().as_str(),
                        ),
                    });
                }
                Err(SchemaViolation {
                    schema_id: compiled.id.clone(),
                    instance_path,
                    constraint: Box::new(constraint),
                    violated: Box::new(violated),
                    schema_path,
                    message: error.to_string(),
                })
            }
        }
    }

    /// Whether a schema is registered under `path`.
    pub fn contains(&self, path: &str) -> bool {
        self.by_path.contains_key(path)
    }
}

#[cfg(test)]
mod tests {
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
}
