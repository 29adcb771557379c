#![cfg(target_arch = "wasm32")]
//! Hostile test guest: panics.

aura_zoo::hostile!(Panic, |call| { panic!("the guest panics") });
