//! A fleet lives its people's days (30 in CI; `just fleet-day 100` for a hundred, the figures in
//! BENCHMARKS.md): three `aura fleet host` processes on one nats-server with
//! JetStream, each person's signals sent as the day goes, one host killed with SIGKILL mid-day
//! and another cut off from the server for a while (a TCP proxy between it and the server
//! drops every connection and refuses new ones). Then every person's decisions, as delivered,
//! must equal their single-machine run (the same setup, seed and signals through one live
//! session on one host), each delivered once and in order, none naming another person; and the
//! hosts' own logs must show that no person was written for by two hosts at once.

use std::collections::{BTreeMap, HashMap};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use serde_json::Value;
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

use aura_contract::limits::FLEET_LEASE_MS;
use aura_contract::person::Person;
use aura_day::live::{self, Clock, LiveConfig, Sink};
use aura_day::orchestrator::Start;
use aura_fleet::jetstream::{self, DECISIONS_STREAM, JOURNAL_STREAM};
use aura_fleet::store::{
    DECISION_HEADER, EPOCH_HEADER, Enrolment, Fleet, PERSON_HEADER, decisions_subject,
    journal_subject,
};
use aura_host::Host;

use crate::support::{config, plugins_dir, shared_cache_dir, temp_dir};
use crate::wire::NatsServer;

/// People in the fleet; the first [`FULL_DAYS`] live three whole days of the generated life
/// (tests/data/life: 729 signals from Saturday 24 October, across Berlin's 25-hour Sunday, to
/// Monday's midnight), the others a weekend morning (4 signals), so the test fits CI's two
/// cores. Thirty is what the claims need: each host holds some of them when one is killed
/// and another cut off, and the test asserts that the kill and the cut each moved people and
/// that a takeover resumed from a checkpoint (a life's: six of them), so fewer people could
/// not let it pass unproven. `FLEET_DAY_PEOPLE=N` lives N (`just fleet-day N`).
const PEOPLE: usize = 30;
const FULL_DAYS: usize = 6;

/// The people of the kill-and-partition day: [`PEOPLE`], or `FLEET_DAY_PEOPLE`.
fn people() -> usize {
    std::env::var("FLEET_DAY_PEOPLE")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(PEOPLE)
        .max(FULL_DAYS)
}

/// One person's day: who, their setup, seed and signals (JSON lines, in time order).
pub(crate) struct Plan {
    pub(crate) person: Person,
    pub(crate) setup: Value,
    pub(crate) seed: u64,
    pub(crate) signals: Vec<String>,
}

/// The people and their days: `people` of them, the first `full_days` living the generated
/// life's three days, the others a weekend morning. Each person's first message names them in
/// its subject, so each one's traces are theirs alone: a decision delivered to the wrong
/// person would show.
pub(crate) fn plans(people: usize, full_days: usize) -> Vec<Plan> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let weekend = {
        let path = root.join("scenarios/weekend.json");
        let mut setup: Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let signals: Vec<Value> = crate::live::signal_lines(&path)
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect();
        setup["signals"] = Value::Array(Vec::new());
        (setup, signals)
    };
    let life = {
        let dir = root.join("tests/data/life");
        let setup: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("setup.json")).unwrap())
                .unwrap();
        let signals: Vec<Value> = std::fs::read_to_string(dir.join("signals.jsonl"))
            .unwrap()
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect();
        (setup, signals)
    };
    (0..people)
        .map(|i| {
            let person = Person::new(&format!("t{}", i % 4), &format!("u{i:03}")).unwrap();
            let (setup, signals) = if i < full_days { &life } else { &weekend };
            let mut signals = signals.clone();
            let first = signals.iter_mut().find(|s| s["kind"] == "message").unwrap();
            let subject = format!(
                "{} [{}]",
                first["data"]["subject"].as_str().unwrap(),
                person.user()
            );
            first["data"]["subject"] = Value::String(subject);
            Plan {
                person,
                setup: setup.clone(),
                seed: (i % 5) as u64,
                signals: signals.iter().map(Value::to_string).collect(),
            }
        })
        .collect()
}

/// Each person's single-machine run: one live session on a replayed clock, their signals
/// pushed in order, then their inputs closed; the traces it recorded, day after day (each
/// trace names its day's run, so equal traces are equal days).
pub(crate) async fn single_machine(name: &str, plans: &[Plan]) -> Vec<Vec<Value>> {
    let dir = temp_dir(name);
    let host = Host::open(&config(plugins_dir(), dir.join("host")))
        .await
        .unwrap();
    let mut all = Vec::new();
    for plan in plans {
        let data = dir.join(plan.person.tenant()).join(plan.person.user());
        let person_host = host.for_person(&plan.person, &data, plan.seed).unwrap();
        let (handle, inbox) = live::channel(&person_host);
        let config = LiveConfig {
            is_scenario: plan.setup.get("signals").is_some(),
            setup: plan.setup.clone(),
            tick_on: None,
            seed: plan.seed,
            clock: Clock::Replay,
            start: Start::Fresh,
            narration: None,
            keep_days: aura_contract::limits::LIVE_KEEP_DAYS_DEFAULT,
            home: None,
        };
        let session_host = person_host.clone();
        let sinks: Vec<Arc<dyn Sink>> = Vec::new();
        let session =
            tokio::spawn(
                async move { live::live(&session_host, config, sinks, inbox, |_| {}).await },
            );
        for signal in &plan.signals {
            // A refusal is the session's answer, the same on every host; "busy" (the rate
            // bound) says when to send again, as the fleet's hosts do.
            while let Err(refused) = handle.push(signal.as_bytes()).await {
                match refused.recovery.retry_after_ms {
                    Some(wait_ms) if refused.kind == "busy" => {
                        tokio::time::sleep(Duration::from_millis(wait_ms)).await;
                    }
                    _ => break,
                }
            }
        }
        handle.close().await;
        session.await.unwrap().unwrap();
        let mut traces = Vec::new();
        for day in live::life::days(&data).unwrap() {
            let text =
                std::fs::read_to_string(live::life::day_dir(&data, &day).join("traces.jsonl"))
                    .unwrap_or_default();
            traces.extend(
                text.lines()
                    .map(|l| serde_json::from_str::<Value>(l).unwrap()),
            );
        }
        all.push(traces);
    }
    all
}

/// The runs (days) `traces` name, in order, each once.
fn runs_of<'a>(traces: impl IntoIterator<Item = &'a Value>) -> Vec<String> {
    let mut runs: Vec<String> = Vec::new();
    for trace in traces {
        let run = trace["run"].as_str().unwrap().to_owned();
        if runs.last() != Some(&run) {
            runs.push(run);
        }
    }
    runs
}

/// A nats-server with JetStream, a dir for the hosts, and the fleet's streams with `plans`'
/// people enrolled.
async fn fleet_of(name: &str, plans: &[Plan]) -> (NatsServer, PathBuf, async_nats::Client, Fleet) {
    let server = NatsServer::start(name);
    let dir = temp_dir(name);
    let client = async_nats::connect(&server.url).await.unwrap();
    let fleet = jetstream::open(&client).await.unwrap();
    for plan in plans {
        let enrolment = Enrolment {
            setup: plan.setup.clone(),
            seed: plan.seed,
        };
        fleet.enrol(&plan.person, &enrolment).await.unwrap();
    }
    (server, dir, client, fleet)
}

/// A TCP proxy to the nats-server that can cut its clients off (a partition) and let them
/// back.
struct Proxy {
    port: u16,
    cut: watch::Sender<bool>,
}

impl Proxy {
    async fn start(to: u16) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let (cut, cut_rx) = watch::channel(false);
        tokio::spawn(async move {
            loop {
                let Ok((mut client, _)) = listener.accept().await else {
                    return;
                };
                if *cut_rx.borrow() {
                    let _ = client.shutdown().await;
                    continue;
                }
                let mut cut = cut_rx.clone();
                tokio::spawn(async move {
                    let Ok(mut server) = TcpStream::connect(("127.0.0.1", to)).await else {
                        return;
                    };
                    tokio::select! {
                        _ = tokio::io::copy_bidirectional(&mut client, &mut server) => {}
                        _ = cut.wait_for(|cut| *cut) => {}
                    }
                });
            }
        });
        Self { port, cut }
    }
}

/// An `aura fleet host` process; its stderr (the audit log, JSON lines) goes to a file.
struct FleetHostProcess {
    child: Child,
    log: PathBuf,
}

/// A test that fails midway leaves no host running behind it.
impl Drop for FleetHostProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_host(id: &str, url: &str, dir: &Path) -> FleetHostProcess {
    start_host_with(id, url, dir, &[])
}

/// [`start_host`] with more `fleet host` options.
fn start_host_with(id: &str, url: &str, dir: &Path, more: &[&str]) -> FleetHostProcess {
    let log = dir.join(format!("{id}.log"));
    let child = Command::new(env!("CARGO_BIN_EXE_aura"))
        .arg("--log-json")
        .arg("--data-dir")
        .arg(dir.join(id))
        .arg("--plugins-dir")
        .arg(plugins_dir())
        .arg("--cache-dir")
        .arg(shared_cache_dir())
        .args([
            "--nats", url, "fleet", "host", "--id", id, "--clock", "replay",
        ])
        .args(more)
        .env("RUST_LOG", "aura_fleet=info")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    FleetHostProcess { child, log }
}

/// One audit line of a host's log.
#[derive(Debug, Clone)]
struct Audit {
    at: time::OffsetDateTime,
    event: String,
    person: String,
    host: String,
    epoch: u64,
    seq: u64,
    /// Why a hold stopped (`stop` events), as `Ended`'s debug form.
    why: String,
    /// Journal records a purge took (`purged` events).
    records: u64,
    /// What a refusal was for (`refused` events).
    kind: String,
    /// The first inbox message a life opened reads (`life` events; 1: a life never lived).
    inbox: u64,
}

fn audit(log: &Path) -> Vec<Audit> {
    let file = std::fs::File::open(log).unwrap();
    BufReader::new(file)
        .lines()
        .map_while(Result::ok)
        .filter_map(|line| serde_json::from_str::<Value>(&line).ok())
        .filter(|line| line["target"] == "aura_fleet::audit")
        .map(|line| {
            let fields = &line["fields"];
            Audit {
                at: time::OffsetDateTime::parse(
                    line["timestamp"].as_str().unwrap(),
                    &time::format_description::well_known::Rfc3339,
                )
                .unwrap(),
                event: fields["event"].as_str().unwrap_or_default().to_owned(),
                person: fields["person"].as_str().unwrap_or_default().to_owned(),
                host: fields["host"].as_str().unwrap_or_default().to_owned(),
                epoch: fields["epoch"].as_u64().unwrap_or(0),
                seq: fields["seq"].as_u64().unwrap_or(0),
                why: fields["why"].as_str().unwrap_or_default().to_owned(),
                records: fields["records"].as_u64().unwrap_or(0),
                kind: fields["kind"].as_str().unwrap_or_default().to_owned(),
                inbox: fields["inbox"].as_u64().unwrap_or(0),
            }
        })
        .collect()
}

/// Every message on `subject` of `stream`: its sequence, headers (name → value) and payload.
async fn messages(
    client: &async_nats::Client,
    stream: &str,
    subject: String,
) -> Vec<(u64, HashMap<String, String>, Value)> {
    let context = async_nats::jetstream::new(client.clone());
    let stream = context.get_stream(stream).await.unwrap();
    let Ok(last) = stream.get_last_raw_message_by_subject(&subject).await else {
        return Vec::new();
    };
    let consumer = stream
        .create_consumer(async_nats::jetstream::consumer::pull::OrderedConfig {
            filter_subject: subject,
            ..Default::default()
        })
        .await
        .unwrap();
    let name = consumer.cached_info().name.clone();
    let mut stream_messages = consumer.messages().await.unwrap();
    let mut all = Vec::new();
    while let Some(message) = stream_messages.next().await {
        let message = message.unwrap();
        let seq = message.info().unwrap().stream_sequence;
        let headers = message
            .headers
            .iter()
            .flat_map(|headers| headers.iter())
            .map(|(name, values)| (name.to_string(), values[0].as_str().to_owned()))
            .collect();
        all.push((
            seq,
            headers,
            serde_json::from_slice(&message.payload).unwrap(),
        ));
        if seq >= last.sequence {
            break;
        }
    }
    stream.delete_consumer(&name).await.unwrap();
    all
}

/// The payload of the record at `seq` in `journal`.
fn journal_record(journal: &[(u64, HashMap<String, String>, Value)], seq: u64) -> Value {
    journal
        .iter()
        .find(|(s, _, _)| *s == seq)
        .unwrap()
        .2
        .clone()
}

/// How many decisions `person` has had delivered: their subject's last one's number + 1.
async fn delivered(client: &async_nats::Client, person: &Person) -> usize {
    let context = async_nats::jetstream::new(client.clone());
    let stream = context.get_stream(DECISIONS_STREAM).await.unwrap();
    match stream
        .get_last_raw_message_by_subject(&decisions_subject(person))
        .await
    {
        Ok(message) => {
            let number = message.headers.get(DECISION_HEADER).unwrap().as_str();
            number.parse::<usize>().unwrap() + 1
        }
        Err(_) => 0,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_hosts_live_their_peoples_days_through_a_kill_and_a_partition_as_one_machine_would() {
    let people = people();
    let plans = plans(people, FULL_DAYS);
    let reference = single_machine("fleet-day-single", &plans).await;
    let expected: usize = reference.iter().map(Vec::len).sum();
    eprintln!("single-machine runs: {people} people, {expected} decisions");

    let (server, dir, client, fleet) = fleet_of("fleet-day", &plans).await;
    let proxy = Proxy::start(server.port()).await;
    let proxied = format!("nats://127.0.0.1:{}", proxy.port);
    let mut hosts = [
        start_host("ha", &server.url, &dir),
        start_host("hb", &proxied, &dir),
        start_host("hc", &server.url, &dir),
    ];

    // Everyone held before the day starts.
    let started = Instant::now();
    loop {
        let mut free = 0;
        for plan in &plans {
            if fleet.lease(&plan.person).await.unwrap().is_none() {
                free += 1;
            }
        }
        if free == 0 {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "{free} people never held"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    eprintln!("all {people} people held after {:?}", started.elapsed());

    // The day: round r sends every person their r-th signal (the weekend's people run out
    // first). Host ha dies halfway through; host hb is cut off from two thirds of the way
    // for two leases.
    let rounds = plans.iter().map(|p| p.signals.len()).max().unwrap();
    let mut killed_at = None;
    let mut cut_at = None;
    for round in 0..rounds {
        for plan in &plans {
            if let Some(signal) = plan.signals.get(round) {
                fleet
                    .send(&plan.person, Some(signal.as_bytes()))
                    .await
                    .unwrap();
            }
        }
        if round == rounds / 2 {
            // Halfway (the whole-days lives are in their second day): wait until each one's
            // journal was compacted below its first day, so a takeover then opens a life
            // lived elsewhere and reads a journal that no longer starts at its first record,
            // however loaded the machine is; then ha dies.
            let started = Instant::now();
            for plan in &plans[..FULL_DAYS] {
                while fleet.head(&plan.person).await.unwrap().is_none()
                    || !purged(&client, &plan.person).await
                {
                    assert!(
                        started.elapsed() < Duration::from_secs(120),
                        "a whole-days life had no compacted journal"
                    );
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
            hosts[0].child.kill().unwrap();
            hosts[0].child.wait().unwrap();
            killed_at = Some(time::OffsetDateTime::now_utc());
            eprintln!("ha killed (SIGKILL) after round {round}");
        }
        if round == 2 * rounds / 3 {
            proxy.cut.send_replace(true);
            cut_at = Some(time::OffsetDateTime::now_utc());
            eprintln!("hb cut off after round {round}");
            tokio::time::sleep(Duration::from_millis(2 * FLEET_LEASE_MS)).await;
            proxy.cut.send_replace(false);
            eprintln!("hb back");
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    for plan in &plans {
        fleet.send(&plan.person, None).await.unwrap();
    }

    // Wait until every decision is delivered, then a lease more for any delivered twice.
    let started = Instant::now();
    loop {
        let mut total = 0;
        let mut short = Vec::new();
        for (plan, traces) in plans.iter().zip(&reference) {
            let count = delivered(&client, &plan.person).await;
            total += count;
            if count < traces.len() {
                short.push((&plan.person, count, traces.len()));
            }
        }
        if total >= expected {
            break;
        }
        if started.elapsed() >= Duration::from_secs(600) {
            // Who is short, who holds them now, and what the hosts last did for them.
            let logs: Vec<Audit> = hosts.iter().flat_map(|h| audit(&h.log)).collect();
            let mut said = format!("{total} of {expected} decisions delivered after 600 s\n");
            for (person, count, of) in short {
                let lease = fleet.lease(person).await;
                said += &format!("{person}: {count} of {of} delivered; lease {lease:?}\n");
                let who = person.to_string();
                let theirs: Vec<&Audit> = logs.iter().filter(|a| a.person == who).collect();
                for a in &theirs[theirs.len().saturating_sub(12)..] {
                    said += &format!(
                        "  {} {} {} epoch {} seq {} {}\n",
                        a.at, a.host, a.event, a.epoch, a.seq, a.why
                    );
                }
            }
            panic!("{said}");
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    eprintln!(
        "all decisions delivered {:?} after the last signal",
        started.elapsed()
    );
    tokio::time::sleep(Duration::from_millis(FLEET_LEASE_MS)).await;

    // Every person's decisions: their single-machine run's, each once, in order, theirs.
    let markers: Vec<String> = plans
        .iter()
        .map(|p| format!("[{}]", p.person.user()))
        .collect();
    for (plan, traces) in plans.iter().zip(&reference) {
        let got = messages(&client, DECISIONS_STREAM, decisions_subject(&plan.person)).await;
        assert_eq!(
            got.len(),
            traces.len(),
            "{}: decisions delivered",
            plan.person
        );
        for (number, ((_, headers, decision), trace)) in got.iter().zip(traces).enumerate() {
            assert_eq!(
                headers[DECISION_HEADER],
                number.to_string(),
                "{}",
                plan.person
            );
            assert_eq!(headers[PERSON_HEADER], plan.person.to_string());
            assert_eq!(
                &decision["trace"], trace,
                "{}: decision {number}",
                plan.person
            );
            let text = decision.to_string();
            let own = format!("[{}]", plan.person.user());
            for marker in markers.iter().filter(|m| **m != own) {
                assert!(
                    !text.contains(marker.as_str()),
                    "{}'s decision names {marker}",
                    plan.person
                );
            }
        }
        // Day by day: the life's people lived its three days, each its own run, the same days
        // as on one machine (the traces above are equal, each naming its day's run).
        let delivered_runs = runs_of(got.iter().map(|(_, _, d)| &d["trace"]));
        assert_eq!(delivered_runs, runs_of(traces), "{}: days", plan.person);
        if plan.setup.get("signals").is_none() {
            assert_eq!(delivered_runs.len(), 3, "{}: the life's days", plan.person);
        }
    }

    // The hosts' own logs against the journals: each record written by one host, the hosts
    // following one another (epochs only grow along a journal), and no two hosts writing for
    // one person at once.
    let killed_at = killed_at.unwrap();
    for host in &mut hosts[1..] {
        let _ = Command::new("kill")
            .args(["-TERM", &host.child.id().to_string()])
            .status();
        let _ = host.child.wait();
    }
    let logs: Vec<Audit> = hosts.iter().flat_map(|h| audit(&h.log)).collect();
    let mut takeovers_ms = Vec::new();
    let cut_at = cut_at.unwrap();
    let mut moved_off_hb = 0;
    for plan in &plans {
        let who = plan.person.to_string();
        let journal = messages(&client, JOURNAL_STREAM, journal_subject(&plan.person)).await;
        let written: BTreeMap<u64, (String, u64)> = logs
            .iter()
            .filter(|a| a.person == who && (a.event == "appended" || a.event == "hold"))
            .map(|a| (a.seq, (a.host.clone(), a.epoch)))
            .collect();
        let logged = logs
            .iter()
            .filter(|a| a.person == who && (a.event == "appended" || a.event == "hold"))
            .count();
        assert_eq!(
            logged,
            written.len(),
            "{who}: two hosts logged the same journal record"
        );
        let mut epoch_of = BTreeMap::new();
        let mut last_epoch = 0;
        for (seq, headers, _) in &journal {
            let epoch: u64 = headers[EPOCH_HEADER].parse().unwrap();
            assert!(
                epoch >= last_epoch,
                "{who}: record {seq} of epoch {epoch} after {last_epoch}"
            );
            last_epoch = epoch;
            // A record whose writer died (ha), lost the server (hb), or gave up waiting for
            // the server's answer (a step past FLEET_STEP_TIMEOUT_MS on a loaded machine) is in
            // the journal but not in the writer's log: it must then be of an epoch that host
            // held (its takeover record names it, or its log holds the epoch), and a host that
            // lived on must have stopped that hold for a failed step.
            let (seq, record) = (*seq, &journal_record(&journal, *seq));
            match written.get(&seq) {
                Some((host, logged_epoch)) => {
                    assert_eq!(*logged_epoch, epoch, "{who}: record {seq}");
                    let first = epoch_of.entry(epoch).or_insert_with(|| host.clone());
                    assert_eq!(first, host, "{who}: epoch {epoch} written by two hosts");
                }
                None => {
                    let holder = match record["record"].as_str() {
                        Some("takeover") => record["host"].as_str().unwrap().to_owned(),
                        _ => logs
                            .iter()
                            .find(|a| a.person == who && a.event == "hold" && a.epoch == epoch)
                            .map(|a| a.host.clone())
                            .unwrap_or_default(),
                    };
                    let gave_up = logs.iter().any(|a| {
                        a.person == who
                            && a.host == holder
                            && a.event == "stop"
                            && a.epoch == epoch
                            && a.why.starts_with("Failed(")
                    });
                    assert!(
                        holder == "ha" || holder == "hb" || gave_up,
                        "{who}: record {seq} (epoch {epoch}) is in no host's log, and its holder `{holder}` was neither killed nor cut off, nor stopped that hold for a failed step"
                    );
                }
            }
        }
        // Records before the first one kept were purged below a checkpoint.
        let first_kept = journal.first().map_or(0, |(seq, _, _)| *seq);
        for seq in written.keys().filter(|seq| **seq >= first_kept) {
            assert!(
                journal.iter().any(|(s, _, _)| s == seq),
                "{who}: logged record {seq} is not in the journal"
            );
        }
        if plan.setup.get("signals").is_none() {
            assert!(
                purged(&client, &plan.person).await,
                "{who}: a life's journal is whole: nothing was purged"
            );
            eprintln!(
                "{who}: the journal keeps {} records; its hosts logged {} written",
                journal.len(),
                written.len()
            );
        }
        // Each host's time writing for the person, from its hold to its last write.
        let mut spans: Vec<(time::OffsetDateTime, time::OffsetDateTime, String, u64)> = Vec::new();
        for hold in logs.iter().filter(|a| a.person == who && a.event == "hold") {
            let last = logs
                .iter()
                .filter(|a| {
                    a.person == who
                        && a.host == hold.host
                        && a.epoch == hold.epoch
                        && a.event == "appended"
                })
                .map(|a| a.at)
                .max()
                .unwrap_or(hold.at);
            spans.push((hold.at, last, hold.host.clone(), hold.epoch));
        }
        spans.sort_by_key(|s| s.0);
        for pair in spans.windows(2) {
            assert!(
                pair[0].1 < pair[1].0,
                "{who}: {} (epoch {}) wrote until {} but {} (epoch {}) held them from {}",
                pair[0].2,
                pair[0].3,
                pair[0].1,
                pair[1].2,
                pair[1].3,
                pair[1].0
            );
        }
        // Held by hb when it was cut off, and by another host after.
        let hb_at_cut = spans
            .iter()
            .rev()
            .find(|s| s.0 < cut_at)
            .is_some_and(|s| s.2 == "hb");
        if hb_at_cut && spans.iter().any(|s| s.0 > cut_at && s.2 != "hb") {
            moved_off_hb += 1;
        }
        // Taken from the killed host: how long after its death.
        let was_ha = spans
            .iter()
            .rev()
            .find(|s| s.0 < killed_at)
            .is_some_and(|s| s.2 == "ha");
        if let Some(next) = spans.iter().find(|s| was_ha && s.0 > killed_at) {
            takeovers_ms.push((next.0 - killed_at).whole_milliseconds() as u64);
        }
    }
    assert!(moved_off_hb > 0, "the partition moved nobody off hb");
    eprintln!("{moved_off_hb} people moved off hb while it was cut off");
    takeovers_ms.sort_unstable();
    assert!(!takeovers_ms.is_empty(), "the killed host held nobody");
    let p = |q: f64| takeovers_ms[((takeovers_ms.len() - 1) as f64 * q).round() as usize];
    eprintln!(
        "takeover after SIGKILL: {} people, p50 {} ms, p99 {} ms, max {} ms (lease {FLEET_LEASE_MS} ms)",
        takeovers_ms.len(),
        p(0.5),
        p(0.99),
        takeovers_ms.last().unwrap()
    );
    let holds = logs.iter().filter(|a| a.event == "hold").count();
    let first: BTreeMap<&str, usize> = ["ha", "hb", "hc"]
        .into_iter()
        .map(|host| {
            let held = plans
                .iter()
                .filter(|plan| {
                    let who = plan.person.to_string();
                    let first = logs
                        .iter()
                        .filter(|a| a.person == who && a.event == "hold")
                        .min_by_key(|a| a.at);
                    first.is_some_and(|a| a.host == host)
                })
                .count();
            (host, held)
        })
        .collect();
    eprintln!("holds over the run: {holds} for {people} people; first held by {first:?}");
    let count = |event: &str| logs.iter().filter(|a| a.event == event).count();
    let resumed = logs.iter().filter(|a| a.event == "life" && a.inbox > 1);
    eprintln!(
        "heads moved: {}; takeovers that opened a life lived elsewhere: {}",
        count("head"),
        resumed.clone().count()
    );
    assert!(
        resumed.clone().count() > 0,
        "no takeover opened a life lived before"
    );
    // A takeover after its person's journal was purged lived from the life alone.
    let after_purge = resumed
        .filter(|a| {
            logs.iter().any(|p| {
                p.event == "purged" && p.person == a.person && p.at < a.at && p.records > 0
            })
        })
        .count();
    eprintln!(
        "journal purges: {}; takeovers resumed after a purge: {after_purge}",
        logs.iter()
            .filter(|a| a.event == "purged" && a.records > 0)
            .count()
    );
    assert!(
        after_purge > 0,
        "no takeover opened a life after its journal was purged"
    );
}

/// Whether `person`'s journal was purged: its first record is not its first holder's
/// takeover (every journal starts with one; a purge keeps the record at a checkpoint's fence,
/// a signal).
async fn purged(client: &async_nats::Client, person: &Person) -> bool {
    let journal = messages(client, JOURNAL_STREAM, journal_subject(person)).await;
    journal
        .first()
        .is_some_and(|(_, _, payload)| payload["record"] != "takeover")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbage_and_a_message_naming_another_person_are_refused_quarantined_and_passed_over() {
    let plan = plans(PEOPLE, FULL_DAYS).pop().unwrap();
    let reference = single_machine("fleet-garbage-single", std::slice::from_ref(&plan))
        .await
        .remove(0);
    let (server, dir, client, fleet) =
        fleet_of("fleet-refusals", std::slice::from_ref(&plan)).await;
    let mut host = start_host("solo", &server.url, &dir);
    // Not JSON; then a signal on this person's subject that says it is another's.
    fleet
        .send(&plan.person, Some(b"\xff{not json"))
        .await
        .unwrap();
    let mut headers = async_nats::HeaderMap::new();
    headers.insert(PERSON_HEADER, "t0/someone-else");
    let context = async_nats::jetstream::new(client.clone());
    let subject = aura_fleet::store::signals_subject(&plan.person);
    let ack = context
        .publish_with_headers(subject, headers, plan.signals[0].clone().into())
        .await
        .unwrap();
    ack.await.unwrap();
    let mut last_signal = 0;
    for signal in &plan.signals {
        last_signal = fleet
            .send(&plan.person, Some(signal.as_bytes()))
            .await
            .unwrap();
    }
    fleet.send(&plan.person, None).await.unwrap();
    let started = Instant::now();
    while delivered(&client, &plan.person).await < reference.len() {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "decisions never came"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let got = messages(&client, DECISIONS_STREAM, decisions_subject(&plan.person)).await;
    let traces: Vec<&Value> = got.iter().map(|(_, _, d)| &d["trace"]).collect();
    assert_eq!(traces, reference.iter().collect::<Vec<_>>());
    // Both passed over (the life's inbox position moved past them with the signals: the next
    // holder reads on after them), both quarantined; the host's own log says what it refused.
    let logged = audit(&host.log);
    let refused: Vec<&str> = logged
        .iter()
        .filter(|a| a.event == "refused")
        .map(|a| a.kind.as_str())
        .collect();
    assert_eq!(refused, ["malformed_json", "wrong_person"]);
    // The working copy of the person's life: one dir per hold (one hold here).
    let holds = dir
        .join("solo/people")
        .join(plan.person.tenant())
        .join(plan.person.user());
    let person_dir = std::fs::read_dir(&holds)
        .unwrap()
        .filter_map(Result::ok)
        .find(|entry| entry.file_name().to_string_lossy().starts_with("hold-"))
        .expect("the hold's working copy")
        .path();
    let quarantine = crate::support::quarantine_lines(&person_dir);
    let kinds: Vec<&str> = quarantine
        .iter()
        .filter_map(|record| record["kind"].as_str())
        .collect();
    assert!(kinds.contains(&"malformed_json"), "{quarantine:?}");
    assert!(kinds.contains(&"wrong_person"), "{quarantine:?}");
    // Each record names whose assistant refused it.
    for record in &quarantine {
        assert_eq!(record["tenant_id"], plan.person.tenant(), "{record}");
        assert_eq!(record["user_id"], plan.person.user(), "{record}");
    }
    host.child.kill().unwrap();
    host.child.wait().unwrap();
    // The life, opened from the fleet's home once the killed host's hold ran out, stands at
    // the last signal (the end of the inputs is journaled, not a position).
    use aura_day::store::Home;
    let home = aura_fleet::life::FleetHome::new(
        fleet.store(),
        &aura_fleet::assistant::life_name(&plan.person),
    )
    .unwrap()
    .waiting(aura_contract::limits::FLEET_LIFE_OPEN_WAIT_MS);
    let life = home.open(None).await.unwrap();
    let positions = life.positions().await.unwrap();
    assert_eq!(
        positions.get(aura_fleet::assistant::INBOX_SOURCE),
        Some(&last_signal.to_string())
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_people_a_full_host_owns_are_taken_by_one_with_room() {
    let plans: Vec<Plan> = plans(PEOPLE, FULL_DAYS).into_iter().rev().take(4).collect();
    let (server, dir, _client, fleet) = fleet_of("fleet-orphans", &plans).await;
    // "full" takes nobody (capacity 0) yet owns some of them among the two hosts present.
    let hosts = ["full".to_owned(), "roomy".to_owned()];
    let owned_by_full = plans
        .iter()
        .filter(|p| aura_fleet::placement::owner(&hosts, &p.person) == Some("full"))
        .count();
    assert!(owned_by_full > 0, "pick people the full host owns");
    let mut full = start_host_with("full", &server.url, &dir, &["--capacity", "0"]);
    let mut roomy = start_host("roomy", &server.url, &dir);
    let started = Instant::now();
    for plan in &plans {
        while fleet.lease(&plan.person).await.unwrap().is_none() {
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "{} never held",
                plan.person
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        assert_eq!(fleet.lease(&plan.person).await.unwrap().unwrap().0, "roomy");
    }
    eprintln!(
        "{owned_by_full} people the full host owns held by the other after {:?}",
        started.elapsed()
    );
    for host in [&mut full, &mut roomy] {
        host.child.kill().unwrap();
        host.child.wait().unwrap();
    }
}

/// A person whose journal an earlier aura's fleet wrote (each signal journaled as a record, the
/// state in checkpoint objects) is not lived from half their state: the host lets them go and
/// its log says why, and nothing is decided for them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_journal_an_earlier_fleet_wrote_is_let_go_with_its_reason() {
    let plan = plans(PEOPLE, FULL_DAYS).pop().unwrap();
    let (server, dir, client, fleet) = fleet_of("fleet-earlier", std::slice::from_ref(&plan)).await;
    // What an earlier aura's holder wrote: its takeover, then the first signal it took.
    let mut claim = fleet.claim(&plan.person, "earlier").await.unwrap().unwrap();
    assert!(
        fleet
            .take_over(&plan.person, "earlier", &mut claim)
            .await
            .unwrap()
    );
    let signal: Value = serde_json::from_str(&plan.signals[0]).unwrap();
    let record = aura_fleet::protocol::Record::Signal {
        id: "1".to_owned(),
        signal,
    };
    let mut holding = claim.holding.clone();
    fleet
        .append(&plan.person, &mut holding, &record)
        .await
        .unwrap();
    fleet.release(&plan.person, &holding).await.unwrap();
    let mut host = start_host("solo", &server.url, &dir);
    let who = plan.person.to_string();
    let started = Instant::now();
    let why = loop {
        let stopped = audit(&host.log)
            .into_iter()
            .find(|a| a.event == "stop" && a.person == who && a.host == "solo");
        if let Some(stop) = stopped {
            break stop.why;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the host never let the person go"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert!(
        why.contains("inbox message 1 as a signal") && why.contains("not migrated"),
        "{why}"
    );
    assert_eq!(delivered(&client, &plan.person).await, 0);
    host.child.kill().unwrap();
    host.child.wait().unwrap();
}
