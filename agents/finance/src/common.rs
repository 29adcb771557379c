//! Types and helpers shared by the finance tools: the transaction shape and its checks, money
//! arithmetic, merchant normalization, calendar dates, and the argument checks every tool
//! repeats.
//!
//! Conventions (stated once here, repeated in every schema):
//! - Money is an integer number of minor units (`amount_minor`, cents for EUR, yen for JPY) plus
//!   an ISO 4217 code (`^[A-Z]{3}$`); no float ever holds money. **Positive = money spent,
//!   negative = refund or credit.** Every amount, and every total a tool reports, stays within
//!   ±(2^53 − 1) so JSON readers holding numbers as doubles read it exactly; a total that would
//!   leave that range is refused as invalid args (totals are accumulated in i128 first).
//! - Amounts in different currencies are never added or compared: every group a tool forms is
//!   keyed by currency.
//! - Times are whole Unix seconds internally (fractions dropped), parsed, formatted and placed
//!   in local days by `aura_sdk::time`. Calendar dates are days since 1970-01-01 (proleptic
//!   Gregorian), converted without the clock.
//!
//! This module must not decide categories (see `rules`) nor hold any tool's policy, and it must
//! not keep its own time or argument helpers (`aura_sdk::time`, `aura_sdk::args`).

use std::fmt::Display;

use aura_sdk::args::{check_len, check_range};
use aura_sdk::time::{parse_time, try_parse_time};
use aura_sdk::{ToolError, ToolResult};
use serde::{Deserialize, Serialize};

/// Most transactions one call accepts: a year of an active card (5 a day) fits, and the
/// measured cost at this bound (≤ 76 M fuel, < 300 KB of args) stays within the catalogue's
/// 2-second deadline and the 1 MiB crossing cap. The tick uses fewer (`tick::
/// TICK_TRANSACTIONS_MAX`).
pub const MAX_TRANSACTIONS: usize = 2000;
/// Longest transaction id. Ids are ASCII (`[A-Za-z0-9._:-]`) so that a 2000-transaction result
/// that echoes every id stays far below the host's 1 MiB crossing cap.
pub const MAX_ID_CHARS: usize = 64;
/// Longest merchant string, in characters: statement descriptors are at most a few dozen; 200
/// leaves room for enriched names without letting one field dominate a call.
pub const MAX_MERCHANT_CHARS: usize = 200;
/// Longest category name (`^[a-z][a-z0-9_]{0,39}$`): a machine name, not a sentence.
pub const MAX_CATEGORY_CHARS: usize = 40;
/// Largest magnitude of any amount or total: 2^53 − 1, the largest integer a JSON reader that
/// uses doubles holds exactly.
pub const MONEY_ABS_MAX: i64 = 9_007_199_254_740_991;
/// Longest result list of records that could grow with the input (flagged transactions,
/// bills). Each record has a dozen members, and the SDK's canonical (RFC 8785) encoder costs
/// roughly 13,000 fuel per object member (measured): 100 records cost ~17 M fuel, a sixth of a
/// 1-second deadline at the default 100,000 fuel/ms, and stay under 150 KB. Nobody reviews more
/// than 100 anomalies or bills at once; `truncated` says when more qualified.
pub const RESULT_LIST_MAX: usize = 100;

/// A card or account transaction, as every finance tool takes it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Transaction {
    /// Caller's id, unique within one call (`^[A-Za-z0-9._:-]{1,64}$`).
    pub id: String,
    /// Merchant as the statement shows it (1..200 characters, not blank).
    pub merchant: String,
    /// ISO 18245 merchant category code, four digits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcc: Option<String>,
    /// Minor units; positive = spent, negative = refund/credit.
    pub amount_minor: i64,
    /// ISO 4217 code.
    pub currency: String,
    /// RFC 3339 instant of the transaction.
    pub time: String,
    /// A category already assigned (by the user or an earlier `categorize_transactions`);
    /// when present, rules are not consulted for this transaction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
}

/// A transaction after checking.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tx<'a> {
    /// Position in the caller's list.
    pub index: usize,
    pub id: &'a str,
    pub merchant: &'a str,
    /// The merchant's folded words (see [`fold_merchant`]), for keyword rules.
    pub words: String,
    /// The normalized merchant (see [`merchant_key`]), for grouping.
    pub key: String,
    pub mcc: Option<u16>,
    pub amount: i64,
    pub currency: &'a str,
    /// Unix seconds (UTC).
    pub time: i64,
    pub category: Option<&'a str>,
}

impl Tx<'_> {
    /// Whether this is money spent (refunds, credits and zero amounts are not).
    pub fn is_spend(&self) -> bool {
        self.amount > 0
    }
}

/// Whether `s` is a valid transaction or rule id: 1..64 of `[A-Za-z0-9._:-]`.
pub fn is_id(s: &str) -> bool {
    (1..=MAX_ID_CHARS).contains(&s.len())
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b':' | b'-'))
}

/// Whether `s` is a valid category name: `^[a-z][a-z0-9_]{0,39}$`.
pub fn is_category(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= MAX_CATEGORY_CHARS
        && b[0].is_ascii_lowercase()
        && b.iter()
            .all(|&c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'_')
}

/// Whether `s` is an ISO 4217-shaped code: three ASCII capitals.
pub fn is_currency(s: &str) -> bool {
    s.len() == 3 && s.bytes().all(|b| b.is_ascii_uppercase())
}

/// Parses a four-digit MCC.
pub fn parse_mcc(s: &str) -> Option<u16> {
    if s.len() == 4 && s.bytes().all(|b| b.is_ascii_digit()) {
        s.parse().ok()
    } else {
        None
    }
}

/// Checks an id; `field` names it in error messages.
pub fn check_id(s: &str, field: impl Display) -> ToolResult<()> {
    if is_id(s) {
        Ok(())
    } else {
        Err(ToolError::invalid_args(format!(
            "{field}: {s:?} is not an id (1 to {MAX_ID_CHARS} of A-Z a-z 0-9 . _ : -)"
        )))
    }
}

/// Checks a category name.
pub fn check_category(s: &str, field: impl Display) -> ToolResult<()> {
    if is_category(s) {
        Ok(())
    } else {
        Err(ToolError::invalid_args(format!(
            "{field}: {s:?} is not a category (a lowercase letter, then up to 39 of a-z 0-9 _)"
        )))
    }
}

/// Checks a currency code.
pub fn check_currency(s: &str, field: impl Display) -> ToolResult<()> {
    if is_currency(s) {
        Ok(())
    } else {
        Err(ToolError::invalid_args(format!(
            "{field}: {s:?} is not an ISO 4217 code (three capital letters)"
        )))
    }
}

/// Checks that an amount lies within ±[`MONEY_ABS_MAX`].
pub fn check_money(value: i64, field: impl Display) -> ToolResult<()> {
    check_range(value, field, -MONEY_ABS_MAX, MONEY_ABS_MAX)
}

/// A total computed in i128, if it fits the exact JSON range; otherwise invalid args naming
/// `field` (the caller's amounts are too large to add exactly).
pub fn money_total(value: i128, field: impl Display) -> ToolResult<i64> {
    if value.unsigned_abs() <= MONEY_ABS_MAX as u128 {
        Ok(value as i64)
    } else {
        Err(ToolError::invalid_args(format!(
            "{field}: the total {value} leaves ±{MONEY_ABS_MAX} (2^53 - 1); amounts this large \
             cannot be reported exactly"
        )))
    }
}

/// The merchant's words, lowercased, joined by single spaces: every character that is not a
/// letter or digit separates words. "McDonald's #123" → "mcdonald s 123".
pub fn fold_merchant(s: &str) -> String {
    let mut folded = String::with_capacity(s.len());
    for word in s
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        if !folded.is_empty() {
            folded.push(' ');
        }
        if word.is_ascii() {
            folded.extend(word.chars().map(|c| c.to_ascii_lowercase()));
        } else {
            folded.extend(word.chars().flat_map(char::to_lowercase));
        }
    }
    folded
}

/// The merchant's words (see [`fold_merchant`]). "McDonald's #123" → ["mcdonald", "s", "123"].
pub fn merchant_words(s: &str) -> Vec<String> {
    fold_merchant(s)
        .split(' ')
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect()
}

/// The key that groups transactions of one merchant, from its folded words: the words without
/// the all-digit ones (store numbers, references), joined by one space. "NETFLIX.COM 8841" and
/// "Netflix.com" share the key "netflix com". When every word is digits the digits are the key;
/// when there is no word at all, the trimmed, lowercased merchant is.
fn key_from_folded(folded: &str, raw: &str) -> String {
    let named: Vec<&str> = folded
        .split(' ')
        .filter(|w| !w.is_empty() && !w.bytes().all(|b| b.is_ascii_digit()))
        .collect();
    if !named.is_empty() {
        named.join(" ")
    } else if !folded.is_empty() {
        folded.to_owned()
    } else {
        raw.trim().to_lowercase()
    }
}

/// The merchant key of a raw merchant string (see `key_from_folded`).
pub fn merchant_key(s: &str) -> String {
    key_from_folded(&fold_merchant(s), s)
}

impl Transaction {
    /// Checks one transaction; `field` names it in error messages (e.g. "transactions[3]").
    pub fn check(&self, index: usize, field: impl Display) -> ToolResult<Tx<'_>> {
        // Error texts are built only on failure: a valid list of 2000 must not pay for 14000
        // formatted field names.
        let bad = |name: &str, why: String| {
            ToolError::invalid_args(format!("{field}[{index}].{name}: {why}"))
        };
        if !is_id(&self.id) {
            return Err(bad(
                "id",
                format!(
                    "{:?} is not an id (1 to {MAX_ID_CHARS} of A-Z a-z 0-9 . _ : -)",
                    self.id
                ),
            ));
        }
        let n = self.merchant.chars().count();
        if n == 0 || n > MAX_MERCHANT_CHARS || self.merchant.trim().is_empty() {
            return Err(bad(
                "merchant",
                format!("must have 1 to {MAX_MERCHANT_CHARS} characters and not be blank"),
            ));
        }
        let mcc = match &self.mcc {
            None => None,
            Some(code) => Some(
                parse_mcc(code)
                    .ok_or_else(|| bad("mcc", format!("{code:?} is not four digits")))?,
            ),
        };
        if self.amount_minor.unsigned_abs() > MONEY_ABS_MAX as u64 {
            return Err(bad(
                "amount_minor",
                format!("{} is outside ±{MONEY_ABS_MAX}", self.amount_minor),
            ));
        }
        if !is_currency(&self.currency) {
            return Err(bad(
                "currency",
                format!(
                    "{:?} is not an ISO 4217 code (three capital letters)",
                    self.currency
                ),
            ));
        }
        let time = match try_parse_time(&self.time) {
            Some(time) => time,
            None => parse_time(&self.time, format_args!("{field}[{index}].time"))?,
        };
        if let Some(category) = &self.category
            && !is_category(category)
        {
            return Err(bad(
                "category",
                format!(
                    "{category:?} is not a category (a lowercase letter, then up to 39 of a-z 0-9 _)"
                ),
            ));
        }
        let words = fold_merchant(&self.merchant);
        Ok(Tx {
            index,
            id: &self.id,
            merchant: &self.merchant,
            key: key_from_folded(&words, &self.merchant),
            words,
            mcc,
            amount: self.amount_minor,
            currency: &self.currency,
            time,
            category: self.category.as_deref(),
        })
    }
}

/// Checks a list of transactions (at most [`MAX_TRANSACTIONS`], ids unique); `field` names the
/// list.
pub fn check_transactions<'a>(
    list: &'a [Transaction],
    field: impl Display,
) -> ToolResult<Vec<Tx<'a>>> {
    check_len(list, &field, MAX_TRANSACTIONS)?;
    let txs = list
        .iter()
        .enumerate()
        .map(|(i, t)| t.check(i, &field))
        .collect::<ToolResult<Vec<_>>>()?;
    // Not a HashMap: its hasher's seed is a WASI import call on each fresh instance.
    let mut seen = std::collections::BTreeMap::new();
    for tx in &txs {
        if let Some(first) = seen.insert(tx.id, tx.index) {
            return Err(ToolError::invalid_args(format!(
                "{field}[{}].id: duplicate id {:?} (also {field}[{first}])",
                tx.index, tx.id
            )));
        }
    }
    Ok(txs)
}

/// A fixed-point figure with `decimals` decimals (e.g. 357 with 2 → 3.57) as a JSON number.
/// The double nearest to the decimal serializes as that decimal (shortest round trip), so the
/// output never shows more than `decimals` decimals.
pub fn fixed_point(value: i64, decimals: u32) -> f64 {
    value as f64 / 10f64.powi(decimals as i32)
}

#[cfg(test)]
mod tests {
    use super::*;
    use aura_sdk::ToolErrorKind;
    use aura_sdk::time::local_day;

    fn tx(id: &str, merchant: &str, amount: i64) -> Transaction {
        Transaction {
            id: id.into(),
            merchant: merchant.into(),
            mcc: None,
            amount_minor: amount,
            currency: "EUR".into(),
            time: "2026-11-23T09:00:00Z".into(),
            category: None,
        }
    }

    #[test]
    fn local_days_follow_the_offset() {
        // 2026-11-23T23:30:00Z is 2026-11-24 00:30 at +01:00 and 2026-11-23 at -05:00.
        let t = parse_time("2026-11-23T23:30:00Z", "t").unwrap();
        assert_eq!(local_day(t, 0), 20_780);
        assert_eq!(local_day(t, 60), 20_781);
        assert_eq!(local_day(t, -300), 20_780);
        assert_eq!(local_day(-1, 0), -1);
    }

    #[test]
    fn money_totals_stay_exact() {
        assert_eq!(
            money_total(i128::from(MONEY_ABS_MAX), "t").unwrap(),
            MONEY_ABS_MAX
        );
        assert_eq!(
            money_total(-i128::from(MONEY_ABS_MAX), "t").unwrap(),
            -MONEY_ABS_MAX
        );
        let e = money_total(i128::from(MONEY_ABS_MAX) + 1, "budgets[2]").unwrap_err();
        assert_eq!(e.kind, ToolErrorKind::InvalidArgs);
        assert!(e.message.starts_with("budgets[2]"));
    }

    #[test]
    fn merchant_keys_drop_numbers_and_punctuation() {
        assert_eq!(merchant_words("McDonald's #123"), ["mcdonald", "s", "123"]);
        assert_eq!(merchant_key("NETFLIX.COM 8841"), "netflix com");
        assert_eq!(merchant_key("  Netflix.com "), "netflix com");
        assert_eq!(merchant_key("7-Eleven 0042"), "eleven");
        assert_eq!(merchant_key("12345"), "12345");
        assert_eq!(merchant_key(" ** "), "**");
        assert_eq!(merchant_key("CAFÉ Zürich"), "café zürich");
    }

    #[test]
    fn transactions_are_checked_field_by_field() {
        let good = tx("a", "Shop", 100);
        let checked = good.check(0, "t").unwrap();
        assert_eq!(checked.time, 1_795_424_400); // 20_780 days + 9 h: 1_795_392_000 + 32_400
        assert_eq!(checked.key, "shop");
        assert_eq!(fold_merchant("McDonald's #123 CAFÉ"), "mcdonald s 123 café");
        assert_eq!(fold_merchant(" -- "), "");
        let cases: Vec<(Transaction, &str)> = vec![
            (tx("a b", "Shop", 1), "transactions[0].id"),
            (tx("", "Shop", 1), "transactions[0].id"),
            (tx("a", "   ", 1), "transactions[0].merchant"),
            (
                tx("a", "Shop", MONEY_ABS_MAX + 1),
                "transactions[0].amount_minor",
            ),
            (
                Transaction {
                    currency: "eur".into(),
                    ..tx("a", "Shop", 1)
                },
                "transactions[0].currency",
            ),
            (
                Transaction {
                    mcc: Some("541".into()),
                    ..tx("a", "Shop", 1)
                },
                "transactions[0].mcc",
            ),
            (
                Transaction {
                    time: "2026-11-23".into(),
                    ..tx("a", "Shop", 1)
                },
                "transactions[0].time",
            ),
            (
                Transaction {
                    category: Some("Food".into()),
                    ..tx("a", "Shop", 1)
                },
                "transactions[0].category",
            ),
        ];
        for (t, field) in cases {
            let e = check_transactions(std::slice::from_ref(&t), "transactions").unwrap_err();
            assert_eq!(e.kind, ToolErrorKind::InvalidArgs);
            assert!(e.message.starts_with(field), "{field}: {}", e.message);
        }
        let e = check_transactions(&[tx("a", "S", 1), tx("b", "S", 1), tx("a", "S", 1)], "tx")
            .unwrap_err();
        assert!(
            e.message.contains("tx[2].id") && e.message.contains("tx[0]"),
            "{}",
            e.message
        );
    }

    #[test]
    fn ids_categories_currencies() {
        assert!(is_id("tx_2026-11-23:001.a"));
        assert!(!is_id(&"a".repeat(65)));
        assert!(!is_id("builtin/mcc"));
        assert!(is_category("dining") && is_category("a_1"));
        assert!(!is_category("1a") && !is_category("Dining") && !is_category(""));
        assert!(is_currency("EUR") && !is_currency("EU") && !is_currency("EUr"));
        assert_eq!(parse_mcc("0742"), Some(742));
        assert_eq!(parse_mcc("74a2"), None);
    }

    #[test]
    fn fixed_point_prints_its_decimals_only() {
        assert_eq!(serde_json::json!(fixed_point(357, 2)).to_string(), "3.57");
        assert_eq!(serde_json::json!(fixed_point(-10, 2)).to_string(), "-0.1");
        assert_eq!(serde_json::json!(fixed_point(833, 3)).to_string(), "0.833");
        assert_eq!(serde_json::json!(fixed_point(1000, 3)).to_string(), "1.0");
    }
}
