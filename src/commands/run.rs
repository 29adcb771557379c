//! `aura run`: the orchestrator over a scenario, each decision printed as it is made.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use aura_contract::trace::narration::NarrationOutcome;
use aura_contract::trace::{Decision, Trace};
use aura_contract::visible::visible;
use aura_day::logs::NARRATIONS_PATH;
use aura_day::narration::{NarrationSummary, narrate_run};
use aura_day::orchestrator::{self, RunEvent, RunSummary, Start};
use aura_day::scenario::Scenario;
use aura_host::journal::{QUARANTINE_PATH, TRACES_PATH};

use super::{Globals, open_host, runtime, warn_load_failures};

/// Run a scenario through the orchestrator: every agent ticks on the day's signals, and
/// each decision is printed (and recorded in <data-dir>/traces.jsonl).
#[derive(clap::Args, Debug)]
pub struct RunCommand {
    /// The scenario file (scenario.v1), e.g. scenarios/day.json.
    scenario: PathBuf,
    /// Seed of the agents' random sources: the same seed gives the same traces.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Print each trace and the summary as JSON lines instead of the timeline.
    #[arg(long)]
    json: bool,
    /// Show each decision's rationale under it.
    #[arg(short, long)]
    verbose: bool,
    /// Start over: set the data dir's earlier run aside (traces.N.jsonl, run.N.json)
    /// instead of resuming it. Without it, an unfinished run of the same scenario and
    /// seed resumes where it stopped, and one of another is refused.
    #[arg(long)]
    fresh: bool,
    /// After the run, the narrator (plugins/narrator.wasm: a small language model in its own
    /// sandbox) writes the rationale of each novel case in words; a grounded one replaces the
    /// template's in the report (<data-dir>/narrations.jsonl). Seconds per case.
    #[arg(long)]
    narrate: bool,
    /// With --narrate: narrate at most this many novel cases in this run (the rest keep the
    /// template).
    #[arg(long, default_value_t = aura_contract::limits::NARRATIONS_PER_RUN_MAX)]
    narrations: usize,
}

impl RunCommand {
    /// Runs the day and prints it, then the summary.
    pub fn execute(self, globals: Globals) -> anyhow::Result<ExitCode> {
        let mut config = globals.host_config();
        config.guest_seed = self.seed;
        let data_dir = config.data_dir.clone();
        let start = match self.fresh {
            true => Start::Fresh,
            false => Start::Resume,
        };
        let summary = runtime()?.block_on(async {
            let (host, events) = open_host(config, globals.nats.as_ref(), Some(self.seed)).await?;
            warn_load_failures(&host);
            let scenario = Scenario::load(&self.scenario, host.crossing().schemas())?;
            let progress = !self.json && std::io::stderr().is_terminal();
            let mut stdout = std::io::stdout().lock();
            let summary = orchestrator::run(&host, &scenario, self.seed, start, |event| {
                self.print(event, progress, &mut stdout)
            })
            .await?;
            if progress {
                eprint!("\r\x1b[2K");
            }
            let narrated = match self.narrate {
                true => Some(self.narrate(&host).await?),
                false => None,
            };
            drop(host);
            if let Some(events) = events {
                events.await;
            }
            anyhow::Ok((summary, narrated))
        })?;
        let (summary, narrated) = summary;
        let traces = data_dir.join(TRACES_PATH);
        if self.json {
            let (narration, narration_ms) = match &narrated {
                Some((summary, ms)) => (Some(summary), Some(ms)),
                None => (None, None),
            };
            println!(
                "{}",
                serde_json::json!({
                    "summary": summary,
                    "narration": narration,
                    "narration_ms": narration_ms,
                })
            );
        } else {
            print_summary(&summary, &traces, &data_dir.join(QUARANTINE_PATH));
            if let Some((narrated, ms)) = &narrated {
                print_narration(narrated, *ms, &data_dir.join(NARRATIONS_PATH));
            }
        }
        Ok(ExitCode::SUCCESS)
    }

    /// The narrator's pass over the run's novel cases, each record printed as it is written.
    async fn narrate(&self, host: &aura_host::Host) -> anyhow::Result<(NarrationSummary, u64)> {
        // Wall-clock time is for the person reading the summary; nothing is decided by it.
        let started = std::time::Instant::now();
        let narrator = std::sync::Arc::new(host.narrator()?);
        let json = self.json;
        let summary = narrate_run(host, narrator, self.narrations, |record| {
            if json {
                println!("{}", serde_json::json!({ "narration": record }));
                return;
            }
            let said = match (&record.rationale, &record.reason) {
                (Some(text), _) => text.clone(),
                (None, Some(reason)) => format!("[{}] {reason}", outcome(record.outcome)),
                (None, None) => String::new(),
            };
            println!(
                "narrated {}  {}  {}",
                record.trace_id,
                record.case,
                visible(&said)
            );
        })
        .await?;
        Ok((summary, started.elapsed().as_millis() as u64))
    }

    /// Prints one event of the run: a tick's progress on a terminal's stderr, each decision on
    /// stdout (a line, or its trace as JSON).
    fn print(&self, event: RunEvent<'_>, progress: bool, stdout: &mut impl Write) {
        match event {
            RunEvent::Tick { index, of, at } if progress => {
                let of = of.map_or(String::new(), |of| format!("/{of}"));
                eprint!("\r\x1b[2K  tick {}{of}  {}", index + 1, clock(at));
            }
            RunEvent::Tick { .. } => {}
            RunEvent::Started {
                run,
                resumed_at_tick,
                of,
                set_aside,
            } => {
                if let Some(aside) = set_aside {
                    eprintln!("aura: the data dir's earlier run was set aside as {aside}");
                }
                if let Some(tick) = resumed_at_tick {
                    let of = of.map_or(String::new(), |of| format!(" of {of}"));
                    eprintln!("aura: resuming {run} at tick {}{of}", tick + 1);
                }
            }
            RunEvent::Decision(trace) => {
                if progress {
                    eprint!("\r\x1b[2K");
                }
                let _ = match self.json {
                    true => writeln!(
                        stdout,
                        "{}",
                        serde_json::to_string(trace).unwrap_or_default()
                    ),
                    false => print_decision(stdout, trace, self.verbose),
                };
            }
        }
    }
}

/// `HH:MM` of an RFC 3339 time.
fn clock(at: &str) -> &str {
    at.get(11..16).unwrap_or(at)
}

fn print_decision(
    out: &mut impl std::io::Write,
    trace: &Trace,
    verbose: bool,
) -> std::io::Result<()> {
    let what = match trace.decision {
        Decision::Executed => "",
        Decision::Asked => "asks: ",
        Decision::Confirmed => "confirmed: ",
        Decision::Declined => "declined: ",
        Decision::Held => "held: ",
        Decision::Expired => "expired: ",
        Decision::AnswerUnmatched | Decision::AnswerAmbiguous => "answer: ",
        Decision::Digest => "",
    };
    // A decision about a call names it; an answer that reached no single question names
    // what it answered (names the catalogue and the scenario's schema bound).
    let (agent, tool) = match (&trace.call, &trace.answer) {
        (Some(call), _) => (call.agent.as_str(), call.tool.as_str()),
        (None, Some(answer)) => (answer.agent.as_str(), answer.tool.as_str()),
        // The orchestrator's own card: the digest.
        (None, None) => ("aura", "digest"),
    };
    let status = match trace.outcome.status.is_failure() {
        false => String::new(),
        true => format!(
            " [{}: {}]",
            trace.outcome.status.as_str(),
            trace.outcome.kind.as_deref().unwrap_or("")
        ),
    };
    // The trace's summary and rationale are already made visible by the library.
    writeln!(
        out,
        "{}  {:<10}  {:<31} {what}{}{status}",
        clock(&trace.at),
        trace.surface.as_str(),
        visible(&format!("{agent}.{tool}")),
        trace.outcome.summary,
    )?;
    if verbose {
        writeln!(out, "{:>19}{} ({})", "", trace.rationale, trace.trace_id)?;
    }
    Ok(())
}

/// A narration's outcome, as the timeline prints it.
fn outcome(outcome: NarrationOutcome) -> &'static str {
    match outcome {
        NarrationOutcome::Kept => "kept",
        NarrationOutcome::Discarded => "discarded",
        NarrationOutcome::Failed => "failed",
    }
}

fn print_narration(summary: &NarrationSummary, ms: u64, narrations: &Path) {
    println!(
        "  narrator: {} novel cases of {} traces; {} narrated now ({} kept, {} discarded, {} failed), {} before, {} past the bound",
        summary.novel,
        summary.traces,
        summary.narrated,
        summary.kept,
        summary.discarded,
        summary.failed,
        summary.already,
        summary.not_narrated
    );
    let tokens = summary.prompt_tokens + summary.tokens;
    let seconds = ms as f64 / 1000.0;
    println!(
        "  narrator's work: {} prompt tokens read, {} written, {} fuel ({:.2} G a token)",
        summary.prompt_tokens,
        summary.tokens,
        summary.fuel_used,
        summary.fuel_used as f64 / tokens.max(1) as f64 / 1e9
    );
    println!(
        "  narrator's time: {seconds:.1} s with loading it, {:.1} s a case, {:.1} tokens/s (wall clock, this machine)",
        seconds / summary.narrated.max(1) as f64,
        tokens as f64 / seconds.max(0.001)
    );
    println!("  narrations: {}", narrations.display());
}

fn print_summary(summary: &RunSummary, traces: &Path, quarantine: &Path) {
    let shown = &summary.shown;
    println!();
    println!(
        "{}: {} ticks, {} signals, {} decisions (seed {})",
        summary.scenario, summary.ticks, summary.signals, summary.decisions, summary.seed
    );
    println!(
        "  shown: WATCH {}, PHONE_CARD {}, EARBUD_TTS {}, SILENT {}",
        shown.WATCH, shown.PHONE_CARD, shown.EARBUD_TTS, shown.SILENT
    );
    println!(
        "  questions: {} asked, {} confirmed, {} declined, {} held for quiet hours; answers: {} unmatched, {} ambiguous",
        summary.asked,
        summary.confirmed,
        summary.declined,
        summary.held,
        summary.answers_unmatched,
        summary.answers_ambiguous
    );
    println!(
        "  proposals: {} repeats suppressed, {} with nothing new, {} held back by the budget, {} lost their surface, {} refused and quarantined; {} ticks failed, {} calls failed",
        summary.repeats,
        summary.stale,
        summary.held_back,
        summary.not_chosen,
        summary.proposals_refused,
        summary.ticks_failed,
        summary.calls_failed
    );
    println!("  digests of what was held back: {}", summary.digests);
    println!(
        "  quarantined: {} record(s) in {}",
        summary.quarantined,
        quarantine.display()
    );
    println!(
        "  fuel: {} in ticks, {} in calls",
        summary.tick_fuel, summary.call_fuel
    );
    println!(
        "  tick of all agents: median {:.2} ms, p95 {:.2} ms (wall clock, this machine)",
        summary.tick_us_median as f64 / 1000.0,
        summary.tick_us_p95 as f64 / 1000.0
    );
    println!("  traces: {}", traces.display());
}
