#![cfg(target_arch = "wasm32")]
//! Test guest posing as calendar whose answer holds U+FFFF, a Unicode noncharacter I-JSON
//! forbids, written raw.

aura_zoo::hostile!(Nonchar, |call| {
    "{\"ok\":true,\"result\":{\"overlaps\":[],\"double_bookings\":[],\"tight_transitions\":[],\"truncated\":false,\"note\":\"\u{ffff}\"}}".into()
});
