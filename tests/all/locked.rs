//! The wire locked against strangers: a nats-server run under the committed deployment config
//! (deploy/nats/aura.conf and permissions.conf, with this test's users.conf and tls.conf beside
//! them: every connection authenticated, mutual TLS, each role only its subjects), and aura's
//! worker, client and event reader each started with its own credentials, as a deployment
//! would start them. Strangers (no credentials, no certificate, a wrong password, a user of
//! the server without aura's permissions, a role doing another's work) are refused with a
//! message that names why and never prints a secret.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::support::{plugins_dir, temp_dir};
use crate::wire::{NatsServer, Worker};

const AURA: &str = env!("CARGO_BIN_EXE_aura");

/// The client user's password (in its URL's userinfo).
const CLIENT_PASSWORD: &str = "client-secret-3141";
/// The event reader's password (in AURA_NATS_PASSWORD).
const READER_PASSWORD: &str = "reader-secret-2718";
/// The password of a user the server knows, without any of aura's permissions.
const ROGUE_PASSWORD: &str = "rogue-secret-1618";

/// Who a process connects as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    /// `aura worker`: an nkey seed file (made by `aura keygen --nkey`) and its certificate.
    Worker,
    /// A front with --nats: a user and password in the URL, and its certificate.
    Client,
    /// `aura events`: --nats-user and AURA_NATS_PASSWORD, and its certificate.
    EventsReader,
    /// A user the server knows, allowed only `rogue.>`, with a good certificate.
    Rogue,
    /// A good certificate and no credentials.
    Anonymous,
    /// The client's credentials and no certificate.
    NoCertificate,
    /// The client's user with another password, and its certificate.
    WrongPassword,
    /// A worker holding the worker's NATS credentials and certificate (stolen, or a second
    /// deployment's), whose identity no client trusts.
    Impostor,
}

/// The files of a locked server: its config (the committed one), its users and TLS, and
/// each role's keys.
#[derive(Debug)]
pub(crate) struct Locked {
    dir: PathBuf,
    /// The honest workers' identity (`host.key`): the key clients trust.
    pub(crate) worker_identity: String,
    /// The client's identity (`front.key`): the front whose proofs of a user's yes workers
    /// take.
    pub(crate) front_identity: String,
}

impl Locked {
    /// Writes a locked server's files into `dir`: the committed aura.conf and
    /// permissions.conf, users.conf naming one user per role, tls.conf (the committed
    /// example, verbatim) and the certificates it names, made here.
    pub(crate) fn prepare(dir: &Path) -> Self {
        let deploy = Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/nats");
        for file in ["aura.conf", "permissions.conf"] {
            std::fs::copy(deploy.join(file), dir.join(file)).unwrap();
        }
        std::fs::copy(deploy.join("tls.example.conf"), dir.join("tls.conf")).unwrap();
        crate::support::make_certificates(dir, &["worker", "client", "events", "rogue"]);
        // The worker's nkey, made the way a deployment makes it.
        let made = Command::new(AURA)
            .args(["keygen", "--nkey", "--out"])
            .arg(dir.join("worker.nk"))
            .output()
            .unwrap();
        assert!(made.status.success(), "{made:?}");
        let worker_public = String::from_utf8(made.stdout).unwrap().trim().to_owned();
        assert!(
            worker_public.starts_with('U') && worker_public.len() == 56,
            "a user's public nkey: {worker_public}"
        );
        let seed = std::fs::read_to_string(dir.join("worker.nk")).unwrap();
        assert!(seed.starts_with("SU"), "a user's seed");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(dir.join("worker.nk"))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600, "the seed is its owner's alone");
        }
        std::fs::write(
            dir.join("users.conf"),
            format!(
                "include permissions.conf\n\
                 authorization {{\n  users = [\n\
                 \x20   {{ nkey: \"{worker_public}\", permissions: $AURA_WORKER }}\n\
                 \x20   {{ user: \"client\", password: \"{CLIENT_PASSWORD}\", permissions: $AURA_CLIENT }}\n\
                 \x20   {{ user: \"events\", password: \"{READER_PASSWORD}\", permissions: $AURA_EVENTS_READER }}\n\
                 \x20   {{ user: \"rogue\", password: \"{ROGUE_PASSWORD}\", permissions: {{ publish: [\"rogue.>\"], subscribe: [\"rogue.>\", \"_INBOX.>\"] }} }}\n\
                 \x20 ]\n}}\n"
            ),
        )
        .unwrap();
        Self {
            dir: dir.to_owned(),
            worker_identity: keygen(&dir.join("host.key")),
            front_identity: keygen(&dir.join("front.key")),
        }
    }

    /// The nats-server's arguments: the committed config, on loopback at `port`, its store in
    /// the server's dir.
    pub(crate) fn server_args(&self, port: u16) -> Vec<String> {
        vec![
            "-c".into(),
            self.dir.join("aura.conf").display().to_string(),
            "-a".into(),
            "127.0.0.1".into(),
            "-p".into(),
            port.to_string(),
            "-sd".into(),
            self.dir.join("js").display().to_string(),
        ]
    }

    /// A file of the server's dir.
    pub(crate) fn file(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// Makes `command` connect to the server on `port` as `role`.
    pub(crate) fn connect_as(&self, role: Role, port: u16, command: &mut Command) {
        let file = |name: &str| self.dir.join(name).display().to_string();
        let certificate = |who: &str| {
            vec![
                "--nats-tls-cert".to_owned(),
                file(&format!("{who}-cert.pem")),
                "--nats-tls-key".to_owned(),
                file(&format!("{who}-key.pem")),
            ]
        };
        command.env_remove("AURA_NATS_PASSWORD");
        command.env_remove("AURA_NATS_TOKEN");
        command.args(["--nats-tls-ca", &file("ca.pem")]);
        match role {
            Role::Worker | Role::Impostor => {
                command.args(["--nats", &format!("tls://127.0.0.1:{port}")]);
                command.args(["--nats-nkey", &file("worker.nk")]);
                command.args(certificate("worker"));
                let identity = match role {
                    Role::Worker => file("host.key"),
                    _ => {
                        let impostor = self.dir.join("impostor.key");
                        if !impostor.exists() {
                            keygen(&impostor);
                        }
                        file("impostor.key")
                    }
                };
                command.args(["--identity", &identity]);
                command.args(["--trust-fronts", &self.front_identity]);
            }
            Role::Client => {
                command.args([
                    "--nats",
                    &format!("nats://client:{CLIENT_PASSWORD}@127.0.0.1:{port}"),
                ]);
                command.args(certificate("client"));
                command.args(["--trust-workers", &self.worker_identity]);
                command.args(["--identity", &file("front.key")]);
            }
            Role::EventsReader => {
                command.args(["--nats", &format!("nats://127.0.0.1:{port}")]);
                command.args(["--nats-user", "events"]);
                command.env("AURA_NATS_PASSWORD", READER_PASSWORD);
                command.args(certificate("events"));
            }
            Role::Rogue => {
                command.args([
                    "--nats",
                    &format!("nats://rogue:{ROGUE_PASSWORD}@127.0.0.1:{port}"),
                ]);
                command.args(certificate("rogue"));
            }
            Role::Anonymous => {
                command.args(["--nats", &format!("nats://127.0.0.1:{port}")]);
                command.args(certificate("client"));
            }
            Role::NoCertificate => {
                command.args([
                    "--nats",
                    &format!("nats://client:{CLIENT_PASSWORD}@127.0.0.1:{port}"),
                ]);
            }
            Role::WrongPassword => {
                command.args([
                    "--nats",
                    &format!("nats://client:not-{CLIENT_PASSWORD}@127.0.0.1:{port}"),
                ]);
                command.args(certificate("client"));
            }
        }
    }
}

/// Makes a host identity at `path` with `aura keygen`, as a deployment does; its public key.
fn keygen(path: &Path) -> String {
    let made = Command::new(AURA)
        .args(["keygen", "--out"])
        .arg(path)
        .output()
        .unwrap();
    assert!(made.status.success(), "{made:?}");
    String::from_utf8(made.stdout).unwrap().trim().to_owned()
}

/// An `aura` command connected to `nats` as `role`.
pub(crate) fn aura_as(nats: &NatsServer, role: Role) -> Command {
    let mut command = Command::new(AURA);
    nats.connect_as(role, &mut command);
    command
}

/// The stress-score call the tests send: its honest score worked out in tests/all/wellness.rs
/// (hrv 42 against 60 is a 30% drop, sub-score 50; resting heart rate 65 against 58, 50;
/// sleep 360 against 450 minutes, 33; weighted 500/300/200 permille: 25 + 15 + 7 = 47).
fn stress_call(command: &mut Command, data: &Path) -> std::process::Output {
    command
        .arg("--data-dir")
        .arg(data)
        .args([
            "call",
            "wellness",
            "stress_score",
            r#"{"baselines":{"hrv_ms":60,"resting_hr_bpm":58,"sleep_minutes":450},"readings":{"hrv_ms":42,"resting_hr_bpm":65,"sleep_minutes":360}}"#,
        ])
        .output()
        .unwrap()
}

fn stderr(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn each_role_works_with_its_own_credentials_over_mutual_tls() {
    let nats = NatsServer::locked("roles");
    let worker = Worker::start("locked-roles", &nats, &plugins_dir(), Some("wellness"));
    let data = temp_dir("locked-roles-client");
    let called = stress_call(&mut aura_as(&nats, Role::Client), &data);
    assert!(called.status.success(), "{}", stderr(&called));
    let result: Value = serde_json::from_slice(&called.stdout).unwrap();
    assert_eq!(result["result"]["score"], 47, "{result}");
    let call_id = result["call_id"].as_str().unwrap().to_owned();
    // The event reader reads the call's events; it never sees a password.
    let read = aura_as(&nats, Role::EventsReader)
        .arg("events")
        .output()
        .unwrap();
    assert!(read.status.success(), "{}", stderr(&read));
    let executed = String::from_utf8_lossy(&read.stdout)
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .filter(|event| event["event"] == "tool.executed")
        .filter(|event| event["payload"]["call_id"] == call_id.as_str())
        .count();
    assert_eq!(executed, 1, "{}", String::from_utf8_lossy(&read.stdout));
    for output in [&called, &read] {
        let said = stderr(output);
        assert!(
            !said.contains(CLIENT_PASSWORD) && !said.contains(READER_PASSWORD),
            "{said}"
        );
    }
    worker.stop();
}

/// The deploy config's JetStream fsyncs every write before it acknowledges it (JetStream's
/// default does not: it flushes every two minutes, and a power cut loses what the page cache
/// held). Read from the running server's own account of its settings (`/varz`), so a config
/// that says it but does not parse as meant fails here.
#[test]
fn the_deploy_configs_jetstream_fsyncs_each_write_before_it_acknowledges_it() {
    use std::io::{Read, Write};
    let (_nats, monitor) = NatsServer::locked_monitored("sync");
    let started = std::time::Instant::now();
    let varz = loop {
        let mut stream = match std::net::TcpStream::connect(("127.0.0.1", monitor)) {
            Ok(stream) => stream,
            Err(_) if started.elapsed() < std::time::Duration::from_secs(10) => {
                std::thread::sleep(std::time::Duration::from_millis(50));
                continue;
            }
            Err(error) => panic!("the monitoring port: {error}"),
        };
        stream
            .write_all(b"GET /varz HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
            .unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).unwrap();
        let (_, body) = response.split_once("\r\n\r\n").unwrap();
        break serde_json::from_str::<Value>(body).unwrap();
    };
    let config = &varz["jetstream"]["config"];
    assert_eq!(config["sync_always"], true, "{config}");
}

/// Asserts that `output` is a refusal (exit status 1) whose stderr names each of `said` and
/// prints no password.
fn assert_refused(output: &std::process::Output, said: &[&str]) {
    let text = stderr(output);
    assert_eq!(output.status.code(), Some(1), "{text}");
    for part in said {
        assert!(text.contains(part), "{part:?} is not in: {text}");
    }
    for secret in [CLIENT_PASSWORD, READER_PASSWORD, ROGUE_PASSWORD] {
        assert!(!text.contains(secret), "a password is printed: {text}");
    }
}

#[test]
fn strangers_are_refused_and_the_honest_call_still_succeeds() {
    let nats = NatsServer::locked("strangers");
    let _worker = Worker::start("locked-strangers", &nats, &plugins_dir(), Some("wellness"));
    let data = temp_dir("locked-strangers-client");
    let at_the_door = "cannot connect to the nats-server at nats://127.0.0.1:";
    // Refused at the door: no credentials, no certificate, a wrong password.
    for (role, why) in [
        (Role::Anonymous, "authorization violation"),
        (Role::NoCertificate, "CertificateRequired"),
        (Role::WrongPassword, "authorization violation"),
    ] {
        let refused = stress_call(&mut aura_as(&nats, role), &data);
        assert_refused(&refused, &[at_the_door, why]);
    }
    // A user of the server without aura's permissions, as a client; the event reader as a
    // client: the server's refusal is the error, named.
    for role in [Role::Rogue, Role::EventsReader] {
        let refused = stress_call(&mut aura_as(&nats, role), &data);
        assert_refused(
            &refused,
            &[
                "refused this client's discovery of the workers: nats: Permissions Violation for Publish to \"$SRV.INFO.aura\"",
            ],
        );
    }
    // The rogue and the client as workers: refused, never saying they serve.
    for role in [Role::Rogue, Role::Client] {
        let refused = aura_as(&nats, role)
            .arg("--data-dir")
            .arg(temp_dir("locked-strangers-impostor"))
            .arg("--plugins-dir")
            .arg(plugins_dir())
            .args(["worker", "--agents", "wellness"])
            .output()
            .unwrap();
        assert_refused(
            &refused,
            &["refused this worker's start: nats: Permissions Violation"],
        );
        assert!(!stderr(&refused).contains("worker serving"));
    }
    // The client may not read the stream.
    let refused = aura_as(&nats, Role::Client)
        .args(["events", "--durable", "not-a-reader"])
        .output()
        .unwrap();
    assert_refused(
        &refused,
        &["refused this reader's requests: nats: Permissions Violation"],
    );
    // After all of them, the honest client is served.
    let called = stress_call(&mut aura_as(&nats, Role::Client), &data);
    assert!(called.status.success(), "{}", stderr(&called));
    let result: Value = serde_json::from_slice(&called.stdout).unwrap();
    assert_eq!(result["result"]["score"], 47, "{result}");
}

/// The client's NATS credentials and certificate, for a connection made in this process.
fn client_options(nats: &NatsServer) -> aura_wire::NatsOptions {
    let locked = nats.locked_files().unwrap();
    aura_wire::NatsOptions {
        url: format!("nats://client:{CLIENT_PASSWORD}@127.0.0.1:{}", nats.port()),
        tls_ca: Some(locked.file("ca.pem")),
        tls_cert: Some(locked.file("client-cert.pem")),
        tls_key: Some(locked.file("client-key.pem")),
        ..aura_wire::NatsOptions::default()
    }
}

/// A client in this process (a host whose calls all go to the workers) connected with the
/// client's credentials and trusting the honest workers' identity; its data dir.
pub(crate) async fn trusting_client(nats: &NatsServer) -> (aura_host::Host, PathBuf) {
    let locked = nats.locked_files().unwrap();
    let access = aura_wire::NatsAccess::from_options(&aura_wire::NatsOptions {
        trusted_workers: Some(locked.worker_identity.clone()),
        ..client_options(nats)
    })
    .unwrap();
    let cluster = aura_wire::cluster::Cluster::connect(&access).await.unwrap();
    // The impostor answered discovery too: its info is not signed by a trusted key.
    assert_eq!(cluster.workers(), 1);
    let data = temp_dir("locked-impostor-client");
    let mut config = crate::support::config(plugins_dir(), &data);
    config.agents = Some(Vec::new());
    config.fuel_per_ms = cluster.fuel_per_ms();
    config.remote = Some(std::sync::Arc::new(cluster));
    (aura_host::Host::open(&config).await.unwrap(), data)
}

/// The stress-score envelope of `call_id`.
fn stress_envelope(call_id: &str) -> String {
    crate::support::envelope(
        call_id,
        "wellness",
        "stress_score",
        serde_json::json!({
            "baselines": {"hrv_ms": 60, "resting_hr_bpm": 58, "sleep_minutes": 450},
            "readings": {"hrv_ms": 42, "resting_hr_bpm": 65, "sleep_minutes": 360}
        }),
    )
    .to_string()
}

/// Three processes in the workers' queue group, all with the worker's NATS credentials: the
/// honest worker, an impostor `aura worker` whose identity is not trusted, and a forger that
/// answers every request it takes with an honest worker's signed answer replayed (to
/// another request) or with a score of 99 under that answer's signature. The client trusts
/// only the honest identity: each impostor's and forger's answer is quarantined as one that
/// does not come from a trusted worker, the request is sent again, and every call is answered
/// with the honest score.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn impostors_and_forged_or_replayed_answers_are_quarantined_and_honest_calls_succeed() {
    use aura_wire::async_nats::HeaderMap;
    use aura_wire::provenance::{REQUEST_ID_HEADER, SIGNATURE_HEADER, SIGNER_HEADER};
    use futures_util::StreamExt;

    let nats = NatsServer::locked("impostor");
    let locked = nats.locked_files().unwrap();
    let _honest = Worker::start("impostor-honest", &nats, &plugins_dir(), Some("wellness"));
    // The forger's connection: the worker's own NATS credentials and certificate.
    let forger = aura_wire::connect(
        &aura_wire::NatsAccess::from_options(&aura_wire::NatsOptions {
            url: format!("tls://127.0.0.1:{}", nats.port()),
            nkey: Some(locked.file("worker.nk")),
            tls_ca: Some(locked.file("ca.pem")),
            tls_cert: Some(locked.file("worker-cert.pem")),
            tls_key: Some(locked.file("worker-key.pem")),
            ..aura_wire::NatsOptions::default()
        })
        .unwrap(),
    )
    .await
    .unwrap()
    .client;
    // An honest signed answer, captured while the honest worker is the only one serving.
    let mut headers = HeaderMap::new();
    headers.insert(REQUEST_ID_HEADER, "a-captured-request");
    let captured = forger
        .request_with_headers(
            "aura.tool.wellness.stress_score",
            headers,
            stress_envelope("t_capture001").into(),
        )
        .await
        .unwrap();
    let signed = captured.headers.clone().unwrap();
    assert_eq!(
        signed.get(SIGNER_HEADER).map(|v| v.as_str()),
        Some(locked.worker_identity.as_str())
    );
    assert!(signed.get(SIGNATURE_HEADER).is_some());
    let mut requests = forger
        .queue_subscribe("aura.tool.wellness.stress_score", "aura".into())
        .await
        .unwrap();
    let forging = forger.clone();
    let forged_answers = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = forged_answers.clone();
    tokio::spawn(async move {
        while let Some(request) = requests.next().await {
            let Some(reply) = request.reply.clone() else {
                continue;
            };
            let n = counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let body = match n % 2 {
                // Replayed: the captured answer, as it was signed, to another request.
                0 => captured.payload.clone(),
                // Forged: this request's own ids, a score of 99, the captured signature.
                _ => {
                    let call: Value = serde_json::from_slice(&request.payload).unwrap();
                    let mut answer: Value = serde_json::from_slice(&captured.payload).unwrap();
                    answer["call_id"] = call["call_id"].clone();
                    answer["result"]["score"] = 99.into();
                    answer.to_string().into()
                }
            };
            let _ = forging
                .publish_with_headers(reply, signed.clone(), body)
                .await;
        }
    });
    forger.flush().await.unwrap();
    // The impostor: a real aura worker with the worker's credentials, its own identity.
    let _impostor = Worker::start_with(
        "impostor-impostor",
        &nats,
        &plugins_dir(),
        Some("wellness"),
        (Role::Impostor, &[]),
    );
    let (client, data) = trusting_client(&nats).await;
    const CALLS: usize = 40;
    for n in 0..CALLS {
        let answer = client
            .dispatch(&stress_envelope(&format!("t_honest{n:04}")))
            .await
            .unwrap();
        assert!(answer.ok, "{answer:?}");
        assert_eq!(answer.result.unwrap()["score"], 47);
    }
    // Each untrusted answer has its quarantine record on the client, under the call it came
    // for; with three in the queue group, 40 calls reach the other two many times.
    let records = crate::support::quarantine_lines(&data);
    let reason = |record: &Value| record["reason"].as_str().unwrap_or("").to_owned();
    let untrusted: Vec<String> = records
        .iter()
        .filter(|r| reason(r).contains("does not come from a trusted worker"))
        .map(reason)
        .collect();
    assert_eq!(untrusted.len(), records.len(), "{records:#?}");
    assert!(
        untrusted
            .iter()
            .any(|r| r.contains("a key this host does not trust")),
        "the impostor's answers: {untrusted:#?}"
    );
    let forged = untrusted
        .iter()
        .filter(|r| r.contains("does not verify over what it answers"))
        .count();
    assert!(forged > 0, "the forger's answers: {untrusted:#?}");
    assert_eq!(
        forged,
        forged_answers.load(std::sync::atomic::Ordering::SeqCst),
        "every forged or replayed answer is quarantined"
    );
    for record in &records {
        assert_eq!(
            (&record["kind"], &record["phase"]),
            (&Value::from("agent_unavailable"), &Value::from("reply")),
            "{record}"
        );
        assert!(
            record["call_id"]
                .as_str()
                .is_some_and(|id| id.starts_with("t_honest")),
            "{record}"
        );
    }
}

/// What the worker answers a raw schedule_event request (sent with the client's credentials,
/// as a process that skips aura's client would) carrying `proof`, with `fuel` in its frame.
async fn schedule_raw(
    client: &aura_wire::async_nats::Client,
    call_id: &str,
    proof: Option<&str>,
    fuel: u64,
) -> Value {
    let mut headers = aura_wire::async_nats::HeaderMap::new();
    headers.insert(aura_wire::FUEL_HEADER, fuel.to_string().as_str());
    if let Some(proof) = proof {
        headers.insert(aura_wire::CONFIRMATION_HEADER, proof);
    }
    let answer = client
        .request_with_headers(
            "aura.tool.calendar.schedule_event",
            headers,
            schedule_envelope(call_id).into(),
        )
        .await
        .unwrap();
    serde_json::from_slice(&answer.payload).unwrap()
}

/// A schedule_event call, canonical (as a client host sends it).
fn schedule_envelope(call_id: &str) -> String {
    let call = crate::support::envelope(
        call_id,
        "calendar",
        "schedule_event",
        serde_json::json!({
            "event": {"title": "Dentist", "start": "2026-11-24T15:00:00Z",
                      "end": "2026-11-24T16:00:00Z"},
            "working_hours": {"start": "09:00", "end": "17:00"},
            "utc_offset_minutes": 0
        }),
    );
    aura_contract::canonical::to_canonical_string(&call).unwrap()
}

/// A worker that trusts the client's front key runs calendar.schedule_event only with that
/// front's proof of the user's yes over that very call: `aura call` (the user's own command)
/// carries one; a raw request with none, one from another front, one for another call, an
/// expired one or one already used (sent again under another frame, past the answer cache)
/// is refused with call_not_allowed, told to finish, and quarantined on the worker.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_confirm_required_call_runs_only_with_a_trusted_fronts_proof_of_the_yes() {
    use aura_host::confirmation::{Confirmations, now_unix_ms};
    use aura_plugins::signing::{Identity, TrustedKeys};

    let nats = NatsServer::locked("confirm");
    let locked = nats.locked_files().unwrap();
    let worker = Worker::start("confirm", &nats, &plugins_dir(), Some("calendar"));
    // The user's own command: proven, run.
    let called = aura_as(&nats, Role::Client)
        .arg("--data-dir")
        .arg(temp_dir("confirm-client"))
        .args([
            "call",
            "calendar",
            "schedule_event",
            r#"{"event":{"title":"Dentist","start":"2026-11-24T15:00:00Z","end":"2026-11-24T16:00:00Z"},"working_hours":{"start":"09:00","end":"17:00"},"utc_offset_minutes":0}"#,
        ])
        .output()
        .unwrap();
    assert!(called.status.success(), "{}", stderr(&called));
    let result: Value = serde_json::from_slice(&called.stdout).unwrap();
    assert_eq!(result["result"]["event"]["title"], "Dentist", "{result}");
    // Raw requests with the client's NATS credentials.
    let raw =
        aura_wire::connect(&aura_wire::NatsAccess::from_options(&client_options(&nats)).unwrap())
            .await
            .unwrap()
            .client;
    let front = Confirmations::new(
        Some(Identity::load(&locked.file("front.key")).unwrap()),
        TrustedKeys::none(),
    );
    let stranger = Confirmations::new(Some(Identity::generate().unwrap()), TrustedKeys::none());
    let now = now_unix_ms();
    let proof_a = front
        .prove(&schedule_envelope("t_confirm0a1"), now)
        .unwrap();
    // A proof a minute and more old: the expiry was signed, so it cannot be moved.
    let old = front
        .prove(&schedule_envelope("t_confirm0e1"), now - 300_000)
        .unwrap();
    let foreign = stranger
        .prove(&schedule_envelope("t_confirm0f1"), now)
        .unwrap();
    // The honest proof runs its call once.
    let ran = schedule_raw(&raw, "t_confirm0a1", Some(&proof_a), 5_000_000).await;
    assert_eq!(ran["ok"], true, "{ran}");
    let refusals = [
        (
            "t_confirm0n1",
            None,
            "it carries no proof of the user's yes",
        ),
        (
            "t_confirm0f1",
            Some(foreign.as_str()),
            "a key this host does not trust",
        ),
        (
            "t_confirm0b1",
            Some(proof_a.as_str()),
            "does not verify over what it answers",
        ),
        ("t_confirm0e1", Some(old.as_str()), "expired"),
    ];
    for (call_id, proof, why) in refusals {
        let refused = schedule_raw(&raw, call_id, proof, 5_000_000).await;
        assert_eq!(refused["ok"], false, "{refused}");
        assert_eq!(refused["error"]["kind"], "call_not_allowed", "{refused}");
        let message = refused["error"]["message"].as_str().unwrap();
        assert!(
            message.starts_with("`calendar.schedule_event` needs the user's yes, and ")
                && message.contains(why),
            "{call_id}: {message}"
        );
    }
    // The honest proof again, under another frame (so not a retry the worker's answer cache
    // answers): a replay.
    let replayed = schedule_raw(&raw, "t_confirm0a1", Some(&proof_a), 4_000_000).await;
    assert_eq!(replayed["ok"], false, "{replayed}");
    assert!(
        replayed["error"]["message"]
            .as_str()
            .unwrap()
            .contains("was already used (a replay)"),
        "{replayed}"
    );
    // The same request again (a client's retry) is its first answer, from the cache.
    let retried = schedule_raw(&raw, "t_confirm0a1", Some(&proof_a), 5_000_000).await;
    assert_eq!(retried, ran);
    // Each refusal is quarantined on the worker, once, told to finish (asking the user again
    // is the front's to do, not a retry's).
    let records = worker.quarantine();
    let unconfirmed: Vec<&Value> = records
        .iter()
        .filter(|r| r["kind"] == "call_not_allowed")
        .collect();
    assert_eq!(unconfirmed.len(), refusals.len() + 1, "{records:#?}");
    for record in unconfirmed {
        assert_eq!(record["recovery"]["action"], "finish", "{record}");
    }
}
