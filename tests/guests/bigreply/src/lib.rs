#![cfg(target_arch = "wasm32")]
//! Test guest posing as calendar that answers with a 2 MiB reply: twice the crossing's bound,
//! well within its own memory limit.

aura_zoo::hostile!(BigReply, |call| {
    let padding = "x".repeat(2 * 1024 * 1024);
    format!(r#"{{"ok":true,"result":{{"padding":"{padding}"}}}}"#)
});
