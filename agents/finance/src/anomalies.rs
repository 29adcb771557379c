//! `detect_anomalies`: unusually large spends, duplicate charges and large first-time merchants.
//!
//! Rules (also stated in `schemas/finance/detect_anomalies.*.json`):
//! - Only spends (`amount_minor > 0`) are scored and flagged; refunds, credits and zero amounts
//!   are ignored, except that any transaction makes its merchant "seen" for the first-time rule.
//!   Merchants are compared by `common::merchant_key` (words, numbers dropped).
//! - Evaluated: the spends at or after `since` (all spends when `since` is absent). The whole
//!   list, before and after `since`, is the history the baselines are computed from.
//! - **Unusually large** — judged against the person's own history: a robust modified z-score
//!   (Iglewicz & Hoaglin), `z = 0.6745 · (x − median) / MAD`, over the spends of the same
//!   merchant in the same currency, the transaction itself included. When that merchant has
//!   fewer than `min_history` spends in the currency (a new or rare merchant) the baseline is the
//!   transaction's category in the currency, and the spend must also be above that category's
//!   usual range: larger than every earlier spend of the category in the currency (a dinner
//!   within what the person already spends on dinners is not unusual, wherever it is eaten);
//!   when the category is also too small there is no score. MAD = 0 (more than half the
//!   amounts equal the median): the mean absolute deviation is used instead,
//!   `z = (x − median) / (1.253314 · MeanAD)` (1.253314 = √(π/2) makes MeanAD comparable to a
//!   standard deviation); when every amount of the baseline is equal the score is 0. Computed
//!   exactly in i128 fixed point (amounts doubled so medians stay integers), the score is
//!   rounded to 2 decimals, halves away from zero, and clamped to ±1,000,000. Flagged when
//!   `z ≥ 3.5` ([`Z_THRESHOLD_CENTI`]) and the amount exceeds the median by at least 20 %
//!   ([`UNUSUAL_MIN_EXCESS_PERCENT`]). Only the high side is flagged.
//! - **Duplicate** — an earlier spend (by time, then input position) with the same merchant,
//!   currency and amount at most `duplicate_window_minutes` before; `duplicate_of` names the
//!   earliest such spend (the original charge).
//! - **First-time merchant** — a first charge is not unusual for that alone: it is named as a
//!   reason only beside `unusually_large` (a large first charge at a merchant never seen, the
//!   pattern of a stolen card), for a spend of at least `first_time_min_minor` (in the
//!   transaction's own minor units) whose merchant appears in no earlier transaction, when the
//!   history reaches at least 30 days ([`FIRST_TIME_MIN_HISTORY_DAYS`]) before it (a short
//!   history makes every merchant new).
//! - `flagged` is ordered by time, then input position, at most 100 ([`RESULT_LIST_MAX`]), with
//!   `truncated` set when more qualified. `score`, `score_method`, `baseline`,
//!   `baseline_median_minor` (rounded half away from zero) and `baseline_size` are present
//!   whenever the flagged spend had a baseline, whatever its reasons.
//!
//! This module must not mark or store anything; the tick reuses [`analyze`].

use std::collections::HashMap;

use aura_sdk::ToolResult;
use aura_sdk::args::check_range;
use aura_sdk::time::{SECS_PER_DAY, SECS_PER_MINUTE, parse_time};
use serde::{Deserialize, Serialize};

use aura_sdk::round::div_round_half_away;

use crate::common::{
    MONEY_ABS_MAX, RESULT_LIST_MAX, Transaction, Tx, check_transactions, fixed_point,
};
use crate::rules::{RuleSet, UserRule};

/// Flag threshold for the modified z-score, in hundredths: 3.5, the cut-off Iglewicz and Hoaglin
/// recommend for the modified z-score.
pub const Z_THRESHOLD_CENTI: i64 = 350;
/// A flagged spend must exceed its baseline median by at least this percentage: against a very
/// steady baseline (MAD 0) a few cents more would otherwise score above 3.5, and a small price
/// change is not an anomaly.
pub const UNUSUAL_MIN_EXCESS_PERCENT: i128 = 20;
/// Scores are clamped to ±1,000,000.00 (in hundredths) so the output stays bounded when the
/// spread is tiny compared with the amount.
pub const SCORE_CENTI_MAX: i64 = 100_000_000;
/// 0.6745 · 2 in ten-thousandths: the MAD formula with amounts doubled and MAD quadrupled.
const MAD_FACTOR_1E4: i128 = 13_490;
/// √(π/2) in millionths, for the mean-absolute-deviation fallback.
const MEAN_AD_FACTOR_1E6: i128 = 1_253_314;
/// The history must reach this far before a spend for its merchant to count as new.
pub const FIRST_TIME_MIN_HISTORY_DAYS: i64 = 30;

/// Default `min_history`: five spends give a median and MAD that one outlier cannot move far.
pub const DEFAULT_MIN_HISTORY: u32 = 5;
/// Bounds of `min_history`: fewer than 3 amounts have no meaningful spread.
pub const MIN_HISTORY: (u32, u32) = (3, 100);
/// Default `duplicate_window_minutes`: a terminal retry or double tap lands within minutes.
pub const DEFAULT_DUPLICATE_WINDOW_MINUTES: u32 = 10;
/// Largest `duplicate_window_minutes` (one day).
pub const MAX_DUPLICATE_WINDOW_MINUTES: u32 = 1440;
/// Default `first_time_min_minor`: 100.00 in a two-decimal currency.
pub const DEFAULT_FIRST_TIME_MIN_MINOR: i64 = 10_000;

fn default_min_history() -> u32 {
    DEFAULT_MIN_HISTORY
}
fn default_duplicate_window() -> u32 {
    DEFAULT_DUPLICATE_WINDOW_MINUTES
}
fn default_first_time_min() -> i64 {
    DEFAULT_FIRST_TIME_MIN_MINOR
}

/// Args of `detect_anomalies`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct DetectAnomaliesArgs {
    /// The history, including the transactions to evaluate (at most 2000, unique ids).
    pub transactions: Vec<Transaction>,
    /// The caller's categorization rules (for the category baseline). Default none.
    #[serde(default)]
    pub rules: Vec<UserRule>,
    /// Evaluate only spends at or after this instant (RFC 3339). Default: all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<String>,
    /// Fewest spends a baseline needs (3..100). Default 5.
    #[serde(default = "default_min_history")]
    pub min_history: u32,
    /// Window for duplicates, minutes (0..1440). Default 10.
    #[serde(default = "default_duplicate_window")]
    pub duplicate_window_minutes: u32,
    /// Smallest first-time-merchant spend flagged, minor units. Default 10000.
    #[serde(default = "default_first_time_min")]
    pub first_time_min_minor: i64,
}

/// Why a spend was flagged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    UnusuallyLarge,
    Duplicate,
    FirstTimeMerchant,
}

impl Reason {
    /// The snake_case name used in JSON and in tick signals.
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::UnusuallyLarge => "unusually_large",
            Reason::Duplicate => "duplicate",
            Reason::FirstTimeMerchant => "first_time_merchant",
        }
    }
}

/// Which spends a score was computed against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Baseline {
    Merchant,
    Category,
}

/// How the spread of the baseline was measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ScoreMethod {
    /// Median absolute deviation.
    Mad,
    /// MAD was 0: mean absolute deviation × √(π/2).
    MeanAbsoluteDeviation,
    /// Every amount of the baseline is equal: score 0.
    Constant,
}

/// A spend's score against its baseline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Score {
    /// The modified z-score in hundredths.
    pub centi: i64,
    pub method: ScoreMethod,
    pub baseline: Baseline,
    /// Twice the baseline's median (exact).
    pub median2: i128,
    pub size: u32,
}

/// One flagged spend, by index into the analysed slice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub tx: usize,
    /// In [`Reason`] order, at least one.
    pub reasons: Vec<Reason>,
    pub score: Option<Score>,
    /// Index of the original charge when a duplicate.
    pub duplicate_of: Option<usize>,
}

/// The analysis parameters, checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Params {
    /// Unix seconds; spends before it are history only.
    pub since: Option<i64>,
    pub min_history: usize,
    pub duplicate_window_secs: i64,
    pub first_time_min: i64,
}

impl Default for Params {
    fn default() -> Self {
        Self {
            since: None,
            min_history: DEFAULT_MIN_HISTORY as usize,
            duplicate_window_secs: i64::from(DEFAULT_DUPLICATE_WINDOW_MINUTES) * SECS_PER_MINUTE,
            first_time_min: DEFAULT_FIRST_TIME_MIN_MINOR,
        }
    }
}

/// One flagged transaction in the result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Flagged {
    pub id: String,
    pub merchant: String,
    pub amount_minor: i64,
    pub currency: String,
    /// As given.
    pub time: String,
    pub category: String,
    pub reasons: Vec<Reason>,
    /// Modified z-score, 2 decimals.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub score_method: Option<ScoreMethod>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baseline: Option<Baseline>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baseline_median_minor: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baseline_size: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duplicate_of: Option<String>,
}

/// Result of `detect_anomalies`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DetectAnomaliesResult {
    /// Flagged spends by time, then input position.
    pub flagged: Vec<Flagged>,
    /// Spends evaluated (at or after `since`).
    pub evaluated: u32,
    /// Whether more spends qualified than `flagged` holds.
    pub truncated: bool,
}

/// Median and spread of one baseline's amounts, in exact doubled units.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stats {
    /// 2 × median.
    median2: i128,
    /// 4 × MAD: the median of |2x − median2| doubled.
    mad4: i128,
    /// Σ |2x − median2| = 2 × Σ |x − median|.
    sum_dev2: i128,
    n: usize,
}

/// Twice the median of a sorted, non-empty list.
fn median2_of_sorted(sorted: &[i128]) -> i128 {
    let n = sorted.len();
    if n % 2 == 1 {
        2 * sorted[n / 2]
    } else {
        sorted[n / 2 - 1] + sorted[n / 2]
    }
}

fn stats(amounts: &mut [i128]) -> Stats {
    amounts.sort_unstable();
    let median2 = median2_of_sorted(amounts);
    let mut dev2: Vec<i128> = amounts.iter().map(|&x| (2 * x - median2).abs()).collect();
    dev2.sort_unstable();
    Stats {
        median2,
        mad4: median2_of_sorted(&dev2),
        sum_dev2: dev2.iter().sum(),
        n: amounts.len(),
    }
}

/// The modified z-score of `x` against `s`, in hundredths (see the module documentation).
fn score_centi(x: i64, s: &Stats) -> (i64, ScoreMethod) {
    let d2 = 2 * i128::from(x) - s.median2; // 2 (x − median)
    let (centi, method) = if s.mad4 > 0 {
        // z = 0.6745 (x − m) / MAD = 1.349 · d2 / mad4; hundredths: 13490 · d2 / (100 · mad4).
        (
            div_round_half_away(MAD_FACTOR_1E4 * d2, 100 * s.mad4),
            ScoreMethod::Mad,
        )
    } else if s.sum_dev2 > 0 {
        // MeanAD = sum_dev2 / (2n); z = (d2 / 2) / (1.253314 · MeanAD) = d2 · n / (1.253314 ·
        // sum_dev2); hundredths: d2 · n · 10^8 / (1253314 · sum_dev2).
        (
            div_round_half_away(
                d2 * s.n as i128 * 100_000_000,
                MEAN_AD_FACTOR_1E6 * s.sum_dev2,
            ),
            ScoreMethod::MeanAbsoluteDeviation,
        )
    } else {
        (0, ScoreMethod::Constant)
    };
    let clamped = centi.clamp(-i128::from(SCORE_CENTI_MAX), i128::from(SCORE_CENTI_MAX));
    (clamped as i64, method)
}

/// Flags the spends of `txs` (see the module documentation). Returns the findings by time, then
/// position, and the number of spends evaluated.
pub fn analyze(txs: &[Tx<'_>], rules: &RuleSet, p: &Params) -> (Vec<Finding>, u32) {
    let categories: Vec<Option<&str>> = txs
        .iter()
        .map(|tx| tx.is_spend().then(|| rules.categorize(tx).category))
        .collect();

    // Baselines: spends per (merchant, currency) and per (category, currency).
    let mut by_merchant: HashMap<(&str, &str), Vec<i128>> = HashMap::new();
    let mut by_category: HashMap<(&str, &str), Vec<i128>> = HashMap::new();
    for (tx, category) in txs.iter().zip(&categories) {
        if let Some(category) = *category {
            let amount = i128::from(tx.amount);
            by_merchant
                .entry((&tx.key, tx.currency))
                .or_default()
                .push(amount);
            by_category
                .entry((category, tx.currency))
                .or_default()
                .push(amount);
        }
    }
    fn enough<'k>(
        m: HashMap<(&'k str, &'k str), Vec<i128>>,
        min: usize,
    ) -> HashMap<(&'k str, &'k str), Stats> {
        m.into_iter()
            .filter(|(_, v)| v.len() >= min)
            .map(|(k, mut v)| (k, stats(&mut v)))
            .collect()
    }
    let merchant_stats = enough(by_merchant, p.min_history);
    let category_stats = enough(by_category, p.min_history);

    // Time order (time, then position) over every transaction.
    let mut order: Vec<usize> = (0..txs.len()).collect();
    order.sort_by_key(|&i| (txs[i].time, i));
    let earliest = order.first().map(|&i| txs[i].time);

    // Duplicates: spends of one (merchant, currency, amount) in time order; for each, the
    // earliest of the group within the window before it.
    let mut duplicate_of: Vec<Option<usize>> = vec![None; txs.len()];
    let mut groups: HashMap<(&str, &str, i64), Vec<usize>> = HashMap::new();
    for &i in &order {
        if txs[i].is_spend() {
            groups
                .entry((&txs[i].key, txs[i].currency, txs[i].amount))
                .or_default()
                .push(i);
        }
    }
    for group in groups.values() {
        let mut lo = 0;
        for (j, &i) in group.iter().enumerate() {
            while txs[group[lo]].time < txs[i].time - p.duplicate_window_secs {
                lo += 1;
            }
            if lo < j {
                duplicate_of[i] = Some(group[lo]);
            }
        }
    }

    // First-time merchants: the first transaction (any sign) of each merchant key.
    let mut first_of_key: HashMap<&str, usize> = HashMap::new();
    for &i in &order {
        first_of_key.entry(&txs[i].key).or_insert(i);
    }

    // The top of each category's range so far: the largest spend of (category, currency)
    // before the one at hand, in time order.
    let mut category_top: HashMap<(&str, &str), i64> = HashMap::new();
    let mut top_before: Vec<Option<i64>> = vec![None; txs.len()];
    for &i in &order {
        if let Some(category) = categories[i] {
            let top = category_top
                .entry((category, txs[i].currency))
                .or_insert(i64::MIN);
            top_before[i] = (*top > i64::MIN).then_some(*top);
            *top = (*top).max(txs[i].amount);
        }
    }

    let mut findings = Vec::new();
    let mut evaluated = 0u32;
    for &i in &order {
        let tx = &txs[i];
        let Some(category) = categories[i] else {
            continue;
        };
        if p.since.is_some_and(|since| tx.time < since) {
            continue;
        }
        evaluated += 1;
        let baseline = merchant_stats
            .get(&(tx.key.as_str(), tx.currency))
            .map(|s| (s, Baseline::Merchant))
            .or_else(|| {
                category_stats
                    .get(&(category, tx.currency))
                    .map(|s| (s, Baseline::Category))
            });
        let score = baseline.map(|(s, baseline)| {
            let (centi, method) = score_centi(tx.amount, s);
            Score {
                centi,
                method,
                baseline,
                median2: s.median2,
                size: s.n as u32,
            }
        });
        let mut reasons = Vec::new();
        if let Some(s) = &score {
            let excess2 = 2 * i128::from(tx.amount) - s.median2; // 2 (x − median)
            // Against the category, the spend must also be above its range so far.
            let beyond_range = match s.baseline {
                Baseline::Merchant => true,
                Baseline::Category => top_before[i].is_some_and(|top| tx.amount > top),
            };
            if s.centi >= Z_THRESHOLD_CENTI
                && excess2 * 100 >= UNUSUAL_MIN_EXCESS_PERCENT * s.median2
                && beyond_range
            {
                reasons.push(Reason::UnusuallyLarge);
            }
        }
        let unusual = reasons.contains(&Reason::UnusuallyLarge);
        if duplicate_of[i].is_some() {
            reasons.push(Reason::Duplicate);
        }
        let history_days =
            earliest.is_some_and(|e| tx.time - e >= FIRST_TIME_MIN_HISTORY_DAYS * SECS_PER_DAY);
        if unusual
            && tx.amount >= p.first_time_min
            && first_of_key.get(tx.key.as_str()) == Some(&i)
            && history_days
        {
            reasons.push(Reason::FirstTimeMerchant);
        }
        if !reasons.is_empty() {
            findings.push(Finding {
                tx: i,
                reasons,
                score,
                duplicate_of: duplicate_of[i],
            });
        }
    }
    (findings, evaluated)
}

/// Flags anomalous spends. See the module documentation.
pub fn detect_anomalies(args: DetectAnomaliesArgs) -> ToolResult<DetectAnomaliesResult> {
    check_range(
        args.min_history,
        "min_history",
        MIN_HISTORY.0,
        MIN_HISTORY.1,
    )?;
    check_range(
        args.duplicate_window_minutes,
        "duplicate_window_minutes",
        0,
        MAX_DUPLICATE_WINDOW_MINUTES,
    )?;
    check_range(
        args.first_time_min_minor,
        "first_time_min_minor",
        1,
        MONEY_ABS_MAX,
    )?;
    let since = args
        .since
        .as_deref()
        .map(|s| parse_time(s, "since"))
        .transpose()?;
    let rules = RuleSet::with_user_rules(&args.rules, "rules")?;
    let txs = check_transactions(&args.transactions, "transactions")?;
    let params = Params {
        since,
        min_history: args.min_history as usize,
        duplicate_window_secs: i64::from(args.duplicate_window_minutes) * SECS_PER_MINUTE,
        first_time_min: args.first_time_min_minor,
    };
    let (findings, evaluated) = analyze(&txs, &rules, &params);
    let truncated = findings.len() > RESULT_LIST_MAX;
    let flagged = findings
        .into_iter()
        .take(RESULT_LIST_MAX)
        .map(|f| {
            let tx = &txs[f.tx];
            let original = &args.transactions[tx.index];
            Flagged {
                id: tx.id.to_owned(),
                merchant: tx.merchant.to_owned(),
                amount_minor: tx.amount,
                currency: tx.currency.to_owned(),
                time: original.time.clone(),
                category: rules.categorize(tx).category.to_owned(),
                reasons: f.reasons,
                score: f.score.map(|s| fixed_point(s.centi, 2)),
                score_method: f.score.map(|s| s.method),
                baseline: f.score.map(|s| s.baseline),
                baseline_median_minor: f.score.map(|s| div_round_half_away(s.median2, 2) as i64),
                baseline_size: f.score.map(|s| s.size),
                duplicate_of: f.duplicate_of.map(|d| txs[d].id.to_owned()),
            }
        })
        .collect();
    Ok(DetectAnomaliesResult {
        flagged,
        evaluated,
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
        crate::run_checked("detect_anomalies", args, detect_anomalies)
    }

    fn t(id: &str, merchant: &str, amount: i64, time: &str) -> Value {
        json!({"id": id, "merchant": merchant, "amount_minor": amount, "currency": "EUR",
               "time": time})
    }

    fn day(d: u32) -> String {
        format!("2026-11-{d:02}T12:00:00Z")
    }

    fn ids(result: &Value) -> Vec<String> {
        result["flagged"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["id"].as_str().unwrap().to_owned())
            .collect()
    }

    #[test]
    fn stats_of_small_lists() {
        // [10, 12, 14, 100]: median (12+14)/2 = 13 → median2 26; |2x − 26| = 6, 2, 2, 174 →
        // sorted 2, 2, 6, 174 → mad4 = 2 + 6 = 8 (MAD 2); sum 184.
        let s = stats(&mut [100, 12, 10, 14]);
        assert_eq!((s.median2, s.mad4, s.sum_dev2, s.n), (26, 8, 184, 4));
        // x = 100: z = 0.6745 · 87 / 2 = 29.34075 → 29.34; fixed point 13490 · 174 / 800 =
        // 2934.075 → 2934.
        assert_eq!(score_centi(100, &s), (2934, ScoreMethod::Mad));
        // x = 10: z = 0.6745 · (−3) / 2 = −1.01175 → −1.01.
        assert_eq!(score_centi(10, &s).0, -101);
    }

    #[test]
    fn mad_zero_falls_back_to_mean_absolute_deviation() {
        // [5, 5, 5, 5, 9]: median 5, deviations 0,0,0,0,4 → MAD 0; MeanAD 4/5 = 0.8.
        // x = 9: z = 4 / (1.253314 · 0.8) = 3.98942… → 3.99.
        let s = stats(&mut [5, 5, 9, 5, 5]);
        assert_eq!(s.mad4, 0);
        assert_eq!(
            score_centi(9, &s),
            (399, ScoreMethod::MeanAbsoluteDeviation)
        );
        // All equal: score 0.
        let s = stats(&mut [7, 7, 7]);
        assert_eq!(score_centi(7, &s), (0, ScoreMethod::Constant));
        // Clamped: [1, 1, 2, 2, 2^53−1]: median 2, MAD 1 → z ≈ 0.6745 · 9.007e15, clamped.
        let s = stats(&mut [1, 1, 2, 2, i128::from(MONEY_ABS_MAX)]);
        assert_eq!(score_centi(MONEY_ABS_MAX, &s).0, SCORE_CENTI_MAX);
    }

    #[test]
    fn unusually_large_against_the_merchant() {
        // Café: 400, 420, 380, 410, 390, 2000 (EUR cents).
        // Sorted 380 390 400 410 420 2000: median (400+410)/2 = 405.
        // |x − 405|: 5, 15, 25, 5, 15, 1595 → sorted 5 5 15 15 25 1595 → MAD 15.
        // 2000: z = 0.6745 · 1595 / 15 = 71.72 (71.721833…); excess 1595 ≥ 20 % of 405 → flagged.
        // 420: z = 0.6745 · 15 / 15 = 0.67 → not flagged.
        let list: Vec<Value> = [400, 420, 380, 410, 390, 2000]
            .iter()
            .enumerate()
            .map(|(i, &a)| t(&format!("c{i}"), "Cafe Rosa", a, &day(i as u32 + 1)))
            .collect();
        let result = run(json!({"transactions": list}));
        assert_eq!(
            result,
            json!({"flagged": [{
                "id": "c5", "merchant": "Cafe Rosa", "amount_minor": 2000, "currency": "EUR",
                "time": "2026-11-06T12:00:00Z", "category": "dining",
                "reasons": ["unusually_large"], "score": 71.72, "score_method": "mad",
                "baseline": "merchant", "baseline_median_minor": 405, "baseline_size": 6
            }], "evaluated": 6, "truncated": false})
        );
    }

    #[test]
    fn category_fallback_and_the_excess_floor() {
        // "Bistro Uno" has 1 spend, below min_history 5: the dining baseline in EUR is used:
        // Trattoria 1000 ×4 + Bistro 5000 → sorted 1000 1000 1000 1000 5000: median 1000,
        // MAD 0 (four deviations of 0) → MeanAD 4000 / 5 = 800: z = 4000 / (1.253314 · 800)
        // = 3.98942… → 3.99 ≥ 3.5, excess 4000 ≥ 200 → flagged against the category.
        let mut list: Vec<Value> = (0..4)
            .map(|i| t(&format!("r{i}"), "Trattoria", 1000, &day(i + 1)))
            .collect();
        for v in &mut list {
            v["mcc"] = json!("5812");
        }
        let mut bistro = t("b", "Bistro Uno", 5000, &day(10));
        bistro["mcc"] = json!("5812");
        list.push(bistro);
        let result = run(json!({"transactions": list}));
        let f = &result["flagged"][0];
        assert_eq!(ids(&result), ["b"]);
        assert_eq!(f["baseline"], "category");
        assert_eq!(f["score"], 3.99);
        assert_eq!(f["score_method"], "mean_absolute_deviation");
        assert_eq!(f["baseline_median_minor"], 1000);

        // Steady subscription 1000 ×4 and 1010: MeanAD 10/5 = 2, z = 10 / (1.253314 · 2) =
        // 3.99 but 1010 is only 1 % above the median: not flagged.
        let list: Vec<Value> = [1000, 1000, 1000, 1000, 1010]
            .iter()
            .enumerate()
            .map(|(i, &a)| t(&format!("s{i}"), "Streamly", a, &day(i as u32 + 1)))
            .collect();
        assert_eq!(run(json!({"transactions": list}))["flagged"], json!([]));
    }

    #[test]
    fn duplicates_within_the_window() {
        // Same merchant and amount at 12:00, 12:04, 12:13: 12:04 duplicates 12:00 (4 min);
        // 12:13 is 13 min after 12:00 and 9 after 12:04 → the earliest within 10 min is 12:04.
        // A different amount at 12:05 and the same amount in USD at 12:01 are not duplicates.
        let mut usd = t("u", "Kiosk 12", 350, "2026-11-23T12:01:00Z");
        usd["currency"] = json!("USD");
        let result = run(json!({"transactions": [
            t("k3", "KIOSK 12", 350, "2026-11-23T12:13:00Z"),
            t("k1", "Kiosk 12", 350, "2026-11-23T12:00:00Z"),
            t("k2", "Kiosk #12", 350, "2026-11-23T12:04:00Z"),
            t("k4", "Kiosk", 351, "2026-11-23T12:05:00Z"),
            usd,
        ]}));
        assert_eq!(ids(&result), ["k2", "k3"]);
        assert_eq!(result["flagged"][0]["duplicate_of"], "k1");
        assert_eq!(result["flagged"][0]["reasons"], json!(["duplicate"]));
        assert_eq!(result["flagged"][1]["duplicate_of"], "k2");
        // No baseline (5 spends but two currencies; 4 in EUR): no score fields.
        assert!(result["flagged"][0].get("score").is_none());
        // Window 0: only the same second.
        let result = run(json!({"transactions": [
            t("a", "Kiosk", 350, "2026-11-23T12:00:00Z"),
            t("b", "Kiosk", 350, "2026-11-23T12:00:00Z"),
            t("c", "Kiosk", 350, "2026-11-23T12:00:01Z"),
        ], "duplicate_window_minutes": 0}));
        assert_eq!(ids(&result), ["b"]);
    }

    #[test]
    fn a_first_charge_is_not_unusual_for_that_alone() {
        // History starts 2026-10-01. "Gadget Hub" 25000 on 2026-11-05 (35 days later) is new
        // and ≥ 10000, but nothing to judge it large against (no category of 5 spends): not
        // flagged. "Early Shop" 50000 is only 19 days into the history.
        let result = run(json!({"transactions": [
            t("a0", "Aldi", 3000, "2026-10-01T09:00:00Z"),
            t("e", "Early Shop", 50000, "2026-10-20T09:00:00Z"),
            t("a1", "ALDI 0042", 20000, "2026-11-04T09:00:00Z"),
            t("g", "Gadget Hub", 25000, "2026-11-05T09:00:00Z"),
            t("n", "Book Nook", 9999, "2026-11-06T09:00:00Z"),
        ]}));
        assert_eq!(ids(&result), Vec::<String>::new());
        // The person's dining (MCC 5812-5814): coffees of 3.50-4.20 most days, and three
        // dinners of 45.00, 70.00 and 90.00, each at a different place. A first dinner at a new
        // restaurant for 68.00 against that category: median of the ten amounts (350 360 370
        // 380 400 420 4500 6800 7000 9000) is (400 + 420) / 2 = 410, MAD 55 → z = 0.6745 · 6390 / 55 = 78, far above 3.5,
        // and 68.00 far above 4.10; but 68.00 is within the dining the person already spends
        // (the top so far is 90.00): not unusual. 240.00 is above the top: unusually large, and
        // its merchant's first charge.
        let place = |id: &str, merchant: &str, amount: i64, time: &str| {
            let mut tx = t(id, merchant, amount, time);
            tx["mcc"] = json!("5812");
            tx
        };
        let mut history = vec![t("a0", "Aldi", 3000, "2026-10-01T09:00:00Z")];
        for (i, amount) in [350, 360, 370, 380, 400, 420].iter().enumerate() {
            history.push(place(
                &format!("c{i}"),
                "Cafe Rosa",
                *amount,
                &format!("2026-10-{:02}T08:00:00Z", 10 + i),
            ));
        }
        for (i, (merchant, amount)) in [
            ("Bistro Blau", 4500),
            ("Kin Dee", 7000),
            ("Nobelhart", 9000),
        ]
        .iter()
        .enumerate()
        {
            history.push(place(
                &format!("d{i}"),
                merchant,
                *amount,
                &format!("2026-10-{:02}T19:30:00Z", 20 + i),
            ));
        }
        let mut ordinary = history.clone();
        ordinary.push(place("x", "Trattoria Nuova", 6800, "2026-11-20T19:30:00Z"));
        // Only November is evaluated; October is the history.
        let since = "2026-11-01T00:00:00Z";
        assert_eq!(
            ids(&run(json!({"transactions": ordinary, "since": since}))),
            Vec::<String>::new()
        );
        let mut large = history;
        large.push(place("y", "Trattoria Nuova", 24000, "2026-11-20T19:30:00Z"));
        let result = run(json!({"transactions": large, "since": since}));
        assert_eq!(ids(&result), ["y"]);
        assert_eq!(
            result["flagged"][0]["reasons"],
            json!(["unusually_large", "first_time_merchant"])
        );
        assert_eq!(result["flagged"][0]["baseline"], "category");
        // A refund seen earlier makes the merchant known.
        let result = run(json!({"transactions": [
            t("a0", "Aldi", 3000, "2026-10-01T09:00:00Z"),
            t("r", "Gadget Hub", -500, "2026-10-02T09:00:00Z"),
            t("g", "Gadget Hub", 25000, "2026-11-05T09:00:00Z"),
        ]}));
        assert_eq!(ids(&result), Vec::<String>::new());
    }

    #[test]
    fn since_limits_what_is_evaluated() {
        // Same café history as above; since the 6th only c5 is evaluated, and it is flagged; the
        // duplicate pair before `since` is history only.
        let mut list: Vec<Value> = [400, 420, 380, 410, 390, 2000]
            .iter()
            .enumerate()
            .map(|(i, &a)| t(&format!("c{i}"), "Cafe Rosa", a, &day(i as u32 + 1)))
            .collect();
        list.push(t("d1", "Kiosk", 100, "2026-11-02T08:00:00Z"));
        list.push(t("d2", "Kiosk", 100, "2026-11-02T08:01:00Z"));
        let result = run(json!({"transactions": list, "since": "2026-11-06T00:00:00Z"}));
        assert_eq!(result["evaluated"], 1);
        assert_eq!(ids(&result), ["c5"]);
        // Refunds are never evaluated.
        let result = run(json!({"transactions": [t("r", "Shop", -100, &day(1))]}));
        assert_eq!(
            result,
            json!({"flagged": [], "evaluated": 0, "truncated": false})
        );
    }

    #[test]
    fn many_duplicates_are_cut_at_the_bound() {
        // 600 identical spends, one a second: all but the first are duplicates of the first
        // (within 10 minutes) → 599 qualify, 100 are listed.
        let list: Vec<Value> = (0..600)
            .map(|i| {
                t(
                    &format!("x{i:03}"),
                    "Kiosk",
                    100,
                    &format!("2026-11-23T12:{:02}:{:02}Z", i / 60, i % 60),
                )
            })
            .collect();
        let result = run(json!({"transactions": list}));
        assert_eq!(result["flagged"].as_array().unwrap().len(), 100);
        assert_eq!(result["truncated"], true);
        assert_eq!(result["flagged"][0]["id"], "x001");
        assert_eq!(result["flagged"][0]["duplicate_of"], "x000");
    }

    #[test]
    fn inconsistent_args_are_invalid() {
        let e = detect_anomalies(DetectAnomaliesArgs {
            transactions: vec![],
            rules: vec![],
            since: Some("yesterday".into()),
            min_history: 5,
            duplicate_window_minutes: 10,
            first_time_min_minor: 1,
        })
        .unwrap_err();
        assert_eq!(e.kind, ToolErrorKind::InvalidArgs);
        assert!(e.message.starts_with("since"));
        let e = detect_anomalies(DetectAnomaliesArgs {
            transactions: vec![],
            rules: vec![],
            since: None,
            min_history: 2,
            duplicate_window_minutes: 10,
            first_time_min_minor: 1,
        })
        .unwrap_err();
        assert!(e.message.starts_with("min_history"));
    }

    #[test]
    fn schema_examples_deserialize_and_run() {
        let schema = SCHEMAS.load("detect_anomalies.args.json");
        SCHEMAS.assert_header(&schema, "detect_anomalies.args.json");
        let result_schema = SCHEMAS.load("detect_anomalies.result.json");
        SCHEMAS.assert_header(&result_schema, "detect_anomalies.result.json");
        let examples = schema["examples"].as_array().unwrap();
        assert_eq!(examples.len(), 1);
        for example in examples {
            let result = run(example.clone());
            assert!(!result["flagged"].as_array().unwrap().is_empty());
        }
        let args: DetectAnomaliesArgs =
            serde_json::from_value(json!({"transactions": []})).unwrap();
        let props = &schema["properties"];
        assert_eq!(props["min_history"]["default"], args.min_history);
        assert_eq!(
            props["duplicate_window_minutes"]["default"],
            args.duplicate_window_minutes
        );
        assert_eq!(
            props["first_time_min_minor"]["default"],
            args.first_time_min_minor
        );
        assert_eq!(props["rules"]["default"], json!([]));
    }
}
