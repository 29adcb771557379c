//! A life that never refuses (issue 73), as a user meets it: a flood of readings on the
//! machine's clock never keeps an urgent message from a VIP waiting for a scheduled tick, a
//! backlog goes in as a batch (acknowledged again, applied once), each day is named by the
//! person's date where they are whichever way they fly, and a signal keeps its one
//! acknowledgement across a midnight and a kill.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use crate::live::{http, lines_with, listening, run};
use crate::support::temp_dir;

fn time(text: &str) -> OffsetDateTime {
    OffsetDateTime::parse(text, &Rfc3339).unwrap()
}

/// The shipped live setup (Lena's profile, every 15 minutes, ticking at once on messages).
fn live_setup() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/live.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// A live.v1 of Lena's profile starting at `start` in `zone`, written into `dir`.
fn setup_in(dir: &Path, start: &str, zone: &str, tick_minutes: i64) -> PathBuf {
    let mut setup = live_setup();
    let start_at = time(start);
    setup["start"] = json!(start);
    setup["time_zone"] = json!(zone);
    setup["tick_minutes"] = json!(tick_minutes);
    setup["utc_offset_minutes"] = json!(start_at.offset().whole_minutes());
    std::fs::create_dir_all(dir).unwrap();
    let path = dir.join("setup.json");
    std::fs::write(&path, setup.to_string()).unwrap();
    path
}

/// The data dir's days, in the life's order.
fn day_names(data: &Path) -> Vec<String> {
    aura_day::live::life::days(data).unwrap()
}

/// A reading at `at` with `id`.
fn reading(at: &str, id: &str) -> String {
    json!({"at": at, "id": id, "kind": "reading", "data": {"hrv_ms": 50}}).to_string()
}

/// An offset change at `at`: the person is in `zone` (`minutes` east of UTC) from then on.
fn landing(at: &str, zone: &str, minutes: i64) -> String {
    json!({"at": at, "id": format!("landed-{at}"), "kind": "utc_offset",
        "data": {"utc_offset_minutes": minutes, "time_zone": zone}})
    .to_string()
}

/// Each closed day of `data` run by `aura run` from its record gives its traces byte for
/// byte.
fn closed_days_replay(work: &Path, data: &Path, what: &str) {
    let names = day_names(data);
    let (closed, _open) = names.split_at(names.len() - 1);
    for name in closed {
        let dir = data.join("days").join(name);
        let ran = work.join(format!("ran-{what}-{name}"));
        let record = dir.join("day.json");
        run(&ran, &["run", record.to_str().unwrap(), "--seed", "7"], b"");
        assert!(
            std::fs::read_to_string(ran.join("traces.jsonl")).unwrap()
                == std::fs::read_to_string(dir.join("traces.jsonl")).unwrap(),
            "{what}: {name}'s record runs to its traces"
        );
    }
}

/// A flight: its name, the life's start and time zone, what is sent, the days expected.
type Flight = (
    &'static str,
    &'static str,
    &'static str,
    Vec<String>,
    [&'static str; 3],
);

/// Flights across the date line both ways and landings a minute either side of local
/// midnight, fed on stdin at a replayed clock: each day's directory is the person's date
/// where they are (`.N` never: no day here fills), `--export --day` finds each, and each
/// closed day's record runs to its traces byte for byte. Worked out by hand from the tz
/// database's offsets:
/// - Los Angeles to Tokyo, landing 15:20 on the 11th in Tokyo (22:20 on the 10th in Los
///   Angeles): the 10th ends at the landing, the 11th is Tokyo's until its midnight;
/// - Tokyo to Los Angeles, landing 10:00 on the 11th in Los Angeles, after Tokyo's midnight
///   (the 12th had begun): the date comes back, so the 12th goes on to Los Angeles' midnight
///   of the 12th and the next day is the 13th;
/// - Los Angeles to New York landing 23:59 on the 10th: the 10th ends a minute later, at New
///   York's midnight; landing 00:01 on the 11th: it ends at the landing;
/// - New York to Los Angeles landing 23:59 on the 10th, New York's midnight behind: the 11th
///   (begun at New York's midnight) goes on to Los Angeles' midnight of the 11th.
#[test]
fn each_day_is_named_by_the_person_s_date_where_they_are_whichever_way_they_fly() {
    let work = temp_dir("never-refuses-flights");
    let flights: [Flight; 5] = [
        (
            "to-tokyo",
            "2026-11-10T00:00:00-08:00",
            "America/Los_Angeles",
            vec![
                reading("2026-11-10T10:00:00-08:00", "r1"),
                landing("2026-11-11T15:20:00+09:00", "Asia/Tokyo", 540),
                reading("2026-11-11T15:25:00+09:00", "r2"),
                reading("2026-11-12T09:00:00+09:00", "r3"),
            ],
            ["2026-11-10", "2026-11-11", "2026-11-12"],
        ),
        (
            "to-los-angeles",
            "2026-11-11T00:00:00+09:00",
            "Asia/Tokyo",
            vec![
                reading("2026-11-11T10:00:00+09:00", "r1"),
                landing("2026-11-11T10:00:00-08:00", "America/Los_Angeles", -480),
                reading("2026-11-11T20:00:00-08:00", "r2"),
                reading("2026-11-12T12:00:00-08:00", "r3"),
                reading("2026-11-13T09:00:00-08:00", "r4"),
            ],
            ["2026-11-11", "2026-11-12", "2026-11-13"],
        ),
        (
            "to-new-york-23-59",
            "2026-11-10T00:00:00-08:00",
            "America/Los_Angeles",
            vec![
                reading("2026-11-10T10:00:00-08:00", "r1"),
                landing("2026-11-10T23:59:00-05:00", "America/New_York", -300),
                reading("2026-11-11T08:00:00-05:00", "r2"),
            ],
            ["2026-11-10", "2026-11-11", ""],
        ),
        (
            "to-new-york-00-01",
            "2026-11-10T00:00:00-08:00",
            "America/Los_Angeles",
            vec![
                reading("2026-11-10T10:00:00-08:00", "r1"),
                landing("2026-11-11T00:01:00-05:00", "America/New_York", -300),
                reading("2026-11-11T08:00:00-05:00", "r2"),
            ],
            ["2026-11-10", "2026-11-11", ""],
        ),
        (
            "to-los-angeles-23-59",
            "2026-11-10T00:00:00-05:00",
            "America/New_York",
            vec![
                reading("2026-11-10T10:00:00-05:00", "r1"),
                landing("2026-11-10T23:59:00-08:00", "America/Los_Angeles", -480),
                reading("2026-11-11T12:00:00-08:00", "r2"),
                reading("2026-11-12T09:00:00-08:00", "r3"),
            ],
            ["2026-11-10", "2026-11-11", "2026-11-12"],
        ),
    ];
    for (what, start, zone, input, expected) in flights {
        let setup = setup_in(&work.join(what), start, zone, 60);
        let data = work.join(what).join("data");
        let args = [
            "live",
            "--stdin",
            "--clock",
            "replay",
            "--seed",
            "7",
            setup.to_str().unwrap(),
        ];
        let output = run(&data, &args, (input.join("\n") + "\n").as_bytes());
        assert_eq!(
            lines_with(&output.stdout, "ack").len(),
            input.len(),
            "{what}"
        );
        let expected: Vec<&str> = expected.into_iter().filter(|d| !d.is_empty()).collect();
        assert_eq!(day_names(&data), expected, "{what}");
        // Each kept day is found by its name.
        for name in &expected {
            let out = work.join(what).join(format!("{name}.json"));
            run(
                &data,
                &["live", "--export", out.to_str().unwrap(), "--day", name],
                b"",
            );
            assert!(out.exists(), "{what}: --export --day {name}");
        }
        closed_days_replay(&work, &data, what);
    }
}

/// A signal stamped after the day's last tick is carried into the next day; sent again, it is
/// that acknowledgement again, the same `seq` and `at`, across the midnight and across a new
/// process on the same data dir; the life's numbering goes on without a gap.
#[test]
fn a_signal_keeps_its_acknowledgement_across_midnight_and_a_kill() {
    let work = temp_dir("never-refuses-acks");
    let setup = setup_in(
        &work,
        "2026-10-20T00:00:00-07:00",
        "America/Los_Angeles",
        15,
    );
    let data = work.join("data");
    let args = [
        "live",
        "--stdin",
        "--clock",
        "replay",
        "--seed",
        "7",
        setup.to_str().unwrap(),
    ];
    let a = reading("2026-10-20T23:50:00-07:00", "a");
    let b = reading("2026-10-21T00:05:00-07:00", "b");
    let c = reading("2026-10-21T09:00:00-07:00", "c");
    let input = [a.clone(), b.clone(), a.clone(), b.clone(), c].join("\n") + "\n";
    let acks = lines_with(&run(&data, &args, input.as_bytes()).stdout, "ack");
    let first_a = json!({"seq": 0, "at": "2026-10-20T23:50:00-07:00", "kind": "reading"});
    let first_b = json!({"seq": 1, "at": "2026-10-21T00:05:00-07:00", "kind": "reading"});
    let again = |ack: &Value| {
        let mut ack = ack.clone();
        ack["again"] = json!(true);
        ack
    };
    assert_eq!(
        acks,
        [
            first_a.clone(),
            first_b.clone(),
            again(&first_a),
            again(&first_b),
            json!({"seq": 2, "at": "2026-10-21T09:00:00-07:00", "kind": "reading"}),
        ]
    );
    // The 20th closed at her midnight and `a` went on into the 21st.
    assert_eq!(day_names(&data), ["2026-10-20", "2026-10-21"]);
    // A new process on the data dir (the one before ended with its input): the same
    // acknowledgements, and the next new signal is the 3rd.
    let d = reading("2026-10-21T10:00:00-07:00", "d");
    let input = [a.clone(), b.clone(), d].join("\n") + "\n";
    let acks = lines_with(&run(&data, &args, input.as_bytes()).stdout, "ack");
    assert_eq!(
        acks,
        [
            again(&first_a),
            again(&first_b),
            json!({"seq": 3, "at": "2026-10-21T10:00:00-07:00", "kind": "reading"}),
        ]
    );
    // Killed (SIGKILL) as the rollover commits, then started again and sent everything again:
    // each signal's acknowledgement is the one it had, whichever process gave it.
    let killed = work.join("killed");
    let input = [
        a.clone(),
        b.clone(),
        reading("2026-10-21T09:00:00-07:00", "c"),
    ]
    .to_vec();
    let acked = crate::days::killed_at(&killed, &args, &input, "life.json:synced:1");
    assert!(acked >= 1, "a was acknowledged before the rollover");
    let again_input = [input.clone(), input.clone()].concat().join("\n") + "\n";
    let acks = lines_with(&run(&killed, &args, again_input.as_bytes()).stdout, "ack");
    let without_again = |ack: &Value| {
        let mut ack = ack.clone();
        ack.as_object_mut().unwrap().remove("again");
        ack
    };
    let first_c = json!({"seq": 2, "at": "2026-10-21T09:00:00-07:00", "kind": "reading"});
    let expected = [&first_a, &first_b, &first_c, &first_a, &first_b, &first_c];
    for (ack, expected) in acks.iter().zip(expected) {
        assert_eq!(without_again(ack), *expected);
    }
    assert_eq!(acks.len(), 6);
    assert!(acks[3..].iter().all(|ack| ack["again"] == true));
}

/// One HTTP request whose body is `body`: the status and the body as JSON.
fn post(address: &str, content_type: &str, body: &[u8]) -> (u16, Value) {
    let (status, body) = http(
        address,
        "POST",
        "/signals",
        &[("Content-Type", content_type)],
        body,
    );
    (
        status,
        serde_json::from_slice(&body)
            .unwrap_or_else(|e| panic!("{status}: {e}: {}", String::from_utf8_lossy(&body))),
    )
}

/// Posts `body` until it is not told to retry (429, after the time it names).
fn post_until_taken(address: &str, content_type: &str, body: &[u8]) -> Value {
    loop {
        let (status, answer) = post(address, content_type, body);
        if status == 429 {
            let wait_ms = answer["refused"]["recovery"]["retry_after_ms"]
                .as_u64()
                .unwrap();
            std::thread::sleep(std::time::Duration::from_millis(wait_ms));
            continue;
        }
        assert_eq!(status, 200, "{answer}");
        return answer;
    }
}

/// `aura live` on the machine's clock (the shipped setup: every 15 minutes), listening on a
/// free port: the process, where it listens, and its stderr (kept open).
fn wall_session(
    data: &Path,
    extra: &[&str],
) -> (std::process::Child, String, impl Iterator<Item = String>) {
    let setup = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/live.json");
    let mut child = crate::support::aura_command(data)
        .args([
            "live",
            setup.to_str().unwrap(),
            "--seed",
            "7",
            "--listen",
            "127.0.0.1:0",
        ])
        .args(extra)
        .spawn()
        .unwrap();
    let (address, said) = listening(&mut child);
    (child, address, said)
}

/// Stops the session with SIGTERM, as a service manager does: it ends cleanly.
fn stop(mut child: std::process::Child) {
    let stdin = child.stdin.take().unwrap();
    crate::live::sigterm_with_stdin_open(child, stdin);
}

/// Follows `GET /decisions` of the session at `address`: each decision as it comes.
fn follow_decisions(address: &str) -> std::sync::mpsc::Receiver<Value> {
    let (sender, receiver) = std::sync::mpsc::channel();
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    write!(
        stream,
        "GET /decisions HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    std::thread::spawn(move || {
        // Chunked: each decision is a JSON line of its own between the chunk sizes.
        for line in BufReader::new(stream).lines().map_while(Result::ok) {
            if line.starts_with('{')
                && let Ok(value) = serde_json::from_str::<Value>(&line)
                && sender.send(value["decision"].clone()).is_err()
            {
                return;
            }
        }
    });
    receiver
}

/// The first decision of `decisions` whose trace names `id` (its message), waiting for it
/// (a test's bound, not a figure: five minutes).
fn decision_naming(decisions: &std::sync::mpsc::Receiver<Value>, id: &str) -> Value {
    loop {
        let decision = decisions
            .recv_timeout(std::time::Duration::from_secs(300))
            .unwrap_or_else(|_| panic!("{id} is decided"));
        if decision["trace"].to_string().contains(id) {
            return decision;
        }
    }
}

/// `count` readings as NDJSON, the `from`th on, stamped back from `now` 3 s apart (a watch's
/// backlog after a day offline), each with an id.
fn backlog(from: usize, count: usize, now: OffsetDateTime, total: usize) -> String {
    let offset = time::UtcOffset::from_whole_seconds(3600).unwrap();
    (from..from + count)
        .map(|i| {
            let at = (now - time::Duration::seconds(3 * (total - i) as i64)).to_offset(offset);
            let at = at.replace_nanosecond(0).unwrap().format(&Rfc3339).unwrap();
            let hrv = 30 + i % 50;
            format!(
                "{{\"at\":\"{at}\",\"id\":\"r-{i}\",\"kind\":\"reading\",\"data\":{{\"hrv_ms\":{hrv}}}}}\n"
            )
        })
        .collect()
}

/// A VIP's urgent message sent now: what `aura live` must decide at once.
fn urgent(id: &str) -> String {
    let offset = time::UtcOffset::from_whole_seconds(3600).unwrap();
    let now = OffsetDateTime::now_utc()
        .to_offset(offset)
        .replace_nanosecond(0)
        .unwrap();
    json!({"id": id, "kind": "message", "data": {"id": id, "thread_id": format!("th-{id}"),
        "received_at": now.format(&Rfc3339).unwrap(),
        "sender": "Markus Vogel <markus.vogel@halden-systems.de>",
        "subject": "URGENT: LumenPay settlement batch failed overnight",
        "body": "Lena, the settlement batch failed and payouts are stuck. Bridge at 8:30."}})
    .to_string()
}

/// On the machine's clock, every 15 minutes, 20,000 readings of a watch's backlog posted in
/// batches as fast as the session takes them: after 10,000 and after 20,000, a VIP's urgent
/// message is decided by a tick of its own (within a second of its time, not at a scheduled
/// tick), nothing is refused, the day closes at once each time it fills (5,000) and goes on
/// in its next part, and each closed part's record runs to its traces byte for byte (its
/// closing tick off the grid included).
#[test]
fn a_flood_of_readings_on_the_wall_clock_never_keeps_the_urgent_mail_waiting() {
    let work = temp_dir("never-refuses-flood");
    let data = work.join("data");
    // One day kept: the parts of today's date are that one day, all kept.
    let (child, address, _said) = wall_session(&data, &["--keep-days", "1"]);
    let decisions = follow_decisions(&address);
    let total = 20_000;
    let now = OffsetDateTime::now_utc();
    let mut acked = 0;
    for round in 0..2 {
        for part in 0..5 {
            let from = round * 10_000 + part * 2_000;
            let body = backlog(from, 2_000, now, total);
            let answer = post_until_taken(&address, "application/x-ndjson", body.as_bytes());
            assert_eq!(answer["refused"], 0, "{}", answer["results"]);
            assert_eq!(answer["acked"], 2_000);
            acked += 2_000;
        }
        assert_eq!(acked, (round + 1) * 10_000);
        let id = format!("m-flood-{round}");
        let posted = std::time::Instant::now();
        let answer = post_until_taken(&address, "application/json", urgent(&id).as_bytes());
        let at = time(answer["ack"]["at"].as_str().unwrap());
        let decision = decision_naming(&decisions, &id);
        let waited = posted.elapsed();
        let decided_at = time(decision["at"].as_str().unwrap());
        eprintln!("urgent {id}: decided {waited:?} after its POST, at {decided_at}");
        assert!(
            decided_at >= at && decided_at - at < time::Duration::seconds(1),
            "{id} at {at} decided at {decided_at}: by its own tick"
        );
    }
    stop(child);
    // Four times full: four parts closed by their own closing tick (a midnight may add one).
    let names = day_names(&data);
    let parts = names.iter().filter(|name| name.contains('.')).count();
    assert!(parts >= 4, "{names:?}");
    for name in &names[..names.len() - 1] {
        let record: Value = serde_json::from_str(
            &std::fs::read_to_string(data.join("days").join(name).join("day.json")).unwrap(),
        )
        .unwrap();
        let signals = record["signals"].as_array().unwrap().len();
        assert!(
            signals <= aura_contract::limits::DAY_SIGNALS_MAX + 2,
            "{name}: {signals} signals"
        );
    }
    closed_days_replay(&work, &data, "flood");
}

/// Readings from a watch whose clock runs ahead (stamped 2 s after the machine's now), more
/// than a day holds: the day fills and closes at once, and the part after it, which begins
/// full of what was stamped after that closing tick, closes when the latest of them is due,
/// not at its own start again and again (before, the session spun through empty parts and
/// answered nothing). An urgent message is decided by its own tick all the while.
#[test]
fn readings_stamped_ahead_of_the_clock_fill_no_day_for_ever() {
    let work = temp_dir("never-refuses-ahead");
    let data = work.join("data");
    let (child, address, _said) = wall_session(&data, &[]);
    let decisions = follow_decisions(&address);
    let offset = time::UtcOffset::from_whole_seconds(3600).unwrap();
    let ahead = (OffsetDateTime::now_utc() + time::Duration::seconds(2)).to_offset(offset);
    for part in 0..4 {
        // Over a second and a half from 2 s ahead of the machine's now.
        let body: String = (part * 2_000..(part + 1) * 2_000)
            .map(|i| {
                let at = ahead + time::Duration::milliseconds((i % 1_500) as i64);
                let at = at.format(&Rfc3339).unwrap();
                format!("{{\"at\":\"{at}\",\"id\":\"a-{i}\",\"kind\":\"reading\",\"data\":{{\"hrv_ms\":44}}}}\n")
            })
            .collect();
        let answer = post_until_taken(&address, "application/x-ndjson", body.as_bytes());
        assert_eq!(answer["acked"], 2_000, "{}", answer["results"][0]);
    }
    let id = "m-ahead";
    let answer = post_until_taken(&address, "application/json", urgent(id).as_bytes());
    let at = time(answer["ack"]["at"].as_str().unwrap());
    let decision = decision_naming(&decisions, id);
    let decided_at = time(decision["at"].as_str().unwrap());
    assert!(
        decided_at - at < time::Duration::seconds(1),
        "{decided_at} {at}"
    );
    // Past the readings' time, their part closed too: a handful of parts, not thousands.
    std::thread::sleep(std::time::Duration::from_secs(5));
    stop(child);
    let names = day_names(&data);
    assert!((3..=5).contains(&names.len()), "{names:?}");
    closed_days_replay(&work, &data, "ahead");
}

/// A week of a watch's readings (2,016, each with an id) posted as one NDJSON batch, then the
/// same batch again: each acknowledged, then acknowledged again (the same `seq` and `at`),
/// taken once. A JSON array batch answers each signal on its own (a malformed one, one with a
/// duplicate key, one too large, refused and quarantined, the rest taken); a batch past the
/// bound is refused whole (413), and so is one that is not a batch.
#[test]
fn a_backlog_goes_in_as_a_batch_and_again_is_taken_once() {
    let work = temp_dir("never-refuses-batch");
    let data = work.join("data");
    let (child, address, _said) = wall_session(&data, &[]);
    let now = OffsetDateTime::now_utc();
    let week = backlog(0, 2_016, now, 2_016);
    let first = post_until_taken(&address, "application/x-ndjson", week.as_bytes());
    assert_eq!(
        (first["acked"].clone(), first["refused"].clone()),
        (json!(2_016), json!(0))
    );
    let results = first["results"].as_array().unwrap();
    for (seq, result) in results.iter().enumerate() {
        assert_eq!(result["ack"]["seq"], seq);
        assert_eq!(result["ack"].get("again"), None);
    }
    let again = post_until_taken(&address, "application/x-ndjson", week.as_bytes());
    for (before, after) in results.iter().zip(again["results"].as_array().unwrap()) {
        let mut expected = before["ack"].clone();
        expected["again"] = json!(true);
        assert_eq!(after["ack"], expected);
    }
    // As a JSON array: one answer each, in order.
    let big = "x".repeat(aura_contract::limits::LIVE_SIGNAL_BYTES_MAX);
    let array = format!(
        "[{}, {{\"kind\":\"reading\",\"data\":{{\"hrv_ms\":\"x\"}}}}, {{\"kind\":\"reading\",\"kind\":\"reading\",\"data\":{{}}}}, {{\"kind\":\"note\",\"data\":\"{big}\"}}, {}]",
        reading("2026-01-01T00:00:00+01:00", "old"),
        json!({"kind": "reading", "data": {"hrv_ms": 51}}),
    );
    let answer = post_until_taken(&address, "application/json", array.as_bytes());
    let kinds: Vec<Value> = answer["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|result| match result.get("ack") {
            Some(_) => json!("ack"),
            None => result["refused"]["kind"].clone(),
        })
        .collect();
    assert_eq!(
        kinds,
        ["ack", "schema_error", "duplicate_key", "too_large", "ack"]
            .map(|k| json!(k))
            .to_vec(),
        "{answer}"
    );
    // Numbered on from the week, without a gap.
    assert_eq!(answer["results"][0]["ack"]["seq"], 2_016);
    assert_eq!(answer["results"][4]["ack"]["seq"], 2_017);
    let too_many = backlog(
        0,
        aura_contract::limits::LIVE_BATCH_SIGNALS_MAX + 1,
        now,
        5_000,
    );
    let (status, refused) = post(&address, "application/x-ndjson", too_many.as_bytes());
    assert_eq!(status, 413, "{refused}");
    let (status, refused) = post(&address, "application/json", b"[1, 2");
    assert_eq!(status, 400, "{refused}");
    assert_eq!(refused["refused"]["kind"], "malformed_json");
    stop(child);
    // The week once in the journal, and the two the array added.
    let mut journal_lines = 0;
    for name in day_names(&data) {
        let text =
            std::fs::read_to_string(data.join("days").join(name).join("signals.jsonl")).unwrap();
        journal_lines += text.lines().count();
    }
    assert_eq!(journal_lines, 2_016 + 2);
    // The array's three refusals and the two batches refused whole, each quarantined.
    let refused = crate::support::quarantine_lines(&data);
    assert_eq!(refused.len(), 3 + 2);
}
