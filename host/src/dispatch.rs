//! The dispatcher: the host as its callers see it — load the plugins, take a call, answer it.
//!
//! It owns composing the pieces: plugins (digest-checked) are compiled by the sandbox and
//! admitted only if their manifest matches the catalogue; a call goes through the crossing into
//! the sandbox and back; whatever the crossing refuses is quarantined in the journal before the
//! refusal is returned, and the host keeps serving. It must not implement any check itself (the
//! crossing does) nor touch wasmtime (the sandbox does).

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;

use tracing::Instrument;

use crate::canonical::{parse_canonical, parse_i_json};
use crate::catalogue::{self, AgentSpec, MANIFEST_SCHEMA};
use crate::crossing::{CheckedCall, Crossing, Reply, check_chain};
use crate::envelope::{self, ResultEnvelope, ToolCall};
use crate::error::{CrossingError, HostError, Phase};
use crate::journal::{CallIds, Journal, JournalError, QuarantineRecord};
use crate::limits::{CROSSING_BYTES_MAX, EMIT_BYTES_MAX, FUEL_PER_MS_DEFAULT, TICK_DEADLINE_MS};
use crate::plugins::PluginsDir;
use crate::sandbox::{
    BUILD_TARGET, Budget, Caller, CodeTarget, Frame, HostCall, HostCallAnswer, HostImports,
    ImportFuture, PULLEY_TARGET, Sandbox, WASMTIME_VERSION,
};

/// Where the host finds its plugins and keeps its records.
#[derive(Debug, Clone)]
pub struct HostConfig {
    /// The plugins dir (manifest.json plus components).
    pub plugins_dir: PathBuf,
    /// The data dir (quarantine log).
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
}

/// Why an agent was not admitted.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The plugins dir has a component for an agent the catalogue does not know.
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
    /// The plugin could not be read or compiled.
    #[error(transparent)]
    Host(#[from] HostError),
}

/// A call the crossing refused: the error, and whether its quarantine record is durable.
#[derive(Debug, thiserror::Error)]
#[error("{error}")]
pub struct Refused {
    /// Why.
    pub error: CrossingError,
    /// The envelope's call_id, if it could be read.
    pub call_id: Option<String>,
    /// Set if the quarantine record could not be written: the refusal must then be reported
    /// loudly, since the record is lost.
    pub journal_error: Option<JournalError>,
    /// Fuel the agent burned before the refusal (its answer may have been refused after it
    /// ran); an agent-to-agent caller is charged this.
    pub fuel_used: u64,
}

/// One proposal of a tick whose call passed every inbound check.
#[derive(Debug, Clone)]
pub struct Proposal {
    /// The proposed call, checked.
    pub call: CheckedCall,
    /// What drove it.
    pub signals: Vec<String>,
    /// 0..=100.
    pub priority: u8,
}

/// What one agent's tick produced.
#[derive(Debug)]
pub struct TickOutcome {
    /// The proposals whose calls passed the crossing, in the agent's order.
    pub proposals: Vec<Proposal>,
    /// The proposals refused (each quarantined), in the agent's order.
    pub refused: Vec<Refused>,
    /// Fuel the tick burned.
    pub fuel_used: u64,
}

/// The host: catalogue-checked plugins behind the crossing.
#[derive(Debug)]
pub struct Host {
    inner: Arc<Inner>,
    load_failures: Vec<LoadError>,
}

/// What a call needs, shared with the imports of the calls in flight (an agent's `host.call`
/// comes back into the same crossing).
#[derive(Debug)]
struct Inner {
    /// This dispatcher, for the calls it makes on an agent's behalf.
    this: std::sync::Weak<Inner>,
    crossing: Crossing,
    sandbox: Sandbox,
    journal: Journal,
    fuel_per_ms: u64,
}

impl Host {
    /// Opens the data dir, compiles the schemas, loads and admits the plugins.
    pub async fn open(config: &HostConfig) -> Result<Self, LoadError> {
        let crossing = Crossing::new().map_err(HostError::from)?;
        let fuel_per_ms = match config.fuel_per_ms {
            Some(rate) => rate,
            None => crate::calibrate::load(&config.data_dir)
                .map_err(HostError::from)?
                .map_or(FUEL_PER_MS_DEFAULT, |c| c.fuel_per_ms),
        };
        let journal = Journal::open(&config.data_dir).map_err(HostError::from)?;
        let plugins = PluginsDir::open(&config.plugins_dir).map_err(HostError::from)?;
        let target = plugins
            .target_among(&runnable_targets(), WASMTIME_VERSION, cfg!(feature = "jit"))
            .map_err(HostError::from)?;
        let mut sandbox =
            Sandbox::new(config.guest_seed, &CodeTarget::named(target)).map_err(HostError::from)?;
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
            match admit(&crossing, &mut sandbox, &plugins, spec).await {
                Ok(()) => {}
                Err(error) if config.agents.is_some() => return Err(error),
                Err(error) => {
                    tracing::error!(agent = spec.name, %error, "plugin refused");
                    load_failures.push(error);
                }
            }
        }
        Ok(Self {
            inner: Arc::new_cyclic(|this| Inner {
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
        &self.inner.crossing
    }

    /// Sends a call the host built itself through the whole crossing.
    pub async fn call(&self, call: &ToolCall) -> Result<ResultEnvelope, Refused> {
        let text = serde_json::to_string(call).unwrap_or_default();
        self.dispatch(&text).await
    }

    /// Dispatches raw bytes as a toolcall.v1 envelope: bytes that are not UTF-8 are not JSON,
    /// and are refused (and quarantined) as malformed.
    pub async fn dispatch_bytes(&self, bytes: &[u8]) -> Result<ResultEnvelope, Refused> {
        self.inner.dispatch_bytes(bytes).await
    }

    /// Dispatches a toolcall.v1 envelope exactly as given.
    ///
    /// `Ok` is a result.v1: the tool's result, or an error the agent itself reported.
    /// `Err` is a refusal by the crossing; it has been quarantined before this returns.
    pub async fn dispatch(&self, text: &str) -> Result<ResultEnvelope, Refused> {
        self.inner.dispatch(text).await
    }

    /// The agents this host serves, in catalogue order.
    pub fn agents(&self) -> Vec<&'static str> {
        catalogue::CATALOGUE
            .iter()
            .map(|spec| spec.name)
            .filter(|name| self.inner.sandbox.serves(name))
            .collect()
    }

    /// Appends a reasoning trace to the data dir's traces.jsonl; durable when this returns.
    pub fn record_trace(&self, trace: &crate::trace::Trace) -> Result<(), JournalError> {
        self.inner.journal.trace(trace)
    }

    /// Quarantine records this host has written since it started (every crossing, nested
    /// agent-to-agent calls included).
    pub fn quarantined(&self) -> u64 {
        self.inner.journal.quarantined()
    }

    /// The fuel rate deadlines are turned into.
    pub fn fuel_per_ms(&self) -> u64 {
        self.inner.fuel_per_ms
    }

    /// Checks `call` once, then runs it `runs` times in the sandbox, timing each run around
    /// the sandbox alone: (fuel burned, wall time) per run. For calibration and benchmarks.
    pub async fn measure(
        &self,
        call: &ToolCall,
        runs: usize,
    ) -> Result<Vec<(u64, std::time::Duration)>, Refused> {
        let text = serde_json::to_string(call).unwrap_or_default();
        let checked = self
            .inner
            .crossing
            .check_call(&text)
            .map_err(|error| self.inner.refuse(error, CallIds::default(), &text))?;
        let budget = Budget::for_deadline(checked.deadline_ms, self.inner.fuel_per_ms);
        let mut measured = Vec::with_capacity(runs);
        for _ in 0..runs {
            let started = std::time::Instant::now();
            let frame = Frame::root(budget, envelope::unix_ns(&call.ts));
            let invocation = self
                .inner
                .sandbox
                .invoke(
                    &call.agent,
                    &call.call_id,
                    &checked.canonical,
                    frame,
                    self.inner.clone(),
                )
                .await
                .map_err(|error| self.inner.refuse(error, CallIds::default(), &text))?;
            measured.push((invocation.fuel_used, started.elapsed()));
        }
        Ok(measured)
    }

    /// Runs `agent`'s tick on `context` and checks what it proposes: the output as a whole
    /// (proposals.v1), then each proposed call on its own (envelope, catalogue, args). A bad
    /// proposal is quarantined and left out; it does not spoil the others. `Err` means the
    /// tick itself failed (trap, deadline, output not proposals.v1) and was quarantined.
    pub async fn tick(
        &self,
        agent: &str,
        context: &serde_json::Value,
    ) -> Result<TickOutcome, Refused> {
        match crate::canonical::to_canonical_string(context) {
            Ok(text) => self.inner.tick(agent, &text, tick_now(context)).await,
            Err(error) => Err(self.inner.refuse_tick_context(agent, error)),
        }
    }

    /// [`Host::tick`] for several agents on one context, concurrently, as the orchestrator
    /// runs a tick: the context is canonicalized once, not once per agent (~180 µs for the
    /// day's ~60 KB contexts). Outcomes come in `agents`' order.
    pub async fn tick_all(
        &self,
        agents: &[&str],
        context: &serde_json::Value,
    ) -> Vec<Result<TickOutcome, Refused>> {
        match crate::canonical::to_canonical_string(context) {
            Ok(text) => {
                let now = tick_now(context);
                let ticks = agents
                    .iter()
                    .map(|agent| self.inner.tick(agent, &text, now));
                futures_util::future::join_all(ticks).await
            }
            Err(error) => {
                let mut refused = Vec::with_capacity(agents.len());
                for agent in agents {
                    refused.push(Err(self.inner.refuse_tick_context(agent, error.clone())));
                }
                refused
            }
        }
    }
}

/// The `now` member of a tick context, the instant its guests' clocks start at.
fn tick_now(context: &serde_json::Value) -> Option<&str> {
    context.get("now").and_then(|now| now.as_str())
}

impl Inner {
    /// Dispatches raw bytes as a toolcall.v1 envelope: bytes that are not UTF-8 are not JSON,
    /// and are refused (and quarantined) as malformed.
    async fn dispatch_bytes(self: &Arc<Self>, bytes: &[u8]) -> Result<ResultEnvelope, Refused> {
        match std::str::from_utf8(bytes) {
            Ok(text) => self.dispatch(text).await,
            Err(utf8) => {
                let error = CrossingError::Json {
                    phase: Phase::Envelope,
                    error: crate::canonical::JsonError::Malformed {
                        line: 0,
                        column: 0,
                        message: format!("input is not UTF-8: {utf8}"),
                    },
                };
                let text = String::from_utf8_lossy(bytes);
                Err(self.refuse(error, CallIds::default(), &text))
            }
        }
    }

    /// Dispatches a toolcall.v1 envelope exactly as given.
    ///
    /// `Ok` is a result.v1: the tool's result, or an error the agent itself reported.
    /// `Err` is a refusal by the crossing; it has been quarantined before this returns.
    async fn dispatch(self: &Arc<Self>, text: &str) -> Result<ResultEnvelope, Refused> {
        let checked = self
            .crossing
            .check_call(text)
            .map_err(|error| self.refuse_unread(error, text))?;
        let budget = Budget::for_deadline(checked.deadline_ms, self.fuel_per_ms);
        let frame = Frame::root(budget, envelope::unix_ns(&checked.call.ts));
        self.run_checked(&checked, frame).await
    }

    /// Runs a call that passed the inbound checks and checks its answer, inside a `crossing`
    /// span that ends with the fuel used and the outcome.
    async fn run_checked(
        self: &Arc<Self>,
        checked: &CheckedCall,
        frame: Frame,
    ) -> Result<ResultEnvelope, Refused> {
        let call = &checked.call;
        let span = tracing::info_span!(
            "crossing",
            call_id = %call.call_id,
            agent = %call.agent,
            tool = %call.tool,
            depth = frame.chain_above.len() + 1,
            fuel_used = tracing::field::Empty,
            outcome = tracing::field::Empty,
        );
        let outcome = self
            .run_in_sandbox(checked, frame)
            .instrument(span.clone())
            .await;
        let (fuel_used, kind) = match &outcome {
            Ok(result) => (
                result.fuel_used,
                result.error.as_ref().map_or("ok", |e| e.kind.as_str()),
            ),
            Err(refused) => (refused.fuel_used, refused.error.kind()),
        };
        span.record("fuel_used", fuel_used);
        span.record("outcome", kind);
        outcome
    }

    async fn run_in_sandbox(
        self: &Arc<Self>,
        checked: &CheckedCall,
        frame: Frame,
    ) -> Result<ResultEnvelope, Refused> {
        let call = &checked.call;
        let ids = CallIds {
            call_id: Some(&call.call_id),
            agent: Some(&call.agent),
            tool: Some(&call.tool),
        };
        tracing::info!(depth = frame.chain_above.len() + 1, "agent.started");
        let invocation = match self
            .sandbox
            .invoke(
                &call.agent,
                &call.call_id,
                &checked.canonical,
                frame,
                self.clone(),
            )
            .await
        {
            Ok(invocation) => invocation,
            Err(error) => {
                tracing::warn!(kind = error.kind(), fuel_used = error.fuel_used(), %error, "agent.error");
                return Err(self.refuse(error, ids, &checked.canonical));
            }
        };
        tracing::info!(fuel_used = invocation.fuel_used, "agent.completed");
        match self.crossing.check_reply(checked, &invocation.output) {
            Ok(Reply::Ok(result)) => {
                tracing::info!(
                    fuel_used = invocation.fuel_used,
                    outcome = "ok",
                    "tool.executed"
                );
                Ok(ResultEnvelope::ok(call, result, invocation.fuel_used))
            }
            Ok(Reply::ToolError { kind, message }) => {
                tracing::info!(fuel_used = invocation.fuel_used, outcome = %kind, "tool.executed");
                let kind = match kind.as_str() {
                    "invalid_args" => "tool_invalid_args",
                    _ => "tool_failed",
                };
                Ok(ResultEnvelope::failed(
                    call,
                    kind,
                    message,
                    Some(Phase::Agent),
                    invocation.fuel_used,
                ))
            }
            Err(error) => {
                let mut refused = self.refuse(error, ids, &invocation.output);
                refused.fuel_used = invocation.fuel_used;
                Err(refused)
            }
        }
    }

    /// Runs `agent`'s tick on `context` and checks what it proposes: the output as a whole
    /// (proposals.v1), then each proposed call on its own (envelope, catalogue, args). A bad
    /// proposal is quarantined and left out; it does not spoil the others. `Err` means the
    /// tick itself failed (trap, deadline, output not proposals.v1) and was quarantined.
    /// Quarantines a tick context that cannot be canonicalized, as `agent`'s tick, in a
    /// crossing span of its own like every tick.
    fn refuse_tick_context(&self, agent: &str, error: crate::canonical::JsonError) -> Refused {
        let error = CrossingError::Json {
            phase: Phase::Tick,
            error,
        };
        let _span = tracing::info_span!(
            "crossing",
            agent = %agent,
            tool = "tick",
            depth = 1,
            fuel_used = 0,
            outcome = error.kind()
        )
        .entered();
        let ids = CallIds {
            agent: Some(agent),
            ..CallIds::default()
        };
        self.refuse(error, ids, "")
    }

    /// A tick on a context already in canonical form (`now` is its `now` member).
    async fn tick(
        self: &Arc<Self>,
        agent: &str,
        context: &str,
        now: Option<&str>,
    ) -> Result<TickOutcome, Refused> {
        // A tick is a crossing like any call: one span, ending with its fuel and outcome. Its
        // lifecycle events are at debug level: four agents tick every few minutes, and the
        // decisions that follow have their own info-level events.
        let span = tracing::info_span!(
            "crossing",
            agent = %agent,
            tool = "tick",
            depth = 1,
            fuel_used = tracing::field::Empty,
            outcome = tracing::field::Empty,
        );
        let outcome = self
            .tick_in_sandbox(agent, context, now)
            .instrument(span.clone())
            .await;
        match &outcome {
            Ok(ticked) => {
                span.record("fuel_used", ticked.fuel_used);
                span.record("outcome", "ok");
            }
            Err(refused) => {
                span.record("fuel_used", refused.fuel_used);
                span.record("outcome", refused.error.kind());
            }
        }
        outcome
    }

    async fn tick_in_sandbox(
        self: &Arc<Self>,
        agent: &str,
        context: &str,
        now: Option<&str>,
    ) -> Result<TickOutcome, Refused> {
        let ids = CallIds {
            agent: Some(agent),
            ..CallIds::default()
        };
        let budget = Budget::for_deadline(TICK_DEADLINE_MS, self.fuel_per_ms);
        let frame = Frame::root(budget, now.map_or(0, envelope::unix_ns));
        tracing::debug!("agent.started");
        let invocation = self
            .sandbox
            .tick(agent, context, frame, self.clone())
            .await
            .map_err(|error| {
                tracing::warn!(kind = error.kind(), fuel_used = error.fuel_used(), %error, "agent.error");
                self.refuse(error, ids, context)
            })?;
        tracing::debug!(fuel_used = invocation.fuel_used, "agent.completed");
        let raw = self
            .crossing
            .check_tick(&invocation.output)
            .map_err(|error| self.refuse(error, ids, &invocation.output))?;
        let mut outcome = TickOutcome {
            proposals: Vec::with_capacity(raw.len()),
            refused: Vec::new(),
            fuel_used: invocation.fuel_used,
        };
        for proposal in raw {
            let offending = proposal.call.to_string();
            match self.crossing.check_proposed_call(proposal.call) {
                Ok(call) => outcome.proposals.push(Proposal {
                    call,
                    signals: proposal.signals,
                    priority: proposal.priority,
                }),
                Err(error) => {
                    outcome.refused.push(self.refuse_unread(error, &offending));
                }
            }
        }
        Ok(outcome)
    }

    /// Quarantines a refusal of an envelope that did not pass its checks, with whatever of
    /// its call_id, agent and tool can be read leniently.
    fn refuse_unread(&self, error: CrossingError, text: &str) -> Refused {
        let (call_id, agent, tool) = envelope::read_ids(text);
        let ids = CallIds {
            call_id: call_id.as_deref(),
            agent: agent.as_deref(),
            tool: tool.as_deref(),
        };
        self.refuse(error, ids, text)
    }

    /// Quarantines a refusal and returns it.
    fn refuse(&self, error: CrossingError, ids: CallIds<'_>, offending: &str) -> Refused {
        tracing::warn!(
            call_id = ids.call_id,
            kind = error.kind(),
            phase = error.phase().as_str(),
            %error,
            "call quarantined"
        );
        let record = QuarantineRecord::new(&error, ids, offending);
        let journal_error = self.journal.quarantine(&record).err();
        if let Some(journal_error) = &journal_error {
            tracing::error!(%journal_error, "quarantine record could not be written");
        }
        Refused {
            fuel_used: error.fuel_used(),
            error,
            call_id: ids.call_id.map(str::to_owned),
            journal_error,
        }
    }
}

impl HostImports for Inner {
    /// An agent's `host.call` goes through the same crossing as any call, then through the
    /// chain check: a bad envelope, a cycle or a chain too deep is refused and quarantined at
    /// once, and the agent gets the refusal as a result.v1. A call that passes runs with at
    /// most the fuel its caller has left (and no later deadline); the fuel it burns is
    /// charged to the caller.
    fn call<'a>(&'a self, call: HostCall<'a>) -> ImportFuture<'a> {
        Box::pin(async move {
            let refused = |error: CrossingError, text: &str| {
                let refused = self.refuse_unread(error, text);
                HostCallAnswer {
                    result: envelope::refusal_for_host_call(text, &refused.error),
                    fuel_used: 0,
                }
            };
            let checked = match self.crossing.check_call(&call.envelope) {
                Ok(checked) => checked,
                Err(error) => return refused(error, &call.envelope),
            };
            if let Err(error) = check_chain(&call.caller.chain, &checked.call.agent) {
                return refused(error, &call.envelope);
            }
            let deadline_ms = checked.deadline_ms.min(call.caller.deadline_ms);
            let budget = Budget {
                fuel: Budget::for_deadline(deadline_ms, self.fuel_per_ms)
                    .fuel
                    .min(call.fuel_left),
                deadline_ms,
            };
            let frame = Frame {
                budget,
                chain_above: call.caller.chain.clone(),
                clock_start_unix_ns: envelope::unix_ns(&checked.call.ts),
            };
            // `self` is the dispatcher behind the sandbox's `Arc<dyn HostImports>`; the callee
            // needs an `Arc` of its own to hand on to its own imports. The caller's call holds
            // one, so the upgrade succeeds while any call is in flight.
            let Some(inner) = self.this.upgrade() else {
                let error = CrossingError::AgentCallUnsupported {
                    caller: call.caller.agent.to_owned(),
                    reason: "the host is shutting down".into(),
                };
                return refused(error, &call.envelope);
            };
            match inner.run_checked(&checked, frame).await {
                Ok(result) => HostCallAnswer {
                    fuel_used: result.fuel_used,
                    result: result.to_canonical(),
                },
                Err(refusal) => HostCallAnswer {
                    fuel_used: refusal.fuel_used,
                    result: ResultEnvelope::refused(&checked.call, &refusal.error).to_canonical(),
                },
            }
        })
    }

    fn emit(&self, caller: &Caller, event: String) {
        match parse_canonical(&event, EMIT_BYTES_MAX) {
            Ok(canonical) if canonical.value.get("kind").is_some_and(|k| k.is_string()) => {
                tracing::info!(
                    target: "aura::agent_event",
                    agent = caller.agent,
                    call_id = caller.call_id.as_deref(),
                    event = %canonical.text,
                );
            }
            Ok(_) => tracing::warn!(
                agent = caller.agent,
                "agent event dropped: no string `kind`"
            ),
            Err(error) => tracing::warn!(agent = caller.agent, %error, "agent event dropped"),
        }
    }
}

/// The targets this build runs: its own architecture, and Pulley when built with it.
pub fn runnable_targets() -> Vec<&'static str> {
    let mut targets = vec![BUILD_TARGET];
    if cfg!(feature = "pulley") {
        targets.push(PULLEY_TARGET);
    }
    targets
}

/// Precompiles every catalogue agent of the plugins dir `source` (digest-checked plain
/// components) for `target` into `out`: `<agent>.cwasm` files and a manifest recording their
/// sha256, the target and this wasmtime version, which is all a runtime-only host trusts.
#[cfg(feature = "jit")]
pub fn precompile_plugins(
    source: &std::path::Path,
    target: &CodeTarget,
    out: &std::path::Path,
) -> Result<crate::plugins::PluginManifest, HostError> {
    let plugins = PluginsDir::open(source)?;
    if plugins.manifest().precompiled.is_some() {
        return Err(crate::plugins::PluginError::BadManifest {
            path: source.join(crate::plugins::MANIFEST_FILE),
            message: "its components are already precompiled; compile from the .wasm dir".into(),
        }
        .into());
    }
    let mut compiled = Vec::new();
    for spec in catalogue::CATALOGUE {
        if !plugins.manifest().components.contains_key(spec.name) {
            continue;
        }
        let wasm = plugins.read_component(spec.name)?;
        let cwasm = crate::sandbox::precompile(spec.name, target, &wasm)?;
        compiled.push((
            spec.name.to_owned(),
            format!("{}.cwasm", spec.name),
            crate::plugins::sha256_hex(&wasm),
            cwasm,
        ));
    }
    let precompiled = crate::plugins::Precompiled {
        target: target.name().to_owned(),
        wasmtime: WASMTIME_VERSION.to_owned(),
    };
    Ok(crate::plugins::write_precompiled(
        out,
        precompiled,
        &compiled,
    )?)
}

/// Reads, compiles and pre-instantiates one agent, then checks its manifest against the
/// catalogue before serving it.
async fn admit(
    crossing: &Crossing,
    sandbox: &mut Sandbox,
    plugins: &PluginsDir,
    spec: &'static AgentSpec,
) -> Result<(), LoadError> {
    let bytes = plugins.read_component(spec.name).map_err(HostError::from)?;
    let precompiled = plugins.manifest().precompiled.is_some();
    let prepared = sandbox
        .prepare(spec.name, spec.memory_bytes_max, &bytes, precompiled)
        .map_err(HostError::from)?;
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
    crossing
        .schemas()
        .validate(MANIFEST_SCHEMA.path, &manifest, "")
        .map_err(|violation| {
            invalid(CrossingError::Schema {
                phase: Phase::Reply,
                violation,
            })
        })?;
    // manifest.v1 guarantees the shape read below.
    let name = manifest["name"].as_str().unwrap_or_default();
    let claimed: BTreeSet<&str> = manifest["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|tool| tool.as_str())
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
    tracing::info!(
        agent = spec.name,
        version = manifest["version"].as_str().unwrap_or_default(),
        "agent.loaded"
    );
    sandbox.add(prepared);
    Ok(())
}
