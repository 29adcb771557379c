//! Categorization rules: the caller's rules, the built-in MCC and merchant-keyword tables, and
//! the engine that picks each transaction's category. Every tool that needs a category
//! (`categorize_transactions`, `budget_status`, `detect_anomalies`' category fallback, the tick)
//! goes through [`RuleSet::categorize`], so a category means the same thing everywhere.
//!
//! Order, first match wins:
//! 1. A transaction that carries `category` keeps it (rule id `given`, kind `given`).
//! 2. The caller's rules, in the order given.
//! 3. The built-in MCC ranges ([`BUILTIN_MCC`]), when the transaction has an MCC. They come
//!    before the keywords because the code the card network assigned is the stronger signal
//!    ("UBER EATS" with MCC 5812 is dining, not transport).
//! 4. The built-in merchant keywords ([`BUILTIN_KEYWORDS`]), more specific phrases first.
//! 5. The fallback: `uncategorized` (rule id `builtin/fallback`).
//!
//! A keyword matches when its words appear consecutively among the merchant's words (see
//! `common::merchant_words`: lowercased, split at every non-alphanumeric character), so "shell"
//! matches "SHELL OIL 123" but not "SHELLFISH BAR". Built-in rule ids start with `builtin/`,
//! which caller ids (`[A-Za-z0-9._:-]`) cannot, so the two never collide.
//!
//! This module must not read amounts or times: categories depend on merchant and MCC only.

use std::collections::BTreeMap;
use std::fmt::Display;

use aura_sdk::{ToolError, ToolResult};
use serde::{Deserialize, Serialize};

use aura_sdk::args::{Item, check_len};

use crate::common::{Tx, check_category, check_id, merchant_words, parse_mcc};

/// Most caller rules one call accepts: a personal rule list is a few dozen entries; 100 bounds
/// the index built per call.
pub const MAX_RULES: usize = 100;
/// Longest merchant keyword, in characters: half a merchant string (200) is already a phrase
/// no statement repeats verbatim.
pub const MAX_KEYWORD_CHARS: usize = 100;
/// The category of a transaction no rule matched.
pub const FALLBACK_CATEGORY: &str = "uncategorized";
/// Rule id reported for the fallback.
pub const FALLBACK_RULE_ID: &str = "builtin/fallback";
/// Rule id reported for a category the transaction carried.
pub const GIVEN_RULE_ID: &str = "given";

/// Built-in MCC ranges (ISO 18245 / card-network merchant category codes), inclusive, in match
/// order: (first code, last code, category). Narrow exceptions come before the ranges that
/// contain them (4119 ambulance services inside 4111–4131 passenger transport).
pub const BUILTIN_MCC: &[(u16, u16, &str)] = &[
    (3000, 3299, "travel"),        // airlines by carrier
    (3351, 3441, "travel"),        // car rental agencies by company
    (3501, 3999, "lodging"),       // hotels and resorts by chain
    (4119, 4119, "health"),        // ambulance services
    (4111, 4131, "transport"),     // commuter transport, railways, taxis, bus lines
    (4411, 4411, "travel"),        // cruise lines
    (4511, 4511, "travel"),        // airlines, air carriers
    (4722, 4722, "travel"),        // travel agencies, tour operators
    (4784, 4789, "transport"),     // tolls and bridge fees, transportation services
    (4812, 4816, "telecom"),       // telephone equipment and services, network services
    (4899, 4899, "subscriptions"), // cable, satellite, streaming and other pay services
    (4900, 4900, "utilities"),     // electric, gas, water, sanitary
    (5300, 5399, "shopping"),      // wholesale clubs, discount and department stores
    (5411, 5499, "groceries"),     // grocery stores, supermarkets, other food stores
    (5541, 5542, "fuel"),          // service stations, automated fuel dispensers
    (5552, 5552, "fuel"),          // electric vehicle charging
    (5611, 5699, "shopping"),      // clothing and accessories
    (5811, 5814, "dining"),        // caterers, restaurants, bars, fast food
    (5815, 5818, "digital_goods"), // digital media, games, applications
    (5912, 5912, "health"),        // drug stores and pharmacies
    (5968, 5968, "subscriptions"), // continuity and subscription merchants
    (6010, 6011, "cash"),          // manual and automated cash disbursements
    (7011, 7011, "lodging"),       // hotels, motels, resorts
    (7512, 7512, "travel"),        // car rental
    (7523, 7523, "transport"),     // parking lots and garages
    (7832, 7832, "entertainment"), // motion picture theaters
    (7911, 7999, "entertainment"), // dance halls, theatres, sports, recreation
    (8011, 8099, "health"),        // doctors, dentists, hospitals, medical services
    (8211, 8299, "education"),     // schools, colleges, training
    (9211, 9399, "government"),    // courts, fines, taxes, government services
];

/// Built-in merchant keywords, in match order: (keyword, category). Longer phrases come before
/// the words they contain ("uber eats" before "uber").
pub const BUILTIN_KEYWORDS: &[(&str, &str)] = &[
    ("uber eats", "dining"),
    ("deliveroo", "dining"),
    ("doordash", "dining"),
    ("just eat", "dining"),
    ("starbucks", "dining"),
    ("mcdonald", "dining"),
    ("restaurant", "dining"),
    ("cafe", "dining"),
    ("uber", "transport"),
    ("lyft", "transport"),
    ("parking", "transport"),
    ("railway", "transport"),
    ("shell", "fuel"),
    ("esso", "fuel"),
    ("exxon", "fuel"),
    ("chevron", "fuel"),
    ("texaco", "fuel"),
    ("netflix", "subscriptions"),
    ("spotify", "subscriptions"),
    ("hulu", "subscriptions"),
    ("apple com bill", "subscriptions"),
    ("tesco", "groceries"),
    ("sainsbury", "groceries"),
    ("aldi", "groceries"),
    ("lidl", "groceries"),
    ("kroger", "groceries"),
    ("safeway", "groceries"),
    ("whole foods", "groceries"),
    ("carrefour", "groceries"),
    ("supermarket", "groceries"),
    ("pharmacy", "health"),
    ("walgreens", "health"),
    ("vodafone", "telecom"),
    ("verizon", "telecom"),
    ("electricity", "utilities"),
    ("airbnb", "lodging"),
    ("hotel", "lodging"),
    ("ryanair", "travel"),
    ("easyjet", "travel"),
    ("airlines", "travel"),
    ("amazon", "shopping"),
    ("atm", "cash"),
    ("cinema", "entertainment"),
];

/// A caller's rule, as the tools take it: a merchant keyword or an MCC range, never both.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct UserRule {
    /// The rule's id, reported when it matches (`^[A-Za-z0-9._:-]{1,64}$`, unique).
    pub id: String,
    /// The category it assigns.
    pub category: String,
    /// Words that must appear consecutively in the merchant (case-insensitive).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merchant_keyword: Option<String>,
    /// First MCC of the range (with `mcc_to`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcc_from: Option<String>,
    /// Last MCC of the range, inclusive (with `mcc_from`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcc_to: Option<String>,
}

/// What kind of rule assigned a category.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RuleKind {
    /// The transaction carried its category.
    Given,
    MerchantKeyword,
    MccRange,
    Fallback,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Rule {
    id: String,
    category: String,
    kind: RuleKind,
}

/// A keyword rule, filed under its first word.
#[derive(Debug, Clone, PartialEq, Eq)]
struct KeywordEntry {
    /// Index into `RuleSet::rules` (the rule's place in the match order).
    rule: usize,
    /// The keyword's words after the first.
    rest: Vec<String>,
}

/// The ordered rules one call uses: the caller's, then the built-in ones.
///
/// Matching does not walk the rules one by one: the MCC ranges are scanned in order (integer
/// comparisons) and the keyword rules are looked up by each merchant word, and the match with
/// the lowest rule index wins, which is exactly "first match in rule order".
#[derive(Debug, Clone)]
pub struct RuleSet {
    rules: Vec<Rule>,
    /// (rule index, first MCC, last MCC), in rule order.
    mcc: Vec<(usize, u16, u16)>,
    /// First keyword word → keyword rules starting with it, in rule order.
    keywords: BTreeMap<String, Vec<KeywordEntry>>,
}

/// A transaction's category and the rule that gave it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Categorized<'a> {
    pub category: &'a str,
    /// The rule's id: the caller's id, a `builtin/…` id, or `given`.
    pub rule_id: &'a str,
    pub kind: RuleKind,
    /// The rule's place in the match order: 0 for the transaction's own category, then one
    /// more per rule, `usize::MAX` for the fallback.
    pub rank: usize,
}

impl RuleSet {
    fn empty() -> Self {
        Self {
            rules: Vec::new(),
            mcc: Vec::new(),
            keywords: BTreeMap::new(),
        }
    }

    fn push_mcc(&mut self, id: String, category: &str, lo: u16, hi: u16) {
        self.mcc.push((self.rules.len(), lo, hi));
        self.rules.push(Rule {
            id,
            category: category.into(),
            kind: RuleKind::MccRange,
        });
    }

    /// `words` must not be empty.
    fn push_keyword(&mut self, id: String, category: &str, mut words: Vec<String>) {
        let first = words.remove(0);
        self.keywords.entry(first).or_default().push(KeywordEntry {
            rule: self.rules.len(),
            rest: words,
        });
        self.rules.push(Rule {
            id,
            category: category.into(),
            kind: RuleKind::MerchantKeyword,
        });
    }

    fn push_builtin(&mut self) {
        for &(from, to, category) in BUILTIN_MCC {
            let id = if from == to {
                format!("builtin/mcc/{from:04}")
            } else {
                format!("builtin/mcc/{from:04}-{to:04}")
            };
            self.push_mcc(id, category, from, to);
        }
        for &(keyword, category) in BUILTIN_KEYWORDS {
            let id = format!("builtin/keyword/{}", keyword.replace(' ', "_"));
            self.push_keyword(id, category, merchant_words(keyword));
        }
    }

    /// The built-in rules only.
    pub fn builtin() -> Self {
        let mut set = Self::empty();
        set.push_builtin();
        set
    }

    /// The caller's rules (checked) followed by the built-in ones; `field` names the list.
    pub fn with_user_rules(user: &[UserRule], field: impl Display) -> ToolResult<Self> {
        check_len(user, &field, MAX_RULES)?;
        // Not a HashMap: its hasher's seed is a WASI import call on each fresh instance.
        let mut seen = std::collections::BTreeMap::new();
        let mut set = Self::empty();
        for (i, rule) in user.iter().enumerate() {
            let at = Item(&field, i);
            check_id(&rule.id, format_args!("{at}.id"))?;
            if let Some(first) = seen.insert(rule.id.as_str(), i) {
                return Err(ToolError::invalid_args(format!(
                    "{at}.id: duplicate rule id {:?} (also {field}[{first}])",
                    rule.id
                )));
            }
            check_category(&rule.category, format_args!("{at}.category"))?;
            match (&rule.merchant_keyword, &rule.mcc_from, &rule.mcc_to) {
                (Some(keyword), None, None) => {
                    let n = keyword.chars().count();
                    let words = merchant_words(keyword);
                    if n > MAX_KEYWORD_CHARS || words.is_empty() {
                        return Err(ToolError::invalid_args(format!(
                            "{at}.merchant_keyword: {keyword:?} must have 1 to \
                             {MAX_KEYWORD_CHARS} characters including a letter or digit"
                        )));
                    }
                    set.push_keyword(rule.id.clone(), &rule.category, words);
                }
                (None, Some(from), Some(to)) => {
                    let bad = |f: &str, s: &str| {
                        ToolError::invalid_args(format!("{at}.{f}: {s:?} is not four digits"))
                    };
                    let lo = parse_mcc(from).ok_or_else(|| bad("mcc_from", from))?;
                    let hi = parse_mcc(to).ok_or_else(|| bad("mcc_to", to))?;
                    if lo > hi {
                        return Err(ToolError::invalid_args(format!(
                            "{at}: mcc_from {from} is after mcc_to {to}"
                        )));
                    }
                    set.push_mcc(rule.id.clone(), &rule.category, lo, hi);
                }
                _ => {
                    return Err(ToolError::invalid_args(format!(
                        "{at}: give either merchant_keyword or both mcc_from and mcc_to, not \
                         both kinds and not neither"
                    )));
                }
            }
        }
        set.push_builtin();
        Ok(set)
    }

    /// The category of `tx` and the rule that gave it. See the module documentation.
    pub fn categorize<'a>(&'a self, tx: &Tx<'a>) -> Categorized<'a> {
        if let Some(category) = tx.category {
            return Categorized {
                category,
                rule_id: GIVEN_RULE_ID,
                kind: RuleKind::Given,
                rank: 0,
            };
        }
        let mut best = usize::MAX;
        if let Some(code) = tx.mcc
            && let Some(&(rule, ..)) = self
                .mcc
                .iter()
                .find(|&&(_, lo, hi)| lo <= code && code <= hi)
        {
            best = rule;
        }
        let words: Vec<&str> = tx.words.split(' ').filter(|w| !w.is_empty()).collect();
        for (p, word) in words.iter().enumerate() {
            let Some(entries) = self.keywords.get(*word) else {
                continue;
            };
            let after = &words[p + 1..];
            // Entries are in rule order: the first that matches is this position's best.
            if let Some(entry) = entries.iter().take_while(|e| e.rule < best).find(|e| {
                e.rest.len() <= after.len() && e.rest.iter().zip(after).all(|(a, b)| a == b)
            }) {
                best = entry.rule;
            }
        }
        match self.rules.get(best) {
            Some(rule) => Categorized {
                category: &rule.category,
                rule_id: &rule.id,
                kind: rule.kind,
                rank: best + 1,
            },
            None => Categorized {
                category: FALLBACK_CATEGORY,
                rule_id: FALLBACK_RULE_ID,
                kind: RuleKind::Fallback,
                rank: usize::MAX,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::{Transaction, is_category};
    use aura_sdk::ToolErrorKind;

    fn cat(rules: &RuleSet, merchant: &str, mcc: Option<&str>) -> (String, String) {
        let t = Transaction {
            id: "x".into(),
            merchant: merchant.into(),
            mcc: mcc.map(Into::into),
            amount_minor: 100,
            currency: "EUR".into(),
            time: "2026-11-23T09:00:00Z".into(),
            category: None,
        };
        let tx = t.check(0, "t").unwrap();
        let c = rules.categorize(&tx);
        (c.category.to_owned(), c.rule_id.to_owned())
    }

    fn keyword(id: &str, category: &str, keyword: &str) -> UserRule {
        UserRule {
            id: id.into(),
            category: category.into(),
            merchant_keyword: Some(keyword.into()),
            mcc_from: None,
            mcc_to: None,
        }
    }

    #[test]
    fn builtin_tables_are_well_formed() {
        for &(from, to, category) in BUILTIN_MCC {
            assert!(from <= to && to <= 9999, "{from}-{to}");
            assert!(is_category(category), "{category}");
        }
        for &(keyword, category) in BUILTIN_KEYWORDS {
            assert_eq!(merchant_words(keyword).join(" "), keyword);
            assert!(is_category(category), "{category}");
        }
        // Every built-in id is distinct.
        let ids: std::collections::BTreeSet<_> = RuleSet::builtin()
            .rules
            .iter()
            .map(|r| r.id.clone())
            .collect();
        assert_eq!(ids.len(), BUILTIN_MCC.len() + BUILTIN_KEYWORDS.len());
    }

    #[test]
    fn builtin_mcc_ranges() {
        let b = RuleSet::builtin();
        let c = |mcc: &str| cat(&b, "Some Merchant", Some(mcc));
        assert_eq!(
            c("5411"),
            ("groceries".into(), "builtin/mcc/5411-5499".into())
        );
        assert_eq!(c("5499").0, "groceries");
        assert_eq!(c("5812"), ("dining".into(), "builtin/mcc/5811-5814".into()));
        assert_eq!(c("5814").0, "dining");
        assert_eq!(c("4111").0, "transport");
        assert_eq!(c("4131").0, "transport");
        assert_eq!(c("4119"), ("health".into(), "builtin/mcc/4119".into()));
        assert_eq!(c("4900").0, "utilities");
        assert_eq!(c("5541").0, "fuel");
        assert_eq!(c("5542").0, "fuel");
        assert_eq!(c("4814").0, "telecom");
        assert_eq!(c("4899").0, "subscriptions");
        assert_eq!(c("3005").0, "travel");
        assert_eq!(c("6011").0, "cash");
        // 5500 (not a listed code) and 0742 (veterinary) fall through to the fallback.
        assert_eq!(
            c("5500"),
            ("uncategorized".into(), "builtin/fallback".into())
        );
        assert_eq!(c("0742").0, "uncategorized");
    }

    #[test]
    fn builtin_keywords_match_whole_words() {
        let b = RuleSet::builtin();
        let c = |m: &str| cat(&b, m, None);
        assert_eq!(
            c("UBER *EATS 8812"),
            ("dining".into(), "builtin/keyword/uber_eats".into())
        );
        assert_eq!(
            c("UBER *TRIP"),
            ("transport".into(), "builtin/keyword/uber".into())
        );
        assert_eq!(
            c("SHELL OIL 5532"),
            ("fuel".into(), "builtin/keyword/shell".into())
        );
        assert_eq!(c("Shellfish Bar").0, "uncategorized");
        assert_eq!(c("McDonald's 123").0, "dining");
        assert_eq!(c("APPLE.COM/BILL").0, "subscriptions");
        assert_eq!(c("NETFLIX.COM").0, "subscriptions");
        assert_eq!(c("Sainsbury's Local").0, "groceries");
        assert_eq!(c("Corner Shop").0, "uncategorized");
        // MCC rules come before keywords: Uber Eats with 5812 → the MCC rule.
        assert_eq!(
            cat(&b, "UBER EATS", Some("5812")).1,
            "builtin/mcc/5811-5814"
        );
        // An unlisted MCC still lets a keyword match.
        assert_eq!(cat(&b, "UBER", Some("0001")).1, "builtin/keyword/uber");
    }

    #[test]
    fn user_rules_come_first_in_their_order() {
        let rules = vec![
            keyword("gym", "fitness", "pure gym"),
            UserRule {
                id: "vet".into(),
                category: "pets".into(),
                merchant_keyword: None,
                mcc_from: Some("0742".into()),
                mcc_to: Some("0742".into()),
            },
            keyword("any-shell", "car", "shell"),
        ];
        let set = RuleSet::with_user_rules(&rules, "rules").unwrap();
        assert_eq!(cat(&set, "PureGym", None).0, "uncategorized"); // "puregym" is one word
        assert_eq!(
            cat(&set, "PURE GYM LTD", None),
            ("fitness".into(), "gym".into())
        );
        assert_eq!(
            cat(&set, "Vet Clinic", Some("0742")),
            ("pets".into(), "vet".into())
        );
        // The user's "shell" rule wins over the built-in MCC and keyword rules.
        assert_eq!(
            cat(&set, "Shell", Some("5541")),
            ("car".into(), "any-shell".into())
        );
        assert_eq!(cat(&set, "Aldi", Some("5411")).1, "builtin/mcc/5411-5499");
    }

    #[test]
    fn given_categories_win() {
        let set = RuleSet::builtin();
        let t = Transaction {
            id: "x".into(),
            merchant: "Shell".into(),
            mcc: Some("5541".into()),
            amount_minor: 100,
            currency: "EUR".into(),
            time: "2026-11-23T09:00:00Z".into(),
            category: Some("business".into()),
        };
        let tx = t.check(0, "t").unwrap();
        let c = set.categorize(&tx);
        assert_eq!(c.category, "business");
        assert_eq!(c.kind, RuleKind::Given);
        assert_eq!(c.rule_id, "given");
    }

    #[test]
    fn inconsistent_user_rules_are_refused() {
        let both = UserRule {
            mcc_from: Some("0742".into()),
            mcc_to: Some("0742".into()),
            ..keyword("a", "pets", "vet")
        };
        let neither = UserRule {
            merchant_keyword: None,
            ..keyword("a", "pets", "vet")
        };
        let backwards = UserRule {
            merchant_keyword: None,
            mcc_from: Some("5000".into()),
            mcc_to: Some("4000".into()),
            ..keyword("a", "pets", "vet")
        };
        let half = UserRule {
            merchant_keyword: None,
            mcc_from: Some("5000".into()),
            ..keyword("a", "pets", "vet")
        };
        let cases = [
            (vec![both], "rules[0]"),
            (vec![neither], "rules[0]"),
            (vec![backwards], "rules[0]"),
            (vec![half], "rules[0]"),
            (
                vec![keyword("a", "pets", " - ")],
                "rules[0].merchant_keyword",
            ),
            (vec![keyword("a", "Pets", "vet")], "rules[0].category"),
            (vec![keyword("a/b", "pets", "vet")], "rules[0].id"),
            (
                vec![keyword("a", "pets", "vet"), keyword("a", "x", "y")],
                "rules[1].id",
            ),
        ];
        for (rules, field) in cases {
            let e = RuleSet::with_user_rules(&rules, "rules").unwrap_err();
            assert_eq!(e.kind, ToolErrorKind::InvalidArgs);
            assert!(e.message.starts_with(field), "{field}: {}", e.message);
        }
    }
}
