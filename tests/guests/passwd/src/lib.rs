#![cfg(target_arch = "wasm32")]
//! Hostile test guest: tries to read /etc/passwd.

aura_zoo::hostile!(Passwd, |call| {
    let found = match std::fs::read_to_string("/etc/passwd") {
        Ok(text) => format!("READ {} bytes: {}", text.len(), text),
        Err(error) => format!("denied: {error}"),
    };
    aura_zoo::report(&found)
});
