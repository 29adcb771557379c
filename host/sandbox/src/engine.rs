//! The engine: what compiled code depends on, and what code it runs.
//!
//! It owns the one function that builds wasmtime's `Config` ([`engine_config_for`]), so code
//! precompiled on the build machine and the runtime that loads it always agree; the targets a
//! host can run or compile for ([`CodeTarget`]); how each memory sits in the address space
//! ([`MemoryLayout`]); the instance pool; precompiling for another target; reading wasmtime's
//! refusal of a precompiled file ([`PrecompiledMismatch`]); and the epoch ticker that backs
//! fuel with wall-clock time. It must not create stores or run guests (the store module does).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use wasmtime::{Config, Enabled, Engine, InstanceAllocationStrategy, PoolingAllocationConfig};

use super::{Budget, SandboxError};
use aura_contract::limits::*;

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

/// The targets this build runs: its own architecture, and Pulley when built with it.
pub fn runnable_targets() -> Vec<&'static str> {
    let mut targets = vec![BUILD_TARGET];
    if cfg!(feature = "pulley") {
        targets.push(PULLEY_TARGET);
    }
    targets
}

/// Settings a host runs with, each named for what it buys. The host always runs
/// [`EngineTuning::default`]; each other value switches one setting off, so a benchmark can
/// measure what it is worth side by side (BENCHMARKS.md: fuel metering, the pool's reset,
/// bounds checks) and `perf` can name a guest's functions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EngineTuning {
    /// Fuel metering: deadlines are fuel. Off, a call is bounded by the epoch backstop alone
    /// and reports 0 fuel; only for measuring what metering costs.
    pub fuel_metering: bool,
    /// How the pool resets a freed slot's memory and table.
    pub pool_reset: PoolReset,
    /// Check every memory access, as on ARM64 and Pulley, even where the architecture's
    /// layout needs no checks (x86_64).
    pub bounds_checks_always: bool,
    /// Record every compiled function in /tmp/perf-<pid>.map, so `perf report` names them.
    pub perf_map: bool,
    /// Served time (`served`) past a call's deadline before the backstop stops it:
    /// [`EPOCH_BACKSTOP_MARGIN_MS`], or under a deterministic simulation
    /// [`SIMULATED_BACKSTOP_MARGIN_MS`] (the machine's load must not decide a call there).
    pub backstop_margin_ms: u64,
}

impl EngineTuning {
    /// When the backstop stops a call with `budget`: the margin past its deadline, in served
    /// time.
    pub fn backstop_ms(&self, budget: &Budget) -> u64 {
        budget.deadline_ms.saturating_add(self.backstop_margin_ms)
    }
}

impl Default for EngineTuning {
    fn default() -> Self {
        Self {
            fuel_metering: true,
            pool_reset: PoolReset::InPlaceDirtyPages,
            bounds_checks_always: false,
            perf_map: false,
            backstop_margin_ms: EPOCH_BACKSTOP_MARGIN_MS,
        }
    }
}

/// How the pool gives a freed slot back for the next call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PoolReset {
    /// Keep up to [`MEMORY_KEEP_RESIDENT_BYTES`] resident and reset only the pages the call
    /// dirtied, found with Linux's PAGEMAP_SCAN where the kernel has it: what the host runs.
    InPlaceDirtyPages,
    /// Keep resident, but reset the whole kept region (what kernels before 6.7 get).
    InPlaceWhole,
    /// wasmtime's default: hand everything back with `madvise`, so the next call faults its
    /// pages in again.
    Madvise,
}

/// [`engine_config_for`] the native target with the host's own tuning: the settings every
/// component this host runs is compiled with.
pub fn engine_config() -> Config {
    config_for_arch(std::env::consts::ARCH, &EngineTuning::default())
}

/// The engine configuration for `target` with `tuning`. Everything compiled code depends on is
/// set here and only here, so components precompiled elsewhere agree with the engine that
/// runs them.
pub fn engine_config_for(
    target: &CodeTarget,
    tuning: &EngineTuning,
) -> Result<Config, SandboxError> {
    let unusable = |reason: &str| SandboxError::Target {
        target: target.name().to_owned(),
        reason: reason.to_owned(),
    };
    match target {
        CodeTarget::Native => Ok(config_for_arch(std::env::consts::ARCH, tuning)),
        CodeTarget::Pulley => {
            if !cfg!(feature = "pulley") {
                return Err(unusable(
                    "this build has no Pulley interpreter (build with `--features pulley`)",
                ));
            }
            // Pulley checks every access itself: the small, bounds-checked layout.
            let mut config = config_for_arch("pulley", tuning);
            config
                .target(PULLEY_TARGET)
                .map_err(|e| unusable(&format!("{e:#}")))?;
            Ok(config)
        }
        CodeTarget::Triple(triple) => {
            if !cfg!(feature = "jit") {
                return Err(unusable(
                    "a runtime-only host runs its own architecture or Pulley only",
                ));
            }
            let arch = triple.split('-').next().unwrap_or_default();
            let mut config = config_for_arch(arch, tuning);
            config
                .target(triple)
                .map_err(|e| unusable(&format!("{e:#}")))?;
            Ok(config)
        }
    }
}

/// The settings for code of architecture `arch`.
fn config_for_arch(arch: &str, tuning: &EngineTuning) -> Config {
    let mut config = Config::new();
    // Floating-point NaNs come out with one bit pattern on every architecture, so a replay on
    // an ARM phone or under Pulley computes what x86_64 computed (seed 002's determinism).
    #[cfg(feature = "jit")]
    config.cranelift_nan_canonicalization(true);
    config.wasm_component_model(true);
    config.consume_fuel(tuning.fuel_metering);
    config.epoch_interruption(true);
    config.max_wasm_stack(WASM_STACK_BYTES_MAX);
    config.async_stack_size(ASYNC_STACK_BYTES);
    let layout = match tuning.bounds_checks_always {
        true => MemoryLayout::Bounded,
        false => MemoryLayout::for_arch(arch),
    };
    layout.apply(&mut config);
    config.allocation_strategy(InstanceAllocationStrategy::Pooling(pool_config(
        tuning.pool_reset,
    )));
    if tuning.perf_map {
        config.profiler(wasmtime::ProfilingStrategy::PerfMap);
    }
    config
}

/// The narrator's engine configuration for `target`: the agents' settings (fuel, epochs, NaN
/// canonicalization, the layout of `target`'s architecture), but its memory allocated on
/// demand, not from the agents' pool, whose slots stop at [`MEMORY_BYTES_CEILING`]; where
/// accesses are checked (ARM64, Pulley), its reservation is [`NARRATOR_MEMORY_BYTES_MAX`].
/// Code precompiled for the narrator is compiled with this, and only this engine runs it.
pub fn narrator_config_for(target: &CodeTarget) -> Result<Config, SandboxError> {
    let mut config = engine_config_for(target, &EngineTuning::default())?;
    config.allocation_strategy(InstanceAllocationStrategy::OnDemand);
    // NaN canonicalization costs the model's SIMD arithmetic a compare and a select per
    // operation (measured: BENCHMARKS.md, "The narrator"). The narrator never reads a float's
    // bits: its only output is text chosen by `>` comparisons, false for every NaN whatever
    // its payload, so the payloads that differ across architectures never reach its answer.
    #[cfg(feature = "jit")]
    config.cranelift_nan_canonicalization(false);
    let arch = match target {
        CodeTarget::Native => std::env::consts::ARCH,
        CodeTarget::Pulley => "pulley",
        CodeTarget::Triple(triple) => triple.split('-').next().unwrap_or_default(),
    };
    if MemoryLayout::for_arch(arch) == MemoryLayout::Bounded {
        config.memory_reservation(NARRATOR_MEMORY_BYTES_MAX as u64);
    }
    Ok(config)
}

/// Compiles a component for `target` into the bytes of a .cwasm file, with the settings of
/// [`engine_config_for`]: the runtime that loads it builds its engine the same way. A sandbox
/// that does not compile refuses (`Precompile`: it has no compiler).
pub fn precompile(agent: &str, target: &CodeTarget, wasm: &[u8]) -> Result<Vec<u8>, SandboxError> {
    precompile_with(
        agent,
        target,
        engine_config_for(target, &EngineTuning::default())?,
        wasm,
    )
}

/// [`precompile`] for the narrator: its own settings ([`narrator_config_for`]).
pub fn precompile_narrator(target: &CodeTarget, wasm: &[u8]) -> Result<Vec<u8>, SandboxError> {
    precompile_with("narrator", target, narrator_config_for(target)?, wasm)
}

fn precompile_with(
    agent: &str,
    target: &CodeTarget,
    config: Config,
    wasm: &[u8],
) -> Result<Vec<u8>, SandboxError> {
    #[cfg(not(feature = "jit"))]
    {
        let _ = (wasm, config);
        Err(SandboxError::Precompile {
            agent: agent.to_owned(),
            target: target.name().to_owned(),
            message: "this host is runtime only: it has no compiler".to_owned(),
        })
    }
    #[cfg(feature = "jit")]
    {
        let failed = |e: wasmtime::Error| SandboxError::Precompile {
            agent: agent.to_owned(),
            target: target.name().to_owned(),
            message: format!("{e:#}"),
        };
        let engine = Engine::new(&config).map_err(failed)?;
        engine.precompile_component(wasm).map_err(failed)
    }
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
                config.memory_guard_size(MEMORY_GUARD_BOUNDED_BYTES);
            }
        }
    }
}

/// The pooling allocator every call's instance comes from: [`INSTANCE_SLOTS`] slots, each
/// bounded as [`aura_contract::limits`] says. The host resets a freed slot's memory and table in place
/// ([`PoolReset::InPlaceDirtyPages`]) up to [`MEMORY_KEEP_RESIDENT_BYTES`] and
/// [`TABLE_KEEP_RESIDENT_BYTES`], rather than handing them back with `madvise`: a fresh instance
/// per call then neither faults its pages in again nor makes the kernel flush the other core's
/// TLB (BENCHMARKS.md, "the pool"). These change no generated code.
fn pool_config(reset: PoolReset) -> PoolingAllocationConfig {
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
        .table_elements(TABLE_ELEMENTS_MAX);
    match reset {
        PoolReset::InPlaceDirtyPages => pool
            .linear_memory_keep_resident(MEMORY_KEEP_RESIDENT_BYTES)
            .table_keep_resident(TABLE_KEEP_RESIDENT_BYTES)
            .pagemap_scan(Enabled::Auto),
        PoolReset::InPlaceWhole => pool
            .linear_memory_keep_resident(MEMORY_KEEP_RESIDENT_BYTES)
            .table_keep_resident(TABLE_KEEP_RESIDENT_BYTES)
            .pagemap_scan(Enabled::No),
        PoolReset::Madvise => pool
            .linear_memory_keep_resident(0)
            .table_keep_resident(0)
            .pagemap_scan(Enabled::No),
    };
    pool
}

/// What the pool holds between calls, for tests and BENCHMARKS.md.
impl super::Sandbox {
    /// Bytes of linear memory the pool keeps resident in slots no call holds now: what the
    /// next calls in those slots reset in place (every page a call in the slot ever wrote, up
    /// to [`MEMORY_KEEP_RESIDENT_BYTES`] a slot: PAGEMAP_SCAN finds the pages that are no
    /// longer the image's, not the ones the last call wrote). For BENCHMARKS.md.
    pub fn resident_bytes(&self) -> usize {
        self.engine
            .pooling_allocator_metrics()
            .map_or(0, |pool| pool.unused_memory_bytes_resident())
    }

    /// Memory slots some call has used and no call holds now. The pool hands a call the slot
    /// its module last used, so after calls and ticks of one agent in turn this is two: one
    /// for its calls, one for its ticks ([`super::PreparedAgent`]).
    pub fn warm_memory_slots(&self) -> u32 {
        self.engine
            .pooling_allocator_metrics()
            .map_or(0, |pool| pool.unused_warm_memories())
    }
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

/// Increments the engine's epoch every [`EPOCH_TICK_MS`] until dropped.
pub(super) struct EpochTicker {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl EpochTicker {
    pub(super) fn start(engine: Engine) -> Self {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_map_to_targets_and_back() {
        assert_eq!(CodeTarget::named(BUILD_TARGET), CodeTarget::Native);
        assert_eq!(CodeTarget::named(PULLEY_TARGET), CodeTarget::Pulley);
        let other = if cfg!(target_pointer_width = "64") {
            "pulley32"
        } else {
            "pulley64"
        };
        assert_eq!(
            CodeTarget::named(other),
            CodeTarget::Triple(other.to_owned())
        );
        let triple = CodeTarget::named("aarch64-unknown-linux-musl");
        if BUILD_TARGET != "aarch64-unknown-linux-musl" {
            assert_eq!(triple.name(), "aarch64-unknown-linux-musl");
            assert!(matches!(triple, CodeTarget::Triple(_)));
        }
        assert_eq!(runnable_targets()[0], BUILD_TARGET);
    }

    #[test]
    fn the_layout_follows_the_architecture_the_code_is_for() {
        assert_eq!(MemoryLayout::for_arch("x86_64"), MemoryLayout::Guarded);
        assert_eq!(MemoryLayout::for_arch("aarch64"), MemoryLayout::Bounded);
        assert_eq!(MemoryLayout::for_arch("pulley"), MemoryLayout::Bounded);
    }

    #[test]
    fn wasmtime_refusals_are_classified() {
        use PrecompiledMismatch::*;
        let cases = [
            ("Module was compiled for architecture 'aarch64'", Target),
            ("Module was compiled for operating system 'macos'", Target),
            (
                "Module was compiled with incompatible version 'X'",
                WasmtimeVersion,
            ),
            ("incompatible object file format", NotPrecompiled),
            (
                "failed to parse precompiled artifact as an ELF",
                NotPrecompiled,
            ),
            (
                "Module was compiled with fuel consumption enabled",
                Settings,
            ),
        ];
        for (message, expected) in cases {
            assert_eq!(
                PrecompiledMismatch::classify(message),
                expected,
                "{message}"
            );
        }
    }

    #[test]
    fn a_target_this_build_cannot_use_is_refused_with_its_reason() {
        if cfg!(feature = "jit") {
            return;
        }
        let error = engine_config_for(
            &CodeTarget::Triple("riscv64gc-unknown-linux-gnu".into()),
            &EngineTuning::default(),
        )
        .unwrap_err();
        assert!(matches!(error, SandboxError::Target { .. }), "{error}");
    }
}
