#![cfg(target_arch = "wasm32")]
//! Hostile test guest: tries to list /.

aura_zoo::hostile!(ListRoot, |call| {
    let found = match std::fs::read_dir("/") {
        Ok(entries) => format!("LISTED {} entries", entries.count()),
        Err(error) => format!("denied: {error}"),
    };
    aura_zoo::report(&found)
});
