//! What a violated schema says: where an instance fails, and what each violated keyword asked
//! for, read from the validator's typed errors (never parsed out of messages).
//!
//! It owns [`SchemaViolation`], [`Constraint`] and their bounded lists. It must not compile or
//! run a validator (the registry does).

use jsonschema::error::{TypeKind, ValidationErrorKind};
use serde_json::Value;

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
    /// [`SCHEMA_VIOLATIONS_MAX`](crate::limits::SCHEMA_VIOLATIONS_MAX): what a caller fixes in one retry rather than one per retry.
    pub violated: Box<Violations>,
}

/// The violations of one instance, bounded.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Violations {
    /// The first [`SCHEMA_VIOLATIONS_MAX`](crate::limits::SCHEMA_VIOLATIONS_MAX), in the validator's order.
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
    pub(super) fn of(kind: &ValidationErrorKind, instance: &Value, schema_path: &str) -> Self {
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
pub fn json_type(value: &Value) -> &'static str {
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
