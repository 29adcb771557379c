//! How agents call agents: the host's answer to a guest's `host.call` and `host.emit`.
//!
//! It owns the host's side of the `aura:agent/host` imports. A nested call gets a call_id of
//! its own from the host, goes through the same crossing as any call, then least privilege
//! (the caller's catalogue entry must list the tool, and no tool that needs the user's yes is
//! reachable this way), then the chain check (a target already in the chain is a cycle; a
//! sixth agent is too deep), and runs with at most the fuel its caller has left and no later
//! deadline; what it burns is charged to the caller by the sandbox. Every refusal is
//! quarantined and answered to the guest as a result.v1, never a trap. Emitted events are
//! logged, or dropped with a warning when they are not a small JSON object with a string
//! `kind`. It must not let a guest reach anything but the crossing.

use aura_contract::canonical::parse_canonical;
use aura_contract::crossing::{check_chain, check_may_call};
use aura_contract::envelope::{self, ResultEnvelope, nested_call_id};
use aura_contract::error::CrossingError;
use aura_contract::limits::EMIT_BYTES_MAX;
use aura_contract::quarantine::CallIds;
use aura_contract::visible::visible;
use aura_sandbox::{Budget, Caller, Frame, HostCall, HostCallAnswer, HostImports, ImportFuture};

use crate::shared::Shared;

impl HostImports for Shared {
    fn call<'a>(&'a self, call: HostCall<'a>) -> ImportFuture<'a> {
        Box::pin(async move {
            let caller = call.caller;
            // The nested call's own id, whatever the guest wrote: derived from its caller.
            let call_id = nested_call_id(caller.call_id.as_deref(), caller.agent, call.index);
            let refused = |error: CrossingError| {
                let (_, agent, tool) = envelope::read_ids(&call.envelope);
                let ids = CallIds {
                    call_id: Some(&call_id),
                    agent: agent.as_deref(),
                    tool: tool.as_deref(),
                    callers: &caller.chain,
                };
                let refused = self.refuse(error, ids, &call.envelope);
                HostCallAnswer {
                    result: envelope::refusal_for_host_call(
                        &call.envelope,
                        Some(&call_id),
                        &refused.error,
                    ),
                    fuel_used: 0,
                }
            };
            // The crossing, then least privilege, then the chain: all before the callee runs.
            let checked = match self.crossing.check_nested_call(&call.envelope, &call_id) {
                Ok(checked) => checked,
                Err(error) => return refused(error),
            };
            if let Err(error) = check_may_call(caller.agent, &checked)
                .and_then(|()| check_chain(&caller.chain, &checked.call().agent))
            {
                return refused(error);
            }
            let frame = callee_frame(
                caller,
                checked.deadline_ms(),
                call.fuel_left,
                self.fuel_per_ms,
                envelope::unix_ns(&checked.call().ts),
            );
            // `self` is the host behind the sandbox's `Arc<dyn HostImports>`; the callee
            // needs an `Arc` of its own to hand on to its own imports. The caller's call holds
            // one, so the upgrade succeeds while any call is in flight.
            let Some(shared) = self.this.upgrade() else {
                return refused(CrossingError::AgentCallUnsupported {
                    caller: caller.agent.to_owned(),
                    reason: "the host is shutting down".into(),
                });
            };
            match shared.run_checked(&checked, frame).await {
                Ok(result) => HostCallAnswer {
                    fuel_used: result.fuel_used,
                    result: result.to_canonical(),
                },
                Err(refusal) => HostCallAnswer {
                    fuel_used: refusal.fuel_used,
                    result: ResultEnvelope::refused(checked.call(), &refusal.error).to_canonical(),
                },
            }
        })
    }

    fn emit(&self, caller: &Caller, event: String) {
        match parse_canonical(&event, EMIT_BYTES_MAX) {
            Ok(canonical) if canonical.value.get("kind").is_some_and(|k| k.is_string()) => {
                tracing::info!(
                    target: "aura::agent_event",
                    agent = caller.agent,
                    call_id = caller.call_id.as_deref(),
                    event = %canonical.text,
                );
            }
            Ok(_) => tracing::warn!(
                agent = caller.agent,
                "agent event dropped: no string `kind`"
            ),
            Err(error) => tracing::warn!(
                agent = caller.agent,
                error = %visible(&error.to_string()),
                "agent event dropped"
            ),
        }
    }
}

/// Where a callee runs: below its caller in the chain, with the earlier of the two deadlines
/// and no more fuel than that deadline buys or the caller has left; its guest's clock starts
/// at the nested envelope's `ts`.
fn callee_frame(
    caller: &Caller,
    callee_deadline_ms: u64,
    caller_fuel_left: u64,
    fuel_per_ms: u64,
    clock_start_unix_ns: u64,
) -> Frame {
    let deadline_ms = callee_deadline_ms.min(caller.deadline_ms);
    Frame {
        budget: Budget {
            fuel: Budget::for_deadline(deadline_ms, fuel_per_ms)
                .fuel
                .min(caller_fuel_left),
            deadline_ms,
        },
        chain_above: caller.chain.clone(),
        clock_start_unix_ns,
        interrupt_at_start: false,
        trace: caller.trace,
        // An agent's call to another never carries a user's yes (the crossing refuses an
        // agent's call to a confirm_required tool).
        confirmation: None,
        guest_seed: caller.guest_seed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wellness_calling(deadline_ms: u64) -> Caller {
        Caller {
            agent: "wellness",
            call_id: Some("t_0123456789".into()),
            chain: vec!["calendar", "wellness"],
            deadline_ms,
            trace: None,
            guest_seed: None,
        }
    }

    #[test]
    fn a_callee_gets_the_earlier_deadline_and_the_smaller_fuel() {
        // The caller has 700 ms and 2,000,000 fuel left; the callee asks 1000 ms. At 100,000
        // fuel/ms, 700 ms buy 70,000,000 fuel, more than is left: the callee gets 2,000,000.
        let frame = callee_frame(&wellness_calling(700), 1000, 2_000_000, 100_000, 42);
        assert_eq!(frame.budget.deadline_ms, 700);
        assert_eq!(frame.budget.fuel, 2_000_000);
        assert_eq!(frame.chain_above, ["calendar", "wellness"]);
        assert_eq!(frame.clock_start_unix_ns, 42);
        // A callee asking 50 ms of a caller with plenty left: 50 × 100,000 = 5,000,000.
        let frame = callee_frame(&wellness_calling(700), 50, 60_000_000, 100_000, 0);
        assert_eq!(
            frame.budget,
            Budget {
                fuel: 5_000_000,
                deadline_ms: 50
            }
        );
    }

    /// A host call of `envelope` by wellness (under calendar), its `index`th.
    async fn wellness_calls(
        name: &str,
        envelope: serde_json::Value,
    ) -> (serde_json::Value, Vec<serde_json::Value>) {
        let (shared, data) = crate::shared::tests::shared(name);
        let caller = wellness_calling(700);
        let answer = shared
            .call(HostCall {
                caller: &caller,
                envelope: envelope.to_string(),
                index: 3,
                fuel_left: 1_000_000,
            })
            .await;
        assert_eq!(answer.fuel_used, 0, "nothing ran");
        let result = serde_json::from_str(&answer.result).unwrap();
        let quarantine = std::fs::read_to_string(data.join(crate::journal::QUARANTINE_PATH))
            .unwrap_or_default()
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect();
        (result, quarantine)
    }

    fn envelope(tool: &str, args: serde_json::Value) -> serde_json::Value {
        serde_json::json!({"call_id": "t_0123456789", "agent": "calendar", "tool": tool,
            "args": args, "ts": "2026-11-23T08:00:00Z", "confirm_required": false})
    }

    #[tokio::test]
    async fn a_nested_call_the_crossing_refuses_is_answered_and_quarantined_under_its_own_id() {
        let mallory = serde_json::json!({"call_id": "t_0123456789", "agent": "mallory",
            "tool": "steal"});
        let (result, quarantine) = wellness_calls("a2a-refused", mallory).await;
        // Not the caller's id, which the guest reused: the one the host gives the call.
        let own = nested_call_id(Some("t_0123456789"), "wellness", 3);
        assert_ne!(own, "t_0123456789");
        assert_eq!(result["ok"], false);
        assert_eq!(result["call_id"], own.as_str());
        assert_eq!(result["error"]["kind"], "schema_error");
        assert_eq!(result["error"]["phase"], "envelope");
        assert_eq!(quarantine.len(), 1);
        assert_eq!(quarantine[0]["call_id"], own.as_str());
    }

    #[test]
    fn nested_ids_are_the_hosts_and_differ_by_caller_and_place() {
        let first = nested_call_id(Some("t_0123456789"), "wellness", 1);
        assert_eq!(first.len(), 12);
        assert!(first.starts_with("t_"));
        assert_eq!(first, nested_call_id(Some("t_0123456789"), "wellness", 1));
        assert_ne!(first, nested_call_id(Some("t_0123456789"), "wellness", 2));
        assert_ne!(first, nested_call_id(Some("t_0123456780"), "wellness", 1));
        assert_ne!(first, nested_call_id(None, "wellness", 1));
    }

    #[tokio::test]
    async fn a_nested_call_outside_the_callers_entry_is_not_allowed_before_anything_runs() {
        let (result, quarantine) = wellness_calls(
            "a2a-not-listed",
            envelope("detect_conflicts", serde_json::json!({"events": []})),
        )
        .await;
        assert_eq!(result["error"]["kind"], "call_not_allowed");
        assert_eq!(
            result["error"]["message"],
            "agent `wellness` may not call `calendar.detect_conflicts`: its catalogue entry does \
             not list it among the calls it may make"
        );
        assert_eq!(quarantine[0]["kind"], "call_not_allowed");
        // A tool that needs the user's yes, whatever the nested envelope says of it.
        let schedule = envelope(
            "schedule_event",
            serde_json::json!({"event": {"title": "t", "start": "2026-11-23T10:00:00Z",
                "end": "2026-11-23T11:00:00Z"}}),
        );
        let (result, _) = wellness_calls("a2a-needs-yes", schedule).await;
        assert_eq!(result["error"]["kind"], "call_not_allowed");
    }

    #[tokio::test]
    async fn a_nested_call_back_into_the_chain_is_a_cycle_before_anything_runs() {
        // wellness may ask calendar for free slots, but calendar is already in the chain.
        let slots = envelope(
            "find_free_slots",
            serde_json::json!({"working_hours": {"start": "09:00", "end": "17:00"},
                "utc_offset_minutes": 0, "duration_minutes": 30,
                "from": "2026-11-23T08:00:00Z", "horizon_days": 1}),
        );
        let (result, quarantine) = wellness_calls("a2a-cycle", slots).await;
        assert_eq!(result["error"]["kind"], "cycle_detected");
        assert_eq!(
            result["error"]["message"],
            "agent `wellness` called `calendar`, already in the call chain calendar → wellness"
        );
        assert_eq!(quarantine.len(), 1);
    }
}
