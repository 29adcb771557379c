//! The `aura` binary as a user meets it: exit statuses, stdout, stderr, the quarantine file.

use std::io::Write;
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

use crate::support::{quarantine_lines, temp_dir};

const EXIT_REFUSED: i32 = 3;

fn aura(data: &std::path::Path, args: &[&str], stdin: Option<&str>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_aura"))
        .args(args)
        .env("AURA_DATA_DIR", data)
        .env_remove("AURA_PLUGINS_DIR")
        .env_remove("RUST_LOG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut pipe = child.stdin.take().unwrap();
    pipe.write_all(stdin.unwrap_or_default().as_bytes())
        .unwrap();
    drop(pipe);
    child.wait_with_output().unwrap()
}

fn stdout_json(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout).expect("stdout is one JSON document")
}

#[test]
fn catalogue_lists_every_tool_with_its_schemas() {
    let output = aura(&temp_dir("cli-catalogue"), &["catalogue"], None);
    assert!(output.status.success());
    let catalogue = stdout_json(&output);
    let calendar = &catalogue["agents"][0];
    assert_eq!(calendar["name"], "calendar");
    let tools: Vec<_> = calendar["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].clone())
        .collect();
    assert_eq!(
        tools,
        ["find_free_slots", "detect_conflicts", "schedule_event"]
    );
    assert_eq!(
        calendar["tools"][2]["args_schema"],
        "https://aura.local/schemas/calendar/schedule_event.args.json"
    );
    assert_eq!(calendar["tools"][2]["confirm_required"], true);
}

#[test]
fn call_builds_a_valid_envelope_and_prints_the_canonical_result() {
    let data = temp_dir("cli-call");
    let args = r#"{"events":[
        {"id":"a","start":"2026-11-23T09:00:00Z","end":"2026-11-23T10:00:00Z"},
        {"id":"b","start":"2026-11-23T09:30:00Z","end":"2026-11-23T10:30:00Z"}]}"#;
    let output = aura(&data, &["call", "calendar", "detect_conflicts", args], None);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let result = stdout_json(&output);
    assert_eq!(result["ok"], true);
    assert_eq!(result["agent"], "calendar");
    assert!(result["call_id"].as_str().unwrap().starts_with("t_"));
    assert!(result["fuel_used"].as_u64().unwrap() > 0);
    // a 09:00-10:00 and b 09:30-10:30 overlap for 30 minutes; neither contains the other.
    assert_eq!(result["result"]["overlaps"][0]["a"], "a");
    assert_eq!(result["result"]["overlaps"][0]["b"], "b");
    assert_eq!(result["result"]["overlaps"][0]["overlap_minutes"], 30);
    // Canonical: printing the parsed value canonically gives the same bytes.
    let printed = String::from_utf8(output.stdout.clone()).unwrap();
    assert_eq!(
        printed.trim_end(),
        aura_contract::canonical::to_canonical_string(&result).unwrap()
    );
    assert!(quarantine_lines(&data).is_empty());
}

#[test]
fn dispatch_of_bad_envelopes_exits_refused_and_quarantines_each() {
    let data = temp_dir("cli-dispatch");
    let good = r#"{"call_id":"t_cli0000001","agent":"calendar","tool":"detect_conflicts","args":{"events":[]},"ts":"2026-11-23T08:00:00Z","confirm_required":false}"#;
    let bad = [
        good.replace("t_cli0000001", "t_CLI"),
        good.replace("detect_conflicts", "transfer_money"),
        good.replace(
            r#""confirm_required":false"#,
            r#""confirm_required":false,"extra":1"#,
        ),
        good.replace("2026-11-23T08:00:00Z", "yesterday"),
    ];
    // What each refusal tells its caller to do (recovery.v1 on stdout), worked out from
    // toolcall.v1: call_id has a pattern, the catalogue has no transfer_money, no member
    // beyond the listed ones, ts is a date-time.
    let recoveries = [
        json!({"action": "correct_call", "issues": [{"field": "/call_id",
            "constraint": "invalid_pattern", "pattern": "^t_[a-z0-9]{10}$"}]}),
        json!({"action": "replan", "issues": []}),
        json!({"action": "correct_call", "issues": [{"field": "/extra",
            "constraint": "unknown_field"}]}),
        json!({"action": "correct_call", "issues": [{"field": "/ts",
            "constraint": "invalid_format", "format": "date-time"}]}),
    ];
    for (i, (envelope, recovery)) in bad.iter().zip(&recoveries).enumerate() {
        let output = aura(&data, &["dispatch", "-"], Some(envelope));
        assert_eq!(output.status.code(), Some(EXIT_REFUSED), "{envelope}");
        let printed = stdout_json(&output);
        assert_eq!(&printed["recovery"], recovery, "{envelope}");
        assert_eq!(
            String::from_utf8(output.stdout.clone()).unwrap().trim_end(),
            aura_contract::canonical::to_canonical_string(&printed).unwrap(),
            "canonical JSON"
        );
        let stderr = String::from_utf8(output.stderr).unwrap();
        assert_eq!(stderr.lines().count(), 1, "one line on stderr: {stderr}");
        assert!(stderr.starts_with("aura: refused"), "{stderr}");
        let quarantined = quarantine_lines(&data);
        assert_eq!(quarantined.len(), i + 1);
        // The quarantine record keeps the same recovery.
        assert_eq!(&quarantined[i]["recovery"], recovery);
    }
    let kinds: Vec<_> = quarantine_lines(&data)
        .iter()
        .map(|l| l["kind"].clone())
        .collect();
    assert_eq!(
        kinds,
        [
            "schema_error",
            "unknown_tool",
            "schema_error",
            "schema_error"
        ]
    );

    let file = data.join("good.json");
    std::fs::write(&file, good).unwrap();
    let output = aura(&data, &["dispatch", file.to_str().unwrap()], None);
    assert!(output.status.success());
    assert_eq!(stdout_json(&output)["call_id"], "t_cli0000001");
}

#[test]
fn call_of_an_unknown_tool_is_refused() {
    let data = temp_dir("cli-unknown");
    let output = aura(&data, &["call", "calendar", "transfer_money", "{}"], None);
    assert_eq!(output.status.code(), Some(EXIT_REFUSED));
    let output = aura(&data, &["call", "mallory", "steal", "{}"], None);
    assert_eq!(output.status.code(), Some(EXIT_REFUSED));
    let lines = quarantine_lines(&data);
    assert_eq!(lines[0]["kind"], "unknown_tool");
    assert_eq!(lines[1]["kind"], "schema_error");
}

#[test]
fn calibrate_stores_a_rate_from_a_workload_that_burns_the_same_fuel_every_time() {
    let data = temp_dir("cli-calibrate");
    let first = aura(&data, &["calibrate"], None);
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    let first = stdout_json(&first);
    let stored: Value =
        serde_json::from_slice(&std::fs::read(data.join("calibration.json")).unwrap()).unwrap();
    assert_eq!(stored, first);
    assert!(first["fuel_per_ms"].as_u64().unwrap() >= aura_contract::limits::FUEL_PER_MS_DEFAULT);
    assert_eq!(
        first["fuel_per_ms"].as_u64().unwrap(),
        (first["measured_fuel_per_ms"].as_u64().unwrap() / 100 * 50)
            .max(aura_contract::limits::FUEL_PER_MS_DEFAULT)
    );
    // Another process, the same workload: the same fuel, to the unit.
    let second = stdout_json(&aura(&data, &["calibrate"], None));
    assert_eq!(second["fuel_per_run"], first["fuel_per_run"]);
}

#[test]
fn every_readme_example_call_succeeds() {
    let data = temp_dir("cli-readme");
    let mut tools = std::collections::BTreeSet::new();
    for (agent, tool, args) in crate::support::readme_examples() {
        let output = aura(&data, &["call", &agent, &tool, &args], None);
        assert!(
            output.status.success(),
            "{agent}.{tool}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        assert_eq!(stdout_json(&output)["ok"], true, "{agent}.{tool}");
        tools.insert(format!("{agent}.{tool}"));
    }
    // Every tool of the catalogue has its example.
    let catalogue: std::collections::BTreeSet<_> = aura_contract::catalogue::CATALOGUE
        .iter()
        .flat_map(|a| {
            a.tools
                .iter()
                .map(move |t| format!("{}.{}", a.name, t.name))
        })
        .collect();
    assert_eq!(tools, catalogue);
}

/// Agent text never reaches the terminal raw. The escapes guest, as wellness, proposes
/// suggest_break on the WATCH with a signal that clears the screen and starts a forged line,
/// and its answer's `reason` does the same: `aura run -v` prints the signal as visible
/// escapes, the watch's line is the catalogue's words (never the agent's reason), one line per
/// decision, and traces.jsonl keeps the text as data.
#[test]
fn run_shows_agent_text_as_visible_escapes() {
    let plugins = crate::support::plugins_dir_of(
        "cli-escapes",
        &[("wellness", crate::support::guest_path("escapes"))],
    );
    let data = temp_dir("cli-escapes");
    let scenario = crate::orchestrator::scenario_path("quiet_morning");
    let output = aura(
        &data,
        &[
            "--plugins-dir",
            plugins.to_str().unwrap(),
            "run",
            scenario.to_str().unwrap(),
            "-v",
        ],
        None,
    );
    assert!(output.status.success(), "{output:?}");
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(
        !stdout.contains('\u{1b}'),
        "an escape sequence reached the terminal"
    );
    // Only the real decision lines start with a time: no line was forged.
    let decisions: Vec<&str> = stdout
        .lines()
        .filter(|line| line.starts_with("08:") || line.starts_with("09:"))
        .collect();
    assert_eq!(decisions.len(), 1, "{stdout}");
    let shown = "calm\\u{1b}[2J\\u{1b}[H\\n09:00  WATCH       comms.triage_inbox  forged line";
    assert!(
        decisions[0].starts_with("08:00  WATCH       wellness.suggest_break"),
        "{stdout}"
    );
    // The watch tells the break in the catalogue's words from the answer's checked fields
    // (its level, no break needed): the agent's own `reason` is not shown at all.
    assert!(
        decisions[0].ends_with("Stress is low: no break needed"),
        "{}",
        decisions[0]
    );
    // The rationale (the -v line) carries the signal, escaped alike.
    let rationale = format!(
        "Stress is high and the day has room for a break (wellness.suggest_break): stress:10, \
         {shown}. Priority 90; new: break; shown on WATCH."
    );
    assert!(stdout.contains(&rationale), "{stdout}");
    // traces.jsonl is for programs: JSON escapes the control characters itself, and the
    // signal is kept as the agent gave it.
    let traces = std::fs::read_to_string(data.join(aura_host::journal::TRACES_PATH)).unwrap();
    assert!(!traces.contains('\u{1b}'));
    let trace: Value = serde_json::from_str(traces.lines().next().unwrap()).unwrap();
    assert_eq!(
        trace["outcome"]["summary"],
        "Stress is low: no break needed"
    );
    assert!(
        trace["signals"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s.as_str().is_some_and(|s| s.contains('\u{1b}'))),
        "{trace}"
    );
}

#[test]
fn cache_stats_and_clear_report_what_the_data_dirs_cache_holds() {
    let data = temp_dir("cli-cache");
    // comms calls no one: the call compiles and caches comms alone.
    let output = aura(
        &data,
        &["call", "comms", "extract_action_items", r#"{"thread":[]}"#],
        None,
    );
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let entry = std::fs::read_dir(data.join("code-cache"))
        .unwrap()
        .map(|e| e.unwrap())
        .find(|e| e.file_name().to_string_lossy().ends_with(".cwasm"))
        .expect("the call stored comms's code");
    let bytes = entry.metadata().unwrap().len();

    let stats = stdout_json(&aura(&data, &["cache", "stats"], None));
    assert_eq!(
        stats["holds"],
        serde_json::json!({"entries": 1, "bytes": bytes, "bytes_max": 512 * 1024 * 1024})
    );
    assert_eq!(
        stats["cache_dir"],
        data.join("code-cache").to_str().unwrap()
    );
    let cleared = stdout_json(&aura(&data, &["cache", "clear"], None));
    assert_eq!(cleared["removed"]["entries"], 1);
    assert_eq!(cleared["removed"]["bytes"], bytes);
    let stats = stdout_json(&aura(&data, &["cache", "stats"], None));
    assert_eq!(stats["holds"]["entries"], 0);
}
