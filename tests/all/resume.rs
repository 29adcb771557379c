//! A run that stops, for any reason, loses nothing and repeats nothing: the real `aura`
//! binary killed (SIGKILL) at 20 points of the day, before, between and after its writes and
//! fsyncs, then started again, ends with traces.jsonl byte-identical to a run never
//! interrupted and every quarantine record exactly once; a full disk, an I/O error, a short
//! write or a failed fsync stops the run with an error naming the file, leaves no torn record,
//! and the next start resumes; a data dir holding another run is refused.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

use aura_day::orchestrator::{self, RunError, RunSummary, Start};
use aura_day::scenario::Scenario;
use aura_host::Host;
use aura_host::journal::{
    JournalError, QUARANTINE_PATH, StorageFault, StorageFaults, StoragePoint, StorageStep,
    TRACES_PATH,
};

use crate::support::{plugins_dir, temp_dir};

const CHECKPOINT: &str = aura_day::checkpoint::CHECKPOINT_PATH;

fn day() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/day.json")
}

/// `aura run scenarios/day.json --seed 7` on `data` over `plugins`, as a user starts it.
fn aura_run(data: &Path, plugins: &Path, extra: &[&str]) -> Command {
    let mut command = crate::support::aura_command_over(data, plugins);
    command
        .args(["run", day().to_str().unwrap(), "--seed", "7", "--json"])
        .args(extra)
        .env_remove("AURA_STOP_AT")
        .stdin(Stdio::null())
        // Not read: a full pipe would block the child before it reaches its stop.
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    command
}

/// Each line of a log, counted (the quarantine log's order within a tick follows the agents'
/// concurrent ticks, so records are compared as a multiset).
fn line_counts(path: &Path) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    for line in std::fs::read_to_string(path).unwrap_or_default().lines() {
        *counts.entry(line.to_owned()).or_insert(0) += 1;
    }
    counts
}

/// The day run once, uninterrupted, by the binary: the traces' bytes, the quarantine records,
/// and how many writes each file saw.
struct Reference {
    traces: String,
    quarantine: BTreeMap<String, usize>,
    checkpoints: u64,
}

fn reference(plugins: &Path) -> Reference {
    let data = temp_dir("resume-reference");
    let output = aura_run(&data, plugins, &[]).output().unwrap();
    assert!(output.status.success(), "{output:?}");
    let traces = std::fs::read_to_string(data.join(TRACES_PATH)).unwrap();
    let scenario: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(day()).unwrap()).unwrap();
    // 06:30 to 23:30 every 15 minutes: 17 h × 4 + 1 = 69 ticks; a checkpoint before the
    // first and after each.
    assert_eq!(scenario["tick_minutes"], 15);
    let checkpoints = 69 + 1;
    let checkpoint: serde_json::Value =
        serde_json::from_slice(&std::fs::read(data.join(CHECKPOINT)).unwrap()).unwrap();
    assert_eq!(checkpoint["finished"], true);
    assert_eq!(checkpoint["next_tick"], 69);
    assert_eq!(checkpoint["traces"]["bytes"], traces.len() as u64);
    Reference {
        quarantine: line_counts(&data.join(QUARANTINE_PATH)),
        traces,
        checkpoints,
    }
}

/// Kills a real `aura run` at 20 points spread over the day and starts it again each time.
#[test]
fn a_run_killed_at_any_of_20_points_resumes_to_the_same_bytes() {
    let plugins = crate::support::day_with_a_hostile_neighbour("resume-kill");
    let reference = reference(&plugins);
    let traces = reference.traces.lines().count() as u64;
    let quarantined: u64 = reference.quarantine.values().sum::<usize>() as u64;
    assert!(traces > 50 && quarantined >= 1, "{traces} {quarantined}");
    // Every step of every kind of write: before a trace is written, written and not synced,
    // synced and not reported, reported; a checkpoint's temporary file before it is written,
    // written and not synced, renamed and the dir not synced; a quarantine record written and
    // not synced.
    let kinds: [(&str, &str, u64); 8] = [
        (TRACES_PATH, "write", traces),
        (TRACES_PATH, "sync", traces),
        (TRACES_PATH, "synced", traces),
        (TRACES_PATH, "done", traces),
        (CHECKPOINT, "write", reference.checkpoints),
        (CHECKPOINT, "sync", reference.checkpoints),
        (CHECKPOINT, "synced", reference.checkpoints),
        (QUARANTINE_PATH, "sync", quarantined),
    ];
    let mut points = Vec::new();
    for i in 0..20u64 {
        let (path, step, writes) = kinds[(i % 8) as usize];
        // Spread over the day: the (2i+1)/40th of the file's writes.
        points.push(format!("{path}:{step}:{}", (2 * i + 1) * writes / 40));
    }
    let mut resumed_from = Vec::new();
    for point in &points {
        let data = temp_dir(&format!("resume-{}", point.replace(['/', ':'], "-")));
        let mut child = aura_run(&data, &plugins, &[])
            .env("AURA_STOP_AT", point)
            .spawn()
            .unwrap();
        let stderr = BufReader::new(child.stderr.take().unwrap());
        let mut stopped = false;
        for line in stderr.lines() {
            if line.unwrap() == format!("aura: stopped at {point}") {
                stopped = true;
                break;
            }
        }
        // SIGKILL: no destructor, no flush, no chance to finish anything.
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(stopped, "the run never reached {point}");
        // Where the killed run's last checkpoint says it stood.
        let next_tick = std::fs::read(data.join(CHECKPOINT))
            .ok()
            .map(|bytes| serde_json::from_slice::<serde_json::Value>(&bytes).unwrap())
            .map_or(0, |checkpoint| checkpoint["next_tick"].as_u64().unwrap());

        let output = aura_run(&data, &plugins, &[]).output().unwrap();
        let said = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "after {point}: {said}");
        let resumed = std::fs::read_to_string(data.join(TRACES_PATH)).unwrap();
        assert!(
            resumed == reference.traces,
            "after {point} the traces differ from the uninterrupted run's at byte {}",
            resumed
                .bytes()
                .zip(reference.traces.bytes())
                .position(|(a, b)| a != b)
                .unwrap_or(resumed.len().min(reference.traces.len()))
        );
        assert_eq!(
            line_counts(&data.join(QUARANTINE_PATH)),
            reference.quarantine,
            "after {point}: every quarantine record exactly once"
        );
        let checkpoint: serde_json::Value =
            serde_json::from_slice(&std::fs::read(data.join(CHECKPOINT)).unwrap()).unwrap();
        assert_eq!(checkpoint["finished"], true, "after {point}");
        // Stopped after a whole tick's checkpoint, it went on from there, not from the start.
        assert_eq!(
            said.contains(&format!(" at tick {} of 69", next_tick + 1)),
            next_tick > 0,
            "after {point}: {said}"
        );
        resumed_from.push(next_tick);
    }
    // The points are spread over the day: from its first tick to its last.
    assert!(resumed_from.iter().any(|&t| t < 5), "{resumed_from:?}");
    assert!(resumed_from.iter().any(|&t| t > 60), "{resumed_from:?}");
}

/// Fails one chosen step of one file, once.
#[derive(Debug)]
struct FailOnce {
    path: &'static str,
    step: StorageStep,
    ordinal: u64,
    fault: Mutex<Option<StorageFault>>,
}

impl StorageFaults for FailOnce {
    fn at(&self, point: StoragePoint<'_>) -> Option<StorageFault> {
        match point.path == self.path && point.step == self.step && point.ordinal == self.ordinal {
            true => self.fault.lock().unwrap().take(),
            false => None,
        }
    }
}

/// A host over the built plugins on `data`, as the runs here use it (seed 7, the built-in
/// fuel rate), its journal's writes open to `faults`.
async fn open_host(data: &Path, plugins: &Path, faults: Option<Arc<dyn StorageFaults>>) -> Host {
    let mut config = crate::support::config(plugins, data);
    config.guest_seed = 7;
    config.fuel_per_ms = Some(aura_contract::limits::FUEL_PER_MS_DEFAULT);
    config.storage_faults = faults;
    Host::open(&config).await.unwrap()
}

async fn run_in(
    data: &Path,
    plugins: &Path,
    faults: Option<Arc<dyn StorageFaults>>,
    start: Start,
) -> Result<RunSummary, RunError> {
    let host = open_host(data, plugins, faults).await;
    let scenario = Scenario::load(&day(), host.crossing().schemas()).unwrap();
    orchestrator::run(&host, &scenario, 7, start, |_| {}).await
}

fn enospc() -> std::io::Error {
    std::io::Error::from_raw_os_error(28)
}

fn eio() -> std::io::Error {
    std::io::Error::from_raw_os_error(5)
}

/// Every storage failure stops the run with the file named, leaves only whole records, and
/// the next start (no fault) resumes to the uninterrupted bytes.
#[tokio::test]
async fn storage_faults_stop_the_run_cleanly_and_the_next_start_resumes() {
    let plugins = crate::support::day_with_a_hostile_neighbour("resume-faults");
    let data = temp_dir("faults-reference");
    run_in(&data, &plugins, None, Start::Fresh).await.unwrap();
    let expected = std::fs::read_to_string(data.join(TRACES_PATH)).unwrap();
    let quarantine = line_counts(&data.join(QUARANTINE_PATH));
    let lines = expected.lines().count() as u64;
    type Case = (&'static str, &'static str, StorageStep, u64, StorageFault);
    let cases: Vec<Case> = vec![
        (
            "enospc-trace",
            TRACES_PATH,
            StorageStep::Write,
            lines / 5,
            StorageFault::Fail(enospc()),
        ),
        (
            "eio-trace",
            TRACES_PATH,
            StorageStep::Write,
            lines / 3,
            StorageFault::Fail(eio()),
        ),
        (
            "short-trace",
            TRACES_PATH,
            StorageStep::Write,
            lines / 2,
            StorageFault::Short {
                bytes: 40,
                error: enospc(),
            },
        ),
        (
            "fsync-trace",
            TRACES_PATH,
            StorageStep::Sync,
            2 * lines / 3,
            StorageFault::Fail(eio()),
        ),
        (
            "eio-quarantine",
            QUARANTINE_PATH,
            StorageStep::Write,
            0,
            StorageFault::Fail(eio()),
        ),
        (
            "fsync-quarantine",
            QUARANTINE_PATH,
            StorageStep::Sync,
            0,
            StorageFault::Fail(eio()),
        ),
        (
            "enospc-checkpoint",
            CHECKPOINT,
            StorageStep::Write,
            30,
            StorageFault::Fail(enospc()),
        ),
        (
            "fsync-checkpoint",
            CHECKPOINT,
            StorageStep::Sync,
            50,
            StorageFault::Fail(eio()),
        ),
    ];
    for (name, path, step, ordinal, fault) in cases {
        let data = temp_dir(&format!("faults-{name}"));
        let faults = Arc::new(FailOnce {
            path,
            step,
            ordinal,
            fault: Mutex::new(Some(fault)),
        });
        let error = run_in(&data, &plugins, Some(faults), Start::Resume)
            .await
            .expect_err(name);
        // As a person reads it: the error and its causes, each once.
        let said = aura_contract::caused::caused(&error);
        assert!(said.contains(path), "{name}: {said}");
        let typed = match &error {
            RunError::Record(aura_host::TraceRecordError::Journal(e)) | RunError::Journal(e) => {
                Some(e)
            }
            RunError::Checkpoint(aura_day::checkpoint::CheckpointError::Journal(e)) => Some(e),
            _ => None,
        };
        match (step, typed) {
            (StorageStep::Write, Some(JournalError::Append { .. }))
            | (StorageStep::Sync, Some(JournalError::Sync { .. }))
            | (_, Some(JournalError::Stopped { .. })) => {}
            other => panic!("{name}: {other:?}: {said}"),
        }
        // Only whole records, and only ones the uninterrupted run wrote, in its order.
        let left = std::fs::read_to_string(data.join(TRACES_PATH)).unwrap();
        assert!(
            left.is_empty() || left.ends_with('\n'),
            "{name}: a torn record"
        );
        assert!(
            expected.starts_with(&left),
            "{name}: a record not the reference's"
        );
        let resumed = run_in(&data, &plugins, None, Start::Resume).await.unwrap();
        assert_eq!(
            std::fs::read_to_string(data.join(TRACES_PATH)).unwrap(),
            expected,
            "{name}: resumed at {:?}",
            resumed.resumed_at_tick
        );
        assert_eq!(
            line_counts(&data.join(QUARANTINE_PATH)),
            quarantine,
            "{name}"
        );
    }
}

/// A data dir holding another run is refused, with what differs; `--fresh` sets it aside;
/// the same finished run again is set aside and run again to the same bytes.
#[test]
fn another_run_is_refused_and_fresh_sets_the_old_one_aside() {
    let data = temp_dir("resume-another");
    let plugins = plugins_dir();
    let first = aura_run(&data, &plugins, &[]).output().unwrap();
    assert!(first.status.success(), "{first:?}");
    let traces = std::fs::read_to_string(data.join(TRACES_PATH)).unwrap();

    // The same finished run again: set aside, run again, the same bytes.
    let again = aura_run(&data, &plugins, &[]).output().unwrap();
    assert!(again.status.success(), "{again:?}");
    let said = String::from_utf8_lossy(&again.stderr);
    assert!(said.contains("set aside as traces.1.jsonl"), "{said}");
    assert_eq!(
        std::fs::read_to_string(data.join("traces.1.jsonl")).unwrap(),
        traces
    );
    assert_eq!(
        std::fs::read_to_string(data.join(TRACES_PATH)).unwrap(),
        traces
    );

    // Another seed: refused, nothing touched.
    let other = Command::new(env!("CARGO_BIN_EXE_aura"))
        .arg("--data-dir")
        .arg(&data)
        .arg("--plugins-dir")
        .arg(plugins_dir())
        .args(["run", day().to_str().unwrap(), "--seed", "8"])
        .output()
        .unwrap();
    assert!(!other.status.success());
    let said = String::from_utf8_lossy(&other.stderr);
    assert!(
        said.contains("holds run run_") && said.contains("seed 7 where 8 was asked"),
        "{said}"
    );
    assert!(said.contains("--fresh"), "{said}");
    assert_eq!(
        std::fs::read_to_string(data.join(TRACES_PATH)).unwrap(),
        traces
    );

    // Traces with no checkpoint (an older aura's): refused, then set aside by --fresh.
    std::fs::remove_file(data.join(CHECKPOINT)).unwrap();
    let unknown = aura_run(&data, &plugins, &[]).output().unwrap();
    assert!(!unknown.status.success());
    let said = String::from_utf8_lossy(&unknown.stderr);
    assert!(said.contains("no run.json"), "{said}");
    let fresh = aura_run(&data, &plugins, &["--fresh"]).output().unwrap();
    assert!(fresh.status.success(), "{fresh:?}");
    assert_eq!(
        std::fs::read_to_string(data.join("traces.2.jsonl")).unwrap(),
        traces
    );
    assert_eq!(
        std::fs::read_to_string(data.join(TRACES_PATH)).unwrap(),
        traces
    );
}

/// Each trace names its run, and the id is the identity's digest: the same for every
/// decision of a run, another for another seed.
#[tokio::test]
async fn every_trace_names_its_run() {
    let data = temp_dir("resume-run-id");
    let summary = run_in(&data, &plugins_dir(), None, Start::Fresh)
        .await
        .unwrap();
    let text = std::fs::read_to_string(data.join(TRACES_PATH)).unwrap();
    for line in text.lines() {
        let trace: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(trace["run"], summary.run.as_str());
    }
    let checkpoint: aura_day::checkpoint::Checkpoint =
        serde_json::from_slice(&std::fs::read(data.join(CHECKPOINT)).unwrap()).unwrap();
    assert_eq!(checkpoint.identity.id(), summary.run);
    assert_eq!(checkpoint.identity.seed, 7);
    let mut other = checkpoint.identity.clone();
    other.seed = 8;
    assert_ne!(other.id(), summary.run);
}

/// A run.json that is not what a run wrote (edited, forged with a matching id) is refused
/// with a typed error, never a panic, and nothing is run on it.
#[tokio::test]
async fn a_forged_checkpoint_is_refused_plainly() {
    let data = temp_dir("resume-forged");
    let host = open_host(&data, &plugins_dir(), None).await;
    let scenario = Scenario::load(
        &crate::orchestrator::scenario_path("short"),
        host.crossing().schemas(),
    )
    .unwrap();
    orchestrator::run(&host, &scenario, 7, Start::Fresh, |_| {})
        .await
        .unwrap();
    let path = data.join(CHECKPOINT);
    let original: aura_day::checkpoint::Checkpoint =
        serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let forge = |edit: &dyn Fn(&mut aura_day::checkpoint::Checkpoint)| {
        let mut forged = original.clone();
        forged.finished = false;
        edit(&mut forged);
        forged.run = forged.identity.id();
        std::fs::write(&path, serde_json::to_vec(&forged).unwrap()).unwrap();
    };
    // A digest that is not hex, with a multi-byte character where a cut would fall.
    forge(&|c| c.identity.setup_sha256 = format!("{}é{}", "a".repeat(11), "b".repeat(51)));
    let error = orchestrator::run(&host, &scenario, 7, Start::Resume, |_| {})
        .await
        .unwrap_err();
    assert!(error.to_string().contains("not sha256 hex"), "{error}");
    // A tick count that is not the scenario's, and counts no run keeps.
    forge(&|c| c.ticks = 1_000);
    let error = orchestrator::run(&host, &scenario, 7, Start::Resume, |_| {})
        .await
        .unwrap_err();
    assert!(error.to_string().contains("the scenario has 3"), "{error}");
    forge(&|c| c.state["summary"]["quarantined"] = serde_json::json!(1u64 << 52));
    let error = orchestrator::run(&host, &scenario, 7, Start::Resume, |_| {})
        .await
        .unwrap_err();
    assert!(
        error.to_string().contains("summary is not the run's"),
        "{error}"
    );
    // --fresh sets the forged file aside and runs.
    orchestrator::run(&host, &scenario, 7, Start::Fresh, |_| {})
        .await
        .unwrap();
}
