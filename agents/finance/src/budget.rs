//! `budget_status`: spending against monthly budgets, with a month-end projection.
//!
//! Rules (also stated in `schemas/finance/budget_status.*.json`):
//! - A transaction counts for the month when its local date (its instant shifted by
//!   `utc_offset_minutes`) lies in `month`. Its category comes from `rules::RuleSet` (its own
//!   `category`, else the caller's `rules`, else the built-in ones).
//! - Each budget is one (category, currency) pair; a pair may appear once. `spent_minor` is the
//!   sum of the counted transactions of that category **in that currency** (spends positive,
//!   refunds negative, so it may be negative); transactions of the category in other currencies
//!   are never converted or added, only counted in `other_currency_transactions`.
//! - `remaining_minor = limit_minor − spent_minor` (negative when over).
//! - `days_elapsed`: 0 when `today` is before the month, the day of month of `today` when inside
//!   it (today counts as elapsed), `days_in_month` when after it.
//! - `projected_minor = spent_minor × days_in_month / days_elapsed`, in i128 integer arithmetic,
//!   rounded to the nearest minor unit with halves away from zero; equal to `spent_minor` when
//!   `days_elapsed` is 0 (nothing to extrapolate from).
//! - `over`: `spent_minor > limit_minor`. `at_risk`: `projected_minor > limit_minor` and not
//!   over.
//! - A total or projection outside ±(2^53 − 1) is refused as invalid args naming the budget.
//! - Budgets come back in input order (at most 100, so nothing is cut).
//!
//! This module must not store budgets or transactions; the tick reuses [`evaluate`].

use std::collections::HashMap;
use std::fmt::Display;

use aura_sdk::args::{Item, check_len, check_range};
use aura_sdk::time::{check_offset, local_day};
use aura_sdk::{ToolError, ToolResult};
use serde::{Deserialize, Serialize};

use aura_sdk::date::{days_from_civil, days_in_month, parse_date, parse_month};
use aura_sdk::round::div_round_half_away;

use crate::common::{
    MONEY_ABS_MAX, Transaction, Tx, check_category, check_currency, check_transactions, money_total,
};
use crate::rules::{RuleSet, UserRule};

/// Most budgets one call accepts: one per category and currency a person tracks; 100 keeps the
/// result (one line each, nothing cut) small.
pub const MAX_BUDGETS: usize = 100;

/// One monthly budget.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Budget {
    /// The category it limits.
    pub category: String,
    /// The currency it is set in; only transactions in this currency count.
    pub currency: String,
    /// The monthly limit in minor units (0..2^53−1).
    pub limit_minor: i64,
}

/// Args of `budget_status`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct BudgetStatusArgs {
    /// The transactions (at most 2000, unique ids); those outside the month are ignored.
    pub transactions: Vec<Transaction>,
    /// The caller's categorization rules. Default none.
    #[serde(default)]
    pub rules: Vec<UserRule>,
    /// The budgets (at most 100, unique (category, currency)).
    pub budgets: Vec<Budget>,
    /// The month, "YYYY-MM".
    pub month: String,
    /// The user's local date, "YYYY-MM-DD".
    pub today: String,
    /// The user's offset east of UTC in minutes (-840..840). Default 0.
    #[serde(default)]
    pub utc_offset_minutes: i32,
}

/// One budget's status.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BudgetLine {
    pub category: String,
    pub currency: String,
    pub limit_minor: i64,
    pub spent_minor: i64,
    pub remaining_minor: i64,
    pub projected_minor: i64,
    pub over: bool,
    pub at_risk: bool,
    /// Transactions counted in `spent_minor`.
    pub transactions: u32,
    /// Transactions of the category in the month in other currencies (not counted).
    pub other_currency_transactions: u32,
}

/// Result of `budget_status`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BudgetStatusResult {
    pub month: String,
    pub days_in_month: u32,
    pub days_elapsed: u32,
    /// One line per budget, in input order.
    pub budgets: Vec<BudgetLine>,
}

/// A budget after checking.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckedBudget<'a> {
    pub category: &'a str,
    pub currency: &'a str,
    pub limit: i64,
}

/// Checks the budget list; `field` names it.
pub fn check_budgets<'a>(
    budgets: &'a [Budget],
    field: impl Display,
) -> ToolResult<Vec<CheckedBudget<'a>>> {
    check_len(budgets, &field, MAX_BUDGETS)?;
    // Not a HashMap: its hasher's seed is a WASI import call on each fresh instance.
    let mut seen = std::collections::BTreeMap::new();
    let mut out = Vec::with_capacity(budgets.len());
    for (i, b) in budgets.iter().enumerate() {
        let at = Item(&field, i);
        check_category(&b.category, format_args!("{at}.category"))?;
        check_currency(&b.currency, format_args!("{at}.currency"))?;
        check_range(
            b.limit_minor,
            format_args!("{at}.limit_minor"),
            0,
            MONEY_ABS_MAX,
        )?;
        if let Some(first) = seen.insert((b.category.as_str(), b.currency.as_str()), i) {
            return Err(ToolError::invalid_args(format!(
                "{at}: a second budget for {} in {} (also {field}[{first}])",
                b.category, b.currency
            )));
        }
        out.push(CheckedBudget {
            category: &b.category,
            currency: &b.currency,
            limit: b.limit_minor,
        });
    }
    Ok(out)
}

/// The month's first day (day number) and length, from "YYYY-MM".
pub fn month_span(month: &str, field: impl Display) -> ToolResult<(i64, u32)> {
    let (y, m) = parse_month(month, field)?;
    Ok((days_from_civil(y, m, 1), days_in_month(y, m)))
}

/// Days of the month elapsed by `today` (see the module documentation).
pub fn days_elapsed(first: i64, length: u32, today: i64) -> u32 {
    if today < first {
        0
    } else {
        // Clamped to 1..=length, so the cast cannot truncate.
        (today - first + 1).min(i64::from(length)) as u32
    }
}

/// The month being evaluated and the user's day in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// The month's first day (days since 1970-01-01).
    pub first: i64,
    /// Days in the month.
    pub length: u32,
    /// The user's local date.
    pub today: i64,
    /// The user's offset east of UTC, minutes.
    pub offset: i32,
}

/// The budget lines for already-checked inputs. `txs` may hold transactions of any month;
/// `field` names the budget list in error messages.
pub fn evaluate(
    txs: &[Tx<'_>],
    rules: &RuleSet,
    budgets: &[CheckedBudget<'_>],
    window: &Window,
    field: impl Display,
) -> ToolResult<Vec<BudgetLine>> {
    let Window {
        first,
        length,
        today,
        offset,
    } = *window;
    let elapsed = days_elapsed(first, length, today);
    let last = first + i64::from(length) - 1;
    // (category, currency) → (sum, count) over the month's transactions.
    let mut sums: HashMap<(&str, &str), (i128, u32)> = HashMap::new();
    let mut per_category: HashMap<&str, u32> = HashMap::new();
    for tx in txs {
        let day = local_day(tx.time, offset);
        if day < first || day > last {
            continue;
        }
        let category = rules.categorize(tx).category;
        *per_category.entry(category).or_default() += 1;
        let entry = sums.entry((category, tx.currency)).or_default();
        entry.0 += i128::from(tx.amount);
        entry.1 += 1;
    }
    budgets
        .iter()
        .enumerate()
        .map(|(i, b)| {
            let at = Item(&field, i);
            let (sum, count) = sums
                .get(&(b.category, b.currency))
                .copied()
                .unwrap_or((0, 0));
            let spent = money_total(sum, format_args!("{at}: spent"))?;
            let remaining =
                money_total(i128::from(b.limit) - sum, format_args!("{at}: remaining"))?;
            let projected = if elapsed == 0 {
                spent
            } else {
                money_total(
                    div_round_half_away(sum * i128::from(length), i128::from(elapsed)),
                    format_args!("{at}: projected"),
                )?
            };
            let over = spent > b.limit;
            Ok(BudgetLine {
                category: b.category.to_owned(),
                currency: b.currency.to_owned(),
                limit_minor: b.limit,
                spent_minor: spent,
                remaining_minor: remaining,
                projected_minor: projected,
                over,
                at_risk: !over && projected > b.limit,
                transactions: count,
                other_currency_transactions: per_category.get(b.category).copied().unwrap_or(0)
                    - count,
            })
        })
        .collect()
}

/// Reports every budget's status for the month. See the module documentation.
pub fn budget_status(args: BudgetStatusArgs) -> ToolResult<BudgetStatusResult> {
    check_offset(args.utc_offset_minutes, "utc_offset_minutes")?;
    let (first, length) = month_span(&args.month, "month")?;
    let today = parse_date(&args.today, "today")?;
    let rules = RuleSet::with_user_rules(&args.rules, "rules")?;
    let budgets = check_budgets(&args.budgets, "budgets")?;
    let txs = check_transactions(&args.transactions, "transactions")?;
    let window = Window {
        first,
        length,
        today,
        offset: args.utc_offset_minutes,
    };
    let lines = evaluate(&txs, &rules, &budgets, &window, "budgets")?;
    Ok(BudgetStatusResult {
        month: args.month,
        days_in_month: length,
        days_elapsed: days_elapsed(first, length, today),
        budgets: lines,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SCHEMAS;
    use aura_sdk::ToolErrorKind;
    use serde_json::{Value, json};

    fn run(args: Value) -> Value {
        crate::run_checked("budget_status", args, budget_status)
    }

    fn err(args: Value) -> aura_sdk::ToolError {
        let args: BudgetStatusArgs = serde_json::from_value(args).unwrap();
        budget_status(args).unwrap_err()
    }

    fn t(id: &str, merchant: &str, mcc: &str, amount: i64, currency: &str, time: &str) -> Value {
        json!({"id": id, "merchant": merchant, "mcc": mcc, "amount_minor": amount,
               "currency": currency, "time": time})
    }

    #[test]
    fn spent_remaining_projection_over_and_at_risk() {
        // November 2026 has 30 days; today 2026-11-10 → 10 days elapsed.
        // dining EUR: 3000 + 4550 − 550 (refund) = 7000; the USD dinner is not added.
        //   projected 7000 × 30 / 10 = 21000 > limit 20000, spent 7000 ≤ 20000 → at risk.
        // groceries EUR: 12000 + 9001 = 21001 > limit 20000 → over; projected 21001 × 3 = 63003.
        // fuel EUR: nothing → spent 0, projected 0, remaining 5000.
        // The October dinner and the December shop are outside the month.
        let result = run(json!({
            "transactions": [
                t("d1", "Trattoria", "5812", 3000, "EUR", "2026-11-02T19:00:00Z"),
                t("d2", "Sushi Bar", "5812", 4550, "EUR", "2026-11-05T20:00:00Z"),
                t("d3", "Sushi Bar", "5812", -550, "EUR", "2026-11-06T10:00:00Z"),
                t("d4", "NYC Diner", "5812", 2500, "USD", "2026-11-07T01:00:00Z"),
                t("d0", "Trattoria", "5812", 9999, "EUR", "2026-10-31T19:00:00Z"),
                t("g1", "Aldi", "5411", 12000, "EUR", "2026-11-03T09:00:00Z"),
                t("g2", "Aldi", "5411", 9001, "EUR", "2026-11-09T09:00:00Z"),
                t("g3", "Aldi", "5411", 7000, "EUR", "2026-12-01T09:00:00Z"),
            ],
            "budgets": [
                {"category": "dining", "currency": "EUR", "limit_minor": 20000},
                {"category": "groceries", "currency": "EUR", "limit_minor": 20000},
                {"category": "fuel", "currency": "EUR", "limit_minor": 5000},
            ],
            "month": "2026-11",
            "today": "2026-11-10",
        }));
        assert_eq!(
            result,
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
                     "other_currency_transactions": 0},
                    {"category": "fuel", "currency": "EUR", "limit_minor": 5000,
                     "spent_minor": 0, "remaining_minor": 5000, "projected_minor": 0,
                     "over": false, "at_risk": false, "transactions": 0,
                     "other_currency_transactions": 0},
                ]
            })
        );
    }

    #[test]
    fn projection_rounds_half_away_from_zero() {
        // February 2026 has 28 days; today the 8th. 1001 × 28 / 8 = 3503.5 → 3504.
        // A net refund −1001 projects to −3503.5 → −3504.
        // 1000 × 28 / 3 (today the 3rd) = 9333.33 → 9333.
        let args = |amount: i64, today: &str| {
            json!({"transactions": [t("a", "Aldi", "5411", amount, "EUR", "2026-02-01T12:00:00Z")],
                   "budgets": [{"category": "groceries", "currency": "EUR", "limit_minor": 0}],
                   "month": "2026-02", "today": today})
        };
        let line = |r: Value| r["budgets"][0].clone();
        let l = line(run(args(1001, "2026-02-08")));
        assert_eq!(
            (l["projected_minor"].clone(), l["over"].clone()),
            (json!(3504), json!(true))
        );
        let l = line(run(args(-1001, "2026-02-08")));
        assert_eq!(l["projected_minor"], -3504);
        assert_eq!(l["remaining_minor"], 1001);
        assert_eq!(
            (l["over"].clone(), l["at_risk"].clone()),
            (json!(false), json!(false))
        );
        assert_eq!(line(run(args(1000, "2026-02-03")))["projected_minor"], 9333);
    }

    #[test]
    fn today_outside_the_month_and_local_dates() {
        // Before the month: 0 days elapsed, projection = spent. After: 28 elapsed, = spent.
        let args = |today: &str, offset: i32| {
            json!({"transactions": [t("a", "Aldi", "5411", 500, "EUR", "2026-01-31T23:30:00Z")],
                   "budgets": [{"category": "groceries", "currency": "EUR", "limit_minor": 400}],
                   "month": "2026-02", "today": today, "utc_offset_minutes": offset})
        };
        // 2026-01-31T23:30Z is 2026-02-01 00:30 at +01:00: in February there, not at UTC.
        let r = run(args("2026-01-15", 60));
        assert_eq!(r["days_elapsed"], 0);
        assert_eq!(r["budgets"][0]["spent_minor"], 500);
        assert_eq!(r["budgets"][0]["projected_minor"], 500);
        assert_eq!(r["budgets"][0]["over"], true);
        let r = run(args("2026-03-02", 60));
        assert_eq!(r["days_elapsed"], 28);
        assert_eq!(r["budgets"][0]["projected_minor"], 500);
        let r = run(args("2026-02-14", 0));
        assert_eq!(r["budgets"][0]["spent_minor"], 0);
        assert_eq!(r["budgets"][0]["transactions"], 0);
    }

    #[test]
    fn given_categories_and_user_rules_decide_the_budget() {
        // "Pure Gym" → fitness by the user's rule; a transaction with category "fitness" counts
        // as given. 2999 + 1500 = 4499 of 5000, projected over 31 days from day 31 = 4499.
        let mut given = t(
            "b",
            "Yoga Studio",
            "7997",
            1500,
            "EUR",
            "2026-03-20T18:00:00Z",
        );
        given["category"] = json!("fitness");
        let r = run(json!({
            "transactions": [t("a", "Pure Gym", "7997", 2999, "EUR", "2026-03-01T07:00:00Z"), given],
            "rules": [{"id": "gym", "category": "fitness", "merchant_keyword": "pure gym"}],
            "budgets": [{"category": "fitness", "currency": "EUR", "limit_minor": 5000},
                        {"category": "entertainment", "currency": "EUR", "limit_minor": 100}],
            "month": "2026-03", "today": "2026-03-31",
        }));
        assert_eq!(r["budgets"][0]["spent_minor"], 4499);
        assert_eq!(r["budgets"][0]["projected_minor"], 4499);
        assert_eq!(r["budgets"][0]["at_risk"], false);
        // 7997 would be entertainment (7911–7999) without the rule and the given category.
        assert_eq!(r["budgets"][1]["spent_minor"], 0);
    }

    #[test]
    fn empty_inputs() {
        let r = run(
            json!({"transactions": [], "budgets": [], "month": "2026-12",
                           "today": "2026-12-01"}),
        );
        assert_eq!(
            r,
            json!({"month": "2026-12", "days_in_month": 31, "days_elapsed": 1, "budgets": []})
        );
    }

    #[test]
    fn inconsistent_args_are_invalid() {
        let base = json!({"transactions": [], "month": "2026-11", "today": "2026-11-10",
            "budgets": [{"category": "dining", "currency": "EUR", "limit_minor": 1},
                        {"category": "dining", "currency": "EUR", "limit_minor": 2}]});
        let e = err(base.clone());
        assert_eq!(e.kind, ToolErrorKind::InvalidArgs);
        assert!(e.message.starts_with("budgets[1]"), "{}", e.message);
        let mut bad_day = base.clone();
        bad_day["budgets"] = json!([]);
        bad_day["today"] = json!("2026-11-31");
        assert!(err(bad_day).message.starts_with("today"));
        let mut bad_month = base;
        bad_month["budgets"] = json!([]);
        bad_month["month"] = json!("2026-13");
        assert!(err(bad_month).message.starts_with("month"));
        // Two amounts at 2^53 − 1 add past the exact range.
        let max = MONEY_ABS_MAX;
        let e = err(json!({
            "transactions": [t("a", "Aldi", "5411", max, "EUR", "2026-11-01T09:00:00Z"),
                             t("b", "Aldi", "5411", max, "EUR", "2026-11-02T09:00:00Z")],
            "budgets": [{"category": "groceries", "currency": "EUR", "limit_minor": 1}],
            "month": "2026-11", "today": "2026-11-30"}));
        assert!(e.message.starts_with("budgets[0]: spent"), "{}", e.message);
        // One such amount halfway through the month projects past it.
        let e = err(json!({
            "transactions": [t("a", "Aldi", "5411", max, "EUR", "2026-11-01T09:00:00Z")],
            "budgets": [{"category": "groceries", "currency": "EUR", "limit_minor": 1}],
            "month": "2026-11", "today": "2026-11-15"}));
        assert!(
            e.message.starts_with("budgets[0]: projected"),
            "{}",
            e.message
        );
    }

    #[test]
    fn schema_examples_deserialize_and_run() {
        let schema = SCHEMAS.load("budget_status.args.json");
        SCHEMAS.assert_header(&schema, "budget_status.args.json");
        let result_schema = SCHEMAS.load("budget_status.result.json");
        SCHEMAS.assert_header(&result_schema, "budget_status.result.json");
        let examples = schema["examples"].as_array().unwrap();
        assert_eq!(examples.len(), 1);
        for example in examples {
            run(example.clone());
        }
        assert_eq!(schema["properties"]["utc_offset_minutes"]["default"], 0);
        assert_eq!(schema["properties"]["rules"]["default"], json!([]));
    }
}
