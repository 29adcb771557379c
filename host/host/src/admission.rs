//! Admission: how a plugin on disk becomes an agent the host serves, and why it may not.
//!
//! It owns the steps from a digest-checked component to a served agent (compile it, or map its
//! code from the compilation cache or a precompiled file; pre-instantiate; ask the agent for
//! its manifest; check the manifest against manifest.v1 and the catalogue: the same name,
//! exactly the catalogue's tools); when that happens ([`Roster`]: every agent as the host
//! opens, or each when a call can first reach it, [`Loading`]); every error that keeps an
//! agent from being served ([`LoadError`]); and precompiling a plugins dir for a runtime-only
//! host. It must not trust what a plugin claims: the catalogue decides which agents and tools
//! exist.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use serde_json::Value;
use tokio::sync::OnceCell;

use aura_contract::canonical::parse_i_json;
use aura_contract::catalogue::{self, AgentSpec, MANIFEST_SCHEMA};
use aura_contract::crossing::Crossing;
use aura_contract::error::{CrossingError, Phase};
use aura_contract::limits::CROSSING_BYTES_MAX;
use aura_plugins::code_cache::CodeCache;
use aura_plugins::{PluginError, PluginsDir};
use aura_sandbox::{Code, PreparedAgent, Sandbox, SandboxError};

/// When a host admits its agents.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Loading {
    /// Every agent as the host opens: a run that ticks them all, and a start that reports
    /// every refused plugin at once.
    #[default]
    Eager,
    /// Each agent when a call can first reach it: the call's agent and every agent it may call
    /// (the catalogue's `may_call`, followed transitively), before the call starts, so loading
    /// never spends a call's deadline. An agent that is refused then is refused as it would
    /// have been at start (the call finds it unavailable). What a one-call process wants.
    OnFirstUse,
}

/// An agent's admission, once tried: the agent, or why it is not served.
type Admitted = Result<Arc<PreparedAgent>, Arc<LoadError>>;

/// The agents a host may serve, each admitted at most once (concurrent first calls wait for
/// the same admission).
#[derive(Debug)]
pub(crate) struct Roster {
    /// None for a host that serves no agent itself (a client of remote workers).
    plugins: Option<PluginsDir>,
    /// Where compiled code is kept between starts (a JIT host's plain components only).
    cache: Option<CodeCache>,
    /// One cell per agent the host may serve, in catalogue order.
    cells: BTreeMap<&'static str, OnceCell<Admitted>>,
    /// Components found at open that the catalogue does not have.
    strangers: Vec<Arc<LoadError>>,
}

impl Roster {
    /// A roster of `wanted` (agents of the catalogue that `plugins` has), none admitted yet.
    pub(crate) fn new(
        plugins: Option<PluginsDir>,
        wanted: &[&'static AgentSpec],
        cache: Option<CodeCache>,
        strangers: Vec<LoadError>,
    ) -> Self {
        Self {
            plugins,
            cache,
            cells: wanted
                .iter()
                .map(|spec| (spec.name, OnceCell::new()))
                .collect(),
            strangers: strangers.into_iter().map(Arc::new).collect(),
        }
    }

    /// Admits every agent now, in catalogue order. With `strict`, the first refusal is
    /// returned; otherwise refusals are logged and kept ([`Self::failures`]).
    pub(crate) async fn admit_all(
        &self,
        crossing: &Crossing,
        sandbox: &Sandbox,
        strict: bool,
    ) -> Result<(), LoadError> {
        for spec in catalogue::CATALOGUE {
            let Some(cell) = self.cells.get(spec.name) else {
                continue;
            };
            if cell.initialized() {
                continue;
            }
            if !strict {
                // Shares the admission with any call reaching the agent at the same time.
                self.admission(crossing, sandbox, spec, cell).await;
                continue;
            }
            // Strict is only at open, before any call: the cell is still empty.
            let admitted = Arc::new(self.admit(crossing, sandbox, spec).await?);
            let _ = cell.set(Ok(admitted));
        }
        Ok(())
    }

    /// The agent a call to `agent` runs, after admitting every agent it can reach (callees
    /// first, then the agent) that was not tried yet. An agent this host does not serve, or
    /// whose plugin was refused, is unavailable.
    pub(crate) async fn reach(
        &self,
        crossing: &Crossing,
        sandbox: &Sandbox,
        agent: &str,
    ) -> Result<Arc<PreparedAgent>, CrossingError> {
        let reached = match self.cells.get(agent).map(OnceCell::get) {
            // Every call after the first: the agent was tried, and (callees are tried before
            // the agent itself, below) so was everything it can reach.
            Some(Some(admitted)) => admitted.clone().ok(),
            // The first calls only (before its admission ends). Admission compiles and asks for
            // the manifest, a state larger than a whole call's; boxed, so that every call's
            // state does not carry its size.
            Some(None) => Box::pin(self.reach_first(crossing, sandbox, agent)).await,
            None => None,
        };
        reached.ok_or_else(|| CrossingError::AgentUnavailable {
            agent: agent.to_owned(),
        })
    }

    /// [`Roster::reach`] for an agent not tried yet: `None` if its admission failed.
    async fn reach_first(
        &self,
        crossing: &Crossing,
        sandbox: &Sandbox,
        agent: &str,
    ) -> Option<Arc<PreparedAgent>> {
        let mut target = None;
        for name in catalogue::reachable_from(agent).into_iter().rev() {
            let (Some(cell), Some(spec)) = (self.cells.get(name), catalogue::agent(name)) else {
                continue;
            };
            let admitted = self.admission(crossing, sandbox, spec, cell).await;
            if name == agent {
                target = Some(admitted);
            }
        }
        match target {
            Some(Ok(prepared)) => Some(prepared.clone()),
            _ => None,
        }
    }

    /// The agent's admission: tried once, by whichever task gets there first; the others wait
    /// for its outcome.
    async fn admission<'a>(
        &self,
        crossing: &Crossing,
        sandbox: &Sandbox,
        spec: &'static AgentSpec,
        cell: &'a OnceCell<Admitted>,
    ) -> &'a Admitted {
        cell.get_or_init(|| async {
            match self.admit(crossing, sandbox, spec).await {
                Ok(agent) => Ok(Arc::new(agent)),
                Err(error) => Err(Arc::new(refused(spec, error))),
            }
        })
        .await
    }

    /// Reads, compiles (or maps) and pre-instantiates one agent, then checks its manifest
    /// against the catalogue.
    async fn admit(
        &self,
        crossing: &Crossing,
        sandbox: &Sandbox,
        spec: &'static AgentSpec,
    ) -> Result<PreparedAgent, LoadError> {
        let prepared = self.prepare(sandbox, spec)?;
        let invalid = |error| LoadError::ManifestInvalid {
            agent: spec.name.to_owned(),
            error: Box::new(error),
        };
        let invocation = sandbox.manifest(&prepared).await.map_err(invalid)?;
        let manifest = parse_i_json(&invocation.output, CROSSING_BYTES_MAX).map_err(|error| {
            invalid(CrossingError::Json {
                phase: Phase::Reply,
                error,
            })
        })?;
        check_manifest(crossing, spec, &manifest)?;
        tracing::info!(
            agent = spec.name,
            version = manifest["version"].as_str().unwrap_or_default(),
            "agent.loaded"
        );
        Ok(prepared)
    }

    /// The agent's code: mapped from its precompiled file, or from the compilation cache, or
    /// compiled (and cached).
    fn prepare(
        &self,
        sandbox: &Sandbox,
        spec: &'static AgentSpec,
    ) -> Result<PreparedAgent, LoadError> {
        let (name, memory_bytes_max) = (spec.name, spec.memory_bytes_max);
        // A roster without a plugins dir has no agent (no cell) to prepare.
        let Some(plugins) = &self.plugins else {
            return Err(LoadError::NotInCatalogue {
                agent: name.to_owned(),
            });
        };
        if plugins.manifest().precompiled.is_some() {
            let file = plugins.check_component(name)?;
            return Ok(sandbox.prepare(name, memory_bytes_max, Code::Precompiled(&file))?);
        }
        if let Some(cache) = &self.cache {
            // The component is checked by its digest even when its code comes from the cache:
            // a tampered component is refused whatever the cache holds.
            let checked = plugins.check_component(name)?;
            return sandbox.prepare_cached(name, memory_bytes_max, checked.sha256(), cache, || {
                Ok::<_, LoadError>(plugins.read_component(name)?)
            });
        }
        let bytes = plugins.read_component(name)?;
        Ok(sandbox.prepare(name, memory_bytes_max, Code::Wasm(&bytes))?)
    }

    /// The plugins dir, when the host has one.
    pub(crate) fn plugins(&self) -> Option<&PluginsDir> {
        self.plugins.as_ref()
    }

    /// The compilation cache, when the host keeps one.
    pub(crate) fn cache(&self) -> Option<&CodeCache> {
        self.cache.as_ref()
    }

    /// Each component's source digest, by agent (see [`crate::Host::plugin_sources`]).
    pub(crate) fn sources(&self) -> std::collections::BTreeMap<String, String> {
        let Some(plugins) = &self.plugins else {
            return std::collections::BTreeMap::new();
        };
        plugins
            .manifest()
            .components
            .iter()
            .map(|(agent, entry)| {
                let source = entry.source_sha256.as_ref().unwrap_or(&entry.sha256);
                (agent.clone(), source.clone())
            })
            .collect()
    }

    /// Whether this host may serve `agent` itself (its plugin is here, refused or not).
    pub(crate) fn has(&self, agent: &str) -> bool {
        self.cells.contains_key(agent)
    }

    /// The agents not refused so far, in catalogue order: every admitted one, and (loading
    /// on first use) those not tried yet.
    pub(crate) fn serves(&self) -> Vec<&'static str> {
        self.names_where(|cell| !matches!(cell.get(), Some(Err(_))))
    }

    /// The agents admitted so far, in catalogue order.
    pub(crate) fn admitted(&self) -> Vec<&'static str> {
        self.names_where(|cell| matches!(cell.get(), Some(Ok(_))))
    }

    fn names_where(&self, keep: impl Fn(&OnceCell<Admitted>) -> bool) -> Vec<&'static str> {
        catalogue::CATALOGUE
            .iter()
            .filter(|spec| self.cells.get(spec.name).is_some_and(&keep))
            .map(|spec| spec.name)
            .collect()
    }

    /// Plugins refused so far: components the catalogue does not have, then agents refused at
    /// admission, in catalogue order.
    pub(crate) fn failures(&self) -> Vec<Arc<LoadError>> {
        let refused = catalogue::CATALOGUE.iter().filter_map(|spec| {
            match self.cells.get(spec.name)?.get()? {
                Err(error) => Some(error.clone()),
                Ok(_) => None,
            }
        });
        self.strangers.iter().cloned().chain(refused).collect()
    }
}

/// Logs a refused plugin as it is refused, and hands the error on.
fn refused(spec: &AgentSpec, error: LoadError) -> LoadError {
    tracing::error!(
        agent = spec.name,
        error = %aura_contract::visible::visible(&aura_contract::caused::caused(&error)),
        "plugin refused"
    );
    error
}

/// Why the host could not start, or an agent was not admitted.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The plugins dir has a component for an agent the catalogue does not know (or one was
    /// asked for that the catalogue does not have).
    #[error("plugin `{agent}` is not in the catalogue")]
    NotInCatalogue {
        /// The agent.
        agent: String,
    },
    /// The agent's manifest is not a valid manifest.v1.
    #[error("plugin `{agent}` gave an invalid manifest: {error}")]
    ManifestInvalid {
        /// The agent.
        agent: String,
        /// What is wrong with it.
        error: Box<CrossingError>,
    },
    /// The manifest's name or tools differ from the catalogue's.
    #[error(
        "plugin `{agent}` does not match the catalogue: name `{name}`, tools not in the catalogue {extra:?}, catalogue tools missing {missing:?}"
    )]
    ManifestMismatch {
        /// The agent it was loaded as.
        agent: String,
        /// The name its manifest gives.
        name: String,
        /// Tools it claims that the catalogue does not list for it.
        extra: Vec<String>,
        /// Catalogue tools it does not claim.
        missing: Vec<String>,
    },
    /// Reading plugins/ or a component failed, or a component was refused (digest, target).
    #[error(transparent)]
    Plugin(#[from] PluginError),
    /// The engine or a component could not be set up.
    #[error(transparent)]
    Sandbox(#[from] SandboxError),
    /// The embedded schemas did not compile (a build defect).
    #[error(transparent)]
    Schema(#[from] aura_contract::schema::SchemaCompileError),
    /// The data dir or its logs could not be opened.
    #[error(transparent)]
    Journal(#[from] crate::journal::JournalError),
    /// The trusted keys this host was built with are malformed (a build defect: it refuses to
    /// start rather than run unsigned code it was meant to refuse).
    #[error("the trusted keys compiled into this host are malformed")]
    TrustedKeys(#[from] aura_plugins::signing::SigningError),
    /// The data dir's calibration could not be read.
    #[error(transparent)]
    Calibration(#[from] crate::calibrate::CalibrationError),
}

/// Checks an agent's parsed manifest: manifest.v1, then the catalogue's name and exactly the
/// catalogue's tools.
fn check_manifest(
    crossing: &Crossing,
    spec: &AgentSpec,
    manifest: &Value,
) -> Result<(), LoadError> {
    crossing
        .schemas()
        .validate(MANIFEST_SCHEMA.path, manifest, "")
        .map_err(|violation| LoadError::ManifestInvalid {
            agent: spec.name.to_owned(),
            error: Box::new(CrossingError::Schema {
                phase: Phase::Reply,
                violation,
            }),
        })?;
    // manifest.v1 guarantees the shape read below.
    let name = manifest["name"].as_str().unwrap_or_default();
    let claimed: BTreeSet<&str> = manifest["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let listed: BTreeSet<&str> = spec.tools.iter().map(|tool| tool.name).collect();
    if name != spec.name || claimed != listed {
        return Err(LoadError::ManifestMismatch {
            agent: spec.name.to_owned(),
            name: name.to_owned(),
            extra: claimed.difference(&listed).map(|s| s.to_string()).collect(),
            missing: listed.difference(&claimed).map(|s| s.to_string()).collect(),
        });
    }
    Ok(())
}

/// Precompiles every catalogue agent of the plugins dir `source` (digest-checked plain
/// components), and its narrator if it has one (with the narrator's own engine settings), for
/// `target` into `out`: `<agent>.cwasm` files and a manifest recording their
/// sha256, the target and this wasmtime version, which is all a runtime-only host trusts.
pub fn precompile_plugins(
    source: &std::path::Path,
    target: &aura_sandbox::CodeTarget,
    out: &std::path::Path,
) -> Result<aura_plugins::PluginManifest, LoadError> {
    let plugins = PluginsDir::open(source, &aura_plugins::signing::TrustedKeys::compiled_in()?)?;
    if plugins.manifest().precompiled.is_some() {
        return Err(PluginError::BadManifest {
            path: source.join(aura_plugins::MANIFEST_FILE),
            message: "its components are already precompiled; compile from the .wasm dir".into(),
        }
        .into());
    }
    let mut compiled = Vec::new();
    for spec in aura_contract::catalogue::CATALOGUE {
        if !plugins.manifest().components.contains_key(spec.name) {
            continue;
        }
        let wasm = plugins.read_component(spec.name)?;
        let cwasm = aura_sandbox::precompile(spec.name, target, &wasm)?;
        compiled.push((
            spec.name.to_owned(),
            format!("{}.cwasm", spec.name),
            aura_contract::digest::sha256_hex(&wasm),
            cwasm,
        ));
    }
    if plugins.manifest().narrator.is_some() {
        let wasm = plugins.read_narrator()?;
        let cwasm = aura_sandbox::precompile_narrator(target, &wasm)?;
        let name = aura_plugins::NARRATOR_COMPONENT;
        compiled.push((
            name.to_owned(),
            format!("{name}.cwasm"),
            aura_contract::digest::sha256_hex(&wasm),
            cwasm,
        ));
    }
    let precompiled = aura_plugins::Precompiled {
        target: target.name().to_owned(),
        wasmtime: aura_sandbox::WASMTIME_VERSION.to_owned(),
    };
    Ok(aura_plugins::write_precompiled(
        out,
        precompiled,
        &compiled,
    )?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn calendar() -> &'static AgentSpec {
        aura_contract::catalogue::agent("calendar").unwrap()
    }

    fn check(manifest: Value) -> Result<(), LoadError> {
        check_manifest(&Crossing::new().unwrap(), calendar(), &manifest)
    }

    #[test]
    fn a_manifest_naming_exactly_the_catalogue_tools_is_admitted_in_any_order() {
        let tools = ["schedule_event", "find_free_slots", "detect_conflicts"];
        check(json!({"name": "calendar", "version": "1.0.0", "tools": tools})).unwrap();
    }

    #[test]
    fn a_tool_too_many_or_too_few_or_another_name_is_a_mismatch() {
        let error = check(json!({"name": "calendar", "version": "1.0.0",
            "tools": ["find_free_slots", "detect_conflicts", "transfer_money"]}))
        .unwrap_err();
        match error {
            LoadError::ManifestMismatch {
                name,
                extra,
                missing,
                ..
            } => {
                assert_eq!(name, "calendar");
                assert_eq!(extra, ["transfer_money"]);
                assert_eq!(missing, ["schedule_event"]);
            }
            other => panic!("expected a mismatch, got {other:?}"),
        }
        let error = check(json!({"name": "comms", "version": "1.0.0",
            "tools": ["find_free_slots", "detect_conflicts", "schedule_event"]}))
        .unwrap_err();
        assert!(
            matches!(&error, LoadError::ManifestMismatch { name, extra, missing, .. }
                if name == "comms" && extra.is_empty() && missing.is_empty()),
            "{error}"
        );
    }

    #[test]
    fn a_manifest_that_is_not_manifest_v1_is_invalid_before_it_is_compared() {
        let error = check(json!({"name": "calendar", "tools": "all"})).unwrap_err();
        match error {
            LoadError::ManifestInvalid { agent, error } => {
                assert_eq!(agent, "calendar");
                assert_eq!(error.phase(), Phase::Reply);
                assert_eq!(error.kind(), "schema_error");
            }
            other => panic!("expected an invalid manifest, got {other:?}"),
        }
    }
}
