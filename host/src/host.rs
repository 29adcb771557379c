//! The host as every front holds it: the CLI, the orchestrator, and the servers to come.
//!
//! It owns [`Host`] and [`HostConfig`], opening a host (the data dir, the fuel rate, the
//! schemas, the plugins dir and its target, each agent admitted), and what every call shares
//! ([`Shared`]: the crossing, the sandbox, the journal, the fuel rate). Each question a host
//! answers has its own module: how a plugin is admitted ([`crate::admission`]), how a call runs
//! ([`crate::call`]: the one seam every front uses), how a tick is checked ([`crate::tick`]),
//! how agents call agents ([`crate::agent_calls`]). It must not check anything itself (the
//! crossing does) nor touch wasmtime (the sandbox does).

use std::path::PathBuf;
use std::sync::{Arc, Weak};

use crate::admission::{self, LoadError};
use crate::catalogue::{self, AgentSpec, TRACE_SCHEMA};
use crate::crossing::Crossing;
use crate::journal::{Journal, JournalError};
use crate::limits::FUEL_PER_MS_DEFAULT;
use crate::plugins::PluginsDir;
use crate::sandbox::{CodeTarget, Sandbox, WASMTIME_VERSION, runnable_targets};
use crate::schema::SchemaViolation;
use crate::trace::Trace;

/// Where the host finds its plugins and keeps its records.
#[derive(Debug, Clone)]
pub struct HostConfig {
    /// The plugins dir (manifest.json plus components).
    pub plugins_dir: PathBuf,
    /// The data dir (quarantine log, traces, calibration).
    pub data_dir: PathBuf,
    /// Load only these agents (each must load, or `open` fails); `None` loads every catalogue
    /// agent the plugins dir has and reports the ones that fail.
    pub agents: Option<Vec<String>>,
    /// Seed of the agents' random sources (WASI random): the same seed, the same draws.
    pub guest_seed: u64,
    /// Fuel per millisecond of deadline; `None`: the data dir's calibration, else
    /// [`FUEL_PER_MS_DEFAULT`].
    pub fuel_per_ms: Option<u64>,
}

impl HostConfig {
    /// A config with the default fuel rate.
    pub fn new(plugins_dir: impl Into<PathBuf>, data_dir: impl Into<PathBuf>) -> Self {
        Self {
            plugins_dir: plugins_dir.into(),
            data_dir: data_dir.into(),
            agents: None,
            guest_seed: 0,
            fuel_per_ms: None,
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
    load_failures: Vec<LoadError>,
}

/// What a call needs, shared with the imports of the calls in flight (an agent's `host.call`
/// comes back into the same crossing).
#[derive(Debug)]
pub(crate) struct Shared {
    /// This host, for the calls it makes on an agent's behalf.
    pub(crate) this: Weak<Shared>,
    pub(crate) crossing: Crossing,
    pub(crate) sandbox: Sandbox,
    pub(crate) journal: Journal,
    pub(crate) fuel_per_ms: u64,
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
        violation: SchemaViolation,
    },
    /// It could not be made durable.
    #[error(transparent)]
    Journal(#[from] JournalError),
}

impl Host {
    /// Opens the data dir, compiles the schemas, loads and admits the plugins.
    pub async fn open(config: &HostConfig) -> Result<Self, LoadError> {
        let crossing = Crossing::new()?;
        let fuel_per_ms = match config.fuel_per_ms {
            Some(rate) => rate,
            None => crate::calibrate::load(&config.data_dir)?
                .map_or(FUEL_PER_MS_DEFAULT, |c| c.fuel_per_ms),
        };
        let journal = Journal::open(&config.data_dir)?;
        let plugins = PluginsDir::open(&config.plugins_dir)?;
        let target =
            plugins.target_among(&runnable_targets(), WASMTIME_VERSION, cfg!(feature = "jit"))?;
        let mut sandbox = Sandbox::new(config.guest_seed, &CodeTarget::named(target))?;
        let mut load_failures = Vec::new();
        let wanted: Vec<&'static AgentSpec> = match &config.agents {
            Some(names) => names
                .iter()
                .map(|name| {
                    catalogue::agent(name).ok_or_else(|| LoadError::NotInCatalogue {
                        agent: name.clone(),
                    })
                })
                .collect::<Result<_, _>>()?,
            None => {
                for agent in plugins.manifest().components.keys() {
                    if catalogue::agent(agent).is_none() {
                        load_failures.push(LoadError::NotInCatalogue {
                            agent: agent.clone(),
                        });
                    }
                }
                catalogue::CATALOGUE
                    .iter()
                    .filter(|spec| plugins.manifest().components.contains_key(spec.name))
                    .collect()
            }
        };
        for spec in wanted {
            match admission::admit(&crossing, &mut sandbox, &plugins, spec).await {
                Ok(()) => {}
                Err(error) if config.agents.is_some() => return Err(error),
                Err(error) => {
                    tracing::error!(
                        agent = spec.name,
                        error = %crate::visible::visible(&error.to_string()),
                        "plugin refused"
                    );
                    load_failures.push(error);
                }
            }
        }
        Ok(Self {
            shared: Arc::new_cyclic(|this| Shared {
                this: this.clone(),
                crossing,
                sandbox,
                journal,
                fuel_per_ms,
            }),
            load_failures,
        })
    }

    /// Plugins that were found but refused (only when every agent was requested).
    pub fn load_failures(&self) -> &[LoadError] {
        &self.load_failures
    }

    /// The crossing's checks (schemas compiled once).
    pub fn crossing(&self) -> &Crossing {
        &self.shared.crossing
    }

    /// The agents this host serves, in catalogue order.
    pub fn agents(&self) -> Vec<&'static str> {
        catalogue::CATALOGUE
            .iter()
            .map(|spec| spec.name)
            .filter(|name| self.shared.sandbox.serves(name))
            .collect()
    }

    /// Checks a reasoning trace against trace.v1, then appends it to the data dir's
    /// traces.jsonl; durable when this returns.
    pub fn record_trace(&self, trace: &Trace) -> Result<(), TraceRecordError> {
        // A Trace holds only strings, integers, booleans and enums: it always serializes.
        let value = serde_json::to_value(trace).unwrap_or_default();
        self.shared
            .crossing
            .schemas()
            .validate(TRACE_SCHEMA.path, &value, "")
            .map_err(|violation| TraceRecordError::Invalid {
                trace_id: trace.trace_id.clone(),
                violation,
            })?;
        Ok(self.shared.journal.trace(&value)?)
    }

    /// Quarantine records this host has written since it started (every crossing, nested
    /// agent-to-agent calls included).
    pub fn quarantined(&self) -> u64 {
        self.shared.journal.quarantined()
    }

    /// The fuel rate deadlines are turned into.
    pub fn fuel_per_ms(&self) -> u64 {
        self.shared.fuel_per_ms
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
        let shared = Arc::new_cyclic(|this| Shared {
            this: this.clone(),
            crossing: Crossing::new().unwrap(),
            sandbox: Sandbox::new(0, &CodeTarget::Native).unwrap(),
            journal: Journal::open(&data).unwrap(),
            fuel_per_ms: FUEL_PER_MS_DEFAULT,
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
        let host = Host {
            shared,
            load_failures: Vec::new(),
        };
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
