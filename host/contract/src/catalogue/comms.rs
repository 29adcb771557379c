//! The comms agent's tools: triage of the inbox, a drafted reply, and the action items of a
//! thread.
//!
//! Each tool's whole entry is here; it must not hold any check (the schemas and the crossing
//! do) nor any decision (the orchestrator does).

use serde_json::Value;
use time::format_description::well_known::Rfc3339;
use time::{Duration, OffsetDateTime};

use super::text::{counted, person, text};
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
        headline: triaged_headline,
        ends: None,
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
            headline: drafted,
            ends: None,
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
        headline: action_items_headline,
        ends: None,
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

/// The message `entry` of a triage result names, as a person says it: "Markus Vogel: Bridge
/// at 8:30"; "a message" when the inbox does not have it (never its id).
fn message_words(entry: &Value, telling: &Telling<'_>) -> String {
    match telling.message(&entry["id"]) {
        Some(message) => {
            let subject = message["subject"].as_str().unwrap_or("").trim();
            match subject.is_empty() {
                true => format!("{} wrote", person(&message["sender"])),
                false => format!("{}: {subject}", person(&message["sender"])),
            }
        }
        None => "a message".to_owned(),
    }
}

/// The messages that need the person now, and the rest.
fn split_triage(result: &Value) -> (Vec<&Value>, Vec<&Value>) {
    result["messages"]
        .as_array()
        .map_or(&[][..], Vec::as_slice)
        .iter()
        .partition(|m| m["interrupt"] == true)
}

/// The card: each message that needs the person now by sender and subject (the most urgent
/// first, three at most), then how many more wait.
fn triaged(result: &Value, telling: &Telling<'_>) -> String {
    let (now, rest) = split_triage(result);
    let mut parts: Vec<String> = now
        .iter()
        .take(3)
        .map(|m| message_words(m, telling))
        .collect();
    let more_now = now.len().saturating_sub(3);
    if more_now > 0 {
        parts.push(format!("{more_now} more need you"));
    }
    if parts.is_empty() {
        return match rest.first() {
            Some(first) => format!(
                "{}, none urgent; first: {}",
                counted(rest.len(), "new message", "new messages"),
                message_words(first, telling)
            ),
            None => "No new messages".to_owned(),
        };
    }
    if !rest.is_empty() {
        parts.push(format!(
            "{} can wait",
            counted(rest.len(), "other", "others")
        ));
    }
    parts.join("; ")
}

/// The line: the most urgent message by sender and subject, and how many more need the person
/// (none urgent: the first by sender and subject, and how many more came).
fn triaged_headline(result: &Value, telling: &Telling<'_>) -> String {
    let (now, rest) = split_triage(result);
    match now.first() {
        Some(first) if now.len() > 1 => {
            format!(
                "{} (and {} more)",
                message_words(first, telling),
                now.len() - 1
            )
        }
        Some(first) => message_words(first, telling),
        None => match rest.split_first() {
            None => "No new messages".to_owned(),
            Some((only, [])) => message_words(only, telling),
            Some((first, more)) => {
                format!(
                    "{} (and {} more)",
                    message_words(first, telling),
                    more.len()
                )
            }
        },
    }
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
        "Reply drafted to {}: {}",
        person(&result["to"]),
        text(&result["subject"])
    )
}

/// One action item: "To do: Pick up Emil, due today 16:30" when it is the person's own,
/// "Noted: Anna will call your CEO" when it is someone else's (or no one's).
fn action_item_words(item: &Value, telling: &Telling<'_>) -> String {
    let text = item["text"]
        .as_str()
        .unwrap_or("")
        .trim()
        .trim_end_matches('.');
    let whose = match item["owner"] == "me" {
        true => "To do",
        false => "Noted",
    };
    match item.get("due") {
        Some(due) => format!("{whose}: {text}, due {}", telling.when(due)),
        None => format!("{whose}: {text}"),
    }
}

/// The card: the items by what they ask and when, the most pressing first (two at most),
/// then how many more.
fn action_items(result: &Value, telling: &Telling<'_>) -> String {
    let items = result["items"].as_array().map_or(&[][..], Vec::as_slice);
    if items.is_empty() {
        return "Nothing to do from this thread".to_owned();
    }
    let mut parts: Vec<String> = items
        .iter()
        .take(2)
        .map(|item| action_item_words(item, telling))
        .collect();
    if items.len() > 2 {
        parts.push(format!("{} more", items.len() - 2));
    }
    parts.join("; ")
}

/// The line: the most pressing item.
fn action_items_headline(result: &Value, telling: &Telling<'_>) -> String {
    match result["items"].get(0) {
        Some(item) => action_item_words(item, telling),
        None => "Nothing to do from this thread".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn summaries_name_senders_and_subjects() {
        let inbox = [
            json!({"id": "m1", "sender": "Markus Vogel <markus.vogel@halden-systems.de>",
                "subject": "URGENT: settlement batch failed"}),
            json!({"id": "m2", "sender": "jonas.richter@gmx.de", "subject": "Emil"}),
            json!({"id": "m3", "sender": "GitHub <noreply@github.com>", "subject": ""}),
        ];
        let telling = Telling {
            messages: &inbox,
            ..Telling::default()
        };
        let triage = json!({"messages": [
            {"id": "m1", "urgency": 0.734, "interrupt": true},
            {"id": "m2", "urgency": 0.61, "interrupt": true},
            {"id": "m3", "urgency": 0.1, "interrupt": false}], "interrupt_count": 2});
        assert_eq!(
            triaged(&triage, &telling),
            "Markus Vogel: URGENT: settlement batch failed; Jonas Richter: Emil; 1 other can wait"
        );
        assert_eq!(
            triaged_headline(&triage, &telling),
            "Markus Vogel: URGENT: settlement batch failed (and 1 more)"
        );
        // Nothing urgent; a message the inbox does not hold is "a message", never its id.
        let calm = json!({"messages": [{"id": "m3", "interrupt": false},
            {"id": "m-gone", "interrupt": false}]});
        assert_eq!(
            triaged(&calm, &telling),
            "2 new messages, none urgent; first: GitHub wrote"
        );
        assert_eq!(
            triaged_headline(&calm, &telling),
            "GitHub wrote (and 1 more)"
        );
        let gone = json!({"messages": [{"id": "m-gone", "interrupt": true}]});
        assert_eq!(triaged_headline(&gone, &telling), "a message");
        let items = json!({"items": [{"text": "Send the Q3 numbers.", "due": "2026-11-27",
            "owner": "me"}, {"text": "Anna books the room", "owner": "Anna"}, {"text": "a"},
            {"text": "b"}]});
        assert_eq!(
            action_items(&items, &Telling::default()),
            "To do: Send the Q3 numbers, due 2026-11-27; Noted: Anna books the room; 2 more"
        );
        assert_eq!(
            action_items_headline(&items, &Telling::default()),
            "To do: Send the Q3 numbers, due 2026-11-27"
        );
        assert_eq!(
            action_items(&json!({"items": []}), &Telling::default()),
            "Nothing to do from this thread"
        );
        assert_eq!(
            drafted(
                &json!({"to": "ann.lee@example.com", "subject": "Re: Budget"}),
                &Telling::default()
            ),
            "Reply drafted to Ann Lee: Re: Budget"
        );
    }
}
