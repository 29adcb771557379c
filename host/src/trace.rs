//! Reasoning traces: the record of one orchestrator decision (`schemas/trace.v1.json`), and the
//! only natural language the host writes.
//!
//! It owns the trace record and the fixed templates (ADR-0009): one rationale template per
//! action kind (the call's tool), filled with the proposal's signals, and one summary template
//! per tool, filled from its result: what the surface shows. It must not decide anything (the
//! orchestrator does) nor write files (the journal does).

use serde::Serialize;
use serde_json::Value;

use crate::envelope::Surface;

/// Longest rationale (ADR-0009: ≤ 500 characters).
pub const RATIONALE_CHARS_MAX: usize = 500;
/// Longest summary: a phone card's two lines, or a sentence spoken in the earbuds.
pub const SUMMARY_CHARS_MAX: usize = 300;

/// What became of a proposal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// Run and shown on its surface.
    Executed,
    /// A confirm_required call put to the user as a question, not run.
    Asked,
    /// The user confirmed an earlier question; the call ran.
    Confirmed,
    /// The user declined an earlier question; the call was dropped.
    Declined,
    /// A question kept back during quiet hours.
    Held,
}

/// The call a trace is about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TracedCall {
    /// The proposal's call_id.
    pub call_id: String,
    /// Its agent.
    pub agent: String,
    /// Its tool.
    pub tool: String,
    /// Whether it needs the user's confirmation.
    pub confirm_required: bool,
}

/// How the decision turned out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Outcome {
    /// `ok`, `tool_error`, `refused`, `pending`, `declined` or `held`.
    pub status: &'static str,
    /// result.v1 error kind, for tool_error and refused.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// What the surface shows.
    pub summary: String,
}

/// A proposal that lost its surface to the traced one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NotChosen {
    /// Its call_id.
    pub call_id: String,
    /// Its agent.
    pub agent: String,
    /// Its tool.
    pub tool: String,
    /// Its priority.
    pub priority: u8,
    /// Why it lost (`surface_busy`).
    pub reason: &'static str,
}

/// One line of traces.jsonl.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Trace {
    /// `tr_<tick>_<n>`.
    pub trace_id: String,
    /// The scenario's name.
    pub scenario: String,
    /// The run's seed.
    pub seed: u64,
    /// Tick number, from 0.
    pub tick: usize,
    /// The tick's virtual time.
    pub at: String,
    /// What was decided.
    pub decision: Decision,
    /// The call.
    pub call: TracedCall,
    /// What drove the proposal.
    pub signals: Vec<String>,
    /// Its priority.
    pub priority: u8,
    /// The surface the agent asked for.
    pub requested_surface: Surface,
    /// The surface it went to.
    pub surface: Surface,
    /// Why, from the tool's template.
    pub rationale: String,
    /// How it turned out.
    pub outcome: Outcome,
    /// Fuel the call burned (its agent-to-agent calls included).
    pub fuel_used: u64,
    /// Proposals that lost the surface to it.
    pub not_chosen: Vec<NotChosen>,
}

/// The lead of each action kind's rationale: why an agent proposes this tool at all.
const RATIONALE_LEADS: &[(&str, &str, &str)] = &[
    (
        "calendar",
        "detect_conflicts",
        "Calendar conflicts need resolving",
    ),
    ("calendar", "find_free_slots", "Free time was looked for"),
    (
        "calendar",
        "schedule_event",
        "An invitation can go on the calendar, with your yes",
    ),
    ("comms", "triage_inbox", "New mail is worth a look"),
    (
        "comms",
        "extract_action_items",
        "A thread carries dated commitments",
    ),
    ("comms", "draft_reply", "A reply can be drafted"),
    ("finance", "detect_anomalies", "Card activity looks wrong"),
    ("finance", "budget_status", "A budget is over or at risk"),
    ("finance", "upcoming_bills", "Bills are coming due"),
    (
        "finance",
        "categorize_transactions",
        "Spending can be categorized",
    ),
    ("wellness", "stress_score", "New wearable readings arrived"),
    (
        "wellness",
        "sleep_summary",
        "Last nights' sleep can be summed up",
    ),
    (
        "wellness",
        "suggest_break",
        "Stress is high and the day has room for a break",
    ),
];

/// What a rationale needs to know about the decision.
#[derive(Debug, Clone, Copy)]
pub struct RationaleFacts<'a> {
    /// The call's agent.
    pub agent: &'a str,
    /// The call's tool.
    pub tool: &'a str,
    /// The proposal's signals.
    pub signals: &'a [String],
    /// Its priority.
    pub priority: u8,
    /// What was decided.
    pub decision: Decision,
    /// The surface the agent asked for.
    pub requested: Surface,
    /// The surface it went to.
    pub surface: Surface,
    /// Proposals it beat on that surface.
    pub beaten: usize,
}

/// The rationale: the tool's fixed lead, the signals, then the arbitration, at most
/// [`RATIONALE_CHARS_MAX`] characters.
pub fn rationale(facts: &RationaleFacts<'_>) -> String {
    let lead = RATIONALE_LEADS
        .iter()
        .find(|(agent, tool, _)| *agent == facts.agent && *tool == facts.tool)
        .map_or("An agent proposed this call", |(_, _, lead)| lead);
    let signals = match facts.signals.is_empty() {
        true => "no signals given".to_owned(),
        false => facts.signals.join(", "),
    };
    let surface = surface_name(facts.surface);
    let mut text = format!(
        "{lead} ({}.{}): {signals}. Priority {}",
        facts.agent, facts.tool, facts.priority
    );
    if facts.beaten > 0 {
        text.push_str(&format!(
            ", the highest of {} proposals for {surface}",
            facts.beaten + 1
        ));
    }
    let tail = match facts.decision {
        Decision::Executed | Decision::Confirmed if facts.requested != facts.surface => format!(
            "; quiet hours: {surface} instead of {}",
            surface_name(facts.requested)
        ),
        Decision::Executed => format!("; shown on {surface}"),
        Decision::Confirmed => format!("; you confirmed it, shown on {surface}"),
        Decision::Asked => "; it needs your confirmation, asked on PHONE_CARD".to_owned(),
        Decision::Declined => "; you declined it, so it was not run".to_owned(),
        Decision::Held => "; quiet hours: the question waits for the morning".to_owned(),
    };
    text.push_str(&tail);
    text.push('.');
    cut_chars(text, RATIONALE_CHARS_MAX)
}

/// The surface's name as in toolcall.v1.
pub fn surface_name(surface: Surface) -> &'static str {
    match surface {
        Surface::Watch => "WATCH",
        Surface::PhoneCard => "PHONE_CARD",
        Surface::EarbudTts => "EARBUD_TTS",
        Surface::Silent => "SILENT",
    }
}

/// What the surface shows for a tool's result, from the tool's fixed template.
pub fn summary(agent: &str, tool: &str, result: &Value) -> String {
    let n = |field: &str| result[field].as_array().map_or(0, Vec::len);
    let s = |v: &Value| v.as_str().unwrap_or("?").to_owned();
    let text = match (agent, tool) {
        ("calendar", "detect_conflicts") => {
            let first = ["double_bookings", "overlaps"]
                .iter()
                .find_map(|f| result[*f].get(0))
                .map(|p| format!("; first: {} / {}", s(&p["a"]), s(&p["b"])))
                .or_else(|| {
                    result["tight_transitions"]
                        .get(0)
                        .map(|p| format!("; first: {} → {}", s(&p["from"]), s(&p["to"])))
                })
                .unwrap_or_default();
            format!(
                "{} double booking(s), {} overlap(s), {} tight transition(s){first}",
                n("double_bookings"),
                n("overlaps"),
                n("tight_transitions")
            )
        }
        ("calendar", "find_free_slots") => match result["slots"].get(0) {
            Some(slot) => format!("{} free slot(s); first {}", n("slots"), s(&slot["start"])),
            None => "No free slot".to_owned(),
        },
        ("calendar", "schedule_event") => {
            let event = &result["event"];
            let mut text = format!(
                "Added \"{}\" {} to {}",
                s(&event["title"]),
                s(&event["start"]),
                s(&event["end"])
            );
            if n("conflicts") > 0 {
                text.push_str(&format!("; {} conflict(s)", n("conflicts")));
            }
            if let Some(status) = result["break"]["status"].as_str() {
                text.push_str(&format!("; break after it: {status}"));
                if let Some(reason) = result["break"]["reason"].as_str() {
                    text.push_str(&format!(" ({reason})"));
                }
            }
            text
        }
        ("comms", "triage_inbox") => {
            let top = result["messages"].get(0).map_or(String::new(), |m| {
                format!(
                    "; top: {} (urgency {})",
                    s(&m["id"]),
                    m["urgency"].as_f64().unwrap_or(0.0)
                )
            });
            format!(
                "{} message(s) triaged, {} need you now{top}",
                n("messages"),
                result["interrupt_count"].as_u64().unwrap_or(0)
            )
        }
        ("comms", "extract_action_items") => match result["items"].get(0) {
            Some(item) => format!(
                "{} action item(s); first: \"{}\"{}",
                n("items"),
                s(&item["text"]),
                item["due"]
                    .as_str()
                    .map_or(String::new(), |due| format!(" due {due}"))
            ),
            None => "No action items".to_owned(),
        },
        ("comms", "draft_reply") => {
            format!("Draft to {}: {}", s(&result["to"]), s(&result["subject"]))
        }
        ("finance", "detect_anomalies") => match result["flagged"].get(0) {
            Some(f) => format!(
                "{} of {} flagged; first: {} {} ({})",
                n("flagged"),
                result["evaluated"].as_u64().unwrap_or(0),
                s(&f["merchant"]),
                money(&f["amount_minor"], &f["currency"]),
                f["reasons"]
                    .as_array()
                    .map(|r| r
                        .iter()
                        .filter_map(Value::as_str)
                        .collect::<Vec<_>>()
                        .join(", "))
                    .unwrap_or_default()
            ),
            None => format!(
                "Nothing flagged of {}",
                result["evaluated"].as_u64().unwrap_or(0)
            ),
        },
        ("finance", "budget_status") => {
            let budgets = result["budgets"].as_array().cloned().unwrap_or_default();
            let over = budgets.iter().filter(|b| b["over"] == true).count();
            let at_risk = budgets.iter().filter(|b| b["at_risk"] == true).count();
            let worst = budgets
                .iter()
                .find(|b| b["over"] == true)
                .or_else(|| budgets.iter().find(|b| b["at_risk"] == true))
                .map_or(String::new(), |b| {
                    format!(
                        "; {}: {} of {}",
                        s(&b["category"]),
                        money(&b["spent_minor"], &b["currency"]),
                        money(&b["limit_minor"], &b["currency"])
                    )
                });
            format!(
                "{over} budget(s) over, {at_risk} at risk in {}{worst}",
                s(&result["month"])
            )
        }
        ("finance", "upcoming_bills") => match result["bills"].get(0) {
            Some(bill) => format!(
                "{} bill(s); next: {} {} on {}",
                n("bills"),
                s(&bill["merchant"]),
                money(&bill["next_amount_minor"], &bill["currency"]),
                s(&bill["next_date"])
            ),
            None => "No bills due".to_owned(),
        },
        ("finance", "categorize_transactions") => format!("{} categories", n("groups")),
        ("wellness", "stress_score") => format!(
            "Stress {} ({})",
            result["score"].as_u64().unwrap_or(0),
            s(&result["level"])
        ),
        ("wellness", "sleep_summary") => format!(
            "Sleep debt {} min over {} nights; {} with sleep, average {} min",
            result["sleep_debt_minutes"].as_u64().unwrap_or(0),
            n("nights"),
            result["nights_with_sleep"].as_u64().unwrap_or(0),
            result["average_minutes"].as_u64().unwrap_or(0)
        ),
        ("wellness", "suggest_break") => s(&result["reason"]),
        _ => "Done".to_owned(),
    };
    cut_chars(text, SUMMARY_CHARS_MAX)
}

/// ISO 4217 currencies whose minor unit is not a hundredth: (code, decimals).
const MINOR_UNIT_EXCEPTIONS: &[(&str, u32)] = &[
    ("BHD", 3),
    ("CLP", 0),
    ("IQD", 3),
    ("ISK", 0),
    ("JOD", 3),
    ("JPY", 0),
    ("KRW", 0),
    ("KWD", 3),
    ("LYD", 3),
    ("OMR", 3),
    ("TND", 3),
    ("UGX", 0),
    ("VND", 0),
];

/// An amount in minor units as `12.34 EUR`.
fn money(amount_minor: &Value, currency: &Value) -> String {
    let currency = currency.as_str().unwrap_or("?");
    let Some(amount) = amount_minor.as_i64() else {
        return format!("? {currency}");
    };
    let decimals = MINOR_UNIT_EXCEPTIONS
        .iter()
        .find(|(code, _)| *code == currency)
        .map_or(2, |(_, d)| *d);
    if decimals == 0 {
        return format!("{amount} {currency}");
    }
    let scale = 10i64.pow(decimals);
    let sign = if amount < 0 { "-" } else { "" };
    let abs = amount.unsigned_abs();
    format!(
        "{sign}{}.{:0width$} {currency}",
        abs / scale as u64,
        abs % scale as u64,
        width = decimals as usize
    )
}

/// `text` cut to `max` characters (an ellipsis marks the cut).
fn cut_chars(mut text: String, max: usize) -> String {
    if let Some((cut, _)) = text.char_indices().nth(max.saturating_sub(1))
        && text.chars().count() > max
    {
        text.truncate(cut);
        text.push('…');
    }
    text
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use serde_json::json;

    /// A trace as the orchestrator writes one, valid against trace.v1.
    pub(crate) fn sample() -> Trace {
        Trace {
            trace_id: "tr_00000_000".into(),
            scenario: "short".into(),
            seed: 7,
            tick: 0,
            at: "2026-11-23T08:45:00+01:00".into(),
            decision: Decision::Executed,
            call: TracedCall {
                call_id: "t_0123456789".into(),
                agent: "calendar".into(),
                tool: "detect_conflicts".into(),
                confirm_required: false,
            },
            signals: vec!["overlap:e1/e2".into()],
            priority: 90,
            requested_surface: Surface::Watch,
            surface: Surface::Watch,
            rationale: "Calendar conflicts need resolving.".into(),
            outcome: Outcome {
                status: "held",
                kind: None,
                summary: "Question kept for the morning".into(),
            },
            fuel_used: 0,
            not_chosen: vec![NotChosen {
                call_id: "t_abcdefghij".into(),
                agent: "wellness".into(),
                tool: "stress_score".into(),
                priority: 20,
                reason: "surface_busy",
            }],
        }
    }

    #[test]
    fn money_follows_the_currency_minor_unit() {
        assert_eq!(money(&json!(123456), &json!("EUR")), "1234.56 EUR");
        assert_eq!(money(&json!(-5), &json!("EUR")), "-0.05 EUR");
        assert_eq!(money(&json!(1500), &json!("JPY")), "1500 JPY");
        assert_eq!(money(&json!(1500), &json!("KWD")), "1.500 KWD");
    }

    #[test]
    fn rationales_fill_the_tool_template_and_stay_in_bounds() {
        let signals = vec!["double_booking:e1/e2".to_owned()];
        let facts = RationaleFacts {
            agent: "calendar",
            tool: "detect_conflicts",
            signals: &signals,
            priority: 90,
            decision: Decision::Executed,
            requested: Surface::Watch,
            surface: Surface::Watch,
            beaten: 1,
        };
        assert_eq!(
            rationale(&facts),
            "Calendar conflicts need resolving (calendar.detect_conflicts): double_booking:e1/e2. \
             Priority 90, the highest of 2 proposals for WATCH; shown on WATCH."
        );
        let quiet = RationaleFacts {
            requested: Surface::PhoneCard,
            surface: Surface::Silent,
            beaten: 0,
            ..facts
        };
        assert!(
            rationale(&quiet).ends_with("Priority 90; quiet hours: SILENT instead of PHONE_CARD.")
        );
        let long: Vec<String> = (0..16).map(|i| format!("{i:0>199}")).collect();
        let long = RationaleFacts {
            signals: &long,
            ..facts
        };
        let text = rationale(&long);
        assert_eq!(text.chars().count(), RATIONALE_CHARS_MAX);
        assert!(text.ends_with('…'));
    }

    #[test]
    fn summaries_read_the_result() {
        let result = json!({"double_bookings": [], "overlaps": [{"a": "e1", "b": "e2", "overlap_minutes": 30}],
            "tight_transitions": [], "truncated": false});
        assert_eq!(
            summary("calendar", "detect_conflicts", &result),
            "0 double booking(s), 1 overlap(s), 0 tight transition(s); first: e1 / e2"
        );
        let flagged = json!({"flagged": [{"merchant": "ACME", "amount_minor": 129900, "currency": "EUR",
            "reasons": ["duplicate"]}], "evaluated": 40});
        assert_eq!(
            summary("finance", "detect_anomalies", &flagged),
            "1 of 40 flagged; first: ACME 1299.00 EUR (duplicate)"
        );
    }
}
