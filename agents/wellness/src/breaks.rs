//! `suggest_break`: a short break in the earliest free slot that fits, sized by stress, in the
//! free time the caller gives, else asked of `calendar.find_free_slots` through the host.
//!
//! Rules (also stated in `schemas/wellness/suggest_break.*.json`):
//! - The stress score picks the break ([`BREAK_TIERS`]): below 40 no break (`stress_low`);
//!   40..59 a 5-minute breathing exercise; 60..79 a 10-minute stretch; 80 and up a 15-minute
//!   walk. `min_break_minutes` (default 5) raises the length, never lowers it. If `stress.level`
//!   is given it must be the score's level (low < 30 ≤ moderate < 60 ≤ high), else
//!   `invalid_args`.
//! - `preferred_kinds` (optional, in order of preference) replaces the tier's kind with the
//!   first preferred kind that fits the length ([`KIND_MIN_MINUTES`]: breathing 2, stretch 5,
//!   walk 10); when none fits, the tier's kind stays.
//! - Every arg is checked before anything is asked: `busy` spans (at most [`BUSY_MAX`]) must
//!   end after they start and `working_hours` must end after they start (`invalid_args`).
//! - **Free time is given, or comes from calendar** ([`free_slots_call`]), and only when the
//!   stress earns a break: below 40 calendar is not asked. A caller that knows today's free
//!   time passes it as `free_slots` (calendar itself, placing a break after an event it just
//!   scheduled): the break is placed in those, calendar is not asked back and `busy` is not
//!   used. Otherwise: One agent-to-agent call to
//!   `calendar.find_free_slots` with `busy` and `utc_offset_minutes` as given, `working_hours`
//!   {start, end, weekdays: [today's ISO weekday]}, `from` = `now`, `horizon_days` 1,
//!   `duration_minutes` [`FREE_SLOT_MINUTES_MIN`] and `max_slots` [`MAX_SLOTS`], where today is
//!   the local date of `now` at `utc_offset_minutes`. Naming today as the only working weekday
//!   cuts calendar's 24-hour search window to the rest of today's working day: the window is
//!   `now` to the end of today's working hours. Whether today is a working day at all is the
//!   caller's decision (the tick checks the profile's weekdays). The envelope: `call_id` from
//!   `"wellness/suggest_break\n<now>\n<canonical JSON of those args>"`, `ts` = `now`,
//!   `confirm_required` false, `deadline_ms` [`FREE_SLOTS_DEADLINE_MS`].
//! - When calendar answers `ok:false` (or the host refuses the call: `agent_unavailable`,
//!   `cycle_detected`, ...), the tool fails: `failed` with "free slots unavailable: <kind>:
//!   <message>", cut to the SDK's message bound ([`free_slots_from_answer`]).
//! - Placement ([`place_break`], on the slots calendar answered) is in whole minutes: a slot's
//!   usable part starts at the later of its start (rounded up) and `now` (rounded up) and ends
//!   at its end (rounded down). The break starts at the earliest usable start among the slots
//!   whose usable part is at least the break's length (ties: the earlier slot in the list).
//!   Slots may be unsorted and may overlap; a slot must end after it starts (`invalid_args`
//!   otherwise).
//! - No such slot → `none` with `no_free_slot` (no free gap of at least 5 minutes left today,
//!   the shortest gap calendar is asked for) or `no_slot_long_enough` (free gaps left, none
//!   long enough). Only the first [`MAX_SLOTS`] gaps of the day are looked at.
//! - `reason` is one of four fixed templates (see [`reason_text`]) filled with the level, the
//!   score, the length, the kind and the local start time "HH:MM" at `utc_offset_minutes`; it
//!   is at most 200 characters. Output times are RFC 3339 at minute precision in that offset.
//!
//! This module must not decide whether a break is wanted beyond these rules (the tick does),
//! must not read a clock and must not compute free time itself (calendar owns that). Only
//! [`suggest_break`] calls the host; building the call, reading the answer and placing the
//! break are pure functions, tested natively (natively `aura_sdk::call` always fails).

use std::fmt::Display;

use aura_sdk::args::{check_len, check_range};
use aura_sdk::envelope::{DEADLINE_MS_MAX, DEADLINE_MS_MIN, ToolCall};
pub use aura_sdk::hours::DayHours;

use aura_sdk::time::{
    MINUTES_PER_DAY, check_offset, format_hh_mm, minutes_ceil, minutes_floor, parse_time,
    weekday_of_day,
};
use aura_sdk::{ToolError, ToolResult};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::common::{Level, SCORE_MAX, format_minute};

/// The agent asked for free time.
pub const FREE_SLOTS_AGENT: &str = "calendar";
/// The tool asked for free time.
pub const FREE_SLOTS_TOOL: &str = "find_free_slots";
/// Most busy spans one call accepts: `calendar.find_free_slots`'s own bound, so every valid
/// call can be passed on whole.
pub const BUSY_MAX: usize = 500;
/// Most free slots asked of calendar and placed (calendar's `max_slots` ceiling): a working
/// day cut into more than 100 gaps is already absurd; gaps after the 100th are not looked at.
pub const MAX_SLOTS: usize = 100;
/// Shortest free gap asked of calendar (its `duration_minutes`), in minutes: calendar's
/// smallest, and the shortest break any tier asks for. Asking for the shortest rather than the
/// break's own length keeps `no_slot_long_enough` (free gaps, none long enough) apart from
/// `no_free_slot` (no free gap at all).
pub const FREE_SLOT_MINUTES_MIN: u32 = 5;
/// Length of calendar's search window, in days (its smallest `horizon_days`): 24 hours from
/// `now` always hold the rest of today; naming only today's weekday drops the rest.
pub const FREE_SLOTS_HORIZON_DAYS: u32 = 1;
/// Deadline of the calendar call, in ms. `find_free_slots` over one day and at most
/// [`BUSY_MAX`] busy spans is well under a millisecond of work on this machine; 300 ms of fuel
/// leaves a slow interpreter (10-30× slower) ample room, while keeping a stuck calendar to a
/// third of `suggest_break`'s own default deadline (1000 ms), so wellness still has time to
/// answer with its own error. The host also caps it at what this call has left.
pub const FREE_SLOTS_DEADLINE_MS: u64 = 300;
// Within toolcall.v1's bounds on `deadline_ms`.
const _: () =
    assert!(FREE_SLOTS_DEADLINE_MS >= DEADLINE_MS_MIN && FREE_SLOTS_DEADLINE_MS <= DEADLINE_MS_MAX);
/// Lowest stress score that earns a break: below it (low stress and the lower part of
/// moderate) a nudge would be noise.
pub const BREAK_MIN_SCORE: u32 = 40;
/// (lowest score, minutes, kind) per tier, highest first: the break grows with stress, from a
/// breathing exercise one can do anywhere to a walk that takes the user out of the situation.
pub const BREAK_TIERS: [(u32, u32, BreakKind); 3] = [
    (80, 15, BreakKind::Walk),
    (60, 10, BreakKind::Stretch),
    (BREAK_MIN_SCORE, 5, BreakKind::Breathing),
];
// Every break fits in a gap calendar returns only if no tier is shorter than the shortest gap.
const _: () = assert!(BREAK_TIERS[BREAK_TIERS.len() - 1].1 >= FREE_SLOT_MINUTES_MIN);
/// Smallest and largest `min_break_minutes`: a break longer than an hour is not a break.
pub const MIN_BREAK_MINUTES: (u32, u32) = (1, 60);
/// Default `min_break_minutes`: the shortest tier, so by default the tier alone decides.
pub const DEFAULT_MIN_BREAK_MINUTES: u32 = 5;
/// Shortest break each kind makes sense for: a few breaths take 2 minutes, a stretch 5, a walk
/// needs 10 to get anywhere.
pub const KIND_MIN_MINUTES: [(BreakKind, u32); 3] = [
    (BreakKind::Breathing, 2),
    (BreakKind::Stretch, 5),
    (BreakKind::Walk, 10),
];
/// Longest `reason` (the schema's bound; a watch face shows little more).
pub const MAX_REASON_CHARS: usize = 200;
/// What a failed free-time call's error message starts with.
pub const FREE_SLOTS_UNAVAILABLE: &str = "free slots unavailable";

/// What to do in the break.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BreakKind {
    Walk,
    Breathing,
    Stretch,
}

impl BreakKind {
    /// The kind as it appears in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            BreakKind::Walk => "walk",
            BreakKind::Breathing => "breathing",
            BreakKind::Stretch => "stretch",
        }
    }

    /// The phrase used in `reason`.
    fn phrase(self) -> &'static str {
        match self {
            BreakKind::Walk => "walk",
            BreakKind::Breathing => "breathing exercise",
            BreakKind::Stretch => "stretch",
        }
    }

    fn min_minutes(self) -> u32 {
        KIND_MIN_MINUTES
            .iter()
            .find(|(kind, _)| *kind == self)
            .map_or(0, |(_, minutes)| *minutes)
    }
}

/// The stress the break answers.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Stress {
    /// 0..100, as from `stress_score`.
    pub score: u32,
    /// Optional level; must match the score.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub level: Option<Level>,
}

/// One busy span of today.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct BusySpan {
    /// RFC 3339 start.
    pub start: String,
    /// RFC 3339 end; after `start`.
    pub end: String,
}

/// One free slot, as calendar answers it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
pub struct FreeSlot {
    /// RFC 3339 start.
    pub start: String,
    /// RFC 3339 end; after `start`.
    pub end: String,
}

/// Args of `suggest_break`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SuggestBreakArgs {
    pub stress: Stress,
    /// Today's busy spans, any order, may overlap (≤ 500). Default none.
    #[serde(default)]
    pub busy: Vec<BusySpan>,
    /// Today's free time, when the caller knows it (≤ [`MAX_SLOTS`]): calendar is then not
    /// asked, and `busy` is not used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub free_slots: Option<Vec<FreeSlot>>,
    /// Today's working hours.
    pub working_hours: DayHours,
    /// RFC 3339 instant; no break starts before it.
    pub now: String,
    /// The user's offset east of UTC in minutes (-840..840), for today's date, output times
    /// and `reason`.
    pub utc_offset_minutes: i32,
    /// Shortest break in minutes (1..60). Default 5.
    #[serde(default = "default_min_break_minutes")]
    pub min_break_minutes: u32,
    /// Kinds the user likes, most liked first (≤ 3, unique). Default none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub preferred_kinds: Vec<BreakKind>,
}

fn default_min_break_minutes() -> u32 {
    DEFAULT_MIN_BREAK_MINUTES
}

/// What [`place_break`] works on: the stress and preferences of a call, and free slots.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placement {
    pub stress: Stress,
    /// Free slots, any order (≤ [`MAX_SLOTS`]).
    pub free_slots: Vec<FreeSlot>,
    /// RFC 3339 instant; no break starts before it.
    pub now: String,
    /// The user's offset east of UTC in minutes (-840..840).
    pub utc_offset_minutes: i32,
    /// Shortest break in minutes (1..60).
    pub min_break_minutes: u32,
    /// Kinds the user likes, most liked first (≤ 3, unique).
    pub preferred_kinds: Vec<BreakKind>,
}

/// Whether a break was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Suggested,
    None,
}

/// Why there is no break.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NoneReason {
    /// Score below [`BREAK_MIN_SCORE`].
    StressLow,
    /// No usable free minute at or after `now`.
    NoFreeSlot,
    /// Free time remains, but no slot holds the break.
    NoSlotLongEnough,
}

/// The suggested break.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Break {
    /// Start, RFC 3339 in the user's offset.
    pub start: String,
    /// End, RFC 3339 in the user's offset.
    pub end: String,
    pub minutes: u32,
    pub kind: BreakKind,
}

/// Result of `suggest_break`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SuggestBreakResult {
    pub status: Status,
    /// The score as given.
    pub stress_score: u32,
    /// The score's level.
    pub level: Level,
    /// Break length the stress asks for; 0 when stress is low.
    pub wanted_minutes: u32,
    /// Present when `status` is `suggested`.
    #[serde(rename = "break", skip_serializing_if = "Option::is_none")]
    pub suggestion: Option<Break>,
    /// Present when `status` is `none`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub none_reason: Option<NoneReason>,
    /// Short user-facing text from a fixed template.
    pub reason: String,
}

/// Suggests a break, asking calendar for today's free time when the stress earns one. See the
/// module documentation for the rules.
pub fn suggest_break(args: SuggestBreakArgs) -> ToolResult<SuggestBreakResult> {
    let free_slots = match (free_slots_call(&args)?, args.free_slots) {
        (None, _) => Vec::new(),
        // The caller knows today's free time (calendar, placing a break after its event):
        // calendar is not asked back, so calendar → wellness is never a cycle.
        (Some(_), Some(known)) => known,
        (Some(call), None) => free_slots_from_answer(&aura_sdk::call(&call)?)?,
    };
    place_break(Placement {
        stress: args.stress,
        free_slots,
        now: args.now,
        utc_offset_minutes: args.utc_offset_minutes,
        min_break_minutes: args.min_break_minutes,
        preferred_kinds: args.preferred_kinds,
    })
}

/// Checks every arg, then builds the toolcall.v1 envelope asking `calendar.find_free_slots`
/// for the rest of today's working day, or None when the stress earns no break (calendar is
/// not asked). See the module documentation.
pub fn free_slots_call(args: &SuggestBreakArgs) -> ToolResult<Option<ToolCall>> {
    check_request(
        &args.stress,
        args.utc_offset_minutes,
        args.min_break_minutes,
        &args.preferred_kinds,
    )?;
    let now = parse_time(&args.now, "now")?;
    check_len(&args.busy, "busy", BUSY_MAX)?;
    for (i, span) in args.busy.iter().enumerate() {
        check_span(&span.start, &span.end, format_args!("busy[{i}]"))?;
    }
    args.working_hours.check("working_hours")?;
    if tier(args.stress.score).is_none() {
        return Ok(None);
    }

    let today =
        (minutes_floor(now) + i64::from(args.utc_offset_minutes)).div_euclid(MINUTES_PER_DAY);
    let busy: Vec<Value> = args
        .busy
        .iter()
        .map(|span| json!({ "start": span.start, "end": span.end }))
        .collect();
    let find_args = json!({
        "busy": busy,
        "working_hours": {
            "start": args.working_hours.start,
            "end": args.working_hours.end,
            "weekdays": [weekday_of_day(today)],
        },
        "utc_offset_minutes": args.utc_offset_minutes,
        "duration_minutes": FREE_SLOT_MINUTES_MIN,
        "from": args.now,
        "horizon_days": FREE_SLOTS_HORIZON_DAYS,
        "max_slots": MAX_SLOTS,
    });
    let key = aura_sdk::to_canonical(&find_args)?;
    let seed = format!("wellness/suggest_break\n{}\n{key}", args.now);
    // Agents have no clock: the call is about `now`.
    let call = ToolCall::new(
        &seed,
        FREE_SLOTS_AGENT,
        FREE_SLOTS_TOOL,
        find_args,
        &args.now,
    )?
    .deadline_ms(FREE_SLOTS_DEADLINE_MS)?;
    Ok(Some(call))
}

/// `find_free_slots`'s result, as far as placement reads it.
#[derive(Deserialize)]
struct FoundSlots {
    slots: Vec<FreeSlot>,
}

/// Reads the host's answer (result.v1) to the [`free_slots_call`]: the slots, or a `failed`
/// error naming the answer's error kind and message.
pub fn free_slots_from_answer(answer: &Value) -> ToolResult<Vec<FreeSlot>> {
    match answer.get("ok") {
        Some(Value::Bool(true)) => {
            let found = match answer.get("result") {
                Some(result) => FoundSlots::deserialize(result).map_err(|e| e.to_string()),
                None => Err("ok without `result`".to_owned()),
            };
            let found = found.map_err(|why| {
                ToolError::failed(format!(
                    "{FREE_SLOTS_UNAVAILABLE}: {FREE_SLOTS_AGENT}.{FREE_SLOTS_TOOL} answered \
                     an unreadable result: {why}"
                ))
            })?;
            if found.slots.len() > MAX_SLOTS {
                return Err(ToolError::failed(format!(
                    "{FREE_SLOTS_UNAVAILABLE}: {FREE_SLOTS_AGENT}.{FREE_SLOTS_TOOL} answered {} \
                     slots, more than the {MAX_SLOTS} asked for",
                    found.slots.len()
                )));
            }
            Ok(found.slots)
        }
        Some(Value::Bool(false)) => {
            let error = answer.get("error");
            let text = |key| error.and_then(|e| e.get(key)).and_then(Value::as_str);
            // ToolError cuts the message to the SDK's bound.
            Err(ToolError::failed(format!(
                "{FREE_SLOTS_UNAVAILABLE}: {}: {}",
                text("kind").unwrap_or("unknown"),
                text("message").unwrap_or("")
            )))
        }
        _ => Err(ToolError::failed(format!(
            "{FREE_SLOTS_UNAVAILABLE}: the host's answer is not a result.v1 (no boolean `ok`)"
        ))),
    }
}

/// Places a break in the given free slots. Pure: see the module documentation for the rules.
pub fn place_break(placement: Placement) -> ToolResult<SuggestBreakResult> {
    let score = placement.stress.score;
    let level = check_request(
        &placement.stress,
        placement.utc_offset_minutes,
        placement.min_break_minutes,
        &placement.preferred_kinds,
    )?;
    check_len(&placement.free_slots, "free_slots", MAX_SLOTS)?;
    let now = minutes_ceil(parse_time(&placement.now, "now")?);
    let mut usable = Vec::with_capacity(placement.free_slots.len());
    for (i, slot) in placement.free_slots.iter().enumerate() {
        let (start, end) = check_span(&slot.start, &slot.end, format_args!("free_slots[{i}]"))?;
        usable.push((minutes_ceil(start).max(now), minutes_floor(end)));
    }

    let offset = placement.utc_offset_minutes;
    let none = |wanted: u32, why: NoneReason| SuggestBreakResult {
        status: Status::None,
        stress_score: score,
        level,
        wanted_minutes: wanted,
        suggestion: None,
        none_reason: Some(why),
        reason: reason_text(level, score, wanted, Err(why)),
    };
    let Some((minutes, tier_kind)) = tier(score) else {
        return Ok(none(0, NoneReason::StressLow));
    };
    let wanted = minutes.max(placement.min_break_minutes);
    let kind = placement
        .preferred_kinds
        .iter()
        .copied()
        .find(|k| k.min_minutes() <= wanted)
        .unwrap_or(tier_kind);

    let length = i64::from(wanted);
    // min_by_key keeps the first of equal keys: ties go to the earlier slot.
    let best = usable
        .iter()
        .filter(|(start, end)| end - start >= length)
        .min_by_key(|(start, _)| *start);
    let Some(&(start, _)) = best else {
        let any_left = usable.iter().any(|(start, end)| end > start);
        let why = if any_left {
            NoneReason::NoSlotLongEnough
        } else {
            NoneReason::NoFreeSlot
        };
        return Ok(none(wanted, why));
    };
    let local_start = start + i64::from(offset);
    Ok(SuggestBreakResult {
        status: Status::Suggested,
        stress_score: score,
        level,
        wanted_minutes: wanted,
        suggestion: Some(Break {
            start: format_minute(start, offset)?,
            end: format_minute(start + length, offset)?,
            minutes: wanted,
            kind,
        }),
        none_reason: None,
        reason: reason_text(level, score, wanted, Ok((kind, local_start))),
    })
}

/// The tier's (minutes, kind) for a score, or None below [`BREAK_MIN_SCORE`].
fn tier(score: u32) -> Option<(u32, BreakKind)> {
    BREAK_TIERS
        .iter()
        .find(|(min, _, _)| score >= *min)
        .map(|&(_, minutes, kind)| (minutes, kind))
}

/// The checks both [`free_slots_call`] and [`place_break`] make; returns the score's level.
fn check_request(
    stress: &Stress,
    offset: i32,
    min_break_minutes: u32,
    preferred_kinds: &[BreakKind],
) -> ToolResult<Level> {
    let score = stress.score;
    check_range(score, "stress.score", 0, SCORE_MAX)?;
    let level = Level::from_score(score);
    if let Some(given) = stress.level
        && given != level
    {
        return Err(ToolError::invalid_args(format!(
            "stress.level: {:?} does not match score {score} (which is {:?})",
            given.as_str(),
            level.as_str()
        )));
    }
    check_offset(offset, "utc_offset_minutes")?;
    let (lo, hi) = MIN_BREAK_MINUTES;
    check_range(min_break_minutes, "min_break_minutes", lo, hi)?;
    check_len(preferred_kinds, "preferred_kinds", KIND_MIN_MINUTES.len())?;
    for (i, kind) in preferred_kinds.iter().enumerate() {
        if preferred_kinds[..i].contains(kind) {
            return Err(ToolError::invalid_args(format!(
                "preferred_kinds[{i}]: {kind:?} is listed twice"
            )));
        }
    }
    Ok(level)
}

/// Parses a span's RFC 3339 start and end (Unix seconds); the end must be after the start.
fn check_span(start_text: &str, end_text: &str, field: impl Display) -> ToolResult<(i64, i64)> {
    let start = parse_time(start_text, format_args!("{field}.start"))?;
    let end = parse_time(end_text, format_args!("{field}.end"))?;
    if end <= start {
        return Err(ToolError::invalid_args(format!(
            "{field}: end {end_text:?} must be after start {start_text:?}"
        )));
    }
    Ok((start, end))
}

/// The user-facing `reason`, from one of four fixed templates. `outcome` is the kind and the
/// local start (minutes; only its time of day is shown) of a suggested break, or why none.
pub fn reason_text(
    level: Level,
    score: u32,
    minutes: u32,
    outcome: Result<(BreakKind, i64), NoneReason>,
) -> String {
    let level = level.as_str();
    let text = match outcome {
        Ok((kind, local_start)) => format!(
            "Stress is {level} ({score}/100). Take a {minutes}-minute {} at {}.",
            kind.phrase(),
            format_hh_mm(local_start)
        ),
        Err(NoneReason::StressLow) => {
            format!("Stress is {level} ({score}/100): no break needed right now.")
        }
        Err(NoneReason::NoFreeSlot) => format!(
            "Stress is {level} ({score}/100), but no free time is left today. \
             Try a minute of slow breathing where you are."
        ),
        Err(NoneReason::NoSlotLongEnough) => format!(
            "Stress is {level} ({score}/100), but no free gap of {minutes} minutes is left \
             today. Try a minute of slow breathing where you are."
        ),
    };
    // The templates are far below the bound; keep the guarantee explicit anyway.
    text.chars().take(MAX_REASON_CHARS).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SCHEMAS;
    use aura_sdk::{ToolErrorKind, call_id_from};
    use serde_json::json;

    fn slot(start: &str, end: &str) -> FreeSlot {
        FreeSlot {
            start: format!("2026-11-23T{start}:00+01:00"),
            end: format!("2026-11-23T{end}:00+01:00"),
        }
    }

    /// Monday 2026-11-23, now 10:07:30 local (+01:00).
    fn args(score: u32, free_slots: Vec<FreeSlot>) -> Placement {
        Placement {
            stress: Stress { score, level: None },
            free_slots,
            now: "2026-11-23T10:07:30+01:00".into(),
            utc_offset_minutes: 60,
            min_break_minutes: 5,
            preferred_kinds: vec![],
        }
    }

    fn run(args: Placement) -> SuggestBreakResult {
        let result = place_break(args).unwrap();
        let schema = SCHEMAS.load("suggest_break.result.json");
        aura_testkit::assert_valid(&schema, &serde_json::to_value(&result).unwrap());
        assert!(result.reason.chars().count() <= MAX_REASON_CHARS);
        result
    }

    fn brk(result: &SuggestBreakResult) -> (&str, &str, u32, BreakKind) {
        let b = result.suggestion.as_ref().unwrap();
        (b.start.as_str(), b.end.as_str(), b.minutes, b.kind)
    }

    #[test]
    fn length_and_kind_grow_with_stress() {
        // One long slot 09:00–12:00; now 10:07:30 rounds up to 10:08.
        let slots = || vec![slot("09:00", "12:00")];
        for (score, minutes, kind, end) in [
            (40, 5, BreakKind::Breathing, "10:13"),
            (59, 5, BreakKind::Breathing, "10:13"),
            (60, 10, BreakKind::Stretch, "10:18"),
            (79, 10, BreakKind::Stretch, "10:18"),
            (80, 15, BreakKind::Walk, "10:23"),
            (100, 15, BreakKind::Walk, "10:23"),
        ] {
            let result = run(args(score, slots()));
            assert_eq!(result.status, Status::Suggested);
            assert_eq!(result.wanted_minutes, minutes);
            let end = format!("2026-11-23T{end}:00+01:00");
            assert_eq!(
                brk(&result),
                ("2026-11-23T10:08:00+01:00", end.as_str(), minutes, kind),
                "{score}"
            );
        }
        let result = run(args(72, slots()));
        assert_eq!(result.level, Level::High);
        assert_eq!(
            result.reason,
            "Stress is high (72/100). Take a 10-minute stretch at 10:08."
        );
    }

    #[test]
    fn earliest_slot_that_fits() {
        // Score 85 → 15 minutes. Slots (local): 09:00–10:00 is over; 10:00–10:20 leaves
        // 10:08–10:20 = 12 min, too short; 13:00–14:00 fits at 13:00; 11:00–11:15 fits at
        // 11:00 (exactly 15) and is the earliest; 11:00–12:00 ties with it, later in the list.
        let result = run(args(
            85,
            vec![
                slot("09:00", "10:00"),
                slot("10:00", "10:20"),
                slot("13:00", "14:00"),
                slot("11:00", "11:15"),
                slot("11:00", "12:00"),
            ],
        ));
        assert_eq!(
            brk(&result),
            (
                "2026-11-23T11:00:00+01:00",
                "2026-11-23T11:15:00+01:00",
                15,
                BreakKind::Walk
            )
        );
        assert_eq!(
            result.reason,
            "Stress is high (85/100). Take a 15-minute walk at 11:00."
        );
        // Slot given in UTC, output in the user's offset.
        let utc = FreeSlot {
            start: "2026-11-23T14:00:00Z".into(),
            end: "2026-11-23T15:00:00Z".into(),
        };
        let result = run(args(45, vec![utc]));
        assert_eq!(
            brk(&result),
            (
                "2026-11-23T15:00:00+01:00",
                "2026-11-23T15:05:00+01:00",
                5,
                BreakKind::Breathing
            )
        );
        assert_eq!(
            result.reason,
            "Stress is moderate (45/100). Take a 5-minute breathing exercise at 15:00."
        );
    }

    #[test]
    fn none_when_stress_is_low_or_nothing_fits() {
        let result = run(args(39, vec![slot("11:00", "12:00")]));
        assert_eq!(result.status, Status::None);
        assert_eq!(result.none_reason, Some(NoneReason::StressLow));
        assert_eq!(result.wanted_minutes, 0);
        assert_eq!(result.level, Level::Moderate);
        assert!(result.suggestion.is_none());
        assert_eq!(
            result.reason,
            "Stress is moderate (39/100): no break needed right now."
        );

        // Score 90 → 15 min; the only free time left is 10:08–10:20 (12 min).
        let result = run(args(
            90,
            vec![slot("09:00", "10:00"), slot("10:00", "10:20")],
        ));
        assert_eq!(result.none_reason, Some(NoneReason::NoSlotLongEnough));
        assert_eq!(result.wanted_minutes, 15);
        assert_eq!(
            result.reason,
            "Stress is high (90/100), but no free gap of 15 minutes is left today. \
             Try a minute of slow breathing where you are."
        );

        // Everything is over (10:00–10:08 ends at the rounded-up now): no free time at all.
        let result = run(args(90, vec![slot("09:00", "10:08")]));
        assert_eq!(result.none_reason, Some(NoneReason::NoFreeSlot));
        let result = run(args(65, vec![]));
        assert_eq!(result.none_reason, Some(NoneReason::NoFreeSlot));
        assert_eq!(
            result.reason,
            "Stress is high (65/100), but no free time is left today. \
             Try a minute of slow breathing where you are."
        );
    }

    #[test]
    fn minimum_length_and_preferences() {
        // Score 45 → 5 min, raised to 12 by min_break_minutes. Preferred walk (needs 10) fits.
        let mut a = args(45, vec![slot("10:00", "10:19"), slot("12:00", "13:00")]);
        a.min_break_minutes = 12;
        a.preferred_kinds = vec![BreakKind::Walk, BreakKind::Stretch];
        let result = run(a.clone());
        // 10:08–10:19 is 11 min < 12: the break goes to 12:00.
        assert_eq!(
            brk(&result),
            (
                "2026-11-23T12:00:00+01:00",
                "2026-11-23T12:12:00+01:00",
                12,
                BreakKind::Walk
            )
        );
        // At 5 minutes a walk does not fit; stretch (5) does.
        a.min_break_minutes = 5;
        let result = run(a.clone());
        assert_eq!(brk(&result).2, 5);
        assert_eq!(brk(&result).3, BreakKind::Stretch);
        // Only walk preferred at 5 minutes: none fits, the tier's breathing stays.
        a.preferred_kinds = vec![BreakKind::Walk];
        assert_eq!(brk(&run(a)).3, BreakKind::Breathing);
    }

    #[test]
    fn invalid_inputs() {
        let expect = |a: Placement, needle: &str| {
            let e = place_break(a).unwrap_err();
            assert_eq!(e.kind, ToolErrorKind::InvalidArgs);
            assert!(e.message.contains(needle), "{needle}: {}", e.message);
        };
        let mut a = args(70, vec![]);
        a.stress.level = Some(Level::Low);
        expect(a, "stress.level");
        expect(
            args(70, vec![slot("11:00", "12:00"), slot("12:00", "11:30")]),
            "free_slots[1]: end",
        );
        let mut a = args(70, vec![]);
        a.preferred_kinds = vec![BreakKind::Walk, BreakKind::Walk];
        expect(a, "preferred_kinds[1]");
        let mut a = args(70, vec![]);
        a.min_break_minutes = 61;
        expect(a, "min_break_minutes");
        expect(args(101, vec![]), "stress.score");
        let mut a = args(70, vec![]);
        a.now = "now".into();
        expect(a, "now");
        // A matching level is fine.
        let mut a = args(70, vec![]);
        a.stress.level = Some(Level::High);
        assert!(place_break(a).is_ok());
    }

    #[test]
    fn longest_reason_fits_the_bound() {
        // The longest template: "no free gap" with a 3-digit score, "moderate", 60 minutes.
        let text = reason_text(Level::Moderate, 100, 60, Err(NoneReason::NoSlotLongEnough));
        assert!(text.chars().count() < MAX_REASON_CHARS, "{text}");
    }

    /// Args of the tool: Monday 2026-11-23, now 10:15 local (+01:00), working 09:00–17:00, busy
    /// 10:00–12:30 local and 13:00Z–14:00Z (14:00–15:00 local).
    fn tool_args(score: u32) -> SuggestBreakArgs {
        SuggestBreakArgs {
            stress: Stress { score, level: None },
            busy: vec![
                BusySpan {
                    start: "2026-11-23T10:00:00+01:00".into(),
                    end: "2026-11-23T12:30:00+01:00".into(),
                },
                BusySpan {
                    start: "2026-11-23T13:00:00Z".into(),
                    end: "2026-11-23T14:00:00Z".into(),
                },
            ],
            free_slots: None,
            working_hours: DayHours {
                start: "09:00".into(),
                end: "17:00".into(),
            },
            now: "2026-11-23T10:15:00+01:00".into(),
            utc_offset_minutes: 60,
            min_break_minutes: 5,
            preferred_kinds: vec![BreakKind::Walk],
        }
    }

    /// The envelope satisfies toolcall.v1 and its args calendar's find_free_slots schema.
    fn assert_valid_call(call: &ToolCall) {
        assert_eq!((call.agent(), call.tool()), ("calendar", "find_free_slots"));
        aura_testkit::assert_toolcall(&call.clone().into_value());
    }

    #[test]
    fn free_slots_given_are_used_and_calendar_is_not_asked() {
        // Natively `aura_sdk::call` always fails: asked, calendar would fail the tool.
        assert!(suggest_break(tool_args(72)).is_err());
        // Score 72: a 10-minute stretch, walk preferred (a walk fits from 10 minutes). The
        // 12:30-12:35 gap is too short; the break starts at 12:40 in the second.
        let mut given = tool_args(72);
        given.free_slots = Some(vec![slot("12:30", "12:35"), slot("12:40", "13:00")]);
        let result = suggest_break(given).unwrap();
        assert_eq!(
            brk(&result),
            (
                "2026-11-23T12:40:00+01:00",
                "2026-11-23T12:50:00+01:00",
                10,
                BreakKind::Walk
            )
        );
    }

    #[test]
    fn free_slots_call_asks_calendar_for_the_rest_of_today() {
        let call = free_slots_call(&tool_args(72)).unwrap().unwrap();
        assert_valid_call(&call);
        // 2026-11-23 is a Monday (ISO 1): the only working weekday named, so calendar's 24-hour
        // window from 10:15 stops at Monday's 17:00. Busy spans passed on as given.
        let find_args = json!({
            "busy": [
                {"start": "2026-11-23T10:00:00+01:00", "end": "2026-11-23T12:30:00+01:00"},
                {"start": "2026-11-23T13:00:00Z", "end": "2026-11-23T14:00:00Z"}
            ],
            "working_hours": {"start": "09:00", "end": "17:00", "weekdays": [1]},
            "utc_offset_minutes": 60,
            "duration_minutes": 5,
            "from": "2026-11-23T10:15:00+01:00",
            "horizon_days": 1,
            "max_slots": 100
        });
        // The key is the canonical JSON of those args (RFC 8785: keys sorted), written out.
        let key = concat!(
            r#"{"busy":[{"end":"2026-11-23T12:30:00+01:00","start":"2026-11-23T10:00:00+01:00"},"#,
            r#"{"end":"2026-11-23T14:00:00Z","start":"2026-11-23T13:00:00Z"}],"#,
            r#""duration_minutes":5,"from":"2026-11-23T10:15:00+01:00","horizon_days":1,"#,
            r#""max_slots":100,"utc_offset_minutes":60,"#,
            r#""working_hours":{"end":"17:00","start":"09:00","weekdays":[1]}}"#
        );
        assert_eq!(
            call.clone().into_value(),
            json!({
                "call_id": call_id_from(&format!(
                    "wellness/suggest_break\n2026-11-23T10:15:00+01:00\n{key}"
                )),
                "agent": "calendar",
                "tool": "find_free_slots",
                "args": find_args,
                "ts": "2026-11-23T10:15:00+01:00",
                "confirm_required": false,
                "deadline_ms": 300
            })
        );
        // Same args, same call; another score asks calendar the same question.
        assert_eq!(free_slots_call(&tool_args(95)).unwrap().unwrap(), call);

        // Today is the local date of now. 2026-11-24T02:00Z at -05:00 is Monday 23rd 21:00;
        // in UTC it is Tuesday 24th (ISO 2). 2026-11-22T23:30Z at +01:00 is Monday 00:30; in
        // UTC Sunday 22nd (ISO 7).
        for (now, offset, weekday) in [
            ("2026-11-24T02:00:00Z", -300, 1),
            ("2026-11-24T02:00:00Z", 0, 2),
            ("2026-11-22T23:30:00Z", 60, 1),
            ("2026-11-22T23:30:00Z", 0, 7),
        ] {
            let mut a = tool_args(72);
            a.now = now.into();
            a.utc_offset_minutes = offset;
            let call = free_slots_call(&a).unwrap().unwrap();
            assert_valid_call(&call);
            assert_eq!(
                call.args()["working_hours"]["weekdays"],
                json!([weekday]),
                "{now} at {offset}"
            );
            assert_eq!(call.args()["from"], now);
        }
    }

    #[test]
    fn below_the_threshold_calendar_is_not_asked() {
        // 39 earns no break: no call, and natively (where any call fails) the tool still
        // answers, so it never tried.
        assert_eq!(free_slots_call(&tool_args(39)).unwrap(), None);
        let result = suggest_break(tool_args(39)).unwrap();
        assert_eq!(result.none_reason, Some(NoneReason::StressLow));
        assert_eq!(result.wanted_minutes, 0);
        // 40 earns one: the tool asks, and natively the call itself fails.
        assert!(free_slots_call(&tool_args(40)).unwrap().is_some());
        let e = suggest_break(tool_args(40)).unwrap_err();
        assert_eq!(e.kind, ToolErrorKind::Failed);
        assert!(e.message.contains("aura host"), "{}", e.message);
    }

    #[test]
    fn args_are_checked_before_calendar_is_asked() {
        let expect = |a: SuggestBreakArgs, needle: &str| {
            let e = free_slots_call(&a).unwrap_err();
            assert_eq!(e.kind, ToolErrorKind::InvalidArgs);
            assert!(e.message.contains(needle), "{needle}: {}", e.message);
            // The tool refuses them before any call (natively a call would be `failed`).
            assert_eq!(
                suggest_break(a).unwrap_err().kind,
                ToolErrorKind::InvalidArgs
            );
        };
        // Checked below the threshold too.
        let mut a = tool_args(10);
        a.busy[1].end = "2026-11-23T12:00:00Z".into();
        expect(a, "busy[1]: end");
        let mut a = tool_args(72);
        a.busy[0].start = "ten".into();
        expect(a, "busy[0].start");
        let mut a = tool_args(72);
        a.busy = vec![a.busy[0].clone(); BUSY_MAX + 1];
        expect(a, "busy: at most 500 items, got 501");
        let mut a = tool_args(72);
        a.busy = vec![a.busy[0].clone(); BUSY_MAX];
        assert!(free_slots_call(&a).unwrap().is_some());
        let mut a = tool_args(72);
        a.working_hours.start = "17:00".into();
        a.working_hours.end = "09:00".into();
        expect(a, "working_hours: end");
        let mut a = tool_args(72);
        a.working_hours.end = a.working_hours.start.clone();
        expect(a, "working_hours: end");
        let mut a = tool_args(72);
        a.working_hours.start = "9:00".into();
        expect(a, "working_hours.start");
        let mut a = tool_args(72);
        a.stress.level = Some(Level::Moderate);
        expect(a, "stress.level");
        let mut a = tool_args(72);
        a.now = "now".into();
        expect(a, "now");
        let mut a = tool_args(72);
        a.utc_offset_minutes = 841;
        expect(a, "utc_offset_minutes");
        let mut a = tool_args(72);
        a.min_break_minutes = 0;
        expect(a, "min_break_minutes");
        // 24:00 is a valid end.
        let mut a = tool_args(72);
        a.working_hours.end = "24:00".into();
        assert_valid_call(&free_slots_call(&a).unwrap().unwrap());
    }

    #[test]
    fn calendar_answers_become_slots_or_a_failure() {
        // What calendar answers the call of `tool_args`: from 10:15, Monday 09:00–17:00 minus
        // 10:00–12:30 and 14:00–15:00 → 12:30–14:00 (90 min) and 15:00–17:00 (120 min).
        let answer = json!({
            "call_id": "t_0000000000", "agent": "calendar", "tool": "find_free_slots",
            "ok": true, "fuel_used": 1234,
            "result": {"slots": [
                {"start": "2026-11-23T12:30:00+01:00", "end": "2026-11-23T14:00:00+01:00",
                 "minutes": 90},
                {"start": "2026-11-23T15:00:00+01:00", "end": "2026-11-23T17:00:00+01:00",
                 "minutes": 120}
            ], "truncated": false}
        });
        let slots = free_slots_from_answer(&answer).unwrap();
        assert_eq!(slots, vec![slot("12:30", "14:00"), slot("15:00", "17:00")]);
        // Placed: 72 → 10 minutes, walk preferred and fits 10 → 12:30–12:40.
        let a = tool_args(72);
        let result = run(Placement {
            stress: a.stress,
            free_slots: slots,
            now: a.now,
            utc_offset_minutes: a.utc_offset_minutes,
            min_break_minutes: a.min_break_minutes,
            preferred_kinds: a.preferred_kinds,
        });
        assert_eq!(
            brk(&result),
            (
                "2026-11-23T12:30:00+01:00",
                "2026-11-23T12:40:00+01:00",
                10,
                BreakKind::Walk
            )
        );

        let failed = |answer: Value| {
            let e = free_slots_from_answer(&answer).unwrap_err();
            assert_eq!(e.kind, ToolErrorKind::Failed);
            e.message
        };
        let refused = json!({
            "call_id": "t_0000000000", "agent": "calendar", "tool": "find_free_slots",
            "ok": false, "fuel_used": 0,
            "error": {"kind": "agent_unavailable", "message": "agent `calendar` is not loaded",
                      "phase": "envelope"}
        });
        assert_eq!(
            failed(refused.clone()),
            "free slots unavailable: agent_unavailable: agent `calendar` is not loaded"
        );
        // A long message is cut to the SDK's bound, the kind kept in front.
        let mut long = refused;
        long["error"] = json!({"kind": "deadline_exceeded", "message": "x".repeat(1000)});
        let message = failed(long);
        assert_eq!(message.chars().count(), aura_sdk::ERROR_MESSAGE_CHARS_MAX);
        assert!(message.starts_with("free slots unavailable: deadline_exceeded: xxx"));
        // Answers that are not what result.v1 promises.
        assert!(failed(json!({"ok": "yes"})).contains("no boolean `ok`"));
        assert!(failed(json!({"ok": true})).contains("unreadable result: ok without `result`"));
        assert!(failed(json!({"ok": true, "result": {"slots": 3}})).contains("unreadable"));
        assert_eq!(
            failed(json!({"ok": false})),
            "free slots unavailable: unknown: "
        );
        let many =
            vec![json!({"start": "2026-11-23T12:30:00Z", "end": "2026-11-23T13:00:00Z"}); 101];
        assert!(failed(json!({"ok": true, "result": {"slots": many}})).contains("101 slots"));
    }

    #[test]
    fn schema_examples_deserialize_and_ask_calendar() {
        let (args_schema, _, examples) = SCHEMAS.tool_schemas("suggest_break");
        for example in examples {
            let args: SuggestBreakArgs = serde_json::from_value(example).unwrap();
            let call = free_slots_call(&args)
                .unwrap()
                .expect("the example earns a break");
            assert_valid_call(&call);
        }
        let props = &args_schema["properties"];
        assert_eq!(
            props["min_break_minutes"]["default"],
            DEFAULT_MIN_BREAK_MINUTES
        );
        assert_eq!(props["busy"]["default"], json!([]));
        assert_eq!(props["busy"]["maxItems"], BUSY_MAX);
        assert_eq!(props["preferred_kinds"]["default"], json!([]));
        let a: SuggestBreakArgs = serde_json::from_value(json!({
            "stress": {"score": 50}, "working_hours": {"start": "09:00", "end": "17:00"},
            "now": "2026-11-23T10:00:00Z", "utc_offset_minutes": 0
        }))
        .unwrap();
        assert_eq!(a.min_break_minutes, 5);
        assert!(a.busy.is_empty() && a.preferred_kinds.is_empty());
        assert_eq!(props["free_slots"]["maxItems"], MAX_SLOTS);
        // Unknown fields are refused by both, like calendar's `weekdays` (today is the only
        // day the tool looks at).
        for extra in [
            json!({"stress": {"score": 50, "mood": "ok"},
                   "working_hours": {"start": "09:00", "end": "17:00"},
                   "now": "2026-11-23T10:00:00Z", "utc_offset_minutes": 0}),
            json!({"stress": {"score": 50},
                   "working_hours": {"start": "09:00", "end": "17:00", "weekdays": [1]},
                   "now": "2026-11-23T10:00:00Z", "utc_offset_minutes": 0}),
            json!({"stress": {"score": 50}, "slots": [],
                   "working_hours": {"start": "09:00", "end": "17:00"},
                   "now": "2026-11-23T10:00:00Z", "utc_offset_minutes": 0}),
        ] {
            assert!(serde_json::from_value::<SuggestBreakArgs>(extra.clone()).is_err());
            assert!(!aura_testkit::is_valid(&args_schema, &extra));
        }
        // working_hours is required.
        let missing = json!({"stress": {"score": 50}, "now": "2026-11-23T10:00:00Z",
                             "utc_offset_minutes": 0});
        assert!(serde_json::from_value::<SuggestBreakArgs>(missing.clone()).is_err());
        assert!(!aura_testkit::is_valid(&args_schema, &missing));
    }
}
