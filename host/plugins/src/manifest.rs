//! `plugins/manifest.json`: which component file holds each agent, its size and its digest,
//! and writing a dir of components with its manifest.
//!
//! It owns the manifest's format and writing a plugins dir (for `aura compile`, `aura pack`,
//! tests and benchmarks), each file replaced whole, the manifest last. It must not read a dir
//! (the dir module does, checking every file against this manifest).

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use aura_contract::digest::sha256_hex;

use crate::error::PluginError;
use crate::files::write_replacing;

/// The manifest's file name inside the plugins dir.
pub const MANIFEST_FILE: &str = "manifest.json";

/// The manifest format this host reads.
pub const MANIFEST_FORMAT: &str = "aura-plugins.v1";

/// `plugins/manifest.json`: which component file holds each agent, and its digest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PluginManifest {
    /// Always [`MANIFEST_FORMAT`].
    pub format: String,
    /// Set when the components are precompiled (.cwasm, `plugins/<target>/`): what for and
    /// by what. Absent for plain components (.wasm), which the host compiles itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precompiled: Option<Precompiled>,
    /// Agent name → its component.
    pub components: BTreeMap<String, ComponentEntry>,
    /// The narrator's component (the model that writes novel cases' rationales), when the dir
    /// has one: checked, signed and precompiled like an agent's, bounded by its own limits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub narrator: Option<ComponentEntry>,
}

/// The name the narrator's component goes by in signatures and errors. No catalogue agent has
/// it, so its signature can never pass for an agent's.
pub const NARRATOR_COMPONENT: &str = "narrator";

/// What precompiled components were compiled for, as `aura compile` records it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Precompiled {
    /// The target triple (or `pulley64`).
    pub target: String,
    /// The wasmtime version that compiled them; only the same version loads them.
    pub wasmtime: String,
}

/// One component in the manifest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ComponentEntry {
    /// File name inside the plugins dir (no directories).
    pub file: String,
    /// Lower-case hex sha256 of the file.
    pub sha256: String,
    /// Size of the file in bytes.
    pub bytes: u64,
    /// For a precompiled component: the sha256 of the .wasm it was compiled from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_sha256: Option<String>,
}

/// Writes precompiled components and their manifest into `out` (created if needed): each
/// `(agent, file, source_sha256, bytes)` becomes `out/<file>` with its sha256 recorded (the
/// one named [`NARRATOR_COMPONENT`] as the manifest's narrator). The
/// manifest is written last, so a dir cut short by a crash has no manifest and is not loaded.
pub fn write_precompiled(
    out: &Path,
    precompiled: Precompiled,
    components: &[(String, String, String, Vec<u8>)],
) -> Result<PluginManifest, PluginError> {
    let files = components
        .iter()
        .map(|(agent, file, source_sha256, bytes)| {
            (
                agent.as_str(),
                file.clone(),
                Some(source_sha256.as_str()),
                bytes.as_slice(),
            )
        });
    write_dir(out, Some(precompiled), files)
}

/// Writes plain components (.wasm) and their manifest into `out` (created if needed): each
/// `(agent, bytes)` becomes `out/<agent>.wasm`, manifest last. A plugins dir of one's own
/// choosing: a test's or a benchmark's guest served as an agent.
pub fn write_components(
    out: &Path,
    components: &[(&str, Vec<u8>)],
) -> Result<PluginManifest, PluginError> {
    let files = components
        .iter()
        .map(|(agent, bytes)| (*agent, format!("{agent}.wasm"), None, bytes.as_slice()));
    write_dir(out, None, files)
}

/// The files, then the manifest that lists them.
fn write_dir<'a>(
    out: &Path,
    precompiled: Option<Precompiled>,
    components: impl Iterator<Item = (&'a str, String, Option<&'a str>, &'a [u8])>,
) -> Result<PluginManifest, PluginError> {
    let io = |path: &Path| {
        let path = path.to_owned();
        move |source| PluginError::Io { path, source }
    };
    std::fs::create_dir_all(out).map_err(io(out))?;
    let mut entries = BTreeMap::new();
    let mut narrator = None;
    for (agent, file, source_sha256, bytes) in components {
        let path = out.join(&file);
        write_replacing(&path, bytes).map_err(io(&path))?;
        let entry = ComponentEntry {
            file,
            sha256: sha256_hex(bytes),
            bytes: bytes.len() as u64,
            source_sha256: source_sha256.map(str::to_owned),
        };
        match agent == NARRATOR_COMPONENT {
            true => narrator = Some(entry),
            false => {
                entries.insert(agent.to_owned(), entry);
            }
        }
    }
    let manifest = PluginManifest {
        format: MANIFEST_FORMAT.to_owned(),
        precompiled,
        components: entries,
        narrator,
    };
    let mut text =
        serde_json::to_string_pretty(&manifest).map_err(|e| PluginError::BadManifest {
            path: out.join(MANIFEST_FILE),
            message: e.to_string(),
        })?;
    text.push('\n');
    let path = out.join(MANIFEST_FILE);
    write_replacing(&path, text.as_bytes()).map_err(io(&path))?;
    Ok(manifest)
}
