#![cfg(target_arch = "wasm32")]
//! Hostile test guest: recurses until the wasm stack overflows.
#![allow(unconditional_recursion, reason = "the point of this guest")]

fn deeper(n: u64) -> u64 {
    std::hint::black_box(deeper(std::hint::black_box(n + 1))) + 1
}

aura_zoo::hostile!(Recurse, |call| { deeper(0).to_string() });
