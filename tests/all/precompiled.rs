//! Precompiled plugins (.cwasm, `plugins/<target>/`): what `aura compile` writes, that a host
//! runs them to the same traces as the components it compiles itself (native and Pulley), and
//! that it refuses, each for its stated reason, a .cwasm that is not exactly what the build
//! machine produced for it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use aura_host::Host;
use aura_host::{LoadError, precompile_plugins};
use aura_plugins::{PluginError, PrecompiledRefusal};
use aura_sandbox::{BUILD_TARGET, CodeTarget, PrecompiledMismatch, SandboxError};

use crate::orchestrator::{run_with, scenario_path};
use crate::support::{plugins_dir, temp_dir};

/// `aura compile --target <target>` of the built plugins, copied into a fresh dir (which the
/// test may edit). Each target is compiled once per run of the tests, by the first test that
/// asks for it.
pub fn compiled(name: &str, target: &CodeTarget) -> PathBuf {
    static COMPILED: Mutex<BTreeMap<String, PathBuf>> = Mutex::new(BTreeMap::new());
    let source = COMPILED
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .entry(target.name().to_owned())
        .or_insert_with(|| {
            let out = temp_dir(&format!("cwasm-compiled-{}", target.name()));
            let manifest = precompile_plugins(&plugins_dir(), target, &out).unwrap();
            assert_eq!(manifest.components.len(), 4);
            assert!(
                manifest.narrator.is_some(),
                "the narrator is precompiled with them"
            );
            out
        })
        .clone();
    let out = temp_dir(&format!("cwasm-{name}"));
    for entry in std::fs::read_dir(&source).unwrap() {
        let entry = entry.unwrap();
        // The narrator's code (about 100 MB) is linked, not copied: no test edits it.
        match entry.file_name() == "narrator.cwasm" {
            true => std::fs::hard_link(entry.path(), out.join(entry.file_name())).unwrap(),
            false => drop(std::fs::copy(entry.path(), out.join(entry.file_name())).unwrap()),
        }
    }
    out
}

/// Opens a host over `dir` serving calendar only; the error it refuses with.
async fn refusal(dir: &Path, name: &str) -> LoadError {
    let mut config = crate::support::config(dir, temp_dir(&format!("data-{name}")));
    config.agents = Some(vec!["calendar".into()]);
    Host::open(&config).await.expect_err("the host must refuse")
}

/// Rewrites `dir`'s manifest through `edit`.
fn edit_manifest(dir: &Path, edit: impl FnOnce(&mut serde_json::Value)) {
    let path = dir.join("manifest.json");
    let mut manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    edit(&mut manifest);
    std::fs::write(&path, manifest.to_string()).unwrap();
}

/// A dir whose manifest says `calendar.cwasm` holds `cwasm`, compiled from `wasm` for this
/// host's target and wasmtime, with the right digest: only wasmtime's own check is left.
fn calendar_dir_of(name: &str, wasm: &[u8], cwasm: Vec<u8>) -> PathBuf {
    let dir = temp_dir(&format!("cwasm-{name}"));
    aura_plugins::write_precompiled(
        &dir,
        aura_plugins::Precompiled {
            target: BUILD_TARGET.into(),
            wasmtime: aura_sandbox::WASMTIME_VERSION.into(),
        },
        &[(
            "calendar".into(),
            "calendar.cwasm".into(),
            aura_contract::digest::sha256_hex(wasm),
            cwasm,
        )],
    )
    .unwrap();
    dir
}

#[tokio::test]
async fn native_and_pulley_precompiled_code_replays_the_same_traces() {
    let native = compiled("native", &CodeTarget::named(BUILD_TARGET));
    let pulley = compiled("pulley", &CodeTarget::Pulley);
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(pulley.join("manifest.json")).unwrap())
            .unwrap();
    assert_eq!(manifest["precompiled"]["target"], "pulley64");
    assert_eq!(
        manifest["precompiled"]["wasmtime"],
        aura_sandbox::WASMTIME_VERSION
    );
    // Each .cwasm names the .wasm it came from.
    let wasm = std::fs::read(plugins_dir().join("calendar.wasm")).unwrap();
    assert_eq!(
        manifest["components"]["calendar"]["source_sha256"],
        aura_contract::digest::sha256_hex(&wasm)
    );

    let short = scenario_path("short");
    let (_, jit, _) = run_with("cwasm-jit", &plugins_dir(), &short, 5).await;
    let (_, native_traces, _) = run_with("cwasm-native", &native, &short, 5).await;
    let (summary, pulley_traces, _) = run_with("cwasm-pulley", &pulley, &short, 5).await;
    assert!(summary.decisions > 0);
    // Fuel counts wasm operators, and NaNs are canonical: the fuel_used of every trace, and
    // so every byte, is the same whatever runs the code.
    assert_eq!(jit, native_traces, "native .cwasm differs from JIT");
    assert_eq!(jit, pulley_traces, "Pulley differs from native");
}

#[tokio::test]
async fn a_cwasm_whose_digest_differs_from_the_manifest_is_refused() {
    let dir = compiled("tampered", &CodeTarget::Pulley);
    let path = dir.join("calendar.cwasm");
    let mut bytes = std::fs::read(&path).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x01;
    std::fs::write(&path, &bytes).unwrap();
    match refusal(&dir, "tampered").await {
        LoadError::Plugin(PluginError::DigestMismatch { agent, actual, .. }) => {
            assert_eq!(agent, "calendar");
            assert_eq!(actual, aura_contract::digest::sha256_hex(&bytes));
        }
        other => panic!("expected DigestMismatch, got {other:?}"),
    }
}

#[tokio::test]
async fn a_dir_precompiled_for_another_target_is_refused_before_reading_it() {
    let dir = compiled("aarch64", &CodeTarget::named("aarch64-unknown-linux-musl"));
    match refusal(&dir, "aarch64").await {
        LoadError::Plugin(PluginError::Precompiled {
            refusal: PrecompiledRefusal::WrongTarget { found, expected },
            ..
        }) => {
            assert_eq!(found, "aarch64-unknown-linux-musl");
            assert_eq!(expected, format!("{BUILD_TARGET} or pulley64"));
        }
        other => panic!("expected WrongTarget, got {other:?}"),
    }
}

#[tokio::test]
async fn a_dir_precompiled_by_another_wasmtime_is_refused() {
    let dir = compiled("version", &CodeTarget::Pulley);
    edit_manifest(&dir, |m| m["precompiled"]["wasmtime"] = "47.0.1".into());
    match refusal(&dir, "version").await {
        LoadError::Plugin(PluginError::Precompiled {
            refusal: PrecompiledRefusal::WasmtimeVersion { found, expected },
            ..
        }) => {
            assert_eq!(found, "47.0.1");
            assert_eq!(expected, aura_sandbox::WASMTIME_VERSION);
        }
        other => panic!("expected WasmtimeVersion, got {other:?}"),
    }
}

#[tokio::test]
async fn a_manifest_that_lies_about_the_target_is_caught_by_wasmtime() {
    // Native code under a manifest that says Pulley: the digests are right, so only
    // wasmtime's own header check stands between the host and running it as bytecode.
    let dir = compiled("lying", &CodeTarget::named(BUILD_TARGET));
    edit_manifest(&dir, |m| m["precompiled"]["target"] = "pulley64".into());
    match refusal(&dir, "lying").await {
        LoadError::Sandbox(SandboxError::Precompiled {
            agent,
            reason,
            message,
        }) => {
            assert_eq!(agent, "calendar");
            assert_eq!(reason, PrecompiledMismatch::Target, "{message}");
        }
        other => panic!("expected a target mismatch, got {other:?}"),
    }
}

#[tokio::test]
async fn code_compiled_with_other_engine_settings_is_refused() {
    // The same engine settings but fuel off: code without fuel checks must never run in a
    // host whose deadlines are fuel.
    let mut config = aura_sandbox::engine_config();
    config.consume_fuel(false);
    let engine = wasmtime::Engine::new(&config).unwrap();
    let wasm = std::fs::read(plugins_dir().join("calendar.wasm")).unwrap();
    let cwasm = engine.precompile_component(&wasm).unwrap();
    let dir = calendar_dir_of("nofuel", &wasm, cwasm);
    match refusal(&dir, "nofuel").await {
        LoadError::Sandbox(SandboxError::Precompiled {
            reason, message, ..
        }) => {
            assert_eq!(reason, PrecompiledMismatch::Settings, "{message}");
            assert!(message.contains("fuel"), "{message}");
        }
        other => panic!("expected a settings mismatch, got {other:?}"),
    }
}

#[tokio::test]
async fn a_plain_component_posing_as_precompiled_is_refused() {
    let wasm = std::fs::read(plugins_dir().join("calendar.wasm")).unwrap();
    let dir = calendar_dir_of("posing", &wasm, wasm.clone());
    match refusal(&dir, "posing").await {
        LoadError::Sandbox(SandboxError::Precompiled {
            reason, message, ..
        }) => assert_eq!(reason, PrecompiledMismatch::NotPrecompiled, "{message}"),
        other => panic!("expected NotPrecompiled, got {other:?}"),
    }
}
