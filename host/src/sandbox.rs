//! The sandbox: the only module that touches wasmtime's `Config`, `Engine` and `Store`.
//!
//! It owns the engine settings (one function builds the `Config`, so precompiled code and the
//! runtime always agree), compiling and pre-instantiating each component once, and running one
//! call in a fresh `Store` with a fuel budget, an epoch backstop, memory and table limits and a
//! deny-by-default WASI context. It turns wasmtime failures into typed errors (out of fuel,
//! interrupt, memory limit, trap). It must not parse or validate the JSON that crosses (the
//! crossing does) and it never gives a guest a file, a socket, an environment variable or an
//! argument.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use rand::SeedableRng;
use rand::rngs::StdRng;
use tokio::sync::Semaphore;
use wasmtime::component::{Component, HasSelf, Linker, ResourceTable};
use wasmtime::{
    Config, Enabled, Engine, InstanceAllocationStrategy, PoolingAllocationConfig, ResourceLimiter,
    Store, Trap,
};
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi::{WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView};

use crate::error::CrossingError;
use crate::limits::*;

/// Host bindings for `wit/agent.wit`, generated once, here.
mod bindings {
    wasmtime::component::bindgen!({
        path: "../wit",
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
    #[error("component for `{agent}` failed to give its manifest: {source}")]
    Manifest {
        /// The agent.
        agent: String,
        /// Why.
        source: Box<CrossingError>,
    },
}

/// Why wasmtime refused a precompiled component, read from its explanation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrecompiledMismatch {
    /// Compiled for another architecture or operating system (or native vs Pulley).
    Target,
    /// Compiled by another wasmtime version.
    WasmtimeVersion,
    /// Compiled with other engine settings (fuel, epochs, memory reservation, guard size,
    /// wasm features, CPU features the device lacks).
    Settings,
    /// Not a precompiled component at all (or damaged).
    NotPrecompiled,
}

impl PrecompiledMismatch {
    /// Classifies wasmtime's deserialization error (`wasmtime::engine::serialization`'s
    /// messages; anything unrecognised counts as a settings mismatch).
    pub fn classify(message: &str) -> Self {
        if message.contains("compiled for architecture")
            || message.contains("compiled for operating system")
        {
            Self::Target
        } else if message.contains("incompatible version") {
            Self::WasmtimeVersion
        } else if message.contains("incompatible object file format")
            || message.contains("failed to parse precompiled artifact")
            || message.contains("not a valid")
        {
            Self::NotPrecompiled
        } else {
            Self::Settings
        }
    }
}

impl std::fmt::Display for PrecompiledMismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Target => "compiled for another target",
            Self::WasmtimeVersion => "compiled by another wasmtime version",
            Self::Settings => "compiled with other engine settings",
            Self::NotPrecompiled => "not a precompiled component for this wasmtime",
        })
    }
}

/// What code an engine runs, or (for precompiling) produces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CodeTarget {
    /// This machine's architecture: Cranelift compiles for it (host CPU features included), or
    /// it runs code precompiled for it.
    Native,
    /// Pulley bytecode, interpreted: no executable memory is ever created (the iOS path).
    Pulley,
    /// Another target triple, to precompile for (`aura compile --target`).
    Triple(String),
}

/// Pulley's target name for this host's pointer width.
pub const PULLEY_TARGET: &str = if cfg!(target_pointer_width = "64") {
    "pulley64"
} else {
    "pulley32"
};

/// The target triple this binary was built for.
pub const BUILD_TARGET: &str = env!("AURA_BUILD_TARGET");

/// The wasmtime version this binary embeds (from Cargo.lock): precompiled code must come
/// from the same version.
pub const WASMTIME_VERSION: &str = env!("AURA_WASMTIME_VERSION");

impl CodeTarget {
    /// The target a name means: `pulley32`/`pulley64` are Pulley, this build's own triple is
    /// native, anything else another triple.
    pub fn named(name: &str) -> Self {
        if name.starts_with("pulley") {
            if name == PULLEY_TARGET {
                Self::Pulley
            } else {
                Self::Triple(name.to_owned())
            }
        } else if name == BUILD_TARGET {
            Self::Native
        } else {
            Self::Triple(name.to_owned())
        }
    }

    /// The target's name, as plugins/<target>/ and manifests spell it.
    pub fn name(&self) -> &str {
        match self {
            Self::Native => BUILD_TARGET,
            Self::Pulley => PULLEY_TARGET,
            Self::Triple(triple) => triple,
        }
    }

    /// The target a runtime-only host runs by default: Pulley when built with the `pulley`
    /// feature (the iOS path), else its own architecture.
    pub fn runtime_default() -> Self {
        if cfg!(all(feature = "pulley", not(feature = "jit"))) {
            Self::Pulley
        } else {
            Self::Native
        }
    }
}

/// [`engine_config`] for `target`: the same settings, code for that target.
pub fn engine_config_for(target: &CodeTarget) -> Result<Config, SandboxError> {
    let mut config = engine_config();
    let unusable = |reason: &str| SandboxError::Target {
        target: target.name().to_owned(),
        reason: reason.to_owned(),
    };
    match target {
        CodeTarget::Native => {}
        CodeTarget::Pulley => {
            MemoryLayout::Bounded.apply(&mut config);
            if !cfg!(feature = "pulley") {
                return Err(unusable(
                    "this build has no Pulley interpreter (build with `--features pulley`)",
                ));
            }
            config
                .target(PULLEY_TARGET)
                .map_err(|e| unusable(&format!("{e:#}")))?;
        }
        CodeTarget::Triple(triple) => {
            if !cfg!(feature = "jit") {
                return Err(unusable(
                    "a runtime-only host runs its own architecture or Pulley only",
                ));
            }
            let arch = triple.split('-').next().unwrap_or_default();
            MemoryLayout::for_arch(arch).apply(&mut config);
            config
                .target(triple)
                .map_err(|e| unusable(&format!("{e:#}")))?;
        }
    }
    Ok(config)
}

/// Compiles a component for `target` into the bytes of a .cwasm file, with the settings of
/// [`engine_config`]: the runtime that loads it builds its engine the same way.
#[cfg(feature = "jit")]
pub fn precompile(agent: &str, target: &CodeTarget, wasm: &[u8]) -> Result<Vec<u8>, SandboxError> {
    let failed = |e: wasmtime::Error| SandboxError::Precompile {
        agent: agent.to_owned(),
        target: target.name().to_owned(),
        message: format!("{e:#}"),
    };
    let engine = Engine::new(&engine_config_for(target)?).map_err(failed)?;
    engine.precompile_component(wasm).map_err(failed)
}

/// Builds the engine configuration. Everything compiled code depends on is set here and only
/// here, so components precompiled elsewhere agree with the engine that runs them.
pub fn engine_config() -> Config {
    let mut config = Config::new();
    // Floating-point NaNs come out with one bit pattern on every architecture, so a replay on
    // an ARM phone or under Pulley computes what x86_64 computed (seed 002's determinism).
    #[cfg(feature = "jit")]
    config.cranelift_nan_canonicalization(true);
    config.wasm_component_model(true);
    config.consume_fuel(true);
    config.epoch_interruption(true);
    config.max_wasm_stack(WASM_STACK_BYTES_MAX);
    config.async_stack_size(ASYNC_STACK_BYTES);
    MemoryLayout::for_arch(std::env::consts::ARCH).apply(&mut config);
    config.allocation_strategy(InstanceAllocationStrategy::Pooling(pool_config()));
    config
}

/// How each linear memory sits in the address space; compiled code depends on it (bounds
/// checks), so it is chosen by the architecture the code is *for*, never by the machine that
/// compiles it, and a precompiled component carries it to the runtime that checks it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum MemoryLayout {
    /// 4 GiB reserved per memory plus a 32 MiB guard: no 32-bit index can leave the
    /// reservation, so Cranelift emits no bounds checks (the guard pages trap instead). The
    /// pool then reserves ~330 GiB of address space: fine for x86_64's 128 TiB. Measured: the
    /// whole small call 22.9 -> 21.0 us, the day's ticks 5.7 -> 4.9 ms (BENCHMARKS.md).
    Guarded,
    /// Exactly MEMORY_BYTES_CEILING reserved plus a 2 MiB guard, every access bounds-checked:
    /// the pool's footprint (~5.4 GiB) fits a phone's 39-bit (512 GiB) address space, where
    /// 41 slots of 4 GiB would not. ARM64 (phones) and Pulley (which checks every access
    /// itself) use this.
    Bounded,
}

impl MemoryLayout {
    /// The layout for code of architecture `arch` (`std::env::consts::ARCH` spelling, or a
    /// triple's first component).
    fn for_arch(arch: &str) -> Self {
        match arch {
            "x86_64" => Self::Guarded,
            _ => Self::Bounded,
        }
    }

    fn apply(self, config: &mut Config) {
        // Memories never move: no reservation for growth beyond the slot.
        config.memory_reservation_for_growth(0);
        match self {
            Self::Guarded => {
                config.memory_reservation(MEMORY_RESERVATION_GUARDED_BYTES);
                config.memory_guard_size(MEMORY_GUARD_GUARDED_BYTES);
            }
            Self::Bounded => {
                config.memory_reservation(MEMORY_BYTES_CEILING as u64);
                config.memory_guard_size(MEMORY_GUARD_BYTES);
            }
        }
    }
}

/// Reservation of a [`MemoryLayout::Guarded`] memory: the whole 32-bit index space.
const MEMORY_RESERVATION_GUARDED_BYTES: u64 = 4 << 30;

/// Guard after a [`MemoryLayout::Guarded`] memory: wasmtime's default, which covers the
/// static offsets compilers emit, so `index + offset` needs no check either.
const MEMORY_GUARD_GUARDED_BYTES: u64 = 32 << 20;

/// The pooling allocator every call's instance comes from: [`INSTANCE_SLOTS`] slots, each
/// bounded as [`crate::limits`] says. A freed slot's memory and table are reset in place
/// (`memset` of the pages the call dirtied, found with Linux's PAGEMAP_SCAN where the kernel
/// has it) up to [`MEMORY_KEEP_RESIDENT_BYTES`] and [`TABLE_KEEP_RESIDENT_BYTES`], rather than
/// handed back with `madvise`: a fresh instance per call then neither faults its pages in again
/// nor makes the kernel flush the other core's TLB (BENCHMARKS.md, "the pool"). Only compiled
/// code's settings live in [`engine_config`]; these change no generated code.
pub fn pool_config() -> PoolingAllocationConfig {
    let slots = INSTANCE_SLOTS;
    let mut pool = PoolingAllocationConfig::default();
    pool.total_component_instances(slots)
        .total_core_instances(slots * CORE_INSTANCES_PER_COMPONENT_MAX)
        .total_memories(slots * MEMORIES_PER_COMPONENT_MAX)
        .total_tables(slots * TABLES_PER_COMPONENT_MAX)
        .total_stacks(slots)
        .max_core_instances_per_component(CORE_INSTANCES_PER_COMPONENT_MAX)
        .max_memories_per_component(MEMORIES_PER_COMPONENT_MAX)
        .max_tables_per_component(TABLES_PER_COMPONENT_MAX)
        .max_memory_size(MEMORY_BYTES_CEILING)
        .table_elements(TABLE_ELEMENTS_MAX)
        .linear_memory_keep_resident(MEMORY_KEEP_RESIDENT_BYTES)
        .table_keep_resident(TABLE_KEEP_RESIDENT_BYTES)
        .pagemap_scan(Enabled::Auto);
    pool
}

/// Guard after a [`MemoryLayout::Bounded`] memory. Accesses are bounds-checked (the
/// reservation is small), so the guard only catches what slips past; 2 MiB keeps the
/// footprint low.
const MEMORY_GUARD_BYTES: u64 = 2 * 1024 * 1024;

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

/// What an agent answered, before the crossing checks it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invocation {
    /// The raw string the agent returned.
    pub output: String,
    /// Fuel the call burned (instantiation included).
    pub fuel_used: u64,
}

/// Per-call store data: WASI state, limits, and what the call is about.
pub struct CallState {
    wasi: WasiCtx,
    table: ResourceTable,
    limiter: CallLimiter,
    caller: Caller,
    imports: Arc<dyn HostImports>,
    host_calls: u32,
    emits: u32,
    import_limit_hit: Option<(&'static str, u32)>,
    /// The guest's fuel when it last entered the host (set by the call hook).
    fuel_at_import: u64,
    /// Fuel callees burned during the current import, taken from the guest's fuel when the
    /// import returns (by the call hook).
    fuel_charge: u64,
    stdout: MemoryOutputPipe,
    stderr: MemoryOutputPipe,
}

impl WasiView for CallState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

/// Memory and table limits of one call, remembering whether a limit was hit so the trap that
/// follows (a guest's allocator aborting) is reported as [`CrossingError::MemoryLimit`].
pub struct CallLimiter {
    memory_bytes_max: usize,
    limit_hit: Option<String>,
}

impl CallLimiter {
    /// Limits for a call whose memory may grow to `memory_bytes_max`.
    pub fn new(memory_bytes_max: usize) -> Self {
        Self {
            memory_bytes_max,
            limit_hit: None,
        }
    }
}

impl ResourceLimiter for CallLimiter {
    fn memory_growing(
        &mut self,
        current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        if desired > self.memory_bytes_max {
            self.limit_hit = Some(format!(
                "memory growth from {current} to {desired} bytes exceeds {}",
                self.memory_bytes_max
            ));
            return Ok(false);
        }
        Ok(true)
    }

    fn table_growing(
        &mut self,
        current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        if desired > TABLE_ELEMENTS_MAX {
            self.limit_hit = Some(format!(
                "table growth from {current} to {desired} elements exceeds {TABLE_ELEMENTS_MAX}"
            ));
            return Ok(false);
        }
        Ok(true)
    }

    fn instances(&self) -> usize {
        CORE_INSTANCES_PER_COMPONENT_MAX as usize
    }

    fn tables(&self) -> usize {
        TABLES_PER_COMPONENT_MAX as usize
    }

    fn memories(&self) -> usize {
        MEMORIES_PER_COMPONENT_MAX as usize
    }
}

/// Who is calling a host import: the agent, the call it is running and the chain above it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    /// The agent whose instance made the import call.
    pub agent: &'static str,
    /// The call it is running (`None` while loading or ticking).
    pub call_id: Option<String>,
    /// The agents of the calls in progress, root first, this agent last: an agent-to-agent
    /// call from here is refused if its target is in it or it is already
    /// [`AGENT_CALL_DEPTH_MAX`] long.
    pub chain: Vec<&'static str>,
    /// The caller's deadline; a callee's is never later.
    pub deadline_ms: u64,
}

/// A guest's `host.call`, with what the caller has left to spend on it.
#[derive(Debug)]
pub struct HostCall<'a> {
    /// Who calls.
    pub caller: &'a Caller,
    /// The guest's envelope, unchecked.
    pub envelope: String,
    /// Fuel the caller had left when it called: a callee may burn no more.
    pub fuel_left: u64,
}

/// The answer to a `host.call`: a result.v1, and the fuel the callee burned, which the sandbox
/// takes from the caller's budget when the import returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostCallAnswer {
    /// result.v1 text, refusals included.
    pub result: String,
    /// Fuel burned on the caller's behalf (the callee's whole call tree).
    pub fuel_used: u64,
}

/// A boxed future, for the async import handler behind a trait object.
pub type ImportFuture<'a> = Pin<Box<dyn Future<Output = HostCallAnswer> + Send + 'a>>;

/// The host side of the `aura:agent/host` imports. The dispatcher implements it (it checks,
/// quarantines and dispatches); the sandbox only bounds how often a guest may call, tells it
/// the caller's fuel, charges the callee's fuel back, and forwards.
pub trait HostImports: Send + Sync {
    /// `host.call`: answers with a result.v1, refusals included; never traps.
    fn call<'a>(&'a self, call: HostCall<'a>) -> ImportFuture<'a>;
    /// `host.emit`: records the event; never fails the call.
    fn emit(&self, caller: &Caller, event: String);
}

impl bindings::aura::agent::host::Host for CallState {
    async fn call(&mut self, call: String) -> wasmtime::Result<String> {
        self.host_calls += 1;
        if self.host_calls > HOST_CALLS_PER_CALL_MAX {
            return Err(self.import_limit("host.call", HOST_CALLS_PER_CALL_MAX));
        }
        let imports = self.imports.clone();
        let caller = self.caller.clone();
        let answer = imports
            .call(HostCall {
                caller: &caller,
                envelope: call,
                fuel_left: self.fuel_at_import,
            })
            .await;
        // Charged when the import returns to the guest (see `charge_callee_fuel`).
        self.fuel_charge = self.fuel_charge.saturating_add(answer.fuel_used);
        Ok(answer.result)
    }

    async fn emit(&mut self, event: String) -> wasmtime::Result<()> {
        self.emits += 1;
        if self.emits > EMITS_PER_CALL_MAX {
            return Err(self.import_limit("host.emit", EMITS_PER_CALL_MAX));
        }
        self.imports.emit(&self.caller, event);
        Ok(())
    }
}

impl CallState {
    /// Records that a guest went past an import bound and returns the trap that ends the call.
    fn import_limit(&mut self, import: &'static str, limit: u32) -> wasmtime::Error {
        let reason = format!("{import} called more than {limit} times in one call");
        self.import_limit_hit = Some((import, limit));
        wasmtime::Error::msg(reason)
    }
}

/// Imports for calls that must not make any (loading: `manifest`): refuse and record nothing.
struct NoImports;

impl HostImports for NoImports {
    fn call<'a>(&'a self, call: HostCall<'a>) -> ImportFuture<'a> {
        let error = CrossingError::AgentCallUnsupported {
            caller: call.caller.agent.to_owned(),
            reason: "the agent is being loaded".into(),
        };
        let result = crate::envelope::refusal_for_host_call(&call.envelope, &error);
        Box::pin(std::future::ready(HostCallAnswer {
            result,
            fuel_used: 0,
        }))
    }

    fn emit(&self, caller: &Caller, _event: String) {
        tracing::debug!(agent = caller.agent, "event emitted while loading ignored");
    }
}

/// Increments the engine's epoch every [`EPOCH_TICK_MS`] until dropped.
struct EpochTicker {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl EpochTicker {
    fn start(engine: Engine) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::Builder::new()
            .name("aura-epoch".into())
            .spawn(move || {
                // park_timeout, not sleep: dropping the ticker unparks the thread, so a
                // short-lived host exits at once instead of waiting out a tick.
                while !flag.load(Ordering::Relaxed) {
                    std::thread::park_timeout(Duration::from_millis(EPOCH_TICK_MS));
                    engine.increment_epoch();
                }
            })
            .ok();
        Self { stop, thread }
    }
}

impl Drop for EpochTicker {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            thread.thread().unpark();
            let _ = thread.join();
        }
    }
}

/// A component compiled and pre-instantiated against the host's linker.
pub struct PreparedAgent {
    name: &'static str,
    memory_bytes_max: usize,
    pre: bindings::AgentPre<CallState>,
}

/// The engine, the linker, and every loaded agent.
pub struct Sandbox {
    engine: Engine,
    target: CodeTarget,
    linker: Linker<CallState>,
    agents: HashMap<&'static str, PreparedAgent>,
    slots: Semaphore,
    guest_seed: u64,
    _ticker: EpochTicker,
}

impl std::fmt::Debug for Sandbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sandbox")
            .field("agents", &self.agents.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl Sandbox {
    /// Creates the engine and links WASI (deny-by-default) and the host interface. Guests'
    /// random sources are seeded from `guest_seed`.
    pub fn new(guest_seed: u64, target: &CodeTarget) -> Result<Self, SandboxError> {
        let engine = Engine::new(&engine_config_for(target)?)
            .map_err(|e| SandboxError::Engine(format!("{e:#}")))?;
        let mut linker = Linker::new(&engine);
        wasmtime_wasi::p2::add_to_linker_async(&mut linker)
            .map_err(|e| SandboxError::Link(format!("{e:#}")))?;
        bindings::Agent::add_to_linker::<_, HasSelf<_>>(&mut linker, |state| state)
            .map_err(|e| SandboxError::Link(format!("{e:#}")))?;
        let ticker = EpochTicker::start(engine.clone());
        Ok(Self {
            engine,
            target: target.clone(),
            linker,
            agents: HashMap::new(),
            slots: Semaphore::new(CONCURRENT_CALLS_MAX as usize),
            guest_seed,
            _ticker: ticker,
        })
    }

    /// Compiles `bytes` (or, if `precompiled`, loads them as a .cwasm) and pre-instantiates
    /// it; the agent is not served until [`Self::add`].
    ///
    /// Each call of the agent may grow its memory to `memory_bytes_max` (capped at
    /// [`MEMORY_BYTES_CEILING`]).
    pub fn prepare(
        &self,
        name: &'static str,
        memory_bytes_max: usize,
        bytes: &[u8],
        precompiled: bool,
    ) -> Result<PreparedAgent, SandboxError> {
        let component = if precompiled {
            // SAFETY: deserializing runs the file's machine code, so it must be code this
            // project compiled. The caller read `bytes` from a plugins dir whose manifest says
            // they are precompiled for this engine's target and wasmtime version and records
            // their sha256, checked before this call (plugins::PluginsDir::read_component);
            // `aura compile` wrote both on the build machine. wasmtime itself checks the
            // header (target, version, settings) and refuses a mismatch.
            unsafe { Component::deserialize(&self.engine, bytes) }.map_err(|e| {
                let message = format!("{e:#}");
                SandboxError::Precompiled {
                    agent: name.to_owned(),
                    reason: PrecompiledMismatch::classify(&message),
                    message,
                }
            })?
        } else {
            self.compile(name, bytes)?
        };
        let instance_pre =
            self.linker
                .instantiate_pre(&component)
                .map_err(|e| SandboxError::Instantiate {
                    agent: name.to_owned(),
                    message: format!("{e:#}"),
                })?;
        let pre = bindings::AgentPre::new(instance_pre).map_err(|e| SandboxError::Instantiate {
            agent: name.to_owned(),
            message: format!("{e:#}"),
        })?;
        Ok(PreparedAgent {
            name,
            memory_bytes_max: memory_bytes_max.min(MEMORY_BYTES_CEILING),
            pre,
        })
    }

    #[cfg(feature = "jit")]
    fn compile(&self, name: &str, bytes: &[u8]) -> Result<Component, SandboxError> {
        Component::from_binary(&self.engine, bytes).map_err(|e| SandboxError::Compile {
            agent: name.to_owned(),
            message: format!("{e:#}"),
        })
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

    /// Calls a prepared agent's `manifest` with a fixed fuel budget; its clock reads the Unix
    /// epoch.
    pub async fn manifest(&self, agent: &PreparedAgent) -> Result<Invocation, CrossingError> {
        let frame = Frame {
            budget: Budget {
                fuel: MANIFEST_FUEL,
                deadline_ms: DEADLINE_MS_MAX,
            },
            chain_above: Vec::new(),
            clock_start_unix_ns: 0,
        };
        self.run(agent, None, frame, Arc::new(NoImports), Export::Manifest)
            .await
    }

    /// Whether `agent` is served.
    pub fn serves(&self, agent: &str) -> bool {
        self.agents.contains_key(agent)
    }

    /// Serves a prepared agent.
    pub fn add(&mut self, agent: PreparedAgent) {
        self.agents.insert(agent.name, agent);
    }

    /// Runs `invoke(call)` on a fresh instance of `agent`.
    ///
    /// `imports` answers the guest's `host.call` and `host.emit` on behalf of `call_id`.
    pub async fn invoke(
        &self,
        agent: &str,
        call_id: &str,
        call: &str,
        frame: Frame,
        imports: Arc<dyn HostImports>,
    ) -> Result<Invocation, CrossingError> {
        let prepared = self.prepared(agent)?;
        let call_id = Some(call_id.to_owned());
        self.run(prepared, call_id, frame, imports, Export::Invoke(call))
            .await
    }

    /// Runs `tick(context)` on a fresh instance of `agent`.
    pub async fn tick(
        &self,
        agent: &str,
        context: &str,
        frame: Frame,
        imports: Arc<dyn HostImports>,
    ) -> Result<Invocation, CrossingError> {
        let prepared = self.prepared(agent)?;
        self.run(prepared, None, frame, imports, Export::Tick(context))
            .await
    }

    fn prepared(&self, agent: &str) -> Result<&PreparedAgent, CrossingError> {
        self.agents
            .get(agent)
            .ok_or_else(|| CrossingError::AgentUnavailable {
                agent: agent.to_owned(),
            })
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
        let budget = frame.budget;
        let mut chain = frame.chain_above;
        chain.push(agent.name);
        let caller = Caller {
            agent: agent.name,
            call_id,
            chain,
            deadline_ms: budget.deadline_ms,
        };
        let stdout = MemoryOutputPipe::new(GUEST_OUTPUT_BYTES_MAX);
        let stderr = MemoryOutputPipe::new(GUEST_OUTPUT_BYTES_MAX);
        let seed = guest_seed(self.guest_seed, agent.name);
        let wasi = guest_wasi(seed, frame.clock_start_unix_ns, &stdout, &stderr);
        let state = CallState {
            wasi,
            table: ResourceTable::new(),
            limiter: CallLimiter::new(agent.memory_bytes_max),
            caller,
            imports,
            host_calls: 0,
            emits: 0,
            import_limit_hit: None,
            fuel_at_import: 0,
            fuel_charge: 0,
            stdout,
            stderr,
        };
        let mut store = Store::new(&self.engine, state);
        store.limiter(|state| &mut state.limiter);
        store.call_hook(share_fuel_with_callees);
        let setup = |e: wasmtime::Error| CrossingError::AgentTrapped {
            agent: agent.name.to_owned(),
            reason: format!("store setup failed: {e:#}"),
            fuel_used: 0,
        };
        set_fuel_budget(&mut store, budget).map_err(setup)?;
        let backstop_ms = set_backstop(&mut store, budget.deadline_ms);

        let run = async {
            let instance = agent.pre.instantiate_async(&mut store).await?;
            match export {
                Export::Manifest => instance.call_manifest(&mut store).await,
                Export::Invoke(call) => instance.call_invoke(&mut store, call).await,
                Export::Tick(context) => instance.call_tick(&mut store, context).await,
            }
        };
        // Epochs interrupt running wasm; a guest parked in a host import (a WASI poll) runs
        // none, so the same backstop also bounds the whole call in wall-clock time.
        let outcome = tokio::time::timeout(Duration::from_millis(backstop_ms), run).await;

        let fuel_used = budget.fuel - store.get_fuel().unwrap_or(0);
        let state = store.data();
        log_guest_output(agent.name, "stdout", &state.stdout);
        log_guest_output(agent.name, "stderr", &state.stderr);
        match outcome {
            Ok(Ok(output)) => Ok(Invocation { output, fuel_used }),
            Ok(Err(error)) => Err(classify(agent.name, budget, fuel_used, state, error)),
            Err(_elapsed) => Err(CrossingError::WallClockExceeded {
                agent: agent.name.to_owned(),
                deadline_ms: budget.deadline_ms,
                margin_ms: EPOCH_BACKSTOP_MARGIN_MS,
                fuel_used,
            }),
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
}

impl Frame {
    /// A root call (host → agent) with `budget`, its guest's clock starting at
    /// `clock_start_unix_ns`.
    pub fn root(budget: Budget, clock_start_unix_ns: u64) -> Self {
        Self {
            budget,
            chain_above: Vec::new(),
            clock_start_unix_ns,
        }
    }
}

/// The call hook: remembers the guest's fuel as it enters the host, so a `host.call` can cap
/// its callee at it; and, as the import returns, takes the fuel the callee burned from the
/// guest, so a whole call tree fits in the root's budget. Taking more than is left leaves 0,
/// and the guest's next fuel check traps (DeadlineExceeded).
fn share_fuel_with_callees(
    mut store: wasmtime::StoreContextMut<'_, CallState>,
    hook: wasmtime::CallHook,
) -> wasmtime::Result<()> {
    match hook {
        wasmtime::CallHook::CallingHost => {
            let fuel = store.get_fuel()?;
            store.data_mut().fuel_at_import = fuel;
        }
        wasmtime::CallHook::ReturningFromHost => {
            let charge = std::mem::take(&mut store.data_mut().fuel_charge);
            if charge > 0 {
                let fuel = store.get_fuel()?;
                store.set_fuel(fuel.saturating_sub(charge))?;
            }
        }
        wasmtime::CallHook::CallingWasm | wasmtime::CallHook::ReturningFromWasm => {}
    }
    Ok(())
}

/// A guest's WASI context. Deny by default: no args, no env, no preopened dirs, stdin closed,
/// no network; stdout and stderr go to bounded pipes. Randomness is seeded from `seed` (per
/// agent, from the host's guest seed): a guest's HashMaps (and whatever else draws on WASI
/// random) behave the same on every call, so the same call on the same input burns the same
/// fuel every time. The clocks are virtual, starting at `clock_start_unix_ns`.
pub fn guest_wasi(
    seed: u64,
    clock_start_unix_ns: u64,
    stdout: &MemoryOutputPipe,
    stderr: &MemoryOutputPipe,
) -> WasiCtx {
    WasiCtxBuilder::new()
        .stdout(stdout.clone())
        .stderr(stderr.clone())
        .allow_tcp(false)
        .allow_udp(false)
        .allow_ip_name_lookup(false)
        .secure_random(StdRng::seed_from_u64(seed))
        .insecure_random(StdRng::seed_from_u64(seed.rotate_left(32)))
        .insecure_random_seed(u128::from(seed))
        .wall_clock(VirtualWallClock {
            start_unix_ns: clock_start_unix_ns,
            reads: Default::default(),
        })
        .monotonic_clock(VirtualMonotonicClock {
            reads: Default::default(),
        })
        .build()
}

/// Gives a call's store its fuel, yielding to the executor every [`FUEL_YIELD_INTERVAL`].
pub fn set_fuel_budget<T>(store: &mut Store<T>, budget: Budget) -> wasmtime::Result<()> {
    store.set_fuel(budget.fuel)?;
    store.fuel_async_yield_interval(Some(FUEL_YIELD_INTERVAL))
}

/// Sets a call's wall-clock backstop (an epoch deadline [`EPOCH_BACKSTOP_MARGIN_MS`] past
/// `deadline_ms`) and caps what the guest may hand the host in one import call; returns the
/// backstop in ms.
pub fn set_backstop<T>(store: &mut Store<T>, deadline_ms: u64) -> u64 {
    let backstop_ms = deadline_ms + EPOCH_BACKSTOP_MARGIN_MS;
    store.set_epoch_deadline(backstop_ms.div_ceil(EPOCH_TICK_MS));
    store.epoch_deadline_trap();
    // Data a guest hands the host in one import call (host.call, host.emit, WASI writes)
    // is capped like every other crossing, before the host allocates it.
    store.set_hostcall_fuel(CROSSING_BYTES_MAX);
    backstop_ms
}

/// A guest's wall clock: starts at the call's instant and moves [`GUEST_CLOCK_STEP_NS`] per
/// read, never with the machine's time.
struct VirtualWallClock {
    start_unix_ns: u64,
    reads: std::cell::Cell<u64>,
}

impl wasmtime_wasi::HostWallClock for VirtualWallClock {
    fn resolution(&self) -> Duration {
        Duration::from_nanos(GUEST_CLOCK_STEP_NS)
    }

    fn now(&self) -> Duration {
        let reads = self.reads.replace(self.reads.get().saturating_add(1));
        Duration::from_nanos(
            self.start_unix_ns
                .saturating_add(reads.saturating_mul(GUEST_CLOCK_STEP_NS)),
        )
    }
}

/// A guest's monotonic clock: starts at 0 and moves [`GUEST_CLOCK_STEP_NS`] per read.
struct VirtualMonotonicClock {
    reads: std::cell::Cell<u64>,
}

impl wasmtime_wasi::HostMonotonicClock for VirtualMonotonicClock {
    fn resolution(&self) -> u64 {
        GUEST_CLOCK_STEP_NS
    }

    fn now(&self) -> u64 {
        let reads = self.reads.replace(self.reads.get().saturating_add(1));
        reads.saturating_mul(GUEST_CLOCK_STEP_NS)
    }
}

/// Which export a call runs.
enum Export<'a> {
    Manifest,
    Invoke(&'a str),
    Tick(&'a str),
}

/// The seed of an agent's random source: FNV-1a over the host's guest seed and the agent name,
/// so agents draw different but reproducible streams.
fn guest_seed(host_seed: u64, agent: &str) -> u64 {
    const FNV_OFFSET_BASIS: u64 = 0xcbf2_9ce4_8422_2325;
    const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;
    host_seed
        .to_le_bytes()
        .iter()
        .chain(agent.as_bytes())
        .fold(FNV_OFFSET_BASIS, |hash, byte| {
            (hash ^ u64::from(*byte)).wrapping_mul(FNV_PRIME)
        })
}

/// Turns a wasmtime failure into the typed error callers branch on.
fn classify(
    agent: &str,
    budget: Budget,
    fuel_used: u64,
    state: &CallState,
    error: wasmtime::Error,
) -> CrossingError {
    let agent = agent.to_owned();
    if let Some((import, limit)) = state.import_limit_hit {
        return CrossingError::ImportLimit {
            agent,
            import,
            limit,
            fuel_used,
        };
    }
    if let Some(reason) = &state.limiter.limit_hit {
        return CrossingError::MemoryLimit {
            agent,
            reason: reason.clone(),
            fuel_used,
        };
    }
    match error.downcast_ref::<Trap>() {
        Some(Trap::OutOfFuel) => CrossingError::DeadlineExceeded {
            agent,
            deadline_ms: budget.deadline_ms,
            fuel_used,
        },
        Some(Trap::StackOverflow) => CrossingError::StackOverflow { agent, fuel_used },
        Some(Trap::Interrupt) => CrossingError::WallClockExceeded {
            agent,
            deadline_ms: budget.deadline_ms,
            margin_ms: EPOCH_BACKSTOP_MARGIN_MS,
            fuel_used,
        },
        _ => CrossingError::AgentTrapped {
            agent,
            reason: format!("{error:#}"),
            fuel_used,
        },
    }
}

fn log_guest_output(agent: &str, stream: &'static str, pipe: &MemoryOutputPipe) {
    let bytes = pipe.contents();
    if !bytes.is_empty() {
        tracing::info!(
            target: "aura::guest",
            agent,
            stream,
            text = %String::from_utf8_lossy(&bytes),
        );
    }
}
