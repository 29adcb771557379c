//! The guard aura's HTTP fronts stand behind (`aura serve`'s MCP endpoint, `aura live`'s
//! routes): TLS on the listener ([`TlsListener`]), the Origin policy ([`OriginPolicy`],
//! checked on every request by [`check_origin`]) and bearer tokens ([`auth`]).
//!
//! It owns loading a certificate chain and key (PEM, bounded), the TLS handshakes (each in a
//! task of its own with a deadline, so a client that never finishes one holds up no other),
//! and deciding whether a request's `Origin` may be served: a request without one (not a
//! browser) is; a browser's is only when it is a loopback origin or one the deployment allows,
//! and any other is answered 403 before the front sees it (the MCP transport's DNS-rebinding
//! rule). It listens beyond loopback only with TLS and tokens both ([`Guard::check_listen`]).
//! It must not know what a front serves: a front says which scopes its requests need.

#![warn(missing_docs)]

pub mod auth;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use axum::extract::Request;
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::TlsAcceptor;
use tokio_rustls::server::TlsStream;

use aura_contract::limits::{HTTP_TLS_FILE_BYTES_MAX, HTTP_TLS_HANDSHAKE_MS, HTTP_TLS_PENDING_MAX};

/// Why the guard could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum GuardError {
    /// A certificate or key file could not be read or is not what it should be.
    #[error("{what} {path}: {reason}")]
    TlsFile {
        /// Which file.
        what: &'static str,
        /// Where.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// The certificate and key do not make a server configuration (a key that is not the
    /// certificate's, say).
    #[error("the TLS certificate and key cannot serve: {0}")]
    Tls(String),
    /// An allowed origin is not `scheme://host[:port]`.
    #[error("--allow-origin {origin}: {reason}")]
    Origin {
        /// As given.
        origin: String,
        /// Why.
        reason: String,
    },
    /// The bearer-token settings cannot serve (an unreadable JWKS, a bad audience).
    #[error("{0}")]
    Auth(String),
    /// A non-loopback address without TLS and tokens.
    #[error(
        "listening on {0} (beyond this machine) needs TLS (--tls-cert, --tls-key) and bearer tokens (--auth-issuer, --auth-jwks, --auth-audience)"
    )]
    Exposed(SocketAddr),
    /// The listener failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// What a front's HTTP server stands behind: its Origin policy, and TLS if it has a
/// certificate.
#[derive(Clone)]
pub struct Guard {
    /// Which browser origins it serves.
    pub origins: Arc<OriginPolicy>,
    /// Its TLS acceptor; `None`: plain HTTP.
    pub tls: Option<TlsAcceptor>,
    /// Its bearer-token check; `None`: no tokens asked (loopback only).
    pub auth: Option<Arc<auth::Authenticator>>,
}

impl std::fmt::Debug for Guard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Guard")
            .field("origins", &self.origins)
            .field("tls", &self.tls.is_some())
            .field("auth", &self.auth)
            .finish()
    }
}

impl Guard {
    /// A guard allowing `origins` beside loopback, serving TLS with `tls` if given, asking
    /// tokens as `auth` says if given (its keys are read now).
    pub async fn new(
        origins: &[String],
        tls: Option<&TlsFiles>,
        auth: Option<auth::AuthSettings>,
    ) -> Result<Self, GuardError> {
        let auth = match auth {
            Some(settings) => Some(Arc::new(auth::Authenticator::new(settings).await?)),
            None => None,
        };
        Ok(Self {
            origins: Arc::new(OriginPolicy::allowing(origins)?),
            tls: tls.map(TlsFiles::acceptor).transpose()?,
            auth,
        })
    }

    /// Whether it may listen on `address`: loopback always; any other only with TLS and
    /// tokens both (a stranger on the network must neither read nor call).
    pub fn check_listen(&self, address: SocketAddr) -> Result<(), GuardError> {
        match address.ip().is_loopback() || (self.tls.is_some() && self.auth.is_some()) {
            true => Ok(()),
            false => Err(GuardError::Exposed(address)),
        }
    }

    /// The `Host` names it serves (DNS rebinding): loopback ones, and with tokens the
    /// audience's host (a stranger's page cannot send the token, so a rebound name gains
    /// nothing).
    pub fn hosts(&self) -> Vec<String> {
        let mut hosts = vec!["localhost".into(), "127.0.0.1".into(), "::1".into()];
        hosts.extend(
            self.auth
                .as_ref()
                .and_then(|auth| auth.audience_host().map(str::to_owned)),
        );
        hosts
    }

    /// `router` with every route needing a token with the scopes `rule` says, and the
    /// metadata routes beside (when it asks tokens; else `router` as it is).
    pub fn protect(&self, router: axum::Router, rule: Arc<dyn auth::ScopeRule>) -> axum::Router {
        match &self.auth {
            Some(auth) => auth.protect(router, rule),
            None => router,
        }
    }

    /// The scheme its URLs have.
    pub fn scheme(&self) -> &'static str {
        match self.tls {
            Some(_) => "https",
            None => "http",
        }
    }

    /// Serves `router` on `tcp` behind this guard (every request's Origin checked first; TLS
    /// if it has a certificate) until `shutdown` completes.
    pub async fn serve(
        &self,
        tcp: TcpListener,
        router: axum::Router,
        shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> Result<(), GuardError> {
        let router = router.layer(axum::middleware::from_fn_with_state(
            self.origins.clone(),
            check_origin,
        ));
        self.serve_checking_origins_itself(tcp, router, shutdown)
            .await
    }

    /// [`Guard::serve`] for a router that checks each request's Origin against
    /// [`Guard::origins`] itself (to record what it refuses, say).
    pub async fn serve_checking_origins_itself(
        &self,
        tcp: TcpListener,
        router: axum::Router,
        shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> Result<(), GuardError> {
        match &self.tls {
            Some(acceptor) => {
                let listener = TlsListener::new(tcp, acceptor.clone())?;
                axum::serve(listener, router)
                    .with_graceful_shutdown(shutdown)
                    .await?;
            }
            None => {
                // Each response is one small write; with Nagle's algorithm on, it waits for
                // the client's delayed ACK (up to 40 ms on Linux) whenever the previous segment
                // is unacked.
                let listener = axum::serve::ListenerExt::tap_io(tcp, |stream| {
                    if let Err(error) = stream.set_nodelay(true) {
                        tracing::warn!(%error, "could not set TCP_NODELAY");
                    }
                });
                axum::serve(listener, router)
                    .with_graceful_shutdown(shutdown)
                    .await?;
            }
        }
        Ok(())
    }
}

/// A server certificate chain and its key, as PEM files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsFiles {
    /// The chain, leaf first.
    pub cert: PathBuf,
    /// Its private key (PKCS#8, PKCS#1 or SEC1).
    pub key: PathBuf,
}

impl TlsFiles {
    /// The acceptor these files make: TLS 1.2 and 1.3 on ring, ALPN `h2`-less (`http/1.1`,
    /// what the fronts serve).
    pub fn acceptor(&self) -> Result<TlsAcceptor, GuardError> {
        let chain: Vec<CertificateDer<'static>> =
            CertificateDer::pem_slice_iter(&read_bounded(&self.cert, "the TLS certificate")?)
                .collect::<Result<_, _>>()
                .map_err(|error| GuardError::TlsFile {
                    what: "the TLS certificate",
                    path: self.cert.clone(),
                    reason: error.to_string(),
                })?;
        if chain.is_empty() {
            return Err(GuardError::TlsFile {
                what: "the TLS certificate",
                path: self.cert.clone(),
                reason: "no certificate in it".into(),
            });
        }
        let key = PrivateKeyDer::from_pem_slice(&read_bounded(&self.key, "the TLS key")?).map_err(
            |error| GuardError::TlsFile {
                what: "the TLS key",
                path: self.key.clone(),
                reason: error.to_string(),
            },
        )?;
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|error| GuardError::Tls(error.to_string()))?
            .with_no_client_auth()
            .with_single_cert(chain, key)
            .map_err(|error| GuardError::Tls(error.to_string()))?;
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(TlsAcceptor::from(Arc::new(config)))
    }
}

/// A PEM file's bytes, at most [`HTTP_TLS_FILE_BYTES_MAX`].
fn read_bounded(path: &Path, what: &'static str) -> Result<Vec<u8>, GuardError> {
    let failed = |reason: String| GuardError::TlsFile {
        what,
        path: path.to_owned(),
        reason,
    };
    let bytes = aura_plugins::files::read_at_most(path, HTTP_TLS_FILE_BYTES_MAX)
        .map_err(|error| failed(error.to_string()))?;
    if bytes.len() as u64 > HTTP_TLS_FILE_BYTES_MAX {
        return Err(failed(format!("more than {HTTP_TLS_FILE_BYTES_MAX} bytes")));
    }
    Ok(bytes)
}

/// A TCP listener whose connections are TLS: accepted connections are handshaken each in a
/// task of its own, within [`HTTP_TLS_HANDSHAKE_MS`]; at most [`HTTP_TLS_PENDING_MAX`] are
/// in a handshake or waiting to be served at once (each holds a permit until the server
/// takes it), so slow clients cannot pile up descriptors. A failed handshake is logged and
/// dropped.
pub struct TlsListener {
    local: SocketAddr,
    ready: tokio::sync::mpsc::Receiver<Handshaken>,
    accepting: tokio::task::JoinHandle<()>,
}

impl std::fmt::Debug for TlsListener {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsListener")
            .field("local", &self.local)
            .finish_non_exhaustive()
    }
}

/// A connection through its handshake, with the permit it holds until the server takes it.
type Handshaken = (
    TlsStream<TcpStream>,
    SocketAddr,
    tokio::sync::OwnedSemaphorePermit,
);

impl TlsListener {
    /// Serves TLS with `acceptor` on `tcp`.
    pub fn new(tcp: TcpListener, acceptor: TlsAcceptor) -> Result<Self, GuardError> {
        let local = tcp.local_addr()?;
        let (send, ready) = tokio::sync::mpsc::channel(HTTP_TLS_PENDING_MAX);
        let permits = Arc::new(tokio::sync::Semaphore::new(HTTP_TLS_PENDING_MAX));
        let accepting = tokio::spawn(async move {
            loop {
                // The semaphore is never closed, so acquiring only waits.
                let Ok(permit) = permits.clone().acquire_owned().await else {
                    return;
                };
                let (stream, peer) = match tcp.accept().await {
                    Ok(accepted) => accepted,
                    Err(error) => {
                        // Out of file descriptors, say: wait, as axum's own loop does.
                        tracing::warn!(%error, "accepting a connection failed");
                        tokio::time::sleep(Duration::from_millis(100)).await;
                        continue;
                    }
                };
                if let Err(error) = stream.set_nodelay(true) {
                    tracing::warn!(%error, "could not set TCP_NODELAY");
                }
                let (acceptor, send) = (acceptor.clone(), send.clone());
                tokio::spawn(async move {
                    let handshake = tokio::time::timeout(
                        Duration::from_millis(HTTP_TLS_HANDSHAKE_MS),
                        acceptor.accept(stream),
                    );
                    match handshake.await {
                        Ok(Ok(tls)) => {
                            let _ = send.send((tls, peer, permit)).await;
                        }
                        Ok(Err(error)) => {
                            tracing::warn!(%peer, %error, "a TLS handshake failed");
                        }
                        Err(_) => tracing::warn!(%peer, "a TLS handshake took too long"),
                    }
                });
            }
        });
        Ok(Self {
            local,
            ready,
            accepting,
        })
    }
}

impl Drop for TlsListener {
    fn drop(&mut self) {
        self.accepting.abort();
    }
}

impl axum::serve::Listener for TlsListener {
    type Io = TlsStream<TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        match self.ready.recv().await {
            // The permit goes: the server holds the connection now.
            Some((stream, peer, _permit)) => (stream, peer),
            // The accepting task never ends while the listener lives; if it did, there is
            // nothing more to serve.
            None => std::future::pending().await,
        }
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        Ok(self.local)
    }
}

/// Which browser origins a front serves: loopback origins (any scheme, any port) and the
/// ones the deployment allows, exactly (scheme, host and port).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OriginPolicy {
    allowed: Vec<(String, String, u16)>,
}

impl OriginPolicy {
    /// The policy allowing `origins` (each `scheme://host[:port]`) beside loopback.
    pub fn allowing(origins: &[String]) -> Result<Self, GuardError> {
        let allowed = origins
            .iter()
            .map(|origin| {
                parse_origin(origin).ok_or_else(|| GuardError::Origin {
                    origin: origin.clone(),
                    reason: "not scheme://host[:port] (an http or https origin)".into(),
                })
            })
            .collect::<Result<_, _>>()?;
        Ok(Self { allowed })
    }

    /// Whether a request with this `Origin` header value may be served.
    pub fn allows(&self, origin: &str) -> bool {
        let Some(origin) = parse_origin(origin) else {
            // "null" (a sandboxed frame, a file) or not an origin at all.
            return false;
        };
        let loopback = matches!(origin.1.as_str(), "localhost" | "127.0.0.1" | "[::1]");
        loopback || self.allowed.contains(&origin)
    }
}

/// (scheme, host, port) of an http(s) origin, the port defaulted by the scheme.
fn parse_origin(text: &str) -> Option<(String, String, u16)> {
    let parsed = url::Url::parse(text).ok()?;
    let scheme = parsed.scheme().to_owned();
    if !matches!(scheme.as_str(), "http" | "https")
        || parsed.path() != "/"
        || parsed.query().is_some()
        || !parsed.username().is_empty()
    {
        return None;
    }
    let host = match parsed.host()? {
        url::Host::Domain(domain) => domain.to_ascii_lowercase(),
        url::Host::Ipv4(ip) => ip.to_string(),
        url::Host::Ipv6(ip) => format!("[{ip}]"),
    };
    Some((scheme, host, parsed.port_or_known_default()?))
}

/// Middleware: answers 403 to a request whose `Origin` the policy does not allow; passes
/// every other on.
pub async fn check_origin(
    axum::extract::State(policy): axum::extract::State<Arc<OriginPolicy>>,
    request: Request,
    next: Next,
) -> Response {
    if let Some(origin) = request.headers().get(header::ORIGIN) {
        let allowed = origin.to_str().is_ok_and(|text| policy.allows(text));
        if !allowed {
            tracing::warn!(origin = ?origin, "a request from a foreign origin was refused");
            return forbidden(origin);
        }
    }
    next.run(request).await
}

/// 403 for a foreign origin.
fn forbidden(origin: &HeaderValue) -> Response {
    let shown: String = String::from_utf8_lossy(origin.as_bytes())
        .chars()
        .filter(|c| !c.is_control())
        .take(200)
        .collect();
    (
        StatusCode::FORBIDDEN,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        format!("Forbidden: the origin {shown} is not allowed here\n"),
    )
        .into_response()
}

#[cfg(test)]
mod tests;
