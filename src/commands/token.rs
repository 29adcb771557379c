//! `aura token`: a small issuer of bearer tokens for the HTTP fronts, with a key from `aura
//! keygen`, for a deployment without an authorization server of its own (a person's phone
//! app and their aura). It must not serve or check tokens: [`aura_http::auth`] does.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, bail};

/// Print a bearer token (an EdDSA JWT access token) for `aura serve` or `aura live --listen`
/// started with --auth-issuer ISSUER --auth-jwks FILE --auth-audience AUDIENCE, signed with
/// KEY; or, with --jwks, the JSON Web Key Set to give those fronts as FILE.
#[derive(clap::Args, Debug)]
pub struct TokenCommand {
    /// The issuer's key (`aura keygen --out KEY`).
    #[arg(long)]
    key: PathBuf,
    /// Print the key's public JWKS instead of a token.
    #[arg(long, conflicts_with_all = ["issuer", "audience"])]
    jwks: bool,
    /// The token's issuer (`iss`): the fronts' --auth-issuer.
    #[arg(long, required_unless_present = "jwks")]
    issuer: Option<String>,
    /// The server it is for (`aud`): the fronts' --auth-audience, e.g.
    /// https://aura.example:8765/mcp.
    #[arg(long, required_unless_present = "jwks")]
    audience: Option<String>,
    /// A scope it grants (repeatable or space-separated): aura.read (list and call tools that
    /// change nothing, read decisions), aura.act (tools the user confirms, answers),
    /// aura.signal (tell a live session what happened).
    #[arg(long = "scope", default_value = "aura.read")]
    scopes: Vec<String>,
    /// Whom it is for (`sub`).
    #[arg(long, default_value = "aura-user")]
    subject: String,
    /// How long it lasts, in seconds.
    #[arg(long, default_value_t = 3600)]
    ttl_s: u64,
}

impl TokenCommand {
    /// Prints the token or the JWKS.
    pub fn execute(self) -> anyhow::Result<ExitCode> {
        let identity = aura_plugins::signing::Identity::load(&self.key)
            .with_context(|| format!("cannot read the key {}", self.key.display()))?;
        let public = identity.public_bytes();
        if self.jwks {
            println!("{}", aura_http::auth::ed25519_jwks(&public));
            return Ok(ExitCode::SUCCESS);
        }
        let scopes: Vec<&str> = self
            .scopes
            .iter()
            .flat_map(|s| s.split_whitespace())
            .collect();
        if let Some(unknown) = scopes
            .iter()
            .find(|scope| !aura_http::auth::SCOPES.contains(scope))
        {
            bail!(
                "--scope {unknown}: one of {}",
                aura_http::auth::SCOPES.join(", ")
            );
        }
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .context("the clock is before 1970")?
            .as_secs();
        let claims = serde_json::json!({
            "iss": self.issuer,
            "aud": self.audience,
            "sub": self.subject,
            "iat": now,
            "exp": now.saturating_add(self.ttl_s),
            "scope": scopes.join(" "),
        });
        let kid = aura_http::auth::ed25519_kid(&public);
        let token =
            aura_http::auth::ed25519_token(&claims, &kid, |input| identity.sign_bytes(input));
        println!("{token}");
        Ok(ExitCode::SUCCESS)
    }
}
