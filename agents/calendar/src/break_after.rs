//! `schedule_event`'s optional `break_after`: asking wellness for a break after the new event.
//!
//! When the args carry `break_after`, `schedule_event` first places the event exactly as
//! without it, then calls `wellness.suggest_break` through the host (`aura_sdk::call`) with
//! `{stress {score}, busy, free_slots, working_hours {start, end}, now, utc_offset_minutes}`:
//! `now` is the new event's end and `busy` the new event plus the existing events that end
//! after it (those that end earlier cannot block a break that starts after it), earliest start
//! first, at most [`BREAK_BUSY_MAX`]. `free_slots` is the free time left today around `busy`,
//! found by calendar's own `find_free_slots` (from `now` to the end of today's working hours,
//! gaps of at least [`BREAK_FREE_SLOT_MINUTES_MIN`] minutes, at most [`BREAK_FREE_SLOTS_MAX`]):
//! calendar already knows it, so wellness places the break in it and does not call calendar
//! back. The chain stays calendar → wellness; calendar → wellness → calendar would be a cycle
//! the host refuses. The answer becomes the result's `break`:
//! - `{"status":"suggested", start, end, minutes, kind, reason}` when wellness suggests one;
//! - `{"status":"none", none_reason?, reason}` when wellness answers there is none;
//! - `{"status":"unavailable", reason}` when there is no usable answer: the host or wellness
//!   refused or failed the call, or the answer did not have the expected shape. `reason` leads
//!   with the error kind: the first result.v1 kind the error message names (the nested
//!   failure, e.g. `agent_unavailable` inside wellness's `tool_failed`) followed by the
//!   answer's own kind in parentheses, else the answer's kind alone; then the message. Cut to
//!   [`BREAK_REASON_CHARS_MAX`] characters. It is for traces: what a person is shown says only
//!   that no break could be found.
//!
//! This module owns the nested call's envelope and the reading of the answer. It must never
//! make scheduling fail (whatever the host or wellness answers, the event is scheduled and the
//! result carries a `break`), and it must not decide a break itself: wellness owns breaks.
//! The envelope and the answer are pure functions, tested natively; only [`ask_wellness`]
//! calls the host (natively `aura_sdk::call` always fails, so the break is `unavailable`).

use aura_sdk::args::check_range;
use aura_sdk::envelope::ToolCall;
pub use aura_sdk::hours::DayHours;
use aura_sdk::time::{
    MINUTES_PER_DAY, TIME_CHARS_MAX, check_offset, minutes_floor, parse_time, weekday_of_day,
};
use aura_sdk::{ToolError, ToolResult};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::common::{CalendarEvent, MAX_EVENTS, WorkingHours};
use crate::free_slots::{BusySpan, FindFreeSlotsArgs, find_free_slots};
use crate::schedule::ScheduledEvent;

/// The agent and tool asked for the break.
pub const BREAK_AGENT: &str = "wellness";
/// See [`BREAK_AGENT`].
pub const BREAK_TOOL: &str = "suggest_break";
/// Largest `break_after.stress_score` (wellness's stress scale is 0..100).
pub const STRESS_SCORE_MAX: u32 = 100;
/// Most busy spans sent to wellness: the bound calendar keeps on events in one call.
pub const BREAK_BUSY_MAX: usize = MAX_EVENTS;
/// Longest `break.reason`: a user-facing line (wellness's own reasons are at most 200), and an
/// error message cut short enough for a result.
pub const BREAK_REASON_CHARS_MAX: usize = 200;
/// Longest break wellness may suggest, in minutes: `suggest_break`'s own bound. A longer one is
/// not a break; the answer is then treated as unreadable.
pub const BREAK_MINUTES_MAX: u64 = 60;
/// Longest `break.kind` and `break.none_reason`: short snake_case words from wellness's enums
/// (the longest today is `no_slot_long_enough`, 19).
pub const BREAK_WORD_CHARS_MAX: usize = 32;
/// Shortest free gap sent to wellness, in minutes: the shortest break wellness suggests (and
/// the shortest gap `find_free_slots` finds).
pub const BREAK_FREE_SLOT_MINUTES_MIN: u32 = 5;
/// Most free gaps sent to wellness: `suggest_break`'s own bound on `free_slots`.
pub const BREAK_FREE_SLOTS_MAX: u32 = 100;
/// The kind in `reason` when `aura_sdk::call` itself failed (the host answered garbage, or
/// there is no host: native builds).
pub const CALL_FAILED: &str = "call_failed";
/// The kind in `reason` when wellness answered something this module cannot read.
pub const ANSWER_UNREADABLE: &str = "answer_unreadable";

/// `schedule_event`'s `break_after`: ask wellness for a break after the event.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct BreakAfter {
    /// The stress the break answers, 0..100.
    pub stress_score: u32,
    /// The working day the break must fall in.
    pub working_hours: DayHours,
    /// The user's offset east of UTC in minutes (-840..840).
    pub utc_offset_minutes: i32,
}

impl BreakAfter {
    /// Checks what the schema cannot say (and the ranges, for native callers).
    pub fn check(&self) -> ToolResult<()> {
        check_range(
            self.stress_score,
            "break_after.stress_score",
            0,
            STRESS_SCORE_MAX,
        )?;
        check_offset(self.utc_offset_minutes, "break_after.utc_offset_minutes")?;
        self.working_hours.check("break_after.working_hours")?;
        Ok(())
    }
}

/// The result's `break`. See the module documentation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum BreakOutcome {
    /// Wellness suggests a break.
    Suggested {
        /// RFC 3339 start, as wellness gave it.
        start: String,
        /// RFC 3339 end, as wellness gave it.
        end: String,
        /// Length in minutes (1..60).
        minutes: u64,
        /// What to do (`walk`, `breathing`, `stretch`, ...).
        kind: String,
        /// Wellness's user-facing text.
        reason: String,
    },
    /// Wellness answers that there is no break.
    #[serde(rename = "none")]
    NoBreak {
        /// Wellness's reason code, when it gave a readable one.
        #[serde(skip_serializing_if = "Option::is_none")]
        none_reason: Option<String>,
        /// Wellness's user-facing text.
        reason: String,
    },
    /// No usable answer.
    Unavailable {
        /// The error kind(s) and message. See the module documentation.
        reason: String,
    },
}

/// The toolcall.v1 envelope asking wellness for a break after `event` (already normalized by
/// `schedule_event`); `existing` were checked by it too.
pub fn suggest_break_call(
    break_after: &BreakAfter,
    existing: &[CalendarEvent],
    event: &ScheduledEvent,
) -> ToolResult<ToolCall> {
    // `existing` passed check_events: every time parses. A failure here would drop the span,
    // never the call.
    let end_of = |event: &CalendarEvent| parse_time(&event.end, "existing.end").ok();
    let start_of = |event: &CalendarEvent| parse_time(&event.start, "existing.start").ok();
    let now = parse_time(&event.end, "event.end").unwrap_or(i64::MIN);
    let mut later: Vec<(i64, &CalendarEvent)> = existing
        .iter()
        .filter(|e| end_of(e).is_some_and(|end| end > now))
        .filter_map(|e| start_of(e).map(|start| (start, e)))
        .collect();
    // Stable: equal starts keep the order given.
    later.sort_by_key(|(start, _)| *start);
    let mut busy = vec![json!({ "start": event.start, "end": event.end })];
    busy.extend(
        later
            .iter()
            .take(BREAK_BUSY_MAX - 1)
            .map(|(_, e)| json!({ "start": e.start, "end": e.end })),
    );
    let free_slots = free_after(break_after, &busy, event)?;
    let args = json!({
        "stress": { "score": break_after.stress_score },
        "busy": busy,
        "free_slots": free_slots,
        "working_hours": {
            "start": break_after.working_hours.start,
            "end": break_after.working_hours.end,
        },
        "now": event.end,
        "utc_offset_minutes": break_after.utc_offset_minutes,
    });
    // Agents have no clock: the call is about the moment the event ends.
    ToolCall::new(
        &format!("calendar/schedule_event\nsuggest_break\n{}", event.id),
        BREAK_AGENT,
        BREAK_TOOL,
        args,
        &event.end,
    )
}

/// Today's free time after `event`, as calendar's own `find_free_slots` finds it: from the
/// event's end to the end of today's working hours (today: the local date of the event's end),
/// around `busy`, gaps of at least [`BREAK_FREE_SLOT_MINUTES_MIN`], at most
/// [`BREAK_FREE_SLOTS_MAX`], each as `{start, end}`.
fn free_after(
    break_after: &BreakAfter,
    busy: &[Value],
    event: &ScheduledEvent,
) -> ToolResult<Vec<Value>> {
    let end = parse_time(&event.end, "event.end")?;
    let today = (minutes_floor(end) + i64::from(break_after.utc_offset_minutes))
        .div_euclid(MINUTES_PER_DAY);
    let busy = busy
        .iter()
        .map(|span| BusySpan {
            start: span["start"].as_str().unwrap_or_default().to_owned(),
            end: span["end"].as_str().unwrap_or_default().to_owned(),
            id: None,
        })
        .collect();
    let found = find_free_slots(FindFreeSlotsArgs {
        busy,
        working_hours: WorkingHours {
            start: break_after.working_hours.start.clone(),
            end: break_after.working_hours.end.clone(),
            weekdays: vec![weekday_of_day(today)],
        },
        utc_offset_minutes: break_after.utc_offset_minutes,
        duration_minutes: BREAK_FREE_SLOT_MINUTES_MIN,
        buffer_minutes: 0,
        from: event.end.clone(),
        horizon_days: 1,
        max_slots: BREAK_FREE_SLOTS_MAX,
    })?;
    Ok(found
        .slots
        .into_iter()
        .map(|slot| json!({ "start": slot.start, "end": slot.end }))
        .collect())
}

/// Asks wellness through the host and reads its answer. Never fails.
pub fn ask_wellness(
    break_after: &BreakAfter,
    existing: &[CalendarEvent],
    event: &ScheduledEvent,
) -> BreakOutcome {
    let answer =
        suggest_break_call(break_after, existing, event).and_then(|call| aura_sdk::call(&call));
    outcome(answer)
}

/// Reads the host's answer to the `suggest_break` call (result.v1), or the failure of the
/// call itself. See the module documentation.
pub fn outcome(answer: Result<Value, ToolError>) -> BreakOutcome {
    let answer = match answer {
        Ok(answer) => answer,
        Err(error) => return unavailable(CALL_FAILED, &error.message),
    };
    match answer.get("ok") {
        Some(Value::Bool(true)) => match answer.get("result") {
            Some(result) => read_result(result)
                .unwrap_or_else(|field| unavailable(ANSWER_UNREADABLE, &format!("`{field}`"))),
            None => unavailable(ANSWER_UNREADABLE, "ok without `result`"),
        },
        Some(Value::Bool(false)) => {
            let error = answer.get("error");
            let kind = error
                .and_then(|e| e.get("kind"))
                .and_then(Value::as_str)
                .filter(|k| is_word(k))
                .unwrap_or("unknown");
            let message = error
                .and_then(|e| e.get("message"))
                .and_then(Value::as_str)
                .unwrap_or("");
            unavailable(kind, message)
        }
        _ => unavailable(ANSWER_UNREADABLE, "not a result.v1 (no boolean `ok`)"),
    }
}

/// A suggest_break result, or the first field that is not as expected.
fn read_result(result: &Value) -> Result<BreakOutcome, &'static str> {
    let text = |value: Option<&Value>, max: usize| {
        value
            .and_then(Value::as_str)
            .filter(|s| (1..=max).contains(&s.chars().count()))
            .map(str::to_owned)
    };
    let reason = text(result.get("reason"), BREAK_REASON_CHARS_MAX).ok_or("reason")?;
    match result.get("status").and_then(Value::as_str) {
        Some("suggested") => {
            let suggestion = result.get("break").ok_or("break")?;
            let time = |key: &'static str| {
                text(suggestion.get(key), TIME_CHARS_MAX)
                    .filter(|t| parse_time(t, key).is_ok())
                    .ok_or(key)
            };
            let start = time("start")?;
            let end = time("end")?;
            let minutes = suggestion
                .get("minutes")
                .and_then(Value::as_u64)
                .filter(|m| (1..=BREAK_MINUTES_MAX).contains(m))
                .ok_or("break.minutes")?;
            let kind = text(suggestion.get("kind"), BREAK_WORD_CHARS_MAX)
                .filter(|k| is_word(k))
                .ok_or("break.kind")?;
            Ok(BreakOutcome::Suggested {
                start,
                end,
                minutes,
                kind,
                reason,
            })
        }
        Some("none") => Ok(BreakOutcome::NoBreak {
            none_reason: text(result.get("none_reason"), BREAK_WORD_CHARS_MAX)
                .filter(|r| is_word(r)),
            reason,
        }),
        _ => Err("status"),
    }
}

/// A snake_case word of at most [`BREAK_WORD_CHARS_MAX`] characters.
fn is_word(s: &str) -> bool {
    (1..=BREAK_WORD_CHARS_MAX).contains(&s.len())
        && s.bytes().all(|b| b.is_ascii_lowercase() || b == b'_')
}

/// The first result.v1 error kind `message` names as a whole word, by position.
fn first_kind_named(message: &str) -> Option<&'static str> {
    let word_byte = |b: u8| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_';
    let bytes = message.as_bytes();
    aura_sdk::ERROR_KINDS
        .iter()
        .filter_map(|kind| {
            message
                .match_indices(kind)
                .find(|(at, _)| {
                    let before = at.checked_sub(1).map(|i| bytes[i]);
                    let after = bytes.get(at + kind.len()).copied();
                    !before.is_some_and(word_byte) && !after.is_some_and(word_byte)
                })
                .map(|(at, _)| (at, *kind))
        })
        .min_by_key(|(at, _)| *at)
        .map(|(_, kind)| kind)
}

/// `unavailable` with the reason built from the answer's kind and message.
fn unavailable(kind: &str, message: &str) -> BreakOutcome {
    let lead = match first_kind_named(message) {
        Some(nested) if nested != kind => format!("{nested} ({kind})"),
        _ => kind.to_owned(),
    };
    let reason = if message.is_empty() {
        lead
    } else {
        format!("{lead}: {message}")
    };
    BreakOutcome::Unavailable {
        reason: reason.chars().take(BREAK_REASON_CHARS_MAX).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use aura_sdk::{ToolErrorKind, call_id_from};

    fn break_after() -> BreakAfter {
        BreakAfter {
            stress_score: 72,
            working_hours: DayHours {
                start: "09:00".into(),
                end: "17:00".into(),
            },
            utc_offset_minutes: 60,
        }
    }

    fn existing(id: &str, start: &str, end: &str) -> CalendarEvent {
        CalendarEvent {
            id: id.into(),
            title: None,
            start: start.into(),
            end: end.into(),
            location: None,
        }
    }

    fn scheduled() -> ScheduledEvent {
        ScheduledEvent {
            id: "ev_0123456789".into(),
            title: "Review".into(),
            start: "2026-11-23T10:00:00Z".into(),
            end: "2026-11-23T11:00:00Z".into(),
            duration_minutes: 60,
            location: None,
            attendees: None,
        }
    }

    fn failed(kind: &str, message: &str) -> Result<Value, ToolError> {
        Ok(
            json!({"call_id": "t_0123456789", "agent": "wellness", "tool": "suggest_break",
                  "ok": false, "error": {"kind": kind, "message": message}, "fuel_used": 10}),
        )
    }

    fn reason(outcome: BreakOutcome) -> String {
        match outcome {
            BreakOutcome::Unavailable { reason } => reason,
            other => panic!("not unavailable: {other:?}"),
        }
    }

    #[test]
    fn the_call_sends_the_event_and_what_follows_it() {
        // New event 10:00–11:00Z, so now = 11:00Z. "before" ends 10:00Z (≤ 11:00): left out.
        // "at" ends 12:00+01:00 = 11:00Z, exactly now: left out. "late" 15:00–16:00 and "overlap" 10:30–11:30 end
        // after 11:00: kept, earliest start first (overlap 10:30, then late 15:00).
        let events = [
            existing("before", "2026-11-23T09:00:00Z", "2026-11-23T10:00:00Z"),
            existing("late", "2026-11-23T15:00:00Z", "2026-11-23T16:00:00Z"),
            existing(
                "at",
                "2026-11-23T10:00:00+01:00",
                "2026-11-23T12:00:00+01:00",
            ),
            existing("overlap", "2026-11-23T10:30:00Z", "2026-11-23T11:30:00Z"),
        ];
        let call = suggest_break_call(&break_after(), &events, &scheduled())
            .unwrap()
            .into_value();
        assert_eq!(
            call,
            json!({
                "call_id": call_id_from("calendar/schedule_event\nsuggest_break\nev_0123456789"),
                "agent": "wellness",
                "tool": "suggest_break",
                "args": {
                    "stress": {"score": 72},
                    "busy": [
                        {"start": "2026-11-23T10:00:00Z", "end": "2026-11-23T11:00:00Z"},
                        {"start": "2026-11-23T10:30:00Z", "end": "2026-11-23T11:30:00Z"},
                        {"start": "2026-11-23T15:00:00Z", "end": "2026-11-23T16:00:00Z"},
                    ],
                    // From 12:00 local (11:00Z) to the end of Monday's working hours, 17:00
                    // local (16:00Z): busy until 11:30Z, free to 15:00Z, busy to the end.
                    // In the user's offset.
                    "free_slots": [
                        {"start": "2026-11-23T12:30:00+01:00", "end": "2026-11-23T16:00:00+01:00"},
                    ],
                    "working_hours": {"start": "09:00", "end": "17:00"},
                    "now": "2026-11-23T11:00:00Z",
                    "utc_offset_minutes": 60,
                },
                "ts": "2026-11-23T11:00:00Z",
                "confirm_required": false,
            })
        );
    }

    #[test]
    fn busy_is_bounded() {
        // 600 events after the new one: the new event plus the first 499 by start.
        let events: Vec<CalendarEvent> = (0..600)
            .map(|i| {
                existing(
                    &format!("e{i}"),
                    &format!("2026-11-24T{:02}:{:02}:00Z", i / 60, i % 60),
                    "2026-11-25T00:00:00Z",
                )
            })
            .collect();
        let call = suggest_break_call(&break_after(), &events, &scheduled()).unwrap();
        let busy = call.args()["busy"].as_array().unwrap();
        assert_eq!(busy.len(), BREAK_BUSY_MAX);
        // e498 starts 498 min after midnight = 08:18.
        assert_eq!(busy[499]["start"], "2026-11-24T08:18:00Z");
    }

    #[test]
    fn a_suggestion_or_none_is_passed_on() {
        let suggested = json!({"ok": true, "result": {
            "status": "suggested", "stress_score": 72, "level": "high", "wanted_minutes": 10,
            "break": {"start": "2026-11-23T12:00:00+01:00", "end": "2026-11-23T12:10:00+01:00",
                      "minutes": 10, "kind": "stretch"},
            "reason": "Stress is high (72/100). Take a 10-minute stretch at 12:00."}});
        assert_eq!(
            outcome(Ok(suggested.clone())),
            BreakOutcome::Suggested {
                start: "2026-11-23T12:00:00+01:00".into(),
                end: "2026-11-23T12:10:00+01:00".into(),
                minutes: 10,
                kind: "stretch".into(),
                reason: "Stress is high (72/100). Take a 10-minute stretch at 12:00.".into(),
            }
        );
        let value = serde_json::to_value(outcome(Ok(suggested.clone()))).unwrap();
        assert_eq!(value["status"], "suggested");
        assert_eq!(value["minutes"], 10);

        let none = json!({"ok": true, "result": {
            "status": "none", "stress_score": 20, "level": "low", "wanted_minutes": 0,
            "none_reason": "stress_low", "reason": "Stress is low (20/100): no break needed right now."}});
        let value = serde_json::to_value(outcome(Ok(none))).unwrap();
        assert_eq!(
            value,
            json!({"status": "none", "none_reason": "stress_low",
                   "reason": "Stress is low (20/100): no break needed right now."})
        );

        // A suggestion with a field out of shape is unreadable, never passed on.
        for (pointer, bad, field) in [
            ("/result/break/minutes", json!(61), "break.minutes"),
            ("/result/break/minutes", json!(0), "break.minutes"),
            ("/result/break/kind", json!("Walk!"), "break.kind"),
            ("/result/break/start", json!("noon"), "start"),
            ("/result/reason", json!(""), "reason"),
            ("/result/status", json!("maybe"), "status"),
        ] {
            let mut answer = suggested.clone();
            *answer.pointer_mut(pointer).unwrap() = bad;
            assert_eq!(
                reason(outcome(Ok(answer))),
                format!("answer_unreadable: `{field}`")
            );
        }
    }

    #[test]
    fn refusals_name_the_nested_kind_first() {
        // Wellness failed because its own call back to calendar was refused as a cycle.
        let message = "calendar.find_free_slots answered cycle_detected: agent `wellness` called \
                       `calendar`, already in the call chain calendar → wellness";
        assert_eq!(
            reason(outcome(failed("tool_failed", message))),
            format!("cycle_detected (tool_failed): {message}")
        );
        // The host refused the call itself: the kind alone leads.
        assert_eq!(
            reason(outcome(failed(
                "agent_unavailable",
                "agent `wellness` is not loaded"
            ))),
            "agent_unavailable: agent `wellness` is not loaded"
        );
        // A message naming the answer's own kind adds nothing; part of a longer word is no
        // kind ("xtool_failed"); the earliest kind named wins.
        assert_eq!(
            reason(outcome(failed("tool_failed", "tool_failed inside"))),
            "tool_failed: tool_failed inside"
        );
        assert_eq!(
            reason(outcome(failed(
                "tool_failed",
                "xtool_failed, then depth_exceeded"
            ))),
            "depth_exceeded (tool_failed): xtool_failed, then depth_exceeded"
        );
        assert_eq!(
            reason(outcome(failed(
                "tool_failed",
                "schema_error after too_deep"
            ))),
            "schema_error (tool_failed): schema_error after too_deep"
        );
        // Garbage kinds, no message, no answer, not result.v1.
        assert_eq!(reason(outcome(failed("Tool Failed", ""))), "unknown");
        assert_eq!(
            reason(outcome(Err(ToolError::failed("no host")))),
            "call_failed: no host"
        );
        assert_eq!(
            reason(outcome(Ok(json!({"answer": 42})))),
            "answer_unreadable: not a result.v1 (no boolean `ok`)"
        );
        assert_eq!(
            reason(outcome(Ok(json!({"ok": true})))),
            "answer_unreadable: ok without `result`"
        );
    }

    #[test]
    fn reasons_are_cut_at_the_bound() {
        // "tool_failed: " is 13 characters; 300 more "é" exceed 200 in all.
        let long = reason(outcome(failed("tool_failed", &"é".repeat(300))));
        assert_eq!(long.chars().count(), BREAK_REASON_CHARS_MAX);
        assert!(long.starts_with("tool_failed: é"));
    }

    #[test]
    fn break_after_checks() {
        assert!(break_after().check().is_ok());
        let mut b = break_after();
        b.working_hours.end = "09:00".into();
        let e = b.check().unwrap_err();
        assert_eq!(e.kind, ToolErrorKind::InvalidArgs);
        assert!(
            e.message.contains("break_after.working_hours"),
            "{}",
            e.message
        );
        let mut b = break_after();
        b.stress_score = 101;
        assert!(b.check().unwrap_err().message.contains("stress_score"));
        let mut b = break_after();
        b.utc_offset_minutes = -841;
        assert!(
            b.check()
                .unwrap_err()
                .message
                .contains("utc_offset_minutes")
        );
        let mut b = break_after();
        b.working_hours.start = "9:00".into();
        assert!(b.check().unwrap_err().message.contains("start"));
    }
}
