//! A plugins dir on disk: its manifest and the component files it lists by digest.
//!
//! It owns reading the manifest and the component bytes through cap-std, bounded in size, and
//! refusing any component whose sha256 is not the one the manifest records, any precompiled dir
//! (`plugins/<target>/`, .cwasm) made for another target or wasmtime, and, when the host
//! requires signatures, any dir or component whose signature does not verify. It must not
//! compile or run anything (the sandbox does) and must not decide which agents exist (the
//! catalogue does).

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use cap_std::ambient_authority;
use cap_std::fs::Dir;
use ed25519_dalek::Signer;

use aura_contract::catalogue::component_bytes_max;
use aura_contract::digest::{hex, sha256_hex};
use aura_contract::limits::{
    COMPILED_BYTES_MAX, NARRATOR_COMPILED_BYTES_MAX, NARRATOR_COMPONENT_BYTES_MAX,
    PLUGIN_MANIFEST_BYTES_MAX, SIGNATURES_BYTES_MAX,
};

use crate::checked::CheckedFile;
use crate::error::{PluginError, PrecompiledRefusal};
use crate::files::write_replacing;
use crate::manifest::{
    ComponentEntry, MANIFEST_FILE, MANIFEST_FORMAT, NARRATOR_COMPONENT, PluginManifest,
};
use crate::signing::{
    SIGNATURES_FILE, SIGNATURES_FORMAT, Signatures, SigningError, TrustedKeys, Verifier,
    component_message, manifest_message, read_key,
};

/// A plugins dir, opened with cap-std: nothing outside it can be reached through it.
#[derive(Debug)]
pub struct PluginsDir {
    path: PathBuf,
    dir: Dir,
    manifest: PluginManifest,
    /// The manifest's bytes as read (what its signature signs).
    manifest_bytes: Vec<u8>,
    /// The dir's verified signatures, when the host requires them.
    verifier: Option<Verifier>,
}

impl PluginsDir {
    /// Opens `path` and reads its manifest; with `trusted` keys, refuses the dir unless its
    /// manifest is signed by one of them ([`crate::signing`]).
    pub fn open(path: &Path, trusted: &TrustedKeys) -> Result<Self, PluginError> {
        let dir =
            Dir::open_ambient_dir(path, ambient_authority()).map_err(|source| PluginError::Io {
                path: path.to_owned(),
                source,
            })?;
        let manifest_path = path.join(MANIFEST_FILE);
        let text = read_bounded(
            &dir,
            MANIFEST_FILE,
            &manifest_path,
            PLUGIN_MANIFEST_BYTES_MAX,
        )?;
        let bad = |message: String| PluginError::BadManifest {
            path: manifest_path.clone(),
            message,
        };
        let manifest: PluginManifest =
            serde_json::from_slice(&text).map_err(|e| bad(e.to_string()))?;
        if manifest.format != MANIFEST_FORMAT {
            return Err(bad(format!(
                "format is `{}`, this host reads `{MANIFEST_FORMAT}`",
                manifest.format
            )));
        }
        let narrator = manifest.narrator.iter().map(|e| (NARRATOR_COMPONENT, e));
        let agents = manifest.components.iter().map(|(a, e)| (a.as_str(), e));
        for (agent, entry) in agents.chain(narrator) {
            let plain_name = !entry.file.is_empty()
                && !entry.file.contains(['/', '\\'])
                && entry.file != "."
                && entry.file != "..";
            if !plain_name {
                return Err(bad(format!(
                    "component file for `{agent}` must be a plain file name"
                )));
            }
        }
        let signatures = match trusted.is_empty() {
            true => None,
            false => match dir.try_exists(SIGNATURES_FILE) {
                Ok(true) => Some(read_bounded(
                    &dir,
                    SIGNATURES_FILE,
                    &path.join(SIGNATURES_FILE),
                    SIGNATURES_BYTES_MAX,
                )?),
                _ => None,
            },
        };
        let verifier = trusted.verifier(path, &text, signatures.as_deref())?;
        Ok(Self {
            path: path.to_owned(),
            dir,
            manifest,
            manifest_bytes: text,
            verifier,
        })
    }

    /// The manifest's bytes as read.
    pub fn manifest_bytes(&self) -> &[u8] {
        &self.manifest_bytes
    }

    /// Refuses `agent`'s component, hashed to `sha256`, unless its signature verifies (when
    /// the host requires signatures).
    fn verify_signature(&self, agent: &str, sha256: &str) -> Result<(), PluginError> {
        match &self.verifier {
            Some(verifier) => verifier.verify_component(agent, sha256),
            None => Ok(()),
        }
    }

    /// The manifest.
    pub fn manifest(&self) -> &PluginManifest {
        &self.manifest
    }

    /// The plugins dir's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Which of `runnable` (the targets this host can run, its own architecture first) the
    /// dir's components are for; refuses a dir precompiled for another target or by another
    /// wasmtime than `wasmtime_version`, and, unless `can_compile`, plain components.
    pub fn target_among<'a>(
        &self,
        runnable: &[&'a str],
        wasmtime_version: &str,
        can_compile: bool,
    ) -> Result<&'a str, PluginError> {
        let refuse = |refusal| PluginError::Precompiled {
            path: self.path.clone(),
            refusal,
        };
        let native = runnable.first().copied().unwrap_or_default();
        let Some(precompiled) = &self.manifest.precompiled else {
            if can_compile {
                return Ok(native);
            }
            return Err(refuse(PrecompiledRefusal::NotPrecompiled {
                expected: native.to_owned(),
            }));
        };
        let Some(target) = runnable.iter().find(|&&t| t == precompiled.target) else {
            return Err(refuse(PrecompiledRefusal::WrongTarget {
                found: precompiled.target.clone(),
                expected: runnable.join(" or "),
            }));
        };
        if precompiled.wasmtime != wasmtime_version {
            return Err(refuse(PrecompiledRefusal::WasmtimeVersion {
                found: precompiled.wasmtime.clone(),
                expected: wasmtime_version.to_owned(),
            }));
        }
        Ok(target)
    }

    /// Opens `agent`'s component and hashes it, keeping it open, refusing it unless its
    /// sha256 matches the manifest: for code that is mapped rather than read (a precompiled
    /// component), or for checking a component whose code comes from the compilation cache.
    pub fn check_component(&self, agent: &str) -> Result<CheckedFile, PluginError> {
        let entry = self.entry(agent)?;
        let bytes_max = match self.manifest.precompiled {
            Some(_) => COMPILED_BYTES_MAX,
            None => component_bytes_max(agent),
        };
        self.check_entry(agent, entry, bytes_max)
    }

    /// [`Self::check_component`] for the narrator's component, within its own bounds
    /// ([`NARRATOR_COMPONENT_BYTES_MAX`], [`NARRATOR_COMPILED_BYTES_MAX`]).
    pub fn check_narrator(&self) -> Result<CheckedFile, PluginError> {
        let entry = self.narrator_entry()?;
        let bytes_max = match self.manifest.precompiled {
            Some(_) => NARRATOR_COMPILED_BYTES_MAX,
            None => NARRATOR_COMPONENT_BYTES_MAX,
        };
        self.check_entry(NARRATOR_COMPONENT, entry, bytes_max)
    }

    /// [`Self::read_component`] for the narrator's component.
    pub fn read_narrator(&self) -> Result<Vec<u8>, PluginError> {
        let entry = self.narrator_entry()?;
        self.read_entry(NARRATOR_COMPONENT, entry, NARRATOR_COMPONENT_BYTES_MAX)
    }

    fn narrator_entry(&self) -> Result<&ComponentEntry, PluginError> {
        self.manifest
            .narrator
            .as_ref()
            .ok_or_else(|| PluginError::NotInManifest {
                agent: NARRATOR_COMPONENT.to_owned(),
            })
    }

    fn check_entry(
        &self,
        agent: &str,
        entry: &ComponentEntry,
        bytes_max: u64,
    ) -> Result<CheckedFile, PluginError> {
        let path = self.path.join(&entry.file);
        let file = self
            .dir
            .open(&entry.file)
            .map_err(|source| PluginError::Io {
                path: path.clone(),
                source,
            })?
            .into_std();
        let mut checked = CheckedFile::hash(file, path, bytes_max)?;
        self.verify_signature(agent, checked.sha256())?;
        checked.signed = self.verifier.is_some();
        if checked.sha256() != entry.sha256 {
            return Err(PluginError::DigestMismatch {
                agent: agent.to_owned(),
                expected: entry.sha256.clone(),
                actual: checked.sha256,
            });
        }
        Ok(checked)
    }

    fn entry(&self, agent: &str) -> Result<&ComponentEntry, PluginError> {
        self.manifest
            .components
            .get(agent)
            .ok_or_else(|| PluginError::NotInManifest {
                agent: agent.to_owned(),
            })
    }

    /// Reads `agent`'s component, refusing it unless its sha256 matches the manifest.
    pub fn read_component(&self, agent: &str) -> Result<Vec<u8>, PluginError> {
        let entry = self.entry(agent)?;
        self.read_entry(agent, entry, component_bytes_max(agent))
    }

    fn read_entry(
        &self,
        agent: &str,
        entry: &ComponentEntry,
        bytes_max: u64,
    ) -> Result<Vec<u8>, PluginError> {
        let path = self.path.join(&entry.file);
        let bytes = read_bounded(&self.dir, &entry.file, &path, bytes_max)?;
        let actual = sha256_hex(&bytes);
        self.verify_signature(agent, &actual)?;
        if actual != entry.sha256 {
            return Err(PluginError::DigestMismatch {
                agent: agent.to_owned(),
                expected: entry.sha256.clone(),
                actual,
            });
        }
        Ok(bytes)
    }
}

fn read_bounded(
    dir: &Dir,
    name: &str,
    path: &Path,
    bytes_max: u64,
) -> Result<Vec<u8>, PluginError> {
    let io = |source| PluginError::Io {
        path: path.to_owned(),
        source,
    };
    let file = dir.open(name).map_err(io)?;
    let bytes = file.metadata().map_err(io)?.len();
    if bytes > bytes_max {
        return Err(PluginError::TooLarge {
            path: path.to_owned(),
            bytes,
            bytes_max,
        });
    }
    let mut buffer = Vec::with_capacity(bytes as usize);
    // take(): the file may grow between metadata() and the read.
    file.take(bytes_max + 1)
        .read_to_end(&mut buffer)
        .map_err(io)?;
    if buffer.len() as u64 > bytes_max {
        return Err(PluginError::TooLarge {
            path: path.to_owned(),
            bytes: buffer.len() as u64,
            bytes_max,
        });
    }
    Ok(buffer)
}

/// Signs the plugins dir at `dir` with the key in `key_file`: checks every component against
/// the manifest first (a dir that does not hold what its manifest says is not signed), then
/// writes `signatures.json`. Returns the signer's public key, hex.
pub fn sign_dir(dir: &Path, key_file: &Path) -> Result<String, SigningError> {
    let key = read_key(key_file)?;
    let plugins = PluginsDir::open(dir, &TrustedKeys::none())?;
    let mut components = BTreeMap::new();
    for agent in plugins.manifest().components.keys() {
        let checked = plugins.check_component(agent)?;
        let signature = key.sign(&component_message(agent, checked.sha256()));
        components.insert(agent.clone(), hex(&signature.to_bytes()));
    }
    if plugins.manifest().narrator.is_some() {
        let checked = plugins.check_narrator()?;
        let signature = key.sign(&component_message(NARRATOR_COMPONENT, checked.sha256()));
        components.insert(NARRATOR_COMPONENT.to_owned(), hex(&signature.to_bytes()));
    }
    let manifest = plugins.manifest_bytes();
    let signatures = Signatures {
        format: SIGNATURES_FORMAT.to_owned(),
        key: hex(key.verifying_key().as_bytes()),
        manifest: hex(&key.sign(&manifest_message(manifest)).to_bytes()),
        components,
    };
    let io = |source| PluginError::Io {
        path: dir.join(SIGNATURES_FILE),
        source,
    };
    let text =
        serde_json::to_string_pretty(&signatures).map_err(|e| io(std::io::Error::other(e)))? + "\n";
    write_replacing(&dir.join(SIGNATURES_FILE), text.as_bytes()).map_err(io)?;
    Ok(signatures.key)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::write_components;

    fn plugins_dir(name: &str, manifest: &str, files: &[(&str, &[u8])]) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("aura-plugins-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(MANIFEST_FILE), manifest).unwrap();
        for (file, bytes) in files {
            std::fs::write(dir.join(file), bytes).unwrap();
        }
        dir
    }

    #[test]
    fn a_matching_digest_is_accepted_and_a_tampered_file_refused() {
        let manifest = format!(
            r#"{{"format":"aura-plugins.v1","components":{{"calendar":{{"file":"calendar.wasm","sha256":"{}","bytes":3}}}}}}"#,
            sha256_hex(b"abc")
        );
        let dir = plugins_dir("digest", &manifest, &[("calendar.wasm", b"abc")]);
        let plugins = PluginsDir::open(&dir, &TrustedKeys::none()).unwrap();
        assert_eq!(plugins.read_component("calendar").unwrap(), b"abc");
        std::fs::write(dir.join("calendar.wasm"), b"abd").unwrap();
        assert!(matches!(
            plugins.read_component("calendar"),
            Err(PluginError::DigestMismatch { .. })
        ));
        assert!(matches!(
            plugins.read_component("comms"),
            Err(PluginError::NotInManifest { .. })
        ));
    }

    #[test]
    fn written_components_read_back_by_digest() {
        let dir = std::env::temp_dir().join(format!("aura-plugins-written-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let manifest = write_components(&dir, &[("wellness", b"abc".to_vec())]).unwrap();
        let entry = &manifest.components["wellness"];
        assert_eq!(entry.file, "wellness.wasm");
        // FIPS 180-2, appendix B.1 (as above).
        assert_eq!(
            entry.sha256,
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!((entry.bytes, &entry.source_sha256), (3, &None));
        let plugins = PluginsDir::open(&dir, &TrustedKeys::none()).unwrap();
        assert_eq!(plugins.manifest().precompiled, None);
        assert_eq!(plugins.read_component("wellness").unwrap(), b"abc");
    }

    #[test]
    fn a_manifest_cannot_point_outside_the_dir() {
        let manifest = r#"{"format":"aura-plugins.v1","components":{"calendar":{"file":"../x.wasm","sha256":"00","bytes":1}}}"#;
        let dir = plugins_dir("escape", manifest, &[]);
        assert!(matches!(
            PluginsDir::open(&dir, &TrustedKeys::none()),
            Err(PluginError::BadManifest { .. })
        ));
        let manifest = r#"{"format":"other","components":{}}"#;
        let dir = plugins_dir("format", manifest, &[]);
        assert!(matches!(
            PluginsDir::open(&dir, &TrustedKeys::none()),
            Err(PluginError::BadManifest { .. })
        ));
    }

    #[test]
    fn a_dir_is_matched_to_the_target_it_was_precompiled_for() {
        let plain = r#"{"format":"aura-plugins.v1","components":{}}"#;
        let dir =
            PluginsDir::open(&plugins_dir("plain", plain, &[]), &TrustedKeys::none()).unwrap();
        let runnable = ["aarch64-unknown-linux-musl", "pulley64"];
        // A host that compiles takes plain components for its own architecture...
        assert_eq!(
            dir.target_among(&runnable, "48.0.8", true).unwrap(),
            "aarch64-unknown-linux-musl"
        );
        // ...a runtime-only host refuses them, naming the command that fixes it.
        let error = dir.target_among(&runnable, "48.0.8", false).unwrap_err();
        assert!(matches!(
            &error,
            PluginError::Precompiled {
                refusal: PrecompiledRefusal::NotPrecompiled { expected },
                ..
            } if expected == "aarch64-unknown-linux-musl"
        ));
        assert!(
            error
                .to_string()
                .contains("aura compile --target aarch64-unknown-linux-musl"),
            "{error}"
        );

        let pulley = r#"{"format":"aura-plugins.v1","precompiled":{"target":"pulley64","wasmtime":"48.0.8"},"components":{}}"#;
        let dir =
            PluginsDir::open(&plugins_dir("pulley", pulley, &[]), &TrustedKeys::none()).unwrap();
        assert_eq!(
            dir.target_among(&runnable, "48.0.8", false).unwrap(),
            "pulley64"
        );
        assert!(matches!(
            dir.target_among(&runnable[..1], "48.0.8", false),
            Err(PluginError::Precompiled {
                refusal: PrecompiledRefusal::WrongTarget { .. },
                ..
            })
        ));
        assert!(matches!(
            dir.target_among(&runnable, "48.0.9", false),
            Err(PluginError::Precompiled {
                refusal: PrecompiledRefusal::WasmtimeVersion { .. },
                ..
            })
        ));
    }
}
