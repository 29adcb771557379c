#![cfg(target_arch = "wasm32")]
//! Hostile test guest: answers with a string that is not JSON.

aura_zoo::hostile!(NonJson, |call| { "this is not json".into() });
