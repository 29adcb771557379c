//! The small readers the tools' summaries share: a field's length, a string or a placeholder,
//! an amount of money in its currency's minor unit.
//!
//! It owns how a summary reads a result leniently (a missing field reads as 0 or `?`, never a
//! panic: results are checked against their schema, but a summary must not be the place a
//! schema change crashes the host). It must not hold any tool's wording (each tool's entry
//! does).

use serde_json::Value;

/// How many items `result[field]` holds (0 when it is not an array).
pub(super) fn count(result: &Value, field: &str) -> usize {
    result[field].as_array().map_or(0, Vec::len)
}

/// A string value, or `?`.
pub(super) fn text(value: &Value) -> String {
    value.as_str().unwrap_or("?").to_owned()
}

/// An unsigned integer value, or 0.
pub(super) fn number(value: &Value) -> u64 {
    value.as_u64().unwrap_or(0)
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
pub(super) fn money(amount_minor: &Value, currency: &Value) -> String {
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
    let scale = 10u64.pow(decimals);
    let sign = if amount < 0 { "-" } else { "" };
    let abs = amount.unsigned_abs();
    format!(
        "{sign}{}.{:0width$} {currency}",
        abs / scale,
        abs % scale,
        width = decimals as usize
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn money_follows_the_currency_minor_unit() {
        assert_eq!(money(&json!(123456), &json!("EUR")), "1234.56 EUR");
        assert_eq!(money(&json!(-5), &json!("EUR")), "-0.05 EUR");
        assert_eq!(money(&json!(1500), &json!("JPY")), "1500 JPY");
        assert_eq!(money(&json!(1500), &json!("KWD")), "1.500 KWD");
        assert_eq!(money(&json!("x"), &json!("EUR")), "? EUR");
    }

    #[test]
    fn missing_fields_read_as_nothing() {
        let result = json!({"slots": [1, 2], "name": 7});
        assert_eq!(count(&result, "slots"), 2);
        assert_eq!(count(&result, "name"), 0);
        assert_eq!(text(&result["name"]), "?");
        assert_eq!(number(&result["missing"]), 0);
    }
}
