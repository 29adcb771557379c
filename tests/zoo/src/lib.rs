//! The hostile zoo's one piece of shared code: [`hostile!`] declares a guest that poses as the
//! calendar agent (its manifest claims exactly calendar's tools, so the host admits it), or as
//! wellness with `hostile!(as wellness, ..)`, and
//! misbehaves in `invoke` (and, given a `tick:` body, in `tick`). Each guest of
//! `tests/guests/` is one behaviour in its own component, built for tests only and never
//! written to `plugins/`.
//!
//! This crate must hold no behaviour itself: each guest's body says what it does.

pub use aura_sdk;

/// The manifest of a zoo guest posing as catalogue agent `agent` (calendar by default,
/// wellness for agent-to-agent and tick tests): the agent's name and exactly its tools as the
/// schemas name them, so the host admits it.
pub fn manifest_as(agent: &str) -> String {
    let tools = aura_sdk::contract::TOOLS
        .iter()
        .find(|(name, _)| *name == agent)
        .map_or(&[][..], |(_, tools)| *tools);
    aura_sdk::manifest_json(agent, "0.0.0-zoo", tools)
}

/// Calls `agent`.`tool` with `args` through the host import and answers with a tool error
/// that says how the callee answered: `callee <agent> answered ok`, or `... answered <kind>:
/// <message>`. A reply.v1 the host accepts from any tool, so a chain of guests reports back
/// to the test.
pub fn call_and_report(
    call_id: &str,
    agent: &str,
    tool: &str,
    args: aura_sdk::serde_json::Value,
) -> String {
    let envelope = aura_sdk::serde_json::json!({
        "call_id": call_id, "agent": agent, "tool": tool, "args": args,
        "ts": "2026-11-23T08:00:00Z", "confirm_required": false, "deadline_ms": 10000
    });
    let answer = aura_sdk::bindings::aura::agent::host::call(&envelope.to_string());
    let answer: aura_sdk::serde_json::Value =
        aura_sdk::serde_json::from_str(&answer).unwrap_or_default();
    let how = match answer["ok"].as_bool() {
        Some(true) => "ok".to_string(),
        _ => format!(
            "{}: {}",
            answer["error"]["kind"].as_str().unwrap_or("?"),
            answer["error"]["message"].as_str().unwrap_or("?")
        ),
    };
    let mut message = format!("callee {agent} answered {how}");
    message.truncate(480);
    aura_sdk::serde_json::json!({ "ok": false, "error": { "kind": "failed", "message": message } })
        .to_string()
}

/// Wraps what a guest found into a reply whose result no calendar schema accepts, so the host
/// quarantines it and the test can read what the guest saw in the quarantine record.
pub fn report(findings: &str) -> String {
    let reply = aura_sdk::serde_json::json!({ "ok": true, "result": { "findings": findings } });
    reply.to_string()
}

/// Declares the guest `$name` whose `invoke(call)` runs `$body` (a block returning `String`),
/// and whose `tick(context)` proposes nothing, or runs the `tick:` block given.
#[macro_export]
macro_rules! hostile {
    ($name:ident, |$call:ident| $body:block) => {
        $crate::hostile!(@with $crate::manifest_as("calendar"), $name, |$call| $body,
            tick: |_context| { r#"{"proposals":[]}"#.into() });
    };
    ($name:ident, |$call:ident| $body:block, tick: |$context:ident| $tick:block) => {
        $crate::hostile!(@with $crate::manifest_as("calendar"), $name, |$call| $body,
            tick: |$context| $tick);
    };
    (as wellness, $name:ident, |$call:ident| $body:block) => {
        $crate::hostile!(@with $crate::manifest_as("wellness"), $name, |$call| $body,
            tick: |_context| { r#"{"proposals":[]}"#.into() });
    };
    (as wellness, $name:ident, |$call:ident| $body:block, tick: |$context:ident| $tick:block) => {
        $crate::hostile!(@with $crate::manifest_as("wellness"), $name, |$call| $body,
            tick: |$context| $tick);
    };
    (@with $manifest:expr, $name:ident, |$call:ident| $body:block,
        tick: |$context:ident| $tick:block) => {
        struct $name;

        impl $crate::aura_sdk::bindings::Guest for $name {
            fn manifest() -> String {
                $manifest
            }

            #[allow(unused_variables, unreachable_code)]
            fn invoke($call: String) -> String $body

            #[allow(unused_variables, unreachable_code)]
            fn tick($context: String) -> String $tick
        }

        $crate::aura_sdk::bindings::__export_agent_world!(
            $name with_types_in $crate::aura_sdk::bindings
        );
    };
}
