#![cfg(target_arch = "wasm32")]
//! Agent-to-agent test guest posing as wellness: calls calendar.find_free_slots back (a call
//! wellness's catalogue entry allows) and reports how calendar answered. Called by calendar,
//! that is the cycle calendar → wellness → calendar.

aura_zoo::hostile!(as wellness, Boomerang, |call| {
    aura_zoo::call_and_report(
        "t_boomerang1",
        "calendar",
        "find_free_slots",
        aura_zoo::aura_sdk::serde_json::json!({
            "working_hours": {"start": "09:00", "end": "17:00"}, "utc_offset_minutes": 0,
            "duration_minutes": 30, "from": "2026-11-23T08:00:00Z", "horizon_days": 1
        }),
    )
});
