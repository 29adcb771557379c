//! Builds the agent components, so a fresh checkout's `cargo build`, `cargo run` and
//! `cargo test` have them without `just`.
//!
//! Every agent the catalogue names (`src/agent_crates.rs`) is built for `wasm32-wasip2` with the `plugin`
//! profile by a nested cargo with its own target dir (`target/plugins`; the pattern of
//! wasmtime's `crates/test-programs/artifacts/build.rs`). The components are copied to
//! `plugins/<agent>.wasm` and `plugins/manifest.json` records each one's sha256, which the host
//! checks before it loads a component.
//!
//! The hostile test guests under `tests/guests/` are built by the same nested cargo, but stay in
//! `target/plugins`: they are never written to `plugins/`. Their directory is passed to the
//! host's tests as `AURA_TEST_GUESTS_DIR`.
//!
//! Set `AURA_SKIP_PLUGIN_BUILD=1` to build the host alone (cross builds of the host, or tests
//! run on the components and guests as they were last built); change
//! `AURA_PLUGINS_REBUILD` to force the nested build to run (`just build-plugins` does).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, SystemTime};

use sha2::{Digest, Sha256};

include!("src/agent_crates.rs");
include!("src/plugin_target.rs");
/// The cargo profile agents are built with (defined in the workspace Cargo.toml).
const PLUGIN_PROFILE: &str = "plugin";
/// The profile of the test-only guests: no LTO, so a dozen small components link quickly.
const GUEST_PROFILE: &str = "guest";
/// Written plugin files get an mtime this far before the build started, so cargo does not take
/// the build script's own outputs for changes and rerun it on every build.
const OUTPUT_MTIME_BACKDATE: Duration = Duration::from_secs(10);

fn main() {
    let started = SystemTime::now();
    println!("cargo:rerun-if-env-changed=AURA_SKIP_PLUGIN_BUILD");
    println!("cargo:rerun-if-env-changed=AURA_PLUGINS_REBUILD");
    emit_build_identity();
    let host_dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let workspace = host_dir
        .parent()
        .expect("host/ is inside the workspace")
        .to_owned();
    let target_dir = workspace.join("target").join("plugins");
    // Where the guests are (or, when the build is skipped, were last) built.
    println!(
        "cargo:rustc-env=AURA_TEST_GUESTS_DIR={}",
        target_dir.join(PLUGIN_TARGET).join(GUEST_PROFILE).display()
    );
    if std::env::var_os("AURA_SKIP_PLUGIN_BUILD").is_some_and(|v| !v.is_empty() && v != "0") {
        return;
    }
    for watched in [
        "agents",
        "tests/guests",
        "wit",
        "Cargo.toml",
        "Cargo.lock",
        "rust-toolchain.toml",
    ] {
        println!(
            "cargo:rerun-if-changed={}",
            workspace.join(watched).display()
        );
    }
    let plugins_dir = workspace.join("plugins");
    // A deleted manifest (or plugins dir) rebuilds; the components themselves are not watched:
    // a tampered component must be refused by the host, not silently rebuilt.
    println!(
        "cargo:rerun-if-changed={}",
        plugins_dir.join("manifest.json").display()
    );

    let agents: Vec<(String, String)> = AGENT_CRATES
        .iter()
        .map(|name| (name.to_string(), format!("{name}-agent")))
        .collect();
    let guests = crates_under(&workspace.join("tests").join("guests"), "guest");
    if let Err(message) = require_plugin_target() {
        // Stops the build here, with the command that fixes it, instead of a nested cargo's
        // error about a missing `std` deep in the first agent's dependencies.
        println!("cargo::error={message}");
        return;
    }
    nested_build(&workspace, &target_dir, PLUGIN_PROFILE, &agents);
    nested_build(&workspace, &target_dir, GUEST_PROFILE, &guests);
    let built_dir = target_dir.join(PLUGIN_TARGET).join(PLUGIN_PROFILE);

    std::fs::create_dir_all(&plugins_dir).expect("cannot create plugins/");
    let backdated = started - OUTPUT_MTIME_BACKDATE;
    let mut components = BTreeMap::new();
    for (agent, package) in &agents {
        let built = built_dir.join(format!("{}.wasm", package.replace('-', "_")));
        let bytes = std::fs::read(&built)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", built.display()));
        let file = format!("{agent}.wasm");
        write_backdated(&plugins_dir.join(&file), &bytes, backdated);
        let sha256: String = Sha256::digest(&bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        components.insert(
            agent.clone(),
            serde_json::json!({ "file": file, "sha256": sha256, "bytes": bytes.len() }),
        );
    }
    let manifest = serde_json::json!({ "format": "aura-plugins.v1", "components": components });
    let mut text = serde_json::to_string_pretty(&manifest).expect("a manifest is JSON");
    text.push('\n');
    write_backdated(
        &plugins_dir.join("manifest.json"),
        text.as_bytes(),
        backdated,
    );
}

/// Tells the host what it was built for and with, so precompiled plugins can be matched to it:
/// `AURA_BUILD_TARGET` (the target triple) and `AURA_WASMTIME_VERSION` (from Cargo.lock, the
/// version whose code format a .cwasm must have).
fn emit_build_identity() {
    let target = std::env::var("TARGET").expect("set by cargo");
    println!("cargo:rustc-env=AURA_BUILD_TARGET={target}");
    let host_dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let lock = host_dir.join("..").join("Cargo.lock");
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

/// Checks that the Rust building the agents has a standard library for [`PLUGIN_TARGET`]
/// (rustup installs the targets of rust-toolchain.toml only when it installs the toolchain, and
/// not at all with `RUSTUP_AUTO_INSTALL=0`; a distribution's Rust has only what was packaged).
fn require_plugin_target() -> Result<(), String> {
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let libdir = Command::new(&rustc)
        .args(["--print", "target-libdir", "--target", PLUGIN_TARGET])
        .output()
        .ok()
        .filter(|output| output.status.success())
        .map(|output| PathBuf::from(String::from_utf8_lossy(&output.stdout).trim()));
    let names: Vec<String> = libdir
        .and_then(|dir| std::fs::read_dir(dir).ok())
        .into_iter()
        .flatten()
        .filter_map(|entry| entry.ok())
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect();
    if has_std(names.iter().map(String::as_str)) {
        return Ok(());
    }
    let version = Command::new(&rustc)
        .arg("-V")
        .output()
        .map(|output| String::from_utf8_lossy(&output.stdout).trim().to_owned())
        .unwrap_or_else(|_| "rustc".into());
    let toolchain = std::env::var("RUSTUP_TOOLCHAIN").ok();
    Err(missing_target_message(
        PLUGIN_TARGET,
        toolchain.as_deref(),
        &version,
    ))
}

/// Builds `packages` for the plugin target with `profile`, by a nested cargo.
fn nested_build(workspace: &Path, target_dir: &Path, profile: &str, packages: &[(String, String)]) {
    if packages.is_empty() {
        return;
    }
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut build = Command::new(cargo);
    build
        .current_dir(workspace)
        .arg("build")
        .arg("--target")
        .arg(PLUGIN_TARGET)
        .arg("--profile")
        .arg(profile)
        .arg("--target-dir")
        .arg(target_dir);
    for (_, package) in packages {
        build.arg("-p").arg(package);
    }
    // The outer build's flags and wrappers are for the host, not for wasm guests.
    for var in [
        "CARGO_ENCODED_RUSTFLAGS",
        "RUSTFLAGS",
        "CARGO_TARGET_DIR",
        "CARGO_BUILD_TARGET",
        "RUSTC_WRAPPER",
        "RUSTC_WORKSPACE_WRAPPER",
        "CARGO_PROFILE_RELEASE_DEBUG",
    ] {
        build.env_remove(var);
    }
    let status = build.status().expect("cannot run cargo for the components");
    assert!(status.success(), "building the {profile} components failed");
}

/// Crates `<dir>/<name>/` with a Cargo.toml, except the SDK; each is package `<name>-<suffix>`.
fn crates_under(dir: &Path, suffix: &str) -> Vec<(String, String)> {
    let mut crates: Vec<(String, String)> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
        .filter_map(Result::ok)
        .filter(|entry| entry.path().join("Cargo.toml").is_file())
        .filter_map(|entry| entry.file_name().into_string().ok())
        .filter(|name| name != "sdk")
        .map(|name| {
            let package = format!("{name}-{suffix}");
            (name, package)
        })
        .collect();
    crates.sort();
    crates
}

/// Writes `bytes` to `path` atomically (temp file + rename) with the given mtime.
fn write_backdated(path: &Path, bytes: &[u8], mtime: SystemTime) {
    let temp = path.with_extension("tmp");
    std::fs::write(&temp, bytes).unwrap_or_else(|e| panic!("cannot write {}: {e}", temp.display()));
    let file = std::fs::File::options()
        .write(true)
        .open(&temp)
        .expect("just written");
    file.set_modified(mtime).expect("cannot set mtime");
    drop(file);
    std::fs::rename(&temp, path).unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
}
