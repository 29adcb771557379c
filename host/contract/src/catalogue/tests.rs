//! Tests of the catalogue module.

use super::*;

#[test]
fn news_rules_name_their_subjects() {
    let interrupt = news("interrupt", "message", 0, 75, true);
    assert_eq!(
        interrupt.subject_of("interrupt:m-1"),
        Some("message:m-1".into())
    );
    assert_eq!(interrupt.subject_of("top:m-1"), None);
    assert_eq!(
        interrupt.subject_of("interrupt"),
        None,
        "no value: no signal"
    );
    let high = state("level", "high", "stress", 2, 60);
    assert_eq!(high.subject_of("level:high"), Some("stress".into()));
    assert_eq!(high.subject_of("level:moderate"), None);
    let score = measure("stress", "break", 70);
    assert_eq!(score.subject_of("stress:82"), Some("break".into()));
    assert_eq!(score.subject_of("stress:61"), Some("break".into()));
    assert_eq!(score.retell_after(60).retell, Retell::AfterMinutes(60));
    // A day's news is news again at the person's next midnight, in their offset.
    let told = time::macros::datetime!(2026-11-23 23:30 +01:00);
    assert_eq!(
        Retell::NewDay.until(told),
        Some(time::macros::datetime!(2026-11-24 00:00 +01:00))
    );
    assert_eq!(
        Retell::AfterMinutes(60).until(told),
        Some(time::macros::datetime!(2026-11-24 00:30 +01:00))
    );
    assert_eq!(Retell::Never.until(told), None);
}
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
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../schemas");
    let mut on_disk = BTreeSet::new();
    files_under(&root, &root, &mut on_disk);
    let mut in_catalogue: BTreeSet<String> = all_schemas().map(|s| s.path.to_owned()).collect();
    // The catalogue embeds each schema with include_str!, so a missing file fails the
    // build; this checks the other direction too, and that nothing is listed twice.
    // Beside the schemas, each agent's tick examples (also embedded).
    let schemas = in_catalogue.len();
    in_catalogue.extend(
        CATALOGUE
            .iter()
            .map(|agent| format!("{}/tick.examples.json", agent.name)),
    );
    assert_eq!(in_catalogue.len(), schemas + CATALOGUE.len());
    assert_eq!(on_disk, in_catalogue);
    assert_eq!(all_schemas().count(), schemas);
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
fn only_the_entries_that_say_so_read_a_component_past_the_default_bound() {
    use crate::limits::{COMPONENT_BYTES_MAX, INTERPRETED_COMPONENT_BYTES_MAX};
    let larger: Vec<&str> = CATALOGUE
        .iter()
        .filter(|agent| agent.component_bytes_max > COMPONENT_BYTES_MAX)
        .map(|agent| agent.name)
        .collect();
    // wellness, which also ships in Python (CPython inside the component).
    assert_eq!(larger, ["wellness"]);
    for agent in CATALOGUE {
        assert!(agent.component_bytes_max <= INTERPRETED_COMPONENT_BYTES_MAX);
    }
    assert_eq!(
        crate::catalogue::component_bytes_max("wellness"),
        INTERPRETED_COMPONENT_BYTES_MAX
    );
    assert_eq!(
        crate::catalogue::component_bytes_max("zzz"),
        COMPONENT_BYTES_MAX
    );
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
    crate::schema::SchemaRegistry::compile(all_schemas())
        .unwrap()
        .compile_all()
        .unwrap();
}

#[test]
fn the_live_schemas_are_the_scenario_s_parts_and_its_bounds_are_the_limits() {
    let mut schemas = crate::schema::SchemaRegistry::compile(all_schemas()).unwrap();
    schemas.derive(&DERIVED_SCHEMAS).unwrap();
    schemas.compile_all().unwrap();
    // A live signal is a scenario's signal: `at` required (the session fills it in), the kinds
    // and their data checked as in a scenario.
    let signal = serde_json::json!({"at": "2026-11-23T08:00:00+01:00", "kind": "reading",
        "data": {"hrv_ms": 40}});
    schemas
        .validate(LIVE_SIGNAL_SCHEMA.path, &signal, "")
        .unwrap();
    for bad in [
        serde_json::json!({"kind": "reading", "data": {"hrv_ms": 40}}),
        serde_json::json!({"at": "2026-11-23T08:00:00+01:00", "kind": "teleport", "data": {}}),
        serde_json::json!({"at": "2026-11-23T08:00:00+01:00", "kind": "reading", "data": {"hrv_ms": "x"}}),
        serde_json::json!({"at": "2026-11-23T08:00:00+01:00", "kind": "answer",
            "data": {"question": "t_0123456789", "reply": "maybe"}}),
    ] {
        assert!(
            schemas.validate(LIVE_SIGNAL_SCHEMA.path, &bad, "").is_err(),
            "{bad}"
        );
    }
    let by_question = serde_json::json!({"at": "2026-11-23T08:00:00+01:00", "kind": "answer",
        "data": {"question": "t_0123456789", "reply": "later"}});
    schemas
        .validate(LIVE_SIGNAL_SCHEMA.path, &by_question, "")
        .unwrap();
    // live.v1: a setup without a day; a day's fields are refused.
    let setup = serde_json::json!({"scenario": "me", "tick_minutes": 15, "utc_offset_minutes": 60,
        "profile": {}, "tick_on": ["message"]});
    schemas
        .validate(LIVE_SETUP_SCHEMA.path, &setup, "")
        .unwrap();
    let mut with_day = setup.clone();
    with_day["signals"] = serde_json::json!([]);
    assert!(
        schemas
            .validate(LIVE_SETUP_SCHEMA.path, &with_day, "")
            .is_err()
    );
    // The scenario's signal bound is the limit's.
    let scenario: Value = serde_json::from_str(SCENARIO_SCHEMA.text).unwrap();
    assert_eq!(
        scenario["properties"]["signals"]["maxItems"].as_u64(),
        Some(crate::limits::SCENARIO_SIGNALS_MAX as u64)
    );
    // What a day's memory carries is bounded by the limits'.
    let memory = &scenario["properties"]["initial"]["properties"]["memory"]["properties"];
    for key in ["shown", "held", "answered", "told"] {
        assert_eq!(
            memory[key]["maxProperties"].as_u64(),
            Some(crate::limits::CARRIED_MEMORY_KEYS_MAX as u64),
            "{key}"
        );
    }
    let budgets = crate::limits::WATCH_INTERRUPTIONS_PER_WINDOW_MAX
        + crate::limits::PHONE_CARD_INTERRUPTIONS_PER_WINDOW_MAX
        + crate::limits::EARBUD_TTS_INTERRUPTIONS_PER_WINDOW_MAX;
    assert_eq!(
        memory["interruptions"]["maxItems"].as_u64(),
        Some(budgets as u64)
    );
}

#[test]
fn every_tool_has_its_lead_and_a_summary_that_reads_any_result() {
    let mut leads = BTreeSet::new();
    for agent in CATALOGUE {
        for tool in agent.tools {
            assert!(
                !tool.rationale_lead.is_empty(),
                "{}.{}",
                agent.name,
                tool.name
            );
            assert!(
                leads.insert(tool.rationale_lead),
                "{}: lead used twice",
                tool.name
            );
            // A result missing every field still reads (placeholders, no panic).
            for result in [serde_json::json!({}), Value::Null] {
                let told = (tool.summarize)(&result, &Telling::default());
                assert!(!told.is_empty(), "{}", tool.name);
                let line = (tool.headline)(&result, &Telling::default());
                assert!(!line.is_empty(), "{}", tool.name);
            }
            // Only a tool that is asked before it runs changes the world on a yes, or is
            // bound to an item the user answers about.
            if tool.on_confirm.is_some() || tool.question.is_some() || tool.about.is_some() {
                assert!(tool.confirm_required, "{}.{}", agent.name, tool.name);
            }
        }
    }
}

/// Every string a result names things by (ids, the events of a clash, a message's address)
/// that a person must never be shown.
fn ids_in(value: &Value, found: &mut Vec<String>) {
    match value {
        Value::Object(members) => {
            for (key, member) in members {
                let names = matches!(
                    key.as_str(),
                    "id" | "a"
                        | "b"
                        | "from"
                        | "to"
                        | "with"
                        | "duplicate_of"
                        | "last_transaction_id"
                        | "transaction_ids"
                        | "rule_id"
                );
                match member {
                    Value::String(id) if names => found.push(id.clone()),
                    Value::Array(ids) if names => {
                        found.extend(ids.iter().filter_map(Value::as_str).map(str::to_owned))
                    }
                    other => ids_in(other, found),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|item| ids_in(item, found)),
        _ => {}
    }
}

#[test]
fn every_tool_tells_its_examples_in_words_on_every_surface() {
    use crate::limits::{SPEECH_WORDS_MAX, WATCH_LINE_CHARS_MAX};
    // Monday 2026-11-23 08:00 in Berlin: times are told as the person's day.
    let clock = (
        time::macros::offset!(+1),
        time::macros::datetime!(2026-11-23 07:00 UTC),
    );
    let telling = Telling {
        clock: Some(clock),
        ..Telling::default()
    };
    for agent in CATALOGUE {
        for tool in agent.tools {
            let schema: Value = serde_json::from_str(tool.result_schema.text).unwrap();
            let examples = schema["examples"].as_array().cloned().unwrap_or_default();
            assert!(
                !examples.is_empty(),
                "{}.{}: no example",
                agent.name,
                tool.name
            );
            for result in &examples {
                let mut ids = Vec::new();
                ids_in(result, &mut ids);
                let card = (tool.summarize)(result, &telling);
                let line = (tool.headline)(result, &telling);
                for text in [&card, &line] {
                    assert!(raw_numbers(text).is_empty(), "{}: {text}", tool.name);
                    for id in &ids {
                        assert!(!text.contains(id.as_str()), "{}: {id} in {text}", tool.name);
                    }
                }
                // The examples' names are of usual length: the line fits without a cut.
                assert!(
                    line.chars().count() <= WATCH_LINE_CHARS_MAX,
                    "{}: {line}",
                    tool.name
                );
                assert!(
                    line.split_whitespace().count() <= SPEECH_WORDS_MAX,
                    "{}: {line}",
                    tool.name
                );
            }
        }
    }
}

#[test]
fn every_allowed_call_names_a_catalogue_tool_of_another_agent_that_needs_no_yes() {
    for agent in CATALOGUE {
        for &(callee, name) in agent.may_call {
            let spec = tool(callee, name)
                .unwrap_or_else(|| panic!("{}: {callee}.{name} is not catalogued", agent.name));
            assert_ne!(callee, agent.name, "{}: calls itself", agent.name);
            assert!(
                !spec.confirm_required,
                "{}: {callee}.{name} needs the user's yes",
                agent.name
            );
            assert!(agent.may_call(callee, name));
        }
    }
    // What the agents do today: wellness's break asks calendar for free slots, and
    // calendar's scheduled event asks wellness for a break after it.
    assert!(
        agent("wellness")
            .unwrap()
            .may_call("calendar", "find_free_slots")
    );
    assert!(
        agent("calendar")
            .unwrap()
            .may_call("wellness", "suggest_break")
    );
    assert!(
        !agent("wellness")
            .unwrap()
            .may_call("calendar", "schedule_event")
    );
    assert!(!agent("comms").unwrap().may_call("finance", "budget_status"));
}

#[test]
fn a_call_reaches_its_agent_and_every_agent_it_may_call_in_turn() {
    // calendar may call wellness.suggest_break, wellness may call
    // calendar.find_free_slots; comms and finance call no one.
    assert_eq!(reachable_from("calendar"), ["calendar", "wellness"]);
    assert_eq!(reachable_from("wellness"), ["wellness", "calendar"]);
    assert_eq!(reachable_from("comms"), ["comms"]);
    assert_eq!(reachable_from("finance"), ["finance"]);
    assert!(reachable_from("mallory").is_empty());
}

#[test]
fn a_tool_without_its_own_question_is_asked_plainly() {
    let spec = tool("finance", "budget_status").unwrap();
    assert_eq!(
        spec.question_text(&Value::Null, &Telling::default()),
        "A budget is over or at risk. Go ahead? (yes / no)"
    );
    // Every tool that needs the user's yes asks in its own words.
    for agent in CATALOGUE {
        for tool in agent.tools.iter().filter(|t| t.confirm_required) {
            assert!(tool.question.is_some(), "{}.{}", agent.name, tool.name);
        }
    }
}

#[test]
fn lookups() {
    assert!(tool("calendar", "find_free_slots").is_some());
    assert!(tool("calendar", "schedule_event").unwrap().confirm_required);
    assert!(tool("calendar", "transfer_money").is_none());
    assert!(tool("orchestrator", "find_free_slots").is_none());
    assert!(agent("mallory").is_none());
}
