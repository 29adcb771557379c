//! The wire, with the real components started as users start them: a nats-server process
//! (JetStream on, its store in a temp dir, a free loopback port) and `aura worker` processes;
//! the clients are the `aura` binary (`run --nats`, `call --nats`, `events`).

use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::locked::{Locked, Role};
use crate::support::{guest_path, plugins_dir, plugins_dir_of, shared_cache_dir, temp_dir};

const AURA: &str = env!("CARGO_BIN_EXE_aura");

/// A nats-server process with JetStream, killed when dropped: open to anyone on loopback, or
/// locked under the deployment config ([`crate::locked`]).
pub(crate) struct NatsServer {
    child: Child,
    pub(crate) url: String,
    port: u16,
    dir: PathBuf,
    args: Vec<String>,
    locked: Option<Locked>,
}

impl NatsServer {
    pub(crate) fn start(name: &str) -> Self {
        Self::start_with(name, Some(""))
    }

    /// A server under deploy/nats/aura.conf: every connection authenticated over mutual TLS,
    /// each role only its subjects.
    pub(crate) fn locked(name: &str) -> Self {
        let dir = temp_dir(&format!("nats-{name}"));
        let port = free_port();
        let locked = Locked::prepare(&dir);
        let args = locked.server_args(port);
        Self::launch(dir, port, args, Some(locked))
    }

    /// A locked server ([`NatsServer::locked`]) that also serves its monitoring endpoints on
    /// loopback at the port returned (given on the command line: the deploy config opens none).
    pub(crate) fn locked_monitored(name: &str) -> (Self, u16) {
        let dir = temp_dir(&format!("nats-{name}"));
        let (port, monitor) = (free_port(), free_port());
        let locked = Locked::prepare(&dir);
        let mut args = locked.server_args(port);
        args.extend(["-m".to_owned(), monitor.to_string()]);
        (Self::launch(dir, port, args, Some(locked)), monitor)
    }

    /// Starts the server with `args`, from `dir`, on `port`.
    fn launch(dir: PathBuf, port: u16, args: Vec<String>, locked: Option<Locked>) -> Self {
        let child = Self::spawn(&dir, port, &args);
        Self {
            child,
            url: format!("nats://127.0.0.1:{port}"),
            port,
            dir,
            args,
            locked,
        }
    }

    /// The locked server's files, if it is locked.
    pub(crate) fn locked_files(&self) -> Option<&Locked> {
        self.locked.as_ref()
    }

    /// Its port.
    pub(crate) fn port(&self) -> u16 {
        self.port
    }

    /// Makes `command` connect to this server as `role` (on an open server, every role is
    /// anyone).
    pub(crate) fn connect_as(&self, role: Role, command: &mut Command) {
        match &self.locked {
            Some(locked) => locked.connect_as(role, self.port, command),
            None => {
                command.args(["--nats", &self.url]);
            }
        }
    }

    /// A server with JetStream (`jetstream`: with these settings besides its store dir) or
    /// without (no event stream: hosts then publish no events and say so).
    pub(crate) fn start_with(name: &str, jetstream: Option<&str>) -> Self {
        let dir = temp_dir(&format!("nats-{name}"));
        let port = free_port();
        // The crossing's bound (1 MiB) plus headers must fit: the default max_payload is 1 MiB.
        std::fs::write(
            dir.join("nats.conf"),
            format!(
                "listen: 127.0.0.1:{port}\nmax_payload: 2MB\n{}",
                match jetstream {
                    Some(settings) => format!(
                        "jetstream {{\n store_dir: \"{}\"\n {settings}\n}}\n",
                        dir.join("js").display()
                    ),
                    None => String::new(),
                }
            ),
        )
        .unwrap();
        let args = vec!["-c".to_owned(), dir.join("nats.conf").display().to_string()];
        Self::launch(dir, port, args, None)
    }

    fn spawn(dir: &Path, port: u16, args: &[String]) -> Child {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(dir.join("nats.log"))
            .unwrap();
        // From its dir: the TLS files a config names are found from the server's working dir.
        let child = Command::new(crate::tools::nats_server())
            .current_dir(dir)
            .args(args)
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("the nats-server starts");
        let started = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "nats-server did not start"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        child
    }

    /// Kills the server (-9) and starts it again on the same port and store.
    fn restart(&mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
        self.child = Self::spawn(&self.dir, self.port, &self.args);
    }
}

impl Drop for NatsServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A free port on loopback.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// An `aura worker` process, killed when dropped.
pub(crate) struct Worker {
    child: Child,
    data: PathBuf,
}

impl Worker {
    /// Starts a worker on `plugins` (serving `agents`, or all) and waits until it serves.
    pub(crate) fn start(
        name: &str,
        nats: &NatsServer,
        plugins: &Path,
        agents: Option<&str>,
    ) -> Self {
        Self::start_with(name, nats, plugins, agents, (Role::Worker, &[]))
    }

    /// [`Worker::start`] connected as `role` (a worker, or an impostor with a worker's
    /// credentials), with more global options (`global`).
    pub(crate) fn start_with(
        name: &str,
        nats: &NatsServer,
        plugins: &Path,
        agents: Option<&str>,
        (role, global): (Role, &[&str]),
    ) -> Self {
        let data = temp_dir(&format!("worker-{name}"));
        let mut command = Command::new(AURA);
        command
            .args(global)
            .arg("--data-dir")
            .arg(&data)
            .arg("--plugins-dir")
            .arg(plugins)
            .arg("--cache-dir")
            .arg(shared_cache_dir());
        nats.connect_as(role, &mut command);
        command.args(["worker", "--seed", "7"]);
        if let Some(agents) = agents {
            command.args(["--agents", agents]);
        }
        let mut child = command
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stderr = BufReader::new(child.stderr.take().unwrap());
        let mut line = String::new();
        let mut said = String::new();
        loop {
            line.clear();
            if stderr.read_line(&mut line).unwrap() == 0 {
                let status = child.wait().unwrap();
                panic!("the worker ended before serving ({status}), saying:\n{said}");
            }
            if line.contains("worker serving") {
                break;
            }
            said.push_str(&line);
        }
        // Keep reading its stderr so it never blocks on a full pipe.
        std::thread::spawn(move || {
            let mut sink = String::new();
            while stderr.read_line(&mut sink).unwrap_or(0) > 0 {
                sink.clear();
            }
        });
        Self { child, data }
    }

    pub(crate) fn quarantine(&self) -> Vec<Value> {
        crate::support::quarantine_lines(&self.data)
    }

    /// Stops the worker as a user does (SIGTERM) and waits for it to end.
    pub(crate) fn stop(mut self) {
        let pid = self.child.id().to_string();
        let status = Command::new("kill").args(["-TERM", &pid]).status().unwrap();
        assert!(status.success());
        let ended = self.child.wait().unwrap();
        assert!(
            ended.success(),
            "the worker ended badly on SIGTERM: {ended}"
        );
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn aura(args: &[&str]) -> std::process::Output {
    Command::new(AURA).args(args).output().unwrap()
}

fn lines(text: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(text)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

#[test]
fn the_day_over_three_workers_writes_the_traces_of_the_in_process_run_and_one_event_per_call() {
    // Under the locked deployment config: each worker, the client and the event reader with
    // credentials of their own, over mutual TLS.
    let nats = NatsServer::locked("day");
    let workers: Vec<Worker> = (1..=3)
        .map(|n| Worker::start(&format!("day-{n}"), &nats, &plugins_dir(), None))
        .collect();
    let day = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/day.json");
    let day = day.to_str().unwrap();
    let here = temp_dir("wire-day-here");
    let there = temp_dir("wire-day-there");
    let cache = shared_cache_dir();
    let cache = cache.to_str().unwrap();
    let in_process = aura(&[
        "--data-dir",
        here.to_str().unwrap(),
        "--cache-dir",
        cache,
        "run",
        day,
        "--seed",
        "7",
    ]);
    assert!(in_process.status.success(), "{in_process:?}");
    let wired = crate::locked::aura_as(&nats, Role::Client)
        .args([
            "--data-dir",
            there.to_str().unwrap(),
            "run",
            day,
            "--seed",
            "7",
        ])
        .output()
        .unwrap();
    assert!(wired.status.success(), "{wired:?}");
    assert!(
        String::from_utf8_lossy(&wired.stderr).contains("3 worker(s)"),
        "{}",
        String::from_utf8_lossy(&wired.stderr)
    );
    let traces = std::fs::read_to_string(here.join("traces.jsonl")).unwrap();
    assert_eq!(
        std::fs::read_to_string(there.join("traces.jsonl")).unwrap(),
        traces,
        "the traces over the wire differ from the in-process run's"
    );
    // Every call the day ran (executed, or confirmed and run) has one tool.executed event in
    // the stream, in the trace its call_id starts; calls agents made to agents are in their
    // root's trace.
    let ran: Vec<String> = lines(traces.as_bytes())
        .into_iter()
        .filter(|t| matches!(t["decision"].as_str(), Some("executed" | "confirmed")))
        .map(|t| t["call"]["call_id"].as_str().unwrap().to_owned())
        .collect();
    assert!(ran.len() > 50, "the day runs many calls: {}", ran.len());
    let events = crate::locked::aura_as(&nats, Role::EventsReader)
        .arg("events")
        .output()
        .unwrap();
    assert!(events.status.success(), "{events:?}");
    let events = lines(&events.stdout);
    let executed: Vec<&Value> = events
        .iter()
        .filter(|e| e["event"] == "tool.executed")
        .collect();
    let mut call_ids: Vec<&str> = executed
        .iter()
        .map(|e| e["payload"]["call_id"].as_str().unwrap())
        .collect();
    call_ids.sort_unstable();
    let distinct = call_ids.len();
    call_ids.dedup();
    assert_eq!(
        call_ids.len(),
        distinct,
        "a call has two tool.executed events"
    );
    for call_id in &ran {
        let event = executed
            .iter()
            .find(|e| e["payload"]["call_id"] == call_id.as_str())
            .unwrap_or_else(|| panic!("no tool.executed for {call_id}"));
        assert_eq!(
            event["trace_id"],
            aura_host::telemetry::TraceContext::for_call(call_id).trace_id_hex(),
            "{event}"
        );
    }
    let roots: std::collections::BTreeSet<String> = ran
        .iter()
        .map(|id| aura_host::telemetry::TraceContext::for_call(id).trace_id_hex())
        .collect();
    for event in &executed {
        assert!(
            roots.contains(event["trace_id"].as_str().unwrap()),
            "a call outside every root call's trace: {event}"
        );
    }
    // One context.updated per tick: 06:30 to 23:30 every 15 minutes is 17 × 4 + 1 = 69.
    let contexts: Vec<&str> = events
        .iter()
        .filter(|e| e["event"] == "context.updated")
        .map(|e| e["payload"]["now"].as_str().unwrap())
        .collect();
    let instants: std::collections::BTreeSet<&str> = contexts.iter().copied().collect();
    assert_eq!((contexts.len(), instants.len()), (69, 69), "{contexts:?}");
    // The one refusal of the day is quarantined where it happened, once, and its event is in
    // the stream.
    let here_quarantine = crate::support::quarantine_lines(&here);
    let there: Vec<Value> = workers.iter().flat_map(Worker::quarantine).collect();
    assert_eq!(there.len(), here_quarantine.len());
    let quarantine_events = events.iter().filter(|e| e["event"] == "quarantine").count();
    assert_eq!(quarantine_events, there.len());
    // A second read through the same durable consumer finds nothing new.
    let again = crate::locked::aura_as(&nats, Role::EventsReader)
        .arg("events")
        .output()
        .unwrap();
    assert!(
        again.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&again.stdout)
    );
}

#[test]
fn a_cycle_across_two_workers_is_refused_with_the_chain_that_crossed_the_wire() {
    let nats = NatsServer::start("cycle");
    let zoo = plugins_dir_of(
        "wire-cycle",
        &[
            ("calendar", guest_path("relay")),
            ("wellness", guest_path("boomerang")),
        ],
    );
    // calendar (relay) on one worker, wellness (boomerang) on the other: the relay's call to
    // wellness goes over the wire with the chain in its headers.
    let relay = Worker::start("cycle-relay", &nats, &zoo, Some("calendar"));
    let boomerang = Worker::start("cycle-boomerang", &nats, &zoo, Some("wellness"));
    let data = temp_dir("wire-cycle-client");
    let out = aura(&[
        "--data-dir",
        data.to_str().unwrap(),
        "--nats",
        &nats.url,
        "call",
        "calendar",
        "detect_conflicts",
        r#"{"events":[]}"#,
    ]);
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["ok"], false, "{result}");
    assert_eq!(result["error"]["kind"], "tool_failed");
    assert_eq!(
        result["error"]["message"],
        "callee wellness answered tool_failed: callee calendar answered cycle_detected: \
         agent `wellness` called `calendar`, already in the call chain calendar → wellness"
    );
    // Refused on the boomerang's worker, before anything ran, with the chain as it arrived.
    let refused = boomerang.quarantine();
    assert_eq!(refused.len(), 1, "{refused:?}");
    assert_eq!(refused[0]["kind"], "cycle_detected");
    assert_eq!(
        refused[0]["callers"],
        serde_json::json!(["calendar", "wellness"])
    );
    assert!(relay.quarantine().is_empty());
}

#[test]
fn a_client_with_no_worker_says_so() {
    let nats = NatsServer::start("none");
    let out = aura(&[
        "--nats",
        &nats.url,
        "call",
        "wellness",
        "stress_score",
        "{}",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("no aura worker answered"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The liar's misbehaviours whose call_id stems leave room for a distinct id per call of the
/// load below (the soak's "noresult" and "badresult" leave 1–2 digits, so their ids repeat),
/// and the kind each must get.
const LOAD_HOSTILE: [(&str, &str); 5] = [
    ("badjson", "malformed_json"),
    ("dupkey", "duplicate_key"),
    ("bignum", "number_out_of_range"),
    ("panic", "agent_trapped"),
    ("spin", "deadline_exceeded"),
];

/// Call `i` of the load, each with its own call_id: every third hostile (to the liar posing
/// as calendar), the rest the soak's healthy finance call.
fn load_call(i: usize) -> (String, Option<&'static str>) {
    if !i.is_multiple_of(3) {
        return crate::soak::call_for(i);
    }
    let (stem, kind) = LOAD_HOSTILE[(i / 3) % LOAD_HOSTILE.len()];
    let n = i / 3 / LOAD_HOSTILE.len();
    let call_id = format!("t_{stem}{n:0width$}", width = 10 - stem.len());
    let mut call = crate::support::envelope(
        &call_id,
        "calendar",
        "detect_conflicts",
        serde_json::json!({"events": []}),
    );
    call["deadline_ms"] = serde_json::json!(50);
    (call.to_string(), Some(kind))
}

/// Sets its flag when dropped (a panicking load included), so the thread that kills things
/// never waits for a call count that will not come.
struct SetOnDrop(std::sync::Arc<std::sync::atomic::AtomicBool>);

impl Drop for SetOnDrop {
    fn drop(&mut self) {
        self.0.store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

/// 10,000 calls, each its own call_id (every third a hostile one refused at the worker with
/// its exact kind, the rest healthy) from 8 clients over 3 workers; one worker is killed (-9) at a
/// random call and later the nats-server itself is killed and started again. Every call is
/// answered as in-process, every refusal has its quarantine record (in the log of the worker
/// that refused it; a call that ran on the killed worker or lost its answer in the restart
/// may have run again elsewhere, never twice on one worker), and the stream holds exactly one
/// tool.executed per healthy call and one quarantine event per hostile call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_calls_survive_a_killed_worker_and_a_restarted_server() {
    use crate::soak::{SOAK_CALLS, SOAK_TASKS, soak_plugins};
    let call_for = load_call;
    use std::collections::{BTreeMap, BTreeSet};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

    let plugins = soak_plugins();
    let nats = NatsServer::start("load");
    let url = nats.url.clone();
    let workers: Vec<Worker> = (0..3)
        .map(|n| Worker::start(&format!("load-{n}"), &nats, &plugins, None))
        .collect();
    // The reference: the healthy call's answer in-process.
    let reference = {
        let data = temp_dir("load-reference");
        let host = aura_host::Host::open(&crate::support::config(&plugins, &data))
            .await
            .unwrap();
        let answer = host.dispatch(&call_for(1).0).await.unwrap();
        assert!(answer.ok, "{answer:?}");
        answer.result.unwrap()
    };
    let mut clients = Vec::new();
    let mut client_dirs = Vec::new();
    for n in 0..SOAK_TASKS {
        let cluster =
            aura_wire::cluster::Cluster::connect(&aura_wire::NatsAccess::url(&url).unwrap())
                .await
                .unwrap();
        assert_eq!(cluster.workers(), 3);
        let data = temp_dir(&format!("load-client-{n}"));
        let mut config = crate::support::config(&plugins, &data);
        config.agents = Some(Vec::new());
        config.fuel_per_ms = cluster.fuel_per_ms();
        config.remote = Some(Arc::new(cluster));
        clients.push(Arc::new(aura_host::Host::open(&config).await.unwrap()));
        client_dirs.push(data);
    }

    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos() as usize;
    let kill_at = 1_000 + seed % 3_000;
    let restart_at = 5_500 + (seed / 3_000) % 3_000;
    let victim = seed % 3;
    println!(
        "load: worker {victim} killed at call {kill_at}, nats-server restarted at call {restart_at}"
    );

    let next = Arc::new(AtomicUsize::new(0));
    let done = Arc::new(AtomicBool::new(false));
    let killer = {
        let (next, done) = (next.clone(), done.clone());
        let (mut workers, mut nats) = (workers, nats);
        std::thread::spawn(move || {
            let reach = |count: usize| {
                while next.load(Ordering::SeqCst) < count {
                    if done.load(Ordering::SeqCst) {
                        return false;
                    }
                    std::thread::sleep(Duration::from_millis(1));
                }
                true
            };
            if reach(kill_at) {
                workers[victim].child.kill().unwrap();
                workers[victim].child.wait().unwrap();
            }
            let mut back_at = None;
            if reach(restart_at) {
                nats.restart();
                back_at = Some(next.load(Ordering::SeqCst));
            }
            (workers, nats, back_at)
        })
    };
    let started = Instant::now();
    {
        let _done = SetOnDrop(done.clone());
        let mut tasks = tokio::task::JoinSet::new();
        for client in &clients {
            let (client, next, reference) = (client.clone(), next.clone(), reference.clone());
            tasks.spawn(async move {
                loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    if i >= SOAK_CALLS {
                        return;
                    }
                    let (text, hostile) = call_for(i);
                    match (client.dispatch(&text).await, hostile) {
                        (Ok(result), None) => {
                            assert!(result.ok, "call {i}: {result:?}");
                            assert_eq!(result.result.unwrap(), reference, "call {i}");
                        }
                        (Err(refused), Some(kind)) => {
                            assert_eq!(refused.error.kind(), kind, "call {i}: {}", refused.error);
                        }
                        (outcome, expected) => {
                            panic!("call {i}: {outcome:?}, expected {expected:?}")
                        }
                    }
                }
            });
        }
        tasks.join_all().await;
    }
    let elapsed = started.elapsed();
    let (workers, _nats, back_at) = killer.join().unwrap();
    // The server was back while calls were still to come: the restart was mid-load.
    assert!(
        back_at.is_some_and(|n| n < SOAK_CALLS),
        "restarted at {back_at:?}"
    );

    // Nothing was refused on the clients' side (no call found every attempt unanswered).
    for dir in &client_dirs {
        let lines = crate::support::quarantine_lines(dir);
        assert!(lines.is_empty(), "{lines:?}");
    }
    // Every hostile call has its record with its kind, never two on one worker.
    let expected: BTreeMap<String, &str> = (0..SOAK_CALLS)
        .filter_map(|i| {
            let (text, hostile) = call_for(i);
            let call: Value = serde_json::from_str(&text).unwrap();
            hostile.map(|kind| (call["call_id"].as_str().unwrap().to_owned(), kind))
        })
        .collect();
    let healthy: BTreeSet<String> = (0..SOAK_CALLS)
        .filter_map(|i| {
            let (text, hostile) = call_for(i);
            let call: Value = serde_json::from_str(&text).unwrap();
            hostile
                .is_none()
                .then(|| call["call_id"].as_str().unwrap().to_owned())
        })
        .collect();
    let mut recorded: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (n, worker) in workers.iter().enumerate() {
        for record in worker.quarantine() {
            let call_id = record["call_id"].as_str().unwrap().to_owned();
            assert_eq!(
                Some(&record["kind"].as_str().unwrap()),
                expected.get(&call_id),
                "{record}"
            );
            let on = recorded.entry(call_id).or_default();
            assert!(!on.contains(&n), "{record} recorded twice by worker {n}");
            on.push(n);
        }
    }
    assert_eq!(
        recorded.keys().collect::<Vec<_>>(),
        expected.keys().collect::<Vec<_>>(),
        "a hostile call without its quarantine record"
    );
    assert_eq!(
        expected.len() + healthy.len(),
        SOAK_CALLS,
        "a call_id repeats"
    );
    let rerun = recorded.values().filter(|on| on.len() > 1).count();

    // The stream: one tool.executed per healthy call, one quarantine event per hostile one.
    let events = aura(&["--nats", &url, "events"]);
    assert!(events.status.success(), "{events:?}");
    let events = lines(&events.stdout);
    let count = |event: &str, key: &str| {
        let mut by_call: BTreeMap<String, usize> = BTreeMap::new();
        for e in events.iter().filter(|e| e["event"] == event) {
            *by_call
                .entry(e["payload"][key].as_str().unwrap().to_owned())
                .or_default() += 1;
        }
        by_call
    };
    let executed = count("tool.executed", "call_id");
    assert_eq!(
        executed.keys().cloned().collect::<BTreeSet<_>>(),
        healthy,
        "tool.executed events and healthy calls differ"
    );
    assert!(executed.values().all(|&n| n == 1));
    let quarantined = count("quarantine", "call_id");
    assert_eq!(
        quarantined.keys().collect::<Vec<_>>(),
        expected.keys().collect::<Vec<_>>()
    );
    assert!(quarantined.values().all(|&n| n == 1));
    println!(
        "load: {SOAK_CALLS} calls in {:.1} s, {} hostile; {rerun} refusal(s) recorded on two workers (ran on the killed one or lost their answer in the restart)",
        elapsed.as_secs_f64(),
        expected.len()
    );
}

/// What a hostile or broken client can put on the wire, sent raw with the NATS client to a
/// real worker: bytes that are not JSON, an envelope for another tool than its subject names,
/// and a call chain six agents deep (four catalogue agents cannot make one without repeating:
/// a forged header). Each gets a result.v1 refusal of its own kind, quarantined on the worker,
/// and the worker goes on serving.
#[tokio::test]
async fn garbage_a_misaddressed_envelope_and_a_forged_deep_chain_are_refused_on_the_worker() {
    let nats = NatsServer::start("raw");
    let worker = Worker::start("raw", &nats, &plugins_dir(), Some("wellness"));
    let client = aura_wire::connect(&aura_wire::NatsAccess::url(&nats.url).unwrap())
        .await
        .unwrap()
        .client;
    let args = serde_json::json!({
        "baselines": {"hrv_ms": 60, "resting_hr_bpm": 58, "sleep_minutes": 450},
        "readings": {"hrv_ms": 42, "resting_hr_bpm": 65, "sleep_minutes": 360}
    });
    let call = crate::support::envelope("t_rawcall001", "wellness", "stress_score", args);
    let ask = |subject: &'static str, body: Vec<u8>, chain: Option<&'static str>| {
        let client = client.clone();
        async move {
            let mut headers = aura_wire::async_nats::HeaderMap::new();
            if let Some(chain) = chain {
                headers.insert(aura_wire::CHAIN_HEADER, chain);
                // The forged request also says which request it belongs to.
                headers.insert(aura_wire::TRACEPARENT_HEADER, FORGED_TRACEPARENT);
            }
            let reply = client
                .request_with_headers(subject, headers, body.into())
                .await
                .unwrap();
            serde_json::from_slice::<Value>(&reply.payload).unwrap()
        }
    };
    let garbage = ask(
        "aura.tool.wellness.stress_score",
        b"\xff{not json".to_vec(),
        None,
    )
    .await;
    assert_eq!(garbage["ok"], false, "{garbage}");
    assert_eq!(garbage["error"]["kind"], "malformed_json");
    let misaddressed = ask(
        "aura.tool.wellness.sleep_summary",
        call.to_string().into_bytes(),
        None,
    )
    .await;
    assert_eq!(
        misaddressed["error"]["kind"], "call_not_allowed",
        "{misaddressed}"
    );
    let deep = ask(
        "aura.tool.wellness.stress_score",
        call.to_string().into_bytes(),
        Some("calendar,finance,comms,calendar,finance"),
    )
    .await;
    assert_eq!(deep["error"]["kind"], "agent_call_unsupported", "{deep}");
    assert_eq!(deep["fuel_used"], 0);
    // Still serving: the same call without the forged chain runs.
    let fine = ask(
        "aura.tool.wellness.stress_score",
        call.to_string().into_bytes(),
        None,
    )
    .await;
    assert_eq!(fine["ok"], true, "{fine}");
    // (500·50 + 300·50 + 200·33)/1000 = 46.6 → 47, moderate (worked out in tests/all/wellness.rs).
    assert_eq!(fine["result"]["score"], 47);
    assert_eq!(fine["result"]["level"], "moderate");
    let kinds: Vec<Value> = worker
        .quarantine()
        .iter()
        .map(|r| r["kind"].clone())
        .collect();
    assert_eq!(
        kinds,
        [
            "malformed_json",
            "call_not_allowed",
            "agent_call_unsupported"
        ]
    );
    // The refusal's quarantine event is in the trace the request named, though the call never
    // ran: the W3C example's trace id.
    let events = tokio::task::spawn_blocking(move || {
        let url = nats.url.clone();
        let out = aura(&["--nats", &url, "events"]);
        (nats, lines(&out.stdout))
    })
    .await
    .unwrap()
    .1;
    let refused: Vec<&Value> = events
        .iter()
        .filter(|e| e["event"] == "quarantine" && e["payload"]["kind"] == "agent_call_unsupported")
        .collect();
    assert_eq!(refused.len(), 1, "{events:#?}");
    assert_eq!(refused[0]["trace_id"], "4bf92f3577b34da6a3ce929d0e0e4736");
}

const FORGED_TRACEPARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

/// The percentile `p` (0–100) of sorted `values`, nearest rank.
pub(crate) fn percentile(sorted: &[u64], p: usize) -> u64 {
    sorted[((sorted.len() * p).div_ceil(100)).clamp(1, sorted.len()) - 1]
}

/// A call's hop over NATS against the in-process crossing (the same calls, interleaved in one
/// run), then throughput with 1, 2 and 4 workers. Not a test: timings are never asserted.
/// `just bench-wire` (tests and the `aura` workers built with the bench profile).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a benchmark: just bench-wire"]
async fn bench_wire_hop_and_throughput() {
    use std::sync::Arc;
    const HOP_CALLS: usize = 2_000;
    const THROUGHPUT_CALLS: usize = 4_000;
    const CLIENT_TASKS: usize = 8;
    let args = serde_json::json!({
        "baselines": {"hrv_ms": 60, "resting_hr_bpm": 58, "sleep_minutes": 450},
        "readings": {"hrv_ms": 42, "resting_hr_bpm": 65, "sleep_minutes": 360}
    });
    // Every call its own id: a worker answers a repeated request from its cache.
    let call = move |run: &str, i: usize| {
        crate::support::envelope(
            &format!("t_{run}{i:0width$}", width = 10 - run.len()),
            "wellness",
            "stress_score",
            args.clone(),
        )
        .to_string()
    };
    let client = |url: String| async move {
        let cluster =
            aura_wire::cluster::Cluster::connect(&aura_wire::NatsAccess::url(&url).unwrap())
                .await
                .unwrap();
        let data = temp_dir("bench-wire-client");
        let mut config = crate::support::config(plugins_dir(), &data);
        config.agents = Some(Vec::new());
        config.fuel_per_ms = cluster.fuel_per_ms();
        config.remote = Some(Arc::new(cluster));
        Arc::new(aura_host::Host::open(&config).await.unwrap())
    };

    let nats = NatsServer::start("bench");
    let mut workers = vec![Worker::start(
        "bench-0",
        &nats,
        &plugins_dir(),
        Some("wellness"),
    )];
    // A second server without JetStream: its worker publishes no events, so the hop there is
    // the request and answer alone, without waiting for the call's events to be stored.
    let plain = NatsServer::start_with("bench-plain", None);
    let _plain_worker = Worker::start("bench-plain", &plain, &plugins_dir(), Some("wellness"));
    // The deployment's locked server (deploy/nats: JetStream too, mutual TLS, credentials,
    // per-role permissions) and a worker signing its answers for a client that checks them.
    let locked = NatsServer::locked("bench-locked");
    let _locked_worker = Worker::start("bench-locked", &locked, &plugins_dir(), Some("wellness"));
    let (here, _) = crate::support::host_with("bench-wire-here", &["wellness"]).await;
    let there = client(nats.url.clone()).await;
    let bare = client(plain.url.clone()).await;
    let (signed, _) = crate::locked::trusting_client(&locked).await;
    for i in 0..200 {
        assert!(here.dispatch(&call("warmh", i)).await.unwrap().ok);
        assert!(there.dispatch(&call("warmt", i)).await.unwrap().ok);
        assert!(bare.dispatch(&call("warmb", i)).await.unwrap().ok);
        assert!(signed.dispatch(&call("warms", i)).await.unwrap().ok);
    }
    let (mut local, mut wire, mut wire_bare, mut wire_locked) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for i in 0..HOP_CALLS {
        let started = Instant::now();
        assert!(here.dispatch(&call("hoph", i)).await.unwrap().ok);
        local.push(started.elapsed().as_micros() as u64);
        let started = Instant::now();
        assert!(there.dispatch(&call("hopt", i)).await.unwrap().ok);
        wire.push(started.elapsed().as_micros() as u64);
        let started = Instant::now();
        assert!(bare.dispatch(&call("hopb", i)).await.unwrap().ok);
        wire_bare.push(started.elapsed().as_micros() as u64);
        let started = Instant::now();
        assert!(signed.dispatch(&call("hops", i)).await.unwrap().ok);
        wire_locked.push(started.elapsed().as_micros() as u64);
    }
    for times in [&mut local, &mut wire, &mut wire_bare, &mut wire_locked] {
        times.sort_unstable();
    }
    let p50 = |t: &[u64]| percentile(t, 50);
    println!(
        "hop ({HOP_CALLS} calls each, interleaved, µs): in-process p50 {} p99 {}; over NATS with events p50 {} p99 {}; without JetStream p50 {} p99 {}; hop p50 {} ({} without events)",
        p50(&local),
        percentile(&local, 99),
        p50(&wire),
        percentile(&wire, 99),
        p50(&wire_bare),
        percentile(&wire_bare, 99),
        p50(&wire).saturating_sub(p50(&local)),
        p50(&wire_bare).saturating_sub(p50(&local)),
    );
    println!(
        "locked hop ({HOP_CALLS} calls, interleaved with the above, µs): mutual TLS, credentials and signed answers checked p50 {} p99 {} against open p50 {} p99 {} (both with events): ×{:.2} at p50",
        p50(&wire_locked),
        percentile(&wire_locked, 99),
        p50(&wire),
        percentile(&wire, 99),
        p50(&wire_locked) as f64 / p50(&wire).max(1) as f64,
    );

    for count in [1, 2, 4] {
        while workers.len() < count {
            let n = workers.len();
            workers.push(Worker::start(
                &format!("bench-{n}"),
                &nats,
                &plugins_dir(),
                Some("wellness"),
            ));
        }
        let there = client(nats.url.clone()).await;
        let next = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let started = Instant::now();
        let mut tasks = tokio::task::JoinSet::new();
        for _ in 0..CLIENT_TASKS {
            let (there, next, call) = (there.clone(), next.clone(), call.clone());
            tasks.spawn(async move {
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    if i >= THROUGHPUT_CALLS {
                        return;
                    }
                    let run = format!("tp{count}");
                    assert!(there.dispatch(&call(&run, i)).await.unwrap().ok);
                }
            });
        }
        tasks.join_all().await;
        let seconds = started.elapsed().as_secs_f64();
        println!(
            "throughput, {count} worker(s), {CLIENT_TASKS} concurrent: {THROUGHPUT_CALLS} calls in {seconds:.2} s = {:.0} calls/s",
            THROUGHPUT_CALLS as f64 / seconds
        );
    }
}
