//! Agents in Python: the wellness agent of `agents-py/`, built by componentize-py (pinned,
//! installed from PyPI into a venv under target/ on first use, as the MCP tests install their
//! npm clients) into a component, and loaded as `wellness` beside the Rust calendar, comms and
//! finance. The very per-agent tests of `tests/all/wellness.rs` run against it (not a copy),
//! and the day through the orchestrator makes the Rust agent's decisions.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use aura_day::orchestrator::{self, Start};
use aura_day::scenario::Scenario;
use serde_json::Value;
use sha2::Digest;

use crate::support::{plugins_dir, plugins_dir_of};

/// The componentize-py the build uses (issue 21's pin).
const COMPONENTIZE_PY: &str = "componentize-py==0.25.1";

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every file under `dir` but Python's caches (`__pycache__`), sorted.
fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            if path.file_name().is_some_and(|n| n != "__pycache__") {
                files(&path, out);
            }
        } else {
            out.push(path);
        }
    }
    out.sort();
}

/// Every file of the Python agents' sources, sorted: what the component is built from.
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    files(dir, out);
    out.retain(|path| path.extension().is_some_and(|e| e == "py"));
}

/// The venv's componentize-py, installed on first use.
fn componentize_py() -> PathBuf {
    crate::tools::pip_installed("py-venv", COMPONENTIZE_PY, "componentize-py")
}

/// The Python wellness component, built once per digest of its sources, the WIT and the pin
/// (a later run of the tests reuses it; componentize-py takes ~10 s).
pub(crate) fn python_wellness() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| componentize(&repo().join("agents-py"), "wellness"))
}

/// The wellness of `agents` (a dir like `agents-py/`: `sdk/` and `wellness/`) as a component,
/// kept under target/tmp by the digest of its sources, the WIT and the pin.
fn componentize(agents: &Path, name: &str) -> PathBuf {
    let wit = repo().join("wit");
    let mut files = Vec::new();
    sources(agents, &mut files);
    let mut digest = sha2::Sha256::new();
    digest.update(COMPONENTIZE_PY.as_bytes());
    for file in &files {
        digest.update(
            file.strip_prefix(agents)
                .unwrap()
                .to_string_lossy()
                .as_bytes(),
        );
        digest.update(std::fs::read(file).unwrap());
    }
    digest.update(std::fs::read(wit.join("agent.wit")).unwrap());
    let digest = format!("{:x}", digest.finalize());
    let out_dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("python-agents");
    std::fs::create_dir_all(&out_dir).unwrap();
    let out = out_dir.join(format!("{name}-{}.wasm", &digest[..16]));
    if out.exists() {
        return out;
    }
    let partial = out.with_extension(format!("{}.tmp", std::process::id()));
    let built = Command::new(componentize_py())
        .arg("-d")
        .arg(&wit)
        .args([
            "-w",
            "agent",
            "componentize",
            "app",
            "-p",
            ".",
            "-p",
            "../sdk",
            "-o",
        ])
        .arg(&partial)
        .current_dir(agents.join("wellness"))
        .output()
        .unwrap();
    assert!(
        built.status.success(),
        "componentize-py: {}",
        String::from_utf8_lossy(&built.stderr)
    );
    std::fs::rename(&partial, &out).unwrap();
    out
}

/// A plugins dir with the Python wellness and the built Rust calendar, comms and finance.
pub(crate) fn python_plugins(name: &str) -> PathBuf {
    let built = plugins_dir();
    plugins_dir_of(
        name,
        &[
            ("wellness", python_wellness().to_owned()),
            ("calendar", built.join("calendar.wasm")),
            ("comms", built.join("comms.wasm")),
            ("finance", built.join("finance.wasm")),
        ],
    )
}

/// `tests/all/wellness.rs`, run as it is by this test binary in a child process whose
/// per-agent tests load their agents from the Python plugins dir (`AURA_TEST_PLUGINS_DIR`):
/// every one of its tests passes.
#[test]
fn the_python_wellness_passes_the_very_tests_of_the_rust_one() {
    let plugins = python_plugins("python-tests");
    let source = std::fs::read_to_string(repo().join("tests/all/wellness.rs")).unwrap();
    let tests = source.matches("#[tokio::test]").count() + source.matches("#[test]").count();
    assert!(tests >= 7, "{tests}");
    let run = Command::new(std::env::current_exe().unwrap())
        .args(["wellness::", "--test-threads", "2"])
        .env("AURA_TEST_PLUGINS_DIR", &plugins)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(
        stdout.contains(&format!("test result: ok. {tests} passed; 0 failed")),
        "{stdout}"
    );
}

/// The day (seed 7) with the Python wellness: the same decisions, surfaces, signals, outcomes
/// and rationales as with the Rust one, line for line. Only the fuel differs (CPython
/// interprets what Rust compiled: the fuel is the Python agent's, and a calendar call that
/// asks wellness is charged its callee's), and the run's id, which names the components.
#[tokio::test]
async fn the_day_with_the_python_wellness_makes_the_rust_ones_decisions() {
    let day = repo().join("scenarios/day.json");
    let mut traces = Vec::new();
    for (name, plugins) in [
        ("day-rust", plugins_dir()),
        ("day-python", python_plugins("day-python")),
    ] {
        let (host, data) = crate::support::host_over(name, &plugins).await;
        let scenario = Scenario::load(&day, host.crossing().schemas()).unwrap();
        orchestrator::run(&host, &scenario, 7, Start::Fresh, |_| {})
            .await
            .unwrap();
        let text = std::fs::read_to_string(data.join(aura_host::journal::TRACES_PATH)).unwrap();
        let lines: Vec<Value> = text
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect();
        traces.push(lines);
    }
    let (rust, python) = (&traces[0], &traces[1]);
    assert_eq!(rust.len(), python.len());
    let mut wellness_fuel = (0u64, 0u64);
    for (r, p) in rust.iter().zip(python) {
        let strip = |trace: &Value| {
            let mut trace = trace.clone();
            let object = trace.as_object_mut().unwrap();
            object.remove("run");
            object.remove("fuel_used");
            trace
        };
        assert_eq!(strip(r), strip(p));
        if r["call"]["agent"] == "wellness" && r["decision"] == "executed" {
            wellness_fuel.0 += r["fuel_used"].as_u64().unwrap();
            wellness_fuel.1 += p["fuel_used"].as_u64().unwrap();
        }
    }
    // The day runs wellness' tools, and they burn their own fuel in each language.
    assert!(
        wellness_fuel.0 > 0 && wellness_fuel.1 > wellness_fuel.0,
        "{wellness_fuel:?}"
    );
}

/// `aura test-agent` passes the Python wellness, and fails one with an author's plausible bug
/// (each factor's contribution truncated instead of split by largest remainder, a bug an early
/// version of the port had) at the one answer it changes: stress_score's example, sub-scores
/// 50, 50, 33 at weights 500, 300, 200, makes contributions 25 + 15 + 6.6; truncated the sleep
/// factor gives 6, not the reference's 7, and the three no longer add up to the score 47. The
/// tick examples still pass: their proposals do not show contributions.
#[test]
fn aura_test_agent_passes_the_python_wellness_and_fails_a_broken_one() {
    let (code, report) =
        crate::conformance::test_agent("python-wellness", python_wellness(), "wellness");
    assert_eq!(code, 0, "{report}");
    let checks = crate::conformance::checks_of("wellness");
    assert!(
        report.contains(&format!("conformant: {checks} passed, 0 failed, 0 skipped")),
        "{report}"
    );

    let broken = Path::new(env!("CARGO_TARGET_TMPDIR")).join("broken-agents-py");
    let _ = std::fs::remove_dir_all(&broken);
    for part in ["sdk", "wellness"] {
        copy_tree(&repo().join("agents-py").join(part), &broken.join(part));
    }
    let stress = broken.join("wellness/wellness/stress.py");
    let text = std::fs::read_to_string(&stress).unwrap();
    let right = "contributions = largest_remainder(weighted, total_weight, score)";
    assert_eq!(text.matches(right).count(), 1, "the line to break moved");
    let wrong = "contributions = [w // total_weight for w in weighted]";
    std::fs::write(&stress, text.replace(right, wrong)).unwrap();
    let component = componentize(&broken, "wellness-broken");

    let (code, report) =
        crate::conformance::test_agent("python-wellness-broken", &component, "wellness");
    assert_eq!(code, 5, "{report}");
    assert!(
        report.contains(
            "  FAIL  stress_score example 1: not the reference answer: \
             at /factors/2/contribution: expected 7, got 6"
        ),
        "{report}"
    );
    assert!(
        report.contains(&format!(
            "NOT CONFORMANT: {} passed, 1 failed, 0 skipped",
            checks - 1
        )),
        "{report}"
    );
}

/// Copies the files of `from` (not `__pycache__`) into `to`.
fn copy_tree(from: &Path, to: &Path) {
    let mut all = Vec::new();
    files(from, &mut all);
    for file in all {
        let target = to.join(file.strip_prefix(from).unwrap());
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        std::fs::copy(&file, &target).unwrap();
    }
}

/// Per-call time in-process of the Python wellness against the Rust one: each tool's first
/// schema example through the crossing, the two hosts' calls interleaved in one run (so both see
/// the same machine), medians and p99 of each. `suggest_break` includes its call to the Rust
/// calendar. Not a test: timings are never asserted. `just bench-python` (bench profile).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a benchmark: just bench-python"]
async fn bench_python_against_rust_per_call() {
    use std::time::Instant;
    const CALLS: usize = 300;
    const WARM_UP: usize = 20;
    let open = |plugins: PathBuf, name: &str| {
        let data = crate::support::temp_dir(name);
        async move {
            aura_host::Host::open(&crate::support::config(plugins, data))
                .await
                .unwrap()
        }
    };
    let rust = open(plugins_dir(), "bench-py-rust").await;
    let python = open(python_plugins("bench-py-plugins"), "bench-py-python").await;
    let spec = aura_contract::catalogue::agent("wellness").unwrap();
    let percentile =
        |sorted: &[u128], p: usize| sorted[(sorted.len() * p / 100).min(sorted.len() - 1)];
    println!(
        "| tool | Rust p50 | Rust p99 | Python p50 | Python p99 | ratio of p50 | fuel Rust | fuel Python |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for tool in spec.tools {
        let (args, _) = aura_host::conformance::tool_examples(spec, tool)
            .unwrap()
            .remove(0);
        let mut times = [Vec::new(), Vec::new()];
        let mut fuel = [0u64; 2];
        for i in 0..WARM_UP + CALLS {
            for (side, host) in [&rust, &python].into_iter().enumerate() {
                let call = aura_contract::ToolCall::new("wellness", tool.name, args.clone(), None);
                let started = Instant::now();
                let result = host.dispatch(&call).await.unwrap();
                let took = started.elapsed().as_micros();
                assert!(result.ok, "{:?}", result.error);
                fuel[side] = result.fuel_used;
                if i >= WARM_UP {
                    times[side].push(took);
                }
            }
        }
        for side in &mut times {
            side.sort_unstable();
        }
        let [r, p] = &times;
        println!(
            "| `{}` | {} µs | {} µs | {} µs | {} µs | {:.1}x | {} | {} |",
            tool.name,
            percentile(r, 50),
            percentile(r, 99),
            percentile(p, 50),
            percentile(p, 99),
            percentile(p, 50) as f64 / percentile(r, 50) as f64,
            fuel[0],
            fuel[1]
        );
    }
}
