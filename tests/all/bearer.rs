//! Bearer tokens on the HTTP fronts: `aura serve` and `aura live --listen` over TLS as OAuth
//! 2.1 resource servers, started as a deployment starts them (an issuer key from `aura keygen`,
//! its JWKS from `aura token --jwks`, tokens from `aura token` or signed here when they must be
//! wrong in a way the command will not make). Each refusal is checked against what RFC 6750,
//! RFC 9728 and the MCP authorization spec say: the status and the whole `WWW-Authenticate`.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Value, json};

use crate::mcp::{Server, conformance_trusting};
use crate::support::{make_certificates, temp_dir};

const ISSUER: &str = "https://issuer.aura.test";

/// An answer over HTTPS: status, headers (names lower-case), body.
struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// One HTTP/1.1 request over TLS to `address` (a 127.0.0.1 port), trusting only `ca`.
fn https(
    address: &str,
    ca: &Path,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> Answer {
    use rustls_pki_types::pem::PemObject;
    let mut roots = rustls::RootCertStore::empty();
    for cert in rustls_pki_types::CertificateDer::pem_file_iter(ca).unwrap() {
        roots.add(cert.unwrap()).unwrap();
    }
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(roots)
    .with_no_client_auth();
    let name = rustls_pki_types::ServerName::try_from("127.0.0.1").unwrap();
    let connection = rustls::ClientConnection::new(Arc::new(config), name).unwrap();
    let tcp = std::net::TcpStream::connect(address).unwrap();
    let mut tls = rustls::StreamOwned::new(connection, tcp);
    let mut request = format!(
        "{method} {path} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\
         Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
         Content-Length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    tls.write_all(request.as_bytes()).unwrap();
    let mut response = Vec::new();
    // A server that closes without close_notify ends the read with an error: what came is
    // the answer.
    let _ = tls.read_to_end(&mut response);
    let text = String::from_utf8_lossy(&response).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|line| line.split(' ').nth(1))
        .and_then(|code| code.parse().ok())
        .unwrap_or(0);
    let headers = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    Answer {
        status,
        headers,
        body: body.to_owned(),
    }
}

/// A free port on 127.0.0.1 (the audience names the port, so it is chosen before the start).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// An issuer's key, certificates for 127.0.0.1, and a front's guard options for `audience`.
struct Deployment {
    dir: PathBuf,
    key: PathBuf,
}

impl Deployment {
    fn new(name: &str) -> Self {
        let dir = temp_dir(name);
        make_certificates(&dir, &[]);
        let key = dir.join("issuer.key");
        let made = crate::support::aura_command(&dir.join("keygen"))
            .args(["keygen", "--out", key.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(made.status.success(), "{made:?}");
        let jwks = crate::support::aura_command(&dir.join("keygen"))
            .args(["token", "--key", key.to_str().unwrap(), "--jwks"])
            .output()
            .unwrap();
        assert!(jwks.status.success(), "{jwks:?}");
        std::fs::write(dir.join("jwks.json"), &jwks.stdout).unwrap();
        Self { dir, key }
    }

    fn ca(&self) -> PathBuf {
        self.dir.join("ca.pem")
    }

    /// The options of a front with TLS that asks this issuer's tokens for `audience`.
    fn guard_args(&self, audience: &str) -> Vec<String> {
        let path = |name: &str| self.dir.join(name).to_str().unwrap().to_owned();
        vec![
            "--tls-cert".into(),
            path("server-cert.pem"),
            "--tls-key".into(),
            path("server-key.pem"),
            "--auth-issuer".into(),
            ISSUER.into(),
            "--auth-jwks".into(),
            path("jwks.json"),
            "--auth-audience".into(),
            audience.into(),
        ]
    }

    /// A token from `aura token`.
    fn token(&self, audience: &str, scopes: &str) -> String {
        let output = crate::support::aura_command(&self.dir.join("keygen"))
            .args(["token", "--key", self.key.to_str().unwrap()])
            .args([
                "--issuer",
                ISSUER,
                "--audience",
                audience,
                "--scope",
                scopes,
            ])
            .output()
            .unwrap();
        assert!(output.status.success(), "{output:?}");
        String::from_utf8(output.stdout).unwrap().trim().to_owned()
    }

    /// A token with `claims` as they are, signed with the issuer's key.
    fn signed(&self, claims: &Value) -> String {
        let identity = aura_plugins::signing::Identity::load(&self.key).unwrap();
        let kid = aura_http::auth::ed25519_kid(&identity.public_bytes());
        aura_http::auth::ed25519_token(claims, &kid, |input| identity.sign_bytes(input))
    }
}

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bearer-test","version":"1"}}}"#;

/// `aura serve` over TLS with tokens: no token, an expired one, one for another audience,
/// one without the scope a call needs, a foreign Origin: each answered as the spec says;
/// the metadata is served to anyone; the official TypeScript client with a good token runs
/// the whole conformance script (calls the user confirms included).
#[test]
fn aura_serve_answers_each_token_as_the_spec_says() {
    let deployment = Deployment::new("bearer-serve");
    let port = free_port();
    let audience = format!("https://127.0.0.1:{port}/mcp");
    let metadata = format!("https://127.0.0.1:{port}/.well-known/oauth-protected-resource/mcp");
    let data = temp_dir("bearer-serve-data");
    let mut args = vec!["--listen".to_owned(), format!("127.0.0.1:{port}")];
    args.extend(deployment.guard_args(&audience));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let server = Server::start_with(&data, &args);
    assert_eq!(server.url, audience);
    let (address, ca) = (server.address(), deployment.ca());
    let post =
        |headers: &[(&str, &str)], body: &str| https(&address, &ca, "POST", "/mcp", headers, body);

    // No token: 401, the challenge names the metadata and the scope needed.
    let answer = post(&[], INITIALIZE);
    assert_eq!(answer.status, 401, "{}", answer.body);
    assert_eq!(
        answer.header("www-authenticate"),
        Some(format!(r#"Bearer resource_metadata="{metadata}", scope="aura.read""#).as_str())
    );

    let invalid = |why: &str| {
        format!(
            r#"Bearer error="invalid_token", error_description="{why}", resource_metadata="{metadata}""#
        )
    };
    let claims = |aud: &str, exp: u64, scope: &str| json!({"iss": ISSUER, "aud": aud, "sub": "tester", "exp": exp, "scope": scope});
    // Expired (past the 30 s of clock skew allowed).
    let expired = deployment.signed(&claims(&audience, now() - 120, "aura.read aura.act"));
    let answer = post(
        &[("Authorization", &format!("Bearer {expired}"))],
        INITIALIZE,
    );
    assert_eq!(answer.status, 401);
    assert_eq!(
        answer.header("www-authenticate"),
        Some(invalid("the token has expired").as_str())
    );
    // For another server (the same host, another path, is another resource).
    let other = deployment.token(&format!("https://127.0.0.1:{port}/other"), "aura.read");
    let answer = post(&[("Authorization", &format!("Bearer {other}"))], INITIALIZE);
    assert_eq!(answer.status, 401);
    assert_eq!(
        answer.header("www-authenticate"),
        Some(invalid("the token is for another audience").as_str())
    );
    // Signed by another key than the issuer's.
    let stranger = Deployment::new("bearer-stranger");
    let forged = stranger.signed(&claims(&audience, now() + 600, "aura.read aura.act"));
    let answer = post(
        &[("Authorization", &format!("Bearer {forged}"))],
        INITIALIZE,
    );
    assert_eq!(answer.status, 401);

    // A read-only token lists tools but may not schedule an event: 403 insufficient_scope,
    // the challenge saying every scope the call needs.
    let reader = deployment.token(&audience, "aura.read");
    let reading = format!("Bearer {reader}");
    let answer = post(&[("Authorization", &reading)], INITIALIZE);
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert!(
        answer.body.contains(r#""serverInfo":{"name":"aura""#),
        "{}",
        answer.body
    );
    let schedule = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"calendar.schedule_event","arguments":{}}}"#;
    let answer = post(&[("Authorization", &reading)], schedule);
    assert_eq!(answer.status, 403, "{}", answer.body);
    assert_eq!(
        answer.header("www-authenticate"),
        Some(format!(
            r#"Bearer error="insufficient_scope", scope="aura.read aura.act", resource_metadata="{metadata}", error_description="the token lacks the scope aura.act""#
        ).as_str())
    );
    // A token without aura.read gets nothing, not even the handshake.
    let signaller = deployment.token(&audience, "aura.signal");
    let answer = post(
        &[("Authorization", &format!("Bearer {signaller}"))],
        INITIALIZE,
    );
    assert_eq!(answer.status, 403);
    assert!(
        answer
            .header("www-authenticate")
            .is_some_and(|c| c.contains(r#"scope="aura.read""#)),
        "{:?}",
        answer.headers
    );

    // A good token from a foreign page: the Origin rule comes first (403, no challenge).
    let answer = post(
        &[
            ("Authorization", &reading),
            ("Origin", "http://evil.example"),
        ],
        INITIALIZE,
    );
    assert_eq!(answer.status, 403);
    assert!(
        answer.body.contains("is not allowed here"),
        "{}",
        answer.body
    );
    assert_eq!(answer.header("www-authenticate"), None);

    // The metadata, at the path-inserted URL and the root, needs no token (RFC 9728).
    for path in [
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
    ] {
        let answer = https(&address, &ca, "GET", path, &[], "");
        assert_eq!(answer.status, 200, "{path}");
        let body: Value = serde_json::from_str(&answer.body).unwrap();
        assert_eq!(body["resource"], audience.as_str());
        assert_eq!(body["authorization_servers"], json!([ISSUER]));
        assert_eq!(body["bearer_methods_supported"], json!(["header"]));
    }

    // The official client with a token for both scopes: the whole script, over HTTPS.
    let good = deployment.token(&audience, "aura.read aura.act");
    conformance_trusting("v1", "http", &data, Some(&audience), Some(&ca), Some(&good));
    let logs = server.stop();
    // The token is never written to the logs.
    assert!(
        !logs
            .iter()
            .any(|line| line.contains(&good) || line.contains(&reader))
    );
}

/// Beyond loopback only with TLS and tokens both: plain, or TLS without tokens, is refused
/// before anything listens.
#[test]
fn a_front_without_tls_and_tokens_does_not_listen_beyond_loopback() {
    let deployment = Deployment::new("bearer-exposed");
    let cert = deployment.dir.join("server-cert.pem");
    let key = deployment.dir.join("server-key.pem");
    let tls = [
        "--tls-cert",
        cert.to_str().unwrap(),
        "--tls-key",
        key.to_str().unwrap(),
    ];
    for extra in [&[][..], &tls[..]] {
        let output = crate::support::aura_command(&deployment.dir.join("data"))
            .args(["serve", "--listen", "0.0.0.0:0"])
            .args(extra)
            .output()
            .unwrap();
        assert!(!output.status.success());
        let said = String::from_utf8_lossy(&output.stderr);
        assert!(
            said.contains("listening on 0.0.0.0:0 (beyond this machine) needs TLS"),
            "{said}"
        );
    }
}

/// `aura live --listen` over TLS with tokens: each route asks its own scope (decisions
/// aura.read, signals aura.signal, answers aura.act), and a signal with its scope is taken.
#[test]
fn aura_live_asks_each_route_its_scope() {
    let deployment = Deployment::new("bearer-live");
    let port = free_port();
    let audience = format!("https://127.0.0.1:{port}");
    let metadata = format!("https://127.0.0.1:{port}/.well-known/oauth-protected-resource");
    let day = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/day.json");
    let mut args: Vec<String> = ["live", "--stdin", "--clock", "replay", "--tick-on", "none"]
        .map(String::from)
        .to_vec();
    args.extend(["--listen".to_owned(), format!("127.0.0.1:{port}")]);
    args.extend(deployment.guard_args(&audience));
    args.push(day.to_str().unwrap().to_owned());
    let mut child = crate::support::aura_command(&temp_dir("bearer-live-data"))
        .args(&args)
        .spawn()
        .unwrap();
    let mut said = BufReader::new(child.stderr.take().unwrap())
        .lines()
        .map_while(Result::ok);
    let listening = said
        .find_map(|line| line.strip_prefix("aura: live at ").map(str::to_owned))
        .expect("the session says where it listens");
    // Whatever else it says is read, so that saying it never fails.
    std::thread::spawn(move || said.for_each(drop));
    assert_eq!(listening, audience);
    let (address, ca) = (format!("127.0.0.1:{port}"), deployment.ca());
    let signal = crate::live::signal_lines(&day)
        .lines()
        .next()
        .unwrap()
        .to_owned();
    let challenge =
        |scope: &str| format!(r#"Bearer resource_metadata="{metadata}", scope="{scope}""#);
    for (method, path, scope) in [
        ("POST", "/signals", "aura.signal"),
        ("POST", "/answers", "aura.act"),
        ("GET", "/decisions", "aura.read"),
    ] {
        let answer = https(&address, &ca, method, path, &[], "");
        assert_eq!(answer.status, 401, "{path}");
        assert_eq!(
            answer.header("www-authenticate"),
            Some(challenge(scope).as_str())
        );
    }
    let reader = format!("Bearer {}", deployment.token(&audience, "aura.read"));
    let answer = https(
        &address,
        &ca,
        "POST",
        "/signals",
        &[("Authorization", &reader)],
        &signal,
    );
    assert_eq!(answer.status, 403);
    assert!(
        answer.header("www-authenticate").is_some_and(
            |c| c.starts_with(r#"Bearer error="insufficient_scope", scope="aura.signal""#)
        ),
        "{:?}",
        answer.headers
    );
    let signaller = format!("Bearer {}", deployment.token(&audience, "aura.signal"));
    let answer = https(
        &address,
        &ca,
        "POST",
        "/answers",
        &[("Authorization", &signaller)],
        "{}",
    );
    assert_eq!(answer.status, 403);
    let answer = https(
        &address,
        &ca,
        "POST",
        "/signals",
        &[("Authorization", &signaller)],
        &signal,
    );
    assert_eq!(answer.status, 200, "{}", answer.body);
    let acked: Value = serde_json::from_str(&answer.body).unwrap();
    assert_eq!(acked["ack"]["seq"], 0);
    // The stdin channel's end ends the replayed session.
    drop(child.stdin.take());
    let _ = child.kill();
    child.wait().unwrap();
}

/// The MCP round trip with token checking against without, side by side in one run: three
/// `aura serve`s (open; asking tokens; asking tokens over TLS), the official TypeScript
/// client calling each in turn (tests/mcp/bench-tokens.mjs). Not a test: timings are never
/// asserted. `just bench-tokens` (the test and aura built with the bench profile).
#[test]
#[ignore = "a benchmark: just bench-tokens"]
fn bench_mcp_round_trip_with_and_without_tokens() {
    crate::mcp::clients_installed();
    let deployment = Deployment::new("bench-tokens");
    let start = |name: &str, tls: bool, token: bool| {
        let port = free_port();
        let scheme = if tls { "https" } else { "http" };
        let audience = format!("{scheme}://127.0.0.1:{port}/mcp");
        let mut args = vec!["--listen".to_owned(), format!("127.0.0.1:{port}")];
        let guard = deployment.guard_args(&audience);
        // guard_args: the TLS pair first, then the token options.
        match (tls, token) {
            (true, true) => args.extend(guard),
            (false, true) => args.extend(guard[4..].iter().cloned()),
            (false, false) => {}
            (true, false) => args.extend(guard[..4].iter().cloned()),
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let server = Server::start_logging(&temp_dir(name), &args, "off");
        let token = token.then(|| deployment.token(&audience, "aura.read"));
        (server, token)
    };
    let open = start("bench-tokens-open", false, false);
    let checked = start("bench-tokens-checked", false, true);
    let tls = start("bench-tokens-tls", true, true);
    let targets = json!([
        {"name": "open", "url": open.0.url},
        {"name": "token", "url": checked.0.url, "token": checked.1},
        {"name": "token+tls", "url": tls.0.url, "token": tls.1},
    ]);
    let output = std::process::Command::new("node")
        .arg(crate::mcp::mcp_dir().join("bench-tokens.mjs"))
        .arg(targets.to_string())
        .current_dir(crate::mcp::mcp_dir())
        .env("NODE_EXTRA_CA_CERTS", deployment.ca())
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    println!("{}", String::from_utf8_lossy(&output.stdout));
    for (server, _) in [open, checked, tls] {
        server.stop();
    }
}
