//! Builds the hostile guests of `tests/guests/` for the tests, by a nested cargo with its own
//! target dir (`target/guests`), with the `guest` profile (no LTO: thirty small components link
//! quickly). They stay there: nothing is written to `plugins/`.

use std::path::PathBuf;

include!("../../sdk/build/src/plugin_target.rs");
include!("../../sdk/build/src/nested.rs");

/// The profile of the test-only guests (defined in the workspace Cargo.toml).
const GUEST_PROFILE: &str = "guest";

fn main() {
    let manifest_dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("by cargo"));
    let workspace = workspace_of(&manifest_dir);
    let target_dir = workspace.join("target").join("guests");
    println!(
        "cargo:rustc-env=AURA_TEST_GUESTS_DIR={}",
        target_dir.join(PLUGIN_TARGET).join(GUEST_PROFILE).display()
    );
    if skipped() {
        println!("cargo:rerun-if-env-changed=AURA_SKIP_PLUGIN_BUILD");
        return;
    }
    watch(
        &workspace,
        &[
            "tests/guests",
            "tests/zoo",
            "sdk/rust",
            "sdk/jcs",
            "sdk/protocol",
            "schemas",
            "wit",
            "Cargo.toml",
            "Cargo.lock",
            "rust-toolchain.toml",
        ],
    );
    if let Err(message) = ensure_target(&workspace.join("target").join(".aura-target-add.lock")) {
        println!("cargo::error={message}");
        return;
    }
    let guests = crates_under(&workspace.join("tests").join("guests"), "guest");
    nested_build(
        &workspace,
        &target_dir,
        PLUGIN_TARGET,
        GUEST_PROFILE,
        &guests,
        &[],
    );
}
