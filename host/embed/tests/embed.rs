//! The assistant embedded as an app embeds it: through the Rust API, from a C program
//! compiled against the generated header, and from Python through ctypes. Each leaves the
//! traces `aura run` leaves with the same signals.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use aura_day::orchestrator;
use aura_day::scenario::Scenario;
use aura_embed::{Assistant, AssistantConfig};
use aura_host::{Host, HostConfig};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn short() -> PathBuf {
    root().join("tests/data/scenarios/short.json")
}

fn day() -> PathBuf {
    root().join("scenarios/day.json")
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir()
        .join("aura-tests")
        .join(format!("embed-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The compilation cache the workspace's tests share.
fn cache_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("aura-code-cache")
}

/// The configuration of an assistant over a recorded day, replayed on its grid only (as
/// `aura run` ticks a scenario that names no `tick_on`).
fn config(setup: &Path, data: &Path, seed: u64) -> Value {
    json!({
        "setup": setup, "data_dir": data, "plugins_dir": aura_agents::PLUGINS_DIR,
        "cache_dir": cache_dir(), "clock": "replay", "tick_on": [], "seed": seed,
    })
}

/// A scenario's signals as JSON lines, in the order they happen.
fn signal_lines(scenario: &Path) -> Vec<String> {
    let scenario: Value =
        serde_json::from_str(&std::fs::read_to_string(scenario).unwrap()).unwrap();
    let mut signals: Vec<Value> = scenario["signals"].as_array().unwrap().clone();
    let at = |s: &Value| {
        time::OffsetDateTime::parse(
            s["at"].as_str().unwrap(),
            &time::format_description::well_known::Rfc3339,
        )
        .unwrap()
    };
    signals.sort_by_key(at);
    signals.iter().map(Value::to_string).collect()
}

/// `aura run`'s traces of `scenario` with `seed`, in a data dir of their own.
async fn reference(scenario: &Path, seed: u64, name: &str) -> String {
    let data = temp_dir(&format!("reference-{name}"));
    let mut config = HostConfig::new(aura_agents::PLUGINS_DIR, &data);
    config.cache_dir = Some(cache_dir());
    config.guest_seed = seed;
    let host = Host::open(&config).await.unwrap();
    let scenario = Scenario::load(scenario, host.crossing().schemas()).unwrap();
    orchestrator::run(&host, &scenario, seed, orchestrator::Start::Fresh, |_| {})
        .await
        .unwrap();
    traces(&data)
}

/// Where a data dir's run is: a live session's open day (named by `life.json`), or the data
/// dir itself (an `aura run`'s).
fn day_dir(data: &Path) -> std::path::PathBuf {
    match std::fs::read_to_string(data.join("life.json")) {
        Ok(life) => {
            let life: serde_json::Value = serde_json::from_str(&life).unwrap();
            data.join("days").join(life["open"].as_str().unwrap())
        }
        Err(_) => data.to_path_buf(),
    }
}

fn traces(data: &Path) -> String {
    std::fs::read_to_string(day_dir(data).join(aura_host::journal::TRACES_PATH)).unwrap()
}

fn reference_blocking(scenario: &Path, seed: u64, name: &str) -> String {
    tokio::runtime::Runtime::new()
        .unwrap()
        .block_on(reference(scenario, seed, name))
}

/// The shared library cargo built with this test (target/<profile>/deps/, where `cargo test`
/// leaves it; `cargo build` also copies it to target/<profile>/).
fn library() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let deps = exe.parent().unwrap();
    [deps, deps.parent().unwrap()]
        .iter()
        .map(|dir| dir.join("libaura_embed.so"))
        .find(|library| library.exists())
        .unwrap_or_else(|| panic!("no libaura_embed.so next to {}", exe.display()))
}

#[test]
fn the_rust_api_lives_a_morning_and_answers_its_question_by_id() {
    let data = temp_dir("rust");
    let config: AssistantConfig = serde_json::from_value(config(&short(), &data, 0)).unwrap();
    let decisions: Arc<Mutex<Vec<aura_embed::Delivery>>> = Arc::default();
    let seen = decisions.clone();
    let assistant = Assistant::open(config, move |d| seen.lock().unwrap().push(d.clone())).unwrap();
    let signals = signal_lines(&short());
    // The two signals of 08:40, the same reading again at 08:50 (it changes nothing): the
    // clock passes 08:45, whose tick asks about the invitation.
    for signal in [
        &signals[0],
        &signals[1],
        &signals[0].replace("08:40:00", "08:50:00"),
    ] {
        assistant.push(signal).unwrap();
    }
    let question = (0..600)
        .find_map(|_| {
            let found = decisions
                .lock()
                .unwrap()
                .iter()
                .find_map(|d| d.question.clone());
            if found.is_none() {
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
            found
        })
        .expect("the 08:45 tick asks");
    let refused = assistant.answer("t_0000000000", "yes").unwrap_err();
    assert_eq!(refused.kind, "answer_unplaced");
    let at_0905 = json!({"at": "2026-11-23T09:05:00+01:00", "kind": "answer",
        "data": {"question": question, "reply": "yes"}});
    assistant.push(&at_0905.to_string()).unwrap();
    let summary = assistant.finish().unwrap();
    assert_eq!((summary.asked, summary.confirmed), (1, 1));
    assert_eq!(traces(&data), reference_blocking(&short(), 0, "rust"));
    // Each decision reached the callback once.
    assert_eq!(decisions.lock().unwrap().len(), summary.decisions);
}

/// A recorded day pushed as one batch (NDJSON) and then as the same batch again (a JSON
/// array): one answer each, in order, the second time each acknowledged again with the same
/// `seq` and `at`; a signal that is not one is refused on its own; and the day lived leaves the
/// traces `aura run` leaves, every signal applied once.
#[test]
fn the_rust_api_takes_a_batch_once_however_often_it_is_sent() {
    let data = temp_dir("rust-batch");
    let config: AssistantConfig = serde_json::from_value(config(&day(), &data, 0)).unwrap();
    let assistant = Assistant::open(config, |_| {}).unwrap();
    let signals = signal_lines(&day());
    // Each with an id, so that sending it again is safe.
    let with_ids: Vec<String> = signals
        .iter()
        .enumerate()
        .map(|(i, line)| {
            let mut signal: Value = serde_json::from_str(line).unwrap();
            signal["id"] = json!(format!("s-{i}"));
            signal.to_string()
        })
        .collect();
    let first = assistant.push_batch(&with_ids.join("\n")).unwrap();
    assert_eq!(first.len(), signals.len());
    let array = format!("[{}]", with_ids.join(","));
    let again = assistant.push_batch(&array).unwrap();
    for (seq, (first, again)) in first.iter().zip(&again).enumerate() {
        let (first, again) = (first.as_ref().unwrap(), again.as_ref().unwrap());
        assert_eq!(first.seq, seq);
        assert!(!first.again && again.again);
        assert_eq!((&first.at, first.seq), (&again.at, again.seq));
    }
    let mixed = assistant
        .push_batch("[{\"kind\":\"reading\",\"data\":{\"hrv_ms\":\"x\"}}]")
        .unwrap();
    assert_eq!(mixed[0].as_ref().unwrap_err().kind, "schema_error");
    assert_eq!(
        assistant.push_batch("[1,").unwrap_err().kind,
        "malformed_json"
    );
    let summary = assistant.finish().unwrap();
    assert_eq!(summary.signals, signals.len());
    assert_eq!(traces(&data), reference_blocking(&day(), 0, "rust-batch"));
}

/// With `narrate`, the app gets each narration record through its callback, from the
/// session's start, once it is durable: the weekend replayed with at most two narrations hands
/// over exactly the two records of narrations.jsonl, in order, by the time `finish` returns.
#[test]
fn the_rust_api_hands_each_narration_to_the_app() {
    let weekend = root().join("scenarios/weekend.json");
    let data = temp_dir("narrate");
    let mut config = config(&weekend, &data, 7);
    config["narrate"] = json!(true);
    config["narrations"] = json!(2);
    let config: AssistantConfig = serde_json::from_value(config).unwrap();
    let assistant = Assistant::open(config, |_| {}).unwrap();
    let records: Arc<Mutex<Vec<Value>>> = Arc::default();
    let seen = records.clone();
    assistant
        .on_narration(move |record| seen.lock().unwrap().push(json!(record)))
        .unwrap();
    assert!(
        assistant.on_narration(|_| {}).is_err(),
        "once per assistant"
    );
    for signal in signal_lines(&weekend) {
        assistant.push(&signal).unwrap();
    }
    assistant.finish().unwrap();
    let written: Vec<Value> =
        std::fs::read_to_string(day_dir(&data).join(aura_day::logs::NARRATIONS_PATH))
            .unwrap()
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect();
    assert_eq!(written.len(), 2);
    assert_eq!(*records.lock().unwrap(), written);
}

#[test]
fn the_header_apps_read_is_the_one_the_build_generates() {
    let generated = std::fs::read_to_string(aura_embed::HEADER).unwrap();
    let shipped = std::fs::read_to_string(root().join("host/embed/include/aura.h")).unwrap();
    assert!(
        generated == shipped,
        "host/embed/include/aura.h is stale: copy {} over it",
        aura_embed::HEADER
    );
}

#[test]
fn a_c_program_built_against_the_header_lives_a_morning() {
    let work = temp_dir("c");
    let program = work.join("short");
    let library = library();
    let built = Command::new("cc")
        .arg(root().join("host/embed/tests/short.c"))
        .arg("-I")
        .arg(root().join("host/embed/include"))
        .arg("-L")
        .arg(library.parent().unwrap())
        .args(["-laura_embed", "-lpthread", "-o"])
        .arg(&program)
        .output()
        .expect("cc runs (the C compiler Rust links with)");
    assert!(
        built.status.success(),
        "{}",
        String::from_utf8_lossy(&built.stderr)
    );
    let data = work.join("data");
    let signals = signal_lines(&short());
    let output = Command::new(&program)
        .arg(config(&short(), &data, 0).to_string())
        .arg(&signals[0])
        .arg(&signals[1])
        .arg(signals[0].replace("08:40:00", "08:50:00"))
        .arg("2026-11-23T09:05:00+01:00")
        .env("LD_LIBRARY_PATH", library.parent().unwrap())
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{said}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    // The refusal came back as recovery.v1, the acknowledgements in order, the unknown
    // question refused, and the day closed with its summary.
    assert!(
        said.contains(r#"push 1 {"refused":{"kind":"malformed_json""#),
        "{said}"
    );
    assert!(said.contains(r#""seq":2"#), "{said}");
    assert!(said.contains("answer_unplaced"), "{said}");
    assert!(said.contains("close 0 {\"summary\":"), "{said}");
    assert_eq!(traces(&data), reference_blocking(&short(), 0, "c"));
}

#[test]
fn python_through_ctypes_lives_the_day_as_aura_run_does() {
    let work = temp_dir("python");
    let data = work.join("data");
    let signals = work.join("signals.jsonl");
    std::fs::write(&signals, signal_lines(&day()).join("\n") + "\n").unwrap();
    let output = Command::new("python3")
        .arg(root().join("host/embed/tests/day.py"))
        .arg(library())
        .arg(config(&day(), &data, 7).to_string())
        .arg(&signals)
        .output()
        .expect("python3 runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let said: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(
        (said["acks"].as_u64(), said["refused"].as_u64()),
        (Some(215), Some(0))
    );
    assert_eq!(said["closed"], 0);
    assert_eq!(
        said["moved"],
        json!([0, {"results": [], "acked": 0, "refused": 0}]),
        "a position moved alone"
    );
    assert_eq!(
        said["positions"],
        json!({"positions": {"mail": "1700000000:4242"}})
    );
    let decisions = said["summary"]["summary"]["decisions"].as_u64().unwrap();
    assert_eq!(
        said["decisions"].as_u64(),
        Some(decisions),
        "each decision to the callback"
    );
    assert_eq!(said["distinct"].as_u64(), Some(decisions), "and once");
    assert_eq!(traces(&data), reference_blocking(&day(), 7, "python"));
}

/// A phone app's life cycle: an assistant open on a data dir holds its life, so a second open
/// (the app started twice) is refused as `busy` and changes nothing; once the first is closed
/// (or its process killed), the life opens again and goes on where it was.
#[test]
fn a_second_open_of_a_held_life_is_refused_as_busy_and_the_life_opens_again_once_let_go() {
    let data = temp_dir("busy");
    let config =
        || -> AssistantConfig { serde_json::from_value(self::config(&short(), &data, 0)).unwrap() };
    let first = Assistant::open(config(), |_| {}).unwrap();
    let mut reading: Value = serde_json::from_str(&signal_lines(&short())[0]).unwrap();
    reading["id"] = json!("watch-0840");
    let reading = reading.to_string();
    first.push(&reading).unwrap();
    let refused = Assistant::open(config(), |_| {}).unwrap_err();
    assert!(matches!(refused, aura_embed::EmbedError::Busy), "{refused}");
    assert_eq!(refused.kind(), "busy");
    first.close().unwrap();
    let again = Assistant::open(config(), |_| {}).unwrap();
    // The signal the first took is the life's: sent again, it is acknowledged again.
    let ack = again.push(&reading).unwrap();
    assert!(ack.again, "{ack:?}");
    again.close().unwrap();
}

/// A source's batch with the position it read up to: the position is the life's once the
/// batch is, it survives a close and a reopen (a phone app killed and started again resumes
/// its mailbox from it), a batch sent again with a later position stores its signals once,
/// and a position past the life's bounds refuses its batch whole, storing nothing.
#[test]
fn a_sources_position_is_durable_with_its_signals_and_read_back_after_a_reopen() {
    let data = temp_dir("positions");
    let config =
        || -> AssistantConfig { serde_json::from_value(self::config(&short(), &data, 0)).unwrap() };
    let mut reading: Value = serde_json::from_str(&signal_lines(&short())[0]).unwrap();
    let batch: Vec<String> = (0..3)
        .map(|n| {
            reading["id"] = json!(format!("mail-{n}"));
            reading.to_string()
        })
        .collect();
    let first = Assistant::open(config(), |_| {}).unwrap();
    assert!(first.positions().unwrap().is_empty());
    let answers = first
        .push_read(&batch[..2].join("\n"), "mail", "7:41")
        .unwrap();
    assert!(answers.iter().all(Result::is_ok), "{answers:?}");
    assert_eq!(first.positions().unwrap()["mail"], "7:41");
    let too_long = "9".repeat(aura_contract::limits::READ_POSITION_BYTES_MAX + 1);
    let refused = first.push_read(&batch[2], "mail", &too_long).unwrap_err();
    assert_eq!(refused.kind, "too_large");
    first.close().unwrap();
    let again = Assistant::open(config(), |_| {}).unwrap();
    assert_eq!(
        again.positions().unwrap()["mail"],
        "7:41",
        "durable across a reopen"
    );
    // The source read from 7:41 on but its server sent the last two again: taken once.
    let answers = again
        .push_read(&batch[1..].join("\n"), "mail", "7:42")
        .unwrap();
    let again_flags: Vec<bool> = answers.iter().map(|a| a.as_ref().unwrap().again).collect();
    assert_eq!(again_flags, [true, false]);
    // Nothing new: the position moves alone.
    assert!(again.push_read("", "mail", "7:43").unwrap().is_empty());
    assert_eq!(again.positions().unwrap()["mail"], "7:43");
    again.close().unwrap();
    let journal = std::fs::read_to_string(day_dir(&data).join("signals.jsonl")).unwrap();
    let ids: Vec<String> = journal
        .lines()
        .filter_map(|line| {
            serde_json::from_str::<Value>(line).ok()?["id"]
                .as_str()
                .map(str::to_owned)
        })
        .filter(|id| id.starts_with("mail-"))
        .collect();
    assert_eq!(
        ids,
        ["mail-0", "mail-1", "mail-2"],
        "each signal stored once"
    );
}
