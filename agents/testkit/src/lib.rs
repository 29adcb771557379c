//! Test-only helpers for agent crates: load an agent's schemas from `schemas/<agent>/`, check
//! values against them with the same validator the host uses (jsonschema, draft 2020-12,
//! formats on), and check the house rules every aura schema follows (a description everywhere,
//! bounds on every string, array and number, `additionalProperties: false` on every object).
//!
//! Used as a dev-dependency only; it must never be linked into a component.

use serde_json::Value;

/// The workspace's `schemas/` dir.
const SCHEMAS_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../schemas");

/// The schemas of one agent.
#[derive(Debug, Clone, Copy)]
pub struct AgentSchemas {
    /// The agent's name: its schemas live in `schemas/<agent>/`.
    pub agent: &'static str,
}

impl AgentSchemas {
    /// Loads `schemas/<agent>/<name>`.
    pub fn load(&self, name: &str) -> Value {
        let path = format!("{SCHEMAS_DIR}/{}/{name}", self.agent);
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    /// Checks the top of one of the agent's schemas: draft, `$id`, object, house rules.
    pub fn assert_header(&self, schema: &Value, name: &str) {
        assert_eq!(
            schema["$schema"], "https://json-schema.org/draft/2020-12/schema",
            "{name}"
        );
        assert_eq!(
            schema["$id"],
            format!("https://aura.local/schemas/{}/{name}", self.agent),
            "{name}"
        );
        assert_eq!(schema["type"], "object", "{name}");
        assert_house_rules(schema, name);
    }

    /// Both schemas of `tool`, headers and house rules checked, and its args examples, each
    /// valid against the args schema: (args schema, result schema, examples).
    pub fn tool_schemas(&self, tool: &str) -> (Value, Value, Vec<Value>) {
        let args_name = format!("{tool}.args.json");
        let result_name = format!("{tool}.result.json");
        let args = self.load(&args_name);
        self.assert_header(&args, &args_name);
        let result = self.load(&result_name);
        self.assert_header(&result, &result_name);
        let examples = args["examples"].as_array().cloned().unwrap_or_default();
        assert!(!examples.is_empty(), "{args_name}: no example");
        for example in &examples {
            assert_valid(&args, example);
        }
        (args, result, examples)
    }
}

/// The first violation of `schema` by `value`, as the host's validator reports it.
pub fn violation(schema: &Value, value: &Value) -> Option<String> {
    let validator = jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .should_validate_formats(true)
        .build(schema)
        .unwrap_or_else(|e| panic!("schema does not compile: {e}"));
    validator
        .validate(value)
        .err()
        .map(|e| format!("{} at {}", e, e.instance_path().as_str()))
}

/// Panics with the violation if `value` does not satisfy `schema`.
pub fn assert_valid(schema: &Value, value: &Value) {
    if let Some(violation) = violation(schema, value) {
        panic!("{violation}\nvalue: {value}");
    }
}

/// Whether `value` satisfies `schema`.
pub fn is_valid(schema: &Value, value: &Value) -> bool {
    violation(schema, value).is_none()
}

/// Walks a whole schema and checks the house rules: descriptions everywhere, bounds on every
/// string, array, integer and number, `additionalProperties: false` on every object.
pub fn assert_house_rules(schema: &Value, at: &str) {
    let s = schema
        .as_object()
        .unwrap_or_else(|| panic!("{at}: not an object"));
    assert!(
        s.get("description")
            .and_then(Value::as_str)
            .is_some_and(|d| !d.is_empty()),
        "{at}: no description"
    );
    match s.get("type").and_then(Value::as_str) {
        Some("object") => {
            assert_eq!(
                s.get("additionalProperties"),
                Some(&Value::Bool(false)),
                "{at}"
            );
            let props = s["properties"].as_object().unwrap();
            for req in s
                .get("required")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                assert!(
                    props.contains_key(req.as_str().unwrap()),
                    "{at}: required {req}"
                );
            }
            for (key, sub) in props {
                assert_house_rules(sub, &format!("{at}.{key}"));
            }
        }
        Some("array") => {
            assert!(
                s.get("maxItems").is_some_and(Value::is_u64),
                "{at}: maxItems"
            );
            assert_house_rules(&s["items"], &format!("{at}[]"));
        }
        Some("string") => {
            assert!(
                s.get("maxLength").is_some_and(Value::is_u64),
                "{at}: maxLength"
            );
            if s.get("format").and_then(Value::as_str) == Some("date-time") {
                assert_eq!(s["maxLength"], 40, "{at}: date-time maxLength");
            }
        }
        Some("integer") => {
            assert!(s.get("minimum").is_some_and(Value::is_i64), "{at}: minimum");
            assert!(s.get("maximum").is_some_and(Value::is_i64), "{at}: maximum");
        }
        Some("number") => {
            assert!(
                s.get("minimum").is_some_and(Value::is_number),
                "{at}: minimum"
            );
            assert!(
                s.get("maximum").is_some_and(Value::is_number),
                "{at}: maximum"
            );
        }
        Some("boolean") => {}
        other => panic!("{at}: unexpected type {other:?}"),
    }
}
