//! The wire, with the real components started as users start them: a nats-server process
//! (JetStream on, its store in a temp dir, a free loopback port) and `aura worker` processes;
//! the clients are the `aura` binary (`run --nats`, `call --nats`, `events`).

use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::{guest_path, plugins_dir, plugins_dir_of, shared_cache_dir, temp_dir};

const AURA: &str = env!("CARGO_BIN_EXE_aura");

/// A nats-server process with JetStream, killed when dropped.
struct NatsServer {
    child: Child,
    url: String,
}

impl NatsServer {
    fn start(name: &str) -> Self {
        let dir = temp_dir(&format!("nats-{name}"));
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        // The crossing's bound (1 MiB) plus headers must fit: the default max_payload is 1 MiB.
        let config = dir.join("nats.conf");
        std::fs::write(
            &config,
            format!(
                "listen: 127.0.0.1:{port}\nmax_payload: 2MB\njetstream {{ store_dir: \"{}\" }}\n",
                dir.join("js").display()
            ),
        )
        .unwrap();
        let child = Command::new("nats-server")
            .arg("-c")
            .arg(&config)
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.join("nats.log")).unwrap())
            .spawn()
            .expect("nats-server is installed (.ci/run installs Debian's nats-server)");
        let started = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "nats-server did not start"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        Self {
            child,
            url: format!("nats://127.0.0.1:{port}"),
        }
    }
}

impl Drop for NatsServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An `aura worker` process, killed when dropped.
struct Worker {
    child: Child,
    data: PathBuf,
}

impl Worker {
    /// Starts a worker on `plugins` (serving `agents`, or all) and waits until it serves.
    fn start(name: &str, nats: &NatsServer, plugins: &Path, agents: Option<&str>) -> Self {
        let data = temp_dir(&format!("worker-{name}"));
        let mut command = Command::new(AURA);
        command
            .arg("--data-dir")
            .arg(&data)
            .arg("--plugins-dir")
            .arg(plugins)
            .arg("--cache-dir")
            .arg(shared_cache_dir())
            .args(["--nats", &nats.url, "worker", "--seed", "7"]);
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
        loop {
            line.clear();
            assert!(
                stderr.read_line(&mut line).unwrap() > 0,
                "the worker ended before serving"
            );
            if line.contains("worker serving") {
                break;
            }
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

    fn quarantine(&self) -> Vec<Value> {
        crate::support::quarantine_lines(&self.data)
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
    let nats = NatsServer::start("day");
    let workers: Vec<Worker> = (1..=3)
        .map(|n| Worker::start(&format!("day-{n}"), &nats, &plugins_dir(), None))
        .collect();
    let day = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/day.json");
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
    let wired = aura(&[
        "--data-dir",
        there.to_str().unwrap(),
        "--nats",
        &nats.url,
        "run",
        day,
        "--seed",
        "7",
    ]);
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
    let events = aura(&["--nats", &nats.url, "events"]);
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
            aura::telemetry::TraceContext::for_call(call_id).trace_id_hex(),
            "{event}"
        );
    }
    let roots: std::collections::BTreeSet<String> = ran
        .iter()
        .map(|id| aura::telemetry::TraceContext::for_call(id).trace_id_hex())
        .collect();
    for event in &executed {
        assert!(
            roots.contains(event["trace_id"].as_str().unwrap()),
            "a call outside every root call's trace: {event}"
        );
    }
    // The one refusal of the day is quarantined where it happened, once, and its event is in
    // the stream.
    let here_quarantine = crate::support::quarantine_lines(&here);
    let there: Vec<Value> = workers.iter().flat_map(Worker::quarantine).collect();
    assert_eq!(there.len(), here_quarantine.len());
    let quarantine_events = events.iter().filter(|e| e["event"] == "quarantine").count();
    assert_eq!(quarantine_events, there.len());
    // A second read through the same durable consumer finds nothing new.
    let again = aura(&["--nats", &nats.url, "events"]);
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
