//! A person's days: what one day carries into the next. The day of `scenarios/day.json` lived
//! whole, and the same day cut in two at a tick (the first part ending there, the second a
//! scenario of its own that starts from what the first carried, scenario.v1 `initial`), make
//! the same decisions: what the agents saw and what the orchestrator remembered (questions
//! pending across the cut, what was told and held back, the budget, the quiet night) all
//! crossed it.

use serde_json::{Value, json};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use aura_day::orchestrator::{self, Start};
use aura_day::scenario::Scenario;
use aura_host::Host;

use crate::support::{config, plugins_dir, temp_dir};

/// The seed the README's day runs with.
const SEED: u64 = 7;

/// Runs the scenario `value` in a fresh data dir: its traces and what it carries on.
async fn run(name: &str, value: &Value) -> (Vec<Value>, orchestrator::Carry) {
    let data = temp_dir(&format!("days-{name}"));
    let mut config = config(plugins_dir(), &data);
    config.guest_seed = SEED;
    config.fuel_per_ms = Some(aura_contract::limits::FUEL_PER_MS_DEFAULT);
    let host = Host::open(&config).await.unwrap();
    let text = serde_json::to_string(value).unwrap();
    // A carried day is a scenario file like any other: the schema checks what it carries.
    let scenario = Scenario::parse(&text, host.crossing().schemas()).unwrap();
    let (_, carry) = orchestrator::run_carrying(&host, &scenario, SEED, Start::Fresh, |_| {})
        .await
        .unwrap();
    let traces = std::fs::read_to_string(data.join(aura_host::journal::TRACES_PATH)).unwrap();
    let traces = traces
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    (traces, carry)
}

/// A decision without what names its run and its place in it (each part is a run of its own,
/// with its own id and its own tick count from 0).
fn decision(trace: &Value) -> Value {
    let mut trace = trace.clone();
    for field in ["run", "trace_id", "tick"] {
        trace.as_object_mut().unwrap().remove(field);
    }
    trace
}

fn time(text: &str) -> OffsetDateTime {
    OffsetDateTime::parse(text, &Rfc3339).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_day_cut_at_any_of_its_moments_goes_on_from_what_it_carried_to_the_same_decisions() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/day.json");
    let day: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let (whole, _) = run("whole", &day).await;
    let schemas =
        aura_contract::schema::SchemaRegistry::compile(aura_contract::catalogue::all_schemas())
            .unwrap();
    let ticks = Scenario::parse(&day.to_string(), &schemas).unwrap().ticks();
    let whole: Vec<Value> = whole.iter().map(decision).collect();

    // The cuts, each on the day's 15-minute grid (a carried day's grid starts at its first
    // tick): at 06:45 the night is not over (the briefing waits for 07:00, after the cut); at
    // 10:00 the go/no-go invitation, asked at 09:30, is a question pending until the 12:02
    // answer; at 14:00 dining's overrun was told at 13:30 (and is not news again); at 22:45
    // the 22:16 invitation's question is held for the morning (since 22:30).
    for cut in ["06:45", "10:00", "14:00", "22:45"] {
        let at = time(&format!("2026-11-23T{cut}:00+01:00"));
        // The first part ends at the whole day's tick before the cut (an urgent one, when a
        // signal of a `tick_on` kind came just before) and applies what came until then; the
        // second starts at the cut with the rest, those that came between included.
        let k = ticks.iter().position(|tick| *tick == at).unwrap();
        let last_before = ticks[k - 1];
        let signals = day["signals"].as_array().unwrap();
        let (before, after): (Vec<Value>, Vec<Value>) = signals
            .iter()
            .cloned()
            .partition(|signal| time(signal["at"].as_str().unwrap()) <= last_before);
        let first = {
            let mut first = day.clone();
            first["end"] = json!(last_before.format(&Rfc3339).unwrap());
            first["unfinished"] = json!(true);
            first["signals"] = json!(before);
            first
        };
        let (first_traces, carry) = run(&format!("first-{cut}"), &first).await;
        assert!(
            carry.left_out.is_empty(),
            "the day's events fit what a day carries: {:?}",
            carry.left_out
        );
        let second = {
            let mut second = day.clone();
            second["start"] = json!(at.format(&Rfc3339).unwrap());
            second["initial"] = carry.initial.clone();
            second["signals"] = json!(after);
            second
        };
        let (second_traces, _) = run(&format!("second-{cut}"), &second).await;
        let parts: Vec<Value> = first_traces
            .iter()
            .chain(&second_traces)
            .map(decision)
            .collect();
        // The first decision that differs, with both sides, or a count that does.
        if let Some(i) = (0..parts.len().max(whole.len())).find(|&i| parts.get(i) != whole.get(i)) {
            panic!(
                "cut at {cut} ({} + {} decisions, the whole day {}): decision {i} differs\n\
                 cut:   {}\nwhole: {}",
                first_traces.len(),
                second_traces.len(),
                whole.len(),
                parts.get(i).map_or("none".to_owned(), Value::to_string),
                whole.get(i).map_or("none".to_owned(), Value::to_string),
            );
        }
        // The cut carried something to prove it: past the first tick, a memory of what was
        // shown and told.
        let memory = &carry.initial["memory"];
        assert!(
            !memory["shown"].as_object().unwrap().is_empty(),
            "cut at {cut}: {memory}"
        );
        if cut == "10:00" {
            assert_eq!(
                memory["pending"].as_array().unwrap().len(),
                1,
                "the go/no-go question crosses the cut pending: {memory}"
            );
        }
        if cut == "06:45" {
            assert_eq!(memory["was_quiet"], json!(true));
        }
        if cut == "22:45" {
            assert_eq!(
                memory["held"].as_object().unwrap().len(),
                1,
                "the held question crosses the cut: {memory}"
            );
        }
    }
}

/// The life checked in under tests/data/life is what `scenarios/gen_life.py` writes for its
/// README's command, and `scenarios/check_life.py` finds nothing wrong with it (the generator
/// is the input of the long-life tests: a piece edited by hand, or a generator changed without
/// it, would test a life nobody can write again).
#[test]
fn the_checked_in_life_is_what_the_generator_writes_and_its_checker_passes() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = temp_dir("days-life");
    generate_life(3, "2026-10-24", &out);
    for file in ["setup.json", "signals.jsonl"] {
        let checked_in = std::fs::read(root.join("tests/data/life").join(file)).unwrap();
        let generated = std::fs::read(out.join(file)).unwrap();
        assert!(
            checked_in == generated,
            "tests/data/life/{file} is not what gen_life.py writes"
        );
    }
    let checked = std::process::Command::new("python3")
        .arg(root.join("scenarios/check_life.py"))
        .arg(root.join("tests/data/life"))
        .output()
        .unwrap();
    assert!(
        checked.status.success(),
        "{}",
        String::from_utf8_lossy(&checked.stdout)
    );
}

/// Writes `days` days of the generated life from `start` into `out` (`scenarios/gen_life.py`).
fn generate_life(days: u32, start: &str, out: &std::path::Path) {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let written = std::process::Command::new("python3")
        .arg(root.join("scenarios/gen_life.py"))
        .args(["--days", &days.to_string(), "--start", start, "--out"])
        .arg(out)
        .output()
        .unwrap();
    assert!(written.status.success(), "{written:?}");
}

/// The checked-in life's setup and signals.
fn life() -> (std::path::PathBuf, Vec<String>) {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/life");
    let signals = std::fs::read_to_string(dir.join("signals.jsonl")).unwrap();
    (
        dir.join("setup.json"),
        signals.lines().map(str::to_owned).collect(),
    )
}

/// Every file a life's days hold that a run makes (its record, setup, journal, traces), by
/// day: what two lives of the same inputs must share byte for byte.
fn days_of(data: &std::path::Path) -> std::collections::BTreeMap<String, Vec<(String, String)>> {
    let mut days = std::collections::BTreeMap::new();
    for day in std::fs::read_dir(data.join("days")).unwrap() {
        let day = day.unwrap();
        let name = day.file_name().to_string_lossy().into_owned();
        // A closed day's journal may hold a line more (taken before a kill, then carried);
        // its record is what counts.
        let files = ["day.json", "live.json", "signals.jsonl", "traces.jsonl"]
            .iter()
            .map(|file| {
                let text = std::fs::read_to_string(day.path().join(file)).unwrap_or_default();
                (file.to_string(), text)
            })
            .collect();
        days.insert(name, files);
    }
    days
}

/// Three days of a life (across Berlin's autumn change) fed to `aura live --stdin --clock
/// replay`: the session closes each day at her midnight (the 25th is 25 hours long), each
/// closed day's record run by `aura run` gives that day's traces byte for byte, and a session
/// killed during a rollover (before its commit, after it, mid-day) or a retention sweep and
/// restarted, the sender sending again what had no acknowledgement, leaves the same days,
/// file for file.
#[test]
fn a_life_rolls_over_at_her_midnights_and_a_kill_in_a_rollover_loses_nothing() {
    let work = temp_dir("days-lived");
    let (setup, input) = life();
    let args = [
        "live",
        "--stdin",
        "--clock",
        "replay",
        "--seed",
        "7",
        setup.to_str().unwrap(),
    ];
    let all = input.join("\n") + "\n";
    let reference = work.join("reference");
    let output = crate::live::run(&reference, &args, all.as_bytes());
    let acks = crate::live::lines_with(&output.stdout, "ack");
    assert_eq!(acks.len(), input.len(), "every signal taken");
    assert!(crate::live::lines_with(&output.stdout, "refused").is_empty());
    let expected = days_of(&reference);
    // Her three local days, the last one open.
    assert_eq!(
        expected.keys().collect::<Vec<_>>(),
        ["2026-10-24", "2026-10-25", "2026-10-26"]
    );
    for (name, files) in &expected {
        let record = &files[0].1;
        if name == "2026-10-26" {
            assert!(record.is_empty(), "the open day has no record yet");
            continue;
        }
        let record: Value = serde_json::from_str(record).unwrap();
        // Worked out from the tz database: 24 October ends at 00:00+02:00, 22:00 UTC; the
        // 25th's last tick is 23:45 CET, after 02:00 came twice.
        let end = time(record["end"].as_str().unwrap());
        let last = match name.as_str() {
            "2026-10-24" => time("2026-10-24T21:45:00Z"),
            _ => time("2026-10-25T22:45:00Z"),
        };
        assert_eq!(end, last, "{name}");
        assert_eq!(record["unfinished"], json!(true));
        let ran = work.join(format!("run-{name}"));
        let day = reference.join("days").join(name).join("day.json");
        crate::live::run(&ran, &["run", day.to_str().unwrap(), "--seed", "7"], b"");
        assert_eq!(
            std::fs::read_to_string(ran.join("traces.jsonl")).unwrap(),
            files[3].1,
            "{name}: the record's run is the day's traces"
        );
    }
    let autumn: Value = serde_json::from_str(&expected["2026-10-25"][0].1).unwrap();
    let changes: Vec<&Value> = autumn["signals"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["kind"] == "utc_offset")
        .collect();
    assert_eq!(
        changes,
        [
            &json!({"at": "2026-10-25T02:00:00+01:00", "kind": "utc_offset",
            "data": {"utc_offset_minutes": 60, "time_zone": "Europe/Berlin"}})
        ],
        "the change the record keeps, so it replays without a time zone database"
    );
    // Killed at the first rollover's commit (before life.json is renamed, after it and before
    // its dir is synced), at the second's, and mid-day; then restarted.
    for point in [
        "life.json:write:1",
        "life.json:synced:1",
        "life.json:synced:2",
        "signals.jsonl:synced:150",
    ] {
        let data = work.join(point.replace([':', '.'], "-"));
        let acked = killed_at(&data, &args, &input, point);
        sends_the_rest(&data, &args, &input, acked, point);
        let got = days_of(&data);
        assert_eq!(
            got.keys().collect::<Vec<_>>(),
            expected.keys().collect::<Vec<_>>()
        );
        for (name, files) in &got {
            let open = name == "2026-10-26";
            for (i, (file, text)) in files.iter().enumerate() {
                if file != "signals.jsonl" || open {
                    assert!(
                        *text == expected[name][i].1,
                        "{point}: {name}/{file} differs"
                    );
                }
            }
        }
    }
    // Keeping one closed day, the 24th is deleted as the 25th closes: killed before it is
    // renamed aside, and after (aside, not yet removed), then restarted. The sweep goes on at
    // the start: the 24th is gone whole, nothing is left aside, and the days kept are the
    // days of the life that kept them all, file for file.
    let keep_one: Vec<&str> = args.iter().copied().chain(["--keep-days", "1"]).collect();
    for point in ["days/2026-10-24:write:0", "days/2026-10-24:synced:0"] {
        let data = work.join(point.replace([':', '.', '/'], "-"));
        let acked = killed_at(&data, &keep_one, &input, point);
        let aside = data.join("days/2026-10-24.deleting").exists();
        assert_eq!(aside, point.contains("synced"), "{point}: renamed aside");
        sends_the_rest(&data, &keep_one, &input, acked, point);
        let entries: Vec<String> = std::fs::read_dir(data.join("days"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        let mut entries = entries;
        entries.sort();
        assert_eq!(entries, ["2026-10-25", "2026-10-26"], "{point}");
        for (name, files) in days_of(&data) {
            for (i, (file, text)) in files.iter().enumerate() {
                if file != "signals.jsonl" || name == "2026-10-26" {
                    assert!(
                        *text == expected[&name][i].1,
                        "{point}: {name}/{file} differs"
                    );
                }
            }
        }
    }
}

/// The sender sends again what it had no acknowledgement for (`input` after its first
/// `acked`) to `aura live args` on `data`, killed at `point` before: each is acknowledged.
fn sends_the_rest(
    data: &std::path::Path,
    args: &[&str],
    input: &[String],
    acked: usize,
    point: &str,
) {
    let rest = input[acked..].join("\n") + "\n";
    let output = crate::live::run(data, args, rest.as_bytes());
    assert_eq!(
        crate::live::lines_with(&output.stdout, "ack").len(),
        input.len() - acked,
        "{point}"
    );
}

/// `aura live args` on `data` with `input` on stdin, stopped at the journal's stop point
/// `point` and killed there with SIGKILL: how many of `input` it acknowledged (in order; it
/// refused none).
pub(crate) fn killed_at(
    data: &std::path::Path,
    args: &[&str],
    input: &[String],
    point: &str,
) -> usize {
    use std::io::{BufRead, Write};
    let mut child = crate::support::aura_command(data)
        .args(args)
        .env("AURA_STOP_AT", point)
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let sent = input.join("\n") + "\n";
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(sent.as_bytes());
    });
    let stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let reader = std::thread::spawn(move || {
        let lines: Vec<String> = stdout.lines().map_while(Result::ok).collect();
        let refused: Vec<&String> = lines
            .iter()
            .filter(|l| l.starts_with("{\"refused\""))
            .collect();
        assert!(refused.is_empty(), "refused: {refused:?}");
        lines
            .iter()
            .filter(|line| line.starts_with("{\"ack\""))
            .count()
    });
    let stopped = std::io::BufReader::new(child.stderr.take().unwrap())
        .lines()
        .map_while(Result::ok)
        .any(|line| line == format!("aura: stopped at {point}"));
    child.kill().unwrap();
    child.wait().unwrap();
    writer.join().unwrap();
    let acked = reader.join().unwrap();
    assert!(stopped, "the session never reached {point}");
    acked
}

/// Where the 120-day life is stopped and killed, in order, each process resumed from where the
/// one before left its data dir (a point's ordinal counts from the process's start: `life.json`
/// is written once a rollover, and once more by the first process as the life begins; a day's
/// own files count from the day's start). Nine in a rollover: before the day's record is
/// durable, before and after the next day's setup, at each step of the commit; three mid-day.
const LIFE_KILL_POINTS: [&str; 12] = [
    "life.json:write:9",
    "signals.jsonl:synced:150",
    "life.json:synced:10",
    "day.json:write:0",
    "life.json:done:12",
    "traces.jsonl:sync:40",
    "live.json:write:0",
    "life.json:sync:15",
    "life.json:write:20",
    "signals.jsonl:write:100",
    "day.json:synced:0",
    "life.json:synced:15",
];

/// The journal's lines of a day dir, parsed.
fn journal_of(day: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(day.join("signals.jsonl"))
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

/// 120 days of the generated life (33,643 signals: two months at home, the trip to New York
/// with its own DST change, Berlin's autumn change, Christmas) through `aura live --stdin
/// --clock replay`, killed with SIGKILL at twelve moments (nine in a rollover) and restarted
/// each time, the sender sending again what had no acknowledgement: no input is refused,
/// every acknowledged signal is in exactly one day (in the journal of the day its record
/// holds it, once), each day a record of its own whose `aura run` gives that day's traces
/// byte for byte, and what a day's memory carries is never older than its horizon.
#[test]
fn a_hundred_and_twenty_days_killed_twelve_times_leave_each_day_a_record_aura_run_repeats() {
    let work = temp_dir("days-months");
    let life = work.join("life");
    generate_life(120, "2026-10-05", &life);
    let input: Vec<String> = std::fs::read_to_string(life.join("signals.jsonl"))
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    let setup = life.join("setup.json");
    let args = [
        "live",
        "--stdin",
        "--clock",
        "replay",
        "--seed",
        "7",
        "--keep-days",
        "150",
        setup.to_str().unwrap(),
    ];
    let data = work.join("data");
    let mut acked = 0;
    for point in LIFE_KILL_POINTS {
        acked += killed_at(&data, &args, &input[acked..], point);
    }
    let rest = input[acked..].join("\n") + "\n";
    let output = crate::live::run(&data, &args, rest.as_bytes());
    assert_eq!(
        crate::live::lines_with(&output.stdout, "ack").len(),
        input.len() - acked
    );
    assert!(crate::live::lines_with(&output.stdout, "refused").is_empty());

    // Her days, by local date: 5 October to 1 February, the last one open.
    let names = aura_day::live::life::days(&data).unwrap();
    let first = time::macros::date!(2026 - 10 - 05);
    let dates: Vec<String> = (0..120)
        .map(|n| (first + time::Duration::days(n)).to_string())
        .collect();
    assert_eq!(names, dates);
    let open = aura_day::live::life::open_day(&data).unwrap().unwrap();
    assert_eq!(open, dates[119]);

    // Every signal sent is in exactly one day: in a closed day's journal up to its record's
    // end (what came after it went on to the next day's), or in the open day's.
    let mut taken: std::collections::BTreeMap<String, usize> = Default::default();
    let mut records = Vec::new();
    for name in &names {
        let day = aura_day::live::life::day_dir(&data, name);
        let journal = journal_of(&day);
        let applied: Vec<&Value> = match *name == open {
            true => journal.iter().collect(),
            false => {
                let record: Value =
                    serde_json::from_str(&std::fs::read_to_string(day.join("day.json")).unwrap())
                        .unwrap();
                let end = time(record["end"].as_str().unwrap());
                let applied: Vec<&Value> = journal
                    .iter()
                    .filter(|line| time(line["at"].as_str().unwrap()) <= end)
                    .collect();
                assert_eq!(
                    applied.len(),
                    record["signals"].as_array().unwrap().len(),
                    "{name}: the record holds what its journal applied"
                );
                records.push((name.clone(), day, record));
                applied
            }
        };
        for line in applied {
            *taken
                .entry(line["id"].as_str().unwrap().to_owned())
                .or_default() += 1;
        }
    }
    for line in &input {
        let id = serde_json::from_str::<Value>(line).unwrap()["id"]
            .as_str()
            .unwrap()
            .to_owned();
        assert_eq!(taken.remove(&id), Some(1), "{id}");
    }
    // What is left is the time zone's own changes, journaled by the session.
    assert!(
        taken.keys().all(|id| id.starts_with("time_zone:")),
        "{taken:?}"
    );

    // What a day carries of its memory is at most a month old.
    for (name, _, record) in &records {
        let start = time(record["start"].as_str().unwrap());
        let horizon = start
            - time::Duration::days(aura_contract::limits::MEMORY_HORIZON_DAYS)
            - time::Duration::days(1);
        // The first day begins from the setup's world, with no memory.
        let Some(memory) = record["initial"].get("memory") else {
            assert_eq!(name, "2026-10-05");
            continue;
        };
        for kind in ["shown", "held", "answered"] {
            for (key, at) in memory[kind].as_object().unwrap() {
                assert!(
                    time(at.as_str().unwrap()) >= horizon,
                    "{name}: {kind} {key} at {at}"
                );
            }
        }
    }

    // Each closed day's record through `aura run`: that day's traces, byte for byte (two at a
    // time, one a core).
    let next = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some((name, day, _)) = records.get(i) else {
                        return;
                    };
                    let ran = work.join(format!("run-{name}"));
                    let record = day.join("day.json");
                    crate::live::run(&ran, &["run", record.to_str().unwrap(), "--seed", "7"], b"");
                    let replayed = std::fs::read_to_string(ran.join("traces.jsonl")).unwrap();
                    let lived = std::fs::read_to_string(day.join("traces.jsonl")).unwrap();
                    assert!(
                        replayed == lived,
                        "{name}: the record's run is not the day's traces"
                    );
                    std::fs::remove_dir_all(&ran).unwrap();
                }
            });
        }
    });
}
