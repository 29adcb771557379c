//! `aura report`: a picture of a run, one self-contained HTML page.

use std::path::PathBuf;
use std::process::ExitCode;

/// Write a picture of a run: one self-contained HTML page (no network) with a timeline
/// lane per surface, each decision's reasoning on hover or click, the questions and
/// answers, the quarantine records and the fuel per tick.
#[derive(clap::Args, Debug)]
pub struct ReportCommand {
    /// The data dir of the run (its traces.jsonl and quarantine log).
    run_dir: PathBuf,
    /// Where to write the page [default: <run-dir>/report.html].
    #[arg(long)]
    out: Option<PathBuf>,
}

impl ReportCommand {
    /// Writes the page and says what it holds.
    pub fn execute(self) -> anyhow::Result<ExitCode> {
        let out = self.out.unwrap_or_else(|| self.run_dir.join("report.html"));
        let records = aura_day::report::write(&self.run_dir, &out)?;
        println!(
            "aura: {} decision(s), {} quarantine record(s) -> {}",
            records.traces.len(),
            records.quarantine.len(),
            out.display()
        );
        Ok(ExitCode::SUCCESS)
    }
}
