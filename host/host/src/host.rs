//! The host as every front holds it: the CLI, the orchestrator, the MCP and NATS fronts.
//!
//! It owns [`Host`]: opening one (the data dir, the fuel rate, the schemas, the plugins dir
//! and its target, the compilation cache, the agents admitted now or on first use) and what a
//! front asks of it besides calls (its agents, its records, a reasoning trace recorded). Each
//! question a host answers has its own module: how a plugin is admitted
//! ([`crate::admission`]), how a call runs ([`crate::dispatch`]: the one seam every front
//! uses), how a tick is checked (`tick`), how agents call agents
//! ([`crate::agent_calls`]), how a peer's call is served (`worker`). It must not
//! check anything itself (the crossing does) nor touch wasmtime (the sandbox does).

use aura_contract::caused::Caused;
use std::sync::Arc;

use aura_contract::catalogue::{self, AgentSpec, TRACE_SCHEMA};
use aura_contract::crossing::Crossing;
use aura_contract::limits::{
    CALLS_IN_FLIGHT_MAX, EPOCH_BACKSTOP_MARGIN_MS, FUEL_PER_MS_DEFAULT,
    SIMULATED_BACKSTOP_MARGIN_MS,
};
use aura_contract::schema::SchemaViolation;
use aura_contract::trace::Trace;
use aura_plugins::PluginsDir;
use aura_plugins::code_cache::CodeCache;
use aura_plugins::signing::TrustedKeys;
use aura_sandbox::{
    COMPILES, CodeTarget, EngineTuning, Sandbox, WASMTIME_VERSION, runnable_targets,
};

use crate::admission::{LoadError, Loading, Roster};
use crate::calibrate;
use crate::config::HostConfig;
use crate::confirmation::Confirmations;
use crate::journal::{Appended, Journal, JournalError};
use crate::narrator::Narrator;
use crate::remote::SentFrame;
use crate::request::{CallInput, CallRequest};
use crate::shared::{Refused, Shared};
use crate::tick::TickOutcome;
use aura_contract::crossing::CheckedCall;
use aura_contract::envelope::ResultEnvelope;

/// The host: catalogue-checked plugins behind the crossing. A clone is another handle on the
/// same host (for a front's tasks); the host closes when the last one is dropped.
#[derive(Debug, Clone)]
pub struct Host {
    pub(crate) shared: Arc<Shared>,
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
            None => {
                calibrate::load(&config.data_dir)?.map_or(FUEL_PER_MS_DEFAULT, |c| c.fuel_per_ms)
            }
        };
        let journal = Journal::open_with(&config.data_dir, config.storage_faults.clone())?;
        // Keys given in the config add to the compiled-in ones: none can be switched off.
        let mut trusted = TrustedKeys::compiled_in()?;
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
                COMPILES,
            )?),
            None => CodeTarget::Native,
        };
        // Under a deterministic simulation the machine's load must not decide a call: the
        // backstop only guards against a hang (fuel and the simulation's faults decide).
        let simulation = config.simulation_hook();
        let tuning = EngineTuning {
            backstop_margin_ms: match simulation {
                Some(_) => SIMULATED_BACKSTOP_MARGIN_MS,
                None => EPOCH_BACKSTOP_MARGIN_MS,
            },
            ..EngineTuning::default()
        };
        let sandbox = Sandbox::tuned(config.guest_seed, &target, tuning)?;
        let (wanted, strangers) = wanted_agents(config.agents.as_deref(), plugins.as_ref())?;
        let cache = cache_for(config, plugins.as_ref(), &trusted);
        let agents = Roster::new(plugins, &wanted, cache, strangers);
        if config.loading == Loading::Eager {
            agents
                .admit_all(&crossing, &sandbox, config.agents.is_some())
                .await?;
        }
        Ok(Self {
            shared: Arc::new_cyclic(|this| Shared {
                this: this.clone(),
                crossing: Arc::new(crossing),
                sandbox: Arc::new(sandbox),
                agents: Arc::new(agents),
                journal: Arc::new(journal),
                fuel_per_ms,
                in_flight: tokio::sync::Semaphore::new(CALLS_IN_FLIGHT_MAX),
                simulation,
                remote: config.remote.clone(),
                events: config.events.clone(),
                confirmations: Arc::new(Confirmations::new(
                    config.identity.clone(),
                    config.trusted_fronts.clone(),
                )),
                guest_seed: None,
                person: None,
            }),
        })
    }

    /// A host for `person` on a fleet's host: this host's crossing, engine, agents, seams and
    /// confirmations, shared, with a journal of its own in `data_dir`, so one person's records
    /// are never written where another's are, their guests drawing from `guest_seed` (as
    /// `aura live --seed` would), and every quarantine record, event and span naming them. The
    /// agents are not loaded again.
    pub fn for_person(
        &self,
        person: &aura_contract::person::Person,
        data_dir: &std::path::Path,
        guest_seed: u64,
    ) -> Result<Self, JournalError> {
        let journal = Journal::open_with(data_dir, None)?.of_person(person);
        Ok(self.sharing(Arc::new(journal), Some(guest_seed), Some(person.clone())))
    }

    /// This host with a journal of its own in `data_dir` (one day of a live session's life):
    /// everything else, its person and its guests' seed included, shared.
    pub fn in_data_dir(&self, data_dir: &std::path::Path) -> Result<Self, JournalError> {
        let journal = self.shared.journal.beside(data_dir)?;
        Ok(self.on_journal(Arc::new(journal)))
    }

    /// This host writing through `journal` (one day of a life, as its store opened it: the
    /// store and the host share its logs): everything else, its person and its guests' seed
    /// included, shared.
    pub fn on_journal(&self, journal: Arc<Journal>) -> Self {
        let shared = &self.shared;
        self.sharing(journal, shared.guest_seed, shared.person.clone())
    }

    /// This host's crossing, engine, agents, seams and confirmations with `journal`.
    fn sharing(
        &self,
        journal: Arc<Journal>,
        guest_seed: Option<u64>,
        person: Option<aura_contract::person::Person>,
    ) -> Self {
        let shared = &self.shared;
        Self {
            shared: Arc::new_cyclic(|this| Shared {
                this: this.clone(),
                crossing: shared.crossing.clone(),
                sandbox: shared.sandbox.clone(),
                agents: shared.agents.clone(),
                journal,
                fuel_per_ms: shared.fuel_per_ms,
                in_flight: tokio::sync::Semaphore::new(CALLS_IN_FLIGHT_MAX),
                simulation: shared.simulation.clone(),
                remote: shared.remote.clone(),
                events: shared.events.clone(),
                confirmations: shared.confirmations.clone(),
                guest_seed,
                person,
            }),
        }
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
        self.shared
            .guest_seed
            .unwrap_or_else(|| self.shared.sandbox.guest_seed())
    }

    /// Runs one call, from any front, through the crossing, the sandbox and the crossing
    /// again (`dispatch`): the in-flight bound, the crossing (unless the call is
    /// already checked), the frame its [`CallRequest`] says (a front's call in its request's
    /// trace, confirmed or not; a peer's in the frame it sent), then the run and the crossing
    /// out. A front hands what it has (text, bytes, an envelope, a checked call) or the
    /// request it built.
    ///
    /// `Ok` is a result.v1: the tool's result, or an error the agent itself reported. `Err` is
    /// a refusal by the crossing; it has been quarantined before this returns.
    pub async fn dispatch<'a>(
        &self,
        request: impl Into<CallRequest<'a>>,
    ) -> Result<ResultEnvelope, Refused> {
        self.shared.dispatch(request.into()).await
    }

    /// The crossing's inbound checks alone (envelope, catalogue, args), for a front that must
    /// do something between checking a call and running it: ask the user to confirm it (an MCP
    /// client's elicitation) with the question its checked args make. The checked call then
    /// goes to [`Host::dispatch`] as it is. A refusal is quarantined, as in `dispatch`.
    // A refusal is the error path, taken at most once per call; boxing it buys nothing.
    #[allow(clippy::result_large_err)]
    pub fn check<'a>(&self, input: impl Into<CallInput<'a>>) -> Result<CheckedCall, Refused> {
        self.shared.check_input(input.into())
    }

    /// Runs `agent`'s tick on `context` and checks what it proposes (`tick`): the
    /// output as a whole (proposals.v1), then each proposed call on its own (envelope,
    /// catalogue, args). A bad proposal is quarantined and left out; it does not spoil the
    /// others. `Err` means the tick itself failed (trap, deadline, output not proposals.v1)
    /// and was quarantined.
    pub async fn tick(
        &self,
        agent: &str,
        context: &serde_json::Value,
    ) -> Result<TickOutcome, Refused> {
        self.shared.tick_on(agent, context).await
    }

    /// [`Host::tick`] for several agents on one context, concurrently, as the orchestrator
    /// runs a tick: the context is canonicalized once, not once per agent (~180 µs for the
    /// day's ~60 KB contexts). Outcomes come in `agents`' order.
    pub async fn tick_all(
        &self,
        agents: &[&str],
        context: &serde_json::Value,
    ) -> Vec<Result<TickOutcome, Refused>> {
        self.shared.tick_all_on(agents, context).await
    }

    /// A worker's answer to a call sent over the wire (`worker`): `body` through
    /// [`Host::dispatch`] as a peer's call ([`CallRequest::from_peer`]). Always a result.v1,
    /// canonical: the tool's result, its own error, or why it was refused.
    pub async fn serve_call(
        &self,
        body: &[u8],
        sent: &SentFrame,
        addressed: Option<(&str, &str)>,
    ) -> String {
        self.shared.serve_call(body, sent, addressed).await
    }

    /// A worker's answer to a tick sent over the wire: the agent's proposals.v1 output as the
    /// crossing checked it whole, in a result.v1 of tool [`crate::remote::TICK_TOOL`] under
    /// the tick's id (each proposed call is checked by the host that acts on it); or why the
    /// tick failed, quarantined here.
    pub async fn serve_tick(&self, agent: &str, body: &[u8], sent: &SentFrame) -> String {
        self.shared.serve_tick(agent, body, sent).await
    }

    /// Runs a checked call `runs` times in the sandbox alone, with its full budget, timing
    /// each run around the sandbox: (fuel burned, wall time) per run. For calibration and
    /// benchmarks: the crossing's checks and the reply's are left out on purpose.
    pub async fn measure(
        &self,
        call: &CheckedCall,
        runs: usize,
    ) -> Result<Vec<(u64, std::time::Duration)>, Refused> {
        self.shared.measure(call, runs).await
    }

    /// Measures this device's fuel per millisecond with the reference workload
    /// ([`calibrate`]: one unmeasured run, then [`calibrate::CALIBRATION_RUNS`] measured
    /// ones) and stores it in the data dir, where later hosts read it. Open the host with
    /// [`HostConfig::for_calibration`].
    pub async fn calibrate(
        &self,
        data_dir: &std::path::Path,
    ) -> Result<calibrate::Calibration, calibrate::CalibrationError> {
        self.shared.calibrate(data_dir).await
    }

    /// The narrator of this host's plugins dir (`narrator`), for the target its
    /// agents run on, its compiled code kept in the host's compilation cache when it keeps
    /// one; an error that says why when the dir has none or it is refused.
    pub fn narrator(&self) -> Result<Narrator, LoadError> {
        self.shared.narrator()
    }
}

/// The agents a host serves: the ones named (each must be a catalogue agent), or every
/// catalogue agent the plugins dir has; and, for the latter, the dir's components that are no
/// catalogue agent (refused, reported with the load failures).
fn wanted_agents(
    named: Option<&[String]>,
    plugins: Option<&PluginsDir>,
) -> Result<(Vec<&'static AgentSpec>, Vec<LoadError>), LoadError> {
    let mut strangers = Vec::new();
    let wanted = match (named, plugins) {
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
    Ok((wanted, strangers))
}

/// The compilation cache a host keeps: only where it compiles plain components itself. With
/// signatures required, none: its entries are native code named by a digest, not signed, so
/// code is only ever compiled here from verified bytes or loaded from a signed .cwasm.
fn cache_for(
    config: &HostConfig,
    plugins: Option<&PluginsDir>,
    trusted: &TrustedKeys,
) -> Option<CodeCache> {
    let precompiled = plugins.is_some_and(|p| p.manifest().precompiled.is_some());
    match (&config.cache_dir, precompiled, plugins) {
        (Some(dir), false, Some(_)) if COMPILES && trusted.is_empty() => open_cache(dir),
        _ => None,
    }
}

/// The compilation cache at `dir`, or none (logged) if it cannot be opened: a cache that
/// fails costs time, never a result.
fn open_cache(dir: &std::path::Path) -> Option<CodeCache> {
    CodeCache::open(dir)
        .inspect_err(|error| tracing::warn!(error = %Caused(error), "compiling without a cache"))
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shared::tests::shared;

    #[test]
    fn a_trace_that_breaks_trace_v1_is_refused_before_it_reaches_the_file() {
        let (shared, data) = shared("host-trace");
        let host = Host { shared };
        let mut trace = aura_contract::trace::tests::sample();
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
