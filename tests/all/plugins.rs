//! Loading plugins: the digest check, and admission against the catalogue.

use aura_host::Host;
use aura_host::LoadError;
use aura_plugins::PluginError;

use crate::support::{guest_path, plugins_dir, plugins_dir_with, temp_dir};

#[tokio::test]
async fn a_component_whose_digest_differs_from_the_manifest_is_refused() {
    let calendar = plugins_dir().join("calendar.wasm");
    let dir = plugins_dir_with("tampered", "calendar", &calendar);
    // Flip one byte of the component after the manifest recorded its digest.
    let path = dir.join("calendar.wasm");
    let mut bytes = std::fs::read(&path).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0x01;
    std::fs::write(&path, &bytes).unwrap();

    let mut config = crate::support::config(&dir, temp_dir("data-tampered"));
    config.agents = Some(vec!["calendar".into()]);
    match Host::open(&config).await {
        Err(LoadError::Plugin(PluginError::DigestMismatch {
            agent,
            expected,
            actual,
        })) => {
            assert_eq!(agent, "calendar");
            assert_ne!(expected, actual);
            assert_eq!(actual, aura_contract::digest::sha256_hex(&bytes));
        }
        other => panic!("expected DigestMismatch, got {other:?}"),
    }
}

#[tokio::test]
async fn a_plugin_claiming_a_tool_outside_the_catalogue_is_refused() {
    let dir = plugins_dir_with("overclaim", "calendar", &guest_path("overclaim"));
    let mut config = crate::support::config(&dir, temp_dir("data-overclaim"));
    config.agents = Some(vec!["calendar".into()]);
    match Host::open(&config).await {
        Err(LoadError::ManifestMismatch {
            agent,
            name,
            extra,
            missing,
        }) => {
            assert_eq!(agent, "calendar");
            assert_eq!(name, "calendar");
            assert_eq!(extra, vec!["transfer_money".to_owned()]);
            assert!(missing.is_empty());
        }
        other => panic!("expected ManifestMismatch, got {other:?}"),
    }
    // Loading everything instead: the host starts, without the refused plugin.
    let host = Host::open(&crate::support::config(
        &dir,
        temp_dir("data-overclaim-all"),
    ))
    .await
    .unwrap();
    assert_eq!(host.load_failures().len(), 1);
    let call = crate::support::envelope(
        "t_refused001",
        "calendar",
        "detect_conflicts",
        serde_json::json!({ "events": [] }),
    );
    let refused = host.dispatch(&call.to_string()).await.unwrap_err();
    assert_eq!(refused.error.kind(), "agent_unavailable");
}

#[tokio::test]
async fn a_component_loaded_as_another_agent_is_refused() {
    // The calendar component under finance's name: its manifest says "calendar".
    let dir = plugins_dir_with("renamed", "finance", &plugins_dir().join("calendar.wasm"));
    let host = Host::open(&crate::support::config(&dir, temp_dir("data-renamed")))
        .await
        .unwrap();
    let failures = host.load_failures();
    match &failures.iter().map(|f| &**f).collect::<Vec<_>>()[..] {
        [
            LoadError::ManifestMismatch {
                agent,
                name,
                extra,
                missing,
            },
        ] => {
            assert_eq!((agent.as_str(), name.as_str()), ("finance", "calendar"));
            assert_eq!(
                extra,
                &["detect_conflicts", "find_free_slots", "schedule_event"]
            );
            assert_eq!(
                missing,
                &[
                    "budget_status",
                    "categorize_transactions",
                    "detect_anomalies",
                    "upcoming_bills"
                ]
            );
        }
        other => panic!("expected one ManifestMismatch, got {other:?}"),
    }
}

#[tokio::test]
async fn a_component_for_an_agent_outside_the_catalogue_is_refused() {
    let dir = plugins_dir_with("mallory", "mallory", &plugins_dir().join("calendar.wasm"));
    let host = Host::open(&crate::support::config(&dir, temp_dir("data-mallory")))
        .await
        .unwrap();
    let failures = host.load_failures();
    assert!(matches!(
        failures.iter().map(|f| &**f).collect::<Vec<_>>()[..],
        [LoadError::NotInCatalogue { agent }] if agent == "mallory"
    ));
}
