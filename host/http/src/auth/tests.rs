use super::*;

use std::path::PathBuf;

use ring::rand::SystemRandom;
use ring::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, Ed25519KeyPair, KeyPair};

const ISSUER: &str = "https://issuer.example";
const AUDIENCE: &str = "https://aura.example:8443/mcp";

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

fn ed25519() -> Ed25519KeyPair {
    let pkcs8 = Ed25519KeyPair::generate_pkcs8(&SystemRandom::new()).unwrap();
    Ed25519KeyPair::from_pkcs8(pkcs8.as_ref()).unwrap()
}

fn public(pair: &Ed25519KeyPair) -> [u8; 32] {
    pair.public_key().as_ref().try_into().unwrap()
}

/// An EdDSA token of `pair` under `kid` with `claims`.
fn token(pair: &Ed25519KeyPair, kid: &str, claims: &Value) -> String {
    ed25519_token(claims, kid, |input| {
        pair.sign(input).as_ref().try_into().unwrap()
    })
}

/// Good claims: this issuer, this audience, an hour left, `scope`.
fn claims(scope: &str) -> Value {
    json!({"iss": ISSUER, "aud": AUDIENCE, "sub": "user-1", "exp": now() + 3600,
        "iat": now(), "scope": scope})
}

/// A token's key in what an authenticator remembers.
fn digest(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

fn bearer(token: &str) -> HeaderValue {
    HeaderValue::from_str(&format!("Bearer {token}")).unwrap()
}

fn kid(pair: &Ed25519KeyPair) -> String {
    ed25519_jwks(&public(pair))["keys"][0]["kid"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// An authenticator over a JWKS file holding `jwks`.
async fn authenticator(dir: &std::path::Path, jwks: &Value) -> Authenticator {
    let path = dir.join("jwks.json");
    std::fs::write(&path, jwks.to_string()).unwrap();
    Authenticator::new(AuthSettings {
        issuer: ISSUER.into(),
        audience: AUDIENCE.into(),
        jwks: JwksSource::File(path),
    })
    .await
    .unwrap()
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("aura-http-auth-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn invalid(result: Result<Grant, Refusal>) -> String {
    match result {
        Err(Refusal::Invalid(why)) => why,
        other => panic!("not invalid: {other:?}"),
    }
}

#[tokio::test]
async fn a_token_of_the_issuer_for_this_server_is_taken_and_every_other_refused() {
    let dir = temp_dir("refusals");
    let pair = ed25519();
    let auth = authenticator(&dir, &ed25519_jwks(&public(&pair))).await;
    let kid = kid(&pair);

    let good = token(&pair, &kid, &claims("aura.read aura.act"));
    let grant = auth.check(Some(&bearer(&good))).await.unwrap();
    assert_eq!(grant.subject, "user-1");
    assert_eq!(
        grant.scopes,
        BTreeSet::from(["aura.act".to_owned(), "aura.read".to_owned()])
    );
    // `aud` as a list holding this server; scopes as `scp`; the scheme in any case.
    let mut listed = claims("");
    listed["aud"] = json!(["https://other.example", AUDIENCE]);
    listed["scp"] = json!(["aura.signal"]);
    let value = HeaderValue::from_str(&format!("bearer {}", token(&pair, &kid, &listed))).unwrap();
    let grant = auth.check(Some(&value)).await.unwrap();
    assert_eq!(grant.scopes, BTreeSet::from(["aura.signal".to_owned()]));

    assert_eq!(auth.check(None).await, Err(Refusal::NoToken));
    let basic = HeaderValue::from_static("Basic dXNlcjpwYXNz");
    assert_eq!(auth.check(Some(&basic)).await, Err(Refusal::NoToken));

    let mut expired = claims("aura.read");
    // Past the allowed clock skew.
    expired["exp"] = json!(now() - AUTH_CLOCK_SKEW_S - 60);
    let why = invalid(
        auth.check(Some(&bearer(&token(&pair, &kid, &expired))))
            .await,
    );
    assert_eq!(why, "the token has expired");

    let mut later = claims("aura.read");
    later["nbf"] = json!(now() + 3600);
    let why = invalid(auth.check(Some(&bearer(&token(&pair, &kid, &later)))).await);
    assert_eq!(why, "the token is not valid yet");

    let mut elsewhere = claims("aura.read");
    // The same host without the path is another resource.
    elsewhere["aud"] = json!("https://aura.example:8443");
    let why = invalid(
        auth.check(Some(&bearer(&token(&pair, &kid, &elsewhere))))
            .await,
    );
    assert_eq!(why, "the token is for another audience");

    let mut foreign = claims("aura.read");
    foreign["iss"] = json!("https://evil.example");
    let why = invalid(
        auth.check(Some(&bearer(&token(&pair, &kid, &foreign))))
            .await,
    );
    assert_eq!(why, "the token is from another issuer");

    let mut endless = claims("aura.read");
    endless.as_object_mut().unwrap().remove("exp");
    let why = invalid(
        auth.check(Some(&bearer(&token(&pair, &kid, &endless))))
            .await,
    );
    assert_eq!(why, "the token has no `exp`");

    // Signed by another key under the issuer's key id.
    let forged = token(&ed25519(), &kid, &claims("aura.read"));
    let why = invalid(auth.check(Some(&bearer(&forged))).await);
    assert_eq!(why, "the token's signature is not the issuer's");

    // A good token with one byte of its payload changed.
    let (head, rest) = good.split_once('.').unwrap();
    let (payload, signature) = rest.split_once('.').unwrap();
    let mut changed = payload.as_bytes().to_vec();
    changed[5] = if changed[5] == b'A' { b'B' } else { b'A' };
    let tampered = format!("{head}.{}.{signature}", String::from_utf8(changed).unwrap());
    assert!(auth.check(Some(&bearer(&tampered))).await.is_err());

    let why = invalid(auth.check(Some(&bearer("not.a.jwt"))).await);
    assert!(why.starts_with("not a JWT"), "{why}");
    let huge = "a".repeat(AUTH_TOKEN_BYTES_MAX + 1);
    let why = invalid(auth.check(Some(&bearer(&huge))).await);
    assert!(why.contains("longer than"), "{why}");
}

/// `alg: none` and HMAC (with the issuer's public key as the secret: the classic confusion)
/// are never taken, whatever the key set holds.
#[tokio::test]
async fn unsigned_and_symmetric_tokens_are_refused() {
    let dir = temp_dir("algorithms");
    let pair = ed25519();
    let auth = authenticator(&dir, &ed25519_jwks(&public(&pair))).await;
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let body = b64.encode(claims("aura.read").to_string());
    let none = format!("{}.{body}.", b64.encode(r#"{"alg":"none","typ":"JWT"}"#));
    assert!(auth.check(Some(&bearer(&none))).await.is_err());
    let header = jsonwebtoken::Header {
        kid: Some(kid(&pair)),
        ..jsonwebtoken::Header::new(Algorithm::HS256)
    };
    let hmac = jsonwebtoken::encode(
        &header,
        &claims("aura.read"),
        &jsonwebtoken::EncodingKey::from_secret(pair.public_key().as_ref()),
    )
    .unwrap();
    let why = invalid(auth.check(Some(&bearer(&hmac))).await);
    assert_eq!(why, "tokens signed with HS256 are not taken here");
}

/// A P-256 key (ES256) beside an Ed25519 one; a key of a type this server does not take
/// (`oct`) or for encryption is skipped; a token for one key type is not checked with another.
#[tokio::test]
async fn es256_keys_work_and_keys_of_other_kinds_are_skipped() {
    let dir = temp_dir("es256");
    let random = SystemRandom::new();
    let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &random).unwrap();
    let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref(), &random)
        .unwrap();
    // The public key is the uncompressed point: 0x04, x, y.
    let point = pair.public_key().as_ref();
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let ed = ed25519();
    let mut jwks = ed25519_jwks(&public(&ed));
    let keys = jwks["keys"].as_array_mut().unwrap();
    keys.push(
        json!({"kty": "EC", "crv": "P-256", "kid": "p256", "use": "sig",
        "x": b64.encode(&point[1..33]), "y": b64.encode(&point[33..])}),
    );
    keys.push(json!({"kty": "oct", "k": "c2VjcmV0", "kid": "hmac"}));
    keys.push(
        json!({"kty": "OKP", "crv": "Ed25519", "kid": "enc", "use": "enc",
        "x": b64.encode(public(&ed25519()))}),
    );
    let auth = authenticator(&dir, &jwks).await;
    assert_eq!(auth.keys.read().await.keys.len(), 2);

    let header = jsonwebtoken::Header {
        kid: Some("p256".into()),
        ..jsonwebtoken::Header::new(Algorithm::ES256)
    };
    let es256 = jsonwebtoken::encode(
        &header,
        &claims("aura.read"),
        &jsonwebtoken::EncodingKey::from_ec_der(pkcs8.as_ref()),
    )
    .unwrap();
    assert!(auth.check(Some(&bearer(&es256))).await.is_ok());
    // The same token claiming the Ed25519 key's id: no EdDSA key checks an ES256 token.
    let header = jsonwebtoken::Header {
        kid: Some(kid(&ed)),
        ..jsonwebtoken::Header::new(Algorithm::ES256)
    };
    let crossed = jsonwebtoken::encode(
        &header,
        &claims("aura.read"),
        &jsonwebtoken::EncodingKey::from_ec_der(pkcs8.as_ref()),
    )
    .unwrap();
    let why = invalid(auth.check(Some(&bearer(&crossed))).await);
    assert!(why.starts_with("no key"), "{why}");

    // A set with no key this server can use does not make an authenticator.
    let path = dir.join("unusable.json");
    std::fs::write(
        &path,
        json!({"keys": [{"kty": "oct", "k": "c2VjcmV0"}]}).to_string(),
    )
    .unwrap();
    let error = Authenticator::new(AuthSettings {
        issuer: ISSUER.into(),
        audience: AUDIENCE.into(),
        jwks: JwksSource::File(path),
    })
    .await
    .unwrap_err();
    assert!(error.to_string().contains("no signing key"), "{error}");
}

/// The issuer rotates its key: a token naming the new key makes the set be read again, and
/// it is taken; the old key's tokens no longer are.
#[tokio::test]
async fn a_rotated_key_is_read_again_when_a_token_names_it() {
    let dir = temp_dir("rotation");
    let (old, new) = (ed25519(), ed25519());
    let mut auth = authenticator(&dir, &ed25519_jwks(&public(&old))).await;
    auth.reread_min_ms = 0;
    // Taken (and remembered) before the rotation.
    let stale = token(&old, &kid(&old), &claims("aura.read"));
    assert!(auth.check(Some(&bearer(&stale))).await.is_ok());
    assert!(auth.remembered(&digest(&stale)).is_some());
    std::fs::write(
        dir.join("jwks.json"),
        ed25519_jwks(&public(&new)).to_string(),
    )
    .unwrap();
    let fresh = token(&new, &kid(&new), &claims("aura.read"));
    assert!(auth.check(Some(&bearer(&fresh))).await.is_ok());
    // The withdrawn key's tokens went with it, remembered or not.
    assert!(auth.check(Some(&bearer(&stale))).await.is_err());
}

/// A verified token is remembered until it expires, never past it, and the memory is bounded.
#[tokio::test]
async fn verified_tokens_are_remembered_until_they_expire() {
    let dir = temp_dir("remembered");
    let pair = ed25519();
    let auth = authenticator(&dir, &ed25519_jwks(&public(&pair))).await;
    let good = token(&pair, &kid(&pair), &claims("aura.read"));
    assert_eq!(auth.remembered(&digest(&good)), None);
    let grant = auth.check(Some(&bearer(&good))).await.unwrap();
    assert_eq!(auth.remembered(&digest(&good)), Some(grant.clone()));
    // Remembered with an expiry past the skew: not taken, and forgotten.
    auth.remember(digest(&good), &grant, now() - AUTH_CLOCK_SKEW_S - 1);
    assert_eq!(auth.remembered(&digest(&good)), None);
    assert!(auth.verified.lock().unwrap().is_empty());
    for i in 0..AUTH_TOKENS_REMEMBERED_MAX + 10 {
        auth.remember(digest(&format!("token-{i}")), &grant, now() + 60);
    }
    assert!(auth.verified.lock().unwrap().len() <= AUTH_TOKENS_REMEMBERED_MAX);
}

/// Keys fetched from a URL (plain HTTP is taken from loopback only).
#[tokio::test]
async fn keys_are_fetched_from_a_url() {
    let pair = ed25519();
    let jwks = ed25519_jwks(&public(&pair));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let router = axum::Router::new().route(
        "/jwks.json",
        axum::routing::get(move || async move { json_body(&jwks) }),
    );
    tokio::spawn(async move { axum::serve(listener, router).await });
    let url = format!("http://{address}/jwks.json");
    let auth = Authenticator::new(AuthSettings {
        issuer: ISSUER.into(),
        audience: AUDIENCE.into(),
        jwks: JwksSource::parse(&url).unwrap(),
    })
    .await
    .unwrap();
    let good = token(&pair, &kid(&pair), &claims("aura.read"));
    assert!(auth.check(Some(&bearer(&good))).await.is_ok());

    assert!(JwksSource::parse("http://issuer.example/jwks.json").is_err());
    assert!(matches!(
        JwksSource::parse("https://issuer.example/jwks.json"),
        Ok(JwksSource::Url(_))
    ));
    assert_eq!(
        JwksSource::parse("keys/jwks.json").unwrap(),
        JwksSource::File("keys/jwks.json".into())
    );
}

/// Keys fetched over HTTPS, trusting the roots the fetcher has (the system's, in a front):
/// a server whose certificate no root signed is not believed.
#[tokio::test]
async fn keys_are_fetched_over_https_from_a_server_a_root_vouches_for() {
    use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, IsCa, KeyPair};
    use rustls_pki_types::pem::PemObject;
    let dir = temp_dir("https");
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate().unwrap()).unwrap();
    let key = KeyPair::generate().unwrap();
    let leaf = CertificateParams::new(vec!["127.0.0.1".to_owned()])
        .unwrap()
        .signed_by(&key, &ca)
        .unwrap();
    std::fs::write(dir.join("cert.pem"), leaf.pem()).unwrap();
    std::fs::write(dir.join("key.pem"), key.serialize_pem()).unwrap();
    let acceptor = crate::TlsFiles {
        cert: dir.join("cert.pem"),
        key: dir.join("key.pem"),
    }
    .acceptor()
    .unwrap();
    let pair = ed25519();
    let jwks = ed25519_jwks(&public(&pair));
    let tcp = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = tcp.local_addr().unwrap();
    let router = axum::Router::new().route(
        "/keys/jwks.json",
        axum::routing::get(move || async move { json_body(&jwks) }),
    );
    let listener = crate::TlsListener::new(tcp, acceptor).unwrap();
    tokio::spawn(async move { axum::serve(listener, router).await });
    let url = JwksSource::parse(&format!("https://{address}/keys/jwks.json")).unwrap();

    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(rustls_pki_types::CertificateDer::from_pem_slice(ca.pem().as_bytes()).unwrap())
        .unwrap();
    let trusting = jwks::Fetcher::with_roots(roots).unwrap();
    let keys = read_keys(&url, &trusting).await.unwrap();
    assert_eq!(keys.len(), 1);
    assert_eq!(keys[0].id.as_deref(), Some(kid(&pair).as_str()));

    let stranger = jwks::Fetcher::with_roots(rustls::RootCertStore::empty()).unwrap();
    let error = read_keys(&url, &stranger).await.err().unwrap();
    assert!(error.to_string().contains("certificate"), "{error}");
}

/// The answers RFC 6750 and the MCP authorization spec give, and the RFC 9728 metadata.
#[tokio::test]
async fn refusals_carry_the_challenge_the_spec_says() {
    let dir = temp_dir("challenge");
    let auth = authenticator(&dir, &ed25519_jwks(&public(&ed25519()))).await;
    let metadata = "https://aura.example:8443/.well-known/oauth-protected-resource/mcp";
    assert_eq!(auth.metadata_url(), metadata);
    assert_eq!(
        auth.metadata(),
        &json!({"resource": AUDIENCE, "authorization_servers": [ISSUER],
            "scopes_supported": ["aura.read", "aura.act", "aura.signal"],
            "bearer_methods_supported": ["header"], "resource_name": "aura"})
    );
    let challenge = |refusal: Refusal, needed: &[&'static str]| {
        let response = auth.refuse(&refusal, needed);
        let value = response.headers().get(header::WWW_AUTHENTICATE);
        (
            response.status().as_u16(),
            value.map(|v| v.to_str().unwrap().to_owned()),
        )
    };
    assert_eq!(
        challenge(Refusal::NoToken, &["aura.read"]),
        (
            401,
            Some(format!(
                r#"Bearer resource_metadata="{metadata}", scope="aura.read""#
            ))
        )
    );
    assert_eq!(
        challenge(
            Refusal::Invalid(r#"the "token" has expired"#.into()),
            &["aura.read"]
        ),
        (
            401,
            Some(format!(
                r#"Bearer error="invalid_token", error_description="the token has expired", resource_metadata="{metadata}""#
            ))
        )
    );
    assert_eq!(
        challenge(
            Refusal::InsufficientScope(vec!["aura.act"]),
            &["aura.read", "aura.act"]
        ),
        (
            403,
            Some(format!(
                r#"Bearer error="insufficient_scope", scope="aura.read aura.act", resource_metadata="{metadata}", error_description="the token lacks the scope aura.act""#
            ))
        )
    );
    assert_eq!(challenge(Refusal::TooLarge(10), &[]), (413, None));
}
