//! The comms agent through the real host: every tool with expected values worked out by hand,
//! bad input refused before the agent runs, inconsistent input answered with a typed tool
//! error, and the tick's proposals for hand-made contexts dispatched as they are.

use serde_json::{Value, json};

use crate::support::{
    assert_proposed, assert_tool_invalid_args, call_tool, host_with, quarantine_lines,
};

async fn call(
    host: &aura_host::Host,
    call_id: &str,
    tool: &str,
    args: Value,
) -> aura_host::ResultEnvelope {
    call_tool(host, "comms", call_id, tool, args).await
}

fn msg(id: &str, thread: &str, sender: &str, subject: &str, body: &str, at: &str) -> Value {
    json!({"id": id, "thread_id": thread, "sender": sender, "subject": subject,
           "body": body, "received_at": at})
}

/// Monday 2026-11-23; the user is at +01:00.
fn inbox() -> Vec<Value> {
    vec![
        msg(
            "m2",
            "t1",
            "ann@corp.example",
            "Re: contract",
            "I will send the draft on Friday.",
            "2026-11-22T22:30:00Z",
        ),
        msg(
            "m3",
            "t2",
            "news@letters.example",
            "Weekly digest",
            "Top stories this week.",
            "2026-11-20T10:00:00Z",
        ),
        msg(
            "m1",
            "t1",
            "Dana Boss <dana@corp.example>",
            "URGENT: contract",
            "Hi,\n\nCan you sign the contract by EOD?\n\nDana",
            "2026-11-23T09:30:00Z",
        ),
        msg(
            "m4",
            "t3",
            "carol@x.example",
            "Lunch",
            "Are you free for lunch? It's not urgent.",
            "2026-11-23T08:00:00Z",
        ),
    ]
}

/// (kind, contribution) pairs of a ranked message.
fn signals(message: &Value) -> Vec<(String, f64)> {
    message["signals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["kind"].as_str().unwrap().to_owned(),
                s["contribution"].as_f64().unwrap(),
            )
        })
        .collect()
}

fn pairs(list: &[(&str, f64)]) -> Vec<(String, f64)> {
    list.iter().map(|(k, v)| (k.to_string(), *v)).collect()
}

#[tokio::test]
async fn triage_inbox_ranks_explains_and_decides_interrupts() {
    let (host, _) = host_with("comms-triage", &["comms"]).await;
    let args = json!({
        "messages": inbox(),
        "vip_senders": ["DANA@corp.example"],
        "quiet_hours": {"start": "22:00", "end": "07:00"},
        "utc_offset_minutes": 60,
        "now": "2026-11-23T10:00:00Z"
    });
    let result = call(&host, "t_triage0001", "triage_inbox", args).await;
    assert!(result.ok);
    let result = result.result.unwrap();
    let messages = result["messages"].as_array().unwrap();
    let order: Vec<&str> = messages.iter().map(|m| m["id"].as_str().unwrap()).collect();
    assert_eq!(order, ["m1", "m4", "m2", "m3"]);

    // m1: VIP .3 + "URGENT" .3 + "by EOD" (17:00 local = 16:00Z, 6 h ahead: near) .15 +
    // "Can you …?" .15 + one other recent message in t1 .05 = .95; 30 min old: no decay.
    let m1 = &messages[0];
    assert_eq!(m1["urgency"].as_f64(), Some(0.95));
    assert_eq!(
        signals(m1),
        pairs(&[
            ("vip_sender", 0.3),
            ("urgent_words", 0.3),
            ("deadline", 0.15),
            ("direct_question", 0.15),
            ("thread_heat", 0.05)
        ])
    );
    assert_eq!(m1["signals"][2]["detail"], "by EOD");
    assert_eq!(m1["interrupt"], true);
    assert_eq!(m1["arrived_in_quiet_hours"], false);
    // Input fields are not repeated: the caller has them by id.
    assert!(m1.get("sender").is_none() && m1.get("subject").is_none());
    // m4: "not urgent" does not count; the question .15, 2 h old: ×0.970 → .1455 → .146.
    assert_eq!(messages[1]["urgency"].as_f64(), Some(0.146));
    assert_eq!(
        signals(&messages[1]),
        pairs(&[("direct_question", 0.15), ("age", -0.004)])
    );
    // m2: "on Friday" (from Sunday 23:30 local: Friday 17:00, > 72 h away) .05 + heat .05,
    // 11 h old: ×0.835 → .0835 → .084; it arrived at 23:30 local, in the quiet hours.
    assert_eq!(messages[2]["urgency"].as_f64(), Some(0.084));
    assert_eq!(messages[2]["arrived_in_quiet_hours"], true);
    // m3: no signal at all.
    assert_eq!(messages[3]["urgency"].as_f64(), Some(0.0));
    assert_eq!(messages[3]["signals"], json!([]));
    assert_eq!(result["quiet_now"], false);
    assert_eq!(result["interrupt_count"], 1);

    // At 23:30 local (quiet): m1 is 13 h old, ×0.805 → .76475 → .765, still interrupts (VIP
    // + urgent); a fresh non-VIP .6 message (urgent .3 + "tonight" near .15 + question .15)
    // does not.
    let mut messages = inbox();
    messages.push(msg(
        "m5",
        "t5",
        "eve@x.example",
        "asap",
        "Could you call me tonight?",
        "2026-11-23T22:20:00Z",
    ));
    let args = json!({
        "messages": messages,
        "vip_senders": ["dana@corp.example"],
        "quiet_hours": {"start": "22:00", "end": "07:00"},
        "utc_offset_minutes": 60,
        "now": "2026-11-23T22:30:00Z"
    });
    let result = call(&host, "t_triage0002", "triage_inbox", args)
        .await
        .result
        .unwrap();
    assert_eq!(result["quiet_now"], true);
    let ranked = result["messages"].as_array().unwrap();
    let get = |id: &str| ranked.iter().find(|m| m["id"] == id).unwrap();
    assert_eq!(get("m1")["urgency"].as_f64(), Some(0.765));
    assert_eq!(get("m1")["interrupt"], true);
    assert_eq!(get("m5")["urgency"].as_f64(), Some(0.6));
    assert_eq!(get("m5")["interrupt"], false);
    assert_eq!(result["interrupt_count"], 1);

    // An empty inbox is a valid, empty ranking.
    let args = json!({"messages": [], "now": "2026-11-23T10:00:00Z"});
    let result = call(&host, "t_triage0003", "triage_inbox", args)
        .await
        .result
        .unwrap();
    assert_eq!(
        result,
        json!({"messages": [], "quiet_now": false, "interrupt_count": 0})
    );
}

#[tokio::test]
async fn draft_reply_fills_templates_without_doubling_prefixes() {
    let (host, _) = host_with("comms-draft", &["comms"]).await;
    // 2026-11-30 is a Monday.
    let args = json!({
        "message": {"sender": "Ann Lee <ann@example.com>", "subject": "Re: Budget review",
                    "body": "Hi, can we go through the budget this week?"},
        "intent": "defer", "tone": "friendly",
        "defer_until": "2026-11-30T14:00:00+01:00", "signature": "Sam"
    });
    let result = call(&host, "t_draft00001", "draft_reply", args).await;
    assert_eq!(
        result.result.unwrap(),
        json!({
            "to": "ann@example.com",
            "subject": "Re: Budget review",
            "body": "Hi Ann,\n\nThanks for your message about \"Budget review\"! I can't get to it \
                     just yet, but I'll get back to you by Monday 30 November 2026 at 14:00 \
                     (UTC+01:00).\n\nBest,\nSam",
            "template": "defer.friendly.dated",
            "truncated": false
        })
    );
    let args = json!({
        "message": {"sender": "ann@example.com", "sender_name": "Lee, Ann",
                    "subject": "RE: re[2]: Offer", "body": ""},
        "intent": "decline", "tone": "formal"
    });
    let result = call(&host, "t_draft00002", "draft_reply", args)
        .await
        .result
        .unwrap();
    assert_eq!(result["subject"], "Re: Offer");
    assert_eq!(
        result["body"],
        "Dear Ann Lee,\n\nThank you for your message regarding \"Offer\". Unfortunately, I am \
         unable to take this on at the moment, so I must respectfully decline.\n\nThank you for \
         your understanding.\n\nKind regards,"
    );
    assert_eq!(result["template"], "decline.formal");

    // A 1000-character signature pushes the body past 1000 characters: cut at a word.
    let args = json!({
        "message": {"sender": "a@x", "subject": "", "body": ""},
        "intent": "accept", "tone": "brief", "signature": "abcd ".repeat(200).trim_end()
    });
    let result = call(&host, "t_draft00003", "draft_reply", args)
        .await
        .result
        .unwrap();
    // "Sounds good, confirmed." (23) + "\n\n" (2) = 25, then the 999-char signature: 1024 >
    // 1000. The first 999 chars hold 974 of the signature; its char 974 is a space
    // (974 = 5·194 + 4), so the cut is right there: 195 words "abcd" and 194 spaces = 974
    // chars, then '…': 25 + 974 + 1 = 1000.
    let body = result["body"].as_str().unwrap();
    assert_eq!(
        body,
        format!(
            "Sounds good, confirmed.\n\n{}…",
            "abcd ".repeat(195).trim_end()
        )
    );
    assert_eq!(body.chars().count(), 1000);
    assert_eq!(result["truncated"], true);
}

#[tokio::test]
async fn extract_action_items_finds_owners_and_due_times() {
    let (host, _) = host_with("comms-actions", &["comms"]).await;
    let args = json!({
        "thread": [
            {"sender": "Ann Lee <ann@corp.example>", "to": ["sam@corp.example"],
             "sent_at": "2026-11-23T09:00:00Z",
             "body": "Hi Sam,\n\nCan you send me the Q3 numbers by Friday? I will prepare the \
                      slides tomorrow 3pm.\nPriya will book the room.\n\nThanks,\nAnn"},
            {"sender": "sam@corp.example", "to": ["ann@corp.example"],
             "sent_at": "2026-11-23T16:30:00Z",
             "body": "Sure. I'll send them by EOD. Let's review them next week.\n\n\
                      On Mon, 23 Nov 2026, Ann wrote:\n> Can you send me the Q3 numbers by Friday?"}
        ],
        "me": "sam@corp.example",
        "utc_offset_minutes": 60
    });
    let result = call(&host, "t_actions001", "extract_action_items", args).await;
    assert_eq!(
        result.result.unwrap(),
        json!({"items": [
            // Monday 10:00 local: Friday 27th at 17:00 local.
            {"text": "Can you send me the Q3 numbers by Friday?", "owner": "me",
             "owner_rule": "request", "due": "2026-11-27T17:00:00+01:00",
             "due_phrase": "by Friday", "message_index": 0},
            {"text": "I will prepare the slides tomorrow 3pm.", "owner": "ann@corp.example",
             "owner_rule": "commitment", "due": "2026-11-24T15:00:00+01:00",
             "due_phrase": "tomorrow 3pm", "message_index": 0},
            {"text": "Priya will book the room.", "owner": "Priya", "owner_rule": "named",
             "message_index": 0},
            // 17:30 local: today's 17:00 has passed, so EOD is 23:59.
            {"text": "I'll send them by EOD.", "owner": "me", "owner_rule": "commitment",
             "due": "2026-11-23T23:59:00+01:00", "due_phrase": "by EOD", "message_index": 1},
            // Monday of the next week, 09:00.
            {"text": "Let's review them next week.", "owner_rule": "group",
             "due": "2026-11-30T09:00:00+01:00", "due_phrase": "next week", "message_index": 1}
        ], "truncated": false})
    );
    let result = call(
        &host,
        "t_actions002",
        "extract_action_items",
        json!({"thread": []}),
    )
    .await;
    assert_eq!(
        result.result.unwrap(),
        json!({"items": [], "truncated": false})
    );
}

#[tokio::test]
async fn inconsistent_args_get_a_typed_tool_error() {
    let (host, data) = host_with("comms-invalid", &["comms"]).await;
    let now = "2026-11-23T10:00:00Z";
    let cases = [
        (
            "triage_inbox",
            json!({"messages": [msg("a", "t", "x@y", "", "", now), msg("a", "u", "x@y", "", "", now)],
                   "now": now}),
        ),
        (
            "triage_inbox",
            json!({"messages": [], "now": now, "quiet_hours": {"start": "22:00", "end": "22:00"}}),
        ),
        (
            "draft_reply",
            json!({"message": {"sender": "a@x", "subject": "", "body": ""},
                   "intent": "accept", "tone": "brief", "defer_until": now}),
        ),
        (
            "draft_reply",
            json!({"message": {"sender": "Ann <>", "subject": "", "body": ""},
                   "intent": "accept", "tone": "brief"}),
        ),
        (
            "extract_action_items",
            json!({"thread": [{"sender": "  ", "body": "", "sent_at": now}]}),
        ),
    ];
    assert_tool_invalid_args(&host, &data, "comms", Vec::from(cases)).await;
}

#[tokio::test]
async fn bad_input_is_refused_before_the_agent_runs() {
    let (host, data) = host_with("comms-refused", &["comms"]).await;
    let now = "2026-11-23T10:00:00Z";
    let ok = msg("a", "t", "x@y", "", "", now);
    let draft = |intent: &str, extra: (&str, Value)| {
        let mut args = json!({"message": {"sender": "a@x", "subject": "", "body": ""},
                              "intent": intent, "tone": "brief"});
        args[extra.0] = extra.1;
        args
    };
    let cases = [
        (
            "triage_inbox",
            json!({"messages": vec![ok.clone(); 201], "now": now}),
            "/args/messages",
        ),
        (
            "triage_inbox",
            json!({"messages": [msg("a", "t", "x@y", "", &"b".repeat(20_001), now)], "now": now}),
            "/args/messages/0/body",
        ),
        (
            "triage_inbox",
            json!({"messages": [], "now": now, "quiet_hours": {"start": "9:00", "end": "17:00"}}),
            "/args/quiet_hours/start",
        ),
        (
            "triage_inbox",
            json!({"messages": [], "now": now, "utc_offset_minutes": 900}),
            "/args/utc_offset_minutes",
        ),
        (
            "triage_inbox",
            json!({"messages": [msg("a", "t", "x@y", "", "", "Monday 9am")], "now": now}),
            "/args/messages/0/received_at",
        ),
        ("triage_inbox", json!({"messages": []}), "/args"),
        (
            "draft_reply",
            draft("maybe", ("tone", json!("brief"))),
            "/args/intent",
        ),
        (
            "draft_reply",
            draft("accept", ("signature", json!("s".repeat(1001)))),
            "/args/signature",
        ),
        (
            "draft_reply",
            draft("accept", ("tone", json!("rude"))),
            "/args/tone",
        ),
        (
            "extract_action_items",
            json!({"thread": vec![json!({"sender": "a@x", "body": "", "sent_at": now}); 101]}),
            "/args/thread",
        ),
        (
            "extract_action_items",
            json!({"thread": [{"sender": "a@x", "body": "", "sent_at": "yesterday"}]}),
            "/args/thread/0/sent_at",
        ),
        (
            "extract_action_items",
            json!({"thread": [{"sender": "a@x", "body": "", "sent_at": now, "to": []}], "me": ""}),
            "/args/me",
        ),
    ];
    crate::support::assert_refused_at_args(&host, &data, "comms", &cases).await;
}

fn context(now: &str, messages: Vec<Value>) -> Value {
    json!({
        "now": now,
        "utc_offset_minutes": 60,
        "messages": messages,
        "events": [],
        "transactions": [],
        "readings": {},
        "profile": {
            "vip_senders": ["dana@corp.example"],
            "quiet_hours": {"start": "22:00", "end": "07:00"},
            "me": "sam@corp.example",
            "working_hours": {"start": "09:00", "end": "17:00"}
        }
    })
}

#[tokio::test]
async fn tick_proposes_triage_and_extraction_for_new_mail() {
    let (host, data) = host_with("comms-tick", &["comms"]).await;
    // 11:00 local. New (last 2 h): m1 (VIP, urgent, 0.95) and m4 (0.146). m1 interrupts and
    // is VIP + urgent outside quiet hours → EARBUD_TTS, priority 95. Thread t1's new message
    // has a date phrase, "by EOD" (6 h away: 60), and is from a VIP (+10): extraction at 70.
    let ctx = context("2026-11-23T10:00:00Z", inbox());
    let outcome = host.tick("comms", &ctx).await.unwrap();
    assert!(outcome.refused.is_empty());
    assert_eq!(outcome.proposals.len(), 2);
    let triage = &outcome.proposals[0];
    assert_eq!(triage.priority, 95);
    assert_eq!(triage.signals, ["new_messages:2", "top:m1", "interrupt:m1"]);
    let call = assert_proposed(
        triage,
        ("comms", "triage_inbox"),
        "2026-11-23T10:00:00Z",
        false,
        aura_contract::envelope::Surface::EarbudTts,
    );
    // The proposal is a call the host can dispatch as it is.
    let result = host.dispatch(call).await.unwrap().result.unwrap();
    assert_eq!(result["messages"][0]["id"], "m1");
    assert_eq!(result["interrupt_count"], 1);

    let extract = &outcome.proposals[1];
    assert_eq!(extract.priority, 70);
    assert_eq!(
        extract.signals,
        [
            "thread:t1",
            "dated_messages:1",
            "earliest_due:2026-11-23T17:00:00+01:00",
            "due_phrase:by EOD",
            "vip"
        ]
    );
    let call = extract.call.call();
    assert_eq!(call.tool, "extract_action_items");
    assert_eq!(
        call.expected_surface,
        Some(aura_contract::envelope::Surface::PhoneCard)
    );
    let result = host.dispatch(call).await.unwrap().result.unwrap();
    assert_eq!(
        result["items"],
        json!([
            {"text": "I will send the draft on Friday.", "owner": "ann@corp.example",
             "owner_rule": "commitment", "due": "2026-11-27T17:00:00+01:00",
             "due_phrase": "on Friday", "message_index": 0},
            {"text": "Can you sign the contract by EOD?", "owner": "me",
             "owner_rule": "request", "due": "2026-11-23T17:00:00+01:00",
             "due_phrase": "by EOD", "message_index": 1}
        ])
    );
    assert!(quarantine_lines(&data).is_empty());
}

#[tokio::test]
async fn tick_in_quiet_hours_and_on_a_quiet_inbox() {
    let (host, data) = host_with("comms-tick-quiet", &["comms"]).await;
    // 23:30 local, quiet. Eve's message scores 0.6 but is not a VIP's: no interrupt, SILENT
    // at most 20. Dana's "URGENT" (VIP .3 + urgent .3 = .6) interrupts: WATCH at 60.
    let eve = msg(
        "q1",
        "tq",
        "eve@x.example",
        "asap",
        "Could you call me tonight?",
        "2026-11-23T22:20:00Z",
    );
    let dana = msg(
        "q2",
        "tv",
        "dana@corp.example",
        "Server down",
        "URGENT: production is down, call me.",
        "2026-11-23T22:25:00Z",
    );
    let outcome = host
        .tick("comms", &context("2026-11-23T22:30:00Z", vec![eve.clone()]))
        .await
        .unwrap();
    assert!(outcome.refused.is_empty());
    let surfaces: Vec<_> = outcome
        .proposals
        .iter()
        .map(|p| {
            (
                p.call.call().tool.as_str(),
                p.call.call().expected_surface,
                p.priority,
            )
        })
        .collect();
    use aura_contract::envelope::Surface::{Silent, Watch};
    assert_eq!(
        surfaces,
        [
            ("triage_inbox", Some(Silent), 20),
            ("extract_action_items", Some(Silent), 20)
        ]
    );
    let outcome = host
        .tick("comms", &context("2026-11-23T22:30:00Z", vec![eve, dana]))
        .await
        .unwrap();
    let triage = &outcome.proposals[0];
    assert_eq!(triage.call.call().expected_surface, Some(Watch));
    assert_eq!(triage.priority, 60);
    assert_eq!(
        triage.signals,
        ["new_messages:2", "top:q2", "interrupt:q2", "quiet_hours"]
    );

    // Nothing received in the last two hours: nothing to propose.
    let old = vec![msg(
        "o",
        "t",
        "a@x",
        "Report",
        "Send it by Friday.",
        "2026-11-22T10:00:00Z",
    )];
    let outcome = host
        .tick("comms", &context("2026-11-23T10:00:00Z", old))
        .await
        .unwrap();
    assert!(outcome.proposals.is_empty());
    assert!(outcome.refused.is_empty());
    assert!(quarantine_lines(&data).is_empty());
}

#[tokio::test]
async fn a_full_inbox_and_a_long_thread_fit_the_default_deadline() {
    let (host, _) = host_with("comms-full", &["comms"]).await;
    // 200 messages (the bound) with 2000-character bodies, each with a question, a date
    // phrase, a busy thread and an hour of age (four signals): the triage runs within the
    // default deadline's fuel, and so does a tick over them.
    let body = format!(
        "Can you review the attached plan by Friday? {}",
        "Lorem ipsum dolor sit amet. ".repeat(70)
    );
    let messages: Vec<Value> = (0..200)
        .map(|i| {
            msg(
                &format!("m{i:03}"),
                &format!("t{:02}", i % 40),
                "a@x",
                "Plan",
                &body,
                "2026-11-23T09:00:00Z",
            )
        })
        .collect();
    let args = json!({"messages": messages.clone(), "now": "2026-11-23T10:00:00Z"});
    let result = call(&host, "t_full000001", "triage_inbox", args).await;
    assert!(result.ok, "{:?}", result.error);
    let triage_fuel = result.fuel_used;
    let result = result.result.unwrap();
    assert_eq!(result["messages"].as_array().unwrap().len(), 200);
    assert_eq!(
        result["messages"][0]["signals"].as_array().unwrap().len(),
        4
    );
    let outcome = host
        .tick("comms", &context("2026-11-23T10:00:00Z", messages.clone()))
        .await
        .unwrap();
    assert!(outcome.refused.is_empty());
    assert_eq!(outcome.proposals.len(), 16);
    let tick_fuel = outcome.fuel_used;

    // A thread of 100 messages (the bound) of the same 2000 characters.
    let thread: Vec<Value> = messages
        .iter()
        .take(100)
        .map(|m| json!({"sender": "a@x", "body": m["body"], "sent_at": m["received_at"]}))
        .collect();
    let result = call(
        &host,
        "t_full000002",
        "extract_action_items",
        json!({"thread": thread}),
    )
    .await;
    assert!(result.ok, "{:?}", result.error);
    println!(
        "comms at its bounds: triage_inbox {triage_fuel} fuel, tick {tick_fuel}, \
         extract_action_items {} (budgets: 100,000,000 per call, 70,000,000 per tick)",
        result.fuel_used
    );
    // One request per message, all the same text and owner: kept once.
    assert_eq!(result.result.unwrap()["items"].as_array().unwrap().len(), 1);
}
