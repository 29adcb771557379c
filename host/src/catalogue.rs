//! The catalogue: the locked set of (agent, tool) pairs the host will dispatch (ADR-0009).
//!
//! It owns the list itself, compiled into the binary with every schema it names, so a phone
//! build carries it and nothing is read from disk at run time. Adding a tool is a code change
//! here plus its two schema files. It must not validate anything itself (the crossing does, with
//! the schema registry) and it must not learn tools from plugins: a plugin that claims a tool
//! outside this list is refused.

use serde::Serialize;

use crate::limits::{DEADLINE_MS_DEFAULT, MEMORY_BYTES_MAX};
use crate::schema::SchemaSource;
use crate::schema_source;

/// One tool an agent implements.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct ToolSpec {
    /// Tool name as it appears in toolcall.v1 `tool`.
    pub name: &'static str,
    /// Schema the call's `args` must satisfy.
    #[serde(serialize_with = "serialize_schema_id")]
    pub args_schema: SchemaSource,
    /// Schema the agent's result must satisfy.
    #[serde(serialize_with = "serialize_schema_id")]
    pub result_schema: SchemaSource,
    /// Deadline when the envelope carries no `deadline_ms`.
    pub deadline_ms_default: u64,
    /// Whether the user must confirm before the orchestrator executes this tool.
    pub confirm_required: bool,
}

/// One agent and the tools it must implement, exactly.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct AgentSpec {
    /// Agent name as it appears in toolcall.v1 `agent` and in plugins/manifest.json.
    pub name: &'static str,
    /// Linear memory one call of this agent may grow to (at most
    /// [`MEMORY_BYTES_CEILING`](crate::limits::MEMORY_BYTES_CEILING)).
    pub memory_bytes_max: usize,
    /// Every tool of the agent, no more and no less than its manifest must claim.
    pub tools: &'static [ToolSpec],
}

fn serialize_schema_id<S: serde::Serializer>(
    source: &SchemaSource,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(&source.id())
}

/// A tool's two schemas follow one naming rule: `schemas/<agent>/<tool>.{args,result}.json`.
macro_rules! tool {
    ($agent:literal, $tool:literal, deadline_ms: $deadline:expr, confirm: $confirm:expr) => {
        ToolSpec {
            name: $tool,
            args_schema: schema_source!(concat!($agent, "/", $tool, ".args.json")),
            result_schema: schema_source!(concat!($agent, "/", $tool, ".result.json")),
            deadline_ms_default: $deadline,
            confirm_required: $confirm,
        }
    };
}

/// The envelope schemas every crossing uses.
pub const TOOLCALL_SCHEMA: SchemaSource = schema_source!("toolcall.v1.json");
/// See [`TOOLCALL_SCHEMA`].
pub const RESULT_SCHEMA: SchemaSource = schema_source!("result.v1.json");
/// See [`TOOLCALL_SCHEMA`].
pub const REPLY_SCHEMA: SchemaSource = schema_source!("reply.v1.json");
/// See [`TOOLCALL_SCHEMA`].
pub const MANIFEST_SCHEMA: SchemaSource = schema_source!("manifest.v1.json");
/// See [`TOOLCALL_SCHEMA`].
pub const PROPOSALS_SCHEMA: SchemaSource = schema_source!("proposals.v1.json");

/// The orchestrator's input (a scenario file) and output (a reasoning trace).
pub const SCENARIO_SCHEMA: SchemaSource = schema_source!("scenario.v1.json");
/// See [`SCENARIO_SCHEMA`].
pub const TRACE_SCHEMA: SchemaSource = schema_source!("trace.v1.json");

/// The host's own schemas (envelopes, scenario, trace), in one list.
pub const ENVELOPE_SCHEMAS: [SchemaSource; 7] = [
    TOOLCALL_SCHEMA,
    RESULT_SCHEMA,
    REPLY_SCHEMA,
    MANIFEST_SCHEMA,
    PROPOSALS_SCHEMA,
    SCENARIO_SCHEMA,
    TRACE_SCHEMA,
];

/// The locked catalogue.
pub const CATALOGUE: &[AgentSpec] = &[
    AgentSpec {
        name: "calendar",
        memory_bytes_max: MEMORY_BYTES_MAX,
        tools: &[
            tool!("calendar", "find_free_slots", deadline_ms: DEADLINE_MS_DEFAULT, confirm: false),
            tool!("calendar", "detect_conflicts", deadline_ms: DEADLINE_MS_DEFAULT, confirm: false),
            tool!("calendar", "schedule_event", deadline_ms: DEADLINE_MS_DEFAULT, confirm: true),
        ],
    },
    AgentSpec {
        name: "wellness",
        memory_bytes_max: MEMORY_BYTES_MAX,
        tools: &[
            tool!("wellness", "stress_score", deadline_ms: DEADLINE_MS_DEFAULT, confirm: false),
            tool!("wellness", "sleep_summary", deadline_ms: DEADLINE_MS_DEFAULT, confirm: false),
            tool!("wellness", "suggest_break", deadline_ms: DEADLINE_MS_DEFAULT, confirm: false),
        ],
    },
    // finance takes up to 2000 transactions per call: measured at that bound, 46-61 M fuel, and
    // 76 M for the worst anomaly result (100 flagged records); 2 s (200 M fuel at the default
    // rate) leaves 2.6x headroom where the 1 s default would leave 1.3x.
    AgentSpec {
        name: "finance",
        memory_bytes_max: MEMORY_BYTES_MAX,
        tools: &[
            tool!("finance", "categorize_transactions", deadline_ms: 2_000, confirm: false),
            tool!("finance", "budget_status", deadline_ms: 2_000, confirm: false),
            tool!("finance", "detect_anomalies", deadline_ms: 2_000, confirm: false),
            tool!("finance", "upcoming_bills", deadline_ms: 2_000, confirm: false),
        ],
    },
    AgentSpec {
        name: "comms",
        memory_bytes_max: MEMORY_BYTES_MAX,
        tools: &[
            tool!("comms", "triage_inbox", deadline_ms: DEADLINE_MS_DEFAULT, confirm: false),
            tool!("comms", "draft_reply", deadline_ms: DEADLINE_MS_DEFAULT, confirm: false),
            tool!("comms", "extract_action_items", deadline_ms: DEADLINE_MS_DEFAULT, confirm: false),
        ],
    },
];

/// The agent named `agent`, if the catalogue has it.
pub fn agent(agent: &str) -> Option<&'static AgentSpec> {
    CATALOGUE.iter().find(|spec| spec.name == agent)
}

/// The tool `tool` of `agent`, if the catalogue has the pair.
pub fn tool(agent: &str, tool: &str) -> Option<&'static ToolSpec> {
    self::agent(agent)?
        .tools
        .iter()
        .find(|spec| spec.name == tool)
}

/// Every schema the host compiles: the envelopes plus each tool's args and result.
pub fn all_schemas() -> impl Iterator<Item = &'static SchemaSource> {
    ENVELOPE_SCHEMAS.iter().chain(
        CATALOGUE
            .iter()
            .flat_map(|agent| agent.tools.iter())
            .flat_map(|tool| [&tool.args_schema, &tool.result_schema]),
    )
}

/// The catalogue as JSON, for `aura catalogue`.
pub fn to_json() -> serde_json::Value {
    serde_json::json!({ "agents": CATALOGUE })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limits::{DEADLINE_MS_MAX, DEADLINE_MS_MIN};
    use std::collections::BTreeSet;
    use std::path::Path;

    fn files_under(dir: &Path, root: &Path, out: &mut BTreeSet<String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                files_under(&path, root, out);
            } else {
                let relative = path.strip_prefix(root).unwrap();
                out.insert(relative.to_str().unwrap().replace('\\', "/"));
            }
        }
    }

    #[test]
    fn every_schema_file_is_used_and_every_entry_has_its_schemas() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../schemas");
        let mut on_disk = BTreeSet::new();
        files_under(&root, &root, &mut on_disk);
        let in_catalogue: BTreeSet<String> = all_schemas().map(|s| s.path.to_owned()).collect();
        // The catalogue embeds each schema with include_str!, so a missing file fails the
        // build; this checks the other direction too, and that nothing is listed twice.
        assert_eq!(on_disk, in_catalogue);
        assert_eq!(all_schemas().count(), in_catalogue.len());
    }

    #[test]
    fn names_are_unique_and_deadlines_in_range() {
        let agents: BTreeSet<_> = CATALOGUE.iter().map(|a| a.name).collect();
        assert_eq!(agents.len(), CATALOGUE.len());
        for agent in CATALOGUE {
            let tools: BTreeSet<_> = agent.tools.iter().map(|t| t.name).collect();
            assert_eq!(tools.len(), agent.tools.len(), "{}", agent.name);
            for tool in agent.tools {
                assert!(
                    (DEADLINE_MS_MIN..=DEADLINE_MS_MAX).contains(&tool.deadline_ms_default),
                    "{}.{}",
                    agent.name,
                    tool.name
                );
            }
        }
    }

    #[test]
    fn the_build_compiles_exactly_the_catalogues_agents() {
        let built: BTreeSet<_> = crate::agent_crates::AGENT_CRATES.iter().copied().collect();
        let listed: BTreeSet<_> = CATALOGUE.iter().map(|agent| agent.name).collect();
        assert_eq!(built, listed);
        assert_eq!(built.len(), crate::agent_crates::AGENT_CRATES.len());
    }

    #[test]
    fn memory_limits_fit_the_pool() {
        for agent in CATALOGUE {
            assert!(agent.memory_bytes_max <= crate::limits::MEMORY_BYTES_CEILING);
            assert!(
                agent.memory_bytes_max >= 2 * 1024 * 1024,
                "{}: too small to start",
                agent.name
            );
        }
    }

    #[test]
    fn every_schema_compiles() {
        crate::schema::SchemaRegistry::compile(all_schemas()).unwrap();
    }

    #[test]
    fn lookups() {
        assert!(tool("calendar", "find_free_slots").is_some());
        assert!(tool("calendar", "schedule_event").unwrap().confirm_required);
        assert!(tool("calendar", "transfer_money").is_none());
        assert!(tool("orchestrator", "find_free_slots").is_none());
        assert!(agent("mallory").is_none());
    }
}
