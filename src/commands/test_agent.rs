//! `aura test-agent`: the conformance checks an agent's author runs on a component.

use std::path::PathBuf;
use std::process::ExitCode;

use aura_contract::visible::visible;
use aura_host::conformance::{Subject, Verdict, test_agent};

use super::{EXIT_NOT_CONFORMANT, Globals, runtime};

/// Check a component as a catalogue agent, for its author: its size bound, its manifest
/// against the catalogue, each tool's schema examples answered as the reference answers
/// kept with the schemas, and the agent's tick examples proposing the reference's calls,
/// all through the real crossing. Prints each check; exits 5 if any failed. The agents it
/// may call come from --plugins-dir; records go to <data-dir>/test-agent/<agent>.
#[derive(clap::Args, Debug)]
pub struct TestAgentCommand {
    /// The component (.wasm) to test.
    component: PathBuf,
    /// The catalogue agent to test it as, e.g. wellness.
    #[arg(long = "as", value_name = "AGENT")]
    agent: String,
    /// Print the report as one JSON object instead of lines.
    #[arg(long)]
    json: bool,
}

impl TestAgentCommand {
    /// Runs the checks and prints the report: a line per check, then the counts.
    pub fn execute(self, globals: Globals) -> anyhow::Result<ExitCode> {
        let subject = Subject {
            work_dir: globals.data_dir.join("test-agent").join(&self.agent),
            cache_dir: Some(globals.cache_dir()),
            plugins_dir: globals.plugins_dir(),
            component: self.component,
            agent: self.agent,
        };
        let report = runtime()?.block_on(test_agent(&subject))?;
        if self.json {
            println!("{}", serde_json::to_string(&report)?);
        } else {
            println!(
                "aura test-agent: {} as {} ({} bytes, sha256 {})",
                report.component.display(),
                report.agent,
                report.bytes,
                report.sha256
            );
            for check in &report.checks {
                let (mark, detail) = match &check.verdict {
                    Verdict::Pass(detail) => ("ok  ", detail),
                    Verdict::Fail(detail) => ("FAIL", detail),
                    Verdict::Skipped(detail) => ("skip", detail),
                };
                println!("  {mark}  {}: {}", check.name, visible(detail));
            }
            let failed = report.count(|v| matches!(v, Verdict::Fail(_)));
            let skipped = report.count(|v| matches!(v, Verdict::Skipped(_)));
            let passed = report.checks.len() - failed - skipped;
            println!(
                "{}: {passed} passed, {failed} failed, {skipped} skipped; the host's records are in {}",
                match report.passed() {
                    true => "conformant",
                    false => "NOT CONFORMANT",
                },
                report.data_dir.display()
            );
        }
        Ok(match report.passed() {
            true => ExitCode::SUCCESS,
            false => ExitCode::from(EXIT_NOT_CONFORMANT),
        })
    }
}
