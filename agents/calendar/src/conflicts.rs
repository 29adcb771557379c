//! `detect_conflicts`: overlaps, double bookings and tight transitions between events.
//!
//! Rules (also stated in `schemas/calendar/detect_conflicts.*.json`):
//! - Times are compared to the second (fractions dropped). Events are half-open `[start, end)`:
//!   one ending exactly when another starts does not overlap it. `end <= start` and duplicate
//!   ids are invalid args.
//! - Events are ordered by start, then id (byte order). In every pair `a` is the earlier in
//!   that order, and pairs are listed in that order (by `a`, then `b`).
//! - Two events whose intersection is positive form a *double booking* when one lies entirely
//!   within the other (identical spans included) and an *overlap* otherwise.
//!   `overlap_minutes` is the intersection rounded up to whole minutes.
//! - A *tight transition* goes from event `from` to its next event `to`: the event(s) starting
//!   earliest at or after `from`'s end (ties all count). It is reported when both have a
//!   non-blank location, the locations differ (trimmed, case-insensitive), and the gap is shorter
//!   than `travel_gap_minutes`. `gap_minutes` is the gap rounded down (so `gap_minutes <
//!   travel_gap_minutes` always holds); locations are reported trimmed.
//! - Sweep over the sorted events: O(n log n + number of pairs reported).

use aura_sdk::ToolResult;
use aura_sdk::args::check_range;
use aura_sdk::time::{SECS_PER_MINUTE, minutes_ceil, minutes_floor};
use serde::{Deserialize, Serialize};

use crate::common::{
    CalendarEvent, MAX_TRAVEL_GAP_MINUTES, Span, check_events, default_travel_gap_minutes,
};

/// Args of `detect_conflicts`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct DetectConflictsArgs {
    /// The events to check (at most 500, unique ids).
    pub events: Vec<CalendarEvent>,
    /// A gap between events at different locations shorter than this is tight (0..240).
    /// Default 15.
    #[serde(default = "default_travel_gap_minutes")]
    pub travel_gap_minutes: u32,
}

/// Two intersecting events.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ConflictPair {
    /// Id of the earlier event (by start, then id).
    pub a: String,
    /// Id of the later event.
    pub b: String,
    /// Length of the intersection, in minutes rounded up.
    pub overlap_minutes: i64,
}

/// Too little time to travel between two consecutive events.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TightTransition {
    /// Id of the event left.
    pub from: String,
    /// Trimmed location of `from`.
    pub from_location: String,
    /// Gap from `from`'s end to `to`'s start, in minutes rounded down.
    pub gap_minutes: i64,
    /// Id of the next event.
    pub to: String,
    /// Trimmed location of `to`.
    pub to_location: String,
}

/// Result of `detect_conflicts`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DetectConflictsResult {
    /// Pairs where one event lies within the other.
    pub double_bookings: Vec<ConflictPair>,
    /// Partly overlapping pairs.
    pub overlaps: Vec<ConflictPair>,
    /// Consecutive events at different places with too little time between them.
    pub tight_transitions: Vec<TightTransition>,
    /// Whether any list was cut at [`FINDINGS_PER_LIST_MAX`].
    pub truncated: bool,
}

/// Longest list of each kind in a result. 500 events that all overlap make 124,750 pairs, about
/// 10 MB of JSON: far past what the host accepts from an agent and more than anyone reads. 500
/// pairs per list (earliest first) keep the worst result under ~450 KB.
pub const FINDINGS_PER_LIST_MAX: usize = 500;

/// The kinds of conflict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ConflictKind {
    /// Partial overlap.
    Overlap,
    /// One event within the other.
    DoubleBooking,
    /// Too little travel time between consecutive events at different places.
    TightTransition,
}

impl ConflictKind {
    /// The snake_case name used in JSON and in tick signals.
    pub fn as_str(self) -> &'static str {
        match self {
            ConflictKind::Overlap => "overlap",
            ConflictKind::DoubleBooking => "double_booking",
            ConflictKind::TightTransition => "tight_transition",
        }
    }
}

/// One conflict between two events, by index into the analysed slice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Finding {
    pub kind: ConflictKind,
    /// The earlier event (`a`, or `from` for a tight transition).
    pub a: usize,
    /// The later event (`b`, or `to`).
    pub b: usize,
    /// Intersection (overlap, double booking) or gap (tight transition), in seconds.
    pub secs: i64,
}

impl Finding {
    /// The minutes figure reported for this finding: intersections rounded up, gaps down.
    pub fn minutes(&self) -> i64 {
        match self.kind {
            ConflictKind::TightTransition => minutes_floor(self.secs),
            _ => minutes_ceil(self.secs),
        }
    }
}

/// All conflicts among `spans`: first the intersecting pairs (overlaps and double bookings,
/// in pair order), then the tight transitions (in pair order). Indices refer to `spans`.
pub fn analyze(spans: &[Span<'_>], travel_gap_minutes: u32) -> Vec<Finding> {
    let mut order: Vec<usize> = (0..spans.len()).collect();
    order.sort_by(|&x, &y| {
        let (a, b) = (&spans[x], &spans[y]);
        (a.start, a.id.as_bytes(), x).cmp(&(b.start, b.id.as_bytes(), y))
    });
    let sorted: Vec<&Span<'_>> = order.iter().map(|&i| &spans[i]).collect();
    let mut findings = Vec::new();

    // Intersections: for each event, the later-sorted events starting before it ends.
    for (p, a) in sorted.iter().enumerate() {
        for (q, b) in sorted.iter().enumerate().skip(p + 1) {
            if b.start >= a.end {
                break;
            }
            // a.start <= b.start < a.end and b.end > b.start, so the intersection is positive.
            let secs = a.end.min(b.end) - b.start;
            let b_within_a = b.end <= a.end;
            let a_within_b = a.start == b.start && a.end <= b.end;
            let kind = if b_within_a || a_within_b {
                ConflictKind::DoubleBooking
            } else {
                ConflictKind::Overlap
            };
            findings.push(Finding {
                kind,
                a: order[p],
                b: order[q],
                secs,
            });
        }
    }

    // Tight transitions: from each event to the event(s) starting earliest at or after its end.
    let limit = i64::from(travel_gap_minutes) * SECS_PER_MINUTE;
    let keys: Vec<Option<String>> = spans
        .iter()
        .map(|s| s.location.map(str::to_lowercase))
        .collect();
    for (p, a) in sorted.iter().enumerate() {
        let Some(from_key) = &keys[order[p]] else {
            continue;
        };
        let first = p + 1 + sorted[p + 1..].partition_point(|b| b.start < a.end);
        let Some(next) = sorted.get(first) else {
            continue;
        };
        let gap = next.start - a.end;
        if gap >= limit {
            continue;
        }
        for (q, b) in sorted.iter().enumerate().skip(first) {
            if b.start != next.start {
                break;
            }
            match &keys[order[q]] {
                Some(to_key) if to_key != from_key => findings.push(Finding {
                    kind: ConflictKind::TightTransition,
                    a: order[p],
                    b: order[q],
                    secs: gap,
                }),
                _ => {}
            }
        }
    }
    findings
}

/// Finds overlaps, double bookings and tight transitions. See the module documentation.
pub fn detect_conflicts(args: DetectConflictsArgs) -> ToolResult<DetectConflictsResult> {
    check_range(
        args.travel_gap_minutes,
        "travel_gap_minutes",
        0,
        MAX_TRAVEL_GAP_MINUTES,
    )?;
    let spans = check_events(&args.events, "events")?;
    let mut result = DetectConflictsResult {
        overlaps: Vec::new(),
        double_bookings: Vec::new(),
        tight_transitions: Vec::new(),
        truncated: false,
    };
    for finding in analyze(&spans, args.travel_gap_minutes) {
        let full = match finding.kind {
            ConflictKind::Overlap => result.overlaps.len(),
            ConflictKind::DoubleBooking => result.double_bookings.len(),
            ConflictKind::TightTransition => result.tight_transitions.len(),
        } >= FINDINGS_PER_LIST_MAX;
        if full {
            result.truncated = true;
            continue;
        }
        let (a, b) = (&spans[finding.a], &spans[finding.b]);
        let pair = || ConflictPair {
            a: a.id.to_owned(),
            b: b.id.to_owned(),
            overlap_minutes: finding.minutes(),
        };
        match finding.kind {
            ConflictKind::Overlap => result.overlaps.push(pair()),
            ConflictKind::DoubleBooking => result.double_bookings.push(pair()),
            ConflictKind::TightTransition => result.tight_transitions.push(TightTransition {
                from: a.id.to_owned(),
                to: b.id.to_owned(),
                gap_minutes: finding.minutes(),
                from_location: a.location.unwrap_or_default().to_owned(),
                to_location: b.location.unwrap_or_default().to_owned(),
            }),
        }
    }
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SCHEMAS;
    use aura_sdk::ToolErrorKind;
    use serde_json::json;

    fn ev(id: &str, start: &str, end: &str, location: Option<&str>) -> CalendarEvent {
        CalendarEvent {
            id: id.into(),
            title: None,
            start: format!("2026-11-23T{start}:00Z"),
            end: format!("2026-11-23T{end}:00Z"),
            location: location.map(Into::into),
        }
    }

    fn run(events: Vec<CalendarEvent>) -> DetectConflictsResult {
        let result = detect_conflicts(DetectConflictsArgs {
            events,
            travel_gap_minutes: 15,
        })
        .unwrap();
        let schema = SCHEMAS.load("detect_conflicts.result.json");
        aura_testkit::assert_valid(&schema, &serde_json::to_value(&result).unwrap());
        result
    }

    fn pair(a: &str, b: &str, overlap_minutes: i64) -> ConflictPair {
        ConflictPair {
            a: a.into(),
            b: b.into(),
            overlap_minutes,
        }
    }

    #[test]
    fn overlap_double_booking_and_touching() {
        // standup 09:00–09:30, review 09:15–10:00 (overlap 15), lunch 12:00–13:00,
        // call 12:15–12:45 (within lunch: double booking, 30), focus 10:00–11:00 (touches
        // review: nothing), dup 12:00–13:00 (identical to lunch: double booking 60, and call
        // lies within dup: double booking 30).
        let result = run(vec![
            ev("lunch", "12:00", "13:00", None),
            ev("review", "09:15", "10:00", None),
            ev("standup", "09:00", "09:30", None),
            ev("call", "12:15", "12:45", None),
            ev("focus", "10:00", "11:00", None),
            ev("dup", "12:00", "13:00", None),
        ]);
        assert_eq!(result.overlaps, [pair("standup", "review", 15)]);
        // Sorted: standup 09:00, review 09:15, focus 10:00, dup 12:00, lunch 12:00 (id
        // "dup" < "lunch"), call 12:15.
        assert_eq!(
            result.double_bookings,
            [
                pair("dup", "lunch", 60),
                pair("dup", "call", 30),
                pair("lunch", "call", 30)
            ]
        );
        assert!(result.tight_transitions.is_empty());
    }

    #[test]
    fn same_start_longer_first_event_is_double_booking_with_shorter_id_first() {
        // a 09:00–10:00 and b 09:00–09:20 start together: b within a, "a" < "b".
        // z 09:00–09:20 and y 09:00–10:00: y comes first (id), z within y.
        let result = run(vec![
            ev("b", "09:00", "09:20", None),
            ev("a", "09:00", "10:00", None),
        ]);
        assert_eq!(result.double_bookings, [pair("a", "b", 20)]);
        let result = run(vec![
            ev("z", "09:00", "09:20", None),
            ev("y", "09:00", "10:00", None),
        ]);
        assert_eq!(result.double_bookings, [pair("y", "z", 20)]);
        assert!(result.overlaps.is_empty());
    }

    #[test]
    fn overlap_minutes_round_up() {
        // a ends 10:00:30, b starts 10:00:00 → 30 s intersection → 1 minute.
        let mut a = ev("a", "09:00", "10:00", None);
        a.end = "2026-11-23T10:00:30Z".into();
        let b = ev("b", "10:00", "11:00", None);
        assert_eq!(run(vec![a, b]).overlaps, [pair("a", "b", 1)]);
    }

    #[test]
    fn offsets_are_compared_in_utc() {
        // 10:00+01:00 = 09:00Z: "late" 09:30Z–10:30Z overlaps "early" 09:00Z–10:00Z by 30.
        let early = CalendarEvent {
            id: "early".into(),
            title: Some("Early".into()),
            start: "2026-11-23T10:00:00+01:00".into(),
            end: "2026-11-23T11:00:00+01:00".into(),
            location: None,
        };
        let late = ev("late", "09:30", "10:30", None);
        assert_eq!(run(vec![late, early]).overlaps, [pair("early", "late", 30)]);
    }

    #[test]
    fn tight_transitions() {
        // office 09:00–10:00 @ "Office", client 10:10–11:00 @ " client HQ " (gap 10 < 15:
        // tight), cafe 11:15–12:00 @ "Cafe" (gap 15, not < 15: fine), gym 12:05–13:00 @ "cafe"
        // (same place, case-insensitive: fine), home 13:00–14:00 with no location: fine.
        let result = run(vec![
            ev("office", "09:00", "10:00", Some("Office")),
            ev("client", "10:10", "11:00", Some(" client HQ ")),
            ev("cafe", "11:15", "12:00", Some("Cafe")),
            ev("gym", "12:05", "13:00", Some("cafe")),
            ev("home", "13:00", "14:00", None),
        ]);
        assert_eq!(
            result.tight_transitions,
            [TightTransition {
                from: "office".into(),
                to: "client".into(),
                gap_minutes: 10,
                from_location: "Office".into(),
                to_location: "client HQ".into(),
            }]
        );
        assert!(result.overlaps.is_empty() && result.double_bookings.is_empty());
    }

    #[test]
    fn tight_transition_goes_to_the_next_event_only() {
        // a 09:00–10:00 @X; b 10:00–10:05 @X (next after a: same place); c 10:10–11:00 @Y.
        // a → b fine, b → c gap 5 tight; a → c is not consecutive. long 09:30–12:00 @Z
        // overlaps a and b, c lies within it; nothing starts after it.
        let result = run(vec![
            ev("a", "09:00", "10:00", Some("X")),
            ev("b", "10:00", "10:05", Some("X")),
            ev("c", "10:10", "11:00", Some("Y")),
            ev("long", "09:30", "12:00", Some("Z")),
        ]);
        let tight: Vec<_> = result
            .tight_transitions
            .iter()
            .map(|t| (&*t.from, &*t.to, t.gap_minutes))
            .collect();
        assert_eq!(tight, [("b", "c", 5)]);
        // Sorted: a 09:00, long 09:30, b 10:00, c 10:10.
        assert_eq!(result.overlaps, [pair("a", "long", 30)]);
        assert_eq!(
            result.double_bookings,
            [pair("long", "b", 5), pair("long", "c", 50)]
        );
    }

    #[test]
    fn gap_with_seconds_rounds_down_and_zero_gap_is_tight() {
        // a ends 10:00:00, b starts 10:14:59: gap 899 s → 14 min, tight. c starts right at
        // b's end at another place: gap 0, tight.
        let a = ev("a", "09:00", "10:00", Some("X"));
        let mut b = ev("b", "10:14", "10:30", Some("Y"));
        b.start = "2026-11-23T10:14:59Z".into();
        let c = ev("c", "10:30", "11:00", Some("Z"));
        let result = run(vec![a, b, c]);
        let tight: Vec<_> = result
            .tight_transitions
            .iter()
            .map(|t| (&*t.from, &*t.to, t.gap_minutes))
            .collect();
        assert_eq!(tight, [("a", "b", 14), ("b", "c", 0)]);
    }

    #[test]
    fn travel_gap_zero_reports_no_transitions() {
        let result = detect_conflicts(DetectConflictsArgs {
            events: vec![
                ev("a", "09:00", "10:00", Some("X")),
                ev("b", "10:00", "11:00", Some("Y")),
            ],
            travel_gap_minutes: 0,
        })
        .unwrap();
        assert!(result.tight_transitions.is_empty());
    }

    #[test]
    fn invalid_inputs() {
        let e = detect_conflicts(DetectConflictsArgs {
            events: vec![
                ev("a", "09:00", "10:00", None),
                ev("a", "11:00", "12:00", None),
            ],
            travel_gap_minutes: 15,
        })
        .unwrap_err();
        assert_eq!(e.kind, ToolErrorKind::InvalidArgs);
        assert!(e.message.contains("duplicate"), "{}", e.message);
        let e = detect_conflicts(DetectConflictsArgs {
            events: vec![
                ev("a", "09:00", "10:00", None),
                ev("b", "11:00", "11:00", None),
            ],
            travel_gap_minutes: 15,
        })
        .unwrap_err();
        assert_eq!(e.kind, ToolErrorKind::InvalidArgs);
        assert!(e.message.contains("events[1]"), "{}", e.message);
        let e = detect_conflicts(DetectConflictsArgs {
            events: vec![],
            travel_gap_minutes: 241,
        })
        .unwrap_err();
        assert_eq!(e.kind, ToolErrorKind::InvalidArgs);
    }

    #[test]
    fn five_hundred_events_match_brute_force() {
        // A deterministic pseudo-random day of 500 events (LCG), checked against an O(n²)
        // count of intersecting pairs.
        let mut seed: u64 = 42;
        let mut next = |m: u64| {
            seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (seed >> 33) % m
        };
        let base = 1_795_392_000_i64; // 2026-11-23T00:00:00Z
        let places = ["A", "B", "C"];
        let events: Vec<CalendarEvent> = (0..500)
            .map(|i| {
                let start = base + next(20 * 60) as i64 * 60;
                let end = start + (5 + next(90)) as i64 * 60;
                CalendarEvent {
                    id: format!("e{i:03}"),
                    title: None,
                    start: aura_sdk::time::format_utc(start).unwrap(),
                    end: aura_sdk::time::format_utc(end).unwrap(),
                    location: Some(places[next(3) as usize].into()),
                }
            })
            .collect();
        let spans = check_events(&events, "events").unwrap();
        let mut brute = 0;
        for i in 0..spans.len() {
            for j in i + 1..spans.len() {
                if spans[i].start.max(spans[j].start) < spans[i].end.min(spans[j].end) {
                    brute += 1;
                }
            }
        }
        // The sweep finds every intersecting pair (before the result's per-list cut).
        let findings = analyze(&spans, 15);
        let intersecting: Vec<_> = findings
            .iter()
            .filter(|f| f.kind != ConflictKind::TightTransition)
            .collect();
        assert_eq!(intersecting.len(), brute);
        // Every pair is ordered: a before b by (start, id).
        for f in &intersecting {
            let (a, b) = (&spans[f.a], &spans[f.b]);
            assert!((a.start, a.id) < (b.start, b.id));
        }
        // The result keeps at most FINDINGS_PER_LIST_MAX per list and says it cut.
        let result = run(events);
        assert!(result.overlaps.len() <= FINDINGS_PER_LIST_MAX);
        assert!(result.double_bookings.len() <= FINDINGS_PER_LIST_MAX);
        assert_eq!(
            result.truncated,
            brute > result.overlaps.len() + result.double_bookings.len()
        );
    }

    #[test]
    fn schema_examples_deserialize_and_run() {
        let schema = SCHEMAS.load("detect_conflicts.args.json");
        SCHEMAS.assert_header(&schema, "detect_conflicts.args.json");
        let result_schema = SCHEMAS.load("detect_conflicts.result.json");
        SCHEMAS.assert_header(&result_schema, "detect_conflicts.result.json");
        let examples = schema["examples"].as_array().unwrap();
        assert!(!examples.is_empty());
        for example in examples {
            aura_testkit::assert_valid(&schema, example);
            let args: DetectConflictsArgs = serde_json::from_value(example.clone()).unwrap();
            let result = detect_conflicts(args).unwrap();
            aura_testkit::assert_valid(&result_schema, &serde_json::to_value(&result).unwrap());
        }
        let args: DetectConflictsArgs = serde_json::from_value(json!({"events": []})).unwrap();
        assert_eq!(args.travel_gap_minutes, 15);
        assert_eq!(schema["properties"]["travel_gap_minutes"]["default"], 15);
        assert!(
            serde_json::from_value::<DetectConflictsArgs>(json!({
                "events": [{"id": "a", "start": "2026-11-23T09:00:00Z",
                            "end": "2026-11-23T10:00:00Z", "colour": "red"}]
            }))
            .is_err()
        );
    }

    #[test]
    fn lists_are_cut_at_the_bound_and_say_so() {
        // 40 identical spans: every pair is a double booking, 40·39/2 = 780 pairs.
        let events: Vec<CalendarEvent> = (0..40)
            .map(|i| ev(&format!("e{i:02}"), "09:00", "10:00", None))
            .collect();
        let result = run(events);
        assert_eq!(result.double_bookings.len(), FINDINGS_PER_LIST_MAX);
        assert!(result.truncated);
        // The earliest pairs are kept: e00 with e01.., in id order.
        assert_eq!(result.double_bookings[0].a, "e00");
        assert_eq!(result.double_bookings[0].b, "e01");
        let few: Vec<CalendarEvent> = (0..3)
            .map(|i| ev(&format!("e{i}"), "09:00", "10:00", None))
            .collect();
        assert!(!run(few).truncated);
    }
}
