//! The issuer's keys: a JWK set read from a file or fetched over HTTPS (bounded in bytes,
//! keys and time), each key kept with the algorithms its type fits. It must not check
//! tokens: [`super::Authenticator`] does.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use axum::http::header;
use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, Jwk};
use jsonwebtoken::{Algorithm, DecodingKey};
use serde_json::Value;

use aura_contract::limits::{AUTH_JWKS_BYTES_MAX, AUTH_JWKS_FETCH_MS, AUTH_JWKS_KEYS_MAX};

use super::ALGORITHMS;
use crate::GuardError;

/// Where the issuer's public keys are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JwksSource {
    /// A JWKS file (re-read as a URL would be fetched again).
    File(PathBuf),
    /// A JWKS URL: `https://`, or `http://` to a loopback host.
    Url(url::Url),
}

impl JwksSource {
    /// `https://…` (or `http://` to loopback) is a URL; anything else a file path.
    pub fn parse(text: &str) -> Result<Self, GuardError> {
        if !(text.starts_with("https://") || text.starts_with("http://")) {
            return Ok(Self::File(PathBuf::from(text)));
        }
        let url = url::Url::parse(text)
            .map_err(|error| GuardError::Auth(format!("--auth-jwks {text}: {error}")))?;
        let loopback = match url.host() {
            Some(url::Host::Domain(name)) => name == "localhost",
            Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
            Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
            None => false,
        };
        if url.scheme() == "http" && !loopback {
            return Err(GuardError::Auth(format!(
                "--auth-jwks {text}: keys are fetched over https (plain http only from loopback)"
            )));
        }
        Ok(Self::Url(url))
    }
}

/// One usable key of the issuer's JWKS.
pub(crate) struct Key {
    pub(crate) id: Option<String>,
    /// The algorithms it may check: its JWK `alg` if it names one, else all its type fits.
    pub(crate) algorithms: Vec<Algorithm>,
    pub(crate) key: DecodingKey,
}

/// What keys are fetched over: TLS on ring with the system's roots (SSL_CERT_FILE
/// honoured).
#[derive(Clone)]
pub(crate) struct Fetcher {
    tls: tokio_rustls::TlsConnector,
}

impl Fetcher {
    pub(crate) fn new() -> Result<Self, GuardError> {
        let mut roots = rustls::RootCertStore::empty();
        for cert in rustls_native_certs::load_native_certs().certs {
            let _ = roots.add(cert);
        }
        Self::with_roots(roots)
    }

    /// A fetcher trusting `roots` only.
    pub(crate) fn with_roots(roots: rustls::RootCertStore) -> Result<Self, GuardError> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|error| GuardError::Tls(error.to_string()))?
            .with_root_certificates(roots)
            .with_no_client_auth();
        Ok(Self {
            tls: tokio_rustls::TlsConnector::from(Arc::new(config)),
        })
    }

    /// The body at `url` (no redirects), at most [`AUTH_JWKS_BYTES_MAX`] + 1 bytes of it,
    /// within [`AUTH_JWKS_FETCH_MS`].
    async fn fetch(&self, url: &url::Url) -> Result<Vec<u8>, String> {
        tokio::time::timeout(Duration::from_millis(AUTH_JWKS_FETCH_MS), self.get(url))
            .await
            .map_err(|_| format!("no answer within {AUTH_JWKS_FETCH_MS} ms"))?
    }

    async fn get(&self, url: &url::Url) -> Result<Vec<u8>, String> {
        let host = url.host_str().ok_or("no host")?.to_owned();
        let port = url.port_or_known_default().ok_or("no port")?;
        let tcp = tokio::net::TcpStream::connect((host.trim_matches(['[', ']']), port))
            .await
            .map_err(|error| error.to_string())?;
        let path = &url[url::Position::BeforePath..];
        let authority = &url[url::Position::BeforeHost..url::Position::AfterPort];
        match url.scheme() {
            "https" => {
                let name = rustls_pki_types::ServerName::try_from(
                    host.trim_matches(['[', ']']).to_owned(),
                )
                .map_err(|error| error.to_string())?;
                let tls = self
                    .tls
                    .connect(name, tcp)
                    .await
                    .map_err(|error| error.to_string())?;
                get_over(tls, authority, path).await
            }
            _ => get_over(tcp, authority, path).await,
        }
    }
}

/// One HTTP/1.1 GET of `path` over `stream`: the body, read up to one byte past the bound.
async fn get_over<S>(stream: S, authority: &str, path: &str) -> Result<Vec<u8>, String>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    use http_body_util::BodyExt;
    let (mut sender, connection) =
        hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
            .await
            .map_err(|error| error.to_string())?;
    let connection = tokio::spawn(connection);
    let request = axum::http::Request::get(path)
        .header(header::HOST, authority)
        .header(header::ACCEPT, "application/json")
        .body(http_body_util::Empty::<axum::body::Bytes>::new())
        .map_err(|error| error.to_string())?;
    let mut response = sender
        .send_request(request)
        .await
        .map_err(|error| error.to_string())?;
    if !response.status().is_success() {
        connection.abort();
        return Err(format!("HTTP {}", response.status()));
    }
    let mut bytes = Vec::new();
    while let Some(frame) = response.body_mut().frame().await {
        let frame = frame.map_err(|error| error.to_string())?;
        if let Some(data) = frame.data_ref() {
            bytes.extend_from_slice(data);
        }
        if bytes.len() > AUTH_JWKS_BYTES_MAX {
            break;
        }
    }
    connection.abort();
    Ok(bytes)
}

/// The usable keys of the JWKS at `source`.
pub(crate) async fn read_keys(
    source: &JwksSource,
    fetcher: &Fetcher,
) -> Result<Vec<Key>, GuardError> {
    let failed = |why: String| GuardError::Auth(format!("the JWKS {}: {why}", shown(source)));
    let bytes = match source {
        JwksSource::File(path) => {
            let path = path.clone();
            tokio::task::spawn_blocking(move || {
                aura_plugins::files::read_at_most(&path, AUTH_JWKS_BYTES_MAX as u64)
            })
            .await
            .map_err(|error| failed(error.to_string()))?
            .map_err(|error| failed(error.to_string()))?
        }
        JwksSource::Url(url) => fetcher.fetch(url).await.map_err(failed)?,
    };
    if bytes.len() > AUTH_JWKS_BYTES_MAX {
        return Err(failed(format!("more than {AUTH_JWKS_BYTES_MAX} bytes")));
    }
    let set: Value = serde_json::from_slice(&bytes).map_err(|error| failed(error.to_string()))?;
    let Some(entries) = set.get("keys").and_then(Value::as_array) else {
        return Err(failed("not a JWK set (no `keys` list)".into()));
    };
    let mut keys = Vec::new();
    for entry in entries.iter().take(AUTH_JWKS_KEYS_MAX) {
        // A key of a kind this server does not take (`oct`, an encryption key) is skipped.
        let Ok(jwk) = serde_json::from_value::<Jwk>(entry.clone()) else {
            continue;
        };
        if let Some(key) = usable(&jwk) {
            keys.push(key);
        }
    }
    if keys.is_empty() {
        return Err(failed(
            "no signing key this server can use (RSA, P-256, P-384 or Ed25519)".into(),
        ));
    }
    Ok(keys)
}

/// `jwk` as a key, if it is a public signing key of a type taken here.
fn usable(jwk: &Jwk) -> Option<Key> {
    use jsonwebtoken::jwk::PublicKeyUse;
    if matches!(&jwk.common.public_key_use, Some(use_) if *use_ != PublicKeyUse::Signature) {
        return None;
    }
    let fits: Vec<Algorithm> = match &jwk.algorithm {
        AlgorithmParameters::RSA(_) => ALGORITHMS[..6].to_vec(),
        AlgorithmParameters::EllipticCurve(ec) => match ec.curve {
            EllipticCurve::P256 => vec![Algorithm::ES256],
            EllipticCurve::P384 => vec![Algorithm::ES384],
            _ => return None,
        },
        AlgorithmParameters::OctetKeyPair(okp) if okp.curve == EllipticCurve::Ed25519 => {
            vec![Algorithm::EdDSA]
        }
        _ => return None,
    };
    let algorithms = match jwk.common.key_algorithm {
        Some(named) => {
            let named = named.to_string().parse::<Algorithm>().ok()?;
            fits.into_iter().filter(|alg| *alg == named).collect()
        }
        None => fits,
    };
    if algorithms.is_empty() {
        return None;
    }
    Some(Key {
        id: jwk.common.key_id.clone(),
        algorithms,
        key: DecodingKey::from_jwk(jwk).ok()?,
    })
}

/// A JWKS source as said in errors.
fn shown(source: &JwksSource) -> String {
    match source {
        JwksSource::File(path) => path.display().to_string(),
        JwksSource::Url(url) => url.to_string(),
    }
}
