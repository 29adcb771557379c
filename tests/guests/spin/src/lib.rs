#![cfg(target_arch = "wasm32")]
//! Hostile test guest: loops forever.

aura_zoo::hostile!(Spin, |call| {
    let mut n: u64 = 0;
    loop {
        n = std::hint::black_box(n.wrapping_add(1));
    }
});
