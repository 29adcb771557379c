//! `suggest_break`: a short break in the earliest free slot that fits, sized by stress.
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
//! - Slots are taken in whole minutes: a slot's usable part starts at the later of its start
//!   (rounded up) and `now` (rounded up) and ends at its end (rounded down). The break starts
//!   at the earliest usable start among the slots whose usable part is at least the break's
//!   length (ties: the earlier slot in the list). Slots may be unsorted and may overlap; a slot
//!   must end after it starts (`invalid_args` otherwise).
//! - No such slot → `none` with `no_free_slot` (no usable minute left at or after `now`) or
//!   `no_slot_long_enough`.
//! - `reason` is one of four fixed templates (see [`reason_text`]) filled with the level, the
//!   score, the length, the kind and the local start time "HH:MM" at `utc_offset_minutes`; it
//!   is at most 200 characters. Output times are RFC 3339 at minute precision in that offset.
//!
//! This module must not decide whether a break is wanted beyond these rules (the tick does),
//! must not read a clock and must not fetch slots itself.

use aura_sdk::{ToolError, ToolResult};
use serde::{Deserialize, Serialize};

use crate::common::{
    Level, SCORE_MAX, check_len, check_offset, check_range, format_hh_mm, format_minute,
    minutes_ceil, minutes_floor, parse_time,
};

/// Most free slots one call accepts (a day cut into 100 gaps is already absurd).
pub const MAX_SLOTS: usize = 100;
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

/// One free slot.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
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
    /// Today's free slots, any order (≤ 100). Default none.
    #[serde(default)]
    pub free_slots: Vec<FreeSlot>,
    /// RFC 3339 instant; no break starts before it.
    pub now: String,
    /// The user's offset east of UTC in minutes (-840..840), for output times and `reason`.
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

/// Suggests a break. See the module documentation for the rules.
pub fn suggest_break(args: SuggestBreakArgs) -> ToolResult<SuggestBreakResult> {
    let score = args.stress.score;
    check_range(score, "stress.score", 0, SCORE_MAX)?;
    let level = Level::from_score(score);
    if let Some(given) = args.stress.level
        && given != level
    {
        return Err(ToolError::invalid_args(format!(
            "stress.level: {:?} does not match score {score} (which is {:?})",
            given.as_str(),
            level.as_str()
        )));
    }
    check_len(&args.free_slots, "free_slots", MAX_SLOTS)?;
    check_offset(args.utc_offset_minutes, "utc_offset_minutes")?;
    let (lo, hi) = MIN_BREAK_MINUTES;
    check_range(args.min_break_minutes, "min_break_minutes", lo, hi)?;
    check_len(
        &args.preferred_kinds,
        "preferred_kinds",
        KIND_MIN_MINUTES.len(),
    )?;
    for (i, kind) in args.preferred_kinds.iter().enumerate() {
        if args.preferred_kinds[..i].contains(kind) {
            return Err(ToolError::invalid_args(format!(
                "preferred_kinds[{i}]: {kind:?} is listed twice"
            )));
        }
    }
    let now = minutes_ceil(parse_time(&args.now, "now")?);
    let mut usable = Vec::with_capacity(args.free_slots.len());
    for (i, slot) in args.free_slots.iter().enumerate() {
        let field = format!("free_slots[{i}]");
        let start = parse_time(&slot.start, &format!("{field}.start"))?;
        let end = parse_time(&slot.end, &format!("{field}.end"))?;
        if end <= start {
            return Err(ToolError::invalid_args(format!(
                "{field}: end {:?} must be after start {:?}",
                slot.end, slot.start
            )));
        }
        usable.push((minutes_ceil(start).max(now), minutes_floor(end)));
    }

    let offset = args.utc_offset_minutes;
    let none = |wanted: u32, why: NoneReason| SuggestBreakResult {
        status: Status::None,
        stress_score: score,
        level,
        wanted_minutes: wanted,
        suggestion: None,
        none_reason: Some(why),
        reason: reason_text(level, score, wanted, Err(why)),
    };
    let Some(&(_, minutes, tier_kind)) = BREAK_TIERS.iter().find(|(min, _, _)| score >= *min)
    else {
        return Ok(none(0, NoneReason::StressLow));
    };
    let wanted = minutes.max(args.min_break_minutes);
    let kind = args
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
    use crate::common::schema_check;
    use aura_sdk::ToolErrorKind;
    use serde_json::json;

    fn slot(start: &str, end: &str) -> FreeSlot {
        FreeSlot {
            start: format!("2026-11-23T{start}:00+01:00"),
            end: format!("2026-11-23T{end}:00+01:00"),
        }
    }

    /// Monday 2026-11-23, now 10:07:30 local (+01:00).
    fn args(score: u32, free_slots: Vec<FreeSlot>) -> SuggestBreakArgs {
        SuggestBreakArgs {
            stress: Stress { score, level: None },
            free_slots,
            now: "2026-11-23T10:07:30+01:00".into(),
            utc_offset_minutes: 60,
            min_break_minutes: 5,
            preferred_kinds: vec![],
        }
    }

    fn run(args: SuggestBreakArgs) -> SuggestBreakResult {
        let result = suggest_break(args).unwrap();
        let schema = schema_check::load("suggest_break.result.json");
        schema_check::assert_valid(&schema, &serde_json::to_value(&result).unwrap());
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
        let expect = |a: SuggestBreakArgs, needle: &str| {
            let e = suggest_break(a).unwrap_err();
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
        assert!(suggest_break(a).is_ok());
    }

    #[test]
    fn longest_reason_fits_the_bound() {
        // The longest template: "no free gap" with a 3-digit score, "moderate", 60 minutes.
        let text = reason_text(Level::Moderate, 100, 60, Err(NoneReason::NoSlotLongEnough));
        assert!(text.chars().count() < MAX_REASON_CHARS, "{text}");
    }

    #[test]
    fn schema_examples_deserialize_and_run() {
        let (args_schema, result_schema, examples) = schema_check::tool_schemas("suggest_break");
        for example in examples {
            let args: SuggestBreakArgs = serde_json::from_value(example).unwrap();
            let result = suggest_break(args).unwrap();
            schema_check::assert_valid(&result_schema, &serde_json::to_value(&result).unwrap());
        }
        let props = &args_schema["properties"];
        assert_eq!(
            props["min_break_minutes"]["default"],
            DEFAULT_MIN_BREAK_MINUTES
        );
        assert_eq!(props["free_slots"]["default"], json!([]));
        assert_eq!(props["preferred_kinds"]["default"], json!([]));
        let a: SuggestBreakArgs = serde_json::from_value(json!({
            "stress": {"score": 50}, "now": "2026-11-23T10:00:00Z", "utc_offset_minutes": 0
        }))
        .unwrap();
        assert_eq!(a.min_break_minutes, 5);
        assert!(a.free_slots.is_empty() && a.preferred_kinds.is_empty());
        let extra = json!({"stress": {"score": 50, "mood": "ok"},
                           "now": "2026-11-23T10:00:00Z", "utc_offset_minutes": 0});
        assert!(serde_json::from_value::<SuggestBreakArgs>(extra.clone()).is_err());
        assert!(!schema_check::is_valid(&args_schema, &extra));
    }
}
