#![cfg(target_arch = "wasm32")]
//! Test guest posing as calendar that exits with status 7 instead of answering.

aura_zoo::hostile!(Exiter, |call| {
    std::process::exit(7);
});
