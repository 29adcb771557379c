//! The hostile test guests (`tests/guests/<name>`, package `<name>-guest`), built by this
//! crate's build script for the tests that load them, apart from the agents and never into
//! `plugins/`. It must not build or know anything else.

/// Where the guests are (or, with `AURA_SKIP_PLUGIN_BUILD=1`, were last) built:
/// `<dir>/<name>_guest.wasm`.
pub const GUESTS_DIR: &str = env!("AURA_TEST_GUESTS_DIR");
