//! The options that say where the nats-server is and how to reach it, global to every command
//! that takes `--nats`: the URL, the credentials (a `.creds` file, an nkey seed file, a user
//! and password or a token) and TLS, each with its `AURA_NATS_*` environment equivalent, and
//! who the host is on the wire (`--identity`) and which workers it believes
//! (`--trust-workers`).
//! Secrets are taken from the environment or a file, never from their own flag (a command
//! line is visible to every user of the machine); the URL's userinfo is the one exception,
//! as NATS URLs allow it. It must not connect: [`aura_wire::connect`] does.

use std::path::PathBuf;

use anyhow::Context;

use aura_wire::{NatsAccess, NatsOptions};

/// The environment variable holding the NATS user's password.
pub const PASSWORD_ENV: &str = "AURA_NATS_PASSWORD";
/// The environment variable holding a NATS token.
pub const TOKEN_ENV: &str = "AURA_NATS_TOKEN";

/// Where the nats-server is and how to reach it (its `Debug` shows the URL without userinfo).
#[derive(clap::Args)]
pub struct NatsArgs {
    /// Send calls and ticks to the aura workers on this nats-server (nats://HOST:PORT, or
    /// tls://; several comma-separated; nats://USER:PASSWORD@… or nats://TOKEN@… carry
    /// credentials) instead of running the agents here (`run`, `call`, `dispatch`, `mcp`,
    /// `serve`, `live`); with `worker` and `events`, the server to serve on or read from.
    #[arg(long, global = true, env = "AURA_NATS_URL", hide_env_values = true)]
    nats: Option<String>,
    /// A .creds file (a user JWT and its nkey seed, as `nsc` writes them).
    #[arg(long, global = true, env = "AURA_NATS_CREDS")]
    nats_creds: Option<PathBuf>,
    /// A file holding a user's nkey seed (`aura keygen --nkey --out FILE` makes one).
    #[arg(long, global = true, env = "AURA_NATS_NKEY")]
    nats_nkey: Option<PathBuf>,
    /// A user name; its password is taken from AURA_NATS_PASSWORD. (A token: AURA_NATS_TOKEN.)
    #[arg(long, global = true, env = "AURA_NATS_USER")]
    nats_user: Option<String>,
    /// The CAs (PEM) that may sign the server's certificate, instead of the system's; TLS is
    /// then required.
    #[arg(long, global = true, env = "AURA_NATS_TLS_CA")]
    nats_tls_ca: Option<PathBuf>,
    /// This process's certificate (PEM) for a server that verifies its clients (mTLS).
    #[arg(long, global = true, env = "AURA_NATS_TLS_CERT")]
    nats_tls_cert: Option<PathBuf>,
    /// The private key (PEM) of --nats-tls-cert.
    #[arg(long, global = true, env = "AURA_NATS_TLS_KEY")]
    nats_tls_key: Option<PathBuf>,
    /// Require TLS even with a nats:// URL and no CA or certificate given.
    #[arg(long, global = true, env = "AURA_NATS_TLS")]
    nats_tls: bool,
    /// This host's identity on the wire: a key file from `aura keygen`. A worker signs its
    /// answers and its discovery info with it.
    #[arg(long, global = true, env = "AURA_IDENTITY")]
    identity: Option<PathBuf>,
    /// Believe only answers signed by these workers' public keys (hex, comma-separated; what
    /// `aura keygen` printed for their --identity): an unsigned, forged or replayed answer is
    /// quarantined and the request sent again [default: every answer is believed].
    #[arg(long, global = true, env = "AURA_TRUSTED_WORKERS")]
    trust_workers: Option<String>,
    /// A worker runs a confirm_required call (calendar.schedule_event) only with a proof of
    /// the user's yes signed by one of these fronts' keys (their --identity): hex,
    /// comma-separated [default: no proof needed].
    #[arg(long, global = true, env = "AURA_TRUSTED_FRONTS")]
    trust_fronts: Option<String>,
}

impl std::fmt::Debug for NatsArgs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NatsArgs")
            .field(
                "nats",
                &self.nats.as_deref().map(aura_wire::access::shown_urls),
            )
            .field("nats_creds", &self.nats_creds)
            .field("nats_nkey", &self.nats_nkey)
            .field("nats_user", &self.nats_user)
            .field("identity", &self.identity)
            .finish_non_exhaustive()
    }
}

impl NatsArgs {
    /// The checked access, or `None` without --nats (any of its other options given alone is
    /// refused: they would be silently unused).
    pub fn access(self) -> anyhow::Result<Option<NatsAccess>> {
        let password = std::env::var(PASSWORD_ENV).ok();
        let token = std::env::var(TOKEN_ENV).ok();
        let Some(url) = self.nats else {
            let alone = [
                self.nats_creds.is_some().then_some("--nats-creds"),
                self.nats_nkey.is_some().then_some("--nats-nkey"),
                self.nats_user.is_some().then_some("--nats-user"),
                self.nats_tls_ca.is_some().then_some("--nats-tls-ca"),
                self.nats_tls_cert.is_some().then_some("--nats-tls-cert"),
                self.nats_tls_key.is_some().then_some("--nats-tls-key"),
                self.identity.is_some().then_some("--identity"),
                self.trust_workers.is_some().then_some("--trust-workers"),
                self.trust_fronts.is_some().then_some("--trust-fronts"),
            ];
            if let Some(option) = alone.into_iter().flatten().next() {
                anyhow::bail!("{option} was given without --nats (or AURA_NATS_URL)");
            }
            return Ok(None);
        };
        let options = NatsOptions {
            url,
            creds: self.nats_creds,
            nkey: self.nats_nkey,
            user: self.nats_user,
            password,
            token,
            tls_ca: self.nats_tls_ca,
            tls_cert: self.nats_tls_cert,
            tls_key: self.nats_tls_key,
            tls: self.nats_tls,
            identity: self.identity,
            trusted_workers: self.trust_workers,
            trusted_fronts: self.trust_fronts,
        };
        NatsAccess::from_options(&options)
            .map(Some)
            .context("cannot use --nats")
    }
}
