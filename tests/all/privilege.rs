//! Least privilege and answers bound to their question, through the real host and the real
//! orchestrator, with guests that try what issue 15's hostile agent got through: a tick
//! proposing other agents' tools (tests/guests/foreigntick), host calls reaching for tools the
//! caller may not call, or reusing its caller's call_id (nestedgrab), and a forged question
//! carrying a real invitation's signal, asked first (forgedquestion, foreigntick).

use std::path::Path;

use aura_contract::envelope::nested_call_id;
use serde_json::{Value, json};

use crate::orchestrator::{run_with, scenario_path};
use crate::support::{envelope, guest_path, host_over, plugins_dir, plugins_dir_of};

fn lines(text: &str) -> Vec<Value> {
    text.lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

fn quarantine(data: &Path) -> Vec<Value> {
    lines(
        &std::fs::read_to_string(data.join(aura_host::journal::QUARANTINE_PATH))
            .unwrap_or_default(),
    )
}

#[tokio::test]
async fn a_tick_proposing_other_agents_tools_is_refused_and_quarantined() {
    let plugins = plugins_dir_of(
        "privilege-foreign",
        &[
            ("wellness", guest_path("foreigntick")),
            ("calendar", plugins_dir().join("calendar.wasm")),
        ],
    );
    let (host, data) = host_over("privilege-foreign", &plugins).await;
    let context = json!({"now": "2026-11-23T08:00:00+01:00", "invitations": [
        {"id": "i1", "from": "ana@example.org", "title": "Dentist",
         "start": "2026-11-23T14:00:00+01:00", "end": "2026-11-23T14:45:00+01:00"}]});
    let outcome = host.tick("wellness", &context).await.unwrap();
    assert!(
        outcome.proposals.is_empty(),
        "nothing of another agent's gets through"
    );
    let refused: Vec<(&str, Option<&str>)> = outcome
        .refused
        .iter()
        .map(|r| (r.error.kind(), r.call_id.as_deref()))
        .collect();
    assert_eq!(
        refused,
        [
            ("call_not_allowed", Some("t_foreign001")),
            ("call_not_allowed", Some("t_foreign002")),
            ("call_not_allowed", Some("t_forged0001")),
        ]
    );
    let records = quarantine(&data);
    assert_eq!(records.len(), 3);
    assert_eq!(
        records[0]["reason"],
        "agent `wellness` may not call `comms.draft_reply`: a tick proposes only its own \
         agent's tools"
    );
}

#[tokio::test]
async fn host_calls_reach_only_the_callers_listed_tools_each_under_an_id_of_its_own() {
    let plugins = plugins_dir_of(
        "privilege-nested",
        &[
            ("wellness", guest_path("nestedgrab")),
            ("calendar", plugins_dir().join("calendar.wasm")),
        ],
    );
    let (host, data) = host_over("privilege-nested", &plugins).await;
    let call = envelope(
        "t_grabroot01",
        "wellness",
        "suggest_break",
        json!({"stress": {"score": 85}, "working_hours": {"start": "09:00", "end": "17:00"},
               "now": "2026-11-23T08:00:00Z", "utc_offset_minutes": 0}),
    );
    let result = host.dispatch(&call.to_string()).await.unwrap();
    // The guest reports each host call's answer as `<kind or ok>@<the answer's call_id>`.
    let id = |n| nested_call_id(Some("t_grabroot01"), "wellness", n);
    assert_eq!(
        result.error.unwrap().message,
        format!(
            "call_not_allowed@{} call_not_allowed@{} ok@{}",
            id(1),
            id(2),
            id(3)
        )
    );
    // The third asked under its caller's call_id and got one of its own.
    assert_ne!(id(3), "t_grabroot01");
    let records = quarantine(&data);
    let kinds: Vec<&str> = records
        .iter()
        .map(|r| r["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["call_not_allowed", "call_not_allowed"]);
    assert_eq!(records[0]["tool"], "schedule_event");
    assert!(
        records[0]["reason"]
            .as_str()
            .unwrap()
            .contains("only the user's yes starts it")
    );
    assert_eq!(records[1]["tool"], "draft_reply");
    for record in &records {
        assert_eq!(
            record["callers"],
            json!(["wellness"]),
            "who asked: {record}"
        );
    }
    assert_eq!(
        records[0]["fuel_used"], 0,
        "refused before the callee was touched"
    );
}

/// The traces of the forged scenario run with `plugins`.
async fn forged_day(
    name: &str,
    plugins: &Path,
) -> (aura_day::orchestrator::RunSummary, Vec<Value>) {
    let (summary, traces, _) = run_with(name, plugins, &scenario_path("forged"), 7).await;
    (summary, lines(&traces))
}

#[tokio::test]
async fn a_forged_question_asked_first_cannot_catch_the_answer_meant_for_the_real_one() {
    // forgedquestion, as calendar, asks a forged schedule_event (priority 100, another title)
    // before the real one (60), both signalling invitation:i1. The user's yes at 08:15 is
    // about invitation i1: it runs the question whose event is i1's, not the first one asked.
    let plugins = plugins_dir_of(
        "privilege-forged",
        &[("calendar", guest_path("forgedquestion"))],
    );
    let (summary, traces) = forged_day("privilege-forged", &plugins).await;
    let brief: Vec<(String, String, Value)> = traces
        .iter()
        .map(|t| {
            (
                t["decision"].as_str().unwrap().to_owned(),
                t["call"]["call_id"].as_str().unwrap_or("-").to_owned(),
                t["about"].clone(),
            )
        })
        .collect();
    let item = || json!("invitation:i1");
    assert_eq!(
        brief,
        [
            // 08:00: the forged question takes the phone; it is about no pending item.
            ("asked".to_owned(), "t_forged0001".to_owned(), Value::Null),
            // 08:10: the real one, bound to i1 (the forged one is still pending: a repeat).
            ("asked".to_owned(), "t_real000001".to_owned(), item()),
            // 08:20: the yes runs the real one.
            ("confirmed".to_owned(), "t_real000001".to_owned(), item()),
            // 08:30: the second yes (a double tap) finds no question about i1 left.
            ("answer_unmatched".to_owned(), "-".to_owned(), Value::Null),
        ]
    );
    // The guest's answer (a tool error) names the call the yes ran: the trace keeps it in the
    // rationale; the person is told only that it could not be done.
    assert_eq!(
        traces[2]["outcome"]["summary"],
        "That could not be done just now; nothing was changed"
    );
    assert!(
        traces[2]["rationale"]
            .as_str()
            .unwrap()
            .ends_with("it failed: tool_failed: ran t_real000001."),
        "{}",
        traces[2]["rationale"]
    );
    assert_eq!(
        traces[2]["answer"],
        json!({"agent": "calendar", "tool": "schedule_event",
        "item": "invitation:i1", "confirm": true})
    );
    assert_eq!(traces[3]["answer"]["item"], "invitation:i1");
    assert_eq!(traces[3]["outcome"]["status"], "unmatched");
    assert_eq!((summary.confirmed, summary.answers_unmatched), (1, 1));
    for trace in traces.iter().filter(|t| t.get("call").is_some()) {
        assert_eq!(trace["proposed_by"], "calendar");
    }
}

#[tokio::test]
async fn another_agent_cannot_forge_a_question_for_the_real_calendar() {
    // The real calendar asks about i1; foreigntick, as wellness, proposes comms and calendar
    // tools (among them a forged schedule_event about i1) every tick: all refused, and the yes
    // confirms the real calendar's question, which schedules the real event.
    let plugins = plugins_dir_of(
        "privilege-foreign-day",
        &[
            ("calendar", plugins_dir().join("calendar.wasm")),
            ("wellness", guest_path("foreigntick")),
        ],
    );
    let (summary, traces) = forged_day("privilege-foreign-day", &plugins).await;
    let confirmed: Vec<&Value> = traces
        .iter()
        .filter(|t| t["decision"] == "confirmed")
        .collect();
    assert_eq!(confirmed.len(), 1, "{traces:?}");
    assert_eq!(confirmed[0]["proposed_by"], "calendar");
    assert_eq!(confirmed[0]["about"], "invitation:i1");
    assert_eq!(confirmed[0]["outcome"]["status"], "ok");
    assert!(
        confirmed[0]["outcome"]["summary"]
            .as_str()
            .unwrap()
            .starts_with("Added \"Dentist\""),
        "{}",
        confirmed[0]["outcome"]["summary"]
    );
    assert!(traces.iter().all(|t| t["proposed_by"] != "wellness"));
    // Five ticks, three foreign proposals refused in each.
    assert_eq!(summary.proposals_refused, 5 * 3);
}
