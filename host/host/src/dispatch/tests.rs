//! Tests of the dispatch module.

use aura_contract::limits::{BUSY_RETRY_AFTER_MS, CALLS_IN_FLIGHT_MAX};
use aura_contract::recovery::Action;

use crate::host::Host;
use crate::shared::tests::{quarantine_count, shared};

#[tokio::test]
async fn past_the_in_flight_bound_a_call_is_refused_busy_at_once_and_quarantined() {
    let (shared, data) = shared("busy");
    // Every place taken by calls still running.
    let held = shared
        .in_flight
        .try_acquire_many(CALLS_IN_FLIGHT_MAX as u32)
        .unwrap();
    let host = Host {
        shared: shared.clone(),
    };
    let call = aura_contract::ToolCall::new(
        "wellness",
        "stress_score",
        serde_json::json!({"readings": {"hrv_ms": 42},
            "baselines": {"hrv_ms": 60, "resting_hr_bpm": 58, "sleep_minutes": 450}}),
        None,
    );
    let refused = host.dispatch(&call).await.unwrap_err();
    assert_eq!(refused.error.kind(), "busy");
    assert_eq!(refused.call_id.as_deref(), Some(call.call_id.as_str()));
    assert_eq!(refused.recovery.action, Action::Retry);
    assert_eq!(refused.recovery.retry_after_ms, Some(BUSY_RETRY_AFTER_MS));
    assert_eq!(quarantine_count(&data), 1);
    // A place freed: the next call gets past the gate (and, with no agent loaded, is
    // refused for that instead).
    drop(held);
    let refused = host.dispatch(&call).await.unwrap_err();
    assert_eq!(refused.error.kind(), "agent_unavailable");
    assert_eq!(quarantine_count(&data), 2);
}
