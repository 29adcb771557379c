//! Agent-to-agent calls through the real host, with test guests that pose as calendar and
//! wellness (tests/guests/relay, boomerang, spinner), making only the calls the catalogue lets
//! them make: a cycle is refused at once and quarantined, a callee's fuel is charged to its
//! caller so a whole call tree fits in the root's budget, and every nested call gets the id the
//! host derives for it, whatever id the guest wrote.
//! The depth bound (a sixth agent in a chain) cannot be reached through the four-agent
//! catalogue without a cycle; `crossing::check_chain`'s unit tests cover it.

use aura_contract::envelope::nested_call_id;
use aura_contract::limits::FUEL_PER_MS_DEFAULT;
use serde_json::json;

use crate::support::{envelope, guest_path, host_over, plugins_dir_of, quarantine_lines};

#[tokio::test]
async fn a_to_b_to_a_is_refused_at_once_and_quarantined() {
    let plugins = plugins_dir_of(
        "a2a-cycle",
        &[
            ("calendar", guest_path("relay")),
            ("wellness", guest_path("boomerang")),
        ],
    );
    let (host, data) = host_over("a2a-cycle", &plugins).await;
    let call = envelope(
        "t_cycleroot1",
        "calendar",
        "detect_conflicts",
        json!({"events": []}),
    );
    let started = std::time::Instant::now();
    let result = host.dispatch(&call.to_string()).await.unwrap();
    // calendar (relay) → wellness (boomerang) → calendar: refused before anything runs. Each
    // guest answers with a tool error saying how its callee answered (zoo::call_and_report).
    let error = result.error.expect("the relay reports a tool error");
    assert_eq!(error.kind, "tool_failed");
    assert_eq!(
        error.message,
        "callee wellness answered tool_failed: callee calendar answered cycle_detected: \
         agent `wellness` called `calendar`, already in the call chain calendar → wellness"
    );
    // No hang: far less than any deadline (a loose bound; the point is that it returns).
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    let lines = quarantine_lines(&data);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert_eq!(lines[0]["kind"], "cycle_detected");
    assert_eq!(lines[0]["phase"], "envelope");
    // The host named both nested calls: the relay's first host call under the root, then the
    // boomerang's first under that; the id the boomerang wrote (t_boomerang1) is not used.
    let relays = nested_call_id(Some("t_cycleroot1"), "calendar", 1);
    let boomerangs = nested_call_id(Some(&relays), "wellness", 1);
    assert_eq!(lines[0]["call_id"], boomerangs.as_str());
    assert_ne!(lines[0]["call_id"], "t_boomerang1");
    assert_eq!(lines[0]["agent"], "calendar");
    assert_eq!(lines[0]["callers"], json!(["calendar", "wellness"]));
    assert_eq!(lines[0]["fuel_used"], 0);
}

#[tokio::test]
async fn a_callee_burns_the_callers_budget_not_its_own() {
    let plugins = plugins_dir_of(
        "a2a-fuel",
        &[
            ("calendar", guest_path("relay")),
            ("wellness", guest_path("spinner")),
        ],
    );
    let (host, data) = host_over("a2a-fuel", &plugins).await;
    let mut call = envelope(
        "t_fuelroot01",
        "calendar",
        "detect_conflicts",
        json!({"events": []}),
    );
    // The root has 200 ms; the relay asks 10,000 ms for its callee, which is capped at what
    // the relay has left. The callee spins through all of it; charged to the relay, that
    // leaves the relay nothing, and its next fuel check ends it.
    call["deadline_ms"] = json!(200);
    let refused = host.dispatch(&call.to_string()).await.unwrap_err();
    let budget = 200 * FUEL_PER_MS_DEFAULT;
    assert_eq!(refused.error.kind(), "deadline_exceeded");
    assert_eq!(
        refused.error.fuel_used(),
        budget,
        "the tree used exactly the root's budget"
    );
    let lines = quarantine_lines(&data);
    assert_eq!(lines.len(), 2, "{lines:?}");
    // First the callee, out of fuel after less than the root's budget (the relay ran first).
    assert_eq!(lines[0]["agent"], "wellness");
    assert_eq!(
        lines[0]["call_id"],
        nested_call_id(Some("t_fuelroot01"), "calendar", 1).as_str()
    );
    assert_eq!(lines[0]["kind"], "deadline_exceeded");
    assert_eq!(lines[0]["callers"], json!(["calendar"]));
    let callee_fuel = lines[0]["fuel_used"].as_u64().unwrap();
    assert!(callee_fuel > 0 && callee_fuel < budget, "{callee_fuel}");
    // Then the root, with the whole budget.
    assert_eq!(lines[1]["agent"], "calendar");
    assert_eq!(lines[1]["call_id"], "t_fuelroot01");
    assert_eq!(lines[1]["fuel_used"], budget);
    assert_eq!(lines[1]["callers"], json!([]), "a root call has no callers");
}
