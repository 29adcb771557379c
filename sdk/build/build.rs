//! Builds the agent components, so a fresh checkout's `cargo build`, `cargo run` and `cargo test`
//! have them without `just`.
//!
//! Every agent crate under `agents/` (`agents/<name>`, package `<name>-agent`) is built for
//! `wasm32-wasip2` with the `plugin` profile by a nested cargo with its own target dir
//! (`target/plugins`). The components are copied to `plugins/<name>.wasm` and
//! `plugins/manifest.json` records each one's size and sha256, which the host checks before it
//! loads a component. Each is linked as a core module (`--skip-wit-component`), the WASI
//! imports it never needs are replaced by stubs that answer as the host does
//! (`src/wasi_stubs.rs`), and wit-component makes it a component, as the toolchain's
//! wasm-component-ld would have. The narrator (`narrator/component`, the model that writes novel cases'
//! rationales) is built with them into `plugins/narrator.wasm`, the manifest's `narrator`. The
//! target is added with rustup first when the toolchain lacks it.
//!
//! Set `AURA_SKIP_PLUGIN_BUILD=1` to build without agents (the components stay as they were last
//! built); change `AURA_PLUGINS_REBUILD` to force the nested build to run (`just build-plugins`).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::SystemTime;

use sha2::{Digest, Sha256};

include!("src/plugin_target.rs");
include!("src/nested.rs");
include!("src/wasi_stubs.rs");

/// The cargo profile agents are built with (defined in the workspace Cargo.toml).
const PLUGIN_PROFILE: &str = "plugin";

/// The narrator's name in the plugins dir (`plugins/narrator.wasm`, the manifest's `narrator`).
const NARRATOR: &str = "narrator";

/// The narrator's crate (`narrator/component`).
const NARRATOR_PACKAGE: &str = "aura-narrator";

/// The agents' linker (the toolchain's wasm-component-ld) writes the core module, not a
/// component: the stubs go in before wit-component makes it one.
const CORE_MODULE_FLAGS: &[&str] = &["-Clink-arg=--skip-wit-component"];

/// WASI preview 1's import module, which only wasm-component-ld's adapter could serve.
const WASI_PREVIEW1: &str = "wasi_snapshot_preview1";

fn main() {
    let started = SystemTime::now();
    let manifest_dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("by cargo"));
    let workspace = workspace_of(&manifest_dir);
    if skipped() {
        println!("cargo:rerun-if-env-changed=AURA_SKIP_PLUGIN_BUILD");
        return;
    }
    let agents = crates_under(&workspace.join("agents"), "agent");
    watch(
        &workspace,
        &[
            "agents",
            "sdk/rust",
            "sdk/jcs",
            "sdk/protocol",
            "narrator",
            "schemas",
            "wit",
            "Cargo.toml",
            "Cargo.lock",
            "rust-toolchain.toml",
        ],
    );
    let plugins_dir = workspace.join("plugins");
    // A deleted manifest (or plugins dir) rebuilds; the components themselves are not watched:
    // a tampered component must be refused by the host, not silently rebuilt.
    println!(
        "cargo:rerun-if-changed={}",
        plugins_dir.join("manifest.json").display()
    );
    match ensure_target(&workspace.join("target").join(".aura-target-add.lock")) {
        Ok(TargetState::Present) => {}
        Ok(TargetState::Added) => println!(
            "cargo::warning=added the {PLUGIN_TARGET} target with rustup: rust-toolchain.toml \
             names it, and this rustup did not add it (auto-install off, or an older rustup)"
        ),
        Err(message) => {
            // Stops the build here, with the command that fixes it, instead of a nested cargo's
            // error about a missing `std` deep in the first agent's dependencies.
            println!("cargo::error={message}");
            return;
        }
    }
    let target_dir = workspace.join("target").join("plugins");
    // The narrator is built with them: its build script fetches its weights, pinned and checked.
    let narrator = (NARRATOR.to_owned(), NARRATOR_PACKAGE.to_owned());
    let packages: Vec<_> = agents.iter().cloned().chain([narrator.clone()]).collect();
    nested_build(
        &workspace,
        &target_dir,
        PLUGIN_TARGET,
        PLUGIN_PROFILE,
        &packages,
        CORE_MODULE_FLAGS,
    );

    std::fs::create_dir_all(&plugins_dir).expect("cannot create plugins/");
    let backdated = started - OUTPUT_MTIME_BACKDATE;
    // Each component copied to plugins/<name>.wasm: its manifest entry.
    let copy = |name: &str, package: &str| {
        let built = built_wasm(&target_dir, PLUGIN_TARGET, PLUGIN_PROFILE, package);
        let core = std::fs::read(&built)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", built.display()));
        let bytes = component_of(&core)
            .unwrap_or_else(|e| panic!("cannot make {} a component: {e}", built.display()));
        let file = format!("{name}.wasm");
        write_backdated(&plugins_dir.join(&file), &bytes, backdated);
        let sha256: String = Sha256::digest(&bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        serde_json::json!({ "file": file, "sha256": sha256, "bytes": bytes.len() })
    };
    let components: BTreeMap<_, _> = agents
        .iter()
        .map(|(agent, package)| (agent.clone(), copy(agent, package)))
        .collect();
    let narrator = copy(NARRATOR, NARRATOR_PACKAGE);
    let manifest = serde_json::json!({
        "format": "aura-plugins.v1",
        "components": components,
        "narrator": narrator,
    });
    let mut text = serde_json::to_string_pretty(&manifest).expect("a manifest is JSON");
    text.push('\n');
    write_backdated(
        &plugins_dir.join("manifest.json"),
        text.as_bytes(),
        backdated,
    );
}

/// The component of an agent's core module: the WASI it never needs stubbed, then the module
/// made a component from the WIT its bindings embedded (wit-component, validated).
fn component_of(core: &[u8]) -> Result<Vec<u8>, String> {
    // wasm-component-ld adapts WASI preview 1 imports with its own adapter; this build has
    // none, so a crate that pulls preview 1 in is named here rather than by wit-component.
    for payload in wasmparser::Parser::new(0).parse_all(core) {
        if let Ok(wasmparser::Payload::ImportSection(reader)) = payload {
            for import in reader.into_imports().flatten() {
                if import.module == WASI_PREVIEW1 {
                    return Err(format!(
                        "it imports {WASI_PREVIEW1} {} (a dependency built for WASI preview \
                         1); agents are built for {PLUGIN_TARGET} without the preview 1 adapter",
                        import.name
                    ));
                }
            }
        }
    }
    let stubbed = stub_unused_wasi(core).map_err(|e| e.to_string())?;
    wit_component::ComponentEncoder::default()
        .validate(true)
        .module(&stubbed.module)
        .and_then(|mut encoder| encoder.encode())
        .map_err(|e| format!("{e:#}"))
}
