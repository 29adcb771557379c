//! `aura live` as a user starts it: a recorded day's signals fed on stdin leave the traces
//! `aura run` leaves, urgent signals tick at once, the journal is a scenario, questions are
//! answered by their id, bad input is refused and quarantined while the session goes on, and
//! each surface's command gets its decisions.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output};

use serde_json::{Value, json};

use crate::support::{quarantine_lines, temp_dir};

fn day() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/day.json")
}

fn short() -> PathBuf {
    crate::orchestrator::scenario_path("short")
}

fn aura(data: &Path, args: &[&str]) -> Command {
    let mut command = crate::support::aura_command(data);
    command.args(args);
    command
}

/// `aura live --stdin --clock replay --tick-on none`, then `extra`, then `setup`: a recorded
/// day's setup on its grid only, as `aura run` ticks a scenario that names no `tick_on`.
pub(crate) fn replayed<'a>(extra: &[&'a str], setup: &'a Path) -> Vec<&'a str> {
    let mut args = vec!["live", "--stdin", "--clock", "replay", "--tick-on", "none"];
    args.extend_from_slice(extra);
    args.push(setup.to_str().unwrap());
    args
}

/// Runs `aura … args` with `input` on stdin to its end.
pub(crate) fn run(data: &Path, args: &[&str], input: &[u8]) -> Output {
    let mut child = aura(data, args).spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    // Written from a thread: the child's stdout must be read meanwhile.
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert!(
        output.status.success(),
        "aura {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// A scenario's signals as JSON lines, in the order they happen (ties: file order).
pub(crate) fn signal_lines(scenario: &Path) -> String {
    let scenario: Value =
        serde_json::from_str(&std::fs::read_to_string(scenario).unwrap()).unwrap();
    let mut signals: Vec<&Value> = scenario["signals"].as_array().unwrap().iter().collect();
    let at = |s: &Value| {
        time::OffsetDateTime::parse(
            s["at"].as_str().unwrap(),
            &time::format_description::well_known::Rfc3339,
        )
        .unwrap()
    };
    signals.sort_by_key(|s| at(s));
    signals.iter().map(|s| format!("{s}\n")).collect()
}

/// stdout's JSON lines with `key`.
pub(crate) fn lines_with(output: &[u8], key: &str) -> Vec<Value> {
    String::from_utf8_lossy(output)
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).expect("every stdout line is JSON"))
        .filter(|line| line.get(key).is_some())
        .map(|line| line[key].clone())
        .collect()
}

/// Where a data dir's run is: a live session's open day (`days/<date>/`, named by
/// `life.json`), or the data dir itself (an `aura run`'s).
pub(crate) fn day_dir(data: &Path) -> PathBuf {
    match std::fs::read_to_string(data.join("life.json")) {
        Ok(life) => {
            let life: Value = serde_json::from_str(&life).unwrap();
            data.join("days").join(life["open"].as_str().unwrap())
        }
        Err(_) => data.to_path_buf(),
    }
}

pub(crate) fn traces(data: &Path) -> String {
    std::fs::read_to_string(day_dir(data).join(aura_host::journal::TRACES_PATH)).unwrap()
}

#[test]
fn the_day_fed_on_stdin_at_a_replayed_clock_leaves_the_traces_of_aura_run() {
    let work = temp_dir("live-day");
    let input = signal_lines(&day());
    let (live, ran) = (work.join("live"), work.join("run"));
    let day = day();
    // Only the grid ticks, as `aura run` of day.json (which names no tick_on).
    let output = run(&live, &replayed(&["--seed", "7"], &day), input.as_bytes());
    let day = day.to_str().unwrap();
    run(&ran, &["run", day, "--seed", "7", "--json"], b"");
    assert_eq!(traces(&live), traces(&ran), "byte for byte");
    // Every signal acknowledged, in order, none refused; every decision handed to stdout.
    let acks = lines_with(&output.stdout, "ack");
    assert_eq!(acks.len(), 215);
    assert!(acks.iter().enumerate().all(|(i, ack)| ack["seq"] == i));
    assert!(lines_with(&output.stdout, "refused").is_empty());
    let decisions = lines_with(&output.stdout, "decision");
    assert_eq!(decisions.len(), traces(&ran).lines().count());
    let summary = &lines_with(&output.stdout, "summary")[0];
    assert_eq!(
        (summary["ticks"].as_u64(), summary["signals"].as_u64()),
        (Some(69), Some(215))
    );
}

#[test]
fn urgent_signals_tick_at_once_and_the_journal_is_the_scenario_aura_run_repeats() {
    let work = temp_dir("live-urgent");
    let input = signal_lines(&day());
    let (live, ran) = (work.join("live"), work.join("run"));
    let day_path = day();
    let args = [
        "live",
        "--stdin",
        "--clock",
        "replay",
        "--seed",
        "7",
        day_path.to_str().unwrap(),
    ];
    let output = run(&live, &args, input.as_bytes());
    // The live default ticks at once on message, transaction, invitation and answer: the
    // grid's 69 ticks (06:30 to 23:30 every 15 minutes) and one at each other minute such a
    // signal of the day's comes at, between the start and the end. Worked out from the file.
    let scenario: Value =
        serde_json::from_str(&std::fs::read_to_string(&day_path).unwrap()).unwrap();
    let minute_of_day = |at: &str| {
        let (h, m) = (
            at[11..13].parse::<u32>().unwrap(),
            at[14..16].parse::<u32>().unwrap(),
        );
        h * 60 + m
    };
    let off_grid: std::collections::BTreeSet<u32> = scenario["signals"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| {
            ["message", "transaction", "invitation", "answer"]
                .contains(&s["kind"].as_str().unwrap())
        })
        .map(|s| s["at"].as_str().unwrap())
        // The day is 2026-11-23 06:30 (minute 390) to 23:30 (1410); two messages came the
        // night before and tick nothing of their own (the first tick takes them).
        .filter(|at| at.starts_with("2026-11-23"))
        .map(minute_of_day)
        .filter(|m| (390..=1410).contains(m) && (m - 390) % 15 != 0)
        .collect();
    let summary = &lines_with(&output.stdout, "summary")[0];
    assert_eq!(summary["ticks"].as_u64(), Some(69 + off_grid.len() as u64));
    // The first message after the start (06:44) is decided at 06:44, not at 06:45.
    let traced = traces(&live);
    assert!(
        traced.contains("\"at\":\"2026-11-23T06:44:00+01:00\""),
        "no tick at 06:44"
    );
    // The journal as a scenario: the same traces again through `aura run`.
    let exported = work.join("journal.json");
    run(
        &live,
        &["live", "--export", exported.to_str().unwrap()],
        b"",
    );
    let journal: Value =
        serde_json::from_str(&std::fs::read_to_string(&exported).unwrap()).unwrap();
    assert_eq!(journal["signals"].as_array().unwrap().len(), 215);
    assert_eq!(
        journal["tick_on"],
        json!(["message", "transaction", "invitation", "answer"])
    );
    assert_eq!(journal.get("unfinished"), None, "the replayed day ended");
    run(
        &ran,
        &["run", exported.to_str().unwrap(), "--seed", "7", "--json"],
        b"",
    );
    assert_eq!(traced, traces(&ran), "byte for byte");
}

/// Sends SIGTERM to a session whose stdin stays open (a terminal, a parent holding the pipe),
/// and waits for it to exit: it must, with 0, without the end of its input. Its stdin is
/// closed only then. A session still running a minute later fails the test (it would hang).
pub(crate) fn sigterm_with_stdin_open(mut child: Child, stdin: std::process::ChildStdin) -> Output {
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let sent = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        assert!(
            sent.elapsed() < std::time::Duration::from_secs(60),
            "still running a minute after SIGTERM, its stdin open"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    drop(stdin);
    let output = child.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "SIGTERM ends it with 0: {output:?}"
    );
    output
}

/// Reads stdout lines of `child` until one has `key` and satisfies `wanted`.
pub(crate) fn read_until(
    lines: &mut impl Iterator<Item = std::io::Result<String>>,
    key: &str,
    wanted: impl Fn(&Value) -> bool,
) -> Value {
    for line in lines.by_ref() {
        let line: Value = serde_json::from_str(&line.unwrap()).unwrap();
        if let Some(found) = line.get(key)
            && wanted(found)
        {
            return found.clone();
        }
    }
    panic!("stdout ended before a `{key}` line came");
}

fn send(child: &mut Child, line: &str) {
    let stdin = child.stdin.as_mut().unwrap();
    writeln!(stdin, "{line}").unwrap();
    stdin.flush().unwrap();
}

#[test]
fn a_question_is_answered_by_its_id_as_the_day_goes_on() {
    let work = temp_dir("live-answer");
    let (live, ran) = (work.join("live"), work.join("run"));
    let short = short();
    let mut child = aura(&live, &replayed(&[], &short)).spawn().unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut lines = BufReader::new(stdout).lines();
    // The short scenario's two signals of 08:40, then the same reading again at 09:00:30 (it
    // changes nothing): the clock passes 08:45, whose tick keeps the phone for the morning
    // briefing, and 09:00, whose tick asks about the invitation.
    let signals = signal_lines(&short);
    let (reading, invitation) = (
        signals.lines().next().unwrap(),
        signals.lines().nth(1).unwrap(),
    );
    send(&mut child, reading);
    send(&mut child, invitation);
    let again = reading.replace("08:40:00", "09:00:30");
    send(&mut child, &again);
    let asked = read_until(&mut lines, "decision", |d| d.get("question").is_some());
    let question = asked["question"].as_str().unwrap().to_owned();
    assert_eq!(asked["surface"], "PHONE_CARD");
    assert_eq!(asked["trace"]["decision"], "asked");
    assert_eq!(asked["trace"]["call"]["call_id"], question.as_str());
    // An answer to no question is refused, with a reason; a yes to this one is taken; a second
    // yes before it is applied is refused; "later" to it is taken (it stays pending).
    let answer = |id: &str, reply: &str, at: &str| {
        json!({"at": format!("2026-11-23T{at}:00+01:00"), "kind": "answer",
            "data": {"question": id, "reply": reply}})
        .to_string()
    };
    send(&mut child, &answer("t_0000000000", "yes", "09:01"));
    let refused = read_until(&mut lines, "refused", |_| true);
    assert_eq!(refused["kind"], "answer_unplaced");
    assert_eq!(refused["phase"], "signal");
    assert!(
        refused["message"]
            .as_str()
            .unwrap()
            .contains("t_0000000000 is not pending")
    );
    send(&mut child, &answer(&question, "later", "09:02"));
    read_until(&mut lines, "ack", |ack| ack["kind"] == "answer");
    // The short scenario's own answer is at 09:05: the same answer, by the question's id.
    send(&mut child, &answer(&question, "yes", "09:05"));
    read_until(&mut lines, "ack", |ack| {
        ack["at"] == "2026-11-23T09:05:00+01:00"
    });
    send(&mut child, &answer(&question, "no", "09:06"));
    let twice = read_until(&mut lines, "refused", |_| true);
    assert!(
        twice["message"]
            .as_str()
            .unwrap()
            .contains("answered already"),
        "{twice}"
    );
    drop(child.stdin.take());
    let confirmed = read_until(&mut lines, "decision", |d| {
        d["trace"]["decision"] == "confirmed"
    });
    assert_eq!(
        confirmed["trace"]["answer"],
        json!({"agent": "calendar", "tool": "schedule_event",
        "item": "invitation:i1", "confirm": true})
    );
    assert!(child.wait().unwrap().success());
    // The two refusals are quarantined, as received.
    let records = quarantine_lines(&live);
    assert_eq!(records.len(), 2, "{records:?}");
    assert!(
        records
            .iter()
            .all(|r| r["phase"] == "signal" && r["kind"] == "answer_unplaced")
    );
    assert!(
        records[0]["offending"]
            .as_str()
            .unwrap()
            .contains("t_0000000000")
    );
    // Asked at 09:00, confirmed at 09:15 with the same words and answer: the decisions of the
    // short scenario, where the same yes was written in the file.
    run(&ran, &["run", short.to_str().unwrap(), "--json"], b"");
    assert_eq!(traces(&live), traces(&ran), "byte for byte");
}

#[test]
fn bad_input_is_refused_and_quarantined_and_the_session_goes_on() {
    let work = temp_dir("live-bad");
    let data = work.join("data");
    let short = short();
    let signals = signal_lines(&short);
    let huge = format!(
        "{{\"kind\":\"message\",\"data\":{{\"body\":\"{}\"}}}}",
        "x".repeat(10 << 20)
    );
    let mut input = Vec::new();
    for bad in [
        "not json".to_owned(),
        r#"{"kind":"teleport","data":{}}"#.to_owned(),
        r#"{"kind":"reading","data":{"hrv_ms":"forty"}}"#.to_owned(),
        r#"{"at":"2026-11-23T08:41:00+01:00","kind":"reading","data":{},"kind":"message"}"#
            .to_owned(),
        huge,
        r#"{"kind":"answer","data":{"question":"t_nobodyaskd","reply":"yes"}}"#.to_owned(),
        r#"{"at":"2026-11-24T09:00:00+01:00","kind":"reading","data":{"hrv_ms":40}}"#.to_owned(),
    ] {
        input.extend_from_slice(bad.as_bytes());
        input.push(b'\n');
    }
    input.extend_from_slice(b"\xff\xfe not utf-8\n");
    // Then the short scenario's own signals: taken, and its day decided as without them.
    input.extend_from_slice(signals.as_bytes());
    let output = run(&data, &replayed(&[], &short), &input);
    let refused = lines_with(&output.stdout, "refused");
    let kinds: Vec<&str> = refused
        .iter()
        .map(|r| r["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "malformed_json",
            "schema_error",
            "schema_error",
            "duplicate_key",
            "too_large",
            "answer_unplaced",
            "after_end",
            "malformed_json"
        ]
    );
    // What to fix, read from the schema: the reading's hrv_ms is a number.
    let reading = &refused[2];
    assert_eq!(reading["recovery"]["action"], "correct_call");
    assert!(
        reading["recovery"]["issues"]
            .as_array()
            .unwrap()
            .iter()
            .any(|i| i["field"] == "/data/hrv_ms"),
        "{reading}"
    );
    assert_eq!(refused[4]["recovery"]["action"], "correct_call");
    // One quarantine record each, phase signal, the input as received (cut to its bound).
    let records = quarantine_lines(&data);
    assert_eq!(records.len(), 8);
    assert!(records.iter().all(|r| r["phase"] == "signal"));
    assert_eq!(records[0]["offending"], "not json");
    assert!(records[4]["offending_truncated"].as_bool().unwrap());
    // The good signals after them: taken, and the day decided as `aura run` decides it.
    assert_eq!(lines_with(&output.stdout, "ack").len(), 3);
    let ran = work.join("run");
    run(&ran, &["run", short.to_str().unwrap(), "--json"], b"");
    assert_eq!(traces(&data), traces(&ran), "the bad input changed nothing");
}

#[test]
fn each_surface_s_command_gets_its_decisions_once_and_a_failing_one_is_retried_and_recorded() {
    let work = temp_dir("live-sinks");
    let data = work.join("data");
    let cards = work.join("cards.txt");
    let on_card = format!(
        "PHONE_CARD=printf '%s ' \"$AURA_DELIVERY_ID\" >> {0}; cat >> {0}",
        cards.display()
    );
    let short = short();
    let watch = "WATCH=echo the watch is off >&2; exit 3";
    let args = replayed(&["--on", &on_card, "--on", watch], &short);
    let output = run(&data, &args, signal_lines(&short).as_bytes());
    let decisions = lines_with(&output.stdout, "decision");
    let on = |surface: &str| -> Vec<&Value> {
        decisions
            .iter()
            .filter(|d| d["surface"] == surface)
            .collect()
    };
    // Each PHONE_CARD decision once, its id then its text, in order.
    let expected: String = on("PHONE_CARD")
        .iter()
        .map(|d| {
            format!(
                "{} {}\n",
                d["id"].as_str().unwrap(),
                d["text"].as_str().unwrap()
            )
        })
        .collect();
    assert!(!expected.is_empty(), "the short scenario shows cards");
    assert_eq!(std::fs::read_to_string(&cards).unwrap(), expected);
    // The watch's command fails: three attempts, then a record saying why.
    let records: Vec<Value> =
        std::fs::read_to_string(day_dir(&data).join(aura_day::logs::DELIVERIES_PATH))
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
    let watch: Vec<&Value> = records.iter().filter(|r| r["sink"] == "on:WATCH").collect();
    assert_eq!(watch.len(), on("WATCH").len());
    assert!(!watch.is_empty(), "the short scenario taps the watch");
    for record in &watch {
        assert_eq!(
            (record["status"].as_str(), record["attempts"].as_u64()),
            (Some("failed"), Some(3))
        );
        assert!(
            record["error"]
                .as_str()
                .unwrap()
                .contains("the watch is off"),
            "{record}"
        );
    }
    let delivered = |sink: &str| {
        records
            .iter()
            .filter(|r| r["sink"] == sink && r["status"] == "delivered")
            .count()
    };
    assert_eq!(delivered("on:PHONE_CARD"), on("PHONE_CARD").len());
    assert_eq!(delivered("stdout"), decisions.len());
}

/// Where a live session is killed: before a signal's acknowledgement (not yet written, written
/// and not synced, durable), after it (the next signal's write), mid-tick (a trace not yet
/// written, not synced, durable), at a checkpoint (written, renamed and the dir not synced),
/// mid-delivery (a sink done, its record not written or written), and at the start.
const KILL_POINTS: [&str; 13] = [
    "live.json:write:0",
    "signals.jsonl:write:60",
    "signals.jsonl:sync:60",
    "signals.jsonl:synced:60",
    "signals.jsonl:write:61",
    "traces.jsonl:write:20",
    "traces.jsonl:sync:20",
    "traces.jsonl:synced:20",
    "run.json:write:30",
    "run.json:synced:30",
    "deliveries.jsonl:write:8",
    "deliveries.jsonl:synced:8",
    "deliveries.jsonl:synced:40",
];

/// A PHONE_CARD command that keeps each delivery's effect once, by its id (what the
/// deliveries' ids are for), and counts every time it was run.
fn once_per_id(dir: &Path) -> String {
    format!(
        "PHONE_CARD=echo \"$AURA_DELIVERY_ID\" >> {runs}; grep -qxF \"$AURA_DELIVERY_ID\" {ids} 2>/dev/null || echo \"$AURA_DELIVERY_ID\" >> {ids}",
        runs = dir.join("runs").display(),
        ids = dir.join("ids").display()
    )
}

#[test]
fn a_session_killed_anywhere_loses_no_acknowledged_signal_and_keeps_each_effect_once() {
    use std::sync::{Arc, Mutex};
    let work = temp_dir("live-kill");
    let day = day();
    // Each signal with the sender's id, so one sent again after a kill is taken once.
    let input: Vec<String> = signal_lines(&day)
        .lines()
        .enumerate()
        .map(|(i, line)| {
            let mut signal: Value = serde_json::from_str(line).unwrap();
            signal["id"] = json!(format!("s{i}"));
            signal.to_string()
        })
        .collect();
    let all = input.join("\n") + "\n";
    // The uninterrupted session.
    let reference = work.join("reference");
    std::fs::create_dir_all(&reference).unwrap();
    let sink = once_per_id(&reference);
    run(
        &reference.join("data"),
        &replayed(&["--on", &sink], &day),
        all.as_bytes(),
    );
    let read = |path: PathBuf| std::fs::read_to_string(path).unwrap_or_default();
    let expected_traces = traces(&reference.join("data"));
    let expected_signals =
        read(day_dir(&reference.join("data")).join(aura_day::logs::SIGNALS_PATH));
    let expected_ids = read(reference.join("ids"));
    assert!(!expected_ids.is_empty(), "the day shows cards");

    for point in KILL_POINTS {
        let dir = work.join(point.replace([':', '.'], "-"));
        std::fs::create_dir_all(&dir).unwrap();
        let data = dir.join("data");
        let sink = once_per_id(&dir);
        let args = replayed(&["--on", &sink], &day);
        let mut child = aura(&data, &args)
            .env("AURA_STOP_AT", point)
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let sent = all.clone();
        // Blocks once the stopped session stops reading; the kill ends it.
        let writer = std::thread::spawn(move || {
            let _ = stdin.write_all(sent.as_bytes());
        });
        let acks = Arc::new(Mutex::new(Vec::new()));
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let reader = {
            let acks = acks.clone();
            std::thread::spawn(move || {
                for line in stdout.lines().map_while(Result::ok) {
                    let line: Value = serde_json::from_str(&line).unwrap();
                    if let Some(ack) = line.get("ack") {
                        acks.lock().unwrap().push(ack["seq"].as_u64().unwrap());
                    }
                }
            })
        };
        let stopped = BufReader::new(child.stderr.take().unwrap())
            .lines()
            .map_while(Result::ok)
            .any(|line| line == format!("aura: stopped at {point}"));
        // SIGKILL: no destructor, no flush, no chance to finish anything.
        child.kill().unwrap();
        child.wait().unwrap();
        writer.join().unwrap();
        reader.join().unwrap();
        assert!(stopped, "the session never reached {point}");
        let acked = acks.lock().unwrap().clone();
        assert!(
            acked.iter().enumerate().all(|(i, seq)| *seq == i as u64),
            "{point}: acknowledged in order"
        );
        // Every signal acknowledged is in the journal, at its place.
        let journal = read(day_dir(&data).join(aura_day::logs::SIGNALS_PATH));
        assert!(
            journal.lines().count() >= acked.len(),
            "{point}: an acknowledged signal was lost"
        );
        // The sender sends again what it had no acknowledgement for; the session goes on.
        let rest = input[acked.len()..].join("\n") + "\n";
        let output = run(&data, &args, rest.as_bytes());
        let again = lines_with(&output.stdout, "ack");
        assert_eq!(
            again.len(),
            input.len() - acked.len(),
            "{point}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let seqs: Vec<&Value> = again.iter().map(|ack| &ack["seq"]).collect();
        assert!(
            seqs.iter()
                .enumerate()
                .all(|(i, seq)| **seq == acked.len() + i),
            "{point}: acknowledged {} before the kill, then {seqs:?}",
            acked.len()
        );
        // Killed with signal 60 durable and not acknowledged: sent again, it is acknowledged
        // again (not taken twice).
        if point == "signals.jsonl:synced:60" {
            assert_eq!((acked.len(), &again[0]["again"]), (60, &json!(true)));
        }
        // The day as if never interrupted: the same journal (each signal once), the same
        // traces, and each card's effect once.
        assert_eq!(
            read(day_dir(&data).join(aura_day::logs::SIGNALS_PATH)),
            expected_signals,
            "{point}"
        );
        assert!(
            traces(&data) == expected_traces,
            "{point}: the traces differ"
        );
        let ids = read(dir.join("ids"));
        let mut sorted: Vec<&str> = ids.lines().collect();
        sorted.sort_unstable();
        let mut expected: Vec<&str> = expected_ids.lines().collect();
        expected.sort_unstable();
        assert_eq!(sorted, expected, "{point}: each card's effect once");
    }
}

/// Where a session started with `--listen` listens (from its stderr), and the rest of its
/// stderr, to keep open while it runs (it writes there as it goes).
pub(crate) fn listening(child: &mut Child) -> (String, impl Iterator<Item = String> + use<>) {
    let stderr = BufReader::new(child.stderr.take().unwrap());
    let mut said = stderr.lines().map_while(Result::ok);
    let address = said
        .find_map(|line| {
            line.strip_prefix("aura: live at http://")
                .map(str::to_owned)
        })
        .expect("the session says where it listens");
    (address, said)
}

/// One HTTP/1.1 request to `address` (`Connection: close`): the status and the body.
pub(crate) fn http(
    address: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> (u16, Vec<u8>) {
    use std::io::Read;
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    let mut request = format!(
        "{method} {path} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    stream.write_all(request.as_bytes()).unwrap();
    // A server may answer before it has read a body it refuses.
    let _ = stream.write_all(body);
    let mut response = Vec::new();
    let _ = stream.read_to_end(&mut response);
    let text = String::from_utf8_lossy(&response);
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let start = response
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map_or(response.len(), |at| at + 4);
    (status, response[start..].to_vec())
}

#[test]
fn the_day_posted_over_http_leaves_the_traces_of_aura_run_and_streams_its_decisions() {
    let work = temp_dir("live-http");
    let (live, ran) = (work.join("live"), work.join("run"));
    let day = day();
    let mut child = aura(
        &live,
        &replayed(&["--seed", "7", "--listen", "127.0.0.1:0"], &day),
    )
    .spawn()
    .unwrap();
    let (address, _said) = listening(&mut child);
    // Follows the decisions as they are made, on a connection of its own.
    let follower = {
        let address = address.clone();
        std::thread::spawn(move || {
            let (status, body) = http(&address, "GET", "/decisions", &[], b"");
            (status, String::from_utf8(body).unwrap())
        })
    };
    std::thread::sleep(std::time::Duration::from_millis(200));
    // Posted one after the other, as fast as the session answers: past the rate bound (100 a
    // second) a post is told to retry (429, `busy`, with when), and the client does.
    let mut retried = 0;
    for (seq, line) in signal_lines(&day).lines().enumerate() {
        let json = [("Content-Type", "application/json")];
        let body = loop {
            let (status, body) = http(&address, "POST", "/signals", &json, line.as_bytes());
            let body: Value = serde_json::from_slice(&body).unwrap();
            if status == 429 {
                assert_eq!(body["refused"]["kind"], "busy", "{body}");
                let wait_ms = body["refused"]["recovery"]["retry_after_ms"]
                    .as_u64()
                    .unwrap();
                std::thread::sleep(std::time::Duration::from_millis(wait_ms));
                retried += 1;
                continue;
            }
            assert_eq!(status, 200, "{body}");
            break body;
        };
        assert_eq!(body["ack"]["seq"], seq);
    }
    // Refusals: a bad signal (400, what to fix), an answer to nothing (409), another site's
    // page (403), a body past the bound (413); once the bound's bucket is full again (it
    // refills 100 a second), so that none of them is told to retry instead.
    std::thread::sleep(std::time::Duration::from_secs(1));
    let (status, body) = http(
        &address,
        "POST",
        "/signals",
        &[],
        br#"{"kind":"reading","data":{"hrv_ms":"x"}}"#,
    );
    assert_eq!(status, 400);
    let body: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(
        body["refused"]["recovery"]["issues"][0]["field"],
        "/data/hrv_ms"
    );
    let (status, body) = http(
        &address,
        "POST",
        "/answers",
        &[],
        br#"{"question":"t_0000000000","reply":"yes"}"#,
    );
    assert_eq!(status, 409, "{}", String::from_utf8_lossy(&body));
    let (status, _) = http(
        &address,
        "POST",
        "/signals",
        &[("Origin", "http://evil.example")],
        b"{}",
    );
    assert_eq!(status, 403);
    let (status, _) = http(
        &address,
        "POST",
        "/signals",
        &[],
        &vec![b' '; (1 << 20) + 7],
    );
    assert_eq!(status, 413);
    // The inputs end with stdin: the day runs to its end.
    drop(child.stdin.take());
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success());
    run(
        &ran,
        &["run", day.to_str().unwrap(), "--seed", "7", "--json"],
        b"",
    );
    assert_eq!(traces(&live), traces(&ran), "byte for byte");
    // The follower saw every decision, in order, then the end of the stream.
    let (status, streamed) = follower.join().unwrap();
    assert_eq!(status, 200);
    let streamed: Vec<Value> = streamed
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["decision"]["trace"].clone())
        .collect();
    let recorded: Vec<Value> = traces(&live)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(streamed, recorded);
    // The four refusals and each post told to retry, each quarantined (the foreign page's
    // with its Origin); the day itself quarantines nothing.
    let records = quarantine_lines(&live);
    assert_eq!(records.len(), 4 + retried);
    assert_eq!(
        records.iter().filter(|r| r["kind"] == "busy").count(),
        retried
    );
    assert!(
        records.iter().all(|r| r["phase"] == "signal"),
        "{records:?}"
    );
    let origin = records
        .iter()
        .find(|r| r["kind"] == "forbidden_origin")
        .unwrap();
    assert!(
        origin["offending"]
            .as_str()
            .unwrap()
            .contains("Origin: http://evil.example")
    );
}

/// A two-day scenario: an invitation for Friday arrives Monday 07:50, the calendar asks about
/// it at 08:00, and (with `answers`) the person answers.
fn two_days(dir: &Path, answers: &[Value]) -> PathBuf {
    let short: Value = serde_json::from_str(&std::fs::read_to_string(short()).unwrap()).unwrap();
    let mut signals = vec![
        json!({"at": "2026-11-23T07:50:00+01:00", "kind": "invitation",
        "data": {"id": "i9", "from": "ana@example.com", "title": "Design review",
            "start": "2026-11-27T14:00:00+01:00", "end": "2026-11-27T15:00:00+01:00"}}),
    ];
    signals.extend_from_slice(answers);
    let scenario = json!({"scenario": "two-days", "start": "2026-11-23T08:00:00+01:00",
        "end": "2026-11-25T08:00:00+01:00", "tick_minutes": 60, "utc_offset_minutes": 60,
        "profile": short["profile"], "signals": signals});
    let path = dir.join(format!("two-days-{}.json", answers.len()));
    std::fs::write(&path, scenario.to_string()).unwrap();
    path
}

#[tokio::test]
async fn an_unanswered_question_expires_after_a_day_into_the_digest_and_later_postpones_it() {
    let dir = temp_dir("live-expiry");
    let (_, traces, _) = crate::orchestrator::run("expiry", &two_days(&dir, &[]), 0).await;
    let traces: Vec<Value> = traces
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let asked = traces.iter().find(|t| t["decision"] == "asked").unwrap();
    assert_eq!(asked["at"], "2026-11-23T08:00:00+01:00");
    let question = asked["call"]["call_id"].as_str().unwrap();
    // A day later, with no answer: expired, not run, recorded SILENT.
    let expired: Vec<&Value> = traces
        .iter()
        .filter(|t| t["decision"] == "expired")
        .collect();
    assert_eq!(expired.len(), 1);
    assert_eq!(expired[0]["at"], "2026-11-24T08:00:00+01:00");
    assert_eq!(
        (
            expired[0]["call"]["call_id"].as_str(),
            expired[0]["surface"].as_str()
        ),
        (Some(question), Some("SILENT"))
    );
    assert_eq!(expired[0]["fuel_used"], 0, "never run");
    // A digest after it tells it.
    assert!(traces.iter().any(|t| {
        t["decision"] == "digest"
            && t["at"].as_str().unwrap() > "2026-11-24T08"
            && t["outcome"]["summary"]
                .as_str()
                .unwrap()
                .contains("No answer to: Add \"Design review\"")
    }));
    // "Later" at 20:00 the same day: it waits from then, and expires the next day at 20:00.
    let later = json!({"at": "2026-11-23T19:30:00+01:00", "kind": "answer",
        "data": {"question": question, "reply": "later"}});
    let (summary, traces, _) =
        crate::orchestrator::run("expiry-later", &two_days(&dir, &[later]), 0).await;
    assert_eq!((summary.answers_later, summary.expired), (1, 1));
    let expired = traces
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|t| t["decision"] == "expired")
        .unwrap();
    assert_eq!(expired["at"], "2026-11-24T20:00:00+01:00");
}

#[test]
fn the_shipped_live_setup_is_a_live_v1_of_the_day_s_person() {
    let crossing = aura_contract::crossing::Crossing::new().unwrap();
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/live.json");
    let config =
        aura_day::live::LiveConfig::load(&path, crossing.schemas(), 0, aura_day::live::Clock::Wall)
            .unwrap();
    assert!(!config.is_scenario);
    let day: Value = serde_json::from_str(&std::fs::read_to_string(day()).unwrap()).unwrap();
    assert_eq!(config.setup["profile"], day["profile"]);
    assert_eq!(config.setup["initial"], day["initial"]);
    // A scenario's day is refused as a live.v1 (its own schema takes it).
    let mut with_day = config.setup.clone();
    with_day["signals"] = json!([]);
    assert!(
        crossing
            .schemas()
            .validate("live.v1.json", &with_day, "")
            .is_err()
    );
}

/// A WAV file's length in seconds and its samples' root mean square (16-bit mono).
fn sound_of(path: &Path) -> (f64, f64) {
    let bytes = std::fs::read(path).unwrap();
    assert_eq!(&bytes[..4], b"RIFF", "{} is a WAV", path.display());
    let rate = u32::from_le_bytes(bytes[24..28].try_into().unwrap());
    assert_eq!(
        u16::from_le_bytes(bytes[34..36].try_into().unwrap()),
        16,
        "16-bit"
    );
    let data = bytes.windows(4).position(|w| w == b"data").unwrap() + 8;
    let samples: Vec<f64> = bytes[data..]
        .chunks_exact(2)
        .map(|s| f64::from(i16::from_le_bytes([s[0], s[1]])))
        .collect();
    let rms = (samples.iter().map(|s| s * s).sum::<f64>() / samples.len().max(1) as f64).sqrt();
    (samples.len() as f64 / f64::from(rate), rms)
}

#[test]
fn the_earbud_speaks_each_of_its_decisions_into_sound() {
    let work = temp_dir("live-speech");
    let (data, spoken) = (work.join("data"), work.join("spoken"));
    std::fs::create_dir_all(&spoken).unwrap();
    let python = crate::tools::speech_python();
    let speak = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/speech/speak.py");
    let earbud = format!(
        "EARBUD_TTS={} {} {}/\"$AURA_DELIVERY_ID\".wav",
        python.display(),
        speak.display(),
        spoken.display()
    );
    let day = day();
    let args = replayed(&["--seed", "7", "--on", &earbud], &day);
    let output = run(&data, &args, signal_lines(&day).as_bytes());
    let said: Vec<Value> = lines_with(&output.stdout, "decision")
        .into_iter()
        .filter(|d| d["surface"] == "EARBUD_TTS")
        .collect();
    assert!(!said.is_empty(), "the day speaks in the earbuds");
    for decision in &said {
        let wav = spoken.join(format!("{}.wav", decision["id"].as_str().unwrap()));
        let (seconds, rms) = sound_of(&wav);
        // A sentence of a few words: more than a second of speech, and not silence (eSpeak's
        // speech sits in the thousands; silence is 0).
        let words = decision["text"]
            .as_str()
            .unwrap()
            .split_whitespace()
            .count();
        assert!(
            seconds > 1.0 && seconds < 2.0 * words as f64,
            "{seconds} s for {words} words"
        );
        assert!(rms > 300.0, "{} holds no sound (RMS {rms})", wav.display());
    }
    assert_eq!(
        std::fs::read_dir(&spoken).unwrap().count(),
        said.len(),
        "one each"
    );
}

/// The rate bound where it applies: ten thousand signals pushed at once through the session's
/// handle (what the HTTP front and an app use), each by a task of its own. stdin, one stream
/// whose next line waits for this one's answer, is not bounded by it (`Live::push_in_order`):
/// it has one input in flight at most.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_signals_in_a_second_are_refused_past_the_bound_and_the_day_goes_on() {
    use aura_day::live::{self, Clock, LiveConfig};
    let (host, data) = crate::support::host("live-flood").await;
    let short = short();
    let mut config = LiveConfig::load(&short, host.crossing().schemas(), 0, Clock::Replay).unwrap();
    // Only the grid ticks (`--tick-on none`).
    config.tick_on = Some(Vec::new());
    let (handle, inbox) = live::channel(&host);
    let session = tokio::spawn({
        let host = host.clone();
        async move { live::live(&host, config, Vec::new(), inbox, |_| {}).await }
    });
    let pushes: Vec<_> = (0..10_000)
        .map(|i| {
            let handle = handle.clone();
            let reading = format!(
                "{{\"at\":\"2026-11-23T08:41:00+01:00\",\"kind\":\"reading\",\"data\":{{\"hrv_ms\":{}}}}}",
                30 + i % 50
            );
            tokio::spawn(async move { handle.push(reading.as_bytes()).await })
        })
        .collect();
    let (mut acks, mut refused) = (0_usize, Vec::new());
    for push in pushes {
        match push.await.unwrap() {
            Ok(_) => acks += 1,
            Err(refusal) => refused.push(refusal),
        }
    }
    // The bucket holds 100 and refills 100 a second (the queue holds 256): most of the flood
    // is told to retry.
    assert!(acks >= 100, "{acks}");
    assert!(refused.len() > 5_000, "{}", refused.len());
    for refusal in &refused {
        assert_eq!(refusal.kind, "busy");
        assert_eq!(
            refusal.recovery.action,
            aura_contract::recovery::Action::Retry
        );
        assert!(refusal.recovery.retry_after_ms.unwrap() >= 1);
    }
    // Then the day's own signals, sent in order as stdin sends them, at once after the flood
    // (the bucket is empty): none refused.
    for line in signal_lines(&short).lines() {
        handle.push_in_order(line.as_bytes()).await.unwrap();
        acks += 1;
    }
    handle.close().await;
    let summary = session.await.unwrap().unwrap();
    // Each refusal quarantined, each acknowledged signal applied, and the day ran to its end.
    // (Those refused before the session opened its day are in the data dir's own.)
    let before = std::fs::read_to_string(data.join(aura_host::journal::QUARANTINE_PATH))
        .unwrap_or_default()
        .lines()
        .count();
    assert_eq!(quarantine_lines(&data).len() + before, refused.len());
    assert_eq!(summary.ticks, 3);
    assert_eq!(summary.signals, acks);
}

#[test]
fn on_the_machine_s_clock_sigterm_ends_it_cleanly_and_it_resumes_where_it_stood() {
    let work = temp_dir("live-wall");
    let data = work.join("data");
    // A live.v1 with no more than it must have (no initial state, the default tick_on).
    let day: Value = serde_json::from_str(&std::fs::read_to_string(day()).unwrap()).unwrap();
    let setup = work.join("me.json");
    let me = json!({"scenario": "me", "tick_minutes": 15, "utc_offset_minutes": 60,
        "profile": day["profile"]});
    std::fs::write(&setup, me.to_string()).unwrap();
    let setup = setup.to_str().unwrap();
    let start_session = |said_first: &str| {
        let mut child = aura(&data, &["live", "--stdin", setup]).spawn().unwrap();
        let stderr = BufReader::new(child.stderr.take().unwrap());
        let started = stderr
            .lines()
            .map_while(Result::ok)
            .next()
            .unwrap_or_default();
        assert!(started.contains(said_first), "{started}");
        child
    };
    let terminate = |mut child: Child| -> Output {
        let stdin = child.stdin.take().unwrap();
        sigterm_with_stdin_open(child, stdin)
    };
    let mut child = start_session("starts");
    let stdin = child.stdin.as_mut().unwrap();
    writeln!(
        stdin,
        r#"{{"id":"r1","kind":"reading","data":{{"hrv_ms":44}}}}"#
    )
    .unwrap();
    stdin.flush().unwrap();
    let mut lines = BufReader::new(child.stdout.as_mut().unwrap()).lines();
    read_until(&mut lines, "ack", |ack| ack["seq"] == 0);
    drop(lines);
    // The first tick, at the start, has run (it ran before the reading was taken).
    let output = terminate(child);
    let summary = &lines_with(&output.stdout, "summary")[0];
    assert!(summary["ticks"].as_u64().unwrap() >= 1);
    let first = traces(&data);
    // Again on the same data dir: the same session goes on (the same run, its start kept).
    let child = start_session(&format!(
        "{} resumes at tick",
        summary["run"].as_str().unwrap()
    ));
    terminate(child);
    // Its journal as a scenario: unfinished, the one signal, and `aura run` decides the same.
    let exported = work.join("journal.json");
    run(
        &data,
        &["live", "--export", exported.to_str().unwrap()],
        b"",
    );
    let journal: Value =
        serde_json::from_str(&std::fs::read_to_string(&exported).unwrap()).unwrap();
    assert_eq!(journal["unfinished"], true);
    assert_eq!(journal["signals"].as_array().unwrap().len(), 1);
    let ran = work.join("run");
    let output = run(&ran, &["run", exported.to_str().unwrap(), "--json"], b"");
    let ran_summary = &lines_with(&output.stdout, "summary")[0];
    assert_eq!(ran_summary["run"], summary["run"], "the same run");
    assert_eq!(traces(&ran), first);
    assert_eq!(traces(&data), first, "the restart decided nothing twice");
}

/// `aura live --positions`: where each source of a data dir's life stands, read from disk
/// while its session runs and after it stopped: the last position each source handed with its
/// signals (worked out from the pushes below), `{}` before there is a life.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aura_live_positions_says_where_each_source_stands() {
    use aura_day::live::{self, BatchForm, Clock, LiveConfig};
    use aura_day::store::ReadPosition;
    let positions = |data: &Path| {
        let output = aura(data, &["live", "--positions"]).output().unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout).unwrap()
    };
    let (host, data) = crate::support::host("live-positions").await;
    assert_eq!(positions(&data), "{}\n");
    let mut config =
        LiveConfig::load(&short(), host.crossing().schemas(), 0, Clock::Replay).unwrap();
    config.tick_on = Some(Vec::new());
    let (handle, inbox) = live::channel(&host);
    let session = tokio::spawn({
        let host = host.clone();
        async move { live::live(&host, config, Vec::new(), inbox, |_| {}).await }
    });
    let read = |source: &str, position: &str| {
        Some(ReadPosition {
            source: source.to_owned(),
            position: position.to_owned(),
        })
    };
    let reading = |minute: u32, hrv: u32| {
        format!(
            "{{\"at\":\"2026-11-23T08:{minute}:00+01:00\",\"kind\":\"reading\",\"data\":{{\"hrv_ms\":{hrv}}}}}\n"
        )
    };
    let mail = format!("{}{}", reading(41, 40), reading(42, 41));
    let answers = handle
        .push_read(
            mail.as_bytes(),
            BatchForm::Ndjson,
            read("mail", "1700000000:4242"),
        )
        .await
        .unwrap();
    assert!(answers.iter().all(Result::is_ok));
    handle
        .push_read(
            reading(43, 42).as_bytes(),
            BatchForm::Ndjson,
            read("calendar", "sync-1"),
        )
        .await
        .unwrap();
    // A source that read nothing new moves on all the same.
    handle
        .push_read(b"", BatchForm::Ndjson, read("mail", "1700000000:4243"))
        .await
        .unwrap();
    assert_eq!(
        positions(&data),
        "{\"calendar\":\"sync-1\",\"mail\":\"1700000000:4243\"}\n",
        "while the session runs"
    );
    handle.stop().await;
    session.await.unwrap().unwrap();
    assert_eq!(
        positions(&data),
        "{\"calendar\":\"sync-1\",\"mail\":\"1700000000:4243\"}\n",
        "after it stopped"
    );
}
