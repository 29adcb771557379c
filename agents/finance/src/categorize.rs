//! `categorize_transactions`: each transaction's category and the rule that assigned it.
//!
//! Rules (also stated in `schemas/finance/categorize_transactions.*.json`): the order of
//! `rules::RuleSet::categorize` — the transaction's own `category`, then the caller's rules in
//! order, then the built-in MCC ranges, then the built-in merchant keywords, then
//! `uncategorized`. The result groups the transactions by (category, rule): each group names the
//! category, the rule's id and kind, and the ids of its transactions in input order; groups are
//! ordered by category name (byte order), then by rule order (the transaction's own category
//! first, the fallback last). Every transaction appears in exactly one group, so nothing is cut.
//! Grouping keeps the result compact: a per-transaction object would cost the host's canonical
//! encoder fuel for every member of 2000 objects. No amounts are added, so currencies never mix.
//!
//! This module must not change or store anything: it only reports.

use std::collections::BTreeMap;

use aura_sdk::ToolResult;
use serde::{Deserialize, Serialize};

use crate::common::{Transaction, check_transactions};
use crate::rules::{RuleKind, RuleSet, UserRule};

/// Args of `categorize_transactions`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CategorizeArgs {
    /// The transactions (at most 2000, unique ids).
    pub transactions: Vec<Transaction>,
    /// The caller's rules, tried before the built-in ones, in order. Default none.
    #[serde(default)]
    pub rules: Vec<UserRule>,
}

/// The transactions one rule put in one category.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CategoryGroup {
    /// The category.
    pub category: String,
    /// The id of the rule that assigned it.
    pub rule_id: String,
    /// The kind of that rule.
    pub rule_kind: RuleKind,
    /// The transactions, in input order.
    pub transaction_ids: Vec<String>,
}

/// Result of `categorize_transactions`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CategorizeResult {
    /// One group per (category, rule), by category name, then rule order.
    pub groups: Vec<CategoryGroup>,
    /// Transactions categorized (all of them).
    pub transactions: u32,
}

/// Categorizes every transaction. See the module documentation.
pub fn categorize_transactions(args: CategorizeArgs) -> ToolResult<CategorizeResult> {
    let rules = RuleSet::with_user_rules(&args.rules, "rules")?;
    let txs = check_transactions(&args.transactions, "transactions")?;
    // (category, rule rank) → group; the rank orders rules within a category.
    let mut groups: BTreeMap<(&str, usize), CategoryGroup> = BTreeMap::new();
    for tx in &txs {
        let c = rules.categorize(tx);
        groups
            .entry((c.category, c.rank))
            .or_insert_with(|| CategoryGroup {
                category: c.category.to_owned(),
                rule_id: c.rule_id.to_owned(),
                rule_kind: c.kind,
                transaction_ids: Vec::new(),
            })
            .transaction_ids
            .push(tx.id.to_owned());
    }
    Ok(CategorizeResult {
        groups: groups.into_values().collect(),
        // At most MAX_TRANSACTIONS (2000), checked above.
        transactions: txs.len() as u32,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SCHEMAS;
    use aura_sdk::ToolErrorKind;
    use serde_json::{Value, json};

    fn run(args: Value) -> Value {
        crate::run_checked("categorize_transactions", args, categorize_transactions)
    }

    fn t(id: &str, merchant: &str, mcc: Option<&str>) -> Value {
        let mut t = json!({"id": id, "merchant": merchant, "amount_minor": 1250,
                           "currency": "EUR", "time": "2026-11-23T09:00:00Z"});
        if let Some(mcc) = mcc {
            t["mcc"] = json!(mcc);
        }
        t
    }

    #[test]
    fn every_kind_of_rule_and_the_counts() {
        let mut given = t("g", "Shell", Some("5541"));
        given["category"] = json!("business");
        let result = run(json!({
            "transactions": [
                t("a", "TESCO STORES 2231", Some("5411")),
                t("b", "Pure Gym", None),
                t("c", "Shell Oil", None),
                t("d", "Corner Shop", None),
                given,
                t("e", "Lidl", None),
            ],
            "rules": [{"id": "gym", "category": "fitness", "merchant_keyword": "pure gym"}],
        }));
        // Groups by category, then rule order: business (given), fitness (user rule gym),
        // fuel (keyword shell), groceries by the MCC range (a) before the keyword lidl (e),
        // uncategorized (fallback).
        let group = |category: &str, rule_id: &str, kind: &str, ids: &[&str]| {
            json!({"category": category, "rule_id": rule_id, "rule_kind": kind,
                   "transaction_ids": ids})
        };
        assert_eq!(
            result,
            json!({"groups": [
                group("business", "given", "given", &["g"]),
                group("fitness", "gym", "merchant_keyword", &["b"]),
                group("fuel", "builtin/keyword/shell", "merchant_keyword", &["c"]),
                group("groceries", "builtin/mcc/5411-5499", "mcc_range", &["a"]),
                group("groceries", "builtin/keyword/lidl", "merchant_keyword", &["e"]),
                group("uncategorized", "builtin/fallback", "fallback", &["d"]),
            ], "transactions": 6})
        );
    }

    #[test]
    fn empty_input_empty_result() {
        assert_eq!(
            run(json!({"transactions": []})),
            json!({"groups": [], "transactions": 0})
        );
    }

    #[test]
    fn two_thousand_transactions_all_come_back() {
        let list: Vec<Value> = (0..2000)
            .map(|i| t(&format!("tx{i:04}"), "Aldi Süd", None))
            .collect();
        let result = run(json!({"transactions": list}));
        assert_eq!(result["transactions"], 2000);
        assert_eq!(result["groups"].as_array().unwrap().len(), 1);
        assert_eq!(result["groups"][0]["rule_id"], "builtin/keyword/aldi");
        let ids = result["groups"][0]["transaction_ids"].as_array().unwrap();
        assert_eq!((ids.len(), ids[1999].as_str()), (2000, Some("tx1999")));
        // Far below the 1 MiB crossing cap.
        assert!(result.to_string().len() < 50_000);
    }

    #[test]
    fn inconsistent_args_are_invalid() {
        let args = CategorizeArgs {
            transactions: serde_json::from_value(json!([t("a", "X", None), t("a", "Y", None)]))
                .unwrap(),
            rules: vec![],
        };
        let e = categorize_transactions(args).unwrap_err();
        assert_eq!(e.kind, ToolErrorKind::InvalidArgs);
        assert!(e.message.contains("transactions[1].id"), "{}", e.message);
        let args: CategorizeArgs = serde_json::from_value(json!({
            "transactions": [],
            "rules": [{"id": "r", "category": "x", "merchant_keyword": "a",
                       "mcc_from": "0001", "mcc_to": "0002"}]
        }))
        .unwrap();
        let e = categorize_transactions(args).unwrap_err();
        assert!(e.message.starts_with("rules[0]"), "{}", e.message);
    }

    #[test]
    fn schema_examples_deserialize_and_run() {
        let schema = SCHEMAS.load("categorize_transactions.args.json");
        SCHEMAS.assert_header(&schema, "categorize_transactions.args.json");
        let result_schema = SCHEMAS.load("categorize_transactions.result.json");
        SCHEMAS.assert_header(&result_schema, "categorize_transactions.result.json");
        let examples = schema["examples"].as_array().unwrap();
        assert_eq!(examples.len(), 1);
        for example in examples {
            run(example.clone());
        }
        assert!(
            serde_json::from_value::<CategorizeArgs>(json!({
                "transactions": [], "colour": "red"
            }))
            .is_err()
        );
        assert!(
            serde_json::from_value::<CategorizeArgs>(json!({
                "transactions": [{"id": "a", "merchant": "m", "amount_minor": 1,
                                  "currency": "EUR", "time": "2026-11-23T09:00:00Z", "note": 1}]
            }))
            .is_err()
        );
        assert_eq!(schema["properties"]["rules"]["default"], json!([]));
    }
}
