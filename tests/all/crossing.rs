//! The crossing, both directions, through the real host: each check fires with its exact error
//! kind and phase, the refusal is quarantined (one parseable line with the reason and the
//! call_id), and the next healthy call still succeeds.

use aura_contract::error::{CrossingError, Phase};
use aura_contract::limits::CROSSING_BYTES_MAX;
use serde_json::{Value, json};

use crate::support::{envelope, guest_path, host, host_over, plugins_dir_with, quarantine_lines};

fn events_args() -> Value {
    json!({ "events": [] })
}

fn healthy(call_id: &str) -> String {
    envelope(call_id, "calendar", "detect_conflicts", events_args()).to_string()
}

/// Each inbound case: the envelope text, the expected kind, phase and instance path.
fn inbound_cases() -> Vec<(
    &'static str,
    String,
    &'static str,
    Phase,
    Option<&'static str>,
)> {
    let with = |field: &str, value: Value| {
        let mut e = envelope(
            "t_inbound001",
            "calendar",
            "detect_conflicts",
            events_args(),
        );
        e[field] = value;
        e.to_string()
    };
    let mut extra = envelope(
        "t_inbound002",
        "calendar",
        "detect_conflicts",
        events_args(),
    );
    extra["priority"] = json!(5);
    let deep = format!("{}{}", "[".repeat(100), "]".repeat(100));
    vec![
        ("call_id pattern", with("call_id", json!("t_UPPER00000")), "schema_error", Phase::Envelope, Some("/call_id")),
        ("bad ts", with("ts", json!("2026-11-23 08:00")), "schema_error", Phase::Envelope, Some("/ts")),
        ("impossible ts", with("ts", json!("2026-02-30T08:00:00Z")), "schema_error", Phase::Envelope, Some("/ts")),
        ("extra property", extra.to_string(), "schema_error", Phase::Envelope, Some("")),
        ("deadline too small", with("deadline_ms", json!(49)), "schema_error", Phase::Envelope, Some("/deadline_ms")),
        ("agent outside the enum", with("agent", json!("mallory")), "schema_error", Phase::Envelope, Some("/agent")),
        ("orchestrator is no agent", with("agent", json!("orchestrator")), "unknown_agent", Phase::Envelope, None),
        ("unknown tool", with("tool", json!("transfer_money")), "unknown_tool", Phase::Envelope, None),
        ("another agent's tool", with("tool", json!("triage_inbox")), "unknown_tool", Phase::Envelope, None),
        ("args schema", with("args", json!({"events": "none"})), "schema_error", Phase::Args, Some("/args/events")),
        ("args extra field", with("args", json!({"events": [], "x": 1})), "schema_error", Phase::Args, Some("/args")),
        (
            "duplicate key",
            r#"{"call_id":"t_inbound003","call_id":"t_inbound004","agent":"calendar","tool":"detect_conflicts","args":{"events":[]},"ts":"2026-11-23T08:00:00Z","confirm_required":false}"#.into(),
            "duplicate_key",
            Phase::Envelope,
            Some(""),
        ),
        (
            "integer beyond 2^53",
            r#"{"call_id":"t_inbound005","agent":"calendar","tool":"detect_conflicts","args":{"events":[]},"ts":"2026-11-23T08:00:00Z","confirm_required":false,"deadline_ms":9007199254740993}"#.into(),
            "number_out_of_range",
            Phase::Envelope,
            Some("/deadline_ms"),
        ),
        ("not JSON", "{\"call_id\": NaN}".into(), "malformed_json", Phase::Envelope, None),
        ("too deep", deep, "too_deep", Phase::Envelope, None),
        ("too large", format!("\"{}\"", "a".repeat(CROSSING_BYTES_MAX)), "too_large", Phase::Envelope, None),
    ]
}

#[tokio::test]
async fn every_inbound_check_refuses_quarantines_and_the_host_keeps_serving() {
    let (host, data) = host("inbound").await;
    let cases = inbound_cases();
    for (i, (name, text, kind, phase, instance_path)) in cases.iter().enumerate() {
        let refused = host.dispatch(text).await.expect_err(name);
        assert_eq!(refused.error.kind(), *kind, "{name}: {}", refused.error);
        assert_eq!(refused.error.phase(), *phase, "{name}");
        assert_eq!(refused.error.instance_path(), *instance_path, "{name}");
        assert!(refused.journal_error.is_none());
        assert_eq!(
            refused.error.fuel_used(),
            0,
            "{name}: refused before the agent ran"
        );

        let lines = quarantine_lines(&data);
        assert_eq!(lines.len(), i + 1, "{name}: one line per refusal");
        let line = &lines[i];
        assert_eq!(line["kind"], *kind, "{name}");
        assert_eq!(line["phase"], phase.as_str(), "{name}");
        assert!(!line["reason"].as_str().unwrap().is_empty(), "{name}");
        let offending = line["offending"].as_str().unwrap();
        assert!(text.starts_with(offending), "{name}: the JSON as received");
        assert_eq!(line["offending_bytes"], text.len(), "{name}");

        let ok = host.dispatch(&healthy("t_healthy001")).await.expect(name);
        assert!(ok.ok, "{name}: the next healthy call succeeds");
    }
    // The call_id is recorded where the envelope was readable.
    let lines = quarantine_lines(&data);
    assert_eq!(lines[0]["call_id"], "t_UPPER00000");
    assert_eq!(lines[7]["call_id"], "t_inbound001");
    assert_eq!(lines[7]["tool"], "transfer_money");
    assert!(lines[15]["call_id"].is_null());
    assert_eq!(lines[15]["offending_truncated"], true);
}

#[tokio::test]
async fn not_utf8_is_refused_as_malformed() {
    let (host, data) = host("utf8").await;
    let refused = host
        .dispatch(aura_host::CallInput::Bytes(b"{\"a\":\"\xff\"}"))
        .await
        .unwrap_err();
    assert_eq!(refused.error.kind(), "malformed_json");
    assert_eq!(quarantine_lines(&data).len(), 1);
}

async fn liar_host(name: &str) -> (aura_host::Host, std::path::PathBuf) {
    let plugins = plugins_dir_with(name, "calendar", &guest_path("liar"));
    host_over(name, &plugins).await
}

#[tokio::test]
async fn every_outbound_check_refuses_the_agents_output_and_quarantines_it() {
    let (host, data) = liar_host("outbound").await;
    let cases = [
        (
            "t_badjson000",
            "malformed_json",
            Phase::Reply,
            None,
            "this is not json",
        ),
        (
            "t_dupkey0000",
            "duplicate_key",
            Phase::Reply,
            Some(""),
            r#"{"ok":true,"ok":true,"result":{}}"#,
        ),
        (
            "t_bignum0000",
            "number_out_of_range",
            Phase::Reply,
            Some("/result/n"),
            r#"{"ok":true,"result":{"n":12345678901234567890}}"#,
        ),
        (
            "t_noresult00",
            "schema_error",
            Phase::Reply,
            Some(""),
            r#"{"ok":true}"#,
        ),
        (
            "t_badresult0",
            "schema_error",
            Phase::Result,
            Some("/result"),
            r#"{"ok":true,"result":{"unexpected":1}}"#,
        ),
    ];
    for (i, (call_id, kind, phase, instance_path, output)) in cases.iter().enumerate() {
        let refused = host.dispatch(&healthy(call_id)).await.expect_err(call_id);
        assert_eq!(refused.error.kind(), *kind, "{call_id}: {}", refused.error);
        assert_eq!(refused.error.phase(), *phase, "{call_id}");
        assert_eq!(refused.error.instance_path(), *instance_path, "{call_id}");
        let lines = quarantine_lines(&data);
        assert_eq!(lines.len(), i + 1);
        assert_eq!(lines[i]["call_id"], *call_id);
        assert_eq!(lines[i]["agent"], "calendar");
        assert_eq!(
            lines[i]["offending"], *output,
            "the agent's output as received"
        );
        // The liar answers honestly for any other call_id.
        assert!(host.dispatch(&healthy("t_honest0001")).await.unwrap().ok);
    }
}

#[tokio::test]
async fn a_tool_error_is_a_result_not_a_refusal() {
    let (host, data) = liar_host("toolerr").await;
    let result = host.dispatch(&healthy("t_toolerr000")).await.unwrap();
    assert!(!result.ok);
    let error = result.error.unwrap();
    assert_eq!(error.kind, "tool_invalid_args");
    assert_eq!(error.message, "the liar refuses");
    assert!(quarantine_lines(&data).is_empty());
}

#[tokio::test]
async fn a_trap_is_quarantined_and_poisons_only_its_own_store() {
    let (host, data) = liar_host("panic").await;
    let refused = host.dispatch(&healthy("t_panic00000")).await.unwrap_err();
    assert!(
        matches!(refused.error, CrossingError::AgentTrapped { .. }),
        "{}",
        refused.error
    );
    assert_eq!(quarantine_lines(&data)[0]["kind"], "agent_trapped");
    assert!(host.dispatch(&healthy("t_honest0002")).await.unwrap().ok);
}

#[tokio::test]
async fn a_runaway_loop_is_stopped_by_fuel_at_the_same_count_every_time() {
    let (host, data) = liar_host("spin").await;
    let mut spin = envelope(
        "t_spin000000",
        "calendar",
        "detect_conflicts",
        events_args(),
    );
    spin["deadline_ms"] = json!(50);
    let mut fuel = Vec::new();
    for _ in 0..3 {
        let refused = host.dispatch(&spin.to_string()).await.unwrap_err();
        match refused.error {
            CrossingError::DeadlineExceeded {
                deadline_ms,
                fuel_used,
                ..
            } => {
                assert_eq!(deadline_ms, 50);
                // The whole budget: 50 ms at the default rate.
                assert_eq!(fuel_used, 50 * aura_contract::limits::FUEL_PER_MS_DEFAULT);
                fuel.push(fuel_used);
            }
            other => panic!("expected DeadlineExceeded, got {other}"),
        }
    }
    assert!(fuel.windows(2).all(|w| w[0] == w[1]));
    let lines = quarantine_lines(&data);
    assert_eq!(lines.len(), 3);
    assert!(
        lines
            .iter()
            .all(|l| l["kind"] == "deadline_exceeded" && l["fuel_used"] == fuel[0])
    );
    assert!(host.dispatch(&healthy("t_honest0003")).await.unwrap().ok);
}

#[tokio::test]
async fn a_bad_proposal_is_quarantined_without_spoiling_the_others() {
    let (host, data) = liar_host("proposals").await;
    let outcome = host
        .tick("calendar", &json!({"mode": "mixed"}))
        .await
        .unwrap();
    assert_eq!(outcome.proposals.len(), 1);
    assert_eq!(outcome.proposals[0].call.call().call_id, "t_proposal01");
    assert_eq!(outcome.proposals[0].signals, ["good"]);
    assert_eq!(outcome.refused.len(), 1);
    assert_eq!(outcome.refused[0].error.kind(), "unknown_tool");
    let lines = quarantine_lines(&data);
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0]["call_id"], "t_proposal02");

    let refused = host
        .tick("calendar", &json!({"mode": "notjson"}))
        .await
        .unwrap_err();
    assert_eq!(refused.error.kind(), "malformed_json");
    assert_eq!(refused.error.phase(), Phase::Tick);
    let lines = quarantine_lines(&data);
    assert_eq!(lines[1]["offending"], "nope");
    assert_eq!(lines[1]["agent"], "calendar");
}
