#![cfg(target_arch = "wasm32")]
//! Hostile test guest: sleeps in a WASI poll, where fuel cannot see it.

aura_zoo::hostile!(Sleeper, |call| {
    std::thread::sleep(std::time::Duration::from_secs(60));
    aura_zoo::report("woke up")
});
