// Shared with host/build.rs through `include!`: keep this file free of `use`.

/// The target every agent component is built for (`rust-toolchain.toml` lists it).
pub const PLUGIN_TARGET: &str = "wasm32-wasip2";

/// What the build says, before building any agent, when the Rust that builds them has no
/// standard library for `target`: the exact command that fixes it. `rustup_toolchain` is the
/// toolchain rustup runs the build with (`RUSTUP_TOOLCHAIN`), `None` for a Rust not managed by
/// rustup (a distribution's); `rustc_version` is `rustc -V`.
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
