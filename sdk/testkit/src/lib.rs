//! Test-only helpers for agent crates: load an agent's schemas from `schemas/<agent>/`, check
//! values against them with the same validator the host uses (jsonschema, draft 2020-12,
//! formats on), check the house rules every aura schema follows (a description everywhere,
//! bounds on every string, array and number, `additionalProperties: false` on every object),
//! and check what an agent writes for the host: a tick's answer against `proposals.v1`, each
//! call against `toolcall.v1` and its tool's args schema.
//!
//! Used as a dev-dependency only; it must never be linked into a component. It checks shapes
//! and schemas; running a tool on proposed args stays in each agent's tests (it needs the
//! agent's types).

use serde_json::{Value, json};

/// The workspace's `schemas/` dir.
const SCHEMAS_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../schemas");

/// The schemas of one agent.
#[derive(Debug, Clone, Copy)]
pub struct AgentSchemas {
    /// The agent's name: its schemas live in `schemas/<agent>/`.
    pub agent: &'static str,
}

impl AgentSchemas {
    /// The schemas of `agent` (`schemas/<agent>/`).
    pub const fn new(agent: &'static str) -> Self {
        Self { agent }
    }

    /// Loads `schemas/<agent>/<name>`.
    pub fn load(&self, name: &str) -> Value {
        load_schema(&format!("{}/{name}", self.agent))
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

    /// Checks a tick's answer and returns its proposals: the answer against
    /// `schemas/proposals.v1.json` (at most 16 proposals, each exactly call, signals and
    /// priority; at most 16 signals of 1..200 characters; priority 0..100), and each proposal's
    /// call made by this agent and checked by [`assert_toolcall`].
    pub fn tick_proposals(&self, answer: &Value) -> Vec<Value> {
        assert_valid(&load_schema("proposals.v1.json"), answer);
        let proposals = answer["proposals"].as_array().cloned().unwrap_or_default();
        for proposal in &proposals {
            let call = &proposal["call"];
            assert_eq!(
                call["agent"], self.agent,
                "proposal by another agent: {call}"
            );
            assert_toolcall(call);
        }
        proposals
    }
}

/// Tick contexts without a usable `now`, which every agent's tick must refuse as invalid args
/// (`aura_sdk::args::tick_context`): not an object, no `now`, `now` not a string, `now` not
/// RFC 3339.
pub fn contexts_without_a_usable_now() -> Vec<Value> {
    vec![
        json!([]),
        json!({}),
        json!({"now": 5}),
        json!({"now": "soon"}),
    ]
}

/// Loads `schemas/<name>`: the envelopes every agent shares (`toolcall.v1.json`,
/// `proposals.v1.json`, `result.v1.json`, ...).
pub fn load_schema(name: &str) -> Value {
    let path = format!("{SCHEMAS_DIR}/{name}");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Checks a toolcall.v1 envelope (a proposed call, or one an agent makes through the host):
/// the envelope against `schemas/toolcall.v1.json` (call_id `^t_[a-z0-9]{10}$`, known agent,
/// RFC 3339 `ts`, surface and deadline within bounds, nothing else), and its args against the
/// args schema of the tool it names, `schemas/<agent>/<tool>.args.json`.
pub fn assert_toolcall(call: &Value) {
    assert_valid(&load_schema("toolcall.v1.json"), call);
    let agent = call["agent"].as_str().unwrap_or_default();
    let tool = call["tool"].as_str().unwrap_or_default();
    assert_valid(
        &load_schema(&format!("{agent}/{tool}.args.json")),
        &call["args"],
    );
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

#[cfg(test)]
mod tests {
    use super::*;

    const CALENDAR: AgentSchemas = AgentSchemas::new("calendar");

    fn answer(call_id: &str, signals: usize) -> Value {
        let signals: Vec<String> = (0..signals).map(|i| format!("overlap:a/{i}")).collect();
        json!({"proposals": [{
            "call": {"call_id": call_id, "agent": "calendar", "tool": "detect_conflicts",
                     "args": {"events": [], "travel_gap_minutes": 15},
                     "ts": "2026-11-23T08:00:00Z", "confirm_required": false,
                     "expected_surface": "WATCH"},
            "signals": signals, "priority": 90}]})
    }

    #[test]
    fn a_well_formed_answer_gives_its_proposals() {
        let proposals = CALENDAR.tick_proposals(&answer("t_0123456789", 16));
        assert_eq!(proposals.len(), 1);
        assert_eq!(proposals[0]["priority"], 90);
        assert!(
            CALENDAR
                .tick_proposals(&json!({"proposals": []}))
                .is_empty()
        );
    }

    #[test]
    #[should_panic(expected = "call_id")]
    fn a_call_id_off_the_pattern_is_refused() {
        CALENDAR.tick_proposals(&answer("t_0123456789a", 1));
    }

    #[test]
    #[should_panic(expected = "signals")]
    fn seventeen_signals_are_refused() {
        CALENDAR.tick_proposals(&answer("t_0123456789", 17));
    }

    #[test]
    #[should_panic(expected = "proposal by another agent")]
    fn a_proposal_for_another_agent_is_refused() {
        AgentSchemas::new("finance").tick_proposals(&answer("t_0123456789", 1));
    }

    #[test]
    #[should_panic(expected = "travel_gap_minutes")]
    fn args_are_checked_against_the_tools_schema() {
        let mut call = answer("t_0123456789", 1)["proposals"][0]["call"].clone();
        call["args"]["travel_gap_minutes"] = json!(-1);
        assert_toolcall(&call);
    }

    #[test]
    #[should_panic(expected = "answer")]
    fn members_beside_proposals_are_refused() {
        CALENDAR.tick_proposals(&json!({"proposals": [], "answer": 1}));
    }
}
