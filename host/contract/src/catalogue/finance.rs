//! The finance agent's tools: categorized spending, budgets against their limits, anomalies
//! in card activity, and bills coming due.
//!
//! Each tool's whole entry is here; it must not hold any check (the schemas and the crossing
//! do) nor any decision (the orchestrator does).

use serde_json::Value;

use super::text::{capitalized, count, counted, money, text};
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
            headline: categorized,
            ends: None,
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
            headline: budgets_headline,
            ends: None,
            question: None,
            on_confirm: None,
            about: None,
            news: &[
                // This month's budget as it stands today: told again on a new day.
                news("at_risk", "budget", 1, 35, false).retell_daily(),
                news("over", "budget", 2, 60, false).retell_daily(),
            ],
            news_in_result: None),
        tool_entry!("finance", "detect_anomalies",
        deadline_ms: FINANCE_DEADLINE_MS,
        confirm: false,
        rationale: "Card activity looks wrong",
        summary: anomalies,
        headline: anomalies_headline,
        ends: None,
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
        headline: bills_headline,
        ends: None,
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
    format!(
        "Spending sorted into {}",
        counted(count(result, "groups"), "category", "categories")
    )
}

/// A budget's category as said: `dining` is "Dining", `home_office` "Home office".
fn category(value: &Value) -> String {
    capitalized(&value.as_str().unwrap_or("a budget").replace('_', " "))
}

/// The budgets over their limit, then those at risk; the ones this decision tells as news
/// (`budget:<category>/<currency>`) first.
fn worst_budgets<'a>(result: &'a Value, telling: &Telling<'_>) -> Vec<&'a Value> {
    let budgets = result["budgets"].as_array().map_or(&[][..], Vec::as_slice);
    let over = budgets.iter().filter(|b| b["over"] == true);
    let at_risk = budgets
        .iter()
        .filter(|b| b["over"] != true && b["at_risk"] == true);
    let mut worst: Vec<&Value> = over.chain(at_risk).collect();
    // A stable sort: news first, in the order above.
    worst.sort_by_key(|b| {
        let subject = format!("budget:{}/{}", text(&b["category"]), text(&b["currency"]));
        !telling.is_news(&subject)
    });
    worst
}

/// One budget as said: "Dining is over budget: 210.01 EUR of 200.00 EUR", "Shopping may go
/// over: 150.00 EUR of 200.00 EUR spent, 260.00 EUR expected by the end of the month".
fn budget_words(budget: &Value) -> String {
    let spent = money(&budget["spent_minor"], &budget["currency"]);
    let limit = money(&budget["limit_minor"], &budget["currency"]);
    match budget["over"] == true {
        true => format!(
            "{} is over budget: {spent} of {limit}",
            category(&budget["category"])
        ),
        false => format!(
            "{} may go over budget: {spent} of {limit} spent, {} expected by the month's end",
            category(&budget["category"]),
            money(&budget["projected_minor"], &budget["currency"])
        ),
    }
}

fn budgets(result: &Value, telling: &Telling<'_>) -> String {
    let worst = worst_budgets(result, telling);
    match worst.split_first() {
        Some((first, [])) => budget_words(first),
        Some((first, rest)) => format!(
            "{}; {} also {}",
            budget_words(first),
            rest.iter()
                .map(|b| category(&b["category"]))
                .collect::<Vec<_>>()
                .join(", "),
            match rest.len() {
                1 => "needs a look",
                _ => "need a look",
            }
        ),
        None => "Every budget is on track".to_owned(),
    }
}

fn budgets_headline(result: &Value, telling: &Telling<'_>) -> String {
    match worst_budgets(result, telling).first() {
        Some(first) if first["over"] == true => {
            format!("{} is over budget", category(&first["category"]))
        }
        Some(first) => format!("{} may go over budget", category(&first["category"])),
        None => "Every budget is on track".to_owned(),
    }
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

/// One flagged charge as said: "Amazon.de charged 649.00 EUR, far above the 25.00 EUR you
/// usually spend there"; "REWE charged 23.47 EUR twice"; "A first charge at X: 120.00 EUR".
fn flagged_words(flagged: &Value) -> String {
    let merchant = text(&flagged["merchant"]);
    let amount = money(&flagged["amount_minor"], &flagged["currency"]);
    let reasons = flagged["reasons"].as_array().map_or(&[][..], Vec::as_slice);
    let has = |reason: &str| reasons.iter().any(|r| r == reason);
    if has("unusually_large") {
        let usual = money(&flagged["baseline_median_minor"], &flagged["currency"]);
        let place = match flagged["baseline"].as_str() {
            Some("category") => format!(
                "on {}",
                flagged["category"]
                    .as_str()
                    .map_or("that kind of thing".to_owned(), |c| c.replace('_', " "))
            ),
            _ => "there".to_owned(),
        };
        return format!(
            "{merchant} charged {amount}, far above the {usual} you usually spend {place}"
        );
    }
    if has("duplicate") {
        return format!("{merchant} charged {amount} twice");
    }
    format!("A first charge at {merchant}: {amount}")
}

fn anomalies(result: &Value, _telling: &Telling<'_>) -> String {
    let flagged = result["flagged"].as_array().map_or(&[][..], Vec::as_slice);
    match flagged.split_first() {
        Some((first, [])) => flagged_words(first),
        Some((first, rest)) => format!(
            "{}; {} to check",
            flagged_words(first),
            counted(rest.len(), "more charge", "more charges")
        ),
        None => "No charge looks wrong".to_owned(),
    }
}

fn anomalies_headline(result: &Value, _telling: &Telling<'_>) -> String {
    let flagged = &result["flagged"][0];
    let merchant = text(&flagged["merchant"]);
    let amount = money(&flagged["amount_minor"], &flagged["currency"]);
    let reasons = flagged["reasons"].as_array().map_or(&[][..], Vec::as_slice);
    match flagged.is_object() {
        false => "No charge looks wrong".to_owned(),
        true if reasons.iter().any(|r| r == "unusually_large") => {
            format!("Check {amount} at {merchant}: far above your usual")
        }
        true if reasons.iter().any(|r| r == "duplicate") => {
            format!("{merchant} charged {amount} twice")
        }
        true => format!("A first charge at {merchant}: {amount}"),
    }
}

/// One bill as said: "Netflix 13.99 EUR due tomorrow".
fn bill_words(bill: &Value, telling: &Telling<'_>) -> String {
    format!(
        "{} {} due {}",
        text(&bill["merchant"]),
        money(&bill["next_amount_minor"], &bill["currency"]),
        match telling.clock {
            Some(_) => telling.day(&bill["next_date"]),
            None => format!("on {}", text(&bill["next_date"])),
        }
    )
}

/// The bills, the soonest due first and, among those due the same day, the largest first.
fn bills_in_order(result: &Value) -> Vec<&Value> {
    let mut bills: Vec<&Value> = result["bills"]
        .as_array()
        .map_or(&[][..], Vec::as_slice)
        .iter()
        .collect();
    bills.sort_by_key(|b| {
        (
            b["next_date"].as_str().unwrap_or("").to_owned(),
            std::cmp::Reverse(b["next_amount_minor"].as_i64().unwrap_or(0)),
        )
    });
    bills
}

fn bills(result: &Value, telling: &Telling<'_>) -> String {
    let bills = bills_in_order(result);
    match bills.len() {
        0 => "No bills due".to_owned(),
        1 | 2 => bills
            .iter()
            .map(|b| bill_words(b, telling))
            .collect::<Vec<_>>()
            .join("; "),
        n => format!(
            "{}; {}; and {}",
            bill_words(bills[0], telling),
            bill_words(bills[1], telling),
            counted(n - 2, "more bill", "more bills")
        ),
    }
}

fn bills_headline(result: &Value, telling: &Telling<'_>) -> String {
    match bills_in_order(result).as_slice() {
        [] => "No bills due".to_owned(),
        [only] => bill_words(only, telling),
        [first, rest @ ..] => format!(
            "{} (and {})",
            bill_words(first, telling),
            counted(rest.len(), "more bill", "more bills")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn summaries_say_amounts_and_names() {
        let large = json!({"flagged": [{"merchant": "Amazon.de", "amount_minor": 64900,
            "currency": "EUR", "reasons": ["unusually_large"], "baseline": "merchant",
            "baseline_median_minor": 2499, "score": 41.3},
            {"merchant": "REWE", "amount_minor": 2347, "currency": "EUR",
            "reasons": ["duplicate"]}], "evaluated": 40});
        assert_eq!(
            anomalies(&large, &Telling::default()),
            "Amazon.de charged 649.00 EUR, far above the 24.99 EUR you usually spend there; \
             1 more charge to check"
        );
        assert_eq!(
            anomalies_headline(&large, &Telling::default()),
            "Check 649.00 EUR at Amazon.de: far above your usual"
        );
        let twice = json!({"flagged": [{"merchant": "REWE", "amount_minor": 2347,
            "currency": "EUR", "reasons": ["duplicate"]}]});
        assert_eq!(
            anomalies(&twice, &Telling::default()),
            "REWE charged 23.47 EUR twice"
        );
        assert_eq!(
            anomalies(&json!({"flagged": [], "evaluated": 3}), &Telling::default()),
            "No charge looks wrong"
        );
        let month = json!({"month": "2026-11", "budgets": [
            {"category": "groceries", "currency": "EUR", "spent_minor": 21001,
             "limit_minor": 20000, "projected_minor": 30000, "over": true, "at_risk": true},
            {"category": "dining", "currency": "EUR", "spent_minor": 15000,
             "limit_minor": 20000, "projected_minor": 26000, "over": false, "at_risk": true},
            {"category": "transport", "currency": "EUR", "spent_minor": 1000,
             "limit_minor": 20000, "over": false, "at_risk": false}]});
        assert_eq!(
            budgets(&month, &Telling::default()),
            "Groceries is over budget: 210.01 EUR of 200.00 EUR; Dining also needs a look"
        );
        assert_eq!(
            budgets_headline(&month, &Telling::default()),
            "Groceries is over budget"
        );
        // Dining's risk is the news: it leads.
        let news = ["budget:dining/EUR".to_owned()];
        let dining = Telling {
            news: &news,
            ..Telling::default()
        };
        assert_eq!(
            budgets_headline(&month, &dining),
            "Dining may go over budget"
        );
        let risk = json!({"budgets": [{"category": "home_office", "currency": "EUR",
            "spent_minor": 15000, "limit_minor": 20000, "projected_minor": 26000,
            "over": false, "at_risk": true}]});
        assert_eq!(
            budgets(&risk, &Telling::default()),
            "Home office may go over budget: 150.00 EUR of 200.00 EUR spent, 260.00 EUR \
             expected by the month's end"
        );
        let due = json!({"bills": [{"merchant": "NETFLIX.COM", "next_amount_minor": 1399,
            "currency": "EUR", "next_date": "2026-12-15"}]});
        assert_eq!(
            bills(&due, &Telling::default()),
            "NETFLIX.COM 13.99 EUR due on 2026-12-15"
        );
        // Due the same day, the larger leads; an earlier one before both.
        let two = json!({"bills": [
            {"merchant": "Telekom", "next_amount_minor": 3499, "currency": "EUR",
             "next_date": "2026-11-30"},
            {"merchant": "Wohnungsbau Mitte", "next_amount_minor": 95000, "currency": "EUR",
             "next_date": "2026-11-30"}]});
        assert_eq!(
            bills_headline(&two, &Telling::default()),
            "Wohnungsbau Mitte 950.00 EUR due on 2026-11-30 (and 1 more bill)"
        );
        let mut three = two.clone();
        three["bills"]
            .as_array_mut()
            .unwrap()
            .push(json!({"merchant": "Spotify",
            "next_amount_minor": 1099, "currency": "EUR", "next_date": "2026-11-29"}));
        assert_eq!(
            bills(&three, &Telling::default()),
            "Spotify 10.99 EUR due on 2026-11-29; Wohnungsbau Mitte 950.00 EUR due on \
             2026-11-30; and 1 more bill"
        );
        assert_eq!(
            categorized(&json!({"groups": [{}, {}]}), &Telling::default()),
            "Spending sorted into 2 categories"
        );
    }
}
