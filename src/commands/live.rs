//! `aura live`: the assistant as the day happens, for one person, until stopped: signals and
//! answers in as JSON lines on stdin, decisions out to stdout and a command per surface.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use tokio::io::{AsyncBufRead, AsyncBufReadExt};

use aura_contract::envelope::Surface;
use aura_contract::limits::LIVE_SIGNAL_BYTES_MAX;
use aura_contract::trace::narration::NarrationRecord;
use aura_day::live::{self, Clock, CommandSink, LinesSink, LiveConfig, Sink};
use aura_day::orchestrator::{RunEvent, Start};

use super::{Globals, open_host, runtime, warn_load_failures};

/// Live the day as it happens: the orchestrator on a clock (the machine's, or a recorded
/// day's), signals and answers taken as they come, each decision handed to its surface.
#[derive(clap::Args, Debug)]
pub struct LiveCommand {
    /// The setup: a live.v1 file, or a scenario (its profile and initial state; on a replayed
    /// clock also its start and end). A scenario's own signals are not read: they come on
    /// the channels.
    #[arg(required_unless_present_any = ["export", "positions"])]
    setup: Option<PathBuf>,
    /// Take signals and answers as JSON lines on stdin (one scenario.v1 signal a line, `at`
    /// optional; an answer is `{"kind":"answer","data":{"question":ID,"reply":"yes"}}`).
    /// Each gets a line on stdout: `{"ack":…}` once it is durable, or `{"refused":…}`.
    #[arg(long)]
    stdin: bool,
    /// `wall` (the machine's), `replay` (a scenario's day, as fast as the inputs allow: the
    /// same traces as `aura run` with the same signals) or `replay:SPEED` (paced, SPEED times
    /// as fast as real time).
    #[arg(long, default_value = "wall", value_parser = parse_clock)]
    clock: Clock,
    /// A command per surface, run for each decision shown there, its text on stdin:
    /// `--on WATCH='notify-send aura'`, `--on EARBUD_TTS='espeak-ng'`.
    #[arg(long = "on", value_name = "SURFACE=COMMAND", value_parser = parse_on)]
    on: Vec<(Surface, String)>,
    /// The kinds of signal that tick at once, comma-separated, or `none` (default: the
    /// file's `tick_on`, else message, transaction, invitation and answer).
    #[arg(long, value_delimiter = ',')]
    tick_on: Option<Vec<String>>,
    /// Seed of the agents' random sources.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Start over: set the data dir's session aside instead of resuming it.
    #[arg(long)]
    fresh: bool,
    /// Also take signals and answers, and stream decisions, over HTTP at an address
    /// (`127.0.0.1:PORT`; port 0 picks a free one; beyond loopback only with TLS and
    /// --auth-issuer) or a unix socket (`unix:PATH`): `POST /signals`, `POST /answers`,
    /// `GET /decisions`, `GET /narrations`.
    #[cfg(feature = "http")]
    #[arg(long, value_name = "ADDRESS")]
    listen: Option<String>,
    /// TLS and allowed origins of the --listen front.
    #[cfg(feature = "http")]
    #[command(flatten)]
    guard: super::guard::GuardArgs,
    /// Narrate the novel cases of the session's decisions in the background, as the day goes
    /// on (plugins/narrator.wasm, as `aura run --narrate`): each record a `{"narration":…}`
    /// line on stdout once it is durable in <data-dir>/narrations.jsonl. Seconds per case.
    #[arg(long)]
    narrate: bool,
    /// With --narrate: narrate at most this many novel cases of the session's run.
    #[arg(long, default_value_t = aura_contract::limits::NARRATIONS_PER_RUN_MAX)]
    narrations: usize,
    /// Write a day of the data dir's session as a scenario (what `aura run` runs to that
    /// day's traces) to this file, and exit: the open day's journal so far, or `--day`'s.
    #[arg(long, value_name = "FILE")]
    export: Option<PathBuf>,
    /// Print where each source of the data dir's life stands (`{"SOURCE":"POSITION"}`: what
    /// it read up to, as it handed it with its signals) and exit; read as it is on disk, while
    /// a session runs too.
    #[arg(long, conflicts_with = "export")]
    positions: bool,
    /// With --export: the day, `YYYY-MM-DD` (or `YYYY-MM-DD.N`, a later part of it), among
    /// those kept under `<data-dir>/days/` [default: the open day].
    #[arg(long, requires = "export")]
    day: Option<String>,
    /// Closed days kept under `<data-dir>/days/`, counted by the person's dates (a date's
    /// parts count once); older ones are deleted whole as a day closes.
    #[arg(long, default_value_t = aura_contract::limits::LIVE_KEEP_DAYS_DEFAULT,
        value_parser = parse_keep_days)]
    keep_days: usize,
}

fn parse_keep_days(text: &str) -> Result<usize, String> {
    let max = aura_contract::limits::LIVE_KEEP_DAYS_MAX;
    match text.parse::<usize>() {
        Ok(days) if (1..=max).contains(&days) => Ok(days),
        _ => Err(format!("`{text}`: a number of days from 1 to {max}")),
    }
}

fn parse_clock(text: &str) -> Result<Clock, String> {
    Clock::parse(text).ok_or_else(|| format!("`{text}`: wall, replay or replay:SPEED (SPEED > 0)"))
}

fn parse_on(text: &str) -> Result<(Surface, String), String> {
    let (surface, command) = text
        .split_once('=')
        .ok_or_else(|| format!("`{text}`: SURFACE=COMMAND"))?;
    let surface: Surface = serde_json::from_value(serde_json::Value::String(surface.to_owned()))
        .map_err(|_| format!("`{surface}`: WATCH, PHONE_CARD, EARBUD_TTS or SILENT"))?;
    Ok((surface, command.to_owned()))
}

impl LiveCommand {
    /// Lives the session until it is stopped (or its replayed day ends).
    pub fn execute(self, globals: Globals) -> anyhow::Result<ExitCode> {
        let mut config = globals.host_config();
        if self.positions {
            let positions = aura_day::store::files::positions_in(&config.data_dir)?;
            println!(
                "{}",
                aura_contract::canonical::to_canonical_string(&serde_json::json!(positions))?
            );
            return Ok(ExitCode::SUCCESS);
        }
        config.guest_seed = self.seed;
        let runtime = runtime()?;
        let lived = runtime.block_on(async {
            let (host, events) = open_host(config, globals.nats.as_ref(), Some(self.seed)).await?;
            warn_load_failures(&host);
            if let Some(out) = &self.export {
                let data_dir = host.journal().path().to_path_buf();
                let day_dir = live::life::run_dir(&data_dir, self.day.as_deref())?;
                let record = day_dir.join(live::life::RECORD_PATH);
                // A closed day's record as it was written; the open day's journal so far.
                let scenario = match record.exists() {
                    true => serde_json::from_str(&std::fs::read_to_string(&record)?)?,
                    false => live::export(&host.in_data_dir(&day_dir)?)?,
                };
                let text = aura_contract::canonical::to_canonical_string(&scenario)?;
                std::fs::write(out, text)
                    .with_context(|| format!("cannot write {}", out.display()))?;
                eprintln!(
                    "aura: the day {} as a scenario: {}",
                    day_dir.display(),
                    out.display()
                );
                return anyhow::Ok(ExitCode::SUCCESS);
            }
            let setup = self.setup.as_deref().context("a setup file is needed")?;
            let mut live_config =
                LiveConfig::load(setup, host.crossing().schemas(), self.seed, self.clock)?;
            live_config.tick_on = self
                .tick_on
                .clone()
                .map(|kinds| kinds.into_iter().filter(|kind| kind != "none").collect());
            live_config.keep_days = self.keep_days;
            live_config.start = match self.fresh {
                true => Start::Fresh,
                false => Start::Resume,
            };
            if self.narrate {
                live_config.narration = Some(live::LiveNarration {
                    narrator: Arc::new(host.narrator()?),
                    max: self.narrations,
                });
            }
            let mut sinks: Vec<Arc<dyn Sink>> =
                vec![Arc::new(LinesSink::new("stdout", std::io::stdout()))];
            for (surface, command) in &self.on {
                sinks.push(Arc::new(CommandSink::new(*surface, command)));
            }
            let (handle, inbox) = live::channel(&host);
            let (printed, narrations) = print_narrations(handle.narrations());
            // Ends the HTTP front, if there is one, once the session has ended.
            #[allow(unused_mut)]
            let mut http_stop: Option<tokio::sync::oneshot::Sender<()>> = None;
            let stop = handle.clone();
            let shutdown = super::shutdown_signal();
            tokio::spawn(async move {
                shutdown.await;
                stop.stop().await;
            });
            #[cfg(feature = "http")]
            if let Some(address) = &self.listen {
                let guard = self.guard.guard().await?;
                let listener = aura_live_http::bind(address, &guard).await?;
                eprintln!("aura: live at {}", listener.shown(guard.scheme()));
                let front = handle.clone();
                let (stopped, stop) = tokio::sync::oneshot::channel::<()>();
                http_stop = Some(stopped);
                tokio::spawn(async move {
                    let shutdown = async move {
                        let _ = stop.await;
                    };
                    let served = aura_live_http::serve(front, listener, &guard, shutdown).await;
                    if let Err(error) = served {
                        eprintln!("aura: {error}");
                    }
                });
            }
            // A replayed day with no channel to feed it has all its input already: none.
            #[cfg(feature = "http")]
            let fed = self.stdin || self.listen.is_some();
            #[cfg(not(feature = "http"))]
            let fed = self.stdin;
            if !fed && self.clock.replays() {
                handle.close().await;
            }
            if self.stdin {
                let reader = handle.clone();
                tokio::spawn(async move {
                    let stdin = tokio::io::BufReader::new(tokio::io::stdin());
                    read_lines(stdin, &reader).await;
                    reader.close().await;
                });
            }
            let summary = live::live(&host, live_config, sinks, inbox, report).await;
            // Every record the session told is printed before its summary.
            let _ = printed.send(());
            let _ = narrations.await;
            drop(http_stop);
            let summary = summary?;
            println!("{}", serde_json::json!({ "summary": summary }));
            drop(handle);
            drop(host);
            if let Some(events) = events {
                events.await;
            }
            anyhow::Ok(ExitCode::SUCCESS)
        });
        // The stdin reader's blocking read cannot be cancelled (tokio::io::stdin): a runtime
        // dropped as usual waits for it, and a session stopped while its stdin stayed open
        // (a terminal, a parent holding the pipe) would not exit until the next line came.
        runtime.shutdown_timeout(std::time::Duration::from_millis(
            aura_contract::limits::LIVE_STOP_WAIT_MS,
        ));
        lived
    }
}

/// Prints each narration record the session tells as a `{"narration":…}` line, until told the
/// session ended (then what is left): the sender to tell it, and the printing task.
fn print_narrations(
    mut records: tokio::sync::broadcast::Receiver<Arc<NarrationRecord>>,
) -> (
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<()>,
) {
    use tokio::sync::broadcast::error::{RecvError, TryRecvError};
    let print =
        |record: &NarrationRecord| println!("{}", serde_json::json!({ "narration": record }));
    let (ended, mut end) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        loop {
            tokio::select! {
                biased;
                received = records.recv() => match received {
                    Ok(record) => print(&record),
                    Err(RecvError::Lagged(missed)) => eprintln!(
                        "aura: {missed} narrations not printed (all are in narrations.jsonl)"
                    ),
                    Err(RecvError::Closed) => return,
                },
                _ = &mut end => loop {
                    match records.try_recv() {
                        Ok(record) => print(&record),
                        Err(TryRecvError::Lagged(_)) => continue,
                        Err(_) => return,
                    }
                },
            }
        }
    });
    (ended, task)
}

/// Tells stderr when the session starts or resumes.
fn report(event: RunEvent<'_>) {
    if let RunEvent::Started {
        run,
        resumed_at_tick,
        set_aside,
        ..
    } = event
    {
        if let Some(aside) = set_aside {
            eprintln!("aura: the data dir's earlier run was set aside as {aside}");
        }
        match resumed_at_tick {
            Some(tick) => eprintln!("aura: live session {run} resumes at tick {}", tick + 1),
            None => eprintln!("aura: live session {run} starts"),
        }
    }
}

/// Pushes each line of `input` to the session, the next once this one is answered, and prints
/// its acknowledgement or refusal, one JSON line each; a line longer than a signal may be is
/// refused without being held.
async fn read_lines(mut input: impl AsyncBufRead + Unpin, live: &live::Live) {
    loop {
        let line = match read_bounded_line(&mut input, LIVE_SIGNAL_BYTES_MAX).await {
            Ok(Some(line)) => line,
            Ok(None) => return,
            Err(error) => {
                eprintln!("aura: stdin: {error}");
                return;
            }
        };
        let answer = match line {
            Line::Whole(bytes) if bytes.iter().all(u8::is_ascii_whitespace) => continue,
            Line::Whole(bytes) => live.push_in_order(&bytes).await,
            Line::TooLong { bytes, start } => {
                Err(live.refuse_unread(bytes, LIVE_SIGNAL_BYTES_MAX, &start))
            }
        };
        let line = match answer {
            Ok(ack) => serde_json::json!({ "ack": ack }),
            Err(refused) => serde_json::json!({ "refused": refused }),
        };
        let mut stdout = std::io::stdout();
        let _ = writeln!(stdout, "{line}").and_then(|()| stdout.flush());
    }
}

/// One line read with a bound.
enum Line {
    /// The line, without its newline.
    Whole(Vec<u8>),
    /// A line past the bound: its length (at least) and its first bytes; the rest was read
    /// and dropped.
    TooLong { bytes: u64, start: Vec<u8> },
}

/// Reads one line of at most `max` bytes without holding more; `None` at the end.
async fn read_bounded_line(
    input: &mut (impl AsyncBufRead + Unpin),
    max: usize,
) -> std::io::Result<Option<Line>> {
    let mut line = Vec::new();
    let mut dropped: u64 = 0;
    loop {
        let buffer = input.fill_buf().await?;
        if buffer.is_empty() {
            return Ok(match (line.is_empty(), dropped) {
                (true, 0) => None,
                (_, 0) => Some(Line::Whole(line)),
                (_, _) => Some(Line::TooLong {
                    bytes: line.len() as u64 + dropped,
                    start: line,
                }),
            });
        }
        let (chunk, ends) = match buffer.iter().position(|&b| b == b'\n') {
            Some(at) => (&buffer[..at], Some(at + 1)),
            None => (buffer, None),
        };
        let room = (max + 1).saturating_sub(line.len());
        let keep = chunk.len().min(room);
        line.extend_from_slice(&chunk[..keep]);
        dropped += (chunk.len() - keep) as u64;
        let used = ends.unwrap_or(buffer.len());
        input.consume(used);
        if ends.is_some() {
            return Ok(Some(match line.len() > max || dropped > 0 {
                true => Line::TooLong {
                    bytes: line.len() as u64 + dropped,
                    start: line,
                },
                false => Line::Whole(line),
            }));
        }
    }
}
