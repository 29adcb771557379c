#![cfg(target_arch = "wasm32")]
//! Hostile test guest: reads environment variables and arguments.

aura_zoo::hostile!(Environ, |call| {
    let vars: Vec<String> = std::env::vars().map(|(k, v)| format!("{k}={v}")).collect();
    let args: Vec<String> = std::env::args().collect();
    aura_zoo::report(&format!(
        "vars={} args={} {vars:?} {args:?}",
        vars.len(),
        args.len()
    ))
});
