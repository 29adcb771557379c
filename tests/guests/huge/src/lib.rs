#![cfg(target_arch = "wasm32")]
//! Hostile test guest: answers with a 100 MiB string.

aura_zoo::hostile!(Huge, |call| { "x".repeat(100 << 20) });
