//! The comms agent's tools: triage of the inbox, a drafted reply, and the action items of a
//! thread.
//!
//! Each tool's whole entry is here; it must not hold any check (the schemas and the crossing
//! do) nor any decision (the orchestrator does).

use serde_json::Value;

use super::text::{count, number, text};
use super::{AgentSpec, tool_entry};
use crate::limits::{DEADLINE_MS_DEFAULT, MEMORY_BYTES_MAX};

pub(super) const AGENT: AgentSpec = AgentSpec {
    name: "comms",
    memory_bytes_max: MEMORY_BYTES_MAX,
    tools: &[
        tool_entry!("comms", "triage_inbox",
            deadline_ms: DEADLINE_MS_DEFAULT,
            confirm: false,
            rationale: "New mail is worth a look",
            summary: triaged,
            question: None,
            on_confirm: None,
            about: None),
        tool_entry!("comms", "draft_reply",
            deadline_ms: DEADLINE_MS_DEFAULT,
            confirm: false,
            rationale: "A reply can be drafted",
            summary: drafted,
            question: None,
            on_confirm: None,
            about: None),
        tool_entry!("comms", "extract_action_items",
            deadline_ms: DEADLINE_MS_DEFAULT,
            confirm: false,
            rationale: "A thread carries dated commitments",
            summary: action_items,
            question: None,
            on_confirm: None,
            about: None),
    ],
    // comms answers from its args alone.
    may_call: &[],
};

fn triaged(result: &Value) -> String {
    let top = result["messages"].get(0).map_or(String::new(), |message| {
        format!(
            "; top: {} (urgency {})",
            text(&message["id"]),
            message["urgency"].as_f64().unwrap_or(0.0)
        )
    });
    format!(
        "{} message(s) triaged, {} need you now{top}",
        count(result, "messages"),
        number(&result["interrupt_count"])
    )
}

fn drafted(result: &Value) -> String {
    format!(
        "Draft to {}: {}",
        text(&result["to"]),
        text(&result["subject"])
    )
}

fn action_items(result: &Value) -> String {
    match result["items"].get(0) {
        Some(item) => format!(
            "{} action item(s); first: \"{}\"{}",
            count(result, "items"),
            text(&item["text"]),
            item["due"]
                .as_str()
                .map_or(String::new(), |due| format!(" due {due}"))
        ),
        None => "No action items".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn summaries_read_the_result() {
        let triage = json!({"messages": [{"id": "m1", "urgency": 0.734}, {"id": "m2",
            "urgency": 0.1}], "interrupt_count": 1});
        assert_eq!(
            triaged(&triage),
            "2 message(s) triaged, 1 need you now; top: m1 (urgency 0.734)"
        );
        let items = json!({"items": [{"text": "Send the Q3 numbers", "due": "2026-11-27"}]});
        assert_eq!(
            action_items(&items),
            "1 action item(s); first: \"Send the Q3 numbers\" due 2026-11-27"
        );
        assert_eq!(action_items(&json!({"items": []})), "No action items");
        assert_eq!(
            drafted(&json!({"to": "ann@example.com", "subject": "Re: Budget"})),
            "Draft to ann@example.com: Re: Budget"
        );
    }
}
