#![cfg(target_arch = "wasm32")]
//! Agent-to-agent test guest posing as wellness: spins until its fuel runs out, so its caller
//! is charged everything the callee was allowed.

aura_zoo::hostile!(as wellness, Spinner, |call| {
    let mut x: u64 = 0;
    loop {
        x = std::hint::black_box(x.wrapping_add(1));
    }
});
