//! `upcoming_bills`: recurring payments found in the history, with their next expected date and
//! amount.
//!
//! Rules (also stated in `schemas/finance/upcoming_bills.*.json`):
//! - Only spends (`amount_minor > 0`) dated on or before `today` count; dates are local dates at
//!   `utc_offset_minutes`. Spends are grouped by merchant (`common::merchant_key`) and currency.
//! - **Amount clusters**: within a group, amounts sorted ascending are cut into clusters: a
//!   cluster takes every following amount up to `amount_tolerance_percent` above its smallest
//!   amount. So one merchant can hold two bills (a 0.99 and a 9.99 plan), and each bill's
//!   amounts lie within the tolerance of each other.
//! - **Period**: a cluster's spends in date order, walked back from the latest. The interval to
//!   the previous spend picks the period whose expected interval it matches within that period's
//!   tolerance: weekly 7 days ± 1, monthly one calendar month (28–31 days, from the previous
//!   date) ± 4, yearly one calendar year ± 7 ([`PERIODS`]). The walk goes on while intervals
//!   match the same period; a second spend on the same day is skipped (a duplicate charge does
//!   not end a series). The run is the series; spends before it are ignored.
//! - A series needs at least 3 occurrences, or 2 when yearly (three years of history is rare).
//! - **Next date**: the last date plus 7 days, one calendar month (day of month kept, clamped
//!   to the month's length) or one calendar year (29 Feb → 28 Feb). `due_in_days` = next −
//!   today; a series whose next date is more than its tolerance before today has lapsed (the
//!   payment stopped): it is counted in `lapsed`, not listed.
//! - **Next amount**: the median of the series' amounts (the mean of the two middle amounts when
//!   their number is even, rounded half up).
//! - **Confidence** (0..1, 3 decimals, rounded half up): `min(occurrences, full) / full ×
//!   (1 − mean deviation / (2 × tolerance))`, where `full` is 8 weekly, 6 monthly, 3 yearly
//!   occurrences and the deviation is each interval's distance from its expected interval. The
//!   second factor lies in 0.5..1.
//! - Bills are ordered by next date, then merchant key, currency and next amount; at most 100,
//!   `truncated` set when more qualified.
//!
//! This module must not schedule or pay anything; the tick reuses [`find_bills`].

use std::collections::HashMap;

use aura_sdk::ToolResult;
use aura_sdk::args::check_range;
use aura_sdk::time::{check_offset, local_day};
use serde::{Deserialize, Serialize};

use aura_sdk::date::{FIRST_DAY, LAST_DAY, add_months, format_date, parse_date};

use crate::common::{RESULT_LIST_MAX, Transaction, Tx, check_transactions};

/// Default `amount_tolerance_percent`: a bill's amount moves with usage, tax or currency
/// rounding by a few percent; 10 % keeps those together and separates different plans.
pub const DEFAULT_AMOUNT_TOLERANCE_PERCENT: u32 = 10;
/// Largest `amount_tolerance_percent`.
pub const MAX_AMOUNT_TOLERANCE_PERCENT: u32 = 50;

/// A recurrence period.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Period {
    Weekly,
    Monthly,
    Yearly,
}

/// What each period allows: (period, tolerance in days, fewest occurrences, occurrences for
/// full confidence). Weekly ±1 day: card settlement shifts a day. Monthly ±4: a bill due on a
/// weekend or holiday moves up to a long weekend either way. Yearly ±7: annual renewals drift
/// by days. Yearly needs only 2 occurrences since three years of history is rare.
pub const PERIODS: [(Period, i64, usize, usize); 3] = [
    (Period::Weekly, 1, 3, 8),
    (Period::Monthly, 4, 3, 6),
    (Period::Yearly, 7, 2, 3),
];

impl Period {
    fn tolerance(self) -> i64 {
        PERIODS[self as usize].1
    }
    fn min_occurrences(self) -> usize {
        PERIODS[self as usize].2
    }
    fn full_occurrences(self) -> usize {
        PERIODS[self as usize].3
    }
    /// The date one period after `day`.
    pub fn next(self, day: i64) -> i64 {
        match self {
            Period::Weekly => day + 7,
            Period::Monthly => add_months(day, 1),
            Period::Yearly => add_months(day, 12),
        }
    }
    /// The period's short name (JSON and signals).
    pub fn as_str(self) -> &'static str {
        match self {
            Period::Weekly => "weekly",
            Period::Monthly => "monthly",
            Period::Yearly => "yearly",
        }
    }
}

fn default_tolerance() -> u32 {
    DEFAULT_AMOUNT_TOLERANCE_PERCENT
}

/// Args of `upcoming_bills`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct UpcomingBillsArgs {
    /// The history (at most 2000, unique ids).
    pub transactions: Vec<Transaction>,
    /// The user's local date, "YYYY-MM-DD".
    pub today: String,
    /// The user's offset east of UTC in minutes (-840..840). Default 0.
    #[serde(default)]
    pub utc_offset_minutes: i32,
    /// How far above a cluster's smallest amount its amounts may lie (0..50 %). Default 10.
    #[serde(default = "default_tolerance")]
    pub amount_tolerance_percent: u32,
}

/// One recurring payment.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Bill {
    /// The merchant as its latest payment shows it.
    pub merchant: String,
    pub currency: String,
    pub period: Period,
    pub occurrences: u32,
    pub first_date: String,
    pub last_date: String,
    /// Id of the latest payment.
    pub last_transaction_id: String,
    pub last_amount_minor: i64,
    pub next_date: String,
    pub due_in_days: i64,
    pub next_amount_minor: i64,
    /// 0..1, 3 decimals.
    pub confidence: f64,
}

/// Result of `upcoming_bills`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UpcomingBillsResult {
    pub bills: Vec<Bill>,
    /// Series that stopped (next date more than the tolerance ago).
    pub lapsed: u32,
    pub truncated: bool,
}

/// A detected series, by indices into the analysed slice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Series {
    pub period: Period,
    /// The series' spends, oldest first.
    pub txs: Vec<usize>,
    pub first_day: i64,
    pub last_day: i64,
    pub next_day: i64,
    pub due_in_days: i64,
    pub next_amount: i64,
    /// Thousandths.
    pub confidence_milli: i64,
}

/// Finds the recurring series (see the module documentation). Returns the live series in
/// result order and the number of lapsed ones.
pub fn find_bills(
    txs: &[Tx<'_>],
    today: i64,
    offset: i32,
    tolerance_percent: u32,
) -> (Vec<Series>, u32) {
    let mut groups: HashMap<(&str, &str), Vec<(i64, usize)>> = HashMap::new();
    for (i, tx) in txs.iter().enumerate() {
        let day = local_day(tx.time, offset);
        if tx.is_spend() && day <= today && day >= FIRST_DAY {
            groups
                .entry((&tx.key, tx.currency))
                .or_default()
                .push((day, i));
        }
    }
    let mut series = Vec::new();
    let mut lapsed = 0u32;
    for members in groups.values() {
        // Amount clusters.
        let mut by_amount = members.clone();
        by_amount.sort_by_key(|&(day, i)| (txs[i].amount, day, i));
        let mut start = 0;
        while start < by_amount.len() {
            let floor = i128::from(txs[by_amount[start].1].amount);
            let cap = floor * (100 + i128::from(tolerance_percent)); // amount × 100 ≤ cap
            let mut end = start + 1;
            while end < by_amount.len() && i128::from(txs[by_amount[end].1].amount) * 100 <= cap {
                end += 1;
            }
            let mut cluster = by_amount[start..end].to_vec();
            cluster.sort_by_key(|&(day, i)| (day, txs[i].time, i));
            match detect(&cluster, txs, today) {
                Some(s) if s.next_day > LAST_DAY => {} // not writable as a date
                Some(s) if today > s.next_day + s.period.tolerance() => lapsed += 1,
                Some(s) => series.push(s),
                None => {}
            }
            start = end;
        }
    }
    series.sort_by(|a, b| {
        let (ta, tb) = (&txs[*a.txs.last().unwrap()], &txs[*b.txs.last().unwrap()]);
        (a.next_day, &ta.key, ta.currency, a.next_amount, ta.index).cmp(&(
            b.next_day,
            &tb.key,
            tb.currency,
            b.next_amount,
            tb.index,
        ))
    });
    (series, lapsed)
}

/// The trailing series of one amount cluster (sorted by date), if it is periodic enough.
fn detect(cluster: &[(i64, usize)], txs: &[Tx<'_>], today: i64) -> Option<Series> {
    let (last_day, last) = *cluster.last()?;
    let mut run = vec![last];
    let mut run_day = last_day;
    let mut period: Option<Period> = None;
    let mut deviations: Vec<i64> = Vec::new();
    for &(day, i) in cluster.iter().rev().skip(1) {
        if day == run_day {
            continue; // a second charge on the same day
        }
        let interval = run_day - day;
        let fits = |p: Period| {
            let deviation = (interval - (p.next(day) - day)).abs();
            (deviation <= p.tolerance()).then_some(deviation)
        };
        let matched = match period {
            Some(p) => fits(p).map(|d| (p, d)),
            None => PERIODS.iter().find_map(|&(p, ..)| fits(p).map(|d| (p, d))),
        };
        let Some((p, deviation)) = matched else {
            break;
        };
        period = Some(p);
        deviations.push(deviation);
        run.push(i);
        run_day = day;
    }
    let period = period?;
    if run.len() < period.min_occurrences() {
        return None;
    }
    run.reverse();
    let mut amounts: Vec<i64> = run.iter().map(|&i| txs[i].amount).collect();
    amounts.sort_unstable();
    let n = amounts.len();
    let next_amount = if n % 2 == 1 {
        amounts[n / 2]
    } else {
        // Both positive and ≤ 2^53 − 1: the sum fits i64; (a + b + 1) / 2 rounds half up.
        (amounts[n / 2 - 1] + amounts[n / 2] + 1) / 2
    };
    let next_day = period.next(last_day);
    // confidence = min(occ, full)/full × (2·tol·k − Σdev)/(2·tol·k), in thousandths, half up.
    let full = period.full_occurrences() as i64;
    let occ = (run.len() as i64).min(full);
    let k = deviations.len() as i64;
    let span = 2 * period.tolerance() * k;
    let numerator = 1000 * occ * (span - deviations.iter().sum::<i64>());
    let denominator = full * span;
    let confidence_milli = (2 * numerator + denominator) / (2 * denominator);
    Some(Series {
        period,
        first_day: run_day,
        txs: run,
        last_day,
        next_day,
        due_in_days: next_day - today,
        next_amount,
        confidence_milli,
    })
}

/// Lists the recurring payments. See the module documentation.
pub fn upcoming_bills(args: UpcomingBillsArgs) -> ToolResult<UpcomingBillsResult> {
    check_offset(args.utc_offset_minutes, "utc_offset_minutes")?;
    check_range(
        args.amount_tolerance_percent,
        "amount_tolerance_percent",
        0,
        MAX_AMOUNT_TOLERANCE_PERCENT,
    )?;
    let today = parse_date(&args.today, "today")?;
    let txs = check_transactions(&args.transactions, "transactions")?;
    let (series, lapsed) = find_bills(
        &txs,
        today,
        args.utc_offset_minutes,
        args.amount_tolerance_percent,
    );
    let truncated = series.len() > RESULT_LIST_MAX;
    let bills = series
        .iter()
        .take(RESULT_LIST_MAX)
        .map(|s| {
            let last = &txs[*s.txs.last().expect("a series has occurrences")];
            Bill {
                merchant: last.merchant.to_owned(),
                currency: last.currency.to_owned(),
                period: s.period,
                occurrences: s.txs.len() as u32,
                first_date: format_date(s.first_day),
                last_date: format_date(s.last_day),
                last_transaction_id: last.id.to_owned(),
                last_amount_minor: last.amount,
                next_date: format_date(s.next_day),
                due_in_days: s.due_in_days,
                next_amount_minor: s.next_amount,
                confidence: crate::common::fixed_point(s.confidence_milli, 3),
            }
        })
        .collect();
    Ok(UpcomingBillsResult {
        bills,
        lapsed,
        truncated,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SCHEMAS;
    use aura_sdk::ToolErrorKind;
    use serde_json::{Value, json};

    fn run(args: Value) -> Value {
        crate::run_checked("upcoming_bills", args, upcoming_bills)
    }

    fn t(id: &str, merchant: &str, amount: i64, date: &str) -> Value {
        json!({"id": id, "merchant": merchant, "amount_minor": amount, "currency": "EUR",
               "time": format!("{date}T08:00:00Z")})
    }

    #[test]
    fn a_monthly_subscription() {
        // Netflix on the 15th: Jul..Nov 2026 (5 occurrences), 1299 ×4 then 1399 (within 10 %
        // of 1299: 1399 × 100 = 139900 ≤ 1299 × 110 = 142890). Intervals 31 (Jul→Aug), 31,
        // 30, 31, each exactly one calendar month: deviations 0.
        // Next 2026-12-15; today 2026-12-12 → due in 3 days. Median of 1299 1299 1299 1299
        // 1399 = 1299. Confidence 5/6 × (1 − 0) = 0.8333… → 0.833.
        let months = ["07", "08", "09", "10", "11"];
        let list: Vec<Value> = months
            .iter()
            .enumerate()
            .map(|(i, m)| {
                t(
                    &format!("n{i}"),
                    "NETFLIX.COM",
                    if i == 4 { 1399 } else { 1299 },
                    &format!("2026-{m}-15"),
                )
            })
            .collect();
        let result = run(json!({"transactions": list, "today": "2026-12-12"}));
        assert_eq!(
            result,
            json!({"bills": [{
                "merchant": "NETFLIX.COM", "currency": "EUR", "period": "monthly",
                "occurrences": 5, "first_date": "2026-07-15", "last_date": "2026-11-15",
                "last_transaction_id": "n4", "last_amount_minor": 1399,
                "next_date": "2026-12-15", "due_in_days": 3, "next_amount_minor": 1299,
                "confidence": 0.833
            }], "lapsed": 0, "truncated": false})
        );
    }

    #[test]
    fn weekly_with_jitter_and_two_plans_at_one_merchant() {
        // Gym weekly: Nov 2, 9, 17 (8 days: deviation 1), 23 (6 days: deviation 1), 30.
        // Deviations 0 (23→30), 1, 1, 0 walked back; Σ 2 over k = 4 intervals, tol 1:
        // (8 − 2)/8 = 0.75; occurrences 5 of full 8 → 5/8 × 0.75 = 0.46875 → 0.469.
        // Amounts 1000 ×5 → next 1000. Next Dec 7; today Dec 1 → 6 days.
        // Cloud: 99 monthly and 999 monthly at the same merchant, Sep..Nov on the 3rd.
        // 99 → next Dec 3 (2 days); 999 → Dec 3 too; order by next date, key, currency, amount.
        // Occurrences 3 of 6, deviations 0: confidence 0.5.
        let mut list = vec![];
        for (i, d) in [
            "2026-11-02",
            "2026-11-09",
            "2026-11-17",
            "2026-11-23",
            "2026-11-30",
        ]
        .iter()
        .enumerate()
        {
            list.push(t(&format!("g{i}"), "City Gym", 1000, d));
        }
        for (i, m) in ["09", "10", "11"].iter().enumerate() {
            list.push(t(
                &format!("s{i}"),
                "Cloud Store",
                99,
                &format!("2026-{m}-03"),
            ));
            list.push(t(
                &format!("b{i}"),
                "Cloud Store",
                999,
                &format!("2026-{m}-03"),
            ));
        }
        let result = run(json!({"transactions": list, "today": "2026-12-01"}));
        let bills = result["bills"].as_array().unwrap();
        assert_eq!(bills.len(), 3);
        assert_eq!(
            (
                bills[0]["next_amount_minor"].clone(),
                bills[0]["next_date"].clone()
            ),
            (json!(99), json!("2026-12-03"))
        );
        assert_eq!(bills[0]["confidence"], 0.5);
        assert_eq!(bills[1]["next_amount_minor"], 999);
        assert_eq!(bills[1]["due_in_days"], 2);
        let gym = &bills[2];
        assert_eq!(gym["period"], "weekly");
        assert_eq!(gym["occurrences"], 5);
        assert_eq!(gym["next_date"], "2026-12-07");
        assert_eq!(gym["due_in_days"], 6);
        assert_eq!(gym["confidence"], 0.469);
    }

    #[test]
    fn yearly_needs_two_and_month_ends_clamp() {
        // Insurance 2025-03-01 and 2026-03-02 (366 days; a year from 2025-03-01 is 365: dev 1).
        // Next 2027-03-02; today 2026-12-01 → 91 days. Median of 48000, 50000 = 49000.
        // Confidence 2/3 × (14 − 1)/14 = 0.619047… → 0.619.
        // Rent on month ends: Jan 31, Feb 28, Mar 31 2026: Feb 28 is exactly one month after
        // Jan 31 (clamped); Mar 31 is 31 days after Feb 28 where a month is 28 → deviation 3.
        // Next from Mar 31 = Apr 30; today 2026-04-29 → 1 day. Median 90000.
        // Confidence 3/6 × (16 − 3)/16 = 0.40625 → 0.406.
        let result = run(json!({"transactions": [
            t("i1", "Acme Insurance", 48000, "2025-03-01"),
            t("i2", "Acme Insurance", 50000, "2026-03-02"),
        ], "today": "2026-12-01"}));
        let bill = &result["bills"][0];
        assert_eq!(bill["period"], "yearly");
        assert_eq!(bill["next_date"], "2027-03-02");
        assert_eq!(bill["due_in_days"], 91);
        assert_eq!(bill["next_amount_minor"], 49000);
        assert_eq!(bill["confidence"], 0.619);
        let result = run(json!({"transactions": [
            t("r1", "Landlord", 90000, "2026-01-31"),
            t("r2", "Landlord", 90000, "2026-02-28"),
            t("r3", "Landlord", 90000, "2026-03-31"),
        ], "today": "2026-04-29"}));
        let bill = &result["bills"][0];
        assert_eq!(bill["next_date"], "2026-04-30");
        assert_eq!(bill["due_in_days"], 1);
        assert_eq!(bill["confidence"], 0.406);
    }

    #[test]
    fn what_is_not_a_bill() {
        // Two monthly payments only; irregular intervals (3, 20 days); refunds; a series that
        // lapsed (last Aug 3 → next Sep 3, today Nov 1 is 59 days later > 4); a payment after
        // today is not history yet.
        let result = run(json!({"transactions": [
            t("a1", "Phone Co", 2000, "2026-09-10"),
            t("a2", "Phone Co", 2000, "2026-10-10"),
            t("b1", "Shop", 500, "2026-10-01"),
            t("b2", "Shop", 500, "2026-10-04"),
            t("b3", "Shop", 500, "2026-10-24"),
            t("c1", "Refunder", -500, "2026-08-01"),
            t("c2", "Refunder", -500, "2026-09-01"),
            t("c3", "Refunder", -500, "2026-10-01"),
            t("l1", "Old Mag", 700, "2026-06-03"),
            t("l2", "Old Mag", 700, "2026-07-03"),
            t("l3", "Old Mag", 700, "2026-08-03"),
            t("f1", "Phone Co", 2000, "2026-11-10"),
        ], "today": "2026-11-01"}));
        assert_eq!(
            result,
            json!({"bills": [], "lapsed": 1, "truncated": false})
        );
    }

    #[test]
    fn a_same_day_duplicate_does_not_break_the_series() {
        // Oct 5 twice: the second is skipped; Aug 5, Sep 5, Oct 5 → 3 occurrences.
        let result = run(json!({"transactions": [
            t("x1", "Water Board", 3000, "2026-08-05"),
            t("x2", "Water Board", 3000, "2026-09-05"),
            t("x3", "Water Board", 3000, "2026-10-05"),
            t("x4", "Water Board", 3000, "2026-10-05"),
        ], "today": "2026-10-20"}));
        assert_eq!(result["bills"][0]["occurrences"], 3);
        assert_eq!(result["bills"][0]["last_transaction_id"], "x4");
        assert_eq!(result["bills"][0]["due_in_days"], 16); // Nov 5 − Oct 20
    }

    #[test]
    fn more_than_a_hundred_bills_are_cut() {
        // 101 billers ("Biller aa" .. "Biller dw"), each paid on the 5th of Aug, Sep, Oct: 101
        // monthly series, all next on Nov 5; ordered by merchant key, the first 100 are listed.
        let mut list = vec![];
        for i in 0..101u8 {
            let name = format!(
                "Biller {}{}",
                (b'a' + i / 26) as char,
                (b'a' + i % 26) as char
            );
            for m in ["08", "09", "10"] {
                list.push(t(
                    &format!("b{i}-{m}"),
                    &name,
                    1000,
                    &format!("2026-{m}-05"),
                ));
            }
        }
        let result = run(json!({"transactions": list, "today": "2026-11-01"}));
        let bills = result["bills"].as_array().unwrap();
        assert_eq!(bills.len(), 100);
        assert_eq!(result["truncated"], true);
        assert_eq!(bills[0]["merchant"], "Biller aa");
        assert_eq!(bills[99]["merchant"], "Biller dv");
    }

    #[test]
    fn inconsistent_args_are_invalid() {
        let args = |today: &str, tolerance: u32| UpcomingBillsArgs {
            transactions: vec![],
            today: today.into(),
            utc_offset_minutes: 0,
            amount_tolerance_percent: tolerance,
        };
        let e = upcoming_bills(args("2026-02-30", 10)).unwrap_err();
        assert_eq!(e.kind, ToolErrorKind::InvalidArgs);
        assert!(e.message.starts_with("today"));
        let e = upcoming_bills(args("2026-02-03", 51)).unwrap_err();
        assert!(e.message.starts_with("amount_tolerance_percent"));
        assert_eq!(
            serde_json::to_value(upcoming_bills(args("2026-02-03", 0)).unwrap()).unwrap(),
            json!({"bills": [], "lapsed": 0, "truncated": false})
        );
    }

    #[test]
    fn schema_examples_deserialize_and_run() {
        let schema = SCHEMAS.load("upcoming_bills.args.json");
        SCHEMAS.assert_header(&schema, "upcoming_bills.args.json");
        let result_schema = SCHEMAS.load("upcoming_bills.result.json");
        SCHEMAS.assert_header(&result_schema, "upcoming_bills.result.json");
        let examples = schema["examples"].as_array().unwrap();
        assert_eq!(examples.len(), 1);
        for example in examples {
            let result = run(example.clone());
            assert!(!result["bills"].as_array().unwrap().is_empty());
        }
        let props = &schema["properties"];
        assert_eq!(props["amount_tolerance_percent"]["default"], 10);
        assert_eq!(props["utc_offset_minutes"]["default"], 0);
    }
}
