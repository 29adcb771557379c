//! Shared helpers: data dirs, plugin dirs holding test guests, envelopes, quarantine reading.

use std::path::{Path, PathBuf};

use aura_host::{Host, HostConfig};
use serde_json::{Value, json};

/// The plugins dir the build script wrote.
pub fn plugins_dir() -> PathBuf {
    PathBuf::from(aura_agents::PLUGINS_DIR)
}

/// Where the build script put the hostile test guests.
pub fn guest_path(name: &str) -> PathBuf {
    Path::new(aura_guests::GUESTS_DIR).join(format!("{name}_guest.wasm"))
}

/// A fresh, empty directory for one test.
pub fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir()
        .join("aura-tests")
        .join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The day's agents with a neighbour the day must survive: foreigntick, as wellness, proposes
/// other agents' tools every tick, each refused and quarantined. The day's own agents
/// quarantine nothing, so this is the day that writes quarantine records all day long (for
/// kill points and storage faults to fall between, for a report's quarantine table). `name`
/// keeps each test's copy apart.
pub fn day_with_a_hostile_neighbour(name: &str) -> PathBuf {
    let real = |agent: &'static str| (agent, plugins_dir().join(format!("{agent}.wasm")));
    plugins_dir_of(
        name,
        &[
            real("calendar"),
            real("comms"),
            real("finance"),
            ("wellness", guest_path("foreigntick")),
        ],
    )
}

/// A plugins dir that serves `component` as `agent`, with a correct digest.
pub fn plugins_dir_with(name: &str, agent: &str, component: &Path) -> PathBuf {
    plugins_dir_of(name, &[(agent, component.to_owned())])
}

/// A plugins dir that serves each `(agent, component)`, with correct digests.
pub fn plugins_dir_of(name: &str, served: &[(&str, PathBuf)]) -> PathBuf {
    let dir = temp_dir(&format!("plugins-{name}"));
    let components: Vec<(&str, Vec<u8>)> = served
        .iter()
        .map(|(agent, component)| (*agent, std::fs::read(component).unwrap()))
        .collect();
    aura_plugins::write_components(&dir, &components).unwrap();
    dir
}

/// The compilation cache every test's host shares (under target/tmp, so it outlives a run):
/// each component is compiled once, by the first test that loads it, and later runs of the
/// tests compile nothing the components and the engine have not changed. Tests of the cache
/// itself use caches of their own.
pub fn shared_cache_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("aura-code-cache")
}

/// The `aura` binary on the data dir `data`, over the built plugins and the tests'
/// compilation cache, as a user starts it (no RUST_LOG; stdin, stdout and stderr piped).
pub fn aura_command(data: &Path) -> std::process::Command {
    aura_command_over(data, &plugins_dir())
}

/// [`aura_command`] over the plugins dir `plugins`.
pub fn aura_command_over(data: &Path, plugins: &Path) -> std::process::Command {
    use std::process::Stdio;
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_aura"));
    command
        .arg("--data-dir")
        .arg(data)
        .arg("--plugins-dir")
        .arg(plugins)
        .arg("--cache-dir")
        .arg(shared_cache_dir())
        .env_remove("RUST_LOG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

/// A host config over `plugins` with `data` as data dir, sharing the tests' compilation cache.
pub fn config(plugins: impl Into<PathBuf>, data: impl Into<PathBuf>) -> HostConfig {
    let mut config = HostConfig::new(plugins, data);
    config.cache_dir = Some(shared_cache_dir());
    config
}

/// A host over the built plugins (every agent), with its own data dir.
pub async fn host(name: &str) -> (Host, PathBuf) {
    host_over(name, &plugins_dir()).await
}

/// The plugins dir the per-agent tests load their agents from: `AURA_TEST_PLUGINS_DIR` when
/// set (another implementation of an agent, e.g. one written in another language, beside the
/// others it calls), else the built plugins. The per-agent tests hold hand-worked answers,
/// not the Rust agent's output, so any implementation must give them (`just test-agents DIR`).
pub fn agent_plugins_dir() -> PathBuf {
    match std::env::var_os("AURA_TEST_PLUGINS_DIR") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => plugins_dir(),
    }
}

/// A host over [`agent_plugins_dir`] that loads only `agents` (each must load): quicker, since
/// every agent loaded is a component compiled.
pub async fn host_with(name: &str, agents: &[&str]) -> (Host, PathBuf) {
    let data = temp_dir(&format!("data-{name}"));
    let mut config = config(agent_plugins_dir(), &data);
    config.agents = Some(agents.iter().map(|a| a.to_string()).collect());
    let host = Host::open(&config).await.unwrap();
    (host, data)
}

/// A host over `plugins`, with its own data dir.
pub async fn host_over(name: &str, plugins: &Path) -> (Host, PathBuf) {
    let data = temp_dir(&format!("data-{name}"));
    let host = Host::open(&config(plugins, &data)).await.unwrap();
    assert!(
        host.load_failures().is_empty(),
        "{:?}",
        host.load_failures()
    );
    (host, data)
}

/// A valid toolcall.v1 envelope.
pub fn envelope(call_id: &str, agent: &str, tool: &str, args: Value) -> Value {
    json!({
        "call_id": call_id,
        "agent": agent,
        "tool": tool,
        "args": args,
        "ts": "2026-11-23T08:00:00Z",
        "confirm_required": false,
    })
}

/// Every line of the quarantine log, parsed.
pub fn quarantine_lines(data: &Path) -> Vec<Value> {
    // A live session's are its open day's.
    let path = crate::live::day_dir(data).join(aura_host::journal::QUARANTINE_PATH);
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .map(|line| serde_json::from_str(line).expect("each quarantine line parses"))
        .collect()
}

/// Sends each `(tool, args, instance path)` to `agent` and checks it is refused at the args
/// check (schema_error, phase args, that instance path) before the agent ran (fuel 0), with one
/// quarantine line per refusal.
pub async fn assert_refused_at_args(
    host: &Host,
    data: &Path,
    agent: &str,
    cases: &[(&str, Value, &str)],
) {
    let before = quarantine_lines(data).len();
    for (i, (tool, args, path)) in cases.iter().enumerate() {
        let text = envelope(&format!("t_refused{i:03}"), agent, tool, args.clone()).to_string();
        let refused = host.dispatch(&text).await.expect_err(path);
        assert_eq!(refused.error.kind(), "schema_error", "{path}");
        assert_eq!(
            refused.error.phase(),
            aura_contract::error::Phase::Args,
            "{path}"
        );
        assert_eq!(refused.error.instance_path(), Some(*path));
        assert_eq!(refused.error.fuel_used(), 0, "{path}: the agent never ran");
        assert_eq!(quarantine_lines(data).len(), before + i + 1);
    }
}

/// Calls `agent`'s `tool` with `args` in a toolcall.v1 (with `call_id`): the result.v1, or a
/// panic naming the refusal.
pub async fn call_tool(
    host: &Host,
    agent: &str,
    call_id: &str,
    tool: &str,
    args: Value,
) -> aura_host::ResultEnvelope {
    let text = envelope(call_id, agent, tool, args).to_string();
    host.dispatch(&text)
        .await
        .unwrap_or_else(|r| panic!("{tool}: {}", r.error))
}

/// Sends each `(tool, args)` to `agent`: args that pass the schema but make no sense together.
/// Each must reach the agent (fuel burned) and come back as `tool_invalid_args`, and none is
/// quarantined: a tool error is an answer, not a refusal.
pub async fn assert_tool_invalid_args(
    host: &Host,
    data: &Path,
    agent: &str,
    cases: Vec<(&str, Value)>,
) {
    for (i, (tool, args)) in cases.into_iter().enumerate() {
        let result = call_tool(host, agent, &format!("t_invalid{i:03}"), tool, args).await;
        assert!(!result.ok, "{tool} case {i}");
        let kind = result.error.map(|e| e.kind).unwrap_or_default();
        assert_eq!(kind, "tool_invalid_args", "{tool} case {i}");
        assert!(result.fuel_used > 0, "{tool} case {i}: the agent ran");
    }
    assert!(
        quarantine_lines(data).is_empty(),
        "a tool error is an answer, not a refusal"
    );
}

/// Checks what a tick proposed: `agent.tool`, at the tick's `ts`, asking for confirmation or
/// not, for `surface`. Returns the proposed call.
pub fn assert_proposed<'a>(
    proposal: &'a aura_host::Proposal,
    (agent, tool): (&str, &str),
    ts: &str,
    confirm_required: bool,
    surface: aura_contract::envelope::Surface,
) -> &'a aura_host::ToolCall {
    let call = proposal.call.call();
    assert_eq!((call.agent.as_str(), call.tool.as_str()), (agent, tool));
    assert_eq!(call.ts, ts);
    assert_eq!(call.confirm_required, confirm_required);
    assert_eq!(call.expected_surface, Some(surface));
    call
}

/// The example calls of docs/using.md (the `aura` commands' page, the README's start page links
/// it), one per tool: (agent, tool, args text), from its `aura call <agent> <tool> '<args>'`
/// lines.
pub fn readme_examples() -> Vec<(String, String, String)> {
    let page =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/using.md")).unwrap();
    page.lines()
        .filter(|l| l.starts_with("aura call ") && !l.starts_with("aura call <"))
        .map(|line| {
            let mut parts = line.splitn(5, ' ').skip(2);
            let (agent, tool, args) = (
                parts.next().unwrap(),
                parts.next().unwrap(),
                parts.next().unwrap(),
            );
            (agent.to_owned(), tool.to_owned(), shell_unquote(args))
        })
        .collect()
}

/// Undoes the shell quoting docs/using.md uses: `'...'`, with `'"'"'` for a single quote.
fn shell_unquote(quoted: &str) -> String {
    let inner = quoted
        .strip_prefix('\'')
        .and_then(|q| q.strip_suffix('\''))
        .expect("single-quoted");
    inner.replace(r#"'"'"'"#, "'")
}

/// A CA, the server's certificate for 127.0.0.1 and localhost, and a client certificate for
/// each of `clients`, as PEM files: `ca.pem`, `server-cert.pem`, `server-key.pem`,
/// `<client>-cert.pem`, `<client>-key.pem` (the names deploy/nats/tls.example.conf uses).
pub fn make_certificates(dir: &Path, clients: &[&str]) {
    use rcgen::{
        BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose,
        IsCa, KeyPair, KeyUsagePurpose,
    };
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(DnType::CommonName, "aura test CA");
    ca_params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate().unwrap()).unwrap();
    std::fs::write(dir.join("ca.pem"), ca.pem()).unwrap();
    let leaf = |names: Vec<String>, purpose: ExtendedKeyUsagePurpose, file: &str| {
        let key = KeyPair::generate().unwrap();
        let mut params = CertificateParams::new(names).unwrap();
        params.distinguished_name.push(DnType::CommonName, file);
        params.extended_key_usages = vec![purpose];
        let cert = params.signed_by(&key, &ca).unwrap();
        std::fs::write(dir.join(format!("{file}-cert.pem")), cert.pem()).unwrap();
        std::fs::write(dir.join(format!("{file}-key.pem")), key.serialize_pem()).unwrap();
    };
    leaf(
        vec!["127.0.0.1".into(), "localhost".into()],
        ExtendedKeyUsagePurpose::ServerAuth,
        "server",
    );
    for who in clients {
        leaf(Vec::new(), ExtendedKeyUsagePurpose::ClientAuth, who);
    }
}
