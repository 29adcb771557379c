//! Signed plugins: `aura keygen` and `aura sign` as a user runs them, and a host that trusts
//! a key refusing, each with its own error and before any of its code is compiled or mapped,
//! a plugins dir or component (.wasm and precompiled .cwasm) that is unsigned, signed by
//! another key, or altered after signing.

use std::path::{Path, PathBuf};
use std::process::Command;

use aura_host::Host;
use aura_host::LoadError;
use aura_plugins::PluginError;
use aura_plugins::signing::TrustedKeys;
use aura_sandbox::CodeTarget;

use crate::support::{plugins_dir, temp_dir};

fn aura(args: &[&std::ffi::OsStr]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_aura"))
        .args(args)
        .env_remove("AURA_PLUGINS_DIR")
        .output()
        .unwrap()
}

/// `aura keygen --out <dir>/<name>.key`: the key file and the public key printed.
fn keygen(dir: &Path, name: &str) -> (PathBuf, String) {
    let key = dir.join(format!("{name}.key"));
    let output = aura(&["keygen".as_ref(), "--out".as_ref(), key.as_os_str()]);
    assert!(output.status.success(), "{output:?}");
    let public = String::from_utf8(output.stdout).unwrap().trim().to_owned();
    assert_eq!(public.len(), 64, "{public}");
    (key, public)
}

/// `aura --plugins-dir <dir> sign --key <key>`.
fn sign(dir: &Path, key: &Path) {
    let output = aura(&[
        "--plugins-dir".as_ref(),
        dir.as_os_str(),
        "sign".as_ref(),
        "--key".as_ref(),
        key.as_os_str(),
    ]);
    assert!(output.status.success(), "{output:?}");
}

/// A copy of the built plugins (all four agents).
fn plain_copy(name: &str) -> PathBuf {
    let built = plugins_dir();
    let served: Vec<(&str, PathBuf)> = ["calendar", "comms", "finance", "wellness"]
        .into_iter()
        .map(|agent| (agent, built.join(format!("{agent}.wasm"))))
        .collect();
    crate::support::plugins_dir_of(name, &served)
}

/// Opens a host over `plugins` trusting `keys`, every agent required.
async fn open(plugins: &Path, keys: &str, name: &str) -> Result<Host, LoadError> {
    let mut config = crate::support::config(plugins, temp_dir(&format!("data-sign-{name}")));
    config.agents = Some(
        ["calendar", "comms", "finance", "wellness"]
            .map(String::from)
            .to_vec(),
    );
    config.trusted_keys = Some(TrustedKeys::parse(keys).unwrap());
    Host::open(&config).await
}

/// `error` is a refusal of `what` (the manifest, or an agent's component) for a signature
/// that does not verify.
fn assert_bad_signature(error: &LoadError, what: &str) {
    assert!(
        matches!(error, LoadError::Plugin(PluginError::BadSignature { what: refused, .. }) if refused == what),
        "{error}"
    );
}

fn flip_last_byte(path: &Path) {
    let mut bytes = std::fs::read(path).unwrap();
    *bytes.last_mut().unwrap() ^= 1;
    std::fs::write(path, bytes).unwrap();
}

#[tokio::test]
async fn a_host_that_trusts_a_key_runs_only_what_it_signed() {
    let work = temp_dir("signing");
    let (key, public) = keygen(&work, "ours");
    let (other_key, other_public) = keygen(&work, "theirs");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&key).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "the key file is its owner's only");
    }
    // keygen never overwrites a key.
    let again = aura(&["keygen".as_ref(), "--out".as_ref(), key.as_os_str()]);
    assert!(!again.status.success());

    // Signed by our key: every agent loads and runs.
    let signed = plain_copy("signed");
    sign(&signed, &key);
    let host = open(&signed, &public, "signed").await.unwrap();
    let call = aura_host::ToolCall::new(
        "calendar",
        "detect_conflicts",
        serde_json::json!({"events": []}),
        None,
    );
    assert!(host.dispatch(&call).await.unwrap().ok);
    // Among several trusted keys, ours is enough.
    open(&signed, &format!("{other_public},{public}"), "two-keys")
        .await
        .unwrap();
    // With no key configured, signatures are not required (and not read).
    open(&plain_copy("unsigned-open"), "", "no-key")
        .await
        .unwrap();

    // Unsigned: refused before any component is read.
    let unsigned = plain_copy("unsigned");
    let error = open(&unsigned, &public, "unsigned").await.unwrap_err();
    assert!(
        matches!(&error, LoadError::Plugin(PluginError::Unsigned { what, .. }) if what == "its manifest"),
        "{error}"
    );

    // Signed by a key the host does not trust.
    let theirs = plain_copy("theirs");
    sign(&theirs, &other_key);
    let error = open(&theirs, &public, "theirs").await.unwrap_err();
    assert!(
        matches!(&error, LoadError::Plugin(PluginError::UntrustedKey { key, .. }) if *key == other_public),
        "{error}"
    );

    // A component altered after signing: its own signature fails over the bytes read,
    // before the digest comparison and before any compilation.
    let altered = plain_copy("altered");
    sign(&altered, &key);
    flip_last_byte(&altered.join("comms.wasm"));
    let error = open(&altered, &public, "altered").await.unwrap_err();
    assert_bad_signature(&error, "the component for `comms`");

    // The manifest altered after signing (a component swapped in with its new digest): the
    // manifest's signature fails, so nothing in the dir is read.
    let swapped = plain_copy("swapped");
    sign(&swapped, &key);
    let manifest_path = swapped.join("manifest.json");
    let mut manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&manifest_path).unwrap()).unwrap();
    manifest["components"]["comms"]["sha256"] = "00".repeat(32).into();
    std::fs::write(
        &manifest_path,
        serde_json::to_string_pretty(&manifest).unwrap(),
    )
    .unwrap();
    let error = open(&swapped, &public, "swapped").await.unwrap_err();
    assert_bad_signature(&error, "its manifest");

    // One agent's signature put on another's component: each signature names its agent.
    let moved = plain_copy("moved");
    sign(&moved, &key);
    let path = moved.join(aura_plugins::signing::SIGNATURES_FILE);
    let mut signatures: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    signatures["components"]["finance"] = signatures["components"]["calendar"].clone();
    std::fs::write(&path, signatures.to_string()).unwrap();
    let error = open(&moved, &public, "moved").await.unwrap_err();
    assert_bad_signature(&error, "the component for `finance`");
}

/// The phone's path: a precompiled dir is signed on its own, and a .cwasm altered after
/// signing is refused before it is mapped executable.
#[tokio::test]
async fn precompiled_code_is_refused_unless_signed() {
    let work = temp_dir("signing-cwasm");
    let (key, public) = keygen(&work, "ours");
    // Native code and Pulley's bytecode (the iOS path) alike.
    for target in [
        CodeTarget::named(aura_sandbox::BUILD_TARGET),
        CodeTarget::Pulley,
    ] {
        let name = target.name();
        let compiled = crate::precompiled::compiled(&format!("signed-{name}"), &target);
        let error = open(&compiled, &public, &format!("cwasm-unsigned-{name}"))
            .await
            .unwrap_err();
        assert!(
            matches!(&error, LoadError::Plugin(PluginError::Unsigned { .. })),
            "{name}: {error}"
        );
        sign(&compiled, &key);
        open(&compiled, &public, &format!("cwasm-signed-{name}"))
            .await
            .unwrap();
        flip_last_byte(&compiled.join("wellness.cwasm"));
        let error = open(&compiled, &public, &format!("cwasm-altered-{name}"))
            .await
            .unwrap_err();
        assert_bad_signature(&error, "the component for `wellness`");
    }
}

/// `aura sign` refuses a dir that does not hold what its manifest says: it signs nothing it
/// has not checked.
#[test]
fn sign_refuses_a_dir_that_does_not_match_its_manifest() {
    let work = temp_dir("signing-mismatch");
    let (key, _) = keygen(&work, "ours");
    let dir = plain_copy("sign-mismatch");
    flip_last_byte(&dir.join("calendar.wasm"));
    let output = aura(&[
        "--plugins-dir".as_ref(),
        dir.as_os_str(),
        "sign".as_ref(),
        "--key".as_ref(),
        key.as_os_str(),
    ]);
    assert!(!output.status.success());
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(said.contains("does not match the manifest"), "{said}");
    assert!(!dir.join(aura_plugins::signing::SIGNATURES_FILE).exists());
}

/// The start-up cost of signature checks (`just bench-signing`; BENCHMARKS.md): a host opened
/// on first use over the precompiled native dir, its first call made (what `aura call` does
/// after the process starts), signed and trusting a key against unsigned and trusting none,
/// interleaved, medians. Not a test: timings are never asserted.
#[tokio::test]
#[ignore = "a benchmark: just bench-signing"]
async fn bench_signature_startup_cost() {
    let work = temp_dir("signing-bench");
    let (key, public) = keygen(&work, "bench");
    let native = CodeTarget::named(aura_sandbox::BUILD_TARGET);
    let signed = crate::precompiled::compiled("bench-signed", &native);
    sign(&signed, &key);
    let unsigned = crate::precompiled::compiled("bench-unsigned", &native);
    let call = aura_host::ToolCall::new(
        "calendar",
        "detect_conflicts",
        serde_json::json!({"events": []}),
        None,
    );
    let start = |plugins: PathBuf, keys: String, data: PathBuf| {
        let call = call.clone();
        async move {
            let started = std::time::Instant::now();
            let mut config = aura_host::HostConfig::new(&plugins, &data);
            config.loading = aura_host::Loading::OnFirstUse;
            config.trusted_keys = Some(TrustedKeys::parse(&keys).unwrap());
            let host = Host::open(&config).await.unwrap();
            assert!(host.dispatch(&call).await.unwrap().ok);
            let elapsed = started.elapsed();
            drop(host);
            elapsed.as_secs_f64() * 1e6
        }
    };
    let verify_only = |plugins: &Path, keys: &str| {
        let started = std::time::Instant::now();
        let trusted = TrustedKeys::parse(keys).unwrap();
        let dir = aura_plugins::PluginsDir::open(plugins, &trusted).unwrap();
        dir.check_component("calendar").unwrap();
        started.elapsed().as_secs_f64() * 1e6
    };
    let (mut with, mut without, mut open_with, mut open_without) = (vec![], vec![], vec![], vec![]);
    let data = work.join("data");
    for _ in 0..200 {
        with.push(start(signed.clone(), public.clone(), data.clone()).await);
        without.push(start(unsigned.clone(), String::new(), data.clone()).await);
        open_with.push(verify_only(&signed, &public));
        open_without.push(verify_only(&unsigned, ""));
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (a, b) = (median(&mut with), median(&mut without));
    let (c, d) = (median(&mut open_with), median(&mut open_without));
    println!(
        "host open + first call: signed {a:.0} µs, unsigned {b:.0} µs, ratio {:.3}, cost {:.0} µs",
        a / b,
        a - b
    );
    println!(
        "plugins dir open + calendar checked: signed {c:.0} µs, unsigned {d:.0} µs, cost {:.0} µs",
        c - d
    );
}
