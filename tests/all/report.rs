//! `aura report`, checked the way a user sees it: the day is run and reported by the real
//! binary, and the page is loaded in a real headless browser (the machine's chromium, or the
//! pinned `@sparticuz/chromium` build the suite fetches into target/, driven by playwright-core
//! from tests/browser, pinned), from file:// with the network off.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::support::{quarantine_lines, shared_cache_dir, temp_dir};

const AURA: &str = env!("CARGO_BIN_EXE_aura");

fn aura(data: &Path, args: &[&str]) -> std::process::Output {
    let output = Command::new(AURA)
        .arg("--data-dir")
        .arg(data)
        .arg("--cache-dir")
        .arg(shared_cache_dir())
        .args(args)
        .output()
        .unwrap();
    assert!(output.status.success(), "aura {args:?}: {output:?}");
    output
}

#[test]
fn the_days_report_loads_cleanly_with_one_mark_per_decision() {
    let browser = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/browser");
    let tool = crate::tools::browser(&browser);
    let data = temp_dir("report-day");
    let day = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/day.json");
    // The day with a neighbour that proposes other agents' tools every tick (foreigntick, as
    // wellness): the day's own agents quarantine nothing, and the page's quarantine table
    // needs records to show.
    let plugins = crate::support::day_with_a_hostile_neighbour("report-day");
    aura(
        &data,
        &[
            "--plugins-dir",
            plugins.to_str().unwrap(),
            "run",
            day.to_str().unwrap(),
            "--seed",
            "7",
            "--json",
        ],
    );
    let page = data.join("day.html");
    let said = aura(
        &data,
        &[
            "report",
            data.to_str().unwrap(),
            "--out",
            page.to_str().unwrap(),
        ],
    );
    let traces: Vec<Value> = std::fs::read_to_string(data.join(aura_host::journal::TRACES_PATH))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let quarantine = quarantine_lines(&data);
    assert_eq!(
        String::from_utf8(said.stdout).unwrap().trim(),
        format!(
            "aura: {} decision(s), {} quarantine record(s) -> {}",
            traces.len(),
            quarantine.len(),
            page.display()
        )
    );

    // The screenshot is kept under target/ (a CI artifact).
    let shots: PathBuf = Path::new(env!("CARGO_TARGET_TMPDIR")).join("report");
    std::fs::create_dir_all(&shots).unwrap();
    let shot = shots.join("day.png");
    let mut node = Command::new(&tool.node);
    node.arg(browser.join("report.mjs")).arg(&page).arg(&shot);
    if let Some(chromium) = &tool.chromium {
        node.arg(chromium);
    }
    let output = node
        .env("TMPDIR", crate::tools::browser_tmp())
        .output()
        .expect("node runs the browser check");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let seen: Value = serde_json::from_slice(&output.stdout).unwrap();

    assert_eq!(
        seen["errors"],
        serde_json::json!([]),
        "console or page errors"
    );
    assert_eq!(
        seen["requests"],
        serde_json::json!([]),
        "the page asked the network"
    );
    assert_eq!(seen["title"], "aura: a picture of the run");
    // One mark per decision, in the order of traces.jsonl, each in its surface's lane.
    let ids: Vec<&str> = traces
        .iter()
        .map(|t| t["trace_id"].as_str().unwrap())
        .collect();
    let marks: Vec<&str> = seen["marks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap())
        .collect();
    let lane = |surface: &str| traces.iter().filter(|t| t["surface"] == surface).count();
    // Marks are laid out lane by lane: WATCH first, then PHONE_CARD, EARBUD_TTS, SILENT.
    let mut by_lane = ids.clone();
    let order = ["WATCH", "PHONE_CARD", "EARBUD_TTS", "SILENT"];
    by_lane.sort_by_key(|id| {
        let t = traces.iter().find(|t| t["trace_id"] == *id).unwrap();
        order.iter().position(|s| t["surface"] == *s).unwrap()
    });
    assert_eq!(marks, by_lane);
    for surface in order {
        assert_eq!(seen["lanes"][surface], lane(surface), "{surface}");
    }
    // A click shows the whole decision: the first mark is the first WATCH decision.
    let first_watch = traces.iter().find(|t| t["surface"] == "WATCH").unwrap();
    let clicked = seen["clicked"].as_str().unwrap();
    assert!(
        clicked.contains(first_watch["outcome"]["summary"].as_str().unwrap())
            && clicked.contains(first_watch["rationale"].as_str().unwrap()),
        "{clicked}"
    );
    // The neighbour's refusals, one row each, and a fuel bar per tick.
    assert!(!quarantine.is_empty());
    let rows = seen["quarantine_rows"].as_array().unwrap();
    assert_eq!(rows.len(), quarantine.len());
    let kind = quarantine[0]["kind"].as_str().unwrap();
    assert!(rows[0].as_str().unwrap().starts_with(kind), "{rows:?}");
    let ticks = traces.last().unwrap()["tick"].as_u64().unwrap() + 1;
    assert_eq!(seen["fuel_bars"], ticks);
    assert!(
        std::fs::metadata(&shot).unwrap().len() > 10_000,
        "a screenshot with content"
    );
}
