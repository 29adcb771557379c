//! `aura report`: a picture of a run, one self-contained HTML page.
//!
//! It owns reading a data dir's records (traces.jsonl, the quarantine log, narrations.jsonl)
//! for people and laying them out: a kept narration's text is the rationale shown (the
//! template's beside it); a timeline with a lane per surface and one mark per decision (its
//! rationale, signals, outcome and the proposals it beat on hover or click), the questions and
//! answers, the quarantine records, and the fuel each tick's decisions burned. The page loads
//! nothing from the network: styles, script and data are inline.
//!
//! It must not decide anything nor change a record (it reads them), and it must never put
//! record text into the page as markup: the records are embedded as JSON (with `<`, `>` and
//! `&` escaped, so no text can close the script element) and the page's script sets them as
//! text. Reading is bounded ([`REPORT_RECORDS_MAX`], [`REPORT_LINE_BYTES_MAX`]); a torn last
//! line (a crash mid-write) is skipped and counted, never a failure.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use aura_contract::limits::{REPORT_LINE_BYTES_MAX, REPORT_RECORDS_MAX};
use aura_host::journal::{QUARANTINE_PATH, TRACES_PATH};

use crate::logs::NARRATIONS_PATH;

/// Why a report could not be written.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// A record file could not be read (a missing quarantine log is not an error).
    #[error("cannot read {path}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A complete line of a record file is not JSON: the file is not aura's.
    #[error("{path}:{line}: not a JSON record")]
    NotJson {
        /// The file.
        path: PathBuf,
        /// Its line, from 1.
        line: usize,
        /// The parser's message.
        source: serde_json::Error,
    },
    /// A record file holds more than the report reads.
    #[error("{path} holds more than {max} records (REPORT_RECORDS_MAX)")]
    TooMany {
        /// The file.
        path: PathBuf,
        /// The bound.
        max: usize,
    },
    /// A line is longer than any record aura writes.
    #[error("{path}:{line}: a line longer than {max} bytes is not an aura record")]
    LineTooLong {
        /// The file.
        path: PathBuf,
        /// Its line, from 1.
        line: usize,
        /// The bound.
        max: usize,
    },
    /// The page could not be written.
    #[error("cannot write {path}")]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// The records of one data dir, as read.
#[derive(Debug, Default)]
pub struct Records {
    /// traces.jsonl, in order.
    pub traces: Vec<Value>,
    /// The quarantine log, in order.
    pub quarantine: Vec<Value>,
    /// Torn last lines skipped (a crash mid-write), over every file.
    pub torn: usize,
    /// Traces whose rationale is the narrator's (a kept narration in narrations.jsonl).
    pub narrated: usize,
}

impl Records {
    /// Reads `data_dir`'s traces and quarantine log.
    pub fn read(data_dir: &Path) -> Result<Self, ReportError> {
        let mut records = Records::default();
        let (traces, torn) = read_jsonl(&data_dir.join(TRACES_PATH), true)?;
        records.traces = traces;
        records.torn += torn;
        let (quarantine, torn) = read_jsonl(&data_dir.join(QUARANTINE_PATH), false)?;
        records.quarantine = quarantine;
        records.torn += torn;
        let (narrations, torn) = read_jsonl(&data_dir.join(NARRATIONS_PATH), false)?;
        records.torn += torn;
        records.narrate(&narrations);
        Ok(records)
    }

    /// Puts each kept narration's text in its trace's `rationale`, the template's in
    /// `template_rationale`; a narration of no trace here is ignored.
    fn narrate(&mut self, narrations: &[Value]) {
        for narration in narrations {
            let (Some("kept"), Some(id), Some(text)) = (
                narration["outcome"].as_str(),
                narration["trace_id"].as_str(),
                narration["rationale"].as_str(),
            ) else {
                continue;
            };
            let trace = self
                .traces
                .iter_mut()
                .find(|t| t["trace_id"] == id && t["run"] == narration["run"]);
            if let Some(trace) = trace {
                let template = std::mem::replace(&mut trace["rationale"], json!(text));
                trace["template_rationale"] = template;
                self.narrated += 1;
            }
        }
    }
}

/// The JSON lines of `path`; a missing file is empty unless `required`. A last line without
/// its newline is torn: skipped and counted.
fn read_jsonl(path: &Path, required: bool) -> Result<(Vec<Value>, usize), ReportError> {
    let read_error = |source| ReportError::Read {
        path: path.to_owned(),
        source,
    };
    let file = match std::fs::File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && !required => {
            return Ok((Vec::new(), 0));
        }
        Err(e) => return Err(read_error(e)),
    };
    let mut reader = BufReader::new(file);
    let mut records = Vec::new();
    let mut line = Vec::new();
    let mut torn = 0;
    for number in 1.. {
        line.clear();
        // Bounded: at most one byte past the bound is read into `line`.
        let limit = u64::try_from(REPORT_LINE_BYTES_MAX + 1).unwrap_or(u64::MAX);
        let read = std::io::Read::take(&mut reader, limit)
            .read_until(b'\n', &mut line)
            .map_err(read_error)?;
        if read == 0 {
            break;
        }
        if line.last() != Some(&b'\n') {
            if line.len() > REPORT_LINE_BYTES_MAX {
                return Err(ReportError::LineTooLong {
                    path: path.to_owned(),
                    line: number,
                    max: REPORT_LINE_BYTES_MAX,
                });
            }
            torn += 1;
            break;
        }
        if records.len() == REPORT_RECORDS_MAX {
            return Err(ReportError::TooMany {
                path: path.to_owned(),
                max: REPORT_RECORDS_MAX,
            });
        }
        let record = serde_json::from_slice(&line).map_err(|source| ReportError::NotJson {
            path: path.to_owned(),
            line: number,
            source,
        })?;
        records.push(record);
    }
    Ok((records, torn))
}

/// Writes the report of `data_dir` to `out`; returns what it read.
pub fn write(data_dir: &Path, out: &Path) -> Result<Records, ReportError> {
    let records = Records::read(data_dir)?;
    std::fs::write(out, render(&records)).map_err(|source| ReportError::Write {
        path: out.to_owned(),
        source,
    })?;
    Ok(records)
}

/// The page for `records`.
pub fn render(records: &Records) -> String {
    let data = json!({
        "traces": records.traces,
        "quarantine": records.quarantine,
        "torn": records.torn,
    });
    PAGE.replace("/*DATA*/null", &script_safe_json(&data))
}

/// `value` as JSON that cannot end a `<script>` element or start markup inside one: `<`, `>`
/// and `&` as `\u` escapes (still the same JSON).
fn script_safe_json(value: &Value) -> String {
    let text = value.to_string();
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            // JSON allows them raw; JavaScript source before ES2019 did not.
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}

/// The page: inline style and script; the script reads the records from the JSON above and
/// builds the page with `textContent` only.
const PAGE: &str = include_str!("report.html");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_text_cannot_close_the_script_or_become_markup() {
        let hostile = "</script><img src=x onerror=alert(1)>&amp;\u{2028}";
        let records = Records {
            traces: vec![json!({"rationale": hostile})],
            ..Records::default()
        };
        let page = render(&records);
        assert!(!page.contains("<img"));
        assert_eq!(
            page.matches("</script>").count(),
            PAGE.matches("</script>").count()
        );
        // The embedded JSON still reads back as the same text.
        let start = page.find(r#"{"quarantine""#).unwrap();
        let end = start + page[start..].find("</script>").unwrap();
        let data: Value =
            serde_json::from_str(page[start..end].trim_end().trim_end_matches(';')).unwrap();
        assert_eq!(data["traces"][0]["rationale"], hostile);
    }

    #[test]
    fn a_kept_narration_is_the_rationale_shown_and_the_template_stays_beside_it() {
        let mut records = Records {
            traces: vec![
                json!({"trace_id": "tr_1", "run": "r", "rationale": "template one"}),
                json!({"trace_id": "tr_2", "run": "r", "rationale": "template two"}),
            ],
            ..Records::default()
        };
        records.narrate(&[
            json!({"trace_id": "tr_1", "run": "r", "outcome": "kept", "rationale": "words"}),
            json!({"trace_id": "tr_2", "run": "r", "outcome": "discarded", "reason": "x"}),
            // Another run's narration of a trace with the same id is not this one's.
            json!({"trace_id": "tr_2", "run": "other", "outcome": "kept", "rationale": "no"}),
        ]);
        assert_eq!(records.narrated, 1);
        assert_eq!(records.traces[0]["rationale"], "words");
        assert_eq!(records.traces[0]["template_rationale"], "template one");
        assert_eq!(records.traces[1]["rationale"], "template two");
        assert!(records.traces[1].get("template_rationale").is_none());
    }

    #[test]
    fn a_torn_last_line_is_skipped_and_a_foreign_file_refused() {
        let dir = std::env::temp_dir().join(format!("aura-report-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join(TRACES_PATH),
            "{\"a\":1}\n{\"b\":2}\n{\"trace_id\":\"tr_9",
        )
        .unwrap();
        let records = Records::read(&dir).unwrap();
        assert_eq!(
            (records.traces.len(), records.quarantine.len(), records.torn),
            (2, 0, 1)
        );
        std::fs::write(dir.join(TRACES_PATH), "{\"a\":1}\nnot json\n").unwrap();
        assert!(matches!(
            Records::read(&dir),
            Err(ReportError::NotJson { line: 2, .. })
        ));
        std::fs::write(
            dir.join(TRACES_PATH),
            "x".repeat(REPORT_LINE_BYTES_MAX + 10),
        )
        .unwrap();
        assert!(matches!(
            Records::read(&dir),
            Err(ReportError::LineTooLong { line: 1, .. })
        ));
        std::fs::remove_file(dir.join(TRACES_PATH)).unwrap();
        assert!(matches!(Records::read(&dir), Err(ReportError::Read { .. })));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
