// Shared with the build scripts of sdk/build and tests/build-guests through `include!`: keep
// this file free of `use`.

/// The target every agent component is built for (`rust-toolchain.toml` lists it).
pub const PLUGIN_TARGET: &str = "wasm32-wasip2";

/// What the build says, before building any agent, when the Rust that builds them has no
/// standard library for `target` and it could not be added: the exact command that fixes it.
/// `rustup_toolchain` is the toolchain rustup runs the build with (`RUSTUP_TOOLCHAIN`), `None`
/// for a Rust not managed by rustup (a distribution's); `rustc_version` is `rustc -V`.
pub fn missing_target_message(
    target: &str,
    rustup_toolchain: Option<&str>,
    rustc_version: &str,
) -> String {
    let skip = "(or set AURA_SKIP_PLUGIN_BUILD=1 to build the host alone, without agents)";
    match rustup_toolchain {
        Some(toolchain) => format!(
            "the agents are built for {target}, and the Rust toolchain {toolchain} has no \
             standard library for it; install it with: rustup target add {target} --toolchain \
             {toolchain} {skip}"
        ),
        None => format!(
            "the agents are built for {target}, and this Rust ({rustc_version}) has no standard \
             library for it; install your distribution's {target} standard library, or a Rust \
             from rustup and then: rustup target add {target} {skip}"
        ),
    }
}

/// Whether a target's library dir (`rustc --print target-libdir --target <target>`) holds a
/// standard library: a `libstd-*.rlib` among `file_names`.
pub fn has_std<'a>(file_names: impl IntoIterator<Item = &'a str>) -> bool {
    file_names
        .into_iter()
        .any(|name| name.starts_with("libstd-") && name.ends_with(".rlib"))
}

/// Whether `rustc` has a standard library for `target`.
pub fn rustc_has_target(rustc: &std::ffi::OsStr, target: &str) -> bool {
    let libdir = std::process::Command::new(rustc)
        .args(["--print", "target-libdir", "--target", target])
        .output()
        .ok()
        .filter(|output| output.status.success())
        .map(|output| std::path::PathBuf::from(String::from_utf8_lossy(&output.stdout).trim()));
    let names: Vec<String> = libdir
        .and_then(|dir| std::fs::read_dir(dir).ok())
        .into_iter()
        .flatten()
        .filter_map(|entry| entry.ok())
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect();
    has_std(names.iter().map(String::as_str))
}

/// What [`ensure_target`] did.
#[derive(Debug, PartialEq, Eq)]
pub enum TargetState {
    /// The toolchain already had the target.
    Present,
    /// rustup added it now.
    Added,
}

/// Makes sure the Rust building the agents (`RUSTC`, run by rustup as `RUSTUP_TOOLCHAIN`) can
/// build for [`PLUGIN_TARGET`]: rustup installs the targets of rust-toolchain.toml only when it
/// installs the toolchain itself, so a machine whose image already had the toolchain lacks
/// them. Where rustup manages the toolchain, the target is added with it (from the same
/// distribution server rustup installs toolchains from); otherwise, or when that fails, the
/// error names the command that fixes it.
/// Build scripts that may add it at once (the agents' and the test guests') take turns on the
/// lock file `lock` (under the target dir).
pub fn ensure_target(lock: &std::path::Path) -> Result<TargetState, String> {
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    if rustc_has_target(&rustc, PLUGIN_TARGET) {
        return Ok(TargetState::Present);
    }
    let _turn = lock
        .parent()
        .and_then(|dir| std::fs::create_dir_all(dir).ok())
        .and_then(|()| std::fs::File::create(lock).ok())
        .filter(|file| file.lock().is_ok());
    // Another build script may have added it while this one waited.
    if rustc_has_target(&rustc, PLUGIN_TARGET) {
        return Ok(TargetState::Present);
    }
    let toolchain = std::env::var("RUSTUP_TOOLCHAIN").ok();
    let mut failure = String::new();
    if let Some(toolchain) = &toolchain {
        let rustup = std::env::var_os("CARGO_HOME")
            .map(|home| std::path::Path::new(&home).join("bin").join("rustup"))
            .filter(|path| path.is_file())
            .map_or_else(|| std::ffi::OsString::from("rustup"), |path| path.into());
        let added = std::process::Command::new(&rustup)
            .args(["target", "add", PLUGIN_TARGET, "--toolchain", toolchain])
            .stdin(std::process::Stdio::null())
            .output();
        match added {
            Ok(output) if output.status.success() && rustc_has_target(&rustc, PLUGIN_TARGET) => {
                return Ok(TargetState::Added);
            }
            Ok(output) => {
                failure = format!(
                    " (`rustup target add` failed: {})",
                    String::from_utf8_lossy(&output.stderr).trim()
                )
            }
            Err(error) => failure = format!(" (rustup could not be run: {error})"),
        }
    }
    let version = std::process::Command::new(&rustc)
        .arg("-V")
        .output()
        .map(|output| String::from_utf8_lossy(&output.stdout).trim().to_owned())
        .unwrap_or_else(|_| "rustc".into());
    Err(format!(
        "{}{failure}",
        missing_target_message(PLUGIN_TARGET, toolchain.as_deref(), &version)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_target_names_the_command_that_adds_it() {
        let message = missing_target_message(
            "wasm32-wasip2",
            Some("1.95.0-x86_64-unknown-linux-gnu"),
            "rustc 1.95.0",
        );
        assert!(
            message.contains(
                "rustup target add wasm32-wasip2 --toolchain 1.95.0-x86_64-unknown-linux-gnu"
            ),
            "{message}"
        );
        let message = missing_target_message("wasm32-wasip2", None, "rustc 1.95.0 (Debian)");
        assert!(message.contains("rustc 1.95.0 (Debian)"), "{message}");
        assert!(
            message.contains("rustup target add wasm32-wasip2"),
            "{message}"
        );
        assert!(message.contains("AURA_SKIP_PLUGIN_BUILD=1"), "{message}");
    }

    #[test]
    fn only_a_standard_library_counts() {
        assert!(has_std(["libcore-1a2b.rlib", "libstd-3c4d.rlib"]));
        assert!(!has_std(["libcore-1a2b.rlib", "liballoc-5e6f.rlib"]));
        assert!(!has_std(["libstd-3c4d.so"]));
        assert!(!has_std([]));
    }
}
