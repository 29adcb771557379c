// Shared with the build scripts of sdk/build and tests/build-guests through `include!`: keep
// this file free of `use`.

/// Written files get an mtime this far before their build started, so cargo does not take a
/// build script's own outputs for changes and rerun it on every build.
pub const OUTPUT_MTIME_BACKDATE: std::time::Duration = std::time::Duration::from_secs(10);

/// The workspace a build script's crate is in: two levels above its manifest dir
/// (`sdk/build`, `tests/build-guests`).
pub fn workspace_of(manifest_dir: &std::path::Path) -> std::path::PathBuf {
    manifest_dir
        .parent()
        .and_then(std::path::Path::parent)
        .expect("the crate is two levels inside the workspace")
        .to_owned()
}

/// The crates `<dir>/<name>/` whose package is `<name>-<suffix>` (read from their Cargo.toml),
/// sorted: (name, package).
pub fn crates_under(dir: &std::path::Path, suffix: &str) -> Vec<(String, String)> {
    let mut crates: Vec<(String, String)> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let name = entry.file_name().into_string().ok()?;
            let manifest = std::fs::read_to_string(entry.path().join("Cargo.toml")).ok()?;
            let package = format!("{name}-{suffix}");
            manifest
                .lines()
                .any(|line| line.trim() == format!("name = \"{package}\""))
                .then_some((name, package))
        })
        .collect();
    crates.sort();
    crates
}

/// Builds `packages` of `workspace` for `target` with `profile`, by a nested cargo with its own
/// target dir (the pattern of wasmtime's `crates/test-programs/artifacts/build.rs`), with
/// `rustflags` added for the target's crates (through `--config`, so they join any the user's
/// cargo config gives the target rather than replace them; none of the outer build's).
pub fn nested_build(
    workspace: &std::path::Path,
    target_dir: &std::path::Path,
    target: &str,
    profile: &str,
    packages: &[(String, String)],
    rustflags: &[&str],
) {
    if packages.is_empty() {
        return;
    }
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut build = std::process::Command::new(cargo);
    build
        .current_dir(workspace)
        .arg("build")
        .arg("--target")
        .arg(target)
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
    if !rustflags.is_empty() {
        let quoted: Vec<String> = rustflags.iter().map(|flag| format!("{flag:?}")).collect();
        build
            .arg("--config")
            .arg(format!("target.{target}.rustflags=[{}]", quoted.join(", ")));
    }
    let status = build.status().expect("cannot run cargo for the components");
    assert!(status.success(), "building the {profile} components failed");
}

/// The `.wasm` a nested build wrote for `package`: a component, or the core module when linked
/// with `--skip-wit-component`.
pub fn built_wasm(
    target_dir: &std::path::Path,
    target: &str,
    profile: &str,
    package: &str,
) -> std::path::PathBuf {
    target_dir
        .join(target)
        .join(profile)
        .join(format!("{}.wasm", package.replace('-', "_")))
}

/// Writes `bytes` to `path` atomically (temp file + rename) with the given mtime.
pub fn write_backdated(path: &std::path::Path, bytes: &[u8], mtime: std::time::SystemTime) {
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

/// Reruns the build script when any of `paths` (relative to `workspace`) changes, or the
/// variables that skip or force the build of components.
pub fn watch(workspace: &std::path::Path, paths: &[&str]) {
    println!("cargo:rerun-if-env-changed=AURA_SKIP_PLUGIN_BUILD");
    println!("cargo:rerun-if-env-changed=AURA_PLUGINS_REBUILD");
    for path in paths {
        println!("cargo:rerun-if-changed={}", workspace.join(path).display());
    }
}

/// Whether the build of components is to be skipped (`AURA_SKIP_PLUGIN_BUILD=1`).
pub fn skipped() -> bool {
    std::env::var_os("AURA_SKIP_PLUGIN_BUILD").is_some_and(|v| !v.is_empty() && v != "0")
}
