//! What a host is opened with: where its plugins and records are, which agents it serves and
//! when it admits them, and the seams a deployment plugs in (a remote for the agents it does not
//! serve, a sink for its events, a simulation, storage faults).
//!
//! It owns [`HostConfig`] and its defaults. It must not open anything (the host does).

use std::path::PathBuf;
use std::sync::Arc;

use aura_contract::limits::FUEL_PER_MS_DEFAULT;
use aura_plugins::code_cache::CACHE_DIR_IN_DATA_DIR;
use aura_plugins::signing::{Identity, TrustedKeys};

use crate::admission::Loading;
use crate::calibrate::WORKLOAD_AGENT;
use crate::events::EventSink;
use crate::journal::StorageFaults;
use crate::remote::Remote;
#[cfg(feature = "simulation")]
use crate::simulation::Simulation;

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
    /// build ([`aura_plugins::signing::TrustedKeys::compiled_in`], none unless `AURA_TRUSTED_KEYS`
    /// was set when it was built), which cannot be removed. An embedder locks its own here.
    pub trusted_keys: Option<TrustedKeys>,
    /// A deterministic simulation observing every call and refusal and injecting faults
    /// ([`crate::simulation`]); only in a build with the `simulation` feature (the tests').
    #[cfg(feature = "simulation")]
    pub simulation: Option<Arc<dyn Simulation>>,
    /// Where the calls and ticks of agents this host does not serve itself run: workers on
    /// other hosts ([`crate::remote`]; the wire's `Cluster`). With `agents: Some(vec![])`
    /// the host serves nothing itself and opens no plugins dir: a pure client.
    pub remote: Option<Arc<dyn Remote>>,
    /// Where this host's events go (seed 003's; the wire's JetStream publisher); `None`:
    /// nowhere.
    pub events: Option<Arc<dyn EventSink>>,
    /// Faults injected into the journal's writes (the deterministic simulation, the crash
    /// tests); `None` in normal use.
    pub storage_faults: Option<Arc<dyn StorageFaults>>,
    /// This host's identity: what it signs its proofs of a user's yes with when it sends a
    /// confirmed call to a worker ([`crate::confirmation`]).
    pub identity: Option<Identity>,
    /// The fronts whose proofs of a user's yes this host takes for a confirm_required call
    /// sent over the wire; none: such a call needs no proof (an open deployment).
    pub trusted_fronts: TrustedKeys,
}

impl HostConfig {
    /// The simulation this config names: none in a build without the `simulation` feature.
    pub(crate) fn simulation_hook(&self) -> Option<Arc<dyn crate::simulation::Simulation>> {
        #[cfg(feature = "simulation")]
        return self.simulation.clone();
        #[cfg(not(feature = "simulation"))]
        None
    }

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
            #[cfg(feature = "simulation")]
            simulation: None,
            remote: None,
            events: None,
            storage_faults: None,
            identity: None,
            trusted_fronts: TrustedKeys::none(),
        }
    }

    /// The host [`Host::calibrate`](crate::Host::calibrate) measures with: the reference workload's agent only, at
    /// the built-in rate whatever an earlier calibration said.
    pub fn for_calibration(plugins_dir: impl Into<PathBuf>, data_dir: impl Into<PathBuf>) -> Self {
        let mut config = Self::new(plugins_dir, data_dir);
        config.agents = Some(vec![WORKLOAD_AGENT.to_owned()]);
        config.fuel_per_ms = Some(FUEL_PER_MS_DEFAULT);
        config
    }
}
