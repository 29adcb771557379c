//! The options of an HTTP front's guard (`aura serve`, `aura live --listen`): TLS, the
//! browser origins it serves beside loopback, and the bearer tokens it asks. It must not
//! serve: [`aura_http::Guard`] does.

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
    /// Ask every request for a bearer token (a JWT) from this issuer (its `iss`, exactly):
    /// the front is then an OAuth 2.1 resource server, and may listen beyond loopback (with
    /// TLS). Needs --auth-jwks and --auth-audience.
    #[arg(
        long,
        env = "AURA_AUTH_ISSUER",
        requires_all = ["auth_jwks", "auth_audience"]
    )]
    auth_issuer: Option<String>,
    /// The issuer's public keys: a JWKS file, or an https:// URL (re-read when a token names
    /// a key it does not hold, and hourly).
    #[arg(long, env = "AURA_AUTH_JWKS", requires = "auth_issuer")]
    auth_jwks: Option<String>,
    /// This server's URL as its clients name it (`https://aura.example:8765/mcp`): tokens
    /// must be for it (`aud`), and the metadata at /.well-known/oauth-protected-resource
    /// names it.
    #[arg(long, env = "AURA_AUTH_AUDIENCE", requires = "auth_issuer")]
    auth_audience: Option<String>,
}

impl GuardArgs {
    /// The guard these options make (certificate, key and the issuer's keys read and
    /// checked now).
    pub async fn guard(&self) -> anyhow::Result<aura_http::Guard> {
        let tls = match (&self.tls_cert, &self.tls_key) {
            (Some(cert), Some(key)) => Some(aura_http::TlsFiles {
                cert: cert.clone(),
                key: key.clone(),
            }),
            _ => None,
        };
        let auth = match (&self.auth_issuer, &self.auth_jwks, &self.auth_audience) {
            (Some(issuer), Some(jwks), Some(audience)) => Some(aura_http::auth::AuthSettings {
                issuer: issuer.clone(),
                audience: audience.clone(),
                jwks: aura_http::auth::JwksSource::parse(jwks)?,
            }),
            _ => None,
        };
        aura_http::Guard::new(&self.allowed_origins, tls.as_ref(), auth)
            .await
            .context("cannot set up the HTTP front")
    }
}
