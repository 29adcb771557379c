//! Plugins on disk: `plugins/manifest.json` and the component files it lists by digest.
//!
//! It owns reading the manifest and the component bytes through cap-std, bounded in size, and
//! refusing any component whose sha256 is not the one the manifest records, and any
//! precompiled dir (`plugins/<target>/`, .cwasm) made for another target or wasmtime; a file
//! checked by its digest and kept open ([`CheckedFile`]), so code that is mapped rather than
//! read is the very file that was checked; and writing a dir's files and manifest (for
//! `aura compile`, tests and benchmarks), each file replaced whole by a rename, never rewritten
//! in place under a host that maps it. It must not compile or run anything (the sandbox does)
//! and must not decide which agents exist (the catalogue does).

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use cap_std::ambient_authority;
use cap_std::fs::Dir;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::limits::{
    COMPILED_BYTES_MAX, COMPONENT_BYTES_MAX, HASH_CHUNK_BYTES, PLUGIN_MANIFEST_BYTES_MAX,
    SIGNATURES_BYTES_MAX,
};

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
}

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

/// Why a plugin could not be read or was refused.
#[derive(Debug, thiserror::Error)]
pub enum PluginError {
    /// The plugins dir or a file in it could not be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The path.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// manifest.json is not a valid plugin manifest.
    #[error("{path} is not a valid plugin manifest: {message}")]
    BadManifest {
        /// The manifest's path.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// The manifest has no entry for the agent.
    #[error("plugin manifest has no component for agent `{agent}`")]
    NotInManifest {
        /// The agent.
        agent: String,
    },
    /// A file is larger than the host reads.
    #[error("{path} is {bytes} bytes, more than the {bytes_max} the host reads")]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// Its size.
        bytes: u64,
        /// The bound.
        bytes_max: u64,
    },
    /// The plugins dir is precompiled for something this host is not.
    #[error("refusing plugins dir {path}: {refusal}")]
    Precompiled {
        /// The plugins dir.
        path: PathBuf,
        /// Why.
        refusal: PrecompiledRefusal,
    },
    /// A checked file no longer has the digest it was checked with when read again.
    #[error("{path} changed after it was checked")]
    Changed {
        /// The file.
        path: PathBuf,
    },
    /// A key is configured and what should be signed is not.
    #[error("refusing {what} in {path}: it is not signed, and this host runs only signed plugins")]
    Unsigned {
        /// The plugins dir.
        path: PathBuf,
        /// The manifest, or which agent's component.
        what: String,
    },
    /// The plugins dir is signed by a key this host does not trust.
    #[error(
        "refusing plugins dir {path}: it is signed by key {key}, which this host does not trust"
    )]
    UntrustedKey {
        /// The plugins dir.
        path: PathBuf,
        /// The signer's public key, hex.
        key: String,
    },
    /// A signature does not verify: the manifest or the component was altered after signing
    /// (or the signature was).
    #[error("refusing {what} in {path}: its signature does not verify (altered after signing)")]
    BadSignature {
        /// The plugins dir.
        path: PathBuf,
        /// The manifest, or which agent's component.
        what: String,
    },
    /// The signatures file is not one this host reads.
    #[error("{path} is not a valid signatures file: {message}")]
    BadSignatures {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// The component's digest is not the one in the manifest.
    #[error(
        "refusing component for `{agent}`: sha256 {actual} does not match the manifest's {expected}"
    )]
    DigestMismatch {
        /// The agent.
        agent: String,
        /// The manifest's digest.
        expected: String,
        /// The file's digest.
        actual: String,
    },
}

/// Why a precompiled plugins dir does not fit this host, before any file in it is read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PrecompiledRefusal {
    /// Compiled for another target.
    #[error("its components are precompiled for `{found}`, this host runs `{expected}`")]
    WrongTarget {
        /// What the manifest says.
        found: String,
        /// What this host runs.
        expected: String,
    },
    /// Compiled by another wasmtime.
    #[error("its components were precompiled by wasmtime {found}, this host embeds {expected}")]
    WasmtimeVersion {
        /// What the manifest says.
        found: String,
        /// This host's wasmtime.
        expected: String,
    },
    /// Plain components, but this host cannot compile.
    #[error(
        "its components are not precompiled and this host has no compiler (precompile them \
         with `aura compile --target {expected}`)"
    )]
    NotPrecompiled {
        /// What this host runs.
        expected: String,
    },
}

/// Writes precompiled components and their manifest into `out` (created if needed): each
/// `(agent, file, source_sha256, bytes)` becomes `out/<file>` with its sha256 recorded. The
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
    for (agent, file, source_sha256, bytes) in components {
        let path = out.join(&file);
        write_replacing(&path, bytes).map_err(io(&path))?;
        entries.insert(
            agent.to_owned(),
            ComponentEntry {
                file,
                sha256: sha256_hex(bytes),
                bytes: bytes.len() as u64,
                source_sha256: source_sha256.map(str::to_owned),
            },
        );
    }
    let manifest = PluginManifest {
        format: MANIFEST_FORMAT.to_owned(),
        precompiled,
        components: entries,
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

/// Writes `bytes` to `path` by a temporary file in the same dir, synced, then renamed over
/// it: a host that has the old file open (or mapped, as precompiled code is) keeps it whole,
/// and a reader never sees half a file.
pub fn write_replacing(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let tmp = path.with_file_name(format!(
        ".{name}.{}.{}.tmp",
        std::process::id(),
        unique_suffix()
    ));
    let written = (|| {
        let mut file = std::fs::File::create_new(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

/// A number no other temporary file of this process has used.
fn unique_suffix() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// The largest component file of `agent` the host reads: its catalogue entry's bound, or
/// [`COMPONENT_BYTES_MAX`] for a name outside the catalogue.
pub fn component_bytes_max(agent: &str) -> u64 {
    crate::catalogue::agent(agent).map_or(COMPONENT_BYTES_MAX, |spec| spec.component_bytes_max)
}

/// Reads the file at `path`, at most `bound` + 1 bytes: a result longer than `bound` says
/// the file is too large without reading it all (a component given on a command line, before
/// it is written into a plugins dir).
pub fn read_at_most(path: &Path, bound: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::fs::File::open(path)?
        .take(bound.saturating_add(1))
        .read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// Lower-case hex sha256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// Lower-case hex of a digest.
pub(crate) fn hex(digest: &[u8]) -> String {
    use std::fmt::Write;
    digest
        .iter()
        .fold(String::with_capacity(64), |mut hex, byte| {
            let _ = write!(hex, "{byte:02x}");
            hex
        })
}

/// A file hashed through the handle the host keeps open: what is later mapped from it (by
/// [`CheckedFile::mappable_path`]) is the inode that was checked, even if the name is given to
/// another file by a rename in between. Writers this project controls never rewrite such a file
/// in place ([`write_replacing`]); a process that did, with write access to the dir, could
/// equally rewrite the manifest, and is outside what a digest defends against.
#[derive(Debug)]
pub struct CheckedFile {
    path: PathBuf,
    file: std::fs::File,
    sha256: String,
    bytes: u64,
    /// Its signature was verified: its code must come from bytes read and hashed in
    /// memory, never mapped by path (a file rewritten in place after the check would run).
    signed: bool,
}

impl CheckedFile {
    /// Hashes `file` (named `path` in messages) from its start, refusing one over `bytes_max`.
    pub fn hash(file: std::fs::File, path: PathBuf, bytes_max: u64) -> Result<Self, PluginError> {
        use std::io::Seek;
        let io = |source| PluginError::Io {
            path: path.clone(),
            source,
        };
        let mut reader = &file;
        reader.seek(std::io::SeekFrom::Start(0)).map_err(io)?;
        let mut hasher = Sha256::new();
        let mut chunk = vec![0u8; HASH_CHUNK_BYTES];
        let mut bytes = 0u64;
        loop {
            let read = match reader.read(&mut chunk) {
                Ok(0) => break,
                Ok(read) => read,
                Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(error) => return Err(io(error)),
            };
            bytes += read as u64;
            if bytes > bytes_max {
                return Err(PluginError::TooLarge {
                    path,
                    bytes,
                    bytes_max,
                });
            }
            hasher.update(&chunk[..read]);
        }
        Ok(Self {
            sha256: hex(&hasher.finalize()),
            path,
            file,
            bytes,
            signed: false,
        })
    }

    /// The file's path, for messages.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Lower-case hex sha256 of the bytes it held when it was hashed.
    pub fn sha256(&self) -> &str {
        &self.sha256
    }

    /// Its size when it was hashed.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// The open file.
    pub fn file(&self) -> &std::fs::File {
        &self.file
    }

    /// A path that opens this very file (the kept handle's `/proc/self/fd` entry), for a
    /// loader that maps a file by path; `None` where the platform has no such path, and for a
    /// signed file (loaded from the bytes [`Self::read_checked`] hashed again in memory).
    pub fn mappable_path(&self) -> Option<PathBuf> {
        if self.signed {
            return None;
        }
        #[cfg(any(target_os = "linux", target_os = "android"))]
        {
            use std::os::fd::AsRawFd;
            let path = PathBuf::from(format!("/proc/self/fd/{}", self.file.as_raw_fd()));
            if path.exists() {
                return Some(path);
            }
        }
        None
    }

    /// Reads the whole file again and checks it still has the digest it was checked with: for
    /// a loader that needs the bytes (no [`Self::mappable_path`]).
    pub fn read_checked(&self) -> Result<Vec<u8>, PluginError> {
        use std::io::Seek;
        let io = |source| PluginError::Io {
            path: self.path.clone(),
            source,
        };
        let mut reader = &self.file;
        reader.seek(std::io::SeekFrom::Start(0)).map_err(io)?;
        let mut buffer = Vec::with_capacity(self.bytes as usize);
        reader
            .take(self.bytes + 1)
            .read_to_end(&mut buffer)
            .map_err(io)?;
        let actual = sha256_hex(&buffer);
        if actual != self.sha256 {
            return Err(PluginError::Changed {
                path: self.path.clone(),
            });
        }
        Ok(buffer)
    }
}

/// A plugins dir, opened with cap-std: nothing outside it can be reached through it.
#[derive(Debug)]
pub struct PluginsDir {
    path: PathBuf,
    dir: Dir,
    manifest: PluginManifest,
    /// The manifest's bytes as read (what its signature signs).
    manifest_bytes: Vec<u8>,
    /// The dir's verified signatures, when the host requires them.
    verifier: Option<crate::signing::Verifier>,
}

impl PluginsDir {
    /// Opens `path` and reads its manifest; with `trusted` keys, refuses the dir unless its
    /// manifest is signed by one of them ([`crate::signing`]).
    pub fn open(path: &Path, trusted: &crate::signing::TrustedKeys) -> Result<Self, PluginError> {
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
        for (agent, entry) in &manifest.components {
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
            false => match dir.try_exists(crate::signing::SIGNATURES_FILE) {
                Ok(true) => Some(read_bounded(
                    &dir,
                    crate::signing::SIGNATURES_FILE,
                    &path.join(crate::signing::SIGNATURES_FILE),
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
        let path = self.path.join(&entry.file);
        let file = self
            .dir
            .open(&entry.file)
            .map_err(|source| PluginError::Io {
                path: path.clone(),
                source,
            })?
            .into_std();
        let bytes_max = match self.manifest.precompiled {
            Some(_) => COMPILED_BYTES_MAX,
            None => component_bytes_max(agent),
        };
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
        let path = self.path.join(&entry.file);
        let bytes = read_bounded(&self.dir, &entry.file, &path, component_bytes_max(agent))?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha256_of_abc_matches_fips_180_2() {
        // FIPS 180-2, appendix B.1.
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

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
        let plugins = PluginsDir::open(&dir, &crate::signing::TrustedKeys::none()).unwrap();
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
        let plugins = PluginsDir::open(&dir, &crate::signing::TrustedKeys::none()).unwrap();
        assert_eq!(plugins.manifest().precompiled, None);
        assert_eq!(plugins.read_component("wellness").unwrap(), b"abc");
    }

    #[test]
    fn a_manifest_cannot_point_outside_the_dir() {
        let manifest = r#"{"format":"aura-plugins.v1","components":{"calendar":{"file":"../x.wasm","sha256":"00","bytes":1}}}"#;
        let dir = plugins_dir("escape", manifest, &[]);
        assert!(matches!(
            PluginsDir::open(&dir, &crate::signing::TrustedKeys::none()),
            Err(PluginError::BadManifest { .. })
        ));
        let manifest = r#"{"format":"other","components":{}}"#;
        let dir = plugins_dir("format", manifest, &[]);
        assert!(matches!(
            PluginsDir::open(&dir, &crate::signing::TrustedKeys::none()),
            Err(PluginError::BadManifest { .. })
        ));
    }

    #[test]
    fn a_dir_is_matched_to_the_target_it_was_precompiled_for() {
        let plain = r#"{"format":"aura-plugins.v1","components":{}}"#;
        let dir = PluginsDir::open(
            &plugins_dir("plain", plain, &[]),
            &crate::signing::TrustedKeys::none(),
        )
        .unwrap();
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
        let dir = PluginsDir::open(
            &plugins_dir("pulley", pulley, &[]),
            &crate::signing::TrustedKeys::none(),
        )
        .unwrap();
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
