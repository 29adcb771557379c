//! The orchestrator tick: proposes `triage_inbox` when the context holds new messages and
//! `extract_action_items` for threads whose new messages carry due dates. It never proposes
//! `draft_reply`: a reply needs the user's intent.
//!
//! It owns reading the tick context leniently and the proposal rules below. It must not call
//! other agents and must not propose anything the catalogue would refuse: every proposed call's
//! args are built from the same types the tools deserialize, from context values that passed
//! the tools' own bounds, so they satisfy the tool's schema (the unit tests check each one
//! against the schema and run it).
//!
//! Reading the context (any field but `now` may be absent; unknown fields are ignored):
//! - `now` must be an RFC 3339 string (else invalid args). `utc_offset_minutes` outside
//!   -840..840 or not an integer counts as 0.
//! - `messages`: items without a usable id, thread_id, sender (1..320 characters, a non-blank
//!   address) or received_at are skipped, as are repeated ids (the first is kept); a missing
//!   subject or body is empty, longer ones are cut to 500 / 20,000 characters.
//! - `profile.vip_senders`: strings of 1..320 characters (the first 200); `profile.quiet_hours`:
//!   used when both times are "HH:MM" and differ; `profile.me` (the user's address, optional):
//!   passed to `extract_action_items`.
//! - `events`: only to know whether `now` falls inside one (start <= now < end).
//!
//! Proposals (at most 16; none when no message is new):
//! - A message is *new* when received at or after `now` − [`NEW_MESSAGE_WINDOW_SECS`].
//! - `triage_inbox` over the newest messages (at most [`TICK_TRIAGE_MESSAGES_MAX`], args under
//!   [`TRIAGE_ARGS_BYTES_MAX`]; the rest are left out, signal `dropped:<n>`), bodies cut to the
//!   characters the tool scans (so the result is what the full bodies would give);
//!   `vip_senders` are the profile's VIPs that sent one of them. The triage runs here too:
//!   priority = the highest urgency of a new message in percent (rounded half up), at least
//!   [`TRIAGE_PRIORITY_MIN`]. Surface: in quiet hours WATCH when a new message interrupts (only
//!   a VIP's urgent one can), else SILENT with priority at most [`QUIET_PRIORITY_MAX`]; outside
//!   quiet hours EARBUD_TTS when a new interrupting message is from a VIP with urgent words
//!   (WATCH when `now` is inside an event: no talking into a meeting), else PHONE_CARD.
//!   Signals: `new_messages:<n>`, `top:<id>` (best new message), `interrupt:<id>` for each new
//!   interrupting one, then `quiet_hours`, `in_meeting:<event id>`, `dropped:<n>` as they apply.
//! - `extract_action_items` for each thread with a new (triaged) message that contains a date
//!   phrase — the triage's own scan finds them, so no extraction runs in the tick. Args: the
//!   thread's context messages oldest first (received_at as sent_at), bodies cut cleanly to
//!   [`EXTRACT_BODY_CHARS`], the latest that fit in [`EXTRACT_ARGS_BYTES_MAX`] (at most 100),
//!   `me` from the profile. Priority [`EXTRACT_PRIORITY_NEAR`] / [`EXTRACT_PRIORITY_SOON`] /
//!   [`EXTRACT_PRIORITY_LATER`] when the earliest of those due times is within 24 h of now (or
//!   past) / within 72 h / later, plus [`EXTRACT_VIP_BONUS`] when a new message of the thread
//!   is from a VIP; PHONE_CARD, or SILENT with priority at most [`QUIET_PRIORITY_MAX`] in quiet
//!   hours. Signals: `thread:<id>`, `dated_messages:<n>`, `earliest_due:<time>`,
//!   `due_phrase:<phrase>`, then `vip` and `quiet_hours` as they apply. Ordered by priority,
//!   then the thread's newest message (newest first), then thread id; at most 15, their args
//!   together under [`EXTRACT_ARGS_TOTAL_BYTES_MAX`] (a thread that does not fit is skipped).
//! - `call_id` = `call_id_from("comms/tick\n" + now + "\n" + tool + "\n" + key)`, where key is
//!   the new message ids (sorted, one per line) for triage and the thread id for extraction.

use std::collections::{HashMap, HashSet};

use aura_sdk::ToolResult;
use aura_sdk::args::str_member;
use aura_sdk::envelope::{
    PROPOSALS_MAX, Proposal, SIGNAL_CHARS_MAX, Signals, Surface, ToolCall, answer,
};
use aura_sdk::time::{SECS_PER_DAY, SECS_PER_HOUR, format_time, offset_minutes_of, parse_time};
use serde::Serialize;
use serde_json::{Map, Value};

use crate::actions::{ExtractActionItemsArgs, MAX_THREAD_MESSAGES, ThreadMessage};
use crate::common::{
    MAX_ADDRESS_CHARS, MAX_BODY_CHARS, MAX_ID_CHARS, MAX_SUBJECT_CHARS, Message, QuietHours,
    address_of, normalize_address, signal_text,
};
use crate::text::{cut_clean, first_chars};
use crate::triage::{self, MAX_VIPS, SCAN_BODY_CHARS_MAX, Scored, Triage, TriageInboxArgs};

/// The agent's name in envelopes.
pub const AGENT: &str = "comms";
/// A message received within the last two hours is new: the tick runs every few minutes, and
/// two hours keeps a message in view through a meeting without re-proposing the whole day.
pub const NEW_MESSAGE_WINDOW_SECS: i64 = 2 * SECS_PER_HOUR;
/// Most messages in the proposed triage (the newest): the tick's 700 ms budget (70 M fuel)
/// holds reading the context and one triage of 50 messages (~0.4 M fuel each, see
/// `triage::SCAN_BODY_CHARS_MAX`) with room to spare; a full inbox is the tool's job, with the
/// call's own deadline.
pub const TICK_TRIAGE_MESSAGES_MAX: usize = 50;
/// Body characters passed to extraction: action items sit in the new text, which comes first.
pub const EXTRACT_BODY_CHARS: usize = 2_000;
/// Byte budget of the triage args (50 messages of 600-character bodies take ~40 KiB).
pub const TRIAGE_ARGS_BYTES_MAX: usize = 160 * 1024;
/// Byte budget of one extraction's args.
pub const EXTRACT_ARGS_BYTES_MAX: usize = 24 * 1024;
/// Byte budget of all extraction args together. With the triage budget and 16 proposals × 16
/// signals of at most 800 bytes, a tick's answer stays under ~700 KiB, below the host's 1 MiB.
pub const EXTRACT_ARGS_TOTAL_BYTES_MAX: usize = 320 * 1024;
/// Lowest triage priority: new mail is worth a look even when nothing in it scores.
pub const TRIAGE_PRIORITY_MIN: i64 = 10;
/// Highest priority of a proposal that will not interrupt during quiet hours.
pub const QUIET_PRIORITY_MAX: i64 = 20;
/// Extraction priority when a due time is within a day of now (or past).
pub const EXTRACT_PRIORITY_NEAR: i64 = 60;
/// Extraction priority when a due time is within three days of now.
pub const EXTRACT_PRIORITY_SOON: i64 = 45;
/// Extraction priority for later due times.
pub const EXTRACT_PRIORITY_LATER: i64 = 30;
/// Added to an extraction's priority when a new message of the thread is from a VIP.
pub const EXTRACT_VIP_BONUS: i64 = 10;

/// What the tick reads from the context.
struct Context {
    now_text: String,
    now: i64,
    offset: i32,
    /// Usable messages and their received_at in Unix seconds.
    messages: Vec<(Message, i64)>,
    vips: Vec<String>,
    quiet_hours: Option<QuietHours>,
    me: Option<String>,
    meeting: Option<String>,
}

/// The orchestrator tick. See the module documentation.
pub fn tick(context: Value) -> ToolResult<Value> {
    let context = read_context(&context)?;
    let new = |t: i64| t >= context.now - NEW_MESSAGE_WINDOW_SECS;
    if !context.messages.iter().any(|(_, t)| new(*t)) {
        return Ok(answer(Vec::new()));
    }
    let (args, dropped) = triage_args(&context);
    let triage = triage::triage(&args)?;
    let mut proposals = vec![triage_proposal(&context, &args, &triage, dropped, &new)?];
    proposals.extend(extract_proposals(&context, &args, &triage, &new));
    Ok(answer(proposals))
}

fn read_context(context: &Value) -> ToolResult<Context> {
    let (context, now_text, now) = aura_sdk::args::tick_context(context)?;
    let now_text = now_text.to_owned();
    let offset = context
        .get("utc_offset_minutes")
        .and_then(offset_minutes_of)
        .unwrap_or(0);
    let empty = Map::new();
    let profile = context
        .get("profile")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let address = |value: Option<&Value>| {
        value
            .and_then(Value::as_str)
            .filter(|s| (1..=MAX_ADDRESS_CHARS).contains(&s.chars().count()))
            .filter(|s| !address_of(s).is_empty())
            .map(str::to_owned)
    };
    let vips: Vec<String> = profile
        .get("vip_senders")
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .filter_map(|v| address(Some(v)))
                .take(MAX_VIPS)
                .collect()
        })
        .unwrap_or_default();
    let quiet_hours = profile
        .get("quiet_hours")
        .and_then(Value::as_object)
        .and_then(|q| {
            Some(QuietHours {
                start: q.get("start")?.as_str()?.to_owned(),
                end: q.get("end")?.as_str()?.to_owned(),
            })
        });
    let quiet = quiet_hours
        .as_ref()
        .and_then(|q| q.check("quiet_hours").ok());
    let quiet_hours = quiet_hours.filter(|_| quiet.is_some());
    let me = address(profile.get("me"));

    let mut seen = HashSet::new();
    let messages = match context.get("messages") {
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(lenient_message)
            .filter(|(m, _)| seen.insert(m.id.clone()))
            .collect(),
        _ => Vec::new(),
    };
    let meeting = match context.get("events") {
        Some(Value::Array(events)) => events.iter().find_map(|e| {
            let e = e.as_object()?;
            let id = e.get("id")?.as_str()?;
            let start = parse_time(e.get("start")?.as_str()?, "start").ok()?;
            let end = parse_time(e.get("end")?.as_str()?, "end").ok()?;
            (start <= now && now < end && (1..=MAX_ID_CHARS).contains(&id.chars().count()))
                .then(|| id.to_owned())
        }),
        _ => None,
    };
    Ok(Context {
        now_text,
        now,
        offset,
        messages,
        vips,
        quiet_hours,
        me,
        meeting,
    })
}

/// One context message, if usable (module docs).
fn lenient_message(value: &Value) -> Option<(Message, i64)> {
    let object = value.as_object()?;
    let text =
        |key: &str, min: usize, max: usize| str_member(object, key, min, max).map(str::to_owned);
    let cut = |key: &str, max: usize| {
        object
            .get(key)
            .and_then(Value::as_str)
            .map_or_else(String::new, |s| first_chars(s, max).to_owned())
    };
    let received_at = text("received_at", 1, 40)?;
    let received = parse_time(&received_at, "received_at").ok()?;
    let sender = text("sender", 1, MAX_ADDRESS_CHARS).filter(|s| !address_of(s).is_empty())?;
    let message = Message {
        id: text("id", 1, MAX_ID_CHARS)?,
        thread_id: text("thread_id", 1, MAX_ID_CHARS)?,
        sender,
        subject: cut("subject", MAX_SUBJECT_CHARS),
        body: cut("body", MAX_BODY_CHARS),
        received_at,
    };
    Some((message, received))
}

/// Serialized size of a value, in bytes (what it adds to the answer, plus a comma).
fn json_bytes(value: &impl Serialize) -> usize {
    serde_json::to_vec(value).map_or(usize::MAX / 4, |v| v.len() + 1)
}

/// Signals cut to the proposals.v1 bounds: each at most 200 printable characters, at most 16
/// (the last then `more:<n>`).
fn bounded_signals(signals: Vec<String>) -> Signals {
    Signals::capped(
        signals
            .into_iter()
            .map(|s| signal_text(&s, SIGNAL_CHARS_MAX)),
    )
}

/// A proposed call of this agent's `tool`, its id from `now` and `key`.
fn proposed_call(
    context: &Context,
    tool: &str,
    key: &str,
    args: &impl Serialize,
    surface: Surface,
) -> ToolResult<ToolCall> {
    let seed = format!("comms/tick\n{}\n{tool}\n{key}", context.now_text);
    Ok(ToolCall::new(&seed, AGENT, tool, args, &context.now_text)?.expected_surface(surface))
}

/// The triage args: the newest messages (at most [`TICK_TRIAGE_MESSAGES_MAX`], within
/// [`TRIAGE_ARGS_BYTES_MAX`]), bodies cut to what the tool scans; and how many were left out.
fn triage_args(context: &Context) -> (TriageInboxArgs, usize) {
    let mut order: Vec<usize> = (0..context.messages.len()).collect();
    order.sort_by(|&a, &b| {
        let ((ma, ta), (mb, tb)) = (&context.messages[a], &context.messages[b]);
        (tb, ma.id.as_bytes()).cmp(&(ta, mb.id.as_bytes()))
    });
    let mut messages = Vec::new();
    let mut bytes = 0;
    for &i in &order {
        let (m, _) = &context.messages[i];
        let message = Message {
            body: first_chars(&m.body, SCAN_BODY_CHARS_MAX).to_owned(),
            ..m.clone()
        };
        let size = json_bytes(&message);
        if messages.len() == TICK_TRIAGE_MESSAGES_MAX || bytes + size > TRIAGE_ARGS_BYTES_MAX {
            break;
        }
        bytes += size;
        messages.push(message);
    }
    let dropped = context.messages.len() - messages.len();
    let senders: HashSet<String> = messages
        .iter()
        .map(|m| normalize_address(&m.sender))
        .collect();
    let mut vip_seen = HashSet::new();
    let vip_senders: Vec<String> = context
        .vips
        .iter()
        .filter(|v| {
            let key = normalize_address(v);
            senders.contains(&key) && vip_seen.insert(key)
        })
        .cloned()
        .collect();
    let args = TriageInboxArgs {
        messages,
        vip_senders,
        quiet_hours: context.quiet_hours.clone(),
        utc_offset_minutes: context.offset,
        now: context.now_text.clone(),
    };
    (args, dropped)
}

fn triage_proposal(
    context: &Context,
    args: &TriageInboxArgs,
    result: &Triage,
    dropped: usize,
    new: &dyn Fn(i64) -> bool,
) -> ToolResult<Proposal> {
    let fresh: Vec<&Scored> = result.ranked.iter().filter(|s| new(s.received)).collect();
    let best = fresh.first().map_or(0, |s| s.milli);
    let interrupting: Vec<&&Scored> = fresh.iter().filter(|s| s.interrupt).collect();
    let vip_urgent = interrupting.iter().any(|s| s.vip && s.urgent);
    let mut priority = ((best + 5) / 10).max(TRIAGE_PRIORITY_MIN);
    let surface = if result.quiet_now {
        if interrupting.is_empty() {
            priority = priority.min(QUIET_PRIORITY_MAX);
            Surface::Silent
        } else {
            Surface::Watch
        }
    } else if vip_urgent {
        if context.meeting.is_some() {
            Surface::Watch
        } else {
            Surface::EarbudTts
        }
    } else {
        Surface::PhoneCard
    };

    let id = |s: &Scored| args.messages[s.index].id.clone();
    let mut signals = vec![format!("new_messages:{}", fresh.len())];
    if let Some(top) = fresh.first() {
        signals.push(format!("top:{}", id(top)));
    }
    signals.extend(interrupting.iter().map(|s| format!("interrupt:{}", id(s))));
    if result.quiet_now {
        signals.push("quiet_hours".to_owned());
    }
    if let Some(event) = &context.meeting {
        signals.push(format!("in_meeting:{event}"));
    }
    if dropped > 0 {
        signals.push(format!("dropped:{dropped}"));
    }
    let mut new_ids: Vec<&str> = fresh
        .iter()
        .map(|s| args.messages[s.index].id.as_str())
        .collect();
    new_ids.sort_unstable();
    let call = proposed_call(context, "triage_inbox", &new_ids.join("\n"), args, surface)?;
    Ok(Proposal::new(call, bounded_signals(signals), priority))
}

/// A candidate extraction, before ordering.
struct Candidate<'a> {
    thread_id: &'a str,
    /// New triaged messages of the thread with a date phrase (rank order).
    dated: Vec<&'a Scored>,
    vip: bool,
    newest: i64,
    priority: i64,
}

fn extract_proposals(
    context: &Context,
    args: &TriageInboxArgs,
    result: &Triage,
    new: &dyn Fn(i64) -> bool,
) -> Vec<Proposal> {
    let mut by_thread: HashMap<&str, Candidate<'_>> = HashMap::new();
    for scored in result.ranked.iter().filter(|s| new(s.received)) {
        let thread_id = args.messages[scored.index].thread_id.as_str();
        let candidate = by_thread.entry(thread_id).or_insert(Candidate {
            thread_id,
            dated: Vec::new(),
            vip: false,
            newest: i64::MIN,
            priority: 0,
        });
        candidate.vip |= scored.vip;
        candidate.newest = candidate.newest.max(scored.received);
        if scored.earliest_due.is_some() {
            candidate.dated.push(scored);
        }
    }
    let quiet_now = result.quiet_now;
    let earliest = |c: &Candidate<'_>| {
        c.dated
            .iter()
            .filter_map(|s| s.earliest_due.as_ref())
            .min_by_key(|(at, _)| *at)
            .cloned()
    };
    let mut candidates: Vec<Candidate<'_>> = by_thread
        .into_values()
        .filter(|c| !c.dated.is_empty())
        .map(|mut c| {
            let (at, _) = earliest(&c).unwrap_or((context.now, String::new()));
            let base = match at - context.now {
                d if d <= SECS_PER_DAY => EXTRACT_PRIORITY_NEAR,
                d if d <= 3 * SECS_PER_DAY => EXTRACT_PRIORITY_SOON,
                _ => EXTRACT_PRIORITY_LATER,
            };
            c.priority = base + if c.vip { EXTRACT_VIP_BONUS } else { 0 };
            if quiet_now {
                c.priority = c.priority.min(QUIET_PRIORITY_MAX);
            }
            c
        })
        .collect();
    candidates.sort_by(|a, b| {
        (b.priority, b.newest, a.thread_id.as_bytes()).cmp(&(
            a.priority,
            a.newest,
            b.thread_id.as_bytes(),
        ))
    });

    let mut total = 0;
    let mut out = Vec::new();
    for candidate in candidates {
        if out.len() == PROPOSALS_MAX - 1 {
            break;
        }
        let (thread, bytes) = thread_args(context, candidate.thread_id);
        if total + bytes > EXTRACT_ARGS_TOTAL_BYTES_MAX {
            continue;
        }
        total += bytes;
        let extract = ExtractActionItemsArgs {
            thread,
            me: context.me.clone(),
            utc_offset_minutes: context.offset,
        };
        let surface = if quiet_now {
            Surface::Silent
        } else {
            Surface::PhoneCard
        };
        let call = proposed_call(
            context,
            "extract_action_items",
            candidate.thread_id,
            &extract,
            surface,
        );
        let Ok(call) = call else {
            continue;
        };
        let mut signals = vec![
            format!("thread:{}", candidate.thread_id),
            format!("dated_messages:{}", candidate.dated.len()),
        ];
        if let Some((at, phrase)) = earliest(&candidate) {
            if let Ok(due) = format_time(at, context.offset) {
                signals.push(format!("earliest_due:{due}"));
            }
            signals.push(format!("due_phrase:{phrase}"));
        }
        if candidate.vip {
            signals.push("vip".to_owned());
        }
        if quiet_now {
            signals.push("quiet_hours".to_owned());
        }
        out.push(Proposal::new(
            call,
            bounded_signals(signals),
            candidate.priority,
        ));
    }
    out
}

/// The thread's context messages, oldest first (received_at as sent_at), bodies cut cleanly
/// to [`EXTRACT_BODY_CHARS`]: the latest that fit in [`EXTRACT_ARGS_BYTES_MAX`] (at most
/// 100). Also their size in bytes.
fn thread_args(context: &Context, thread_id: &str) -> (Vec<ThreadMessage>, usize) {
    let mut members: Vec<&(Message, i64)> = context
        .messages
        .iter()
        .filter(|(m, _)| m.thread_id == thread_id)
        .collect();
    members.sort_by(|(ma, ta), (mb, tb)| (ta, ma.id.as_bytes()).cmp(&(tb, mb.id.as_bytes())));
    let mut kept = Vec::new();
    let mut bytes = 0;
    for (m, _) in members.into_iter().rev() {
        let message = ThreadMessage {
            sender: m.sender.clone(),
            body: cut_clean(&m.body, EXTRACT_BODY_CHARS).0,
            sent_at: m.received_at.clone(),
            to: None,
        };
        let size = json_bytes(&message);
        if kept.len() == MAX_THREAD_MESSAGES || bytes + size > EXTRACT_ARGS_BYTES_MAX {
            break;
        }
        bytes += size;
        kept.push(message);
    }
    kept.reverse();
    (kept, bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SCHEMAS;
    use crate::actions::extract_action_items;
    use crate::triage::triage_inbox;
    use aura_sdk::{ToolErrorKind, call_id_from};
    use serde_json::json;

    fn msg(id: &str, thread: &str, sender: &str, subject: &str, body: &str, at: &str) -> Value {
        json!({"id": id, "thread_id": thread, "sender": sender, "subject": subject,
               "body": body, "received_at": at})
    }

    /// The tick's proposals, each checked against proposals.v1, toolcall.v1 and its tool's
    /// args schema (see `aura_testkit`), and run.
    fn proposals(context: Value) -> Vec<Value> {
        let list = SCHEMAS.tick_proposals(&tick(context).unwrap());
        for p in &list {
            check_proposal(p);
        }
        list
    }

    /// The proposed call (checked by `proposals`) runs.
    fn check_proposal(p: &Value) {
        let call = &p["call"];
        assert_eq!(call["confirm_required"], false);
        let tool = call["tool"].as_str().unwrap();
        match tool {
            "triage_inbox" => {
                triage_inbox(serde_json::from_value(call["args"].clone()).unwrap()).unwrap();
            }
            "extract_action_items" => {
                extract_action_items(serde_json::from_value(call["args"].clone()).unwrap())
                    .unwrap();
            }
            other => panic!("tick proposed {other}"),
        }
    }

    /// Monday 2026-11-23 at +01:00; Dana is a VIP; quiet hours 22:00-07:00.
    fn context(now: &str, messages: Vec<Value>) -> Value {
        json!({
            "now": now,
            "utc_offset_minutes": 60,
            "messages": messages,
            "profile": {
                "vip_senders": ["dana@corp.example", "nobody@corp.example"],
                "quiet_hours": {"start": "22:00", "end": "07:00"},
                "me": "sam@corp.example",
                "budgets": [{"category": "food"}]
            },
            "transactions": [],
        })
    }

    fn daytime() -> Vec<Value> {
        vec![
            msg(
                "m1",
                "t1",
                "Dana Boss <dana@corp.example>",
                "URGENT: contract",
                "Can you sign the contract by EOD?",
                "2026-11-23T09:30:00Z",
            ),
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
                "m4",
                "t3",
                "carol@x.example",
                "Lunch",
                "Are you free for lunch? It's not urgent.",
                "2026-11-23T08:00:00Z",
            ),
        ]
    }

    #[test]
    fn a_vip_urgent_message_in_the_day_goes_to_the_earbuds() {
        let now = "2026-11-23T10:00:00Z";
        let list = proposals(context(now, daytime()));
        assert_eq!(list.len(), 2);

        // New: m1 (30 min old) and m4 (exactly 2 h old). m1 scores 0.95 (triage tests:
        // VIP .3 + urgent .3 + EOD .15 + question .15 + heat .05) → priority 95; it
        // interrupts and is VIP + urgent, not quiet, no meeting → EARBUD_TTS.
        let triage = &list[0];
        assert_eq!(triage["priority"], 95);
        assert_eq!(
            triage["signals"],
            json!(["new_messages:2", "top:m1", "interrupt:m1"])
        );
        let call = &triage["call"];
        assert_eq!(call["tool"], "triage_inbox");
        assert_eq!(call["expected_surface"], "EARBUD_TTS");
        assert_eq!(call["ts"], now);
        assert_eq!(
            call["call_id"],
            call_id_from("comms/tick\n2026-11-23T10:00:00Z\ntriage_inbox\nm1\nm4")
        );
        let args = &call["args"];
        // Newest first; only the VIP who sent one of them.
        let ids: Vec<&str> = args["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["id"].as_str().unwrap())
            .collect();
        assert_eq!(ids, ["m1", "m4", "m2", "m3"]);
        assert_eq!(args["vip_senders"], json!(["dana@corp.example"]));
        assert_eq!(
            args["quiet_hours"],
            json!({"start": "22:00", "end": "07:00"})
        );
        assert_eq!(args["utc_offset_minutes"], 60);
        assert_eq!(args["now"], now);

        // Thread t1: m1 says "by EOD" (10:30 local → 17:00 today = 16:00Z, 6 h away: near,
        // 60) and is from a VIP (+10) → 70. m2's "on Friday" is not in a new message. m4
        // (thread t3) has no date phrase; t2 has nothing new.
        let extract = &list[1];
        assert_eq!(extract["priority"], 70);
        assert_eq!(
            extract["signals"],
            json!([
                "thread:t1",
                "dated_messages:1",
                "earliest_due:2026-11-23T17:00:00+01:00",
                "due_phrase:by EOD",
                "vip"
            ])
        );
        let call = &extract["call"];
        assert_eq!(call["tool"], "extract_action_items");
        assert_eq!(call["expected_surface"], "PHONE_CARD");
        assert_eq!(
            call["call_id"],
            call_id_from("comms/tick\n2026-11-23T10:00:00Z\nextract_action_items\nt1")
        );
        assert_eq!(
            call["args"],
            json!({
                "thread": [
                    {"sender": "ann@corp.example", "body": "I will send the draft on Friday.",
                     "sent_at": "2026-11-22T22:30:00Z"},
                    {"sender": "Dana Boss <dana@corp.example>",
                     "body": "Can you sign the contract by EOD?",
                     "sent_at": "2026-11-23T09:30:00Z"}
                ],
                "me": "sam@corp.example",
                "utc_offset_minutes": 60
            })
        );
        // Deterministic.
        assert_eq!(
            tick(context(now, daytime())).unwrap(),
            tick(context(now, daytime())).unwrap()
        );
    }

    #[test]
    fn in_a_meeting_the_vip_message_goes_to_the_watch() {
        let mut ctx = context("2026-11-23T10:00:00Z", daytime());
        ctx["events"] = json!([
            {"id": "later", "start": "2026-11-23T11:00:00Z", "end": "2026-11-23T12:00:00Z"},
            {"id": "standup", "title": "Standup", "start": "2026-11-23T09:45:00Z",
             "end": "2026-11-23T10:15:00Z"}
        ]);
        let list = proposals(ctx);
        assert_eq!(list[0]["call"]["expected_surface"], "WATCH");
        assert_eq!(
            list[0]["signals"],
            json!([
                "new_messages:2",
                "top:m1",
                "interrupt:m1",
                "in_meeting:standup"
            ])
        );
        assert_eq!(list[0]["priority"], 95);
    }

    #[test]
    fn in_quiet_hours_only_a_vip_urgent_message_reaches_the_watch() {
        let now = "2026-11-23T22:30:00Z"; // 23:30 local
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

        // Eve alone: urgent .3 + "tonight" (23:59 local, 29 min away: near) .15 + question .15
        // = 0.6, not a VIP → no interrupt in quiet hours: SILENT, priority min(60, 20) = 20.
        let list = proposals(context(now, vec![eve.clone()]));
        assert_eq!(list.len(), 2);
        assert_eq!(list[0]["call"]["expected_surface"], "SILENT");
        assert_eq!(list[0]["priority"], 20);
        assert_eq!(
            list[0]["signals"],
            json!(["new_messages:1", "top:q1", "quiet_hours"])
        );
        // Her "tonight" is near (60) but quiet hours cap it at 20, SILENT.
        assert_eq!(list[1]["call"]["expected_surface"], "SILENT");
        assert_eq!(list[1]["priority"], 20);
        assert_eq!(
            list[1]["signals"],
            json!([
                "thread:tq",
                "dated_messages:1",
                "earliest_due:2026-11-23T23:59:00+01:00",
                "due_phrase:tonight",
                "quiet_hours"
            ])
        );

        // With Dana's VIP + urgent message (0.3 + 0.3 = 0.6, interrupts): WATCH at 60. Both
        // score 0.6; Dana's is newer, so it is on top. Her message has no date phrase.
        let list = proposals(context(now, vec![eve, dana]));
        assert_eq!(list.len(), 2);
        assert_eq!(list[0]["call"]["expected_surface"], "WATCH");
        assert_eq!(list[0]["priority"], 60);
        assert_eq!(
            list[0]["signals"],
            json!(["new_messages:2", "top:q2", "interrupt:q2", "quiet_hours"])
        );
        assert_eq!(
            list[1]["call"]["args"]["thread"][0]["sender"],
            "eve@x.example"
        );
    }

    #[test]
    fn nothing_new_proposes_nothing_and_malformed_messages_are_skipped() {
        assert!(proposals(json!({"now": "2026-11-23T10:00:00Z"})).is_empty());
        assert!(proposals(json!({"now": "2026-11-23T10:00:00Z", "messages": null})).is_empty());
        // Only old messages.
        let old = vec![msg(
            "o",
            "t",
            "a@x",
            "s",
            "Send it by Friday.",
            "2026-11-22T10:00:00Z",
        )];
        assert!(proposals(context("2026-11-23T10:00:00Z", old)).is_empty());
        // Malformed ones are skipped; a missing body is empty; a repeated id is dropped;
        // unknown fields are ignored. The one usable message is a plain note: triage only,
        // at the minimum priority 10 (it scores 0), PHONE_CARD.
        let mut extra = msg("ok", "t", "a@x", "hello", "", "2026-11-23T09:59:00Z");
        extra.as_object_mut().unwrap().remove("body");
        extra["labels"] = json!(["inbox"]);
        let messages = vec![
            json!("nonsense"),
            json!({"id": "x", "thread_id": "t", "sender": "a@x", "received_at": "today"}),
            msg("", "t", "a@x", "", "", "2026-11-23T09:59:00Z"),
            msg("blank", "t", " <> ", "", "", "2026-11-23T09:59:00Z"),
            extra,
            msg("ok", "t", "b@x", "again", "", "2026-11-23T09:59:00Z"),
        ];
        let mut ctx = context("2026-11-23T10:00:00Z", messages);
        ctx["utc_offset_minutes"] = json!(5000); // out of range → 0
        ctx["profile"]["quiet_hours"] = json!({"start": "25:00", "end": "07:00"}); // unusable
        let list = proposals(ctx);
        assert_eq!(list.len(), 1);
        assert_eq!(list[0]["priority"], 10);
        assert_eq!(list[0]["signals"], json!(["new_messages:1", "top:ok"]));
        assert_eq!(list[0]["call"]["expected_surface"], "PHONE_CARD");
        let args = &list[0]["call"]["args"];
        assert_eq!(
            args["messages"],
            json!([{"id": "ok", "thread_id": "t", "sender": "a@x", "subject": "hello",
                    "body": "", "received_at": "2026-11-23T09:59:00Z"}])
        );
        assert_eq!(args["utc_offset_minutes"], 0);
        assert!(args.get("quiet_hours").is_none());
    }

    #[test]
    fn big_inboxes_stay_within_the_bounds() {
        // 250 messages, all new at 09:00Z, each in its own thread, bodies of 3032 characters
        // opening with a due date: the triage takes the 50 newest (all equal → by id: m000 to
        // m049) with bodies cut to 600 characters, 200 dropped. Each of their threads has a
        // date phrase ("by Friday": Friday 27th 17:00 local, more than 72 h away: 30), so 15
        // extractions, equal in priority and time → by thread id, t000 to t014.
        let body = format!("Please send the file by Friday. {}", "x".repeat(3000));
        let messages: Vec<Value> = (0..250)
            .map(|i| {
                msg(
                    &format!("m{i:03}"),
                    &format!("t{i:03}"),
                    "a@x",
                    "s",
                    &body,
                    "2026-11-23T09:00:00Z",
                )
            })
            .collect();
        let list = proposals(context("2026-11-23T10:00:00Z", messages));
        assert_eq!(list.len(), PROPOSALS_MAX);
        let args = &list[0]["call"]["args"];
        let kept = args["messages"].as_array().unwrap();
        assert_eq!(kept.len(), TICK_TRIAGE_MESSAGES_MAX);
        assert_eq!(kept[49]["id"], "m049");
        assert_eq!(
            kept[0]["body"].as_str().unwrap().chars().count(),
            SCAN_BODY_CHARS_MAX
        );
        assert_eq!(list[0]["signals"][2], "dropped:200");
        assert_eq!(list[1]["priority"], EXTRACT_PRIORITY_LATER);
        assert_eq!(list[1]["signals"][0], "thread:t000");
        assert_eq!(list[15]["signals"][0], "thread:t014");
        // The extraction bodies are cut cleanly at 2000 characters (one long word: a hard
        // cut at 1999 + '…').
        let thread = list[1]["call"]["args"]["thread"].as_array().unwrap();
        assert_eq!(
            thread[0]["body"].as_str().unwrap().chars().count(),
            EXTRACT_BODY_CHARS
        );
        let text = aura_sdk::to_canonical(&json!({"proposals": list})).unwrap();
        assert!(text.len() < 1024 * 1024, "{}", text.len());
    }

    #[test]
    fn through_the_agent_wiring() {
        let ctx = context("2026-11-23T10:00:00Z", daytime());
        let answer: Value = serde_json::from_str(&crate::Comms::tick(&ctx.to_string())).unwrap();
        assert_eq!(answer, tick(ctx).unwrap());
        let manifest: Value = serde_json::from_str(&crate::Comms::manifest()).unwrap();
        assert_eq!(
            manifest["tools"],
            json!(["triage_inbox", "draft_reply", "extract_action_items"])
        );
        let call = json!({"tool": "draft_reply", "args": {
            "message": {"sender": "a@x", "subject": "Hi", "body": ""},
            "intent": "accept", "tone": "brief"}});
        assert_eq!(
            crate::Comms::invoke(&call.to_string()),
            r#"{"ok":true,"result":{"body":"Sounds good, confirmed.","subject":"Re: Hi","template":"accept.brief","to":"a@x","truncated":false}}"#
        );
    }

    #[test]
    fn bad_context_is_invalid_args() {
        // Every tick refuses a context without a usable `now` (see `aura_testkit`).
        for ctx in aura_testkit::contexts_without_a_usable_now() {
            let e = tick(ctx).unwrap_err();
            assert_eq!(e.kind, ToolErrorKind::InvalidArgs);
        }
    }
}
