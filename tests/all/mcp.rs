//! The MCP front, driven by the official TypeScript SDK clients from npm (tests/mcp: pinned
//! `@modelcontextprotocol/sdk` 1.32.2 for 2025-11-25 and `@modelcontextprotocol/client` 2.4.0
//! for 2026-07-28), over stdio (`aura mcp`, spawned by the client) and streamable HTTP
//! (`aura serve`, started here on a free loopback port). The script asserts what a client
//! sees; this side adds what only the host's files show (the quarantine log, the logs) and
//! the raw-wire abuse an SDK will not send.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::{Value, json};

use crate::support::{quarantine_lines, readme_examples, shared_cache_dir, temp_dir};

const AURA: &str = env!("CARGO_BIN_EXE_aura");
/// The W3C trace context spec's example.
const TRACEPARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

pub(crate) fn mcp_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp")
}

/// Runs the client script `script` of tests/mcp with `config` (written into `data` for it),
/// against the default plugins dir whatever the environment says.
pub(crate) fn run_client(script: &str, config: &Value, data: &Path) -> std::process::Output {
    let config_path = data.join(format!("{script}.json"));
    std::fs::write(&config_path, config.to_string()).unwrap();
    let mut command = Command::new("node");
    command
        .arg(mcp_dir().join(script))
        .arg(&config_path)
        .current_dir(mcp_dir())
        .env_remove("AURA_PLUGINS_DIR");
    // A server with a certificate of the test's own CA: Node trusts it as a user would make
    // it trust a private CA.
    if let Some(ca) = config.get("ca").and_then(Value::as_str) {
        command.env("NODE_EXTRA_CA_CERTS", ca);
    }
    command.output().expect("node")
}

/// The pinned clients, installed once from package-lock.json if they are not yet.
pub(crate) fn clients_installed() {
    crate::tools::npm_installed(
        &mcp_dir(),
        &["@modelcontextprotocol/client", "@modelcontextprotocol/sdk"],
    );
}

/// The global options every `aura` here gets: its own data dir, the tests' shared cache.
fn aura_args(data: &Path) -> Vec<String> {
    vec![
        "--data-dir".into(),
        data.to_str().unwrap().into(),
        "--cache-dir".into(),
        shared_cache_dir().to_str().unwrap().into(),
    ]
}

/// Runs the conformance script with `client` over `transport`; its JSON report.
fn conformance(client: &str, transport: &str, data: &Path, url: Option<&str>) -> Value {
    conformance_trusting(client, transport, data, url, None, None)
}

/// [`conformance`] with the client trusting the CA in `ca` beside the system's, and sending
/// `token` as its bearer token.
pub(crate) fn conformance_trusting(
    client: &str,
    transport: &str,
    data: &Path,
    url: Option<&str>,
    ca: Option<&Path>,
    token: Option<&str>,
) -> Value {
    clients_installed();
    let catalogue = aura_contract::catalogue::CATALOGUE;
    let tools: Vec<String> = catalogue
        .iter()
        .flat_map(|a| {
            a.tools
                .iter()
                .map(move |t| format!("{}.{}", a.name, t.name))
        })
        .collect();
    let confirm_required: Vec<String> = catalogue
        .iter()
        .flat_map(|a| {
            a.tools
                .iter()
                .filter(|t| t.confirm_required)
                .map(move |t| format!("{}.{}", a.name, t.name))
        })
        .collect();
    let examples: Vec<Value> = readme_examples()
        .into_iter()
        .map(|(agent, tool, args)| {
            json!({"name": format!("{agent}.{tool}"),
                "args": serde_json::from_str::<Value>(&args).unwrap()})
        })
        .collect();
    let config = json!({
        "client": client,
        "transport": transport,
        "aura": AURA,
        "aura_args": aura_args(data),
        "url": url,
        "schemas_dir": Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas"),
        "tools": tools,
        "confirm_required": confirm_required,
        "examples": examples,
        "traceparent": TRACEPARENT,
        "ca": ca,
        "token": token,
    });
    let output = run_client("conformance.mjs", &config, data);
    assert!(
        output.status.success(),
        "{client} over {transport}:\n{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let report: Value = serde_json::from_slice(
        output
            .stdout
            .split(|&b| b == b'\n')
            .rfind(|line| !line.is_empty())
            .unwrap(),
    )
    .unwrap();
    refusals_match_the_quarantine(&report, data);
    report
}

/// Every refusal the client was told about is in the quarantine log under its call_id, with
/// the same recovery (less the example, which is the schema's).
fn refusals_match_the_quarantine(report: &Value, data: &Path) {
    let quarantined = quarantine_lines(data);
    let refusals = report["refusals"].as_array().unwrap();
    assert_eq!(
        refusals.len(),
        9,
        "one per constraint kind, and the deadline"
    );
    for refusal in refusals {
        let call_id = refusal["call_id"].as_str().unwrap();
        let records: Vec<&Value> = quarantined
            .iter()
            .filter(|r| r["call_id"] == call_id)
            .collect();
        assert_eq!(records.len(), 1, "{call_id} quarantined once");
        let mut recovery = refusal["recovery"].clone();
        recovery.as_object_mut().unwrap().remove("example");
        assert_eq!(records[0]["recovery"], recovery, "{call_id}");
        assert_eq!(records[0]["kind"], refusal["kind"]);
    }
}

/// `aura serve` on a free loopback port, with JSON logs of every span.
pub(crate) struct Server {
    child: Child,
    pub(crate) url: String,
    logs: std::sync::mpsc::Receiver<String>,
}

impl Server {
    fn start(data: &Path) -> Self {
        Self::start_with(data, &[])
    }

    /// `aura serve` with more options (`serve_args`).
    pub(crate) fn start_with(data: &Path, serve_args: &[&str]) -> Self {
        Self::start_logging(data, serve_args, "aura=info")
    }

    /// [`Server::start_with`] logging as `rust_log` says (`off` for a benchmark).
    pub(crate) fn start_logging(data: &Path, serve_args: &[&str], rust_log: &str) -> Self {
        let mut child = Command::new(AURA)
            .args(aura_args(data))
            .args(["--log-json", "serve"])
            // A free loopback port unless the test names its own.
            .args(match serve_args.contains(&"--listen") {
                true => &[][..],
                false => &["--listen", "127.0.0.1:0"][..],
            })
            .args(serve_args)
            .env("RUST_LOG", rust_log)
            .env_remove("AURA_PLUGINS_DIR")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let (send, logs) = std::sync::mpsc::channel();
        let mut stderr = BufReader::new(child.stderr.take().unwrap());
        let mut url = None;
        let mut line = String::new();
        while url.is_none() {
            line.clear();
            assert!(stderr.read_line(&mut line).unwrap() > 0, "aura serve ended");
            url = line
                .strip_prefix("aura: serving MCP at ")
                .map(|u| u.trim().to_owned());
        }
        std::thread::spawn(move || {
            for line in stderr.lines().map_while(Result::ok) {
                let _ = send.send(line);
            }
        });
        Self {
            child,
            url: url.unwrap(),
            logs,
        }
    }

    pub(crate) fn address(&self) -> String {
        self.url
            .trim_start_matches("http://")
            .trim_start_matches("https://")
            .trim_end_matches("/mcp")
            .to_owned()
    }

    /// SIGTERM, as a service manager stops it: it must end cleanly. Its logs.
    pub(crate) fn stop(mut self) -> Vec<String> {
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        let exit = self.child.wait().unwrap();
        assert!(exit.success(), "aura serve exited {exit}");
        self.logs.try_iter().collect()
    }
}

/// One raw HTTP/1.1 request to the server; the status code and body.
fn raw_post(address: &str, body: &str) -> (u16, String) {
    raw_post_with(address, "", body)
}

/// [`raw_post`] with more header lines (`headers`, each ending in CRLF).
fn raw_post_with(address: &str, headers: &str, body: &str) -> (u16, String) {
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    write!(
        stream,
        "POST /mcp HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n{headers}\
         Connection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let status = response[9..12].parse().unwrap();
    let body = response
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_owned())
        .unwrap_or_default();
    (status, body)
}

/// A browser's request from a foreign origin is refused with 403 before the MCP server sees
/// it (DNS rebinding: the MCP transport's MUST); from a loopback origin, from one the
/// deployment allows, or from no browser at all (no Origin), it is served.
#[test]
fn a_foreign_origin_is_refused_and_allowed_ones_are_served() {
    let data = temp_dir("mcp-origin");
    let server = Server::start_with(&data, &["--allow-origin", "https://app.example.com"]);
    let address = server.address();
    let ping = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"origin-test","version":"1"}}}"#;
    for (origin, expected) in [
        ("http://evil.example", 403),
        ("https://app.example.com:8443", 403),
        ("null", 403),
        ("http://localhost:5173", 200),
        ("https://app.example.com", 200),
    ] {
        let (status, body) = raw_post_with(&address, &format!("Origin: {origin}\r\n"), ping);
        assert_eq!(status, expected, "Origin {origin}: {body}");
        match expected {
            403 => assert!(body.contains("is not allowed here"), "{body}"),
            _ => assert!(body.contains(r#""serverInfo":{"name":"aura""#), "{body}"),
        }
    }
    let (status, body) = raw_post(&address, ping);
    assert_eq!(status, 200, "{body}");
    server.stop();
}

/// `aura serve --tls-cert --tls-key`: the official SDK client runs the whole conformance
/// script over HTTPS, trusting the server's CA as a user would (NODE_EXTRA_CA_CERTS).
#[test]
fn sdk_1_32_over_https() {
    let data = temp_dir("mcp-v1-https");
    let certs = temp_dir("mcp-https-certs");
    crate::support::make_certificates(&certs, &[]);
    let (cert, key) = (certs.join("server-cert.pem"), certs.join("server-key.pem"));
    let server = Server::start_with(
        &data,
        &[
            "--tls-cert",
            cert.to_str().unwrap(),
            "--tls-key",
            key.to_str().unwrap(),
        ],
    );
    assert!(
        server.url.starts_with("https://127.0.0.1:"),
        "{}",
        server.url
    );
    // Plain HTTP to the TLS port is not served.
    let mut plain = std::net::TcpStream::connect(server.address()).unwrap();
    let _ = write!(plain, "GET /mcp HTTP/1.1\r\nHost: x\r\n\r\n");
    let mut answer = Vec::new();
    let _ = plain.read_to_end(&mut answer);
    assert!(
        !String::from_utf8_lossy(&answer).contains("HTTP/"),
        "{}",
        String::from_utf8_lossy(&answer)
    );
    conformance_trusting(
        "v1",
        "http",
        &data,
        Some(&server.url.clone()),
        Some(&certs.join("ca.pem")),
        None,
    );
    server.stop();
}

#[test]
fn sdk_1_32_over_stdio() {
    let data = temp_dir("mcp-v1-stdio");
    conformance("v1", "stdio", &data, None);
}

#[test]
fn client_2_4_over_stdio_speaks_2026_07_28() {
    let data = temp_dir("mcp-v2-stdio");
    conformance("v2", "stdio", &data, None);
}

#[test]
fn sdk_1_32_over_http_survives_garbage_and_dropped_connections() {
    let data = temp_dir("mcp-v1-http");
    let server = Server::start(&data);
    let address = server.address();
    // Not JSON: a JSON-RPC parse error, and the server goes on.
    let (status, body) = raw_post(&address, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":");
    assert!((400..500).contains(&status), "{status} {body}");
    let error: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(error["error"]["code"], -32700, "{body}");
    assert_eq!(error["id"], Value::Null);
    // JSON, but no JSON-RPC message.
    let (status, body) = raw_post(&address, "[1,2,3]");
    assert_eq!(status, 400, "{body}");
    let error: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(error["error"]["code"], -32600, "{body}");
    // A client that hangs up mid-request, and one that hangs up mid-body.
    drop(std::net::TcpStream::connect(&address).unwrap());
    let mut half = std::net::TcpStream::connect(&address).unwrap();
    write!(
        half,
        "POST /mcp HTTP/1.1\r\nHost: {address}\r\nContent-Length: 5000\r\n\r\n{{\"jsonrpc\""
    )
    .unwrap();
    drop(half);
    // A Host that is not loopback (DNS rebinding): refused.
    let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let mut stream = std::net::TcpStream::connect(&address).unwrap();
    write!(
        stream,
        "POST /mcp HTTP/1.1\r\nHost: evil.example\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{ping}",
        ping.len()
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    assert!(response.starts_with("HTTP/1.1 403"), "{response}");
    // Still serving: the whole conformance run, 200 concurrent calls included.
    let report = conformance("v1", "http", &data, Some(&server.url));
    assert_eq!(report["concurrent_calls"], 200);
    server.stop();
}

#[test]
fn client_2_4_over_http_and_the_callers_trace_is_the_crossings_parent() {
    let data = temp_dir("mcp-v2-http");
    let server = Server::start(&data);
    let report = conformance("v2", "http", &data, Some(&server.url.clone()));
    assert_eq!(report["concurrent_calls"], 200);
    let logs = server.stop();
    // The call that carried `_meta.traceparent`: its crossing span sits under the MCP
    // request's span, which carries the caller's trace id and span id.
    let traced: Vec<Value> = logs
        .iter()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|record| {
            record["spans"].as_array().is_some_and(|spans| {
                spans.iter().any(|s| {
                    s["trace_id"] == "4bf92f3577b34da6a3ce929d0e0e4736"
                        && s["parent_span_id"] == "00f067aa0ba902b7"
                })
            })
        })
        .collect();
    assert!(
        traced.iter().any(|record| {
            let spans = record["spans"].as_array().unwrap();
            spans.len() >= 2
                && spans[spans.len() - 2]["name"] == "mcp.tools_call"
                && spans[spans.len() - 1]["name"] == "crossing"
                && spans[spans.len() - 1]["tool"] == "stress_score"
        }),
        "no crossing span under the caller's trace: {traced:?}"
    );
}

#[test]
fn stdio_answers_a_malformed_message_and_goes_on_serving() {
    let data = temp_dir("mcp-stdio-raw");
    let mut child = Command::new(AURA)
        .args(aura_args(&data))
        .arg("mcp")
        .env_remove("AURA_PLUGINS_DIR")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut answer = || {
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        serde_json::from_str::<Value>(&line).unwrap()
    };
    // Not JSON: skipped (answering unparsable bytes can loop two peers; the SDKs all skip
    // it), then JSON that is no JSON-RPC message: Invalid Request.
    writeln!(stdin, "this is not json").unwrap();
    writeln!(stdin, "{{\"jsonrpc\":\"2.0\",\"id\":7}}").unwrap();
    let error = answer();
    assert_eq!(error["error"]["code"], -32600, "{error}");
    // An unknown method on a live session: Method not found.
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"}}});
    writeln!(stdin, "{initialize}").unwrap();
    let initialized = answer();
    assert_eq!(initialized["result"]["serverInfo"]["name"], "aura");
    writeln!(
        stdin,
        "{}",
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
    )
    .unwrap();
    writeln!(
        stdin,
        "{}",
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/destroy"})
    )
    .unwrap();
    assert_eq!(answer()["error"]["code"], -32601);
    // And a call still runs.
    let (agent, tool, args) = readme_examples()
        .into_iter()
        .find(|(agent, _, _)| agent == "wellness")
        .unwrap();
    writeln!(
        stdin,
        "{}",
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
            "name": format!("{agent}.{tool}"),
            "arguments": serde_json::from_str::<Value>(&args).unwrap()}})
    )
    .unwrap();
    let called = answer();
    assert_eq!(called["id"], 3);
    assert_eq!(called["result"]["isError"], false, "{called}");
    // The client closes stdin: the server ends cleanly.
    drop(stdin);
    assert!(child.wait().unwrap().success());
}

/// The official MCP server conformance suite (`@modelcontextprotocol/conformance`, pinned in
/// tests/mcp-conformance) against `aura serve`, for exactly what each revision requires
/// (2025-11-25 on the session wire, 2026-07-28 stateless), with the committed baseline of
/// checks aura is known to fail, each with its reason. The suite itself fails the run on a
/// failing check not in the baseline, and on a baselined one that passes.
#[test]
fn the_official_conformance_suite_fails_nothing_but_its_baseline() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp-conformance");
    let (node, suite) = crate::tools::mcp_conformance(&dir);
    let data = temp_dir("mcp-conformance-suite");
    let server = Server::start(&data);
    for revision in ["2025-11-25", "2026-07-28"] {
        let output = Command::new(&node)
            .arg(&suite)
            .args(["server", "--url", &server.url, "--requirements", revision])
            .arg("--expected-failures")
            .arg(dir.join(format!("baseline-{revision}.yml")))
            .arg("--output-dir")
            .arg(data.join(format!("results-{revision}")))
            .current_dir(&dir)
            .env("NO_COLOR", "1")
            .output()
            .expect("node");
        let said = String::from_utf8_lossy(&output.stdout);
        let summary = said.find("=== SUMMARY").map_or(&said[..], |at| &said[at..]);
        assert!(
            output.status.success(),
            "the conformance suite at {revision}:\n{summary}\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(
            said.contains("Baseline check passed"),
            "{revision}: {summary}"
        );
    }
    server.stop();
}
