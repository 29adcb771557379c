//! Starting fast without changing an answer: the compilation cache (a warm start maps what a
//! cold one compiled; a tampered entry, code from other engine settings and processes filling
//! the cache at once all end in the right result) and agents loaded on first use (only what a
//! call can reach, the same results, traces and refusals as loading all at once).

use std::path::Path;
use std::process::{Command, Stdio};

use aura_host::{Host, Loading};
use aura_plugins::code_cache::CodeCache;
use aura_sandbox::{CodeTarget, EngineTuning, Sandbox};
use serde_json::{Value, json};

use crate::orchestrator::{run_configured, scenario_path};
use crate::support::{call_tool, config, guest_path, plugins_dir, plugins_dir_with, temp_dir};

/// A config over the built plugins with the cache at `cache` (not the tests' shared one).
fn config_over(cache: &Path, name: &str) -> aura_host::HostConfig {
    let mut config = config(plugins_dir(), temp_dir(&format!("data-{name}")));
    config.cache_dir = Some(cache.to_owned());
    config
}

/// A host over the built plugins with the cache at `cache`, loading as `loading` says.
async fn host_caching(name: &str, cache: &Path, loading: Loading) -> Host {
    let mut config = config_over(cache, name);
    config.loading = loading;
    Host::open(&config).await.unwrap()
}

/// One call of each agent's, and wellness.suggest_break, which calls calendar in turn; each
/// answer as (result, fuel used).
async fn answers(host: &Host) -> Vec<(Value, u64)> {
    let calls = [
        ("calendar", "detect_conflicts", json!({"events": []})),
        (
            "comms",
            "triage_inbox",
            json!({"messages": [], "now": "2026-11-23T10:00:00Z"}),
        ),
        ("comms", "extract_action_items", json!({"thread": []})),
        (
            "wellness",
            "stress_score",
            json!({"readings": {"hrv_ms": 42},
                   "baselines": {"hrv_ms": 60, "resting_hr_bpm": 58, "sleep_minutes": 450}}),
        ),
        (
            "wellness",
            "suggest_break",
            json!({"stress": {"score": 72}, "busy": [],
                   "working_hours": {"start": "09:00", "end": "17:00"},
                   "now": "2026-11-23T10:15:00+01:00", "utc_offset_minutes": 60}),
        ),
    ];
    let mut answers = Vec::new();
    for (i, (agent, tool, args)) in calls.into_iter().enumerate() {
        let result = call_tool(host, agent, &format!("t_start{i:05}"), tool, args).await;
        assert!(result.ok, "{agent}.{tool}: {:?}", result.error);
        answers.push((result.result.unwrap(), result.fuel_used));
    }
    answers
}

/// Each entry of the cache at `dir`: (file name, whether its bytes hash to its name).
fn entries(dir: &Path) -> Vec<(String, bool)> {
    let mut entries: Vec<(String, bool)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".cwasm"))
        .map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let digest = aura_contract::digest::sha256_hex(&std::fs::read(e.path()).unwrap());
            let whole = name.ends_with(&format!("-{digest}.cwasm"));
            (name, whole)
        })
        .collect();
    entries.sort();
    entries
}

#[tokio::test]
async fn a_warm_start_maps_what_a_cold_one_compiled_and_answers_the_same() {
    let cache = temp_dir("cache-warm").join("cache");
    let cold = host_caching("cache-cold", &cache, Loading::Eager).await;
    let cold_answers = answers(&cold).await;
    let stored = entries(&cache);
    assert_eq!(stored.len(), 4, "one entry per agent: {stored:?}");
    assert!(stored.iter().all(|(_, whole)| *whole), "{stored:?}");

    let warm = host_caching("cache-warm", &cache, Loading::Eager).await;
    assert_eq!(answers(&warm).await, cold_answers);
    assert_eq!(entries(&cache), stored, "a warm start writes nothing");
    // And both agree with a host that compiles without a cache at all.
    let mut config = config_over(&cache, "cache-none");
    config.cache_dir = None;
    let uncached = Host::open(&config).await.unwrap();
    assert_eq!(answers(&uncached).await, cold_answers);
}

#[tokio::test]
async fn a_tampered_cache_entry_is_refused_and_compiled_again() {
    let cache = temp_dir("cache-tampered").join("cache");
    let reference = answers(&host_caching("cache-tampered-1", &cache, Loading::Eager).await).await;
    // Flip one byte in the middle of every entry: machine code that would run if the host
    // trusted the file.
    for (name, _) in entries(&cache) {
        let path = cache.join(&name);
        let mut bytes = std::fs::read(&path).unwrap();
        let middle = bytes.len() / 2;
        bytes[middle] ^= 0x01;
        std::fs::write(&path, &bytes).unwrap();
    }
    let host = host_caching("cache-tampered-2", &cache, Loading::Eager).await;
    assert!(host.load_failures().is_empty());
    assert_eq!(answers(&host).await, reference);
    // The tampered files are gone, replaced by whole entries of the same names.
    let after = entries(&cache);
    assert_eq!(after.len(), 4);
    assert!(after.iter().all(|(_, whole)| *whole), "{after:?}");
}

#[tokio::test]
async fn code_from_other_engine_settings_is_never_run() {
    // Other settings have other keys: fuel metering off, or Pulley instead of native code.
    let sha = aura_contract::digest::sha256_hex(
        &std::fs::read(plugins_dir().join("calendar.wasm")).unwrap(),
    );
    let native = Sandbox::new(0, &CodeTarget::Native).unwrap();
    let no_fuel = EngineTuning {
        fuel_metering: false,
        ..EngineTuning::default()
    };
    let unmetered = Sandbox::tuned(0, &CodeTarget::Native, no_fuel).unwrap();
    let pulley = Sandbox::new(0, &CodeTarget::Pulley).unwrap();
    let key = native.code_key(&sha);
    assert_eq!(
        key,
        Sandbox::new(7, &CodeTarget::Native).unwrap().code_key(&sha)
    );
    assert_ne!(key, unmetered.code_key(&sha));
    assert_ne!(key, pulley.code_key(&sha));
    assert_ne!(key, native.code_key(&"0".repeat(64)));

    // Code without fuel checks stored under this engine's own key, with a digest that matches
    // its name: only wasmtime's header check is left, and it must refuse it.
    let cache_dir = temp_dir("cache-settings").join("cache");
    let cache = CodeCache::open(&cache_dir).unwrap();
    let mut config = aura_sandbox::engine_config();
    config.consume_fuel(false);
    let wasm = std::fs::read(plugins_dir().join("calendar.wasm")).unwrap();
    let foreign = wasmtime::Engine::new(&config)
        .unwrap()
        .precompile_component(&wasm)
        .unwrap();
    let planted = cache.store(&key, &foreign).unwrap();

    let mut config = config_over(&cache_dir, "cache-settings");
    config.agents = Some(vec!["calendar".into()]);
    let host = Host::open(&config).await.unwrap();
    let result = call_tool(
        &host,
        "calendar",
        "t_settings01",
        "detect_conflicts",
        json!({"events": []}),
    )
    .await;
    assert!(result.ok);
    assert!(result.fuel_used > 0, "the code that ran counts fuel");
    assert!(!planted.exists(), "the foreign entry was removed");
    let after = entries(&cache_dir);
    assert_eq!(after.len(), 1);
    assert!(after[0].0.starts_with(&key) && after[0].1, "{after:?}");
}

#[test]
fn two_processes_filling_one_cache_at_once_both_answer_and_leave_whole_entries() {
    let cache = temp_dir("cache-race").join("cache");
    let call = |data: &Path| {
        Command::new(env!("CARGO_BIN_EXE_aura"))
            .args(["call", "wellness", "suggest_break"])
            .arg(
                json!({"stress": {"score": 72}, "busy": [],
                       "working_hours": {"start": "09:00", "end": "17:00"},
                       "now": "2026-11-23T10:15:00+01:00", "utc_offset_minutes": 60})
                .to_string(),
            )
            .env("AURA_DATA_DIR", data)
            .env("AURA_CACHE_DIR", &cache)
            .env_remove("AURA_PLUGINS_DIR")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let result_of = |output: std::process::Output| -> (Value, Value) {
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let result: Value = serde_json::from_slice(&output.stdout).unwrap();
        (result["result"].clone(), result["fuel_used"].clone())
    };
    let first = call(&temp_dir("data-race-1"));
    let second = call(&temp_dir("data-race-2"));
    let first = result_of(first.wait_with_output().unwrap());
    let second = result_of(second.wait_with_output().unwrap());
    assert_eq!(first, second);
    assert_eq!(first.0["status"], "suggested", "{first:?}");
    // suggest_break reaches wellness and, through it, calendar: two entries, both whole.
    let stored = entries(&cache);
    assert_eq!(stored.len(), 2, "{stored:?}");
    assert!(stored.iter().all(|(_, whole)| *whole), "{stored:?}");
    // A third process finds them and answers the same.
    let third = result_of(call(&temp_dir("data-race-3")).wait_with_output().unwrap());
    assert_eq!(third, first);
    assert_eq!(entries(&cache), stored);
}

#[tokio::test]
async fn on_first_use_a_call_loads_only_the_agents_it_can_reach() {
    let cache = crate::support::shared_cache_dir();
    let lazy = host_caching("lazy-reach", &cache, Loading::OnFirstUse).await;
    assert!(lazy.loaded_agents().is_empty());
    // Catalogue order.
    assert_eq!(lazy.agents(), ["calendar", "wellness", "finance", "comms"]);
    call_tool(
        &lazy,
        "comms",
        "t_lazy000001",
        "extract_action_items",
        json!({"thread": []}),
    )
    .await;
    assert_eq!(lazy.loaded_agents(), ["comms"]);
    // calendar may call wellness: both are loaded before the call starts.
    call_tool(
        &lazy,
        "calendar",
        "t_lazy000002",
        "detect_conflicts",
        json!({"events": []}),
    )
    .await;
    assert_eq!(lazy.loaded_agents(), ["calendar", "wellness", "comms"]);

    let eager = host_caching("lazy-eager", &cache, Loading::Eager).await;
    assert_eq!(
        eager.loaded_agents(),
        ["calendar", "wellness", "finance", "comms"]
    );
    let lazy = host_caching("lazy-answers", &cache, Loading::OnFirstUse).await;
    assert_eq!(answers(&lazy).await, answers(&eager).await);
    assert_eq!(lazy.loaded_agents(), ["calendar", "wellness", "comms"]);
}

#[tokio::test]
async fn on_first_use_a_refused_plugin_is_refused_as_it_is_at_open() {
    // A plugin claiming a tool outside the catalogue, served as calendar.
    let dir = plugins_dir_with("lazy-overclaim", "calendar", &guest_path("overclaim"));
    let open = |name: &str, loading| {
        let mut config = config(&dir, temp_dir(&format!("data-{name}")));
        config.loading = loading;
        async move { Host::open(&config).await.unwrap() }
    };
    let eager = open("lazy-refused-eager", Loading::Eager).await;
    let lazy = open("lazy-refused-lazy", Loading::OnFirstUse).await;
    assert_eq!(eager.load_failures().len(), 1);
    assert!(lazy.load_failures().is_empty(), "nothing was tried yet");
    let call = crate::support::envelope(
        "t_lazyrefuse",
        "calendar",
        "detect_conflicts",
        json!({"events": []}),
    )
    .to_string();
    let eager_refusal = eager.dispatch(&call).await.unwrap_err();
    let lazy_refusal = lazy.dispatch(&call).await.unwrap_err();
    assert_eq!(eager_refusal.error.kind(), "agent_unavailable");
    assert_eq!(
        lazy_refusal.error.to_string(),
        eager_refusal.error.to_string()
    );
    assert_eq!(
        lazy.load_failures()[0].to_string(),
        eager.load_failures()[0].to_string()
    );
    assert!(lazy.agents().is_empty());
    // A run admits every agent before its first tick, so it ticks exactly what an eager host
    // would: the refused plugin never.
    let run = open("lazy-refused-run", Loading::OnFirstUse).await;
    assert_eq!(run.agents(), ["calendar"], "not tried yet");
    run.admit_all().await;
    assert!(run.agents().is_empty());
    assert_eq!(
        run.load_failures()[0].to_string(),
        eager.load_failures()[0].to_string()
    );
}

#[tokio::test]
async fn a_day_loaded_on_first_use_writes_the_same_traces() {
    let short = scenario_path("short");
    let (_, eager, _) = run_configured("lazy-day-eager", &plugins_dir(), &short, 3, |_| {}).await;
    let (summary, lazy, _) = run_configured("lazy-day-lazy", &plugins_dir(), &short, 3, |c| {
        c.loading = Loading::OnFirstUse
    })
    .await;
    assert!(summary.decisions > 0);
    assert_eq!(lazy, eager);
}

#[tokio::test]
async fn precompiled_code_is_mapped_on_first_use_with_the_same_answers() {
    let dir = crate::precompiled::compiled("lazy-cwasm", &CodeTarget::Native);
    let mut config = config(&dir, temp_dir("data-lazy-cwasm"));
    config.loading = Loading::OnFirstUse;
    let mapped = Host::open(&config).await.unwrap();
    let eager = host_caching(
        "lazy-cwasm-jit",
        &crate::support::shared_cache_dir(),
        Loading::Eager,
    )
    .await;
    assert_eq!(answers(&mapped).await, answers(&eager).await);
    assert_eq!(mapped.loaded_agents(), ["calendar", "wellness", "comms"]);
}

#[cfg(unix)]
#[tokio::test]
async fn a_cache_dir_everyone_can_write_is_not_used_and_the_host_still_answers() {
    use std::os::unix::fs::PermissionsExt;
    let cache = temp_dir("cache-open-to-all");
    std::fs::set_permissions(&cache, std::fs::Permissions::from_mode(0o777)).unwrap();
    let mut config = config_over(&cache, "cache-open-to-all");
    config.agents = Some(vec!["comms".into()]);
    let host = Host::open(&config).await.unwrap();
    let result = call_tool(
        &host,
        "comms",
        "t_opencache1",
        "extract_action_items",
        json!({"thread": []}),
    )
    .await;
    assert_eq!(
        result.result.unwrap(),
        json!({"items": [], "truncated": false})
    );
    assert!(entries(&cache).is_empty(), "nothing was written to it");
}
