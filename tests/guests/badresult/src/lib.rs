#![cfg(target_arch = "wasm32")]
//! Hostile test guest: answers with a result that violates the result schema.

aura_zoo::hostile!(BadResult, |call| {
    r#"{"ok":true,"result":{"double_bookings":[],"overlaps":"none","tight_transitions":[],"truncated":false}}"#.into()
});
