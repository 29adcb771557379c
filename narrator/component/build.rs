//! Puts the narrator's weights where the component's `include_bytes!` reads them: for a wasm32
//! build (the component) it fetches SmolLM2-135M-Instruct's GGUF file, pinned and checked
//! (`sdk/build/src/model.rs`), into the workspace's `target/narrator-model`, once, and
//! names it in `AURA_NARRATOR_GGUF`. A native build (the prompt's tests) needs no weights.

include!("../../sdk/build/src/model.rs");

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=../../sdk/build/src/model.rs");
    if std::env::var("CARGO_CFG_TARGET_ARCH").as_deref() != Ok("wasm32") {
        return;
    }
    let manifest_dir =
        std::path::PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("by cargo"));
    let dir = workspace_target(&manifest_dir).join("narrator-model");
    match fetch(&dir) {
        Ok(gguf) => {
            println!("cargo:rerun-if-changed={}", gguf.display());
            println!("cargo:rustc-env=AURA_NARRATOR_GGUF={}", gguf.display());
        }
        Err(message) => println!("cargo::error=the narrator's weights: {message}"),
    }
}

/// `<workspace>/target`: the narrator crate is `<workspace>/narrator/component`.
fn workspace_target(manifest_dir: &std::path::Path) -> std::path::PathBuf {
    manifest_dir.join("..").join("..").join("target")
}
