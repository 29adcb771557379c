//! The agent components, built for the host (`cargo build` of the `aura` binary builds them,
//! through this crate's build script; `just build-plugins` forces it).
//!
//! It owns turning every agent crate of `agents/` (a crate `agents/<name>` whose package is
//! `<name>-agent`) into `plugins/<name>.wasm`, and `plugins/manifest.json` with each one's size
//! and sha256, and making sure first that the toolchain can build them (the target that
//! `rust-toolchain.toml` names, added with rustup when it is missing). It must not know the
//! catalogue or the host: the host admits a component only if its manifest names exactly its
//! catalogue entry, and a test here checks that the crates built are the catalogue's agents.
//! Before a core module is made a component, the WASI imports it never needs are replaced by
//! stubs that answer as the host does (`wasi_stubs`). Its four modules are the build scripts' own
//! code (`include!`d by them), compiled here too so they are checked and tested like any other.

pub mod model;
pub mod nested;
pub mod plugin_target;
pub mod wasi_stubs;

/// The plugins dir the build writes: the source tree's `plugins/`.
pub const PLUGINS_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../plugins");

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::path::Path;

    /// Adding an agent is its crate and its catalogue entry: the build finds the crate itself.
    #[test]
    fn the_build_compiles_exactly_the_catalogues_agents() {
        let workspace = super::nested::workspace_of(Path::new(env!("CARGO_MANIFEST_DIR")));
        let built: BTreeSet<String> =
            super::nested::crates_under(&workspace.join("agents"), "agent")
                .into_iter()
                .map(|(name, _)| name)
                .collect();
        let catalogue: BTreeSet<String> = aura_contract::catalogue::CATALOGUE
            .iter()
            .map(|agent| agent.name.to_owned())
            .collect();
        assert_eq!(built, catalogue);
    }
}
