//! What the person reads and hears, and when (issue 34), over three days run by the real host
//! with the real agents: `scenarios/day.json`, `scenarios/weekend.json` and
//! `scenarios/travel.json` (a person flying from Berlin to New York). The expectations are
//! worked out by hand in scenarios/README.md: no internal id, error kind, call chain or float
//! in anything shown; speech within its word bound and the watch within its line; the morning
//! briefing at the end of quiet hours with what the night kept back; each urgent item at the
//! first tick it may be shown; no ordinary spend flagged; the confirmed invitation gets its
//! break; at most one decision per surface per tick.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use aura_contract::catalogue::raw_numbers;
use aura_contract::limits::{SPEECH_WORDS_MAX, WATCH_LINE_CHARS_MAX};
use serde_json::Value;

use crate::orchestrator::run;

fn scenario(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("scenarios/{name}.json"))
}

/// The decisions of `name` run with `seed`.
async fn day_of(name: &str, seed: u64) -> Vec<Value> {
    let (_, traces, _) = run(&format!("telling-{name}"), &scenario(name), seed).await;
    traces
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

/// Every id the scenario names something by (messages, threads, events, transactions,
/// invitations): what a person must never be shown.
fn ids_of(name: &str) -> Vec<String> {
    let text = std::fs::read_to_string(scenario(name)).unwrap();
    let scenario: Value = serde_json::from_str(&text).unwrap();
    let mut ids = Vec::new();
    let items = scenario["initial"]
        .as_object()
        .into_iter()
        .flat_map(|initial| initial.values())
        .filter_map(Value::as_array)
        .flatten()
        .chain(
            scenario["signals"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| &s["data"]),
        );
    for item in items {
        for key in ["id", "thread_id"] {
            if let Some(id) = item[key].as_str() {
                ids.push(id.to_owned());
            }
        }
    }
    assert!(ids.len() > 5, "{name}: {ids:?}");
    ids
}

/// What is wrong with `text` as something shown to a person, if anything.
fn unspoken(text: &str, ids: &[String]) -> Option<String> {
    if let Some(id) = ids.iter().find(|id| text.contains(id.as_str())) {
        return Some(format!("the id {id}"));
    }
    // Every kind but `busy`, an ordinary word ("While you were busy"), is snake_case.
    if let Some(kind) = aura_protocol::ERROR_KINDS
        .iter()
        .filter(|kind| kind.contains('_'))
        .find(|kind| text.contains(*kind))
    {
        return Some(format!("the error kind {kind}"));
    }
    if text.contains('→') || text.contains("call chain") {
        return Some("a call chain".to_owned());
    }
    let raw = raw_numbers(text);
    (!raw.is_empty()).then(|| format!("the raw numbers {raw:?}"))
}

fn hh_mm(trace: &Value) -> &str {
    &trace["at"].as_str().unwrap()[11..16]
}

/// The checks every day must pass, whatever it holds.
fn told_in_words_once_per_surface_and_tick(name: &str, traces: &[Value]) {
    let ids = ids_of(name);
    let mut per_tick: BTreeMap<(u64, String), usize> = BTreeMap::new();
    for trace in traces {
        let surface = trace["surface"].as_str().unwrap();
        let text = trace["outcome"]["summary"].as_str().unwrap();
        if surface == "SILENT" {
            continue;
        }
        if let Some(wrong) = unspoken(text, &ids) {
            panic!("{name} {} {surface}: {wrong} in {text:?}", hh_mm(trace));
        }
        match surface {
            "EARBUD_TTS" => assert!(
                text.split_whitespace().count() <= SPEECH_WORDS_MAX,
                "{name}: {text:?}"
            ),
            "WATCH" => assert!(
                text.chars().count() <= WATCH_LINE_CHARS_MAX,
                "{name}: {text:?}"
            ),
            _ => {}
        }
        *per_tick
            .entry((trace["tick"].as_u64().unwrap(), surface.to_owned()))
            .or_default() += 1;
    }
    for ((tick, surface), count) in per_tick {
        assert_eq!(
            count, 1,
            "{name}: {count} decisions on {surface} at tick {tick}"
        );
    }
}

/// The first decision on an interrupting surface whose signals name `item`: (time, surface).
fn first_told<'a>(traces: &'a [Value], item: &str) -> (&'a str, &'a str) {
    let trace = traces
        .iter()
        .filter(|t| t["surface"] != "SILENT")
        .find(|t| {
            t["signals"].as_array().unwrap().iter().any(|s| {
                s.as_str()
                    .unwrap()
                    .split([':', '/'])
                    .any(|part| part == item)
            })
        })
        .unwrap_or_else(|| panic!("{item} never reached the person"));
    (hh_mm(trace), trace["surface"].as_str().unwrap())
}

fn summary_at<'a>(traces: &'a [Value], at: &str, surface: &str) -> &'a str {
    traces
        .iter()
        .find(|t| hh_mm(t) == at && t["surface"] == surface)
        .unwrap_or_else(|| panic!("nothing on {surface} at {at}"))["outcome"]["summary"]
        .as_str()
        .unwrap()
}

#[tokio::test]
async fn the_day_is_told_in_words_once_per_surface_and_tick() {
    let traces = day_of("day", 7).await;
    told_in_words_once_per_surface_and_tick("day", &traces);
    // The briefing at 07:00, the end of quiet hours, on the phone: what the night kept back,
    // most important first (scenarios/README.md, the day's 06:30 and 07:00 rows): the 08:30
    // bridge Markus asked her to join (due within 90 minutes: 85), the double booking of the
    // afternoon (80), the bills due today and tomorrow (60), the dining budget at risk (35),
    // last night's sleep (30).
    let briefing = summary_at(&traces, "07:00", "PHONE_CARD");
    assert!(
        briefing.starts_with("Good morning: To do: I've opened a bridge at 8:30"),
        "{briefing}"
    );
    for told in [
        "Double-booked today 15:15: Interview: Tomás Ortega",
        "APPLE.COM/BILL 2.99 EUR due today",
        "Dining may go over budget",
        "You slept 5 h 52 min last night",
    ] {
        assert!(briefing.contains(told), "{told} not in {briefing}");
    }
    // The go/no-go confirmed at 12:02 gets its break (no cycle: nothing quarantined).
    assert_eq!(
        summary_at(&traces, "12:15", "PHONE_CARD"),
        "Added \"Ledger migration go/no-go\" tomorrow 10:00-11:00; then a 10-minute stretch \
         tomorrow at 11:00"
    );
    // Only what is unusual is flagged: the REWE double charge and the 649.00 EUR espresso
    // machine, nothing else of the day's spending.
    let flagged: std::collections::BTreeSet<&str> = traces
        .iter()
        .filter(|t| t["call"]["tool"] == "detect_anomalies")
        .flat_map(|t| t["signals"].as_array().unwrap())
        .map(|s| s.as_str().unwrap())
        .collect();
    assert_eq!(
        flagged.into_iter().collect::<Vec<_>>(),
        [
            "duplicate:tx-20261123-rewe-2",
            "unusually_large:tx-20261123-amazon"
        ]
    );
}

#[tokio::test]
async fn the_weekend_is_told_in_words_once_per_surface_and_tick() {
    let traces = day_of("weekend", 0).await;
    told_in_words_once_per_surface_and_tick("weekend", &traces);
    // Dana's 01:10 mail at the 01:30 tick, on the watch (the only surface at night); what the
    // night kept back (her "Can you call me?", recorded SILENT at 01:30) in the 08:00
    // briefing, the end of quiet hours.
    assert_eq!(
        first_told(&traces, "m-0110-dana-urgent"),
        ("01:30", "WATCH")
    );
    assert_eq!(
        summary_at(&traces, "08:00", "PHONE_CARD"),
        "Good morning: To do: Can you call me?"
    );
}

#[tokio::test]
async fn the_travel_day_is_told_in_words_once_per_surface_and_tick() {
    let traces = day_of("travel", 0).await;
    told_in_words_once_per_surface_and_tick("travel", &traces);
    // Priya's overnight burst (scenarios/README.md, travel): each urgent mail on the watch at
    // the first tick it may be: 23:20 → 23:30, 23:35 → 23:45, 23:50 → 00:00; the 00:05 one
    // finds the watch's hour full at 00:15 (three taps since 23:15) and goes to the watch at
    // 00:30, the first tick it is free.
    for (item, at) in [
        ("m-2320-priya", "23:30"),
        ("m-2335-priya", "23:45"),
        ("m-2350-priya", "00:00"),
        ("m-0005-priya", "00:30"),
    ] {
        assert_eq!(first_told(&traces, item), (at, "WATCH"), "{item}");
    }
    assert_eq!(
        summary_at(&traces, "00:30", "WATCH"),
        "Priya Raman: URGENT: call me when you land"
    );
    // The briefing at 07:00: what the night kept back, most important first: the rent and the
    // phone due Monday, in two days (35 each: they wait for a digest, not a card; the rent,
    // larger, leads), the bad night (30; 3 h 40 min, synced at 06:40), her request in
    // Priya's thread (25).
    let briefing = summary_at(&traces, "07:00", "PHONE_CARD");
    assert!(briefing.starts_with("Good morning: "), "{briefing}");
    assert_eq!(
        briefing,
        "Good morning: Wohnungsbau Mitte GmbH 950.00 EUR due Mon 30 Nov (and 1 more bill); You \
         slept 3 h 40 min last night; To do: Can you fix it before the board call?"
    );
    // The stress after the bad night, on the watch at 07:00, in words.
    assert_eq!(summary_at(&traces, "07:00", "WATCH"), "Your stress is high");
    // Ordinary meals are not unusual: the 3.90 EUR coffee at her cafe, the 38.50 EUR lunch at
    // a new place (within the 3.40-95.00 EUR she spends eating out), the 8.75 and 24.50 USD in
    // New York (no history in dollars: nothing to judge them by).
    assert!(
        !traces
            .iter()
            .any(|t| t["call"]["tool"] == "detect_anomalies" && t["surface"] != "SILENT"),
        "an ordinary spend was flagged"
    );
    // After landing (14:25 New York time) the day is told in New York time: the invitation
    // of 15:10 asked at 15:15, the yes of 15:40 run at 15:45, with the break after it in the
    // free hour after the meeting (no other event on Monday; calendar's default stress, 60:
    // a 10-minute stretch).
    assert_eq!(
        summary_at(&traces, "15:15", "PHONE_CARD"),
        "Add \"Q1 planning with Priya\" Mon 30 Nov 10:00-11:00? (yes / no)"
    );
    assert_eq!(
        summary_at(&traces, "15:45", "PHONE_CARD"),
        "Added \"Q1 planning with Priya\" Mon 30 Nov 10:00-11:00; then a 10-minute stretch \
         Mon 30 Nov at 11:00"
    );
    let confirmed = traces
        .iter()
        .find(|t| t["decision"] == "confirmed")
        .unwrap();
    assert_eq!(confirmed["at"], "2026-11-28T15:45:00-05:00");
}
