//! The docs as a reader follows them: every relative link of the README, BENCHMARKS.md and
//! `docs/` leads to a file of the tree (and a link to a heading, to a heading of that page),
//! and every `aura` command they show (in a code block, or in prose as inline code) names
//! subcommands the binary has and flags those subcommands take, as `aura … --help` says.
//! (`tests/all/recipes.rs` does the same for the `just` recipes they name.) A page that
//! names a flag since renamed, or links a file since moved, fails here instead of misleading.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The workspace root.
fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The pages a reader reads: the README, BENCHMARKS.md and every page of `docs/`.
fn pages() -> Vec<PathBuf> {
    let mut pages = vec![
        workspace().join("README.md"),
        workspace().join("BENCHMARKS.md"),
    ];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(workspace().join("docs"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    pages.extend(docs);
    pages
}

/// A page's text with its fenced code blocks blanked (links and inline code are read in
/// prose only), and the blocks' lines apart.
fn prose_and_code(text: &str) -> (String, Vec<String>) {
    let (mut prose, mut code) = (String::new(), Vec::new());
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            prose.push('\n');
            continue;
        }
        match fenced {
            true => {
                code.push(line.to_owned());
                prose.push('\n');
            }
            false => {
                prose.push_str(line);
                prose.push('\n');
            }
        }
    }
    (prose, code)
}

/// The targets of a page's markdown links, `[text](target)`.
fn links(prose: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = prose;
    while let Some(at) = rest.find("](") {
        rest = &rest[at + 2..];
        if let Some(end) = rest.find(')') {
            let target = rest[..end].trim();
            if !target.is_empty() && !target.contains(char::is_whitespace) {
                out.push(target.to_owned());
            }
        }
    }
    out
}

/// A heading's anchor as GitHub makes it: lower case, spaces to hyphens, punctuation other
/// than hyphens and underscores dropped.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The anchors of a page's headings.
fn anchors(text: &str) -> BTreeSet<String> {
    let (prose, _) = prose_and_code(text);
    prose
        .lines()
        .filter(|line| line.starts_with('#'))
        .map(|line| anchor(line.trim_start_matches('#')))
        .collect()
}

#[test]
fn every_relative_link_of_the_docs_leads_somewhere() {
    let mut broken = Vec::new();
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        let (prose, _) = prose_and_code(&text);
        for target in links(&prose) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let (path, fragment) = target.split_once('#').unwrap_or((&target, ""));
            let file = match path.is_empty() {
                true => page.clone(),
                false => page.parent().unwrap().join(path),
            };
            if !file.exists() {
                broken.push(format!("{}: `{target}`: no such file", page.display()));
                continue;
            }
            if !fragment.is_empty() && file.extension().is_some_and(|e| e == "md") {
                let headings = anchors(&std::fs::read_to_string(&file).unwrap());
                if !headings.contains(fragment) {
                    broken.push(format!("{}: `{target}`: no such heading", page.display()));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

/// Splits a shell line into words: quotes kept together (their text unquoted), `#` to the
/// end of the line a comment.
fn words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quote: Option<char> = None;
    let mut started = false;
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                started = true;
            }
            (None, '#') if !started => break,
            (None, c) if c.is_whitespace() => {
                if started {
                    words.push(std::mem::take(&mut word));
                    started = false;
                }
            }
            (None, c) => {
                word.push(c);
                started = true;
            }
        }
    }
    if started {
        words.push(word);
    }
    words
}

/// The `aura` commands a page shows: each a list of words after `aura` (or `cargo run --`),
/// from its code blocks' lines and its prose's inline code.
fn commands(text: &str) -> Vec<Vec<String>> {
    let (prose, code) = prose_and_code(text);
    // A line that ends in `\` goes on on the next.
    let mut lines: Vec<String> = Vec::new();
    let mut going_on = false;
    for line in code {
        let (text, more) = match line.trim_end().strip_suffix('\\') {
            Some(text) => (text.to_owned(), true),
            None => (line, false),
        };
        match (going_on, lines.last_mut()) {
            (true, Some(last)) => last.push_str(&format!(" {}", text.trim())),
            _ => lines.push(text),
        }
        going_on = more;
    }
    let mut rest = prose.as_str();
    while let Some(at) = rest.find('`') {
        rest = &rest[at + 1..];
        let Some(end) = rest.find('`') else { break };
        lines.push(rest[..end].to_owned());
        rest = &rest[end + 1..];
    }
    let mut out = Vec::new();
    for line in lines {
        let line = line.trim().trim_start_matches("$ ");
        let words = words(line);
        // Each command of a line (`a && b`, `a | b`, `a &`).
        for words in words.split(|w| ["&&", "||", "|", ";", "&"].contains(&w.as_str())) {
            let words: Vec<&str> = words.iter().map(String::as_str).collect();
            let start = match words.as_slice() {
                // (A line of output, `aura test-agent: …`, or a drawing, `aura (src/…)`.)
                ["aura", next, ..] if next.ends_with(':') || next.starts_with('(') => continue,
                ["aura", ..] => 1,
                ["cargo", "run", "--", ..] => 3,
                ["cargo", "run", "--release", "--", ..] => 4,
                _ => continue,
            };
            if words.len() > start {
                out.push(words[start..].iter().map(|w| w.to_string()).collect());
            }
        }
    }
    out
}

/// What `aura <path> --help` prints (cached).
fn help(path: &[String], cache: &mut BTreeMap<Vec<String>, Option<String>>) -> Option<String> {
    cache
        .entry(path.to_vec())
        .or_insert_with(|| {
            let output = std::process::Command::new(env!("CARGO_BIN_EXE_aura"))
                .args(path)
                .arg("--help")
                .output()
                .unwrap();
            output
                .status
                .success()
                .then(|| String::from_utf8_lossy(&output.stdout).into_owned())
        })
        .clone()
}

/// The subcommands a help text lists.
fn subcommands(help: &str) -> BTreeSet<String> {
    help.lines()
        .skip_while(|line| !line.starts_with("Commands:"))
        .skip(1)
        .take_while(|line| line.starts_with("  "))
        .filter_map(|line| line.split_whitespace().next().map(str::to_owned))
        .collect()
}

/// Whether `help` lists the long flag `flag` (`--name`).
fn takes(help: &str, flag: &str) -> bool {
    help.match_indices(flag).any(|(at, _)| {
        let after = help[at + flag.len()..].chars().next();
        let before = help[..at].chars().last();
        matches!(before, Some(' ' | ',' | '['))
            && matches!(after, None | Some(' ' | '=' | '\n' | ',' | ']' | '>'))
    })
}

/// Whether `help` shows the long flag `flag` taking a value (`--flag <VALUE>`).
fn takes_value(help: &str, flag: &str) -> bool {
    help.lines().any(|line| {
        let line = line.trim_start();
        // (`-o, --out <FILE>`: the long one after the short.)
        let line = match line.as_bytes() {
            [b'-', _, b',', b' ', ..] => &line[4..],
            _ => line,
        };
        line.strip_prefix(flag)
            .is_some_and(|rest| rest.starts_with(" <"))
    })
}

/// The long flags a word names (`--seed`, `[--seed N]`, `--on=X`), `--` itself left out.
fn flags_of(word: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = word;
    while let Some(at) = rest.find("--") {
        let name: String = rest[at + 2..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
            .collect();
        if !name.is_empty() && name.chars().next().is_some_and(|c| c.is_ascii_alphabetic()) {
            out.push(format!("--{name}"));
        }
        rest = &rest[at + 2 + name.len()..];
    }
    out
}

/// The long flags `word` names that `help` does not list.
fn unknown_flags(word: &str, help: &str) -> Vec<String> {
    flags_of(word)
        .into_iter()
        .filter(|flag| !takes(help, flag))
        .collect()
}

/// What is wrong with `command` on `page`, `aura <path>` `what`.
fn said(page: &Path, command: &[String], path: &[String], what: &str) -> String {
    format!(
        "{}: `aura {}`: `aura {}` {what}",
        page.display(),
        command.join(" "),
        path.join(" ")
    )
}

#[test]
fn every_aura_command_the_docs_show_has_its_subcommands_and_flags() {
    let mut cache = BTreeMap::new();
    let mut wrong = Vec::new();
    let mut checked = 0;
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        for command in commands(&text) {
            // The subcommands named, as far as the binary has them.
            let mut path: Vec<String> = Vec::new();
            let mut at = 0;
            while let Some(word) = command.get(at) {
                let Some(text) = help(&path, &mut cache) else {
                    break;
                };
                let listed = subcommands(&text);
                if listed.is_empty() {
                    break;
                }
                // An option before the subcommand (`aura --data-dir DIR fleet host`).
                if word.starts_with('-') {
                    checked += flags_of(word).len();
                    let said =
                        |flag: String| said(&page, &command, &path, &format!("takes no {flag}"));
                    wrong.extend(unknown_flags(word, &text).into_iter().map(said));
                    let valued = flags_of(word)
                        .first()
                        .is_some_and(|flag| !word.contains('=') && takes_value(&text, flag));
                    at += if valued { 2 } else { 1 };
                    continue;
                }
                if listed.contains(word) {
                    path.push(word.clone());
                    at += 1;
                    continue;
                }
                let alternatives: Vec<&str> = word.split('|').collect();
                let placeholder = word.starts_with('<') || word.starts_with('[');
                match alternatives.iter().all(|w| listed.contains(*w)) {
                    true => at += 1,
                    false if placeholder => {}
                    false => wrong.push(said(
                        &page,
                        &command,
                        &path,
                        &format!("has no subcommand `{word}`"),
                    )),
                }
                break;
            }
            let Some(text) = help(&path, &mut cache) else {
                wrong.push(format!(
                    "{}: `aura {}`: no such command",
                    page.display(),
                    path.join(" ")
                ));
                continue;
            };
            for word in &command[at..] {
                checked += flags_of(word).len();
                let said = |flag: String| said(&page, &command, &path, &format!("takes no {flag}"));
                wrong.extend(unknown_flags(word, &text).into_iter().map(said));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    // (98 flags at this commit.)
    assert!(
        checked > 50,
        "only {checked} flags read: the reader of commands is broken"
    );
}

#[test]
fn the_readers_see_words_flags_and_anchors() {
    assert_eq!(
        words("aura call wellness x '{\"a\": 1}' # the call"),
        vec!["aura", "call", "wellness", "x", "{\"a\": 1}"]
    );
    assert_eq!(flags_of("[--seed"), vec!["--seed"]);
    assert_eq!(flags_of("--on=WATCH=cmd"), vec!["--on"]);
    assert!(flags_of("--").is_empty());
    assert_eq!(
        anchor("## Run it live (`aura live`)".trim_start_matches('#')),
        "run-it-live-aura-live"
    );
    assert!(takes("      --seed <SEED>  the seed", "--seed"));
    assert!(takes_value("      --seed <SEED>  the seed", "--seed"));
    assert!(takes_value("  -o, --out <FILE>  where", "--out"));
    assert!(!takes_value("      --json  as JSON", "--json"));
    assert!(!takes("      --seeds <SEED>", "--seed"));
    assert_eq!(
        commands("run `aura live --positions` and\n```sh\ncargo run -- run x.json --seed 7\n```\n"),
        vec![
            vec![
                "run".to_owned(),
                "x.json".to_owned(),
                "--seed".to_owned(),
                "7".to_owned()
            ],
            vec!["live".to_owned(), "--positions".to_owned()],
        ]
    );
}
