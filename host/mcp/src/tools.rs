//! The tool list: one MCP tool per catalogue entry, named `<agent>.<tool>`, its schemas as
//! they are on disk, its annotations from the entry.
//!
//! It owns building the list once from the catalogue (locked in code, so it never changes
//! while the process runs). It must not learn a tool that is not in the catalogue.

use std::collections::HashMap;
use std::sync::Arc;

use rmcp::model::{Tool, ToolAnnotations};
use serde_json::{Map, Value};

use aura_contract::catalogue::{self, AgentSpec, ToolSpec};

/// One catalogue entry as an MCP tool.
pub(crate) struct Entry {
    pub(crate) agent: &'static AgentSpec,
    pub(crate) spec: &'static ToolSpec,
    pub(crate) tool: Tool,
}

/// The tool list, built once from the catalogue (it is locked in code, so it never changes
/// while the process runs).
pub(crate) struct Tools {
    /// In catalogue order: deterministic, as the spec asks.
    pub(crate) entries: Vec<Entry>,
    pub(crate) by_name: HashMap<String, usize>,
}

impl Tools {
    pub(crate) fn from_catalogue() -> Self {
        let mut entries = Vec::new();
        for agent in catalogue::CATALOGUE {
            for spec in agent.tools {
                entries.push(Entry {
                    agent,
                    spec,
                    tool: tool_of(agent, spec),
                });
            }
        }
        let by_name = entries
            .iter()
            .enumerate()
            .map(|(i, entry)| (entry.tool.name.to_string(), i))
            .collect();
        Self { entries, by_name }
    }

    pub(crate) fn get(&self, name: &str) -> Option<&Entry> {
        self.by_name.get(name).map(|&i| &self.entries[i])
    }
}

/// A schema file as a JSON object (the catalogue's files are objects: a test checks).
fn schema_object(text: &str) -> Arc<Map<String, Value>> {
    match serde_json::from_str(text) {
        Ok(Value::Object(object)) => Arc::new(object),
        _ => Arc::new(Map::new()),
    }
}

/// The MCP tool of one catalogue entry: its name, the args schema's title and description,
/// both schemas verbatim, and the annotations that are true of it.
fn tool_of(agent: &AgentSpec, spec: &ToolSpec) -> Tool {
    let input = schema_object(spec.args_schema.text);
    let output = schema_object(spec.result_schema.text);
    let description = describe(agent, spec, &input, &output);
    let title = format!("{}: {}", agent.name, spec.name.replace('_', " "));
    // Every tool computes its result from its args alone, in a sandbox with no network and no
    // files: nothing outside is touched (open world: false) and the same args give the same
    // result (idempotent). One that needs the user's yes changes the user's world when
    // confirmed (a calendar entry, a sent reply): not read-only, and no more is claimed.
    let annotations = if spec.confirm_required {
        ToolAnnotations::new().read_only(false).open_world(false)
    } else {
        ToolAnnotations::new()
            .read_only(true)
            .destructive(false)
            .idempotent(true)
            .open_world(false)
    };
    Tool::new_with_raw(
        format!("{}.{}", agent.name, spec.name),
        Some(description.into()),
        input,
    )
    .with_title(title)
    .with_raw_output_schema(output)
    .with_annotations(annotations)
}

/// A tool's description from its two schemas': what it does and takes (the args schema's
/// description after its "Arguments of <agent>.<tool>:" lead), then what it returns (the
/// result schema's after "Result of <agent>.<tool>").
fn describe(
    agent: &AgentSpec,
    spec: &ToolSpec,
    input: &Map<String, Value>,
    output: &Map<String, Value>,
) -> String {
    let text = |schema: &Map<String, Value>, lead: &str| {
        let full = schema
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let rest = full
            .strip_prefix(&format!("{lead} {}.{}", agent.name, spec.name))
            .map_or(full, |rest| {
                rest.trim_start_matches([':', '.']).trim_start()
            });
        let mut chars = rest.chars();
        chars
            .next()
            .map(|first| first.to_uppercase().chain(chars).collect::<String>())
            .unwrap_or_default()
    };
    format!(
        "{}\n\nReturns: {}",
        text(input, "Arguments of"),
        text(output, "Result of")
    )
}

/// The scopes an MCP request over HTTP needs (when `aura serve` asks tokens): `aura.read` for
/// every message, and `aura.act` besides for a `tools/call` of a tool the user must confirm
/// (the client is then told 403 `insufficient_scope` before the call is looked at).
pub(crate) struct ToolScopes(pub(crate) Arc<Tools>);

impl aura_http::auth::ScopeRule for ToolScopes {
    fn body_bytes_max(&self, parts: &axum::http::request::Parts) -> usize {
        match parts.method == axum::http::Method::POST {
            true => aura_contract::limits::MCP_MESSAGE_BYTES_MAX,
            // A GET (the stream) or DELETE (the session's end) has no message.
            false => 0,
        }
    }

    fn needed(&self, _parts: &axum::http::request::Parts, body: &[u8]) -> Vec<&'static str> {
        use aura_http::auth::{SCOPE_ACT, SCOPE_READ};
        // What is not a message gets the server's own error, behind the read scope.
        let parsed: Value = serde_json::from_slice(body).unwrap_or_default();
        let messages = match &parsed {
            Value::Array(batch) => batch.as_slice(),
            one => std::slice::from_ref(one),
        };
        let acts = messages.iter().any(|message| {
            message["method"] == "tools/call"
                && message["params"]["name"]
                    .as_str()
                    .and_then(|name| self.0.get(name))
                    .is_some_and(|entry| entry.spec.confirm_required)
        });
        match acts {
            true => vec![SCOPE_READ, SCOPE_ACT],
            false => vec![SCOPE_READ],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_catalogue_tool_is_listed_with_its_schemas() {
        let tools = Tools::from_catalogue();
        let count: usize = catalogue::CATALOGUE.iter().map(|a| a.tools.len()).sum();
        assert_eq!(tools.entries.len(), count);
        for entry in &tools.entries {
            let tool = &entry.tool;
            assert_eq!(
                tool.name,
                format!("{}.{}", entry.agent.name, entry.spec.name)
            );
            let args: Value = serde_json::from_str(entry.spec.args_schema.text).unwrap();
            let result: Value = serde_json::from_str(entry.spec.result_schema.text).unwrap();
            assert_eq!(Value::Object((*tool.input_schema).clone()), args);
            assert_eq!(
                Value::Object((**tool.output_schema.as_ref().unwrap()).clone()),
                result
            );
            // MCP asks for an object root on both.
            assert_eq!(args["type"], "object");
            assert_eq!(result["type"], "object");
            let description = tool.description.as_deref().unwrap();
            assert!(
                description.starts_with(char::is_uppercase)
                    && !description.contains("Arguments of"),
                "{description}"
            );
            assert!(description.contains("\n\nReturns: "), "{description}");
            let annotations = tool.annotations.as_ref().unwrap();
            assert_eq!(
                annotations.read_only_hint,
                Some(!entry.spec.confirm_required)
            );
        }
    }
}
