//! Who a process is to the nats-server and how it knows the server is the right one: the
//! credentials and TLS of a connection ([`NatsAccess`]).
//!
//! It owns reading them from what a command was given ([`NatsOptions`]: `--nats` and its
//! options, or their `AURA_NATS_*` environment equivalents): a `.creds` file (a user JWT and
//! its nkey seed), an nkey seed file, a user and password or a token (also from the URL's
//! userinfo, the NATS way: `nats://user:password@host`, `nats://token@host`), and TLS (a CA to
//! trust, a client certificate, `tls://` or `--nats-tls` to require it). At most one kind of
//! credentials is taken: two are refused, never silently merged. It also carries who the
//! process is on the wire and whom it believes ([`Provenance`]: its identity key, the trusted
//! workers' keys), read with the rest. Secrets are never shown: a
//! [`NatsAccess`] displays its URLs without their userinfo, and its `Debug` hides them. It must
//! not decide what a role may do: the nats-server's permissions do (`deploy/nats/`).

use aura_contract::caused::Caused;
use std::fmt;
use std::path::{Path, PathBuf};

use aura_contract::limits::NATS_CREDENTIALS_BYTES_MAX;
use aura_plugins::signing::{Identity, TrustedKeys};

use crate::provenance::Provenance;

/// What a command was given to reach the nats-server, before it is checked.
#[derive(Clone, Default)]
pub struct NatsOptions {
    /// One server URL or several, comma-separated (`nats://`, `tls://`), perhaps with
    /// credentials in the userinfo.
    pub url: String,
    /// A `.creds` file: a user JWT and its nkey seed (what `nsc` writes).
    pub creds: Option<PathBuf>,
    /// A file holding a user's nkey seed (`SU…`; `aura keygen --nkey` writes one).
    pub nkey: Option<PathBuf>,
    /// A user name (its password in [`NatsOptions::password`]).
    pub user: Option<String>,
    /// The user's password.
    pub password: Option<String>,
    /// A token.
    pub token: Option<String>,
    /// A PEM file of the CAs that may sign the server's certificate (instead of the system's).
    pub tls_ca: Option<PathBuf>,
    /// This process's certificate chain (PEM), for a server that verifies clients (mTLS).
    pub tls_cert: Option<PathBuf>,
    /// Its private key (PEM).
    pub tls_key: Option<PathBuf>,
    /// Require TLS even with a `nats://` URL and no CA or certificate given.
    pub tls: bool,
    /// This host's identity: an `aura keygen` key file a worker signs its answers with.
    pub identity: Option<PathBuf>,
    /// The workers whose answers are believed: public keys, hex, comma or space separated.
    pub trusted_workers: Option<String>,
    /// The fronts whose proofs of a user's yes a worker takes: public keys, as above.
    pub trusted_fronts: Option<String>,
}

impl fmt::Debug for NatsOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NatsOptions")
            .field("url", &shown_urls(&self.url))
            .field("creds", &self.creds)
            .field("nkey", &self.nkey)
            .field("user", &self.user)
            .field("password", &self.password.as_ref().map(|_| HIDDEN))
            .field("token", &self.token.as_ref().map(|_| HIDDEN))
            .field("tls_ca", &self.tls_ca)
            .field("tls_cert", &self.tls_cert)
            .field("tls_key", &self.tls_key)
            .field("tls", &self.tls)
            .field("identity", &self.identity)
            .field("trusted_workers", &self.trusted_workers)
            .field("trusted_fronts", &self.trusted_fronts)
            .finish()
    }
}

/// What a secret is shown as.
const HIDDEN: &str = "<hidden>";

/// A connection's checked credentials and TLS, ready to connect with.
#[derive(Clone)]
pub struct NatsAccess {
    /// The servers, without userinfo.
    servers: Vec<url::Url>,
    credentials: Credentials,
    tls: Tls,
    provenance: Provenance,
}

/// The one kind of credentials a connection presents.
#[derive(Clone, PartialEq, Eq)]
enum Credentials {
    /// None: an anonymous connection (a server with authorization refuses it).
    Anonymous,
    /// A user name and password.
    UserPassword { user: String, password: String },
    /// A token.
    Token(String),
    /// An nkey seed: the server sends a nonce, the seed signs it.
    Nkey(String),
    /// A `.creds` file's text: a user JWT and the seed that signs the nonce.
    Creds(String),
}

impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.kind())
    }
}

impl Credentials {
    /// What kind they are, as an error names them.
    fn kind(&self) -> &'static str {
        match self {
            Credentials::Anonymous => "none",
            Credentials::UserPassword { .. } => "a user and password",
            Credentials::Token(_) => "a token",
            Credentials::Nkey(_) => "an nkey seed",
            Credentials::Creds(_) => "a .creds file",
        }
    }
}

/// TLS settings.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Tls {
    ca: Option<PathBuf>,
    client: Option<(PathBuf, PathBuf)>,
    required: bool,
}

/// Why what a command was given cannot reach a server.
#[derive(Debug, thiserror::Error)]
pub enum AccessError {
    /// The URL does not parse (shown without its userinfo).
    #[error("--nats {url} is not a NATS URL: {reason}")]
    Url {
        /// The URL, secrets taken out.
        url: String,
        /// Why.
        reason: String,
    },
    /// Two kinds of credentials were given: which one to present would be a guess.
    #[error(
        "two kinds of NATS credentials were given ({one} and {other}): give one (--nats-creds, --nats-nkey, AURA_NATS_USER/AURA_NATS_PASSWORD, AURA_NATS_TOKEN or the URL's userinfo)"
    )]
    TwoCredentials {
        /// One kind.
        one: &'static str,
        /// The other.
        other: &'static str,
    },
    /// A password without a user, or a user without a password.
    #[error("a NATS user needs both a name (AURA_NATS_USER) and a password (AURA_NATS_PASSWORD)")]
    HalfAUser,
    /// A credentials or TLS file could not be read or is not what it should be.
    #[error("{what} {path}: {reason}")]
    File {
        /// Which file.
        what: &'static str,
        /// Where.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// A client certificate without its key, or a key without its certificate.
    #[error("a NATS client certificate needs both --nats-tls-cert and --nats-tls-key")]
    HalfACertificate,
    /// The identity's key file or a trusted worker's key is not usable.
    #[error(transparent)]
    Key(#[from] aura_plugins::signing::SigningError),
}

impl NatsAccess {
    /// An anonymous plain connection to `url` (credentials in its userinfo still taken).
    pub fn url(url: &str) -> Result<Self, AccessError> {
        Self::from_options(&NatsOptions {
            url: url.to_owned(),
            ..NatsOptions::default()
        })
    }

    /// Checks what a command was given: the URL parsed and its userinfo taken out, at most
    /// one kind of credentials, the files read (bounded by [`NATS_CREDENTIALS_BYTES_MAX`])
    /// and an nkey seed checked to be one.
    pub fn from_options(options: &NatsOptions) -> Result<Self, AccessError> {
        let mut servers = Vec::new();
        let mut given: Vec<Credentials> = Vec::new();
        for text in split_servers(&options.url) {
            let (server, userinfo) = parse_server(text)?;
            if let Some(userinfo) = userinfo
                && !given.contains(&userinfo)
            {
                given.push(userinfo);
            }
            servers.push(server);
        }
        if servers.is_empty() {
            return Err(AccessError::Url {
                url: String::new(),
                reason: "no server given".into(),
            });
        }
        match (&options.user, &options.password) {
            (Some(user), Some(password)) => given.push(Credentials::UserPassword {
                user: user.clone(),
                password: password.clone(),
            }),
            (None, None) => {}
            _ => return Err(AccessError::HalfAUser),
        }
        if let Some(token) = &options.token {
            given.push(Credentials::Token(token.clone()));
        }
        if let Some(path) = &options.nkey {
            let seed = read_bounded(path, "the nkey seed file")?.trim().to_owned();
            nkeys::KeyPair::from_seed(&seed).map_err(|error| AccessError::File {
                what: "the nkey seed file",
                path: path.clone(),
                reason: format!("not an nkey seed: {error}"),
            })?;
            given.push(Credentials::Nkey(seed));
        }
        if let Some(path) = &options.creds {
            let text = read_bounded(path, "the .creds file")?;
            // Checked now, so a bad file is named before any connection is tried.
            async_nats::ConnectOptions::with_credentials(&text).map_err(|error| {
                AccessError::File {
                    what: "the .creds file",
                    path: path.clone(),
                    reason: error.to_string(),
                }
            })?;
            given.push(Credentials::Creds(text));
        }
        let credentials = match given.as_slice() {
            [] => Credentials::Anonymous,
            [one] => one.clone(),
            [one, other, ..] => {
                return Err(AccessError::TwoCredentials {
                    one: one.kind(),
                    other: other.kind(),
                });
            }
        };
        let client = match (&options.tls_cert, &options.tls_key) {
            (Some(cert), Some(key)) => Some((cert.clone(), key.clone())),
            (None, None) => None,
            _ => return Err(AccessError::HalfACertificate),
        };
        for (what, path) in [
            ("the TLS CA file", options.tls_ca.as_ref()),
            ("the TLS certificate", client.as_ref().map(|(cert, _)| cert)),
            ("the TLS key", client.as_ref().map(|(_, key)| key)),
        ] {
            if let Some(path) = path {
                read_bounded(path, what)?;
            }
        }
        let required = options.tls
            || options.tls_ca.is_some()
            || client.is_some()
            || servers.iter().any(|server| server.scheme() == "tls");
        let provenance = Provenance {
            identity: options
                .identity
                .as_deref()
                .map(Identity::load)
                .transpose()?,
            trusted: TrustedKeys::parse(options.trusted_workers.as_deref().unwrap_or(""))?,
            fronts: TrustedKeys::parse(options.trusted_fronts.as_deref().unwrap_or(""))?,
        };
        Ok(Self {
            servers,
            credentials,
            tls: Tls {
                ca: options.tls_ca.clone(),
                client,
                required,
            },
            provenance,
        })
    }

    /// The servers, without secrets, comma-separated (what a message may show).
    pub fn shown(&self) -> String {
        self.servers
            .iter()
            .map(url::Url::as_str)
            .map(|s| s.trim_end_matches('/'))
            .collect::<Vec<_>>()
            .join(",")
    }

    /// Whether the connection presents credentials.
    pub fn authenticated(&self) -> bool {
        self.credentials != Credentials::Anonymous
    }

    /// Who this process is on the wire, and whom it believes.
    pub fn provenance(&self) -> &Provenance {
        &self.provenance
    }

    /// Whether the connection requires TLS.
    pub fn tls_required(&self) -> bool {
        self.tls.required
    }

    /// The connect options these credentials and TLS make, to be completed by the caller.
    pub(crate) fn connect_options(&self) -> async_nats::ConnectOptions {
        let options = match &self.credentials {
            Credentials::Anonymous => async_nats::ConnectOptions::new(),
            Credentials::UserPassword { user, password } => {
                async_nats::ConnectOptions::with_user_and_password(user.clone(), password.clone())
            }
            Credentials::Token(token) => async_nats::ConnectOptions::with_token(token.clone()),
            Credentials::Nkey(seed) => async_nats::ConnectOptions::with_nkey(seed.clone()),
            // Checked in from_options: a failure here cannot happen, and is not hidden if it
            // does (an anonymous connection the server then refuses, named in the error).
            Credentials::Creds(text) => async_nats::ConnectOptions::with_credentials(text)
                .unwrap_or_else(|error| {
                    tracing::error!(error = %Caused(&error), "the .creds file no longer parses");
                    async_nats::ConnectOptions::new()
                }),
        };
        let mut options = options.require_tls(self.tls.required);
        if let Some(ca) = &self.tls.ca {
            options = options.add_root_certificates(ca.clone());
        }
        if let Some((cert, key)) = &self.tls.client {
            options = options.add_client_certificate(cert.clone(), key.clone());
        }
        options
    }

    /// The servers to connect to.
    pub(crate) fn servers(&self) -> Vec<async_nats::ServerAddr> {
        self.servers
            .iter()
            .filter_map(|server| server.as_str().parse().ok())
            .collect()
    }
}

impl fmt::Display for NatsAccess {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.shown())
    }
}

impl fmt::Debug for NatsAccess {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NatsAccess")
            .field("servers", &self.shown())
            .field("credentials", &self.credentials.kind())
            .field("tls", &self.tls)
            .field("provenance", &self.provenance)
            .finish()
    }
}

/// The servers of a `--nats` list: split at each comma that starts another URL (one with a
/// scheme), so a comma in a password stays in its URL; a list without schemes
/// (`host:port,host:port`) at every comma.
fn split_servers(text: &str) -> Vec<&str> {
    let mut starts = vec![0];
    for (at, _) in text.match_indices(',') {
        let rest = text[at + 1..].trim_start();
        let next_has_scheme = rest.split_once("://").is_some_and(|(scheme, _)| {
            !scheme.is_empty() && scheme.bytes().all(|b| b.is_ascii_alphabetic())
        });
        if next_has_scheme || !text.contains("://") {
            starts.push(at + 1);
        }
    }
    starts.push(text.len() + 1);
    starts
        .windows(2)
        .map(|pair| text[pair[0]..pair[1] - 1].trim())
        .filter(|piece| !piece.is_empty())
        .collect()
}

/// `text` (a NATS URL, perhaps comma-separated) with every userinfo taken out: what a message
/// may show of a URL it was given, parsed or not.
pub fn shown_urls(text: &str) -> String {
    split_servers(text)
        .into_iter()
        .map(|one| match one.rsplit_once('@') {
            Some((before, host)) => match before.split_once("://") {
                Some((scheme, _userinfo)) => format!("{scheme}://{host}"),
                None => host.to_owned(),
            },
            None => one.to_owned(),
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// One server URL: its address (a bare `host:port` taken as `nats://`), without userinfo,
/// and the credentials the userinfo held.
fn parse_server(text: &str) -> Result<(url::Url, Option<Credentials>), AccessError> {
    let with_scheme = match text.contains("://") {
        true => text.to_owned(),
        false => format!("nats://{text}"),
    };
    let bad = |reason: String| AccessError::Url {
        url: shown_urls(text),
        reason,
    };
    let mut server = url::Url::parse(&with_scheme).map_err(|error| bad(error.to_string()))?;
    if !matches!(server.scheme(), "nats" | "tls") {
        return Err(bad(format!(
            "the scheme is `{}`, not nats:// or tls://",
            server.scheme()
        )));
    }
    if server.host_str().is_none_or(str::is_empty) {
        return Err(bad("no host".into()));
    }
    let decode = |part: &str| {
        percent_encoding::percent_decode_str(part)
            .decode_utf8()
            .map(|text| text.into_owned())
            .map_err(|_| bad("its userinfo is not UTF-8 once decoded".into()))
    };
    let user = decode(server.username())?;
    let password = server.password().map(decode).transpose()?;
    let credentials = match (user.is_empty(), password) {
        (true, None) => None,
        (false, None) => Some(Credentials::Token(user)),
        (_, Some(password)) => Some(Credentials::UserPassword { user, password }),
    };
    // Cannot fail on a nats:// or tls:// URL with a host.
    let _ = server.set_username("");
    let _ = server.set_password(None);
    if server.port().is_none() {
        let _ = server.set_port(Some(4222));
    }
    Ok((server, credentials))
}

/// A credentials or TLS file's text, at most [`NATS_CREDENTIALS_BYTES_MAX`] bytes.
fn read_bounded(path: &Path, what: &'static str) -> Result<String, AccessError> {
    let failed = |reason: String| AccessError::File {
        what,
        path: path.to_owned(),
        reason,
    };
    let bytes = aura_plugins::files::read_at_most(path, NATS_CREDENTIALS_BYTES_MAX)
        .map_err(|error| failed(error.to_string()))?;
    if bytes.len() as u64 > NATS_CREDENTIALS_BYTES_MAX {
        return Err(failed(format!(
            "more than {NATS_CREDENTIALS_BYTES_MAX} bytes"
        )));
    }
    String::from_utf8(bytes).map_err(|_| failed("not UTF-8 text".into()))
}

/// A new NATS user nkey: its seed (the secret, `SU…`) and its public key (`U…`, what a
/// nats-server config names the user by).
pub fn new_user_nkey() -> Result<(String, String), AccessError> {
    let pair = nkeys::KeyPair::new_user();
    let seed = pair.seed().map_err(|error| AccessError::File {
        what: "a new nkey",
        path: PathBuf::new(),
        reason: error.to_string(),
    })?;
    Ok((seed, pair.public_key()))
}

#[cfg(test)]
mod tests;
