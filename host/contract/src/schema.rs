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

use jsonschema::{Draft, Validator};
use serde_json::Value;

use crate::limits::SCHEMA_VIOLATIONS_MAX;

mod violation;

pub use violation::{Constraint, SchemaViolation, Violated, Violations, json_type};

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

/// A schema made from an embedded one when the registry is built: a part of it, or it with
/// other requirements, so the two can never drift apart (`make` gets the source's JSON and
/// returns the derived schema; the registry gives it its `$id` and `$schema`).
#[derive(Debug, Clone, Copy)]
pub struct DerivedSchema {
    /// The path it is registered under, as if it were a file under `schemas/`.
    pub path: &'static str,
    /// What it is made from.
    pub from: SchemaSource,
    /// How.
    pub make: fn(Value) -> Value,
}

/// Embeds `schemas/<path>` into the binary as a [`SchemaSource`].
#[macro_export]
macro_rules! schema_source {
    ($path:expr) => {
        $crate::schema::SchemaSource {
            path: $path,
            text: include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../schemas/",
                $path
            )),
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

    /// Registers each of `derived`, made from its source (compiled when first used, like the
    /// rest).
    pub fn derive(&mut self, derived: &[DerivedSchema]) -> Result<(), SchemaCompileError> {
        for schema in derived {
            if self.by_path.contains_key(schema.path) {
                return Err(SchemaCompileError::Duplicate { path: schema.path });
            }
            let from: Value = serde_json::from_str(schema.from.text).map_err(|e| {
                SchemaCompileError::NotJson {
                    path: schema.from.path,
                    message: e.to_string(),
                }
            })?;
            let id = format!("{SCHEMA_ID_PREFIX}{}", schema.path);
            let mut made = (schema.make)(from);
            if let Some(object) = made.as_object_mut() {
                object.insert("$id".to_owned(), Value::String(id.clone()));
                object.insert(
                    "$schema".to_owned(),
                    Value::String(SCHEMA_DRAFT_URI.to_owned()),
                );
            }
            self.by_path.insert(
                schema.path,
                Compiled {
                    path: schema.path,
                    id,
                    schema: made,
                    validator: OnceLock::new(),
                },
            );
        }
        Ok(())
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
        // A valid instance, nearly every one, takes the validator's yes-or-no walk: no
        // location pushed and no nested `Result` passed up, as `validate` does at every level.
        // A refused instance is walked twice more, by `validate` and `iter_errors`, for its
        // violations.
        if validator.is_valid(instance) {
            return Ok(());
        }
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
mod tests;
