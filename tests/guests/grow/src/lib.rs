#![cfg(target_arch = "wasm32")]
//! Hostile test guest: grows its memory without bound.

aura_zoo::hostile!(Grow, |call| {
    let mut hoard: Vec<Vec<u8>> = Vec::new();
    loop {
        hoard.push(vec![1u8; 1 << 20]);
        std::hint::black_box(&hoard);
    }
});
