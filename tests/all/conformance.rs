//! `aura test-agent`, run as an author runs it (the binary, on a component file): every shipped
//! agent passes every check against the reference answers kept with the schemas, and broken
//! components fail with the reason that is theirs: a manifest claiming a tool the catalogue
//! does not have, results the schema refuses, a file over its agent's size bound, an agent the
//! catalogue does not know. The Python wellness and a broken one are in `python.rs`.

use std::path::Path;
use std::process::Command;

use aura_contract::catalogue;
use aura_host::conformance::{tick_examples, tool_examples};

use crate::support::{guest_path, plugins_dir, shared_cache_dir, temp_dir};

/// Exit status of `aura test-agent` when a check failed.
const EXIT_NOT_CONFORMANT: i32 = 5;

/// `aura test-agent <component> --as <agent>` against the built plugins dir: its exit code and
/// its report.
pub(crate) fn test_agent(name: &str, component: &Path, agent: &str) -> (i32, String) {
    let data = temp_dir(&format!("test-agent-{name}"));
    let output = Command::new(env!("CARGO_BIN_EXE_aura"))
        .arg("--data-dir")
        .arg(&data)
        .arg("--plugins-dir")
        .arg(plugins_dir())
        .arg("--cache-dir")
        .arg(shared_cache_dir())
        .arg("test-agent")
        .arg(component)
        .args(["--as", agent])
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr);
    (
        output.status.code().unwrap_or(-1),
        format!("{report}{stderr}"),
    )
}

/// How many checks `aura test-agent` runs on `agent`: size, load, one per args example, one per
/// tick example.
pub(crate) fn checks_of(agent: &str) -> usize {
    let spec = catalogue::agent(agent).unwrap();
    let examples: usize = spec
        .tools
        .iter()
        .map(|tool| tool_examples(spec, tool).unwrap().len())
        .sum();
    2 + examples + tick_examples(spec).unwrap().len()
}

#[test]
fn every_shipped_agent_passes_every_check() {
    for agent in ["calendar", "wellness", "finance", "comms"] {
        let component = plugins_dir().join(format!("{agent}.wasm"));
        let (code, report) = test_agent(&format!("shipped-{agent}"), &component, agent);
        assert_eq!(code, 0, "{report}");
        let checks = checks_of(agent);
        assert!(checks >= 7, "{agent}: {checks}");
        assert_eq!(
            report.lines().filter(|l| l.starts_with("  ok  ")).count(),
            checks,
            "{report}"
        );
        assert!(
            report.contains(&format!("conformant: {checks} passed, 0 failed, 0 skipped")),
            "{report}"
        );
        // Each tool example met its reference answer; each tick its reference proposals.
        for tool in catalogue::agent(agent).unwrap().tools {
            assert!(
                report.contains(&format!(
                    "  ok    {} example 1: the reference answer (fuel ",
                    tool.name
                )),
                "{report}"
            );
        }
        assert!(report.contains("  ok    tick example 1: "), "{report}");
    }
}

/// The zoo's `overclaim` claims calendar's tools plus `transfer_money`: refused at load, every
/// later check skipped, not run.
#[test]
fn a_manifest_claiming_a_tool_outside_the_catalogue_fails_at_load() {
    let (code, report) = test_agent("overclaim", &guest_path("overclaim"), "calendar");
    assert_eq!(code, EXIT_NOT_CONFORMANT, "{report}");
    assert!(
        report.contains(
            "  FAIL  load: plugin `calendar` does not match the catalogue: name `calendar`, \
             tools not in the catalogue [\"transfer_money\"], catalogue tools missing []"
        ),
        "{report}"
    );
    let skipped = checks_of("calendar") - 2;
    assert_eq!(
        report.lines().filter(|l| l.starts_with("  skip  ")).count(),
        skipped,
        "{report}"
    );
    assert!(
        report.contains(&format!(
            "NOT CONFORMANT: 1 passed, 1 failed, {skipped} skipped"
        )),
        "{report}"
    );
}

/// The zoo's `badresult` answers every call with the same detect_conflicts-like result whose
/// `overlaps` is a string: each tool's answer is refused by the result schema, at the member
/// that is wrong.
#[test]
fn results_the_schema_refuses_fail_each_example_at_their_member() {
    let (code, report) = test_agent("badresult", &guest_path("badresult"), "calendar");
    assert_eq!(code, EXIT_NOT_CONFORMANT, "{report}");
    assert!(
        report.contains(
            "  FAIL  detect_conflicts example 1: refused by the crossing: result: \
             /result/overlaps fails https://aura.local/schemas/calendar/detect_conflicts.result.json \
             (/properties/overlaps/type): \"none\" is not of type \"array\""
        ),
        "{report}"
    );
    assert!(
        report.contains(
            "  FAIL  find_free_slots example 1: refused by the crossing: result: /result fails \
             https://aura.local/schemas/calendar/find_free_slots.result.json (/required): \
             \"slots\" is a required property"
        ),
        "{report}"
    );
    // Its tick proposes nothing, so the clash of tick example 1 is missed.
    assert!(
        report.contains(
            "  FAIL  tick example 1: proposed []; the reference proposes [\"detect_conflicts\"]"
        ),
        "{report}"
    );
}

/// A file one byte over calendar's bound is not loaded at all; an agent the catalogue does not
/// have is not a report but an error.
#[test]
fn an_oversized_component_and_an_unknown_agent_are_refused() {
    let dir = temp_dir("test-agent-files");
    let big = dir.join("big.wasm");
    let bound = catalogue::agent("calendar").unwrap().component_bytes_max;
    std::fs::write(&big, vec![0u8; bound as usize + 1]).unwrap();
    let (code, report) = test_agent("big", &big, "calendar");
    assert_eq!(code, EXIT_NOT_CONFORMANT, "{report}");
    assert!(
        report.contains(&format!(
            "  FAIL  size: the component is more than {bound} bytes, the most the catalogue lets calendar be"
        )),
        "{report}"
    );
    assert!(
        report.contains("NOT CONFORMANT: 0 passed, 1 failed"),
        "{report}"
    );

    let (code, report) = test_agent("unknown", &plugins_dir().join("finance.wasm"), "bank");
    assert_eq!(code, 1, "{report}");
    assert!(
        report.contains(
            "aura: `bank` is not a catalogue agent (the catalogue has calendar, wellness, finance, comms)"
        ),
        "{report}"
    );
}
