//! The workspace's shape, as the README's Layout draws it: every bound in the contract's
//! limits.rs, no tool named where calls, ticks and the day run, the arrows between a crate's
//! modules one way, and no source file of the host crates past the size a reader holds.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The workspace root (the `aura` package's dir).
fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The source dirs of the host's crates: each crate under crates/, and the binary's src/.
fn host_source_dirs() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(workspace().join("crates"))
        .unwrap()
        .map(|entry| entry.unwrap().path().join("src"))
        .filter(|src| src.is_dir())
        .collect();
    dirs.sort();
    dirs.push(workspace().join("src"));
    dirs
}

/// Every .rs file under `dir`, sorted.
fn sources(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut pending = vec![dir.to_owned()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// A file's code without its unit tests (a `mod tests`, and what follows it).
fn code_of(file: &Path) -> String {
    let text = std::fs::read_to_string(file).unwrap();
    let tests = ["\nmod tests {", "\npub mod tests {"]
        .iter()
        .filter_map(|start| text.find(start))
        .min();
    match tests {
        Some(at) => text[..at].to_owned(),
        None => text,
    }
}

/// Constants named like bounds that are not the host's to choose: facts of a standard.
const NOT_OURS: &[&str] = &[
    // RFC 7493's largest exactly representable integer, 2^53 − 1.
    "I_JSON_INTEGER_MAX",
    // ECMAScript's Number::toString: the smallest magnitude written with an exponent.
    "ES6_EXPONENT_FORM_MIN",
];

/// The README says every bound is in the contract's limits.rs: a constant named as a bound
/// (`*_MAX`, `*_MIN`, `*_CEILING`) anywhere else in the host's crates fails this test.
#[test]
fn every_bound_of_the_host_is_in_the_contracts_limits() {
    let limits = workspace().join("crates/contract/src/limits.rs");
    // Its submodules, one per area (limits/fleet.rs), are limits.rs too.
    let areas = workspace().join("crates/contract/src/limits");
    let mut elsewhere = Vec::new();
    for dir in host_source_dirs() {
        let files = sources(&dir).into_iter();
        for file in files.filter(|f| *f != limits && !f.starts_with(&areas)) {
            let text = std::fs::read_to_string(&file).unwrap();
            for line in text.lines() {
                let Some((_, rest)) = line.trim_start().split_once("const ") else {
                    continue;
                };
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == '_')
                    .collect();
                let bound = ["_MAX", "_MIN", "_CEILING"]
                    .iter()
                    .any(|s| name.ends_with(s));
                if bound && !NOT_OURS.contains(&name.as_str()) {
                    elsewhere.push(format!("{}: {name}", file.display()));
                }
            }
        }
    }
    assert!(
        elsewhere.is_empty(),
        "bounds outside limits.rs: {elsewhere:#?}"
    );
}

/// What the README's "write an agent" walk-through promises: a new tool touches its
/// catalogue entry, its schemas and its agent, and nothing in the modules that run calls,
/// ticks and the day. None of them names a tool outside its tests.
#[test]
fn no_module_that_runs_calls_or_the_day_names_a_tool() {
    let root = workspace().join("crates");
    let mut generic: Vec<PathBuf> = [
        "contract/src/crossing.rs",
        "contract/src/trace/mod.rs",
        "day/src/scenario.rs",
    ]
    .iter()
    .map(|file| root.join(file))
    .collect();
    // The host's modules but its doc (an example call) and the calibration (its reference
    // workload is one tool's call by design).
    generic.extend(
        sources(&root.join("host/src"))
            .into_iter()
            .filter(|f| !f.ends_with("lib.rs") && !f.ends_with("calibrate.rs")),
    );
    generic.extend(sources(&root.join("day/src/orchestrator")));
    // A module's unit tests in a file of their own (`<module>/tests.rs`) are its tests, as a
    // `mod tests` block is.
    generic.retain(|file| !file.ends_with("tests.rs"));
    for agent in aura_contract::catalogue::CATALOGUE {
        for tool in agent.tools {
            let quoted = format!("\"{}\"", tool.name);
            for file in &generic {
                let code = code_of(file);
                assert!(
                    !code.contains(&quoted),
                    "{} names {}",
                    file.display(),
                    tool.name
                );
            }
        }
    }
}

/// The modules of a crate (its top-level files and dirs) and which others each names through
/// `crate::`, outside its tests.
fn module_graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut modules: BTreeMap<String, Vec<PathBuf>> = BTreeMap::new();
    for entry in std::fs::read_dir(src).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            modules.insert(name, sources(&path));
        } else if path.extension().is_some_and(|e| e == "rs") && name != "lib" && name != "main" {
            modules.insert(name, vec![path]);
        }
    }
    let mut graph = BTreeMap::new();
    for (module, files) in &modules {
        let mut named = BTreeSet::new();
        for file in files {
            let code: String = code_of(file)
                .lines()
                .map(|line| line.split("//").next().unwrap_or_default())
                .collect::<Vec<_>>()
                .join("\n");
            for (index, _) in code.match_indices("crate::") {
                let rest = &code[index + "crate::".len()..];
                let mut names: Vec<&str> = Vec::new();
                match rest.strip_prefix('{') {
                    Some(group) => names.extend(
                        group
                            .split('}')
                            .next()
                            .unwrap_or_default()
                            .split(',')
                            .map(|name| name.trim().split("::").next().unwrap_or_default()),
                    ),
                    None => names.push(
                        rest.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                            .next()
                            .unwrap_or_default(),
                    ),
                }
                for name in names {
                    if name != module && modules.contains_key(name) {
                        named.insert(name.to_owned());
                    }
                }
            }
        }
        graph.insert(module.clone(), named);
    }
    graph
}

/// A circle in `graph`, as the modules along it, if there is one.
fn circle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        module: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|m| m == module) {
            let mut circle = path[at..].to_vec();
            circle.push(module.to_owned());
            return Some(circle);
        }
        if done.contains(module) {
            return None;
        }
        path.push(module.to_owned());
        for next in &graph[module] {
            if let Some(circle) = visit(next, graph, path, done) {
                return Some(circle);
            }
        }
        path.pop();
        done.insert(module.to_owned());
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|module| visit(module, graph, &mut Vec::new(), &mut done))
}

/// The arrows between a crate's modules point one way: no module reaches itself through the
/// modules it names (`host → remote → call → host` was such a circle).
#[test]
fn no_crate_of_the_host_has_an_import_circle_between_its_modules() {
    for src in host_source_dirs() {
        let graph = module_graph(&src);
        assert_eq!(circle(&graph), None, "{}: an import circle", src.display());
    }
    // The check itself finds a circle where there is one.
    let planted: BTreeMap<String, BTreeSet<String>> = [
        ("a", &["b"][..]),
        ("b", &["c"][..]),
        ("c", &["a"][..]),
        ("d", &[][..]),
    ]
    .into_iter()
    .map(|(m, named)| {
        (
            m.to_owned(),
            named.iter().map(|n| (*n).to_owned()).collect(),
        )
    })
    .collect();
    assert_eq!(
        circle(&planted),
        Some(vec!["a".into(), "b".into(), "c".into(), "a".into()])
    );
}

/// A reader holds a file of the host whole: none is past 600 lines, its tests included.
#[test]
fn no_source_file_of_the_host_crates_is_over_600_lines() {
    let mut long = Vec::new();
    for dir in host_source_dirs() {
        for file in sources(&dir) {
            let lines = std::fs::read_to_string(&file).unwrap().lines().count();
            if lines > 600 {
                long.push(format!("{}: {lines} lines", file.display()));
            }
        }
    }
    assert!(long.is_empty(), "files over 600 lines: {long:#?}");
}
