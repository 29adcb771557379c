#![cfg(target_arch = "wasm32")]
//! Hostile test guest: floods the host with malformed host calls.

aura_zoo::hostile!(Flood, |call| {
    for i in 0..1_000_000u32 {
        let _ = aura_zoo::aura_sdk::bindings::aura::agent::host::call(&format!("{{not json {i}"));
    }
    aura_zoo::report("the flood went through")
});
