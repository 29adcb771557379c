//! The probe: the sandbox's per-call set-up (`host/src/sandbox.rs`, `Sandbox::run`) with its
//! steps exposed, so a bench can time store set-up, instantiation and the call apart, run the
//! same component with fuel metering switched off, and try other pool settings.
//!
//! The sandbox itself only offers "instantiate and call" as one step. The probe builds its
//! engine from the same [`aura::sandbox::engine_config`] and [`aura::sandbox::pool_config`],
//! and each store from the sandbox's own pieces: [`aura::sandbox::guest_wasi`] (deny-by-default
//! WASI, seeded random, virtual clocks), [`aura::sandbox::CallLimiter`],
//! [`aura::sandbox::set_fuel_budget`] and [`aura::sandbox::set_backstop`]. Its `host.call`
//! refuses (the probe runs no agent-to-agent calls); agent-to-agent hops are measured through
//! the real host. The `sandbox` figures of the real host (`Host::measure`) next to the probe's
//! keep it honest.

use std::collections::HashMap;

use aura::limits::{GUEST_OUTPUT_BYTES_MAX, MEMORY_BYTES_MAX};
use wasmtime::component::{HasSelf, Linker, ResourceTable};
use wasmtime::{Engine, Store};
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

/// Bindings for `wit/agent.wit`, generated exactly as the sandbox generates them.
mod bindings {
    wasmtime::component::bindgen!({
        path: "../wit",
        world: "agent",
        imports: { default: async | trappable },
        exports: { default: async },
    });
}

/// An instantiated agent, ready for its call.
pub type Instance = bindings::Agent;

/// The guest seed of every probe store (the host's default seed is 0 too).
const PROBE_GUEST_SEED: u64 = 0;

/// Per-store state, the sandbox's `CallState` less the agent-to-agent bookkeeping.
pub struct ProbeState {
    wasi: WasiCtx,
    table: ResourceTable,
    limiter: aura::sandbox::CallLimiter,
    stdout: MemoryOutputPipe,
    stderr: MemoryOutputPipe,
    fuel_at_import: u64,
}

impl WasiView for ProbeState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

impl bindings::aura::agent::host::Host for ProbeState {
    async fn call(&mut self, _call: String) -> wasmtime::Result<String> {
        Ok(r#"{"error":{"kind":"agent_call_unsupported","message":"the probe runs no agent-to-agent calls"},"ok":false}"#.into())
    }

    async fn emit(&mut self, _event: String) -> wasmtime::Result<()> {
        Ok(())
    }
}

/// The pooling allocator's reset of a freed slot, against the sandbox's
/// ([`aura::sandbox::pool_config`]), to measure what it buys (BENCHMARKS.md, "the pool").
#[derive(Debug, Clone, Copy, Default)]
pub struct PoolTuning {
    /// Reset slots as wasmtime does by default: everything handed back with `madvise`, so the
    /// next call faults its pages in again.
    pub madvise: bool,
    /// Keep resident as the sandbox does, but `memset` the whole kept region instead of only
    /// the pages PAGEMAP_SCAN finds dirty (what kernels before 6.7 get).
    pub no_pagemap_scan: bool,
    /// Reserve 64 MiB + a 2 MiB guard per memory and check every access, as the sandbox
    /// does on ARM64 (phones), instead of x86_64's 4 GiB reservation without bounds checks.
    pub bounds_checked: bool,
    /// Record the guest's compiled functions in /tmp/perf-<pid>.map, so `perf report` names
    /// them.
    pub perf_map: bool,
}

/// The engine, the linker and the agents, pre-instantiated.
pub struct Probe {
    engine: Engine,
    agents: HashMap<String, bindings::AgentPre<ProbeState>>,
    fuel: bool,
}

impl Probe {
    /// Compiles `agents` from the plugins dir, with fuel metering on or off.
    pub fn new(fuel: bool, agents: &[&str]) -> Self {
        Self::tuned(fuel, PoolTuning::default(), agents)
    }

    /// [`Probe::new`] with the pool tuned.
    pub fn tuned(fuel: bool, tuning: PoolTuning, agents: &[&str]) -> Self {
        let mut config = aura::sandbox::engine_config();
        config.consume_fuel(fuel);
        let mut pool = aura::sandbox::pool_config();
        if tuning.madvise {
            pool.linear_memory_keep_resident(0).table_keep_resident(0);
        }
        if tuning.madvise || tuning.no_pagemap_scan {
            pool.pagemap_scan(wasmtime::Enabled::No);
        }
        config.allocation_strategy(wasmtime::InstanceAllocationStrategy::Pooling(pool));
        if tuning.bounds_checked {
            config.memory_reservation(aura::limits::MEMORY_BYTES_CEILING as u64);
            config.memory_guard_size(2 << 20);
        }
        if tuning.perf_map {
            config.profiler(wasmtime::ProfilingStrategy::PerfMap);
        }
        let engine = wasmtime::Engine::new(&config).unwrap_or_else(|e| panic!("engine: {e:#}"));
        let mut linker = Linker::new(&engine);
        wasmtime_wasi::p2::add_to_linker_async(&mut linker)
            .unwrap_or_else(|e| panic!("WASI: {e:#}"));
        bindings::Agent::add_to_linker::<_, HasSelf<_>>(&mut linker, |state| state)
            .unwrap_or_else(|e| panic!("host imports: {e:#}"));
        let plugins = super::plugins_dir();
        let agents = agents
            .iter()
            .map(|agent| {
                let path = plugins.join(format!("{agent}.wasm"));
                let bytes =
                    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                let component = wasmtime::component::Component::from_binary(&engine, &bytes)
                    .unwrap_or_else(|e| panic!("{agent}: {e:#}"));
                let pre = linker
                    .instantiate_pre(&component)
                    .and_then(bindings::AgentPre::new)
                    .unwrap_or_else(|e| panic!("{agent}: {e:#}"));
                (agent.to_string(), pre)
            })
            .collect();
        Self {
            engine,
            agents,
            fuel,
        }
    }

    /// A fresh store set up as the sandbox sets up a call's, with `fuel` to burn (ignored with
    /// metering off) and a backstop `deadline_ms` past which the epoch interrupts.
    pub fn store(&self, fuel: u64, deadline_ms: u64) -> Store<ProbeState> {
        let stdout = MemoryOutputPipe::new(GUEST_OUTPUT_BYTES_MAX);
        let stderr = MemoryOutputPipe::new(GUEST_OUTPUT_BYTES_MAX);
        let state = ProbeState {
            wasi: aura::sandbox::guest_wasi(PROBE_GUEST_SEED, 0, &stdout, &stderr),
            table: ResourceTable::new(),
            limiter: aura::sandbox::CallLimiter::new(MEMORY_BYTES_MAX),
            stdout,
            stderr,
            fuel_at_import: 0,
        };
        let mut store = Store::new(&self.engine, state);
        store.limiter(|state| &mut state.limiter);
        store.call_hook(|mut store, hook| {
            if let wasmtime::CallHook::CallingHost = hook {
                let fuel = store.get_fuel().unwrap_or(0);
                store.data_mut().fuel_at_import = fuel;
            }
            Ok(())
        });
        if self.fuel {
            aura::sandbox::set_fuel_budget(&mut store, aura::sandbox::Budget { fuel, deadline_ms })
                .unwrap_or_else(|e| panic!("fuel: {e:#}"));
        }
        aura::sandbox::set_backstop(&mut store, deadline_ms);
        store
    }

    /// Instantiates `agent` in `store`.
    pub async fn instantiate(&self, store: &mut Store<ProbeState>, agent: &str) -> Instance {
        let pre = self
            .agents
            .get(agent)
            .unwrap_or_else(|| panic!("the probe has no agent `{agent}`"));
        pre.instantiate_async(store)
            .await
            .unwrap_or_else(|e| panic!("instantiate {agent}: {e:#}"))
    }

    /// Calls `invoke(call)` on an instance.
    pub async fn invoke(store: &mut Store<ProbeState>, instance: &Instance, call: &str) -> String {
        instance
            .call_invoke(store, call)
            .await
            .unwrap_or_else(|e| panic!("invoke: {e:#}"))
    }

    /// A whole sandboxed tick: fresh store, instantiate, `tick(context)`; the output.
    pub async fn run_tick(
        &self,
        agent: &str,
        context: &str,
        fuel: u64,
        deadline_ms: u64,
    ) -> String {
        let mut store = self.store(fuel, deadline_ms);
        let instance = self.instantiate(&mut store, agent).await;
        instance
            .call_tick(&mut store, context)
            .await
            .unwrap_or_else(|e| panic!("tick {agent}: {e:#}"))
    }

    /// A whole sandboxed call: fresh store, instantiate, invoke; the output and the fuel used
    /// (0 with metering off).
    pub async fn run(&self, agent: &str, call: &str, fuel: u64, deadline_ms: u64) -> (String, u64) {
        let mut store = self.store(fuel, deadline_ms);
        let instance = self.instantiate(&mut store, agent).await;
        let output = Self::invoke(&mut store, &instance, call).await;
        let used = match self.fuel {
            true => fuel - store.get_fuel().unwrap_or(0),
            false => 0,
        };
        let state = store.data();
        assert!(
            state.stdout.contents().is_empty() && state.stderr.contents().is_empty(),
            "the guest printed"
        );
        (output, used)
    }
}
