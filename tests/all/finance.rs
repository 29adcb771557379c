//! The finance agent through the real host: every tool with expected values worked out by hand,
//! bad input refused before the agent runs, inconsistent input answered with a typed tool error,
//! the input bound (2000 transactions) served within the catalogue's deadline, and ticks
//! proposing the right calls for hand-made contexts.

use aura_contract::envelope::Surface;
use serde_json::{Value, json};

use crate::support::{
    assert_proposed, assert_tool_invalid_args, call_tool, host_with, quarantine_lines,
};

async fn call(
    host: &aura_host::Host,
    call_id: &str,
    tool: &str,
    args: Value,
) -> aura_host::ResultEnvelope {
    call_tool(host, "finance", call_id, tool, args).await
}

fn t(id: &str, merchant: &str, amount: i64, time: &str) -> Value {
    json!({"id": id, "merchant": merchant, "amount_minor": amount, "currency": "EUR",
           "time": time})
}

fn with(mut base: Value, field: &str, value: Value) -> Value {
    base[field] = value;
    base
}

#[tokio::test]
async fn categorize_transactions_reports_the_matching_rule() {
    let (host, _) = host_with("finance-categorize", &["finance"]).await;
    // tx1 MCC 5411 → built-in range 5411-5499 groceries; tx2 the user's keyword "pure gym";
    // tx3 no MCC, words "uber eats" → the built-in keyword before "uber"; tx4 nothing matches;
    // tx5 carries its own category.
    let args = json!({
        "transactions": [
            with(t("tx1", "TESCO STORES 2231", 4250, "2026-11-20T17:40:00Z"), "mcc", json!("5411")),
            t("tx2", "PURE GYM LTD", 2499, "2026-11-01T06:00:00Z"),
            t("tx3", "UBER *EATS", 1830, "2026-11-21T20:15:00+00:00"),
            t("tx4", "Corner Shop", -300, "2026-11-22T10:00:00Z"),
            with(t("tx5", "Shell", 6000, "2026-11-22T11:00:00Z"), "category", json!("business")),
        ],
        "rules": [{"id": "gym", "category": "fitness", "merchant_keyword": "pure gym"}],
    });
    let result = call(&host, "t_categ00001", "categorize_transactions", args).await;
    assert!(result.ok);
    // Groups by category name, then rule order.
    let group = |category: &str, rule_id: &str, kind: &str, id: &str| {
        json!({"category": category, "rule_id": rule_id, "rule_kind": kind,
               "transaction_ids": [id]})
    };
    assert_eq!(
        result.result.unwrap(),
        json!({
            "groups": [
                group("business", "given", "given", "tx5"),
                group("dining", "builtin/keyword/uber_eats", "merchant_keyword", "tx3"),
                group("fitness", "gym", "merchant_keyword", "tx2"),
                group("groceries", "builtin/mcc/5411-5499", "mcc_range", "tx1"),
                group("uncategorized", "builtin/fallback", "fallback", "tx4"),
            ],
            "transactions": 5
        })
    );
}

#[tokio::test]
async fn budget_status_projects_month_end_spend_per_currency() {
    let (host, _) = host_with("finance-budget", &["finance"]).await;
    // November 2026 (30 days) at +01:00, today the 10th: 10 days elapsed.
    // dining EUR: 3000 + 4550 − 550 = 7000 (the USD dinner is only counted aside);
    //   projected 7000 · 30 / 10 = 21000 > 20000 while spent ≤ 20000 → at risk.
    // groceries EUR: 12000 + 9001 = 21001 > 20000 → over; projected 21001 · 3 = 63003.
    // d0 at 2026-10-31T22:30Z is 23:30 local on Oct 31: outside November.
    let mcc = |v: Value| with(v, "mcc", json!("5812"));
    let args = json!({
        "transactions": [
            mcc(t("d1", "Trattoria Roma", 3000, "2026-11-02T19:00:00+01:00")),
            mcc(t("d2", "Sushi Bar", 4550, "2026-11-05T20:00:00+01:00")),
            mcc(t("d3", "Sushi Bar", -550, "2026-11-06T10:00:00+01:00")),
            mcc(with(t("d4", "NYC Diner", 2500, "2026-11-07T01:00:00Z"), "currency", json!("USD"))),
            mcc(t("d0", "Bistro", 999, "2026-10-31T22:30:00Z")),
            t("g1", "Aldi Süd", 12000, "2026-11-03T09:00:00+01:00"),
            t("g2", "Aldi Süd", 9001, "2026-11-09T09:00:00+01:00"),
        ],
        "budgets": [{"category": "dining", "currency": "EUR", "limit_minor": 20000},
                    {"category": "groceries", "currency": "EUR", "limit_minor": 20000}],
        "month": "2026-11", "today": "2026-11-10", "utc_offset_minutes": 60,
    });
    let result = call(&host, "t_budget0001", "budget_status", args).await;
    assert_eq!(
        result.result.unwrap(),
        json!({
            "month": "2026-11", "days_in_month": 30, "days_elapsed": 10,
            "budgets": [
                {"category": "dining", "currency": "EUR", "limit_minor": 20000,
                 "spent_minor": 7000, "remaining_minor": 13000, "projected_minor": 21000,
                 "over": false, "at_risk": true, "transactions": 3,
                 "other_currency_transactions": 1},
                {"category": "groceries", "currency": "EUR", "limit_minor": 20000,
                 "spent_minor": 21001, "remaining_minor": -1001, "projected_minor": 63003,
                 "over": true, "at_risk": false, "transactions": 2,
                 "other_currency_transactions": 0}
            ]
        })
    );
}

#[tokio::test]
async fn detect_anomalies_scores_flags_duplicates_and_not_a_first_charge_alone() {
    let (host, _) = host_with("finance-anomalies", &["finance"]).await;
    // Café Rosa 400, 420, 380, 410, 390 then 2000: median 405, |x − 405| = 5, 15, 25, 5, 15,
    // 1595 → MAD 15; z(2000) = 0.6745 · 1595 / 15 = 71.7218 → 71.72, 1595 ≥ 20 % of 405.
    // Kiosk 350 at 12:00 and 12:04: the second is a duplicate (4 ≤ 10 minutes); the kiosk has
    // two spends and "uncategorized" in EUR two as well: no baseline, no score.
    // Gadget Hub 25000: first seen 2026-11-06, history from 2026-10-01 (≥ 30 days): a first
    // charge, but nothing to judge it large against ("uncategorized" has three spends): a
    // first charge is not unusual for that alone, so it is not flagged.
    // Since 2026-11-06: c6, k1, k2, gadget evaluated.
    let cafe: Vec<Value> = [400, 420, 380, 410, 390, 2000]
        .iter()
        .enumerate()
        .map(|(i, &a)| {
            t(
                &format!("c{}", i + 1),
                "Cafe Rosa",
                a,
                &format!("2026-11-0{}T08:15:00Z", i + 1),
            )
        })
        .collect();
    let mut list = vec![t("old", "Aldi", 3000, "2026-10-01T09:00:00Z")];
    list.extend(cafe);
    list.push(t("k1", "Kiosk 12", 350, "2026-11-06T12:00:00Z"));
    list.push(t("k2", "KIOSK #12", 350, "2026-11-06T12:04:00Z"));
    list.push(t("gadget", "Gadget Hub", 25000, "2026-11-06T15:00:00Z"));
    let args = json!({"transactions": list, "since": "2026-11-06T00:00:00Z"});
    let result = call(&host, "t_anomaly001", "detect_anomalies", args).await;
    assert_eq!(
        result.result.unwrap(),
        json!({
            "flagged": [
                {"id": "c6", "merchant": "Cafe Rosa", "amount_minor": 2000, "currency": "EUR",
                 "time": "2026-11-06T08:15:00Z", "category": "dining",
                 "reasons": ["unusually_large"], "score": 71.72, "score_method": "mad",
                 "baseline": "merchant", "baseline_median_minor": 405, "baseline_size": 6},
                {"id": "k2", "merchant": "KIOSK #12", "amount_minor": 350, "currency": "EUR",
                 "time": "2026-11-06T12:04:00Z", "category": "uncategorized",
                 "reasons": ["duplicate"], "duplicate_of": "k1"}
            ],
            "evaluated": 4,
            "truncated": false
        })
    );
}

#[tokio::test]
async fn upcoming_bills_predicts_the_next_payment() {
    let (host, _) = host_with("finance-bills", &["finance"]).await;
    // Netflix on the 15th, Aug..Nov: monthly, intervals exactly one calendar month; amounts
    // 1299, 1299, 1299, 1399 (within 10 %): median (1299 + 1299) / 2 = 1299. Next Dec 15, due
    // in 1 day; confidence 4/6 · 1 = 0.667. City Gym weekly Nov 30, Dec 7, Dec 14: next Dec 21
    // (7 days); confidence 3/8 = 0.375. One corner-shop visit is no bill.
    let args = json!({
        "transactions": [
            t("n1", "NETFLIX.COM", 1299, "2026-08-15T06:00:00Z"),
            t("n2", "NETFLIX.COM", 1299, "2026-09-15T06:00:00Z"),
            t("n3", "NETFLIX.COM", 1299, "2026-10-15T06:00:00Z"),
            t("n4", "NETFLIX.COM", 1399, "2026-11-15T06:00:00Z"),
            t("g1", "City Gym", 1000, "2026-11-30T07:00:00Z"),
            t("g2", "City Gym", 1000, "2026-12-07T07:00:00Z"),
            t("g3", "City Gym", 1000, "2026-12-14T07:00:00Z"),
            t("x1", "Corner Shop", 730, "2026-12-03T18:00:00Z"),
        ],
        "today": "2026-12-14", "utc_offset_minutes": 60,
    });
    let result = call(&host, "t_bills00001", "upcoming_bills", args).await;
    assert_eq!(
        result.result.unwrap(),
        json!({
            "bills": [
                {"merchant": "NETFLIX.COM", "currency": "EUR", "period": "monthly",
                 "occurrences": 4, "first_date": "2026-08-15", "last_date": "2026-11-15",
                 "last_transaction_id": "n4", "last_amount_minor": 1399,
                 "next_date": "2026-12-15", "due_in_days": 1, "next_amount_minor": 1299,
                 "confidence": 0.667},
                {"merchant": "City Gym", "currency": "EUR", "period": "weekly",
                 "occurrences": 3, "first_date": "2026-11-30", "last_date": "2026-12-14",
                 "last_transaction_id": "g3", "last_amount_minor": 1000,
                 "next_date": "2026-12-21", "due_in_days": 7, "next_amount_minor": 1000,
                 "confidence": 0.375}
            ],
            "lapsed": 0,
            "truncated": false
        })
    );
}

#[tokio::test]
async fn the_input_bound_is_served_within_the_catalogue_deadline() {
    let (host, _) = host_with("finance-bound", &["finance"]).await;
    // 2000 transactions (the schema's maxItems): 20 merchant names, dates cycling through the
    // 90 days from 2026-09-01, amounts in 37 steps: every tool has groups, baselines and series.
    let merchants = ["Aldi", "Netflix", "Shell", "Cafe Rosa", "Pure Gym"];
    let list: Vec<Value> = (0..2000)
        .map(|i| {
            let merchant = format!("{} {}", merchants[i % 5], i % 20);
            let day = i % 90;
            let (m, d) = if day < 30 {
                (9, day + 1)
            } else if day < 61 {
                (10, day - 29)
            } else {
                (11, day - 60)
            };
            let mut tx = t(
                &format!("tx{i:04}"),
                &merchant,
                500 + (i as i64 % 37) * 10,
                &format!("2026-{m:02}-{d:02}T{:02}:{:02}:00Z", i % 24, i % 60),
            );
            if i % 3 == 0 {
                tx["mcc"] = json!("5411");
            }
            tx
        })
        .collect();
    let month_args = json!({"transactions": list, "month": "2026-11", "today": "2026-11-20",
        "budgets": [{"category": "groceries", "currency": "EUR", "limit_minor": 100000}]});
    // The costliest result: 2000 identical spends within ten minutes, 1999 duplicates, 100
    // flagged records with every optional member.
    let same: Vec<Value> = (0..2000)
        .map(|i| {
            t(
                &format!("x{i:04}"),
                "Kiosk",
                100,
                &format!("2026-11-24T12:0{}:{:02}Z", i % 10, i % 60),
            )
        })
        .collect();
    let cases = [
        ("categorize_transactions", json!({"transactions": list})),
        ("budget_status", month_args),
        ("detect_anomalies", json!({"transactions": list})),
        (
            "upcoming_bills",
            json!({"transactions": list, "today": "2026-12-01"}),
        ),
        ("detect_anomalies", json!({"transactions": same})),
    ];
    for (i, (tool, args)) in cases.into_iter().enumerate() {
        let result = call(&host, &format!("t_bound{i:05}"), tool, args).await;
        assert!(result.ok, "{tool}: {:?}", result.error);
        eprintln!("{tool}: 2000 transactions, fuel {}", result.fuel_used);
    }
}

#[tokio::test]
async fn inconsistent_args_get_a_typed_tool_error() {
    let (host, data) = host_with("finance-invalid", &["finance"]).await;
    let a = t("a", "Aldi", 100, "2026-11-01T09:00:00Z");
    let cases = [
        // Duplicate transaction ids.
        (
            "categorize_transactions",
            json!({"transactions": [a.clone(), a.clone()]}),
        ),
        // A rule with both a keyword and an MCC range.
        (
            "categorize_transactions",
            json!({"transactions": [], "rules": [
            {"id": "r", "category": "x", "merchant_keyword": "a", "mcc_from": "0001", "mcc_to": "0002"}]}),
        ),
        // An MCC range that runs backwards.
        (
            "categorize_transactions",
            json!({"transactions": [], "rules": [
            {"id": "r", "category": "x", "mcc_from": "5000", "mcc_to": "4000"}]}),
        ),
        // Two budgets for the same category and currency.
        (
            "budget_status",
            json!({"transactions": [], "month": "2026-11", "today": "2026-11-10",
            "budgets": [{"category": "dining", "currency": "EUR", "limit_minor": 1},
                        {"category": "dining", "currency": "EUR", "limit_minor": 2}]}),
        ),
        // Totals past 2^53 − 1 cannot be reported exactly.
        (
            "budget_status",
            json!({"transactions": [
                with(a.clone(), "amount_minor", json!(9_007_199_254_740_991_i64)),
                with(with(a.clone(), "id", json!("b")), "amount_minor", json!(9_007_199_254_740_991_i64))],
            "month": "2026-11", "today": "2026-11-10",
            "budgets": [{"category": "groceries", "currency": "EUR", "limit_minor": 1}]}),
        ),
        // A blank merchant.
        (
            "detect_anomalies",
            json!({"transactions": [with(a.clone(), "merchant", json!("   "))]}),
        ),
        // Duplicate transaction ids again, in another tool.
        (
            "upcoming_bills",
            json!({"transactions": [a.clone(), with(a, "id", json!("a"))],
            "today": "2026-11-10"}),
        ),
    ];
    assert_tool_invalid_args(&host, &data, "finance", Vec::from(cases)).await;
}

#[tokio::test]
async fn bad_input_is_refused_before_the_agent_runs() {
    let (host, data) = host_with("finance-refused", &["finance"]).await;
    let a = t("a", "Aldi", 100, "2026-11-01T09:00:00Z");
    let one = |tx: Value| json!({"transactions": [tx]});
    let budget =
        json!({"transactions": [], "budgets": [], "month": "2026-11", "today": "2026-11-10"});
    let cases = [
        (
            "categorize_transactions",
            one(with(a.clone(), "amount_minor", json!(12.5))),
            "/args/transactions/0/amount_minor",
        ),
        (
            "categorize_transactions",
            one(with(a.clone(), "currency", json!("eur"))),
            "/args/transactions/0/currency",
        ),
        (
            "categorize_transactions",
            one(with(a.clone(), "mcc", json!("54111"))),
            "/args/transactions/0/mcc",
        ),
        (
            "categorize_transactions",
            one(with(a.clone(), "id", json!("a b"))),
            "/args/transactions/0/id",
        ),
        (
            "categorize_transactions",
            one(with(a.clone(), "time", json!("2026-11-01 09:00"))),
            "/args/transactions/0/time",
        ),
        (
            "categorize_transactions",
            json!({"transactions": vec![a.clone(); 2001]}),
            "/args/transactions",
        ),
        (
            "categorize_transactions",
            json!({"transactions": [], "rules": [
            {"id": "r", "category": "x", "mcc_from": "5000"}]}),
            "/args/rules/0",
        ),
        (
            "budget_status",
            with(budget.clone(), "month", json!("2026-13")),
            "/args/month",
        ),
        (
            "budget_status",
            with(budget.clone(), "today", json!("14/12/2026")),
            "/args/today",
        ),
        (
            "budget_status",
            with(
                budget,
                "budgets",
                json!([{"category": "dining", "currency": "EUR", "limit_minor": -1}]),
            ),
            "/args/budgets/0/limit_minor",
        ),
        (
            "detect_anomalies",
            json!({"transactions": [], "min_history": 2}),
            "/args/min_history",
        ),
        (
            "detect_anomalies",
            json!({"transactions": [], "since": "yesterday"}),
            "/args/since",
        ),
        (
            "upcoming_bills",
            json!({"transactions": [], "today": "2026-12-01",
            "amount_tolerance_percent": 51}),
            "/args/amount_tolerance_percent",
        ),
        ("upcoming_bills", json!({"transactions": []}), "/args"),
    ];
    crate::support::assert_refused_at_args(&host, &data, "finance", &cases).await;
}

#[tokio::test]
async fn tick_proposes_detect_anomalies_for_a_duplicate_charge() {
    let (host, data) = host_with("finance-tick-dup", &["finance"]).await;
    // Tuesday 2026-11-24 08:00Z: the kiosk charged 450 at 07:00 and again at 07:03, within the
    // 10-minute window: a duplicate → detect_anomalies, priority 70, phone card.
    let context = json!({
        "now": "2026-11-24T08:00:00Z",
        "transactions": [t("k1", "Kiosk", 450, "2026-11-24T07:00:00Z"),
                         t("k2", "Kiosk", 450, "2026-11-24T07:03:00Z")],
        "messages": [], "events": [],
    });
    let outcome = host.tick("finance", &context).await.unwrap();
    assert!(outcome.refused.is_empty());
    assert_eq!(outcome.proposals.len(), 1);
    let proposal = &outcome.proposals[0];
    assert_eq!(proposal.priority, 70);
    assert_eq!(proposal.signals, ["duplicate:k2"]);
    let call = assert_proposed(
        proposal,
        ("finance", "detect_anomalies"),
        "2026-11-24T08:00:00Z",
        false,
        Surface::PhoneCard,
    );
    assert_eq!(call.args["since"], "2026-11-23T08:00:00Z");
    // The proposal is a call the host can dispatch as it is, and it finds the duplicate.
    let result = host.dispatch(call).await.unwrap().result.unwrap();
    assert_eq!(result["flagged"][0]["duplicate_of"], "k1");

    // The same charges two days later are old news; without transactions nothing is proposed.
    let later = with(context, "now", json!("2026-11-26T08:00:00Z"));
    assert!(
        host.tick("finance", &later)
            .await
            .unwrap()
            .proposals
            .is_empty()
    );
    let empty = json!({"now": "2026-11-24T08:00:00Z"});
    assert!(
        host.tick("finance", &empty)
            .await
            .unwrap()
            .proposals
            .is_empty()
    );
    assert!(quarantine_lines(&data).is_empty());
}

#[tokio::test]
async fn tick_proposes_budget_status_and_upcoming_bills() {
    let (host, data) = host_with("finance-tick-budget", &["finance"]).await;
    // Friday 2026-12-25 09:00Z at +01:00 (local 10:00), December: 25 of 31 days elapsed.
    // Groceries 26000 (Aldi, Dec 2 and Dec 20) > 25000 → over (65). Dining 12000 on Dec 24:
    //   projected 12000 · 31 / 25 = 14880 > 14000 and not over → at risk.
    // Water Board 3000 on Sep 26, Oct 26, Nov 26: monthly, next Dec 26: due in 1 day →
    //   upcoming_bills, 50 + 5 · (3 − 1) = 60. A profile budget with a bad category is skipped.
    let dining = with(
        t("d1", "Trattoria", 12000, "2026-12-24T19:00:00Z"),
        "mcc",
        json!("5812"),
    );
    let context = json!({
        "now": "2026-12-25T09:00:00Z",
        "utc_offset_minutes": 60,
        "transactions": [
            t("w1", "Water Board", 3000, "2026-09-26T06:00:00Z"),
            t("w2", "Water Board", 3000, "2026-10-26T06:00:00Z"),
            t("w3", "Water Board", 3000, "2026-11-26T06:00:00Z"),
            t("g1", "Aldi", 14000, "2026-12-02T10:00:00Z"),
            t("g2", "Aldi", 12000, "2026-12-20T10:00:00Z"),
            dining,
        ],
        "profile": {"budgets": [
            {"category": "groceries", "currency": "EUR", "limit_minor": 25000},
            {"category": "dining", "currency": "EUR", "limit_minor": 14000},
            {"category": "Fun!", "currency": "EUR", "limit_minor": 1},
        ], "vip_senders": []},
    });
    let outcome = host.tick("finance", &context).await.unwrap();
    assert!(outcome.refused.is_empty());
    let tools: Vec<&str> = outcome
        .proposals
        .iter()
        .map(|p| p.call.call().tool.as_str())
        .collect();
    assert_eq!(tools, ["budget_status", "upcoming_bills"]);
    let budget = &outcome.proposals[0];
    assert_eq!(budget.priority, 65);
    assert_eq!(budget.signals, ["over:groceries/EUR", "at_risk:dining/EUR"]);
    assert_eq!(budget.call.call().args["month"], "2026-12");
    assert_eq!(budget.call.call().args["today"], "2026-12-25");
    let bills = &outcome.proposals[1];
    assert_eq!(bills.priority, 60);
    assert_eq!(bills.signals, ["bill_due:2026-12-26:w3"]);
    assert_eq!(bills.call.call().expected_surface, Some(Surface::PhoneCard));

    // Both proposals run as proposed and report what triggered them.
    let status = host
        .dispatch(budget.call.call())
        .await
        .unwrap()
        .result
        .unwrap();
    assert_eq!(status["budgets"][0]["spent_minor"], 26000);
    assert_eq!(status["budgets"][1]["projected_minor"], 14880);
    assert_eq!(status["budgets"][1]["at_risk"], true);
    let upcoming = host
        .dispatch(bills.call.call())
        .await
        .unwrap()
        .result
        .unwrap();
    assert_eq!(upcoming["bills"][0]["next_date"], "2026-12-26");
    assert_eq!(upcoming["bills"][0]["due_in_days"], 1);
    assert!(quarantine_lines(&data).is_empty());
}

#[tokio::test]
async fn tick_sends_a_huge_spend_to_the_watch_and_reviews_bills_on_mondays() {
    let (host, _) = host_with("finance-tick-watch", &["finance"]).await;
    // Monday 2026-12-14 09:00Z. Café history 400, 420, 380, 410, 390 on Dec 1-5, 2000 today:
    // z = 71.72 ≥ 10 → unusually large, 60 + 15 = 75, WATCH. Netflix on the 26th (Sep..Nov)
    // is due in 12 days, not soon, but it is Monday → the weekly review, priority 20.
    let mut list: Vec<Value> = [400, 420, 380, 410, 390]
        .iter()
        .enumerate()
        .map(|(i, &a)| {
            t(
                &format!("c{i}"),
                "Cafe Rosa",
                a,
                &format!("2026-12-0{}T12:00:00Z", i + 1),
            )
        })
        .collect();
    list.push(t("c5", "Cafe Rosa", 2000, "2026-12-14T08:30:00Z"));
    for (i, m) in ["09", "10", "11"].iter().enumerate() {
        list.push(t(
            &format!("n{i}"),
            "Netflix",
            1299,
            &format!("2026-{m}-26T06:00:00Z"),
        ));
    }
    let context = json!({"now": "2026-12-14T09:00:00Z", "transactions": list});
    let outcome = host.tick("finance", &context).await.unwrap();
    assert!(outcome.refused.is_empty());
    assert_eq!(outcome.proposals.len(), 2);
    let anomaly = &outcome.proposals[0];
    assert_eq!(anomaly.call.call().tool, "detect_anomalies");
    assert_eq!(anomaly.priority, 75);
    assert_eq!(anomaly.signals, ["unusually_large:c5"]);
    assert_eq!(anomaly.call.call().expected_surface, Some(Surface::Watch));
    let review = &outcome.proposals[1];
    assert_eq!(review.call.call().tool, "upcoming_bills");
    assert_eq!(review.priority, 20);
    assert_eq!(review.signals, ["weekly_review:2026-12-14"]);
    assert_eq!(
        review.call.call().expected_surface,
        Some(Surface::PhoneCard)
    );
}
