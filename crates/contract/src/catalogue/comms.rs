//! The comms agent's tools: triage of the inbox, a drafted reply, and the action items of a
//! thread.
//!
//! Each tool's whole entry is here; it must not hold any check (the schemas and the crossing
//! do) nor any decision (the orchestrator does).

use serde_json::Value;
use time::format_description::well_known::Rfc3339;
use time::{Duration, OffsetDateTime};

use super::text::{count, number, text};
use super::{AgentSpec, ResultNews, Telling, news, tick_examples, tool_entry};
use crate::limits::{
    ACTION_DUE_SOON_MINUTES, COMPONENT_BYTES_MAX, DEADLINE_MS_DEFAULT, MEMORY_BYTES_MAX,
};

pub(super) const AGENT: AgentSpec = AgentSpec {
    name: "comms",
    memory_bytes_max: MEMORY_BYTES_MAX,
    component_bytes_max: COMPONENT_BYTES_MAX,
    tools: &[
        tool_entry!("comms", "triage_inbox",
        deadline_ms: DEADLINE_MS_DEFAULT,
        confirm: false,
        rationale: "New mail is worth a look",
        summary: triaged,
        question: None,
        on_confirm: None,
        about: None,
        news: &[
            // The messages the agent says need the user now; the count, the top of the
            // list and the other context are not news.
            news("interrupt", "message", 0, 75, true),
        ],
        news_in_result: Some(ResultNews {
            items: "messages",
            subject: message_subject,
            importance: message_importance,
        })),
        tool_entry!("comms", "draft_reply",
            deadline_ms: DEADLINE_MS_DEFAULT,
            confirm: false,
            rationale: "A reply can be drafted",
            summary: drafted,
            question: None,
            on_confirm: None,
            about: None,
            news: &[],
            news_in_result: None),
        tool_entry!("comms", "extract_action_items",
        deadline_ms: DEADLINE_MS_DEFAULT,
        confirm: false,
        rationale: "A thread carries dated commitments",
        summary: action_items,
        question: None,
        on_confirm: None,
        about: None,
        // Which items are new is known only from the answer.
        news: &[],
        news_in_result: Some(ResultNews {
            items: "items",
            subject: action_item_subject,
            importance: action_item_importance,
        })),
    ],
    // comms answers from its args alone.
    may_call: &[],
    tick_examples: tick_examples!("comms"),
};

fn triaged(result: &Value, _telling: &Telling<'_>) -> String {
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

/// A message's subject, as the `interrupt` signal names it (`message:<id>`).
fn message_subject(message: &Value) -> String {
    format!("message:{}", text(&message["id"]))
}

/// A message the agent says needs the user now may interrupt; the rest is the inbox.
fn message_importance(message: &Value, _now: OffsetDateTime) -> u8 {
    match message["interrupt"].as_bool() {
        Some(true) => 75,
        _ => 10,
    }
}

/// An action item's subject: `action:<digest of owner and text>`. The same sentence from the
/// same owner is the same item, whichever thread or tick it is found in.
fn action_item_subject(item: &Value) -> String {
    use sha2::{Digest, Sha256};
    let owner = item["owner"].as_str().unwrap_or("");
    let text = item["text"].as_str().unwrap_or("");
    let digest = Sha256::digest(format!("{owner}\n{text}"));
    let short: String = digest[..6].iter().map(|b| format!("{b:02x}")).collect();
    format!("action:{short}")
}

/// Something asked of the user with a due time is a card when it is due before the day is
/// out, and cannot wait at all when it is due within [`ACTION_DUE_SOON_MINUTES`]. The rest
/// waits for the digest: due later, no due time, someone else's task, or the user's own
/// promise (they wrote it a moment ago).
fn action_item_importance(item: &Value, now: OffsetDateTime) -> u8 {
    let mine = item["owner"] == "me" && item["owner_rule"] != "commitment";
    let due = item["due"]
        .as_str()
        .and_then(|due| OffsetDateTime::parse(due, &Rfc3339).ok());
    match (mine, due) {
        (true, Some(due)) if due - now <= Duration::minutes(ACTION_DUE_SOON_MINUTES) => 85,
        (true, Some(due)) if due - now <= Duration::hours(12) => 55,
        _ => 25,
    }
}

fn drafted(result: &Value, _telling: &Telling<'_>) -> String {
    format!(
        "Draft to {}: {}",
        text(&result["to"]),
        text(&result["subject"])
    )
}

fn action_items(result: &Value, telling: &Telling<'_>) -> String {
    match result["items"].get(0) {
        Some(item) => format!(
            "{} action item(s); first: \"{}\"{}",
            count(result, "items"),
            text(&item["text"]),
            match item.get("due") {
                Some(due) => format!(" due {}", telling.when(due)),
                None => String::new(),
            }
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
            triaged(&triage, &Telling::default()),
            "2 message(s) triaged, 1 need you now; top: m1 (urgency 0.734)"
        );
        let items = json!({"items": [{"text": "Send the Q3 numbers", "due": "2026-11-27"}]});
        assert_eq!(
            action_items(&items, &Telling::default()),
            "1 action item(s); first: \"Send the Q3 numbers\" due 2026-11-27"
        );
        assert_eq!(
            action_items(&json!({"items": []}), &Telling::default()),
            "No action items"
        );
        assert_eq!(
            drafted(
                &json!({"to": "ann@example.com", "subject": "Re: Budget"}),
                &Telling::default()
            ),
            "Draft to ann@example.com: Re: Budget"
        );
    }
}
