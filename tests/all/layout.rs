//! The workspace's shape, as docs/layout.md draws it: every bound in the contract's
//! limits.rs, no tool named where calls, ticks and the day run, the arrows between a crate's
//! modules one way (what a reader holds at once, a file's and a function's length: `reading`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The workspace root (the `aura` package's dir).
pub(crate) fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The source dirs of the host's crates: each crate under host/, and the binary's src/.
pub(crate) fn host_source_dirs() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(workspace().join("host"))
        .unwrap()
        .map(|entry| entry.unwrap().path().join("src"))
        .filter(|src| src.is_dir())
        .collect();
    dirs.sort();
    dirs.push(workspace().join("src"));
    dirs
}

/// Every .rs file under `dir`, sorted.
pub(crate) fn sources(dir: &Path) -> Vec<PathBuf> {
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

/// docs/crossing.md ("Limits") says every bound is in the contract's limits.rs: a constant
/// named as a bound (`*_MAX`, `*_MIN`, `*_CEILING`) anywhere else in the host's crates fails
/// this test.
#[test]
fn every_bound_of_the_host_is_in_the_contracts_limits() {
    let limits = workspace().join("host/contract/src/limits.rs");
    // Its submodules, one per area (limits/fleet.rs), are limits.rs too.
    let areas = workspace().join("host/contract/src/limits");
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

/// What docs/agents.md's "Write an agent" walk-through promises: a new tool touches its
/// catalogue entry, its schemas and its agent, and nothing in the modules that run calls,
/// ticks and the day. None of them names a tool outside its tests.
#[test]
fn no_module_that_runs_calls_or_the_day_names_a_tool() {
    let root = workspace().join("host");
    let mut generic: Vec<PathBuf> = [
        "contract/src/crossing.rs",
        "contract/src/trace.rs",
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

/// The modules of a crate (its top-level files and dirs) and which others each names, outside
/// its tests: every path that reaches a module of the crate (`crate::m`, `super::m` from any
/// depth, `self::m` in a root or a `mod.rs`, `$crate::m` in a macro), in a `use` tree of any shape
/// (groups inside groups, `as`, globs) or written where it is used, and the names the crate's root
/// re-exports or imports (`pub use m::Item` in lib.rs: `crate::Item` and `super::Item` name `m`),
/// after a glob of the root (`use super::*` in a top-level module) its bare module names and
/// re-exported items too.
fn module_graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let root = ["lib.rs", "main.rs"]
        .iter()
        .map(|name| src.join(name))
        .find(|file| file.is_file())
        .unwrap_or_else(|| panic!("{}: no lib.rs or main.rs", src.display()));
    let mut modules: BTreeMap<String, Vec<PathBuf>> = BTreeMap::new();
    for entry in std::fs::read_dir(src).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        // A module may be a file and a dir beside it (`m.rs` and `m/`): both are its.
        if path.is_dir() {
            modules.entry(name).or_default().extend(sources(&path));
        } else if path.extension().is_some_and(|e| e == "rs") && name != "lib" && name != "main" {
            modules.entry(name).or_default().push(path);
        }
    }
    let names: BTreeSet<String> = modules.keys().cloned().collect();
    // What the root's own `use` items make nameable at the crate's root: item -> module.
    let mut reexports = BTreeMap::new();
    for (path, alias) in paths_of(&std::fs::read_to_string(&root).unwrap(), &[]).uses {
        let first = path.iter().find(|s| *s != "crate" && *s != "self");
        if let (Some(first), Some(alias)) = (first, alias)
            && names.contains(first)
            && path.len() > 1
        {
            reexports.insert(alias, first.clone());
        }
    }
    let mut graph = BTreeMap::new();
    for (module, files) in &modules {
        let mut named = BTreeSet::new();
        for file in files.iter().filter(|f| !f.ends_with("tests.rs")) {
            let at = module_path_of(src, file);
            let found = paths_of(&std::fs::read_to_string(file).unwrap(), &at);
            let paths = found.uses.into_iter().map(|(path, _)| path);
            for path in paths.chain(found.written) {
                let Some(absolute) = absolute_path(&path, &at) else {
                    continue;
                };
                let Some(first) = absolute.first() else {
                    continue;
                };
                if names.contains(first) {
                    named.insert(first.clone());
                } else if let Some(source) = reexports.get(first) {
                    named.insert(source.clone());
                }
            }
            if found.root_glob {
                for ident in &found.bare_idents {
                    if let Some(source) = reexports.get(ident) {
                        named.insert(source.clone());
                    }
                }
                for ident in &found.bare_path_heads {
                    if names.contains(ident) {
                        named.insert(ident.clone());
                    }
                }
            }
        }
        named.remove(module);
        graph.insert(module.clone(), named);
    }
    graph
}

/// The module path of `file` in the crate rooted at `src`: `a/b.rs` and `a/b/mod.rs` are
/// `["a", "b"]`.
fn module_path_of(src: &Path, file: &Path) -> Vec<String> {
    let relative = file.strip_prefix(src).unwrap();
    let mut path: Vec<String> = relative
        .iter()
        .map(|part| part.to_string_lossy().into_owned())
        .collect();
    let last = path.pop().unwrap();
    let stem = last.trim_end_matches(".rs");
    if stem != "mod" && stem != "lib" && stem != "main" {
        path.push(stem.to_owned());
    }
    path
}

/// `path` (its first segments `crate`, `super`s or `self`, as written in the module at `at`)
/// from the crate's root, or `None` when it does not start at the crate (another crate's, a
/// local name's) or climbs past the root.
fn absolute_path(path: &[String], at: &[String]) -> Option<Vec<String>> {
    let mut base: Vec<String> = match path.first().map(String::as_str) {
        Some("crate") => return Some(path[1..].to_vec()),
        Some("self" | "super") => at.to_vec(),
        _ => return None,
    };
    let mut rest = path;
    if rest.first().is_some_and(|s| s == "self") {
        rest = &rest[1..];
    }
    while rest.first().is_some_and(|s| s == "super") {
        base.pop()?;
        rest = &rest[1..];
    }
    base.extend(rest.iter().cloned());
    Some(base)
}

/// The paths one file writes, outside its tests (items under `#[cfg(test)]`).
#[derive(Debug, Default)]
struct Paths {
    /// Each path a `use` imports (a glob's ends with `*`), with the name it binds (`None` for
    /// a glob), inline modules' own `self`/`super` made relative to the file.
    uses: Vec<(Vec<String>, Option<String>)>,
    /// Paths written outside `use` that start at the crate (`crate::`, `super::`, `self::`,
    /// `$crate::`).
    written: Vec<Vec<String>>,
    /// Whether the file globs the crate's root (`use super::*` in a top-level module,
    /// `use crate::*`).
    root_glob: bool,
    /// Every identifier written on its own (the last segment of no path): after a glob of the
    /// root, an item it re-exports.
    bare_idents: BTreeSet<String>,
    /// The first segment of every path that does not start at the crate (`m::f()`): after a glob
    /// of the root, a module.
    bare_path_heads: BTreeSet<String>,
}

/// A token of Rust source, as the layout reads it: comments, literals and lifetimes dropped.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Ident(String),
    /// `::`
    Path,
    Punct(char),
}

/// `text` as tokens: identifiers (`r#` taken off), `::` and single punctuation; comments (nested
/// block comments included), strings (raw, byte, C), chars, lifetimes and numbers dropped.
fn tokens(text: &str) -> Vec<Token> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let ident_start = |c: char| c.is_alphabetic() || c == '_';
    let ident_char = |c: char| c.is_alphanumeric() || c == '_';
    let at = |i: usize| chars.get(i).copied().unwrap_or('\0');
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if let Some(next) = skipped(&chars, i) {
            i = next;
        } else if c == '\'' {
            // A lifetime ('a, 'static): a char literal was skipped above.
            i += 1;
            while i < chars.len() && ident_char(chars[i]) {
                i += 1;
            }
        } else if c.is_ascii_digit() {
            while i < chars.len()
                && (ident_char(chars[i]) || chars[i] == '.' && at(i + 1).is_ascii_digit())
            {
                i += 1;
            }
        } else if ident_start(c) {
            let start = if c == 'r' && at(i + 1) == '#' && ident_start(at(i + 2)) {
                i + 2
            } else {
                i
            };
            i = start;
            while i < chars.len() && ident_char(chars[i]) {
                i += 1;
            }
            out.push(Token::Ident(chars[start..i].iter().collect()));
        } else if c == ':' && at(i + 1) == ':' {
            out.push(Token::Path);
            i += 2;
        } else {
            out.push(Token::Punct(c));
            i += 1;
        }
    }
    out
}

/// The index after the comment or literal (a string: plain, raw, byte or C; a byte; a char)
/// that starts at `i`, if one does: what a reader of code skips. A lifetime is not one.
pub(crate) fn skipped(chars: &[char], i: usize) -> Option<usize> {
    let at = |i: usize| chars.get(i).copied().unwrap_or('\0');
    let c = at(i);
    if c == '/' && at(i + 1) == '/' {
        let line = chars[i..].iter().position(|c| *c == '\n');
        return Some(line.map_or(chars.len(), |end| i + end));
    }
    if c == '/' && at(i + 1) == '*' {
        let (mut depth, mut i) = (0, i);
        while i < chars.len() {
            if chars[i] == '/' && at(i + 1) == '*' {
                depth += 1;
                i += 2;
            } else if chars[i] == '*' && at(i + 1) == '/' {
                depth -= 1;
                i += 2;
                if depth == 0 {
                    break;
                }
            } else {
                i += 1;
            }
        }
        return Some(i);
    }
    let prefixed = usize::from(c == 'b' || c == 'c');
    if (c == 'r' || prefixed == 1 && at(i + 1) == 'r')
        && let Some(end) = raw_string_end(chars, i + 1 + prefixed)
    {
        return Some(end);
    }
    match (c, at(i + 1), at(i + 2)) {
        ('"', _, _) => Some(after_quoted(chars, i + 1, '"')),
        ('b' | 'c', '"', _) => Some(after_quoted(chars, i + 2, '"')),
        ('b', '\'', _) => Some(after_quoted(chars, i + 2, '\'')),
        ('\'', '\\', _) | ('\'', _, '\'') => Some(after_quoted(chars, i + 1, '\'')),
        _ => None,
    }
}

/// The index after the `close` that ends a quoted literal whose text starts at `i` (escapes
/// skipped).
fn after_quoted(chars: &[char], mut i: usize, close: char) -> usize {
    while i < chars.len() {
        match chars[i] {
            '\\' => i += 2,
            c if c == close => return i + 1,
            _ => i += 1,
        }
    }
    i
}

/// The index after a raw string whose hashes and opening quote start at `i`, if it is one.
fn raw_string_end(chars: &[char], mut i: usize) -> Option<usize> {
    let mut hashes = 0;
    while chars.get(i) == Some(&'#') {
        hashes += 1;
        i += 1;
    }
    if chars.get(i) != Some(&'"') {
        return None;
    }
    i += 1;
    while i < chars.len() {
        if chars[i] == '"' && (1..=hashes).all(|k| chars.get(i + k) == Some(&'#')) {
            return Some(i + 1 + hashes);
        }
        i += 1;
    }
    Some(i)
}

/// The paths `text` (the file of the module at `at`) writes, outside its tests.
fn paths_of(text: &str, at: &[String]) -> Paths {
    let tokens = tokens(text);
    let mut found = Paths::default();
    // Inline modules open around the cursor: (name, the brace depth inside them).
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut depth = 0usize;
    let mut i = 0;
    let ident = |i: usize| match tokens.get(i) {
        Some(Token::Ident(name)) => Some(name.as_str()),
        _ => None,
    };
    let is = |i: usize, token: Token| tokens.get(i) == Some(&token);
    while i < tokens.len() {
        match &tokens[i] {
            Token::Punct('#') if is_cfg_test(&tokens, i) => {
                i = item_end(&tokens, attribute_end(&tokens, i));
            }
            Token::Punct('{') => {
                depth += 1;
                i += 1;
            }
            Token::Punct('}') => {
                if inline.last().is_some_and(|(_, inside)| *inside == depth) {
                    inline.pop();
                }
                depth = depth.saturating_sub(1);
                i += 1;
            }
            Token::Ident(word)
                if word == "mod" && ident(i + 1).is_some() && is(i + 2, Token::Punct('{')) =>
            {
                inline.push((ident(i + 1).unwrap().to_owned(), depth + 1));
                i += 2;
            }
            Token::Ident(word) if word == "use" => {
                let mut trees = Vec::new();
                i = use_tree(&tokens, i + 1, Vec::new(), &mut trees);
                for (path, alias) in trees {
                    let path = relative_to_file(path, &inline);
                    let glob = path.last().is_some_and(|s| s == "*");
                    if glob && absolute_path(&path[..path.len() - 1], at) == Some(Vec::new()) {
                        found.root_glob = true;
                    }
                    found.uses.push((path, alias));
                }
            }
            Token::Ident(word) => {
                // A path: its segments while `::` follows.
                let mut path = vec![word.clone()];
                let mut j = i + 1;
                while is(j, Token::Path) {
                    match ident(j + 1) {
                        Some(next) => path.push(next.to_owned()),
                        None => break,
                    }
                    j += 2;
                }
                let head = path[0].as_str();
                if matches!(head, "crate" | "super" | "self") && path.len() > 1 {
                    // `$crate::m` (a macro's) is `crate::m`.
                    found.written.push(relative_to_file(path, &inline));
                } else if path.len() > 1 {
                    found.bare_path_heads.insert(path[0].clone());
                } else if !(i > 0 && is(i - 1, Token::Path)) {
                    found.bare_idents.insert(path[0].clone());
                }
                i = j;
            }
            _ => i += 1,
        }
    }
    found
}

/// A path written inside inline modules (`mod inner { use super::x; }`) as the file's module
/// would write it: each inline module's `self` is `self::inner`, its `super` the file's `self`.
fn relative_to_file(path: Vec<String>, inline: &[(String, usize)]) -> Vec<String> {
    if inline.is_empty() || !matches!(path[0].as_str(), "self" | "super") {
        return path;
    }
    let mut here: Vec<String> = inline.iter().map(|(name, _)| name.clone()).collect();
    let mut rest = &path[..];
    if rest[0] == "self" {
        rest = &rest[1..];
    }
    let mut climbed = 0;
    while rest.first().is_some_and(|s| s == "super") {
        if here.pop().is_none() {
            climbed += 1;
        }
        rest = &rest[1..];
    }
    let mut out = vec!["self".to_owned()];
    out.extend(std::iter::repeat_n("super".to_owned(), climbed));
    out.extend(here);
    out.extend(rest.iter().cloned());
    out
}

/// Reads the use tree at `i` (after `use` or inside a group) under `prefix` into `out`: each
/// path with the name it binds. Returns the index after the tree (and its `;`).
fn use_tree(
    tokens: &[Token],
    mut i: usize,
    mut prefix: Vec<String>,
    out: &mut Vec<(Vec<String>, Option<String>)>,
) -> usize {
    if tokens.get(i) == Some(&Token::Path) {
        // `use ::other_crate::..`: another crate's.
        prefix.push("::".into());
        i += 1;
    }
    loop {
        match tokens.get(i) {
            Some(Token::Ident(name)) => {
                prefix.push(name.clone());
                i += 1;
                if tokens.get(i) == Some(&Token::Path) {
                    i += 1;
                    continue;
                }
                let mut alias = prefix.last().cloned();
                if tokens.get(i) == Some(&Token::Ident("as".into())) {
                    if let Some(Token::Ident(name)) = tokens.get(i + 1) {
                        alias = Some(name.clone());
                    }
                    i += 2;
                }
                if alias.as_deref() == Some("self") && prefix.len() > 1 {
                    prefix.pop();
                    alias = prefix.last().cloned();
                }
                out.push((prefix, alias));
                break;
            }
            Some(Token::Punct('*')) => {
                prefix.push("*".into());
                out.push((prefix, None));
                i += 1;
                break;
            }
            Some(Token::Punct('{')) => {
                i += 1;
                // An empty group (`use m::{};`) still names its path.
                if tokens.get(i) == Some(&Token::Punct('}')) {
                    out.push((prefix.clone(), None));
                }
                while !matches!(tokens.get(i), Some(Token::Punct('}')) | None) {
                    i = use_tree(tokens, i, prefix.clone(), out);
                    if tokens.get(i) == Some(&Token::Punct(',')) {
                        i += 1;
                    }
                }
                i += 1;
                break;
            }
            _ => break,
        }
    }
    if tokens.get(i) == Some(&Token::Punct(';')) {
        i += 1;
    }
    i
}

/// Whether the attribute at `i` (`#`) is `#[cfg(test)]` or `#[cfg(all(test, ..))]`: its item is
/// a test's.
fn is_cfg_test(tokens: &[Token], i: usize) -> bool {
    let want = |k: usize, token: Token| tokens.get(i + k) == Some(&token);
    let word = |k: usize, w: &str| want(k, Token::Ident(w.into()));
    want(1, Token::Punct('['))
        && word(2, "cfg")
        && want(3, Token::Punct('('))
        && (word(4, "test") && want(5, Token::Punct(')'))
            || word(4, "all") && want(5, Token::Punct('(')) && word(6, "test"))
}

/// The index after the attribute at `i` (`#[..]`).
fn attribute_end(tokens: &[Token], i: usize) -> usize {
    let mut depth = 0;
    for (k, token) in tokens.iter().enumerate().skip(i + 1) {
        match token {
            Token::Punct('[') => depth += 1,
            Token::Punct(']') => {
                depth -= 1;
                if depth == 0 {
                    return k + 1;
                }
            }
            _ => {}
        }
    }
    tokens.len()
}

/// The index after the item that starts at `i` (its further attributes included): its `;`, or
/// the `}` that closes its first block.
fn item_end(tokens: &[Token], mut i: usize) -> usize {
    while tokens.get(i) == Some(&Token::Punct('#')) {
        i = attribute_end(tokens, i);
    }
    let mut depth = 0i32;
    while i < tokens.len() {
        match tokens[i] {
            Token::Punct('{') | Token::Punct('(') | Token::Punct('[') => depth += 1,
            Token::Punct('}') | Token::Punct(')') | Token::Punct(']') => {
                depth -= 1;
                if depth == 0 && tokens[i] == Token::Punct('}') {
                    return i + 1;
                }
            }
            Token::Punct(';') if depth == 0 => return i + 1,
            _ => {}
        }
        i += 1;
    }
    i
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
/// modules it names (`host → remote → call → host` was such a circle, and `sandbox`'s
/// `store ⇄ imports`, written with `super::`, one the first reader missed).
#[test]
fn no_crate_of_the_host_has_an_import_circle_between_its_modules() {
    for src in host_source_dirs() {
        let graph = module_graph(&src);
        assert_eq!(circle(&graph), None, "{}: an import circle", src.display());
    }
    // The check itself finds a circle where there is one: in a graph, and in a crate whose
    // circle is written with `super::` only.
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
    assert_eq!(
        circle(&module_graph(&planted_crate())),
        Some(vec!["a".into(), "b".into(), "c".into(), "a".into()])
    );
}

/// A crate written for the reader: each arrow of [`PLANTED_ARROWS`] made by one form of path,
/// `a → b → c → a` with `super::` alone, and every form that must not count (comments, strings,
/// raw strings, chars, lifetimes, tests, other crates) naming `z`, which nothing may reach.
fn planted_crate() -> PathBuf {
    let src = crate::support::temp_dir("layout-planted").join("src");
    let files: &[(&str, &str)] = &[
        (
            "lib.rs",
            "mod a; mod b; mod c; mod d; mod e; mod f; mod g; mod h; mod i; mod j; mod z;\n\
             pub use d::Thing;\nuse g::Leaf;\npub struct Root;\n",
        ),
        (
            "a.rs",
            "use super::b::Item;\n\
             // crate::z in a comment\n\
             /* crate::z /* nested */ crate::z */\n\
             const S: &str = \"crate::z \\\" crate::z\";\n\
             const R: &str = r#\"crate::z \" crate::z\"#;\n\
             const B: &[u8] = b\"crate::z\";\n\
             const C: char = '\\'';\n\
             fn keep<'a>(x: &'a str) -> &'a str { x }\n\
             fn root() -> super::Root { super::Root }\n\
             #[cfg(test)]\nmod tests {\n    use crate::z::X;\n}\n\
             #[cfg(test)]\nuse crate::z;\n\
             #[cfg(all(test, unix))]\nfn only_tests() { crate::z::f() }\n",
        ),
        ("b.rs", "use super::{c::{X, Y as W}, Thing};\n"),
        (
            "c.rs",
            "pub fn k() -> u8 { super::a::h() + crate::e::g() }\nuse ::std::z::Other;\n",
        ),
        (
            "d/mod.rs",
            "mod inner;\nuse self::inner::Y;\nmod nested {\n    use super::super::h::X;\n}\n",
        ),
        ("d/inner.rs", "use super::super::f::Thing2;\n"),
        ("e.rs", "use super::*;\nfn z() -> Thing { i::make() }\n"),
        ("f.rs", "macro_rules! m {\n    () => { $crate::g::X };\n}\n"),
        (
            "g.rs",
            "use std::collections::BTreeMap;\npub struct Leaf;\n",
        ),
        ("h.rs", "pub use crate::{g::{self, X as Y}, i::{}};\n"),
        ("i.rs", "fn q() -> super::Leaf { todo!() }\n"),
        ("j.rs", "mod k;\n#[cfg(test)]\nmod tests;\n"),
        ("j/k.rs", "use super::super::g::Leaf;\n"),
        ("j/tests.rs", "use crate::z::X;\n"),
        ("z.rs", "use super::a;\n"),
    ];
    for (name, text) in files {
        let path = src.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    src
}

/// The arrows of [`planted_crate`], each worked out from the form that makes it: `super::b`
/// (a), a nested group and an item the root re-exports (b), `super::a` and `crate::e` written
/// where used (c), `super::super::` from a file below `d` and from a module inline in `d`'s
/// mod.rs (d), a glob of the root then a re-exported item and a bare module path (e), `$crate::`
/// in a macro (f), a group holding `self` and an empty group (h), an item the root imports
/// privately (i), a file below a module that is a file and a dir (`j.rs`, `j/k.rs`; its
/// `tests.rs` is its tests); `z` names `a` and is named by none.
const PLANTED_ARROWS: &[(&str, &[&str])] = &[
    ("a", &["b"]),
    ("b", &["c", "d"]),
    ("c", &["a", "e"]),
    ("d", &["f", "h"]),
    ("e", &["d", "i"]),
    ("f", &["g"]),
    ("g", &[]),
    ("h", &["g", "i"]),
    ("i", &["g"]),
    ("j", &["g"]),
    ("z", &["a"]),
];

/// The reader sees every form of `use` and path, and nothing in comments, literals or tests.
#[test]
fn the_module_graph_reads_every_form_of_use_and_path() {
    let expected: BTreeMap<String, BTreeSet<String>> = PLANTED_ARROWS
        .iter()
        .map(|(m, named)| {
            (
                (*m).to_owned(),
                named.iter().map(|n| (*n).to_owned()).collect(),
            )
        })
        .collect();
    assert_eq!(module_graph(&planted_crate()), expected);
}
