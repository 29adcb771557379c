//! The calendar agent's tick: proposes `detect_conflicts` when today's events clash, and
//! `schedule_event` (for the user to confirm) for each pending meeting invitation.
//!
//! Context: a JSON object with `now` (RFC 3339, required), `events` (array of events shaped
//! as in `detect_conflicts`), `invitations` (array of `{id, from, title, start, end,
//! location?, attendees?}`, as `$defs/invitation` in `schemas/scenario.v1.json`), `profile`
//! (`working_hours`, `break_after_meetings`, `break_after_meetings_stress`) and
//! `utc_offset_minutes`. Absent or null arrays mean none; `events` or `invitations` present
//! but not an array fails the tick (`invalid_args`). Other fields are ignored.
//!
//! Rules:
//! - Events are taken leniently, since the context is a snapshot and not checked against the
//!   tool's schema: an element without a usable `id` (1..128 chars), `start`, `end` (RFC 3339,
//!   end after start) is skipped; a `title` or `location` that is not a string of at most 200
//!   characters is dropped; unknown fields are dropped; a repeated id keeps the first event.
//!   At most 500 events are kept: when there are more, events still running or ahead of `now`
//!   go first (then those that ended most recently); the kept events keep context order.
//!
//! **detect_conflicts** (always the first proposal, when there is one):
//! - The kept events are analysed exactly like `detect_conflicts` with the default travel gap
//!   (15 minutes). No conflict → no such proposal. Otherwise one: a `detect_conflicts` call
//!   over the kept events with `"travel_gap_minutes":15`.
//! - `signals`: `"double_booking:<a>/<b>"`, `"overlap:<a>/<b>"`, `"tight_transition:<from>/
//!   <to>"` in the tool's pair order (intersecting pairs first, then transitions); at most 16,
//!   the 16th being `"more:<n>"` when n further conflicts were left out.
//! - `priority`: the highest score among the conflicts. A conflict whose two events have both
//!   ended by `now` scores 5. Otherwise kind (double booking 60, overlap 50, tight transition
//!   30) plus urgency by the time from `now` to the later event's start: already started or
//!   ≤ 60 min +40, ≤ 3 h +25, ≤ 24 h +10, later +0; capped at 100.
//! - `expected_surface`: `"WATCH"` when some conflict not yet over starts within 60 minutes
//!   (or already has), else `"PHONE_CARD"`.
//! - `call_id`: `aura_sdk::call_id_from("calendar/tick\n" + now + "\ndetect_conflicts\n" +
//!   signals joined by "\n")`; `ts`: `now` as given; `confirm_required`: false.
//!
//! **schedule_event** (one per usable pending invitation, after the above):
//! - Invitations are taken leniently too: an element needs `id` (1..128 chars), `from`
//!   (1..320 chars), `title` (1..200 chars, not blank) and `start`/`end` (RFC 3339, end after
//!   start), else it is skipped; a `location` that is not a string of at most 200 characters is
//!   dropped; `attendees` keeps its strings of at most 254 characters, the first 50 (not an
//!   array: dropped); unknown fields are dropped; a repeated id keeps the first invitation.
//!   An invitation that has started by `now` (start ≤ now) is skipped: it is too late to ask.
//! - At most [`INVITATIONS_PROPOSED_MAX`] (15) proposals, soonest start first (ties: context
//!   order); further ones wait for a later tick. A proposal that would take the tick's output
//!   past [`PROPOSALS_BYTES_BUDGET`] is left out, with every later one.
//! - The call: `schedule_event` with `event` {title, start, end, location?, attendees?} as the
//!   invitation gives them, `existing`: the kept events (as for `detect_conflicts`),
//!   `"travel_gap_minutes":15`, `utc_offset_minutes` (the context's; 0 when absent) and
//!   `working_hours` (the profile's `{start, end, weekdays?}`, when usable: "HH:MM" times with
//!   end after start, weekdays an array of 1..7 ISO weekdays, repeats dropped). A context
//!   offset that is not an integer in −840..840 leaves out the offset, the working hours and
//!   `break_after` (nothing can be placed in local time).
//! - `break_after` is set when `profile.break_after_meetings` is `true` and the working hours
//!   are usable: `{stress_score, working_hours {start, end}, utc_offset_minutes}`. Calendar has
//!   no stress reading of its own, so the score is `profile.break_after_meetings_stress` (an
//!   integer 0..100), else [`BREAK_AFTER_STRESS_DEFAULT`] (60). (Running it makes calendar call
//!   wellness with the free time after the event; see [`crate::break_after`].)
//! - `confirm_required`: **true** — the catalogue requires the user's confirmation for
//!   `schedule_event`; the orchestrator asks and never runs it unconfirmed.
//! - `signals`: `"invitation:<id>"` first (the orchestrator matches the user's answer on this
//!   exact signal), then `"from:<sender>"` (the sender cut to 195 characters, so the signal
//!   fits 200), then `"conflict:<event id>"` for each kept event whose time intersects the
//!   invitation's (start, then id); at most 16, the 16th being `"more:<n>"` when n further
//!   conflicts were left out.
//! - `priority`: [`INVITATION_PRIORITY_BASE`] (40), +[`INVITATION_SOON_BONUS`] (20) when it
//!   starts within 24 h of `now`, +[`INVITATION_CONFLICT_BONUS`] (10) when it conflicts with
//!   a kept event (at most 70).
//! - `expected_surface`: `"PHONE_CARD"` (a question to answer, not a nudge).
//! - `call_id`: `aura_sdk::call_id_from("calendar/tick\nschedule_event\n" + invitation id)`,
//!   deliberately without `now`: every tick proposes the same id for the same invitation, so
//!   the orchestrator asks once. `ts`: `now` as given.
//!
//! The tick must not read a clock or keep state; it proposes and never runs anything.

use aura_sdk::args::str_member;
use aura_sdk::envelope::{
    PROPOSALS_MAX, Proposal, SIGNAL_CHARS_MAX, Signals, Surface, ToolCall, answer,
};
use aura_sdk::hours::ProfileHours;
use aura_sdk::time::{SECS_PER_DAY, SECS_PER_MINUTE, offset_minutes_of, parse_time};
use aura_sdk::{ToolError, ToolResult};
use serde_json::{Map, Value, json};

use crate::break_after::STRESS_SCORE_MAX;
use crate::common::{
    CalendarEvent, DEFAULT_TRAVEL_GAP_MINUTES, MAX_EVENTS, MAX_ID_CHARS, MAX_TEXT_CHARS, Span,
    trimmed_location,
};
use crate::conflicts::{ConflictKind, analyze};
use crate::schedule::{MAX_ATTENDEE_CHARS, MAX_ATTENDEES};

/// The agent's name in envelopes.
pub const AGENT: &str = "calendar";
/// Most `schedule_event` proposals per tick: what proposals.v1 leaves after the
/// `detect_conflicts` proposal. A user answers a few invitations at a time anyway; the rest
/// are proposed again by later ticks (same call_id).
pub const INVITATIONS_PROPOSED_MAX: usize = PROPOSALS_MAX - 1;
/// Longest invitation sender, in characters (an e-mail address with a display name; the
/// scenario's bound).
pub const INVITATION_FROM_CHARS_MAX: usize = 320;
/// Largest tick answer this tick builds, in bytes of JSON. The host refuses (and quarantines)
/// a whole tick whose output is over 1 MiB (`CROSSING_BYTES_MAX`), losing every proposal;
/// each invitation proposal repeats up to 500 events, so they are added only while the answer
/// stays under this budget, which leaves a quarter of the host's bound as margin.
pub const PROPOSALS_BYTES_BUDGET: usize = 768 * 1024;
/// Priority of every invitation proposal: a question the user should answer today, but below
/// a clash that is about to happen (`detect_conflicts` scores 70..100 within the hour).
pub const INVITATION_PRIORITY_BASE: u8 = 40;
/// Added when the invitation starts within [`INVITATION_SOON_SECS`] of now: the sender needs
/// an answer before it begins.
pub const INVITATION_SOON_BONUS: u8 = 20;
/// How soon an invitation must start to earn [`INVITATION_SOON_BONUS`]: 24 hours.
pub const INVITATION_SOON_SECS: i64 = SECS_PER_DAY;
/// Added when the invitation intersects a kept event: accepting it needs a decision about
/// the other event.
pub const INVITATION_CONFLICT_BONUS: u8 = 10;
/// `break_after.stress_score` when the profile names none: the `high` level's lower bound,
/// the score from which wellness's own tick looks for a break (a 10-minute stretch).
pub const BREAK_AFTER_STRESS_DEFAULT: u32 = 60;

const _: () = assert!(
    (INVITATION_PRIORITY_BASE + INVITATION_SOON_BONUS + INVITATION_CONFLICT_BONUS) as u32 <= 100
);
const _: () = assert!(BREAK_AFTER_STRESS_DEFAULT <= STRESS_SCORE_MAX);

/// The orchestrator tick. See the module documentation.
pub fn tick(context: Value) -> ToolResult<Value> {
    let (context, now_text, now) = aura_sdk::args::tick_context(&context)?;
    let raw = context_array(context, "events")?;
    let events = usable_events(raw, now);

    let mut proposals = Vec::new();
    if let Some(proposal) = conflicts_proposal(&events, now_text, now)? {
        proposals.push(proposal);
    }

    let raw = context_array(context, "invitations")?;
    let invitations = usable_invitations(raw, now);
    if !invitations.is_empty() {
        let profile = context.get("profile").and_then(Value::as_object);
        let local = LocalTime::from_context(context, profile);
        let existing: Vec<&CalendarEvent> = events.iter().map(|(event, _, _)| event).collect();
        let existing = serde_json::to_value(existing)
            .map_err(|e| ToolError::failed(format!("events are not serializable as JSON: {e}")))?;
        let mut bytes = json_bytes(&proposals);
        for invitation in &invitations {
            let proposal =
                invitation_proposal(invitation, &events, &existing, &local, now_text, now)?;
            // +1 for the comma between proposals.
            bytes += json_bytes(&proposal) + 1;
            if bytes > PROPOSALS_BYTES_BUDGET {
                break;
            }
            proposals.push(proposal);
        }
    }
    Ok(answer(proposals))
}

/// An array of the context; absent or null is empty, anything else but an array an error.
fn context_array<'a>(context: &'a Map<String, Value>, key: &str) -> ToolResult<&'a [Value]> {
    match context.get(key) {
        None | Some(Value::Null) => Ok(&[]),
        Some(Value::Array(items)) => Ok(items.as_slice()),
        Some(_) => Err(ToolError::invalid_args(format!(
            "tick context: `{key}` must be an array"
        ))),
    }
}

/// Length of `value` as compact JSON.
fn json_bytes(value: &impl serde::Serialize) -> usize {
    serde_json::to_vec(value).map_or(usize::MAX / 2, |bytes| bytes.len())
}

/// The `detect_conflicts` proposal, when the kept events clash.
fn conflicts_proposal(
    events: &[(CalendarEvent, i64, i64)],
    now_text: &str,
    now: i64,
) -> ToolResult<Option<Proposal>> {
    let spans = events
        .iter()
        .map(|(event, start, end)| Span {
            id: &event.id,
            start: *start,
            end: *end,
            location: trimmed_location(event.location.as_deref()),
        })
        .collect::<Vec<_>>();
    let findings = analyze(&spans, DEFAULT_TRAVEL_GAP_MINUTES);
    if findings.is_empty() {
        return Ok(None);
    }

    let signals = Signals::capped(
        findings
            .iter()
            .map(|f| format!("{}:{}/{}", f.kind.as_str(), spans[f.a].id, spans[f.b].id)),
    );

    let mut priority = 0;
    let mut urgent = false;
    for f in &findings {
        let (a, b) = (&spans[f.a], &spans[f.b]);
        let over = a.end.max(b.end) <= now;
        let score = if over {
            5
        } else {
            let kind = match f.kind {
                ConflictKind::DoubleBooking => 60,
                ConflictKind::Overlap => 50,
                ConflictKind::TightTransition => 30,
            };
            let until = a.start.max(b.start) - now;
            let bonus = match until {
                u if u <= 60 * SECS_PER_MINUTE => {
                    urgent = true;
                    40
                }
                u if u <= 180 * SECS_PER_MINUTE => 25,
                u if u <= 1440 * SECS_PER_MINUTE => 10,
                _ => 0,
            };
            kind + bonus
        };
        priority = priority.max(score);
    }

    let seed = format!(
        "calendar/tick\n{now_text}\ndetect_conflicts\n{}",
        signals.join("\n")
    );
    let event_list: Vec<&CalendarEvent> = events.iter().map(|(event, _, _)| event).collect();
    let args = json!({
        "events": event_list,
        "travel_gap_minutes": DEFAULT_TRAVEL_GAP_MINUTES,
    });
    let surface = if urgent {
        Surface::Watch
    } else {
        Surface::PhoneCard
    };
    let call =
        ToolCall::new(&seed, AGENT, "detect_conflicts", args, now_text)?.expected_surface(surface);
    // The priority is capped at 100 by the proposal.
    Ok(Some(Proposal::new(call, signals, priority)))
}

/// A pending invitation the tick can propose to schedule.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Invitation {
    id: String,
    from: String,
    /// The `event` arg of `schedule_event`: title, start, end, location?, attendees?.
    event: Map<String, Value>,
    /// Unix seconds.
    start: i64,
    end: i64,
}

/// What the context says about local time: the offset, the working hours and whether (and at
/// which stress) to ask for a break after meetings. See the module documentation.
#[derive(Debug, Clone, PartialEq)]
struct LocalTime {
    /// The context's offset, when usable (absent means 0).
    offset_minutes: Option<i64>,
    /// The profile's working hours, when usable (and the offset is).
    working_hours: Option<Value>,
    /// `break_after`, when the profile asks for breaks and the working hours are usable.
    break_after: Option<Value>,
}

impl LocalTime {
    fn from_context(context: &Map<String, Value>, profile: Option<&Map<String, Value>>) -> Self {
        let offset_minutes = match context.get("utc_offset_minutes") {
            None | Some(Value::Null) => Some(0),
            Some(value) => offset_minutes_of(value).map(i64::from),
        };
        let working_hours = offset_minutes
            .and(profile)
            .and_then(|p| p.get("working_hours"))
            .and_then(usable_working_hours);
        let break_after = match (profile, &working_hours, offset_minutes) {
            (Some(profile), Some(hours), Some(offset))
                if profile.get("break_after_meetings") == Some(&Value::Bool(true)) =>
            {
                let stress_score = profile
                    .get("break_after_meetings_stress")
                    .and_then(Value::as_u64)
                    .and_then(|s| u32::try_from(s).ok())
                    .filter(|s| *s <= STRESS_SCORE_MAX)
                    .unwrap_or(BREAK_AFTER_STRESS_DEFAULT);
                Some(json!({
                    "stress_score": stress_score,
                    "working_hours": {"start": hours["start"], "end": hours["end"]},
                    "utc_offset_minutes": offset,
                }))
            }
            _ => None,
        };
        Self {
            offset_minutes,
            working_hours,
            break_after,
        }
    }
}

/// The profile's working hours as `schedule_event` takes them, if usable.
fn usable_working_hours(value: &Value) -> Option<Value> {
    ProfileHours::read(value).map(|hours| hours.to_json())
}

/// The pending invitations worth a proposal, soonest first, at most
/// [`INVITATIONS_PROPOSED_MAX`]. See the module documentation.
fn usable_invitations(raw: &[Value], now: i64) -> Vec<Invitation> {
    let mut seen = std::collections::HashSet::new();
    let mut invitations: Vec<Invitation> = raw
        .iter()
        .filter_map(lenient_invitation)
        .filter(|invitation| seen.insert(invitation.id.clone()))
        .filter(|invitation| invitation.start > now)
        .collect();
    // A stable sort: equal starts keep context order.
    invitations.sort_by_key(|invitation| invitation.start);
    invitations.truncate(INVITATIONS_PROPOSED_MAX);
    invitations
}

/// One context invitation, if it has a usable id, sender, title, start and end.
fn lenient_invitation(value: &Value) -> Option<Invitation> {
    let object = value.as_object()?;
    let text = |key: &str, min: usize, max: usize| str_member(object, key, min, max);
    let id = text("id", 1, MAX_ID_CHARS)?;
    let from = text("from", 1, INVITATION_FROM_CHARS_MAX)?;
    let title = text("title", 1, MAX_TEXT_CHARS).filter(|t| !t.trim().is_empty())?;
    let start_text = object.get("start")?.as_str()?;
    let end_text = object.get("end")?.as_str()?;
    let start = parse_time(start_text, "start").ok()?;
    let end = parse_time(end_text, "end").ok()?;
    if end <= start {
        return None;
    }
    let mut event = Map::new();
    event.insert("title".into(), title.into());
    event.insert("start".into(), start_text.into());
    event.insert("end".into(), end_text.into());
    if let Some(location) = text("location", 0, MAX_TEXT_CHARS) {
        event.insert("location".into(), location.into());
    }
    if let Some(Value::Array(list)) = object.get("attendees") {
        let attendees: Vec<&str> = list
            .iter()
            .filter_map(Value::as_str)
            .filter(|a| a.chars().count() <= MAX_ATTENDEE_CHARS)
            .take(MAX_ATTENDEES)
            .collect();
        event.insert("attendees".into(), json!(attendees));
    }
    Some(Invitation {
        id: id.to_owned(),
        from: from.to_owned(),
        event,
        start,
        end,
    })
}

/// The `schedule_event` proposal for one invitation. `existing` is `events` as JSON.
fn invitation_proposal(
    invitation: &Invitation,
    events: &[(CalendarEvent, i64, i64)],
    existing: &Value,
    local: &LocalTime,
    now_text: &str,
    now: i64,
) -> ToolResult<Proposal> {
    let mut conflicts: Vec<&(CalendarEvent, i64, i64)> = events
        .iter()
        .filter(|(_, start, end)| *start < invitation.end && invitation.start < *end)
        .collect();
    conflicts.sort_by(|(a, a_start, _), (b, b_start, _)| {
        (a_start, a.id.as_bytes()).cmp(&(b_start, b.id.as_bytes()))
    });

    let from_chars_max = SIGNAL_CHARS_MAX - "from:".len();
    let from: String = invitation.from.chars().take(from_chars_max).collect();
    // The invitation signal comes first (the orchestrator matches the user's answer on it).
    let signals = Signals::capped_after(
        vec![
            format!("invitation:{}", invitation.id),
            format!("from:{from}"),
        ],
        conflicts
            .iter()
            .map(|(event, _, _)| format!("conflict:{}", event.id)),
    );

    let mut priority = INVITATION_PRIORITY_BASE;
    if invitation.start - now <= INVITATION_SOON_SECS {
        priority += INVITATION_SOON_BONUS;
    }
    if !conflicts.is_empty() {
        priority += INVITATION_CONFLICT_BONUS;
    }

    let mut args = json!({
        "event": invitation.event,
        "existing": existing,
        "travel_gap_minutes": DEFAULT_TRAVEL_GAP_MINUTES,
    });
    if let Some(offset) = local.offset_minutes {
        args["utc_offset_minutes"] = json!(offset);
    }
    if let Some(hours) = &local.working_hours {
        args["working_hours"] = hours.clone();
    }
    if let Some(break_after) = &local.break_after {
        args["break_after"] = break_after.clone();
    }
    let seed = format!("calendar/tick\nschedule_event\n{}", invitation.id);
    let call = ToolCall::new(&seed, AGENT, "schedule_event", args, now_text)?
        .confirm_required(true)
        .expected_surface(Surface::PhoneCard);
    Ok(Proposal::new(call, signals, i64::from(priority)))
}

/// The context's events that `detect_conflicts` would accept, with their times in Unix
/// seconds: see the module documentation for what is skipped, dropped and kept.
fn usable_events(raw: &[Value], now: i64) -> Vec<(CalendarEvent, i64, i64)> {
    let mut seen = std::collections::HashSet::new();
    let mut events: Vec<(CalendarEvent, i64, i64)> = raw
        .iter()
        .filter_map(lenient_event)
        .filter(|(event, _, _)| seen.insert(event.id.clone()))
        .collect();
    if events.len() > MAX_EVENTS {
        // Not yet over first (by position), then the most recently ended.
        let mut order: Vec<usize> = (0..events.len()).collect();
        order.sort_by_key(|&i| {
            let end = events[i].2;
            if end > now { (0, 0, i) } else { (1, -end, i) }
        });
        let mut keep = vec![false; events.len()];
        for &i in &order[..MAX_EVENTS] {
            keep[i] = true;
        }
        let mut index = 0;
        events.retain(|_| {
            index += 1;
            keep[index - 1]
        });
    }
    events
}

/// One context event, if it has a usable id, start and end.
fn lenient_event(value: &Value) -> Option<(CalendarEvent, i64, i64)> {
    let object = value.as_object()?;
    let text = |key: &str, max: usize| str_member(object, key, 0, max).map(str::to_owned);
    let id = text("id", MAX_ID_CHARS).filter(|id| !id.is_empty())?;
    let start_text = object.get("start")?.as_str()?;
    let end_text = object.get("end")?.as_str()?;
    let start = parse_time(start_text, "start").ok()?;
    let end = parse_time(end_text, "end").ok()?;
    if end <= start {
        return None;
    }
    let event = CalendarEvent {
        id,
        title: text("title", MAX_TEXT_CHARS),
        start: start_text.to_owned(),
        end: end_text.to_owned(),
        location: text("location", MAX_TEXT_CHARS),
    };
    Some((event, start, end))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SCHEMAS;
    use crate::conflicts::{DetectConflictsArgs, detect_conflicts};
    use crate::schedule::{ScheduleEventArgs, ScheduleEventResult, schedule_event};
    use aura_sdk::envelope::SIGNALS_MAX;
    use aura_sdk::{ToolErrorKind, call_id_from};

    fn ev(id: &str, start: &str, end: &str) -> Value {
        json!({"id": id, "start": format!("2026-11-23T{start}:00Z"),
               "end": format!("2026-11-23T{end}:00Z")})
    }

    /// The tick's proposals, each checked against proposals.v1, toolcall.v1 and its tool's
    /// args schema (see `aura_testkit`).
    fn proposals(context: Value) -> Vec<Value> {
        SCHEMAS.tick_proposals(&tick(context).unwrap())
    }

    /// The proposed detect_conflicts call (checked by `proposals`) runs.
    fn check_call(call: &Value) {
        assert_eq!(call["tool"], "detect_conflicts");
        assert_eq!(call["confirm_required"], false);
        let args: DetectConflictsArgs = serde_json::from_value(call["args"].clone()).unwrap();
        detect_conflicts(args).unwrap();
    }

    #[test]
    fn no_conflicts_no_proposals() {
        assert!(proposals(json!({"now": "2026-11-23T08:00:00Z"})).is_empty());
        assert!(proposals(json!({"now": "2026-11-23T08:00:00Z", "events": null})).is_empty());
        let context = json!({
            "now": "2026-11-23T08:00:00Z",
            "events": [ev("a", "09:00", "10:00"), ev("b", "10:00", "11:00")],
            "messages": [{"from": "x"}],
        });
        assert!(proposals(context).is_empty());
    }

    #[test]
    fn overlap_soon_goes_to_the_watch() {
        // now 08:30; a 09:00–10:00, b 09:30–10:30 overlap; b starts in 60 min → 50 + 40.
        let context = json!({
            "now": "2026-11-23T08:30:00Z",
            "events": [ev("b", "09:30", "10:30"), ev("a", "09:00", "10:00"), ev("c", "12:00", "13:00")],
        });
        let list = proposals(context.clone());
        assert_eq!(list.len(), 1);
        let p = &list[0];
        assert_eq!(p["signals"], json!(["overlap:a/b"]));
        assert_eq!(p["priority"], 90);
        assert_eq!(p["call"]["expected_surface"], "WATCH");
        assert_eq!(p["call"]["ts"], "2026-11-23T08:30:00Z");
        assert_eq!(p["call"]["args"]["travel_gap_minutes"], 15);
        assert_eq!(p["call"]["args"]["events"].as_array().unwrap().len(), 3);
        assert_eq!(
            p["call"]["call_id"],
            call_id_from("calendar/tick\n2026-11-23T08:30:00Z\ndetect_conflicts\noverlap:a/b")
        );
        check_call(&p["call"]);
        // Deterministic.
        assert_eq!(tick(context.clone()).unwrap(), tick(context).unwrap());
    }

    #[test]
    fn later_conflicts_score_lower_and_go_to_the_phone() {
        // now 06:00; double booking lunch 12:00–13:00 ⊃ call 12:15–12:45: call starts in
        // 6 h 15 min → 60 + 10 = 70. Tight transition office 09:00–10:00 @Office → client
        // 10:05 @Client: client starts in 4 h 5 min → 30 + 10 = 40. Max 70, nothing within
        // the hour → PHONE_CARD.
        let mut office = ev("office", "09:00", "10:00");
        office["location"] = json!("Office");
        let mut client = ev("client", "10:05", "11:00");
        client["location"] = json!("Client");
        let context = json!({
            "now": "2026-11-23T06:00:00Z",
            "events": [ev("lunch", "12:00", "13:00"), ev("call", "12:15", "12:45"), office, client],
        });
        let p = &proposals(context)[0];
        assert_eq!(
            p["signals"],
            json!([
                "double_booking:lunch/call",
                "tight_transition:office/client"
            ])
        );
        assert_eq!(p["priority"], 70);
        assert_eq!(p["call"]["expected_surface"], "PHONE_CARD");
        check_call(&p["call"]);
    }

    #[test]
    fn conflicts_in_the_past_still_propose_at_low_priority() {
        // now 15:00; a 09:00–10:00 and b 09:30–10:30 are over: score 5, PHONE_CARD.
        let context = json!({
            "now": "2026-11-23T15:00:00Z",
            "events": [ev("a", "09:00", "10:00"), ev("b", "09:30", "10:30")],
        });
        let p = &proposals(context)[0];
        assert_eq!(p["priority"], 5);
        assert_eq!(p["call"]["expected_surface"], "PHONE_CARD");
        // Ongoing: now 09:45, b started 15 min ago, not over → 50 + 40, WATCH.
        let context = json!({
            "now": "2026-11-23T09:45:00Z",
            "events": [ev("a", "09:00", "10:00"), ev("b", "09:30", "10:30")],
        });
        let p = &proposals(context)[0];
        assert_eq!(p["priority"], 90);
        assert_eq!(p["call"]["expected_surface"], "WATCH");
    }

    #[test]
    fn malformed_events_are_skipped_or_cleaned() {
        // Skipped: not an object, no id, end before start, duplicate id "a", bad time.
        // Cleaned: unknown field "attendees" and non-string title dropped; too-long location
        // dropped. a 09:00–10:00 and b 09:30–10:30 overlap.
        let mut a = ev("a", "09:00", "10:00");
        a["attendees"] = json!(["x"]);
        a["title"] = json!(5);
        let mut b = ev("b", "09:30", "10:30");
        b["location"] = json!("L".repeat(201));
        let context = json!({
            "now": "2026-11-23T08:00:00Z",
            "events": [
                "nonsense", {"start": "2026-11-23T09:00:00Z", "end": "2026-11-23T10:00:00Z"},
                ev("back", "10:00", "09:00"), a, ev("a", "09:10", "09:20"), b,
                {"id": "t", "start": "today", "end": "2026-11-23T10:00:00Z"},
            ],
        });
        let p = &proposals(context)[0];
        assert_eq!(p["signals"], json!(["overlap:a/b"]));
        assert_eq!(
            p["call"]["args"]["events"],
            json!([
                {"id": "a", "start": "2026-11-23T09:00:00Z", "end": "2026-11-23T10:00:00Z"},
                {"id": "b", "start": "2026-11-23T09:30:00Z", "end": "2026-11-23T10:30:00Z"},
            ])
        );
        check_call(&p["call"]);
    }

    #[test]
    fn many_conflicts_cap_signals_and_events() {
        // 600 identical events 09:00–10:00: too many; now 11:00 so all are over and the
        // first 500 (all ended at the same time) are kept. 500·499/2 = 124 750 double bookings.
        let events: Vec<Value> = (0..600)
            .map(|i| ev(&format!("e{i:03}"), "09:00", "10:00"))
            .collect();
        let context = json!({"now": "2026-11-23T11:00:00Z", "events": events});
        let p = &proposals(context)[0];
        let signals = p["signals"].as_array().unwrap();
        assert_eq!(signals.len(), SIGNALS_MAX);
        assert_eq!(signals[0], "double_booking:e000/e001");
        assert_eq!(signals[15], format!("more:{}", 124_750 - 15));
        let kept = p["call"]["args"]["events"].as_array().unwrap();
        assert_eq!(kept.len(), 500);
        assert_eq!(kept[499]["id"], "e499");
        check_call(&p["call"]);
    }

    #[test]
    fn over_500_keeps_events_not_yet_over() {
        // 499 past events 01:00–02:00 (p000..p498), then 3 future ones at 12:00–13:00 (f0..f2,
        // all overlapping). now 08:00. The 3 future ones and the 497 first past ones are kept.
        let mut events: Vec<Value> = (0..499)
            .map(|i| ev(&format!("p{i:03}"), "01:00", "01:30"))
            .collect();
        events.extend((0..3).map(|i| ev(&format!("f{i}"), "12:00", "13:00")));
        let context = json!({"now": "2026-11-23T08:00:00Z", "events": events});
        let p = &proposals(context)[0];
        let kept = p["call"]["args"]["events"].as_array().unwrap();
        assert_eq!(kept.len(), 500);
        assert_eq!(kept[496]["id"], "p496");
        assert_eq!(kept[497]["id"], "f0");
        assert_eq!(kept[499]["id"], "f2");
    }

    fn inv(id: &str, start: &str, end: &str) -> Value {
        json!({"id": id, "from": "ana@example.org", "title": "Design review",
               "start": format!("2026-11-23T{start}:00Z"), "end": format!("2026-11-23T{end}:00Z")})
    }

    /// The proposed schedule_event call (checked by `proposals`): for confirmation, and it runs
    /// (natively, so a break_after reads unavailable).
    fn check_schedule_call(call: &Value) -> ScheduleEventResult {
        assert_eq!(call["tool"], "schedule_event");
        assert_eq!(call["confirm_required"], true);
        assert_eq!(call["expected_surface"], "PHONE_CARD");
        let args: ScheduleEventArgs = serde_json::from_value(call["args"].clone()).unwrap();
        schedule_event(args).unwrap()
    }

    #[test]
    fn invitations_are_proposed_for_confirmation_after_the_conflicts() {
        // now 08:00; events a 09:30–10:30 and b 10:00–11:00 overlap (the detect_conflicts
        // proposal, first, 50 + 25 = 75 as 10:00 is 2 h away). Invitation inv1 10:15–11:15
        // intersects a (10:15–10:30) and b (10:15–11:00): conflict:a, conflict:b (a starts
        // first). It starts in 2 h 15 min (≤ 24 h): 40 + 20 + 10 = 70.
        let mut invitation = inv("inv1", "10:15", "11:15");
        invitation["location"] = json!("Room 4");
        invitation["attendees"] = json!(["ana@example.org", "me@example.org"]);
        let context = json!({
            "now": "2026-11-23T08:00:00Z",
            "events": [ev("a", "09:30", "10:30"), ev("b", "10:00", "11:00")],
            "invitations": [invitation],
        });
        let list = proposals(context.clone());
        assert_eq!(list.len(), 2);
        assert_eq!(list[0]["call"]["tool"], "detect_conflicts");
        assert_eq!(list[0]["priority"], 75);
        let p = &list[1];
        assert_eq!(
            p["signals"],
            json!([
                "invitation:inv1",
                "from:ana@example.org",
                "conflict:a",
                "conflict:b"
            ])
        );
        assert_eq!(p["priority"], 70);
        let call = &p["call"];
        assert_eq!(
            call["call_id"],
            call_id_from("calendar/tick\nschedule_event\ninv1")
        );
        assert_eq!(call["ts"], "2026-11-23T08:00:00Z");
        // No offset in the context: 0. No profile: no working hours, no break_after.
        assert_eq!(
            call["args"],
            json!({
                "event": {"title": "Design review", "start": "2026-11-23T10:15:00Z",
                          "end": "2026-11-23T11:15:00Z", "location": "Room 4",
                          "attendees": ["ana@example.org", "me@example.org"]},
                "existing": [
                    {"id": "a", "start": "2026-11-23T09:30:00Z", "end": "2026-11-23T10:30:00Z"},
                    {"id": "b", "start": "2026-11-23T10:00:00Z", "end": "2026-11-23T11:00:00Z"},
                ],
                "travel_gap_minutes": 15,
                "utc_offset_minutes": 0,
            })
        );
        // The tool agrees: a overlaps 10:15–10:30 = 15 min, b 10:15–11:00 = 45 min.
        let result = check_schedule_call(call);
        let got: Vec<_> = result
            .conflicts
            .iter()
            .map(|c| (c.with.as_str(), c.minutes))
            .collect();
        assert_eq!(got, [("a", 15), ("b", 45)]);
        assert!(result.break_after.is_none());

        // A later tick proposes the same call_id for the same invitation (an hour on, the
        // detect_conflicts id changes with now, this one does not).
        let mut later = context;
        later["now"] = json!("2026-11-23T09:00:00Z");
        let again = proposals(later);
        assert_eq!(again[1]["call"]["call_id"], call["call_id"]);
        assert_ne!(again[0]["call"]["call_id"], list[0]["call"]["call_id"]);
    }

    #[test]
    fn invitation_priority_by_start_and_conflict() {
        // now 2026-11-23T08:00Z; no events, so no conflicts and no detect_conflicts proposal.
        // Exactly 24 h ahead (2026-11-24T08:00Z) still counts as soon: 40 + 20 = 60; one
        // second later it does not: 40.
        let at = |start: &str, end: &str| json!({"id": start, "from": "x@example.org", "title": "t", "start": start, "end": end});
        let context = json!({
            "now": "2026-11-23T08:00:00Z",
            "invitations": [
                at("2026-11-24T08:00:01Z", "2026-11-24T09:00:00Z"),
                at("2026-11-24T08:00:00Z", "2026-11-24T09:00:00Z"),
            ],
        });
        let list = proposals(context);
        // Soonest first.
        assert_eq!(list[0]["signals"][0], "invitation:2026-11-24T08:00:00Z");
        assert_eq!(list[0]["priority"], 60);
        assert_eq!(list[1]["signals"][0], "invitation:2026-11-24T08:00:01Z");
        assert_eq!(list[1]["priority"], 40);
        for p in &list {
            assert_eq!(p["signals"].as_array().unwrap().len(), 2);
            check_schedule_call(&p["call"]);
        }
    }

    #[test]
    fn unusable_or_started_invitations_are_skipped_and_fields_cleaned() {
        // now 10:00. Skipped: started at now, started before, not an object, no from, blank
        // title, end before start, bad time, the repeated "ok". Kept: "ok" with its location
        // (201 chars) dropped, attendees keeping their strings of ≤ 254 chars, "x" unknown.
        let mut ok = inv("ok", "11:00", "12:00");
        ok["location"] = json!("L".repeat(201));
        ok["attendees"] = json!(["ana", 5, "b".repeat(255), "ben"]);
        ok["x"] = json!(1);
        let mut no_from = inv("nf", "11:00", "12:00");
        no_from.as_object_mut().unwrap().remove("from");
        let mut blank = inv("bl", "11:00", "12:00");
        blank["title"] = json!("   ");
        let mut bad_time = inv("bt", "11:00", "12:00");
        bad_time["start"] = json!("11:00");
        let context = json!({
            "now": "2026-11-23T10:00:00Z",
            "invitations": [
                inv("now", "10:00", "11:00"), inv("past", "09:00", "11:00"), "inv",
                no_from, blank, inv("back", "12:00", "11:00"), bad_time, ok,
                inv("ok", "13:00", "14:00"),
            ],
        });
        let list = proposals(context);
        assert_eq!(list.len(), 1);
        assert_eq!(list[0]["signals"][0], "invitation:ok");
        assert_eq!(
            list[0]["call"]["args"]["event"],
            json!({"title": "Design review", "start": "2026-11-23T11:00:00Z",
                   "end": "2026-11-23T12:00:00Z", "attendees": ["ana", "ben"]})
        );
        check_schedule_call(&list[0]["call"]);
        // A long sender is cut so its signal fits 200 characters.
        let mut long = inv("long", "11:00", "12:00");
        long["from"] = json!("f".repeat(320));
        let context = json!({"now": "2026-11-23T10:00:00Z", "invitations": [long]});
        let signal = proposals(context)[0]["signals"][1]
            .as_str()
            .unwrap()
            .to_owned();
        assert_eq!(signal, format!("from:{}", "f".repeat(195)));
    }

    #[test]
    fn profile_sets_working_hours_and_break_after() {
        let context = |profile: Value, offset: Value| {
            json!({"now": "2026-11-23T08:00:00Z", "utc_offset_minutes": offset,
                   "profile": profile, "invitations": [inv("i", "10:00", "11:00")]})
        };
        let args = |profile: Value, offset: Value| {
            let list = proposals(context(profile, offset));
            check_schedule_call(&list[0]["call"]);
            list[0]["call"]["args"].clone()
        };
        let hours = json!({"start": "09:00", "end": "17:00", "weekdays": [1, 1, 2]});
        // Breaks wanted, no stress given: 60. Weekday repeats dropped.
        let a = args(
            json!({"working_hours": hours, "break_after_meetings": true}),
            json!(60),
        );
        assert_eq!(a["utc_offset_minutes"], 60);
        assert_eq!(
            a["working_hours"],
            json!({"start": "09:00", "end": "17:00", "weekdays": [1, 2]})
        );
        assert_eq!(
            a["break_after"],
            json!({"stress_score": 60, "working_hours": {"start": "09:00", "end": "17:00"},
                   "utc_offset_minutes": 60})
        );
        // A usable stress is taken; an out-of-range one falls back to 60.
        let with_stress = |stress: Value| {
            args(
                json!({"working_hours": hours, "break_after_meetings": true,
                       "break_after_meetings_stress": stress}),
                json!(60),
            )["break_after"]["stress_score"]
                .clone()
        };
        assert_eq!(with_stress(json!(85)), 85);
        assert_eq!(with_stress(json!(0)), 0);
        assert_eq!(with_stress(json!(101)), 60);
        assert_eq!(with_stress(json!("high")), 60);
        // Not exactly true: no break_after, working hours still passed.
        let a = args(
            json!({"working_hours": hours, "break_after_meetings": "yes"}),
            json!(60),
        );
        assert!(a.get("break_after").is_none());
        assert!(a.get("working_hours").is_some());
        // Unusable working hours (overnight, bad weekday, bad time): neither.
        for bad in [
            json!({"start": "17:00", "end": "09:00"}),
            json!({"start": "09:00", "end": "17:00", "weekdays": [0]}),
            json!({"start": "09:00", "end": "17:00", "weekdays": []}),
            json!({"start": "9:00", "end": "17:00"}),
        ] {
            let a = args(
                json!({"working_hours": bad, "break_after_meetings": true}),
                json!(60),
            );
            assert!(a.get("working_hours").is_none() && a.get("break_after").is_none());
            assert_eq!(a["utc_offset_minutes"], 60);
        }
        // An unusable offset: no offset, working hours or break_after.
        let a = args(
            json!({"working_hours": hours, "break_after_meetings": true}),
            json!(900),
        );
        for key in ["utc_offset_minutes", "working_hours", "break_after"] {
            assert!(a.get(key).is_none(), "{key}");
        }
    }

    #[test]
    fn invitation_proposals_are_bounded() {
        // 20 invitations: i in 0..20 starts at (20 − i):00 on 2026-11-24, so i0 at 20:00 down
        // to i19 at 01:00. The 15 soonest are i19..i5 (01:00..15:00), proposed in that order.
        let invitations: Vec<Value> = (0..20)
            .map(|i| {
                json!({"id": format!("i{i}"), "from": "x@example.org", "title": "t",
                       "start": format!("2026-11-24T{:02}:00:00Z", 20 - i),
                       "end": format!("2026-11-24T{:02}:30:00Z", 20 - i)})
            })
            .collect();
        let context = json!({"now": "2026-11-23T08:00:00Z", "invitations": invitations});
        let list = proposals(context);
        assert_eq!(list.len(), INVITATIONS_PROPOSED_MAX);
        assert_eq!(list[0]["signals"][0], "invitation:i19");
        assert_eq!(list[14]["signals"][0], "invitation:i5");

        // 20 events 09:00–10:00 all intersect an invitation 09:30–10:30: invitation, from,
        // 13 conflicts, more:7 (20 − 13).
        let events: Vec<Value> = (0..20)
            .map(|i| ev(&format!("e{i:02}"), "09:00", "10:00"))
            .collect();
        let context = json!({"now": "2026-11-23T08:00:00Z", "events": events,
                             "invitations": [inv("i", "09:30", "10:30")]});
        let p = &proposals(context)[1];
        let signals = p["signals"].as_array().unwrap();
        assert_eq!(signals.len(), SIGNALS_MAX);
        assert_eq!(signals[2], "conflict:e00");
        assert_eq!(signals[14], "conflict:e12");
        assert_eq!(signals[15], "more:7");
        assert_eq!(p["priority"], 70);
    }

    #[test]
    fn invitation_proposals_stay_within_the_byte_budget() {
        // 500 abutting one-minute events (no conflict, so no detect_conflicts proposal), each
        // about 500 bytes of JSON: {"id":"e000",} 13 + "title":"<200>", 211 + "start":..., 31
        // + "end":..., 29 + "location":"<200>"} 214 = 498, plus a comma. One proposal repeats
        // them all: ≈ 249.5 KB. The budget (786 432 bytes) holds 3 (≈ 749 KB), not 4 (≈ 998 KB).
        let events: Vec<Value> = (0..500)
            .map(|i| {
                json!({"id": format!("e{i:03}"), "title": "T".repeat(200),
                       "location": "L".repeat(200),
                       "start": format!("2026-11-23T{:02}:{:02}:00Z", i / 60, i % 60),
                       "end": format!("2026-11-23T{:02}:{:02}:00Z", (i + 1) / 60, (i + 1) % 60)})
            })
            .collect();
        let invitations: Vec<Value> = (0..5)
            .map(|i| {
                json!({"id": format!("i{i}"), "from": "x@example.org", "title": "t",
                       "start": format!("2026-11-24T1{i}:00:00Z"),
                       "end": format!("2026-11-24T1{i}:30:00Z")})
            })
            .collect();
        let context = json!({"now": "2026-11-22T12:00:00Z", "events": events,
                             "invitations": invitations});
        let answer = tick(context).unwrap();
        let list = answer["proposals"].as_array().unwrap();
        assert_eq!(list.len(), 3);
        assert_eq!(list[2]["signals"][0], "invitation:i2");
        assert!(serde_json::to_vec(&answer).unwrap().len() <= PROPOSALS_BYTES_BUDGET);
    }

    #[test]
    fn through_the_agent_wiring() {
        // The agent! wiring in lib.rs: canonical JSON in and out.
        let context = json!({
            "now": "2026-11-23T08:30:00Z",
            "events": [ev("a", "09:00", "10:00"), ev("b", "09:30", "10:30")],
        });
        let answer: Value =
            serde_json::from_str(&crate::Calendar::tick(&context.to_string())).unwrap();
        assert_eq!(answer, tick(context).unwrap());
        let call = json!({"tool": "detect_conflicts", "args": {"events": [
            ev("a", "09:00", "10:00"), ev("b", "09:30", "10:30")]}});
        assert_eq!(
            crate::Calendar::invoke(&call.to_string()),
            r#"{"ok":true,"result":{"double_bookings":[],"overlaps":[{"a":"a","b":"b","overlap_minutes":30}],"tight_transitions":[],"truncated":false}}"#
        );
        let call = json!({"tool": "detect_conflicts", "args": {"events": [
            ev("a", "10:00", "09:00")]}});
        let reply: Value =
            serde_json::from_str(&crate::Calendar::invoke(&call.to_string())).unwrap();
        assert_eq!(reply["error"]["kind"], "invalid_args");
    }

    #[test]
    fn bad_context_is_invalid_args() {
        // Every tick refuses a context without a usable `now` (see `aura_testkit`).
        let own = [
            json!({"now": "2026-11-23T08:00:00Z", "events": {}}),
            json!({"now": "2026-11-23T08:00:00Z", "invitations": "inv1"}),
        ];
        for context in aura_testkit::contexts_without_a_usable_now()
            .into_iter()
            .chain(own)
        {
            let e = tick(context).unwrap_err();
            assert_eq!(e.kind, ToolErrorKind::InvalidArgs);
        }
    }
}
