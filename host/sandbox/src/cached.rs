//! Compiled code through the compilation cache, for any engine of the sandbox (the agents' or
//! the narrator's): the cache key of a component for an engine, and its code looked up there or
//! compiled and stored. It must not decide whether a host keeps a cache (the host does) nor
//! trust an entry wasmtime refuses (it is removed and the component compiled again).

use aura_contract::caused::Caused;
use std::hash::{Hash, Hasher};

use wasmtime::Engine;
use wasmtime::component::Component;

use super::{CodeTarget, SandboxError, WASMTIME_VERSION, map_precompiled};
use aura_plugins::code_cache::CodeCache;

/// The compilation cache's key for a component whose digest is `sha256` compiled by `engine`
/// for `target`: the digest, wasmtime's version, the target, and wasmtime's hash of every engine
/// setting compiled code depends on. Any of them changed, another key.
pub(super) fn code_key(engine: &Engine, target: &CodeTarget, sha256: &str) -> String {
    // SipHash with fixed keys: the same settings give the same number in every process of this
    // build (a toolchain that hashed differently would only miss the cache once).
    let mut settings = std::hash::DefaultHasher::new();
    engine.precompile_compatibility_hash().hash(&mut settings);
    aura_contract::digest::sha256_hex(
        format!(
            "aura-code-cache.v1\n{sha256}\n{WASMTIME_VERSION}\n{}\n{:016x}",
            target.name(),
            settings.finish()
        )
        .as_bytes(),
    )
}

/// Compiles `bytes` with `engine`.
pub(super) fn compile(
    engine: &Engine,
    name: &str,
    bytes: &[u8],
) -> Result<Component, SandboxError> {
    Component::from_binary(engine, bytes).map_err(|e| SandboxError::Compile {
        agent: name.to_owned(),
        message: format!("{e:#}"),
    })
}

/// The code of the component `name` for `engine`: the cache's entry at `key` when there is one
/// that passes its checks (the cache's digest, then wasmtime's own header check), else
/// `wasm()` compiled and its code stored for the next start. The cache failing costs time,
/// never the component: it is logged.
pub(super) fn component<E: From<SandboxError>>(
    engine: &Engine,
    key: &str,
    name: &str,
    cache: &CodeCache,
    wasm: impl FnOnce() -> Result<Vec<u8>, E>,
) -> Result<Component, E> {
    let cached = |cache: &CodeCache| {
        let entry = cache.lookup(key)?;
        match map_precompiled(engine, name, &entry) {
            Ok(component) => {
                tracing::debug!(agent = name, entry = %entry.path().display(), "code.cached");
                Some(component)
            }
            Err(error) => {
                tracing::warn!(agent = name, error = %Caused(&error), "compilation cache entry refused and removed");
                cache.discard(&entry);
                None
            }
        }
    };
    if let Some(component) = cached(cache) {
        return Ok(component);
    }
    let _compiling = cache.compiling(key);
    // Another host of this process may have stored it while this one waited.
    if let Some(component) = cached(cache) {
        return Ok(component);
    }
    let component = compile(engine, name, &wasm()?)?;
    match component.serialize() {
        Ok(code) => {
            if let Err(error) = cache.store(key, &code) {
                tracing::warn!(agent = name, error = %Caused(&error), "compiled code not cached");
            }
        }
        Err(error) => {
            tracing::warn!(agent = name, error = %format!("{error:#}"), "compiled code not cached")
        }
    }
    Ok(component)
}
