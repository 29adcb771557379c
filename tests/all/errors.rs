//! Errors a person reads once: a variant's message says what failed and never repeats its
//! cause; the cause is its `#[source]`, printed once by whatever shows it (the binary's edge,
//! a front, a log line: `aura_contract::caused`). Checked in the source of every host crate and
//! in what the binary prints for refusals a person meets first.

use std::path::Path;
use std::process::{Command, Output};

use crate::layout::{host_source_dirs, sources};
use crate::support::temp_dir;

/// The `#[error("…")]` messages of `text` whose variant has a cause (`#[from]`, `#[source]`
/// or a field named `source`) that the message also prints, each as `line: message`.
fn messages_repeating_their_cause(text: &str) -> Vec<String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut found = Vec::new();
    for (at, line) in lines.iter().enumerate() {
        let Some(start) = line.find("#[error(") else {
            continue;
        };
        // The attribute, over as many lines as it takes.
        let mut attribute = line[start..].to_owned();
        let mut end = at;
        while !attribute.contains(")]") && end + 1 < lines.len() {
            end += 1;
            attribute.push_str(lines[end].trim());
        }
        if attribute.contains("transparent") {
            continue;
        }
        // The variant: up to the next attribute of a message, or the line that closes it.
        let mut variant = String::new();
        for next in &lines[end + 1..] {
            if next.contains("#[error(") {
                break;
            }
            variant.push_str(next.trim());
            variant.push('\n');
            let closes = next.trim() == "}," || next.trim() == "}";
            let one_line = next.trim_end().ends_with("),") && next.contains('(');
            if closes || one_line {
                break;
            }
        }
        let cause = cause_field(&variant);
        if let Some(field) = cause
            && (attribute.contains(&format!("{{{field}}}"))
                || attribute.contains(&format!("{{{field}:")))
        {
            found.push(format!("{}: {}", at + 1, attribute.trim()));
        }
    }
    found
}

/// The field that is a variant's cause: `0` for a tuple variant's `#[from]`/`#[source]`, the
/// name of a named one, or `source`.
fn cause_field(variant: &str) -> Option<String> {
    for marker in ["#[from]", "#[source]"] {
        let Some(at) = variant.find(marker) else {
            continue;
        };
        let before = &variant[..at];
        if before.trim_end().ends_with('(') {
            return Some("0".to_owned());
        }
        let after = variant[at + marker.len()..].trim_start();
        let name: String = after
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let rest = after[name.len()..].trim_start();
        if rest.starts_with(':') && !rest.starts_with("::") {
            return Some(name);
        }
        return Some("0".to_owned());
    }
    variant
        .lines()
        .any(|line| line.starts_with("source:"))
        .then(|| "source".to_owned())
}

#[test]
fn the_scan_finds_a_message_that_repeats_its_cause() {
    let repeating = r#"
    #[error("cannot read {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("the run stopped: {0}")]
    Journal(#[from] JournalError),
    #[error("scenario is not valid JSON: {0}")]
    Json(#[from] aura_contract::canonical::JsonError),
    #[error("{agent} needs {callee}: {error}")]
    Callee {
        agent: String,
        #[source]
        error: Box<PluginError>,
    },
"#;
    assert_eq!(messages_repeating_their_cause(repeating).len(), 4);
    let once = r#"
    #[error("cannot read {path}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("the run stopped")]
    Journal(#[from] JournalError),
    #[error(transparent)]
    Key(#[from] SigningError),
    #[error("scenario is inconsistent: {0}")]
    Inconsistent(String),
"#;
    assert_eq!(messages_repeating_their_cause(once), Vec::<String>::new());
}

#[test]
fn no_error_message_of_the_host_repeats_its_cause() {
    let mut found = Vec::new();
    for dir in host_source_dirs() {
        for file in sources(&dir) {
            let text = std::fs::read_to_string(&file).unwrap();
            for hit in messages_repeating_their_cause(&text) {
                found.push(format!("{}:{hit}", file.display()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "messages that print their cause, which the chain prints again: {found:#?}"
    );
}

fn aura(data: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_aura"))
        .args(args)
        .env("AURA_DATA_DIR", data)
        .env_remove("RUST_LOG")
        .output()
        .unwrap()
}

/// The segments of an error line (`what: why: why`) that appear more than once.
fn repeated_segments(line: &str) -> Vec<&str> {
    let segments: Vec<&str> = line.split(": ").collect();
    let mut repeated: Vec<&str> = segments
        .iter()
        .enumerate()
        .filter(|(at, segment)| segment.len() >= 8 && segments[..*at].contains(segment))
        .map(|(_, segment)| *segment)
        .collect();
    repeated.dedup();
    repeated
}

#[test]
fn the_binarys_refusals_print_each_cause_once() {
    let dir = temp_dir("errors-once");
    let cut = dir.join("cut.json");
    std::fs::write(&cut, "{\"scenario\":").unwrap();
    let not_a_dir = dir.join("a-file");
    std::fs::write(&not_a_dir, "").unwrap();
    let data = dir.join("data");
    let missing = dir.join("missing.json");
    let cases: Vec<(Vec<String>, &Path)> = vec![
        (vec!["run".into(), missing.display().to_string()], &data),
        (vec!["run".into(), cut.display().to_string()], &data),
        (
            vec!["run".into(), "scenarios/day.json".into()],
            not_a_dir.as_path(),
        ),
        (vec!["report".into(), missing.display().to_string()], &data),
    ];
    for (args, data_dir) in &cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let output = aura(data_dir, &args);
        assert!(!output.status.success(), "aura {args:?} succeeded");
        let stderr = String::from_utf8_lossy(&output.stderr);
        let errors: Vec<&str> = stderr
            .lines()
            .filter(|line| line.starts_with("aura: "))
            .collect();
        assert!(
            !errors.is_empty(),
            "aura {args:?} printed no error: {stderr}"
        );
        for line in errors {
            assert_eq!(
                repeated_segments(line),
                Vec::<&str>::new(),
                "aura {args:?} repeats a cause: {line}"
            );
        }
    }
    // Worked out by hand: the scenario's path, then the OS's reason, once.
    let output = aura(&data, &["run", &missing.display().to_string()]);
    assert_eq!(
        String::from_utf8_lossy(&output.stderr).trim_end(),
        format!(
            "aura: cannot read scenario {}: No such file or directory (os error 2)",
            missing.display()
        )
    );
}
