//! `aura report`: a picture of a run, one self-contained HTML page.

use std::path::PathBuf;
use std::process::ExitCode;

/// Write a picture of a run: one self-contained HTML page (no network) with a timeline
/// lane per surface, each decision's reasoning on hover or click, the questions and
/// answers, the quarantine records and the fuel per tick.
#[derive(clap::Args, Debug)]
pub struct ReportCommand {
    /// The data dir of the run (its traces.jsonl and quarantine log), or of a live session
    /// (its open day's, or `--day`'s).
    run_dir: PathBuf,
    /// A live session's day: `YYYY-MM-DD` (or `YYYY-MM-DD.N`, a later part of it) among those
    /// kept under `<data-dir>/days/` [default: the open day].
    #[arg(long)]
    day: Option<String>,
    /// Where to write the page [default: <run-dir>/report.html].
    #[arg(long)]
    out: Option<PathBuf>,
}

impl ReportCommand {
    /// Writes the page and says what it holds.
    pub fn execute(self) -> anyhow::Result<ExitCode> {
        let run_dir = aura_day::live::life::run_dir(&self.run_dir, self.day.as_deref())?;
        let out = self.out.unwrap_or_else(|| run_dir.join("report.html"));
        let records = aura_day::report::write(&run_dir, &out)?;
        println!(
            "aura: {} decision(s), {} quarantine record(s) -> {}",
            records.traces.len(),
            records.quarantine.len(),
            out.display()
        );
        Ok(ExitCode::SUCCESS)
    }
}
