//! Provenance of the code the host runs: ed25519 signatures over the plugins manifest and
//! over each component's sha256, checked against public keys locked into the build.
//!
//! It owns the trusted keys (compiled in from `AURA_TRUSTED_KEYS` at build time: hex public
//! keys, comma or space separated; none means signatures are not required, as before), the
//! signed messages (domain-separated: a signature over a manifest never verifies as one over a
//! component, nor one agent's as another's), `<plugins-dir>/signatures.json`
//! (`aura-signatures.v1`), key files (`aura-key.v1`, written by `aura keygen`), signing a
//! plugins dir (`aura sign`) and verifying one. With a key configured, a plugins dir (plain
//! .wasm or precompiled .cwasm) is refused unless its manifest is signed by a trusted key, and
//! each component unless its own signature verifies over the sha256 of the bytes actually
//! read: unsigned, signed by another key, or altered after signing each has its own error.
//! [`crate::PluginsDir`] calls it after hashing a file and before handing out any byte of it, so
//! nothing unsigned is ever compiled or mapped executable: a signed .cwasm is loaded from the
//! bytes hashed in memory, not mapped by path, and a host with keys keeps no compilation cache
//! (whose entries are not signed). A signature has no version: an older signed dir still
//! verifies (no rollback protection). The same keys and files are a host's identity on the
//! wire ([`Identity`]: a worker signs its answers with it, and a client checks the signer
//! against the workers it trusts with [`TrustedKeys::check`]); the messages signed there are
//! the wire's. It must not read components itself nor decide which agents exist.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use ed25519_dalek::{Signature, SigningKey, VerifyingKey};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use aura_contract::digest::hex;

use crate::error::PluginError;

/// The signatures file inside a plugins dir.
pub const SIGNATURES_FILE: &str = "signatures.json";

/// The signatures file's format.
pub const SIGNATURES_FORMAT: &str = "aura-signatures.v1";

/// A key file's format.
pub const KEY_FORMAT: &str = "aura-key.v1";

/// The keys compiled into this build (`AURA_TRUSTED_KEYS` when it was built).
const COMPILED_KEYS: &str = match option_env!("AURA_TRUSTED_KEYS") {
    Some(keys) => keys,
    None => "",
};

/// Public keys whose signatures the host accepts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TrustedKeys(Vec<VerifyingKey>);

/// Why keys, a key file or signatures could not be used.
#[derive(Debug, thiserror::Error)]
pub enum SigningError {
    /// A public key is not 32 bytes of hex, or not a point of the curve.
    #[error("`{key}` is not an ed25519 public key (64 hex digits): {reason}")]
    BadKey {
        /// The text given.
        key: String,
        /// Why.
        reason: String,
    },
    /// A key file could not be read or written.
    #[error("key file {path}: {reason}")]
    KeyFile {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// The plugins dir could not be read, or does not hold what its manifest says.
    #[error(transparent)]
    Plugins(#[from] PluginError),
}

impl TrustedKeys {
    /// No key: signatures are not required.
    pub fn none() -> Self {
        Self(Vec::new())
    }

    /// The keys locked into this build.
    pub fn compiled_in() -> Result<Self, SigningError> {
        Self::parse(COMPILED_KEYS)
    }

    /// Keys as hex, separated by commas or whitespace.
    pub fn parse(text: &str) -> Result<Self, SigningError> {
        text.split(|c: char| c == ',' || c.is_whitespace())
            .filter(|key| !key.is_empty())
            .map(public_key)
            .collect::<Result<_, _>>()
            .map(Self)
    }

    /// Adds `other`'s keys.
    pub fn extend(&mut self, other: &Self) {
        for key in &other.0 {
            if !self.0.contains(key) {
                self.0.push(*key);
            }
        }
    }

    /// Whether signatures are required.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The verifier of the plugins dir at `path`, whose manifest is `manifest` (the bytes as
    /// read): `None` when no key is configured; refused unless the dir's signatures file is
    /// signed by one of these keys and its manifest signature verifies.
    pub fn verifier(
        &self,
        path: &Path,
        manifest: &[u8],
        signatures: Option<&[u8]>,
    ) -> Result<Option<Verifier>, PluginError> {
        if self.is_empty() {
            return Ok(None);
        }
        let Some(signatures) = signatures else {
            return Err(PluginError::Unsigned {
                path: path.to_owned(),
                what: "its manifest".to_owned(),
            });
        };
        let bad = |message: String| PluginError::BadSignatures {
            path: path.join(SIGNATURES_FILE),
            message,
        };
        let signatures: Signatures =
            serde_json::from_slice(signatures).map_err(|e| bad(e.to_string()))?;
        if signatures.format != SIGNATURES_FORMAT {
            return Err(bad(format!("format `{}`", signatures.format)));
        }
        let key = public_key(&signatures.key).map_err(|e| bad(e.to_string()))?;
        if !self.0.contains(&key) {
            return Err(PluginError::UntrustedKey {
                path: path.to_owned(),
                key: signatures.key,
            });
        }
        let verifier = Verifier {
            path: path.to_owned(),
            key,
            signatures,
        };
        let signature = verifier.signatures.manifest.clone();
        verifier.check(&manifest_message(manifest), &signature, "its manifest")?;
        Ok(Some(verifier))
    }
}

/// Why a signed message was not accepted ([`TrustedKeys::check`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SignatureRefusal {
    /// No signer or no signature came with it.
    #[error("it is not signed")]
    Unsigned,
    /// The signer is not one of the trusted keys (or not a key at all).
    #[error("it is signed by {signer}, a key this host does not trust")]
    UntrustedSigner {
        /// The signer as sent (at most 80 characters of it).
        signer: String,
    },
    /// The signature does not verify over the message by the (trusted) signer.
    #[error("its signature by {signer} does not verify over what it answers")]
    BadSignature {
        /// The signer.
        signer: String,
    },
}

impl TrustedKeys {
    /// Accepts `message` when `signer` (a public key, hex) is one of these keys and
    /// `signature` (hex) verifies over it by that key, strictly (no malleable forms).
    pub fn check(
        &self,
        signer: Option<&str>,
        message: &[u8],
        signature: Option<&str>,
    ) -> Result<(), SignatureRefusal> {
        let (Some(signer), Some(signature)) = (signer, signature) else {
            return Err(SignatureRefusal::Unsigned);
        };
        let shown = || signer.chars().take(80).collect::<String>();
        let key = public_key(signer)
            .ok()
            .filter(|key| self.0.contains(key))
            .ok_or_else(|| SignatureRefusal::UntrustedSigner { signer: shown() })?;
        let bad = || SignatureRefusal::BadSignature { signer: shown() };
        let bytes = decode_hex(signature).ok_or_else(bad)?;
        let signature = Signature::from_slice(&bytes).map_err(|_| bad())?;
        key.verify_strict(message, &signature).map_err(|_| bad())
    }
}

/// A host's signing key: what it signs its answers with on the wire. Loaded from a key file
/// (`aura keygen`); its public half is what others trust.
#[derive(Clone)]
pub struct Identity {
    key: SigningKey,
    public: String,
}

impl std::fmt::Debug for Identity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Identity")
            .field("public", &self.public)
            .finish_non_exhaustive()
    }
}

impl Identity {
    /// The identity in the key file at `path`.
    pub fn load(path: &Path) -> Result<Self, SigningError> {
        read_key(path).map(Self::from_key)
    }

    /// A new identity, held only in memory (a test's, or a process that need not be known
    /// again).
    pub fn generate() -> Result<Self, SigningError> {
        let mut secret = [0u8; 32];
        getrandom::fill(&mut secret).map_err(|e| SigningError::KeyFile {
            path: PathBuf::new(),
            reason: e.to_string(),
        })?;
        Ok(Self::from_key(SigningKey::from_bytes(&secret)))
    }

    fn from_key(key: SigningKey) -> Self {
        let public = hex(key.verifying_key().as_bytes());
        Self { key, public }
    }

    /// Its public key, hex.
    pub fn public(&self) -> &str {
        &self.public
    }

    /// Its signature over `message`, hex.
    pub fn sign(&self, message: &[u8]) -> String {
        hex(&self.sign_bytes(message))
    }

    /// Its signature over `message`, as the 64 bytes RFC 8032 defines.
    pub fn sign_bytes(&self, message: &[u8]) -> [u8; 64] {
        use ed25519_dalek::Signer;
        self.key.sign(message).to_bytes()
    }

    /// Its public key's 32 bytes.
    pub fn public_bytes(&self) -> [u8; 32] {
        self.key.verifying_key().to_bytes()
    }
}

/// `<plugins-dir>/signatures.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Signatures {
    /// Always [`SIGNATURES_FORMAT`].
    pub format: String,
    /// The signer's public key, hex.
    pub key: String,
    /// Signature over the manifest's bytes ([`manifest_message`]), hex.
    pub manifest: String,
    /// Agent → signature over its component's sha256 ([`component_message`]), hex.
    pub components: BTreeMap<String, String>,
}

/// A plugins dir's signatures, its manifest already verified.
#[derive(Debug)]
pub struct Verifier {
    path: PathBuf,
    key: VerifyingKey,
    signatures: Signatures,
}

impl Verifier {
    /// Refuses `agent`'s component unless its signature verifies over `sha256`, the digest
    /// of the bytes the host read (altered after signing: they differ).
    pub fn verify_component(&self, agent: &str, sha256: &str) -> Result<(), PluginError> {
        let what = format!("the component for `{agent}`");
        let Some(signature) = self.signatures.components.get(agent) else {
            return Err(PluginError::Unsigned {
                path: self.path.clone(),
                what,
            });
        };
        self.check(&component_message(agent, sha256), signature, &what)
    }

    fn check(&self, message: &[u8], signature: &str, what: &str) -> Result<(), PluginError> {
        let bad = || PluginError::BadSignature {
            path: self.path.clone(),
            what: what.to_owned(),
        };
        let bytes = decode_hex(signature).ok_or_else(bad)?;
        let signature = Signature::from_slice(&bytes).map_err(|_| bad())?;
        // Strict: no malleable or small-order forms.
        self.key
            .verify_strict(message, &signature)
            .map_err(|_| bad())
    }
}

/// What a manifest's signature signs: a domain tag and the sha256 of its bytes.
pub fn manifest_message(manifest: &[u8]) -> Vec<u8> {
    format!(
        "aura-plugins-manifest.v1\n{}",
        hex(&Sha256::digest(manifest))
    )
    .into_bytes()
}

/// What a component's signature signs: a domain tag, the agent, and the component's sha256.
pub fn component_message(agent: &str, sha256: &str) -> Vec<u8> {
    format!("aura-component.v1\n{agent}\n{sha256}").into_bytes()
}

fn public_key(text: &str) -> Result<VerifyingKey, SigningError> {
    let bad = |reason: &str| SigningError::BadKey {
        key: text.chars().take(80).collect(),
        reason: reason.to_owned(),
    };
    let bytes: [u8; 32] = decode_hex(text)
        .and_then(|b| b.try_into().ok())
        .ok_or_else(|| bad("not 64 hex digits"))?;
    VerifyingKey::from_bytes(&bytes).map_err(|_| bad("not a point of the curve"))
}

/// Lower-case hex digits only: one value has one spelling, so a signature or key cannot be
/// sent again spelled another way (`from_str_radix` alone takes `+f` and upper case).
fn decode_hex(text: &str) -> Option<Vec<u8>> {
    let lower_hex = |b: &u8| b.is_ascii_digit() || (b'a'..=b'f').contains(b);
    if !text.len().is_multiple_of(2) || !text.bytes().all(|b| lower_hex(&b)) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).ok())
        .collect()
}

/// A key file (`aura keygen`).
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct KeyFile {
    format: String,
    secret_key: String,
    public_key: String,
}

/// Writes a new key to `path` (which must not exist; readable by its owner only) and returns
/// its public key, hex.
pub fn keygen(path: &Path) -> Result<String, SigningError> {
    let fail = |reason: String| SigningError::KeyFile {
        path: path.to_owned(),
        reason,
    };
    let mut secret = [0u8; 32];
    getrandom::fill(&mut secret).map_err(|e| fail(e.to_string()))?;
    let key = SigningKey::from_bytes(&secret);
    let public = hex(key.verifying_key().as_bytes());
    let file = KeyFile {
        format: KEY_FORMAT.to_owned(),
        secret_key: hex(&secret),
        public_key: public.clone(),
    };
    let text = serde_json::to_string_pretty(&file).map_err(|e| fail(e.to_string()))? + "\n";
    crate::files::write_secret(path, text.as_bytes()).map_err(|e| fail(e.to_string()))?;
    Ok(public)
}

pub(crate) fn read_key(path: &Path) -> Result<SigningKey, SigningError> {
    let fail = |reason: String| SigningError::KeyFile {
        path: path.to_owned(),
        reason,
    };
    let text = std::fs::read_to_string(path).map_err(|e| fail(e.to_string()))?;
    let file: KeyFile = serde_json::from_str(&text).map_err(|e| fail(e.to_string()))?;
    if file.format != KEY_FORMAT {
        return Err(fail(format!("format `{}`", file.format)));
    }
    let secret: [u8; 32] = decode_hex(&file.secret_key)
        .and_then(|b| b.try_into().ok())
        .ok_or_else(|| fail("secret_key is not 64 hex digits".to_owned()))?;
    let key = SigningKey::from_bytes(&secret);
    if hex(key.verifying_key().as_bytes()) != file.public_key {
        return Err(fail("public_key is not the secret key's".to_owned()));
    }
    Ok(key)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ed25519_dalek::Signer;

    /// A host identity signs; a trusted key's signature is checked strictly, and an
    /// untrusted signer, a bad signature or none at all is each refused by name.
    #[test]
    fn an_identity_signs_and_only_trusted_signers_are_accepted() {
        let identity = Identity::generate().unwrap();
        let trusted = TrustedKeys::parse(identity.public()).unwrap();
        let signature = identity.sign(b"message");
        assert_eq!(
            trusted.check(Some(identity.public()), b"message", Some(&signature)),
            Ok(())
        );
        assert_eq!(
            trusted.check(Some(identity.public()), b"other", Some(&signature)),
            Err(SignatureRefusal::BadSignature {
                signer: identity.public().to_owned()
            })
        );
        assert_eq!(
            trusted.check(Some(identity.public()), b"message", Some("zz")),
            Err(SignatureRefusal::BadSignature {
                signer: identity.public().to_owned()
            })
        );
        let stranger = Identity::generate().unwrap();
        assert_eq!(
            trusted.check(
                Some(stranger.public()),
                b"message",
                Some(&stranger.sign(b"message"))
            ),
            Err(SignatureRefusal::UntrustedSigner {
                signer: stranger.public().to_owned()
            })
        );
        assert_eq!(
            trusted.check(None, b"message", Some(&signature)),
            Err(SignatureRefusal::Unsigned)
        );
        // A key file written by keygen is the same identity when loaded.
        let dir = std::env::temp_dir().join(format!("aura-identity-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let public = keygen(&dir.join("host.key")).unwrap();
        assert_eq!(
            Identity::load(&dir.join("host.key")).unwrap().public(),
            public
        );
        assert!(!format!("{identity:?}").contains("secret"));
    }

    /// RFC 8032 §7.1, TEST 1: the empty message under the first test key.
    #[test]
    fn verification_is_ed25519_as_rfc_8032_defines_it() {
        let public = "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a";
        let signature = "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e06522490155\
                         5fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b";
        let key = public_key(public).unwrap();
        let signature = Signature::from_slice(&decode_hex(signature).unwrap()).unwrap();
        key.verify_strict(b"", &signature).unwrap();
        assert!(key.verify_strict(b"x", &signature).is_err());
        let secret = "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60";
        let signing = SigningKey::from_bytes(&decode_hex(secret).unwrap().try_into().unwrap());
        assert_eq!(hex(signing.verifying_key().as_bytes()), public);
    }

    #[test]
    fn keys_parse_from_the_build_setting() {
        assert!(TrustedKeys::parse("").unwrap().is_empty());
        let one = "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a";
        let two = "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c";
        assert_eq!(
            TrustedKeys::parse(&format!("{one}, {two}\n"))
                .unwrap()
                .0
                .len(),
            2
        );
        assert!(matches!(
            TrustedKeys::parse("abc"),
            Err(SigningError::BadKey { .. })
        ));
        // This build's own setting parses (empty unless AURA_TRUSTED_KEYS was set).
        TrustedKeys::compiled_in().unwrap();
    }

    #[test]
    fn a_signature_binds_its_domain_and_its_agent() {
        let key = SigningKey::from_bytes(&[7u8; 32]);
        let digest = "ab".repeat(32);
        let signature = key.sign(&component_message("calendar", &digest));
        let verifying = key.verifying_key();
        assert!(
            verifying
                .verify_strict(&component_message("calendar", &digest), &signature)
                .is_ok()
        );
        assert!(
            verifying
                .verify_strict(&component_message("comms", &digest), &signature)
                .is_err()
        );
        assert!(
            verifying
                .verify_strict(&manifest_message(digest.as_bytes()), &signature)
                .is_err()
        );
    }
}
