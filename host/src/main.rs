//! `aura`: the command line over the aura library. Parses arguments, calls one library entry
//! point, prints the result or the error chain, and picks the exit status. Everything it writes
//! for people passes through [`visible`] (agent text never reaches the terminal raw); what it
//! writes for programs is JSON. Nothing here is worth testing on its own: the work is in the
//! library.

use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::{Parser, Subcommand};

use aura::visible::visible;
use aura::{CallInput, Host, HostConfig, Refused, ToolCall};

/// Exit status when the crossing or the catalogue refused the call.
const EXIT_REFUSED: u8 = 3;
/// Exit status when the call crossed but the tool reported an error (result.v1 `ok: false`).
const EXIT_TOOL_ERROR: u8 = 4;
/// Exit status when the host could not start or an I/O error occurred.
const EXIT_HOST_ERROR: u8 = 1;
/// Exit status when `aura test-agent` ran and a check failed.
const EXIT_NOT_CONFORMANT: u8 = 5;

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
    /// Send calls and ticks to the aura workers on this nats-server (nats://HOST:PORT)
    /// instead of running the agents here (`run`, `call`, `dispatch`, `mcp`, `serve`); with
    /// `worker` and `events`, the server to serve on or read from.
    #[cfg(feature = "nats")]
    #[arg(long, global = true, env = "AURA_NATS_URL")]
    nats: Option<String>,
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
    /// Run a scenario through the orchestrator: every agent ticks on the day's signals, and
    /// each decision is printed (and recorded in <data-dir>/traces.jsonl).
    Run {
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
    },
    /// Call one tool: builds a toolcall.v1 envelope (fresh call_id, ts now) and dispatches it.
    Call {
        /// Agent name, e.g. calendar.
        agent: String,
        /// Tool name, e.g. find_free_slots.
        tool: String,
        /// The tool's args as a JSON object.
        args: String,
        /// Deadline for the call (50..=10000 ms); default: the tool's catalogue default.
        #[arg(long)]
        deadline_ms: Option<u64>,
    },
    /// Dispatch a raw toolcall.v1 envelope exactly as given, from a file or `-` for stdin.
    Dispatch {
        /// File holding the envelope, or `-`.
        input: PathBuf,
    },
    /// Write a picture of a run: one self-contained HTML page (no network) with a timeline
    /// lane per surface, each decision's reasoning on hover or click, the questions and
    /// answers, the quarantine records and the fuel per tick.
    Report {
        /// The data dir of the run (its traces.jsonl and quarantine log).
        run_dir: PathBuf,
        /// Where to write the page [default: <run-dir>/report.html].
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Print the locked catalogue as JSON.
    Catalogue,
    /// Write a plugins dir from component files: each copied in as <agent>.wasm, then its
    /// manifest.json with their sizes and sha256 (e.g. the shipped agents with another
    /// implementation of one of them, for `--plugins-dir`).
    Pack {
        /// The plugins dir to write (created if needed; files of the same name are replaced).
        out: PathBuf,
        /// AGENT=FILE: a catalogue agent and its component, e.g. wellness=wellness.wasm.
        #[arg(required = true, value_name = "AGENT=FILE")]
        components: Vec<String>,
    },
    /// Check a component as a catalogue agent, for its author: its size bound, its manifest
    /// against the catalogue, each tool's schema examples answered as the reference answers
    /// kept with the schemas, and the agent's tick examples proposing the reference's calls,
    /// all through the real crossing. Prints each check; exits 5 if any failed. The agents it
    /// may call come from --plugins-dir; records go to <data-dir>/test-agent/<agent>.
    TestAgent {
        /// The component (.wasm) to test.
        component: PathBuf,
        /// The catalogue agent to test it as, e.g. wellness.
        #[arg(long = "as", value_name = "AGENT")]
        agent: String,
        /// Print the report as one JSON object instead of lines.
        #[arg(long)]
        json: bool,
    },
    /// Serve the catalogue as MCP tools over stdin and stdout (what an MCP client's config
    /// starts). Logs go to stderr.
    #[cfg(feature = "mcp")]
    Mcp,
    /// Serve the catalogue as MCP tools over streamable HTTP at http://<listen>/mcp until
    /// SIGINT or SIGTERM. Loopback only: there is no authentication.
    #[cfg(feature = "mcp")]
    Serve {
        /// Address to listen on (a loopback address; port 0 picks a free port, printed on
        /// stderr).
        #[arg(long, default_value = "127.0.0.1:8765")]
        listen: std::net::SocketAddr,
    },
    /// Serve this host's agents to the wire: every catalogued tool and each agent's tick as the
    /// NATS service `aura` (queue group `aura`: requests spread over workers) on --nats, with
    /// events published to the JetStream stream AURA_EVENTS, until SIGINT or SIGTERM.
    #[cfg(feature = "nats")]
    Worker {
        /// Serve only these agents (comma-separated); calls their agents make to others go
        /// to the workers serving those [default: every agent of the plugins dir].
        #[arg(long, value_delimiter = ',')]
        agents: Option<Vec<String>>,
        /// Seed of the agents' random sources (a run sent here must use the same).
        #[arg(long, default_value_t = 0)]
        seed: u64,
    },
    /// Print the events of AURA_EVENTS on --nats as JSON lines (event.v1), read through a
    /// durable consumer: each event once per consumer name, from the first.
    #[cfg(feature = "nats")]
    Events {
        /// Keep waiting for new events (until SIGINT) instead of stopping at the last.
        #[arg(long)]
        follow: bool,
        /// The durable consumer's name: another name reads the stream again from the start.
        #[arg(long, default_value = "aura-events")]
        durable: String,
    },
    /// The compilation cache: `stats` (entries, bytes, bound) or `clear` (remove them all).
    Cache {
        #[command(subcommand)]
        action: CacheAction,
    },
    /// Measure this device's fuel per millisecond with a reference workload and store it in
    /// the data dir; later runs turn deadlines into fuel at that rate.
    Calibrate,
    /// Precompile the plugins dir's components for a target (e.g. aarch64-unknown-linux-musl,
    /// pulley64) into .cwasm files and a manifest with their sha256, for a runtime-only host.
    #[cfg(feature = "jit")]
    Compile {
        /// Target triple, or pulley64 for the Pulley interpreter.
        #[arg(long)]
        target: String,
        /// Output dir [default: <plugins-dir>/<target>].
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Make an ed25519 signing key for plugins: writes the key file (readable by its owner
    /// only) and prints the public key, which a host built with
    /// AURA_TRUSTED_KEYS=<public key> trusts.
    Keygen {
        /// The key file to write (must not exist).
        #[arg(long)]
        out: PathBuf,
    },
    /// Sign the plugins dir (--plugins-dir, or the build's plugins/; a precompiled dir such
    /// as plugins/<target> is signed on its own): writes <plugins-dir>/signatures.json, a
    /// signature over the manifest and one over each component's sha256.
    Sign {
        /// The key file `aura keygen` wrote.
        #[arg(long)]
        key: PathBuf,
    },
}

#[derive(Subcommand, Debug)]
enum CacheAction {
    /// Print where the cache is, its entries and bytes, and its bound, as JSON.
    Stats,
    /// Remove every entry (the next start compiles again).
    Clear,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    #[cfg(feature = "otlp")]
    let export = {
        let front = format!("{:?}", cli.command);
        let front = front
            .split([' ', '{', '('])
            .next()
            .unwrap_or("aura")
            .to_lowercase();
        match aura::telemetry::otlp::OtlpExport::start(cli.otlp.as_deref(), &front) {
            Ok(export) => export,
            Err(error) => {
                eprintln!("aura: {}", visible(&format!("{error:#}")));
                return ExitCode::from(EXIT_HOST_ERROR);
            }
        }
    };
    #[cfg(feature = "otlp")]
    init_tracing(cli.log_json, export.as_ref().map(|export| export.layer()));
    #[cfg(not(feature = "otlp"))]
    init_tracing(cli.log_json, None::<tracing_subscriber::layer::Identity>);
    let code = match run(cli) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("aura: {}", visible(&format!("{error:#}")));
            ExitCode::from(EXIT_HOST_ERROR)
        }
    };
    // The spans still queued go out before the process ends.
    #[cfg(feature = "otlp")]
    if let Some(Err(error)) = export.map(|export| export.shutdown()) {
        eprintln!("aura: {}", visible(&format!("{error:#}")));
    }
    code
}

/// Logs to stderr (RUST_LOG filters them; errors only by default), and `export`'s layer, with
/// its own filter, beside them.
fn init_tracing<L>(json: bool, export: Option<L>)
where
    L: tracing_subscriber::Layer<tracing_subscriber::Registry> + Send + Sync,
{
    use tracing_subscriber::Layer;
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("error"));
    let logs = tracing_subscriber::fmt::layer().with_writer(std::io::stderr);
    let logs = match json {
        true => logs.json().boxed(),
        false => logs.boxed(),
    };
    tracing_subscriber::registry()
        .with(export)
        .with(logs.with_filter(filter))
        .init();
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    // What `call` and `dispatch` hand the host: an envelope built here, or bytes as given.
    let built: ToolCall;
    let bytes: Vec<u8>;
    #[cfg(feature = "nats")]
    let nats = cli.nats.clone();
    #[cfg(not(feature = "nats"))]
    let nats: Option<String> = None;
    let input = match cli.command {
        #[cfg(feature = "nats")]
        Command::Worker { agents, seed } => {
            let mut config = host_config(cli.plugins_dir, cli.data_dir, cli.cache_dir);
            config.agents = agents;
            config.guest_seed = seed;
            let url = nats.context("aura worker needs --nats nats://HOST:PORT")?;
            return serve_worker(config, &url);
        }
        #[cfg(feature = "nats")]
        Command::Events { follow, durable } => {
            let url = nats.context("aura events needs --nats nats://HOST:PORT")?;
            return read_events(&url, follow, &durable);
        }
        #[cfg(feature = "jit")]
        Command::Compile { target, out } => {
            let source = cli.plugins_dir.unwrap_or_else(aura::default_plugins_dir);
            let target = aura::sandbox::CodeTarget::named(&target);
            let out = out.unwrap_or_else(|| source.join(target.name()));
            let manifest = aura::admission::precompile_plugins(&source, &target, &out)?;
            print_manifest(&out, &manifest);
            return Ok(ExitCode::SUCCESS);
        }
        Command::Cache { action } => {
            let dir = cli
                .cache_dir
                .unwrap_or_else(|| cli.data_dir.join(aura::code_cache::CACHE_DIR_IN_DATA_DIR));
            let cache = aura::code_cache::CodeCache::open(&dir)?;
            let stats = match action {
                CacheAction::Stats => cache.stats()?,
                CacheAction::Clear => cache.clear()?,
            };
            let verb = match action {
                CacheAction::Stats => "holds",
                CacheAction::Clear => "removed",
            };
            println!("{}", serde_json::json!({ "cache_dir": dir, verb: stats }));
            return Ok(ExitCode::SUCCESS);
        }
        Command::Report { run_dir, out } => {
            let out = out.unwrap_or_else(|| run_dir.join("report.html"));
            let records = aura::report::write(&run_dir, &out)?;
            println!(
                "aura: {} decision(s), {} quarantine record(s) -> {}",
                records.traces.len(),
                records.quarantine.len(),
                out.display()
            );
            return Ok(ExitCode::SUCCESS);
        }
        Command::Keygen { out } => {
            let public = aura::signing::keygen(&out)?;
            println!("{public}");
            eprintln!(
                "aura: wrote {}; build the host with AURA_TRUSTED_KEYS={public} to trust it",
                out.display()
            );
            return Ok(ExitCode::SUCCESS);
        }
        Command::Sign { key } => {
            let dir = cli.plugins_dir.unwrap_or_else(aura::default_plugins_dir);
            let public = aura::signing::sign_dir(&dir, &key)?;
            println!("{}", dir.join(aura::signing::SIGNATURES_FILE).display());
            eprintln!("aura: signed {} with key {public}", dir.display());
            return Ok(ExitCode::SUCCESS);
        }
        Command::TestAgent {
            component,
            agent,
            json,
        } => {
            let subject =
                aura::conformance::Subject {
                    work_dir: cli.data_dir.join("test-agent").join(&agent),
                    cache_dir: Some(cli.cache_dir.unwrap_or_else(|| {
                        cli.data_dir.join(aura::code_cache::CACHE_DIR_IN_DATA_DIR)
                    })),
                    plugins_dir: cli.plugins_dir.unwrap_or_else(aura::default_plugins_dir),
                    component,
                    agent,
                };
            return test_agent(&subject, json);
        }
        Command::Pack { out, components } => {
            let mut read = Vec::new();
            for pair in &components {
                let (agent, file) = pair
                    .split_once('=')
                    .with_context(|| format!("`{pair}` is not AGENT=FILE"))?;
                if aura::catalogue::agent(agent).is_none() {
                    bail!("`{agent}` is not a catalogue agent");
                }
                let bound = aura::plugins::component_bytes_max(agent);
                let bytes = aura::plugins::read_at_most(file.as_ref(), bound)
                    .with_context(|| format!("cannot read {file}"))?;
                if bytes.len() as u64 > bound {
                    bail!("{file} is more than the {bound} bytes the catalogue lets {agent} be");
                }
                read.push((agent, bytes));
            }
            let manifest = aura::plugins::write_components(&out, &read)?;
            print_manifest(&out, &manifest);
            return Ok(ExitCode::SUCCESS);
        }
        Command::Catalogue => {
            println!(
                "{}",
                aura::canonical::to_canonical_string(&aura::catalogue::to_json())?
            );
            return Ok(ExitCode::SUCCESS);
        }
        Command::Call {
            agent,
            tool,
            args,
            deadline_ms,
        } => {
            let args: serde_json::Value =
                serde_json::from_str(&args).context("args are not JSON")?;
            built = ToolCall::new(&agent, &tool, args, deadline_ms);
            CallInput::Envelope(&built)
        }
        Command::Dispatch { input } => {
            bytes = read_input(&input)?;
            CallInput::Bytes(&bytes)
        }
        #[cfg(feature = "mcp")]
        Command::Mcp => {
            return serve_mcp(
                host_config(cli.plugins_dir, cli.data_dir, cli.cache_dir),
                None,
                nats,
            );
        }
        #[cfg(feature = "mcp")]
        Command::Serve { listen } => {
            if !listen.ip().is_loopback() {
                bail!(
                    "aura serve listens on loopback only (it has no authentication): use 127.0.0.1:{}",
                    listen.port()
                );
            }
            return serve_mcp(
                host_config(cli.plugins_dir, cli.data_dir, cli.cache_dir),
                Some(listen),
                nats,
            );
        }
        Command::Calibrate => {
            return calibrate(host_config(cli.plugins_dir, cli.data_dir, cli.cache_dir));
        }
        Command::Run {
            scenario,
            seed,
            json,
            verbose,
            fresh,
        } => {
            let output = Output { json, verbose };
            let mut config = host_config(cli.plugins_dir, cli.data_dir, cli.cache_dir);
            config.guest_seed = seed;
            let start = match fresh {
                true => aura::orchestrator::Start::Fresh,
                false => aura::orchestrator::Start::Resume,
            };
            return run_scenario(config, &scenario, seed, start, output, nats);
        }
    };

    // One call loads the agents it can reach (its own and those it may call, before it
    // starts), not all of them. Unknown agents are refused by the crossing.
    let mut config = host_config(cli.plugins_dir, cli.data_dir, cli.cache_dir);
    config.loading = aura::Loading::OnFirstUse;
    let runtime = runtime()?;
    let code = runtime.block_on(async {
        let (host, events) = open_host(config, nats.as_deref(), None).await?;
        let dispatched = host.dispatch(input).await;
        for failure in host.load_failures() {
            eprintln!("aura: warning: {}", visible(&failure.to_string()));
        }
        let code = match dispatched {
            Ok(result) => {
                println!("{}", result.to_canonical());
                Ok(if result.ok {
                    ExitCode::SUCCESS
                } else {
                    ExitCode::from(EXIT_TOOL_ERROR)
                })
            }
            Err(refused) => report_refusal(&refused),
        };
        if let Some(events) = events {
            // The events go out before the process ends.
            drop(host);
            let _ = events.await;
            return code;
        }
        // One call and the process ends: the answer is printed and every journal record is
        // already synced, so leave the engine's memory pool and the loaded code to the OS
        // rather than unmapping them one by one (a few ms of a cold start on a phone).
        std::mem::forget(host);
        code
    });
    std::mem::forget(runtime);
    code
}

/// A line per component of a plugins dir just written: its file, size and sha256.
fn print_manifest(dir: &std::path::Path, manifest: &aura::plugins::PluginManifest) {
    for (agent, entry) in &manifest.components {
        println!(
            "{agent}: {} ({} bytes, sha256 {})",
            dir.join(&entry.file).display(),
            entry.bytes,
            entry.sha256
        );
    }
}

/// Runs `aura test-agent` and prints its report: a line per check, then the counts.
fn test_agent(subject: &aura::conformance::Subject, json: bool) -> anyhow::Result<ExitCode> {
    use aura::conformance::Verdict;
    let report = runtime()?.block_on(aura::conformance::test_agent(subject))?;
    if json {
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

fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}

/// The host's config from the global options.
fn host_config(
    plugins_dir: Option<PathBuf>,
    data_dir: PathBuf,
    cache_dir: Option<PathBuf>,
) -> HostConfig {
    let mut config = HostConfig::new(
        plugins_dir.unwrap_or_else(aura::default_plugins_dir),
        data_dir,
    );
    if cache_dir.is_some() {
        config.cache_dir = cache_dir;
    }
    // The crash tests' hook: stop at one storage step and wait to be killed there. Debug
    // builds only: a stray variable never parks a release or phone binary.
    if let Some(stop) = cfg!(debug_assertions)
        .then(|| std::env::var("AURA_STOP_AT"))
        .and_then(Result::ok)
        .and_then(|text| aura::journal::StopAt::parse(&text))
    {
        config.storage_faults = Some(std::sync::Arc::new(stop));
    }
    config
}

/// What publishes a front's events, to wait for before the process ends.
#[cfg(feature = "nats")]
type EventsTask = tokio::task::JoinHandle<aura::wire::stream::Published>;
#[cfg(not(feature = "nats"))]
type EventsTask = std::future::Ready<()>;

/// Opens the host a front runs on: its own agents, or (with `nats`) none, every call and tick
/// going to the workers on that server (which must draw from `guest_seed`, if given), and its
/// events to the server's stream.
async fn open_host(
    #[cfg_attr(not(feature = "nats"), allow(unused_mut))] mut config: HostConfig,
    nats: Option<&str>,
    #[cfg_attr(not(feature = "nats"), allow(unused_variables))] guest_seed: Option<u64>,
) -> anyhow::Result<(Host, Option<EventsTask>)> {
    #[cfg_attr(not(feature = "nats"), allow(unused_mut))]
    let mut events = None;
    #[cfg(feature = "nats")]
    if let Some(url) = nats {
        let cluster = aura::wire::cluster::Cluster::connect(url).await?;
        let agents = aura::remote::Remote::agents(&cluster);
        eprintln!(
            "aura: {} worker(s) on {url} serve {}",
            cluster.workers(),
            agents.join(", ")
        );
        if let Some(seed) = guest_seed
            && cluster.guest_seed() != Some(seed)
        {
            bail!(
                "the workers' agents draw from seed {}, not {seed}: start them with `aura worker --seed {seed}`",
                cluster.guest_seed().map_or("?".into(), |s| s.to_string())
            );
        }
        if config.fuel_per_ms.is_none() {
            config.fuel_per_ms = cluster.fuel_per_ms();
        }
        match aura::wire::stream::Publisher::start(cluster.client()).await {
            Ok((publisher, task)) => {
                config.events = Some(std::sync::Arc::new(publisher));
                events = Some(task);
            }
            Err(error) => eprintln!("aura: warning: no events published: {error}"),
        }
        config.agents = Some(Vec::new());
        config.remote = Some(std::sync::Arc::new(cluster));
    }
    #[cfg(not(feature = "nats"))]
    if nats.is_some() {
        bail!("this aura was built without the nats feature");
    }
    let host = Host::open(&config).await.context("cannot start the host")?;
    Ok((host, events))
}

/// `aura worker`: serves the host's agents on the wire until SIGINT or SIGTERM.
#[cfg(feature = "nats")]
fn serve_worker(mut config: HostConfig, url: &str) -> anyhow::Result<ExitCode> {
    runtime()?.block_on(async {
        let client = aura::wire::connect(url).await?;
        // Calls its agents make to agents it does not serve go to the workers that do.
        config.remote = Some(std::sync::Arc::new(
            aura::wire::cluster::Cluster::undiscovered(client.clone()),
        ));
        let events = match aura::wire::stream::Publisher::start(&client).await {
            Ok((publisher, task)) => {
                config.events = Some(std::sync::Arc::new(publisher));
                Some(task)
            }
            Err(error) => {
                eprintln!("aura: warning: no events published: {error}");
                None
            }
        };
        let host = Host::open(&config).await.context("cannot start the host")?;
        // The host holds what it needs; the config's own handle on the event publisher would
        // keep the publishing task waiting for more after the host is gone.
        drop(config);
        for failure in host.load_failures() {
            eprintln!("aura: warning: {}", visible(&failure.to_string()));
        }
        let worker = aura::wire::worker::Worker::start(std::sync::Arc::new(host), client).await?;
        eprintln!(
            "aura: worker serving {} on {url}",
            worker.agents().join(", ")
        );
        worker.serve(shutdown_signal()).await?;
        if let Some(events) = events {
            let _ = events.await;
        }
        anyhow::Ok(ExitCode::SUCCESS)
    })
}

/// `aura events`: the stream's events as JSON lines.
#[cfg(feature = "nats")]
fn read_events(url: &str, follow: bool, durable: &str) -> anyhow::Result<ExitCode> {
    use std::io::Write;
    runtime()?.block_on(async {
        let client = aura::wire::connect(url).await?;
        let mut stdout = std::io::stdout().lock();
        let read = aura::wire::stream::read(&client, durable, follow, |event| {
            // Events are canonical JSON built by hosts; agent text in them is escaped JSON.
            writeln!(stdout, "{event}").is_ok()
        });
        tokio::select! {
            read = read => { read?; }
            () = shutdown_signal() => {}
        }
        anyhow::Ok(ExitCode::SUCCESS)
    })
}

/// Completes on SIGINT or SIGTERM.
#[cfg(any(feature = "nats", feature = "mcp"))]
async fn shutdown_signal() {
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
    let terminated = async {
        match term.as_mut() {
            Some(term) => {
                term.recv().await;
            }
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        () = terminated => {}
    }
}

/// `aura mcp` (no address: stdio) and `aura serve` (HTTP on `listen`).
#[cfg(feature = "mcp")]
fn serve_mcp(
    config: HostConfig,
    listen: Option<std::net::SocketAddr>,
    nats: Option<String>,
) -> anyhow::Result<ExitCode> {
    // Over stdio one client talks to one process through one pipe: a single-threaded runtime
    // serves it with no hand-offs between threads (calls still interleave at the sandbox's fuel
    // yields; the epoch backstop has its own thread). Measured against the multi-threaded one
    // in one run (BENCHMARKS.md, Wassette side by side): 297 µs against 327 µs per round trip,
    // 5 874 against 4 973 calls/s with 8 clients. HTTP serves many clients: all cores.
    let runtime = match listen {
        None => tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .context("cannot start the async runtime")?,
        Some(_) => runtime()?,
    };
    runtime.block_on(async {
        let (host, _events) = open_host(config, nats.as_deref(), None).await?;
        for failure in host.load_failures() {
            eprintln!("aura: warning: {}", visible(&failure.to_string()));
        }
        let server = aura::mcp::McpServer::new(std::sync::Arc::new(host));
        match listen {
            None => server.serve_stdio().await?,
            Some(address) => {
                let listener = tokio::net::TcpListener::bind(address)
                    .await
                    .with_context(|| format!("cannot listen on {address}"))?;
                let bound = listener.local_addr()?;
                eprintln!("aura: serving MCP at http://{bound}/mcp");
                let shutdown = tokio_util::sync::CancellationToken::new();
                let stop = shutdown.clone();
                tokio::spawn(async move {
                    shutdown_signal().await;
                    stop.cancel();
                });
                server.serve_http(listener, shutdown).await?;
            }
        }
        anyhow::Ok(ExitCode::SUCCESS)
    })
}

fn calibrate(options: HostConfig) -> anyhow::Result<ExitCode> {
    let mut config =
        HostConfig::for_calibration(options.plugins_dir.clone(), options.data_dir.clone());
    config.cache_dir = options.cache_dir;
    let data_dir = options.data_dir;
    let calibration = runtime()?.block_on(async {
        let host = Host::open(&config).await.context("cannot start the host")?;
        anyhow::Ok(host.calibrate(&data_dir).await?)
    })?;
    println!("{}", serde_json::to_string_pretty(&calibration)?);
    Ok(ExitCode::SUCCESS)
}

/// How `aura run` prints.
#[derive(Debug, Clone, Copy)]
struct Output {
    json: bool,
    verbose: bool,
}

fn run_scenario(
    config: HostConfig,
    path: &std::path::Path,
    seed: u64,
    start: aura::orchestrator::Start,
    output: Output,
    nats: Option<String>,
) -> anyhow::Result<ExitCode> {
    use aura::orchestrator::RunEvent;
    use std::io::{IsTerminal, Write};

    let data_dir = config.data_dir.clone();
    let summary = runtime()?.block_on(async {
        let (host, events) = open_host(config, nats.as_deref(), Some(seed)).await?;
        for failure in host.load_failures() {
            eprintln!("aura: warning: {}", visible(&failure.to_string()));
        }
        let scenario = aura::scenario::Scenario::load(path, host.crossing().schemas())?;
        let progress = !output.json && std::io::stderr().is_terminal();
        let mut stdout = std::io::stdout().lock();
        let summary = aura::orchestrator::run(&host, &scenario, seed, start, |event| match event {
            RunEvent::Tick { index, of, at } if progress => {
                eprint!("\r\x1b[2K  tick {}/{of}  {}", index + 1, clock(at));
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
                    eprintln!("aura: resuming {run} at tick {} of {of}", tick + 1);
                }
            }
            RunEvent::Decision(trace) => {
                if progress {
                    eprint!("\r\x1b[2K");
                }
                let _ = match output.json {
                    true => writeln!(
                        stdout,
                        "{}",
                        serde_json::to_string(trace).unwrap_or_default()
                    ),
                    false => print_decision(&mut stdout, trace, output.verbose),
                };
            }
        })
        .await?;
        if progress {
            eprint!("\r\x1b[2K");
        }
        drop(host);
        if let Some(events) = events {
            let _ = events.await;
        }
        anyhow::Ok(summary)
    })?;
    let traces = data_dir.join(aura::journal::TRACES_PATH);
    if output.json {
        println!("{}", serde_json::json!({ "summary": summary }));
    } else {
        print_summary(
            &summary,
            &traces,
            &data_dir.join(aura::journal::QUARANTINE_PATH),
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// `HH:MM` of an RFC 3339 time.
fn clock(at: &str) -> &str {
    at.get(11..16).unwrap_or(at)
}

fn print_decision(
    out: &mut impl std::io::Write,
    trace: &aura::trace::Trace,
    verbose: bool,
) -> std::io::Result<()> {
    use aura::trace::Decision;
    let what = match trace.decision {
        Decision::Executed => "",
        Decision::Asked => "asks: ",
        Decision::Confirmed => "confirmed: ",
        Decision::Declined => "declined: ",
        Decision::Held => "held: ",
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

fn print_summary(
    summary: &aura::orchestrator::RunSummary,
    traces: &std::path::Path,
    quarantine: &std::path::Path,
) {
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

fn report_refusal(refused: &Refused) -> anyhow::Result<ExitCode> {
    let call_id = refused.call_id.as_deref().unwrap_or("-");
    // For programs: recovery.v1 (kind, message, what to do next, the field issues).
    println!("{}", refused.failure().to_canonical());
    eprintln!(
        "aura: refused {} ({}): {}",
        visible(call_id),
        refused.error.kind(),
        visible(&refused.error.to_string())
    );
    if let Some(journal_error) = &refused.journal_error {
        bail!("the refusal could not be quarantined: {journal_error}");
    }
    Ok(ExitCode::from(EXIT_REFUSED))
}

fn read_input(input: &PathBuf) -> anyhow::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    if input.as_os_str() == "-" {
        std::io::stdin()
            .take(aura::limits::DISPATCH_INPUT_BYTES_MAX)
            .read_to_end(&mut bytes)
            .context("cannot read stdin")?;
    } else {
        std::fs::File::open(input)
            .with_context(|| format!("cannot open {}", input.display()))?
            .take(aura::limits::DISPATCH_INPUT_BYTES_MAX)
            .read_to_end(&mut bytes)
            .with_context(|| format!("cannot read {}", input.display()))?;
    }
    Ok(bytes)
}
