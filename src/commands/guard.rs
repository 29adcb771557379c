//! The options of an HTTP front's guard (`aura serve`, `aura live --listen`): TLS and the
//! browser origins it serves beside loopback. It must not serve: [`aura_http::Guard`] does.

use std::path::PathBuf;

use anyhow::Context;

/// TLS and allowed origins for an HTTP front.
#[derive(clap::Args, Debug)]
pub struct GuardArgs {
    /// Serve HTTPS with this certificate chain (PEM, leaf first) instead of plain HTTP.
    #[arg(long, env = "AURA_TLS_CERT", requires = "tls_key")]
    tls_cert: Option<PathBuf>,
    /// The private key (PEM) of --tls-cert.
    #[arg(long, env = "AURA_TLS_KEY", requires = "tls_cert")]
    tls_key: Option<PathBuf>,
    /// A browser origin served beside loopback ones (scheme://host[:port], repeatable or
    /// comma-separated); a request from any other origin is answered 403.
    #[arg(
        long = "allow-origin",
        env = "AURA_ALLOWED_ORIGINS",
        value_delimiter = ','
    )]
    allowed_origins: Vec<String>,
}

impl GuardArgs {
    /// The guard these options make (certificate and key read and checked now).
    pub fn guard(&self) -> anyhow::Result<aura_http::Guard> {
        let tls = match (&self.tls_cert, &self.tls_key) {
            (Some(cert), Some(key)) => Some(aura_http::TlsFiles {
                cert: cert.clone(),
                key: key.clone(),
            }),
            _ => None,
        };
        aura_http::Guard::new(&self.allowed_origins, tls.as_ref())
            .context("cannot set up the HTTP front")
    }
}
