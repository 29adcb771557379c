#![cfg(target_arch = "wasm32")]
//! Agent-to-agent test guest posing as comms: calls calendar.detect_conflicts back and reports
//! how calendar answered. Called by calendar, that is the cycle calendar → comms → calendar.

aura_zoo::hostile!(as comms, Boomerang, |call| {
    aura_zoo::call_and_report(
        "t_boomerang1",
        "calendar",
        "detect_conflicts",
        aura_zoo::aura_sdk::serde_json::json!({"events": []}),
    )
});
