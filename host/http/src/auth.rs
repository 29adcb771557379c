//! Bearer tokens: an HTTP front as an OAuth 2.1 resource server (the MCP authorization spec).
//!
//! It owns checking a request's `Authorization: Bearer` JWT (signed by a key of the issuer's
//! JWKS, read from a file or fetched from a URL and re-read when a token names a key it does
//! not know; issued by the configured issuer; for this server's audience, RFC 8707; not
//! expired), the scopes a request needs (a front says which, per request, through a
//! [`ScopeRule`]), the answers the spec gives (401 with `WWW-Authenticate: Bearer` naming the
//! RFC 9728 metadata; 403 `insufficient_scope`), and serving that metadata at
//! `/.well-known/oauth-protected-resource`. Only asymmetric algorithms are taken (a key's type
//! must fit the token's algorithm: no `none`, no HMAC with a public key as its secret).
//!
//! It must not issue tokens to clients nor pass a token on (no passthrough): a front uses the
//! [`Grant`] it puts in the request's extensions, never the token.

mod jwks;

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::request::Parts;
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use jsonwebtoken::{Algorithm, Validation};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use aura_contract::limits::{
    AUTH_CLOCK_SKEW_S, AUTH_JWKS_MAX_AGE_MS, AUTH_JWKS_REFRESH_MIN_MS, AUTH_TOKEN_BYTES_MAX,
    AUTH_TOKENS_REMEMBERED_MAX,
};

use crate::GuardError;
pub use jwks::JwksSource;
use jwks::{Fetcher, Key, read_keys};

/// Listing tools, calling one that changes nothing outside the call, reading decisions.
pub const SCOPE_READ: &str = "aura.read";
/// Calling a tool the user must confirm (`calendar.schedule_event`), answering a question.
pub const SCOPE_ACT: &str = "aura.act";
/// Telling a live session what happened (`POST /signals`).
pub const SCOPE_SIGNAL: &str = "aura.signal";
/// Every scope a front may ask for, as the metadata lists them.
pub const SCOPES: [&str; 3] = [SCOPE_READ, SCOPE_ACT, SCOPE_SIGNAL];

/// The path of the protected resource metadata (RFC 9728 §3).
pub const METADATA_PATH: &str = "/.well-known/oauth-protected-resource";

/// The algorithms a token may be signed with: asymmetric ones only.
pub(crate) const ALGORITHMS: [Algorithm; 9] = [
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
    Algorithm::ES256,
    Algorithm::ES384,
    Algorithm::EdDSA,
];

/// Who may call a front: tokens of this issuer, for this audience, signed by its keys.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthSettings {
    /// The authorization server's issuer identifier (a token's `iss`, exactly).
    pub issuer: String,
    /// This server's canonical URL as clients name it (`https://host:port/mcp`): a token's
    /// `aud` must hold it (RFC 8707), and it is the metadata's `resource`.
    pub audience: String,
    /// The issuer's public keys.
    pub jwks: JwksSource,
}

/// What a valid token grants, put in the request's extensions for the front.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    /// The token's `sub` (empty when it has none).
    pub subject: String,
    /// Its scopes (`scope`, space-separated, or `scp`, a list).
    pub scopes: BTreeSet<String>,
}

/// Why a request was not served, as the spec answers it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// No bearer token: 401, the challenge names the metadata and the scope needed.
    NoToken,
    /// A token that is not valid here (why, for the `error_description`): 401 `invalid_token`.
    Invalid(String),
    /// A valid token without every scope the request needs: 403 `insufficient_scope`.
    InsufficientScope(Vec<&'static str>),
    /// A body past what the rule reads to decide: 413.
    TooLarge(usize),
}

/// The scopes each request of a front needs.
pub trait ScopeRule: Send + Sync + 'static {
    /// Bytes of the body to read to decide (0: the head decides; past it, 413).
    fn body_bytes_max(&self, parts: &Parts) -> usize;
    /// The scopes `parts` (with `body`, read if [`ScopeRule::body_bytes_max`] asked) needs.
    fn needed(&self, parts: &Parts, body: &[u8]) -> Vec<&'static str>;
}

/// The issuer's keys as last read.
struct Keys {
    keys: Vec<Key>,
    read_at: Instant,
}

/// Checks bearer tokens for one front.
pub struct Authenticator {
    settings: AuthSettings,
    keys: tokio::sync::RwLock<Keys>,
    /// Held while the keys are read again, so one reading serves every waiting request.
    rereading: tokio::sync::Mutex<()>,
    /// [`AUTH_JWKS_REFRESH_MIN_MS`] (a unit test's rotation shortens it).
    reread_min_ms: u64,
    /// Tokens verified, by their sha256: their grant and expiry (Unix seconds). A client sends
    /// the same token with every request; its signature is checked once.
    verified: std::sync::Mutex<std::collections::HashMap<[u8; 32], (Grant, u64)>>,
    fetcher: Fetcher,
    metadata: Value,
    metadata_url: String,
    metadata_paths: Vec<String>,
    /// The audience URL's host, lower-case, without brackets.
    audience_host: Option<String>,
}

impl std::fmt::Debug for Authenticator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Authenticator")
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

impl Authenticator {
    /// An authenticator for `settings`, its keys read now (a front does not start without
    /// them).
    pub async fn new(settings: AuthSettings) -> Result<Self, GuardError> {
        let resource = url::Url::parse(&settings.audience).map_err(|error| {
            GuardError::Auth(format!("--auth-audience {}: {error}", settings.audience))
        })?;
        if !matches!(resource.scheme(), "https" | "http") || resource.fragment().is_some() {
            return Err(GuardError::Auth(format!(
                "--auth-audience {}: this server's URL (https://host[:port]/path, no fragment)",
                settings.audience
            )));
        }
        let path = resource.path().trim_end_matches('/');
        let origin = resource.origin().ascii_serialization();
        let metadata_url = format!("{origin}{METADATA_PATH}{path}");
        let mut metadata_paths = vec![METADATA_PATH.to_owned()];
        if !path.is_empty() {
            metadata_paths.push(format!("{METADATA_PATH}{path}"));
        }
        let metadata = json!({
            "resource": settings.audience,
            "authorization_servers": [settings.issuer],
            "scopes_supported": SCOPES,
            "bearer_methods_supported": ["header"],
            "resource_name": "aura",
        });
        let audience_host = resource
            .host_str()
            .map(|host| host.trim_matches(['[', ']']).to_ascii_lowercase());
        let fetcher = Fetcher::new()?;
        let keys = read_keys(&settings.jwks, &fetcher).await?;
        Ok(Self {
            settings,
            keys: tokio::sync::RwLock::new(Keys {
                keys,
                read_at: Instant::now(),
            }),
            rereading: tokio::sync::Mutex::new(()),
            reread_min_ms: AUTH_JWKS_REFRESH_MIN_MS,
            verified: std::sync::Mutex::default(),
            fetcher,
            metadata,
            metadata_url,
            metadata_paths,
            audience_host,
        })
    }

    /// The RFC 9728 metadata it serves.
    pub fn metadata(&self) -> &Value {
        &self.metadata
    }

    /// The host of this server's audience URL.
    pub fn audience_host(&self) -> Option<&str> {
        self.audience_host.as_deref()
    }

    /// Where clients find the metadata (the challenge's `resource_metadata`).
    pub fn metadata_url(&self) -> &str {
        &self.metadata_url
    }

    /// Checks an `Authorization` header's token; what it grants, or why it is refused.
    pub async fn check(&self, authorization: Option<&HeaderValue>) -> Result<Grant, Refusal> {
        let Some(value) = authorization else {
            return Err(Refusal::NoToken);
        };
        if value.len() > AUTH_TOKEN_BYTES_MAX {
            return Err(Refusal::Invalid(format!(
                "the token is longer than {AUTH_TOKEN_BYTES_MAX} bytes"
            )));
        }
        let text = value.to_str().unwrap_or_default();
        let token = match text.split_once(' ') {
            Some((scheme, token)) if scheme.eq_ignore_ascii_case("bearer") => token.trim(),
            _ => return Err(Refusal::NoToken),
        };
        self.reread_if_old().await;
        let digest = Sha256::digest(token.as_bytes()).into();
        if let Some(grant) = self.remembered(&digest) {
            return Ok(grant);
        }
        let (grant, expires_s) = self.verify(token).await?;
        self.remember(digest, &grant, expires_s);
        Ok(grant)
    }

    /// The grant of a token (by its sha256) verified before and not yet expired.
    fn remembered(&self, digest: &[u8; 32]) -> Option<Grant> {
        let mut verified = self.verified.lock().unwrap_or_else(|e| e.into_inner());
        let (grant, expires_s) = verified.get(digest)?;
        if expires_s.saturating_add(AUTH_CLOCK_SKEW_S) >= jsonwebtoken::get_current_timestamp() {
            return Some(grant.clone());
        }
        verified.remove(digest);
        None
    }

    /// Keeps a verified token's grant until it expires, within [`AUTH_TOKENS_REMEMBERED_MAX`]
    /// (past it the expired ones go, then all).
    fn remember(&self, digest: [u8; 32], grant: &Grant, expires_s: u64) {
        let mut verified = self.verified.lock().unwrap_or_else(|e| e.into_inner());
        if verified.len() >= AUTH_TOKENS_REMEMBERED_MAX {
            let now_s = jsonwebtoken::get_current_timestamp();
            verified.retain(|_, (_, expires)| expires.saturating_add(AUTH_CLOCK_SKEW_S) >= now_s);
            if verified.len() >= AUTH_TOKENS_REMEMBERED_MAX {
                verified.clear();
            }
        }
        verified.insert(digest, (grant.clone(), expires_s));
    }

    /// Verifies a token against the issuer's keys: its grant and expiry (Unix seconds).
    async fn verify(&self, token: &str) -> Result<(Grant, u64), Refusal> {
        let header = jsonwebtoken::decode_header(token)
            .map_err(|error| Refusal::Invalid(format!("not a JWT ({error})")))?;
        if !ALGORITHMS.contains(&header.alg) {
            return Err(Refusal::Invalid(format!(
                "tokens signed with {:?} are not taken here",
                header.alg
            )));
        }
        let mut validation = Validation::new(header.alg);
        validation.algorithms = vec![header.alg];
        validation.leeway = AUTH_CLOCK_SKEW_S;
        validation.set_issuer(&[&self.settings.issuer]);
        validation.set_audience(&[&self.settings.audience]);
        validation.set_required_spec_claims(&["exp", "iss", "aud"]);
        validation.validate_nbf = true;
        for attempt in 0..2 {
            {
                let keys = self.keys.read().await;
                let candidates: Vec<&Key> = keys
                    .keys
                    .iter()
                    .filter(|key| key.algorithms.contains(&header.alg))
                    // A key without an id may check any token; with one, only its own.
                    .filter(|key| header.kid.is_none() || key.id.is_none() || key.id == header.kid)
                    .collect();
                let mut last = None;
                for key in &candidates {
                    match jsonwebtoken::decode::<Value>(token, &key.key, &validation) {
                        Ok(data) => return Ok(grant(&data.claims)),
                        Err(error) => match error.kind() {
                            jsonwebtoken::errors::ErrorKind::InvalidSignature => {
                                last = Some(error);
                            }
                            _ => return Err(Refusal::Invalid(described(&error))),
                        },
                    }
                }
                if let Some(error) = last {
                    return Err(Refusal::Invalid(described(&error)));
                }
            }
            // No key of the issuer's fits: it may have rotated them since they were read.
            if attempt == 0 && !self.reread(self.reread_min_ms).await {
                break;
            }
        }
        Err(Refusal::Invalid(match header.kid {
            Some(kid) => format!("no key `{kid}` for {:?} in the issuer's JWKS", header.alg),
            None => format!("no key for {:?} in the issuer's JWKS", header.alg),
        }))
    }

    /// Reads the keys again when they are older than [`AUTH_JWKS_MAX_AGE_MS`] (a revoked key
    /// leaves within that).
    async fn reread_if_old(&self) {
        let age = self.keys.read().await.read_at.elapsed();
        if age > Duration::from_millis(AUTH_JWKS_MAX_AGE_MS) {
            self.reread(AUTH_JWKS_MAX_AGE_MS).await;
        }
    }

    /// Reads the keys again unless they were read within `min_age_ms`; whether they were. A
    /// failed reading keeps the keys there were (logged).
    async fn reread(&self, min_age_ms: u64) -> bool {
        let _one = self.rereading.lock().await;
        if self.keys.read().await.read_at.elapsed() < Duration::from_millis(min_age_ms) {
            return false;
        }
        match read_keys(&self.settings.jwks, &self.fetcher).await {
            Ok(keys) => {
                *self.keys.write().await = Keys {
                    keys,
                    read_at: Instant::now(),
                };
                // A key the issuer withdrew takes its tokens with it.
                self.verified
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .clear();
                true
            }
            Err(error) => {
                tracing::warn!(%error, "the issuer's keys could not be read again; the old ones stay");
                self.keys.write().await.read_at = Instant::now();
                false
            }
        }
    }

    /// The spec's answer to `refusal`.
    pub fn refuse(&self, refusal: &Refusal, needed: &[&'static str]) -> Response {
        let quoted = |text: &str| -> String {
            text.chars()
                .filter(|c| !c.is_control() && *c != '"' && *c != '\\')
                .take(300)
                .collect()
        };
        let (status, challenge, body) = match refusal {
            Refusal::NoToken => (
                StatusCode::UNAUTHORIZED,
                format!(
                    r#"Bearer resource_metadata="{}", scope="{}""#,
                    self.metadata_url,
                    needed.join(" ")
                ),
                json!({"error": "invalid_request", "error_description": "a bearer token is needed"}),
            ),
            Refusal::Invalid(why) => (
                StatusCode::UNAUTHORIZED,
                format!(
                    r#"Bearer error="invalid_token", error_description="{}", resource_metadata="{}""#,
                    quoted(why),
                    self.metadata_url
                ),
                json!({"error": "invalid_token", "error_description": why}),
            ),
            Refusal::InsufficientScope(scopes) => {
                let why = format!("the token lacks the scope {}", scopes.join(" "));
                (
                    StatusCode::FORBIDDEN,
                    format!(
                        r#"Bearer error="insufficient_scope", scope="{}", resource_metadata="{}", error_description="{}""#,
                        needed.join(" "),
                        self.metadata_url,
                        quoted(&why)
                    ),
                    json!({"error": "insufficient_scope", "error_description": why}),
                )
            }
            Refusal::TooLarge(max) => {
                return (
                    StatusCode::PAYLOAD_TOO_LARGE,
                    format!("the body is larger than {max} bytes\n"),
                )
                    .into_response();
            }
        };
        let mut response = (status, json_body(&body)).into_response();
        if let Ok(value) = HeaderValue::from_str(&challenge) {
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, value);
        }
        response
    }

    /// Wraps `router` (every route in it needs a token with the scopes `rule` says) and adds
    /// the metadata routes, which need none.
    pub fn protect(
        self: &Arc<Self>,
        router: axum::Router,
        rule: Arc<dyn ScopeRule>,
    ) -> axum::Router {
        let protected = router.layer(axum::middleware::from_fn_with_state(
            (self.clone(), rule),
            authenticate,
        ));
        self.metadata_paths.iter().fold(protected, |router, path| {
            let metadata = self.metadata.clone();
            router.route(
                path,
                axum::routing::get(move || async move { json_body(&metadata) }),
            )
        })
    }
}

/// Middleware: the token first (401 before any body is read), then the scopes the request
/// needs (403), then the request goes on with its [`Grant`].
async fn authenticate(
    State((auth, rule)): State<(Arc<Authenticator>, Arc<dyn ScopeRule>)>,
    request: Request,
    next: Next,
) -> Response {
    let (mut parts, body) = request.into_parts();
    let grant = match auth.check(parts.headers.get(header::AUTHORIZATION)).await {
        Ok(grant) => grant,
        Err(refusal) => {
            tracing::warn!(
                ?refusal,
                path = parts.uri.path(),
                "a request without a valid token was refused"
            );
            // The challenge's scope: what the request's head alone needs.
            return auth.refuse(&refusal, &rule.needed(&parts, &[]));
        }
    };
    let (body, bytes) = match rule.body_bytes_max(&parts) {
        0 => (body, axum::body::Bytes::new()),
        max => match axum::body::to_bytes(body, max).await {
            Ok(bytes) => (Body::from(bytes.clone()), bytes),
            Err(_) => return auth.refuse(&Refusal::TooLarge(max), &[]),
        },
    };
    let needed = rule.needed(&parts, &bytes);
    let missing: Vec<&'static str> = needed
        .iter()
        .copied()
        .filter(|scope| !grant.scopes.contains(*scope))
        .collect();
    if !missing.is_empty() {
        tracing::warn!(
            subject = grant.subject,
            ?missing,
            "a request without the scope it needs was refused"
        );
        return auth.refuse(&Refusal::InsufficientScope(missing), &needed);
    }
    parts.extensions.insert(grant);
    next.run(Request::from_parts(parts, body)).await
}

/// `value` as an `application/json` body.
fn json_body(value: &Value) -> impl IntoResponse + use<> {
    (
        [(header::CONTENT_TYPE, "application/json")],
        value.to_string(),
    )
}

/// What the claims grant.
fn grant(claims: &Value) -> (Grant, u64) {
    let mut scopes = BTreeSet::new();
    if let Some(text) = claims.get("scope").and_then(Value::as_str) {
        scopes.extend(text.split_whitespace().map(str::to_owned));
    }
    if let Some(list) = claims.get("scp").and_then(Value::as_array) {
        scopes.extend(list.iter().filter_map(Value::as_str).map(str::to_owned));
    }
    let grant = Grant {
        subject: claims
            .get("sub")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        scopes,
    };
    // Required and checked by now: a number of seconds.
    let expires_s = claims.get("exp").and_then(Value::as_f64).unwrap_or(0.0) as u64;
    (grant, expires_s)
}

/// A validation error said for a client.
fn described(error: &jsonwebtoken::errors::Error) -> String {
    use jsonwebtoken::errors::ErrorKind;
    match error.kind() {
        ErrorKind::ExpiredSignature => "the token has expired".into(),
        ErrorKind::ImmatureSignature => "the token is not valid yet".into(),
        ErrorKind::InvalidAudience => "the token is for another audience".into(),
        ErrorKind::InvalidIssuer => "the token is from another issuer".into(),
        ErrorKind::InvalidSignature => "the token's signature is not the issuer's".into(),
        ErrorKind::MissingRequiredClaim(claim) => format!("the token has no `{claim}`"),
        other => format!("the token is not valid ({other:?})"),
    }
}

/// The key id `aura token` gives an Ed25519 public key: its first 16 hex digits.
pub fn ed25519_kid(public: &[u8; 32]) -> String {
    public[..8].iter().map(|b| format!("{b:02x}")).collect()
}

/// An Ed25519 public key (32 bytes) as a JWK set of one key under [`ed25519_kid`]: what
/// `aura token --jwks` prints for an identity.
pub fn ed25519_jwks(public: &[u8; 32]) -> Value {
    json!({"keys": [{
        "kty": "OKP",
        "crv": "Ed25519",
        "x": base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(public),
        "kid": ed25519_kid(public),
        "alg": "EdDSA",
        "use": "sig",
    }]})
}

/// A JWT access token (RFC 9068 `at+jwt`) with `claims`, signed EdDSA by `sign` (a function
/// from the signing input to the 64-byte signature) under `kid`.
pub fn ed25519_token(claims: &Value, kid: &str, sign: impl FnOnce(&[u8]) -> [u8; 64]) -> String {
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let header = json!({"alg": "EdDSA", "typ": "at+jwt", "kid": kid});
    let input = format!(
        "{}.{}",
        b64.encode(header.to_string()),
        b64.encode(claims.to_string())
    );
    let signature = sign(input.as_bytes());
    format!("{input}.{}", b64.encode(signature))
}

#[cfg(test)]
#[path = "auth/tests.rs"]
mod tests;
