//! The hostile zoo: each guest of tests/guests, one misbehaviour per component, posing as the
//! calendar agent next to a healthy finance agent in the same host. For each: the exact typed
//! error within the deadline (plus the backstop margin), the quarantine record (every line
//! parses and holds the reason and the call_id), and the healthy agent still answering.

use std::path::{Path, PathBuf};

use aura_contract::limits::{
    EPOCH_BACKSTOP_MARGIN_MS, FUEL_PER_MS_DEFAULT, HOST_CALLS_PER_CALL_MAX,
};
use serde_json::{Value, json};

use crate::support::{
    envelope, guest_path, plugins_dir, plugins_dir_of, quarantine_lines, temp_dir,
};

/// A plugins dir serving `guest` as calendar and the real finance agent.
fn zoo_plugins(guest: &str) -> PathBuf {
    plugins_dir_of(
        &format!("zoo-{guest}"),
        &[
            ("calendar", guest_path(guest)),
            ("finance", plugins_dir().join("finance.wasm")),
        ],
    )
}

struct Zoo {
    host: aura_host::Host,
    data: PathBuf,
}

impl Zoo {
    async fn open(guest: &str) -> Self {
        let plugins = zoo_plugins(guest);
        let data = temp_dir(&format!("zoo-data-{guest}"));
        let host = aura_host::Host::open(&crate::support::config(&plugins, &data))
            .await
            .unwrap();
        assert!(
            host.load_failures().is_empty(),
            "{:?}",
            host.load_failures()
        );
        Self { host, data }
    }

    /// Calls the hostile calendar with `deadline_ms`; returns the refusal and how long it took.
    async fn provoke(
        &self,
        call_id: &str,
        deadline_ms: u64,
    ) -> (aura_host::Refused, std::time::Duration) {
        let mut call = envelope(
            call_id,
            "calendar",
            "detect_conflicts",
            json!({"events": []}),
        );
        call["deadline_ms"] = json!(deadline_ms);
        let started = std::time::Instant::now();
        let refused = self
            .host
            .dispatch(&call.to_string())
            .await
            .expect_err(call_id);
        (refused, started.elapsed())
    }

    /// The healthy agent in the same host still answers.
    async fn healthy_still_answers(&self) {
        let call = envelope(
            "t_healthy999",
            "finance",
            "categorize_transactions",
            json!({"transactions": []}),
        );
        let result = self
            .host
            .dispatch(&call.to_string())
            .await
            .expect("healthy call");
        assert!(result.ok, "{result:?}");
    }

    /// Every quarantine line parses and carries a reason and a call_id (or null for an
    /// envelope that had none); returns them.
    fn quarantine(&self) -> Vec<Value> {
        let lines = quarantine_lines(&self.data);
        for line in &lines {
            assert!(!line["reason"].as_str().unwrap().is_empty());
            assert!(line["kind"].is_string());
            assert!(line.get("call_id").is_some());
        }
        lines
    }
}

fn assert_within_backstop(elapsed: std::time::Duration, deadline_ms: u64) {
    // Not a speed assertion: the promise under test is that a call never outlives its
    // deadline plus the backstop margin (with slack for a loaded CI machine's scheduling).
    const SCHEDULING_SLACK_MS: u64 = 2_000;
    let bound = deadline_ms + EPOCH_BACKSTOP_MARGIN_MS + SCHEDULING_SLACK_MS;
    assert!(
        elapsed.as_millis() < u128::from(bound),
        "took {elapsed:?}, bound {bound} ms"
    );
}

async fn expect_kind(guest: &str, call_id: &str, deadline_ms: u64, kind: &str) -> Zoo {
    let zoo = Zoo::open(guest).await;
    let (refused, elapsed) = zoo.provoke(call_id, deadline_ms).await;
    assert_eq!(refused.error.kind(), kind, "{guest}: {}", refused.error);
    assert_within_backstop(elapsed, deadline_ms);
    let lines = zoo.quarantine();
    let last = lines.last().expect("a quarantine record");
    assert_eq!(last["kind"], kind);
    assert_eq!(last["call_id"], call_id);
    zoo.healthy_still_answers().await;
    zoo
}

#[tokio::test]
async fn a_stack_overflow_is_its_own_error() {
    expect_kind("recurse", "t_recurse001", 1000, "stack_overflow").await;
}

#[tokio::test]
async fn unbounded_memory_growth_hits_the_memory_limit() {
    let zoo = expect_kind("grow", "t_grow000001", 1000, "memory_limit").await;
    // The calendar's catalogue limit, the phone-sized default.
    let reason = zoo.quarantine()[0]["reason"].as_str().unwrap().to_owned();
    let limit = aura_contract::catalogue::agent("calendar")
        .unwrap()
        .memory_bytes_max;
    assert_eq!(limit, aura_contract::limits::MEMORY_BYTES_MAX);
    assert!(reason.contains(&format!("exceeds {limit}")), "{reason}");
}

#[tokio::test]
async fn a_100_mib_answer_cannot_even_be_built() {
    // The guest's memory is capped well below 100 MiB, so it fails allocating the string.
    expect_kind("huge", "t_huge000001", 1000, "memory_limit").await;
}

#[tokio::test]
async fn busy_waiting_on_the_clock_is_stopped_by_fuel_deterministically() {
    let zoo = expect_kind("clockspin", "t_clockspn01", 200, "deadline_exceeded").await;
    let (again, _) = zoo.provoke("t_clockspn02", 200).await;
    assert_eq!(again.error.fuel_used(), 200 * FUEL_PER_MS_DEFAULT);
}

#[tokio::test]
async fn sleeping_in_an_import_is_stopped_by_the_wall_clock_backstop() {
    let zoo = expect_kind("sleeper", "t_sleeper001", 50, "wall_clock_exceeded").await;
    drop(zoo);
}

/// The backstop counts a call's served time, not its waits for a core: a call that yields
/// (every FUEL_YIELD_INTERVAL of fuel) while another task holds the executor's only thread for
/// longer than the call's deadline and margin still answers, as it would on an idle machine.
/// Wall-clock time made a loaded fleet host record a tick's call as failed where the host that
/// replayed the journal ran it, and the person's decisions could no longer be replayed.
#[tokio::test(flavor = "current_thread")]
async fn a_call_that_waited_for_a_core_past_its_backstop_still_answers() {
    use aura_contract::limits::FUEL_YIELD_INTERVAL;
    let data = temp_dir("zoo-starved");
    let host = aura_host::Host::open(&crate::support::config(plugins_dir(), &data))
        .await
        .unwrap();
    // 120 events, an hour apart: well over two yield intervals of work, far under the fuel
    // of a 100 ms deadline.
    let events: Vec<Value> = (0..120)
        .map(|i| {
            json!({"id": format!("e{i}"), "title": "t",
                "start": format!("2026-11-{:02}T{:02}:00:00Z", 1 + i / 24, i % 24),
                "end": format!("2026-11-{:02}T{:02}:30:00Z", 1 + i / 24, i % 24)})
        })
        .collect();
    let mut call = envelope(
        "t_starved001",
        "calendar",
        "detect_conflicts",
        json!({ "events": events }),
    );
    let deadline_ms = 100;
    call["deadline_ms"] = json!(deadline_ms);
    let held_ms = 3 * (deadline_ms + EPOCH_BACKSTOP_MARGIN_MS);
    let text = call.to_string();
    let (answer, ()) = tokio::join!(host.dispatch(&text), async {
        // Past the call's first yields, then the thread is held.
        for _ in 0..2 {
            tokio::task::yield_now().await;
        }
        std::thread::sleep(std::time::Duration::from_millis(held_ms));
    });
    let answer = answer.unwrap_or_else(|refused| panic!("refused: {:?}", refused.error));
    assert!(answer.ok, "{answer:?}");
    assert!(
        answer.fuel_used > 2 * FUEL_YIELD_INTERVAL,
        "the call must yield to be starved: {} fuel",
        answer.fuel_used
    );
    assert!(quarantine_lines(&data).is_empty());
}

#[tokio::test]
async fn a_flood_of_malformed_host_calls_ends_the_call() {
    let zoo = expect_kind("flood", "t_flood00001", 1000, "import_limit").await;
    let lines = zoo.quarantine();
    // Each malformed host call was refused and quarantined, up to the bound, each under the
    // id the host gave it (the n-th host call of t_flood00001); then the call.
    assert_eq!(lines.len(), HOST_CALLS_PER_CALL_MAX as usize + 1);
    for (n, line) in lines[..HOST_CALLS_PER_CALL_MAX as usize].iter().enumerate() {
        assert_eq!(line["kind"], "malformed_json");
        let own =
            aura_contract::envelope::nested_call_id(Some("t_flood00001"), "calendar", n as u32 + 1);
        assert_eq!(line["call_id"], own.as_str());
    }
}

#[tokio::test]
async fn a_host_call_to_a_tool_outside_the_catalogue_is_refused_to_the_guest() {
    let zoo = Zoo::open("callunknown").await;
    let (refused, _) = zoo.provoke("t_callunk001", 1000).await;
    // The guest reports what the host answered; that report is not a calendar result.
    assert_eq!(refused.error.kind(), "schema_error");
    let lines = zoo.quarantine();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["kind"], "unknown_tool");
    // Recorded under the id the host gave the nested call, not the one the guest wrote.
    let own = aura_contract::envelope::nested_call_id(Some("t_callunk001"), "calendar", 1);
    assert_eq!(lines[0]["call_id"], own.as_str());
    let offending: Value = serde_json::from_str(lines[1]["offending"].as_str().unwrap()).unwrap();
    let answer: Value =
        serde_json::from_str(offending["result"]["findings"].as_str().unwrap()).unwrap();
    assert_eq!(answer["ok"], false);
    assert_eq!(answer["error"]["kind"], "unknown_tool");
    zoo.healthy_still_answers().await;
}

/// The escape attempts: each guest reports what it found as a result, which the result schema
/// refuses; the quarantined report shows the sandbox held.
async fn escape_attempt(guest: &str, call_id: &str) -> String {
    let zoo = Zoo::open(guest).await;
    let (refused, _) = zoo.provoke(call_id, 1000).await;
    assert_eq!(
        refused.error.kind(),
        "schema_error",
        "{guest}: {}",
        refused.error
    );
    let lines = zoo.quarantine();
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0]["call_id"], call_id);
    let offending: Value = serde_json::from_str(lines[0]["offending"].as_str().unwrap()).unwrap();
    zoo.healthy_still_answers().await;
    offending["result"]["findings"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn etc_passwd_cannot_be_read() {
    let findings = escape_attempt("passwd", "t_passwd0001").await;
    assert!(findings.starts_with("denied:"), "{findings}");
}

#[tokio::test]
async fn the_root_cannot_be_listed() {
    let findings = escape_attempt("listroot", "t_listroot01").await;
    assert!(findings.starts_with("denied:"), "{findings}");
}

#[tokio::test]
async fn there_is_no_environment_and_no_arguments() {
    let findings = escape_attempt("environ", "t_environ001").await;
    assert!(findings.starts_with("vars=0 args=0"), "{findings}");
}

#[tokio::test]
async fn no_socket_can_be_opened() {
    let findings = escape_attempt("socket", "t_socket0001").await;
    assert!(findings.starts_with("denied:"), "{findings}");
}

#[test]
fn zoo_guests_never_reach_plugins() {
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(plugins_dir().join("manifest.json")).unwrap())
            .unwrap();
    let shipped: Vec<_> = manifest["components"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    for entry in
        std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/guests")).unwrap()
    {
        let guest = entry.unwrap().file_name().into_string().unwrap();
        assert!(!shipped.contains(&guest), "{guest} is in plugins/");
        assert!(!plugins_dir().join(format!("{guest}_guest.wasm")).exists());
    }
}

#[tokio::test(flavor = "current_thread")]
async fn a_runaway_agent_does_not_starve_other_calls_on_the_same_thread() {
    // One thread only: the spinning call must yield (fuel_async_yield_interval) for the
    // healthy call to run at all before the spin's deadline.
    let plugins = plugins_dir_of(
        "zoo-starve",
        &[
            ("calendar", guest_path("liar")),
            ("finance", plugins_dir().join("finance.wasm")),
        ],
    );
    let data = temp_dir("zoo-data-starve");
    let host = aura_host::Host::open(&crate::support::config(&plugins, &data))
        .await
        .unwrap();

    let mut spin = envelope(
        "t_spin000777",
        "calendar",
        "detect_conflicts",
        json!({"events": []}),
    );
    spin["deadline_ms"] = json!(10_000);
    let healthy = envelope(
        "t_healthy777",
        "finance",
        "categorize_transactions",
        json!({"transactions": []}),
    );
    let spin_done = std::cell::Cell::new(false);
    let (spun, answered) = tokio::join!(
        async {
            let refused = host.dispatch(&spin.to_string()).await.unwrap_err();
            spin_done.set(true);
            refused
        },
        async {
            let result = host.dispatch(&healthy.to_string()).await.unwrap();
            (result, spin_done.get())
        }
    );
    assert_eq!(spun.error.kind(), "deadline_exceeded");
    let (result, spin_was_done) = answered;
    assert!(result.ok);
    assert!(
        !spin_was_done,
        "the healthy call waited for the runaway to finish"
    );
}

#[tokio::test]
async fn an_endless_loop_is_stopped_by_fuel_at_the_same_count_every_time() {
    let zoo = expect_kind("spin", "t_spin000001", 200, "deadline_exceeded").await;
    for call_id in ["t_spin000002", "t_spin000003"] {
        let (again, _) = zoo.provoke(call_id, 200).await;
        assert_eq!(again.error.fuel_used(), 200 * FUEL_PER_MS_DEFAULT);
    }
}

#[tokio::test]
async fn a_panic_is_a_trap() {
    expect_kind("panic", "t_panic00001", 1000, "agent_trapped").await;
}

#[tokio::test]
async fn an_answer_that_is_not_json_is_refused() {
    expect_kind("nonjson", "t_nonjson001", 1000, "malformed_json").await;
}

#[tokio::test]
async fn an_answer_with_a_duplicate_key_is_refused() {
    expect_kind("dupkey", "t_dupkey0001", 1000, "duplicate_key").await;
}

#[tokio::test]
async fn an_answer_that_violates_the_result_schema_is_refused() {
    let zoo = expect_kind("badresult", "t_badresult1", 1000, "schema_error").await;
    let line = &zoo.quarantine()[0];
    assert_eq!(line["phase"], "result");
    assert_eq!(line["instance_path"], "/result/overlaps");
}

// What issue 15's hostile guest got through, each ending naming its real cause.

#[tokio::test]
async fn a_refused_growth_then_a_spin_ends_out_of_fuel_not_at_the_growth() {
    // The limiter refused the 48 MiB growth (so its flag is set), but what ended the call was
    // the fuel: classified by wasmtime's trap first.
    let zoo = expect_kind("growspin", "t_growspin01", 200, "deadline_exceeded").await;
    let line = &zoo.quarantine()[0];
    assert_eq!(line["fuel_used"], 200 * FUEL_PER_MS_DEFAULT);
}

#[tokio::test]
async fn an_answer_over_the_crossings_bound_is_refused_as_too_large() {
    // 2 MiB: within the guest's 32 MiB, over the crossing's 1 MiB. wasmtime stops copying it
    // to the host at the bound; the crossing names it, with no byte count it never learnt.
    let zoo = expect_kind("bigreply", "t_bigreply01", 1000, "too_large").await;
    let line = &zoo.quarantine()[0];
    assert_eq!(line["phase"], "reply");
    assert_eq!(
        line["reason"],
        format!(
            "reply: JSON text is more than the limit of {} bytes",
            aura_contract::limits::CROSSING_BYTES_MAX
        )
    );
}

#[tokio::test]
async fn an_answer_holding_a_noncharacter_is_refused() {
    let zoo = expect_kind("nonchar", "t_nonchar001", 1000, "noncharacter").await;
    let line = &zoo.quarantine()[0];
    assert_eq!(line["phase"], "reply");
    assert_eq!(line["instance_path"], "/result/note");
}

#[tokio::test]
async fn exiting_instead_of_answering_is_named_as_an_exit() {
    let zoo = expect_kind("exiter", "t_exiter0001", 1000, "agent_exited").await;
    let reason = zoo.quarantine()[0]["reason"].as_str().unwrap().to_owned();
    // WASI 0.2's `exit` carries success or failure only: exit(7) arrives as failure, 1.
    assert_eq!(
        reason,
        "agent `calendar` exited before answering (exit status 1; WASI 0.2 carries only \
         success, 0, or failure, 1)"
    );
}

#[tokio::test]
async fn writing_past_the_stdout_bound_fails_the_writes_not_the_call() {
    // As limits.rs says: once GUEST_OUTPUT_BYTES_MAX bytes are held the stream reports itself
    // closed, and the call goes on (its answer, the report, is what the crossing judges). The
    // 64th KiB fills the pipe; its flush already finds the stream closed, so the guest saw 63
    // writes succeed and the 64th fail as on a closed pipe.
    let report = escape_attempt("chatty", "t_chatty0001").await;
    let bound = aura_contract::limits::GUEST_OUTPUT_BYTES_MAX;
    assert_eq!(
        report,
        format!(
            "accepted {} bytes; first failure: broken pipe",
            bound - 1024
        )
    );
}

#[tokio::test]
async fn a_manifest_that_sleeps_delays_a_start_only_by_its_own_short_bound() {
    let plugins = plugins_dir_of(
        "zoo-slowmanifest",
        &[
            ("calendar", guest_path("slowmanifest")),
            ("finance", plugins_dir().join("finance.wasm")),
        ],
    );
    let data = temp_dir("zoo-data-slowmanifest");
    let started = std::time::Instant::now();
    let host = aura_host::Host::open(&crate::support::config(&plugins, &data))
        .await
        .unwrap();
    // The manifest sleeps 20 s; its wall bound is MANIFEST_DEADLINE_MS plus the margin.
    assert_within_backstop(
        started.elapsed(),
        aura_contract::limits::MANIFEST_DEADLINE_MS,
    );
    let failures = host.load_failures();
    match &failures.iter().map(|f| &**f).collect::<Vec<_>>()[..] {
        [aura_host::LoadError::ManifestInvalid { agent, error }] => {
            assert_eq!(agent, "calendar");
            assert_eq!(error.kind(), "wall_clock_exceeded");
        }
        other => panic!("expected the slow manifest refused, got {other:?}"),
    }
    assert_eq!(host.agents(), ["finance"]);
}

#[tokio::test]
async fn a_random_request_over_its_bound_ends_the_call_before_the_host_builds_it() {
    // 64 MiB in one request, with a 50 ms deadline: it ran ~11 s and held 64 MiB of host
    // memory before the bound.
    let plugins = plugins_dir_of(
        "zoo-randomflood",
        &[
            ("wellness", guest_path("randomflood")),
            ("finance", plugins_dir().join("finance.wasm")),
        ],
    );
    let data = temp_dir("zoo-data-randomflood");
    let host = aura_host::Host::open(&crate::support::config(&plugins, &data))
        .await
        .unwrap();
    let mut call = envelope(
        "t_random0001",
        "wellness",
        "stress_score",
        // No sleep_minutes: randomflood asks for 64 MiB.
        json!({"readings": {"hrv_ms": 42, "resting_hr_bpm": 65},
               "baselines": {"hrv_ms": 60, "resting_hr_bpm": 58, "sleep_minutes": 450}}),
    );
    call["deadline_ms"] = json!(50);
    let started = std::time::Instant::now();
    let refused = host.dispatch(&call.to_string()).await.unwrap_err();
    assert_within_backstop(started.elapsed(), 50);
    assert_eq!(refused.error.kind(), "host_work_limit");
    assert_eq!(
        refused.error.to_string(),
        format!(
            "agent `wellness` asked for more than {} random bytes in one request",
            aura_contract::limits::GUEST_RANDOM_BYTES_PER_REQUEST_MAX
        )
    );
}

#[tokio::test]
async fn random_bytes_are_charged_to_the_guest_by_the_byte_up_to_the_bound() {
    // randomflood's invoke asks for `sleep_minutes` KiB in one request. wasmtime-wasi draws
    // one u32 (4 bytes) per byte asked, and each byte drawn costs FUEL_PER_RANDOM_BYTE: 1 KiB
    // more costs 1024 × 4 × 16 = 65,536 fuel more, and nothing else differs between the calls
    // (same-length numbers in, same-length text out).
    let plugins = plugins_dir_of(
        "zoo-randomcharge",
        &[("wellness", guest_path("randomflood"))],
    );
    let data = temp_dir("zoo-data-randomcharge");
    let host = aura_host::Host::open(&crate::support::config(&plugins, &data))
        .await
        .unwrap();
    let asking = |kib: u64| {
        envelope(
            "t_random0002",
            "wellness",
            "stress_score",
            json!({"readings": {"sleep_minutes": kib},
                   "baselines": {"hrv_ms": 60, "resting_hr_bpm": 58, "sleep_minutes": 450}}),
        )
        .to_string()
    };
    // Its report is not a stress_score result, so each answer is refused after it ran
    // (schema_error) and quarantined with what the guest said.
    let fuel = |kib: u64| {
        let host = &host;
        let call = asking(kib);
        async move {
            let refused = host.dispatch(&call).await.unwrap_err();
            assert_eq!(refused.error.kind(), "schema_error");
            refused.fuel_used
        }
    };
    let one_kib = fuel(1).await;
    let two_kib = fuel(2).await;
    assert_eq!(
        aura_contract::limits::FUEL_PER_RANDOM_BYTE,
        16,
        "the figure above"
    );
    assert_eq!(two_kib - one_kib, 65_536);
    // The bound itself is allowed; one KiB more is not.
    fuel(64).await;
    let said: Vec<String> = quarantine_lines(&data)
        .iter()
        .map(|line| line["offending"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        said,
        ["1024", "2048", "65536"]
            .map(|n| format!(r#"{{"ok":true,"result":{{"findings":"got {n} random bytes"}}}}"#))
    );
    let refused = host.dispatch(&asking(65)).await.unwrap_err();
    assert_eq!(refused.error.kind(), "host_work_limit");
}

#[tokio::test]
async fn random_asked_for_again_and_again_is_charged_to_the_guest_and_fails_no_one_else() {
    // randomflood's tick asks for 64 KiB at a time, forever: every byte is charged to its
    // fuel, so its tick ends out of fuel, and the three real agents ticking beside it on the
    // same context are not made to fail (nor blamed).
    let plugins = plugins_dir_of(
        "zoo-randomtick",
        &[
            ("calendar", plugins_dir().join("calendar.wasm")),
            ("wellness", guest_path("randomflood")),
            ("finance", plugins_dir().join("finance.wasm")),
            ("comms", plugins_dir().join("comms.wasm")),
        ],
    );
    let data = temp_dir("zoo-data-randomtick");
    let host = aura_host::Host::open(&crate::support::config(&plugins, &data))
        .await
        .unwrap();
    let context = json!({"now": "2026-11-23T08:00:00+01:00", "utc_offset_minutes": 60,
        "events": [], "messages": [], "transactions": []});
    let outcomes = host
        .tick_all(&["calendar", "wellness", "finance", "comms"], &context)
        .await;
    let kinds: Vec<&str> = outcomes
        .iter()
        .map(|outcome| match outcome {
            Ok(_) => "ok",
            Err(refused) => refused.error.kind(),
        })
        .collect();
    assert_eq!(kinds, ["ok", "deadline_exceeded", "ok", "ok"]);
    let budget = aura_contract::limits::TICK_DEADLINE_MS * FUEL_PER_MS_DEFAULT;
    assert_eq!(outcomes[1].as_ref().unwrap_err().error.fuel_used(), budget);
    let lines = quarantine_lines(&data);
    assert_eq!(lines.len(), 1, "only the flood is quarantined: {lines:?}");
    assert_eq!(lines[0]["agent"], "wellness");
}
