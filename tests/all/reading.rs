//! What a reader holds at once, in the host's crates and the binary (`host/*/src`, `src/`): a
//! file of at most 600 lines, a function of at most 70, and one module style (`x.rs` beside
//! `x/`, never `x/mod.rs`). What is longer is in [`ALLOWED`] with its reason, and an entry that
//! no longer needs to be there fails too, so the list stays true.

use std::collections::BTreeMap;
use std::path::Path;

use crate::layout::{host_source_dirs, skipped, sources, workspace};

/// Lines a file of the host may have (its unit tests included).
const FILE_LINES_MAX: usize = 600;
/// Lines a function of the host may have, from `fn` to its closing brace.
const FUNCTION_LINES_MAX: usize = 70;

/// The files and functions (`path::name`, the path from the workspace root) longer than their
/// bound, each with why. "Not split yet" names the steps it splits along when it is.
const ALLOWED: &[(&str, &str)] = &[
    (
        "host/day/src/orchestrator.rs::tick",
        "not split yet: the tick's context, the agents' ticks, arbitration, execution, the records",
    ),
    (
        "host/fleet/src/assistant.rs::run",
        "not split yet: the takeover, the session's start, the loop over inbox and ticks, the end",
    ),
    (
        "host/day/src/live.rs::live",
        "not split yet: the store's open, the life's resume, the session's start, its handle",
    ),
    (
        "src/commands/live.rs::execute",
        "a command's options wired to the session, one after another: read top to bottom",
    ),
    (
        "host/fleet/src/protocol/model.rs::next_state",
        "the model's transition relation: one arm per action, as the protocol states them",
    ),
    (
        "host/fleet/src/assistant.rs::hold",
        "not split yet: the life's open, the inbox's read position, the session, the hold's end",
    ),
    (
        "host/day/src/orchestrator/decide.rs::decide",
        "not split yet: the question asked or not, the call executed, the decision recorded",
    ),
    (
        "host/day/src/store/suite/crashes.rs::every_step_killed_failed_or_cut_short_leaves_a_whole_life",
        "the suite's crash check: one story of steps, each killed, failed and cut short in turn",
    ),
    (
        "host/day/src/store/suite/crashes.rs::check_whole",
        "the suite's invariants on a life after a crash, each stated once, in order",
    ),
    (
        "src/commands/fleet.rs::execute",
        "a command's options wired to the fleet host, one after another: read top to bottom",
    ),
    (
        "host/wire/src/access.rs::from_options",
        "not split yet: credentials, TLS, trusted keys, each read from its flag or file",
    ),
    (
        "host/day/src/store/bench.rs::bench_store_appends_and_rollovers",
        "a benchmark's rounds on every home, interleaved, with its report: one measurement",
    ),
    (
        "host/day/src/orchestrator/decide.rs::tell",
        "not split yet: the surface chosen, the text made, the delivery recorded",
    ),
    (
        "host/day/src/live/input.rs::check",
        "a live signal's checks, one per field, in the order the refusal names them",
    ),
    (
        "host/fleet/src/protocol.rs::replay_from",
        "the journal's replay: one arm per record kind, as the protocol states them",
    ),
    (
        "host/sandbox/src/narrator.rs::narrate",
        "not split yet: the instance, the facts in, the decoding loop under fuel, the text out",
    ),
    (
        "host/day/src/orchestrator/arbitrate.rs::place",
        "not split yet: urgency, the person's state, the surface's rules, the tie-break",
    ),
    (
        "host/fleet/src/placement.rs::place",
        "not split yet: presence, owners, claims, releases",
    ),
    (
        "host/day/src/live/session.rs::run",
        "the session's select loop: one arm per thing it waits for",
    ),
    (
        "host/fleet/src/protocol/model/properties.rs::properties",
        "the model's properties, one per line of the protocol's guarantees",
    ),
    (
        "host/day/src/live/session.rs::take",
        "not split yet: the batch's checks, its journaling, the answer",
    ),
    (
        "host/day/src/orchestrator.rs::begin",
        "not split yet: the checkpoint's resume, the world, the agents' memory",
    ),
    (
        "host/day/src/checkpoint.rs::begin",
        "not split yet: a new run, a resumed one, a finished one set aside",
    ),
    (
        "host/day/src/store/earlier.rs::a_data_dir_the_release_before_wrote_opens_as_it_is_and_goes_on",
        "the suite's migration check: an earlier release's data dir written, then lived on",
    ),
    (
        "host/day/src/store/suite.rs::read_positions_go_with_their_signals_and_a_commit_carries_them",
        "the suite's read-position check: one story of appends and commits",
    ),
    (
        "host/fleet/src/jetstream.rs::open",
        "the fleet's buckets and streams, each created with its settings, one after another",
    ),
    (
        "host/day/src/store/suite.rs::days_are_in_the_lifes_order_and_deleted_whole",
        "the suite's retention check: one story of days begun, closed and deleted",
    ),
];

/// `text` with its comments, strings and chars made blanks (newlines kept), so braces and
/// `fn` are only the code's.
fn blanked(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let word_before = i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_');
        match skipped(&chars, i).filter(|_| !word_before) {
            Some(next) => {
                for c in &chars[i..next.min(chars.len())] {
                    out.push(if *c == '\n' { '\n' } else { ' ' });
                }
                i = next;
            }
            None => {
                out.push(chars[i]);
                i += 1;
            }
        }
    }
    out
}

/// Each function of `text` (its unit tests left out) with its length in lines, from `fn` to the
/// brace that closes its body.
fn function_lengths(text: &str) -> Vec<(String, usize)> {
    let mut code = blanked(text);
    if let Some(at) = code.find("#[cfg(test)]\nmod ") {
        code.truncate(at);
    }
    let bytes = code.as_bytes();
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(at) = code[from..].find("fn ").map(|at| at + from) {
        from = at + 3;
        let keyword = at == 0 || !(bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_');
        let name: String = code[at + 3..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if !keyword || name.is_empty() {
            continue;
        }
        // The body's opening brace: the first `{` outside the signature's brackets, unless a
        // `;` ends it first (a trait's declaration).
        let mut depth = 0i32;
        let mut open = None;
        for (offset, byte) in bytes[at..].iter().enumerate() {
            match byte {
                b'(' | b'[' => depth += 1,
                b')' | b']' => depth -= 1,
                b';' if depth == 0 => break,
                b'{' if depth == 0 => {
                    open = Some(at + offset);
                    break;
                }
                _ => {}
            }
        }
        let Some(open) = open else { continue };
        let mut braces = 0i32;
        let mut close = open;
        for (offset, byte) in bytes[open..].iter().enumerate() {
            match byte {
                b'{' => braces += 1,
                b'}' => {
                    braces -= 1;
                    if braces == 0 {
                        close = open + offset;
                        break;
                    }
                }
                _ => {}
            }
        }
        let lines = code[at..=close].matches('\n').count() + 1;
        found.push((name, lines));
    }
    found
}

/// The host's source files a reader reads: the crates' and the binary's, their unit-test
/// files left out.
fn host_files() -> Vec<(String, std::path::PathBuf)> {
    let root = workspace();
    let mut files = Vec::new();
    for dir in host_source_dirs() {
        for file in sources(&dir) {
            let relative = file
                .strip_prefix(&root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            files.push((relative, file));
        }
    }
    files
}

fn is_unit_tests(relative: &str) -> bool {
    relative.ends_with("/tests.rs") || relative.contains("/tests/")
}

#[test]
fn the_function_scan_measures_what_a_reader_sees() {
    let text = "fn short() {\n    let s = \"}\"; // }\n}\n\n/// doc\npub(crate) fn long<'a>(x: &'a [u8]) -> Result<(), ()>\nwhere\n    u8: Copy,\n{\n    let c = '{';\n    let r = r#\"{\"#;\n    if true {\n    }\n    Ok(())\n}\ntrait T {\n    fn declared(&self);\n}\n#[cfg(test)]\nmod tests {\n    fn left_out() {}\n}\n";
    assert_eq!(
        function_lengths(text),
        vec![("short".to_owned(), 3), ("long".to_owned(), 10)]
    );
}

#[test]
fn no_file_or_function_of_the_host_is_longer_than_a_reader_holds_unless_allowed() {
    let allowed: BTreeMap<&str, &str> = ALLOWED.iter().copied().collect();
    let mut unlisted = Vec::new();
    let mut long = std::collections::BTreeSet::new();
    for (relative, file) in host_files() {
        let text = std::fs::read_to_string(&file).unwrap();
        let lines = text.lines().count();
        if lines > FILE_LINES_MAX {
            long.insert(relative.clone());
            if !allowed.contains_key(relative.as_str()) {
                unlisted.push(format!("{relative}: {lines} lines"));
            }
        }
        if is_unit_tests(&relative) {
            continue;
        }
        for (name, lines) in function_lengths(&text) {
            let place = format!("{relative}::{name}");
            if lines > FUNCTION_LINES_MAX {
                if !allowed.contains_key(place.as_str()) {
                    unlisted.push(format!("{place}: {lines} lines"));
                }
                long.insert(place);
            }
        }
    }
    let stale: Vec<&str> = allowed
        .keys()
        .filter(|place| !long.contains(**place))
        .copied()
        .collect();
    assert!(
        unlisted.is_empty(),
        "longer than a reader holds ({FILE_LINES_MAX} lines a file, {FUNCTION_LINES_MAX} a \
         function): split it along its steps, or list it in ALLOWED with why: {unlisted:#?}"
    );
    assert!(
        stale.is_empty(),
        "in ALLOWED but no longer long: take them out of the list: {stale:#?}"
    );
}

/// One module style: a module with children is `x.rs` beside `x/`, never `x/mod.rs`.
#[test]
fn every_module_with_children_is_a_file_beside_its_dir() {
    let root = workspace();
    let mut found = Vec::new();
    for dir in ["host", "src", "sdk", "agents", "narrator"] {
        for file in sources(&root.join(dir)) {
            if file.file_name().is_some_and(|name| name == "mod.rs") && !in_fuzz(&file) {
                found.push(file.display().to_string());
            }
        }
    }
    assert!(
        found.is_empty(),
        "mod.rs files (make each `x.rs` beside `x/`): {found:#?}"
    );
}

fn in_fuzz(file: &Path) -> bool {
    file.components().any(|part| part.as_os_str() == "fuzz")
}
