//! The probe: a call's stages apart, through the sandbox's own store seam.
//!
//! The host runs a call as one step (store, instantiation, the export). The probe holds a
//! [`Sandbox`] of its own, built like the host's but for one switched setting
//! ([`EngineTuning`]: fuel metering off, another pool reset, bounds checks, perf's map), and
//! runs each call's stages through [`Sandbox::call_store`], the one function that builds every
//! call's store, so a bench can time store set-up, instantiation and the call apart. Its
//! `host.call` is refused ([`NoImports`]): agent-to-agent hops are measured through the real
//! host. The `sandbox` figures of the real host (`Host::measure`) next to the probe's keep it
//! honest.

use std::collections::HashMap;
use std::sync::Arc;

use aura_sandbox::{
    Budget, CallStore, Code, CodeTarget, EngineTuning, Frame, HostImports, Instance, NoImports,
    PreparedAgent, Sandbox,
};

/// The guest seed of every probe store (the host's default seed is 0 too).
const PROBE_GUEST_SEED: u64 = 0;

/// A sandbox with agents loaded, and imports that refuse agent-to-agent calls.
pub struct Probe {
    sandbox: Sandbox,
    agents: HashMap<&'static str, PreparedAgent>,
    imports: Arc<dyn HostImports>,
    fuel_metering: bool,
}

impl Probe {
    /// Compiles `agents` from the plugins dir, with fuel metering on or off.
    pub fn new(fuel: bool, agents: &[&str]) -> Self {
        let tuning = EngineTuning {
            fuel_metering: fuel,
            ..EngineTuning::default()
        };
        Self::tuned(tuning, agents)
    }

    /// [`Probe::new`] with the engine's settings tuned.
    pub fn tuned(tuning: EngineTuning, agents: &[&str]) -> Self {
        let plugins = super::plugins_dir();
        let files: Vec<_> = agents
            .iter()
            .map(|agent| (*agent, plugins.join(format!("{agent}.wasm"))))
            .collect();
        Self::from_files(tuning, &files)
    }

    /// A probe whose agents' components are read from the files given (an agent built from
    /// another revision, for a side-by-side comparison), compiled with `tuning`.
    pub fn from_files(tuning: EngineTuning, files: &[(&str, std::path::PathBuf)]) -> Self {
        let sandbox = Sandbox::tuned(PROBE_GUEST_SEED, &CodeTarget::Native, tuning)
            .unwrap_or_else(|e| panic!("sandbox: {e}"));
        let mut prepared_agents = HashMap::new();
        for (agent, path) in files {
            let spec = aura_contract::catalogue::agent(agent)
                .unwrap_or_else(|| panic!("`{agent}` is not in the catalogue"));
            let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let prepared = sandbox
                .prepare(spec.name, spec.memory_bytes_max, Code::Wasm(&bytes))
                .unwrap_or_else(|e| panic!("{agent}: {e}"));
            prepared_agents.insert(spec.name, prepared);
        }
        Self {
            sandbox,
            agents: prepared_agents,
            imports: Arc::new(NoImports {
                reason: "the probe runs no agent-to-agent calls",
            }),
            fuel_metering: tuning.fuel_metering,
        }
    }

    /// A fresh store for a call of `agent`, set up as the host sets up every call's, with
    /// `fuel` to burn (ignored with metering off) and a backstop past `deadline_ms`.
    pub fn store(&self, agent: &str, fuel: u64, deadline_ms: u64) -> CallStore<'_> {
        let prepared = self
            .agents
            .get(agent)
            .unwrap_or_else(|| panic!("`{agent}` is not loaded in the probe"));
        let frame = Frame::root(Budget { fuel, deadline_ms }, 0);
        self.sandbox
            .call_store(prepared, None, frame, self.imports.clone())
            .unwrap_or_else(|e| panic!("store: {e}"))
    }

    /// Bytes the pool keeps resident in free slots (what the next calls there reset).
    pub fn resident_bytes(&self) -> usize {
        self.sandbox.resident_bytes()
    }

    /// Instantiates the store's agent.
    pub async fn instantiate(store: &mut CallStore<'_>) -> Instance {
        store
            .instantiate()
            .await
            .unwrap_or_else(|e| panic!("instantiate: {e}"))
    }

    /// Calls `invoke(call)` on an instance.
    pub async fn invoke(store: &mut CallStore<'_>, instance: &Instance, call: &str) -> String {
        store
            .invoke(instance, call)
            .await
            .unwrap_or_else(|e| panic!("invoke: {e}"))
    }

    /// A whole sandboxed tick: fresh store, instantiate, `tick(context)`; the output. In the
    /// tick's own pool slots as the host runs it (`own_slots`), or in its calls' slots as before
    /// the tick twin (for BENCHMARKS.md's comparison).
    pub async fn run_tick(
        &self,
        agent: &str,
        context: &str,
        fuel: u64,
        deadline_ms: u64,
        own_slots: bool,
    ) -> String {
        let mut store = self.store(agent, fuel, deadline_ms);
        let instance = match own_slots {
            true => store.instantiate_for_tick().await,
            false => store.instantiate().await,
        };
        let instance = instance.unwrap_or_else(|e| panic!("instantiate: {e}"));
        store
            .tick(&instance, context)
            .await
            .unwrap_or_else(|e| panic!("tick {agent}: {e}"))
    }

    /// A whole sandboxed call: fresh store, instantiate, invoke; the output and the fuel used
    /// (0 with metering off).
    pub async fn run(&self, agent: &str, call: &str, fuel: u64, deadline_ms: u64) -> (String, u64) {
        let mut store = self.store(agent, fuel, deadline_ms);
        let instance = Self::instantiate(&mut store).await;
        let output = Self::invoke(&mut store, &instance, call).await;
        assert!(!store.printed(), "the guest printed");
        let used = match self.fuel_metering {
            true => store.fuel_used(),
            false => 0,
        };
        (output, used)
    }
}
