//! The model checked: the protocol holds, and without the fence it does not.

use std::time::Instant;

use stateright::{Checker, HasDiscoveries, Model};

use aura_contract::limits::MODEL_CHECK_STATES_MAX;

use super::{Action, Compaction, Fleet};

/// The catalogue's agents, and two more so that a chain can reach the depth bound.
const AGENTS: [&str; 6] = [
    "calendar", "comms", "finance", "wellness", "agent5", "agent6",
];

fn fleet() -> Fleet {
    Fleet {
        hosts: 2,
        signals: 2,
        revisions: 3,
        agents: &[],
        pauses: true,
        fencing: true,
        life_fencing: true,
        compaction: Compaction::Off,
    }
}

/// Checks `model` breadth first to the end (or, given `wanted`, until those properties
/// are found to fail), and says how much it explored.
fn check_until(name: &str, model: Fleet, wanted: Option<HasDiscoveries>) -> impl Checker<Fleet> {
    let started = Instant::now();
    let mut builder = model.checker().target_state_count(MODEL_CHECK_STATES_MAX);
    if let Some(wanted) = wanted {
        builder = builder.finish_when(wanted);
    }
    let checker = builder.spawn_bfs().join();
    eprintln!(
        "{name}: {} states ({} unique), depth {}, {:.1} s",
        checker.state_count(),
        checker.unique_state_count(),
        checker.max_depth(),
        started.elapsed().as_secs_f64()
    );
    assert!(
        checker.is_done() && checker.state_count() < MODEL_CHECK_STATES_MAX,
        "{name}: the search did not finish within {MODEL_CHECK_STATES_MAX} states"
    );
    checker
}

fn check(name: &str, model: Fleet) -> impl Checker<Fleet> {
    check_until(name, model, None)
}

#[test]
fn the_protocol_holds_through_crashes_expiries_and_pauses() {
    check("2 hosts, 2 signals, pauses", fleet()).assert_properties();
}

#[test]
fn the_protocol_holds_with_three_hosts_contending() {
    let model = Fleet {
        hosts: 3,
        ..fleet()
    };
    check("3 hosts, 2 signals, pauses", model).assert_properties();
}

#[test]
fn one_host_at_a_time_when_the_lease_timing_holds() {
    let model = Fleet {
        pauses: false,
        ..fleet()
    };
    let checker = check("2 hosts, no pauses", model);
    for property in checker.model().properties() {
        // Without pauses no holder is ever stale: nothing for the fence to refuse.
        if property.name.starts_with("a stale holder")
            || property.name.starts_with("a takeover refused")
        {
            assert!(
                checker.discovery(property.name).is_none(),
                "{}",
                property.name
            );
            continue;
        }
        match property.expectation {
            stateright::Expectation::Sometimes => {
                checker.assert_any_discovery(property.name);
            }
            _ => checker.assert_no_discovery(property.name),
        }
    }
}

#[test]
fn calls_stay_acyclic_and_bounded_on_the_hosts_own_check() {
    let model = Fleet {
        hosts: 1,
        signals: 0,
        revisions: 1,
        agents: &AGENTS,
        pauses: false,
        fencing: true,
        life_fencing: true,
        compaction: Compaction::Off,
    };
    let checker = check("calls over 6 agents", model);
    for name in [
        "no agent twice in a call stack",
        "call depth bounded",
        "pending calls bounded",
    ] {
        checker.assert_no_discovery(name);
    }
    // The deepest chain the check lets through is the bound: 5 distinct agents of 6.
    let deepest = (0..AGENTS.len() - 1)
        .map(|agent| Action::Call(0, agent))
        .collect::<Vec<_>>();
    let mut actions = vec![Action::Acquire(0), Action::Takeover(0), Action::Open(0)];
    actions.extend(deepest);
    let path = stateright::Path::from_actions(
        checker.model(),
        checker.model().init_states().remove(0),
        &actions,
    );
    assert!(path.is_some(), "a chain of 5 distinct agents is allowed");
    let mut too_deep = actions.clone();
    too_deep.push(Action::Call(0, AGENTS.len() - 1));
    assert!(
        stateright::Path::from_actions(
            checker.model(),
            checker.model().init_states().remove(0),
            &too_deep
        )
        .is_none(),
        "a sixth agent is refused"
    );
}

/// Checks `model` (a mutation) until every one of `wanted` is found to fail, and says after
/// which steps.
fn finds(name: &str, model: Fleet, wanted: &[&'static str]) {
    let until = HasDiscoveries::AllOf(wanted.iter().copied().collect());
    let checker = check_until(name, model, Some(until));
    for property in wanted {
        let found = checker.assert_any_discovery(property);
        eprintln!(
            "{name}: \"{property}\" fails after: {:?}",
            found.into_actions()
        );
    }
}

#[test]
fn without_the_fence_the_checker_finds_the_second_writer_and_the_double_delivery() {
    let model = Fleet {
        fencing: false,
        ..fleet()
    };
    finds(
        "2 hosts, fencing removed",
        model,
        &[
            "one writer at a time (no stale record after a takeover)",
            "no decision delivered twice or out of order",
        ],
    );
}

#[test]
fn without_the_lifes_fence_the_checker_finds_a_stale_signal_and_one_taken_twice() {
    let model = Fleet {
        life_fencing: false,
        ..fleet()
    };
    finds(
        "2 hosts, the life's fence removed",
        model,
        &[
            "one writer at a time in the life (no stale signal after an open)",
            "the life holds each signal once, in the inbox's order",
            "the newest opener applied every signal the life holds",
        ],
    );
}

#[test]
fn a_journal_purged_below_the_head_is_lived_from_it_and_loses_nothing() {
    // Two leases and no renewal: a purge's own actions (a head per decision, a purge that
    // outlives its host) take the search past its bound with a third revision.
    let model = Fleet {
        compaction: Compaction::Compacted,
        revisions: 2,
        ..fleet()
    };
    let checker = check(
        "2 hosts, 2 signals, 2 leases, pauses, purged below the head",
        model,
    );
    checker.assert_properties();
    checker.assert_any_discovery("a holder started from a purged journal");
}

#[test]
fn a_head_that_moves_back_or_a_purge_of_undelivered_decisions_is_found() {
    for (mutation, wanted) in [
        (
            Compaction::HeadBack,
            "a purged journal is rebuilt from its head",
        ),
        (
            Compaction::PurgeUndelivered,
            "no decision purged before it was delivered",
        ),
    ] {
        let model = Fleet {
            compaction: mutation,
            ..fleet()
        };
        let until = HasDiscoveries::AnyOf([wanted].into_iter().collect());
        let name = format!("2 hosts, {mutation:?}");
        let checker = check_until(&name, model, Some(until));
        let found = checker.assert_any_discovery(wanted);
        eprintln!(
            "{mutation:?}: \"{wanted}\" fails after: {:?}",
            found.into_actions()
        );
    }
}
