//! The finance agent's tools: categorized spending, budgets against their limits, anomalies
//! in card activity, and bills coming due.
//!
//! Each tool's whole entry is here; it must not hold any check (the schemas and the crossing
//! do) nor any decision (the orchestrator does).

use serde_json::Value;

use super::text::{count, money, number, text};
use super::{AgentSpec, ResultNews, Telling, news, tick_examples, tool_entry};
use crate::limits::{COMPONENT_BYTES_MAX, MEMORY_BYTES_MAX};

/// finance takes up to 2000 transactions per call: measured at that bound, 46-61 M fuel, and
/// 76 M for the worst anomaly result (100 flagged records); 2 s (200 M fuel at the default
/// rate) leaves 2.6x headroom where the 1 s default would leave 1.3x.
const FINANCE_DEADLINE_MS: u64 = 2_000;

pub(super) const AGENT: AgentSpec = AgentSpec {
    name: "finance",
    memory_bytes_max: MEMORY_BYTES_MAX,
    component_bytes_max: COMPONENT_BYTES_MAX,
    tools: &[
        tool_entry!("finance", "categorize_transactions",
            deadline_ms: FINANCE_DEADLINE_MS,
            confirm: false,
            rationale: "Spending can be categorized",
            summary: categorized,
            question: None,
            on_confirm: None,
            about: None,
            news: &[],
            news_in_result: None),
        tool_entry!("finance", "budget_status",
            deadline_ms: FINANCE_DEADLINE_MS,
            confirm: false,
            rationale: "A budget is over or at risk",
            summary: budgets,
            question: None,
            on_confirm: None,
            about: None,
            news: &[
                news("at_risk", "budget", 1, 35, false),
                news("over", "budget", 2, 60, false),
            ],
            news_in_result: None),
        tool_entry!("finance", "detect_anomalies",
        deadline_ms: FINANCE_DEADLINE_MS,
        confirm: false,
        rationale: "Card activity looks wrong",
        summary: anomalies,
        question: None,
        on_confirm: None,
        about: None,
        news: &[
            news("unusually_large", "transaction", 0, 90, true),
            news("duplicate", "transaction", 0, 65, false),
        ],
        news_in_result: Some(ResultNews {
            items: "flagged",
            subject: flagged_subject,
            importance: flagged_importance,
        })),
        tool_entry!("finance", "upcoming_bills",
        deadline_ms: FINANCE_DEADLINE_MS,
        confirm: false,
        rationale: "Bills are coming due",
        summary: bills,
        question: None,
        on_confirm: None,
        about: None,
        news: &[
            news("bill_due", "bill", 0, 50, false),
        ],
        news_in_result: Some(ResultNews {
            items: "bills",
            subject: bill_subject,
            importance: bill_importance,
        })),
    ],
    // finance answers from its args alone.
    may_call: &[],
    tick_examples: tick_examples!("finance"),
};

fn categorized(result: &Value, _telling: &Telling<'_>) -> String {
    format!("{} categories", count(result, "groups"))
}

fn budgets(result: &Value, _telling: &Telling<'_>) -> String {
    let budgets = result["budgets"].as_array().map_or(&[][..], Vec::as_slice);
    let over = budgets.iter().filter(|b| b["over"] == true).count();
    let at_risk = budgets.iter().filter(|b| b["at_risk"] == true).count();
    let worst = budgets
        .iter()
        .find(|b| b["over"] == true)
        .or_else(|| budgets.iter().find(|b| b["at_risk"] == true))
        .map_or(String::new(), |b| {
            format!(
                "; {}: {} of {}",
                text(&b["category"]),
                money(&b["spent_minor"], &b["currency"]),
                money(&b["limit_minor"], &b["currency"])
            )
        });
    format!(
        "{over} budget(s) over, {at_risk} at risk in {}{worst}",
        text(&result["month"])
    )
}

/// A flagged transaction's subject, as its signal names it (`transaction:<id>`).
fn flagged_subject(flagged: &Value) -> String {
    format!("transaction:{}", text(&flagged["id"]))
}

/// A charge far above what the merchant usually takes is what a card thief's first charge
/// looks like: it leads. A duplicate charge matters, but can wait an hour.
fn flagged_importance(flagged: &Value, _now: time::OffsetDateTime) -> u8 {
    let reasons = flagged["reasons"].as_array().map_or(&[][..], Vec::as_slice);
    match reasons.iter().any(|r| r == "unusually_large") {
        true => 90,
        false => 65,
    }
}

/// A bill's subject, as its signal names it (`bill:<next date>:<last transaction id>`).
fn bill_subject(bill: &Value) -> String {
    format!(
        "bill:{}:{}",
        text(&bill["next_date"]),
        text(&bill["last_transaction_id"])
    )
}

/// A bill due today or tomorrow is a card; later ones wait for the digest.
fn bill_importance(bill: &Value, _now: time::OffsetDateTime) -> u8 {
    match bill["due_in_days"].as_i64() {
        Some(days) if days <= 1 => 60,
        _ => 35,
    }
}

fn anomalies(result: &Value, _telling: &Telling<'_>) -> String {
    match result["flagged"].get(0) {
        Some(flagged) => format!(
            "{} of {} flagged; first: {} {} ({})",
            count(result, "flagged"),
            number(&result["evaluated"]),
            text(&flagged["merchant"]),
            money(&flagged["amount_minor"], &flagged["currency"]),
            flagged["reasons"]
                .as_array()
                .map(|reasons| reasons
                    .iter()
                    .filter_map(Value::as_str)
                    .collect::<Vec<_>>()
                    .join(", "))
                .unwrap_or_default()
        ),
        None => format!("Nothing flagged of {}", number(&result["evaluated"])),
    }
}

fn bills(result: &Value, telling: &Telling<'_>) -> String {
    match result["bills"].get(0) {
        Some(bill) => format!(
            "{} bill(s); next: {} {} {}",
            count(result, "bills"),
            text(&bill["merchant"]),
            money(&bill["next_amount_minor"], &bill["currency"]),
            match telling.clock {
                Some(_) => telling.day(&bill["next_date"]),
                None => format!("on {}", text(&bill["next_date"])),
            }
        ),
        None => "No bills due".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn summaries_read_the_result() {
        let flagged = json!({"flagged": [{"merchant": "ACME", "amount_minor": 129900,
            "currency": "EUR", "reasons": ["duplicate"]}], "evaluated": 40});
        assert_eq!(
            anomalies(&flagged, &Telling::default()),
            "1 of 40 flagged; first: ACME 1299.00 EUR (duplicate)"
        );
        assert_eq!(
            anomalies(&json!({"flagged": [], "evaluated": 3}), &Telling::default()),
            "Nothing flagged of 3"
        );
        let month = json!({"month": "2026-11", "budgets": [
            {"category": "groceries", "currency": "EUR", "spent_minor": 21001,
             "limit_minor": 20000, "over": true, "at_risk": true},
            {"category": "dining", "currency": "EUR", "spent_minor": 7000,
             "limit_minor": 20000, "over": false, "at_risk": false}]});
        assert_eq!(
            budgets(&month, &Telling::default()),
            "1 budget(s) over, 1 at risk in 2026-11; groceries: 210.01 EUR of 200.00 EUR"
        );
        let due = json!({"bills": [{"merchant": "NETFLIX.COM", "next_amount_minor": 1399,
            "currency": "EUR", "next_date": "2026-12-15"}]});
        assert_eq!(
            bills(&due, &Telling::default()),
            "1 bill(s); next: NETFLIX.COM 13.99 EUR on 2026-12-15"
        );
        assert_eq!(
            categorized(&json!({"groups": [{}, {}]}), &Telling::default()),
            "2 categories"
        );
    }
}
