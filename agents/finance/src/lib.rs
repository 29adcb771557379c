//! aura's finance agent: categorization, budgets, anomalies, recurring bills.
//!
//! Tools (each a plain `fn(Args) -> aura_sdk::ToolResult<Result>`; schemas in
//! `schemas/finance/<tool>.{args,result}.json`):
//! - [`categorize::categorize_transactions`]: each transaction's category and the rule (caller's
//!   or built-in MCC range / merchant keyword / fallback) that assigned it.
//! - [`budget::budget_status`]: spent, remaining and projected month-end spend per monthly
//!   budget; over and at-risk flags.
//! - [`anomalies::detect_anomalies`]: unusually large spends (modified z-score), duplicate
//!   charges, large first-time merchants.
//! - [`bills::upcoming_bills`]: recurring payments (weekly, monthly, yearly) with their next
//!   date and amount.
//!
//! Money is integer minor units plus an ISO 4217 code, positive = spent, negative = refund or
//! credit; amounts in different currencies are never added (see [`common`]). Nothing is stored
//! and nothing is paid: every tool only reports, so none needs confirmation.
//!
//! The tick, [`tick::tick`], proposes those tools when the context's transactions show a
//! duplicate or unusually large new spend, a budget over or at risk, or a bill due soon.
//! Everything is deterministic: no clock, no randomness; "now" and "today" come from the args or
//! the tick context.

pub mod anomalies;
pub mod bills;
pub mod budget;
pub mod categorize;
pub mod common;
pub mod rules;
pub mod tick;

aura_sdk::agent! {
    Finance {
        name: "finance",
        tools: {
            "categorize_transactions" => categorize::categorize_transactions,
            "budget_status" => budget::budget_status,
            "detect_anomalies" => anomalies::detect_anomalies,
            "upcoming_bills" => bills::upcoming_bills,
        },
        tick: tick::tick,
        tick_reads: ["now", "utc_offset_minutes", "profile", "transactions"],
    }
}

/// This agent's schemas, checked in the unit tests with the validator the host uses (see
/// `aura-testkit`).
#[cfg(test)]
const SCHEMAS: aura_testkit::AgentSchemas = aura_testkit::AgentSchemas::new(Finance::NAME);

/// Runs `tool` as the host would, for the unit tests: `args` checked against its args schema,
/// deserialized and run, and the result checked against its result schema. Returns the result.
#[cfg(test)]
fn run_checked<A, R>(
    tool: &str,
    args: serde_json::Value,
    run: fn(A) -> aura_sdk::ToolResult<R>,
) -> serde_json::Value
where
    A: serde::de::DeserializeOwned,
    R: serde::Serialize,
{
    aura_testkit::assert_valid(&SCHEMAS.load(&format!("{tool}.args.json")), &args);
    let args: A = serde_json::from_value(args).unwrap();
    let result = serde_json::to_value(run(args).unwrap()).unwrap();
    aura_testkit::assert_valid(&SCHEMAS.load(&format!("{tool}.result.json")), &result);
    result
}
