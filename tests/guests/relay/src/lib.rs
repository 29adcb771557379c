#![cfg(target_arch = "wasm32")]
//! Agent-to-agent test guest posing as calendar: whatever it is asked, it calls
//! wellness.suggest_break (valid args; a call calendar's catalogue entry allows) and reports how
//! wellness answered.

aura_zoo::hostile!(Relay, |call| {
    aura_zoo::call_and_report(
        "t_relay00001",
        "wellness",
        "suggest_break",
        aura_zoo::aura_sdk::serde_json::json!({
            "stress": {"score": 85}, "working_hours": {"start": "09:00", "end": "17:00"},
            "now": "2026-11-23T08:00:00Z", "utc_offset_minutes": 0
        }),
    )
});
