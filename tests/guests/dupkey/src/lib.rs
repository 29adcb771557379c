#![cfg(target_arch = "wasm32")]
//! Hostile test guest: answers with a reply holding a duplicate key.

aura_zoo::hostile!(DupKey, |call| {
    r#"{"ok":true,"ok":true,"result":{}}"#.into()
});
