//! `aura`: the command line over aura's crates. Parses arguments, hands each command to its
//! module in `src/commands` (one file per command), prints what it returns and picks the exit
//! status. Everything it writes for people passes through `visible` (agent text never reaches
//! the terminal raw); what it writes for programs is JSON. The work is in the crates: the
//! binary built without the front crates (`--no-default-features`) is the phone's.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use aura_contract::visible::visible;

mod commands;

/// The binary's allocator: mimalloc (the default `mimalloc` feature; the phone builds keep
/// their libc's). Why: Cargo.toml, the feature.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use commands::{EXIT_HOST_ERROR, Globals};

#[derive(Parser, Debug)]
#[command(
    name = "aura",
    version,
    about = "WebAssembly plugin host for sandboxed agents"
)]
struct Cli {
    /// Data dir: quarantine log and other records.
    #[arg(
        long,
        global = true,
        env = "AURA_DATA_DIR",
        default_value = "aura-data"
    )]
    data_dir: PathBuf,
    /// Plugins dir: manifest.json and the agent components [default: the build's plugins/;
    /// a runtime-only build: plugins/<its target>/].
    #[arg(long, global = true, env = "AURA_PLUGINS_DIR")]
    plugins_dir: Option<PathBuf>,
    /// Compilation cache: compiled agent code kept between starts, checked by its digest and
    /// keyed by the component, the engine's settings and wasmtime's version [default:
    /// <data-dir>/code-cache].
    #[arg(long, global = true, env = "AURA_CACHE_DIR")]
    cache_dir: Option<PathBuf>,
    /// Write logs as JSON lines (RUST_LOG filters them; default: errors only, so a refusal is
    /// one line on stderr).
    #[arg(long, global = true)]
    log_json: bool,
    #[cfg(feature = "nats")]
    #[command(flatten)]
    nats: commands::nats::NatsArgs,
    /// Export the crossing's spans over OTLP/HTTP to this collector (a base URL such as
    /// http://127.0.0.1:4318; /v1/traces is added). Without it, the standard
    /// OTEL_EXPORTER_OTLP_ENDPOINT (or ..._TRACES_ENDPOINT) turns the export on; neither set,
    /// nothing is exported.
    #[cfg(feature = "otlp")]
    #[arg(long, global = true)]
    otlp: Option<String>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    Run(commands::run::RunCommand),
    Live(commands::live::LiveCommand),
    Call(commands::call::CallCommand),
    Dispatch(commands::dispatch::DispatchCommand),
    Report(commands::report::ReportCommand),
    Catalogue(commands::catalogue::CatalogueCommand),
    Pack(commands::pack::PackCommand),
    #[cfg(feature = "test-agent")]
    TestAgent(commands::test_agent::TestAgentCommand),
    #[cfg(feature = "mcp")]
    Mcp(commands::mcp::McpCommand),
    #[cfg(feature = "mcp")]
    Serve(commands::serve::ServeCommand),
    #[cfg(feature = "nats")]
    Worker(commands::worker::WorkerCommand),
    #[cfg(feature = "nats")]
    Events(commands::events::EventsCommand),
    #[cfg(feature = "nats")]
    Fleet(commands::fleet::FleetCommand),
    Cache(commands::cache::CacheCommand),
    Calibrate(commands::calibrate::CalibrateCommand),
    #[cfg(feature = "jit")]
    Compile(commands::compile::CompileCommand),
    Keygen(commands::keygen::KeygenCommand),
    #[cfg(any(feature = "mcp", feature = "http"))]
    Token(commands::token::TokenCommand),
    Sign(commands::sign::SignCommand),
}

impl Command {
    /// The command's name, as the OTLP resource names the process's role.
    fn name(&self) -> String {
        let debug = format!("{self:?}");
        let name = debug.split(['(', ' ', '{']).next().unwrap_or("aura");
        name.to_lowercase()
    }

    fn execute(self, globals: Globals) -> anyhow::Result<ExitCode> {
        match self {
            Command::Run(command) => command.execute(globals),
            Command::Live(command) => command.execute(globals),
            Command::Call(command) => command.execute(globals),
            Command::Dispatch(command) => command.execute(globals),
            Command::Report(command) => command.execute(),
            Command::Catalogue(command) => command.execute(),
            Command::Pack(command) => command.execute(),
            #[cfg(feature = "test-agent")]
            Command::TestAgent(command) => command.execute(globals),
            #[cfg(feature = "mcp")]
            Command::Mcp(command) => command.execute(globals),
            #[cfg(feature = "mcp")]
            Command::Serve(command) => command.execute(globals),
            #[cfg(feature = "nats")]
            Command::Worker(command) => command.execute(globals),
            #[cfg(feature = "nats")]
            Command::Events(command) => command.execute(globals),
            #[cfg(feature = "nats")]
            Command::Fleet(command) => command.execute(globals),
            Command::Cache(command) => command.execute(globals),
            Command::Calibrate(command) => command.execute(globals),
            #[cfg(feature = "jit")]
            Command::Compile(command) => command.execute(globals),
            Command::Keygen(command) => command.execute(),
            #[cfg(any(feature = "mcp", feature = "http"))]
            Command::Token(command) => command.execute(),
            Command::Sign(command) => command.execute(globals),
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let front = cli.command.name();
    #[cfg(feature = "otlp")]
    let otlp = cli.otlp.as_deref();
    #[cfg(not(feature = "otlp"))]
    let otlp = None;
    let telemetry = match commands::telemetry::start(cli.log_json, otlp, &front) {
        Ok(telemetry) => telemetry,
        Err(error) => {
            eprintln!("aura: {}", visible(&format!("{error:#}")));
            return ExitCode::from(EXIT_HOST_ERROR);
        }
    };
    #[cfg(feature = "nats")]
    let nats = match cli.nats.access() {
        Ok(nats) => nats,
        Err(error) => {
            eprintln!("aura: {}", visible(&format!("{error:#}")));
            return ExitCode::from(EXIT_HOST_ERROR);
        }
    };
    #[cfg(not(feature = "nats"))]
    let nats = None;
    let globals = Globals {
        data_dir: cli.data_dir,
        plugins_dir: cli.plugins_dir,
        cache_dir: cli.cache_dir,
        nats,
    };
    let code = match cli.command.execute(globals) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("aura: {}", visible(&format!("{error:#}")));
            ExitCode::from(EXIT_HOST_ERROR)
        }
    };
    // The spans still queued go out before the process ends.
    if let Err(error) = telemetry.finish() {
        eprintln!("aura: {}", visible(&format!("{error:#}")));
    }
    code
}
