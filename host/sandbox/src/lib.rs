//! The sandbox: the only module that touches wasmtime's `Config`, `Engine` and `Store`.
//!
//! It owns running one agent export (`manifest`, `invoke` or `tick`) in a fresh instance,
//! bounded by fuel, an epoch backstop, memory and table limits and a deny-by-default WASI
//! context, and turning wasmtime's failures into typed errors (out of fuel, interrupt, memory
//! limit, trap). It must not parse or validate the JSON that crosses (the crossing does) and it
//! never gives a guest a file, a socket, an environment variable or an argument.
//!
//! A map of its parts and types:
//! - this file: [`Sandbox`] (the engine and the linker), turning a component into a
//!   pre-instantiated agent ([`Sandbox::prepare`] → [`PreparedAgent`]: compiled, or its code
//!   mapped from the compilation cache or a precompiled file), running an export of one
//!   ([`Sandbox::invoke`], [`Sandbox::tick`], [`Sandbox::manifest`] → [`Invocation`]), what a
//!   call may spend ([`Budget`]) and where it sits ([`Frame`]), and [`SandboxError`];
//! - `engine`: the engine's settings, one function for all of them ([`engine_config_for`],
//!   tuned by [`EngineTuning`]), the targets ([`CodeTarget`]), precompiling, reading a refused
//!   precompiled file ([`PrecompiledMismatch`]), the epoch ticker;
//! - `store`: the one place a call's store is built ([`Sandbox::call_store`] →
//!   [`CallStore`], run in stages: instantiate, then one export) and its per-call state;
//! - [`guest`]: the guest's WASI context, virtual clocks and seeded random source;
//! - `narrator`: the narrator's own engine and one narration in a fresh instance
//!   ([`NarratorSandbox`], [`PreparedNarrator`], [`NarrateError`]);
//! - `imports`: the `host.call` / `host.emit` imports ([`HostImports`], [`Caller`],
//!   [`HostCall`], [`HostCallAnswer`]) and their per-call bounds;
//! - [`served`]: a call's served time, what its backstop measures (its waits for a core not
//!   counted, so a loaded machine does not change what a call answers).

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Semaphore;
use wasmtime::Engine;
use wasmtime::component::{Component, HasSelf, Linker};

use aura_contract::error::CrossingError;
use aura_contract::limits::*;
use aura_plugins::CheckedFile;
use aura_plugins::code_cache::CodeCache;

#[cfg(feature = "jit")]
mod cached;
mod engine;
mod guest;
mod imports;
mod narrator;
pub mod served;
mod store;

pub use engine::{
    BUILD_TARGET, CodeTarget, EngineTuning, PULLEY_TARGET, PoolReset, PrecompiledMismatch,
    WASMTIME_VERSION, engine_config, engine_config_for, narrator_config_for, precompile,
    precompile_narrator, runnable_targets,
};
use imports::ImportState;
pub use imports::{Caller, HostCall, HostCallAnswer, HostImports, ImportFuture, NoImports};
pub use narrator::{NarrateError, NarratorAnswer, NarratorSandbox, PreparedNarrator};
pub use store::{CallStore, Instance};

use engine::EpochTicker;
use store::CallState;

/// Whether this sandbox compiles components itself (the `jit` feature: Cranelift); without it,
/// it only runs precompiled code.
pub const COMPILES: bool = cfg!(feature = "jit");

/// Host bindings for `wit/agent.wit`, generated once, here.
mod bindings {
    wasmtime::component::bindgen!({
        path: "../../wit",
        world: "agent",
        imports: { default: async | trappable },
        exports: { default: async },
    });
}

/// Why the sandbox could not be set up or an agent could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    /// The engine rejected its configuration (a build defect).
    #[error("cannot create the wasm engine: {0}")]
    Engine(String),
    /// Linking WASI or the host interface failed (a build defect).
    #[error("cannot link host functions: {0}")]
    Link(String),
    /// The bytes are not a component this host can run.
    #[error("component for `{agent}` does not compile: {message}")]
    Compile {
        /// The agent.
        agent: String,
        /// wasmtime's explanation.
        message: String,
    },
    /// The component's imports do not match the `aura:agent` world (or exceed what WASI gives).
    #[error("component for `{agent}` does not fit the aura:agent world: {message}")]
    Instantiate {
        /// The agent.
        agent: String,
        /// wasmtime's explanation.
        message: String,
    },
    /// A precompiled component (.cwasm) this engine cannot run, with wasmtime's explanation.
    #[error("refusing precompiled component for `{agent}`: {reason}: {message}")]
    Precompiled {
        /// The agent.
        agent: String,
        /// Which kind of mismatch.
        reason: PrecompiledMismatch,
        /// wasmtime's explanation.
        message: String,
    },
    /// A runtime-only host (no `jit` feature) was given a component that is not precompiled.
    #[error(
        "component for `{agent}` is not precompiled, and this host has no compiler: precompile it \
         with `aura compile --target {target}` on the build machine"
    )]
    NeedsPrecompiled {
        /// The agent.
        agent: String,
        /// The target this host runs.
        target: String,
    },
    /// The engine was asked for a target this build cannot run or compile for.
    #[error("this host cannot use target `{target}`: {reason}")]
    Target {
        /// The target asked for.
        target: String,
        /// Why not.
        reason: String,
    },
    /// Precompiling a component failed.
    #[error("cannot precompile `{agent}` for `{target}`: {message}")]
    Precompile {
        /// The agent.
        agent: String,
        /// The target.
        target: String,
        /// wasmtime's explanation.
        message: String,
    },
    /// Calling `manifest` failed.
    #[error("component for `{agent}` failed to give its manifest")]
    Manifest {
        /// The agent.
        agent: String,
        /// Why.
        source: Box<CrossingError>,
    },
}

/// How much of a call's budget a call gets: fuel for determinism, wall clock as a backstop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    /// Fuel the call may burn.
    pub fuel: u64,
    /// The deadline the fuel was derived from; the epoch backstop fires a margin after it.
    pub deadline_ms: u64,
}

impl Budget {
    /// The budget for a deadline at `fuel_per_ms`.
    pub fn for_deadline(deadline_ms: u64, fuel_per_ms: u64) -> Self {
        Self {
            fuel: deadline_ms.saturating_mul(fuel_per_ms),
            deadline_ms,
        }
    }
}

/// Where a call sits: its budget, the chain of calls above it, and the instant its guest sees
/// as now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    /// What the call may spend.
    pub budget: Budget,
    /// The agents of the calls above it, root first; empty for a root call.
    pub chain_above: Vec<&'static str>,
    /// Where the guest's wall clock starts: the call's `ts`, a tick's `now` (ns since the
    /// Unix epoch, clamped at 0).
    pub clock_start_unix_ns: u64,
    /// Interrupt the guest at its first epoch check (a trap the deterministic simulation
    /// injects; never set otherwise).
    pub interrupt_at_start: bool,
    /// The request the call belongs to (its caller's, or sent with it); `None`: a trace of
    /// its own, from its call_id.
    pub trace: Option<aura_contract::traceparent::TraceContext>,
    /// A confirming front's proof of the user's yes to this (confirm_required) call, sent to
    /// the worker that runs it; the sandbox never reads it.
    pub confirmation: Option<std::sync::Arc<str>>,
    /// The seed of the guest's random source when it is not the sandbox's: a fleet host runs
    /// many people on one sandbox, each with their own seed (`None`: the sandbox's).
    pub guest_seed: Option<u64>,
}

impl Frame {
    /// A root call (host → agent) with `budget`, its guest's clock starting at
    /// `clock_start_unix_ns`.
    pub fn root(budget: Budget, clock_start_unix_ns: u64) -> Self {
        Self {
            budget,
            chain_above: Vec::new(),
            clock_start_unix_ns,
            interrupt_at_start: false,
            trace: None,
            confirmation: None,
            guest_seed: None,
        }
    }
}

/// What an agent answered, before the crossing checks it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invocation {
    /// The raw string the agent returned.
    pub output: String,
    /// Fuel the call burned (instantiation included).
    pub fuel_used: u64,
}

/// A component compiled and pre-instantiated against the host's linker, twice: once for its
/// calls (`invoke`, `manifest`) and once, from a second copy of its code, for its ticks.
///
/// Why: resetting a pool slot puts back every page any call in it ever wrote (PAGEMAP_SCAN sees
/// every page written since the slot was mapped), and a tick writes far more than a call (344
/// KiB against 16 KiB for calendar), so a call in a slot a tick had used paid a tick's reset
/// ever after. The pool keys a slot's affinity by compiled module, and a second copy of the
/// code is another module: ticks keep to slots of their own.
pub struct PreparedAgent {
    name: &'static str,
    memory_bytes_max: usize,
    pre: bindings::AgentPre<CallState>,
    tick_pre: bindings::AgentPre<CallState>,
}

impl PreparedAgent {
    /// The agent's name.
    pub fn name(&self) -> &'static str {
        self.name
    }
}

impl std::fmt::Debug for PreparedAgent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PreparedAgent")
            .field("name", &self.name)
            .field("memory_bytes_max", &self.memory_bytes_max)
            .finish()
    }
}

/// Where a component's code comes from.
#[derive(Debug)]
pub enum Code<'a> {
    /// A plain component (.wasm), already checked by its digest: Cranelift compiles it.
    Wasm(&'a [u8]),
    /// Code precompiled for this engine (.cwasm), checked by its digest and kept open: mapped,
    /// not copied.
    Precompiled(&'a CheckedFile),
}

/// The engine and the linker every agent is prepared against.
pub struct Sandbox {
    engine: Engine,
    target: CodeTarget,
    tuning: EngineTuning,
    linker: Linker<CallState>,
    slots: Semaphore,
    guest_seed: u64,
    _ticker: EpochTicker,
}

impl std::fmt::Debug for Sandbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sandbox")
            .field("target", &self.target)
            .finish()
    }
}

/// Which export a call runs.
enum Export<'a> {
    Manifest,
    Invoke(&'a str),
    Tick(&'a str),
}

impl Sandbox {
    /// The seed guests' random sources are drawn from.
    pub fn guest_seed(&self) -> u64 {
        self.guest_seed
    }

    /// Creates the engine for `target` with the host's settings and links WASI
    /// (deny-by-default) and the host interface. Guests' random sources are seeded from
    /// `guest_seed`.
    pub fn new(guest_seed: u64, target: &CodeTarget) -> Result<Self, SandboxError> {
        Self::tuned(guest_seed, target, EngineTuning::default())
    }

    /// [`Sandbox::new`] with one of the settings switched (see [`EngineTuning`]).
    pub fn tuned(
        guest_seed: u64,
        target: &CodeTarget,
        tuning: EngineTuning,
    ) -> Result<Self, SandboxError> {
        let engine = Engine::new(&engine_config_for(target, &tuning)?)
            .map_err(|e| SandboxError::Engine(format!("{e:#}")))?;
        let mut linker = Linker::new(&engine);
        wasmtime_wasi::p2::add_to_linker_async(&mut linker)
            .map_err(|e| SandboxError::Link(format!("{e:#}")))?;
        bindings::Agent::add_to_linker::<_, HasSelf<ImportState>>(
            &mut linker,
            |state: &mut CallState| &mut state.imports,
        )
        .map_err(|e| SandboxError::Link(format!("{e:#}")))?;
        let ticker = EpochTicker::start(engine.clone());
        Ok(Self {
            engine,
            target: target.clone(),
            tuning,
            linker,
            slots: Semaphore::new(CONCURRENT_CALLS_MAX as usize),
            guest_seed,
            _ticker: ticker,
        })
    }

    /// Turns `code` into an agent ready to instantiate: compiled, or its precompiled code
    /// mapped. Each call of the agent may grow its memory to `memory_bytes_max` (capped at
    /// [`MEMORY_BYTES_CEILING`]).
    pub fn prepare(
        &self,
        name: &'static str,
        memory_bytes_max: usize,
        code: Code<'_>,
    ) -> Result<PreparedAgent, SandboxError> {
        let (component, tick_twin) = match code {
            Code::Wasm(bytes) => {
                let component = self.compile(name, bytes)?;
                let twin = self.twin(name, &component)?;
                (component, twin)
            }
            // Mapped twice: the file's pages are shared, the module ids are not.
            Code::Precompiled(file) => (
                self.map_precompiled(name, file)?,
                self.map_precompiled(name, file)?,
            ),
        };
        self.pre_instantiate(name, memory_bytes_max, component, tick_twin)
    }

    /// [`Self::prepare`] for a plain component whose digest is `sha256`, through `cache`: the
    /// cached code for this engine when there is an entry that passes its checks (the
    /// cache's digest, then wasmtime's own header check), else `wasm()` compiled and its code
    /// stored for the next start. The cache failing costs time, never the agent: it is logged.
    /// A sandbox that does not compile ([`COMPILES`]) refuses the component as [`Self::prepare`]
    /// does.
    pub fn prepare_cached<E: From<SandboxError>>(
        &self,
        name: &'static str,
        memory_bytes_max: usize,
        sha256: &str,
        cache: &CodeCache,
        wasm: impl FnOnce() -> Result<Vec<u8>, E>,
    ) -> Result<PreparedAgent, E> {
        // A runtime-only sandbox keeps no cache: it refuses the plain component.
        #[cfg(not(feature = "jit"))]
        {
            let _ = (sha256, cache);
            Ok(self.prepare(name, memory_bytes_max, Code::Wasm(&wasm()?))?)
        }
        #[cfg(feature = "jit")]
        self.prepare_through(self.code_key(sha256), name, memory_bytes_max, cache, wasm)
    }

    /// [`Self::prepare_cached`] in a sandbox that compiles, the entry's `key` made.
    #[cfg(feature = "jit")]
    fn prepare_through<E: From<SandboxError>>(
        &self,
        key: String,
        name: &'static str,
        memory_bytes_max: usize,
        cache: &CodeCache,
        wasm: impl FnOnce() -> Result<Vec<u8>, E>,
    ) -> Result<PreparedAgent, E> {
        let component = cached::component(&self.engine, &key, name, cache, wasm)?;
        let tick_twin = self.twin(name, &component)?;
        Ok(self.pre_instantiate(name, memory_bytes_max, component, tick_twin)?)
    }

    /// A second copy of `component`'s code, which wasmtime counts as other modules: an agent's
    /// tick twin ([`PreparedAgent`]). It costs the code's size in memory once per agent.
    fn twin(&self, name: &str, component: &Component) -> Result<Component, SandboxError> {
        let refused = |e: wasmtime::Error| SandboxError::Compile {
            agent: name.to_owned(),
            message: format!("a second copy of its code: {e:#}"),
        };
        let code = component.serialize().map_err(refused)?;
        // SAFETY: `code` is what this engine made of a component it compiled or mapped after
        // checking it, serialized just now and never out of this process's memory.
        unsafe { Component::deserialize(&self.engine, &code) }.map_err(refused)
    }

    /// The compilation cache's key for a component whose digest is `sha256` compiled by this
    /// engine ([`cached::code_key`]).
    #[cfg(feature = "jit")]
    pub fn code_key(&self, sha256: &str) -> String {
        cached::code_key(&self.engine, &self.target, sha256)
    }

    /// Maps code precompiled for this engine from a checked file (a .cwasm of a plugins dir or
    /// a compilation cache entry).
    fn map_precompiled(
        &self,
        name: &'static str,
        file: &CheckedFile,
    ) -> Result<Component, SandboxError> {
        map_precompiled(&self.engine, name, file)
    }

    /// Links a component and its tick twin against the host's imports, once, for every later
    /// instance.
    fn pre_instantiate(
        &self,
        name: &'static str,
        memory_bytes_max: usize,
        component: Component,
        tick_twin: Component,
    ) -> Result<PreparedAgent, SandboxError> {
        let link = |component: &Component| {
            let refused = |e: wasmtime::Error| SandboxError::Instantiate {
                agent: name.to_owned(),
                message: format!("{e:#}"),
            };
            let instance_pre = self.linker.instantiate_pre(component).map_err(refused)?;
            bindings::AgentPre::new(instance_pre).map_err(refused)
        };
        Ok(PreparedAgent {
            name,
            memory_bytes_max: memory_bytes_max.min(MEMORY_BYTES_CEILING),
            pre: link(&component)?,
            tick_pre: link(&tick_twin)?,
        })
    }

    #[cfg(feature = "jit")]
    fn compile(&self, name: &str, bytes: &[u8]) -> Result<Component, SandboxError> {
        cached::compile(&self.engine, name, bytes)
    }

    #[cfg(not(feature = "jit"))]
    fn compile(&self, name: &str, _bytes: &[u8]) -> Result<Component, SandboxError> {
        Err(SandboxError::NeedsPrecompiled {
            agent: name.to_owned(),
            target: self.target_name().to_owned(),
        })
    }

    /// The target this engine runs.
    pub fn target_name(&self) -> &str {
        self.target.name()
    }

    /// Calls a prepared agent's `manifest` with a fixed fuel budget and a short deadline of
    /// its own ([`MANIFEST_DEADLINE_MS`]: a manifest that sleeps delays a start by at most that
    /// plus the backstop's margin); it may call no other agent, and its clock reads the Unix
    /// epoch.
    pub async fn manifest(&self, agent: &PreparedAgent) -> Result<Invocation, CrossingError> {
        let frame = Frame::root(
            Budget {
                fuel: MANIFEST_FUEL,
                deadline_ms: MANIFEST_DEADLINE_MS,
            },
            0,
        );
        let imports = Arc::new(NoImports {
            reason: "the agent is being loaded",
        });
        self.run(agent, None, frame, imports, Export::Manifest)
            .await
    }

    /// Runs `invoke(call)` on a fresh instance of `agent`.
    ///
    /// `imports` answers the guest's `host.call` and `host.emit` on behalf of `call_id`.
    pub async fn invoke(
        &self,
        agent: &PreparedAgent,
        call_id: &str,
        call: &str,
        frame: Frame,
        imports: Arc<dyn HostImports>,
    ) -> Result<Invocation, CrossingError> {
        let call_id = Some(call_id.to_owned());
        self.run(agent, call_id, frame, imports, Export::Invoke(call))
            .await
    }

    /// Runs `tick(context)` on a fresh instance of `agent`.
    pub async fn tick(
        &self,
        agent: &PreparedAgent,
        context: &str,
        frame: Frame,
        imports: Arc<dyn HostImports>,
    ) -> Result<Invocation, CrossingError> {
        self.run(agent, None, frame, imports, Export::Tick(context))
            .await
    }

    async fn run(
        &self,
        agent: &PreparedAgent,
        call_id: Option<String>,
        frame: Frame,
        imports: Arc<dyn HostImports>,
        export: Export<'_>,
    ) -> Result<Invocation, CrossingError> {
        // Root calls wait for a slot; a callee runs in its root's share of the pool (each root
        // may hold AGENT_CALL_DEPTH_MAX instances), so a chain never waits on itself. The
        // semaphore is never closed, so acquiring only waits.
        let _slot = match frame.chain_above.is_empty() {
            true => self.slots.acquire().await.ok(),
            false => None,
        };
        let mut call = self.call_store(agent, call_id, frame, imports)?;
        let backstop = Duration::from_millis(self.tuning.backstop_ms(&call.budget()));
        let served = call.served();
        // Epochs interrupt running wasm; a guest parked in a host import (a WASI poll) runs
        // none, so the same backstop also bounds the whole call's served time. The run is
        // pinned here, in this call's state, and dropped (its borrow of `call` with it) before
        // the output is logged.
        let outcome = {
            let run = std::pin::pin!(async {
                let instance = match export {
                    Export::Tick(_) => call.instantiate_for_tick().await?,
                    Export::Manifest | Export::Invoke(_) => call.instantiate().await?,
                };
                match export {
                    Export::Manifest => call.manifest(&instance).await,
                    Export::Invoke(text) => call.invoke(&instance, text).await,
                    Export::Tick(context) => call.tick(&instance, context).await,
                }
            });
            served::bounded(&served, backstop, run).await
        };
        call.log_output();
        match outcome {
            Ok(Ok(output)) => Ok(Invocation {
                output,
                fuel_used: call.fuel_used(),
            }),
            Ok(Err(error)) => Err(error),
            Err(served::BackstopElapsed) => Err(call.wall_clock_exceeded()),
        }
    }
}

/// Maps code precompiled for `engine` from a checked file (a .cwasm of a plugins dir or a
/// compilation cache entry): an agent's, or the narrator's.
fn map_precompiled(
    engine: &Engine,
    name: &str,
    file: &CheckedFile,
) -> Result<Component, SandboxError> {
    let refused = |e: wasmtime::Error| {
        let message = format!("{e:#}");
        SandboxError::Precompiled {
            agent: name.to_owned(),
            reason: PrecompiledMismatch::classify(&message),
            message,
        }
    };
    // SAFETY: deserializing runs the file's machine code, so it must be code this project
    // compiled. `file` was hashed through the handle it keeps open and its digest matched the
    // one recorded when the code was written: a plugins manifest that `aura compile` wrote on
    // the build machine, or a compilation cache entry's name, which this host wrote after
    // compiling it (plugins::CheckedFile, code_cache). The path maps that same open file, and
    // no writer of this project rewrites such a file in place (they rename). wasmtime itself
    // checks the header (target, version, settings) and refuses a mismatch.
    match file.mappable_path() {
        Some(path) => unsafe { Component::deserialize_file(engine, path) },
        None => {
            let bytes = file.read_checked().map_err(|e| SandboxError::Precompiled {
                agent: name.to_owned(),
                reason: PrecompiledMismatch::NotPrecompiled,
                message: e.to_string(),
            })?;
            // SAFETY: as above; the bytes were hashed again after they were read.
            unsafe { Component::deserialize(engine, bytes) }
        }
    }
    .map_err(refused)
}
