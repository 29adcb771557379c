#![cfg(target_arch = "wasm32")]
//! Hostile test guest: busy-waits on the WASI clock.

aura_zoo::hostile!(ClockSpin, |call| {
    let start = std::time::Instant::now();
    loop {
        if start.elapsed() > std::time::Duration::from_secs(3600) {
            return aura_zoo::report("an hour passed");
        }
    }
});
