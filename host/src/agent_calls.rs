//! How agents call agents: the host's answer to a guest's `host.call` and `host.emit`.
//!
//! It owns the host's side of the `aura:agent/host` imports. A nested call goes through the
//! same crossing as any call, then the chain check (a target already in the chain is a cycle;
//! a sixth agent is too deep), and runs with at most the fuel its caller has left and no later
//! deadline; what it burns is charged to the caller by the sandbox. Every refusal is
//! quarantined and answered to the guest as a result.v1, never a trap. Emitted events are
//! logged, or dropped with a warning when they are not a small JSON object with a string
//! `kind`. It must not let a guest reach anything but the crossing.

use crate::canonical::parse_canonical;
use crate::crossing::check_chain;
use crate::envelope::{self, ResultEnvelope};
use crate::error::CrossingError;
use crate::host::Shared;
use crate::limits::EMIT_BYTES_MAX;
use crate::sandbox::{Budget, Caller, Frame, HostCall, HostCallAnswer, HostImports, ImportFuture};

impl HostImports for Shared {
    fn call<'a>(&'a self, call: HostCall<'a>) -> ImportFuture<'a> {
        Box::pin(async move {
            let refused = |error: CrossingError, text: &str| {
                let refused = self.refuse_unread(error, text);
                HostCallAnswer {
                    result: envelope::refusal_for_host_call(text, &refused.error),
                    fuel_used: 0,
                }
            };
            let checked = match self.crossing.check_call(&call.envelope) {
                Ok(checked) => checked,
                Err(error) => return refused(error, &call.envelope),
            };
            if let Err(error) = check_chain(&call.caller.chain, &checked.call().agent) {
                return refused(error, &call.envelope);
            }
            let frame = callee_frame(
                call.caller,
                checked.deadline_ms(),
                call.fuel_left,
                self.fuel_per_ms,
                envelope::unix_ns(&checked.call().ts),
            );
            // `self` is the host behind the sandbox's `Arc<dyn HostImports>`; the callee
            // needs an `Arc` of its own to hand on to its own imports. The caller's call holds
            // one, so the upgrade succeeds while any call is in flight.
            let Some(shared) = self.this.upgrade() else {
                let error = CrossingError::AgentCallUnsupported {
                    caller: call.caller.agent.to_owned(),
                    reason: "the host is shutting down".into(),
                };
                return refused(error, &call.envelope);
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
            Err(error) => tracing::warn!(agent = caller.agent, %error, "agent event dropped"),
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

    #[tokio::test]
    async fn a_nested_call_the_crossing_refuses_is_answered_and_quarantined() {
        let (shared, data) = crate::host::tests::shared("a2a-refused");
        let caller = wellness_calling(700);
        let answer = shared
            .call(HostCall {
                caller: &caller,
                envelope: r#"{"call_id":"t_0123456789","agent":"mallory","tool":"steal"}"#.into(),
                fuel_left: 1_000_000,
            })
            .await;
        assert_eq!(answer.fuel_used, 0);
        let result: serde_json::Value = serde_json::from_str(&answer.result).unwrap();
        assert_eq!(result["ok"], false);
        assert_eq!(result["call_id"], "t_0123456789");
        assert_eq!(result["error"]["kind"], "schema_error");
        assert_eq!(result["error"]["phase"], "envelope");
        assert_eq!(crate::host::tests::quarantine_count(&data), 1);
    }

    #[tokio::test]
    async fn a_nested_call_back_into_the_chain_is_a_cycle_before_anything_runs() {
        let (shared, data) = crate::host::tests::shared("a2a-cycle");
        let caller = wellness_calling(700);
        let envelope = serde_json::json!({"call_id": "t_0123456789", "agent": "calendar",
            "tool": "detect_conflicts", "args": {"events": []},
            "ts": "2026-11-23T08:00:00Z", "confirm_required": false});
        let answer = shared
            .call(HostCall {
                caller: &caller,
                envelope: envelope.to_string(),
                fuel_left: 1_000_000,
            })
            .await;
        let result: serde_json::Value = serde_json::from_str(&answer.result).unwrap();
        assert_eq!(result["error"]["kind"], "cycle_detected");
        assert_eq!(
            result["error"]["message"],
            "agent `wellness` called `calendar`, already in the call chain calendar → wellness"
        );
        assert_eq!(crate::host::tests::quarantine_count(&data), 1);
    }
}
