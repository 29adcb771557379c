//! The finance agent's tick: proposes `detect_anomalies`, `budget_status` and `upcoming_bills`
//! when the context's transactions call for them.
//!
//! Context: a JSON object with `now` (RFC 3339, required), `utc_offset_minutes` (an integer in
//! -840..840; anything else means 0), `transactions` (shaped as the tools take them; absent or
//! null means none) and `profile.budgets` (items shaped as `budget_status`'s budgets). Other
//! fields are ignored.
//!
//! Rules:
//! - Transactions are taken leniently (the context is a snapshot, not checked against a
//!   schema): an element without a valid `id`, `merchant`, `amount_minor`, `currency` and `time`
//!   (as the tools require them) is skipped; an invalid `mcc` or `category` is dropped; unknown
//!   fields are dropped; a repeated id keeps the first. The pool is at most 300
//!   ([`TICK_TRANSACTIONS_MAX`]) of them, the most recent (ties by context position), in context
//!   order. Budgets likewise: invalid ones skipped, a repeated (category, currency) keeps the
//!   first, at most 100.
//! - Each proposal carries its own selection of the pool, at most 100
//!   ([`PROPOSAL_TRANSACTIONS_MAX`], the most recent, in context order), and the tick analyses
//!   exactly that selection with the built-in categorization rules and the tool's defaults, so
//!   the proposed call, run as proposed, reports what triggered it. "Today" and the month are
//!   the local date of `now` at `utc_offset_minutes`.
//! - **detect_anomalies** when a spend of the last 24 hours ([`NEW_WINDOW_SECS`]: `time ≥ now −
//!   24 h`) is a duplicate or unusually large (first-time merchants alone do not trigger it: they
//!   are usually legitimate). Selection: the transactions of the new spends' merchants, the
//!   spends of their (category, currency) pairs, and the oldest pool transaction (it dates the
//!   history for the first-time rule). Args: that selection, `since` = now − 24 h in UTC.
//!   Signals `duplicate:<id>`, `unusually_large:<id>`. Priority: duplicate 70, unusually large 60,
//!   +15 when the score is ≥ 10 ([`WATCH_SCORE_CENTI`]), and then the surface is `WATCH` (a
//!   possible fraud); else `PHONE_CARD`.
//! - **budget_status** when some profile budget is over or at risk this month (the tool's
//!   logic). Selection: the pool transactions dated in the month. Args: that selection, the
//!   budgets, `month`, `today`, `utc_offset_minutes`. Signals `over:<category>/<currency>`,
//!   `at_risk:<category>/<currency>`. Priority: over 65, at risk 45. `PHONE_CARD`. A budget whose
//!   totals leave the exact range proposes nothing.
//! - **upcoming_bills** when a detected bill is due within 3 days ([`BILL_DUE_DAYS`]; overdue,
//!   not yet lapsed, bills count as due today): signals `bill_due:<next_date>:<last transaction
//!   id>`, priority 50 + 5 × (3 − days until the soonest, at least 0), `PHONE_CARD`. Otherwise,
//!   on Mondays (local), when any bill is detected: a weekly review, signal
//!   `weekly_review:<date>`, priority 20, `PHONE_CARD` (a card the orchestrator may rank below
//!   anything more pressing). Selection: the spends up to today of merchants (in a currency)
//!   paid at least twice — a single payment cannot start a series —, at most the latest
//!   [`BILL_HISTORY_PER_SERIES`] of each, and past [`PROPOSAL_TRANSACTIONS_MAX`] the cap takes
//!   every merchant's newest before anyone's older ones: a monthly bill's history is not
//!   crowded out by daily small spends elsewhere. Args: that selection, `today`,
//!   `utc_offset_minutes`.
//! - Signals: at most 16 per proposal, the 16th being `more:<n>` when n were left out.
//!   Proposals are ordered by priority (highest first), then tool name.
//! - `call_id`: `aura_sdk::call_id_from("finance/tick\n" + now + "\n" + tool + "\n" + signals
//!   joined by "\n")`; `ts`: `now` as given; `confirm_required`: false (the catalogue's value
//!   for every finance tool).

use std::collections::{HashMap, HashSet};

use aura_sdk::envelope::{Proposal, Signals, Surface, ToolCall, answer};
use aura_sdk::time::{
    SECS_PER_DAY, format_utc, local_day, offset_minutes_of, parse_time, weekday_of_day,
};
use aura_sdk::{ToolError, ToolResult};
use serde_json::{Map, Value, json};

use crate::anomalies::{self, Params, Reason};
use crate::bills::{self, DEFAULT_AMOUNT_TOLERANCE_PERCENT};
use crate::budget::{self, Budget, CheckedBudget, MAX_BUDGETS};
use aura_sdk::date::{
    FIRST_DAY, LAST_DAY, civil_from_days, days_from_civil, days_in_month, format_date,
};

use crate::common::Tx;
use crate::common::{
    MAX_MERCHANT_CHARS, MONEY_ABS_MAX, Transaction, check_transactions, is_category, is_currency,
    is_id, parse_mcc,
};
use crate::rules::RuleSet;

/// The agent's name in envelopes.
pub const AGENT: &str = "finance";
/// Most context transactions one tick looks at (the most recent): each is parsed, checked and
/// analysed three times within the tick's 700 ms budget.
pub const TICK_TRANSACTIONS_MAX: usize = 300;
/// Most transactions one proposed call carries. Every transaction written into a proposal
/// costs ~80,000 fuel in the SDK's canonical encoder (measured: five or six object members at
/// ~13,000 each); three proposals of 100 stay near a third of the tick's 70 M fuel at the default
/// rate, leaving the rest for parsing the context.
pub const PROPOSAL_TRANSACTIONS_MAX: usize = 100;
/// The payments of one merchant an upcoming_bills proposal carries at most: as many as a
/// monthly bill needs for full confidence (`bills::PERIODS`), so a daily coffee shop takes no
/// more room than the rent.
pub const BILL_HISTORY_PER_SERIES: usize = 6;
/// A spend this recent is new: ticks come at least daily, so 24 hours covers everything since
/// the previous tick without a stored cursor.
pub const NEW_WINDOW_SECS: i64 = SECS_PER_DAY;
/// A bill due within this many days is worth a card.
pub const BILL_DUE_DAYS: i64 = 3;
/// The local ISO weekday of the weekly bills review (1 = Monday).
pub const WEEKLY_REVIEW_WEEKDAY: u8 = 1;
/// Scores at or above 10.00 are far past the 3.5 threshold: likely fraud, worth the watch.
pub const WATCH_SCORE_CENTI: i64 = 1000;

/// Priorities (0..100) of what the tick finds.
pub const PRIORITY_DUPLICATE: u32 = 70;
/// See [`PRIORITY_DUPLICATE`].
pub const PRIORITY_UNUSUALLY_LARGE: u32 = 60;
/// Added for a score ≥ [`WATCH_SCORE_CENTI`].
pub const PRIORITY_FRAUD_BONUS: u32 = 15;
/// See [`PRIORITY_DUPLICATE`].
pub const PRIORITY_OVER_BUDGET: u32 = 65;
/// See [`PRIORITY_DUPLICATE`].
pub const PRIORITY_AT_RISK: u32 = 45;
/// A bill due in 3 days; each day sooner adds [`PRIORITY_BILL_PER_DAY`].
pub const PRIORITY_BILL_DUE: u32 = 50;
/// See [`PRIORITY_BILL_DUE`].
pub const PRIORITY_BILL_PER_DAY: u32 = 5;
/// The weekly review: worth having, never urgent.
pub const PRIORITY_WEEKLY_REVIEW: u32 = 20;

/// One proposal before encoding.
struct Draft {
    tool: &'static str,
    args: Value,
    signals: Vec<String>,
    priority: u32,
    surface: Surface,
}

/// The orchestrator tick. See the module documentation.
pub fn tick(context: Value) -> ToolResult<Value> {
    let (context, now_text, now) = aura_sdk::args::tick_context(&context)?;
    let offset = context
        .get("utc_offset_minutes")
        .and_then(offset_minutes_of)
        .unwrap_or(0);
    let raw = match context.get("transactions") {
        None | Some(Value::Null) => &[][..],
        Some(Value::Array(list)) => list.as_slice(),
        Some(_) => {
            return Err(ToolError::invalid_args(
                "tick context: `transactions` must be an array",
            ));
        }
    };
    let pool = usable_transactions(raw);
    let budgets = usable_budgets(context.get("profile"));
    let txs = check_transactions(&pool, "tick context: transactions")?;
    let rules = RuleSet::builtin();
    let today = local_day(now, offset);
    // Dates are written "YYYY-MM-DD": at the very edge of RFC 3339's range the local date may
    // not be writable, and then nothing date-based is proposed.
    let dated = (FIRST_DAY..=LAST_DAY).contains(&today);

    let mut drafts = Vec::new();

    // Anomalies among the last 24 hours' spends, against the history of their merchants and
    // categories (and the oldest transaction, which dates the history for the first-time rule).
    let since = now - NEW_WINDOW_SECS;
    let fresh: Vec<&Tx<'_>> = txs
        .iter()
        .filter(|t| t.is_spend() && t.time >= since)
        .collect();
    if let (false, Ok(since_text)) = (fresh.is_empty(), format_utc(since)) {
        let keys: HashSet<&str> = fresh.iter().map(|t| t.key.as_str()).collect();
        let categories: HashSet<(&str, &str)> = fresh
            .iter()
            .map(|t| (rules.categorize(t).category, t.currency))
            .collect();
        let oldest = txs
            .iter()
            .min_by_key(|t| (t.time, t.index))
            .map(|t| t.index);
        let set = select(&pool, &txs, |t| {
            keys.contains(t.key.as_str())
                || (t.is_spend()
                    && categories.contains(&(rules.categorize(t).category, t.currency)))
                || Some(t.index) == oldest
        });
        let set_txs = check_transactions(&set, "tick: anomalies")?;
        let params = Params {
            since: Some(since),
            ..Params::default()
        };
        let (findings, _) = anomalies::analyze(&set_txs, &rules, &params);
        let mut signals = Vec::new();
        let mut priority = 0;
        let mut watch = false;
        for f in &findings {
            let id = set_txs[f.tx].id;
            if f.reasons.contains(&Reason::Duplicate) {
                signals.push(format!("duplicate:{id}"));
                priority = priority.max(PRIORITY_DUPLICATE);
            }
            if f.reasons.contains(&Reason::UnusuallyLarge) {
                signals.push(format!("unusually_large:{id}"));
                let fraud = f.score.is_some_and(|s| s.centi >= WATCH_SCORE_CENTI);
                watch |= fraud;
                let bonus = if fraud { PRIORITY_FRAUD_BONUS } else { 0 };
                priority = priority.max(PRIORITY_UNUSUALLY_LARGE + bonus);
            }
        }
        if !signals.is_empty() {
            drafts.push(Draft {
                tool: "detect_anomalies",
                args: json!({ "transactions": set, "since": since_text }),
                signals,
                priority,
                surface: if watch {
                    Surface::Watch
                } else {
                    Surface::PhoneCard
                },
            });
        }
    }

    // Budgets over or at risk this month.
    if dated && !budgets.is_empty() {
        let (year, month, _) = civil_from_days(today);
        let first = days_from_civil(year, month, 1);
        let length = days_in_month(year, month);
        let last = first + i64::from(length) - 1;
        let set = select(&pool, &txs, |t| {
            (first..=last).contains(&local_day(t.time, offset))
        });
        let set_txs = check_transactions(&set, "tick: budgets")?;
        let checked: Vec<CheckedBudget<'_>> = budgets
            .iter()
            .map(|b| CheckedBudget {
                category: &b.category,
                currency: &b.currency,
                limit: b.limit_minor,
            })
            .collect();
        let window = budget::Window {
            first,
            length,
            today,
            offset,
        };
        if let Ok(lines) = budget::evaluate(&set_txs, &rules, &checked, &window, "budgets") {
            let mut signals = Vec::new();
            let mut priority = 0;
            for line in &lines {
                if line.over {
                    signals.push(format!("over:{}/{}", line.category, line.currency));
                    priority = priority.max(PRIORITY_OVER_BUDGET);
                } else if line.at_risk {
                    signals.push(format!("at_risk:{}/{}", line.category, line.currency));
                    priority = priority.max(PRIORITY_AT_RISK);
                }
            }
            if !signals.is_empty() {
                drafts.push(Draft {
                    tool: "budget_status",
                    args: json!({
                        "transactions": set,
                        "budgets": budgets,
                        "month": format!("{year:04}-{month:02}"),
                        "today": format_date(today),
                        "utc_offset_minutes": offset,
                    }),
                    signals,
                    priority,
                    surface: Surface::PhoneCard,
                });
            }
        }
    }

    // Bills due soon, or the weekly review: over the spends up to today of merchants paid at
    // least twice (a single payment cannot start a series).
    if dated {
        let mut paid: HashMap<(&str, &str), u32> = HashMap::new();
        for t in &txs {
            if t.is_spend() && local_day(t.time, offset) <= today {
                *paid.entry((t.key.as_str(), t.currency)).or_default() += 1;
            }
        }
        let set = select_series(&pool, &txs, |t| {
            t.is_spend()
                && local_day(t.time, offset) <= today
                && paid.get(&(t.key.as_str(), t.currency)) >= Some(&2)
        });
        let set_txs = check_transactions(&set, "tick: bills")?;
        let (series, _) =
            bills::find_bills(&set_txs, today, offset, DEFAULT_AMOUNT_TOLERANCE_PERCENT);
        let due: Vec<_> = series
            .iter()
            .filter(|s| s.due_in_days <= BILL_DUE_DAYS)
            .collect();
        let args = json!({
            "transactions": set,
            "today": format_date(today),
            "utc_offset_minutes": offset,
        });
        if let Some(soonest) = due.iter().map(|s| s.due_in_days.max(0)).min() {
            let signals = due
                .iter()
                .map(|s| {
                    let last = set_txs[*s.txs.last().expect("a series has occurrences")].id;
                    format!("bill_due:{}:{last}", format_date(s.next_day))
                })
                .collect();
            // soonest is in 0..=3, so the cast cannot truncate.
            let sooner = (BILL_DUE_DAYS - soonest) as u32;
            drafts.push(Draft {
                tool: "upcoming_bills",
                args,
                signals,
                priority: PRIORITY_BILL_DUE + PRIORITY_BILL_PER_DAY * sooner,
                surface: Surface::PhoneCard,
            });
        } else if weekday_of_day(today) == WEEKLY_REVIEW_WEEKDAY && !series.is_empty() {
            drafts.push(Draft {
                tool: "upcoming_bills",
                args,
                signals: vec![format!("weekly_review:{}", format_date(today))],
                priority: PRIORITY_WEEKLY_REVIEW,
                surface: Surface::PhoneCard,
            });
        }
    }

    drafts.sort_by(|a, b| b.priority.cmp(&a.priority).then(a.tool.cmp(b.tool)));
    let proposals = drafts
        .into_iter()
        .map(|d| {
            let signals = Signals::capped(d.signals);
            let seed = format!(
                "finance/tick\n{now_text}\n{}\n{}",
                d.tool,
                signals.join("\n")
            );
            let call =
                ToolCall::new(&seed, AGENT, d.tool, d.args, now_text)?.expected_surface(d.surface);
            // The priority is capped at 100 by the proposal.
            Ok(Proposal::new(call, signals, i64::from(d.priority)))
        })
        .collect::<ToolResult<Vec<_>>>()?;
    Ok(answer(proposals))
}

/// The pool transactions `keep` selects, at most [`PROPOSAL_TRANSACTIONS_MAX`] (the most
/// recent, ties by pool position), in pool order. `txs` is `pool` checked.
fn select(
    pool: &[Transaction],
    txs: &[Tx<'_>],
    keep: impl Fn(&Tx<'_>) -> bool,
) -> Vec<Transaction> {
    let mut chosen: Vec<&Tx<'_>> = txs.iter().filter(|t| keep(t)).collect();
    if chosen.len() > PROPOSAL_TRANSACTIONS_MAX {
        chosen.sort_by_key(|t| (std::cmp::Reverse(t.time), t.index));
        chosen.truncate(PROPOSAL_TRANSACTIONS_MAX);
        chosen.sort_by_key(|t| t.index);
    }
    chosen.iter().map(|t| pool[t.index].clone()).collect()
}

/// The pool transactions `keep` selects for a bills proposal: per merchant and currency the
/// latest [`BILL_HISTORY_PER_SERIES`]; past [`PROPOSAL_TRANSACTIONS_MAX`], every series' newest
/// first, then every series' second newest, and so on (ties by time, newest first, then pool
/// position). In pool order.
fn select_series(
    pool: &[Transaction],
    txs: &[Tx<'_>],
    keep: impl Fn(&Tx<'_>) -> bool,
) -> Vec<Transaction> {
    let mut chosen: Vec<&Tx<'_>> = txs.iter().filter(|t| keep(t)).collect();
    chosen.sort_by_key(|t| (std::cmp::Reverse(t.time), t.index));
    let mut seen: HashMap<(&str, &str), usize> = HashMap::new();
    let mut ranked: Vec<(usize, &Tx<'_>)> = chosen
        .into_iter()
        .map(|t| {
            let rank = seen.entry((t.key.as_str(), t.currency)).or_default();
            *rank += 1;
            (*rank - 1, t)
        })
        .filter(|(rank, _)| *rank < BILL_HISTORY_PER_SERIES)
        .collect();
    // Stable: within a rank, the newest first, as sorted above.
    ranked.sort_by_key(|(rank, _)| *rank);
    ranked.truncate(PROPOSAL_TRANSACTIONS_MAX);
    ranked.sort_by_key(|(_, t)| t.index);
    ranked.iter().map(|(_, t)| pool[t.index].clone()).collect()
}

/// The context's transactions the tools would accept (see the module documentation).
fn usable_transactions(raw: &[Value]) -> Vec<Transaction> {
    let mut seen = HashSet::new();
    let mut list: Vec<(Transaction, i64)> = raw
        .iter()
        .filter_map(lenient_transaction)
        .filter(|(t, _)| seen.insert(t.id.clone()))
        .collect();
    if list.len() > TICK_TRANSACTIONS_MAX {
        let mut order: Vec<usize> = (0..list.len()).collect();
        order.sort_by_key(|&i| (-list[i].1, i));
        let mut keep = vec![false; list.len()];
        for &i in &order[..TICK_TRANSACTIONS_MAX] {
            keep[i] = true;
        }
        let mut index = 0;
        list.retain(|_| {
            index += 1;
            keep[index - 1]
        });
    }
    list.into_iter().map(|(t, _)| t).collect()
}

/// One context transaction and its time, if it has every required field in a valid form.
fn lenient_transaction(value: &Value) -> Option<(Transaction, i64)> {
    let o: &Map<String, Value> = value.as_object()?;
    let text = |key: &str| o.get(key).and_then(Value::as_str);
    let id = text("id").filter(|s| is_id(s))?;
    let merchant = text("merchant")
        .filter(|m| !m.trim().is_empty() && m.chars().count() <= MAX_MERCHANT_CHARS)?;
    let amount = o
        .get("amount_minor")
        .and_then(Value::as_i64)
        .filter(|a| a.abs() <= MONEY_ABS_MAX)?;
    let currency = text("currency").filter(|c| is_currency(c))?;
    let time_text = text("time")?;
    let time = parse_time(time_text, "time").ok()?;
    let transaction = Transaction {
        id: id.to_owned(),
        merchant: merchant.to_owned(),
        mcc: text("mcc")
            .filter(|m| parse_mcc(m).is_some())
            .map(str::to_owned),
        amount_minor: amount,
        currency: currency.to_owned(),
        time: time_text.to_owned(),
        category: text("category")
            .filter(|c| is_category(c))
            .map(str::to_owned),
    };
    Some((transaction, time))
}

/// The profile's budgets `budget_status` would accept (see the module documentation).
fn usable_budgets(profile: Option<&Value>) -> Vec<Budget> {
    let Some(Value::Array(raw)) = profile.and_then(|p| p.get("budgets")) else {
        return Vec::new();
    };
    let mut seen = HashSet::new();
    raw.iter()
        .filter_map(|b| {
            let o = b.as_object()?;
            let category = o.get("category")?.as_str().filter(|c| is_category(c))?;
            let currency = o.get("currency")?.as_str().filter(|c| is_currency(c))?;
            let limit = o
                .get("limit_minor")?
                .as_i64()
                .filter(|l| (0..=MONEY_ABS_MAX).contains(l))?;
            Some(Budget {
                category: category.to_owned(),
                currency: currency.to_owned(),
                limit_minor: limit,
            })
        })
        .filter(|b| seen.insert((b.category.clone(), b.currency.clone())))
        .take(MAX_BUDGETS)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SCHEMAS;
    use aura_sdk::envelope::SIGNALS_MAX;
    use aura_sdk::{ToolErrorKind, call_id_from};

    fn t(id: &str, merchant: &str, amount: i64, time: &str) -> Value {
        json!({"id": id, "merchant": merchant, "amount_minor": amount, "currency": "EUR",
               "time": time})
    }

    /// The tick's proposals, each checked against proposals.v1, toolcall.v1 and its tool's
    /// args schema (see `aura_testkit`), with at least one signal, and run.
    fn proposals(context: Value) -> Vec<Value> {
        let list = SCHEMAS.tick_proposals(&tick(context).unwrap());
        for p in &list {
            check_call(&p["call"]);
            assert!(!p["signals"].as_array().unwrap().is_empty());
        }
        list
    }

    /// The proposed call (checked by `proposals`) runs.
    fn check_call(call: &Value) {
        assert_eq!(call["confirm_required"], false);
        let tool = call["tool"].as_str().unwrap();
        let args = call["args"].clone();
        match tool {
            "detect_anomalies" => {
                anomalies::detect_anomalies(serde_json::from_value(args).unwrap()).unwrap();
            }
            "budget_status" => {
                budget::budget_status(serde_json::from_value(args).unwrap()).unwrap();
            }
            "upcoming_bills" => {
                bills::upcoming_bills(serde_json::from_value(args).unwrap()).unwrap();
            }
            other => panic!("unexpected tool {other}"),
        }
    }

    fn tools(list: &[Value]) -> Vec<&str> {
        list.iter()
            .map(|p| p["call"]["tool"].as_str().unwrap())
            .collect()
    }

    #[test]
    fn quiet_contexts_propose_nothing() {
        // 2026-11-24 is a Tuesday.
        assert!(proposals(json!({"now": "2026-11-24T08:00:00Z"})).is_empty());
        assert!(proposals(json!({"now": "2026-11-24T08:00:00Z", "transactions": null})).is_empty());
        let context = json!({
            "now": "2026-11-24T08:00:00Z",
            "transactions": [t("a", "Aldi", 3000, "2026-11-23T18:00:00Z")],
            "profile": {"budgets": [{"category": "groceries", "currency": "EUR",
                                     "limit_minor": 100000}]},
            "messages": [{"from": "x"}],
        });
        assert!(proposals(context).is_empty());
    }

    #[test]
    fn a_duplicate_charge_today() {
        // k1 at 07:00, k2 at 07:03 the same amount at the same merchant: k2 duplicates k1.
        let context = json!({
            "now": "2026-11-24T08:00:00Z",
            "transactions": [t("k1", "Kiosk", 450, "2026-11-24T07:00:00Z"),
                             t("k2", "Kiosk", 450, "2026-11-24T07:03:00Z")],
        });
        let list = proposals(context.clone());
        assert_eq!(tools(&list), ["detect_anomalies"]);
        let p = &list[0];
        assert_eq!(p["signals"], json!(["duplicate:k2"]));
        assert_eq!(p["priority"], 70);
        assert_eq!(p["call"]["expected_surface"], "PHONE_CARD");
        assert_eq!(p["call"]["args"]["since"], "2026-11-23T08:00:00Z");
        assert_eq!(
            p["call"]["call_id"],
            call_id_from("finance/tick\n2026-11-24T08:00:00Z\ndetect_anomalies\nduplicate:k2")
        );
        assert_eq!(tick(context.clone()).unwrap(), tick(context).unwrap());
        // The same pair two days ago is old news.
        let old = json!({
            "now": "2026-11-26T08:00:00Z",
            "transactions": [t("k1", "Kiosk", 450, "2026-11-24T07:00:00Z"),
                             t("k2", "Kiosk", 450, "2026-11-24T07:03:00Z")],
        });
        assert!(proposals(old).is_empty());
    }

    #[test]
    fn a_huge_spend_goes_to_the_watch() {
        // Café history 400, 420, 380, 410, 390 on Nov 1-5 and 2000 today: z = 71.72 ≥ 10
        // (see anomalies) → 60 + 15 = 75, WATCH.
        let mut list: Vec<Value> = [400, 420, 380, 410, 390]
            .iter()
            .enumerate()
            .map(|(i, &a)| {
                t(
                    &format!("c{i}"),
                    "Cafe Rosa",
                    a,
                    &format!("2026-11-0{}T12:00:00Z", i + 1),
                )
            })
            .collect();
        list.push(t("c5", "Cafe Rosa", 2000, "2026-11-24T07:30:00Z"));
        let p = &proposals(json!({"now": "2026-11-24T08:00:00Z", "transactions": list}))[0];
        assert_eq!(p["signals"], json!(["unusually_large:c5"]));
        assert_eq!(p["priority"], 75);
        assert_eq!(p["call"]["expected_surface"], "WATCH");
    }

    #[test]
    fn budgets_over_and_at_risk_in_the_local_month() {
        // now 2026-11-30T23:30Z at +60 → local 2026-12-01 00:30: month December, today the 1st
        // (1 of 31 days elapsed). Dining: 1000 at local Dec 1 00:10 → projected 31000 > 20000
        // → at risk. Groceries: 6000 > 5000 → over. The November spend does not count.
        let mut dinner = t("d", "Trattoria", 1000, "2026-11-30T23:10:00Z");
        dinner["mcc"] = json!("5812");
        let context = json!({
            "now": "2026-11-30T23:30:00Z",
            "utc_offset_minutes": 60,
            "transactions": [dinner, t("g", "Aldi", 6000, "2026-11-30T23:20:00Z"),
                             t("n", "Aldi", 9000, "2026-11-15T10:00:00Z")],
            "profile": {"budgets": [
                {"category": "dining", "currency": "EUR", "limit_minor": 20000},
                {"category": "groceries", "currency": "EUR", "limit_minor": 5000},
                {"category": "groceries", "currency": "EUR", "limit_minor": 1},
                {"category": "Bad", "currency": "EUR", "limit_minor": 1},
            ]},
        });
        let list = proposals(context);
        assert_eq!(tools(&list), ["budget_status"]);
        let p = &list[0];
        assert_eq!(
            p["signals"],
            json!(["at_risk:dining/EUR", "over:groceries/EUR"])
        );
        assert_eq!(p["priority"], 65);
        let args = &p["call"]["args"];
        assert_eq!(args["month"], "2026-12");
        assert_eq!(args["today"], "2026-12-01");
        assert_eq!(args["utc_offset_minutes"], 60);
        assert_eq!(args["budgets"].as_array().unwrap().len(), 2);
        let ids: Vec<&str> = args["transactions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["id"].as_str().unwrap())
            .collect();
        assert_eq!(ids, ["d", "g"]);
    }

    #[test]
    fn a_monthly_bill_is_found_behind_daily_spends() {
        // Rent on the 1st, Aug..Nov (4 payments); two coffees a day from Aug 1 to Nov 29 (242
        // spends, all at one merchant). now 2026-11-29: rent next 2026-12-01, due in 2 days.
        // The 100 most recent spends would be coffees since Oct 11 and rent's Nov 1 and Oct
        // 1 only: two payments, fewer than a monthly series needs (3). With at most 6 per
        // merchant, the rent's 4 payments and 6 coffees are proposed.
        let mut list = Vec::new();
        for (i, m) in ["08", "09", "10", "11"].iter().enumerate() {
            list.push(t(
                &format!("r{i}"),
                "Hausverwaltung",
                95000,
                &format!("2026-{m}-01T08:00:00Z"),
            ));
        }
        let mut day = time::macros::datetime!(2026-08-01 07:30 UTC);
        let mut n = 0;
        while day < time::macros::datetime!(2026-11-30 00:00 UTC) {
            for hour in [0, 6] {
                let at = day + time::Duration::hours(hour);
                list.push(t(
                    &format!("c{n}"),
                    "Café Kranzler",
                    350,
                    &format_utc(at.unix_timestamp()).unwrap(),
                ));
                n += 1;
            }
            day += time::Duration::days(1);
        }
        assert_eq!(n, 2 * 121);
        let list = proposals(json!({"now": "2026-11-29T09:00:00Z", "transactions": list}));
        let bills = list
            .iter()
            .find(|p| p["call"]["tool"] == "upcoming_bills")
            .unwrap();
        assert_eq!(bills["signals"], json!(["bill_due:2026-12-01:r3"]));
        let carried = bills["call"]["args"]["transactions"].as_array().unwrap();
        let rent = carried
            .iter()
            .filter(|t| t["merchant"] == "Hausverwaltung")
            .count();
        let coffee = carried
            .iter()
            .filter(|t| t["merchant"] == "Café Kranzler")
            .count();
        assert_eq!((rent, coffee), (4, BILL_HISTORY_PER_SERIES));
    }

    #[test]
    fn bills_due_soon_and_the_monday_review() {
        // Netflix on the 26th, Aug..Nov: next 2026-12-26. now 2026-12-24 (Thursday) → due in 2
        // → 50 + 5 × (3 − 2) = 55.
        let list: Vec<Value> = ["08", "09", "10", "11"]
            .iter()
            .enumerate()
            .map(|(i, m)| {
                t(
                    &format!("n{i}"),
                    "Netflix",
                    1299,
                    &format!("2026-{m}-26T06:00:00Z"),
                )
            })
            .collect();
        let p = &proposals(json!({"now": "2026-12-24T09:00:00Z", "transactions": list.clone()}))[0];
        assert_eq!(p["call"]["tool"], "upcoming_bills");
        assert_eq!(p["signals"], json!(["bill_due:2026-12-26:n3"]));
        assert_eq!(p["priority"], 55);
        assert_eq!(p["call"]["args"]["today"], "2026-12-24");
        // Monday 2026-12-14: due in 12 days, not soon → the weekly review, 20.
        let p = &proposals(json!({"now": "2026-12-14T09:00:00Z", "transactions": list.clone()}))[0];
        assert_eq!(p["signals"], json!(["weekly_review:2026-12-14"]));
        assert_eq!(p["priority"], 20);
        assert_eq!(p["call"]["expected_surface"], "PHONE_CARD");
        // Tuesday 2026-12-15: nothing.
        assert!(
            proposals(json!({"now": "2026-12-15T09:00:00Z", "transactions": list.clone()}))
                .is_empty()
        );
        // Overdue by 2 days (Dec 28, not lapsed: tolerance 4) counts as due today → 65.
        let p = &proposals(json!({"now": "2026-12-28T09:00:00Z", "transactions": list}))[0];
        assert_eq!(p["priority"], 65);
    }

    #[test]
    fn several_proposals_are_ordered_by_priority() {
        // A duplicate today (70) and a bill due tomorrow (60); 2026-12-25 is a Friday.
        let mut list: Vec<Value> = ["09", "10", "11"]
            .iter()
            .enumerate()
            .map(|(i, m)| {
                t(
                    &format!("w{i}"),
                    "Water Board",
                    3000,
                    &format!("2026-{m}-26T06:00:00Z"),
                )
            })
            .collect();
        list.push(t("k1", "Kiosk", 450, "2026-12-25T07:00:00Z"));
        list.push(t("k2", "Kiosk", 450, "2026-12-25T07:01:00Z"));
        let list = proposals(json!({"now": "2026-12-25T08:00:00Z", "transactions": list}));
        assert_eq!(tools(&list), ["detect_anomalies", "upcoming_bills"]);
        assert_eq!(list[1]["priority"], 60);
    }

    #[test]
    fn malformed_transactions_are_skipped_or_cleaned() {
        // Skipped: not an object, bad id, blank merchant, float amount, lowercase currency, bad
        // time, a repeated id. Cleaned: bad mcc and category dropped, unknown field dropped.
        let mut k1 = t("k1", "Kiosk", 450, "2026-11-24T07:00:00Z");
        k1["mcc"] = json!("54x1");
        k1["category"] = json!("Food!");
        k1["note"] = json!("x");
        let context = json!({
            "now": "2026-11-24T08:00:00Z",
            "transactions": [
                "nonsense", t("bad id", "Kiosk", 450, "2026-11-24T07:01:00Z"),
                t("m", " ", 450, "2026-11-24T07:01:00Z"),
                {"id": "f", "merchant": "Kiosk", "amount_minor": 4.5, "currency": "EUR",
                 "time": "2026-11-24T07:01:00Z"},
                {"id": "c", "merchant": "Kiosk", "amount_minor": 450, "currency": "eur",
                 "time": "2026-11-24T07:01:00Z"},
                t("tm", "Kiosk", 450, "yesterday"),
                k1, t("k1", "Kiosk", 450, "2026-11-24T07:02:00Z"),
                t("k2", "Kiosk", 450, "2026-11-24T07:03:00Z"),
            ],
        });
        let p = &proposals(context)[0];
        assert_eq!(p["signals"], json!(["duplicate:k2"]));
        assert_eq!(
            p["call"]["args"]["transactions"],
            json!([
                t("k1", "Kiosk", 450, "2026-11-24T07:00:00Z"),
                t("k2", "Kiosk", 450, "2026-11-24T07:03:00Z")
            ])
        );
    }

    #[test]
    fn many_transactions_keep_the_most_recent_and_cap_signals() {
        // 520 identical spends one a minute from 2026-11-24T00:00Z: the pool keeps the 300 most
        // recent (x220..x519), all new; the anomaly proposal carries the 100 most recent
        // (x420..x519). Each after x420 has an earlier one at most 10 minutes before it: 99
        // duplicates, 15 signals listed and "more:84" (99 − 15).
        let list: Vec<Value> = (0..520)
            .map(|i| {
                t(
                    &format!("x{i:03}"),
                    "Kiosk",
                    100,
                    &format!("2026-11-24T{:02}:{:02}:00Z", i / 60, i % 60),
                )
            })
            .collect();
        let p = &proposals(json!({"now": "2026-11-24T09:00:00Z", "transactions": list}))[0];
        let kept = p["call"]["args"]["transactions"].as_array().unwrap();
        assert_eq!(kept.len(), PROPOSAL_TRANSACTIONS_MAX);
        assert_eq!(kept[0]["id"], "x420");
        let signals = p["signals"].as_array().unwrap();
        assert_eq!(signals.len(), SIGNALS_MAX);
        assert_eq!(signals[0], "duplicate:x421");
        assert_eq!(signals[15], "more:84");
        assert_eq!(p["priority"], 70);
    }

    #[test]
    fn proposals_carry_only_what_their_tool_needs() {
        // now 2026-11-24 (Tuesday). Pool: a dining spend today at a new place (Bistro, MCC 5812)
        // and its category history (Trattoria ×5, MCC 5812, Nov 1-5, 1000 each). Bistro has one
        // spend, so the baseline is dining in EUR: 1000 ×5 and 5000, median 1000, MAD 0, MeanAD
        // 4000 / 6: z = 4000 / (1.253314 · 666.67) = 4.787 → 4.79 ≥ 3.5, 400 % above: flagged.
        // Unrelated history (Aldi, groceries; a refund) is left out of the anomaly call, except
        // the oldest transaction (Aldi, Oct 1), which dates the history.
        // Budget dining 1000 EUR-cents: over → budget_status with the November transactions only.
        let mut list: Vec<Value> = (1..=5)
            .map(|d| {
                let mut v = t(
                    &format!("r{d}"),
                    "Trattoria",
                    1000,
                    &format!("2026-11-0{d}T19:00:00Z"),
                );
                v["mcc"] = json!("5812");
                v
            })
            .collect();
        list.push(t("a0", "Aldi", 3000, "2026-10-01T09:00:00Z"));
        list.push(t("a1", "Aldi", 3000, "2026-10-20T09:00:00Z"));
        list.push(t("rf", "Shop", -500, "2026-11-10T09:00:00Z"));
        let mut bistro = t("b", "Bistro Uno", 5000, "2026-11-24T07:00:00Z");
        bistro["mcc"] = json!("5812");
        list.push(bistro);
        let context = json!({
            "now": "2026-11-24T08:00:00Z",
            "transactions": list,
            "profile": {"budgets": [{"category": "dining", "currency": "EUR", "limit_minor": 1000}]},
        });
        let list = proposals(context);
        assert_eq!(tools(&list), ["budget_status", "detect_anomalies"]);
        let ids = |p: &Value| -> Vec<String> {
            p["call"]["args"]["transactions"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t["id"].as_str().unwrap().to_owned())
                .collect()
        };
        // Budget: dining 5 · 1000 + 5000 = 10000 > 1000, over → 65; anomalies: unusually large,
        // z 4.79 < 10 → 60.
        assert_eq!(list[0]["signals"], json!(["over:dining/EUR"]));
        assert_eq!(ids(&list[0]), ["r1", "r2", "r3", "r4", "r5", "rf", "b"]);
        assert_eq!(list[1]["signals"], json!(["unusually_large:b"]));
        assert_eq!(list[1]["priority"], 60);
        assert_eq!(ids(&list[1]), ["r1", "r2", "r3", "r4", "r5", "a0", "b"]);
    }

    #[test]
    fn through_the_agent_wiring() {
        let context = json!({
            "now": "2026-11-24T08:00:00Z",
            "transactions": [t("k1", "Kiosk", 450, "2026-11-24T07:00:00Z"),
                             t("k2", "Kiosk", 450, "2026-11-24T07:03:00Z")],
        });
        let answer: Value =
            serde_json::from_str(&crate::Finance::tick(&context.to_string())).unwrap();
        assert_eq!(answer, tick(context).unwrap());
        let call = json!({"tool": "categorize_transactions", "args": {"transactions": [
            t("a", "Aldi", 100, "2026-11-24T07:00:00Z")]}});
        assert_eq!(
            crate::Finance::invoke(&call.to_string()),
            r#"{"ok":true,"result":{"groups":[{"category":"groceries","rule_id":"builtin/keyword/aldi","rule_kind":"merchant_keyword","transaction_ids":["a"]}],"transactions":1}}"#
        );
        let manifest: Value = serde_json::from_str(&crate::Finance::manifest()).unwrap();
        assert_eq!(
            manifest["tools"],
            json!([
                "categorize_transactions",
                "budget_status",
                "detect_anomalies",
                "upcoming_bills"
            ])
        );
    }

    #[test]
    fn bad_context_is_invalid_args() {
        // Every tick refuses a context without a usable `now` (see `aura_testkit`).
        let own = [json!({"now": "2026-11-23T08:00:00Z", "transactions": {}})];
        for context in aura_testkit::contexts_without_a_usable_now()
            .into_iter()
            .chain(own)
        {
            let e = tick(context).unwrap_err();
            assert_eq!(e.kind, ToolErrorKind::InvalidArgs);
        }
        // A bad offset or profile is ignored, not an error.
        assert!(
            proposals(
                json!({"now": "2026-11-24T08:00:00Z", "utc_offset_minutes": 9999,
                                 "profile": {"budgets": "x"}})
            )
            .is_empty()
        );
    }
}
