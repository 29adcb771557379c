//! The `just` recipes the README, the pages of docs/ and BENCHMARKS.md name, as a reader would
//! follow them: each named recipe is in the justfile, every test a recipe runs by name is in
//! this binary (a recipe that passes `--ignored` runs at least one ignored test), every package
//! it picks with `-p` is in the workspace, and every script or file of the tree it names is
//! there. A recipe whose test was renamed or deleted would otherwise pass by running nothing
//! (`just bench-python` did). CI runs the cheap recipes themselves (`.ci/run`); the long ones are
//! listed in docs/recipes.md with when each last ran.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The workspace root.
fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The justfile's recipes: name -> body lines (the recipe's header line first).
fn recipes(justfile: &str) -> BTreeMap<String, Vec<String>> {
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut current: Option<String> = None;
    for line in justfile.lines() {
        let starts_recipe = !line.starts_with([' ', '\t', '#'])
            && !line.contains(":=")
            && !line.starts_with("set ")
            && line.contains(':');
        if starts_recipe {
            let name: String = line
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
                .collect();
            out.insert(name.clone(), vec![line.to_owned()]);
            current = Some(name);
        } else if line.starts_with([' ', '\t']) {
            if let Some(name) = &current {
                out.get_mut(name).unwrap().push(line.trim().to_owned());
            }
        } else {
            current = None;
        }
    }
    out
}

/// The recipes `text` (markdown) names: `just NAME` in a code span or at the start of a line of
/// a code block.
fn named_recipes(text: &str) -> BTreeSet<String> {
    let mut named = BTreeSet::new();
    let mut in_block = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_block = !in_block;
            continue;
        }
        let mut starts: Vec<&str> = line.split("`just ").skip(1).collect();
        if in_block && let Some(rest) = line.trim_start().strip_prefix("just ") {
            starts.push(rest);
        }
        for rest in starts {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
                .collect();
            // `just --list` and the like are just's own options, not recipes.
            if !name.is_empty() && !name.starts_with('-') {
                named.insert(name);
            }
        }
    }
    named
}

/// The tests of this binary, by name: whether each is ignored (`--list` and `--list --ignored`
/// of the running binary itself).
fn tests_of_this_binary() -> BTreeMap<String, bool> {
    let list = |ignored: bool| -> Vec<String> {
        let mut command = std::process::Command::new(std::env::current_exe().unwrap());
        command.args(["--list", "--format", "terse"]);
        if ignored {
            command.arg("--ignored");
        }
        let output = command.output().unwrap();
        assert!(output.status.success(), "{command:?}");
        String::from_utf8(output.stdout)
            .unwrap()
            .lines()
            .filter_map(|line| line.strip_suffix(": test"))
            .map(str::to_owned)
            .collect()
    };
    let ignored: BTreeSet<String> = list(true).into_iter().collect();
    list(false)
        .into_iter()
        .map(|name| {
            let is_ignored = ignored.contains(&name);
            (name, is_ignored)
        })
        .collect()
}

/// The packages of the workspace: each member's `name`.
fn workspace_packages() -> BTreeSet<String> {
    let mut manifests = vec![workspace().join("Cargo.toml")];
    for dir in ["host", "agents", "sdk", "narrator", "tests", "tests/guests"] {
        for entry in std::fs::read_dir(workspace().join(dir)).unwrap() {
            let manifest = entry.unwrap().path().join("Cargo.toml");
            if manifest.is_file() {
                manifests.push(manifest);
            }
        }
    }
    manifests
        .iter()
        .filter_map(|manifest| {
            let text = std::fs::read_to_string(manifest).unwrap();
            let package = text.split("[package]").nth(1)?;
            let line = package
                .lines()
                .find(|l| l.trim_start().starts_with("name"))?;
            Some(line.split('"').nth(1)?.to_owned())
        })
        .collect()
}

/// What a `cargo test` line of a recipe selects: its `-p` packages, whether it runs the
/// `all` test binary, its name filters and whether it passes `--ignored`.
#[derive(Debug, Default, PartialEq, Eq)]
struct CargoTest {
    packages: Vec<String>,
    all_binary: bool,
    filters: Vec<String>,
    ignored: bool,
}

/// The `cargo test` of a recipe's line, if it runs one.
fn cargo_test(line: &str) -> Option<CargoTest> {
    let words: Vec<&str> = line.split_whitespace().collect();
    let at = words.windows(2).position(|w| w == ["cargo", "test"])?;
    let mut test = CargoTest::default();
    let mut words = words[at + 2..].iter();
    // Options that take a value, as cargo test reads them.
    let valued = [
        "-p",
        "--package",
        "--test",
        "--profile",
        "-j",
        "--features",
        "--target",
    ];
    while let Some(word) = words.next() {
        match *word {
            "--" => break,
            option if valued.contains(&option) => {
                let value = words.next().copied().unwrap_or_default();
                match option {
                    "-p" | "--package" => test.packages.push(value.to_owned()),
                    "--test" => test.all_binary = value == "all",
                    _ => {}
                }
            }
            option if option.starts_with('-') => {}
            filter => test.filters.push(filter.to_owned()),
        }
    }
    // The test binary's own arguments: its filters too, and --ignored.
    let valued = ["--test-threads", "--skip", "--format", "--color", "-Z"];
    while let Some(word) = words.next() {
        match *word {
            "--ignored" => test.ignored = true,
            option if valued.contains(&option) => {
                words.next();
            }
            option if option.starts_with('-') => {}
            filter => test.filters.push(filter.to_owned()),
        }
    }
    Some(test)
}

/// Files of the tree a recipe's line (a command, or a comment) names: words that start at one
/// of the tree's dirs, with no variable in them, a sentence's last stop taken off.
fn files_named(line: &str) -> Vec<String> {
    let roots = ["bench/", "tests/", "scenarios/", "agents-py/", "deploy/"];
    line.split(|c: char| c.is_whitespace() || c == ';' || c == '(' || c == ')' || c == '"')
        .map(|word| word.trim_end_matches(['.', ',', ':']))
        .filter(|word| roots.iter().any(|root| word.starts_with(root)))
        .filter(|word| !word.contains("{{") && !word.contains('$') && !word.contains('*'))
        .map(str::to_owned)
        .collect()
}

#[test]
fn every_recipe_the_readme_and_benchmarks_name_is_there_and_runs_what_it_names() {
    let justfile = std::fs::read_to_string(workspace().join("justfile")).unwrap();
    let recipes = recipes(&justfile);
    let mut pages = vec![
        workspace().join("README.md"),
        workspace().join("BENCHMARKS.md"),
    ];
    // The manual's pages, which the README links.
    for entry in std::fs::read_dir(workspace().join("docs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|ext| ext == "md") {
            pages.push(path);
        }
    }
    for entry in std::fs::read_dir(workspace().join("bench/notes")).unwrap() {
        pages.push(entry.unwrap().path());
    }
    let mut problems = Vec::new();
    for page in &pages {
        for name in named_recipes(&std::fs::read_to_string(page).unwrap()) {
            if !recipes.contains_key(&name) {
                problems.push(format!(
                    "{} names `just {name}`: no such recipe",
                    page.display()
                ));
            }
        }
    }
    let tests = tests_of_this_binary();
    let packages = workspace_packages();
    for (name, body) in &recipes {
        for line in body {
            if let Some(test) = cargo_test(line) {
                for package in &test.packages {
                    if !packages.contains(package) {
                        problems.push(format!("`just {name}`: -p {package} is no package"));
                    }
                }
                if test.all_binary {
                    for filter in &test.filters {
                        let matched: Vec<bool> = tests
                            .iter()
                            .filter(|(test, _)| test.contains(filter.as_str()))
                            .map(|(_, ignored)| *ignored)
                            .collect();
                        if matched.is_empty() {
                            problems.push(format!("`just {name}`: no test matches {filter}"));
                        } else if test.ignored && !matched.contains(&true) {
                            problems.push(format!(
                                "`just {name}`: --ignored, but no ignored test matches {filter}"
                            ));
                        }
                    }
                }
            }
            for file in files_named(line) {
                if !Path::new(&workspace()).join(&file).exists() {
                    problems.push(format!("`just {name}` names {file}: not in the tree"));
                }
            }
        }
    }
    assert!(problems.is_empty(), "{problems:#?}");
}

/// The reader of recipes finds what a broken one would hide: worked out by hand from a justfile
/// and a page written for it.
#[test]
fn the_recipe_reader_sees_names_filters_and_files() {
    let justfile = "set shell := [\"bash\"]\njobs := \"2\"\n\n# A comment.\nbench-x seed=\"7\": build\n    cargo test --profile bench -j{{jobs}} -p aura --test all gone_bench -- --ignored --nocapture\n    python3 bench/missing.py {{seed}}\nbuild:\n    cargo build\n";
    let recipes = recipes(justfile);
    assert_eq!(recipes.keys().collect::<Vec<_>>(), ["bench-x", "build"]);
    assert_eq!(
        cargo_test(&recipes["bench-x"][1]),
        Some(CargoTest {
            packages: vec!["aura".into()],
            all_binary: true,
            filters: vec!["gone_bench".into()],
            ignored: true,
        })
    );
    assert_eq!(files_named(&recipes["bench-x"][2]), ["bench/missing.py"]);
    assert_eq!(
        files_named("# as tests/all/signing.rs does (and bench/{{x}}.py)."),
        ["tests/all/signing.rs"]
    );
    assert_eq!(cargo_test(&recipes["build"][1]), None);
    assert_eq!(
        cargo_test("cargo test -p aura --test all -- calendar:: --test-threads 1 comms::"),
        Some(CargoTest {
            packages: vec!["aura".into()],
            all_binary: true,
            filters: vec!["calendar::".into(), "comms::".into()],
            ignored: false,
        })
    );
    let page = "Run `just bench-x 3` (`just --list` lists them), then:\n\n```sh\njust build   # again\naura run\n```\n\nWe just ran it.\n";
    assert_eq!(
        named_recipes(page).into_iter().collect::<Vec<_>>(),
        ["bench-x", "build"]
    );
    // This binary lists itself, ignored tests apart.
    let tests = tests_of_this_binary();
    assert_eq!(
        tests.get("recipes::the_recipe_reader_sees_names_filters_and_files"),
        Some(&false)
    );
    assert_eq!(
        tests.get("soak::ten_thousand_mixed_calls_leave_the_host_whole"),
        Some(&true)
    );
}
