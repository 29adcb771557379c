//! Tells the sandbox what it is built for and with, so precompiled plugins can be matched to it:
//! `AURA_BUILD_TARGET` (the target triple) and `AURA_WASMTIME_VERSION` (from Cargo.lock, the
//! version whose code format a .cwasm must have).

use std::path::PathBuf;

fn main() {
    let target = std::env::var("TARGET").expect("set by cargo");
    println!("cargo:rustc-env=AURA_BUILD_TARGET={target}");
    let crate_dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let lock = crate_dir.join("../../Cargo.lock");
    println!("cargo:rerun-if-changed={}", lock.display());
    let text = std::fs::read_to_string(&lock)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", lock.display()));
    let version = wasmtime_version(&text).expect("Cargo.lock has a wasmtime package");
    println!("cargo:rustc-env=AURA_WASMTIME_VERSION={version}");
}

/// The version of the `wasmtime` package in a Cargo.lock's text.
fn wasmtime_version(lock: &str) -> Option<&str> {
    let mut lines = lock.lines();
    while let Some(line) = lines.next() {
        if line.trim() == "name = \"wasmtime\"" {
            let version = lines.next()?.trim().strip_prefix("version = \"")?;
            return version.strip_suffix('"');
        }
    }
    None
}
