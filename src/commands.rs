//! The commands, one file each, and what they share: the global options, the exit statuses,
//! the async runtime, the host's config and opening a host (here, or as a client of the
//! workers on the wire). It must not hold a command's work: each file calls its crate.

use aura_contract::caused::caused;
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;

use anyhow::Context;

use aura_contract::visible::visible;
use aura_host::{Host, HostConfig};

pub mod cache;
pub mod calibrate;
pub mod call;
pub mod catalogue;
#[cfg(feature = "jit")]
pub mod compile;
pub mod dispatch;
#[cfg(feature = "nats")]
pub mod events;
#[cfg(feature = "nats")]
pub mod fleet;
#[cfg(any(feature = "mcp", feature = "http"))]
pub mod guard;
pub mod keygen;
pub mod live;
#[cfg(feature = "mcp")]
pub mod mcp;
#[cfg(feature = "nats")]
pub mod nats;
pub mod pack;
pub mod report;
pub mod run;
#[cfg(feature = "mcp")]
pub mod serve;
pub mod sign;
pub mod telemetry;
#[cfg(feature = "test-agent")]
pub mod test_agent;
#[cfg(any(feature = "mcp", feature = "http"))]
pub mod token;
#[cfg(feature = "nats")]
pub mod worker;

/// Exit status when the crossing or the catalogue refused the call.
pub const EXIT_REFUSED: u8 = 3;
/// Exit status when the call crossed but the tool reported an error (result.v1 `ok: false`).
pub const EXIT_TOOL_ERROR: u8 = 4;
/// Exit status when the host could not start or an I/O error occurred.
pub const EXIT_HOST_ERROR: u8 = 1;
/// Exit status when `aura test-agent` ran and a check failed.
#[cfg(feature = "test-agent")]
pub const EXIT_NOT_CONFORMANT: u8 = 5;

/// The options every command takes.
#[derive(Debug)]
pub struct Globals {
    /// `--data-dir`.
    pub data_dir: PathBuf,
    /// `--plugins-dir`.
    pub plugins_dir: Option<PathBuf>,
    /// `--cache-dir`.
    pub cache_dir: Option<PathBuf>,
    /// `--nats` and its credentials and TLS, checked (always `None` in a build without the
    /// wire).
    pub nats: Option<NatsAccess>,
}

/// Where the nats-server is and how to reach it.
#[cfg(feature = "nats")]
pub type NatsAccess = aura_wire::NatsAccess;

/// A build without the wire has none: this type has no value.
#[cfg(not(feature = "nats"))]
#[derive(Debug)]
pub enum NatsAccess {}

impl Globals {
    /// The plugins dir: `--plugins-dir`, or the build's.
    pub fn plugins_dir(&self) -> PathBuf {
        self.plugins_dir.clone().unwrap_or_else(default_plugins_dir)
    }

    /// The compilation cache's dir: `--cache-dir`, or the data dir's.
    pub fn cache_dir(&self) -> PathBuf {
        self.cache_dir.clone().unwrap_or_else(|| {
            self.data_dir
                .join(aura_plugins::code_cache::CACHE_DIR_IN_DATA_DIR)
        })
    }

    /// The host's config from the global options.
    pub fn host_config(&self) -> HostConfig {
        let mut config = HostConfig::new(self.plugins_dir(), self.data_dir.clone());
        if self.cache_dir.is_some() {
            config.cache_dir = self.cache_dir.clone();
        }
        // The crash tests' hook: stop at one storage step and wait to be killed there. Debug
        // builds only: a stray variable never parks a release or phone binary.
        if let Some(stop) = cfg!(debug_assertions)
            .then(|| std::env::var("AURA_STOP_AT"))
            .and_then(Result::ok)
            .and_then(|text| aura_host::journal::StopAt::parse(&text))
        {
            config.storage_faults = Some(std::sync::Arc::new(stop));
        }
        config
    }
}

/// The plugins dir of the source tree this binary was built from (where the agents' build
/// writes the components), used when neither `--plugins-dir` nor `AURA_PLUGINS_DIR` is given.
pub const BUILT_PLUGINS_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/plugins");

/// The plugins dir a host uses when none is given: the build's plugins/ for a host that
/// compiles; for a runtime-only host, the precompiled dir for the target it runs,
/// plugins/<target>/ (written by `aura compile --target <target>`).
pub fn default_plugins_dir() -> PathBuf {
    let built = PathBuf::from(BUILT_PLUGINS_DIR);
    match aura_sandbox::COMPILES {
        true => built,
        false => built.join(aura_sandbox::CodeTarget::runtime_default().name()),
    }
}

/// A multi-threaded runtime on every core.
pub fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}

/// What publishes a front's events, to await once the host is dropped so they all go out
/// before the process ends.
pub type EventsTask = Pin<Box<dyn Future<Output = ()> + Send>>;

/// Opens the host a front runs on: its own agents, or (with `nats`) none, every call and tick
/// going to the workers on that server (which must draw from `guest_seed`, if given), and its
/// events to the server's stream.
pub async fn open_host(
    mut config: HostConfig,
    nats: Option<&NatsAccess>,
    guest_seed: Option<u64>,
) -> anyhow::Result<(Host, Option<EventsTask>)> {
    let events = match nats {
        Some(access) => join_wire(&mut config, access, guest_seed).await?,
        None => None,
    };
    let host = Host::open(&config).await.context("cannot start the host")?;
    Ok((host, events))
}

/// Warns of each plugin the host refused so far.
pub fn warn_load_failures(host: &Host) {
    for failure in host.load_failures() {
        eprintln!("aura: warning: {}", visible(&caused(&*failure)));
    }
}

/// Makes `config` a client of the workers on the server `access` names.
#[cfg(feature = "nats")]
async fn join_wire(
    config: &mut HostConfig,
    access: &NatsAccess,
    guest_seed: Option<u64>,
) -> anyhow::Result<Option<EventsTask>> {
    // The identity a confirmed call's proof is signed with.
    config.identity = access.provenance().identity.clone();
    let joined = aura_wire::front::join_as_client(config, access, guest_seed).await?;
    eprintln!(
        "aura: {} worker(s) on {access} serve {}",
        joined.workers,
        joined.agents.join(", ")
    );
    if let Some(error) = joined.events_error {
        eprintln!("aura: warning: no events published: {error}");
    }
    Ok(joined.events.map(|task| -> EventsTask {
        Box::pin(async move {
            let _ = task.await;
        })
    }))
}

/// A build without the wire has no workers to join.
#[cfg(not(feature = "nats"))]
async fn join_wire(
    _config: &mut HostConfig,
    access: &NatsAccess,
    _guest_seed: Option<u64>,
) -> anyhow::Result<Option<EventsTask>> {
    match *access {}
}

/// A line per component of a plugins dir just written: its file, size and sha256.
pub fn print_manifest(dir: &std::path::Path, manifest: &aura_plugins::PluginManifest) {
    let narrator = manifest
        .narrator
        .iter()
        .map(|entry| (aura_plugins::NARRATOR_COMPONENT, entry));
    let agents = manifest.components.iter().map(|(a, e)| (a.as_str(), e));
    for (agent, entry) in agents.chain(narrator) {
        println!(
            "{agent}: {} ({} bytes, sha256 {})",
            dir.join(&entry.file).display(),
            entry.bytes,
            entry.sha256
        );
    }
}

/// Completes on SIGINT or SIGTERM: how the servers (`serve`, `worker`, `events --follow`)
/// and `live` end. The handlers are in place once this returns, before the future is first
/// polled: a signal that comes while the process is still starting (its task not run yet)
/// stops it cleanly instead of killing it.
pub fn shutdown_signal() -> impl std::future::Future<Output = ()> + Send + 'static {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate()).ok();
    let mut interrupt = signal(SignalKind::interrupt()).ok();
    async move {
        tokio::select! {
            () = received(interrupt.as_mut()) => {}
            () = received(term.as_mut()) => {}
        }
    }
}

/// Completes when `signal` comes (never, when it could not be listened for).
async fn received(signal: Option<&mut tokio::signal::unix::Signal>) {
    match signal {
        Some(signal) => {
            signal.recv().await;
        }
        None => std::future::pending().await,
    }
}
