//! Why a plugin could not be read or was refused: the plugins crate's one error type.
//!
//! It owns naming every refusal of a file on disk (a bad manifest, a digest that does not match,
//! a signature that does not verify, a precompiled dir made for another target). It must not
//! decide anything itself.

use std::path::PathBuf;

/// Why a plugin could not be read or was refused.
#[derive(Debug, thiserror::Error)]
pub enum PluginError {
    /// The plugins dir or a file in it could not be read.
    #[error("cannot read {path}")]
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
