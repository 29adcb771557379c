//! The host as every front holds it: the CLI, the orchestrator, and the servers to come.
//!
//! It owns [`Host`] and [`HostConfig`], opening a host (the data dir, the fuel rate, the
//! schemas, the plugins dir and its target, the compilation cache, the agents admitted now or
//! on first use), and what every call shares ([`Shared`]: the crossing, the sandbox, the
//! agents, the journal, the fuel rate). Each question a host
//! answers has its own module: how a plugin is admitted ([`crate::admission`]), how a call runs
//! ([`crate::call`]: the one seam every front uses), how a tick is checked ([`crate::tick`]),
//! how agents call agents ([`crate::agent_calls`]). It must not check anything itself (the
//! crossing does) nor touch wasmtime (the sandbox does).

use std::path::PathBuf;
use std::sync::{Arc, Weak};

use crate::admission::{LoadError, Loading, Roster};
use crate::catalogue::{self, AgentSpec, TRACE_SCHEMA};
use crate::code_cache::{CACHE_DIR_IN_DATA_DIR, CodeCache};
use crate::crossing::Crossing;
use crate::journal::{Appended, Journal, JournalError, StorageFaults};
use crate::limits::{CALLS_IN_FLIGHT_MAX, FUEL_PER_MS_DEFAULT};
use crate::plugins::PluginsDir;
use crate::sandbox::{CodeTarget, PreparedAgent, Sandbox, WASMTIME_VERSION, runnable_targets};
use crate::schema::SchemaViolation;
use crate::trace::Trace;

/// Where the host finds its plugins and keeps its records.
#[derive(Debug, Clone)]
pub struct HostConfig {
    /// The plugins dir (manifest.json plus components).
    pub plugins_dir: PathBuf,
    /// The data dir (quarantine log, traces, calibration).
    pub data_dir: PathBuf,
    /// Serve only these agents (loading eagerly, each must load or `open` fails); `None`
    /// serves every catalogue agent the plugins dir has and reports the ones refused.
    pub agents: Option<Vec<String>>,
    /// When agents are admitted: all at open, or each when a call can first reach it.
    pub loading: Loading,
    /// Where compiled code is kept between starts (a JIT host compiling plain components);
    /// `None`: compile on every start. [`HostConfig::new`] puts it in the data dir.
    pub cache_dir: Option<PathBuf>,
    /// Seed of the agents' random sources (WASI random): the same seed, the same draws.
    pub guest_seed: u64,
    /// Fuel per millisecond of deadline; `None`: the data dir's calibration, else
    /// [`FUEL_PER_MS_DEFAULT`].
    pub fuel_per_ms: Option<u64>,
    /// Public keys whose signatures the plugins must carry, beside the keys compiled into this
    /// build ([`crate::signing::TrustedKeys::compiled_in`], none unless `AURA_TRUSTED_KEYS`
    /// was set when it was built), which cannot be removed. An embedder locks its own here.
    pub trusted_keys: Option<crate::signing::TrustedKeys>,
    /// A deterministic simulation observing every call and refusal and injecting faults
    /// ([`crate::simulation`]); `None` in normal use.
    pub simulation: Option<Arc<dyn crate::simulation::Simulation>>,
    /// Where the calls and ticks of agents this host does not serve itself run: workers on
    /// other hosts ([`crate::remote`]; the wire's `Cluster`). With `agents: Some(vec![])`
    /// the host serves nothing itself and opens no plugins dir: a pure client.
    pub remote: Option<Arc<dyn crate::remote::Remote>>,
    /// Where this host's events go (seed 003's; the wire's JetStream publisher); `None`:
    /// nowhere.
    pub events: Option<Arc<dyn crate::events::EventSink>>,
    /// Faults injected into the journal's writes (the deterministic simulation, the crash
    /// tests); `None` in normal use.
    pub storage_faults: Option<Arc<dyn StorageFaults>>,
}

impl HostConfig {
    /// A config with the default fuel rate.
    pub fn new(plugins_dir: impl Into<PathBuf>, data_dir: impl Into<PathBuf>) -> Self {
        let data_dir = data_dir.into();
        Self {
            plugins_dir: plugins_dir.into(),
            cache_dir: Some(data_dir.join(CACHE_DIR_IN_DATA_DIR)),
            data_dir,
            agents: None,
            loading: Loading::Eager,
            guest_seed: 0,
            fuel_per_ms: None,
            trusted_keys: None,
            simulation: None,
            remote: None,
            events: None,
            storage_faults: None,
        }
    }

    /// The host [`Host::calibrate`] measures with: the reference workload's agent only, at
    /// the built-in rate whatever an earlier calibration said.
    pub fn for_calibration(plugins_dir: impl Into<PathBuf>, data_dir: impl Into<PathBuf>) -> Self {
        let mut config = Self::new(plugins_dir, data_dir);
        config.agents = Some(vec![crate::calibrate::WORKLOAD_AGENT.to_owned()]);
        config.fuel_per_ms = Some(FUEL_PER_MS_DEFAULT);
        config
    }
}

/// The host: catalogue-checked plugins behind the crossing.
#[derive(Debug)]
pub struct Host {
    pub(crate) shared: Arc<Shared>,
}

/// What a call needs, shared with the imports of the calls in flight (an agent's `host.call`
/// comes back into the same crossing).
#[derive(Debug)]
pub(crate) struct Shared {
    /// This host, for the calls it makes on an agent's behalf.
    pub(crate) this: Weak<Shared>,
    pub(crate) crossing: Crossing,
    pub(crate) sandbox: Sandbox,
    pub(crate) agents: Roster,
    pub(crate) journal: Journal,
    pub(crate) fuel_per_ms: u64,
    /// Calls taken through the seam and not yet answered ([`CALLS_IN_FLIGHT_MAX`]).
    pub(crate) in_flight: tokio::sync::Semaphore,
    /// The deterministic simulation driving this host, if one is.
    pub(crate) simulation: Option<Arc<dyn crate::simulation::Simulation>>,
    /// Where agents this host does not serve run ([`HostConfig::remote`]).
    pub(crate) remote: Option<Arc<dyn crate::remote::Remote>>,
    /// Where events go ([`HostConfig::events`]).
    pub(crate) events: Option<Arc<dyn crate::events::EventSink>>,
}

/// Why a reasoning trace was not recorded.
#[derive(Debug, thiserror::Error)]
pub enum TraceRecordError {
    /// The trace does not satisfy trace.v1: a defect in whoever built it, caught before it
    /// reached the file.
    #[error("trace {trace_id} does not satisfy trace.v1: {violation}")]
    Invalid {
        /// Its trace_id.
        trace_id: String,
        /// Where and why.
        violation: Box<SchemaViolation>,
    },
    /// It could not be made durable.
    #[error(transparent)]
    Journal(#[from] JournalError),
}

impl Host {
    /// Completes once every event this host published so far is stored by its sink
    /// ([`crate::events::EventSink::settled`]); at once without a sink.
    pub async fn events_settled(&self) {
        if let Some(sink) = &self.shared.events {
            sink.settled().await;
        }
    }

    /// Opens the data dir and the plugins dir, and admits the plugins (now, or on first use:
    /// [`HostConfig::loading`]).
    pub async fn open(config: &HostConfig) -> Result<Self, LoadError> {
        let crossing = Crossing::new()?;
        let fuel_per_ms = match config.fuel_per_ms {
            Some(rate) => rate,
            None => crate::calibrate::load(&config.data_dir)?
                .map_or(FUEL_PER_MS_DEFAULT, |c| c.fuel_per_ms),
        };
        let journal = Journal::open_with(&config.data_dir, config.storage_faults.clone())?;
        // Keys given in the config add to the compiled-in ones: none can be switched off.
        let mut trusted = crate::signing::TrustedKeys::compiled_in()?;
        if let Some(keys) = &config.trusted_keys {
            trusted.extend(keys);
        }
        // A pure client (a remote, and no agent of its own) opens no plugins dir.
        let client = config.remote.is_some() && config.agents.as_ref().is_some_and(Vec::is_empty);
        let plugins = match client {
            true => None,
            false => Some(PluginsDir::open(&config.plugins_dir, &trusted)?),
        };
        let target = match &plugins {
            Some(plugins) => CodeTarget::named(plugins.target_among(
                &runnable_targets(),
                WASMTIME_VERSION,
                cfg!(feature = "jit"),
            )?),
            None => CodeTarget::Native,
        };
        let sandbox = Sandbox::new(config.guest_seed, &target)?;
        let mut strangers = Vec::new();
        let wanted: Vec<&'static AgentSpec> = match (&config.agents, &plugins) {
            (Some(names), _) => names
                .iter()
                .map(|name| {
                    catalogue::agent(name).ok_or_else(|| LoadError::NotInCatalogue {
                        agent: name.clone(),
                    })
                })
                .collect::<Result<_, _>>()?,
            (None, Some(plugins)) => {
                for agent in plugins.manifest().components.keys() {
                    if catalogue::agent(agent).is_none() {
                        strangers.push(LoadError::NotInCatalogue {
                            agent: agent.clone(),
                        });
                    }
                }
                catalogue::CATALOGUE
                    .iter()
                    .filter(|spec| plugins.manifest().components.contains_key(spec.name))
                    .collect()
            }
            (None, None) => Vec::new(),
        };
        // With signatures required, no compilation cache: its entries are native code named
        // by a digest, not signed, so code is only ever compiled here from verified bytes or
        // loaded from a signed .cwasm.
        let precompiled = plugins
            .as_ref()
            .is_some_and(|p| p.manifest().precompiled.is_some());
        let cache = match (&config.cache_dir, precompiled, &plugins) {
            (Some(dir), false, Some(_)) if cfg!(feature = "jit") && trusted.is_empty() => {
                open_cache(dir)
            }
            _ => None,
        };
        let agents = Roster::new(plugins, &wanted, cache, strangers);
        if config.loading == Loading::Eager {
            agents
                .admit_all(&crossing, &sandbox, config.agents.is_some())
                .await?;
        }
        Ok(Self {
            shared: Arc::new_cyclic(|this| Shared {
                this: this.clone(),
                crossing,
                sandbox,
                agents,
                journal,
                fuel_per_ms,
                in_flight: tokio::sync::Semaphore::new(CALLS_IN_FLIGHT_MAX),
                simulation: config.simulation.clone(),
                remote: config.remote.clone(),
                events: config.events.clone(),
            }),
        })
    }

    /// Plugins refused so far: at open, or (loading on first use) when a call first reached
    /// them.
    pub fn load_failures(&self) -> Vec<Arc<LoadError>> {
        self.shared.agents.failures()
    }

    /// Admits every agent not tried yet (a host that loads on first use); refusals are
    /// logged and kept in [`Self::load_failures`].
    pub async fn admit_all(&self) {
        let shared = &self.shared;
        // Not strict: nothing is returned.
        let _ = shared
            .agents
            .admit_all(&shared.crossing, &shared.sandbox, false)
            .await;
    }

    /// The agents admitted so far, in catalogue order.
    pub fn loaded_agents(&self) -> Vec<&'static str> {
        self.shared.agents.admitted()
    }

    /// The crossing's checks (schemas compiled once).
    pub fn crossing(&self) -> &Crossing {
        &self.shared.crossing
    }

    /// The agents this host serves, in catalogue order: every agent not refused (loading on
    /// first use, those not reached yet included).
    pub fn agents(&self) -> Vec<&'static str> {
        let mut agents = self.shared.agents.serves();
        if let Some(remote) = &self.shared.remote {
            agents.extend(
                remote
                    .agents()
                    .into_iter()
                    .filter(|a| !self.shared.agents.has(a)),
            );
            agents.sort_by_key(|agent| catalogue::CATALOGUE.iter().position(|s| s.name == *agent));
        }
        agents
    }

    /// Checks a reasoning trace against trace.v1, then appends it to the data dir's
    /// traces.jsonl; durable when this returns.
    pub fn record_trace(&self, trace: &Trace) -> Result<Appended, TraceRecordError> {
        // A Trace holds only strings, integers, booleans and enums: it always serializes.
        let value = serde_json::to_value(trace).unwrap_or_default();
        self.shared
            .crossing
            .schemas()
            .validate(TRACE_SCHEMA.path, &value, "")
            .map_err(|violation| TraceRecordError::Invalid {
                trace_id: trace.trace_id.clone(),
                violation: Box::new(violation),
            })?;
        Ok(self.shared.journal.trace(&value)?)
    }

    /// The data dir's journal (its logs, a run's checkpoint).
    pub fn journal(&self) -> &Journal {
        &self.shared.journal
    }

    /// Each agent's component as built from source (its sha256: a precompiled dir's source
    /// digest), by agent: what a run's identity names, the same on every target.
    pub fn plugin_sources(&self) -> std::collections::BTreeMap<String, String> {
        let mut sources = self.shared.agents.sources();
        if let Some(remote) = &self.shared.remote {
            for (agent, source) in remote.sources() {
                if !self.shared.agents.has(&agent) {
                    sources.insert(agent, source);
                }
            }
        }
        sources
    }

    /// Quarantine records this host has written since it started, every crossing and nested
    /// agent-to-agent call included, or found already written by the interrupted run it
    /// resumed.
    pub fn quarantined(&self) -> u64 {
        self.shared.journal.quarantined()
    }

    /// The fuel rate deadlines are turned into.
    pub fn fuel_per_ms(&self) -> u64 {
        self.shared.fuel_per_ms
    }

    /// The seed of the agents' random sources.
    pub fn guest_seed(&self) -> u64 {
        self.shared.sandbox.guest_seed()
    }
}

/// The compilation cache at `dir`, or none (logged) if it cannot be opened: a cache that
/// fails costs time, never a result.
fn open_cache(dir: &std::path::Path) -> Option<CodeCache> {
    CodeCache::open(dir)
        .inspect_err(|error| tracing::warn!(%error, "compiling without a cache"))
        .ok()
}

impl Shared {
    /// The agent a call to `agent` runs, admitted (with every agent it can reach) if it was
    /// not yet; unavailable if this host does not serve it.
    pub(crate) async fn agent(
        &self,
        agent: &str,
    ) -> Result<Arc<PreparedAgent>, crate::error::CrossingError> {
        self.agents
            .reach(&self.crossing, &self.sandbox, agent)
            .await
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::path::Path;

    /// What a host shares, with no agent loaded: an engine, the crossing and a fresh data dir.
    pub(crate) fn shared(name: &str) -> (Arc<Shared>, PathBuf) {
        let data = std::env::temp_dir()
            .join("aura-unit")
            .join(format!("{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&data);
        let plugins = data.join("plugins");
        crate::plugins::write_components(&plugins, &[]).unwrap();
        let shared = Arc::new_cyclic(|this| Shared {
            this: this.clone(),
            crossing: Crossing::new().unwrap(),
            sandbox: Sandbox::new(0, &CodeTarget::Native).unwrap(),
            agents: Roster::new(
                Some(PluginsDir::open(&plugins, &crate::signing::TrustedKeys::none()).unwrap()),
                &[],
                None,
                Vec::new(),
            ),
            journal: Journal::open(&data).unwrap(),
            fuel_per_ms: FUEL_PER_MS_DEFAULT,
            in_flight: tokio::sync::Semaphore::new(CALLS_IN_FLIGHT_MAX),
            simulation: None,
            remote: None,
            events: None,
        });
        (shared, data)
    }

    /// Lines in the data dir's quarantine log.
    pub(crate) fn quarantine_count(data: &Path) -> usize {
        std::fs::read_to_string(data.join(crate::journal::QUARANTINE_PATH))
            .unwrap_or_default()
            .lines()
            .count()
    }

    #[test]
    fn a_trace_that_breaks_trace_v1_is_refused_before_it_reaches_the_file() {
        let (shared, data) = shared("host-trace");
        let host = Host { shared };
        let mut trace = crate::trace::tests::sample();
        host.record_trace(&trace).unwrap();
        trace.trace_id = "tr_1".into();
        let error = host.record_trace(&trace).unwrap_err();
        assert!(
            matches!(&error, TraceRecordError::Invalid { trace_id, violation }
                if trace_id == "tr_1" && violation.instance_path == "/trace_id"),
            "{error}"
        );
        let text = std::fs::read_to_string(data.join(crate::journal::TRACES_PATH)).unwrap();
        assert_eq!(text.lines().count(), 1, "only the valid trace was appended");
    }
}
