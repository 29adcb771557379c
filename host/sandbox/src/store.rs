//! A call's store: the one place a wasmtime `Store` is built and a guest is run in it.
//!
//! It owns [`Sandbox::call_store`], which gives every call (and every measurement of one) the
//! same set-up: a fresh store with the call's fuel budget (yielding to the executor every
//! [`FUEL_YIELD_INTERVAL`]), an epoch backstop past its deadline, a cap on what one import may
//! hand the host, memory and table limits, the guest's deny-by-default WASI context and
//! virtual clocks, and the call hook that makes a whole agent-to-agent call tree share one
//! budget. The stages of a call ([`CallStore::instantiate`], then one export) are separate so
//! each can be timed; wasmtime's failures come out of them as typed [`CrossingError`]s. It
//! must not decide what a call is allowed to do (the host does) nor read what crosses.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use wasmtime::component::ResourceTable;
use wasmtime::{ResourceLimiter, Store, Trap, UpdateDeadline};
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

use super::imports::{Caller, HostImports, ImportState};
use super::served::ServedClock;
use super::{Budget, Frame, PreparedAgent, Sandbox, bindings, guest};
use aura_contract::error::CrossingError;
use aura_contract::limits::*;

/// Per-call store data: WASI state, limits, and what the call is about.
pub struct CallState {
    wasi: WasiCtx,
    table: ResourceTable,
    limiter: CallLimiter,
    /// The guest's imports: who calls, who answers, the import bounds and the fuel handed over.
    pub(super) imports: ImportState,
    /// Bytes the guest's random generators produced since the last charge, charged at
    /// [`FUEL_PER_RANDOM_BYTE`] when an import returns (by the call hook).
    random_produced: Arc<AtomicU64>,
    /// Whether the store meters fuel (off only in measurements, see `EngineTuning`).
    fuel_metering: bool,
    /// How deep the guest is in the host: imports, and wasmtime's libcalls within them (set
    /// by the call hook, which charges only as the outermost returns).
    host_depth: u32,
    /// Whether the last thing that happened was wasm returning to the host: lifting the
    /// export's answer, as opposed to an import's arguments.
    wasm_returned: bool,
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
pub(super) struct CallLimiter {
    memory_bytes_max: usize,
    pub(super) limit_hit: Option<String>,
    /// The most the guest's memory was grown to, in bytes.
    pub(super) peak_bytes: usize,
}

impl CallLimiter {
    /// A limiter that lets memory grow to `memory_bytes_max`.
    pub(super) fn new(memory_bytes_max: usize) -> Self {
        Self {
            memory_bytes_max,
            limit_hit: None,
            peak_bytes: 0,
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
        self.peak_bytes = self.peak_bytes.max(desired);
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

/// An agent instantiated in a [`CallStore`], ready for one export.
pub struct Instance(bindings::Agent);

/// One call's store, set up and not yet run.
pub struct CallStore<'a> {
    agent: &'a PreparedAgent,
    store: Store<CallState>,
    /// The call's served time, which its backstops measure.
    served: Arc<ServedClock>,
    budget: Budget,
    fuel_metering: bool,
    backstop_margin_ms: u64,
}

impl Sandbox {
    /// Builds the store of one call of `agent` (prepared, not necessarily served): its budget
    /// and clock from `frame`, its `host.call`/`emit` answered by `imports` on behalf of
    /// `call_id`. Every call the sandbox runs gets its store here.
    pub fn call_store<'a>(
        &self,
        agent: &'a PreparedAgent,
        call_id: Option<String>,
        frame: Frame,
        imports: Arc<dyn HostImports>,
    ) -> Result<CallStore<'a>, CrossingError> {
        let budget = frame.budget;
        let interrupt_at_start = frame.interrupt_at_start;
        let state = self.call_state(agent, call_id, frame, imports);
        let mut store = Store::new(&self.engine, state);
        store.limiter(|state| &mut state.limiter);
        store.call_hook(share_fuel_with_callees);
        if self.tuning.fuel_metering {
            store
                .set_fuel(budget.fuel)
                .and_then(|()| store.fuel_async_yield_interval(Some(FUEL_YIELD_INTERVAL)))
                .map_err(|e| CrossingError::AgentTrapped {
                    agent: agent.name.to_owned(),
                    reason: format!("store setup failed: {e:#}"),
                    fuel_used: 0,
                })?;
        }
        // The epoch backstop: interrupts running wasm once the call has been served a margin
        // past its deadline (its waits for a core not counted: `served`).
        let served = ServedClock::start();
        let backstop = Duration::from_millis(self.tuning.backstop_ms(&budget));
        if interrupt_at_start {
            store.set_epoch_deadline(0);
            store.epoch_deadline_trap();
        } else {
            store.set_epoch_deadline(backstop.as_millis().div_ceil(EPOCH_TICK_MS.into()) as u64);
            let clock = served.clone();
            store.epoch_deadline_callback(move |_| {
                let left = backstop.saturating_sub(clock.served());
                if left.is_zero() {
                    return Err(Trap::Interrupt.into());
                }
                let ticks = left.as_millis().div_ceil(EPOCH_TICK_MS.into()) as u64;
                Ok(UpdateDeadline::Continue(ticks.max(1)))
            });
        }
        // Data a guest hands the host in one import call (host.call, host.emit, WASI writes)
        // is capped like every other crossing, before the host allocates it.
        store.set_hostcall_fuel(CROSSING_BYTES_MAX);
        Ok(CallStore {
            agent,
            store,
            served,
            budget,
            fuel_metering: self.tuning.fuel_metering,
            backstop_margin_ms: self.tuning.backstop_margin_ms,
        })
    }

    /// The state of one call's store: who calls (the agent, its call_id and chain, its
    /// deadline and trace, for the imports), its guest's WASI context (virtual clocks from the
    /// frame, a seeded random source, bounded output pipes) and its per-call bounds.
    fn call_state(
        &self,
        agent: &PreparedAgent,
        call_id: Option<String>,
        frame: Frame,
        imports: Arc<dyn HostImports>,
    ) -> CallState {
        let budget = frame.budget;
        let trace = frame.trace;
        let frame_seed = frame.guest_seed;
        let mut chain = frame.chain_above;
        chain.push(agent.name);
        let caller = Caller {
            agent: agent.name,
            call_id,
            chain,
            deadline_ms: budget.deadline_ms,
            trace,
            guest_seed: frame_seed,
        };
        let stdout = MemoryOutputPipe::new(GUEST_OUTPUT_BYTES_MAX);
        let stderr = MemoryOutputPipe::new(GUEST_OUTPUT_BYTES_MAX);
        let seed = guest::guest_seed(frame_seed.unwrap_or(self.guest_seed), agent.name);
        let random_produced = Arc::new(AtomicU64::new(0));
        let wasi = guest::guest_wasi(
            seed,
            frame.clock_start_unix_ns,
            &stdout,
            &stderr,
            &random_produced,
        );
        CallState {
            wasi,
            table: ResourceTable::new(),
            limiter: CallLimiter::new(agent.memory_bytes_max),
            imports: ImportState::new(caller, imports),
            random_produced,
            fuel_metering: self.tuning.fuel_metering,
            host_depth: 0,
            wasm_returned: false,
            stdout,
            stderr,
        }
    }
}

impl CallStore<'_> {
    /// Instantiates the agent in this store (a fresh instance from the pool), for `invoke` or
    /// `manifest`.
    pub async fn instantiate(&mut self) -> Result<Instance, CrossingError> {
        let agent = self.agent;
        self.instantiate_from(&agent.pre).await
    }

    /// Instantiates the agent for `tick`: from its tick twin, so in pool slots its calls do not
    /// use ([`PreparedAgent`]).
    pub async fn instantiate_for_tick(&mut self) -> Result<Instance, CrossingError> {
        let agent = self.agent;
        self.instantiate_from(&agent.tick_pre).await
    }

    async fn instantiate_from(
        &mut self,
        pre: &bindings::AgentPre<CallState>,
    ) -> Result<Instance, CrossingError> {
        match pre.instantiate_async(&mut self.store).await {
            Ok(agent) => Ok(Instance(agent)),
            Err(error) => Err(self.classify(error)),
        }
    }

    /// Calls `invoke(call)`: the agent's raw answer.
    pub async fn invoke(
        &mut self,
        instance: &Instance,
        call: &str,
    ) -> Result<String, CrossingError> {
        let outcome = instance.0.call_invoke(&mut self.store, call).await;
        outcome.map_err(|error| self.classify(error))
    }

    /// Calls `tick(context)`: the agent's raw proposals.
    pub async fn tick(
        &mut self,
        instance: &Instance,
        context: &str,
    ) -> Result<String, CrossingError> {
        let outcome = instance.0.call_tick(&mut self.store, context).await;
        outcome.map_err(|error| self.classify(error))
    }

    /// Calls `manifest()`: the agent's raw manifest.
    pub async fn manifest(&mut self, instance: &Instance) -> Result<String, CrossingError> {
        let outcome = instance.0.call_manifest(&mut self.store).await;
        outcome.map_err(|error| self.classify(error))
    }

    /// Fuel burned so far (0 without fuel metering).
    pub fn fuel_used(&self) -> u64 {
        match self.fuel_metering {
            true => self.budget.fuel - self.store.get_fuel().unwrap_or(0),
            false => 0,
        }
    }

    /// The call's served time (what its backstops measure).
    pub fn served(&self) -> Arc<ServedClock> {
        self.served.clone()
    }

    /// The call's budget.
    pub fn budget(&self) -> Budget {
        self.budget
    }

    /// Whether the guest wrote to stdout or stderr (agents report through their reply).
    pub fn printed(&self) -> bool {
        let state = self.store.data();
        !state.stdout.contents().is_empty() || !state.stderr.contents().is_empty()
    }

    /// Logs what the guest printed.
    pub(super) fn log_output(&self) {
        let state = self.store.data();
        guest::log_output(self.agent.name, "stdout", &state.stdout);
        guest::log_output(self.agent.name, "stderr", &state.stderr);
    }

    /// The error of a call the epoch backstop's twin around the whole call cut short (a guest
    /// parked in a host import runs no wasm, so no epoch interrupts it).
    pub(super) fn wall_clock_exceeded(&self) -> CrossingError {
        CrossingError::WallClockExceeded {
            agent: self.agent.name.to_owned(),
            deadline_ms: self.budget.deadline_ms,
            margin_ms: self.backstop_margin_ms,
            fuel_used: self.fuel_used(),
        }
    }

    /// Turns a wasmtime failure into the typed error callers branch on, naming what ended the
    /// call: wasmtime's own trap first (out of fuel, the epoch, the stack), then what the host
    /// recorded on the way (an import bound, a refused memory growth), then any other trap. A
    /// guest whose growth was refused and which then spun until out of fuel ran out of fuel.
    fn classify(&self, error: wasmtime::Error) -> CrossingError {
        let agent = self.agent.name.to_owned();
        let fuel_used = self.fuel_used();
        let state = self.store.data();
        match error.downcast_ref::<Trap>() {
            Some(Trap::OutOfFuel) => {
                return CrossingError::DeadlineExceeded {
                    agent,
                    deadline_ms: self.budget.deadline_ms,
                    fuel_used,
                };
            }
            Some(Trap::StackOverflow) => return CrossingError::StackOverflow { agent, fuel_used },
            Some(Trap::Interrupt) => {
                return CrossingError::WallClockExceeded {
                    agent,
                    deadline_ms: self.budget.deadline_ms,
                    margin_ms: self.backstop_margin_ms,
                    fuel_used,
                };
            }
            _ => {}
        }
        if let Some(exit) = error.downcast_ref::<wasmtime_wasi::I32Exit>() {
            return CrossingError::AgentExited {
                agent,
                status: exit.0,
                fuel_used,
            };
        }
        let message = format!("{error:#}");
        if let Some(error) = self.host_work_refused(&message) {
            return error;
        }
        if let Some((import, limit)) = state.imports.limit_hit {
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
        CrossingError::AgentTrapped {
            agent,
            reason: message,
            fuel_used,
        }
    }

    /// The host work wasmtime refused a guest, by its error's message (the types are private
    /// to wasmtime and wasmtime-wasi): more than the crossing's bound handed to the host in one
    /// go, or too many random bytes asked for at once.
    fn host_work_refused(&self, message: &str) -> Option<CrossingError> {
        let agent = self.agent.name.to_owned();
        let fuel_used = self.fuel_used();
        // wasmtime's bound on what a guest hands the host in one go (`set_hostcall_fuel`).
        if message.contains("fuel allocated for hostcalls has been exhausted") {
            if self.store.data().wasm_returned {
                // The export returned an answer over the crossing's cap: the crossing's own
                // refusal, before anyone could learn its length.
                return Some(CrossingError::Json {
                    phase: aura_contract::error::Phase::Reply,
                    error: aura_contract::canonical::JsonError::TooLarge {
                        bytes: None,
                        bytes_max: CROSSING_BYTES_MAX,
                    },
                });
            }
            return Some(CrossingError::HostWorkLimit {
                agent,
                what: format!("handed an import more than {CROSSING_BYTES_MAX} bytes"),
                fuel_used,
            });
        }
        // wasmtime-wasi's refusal of a random request over `max_random_size`.
        if message.contains("requested len") && message.contains("exceeds limit") {
            return Some(CrossingError::HostWorkLimit {
                agent,
                what: format!(
                    "asked for more than {GUEST_RANDOM_BYTES_PER_REQUEST_MAX} random bytes in one request"
                ),
                fuel_used,
            });
        }
        None
    }
}

/// The call hook: remembers the guest's fuel as it enters the host, so a `host.call` can cap
/// its callee at it; and, as the import returns, takes from the guest the fuel its callee
/// burned and what the host's random generators did for it, so a whole call tree, host work
/// included, fits in the root's budget. It also notes when wasm returned to the host.
///
/// Only the outermost entry into the host counts. wasmtime runs the hook around its libcalls
/// too (a `memory.grow` inside the `cabi_realloc` that lowers an import's answer is one), and
/// compiled code reloads its fuel after an import returns but not after a libcall: fuel set
/// at a libcall's return was measured to come back (up to a yield interval of it, every
/// time), so a charge taken there is lost.
///
/// A charge larger than what is left ends the call out of fuel (DeadlineExceeded) as the
/// import returns, with the guest's fuel at 0: its budget went on work done for it.
fn share_fuel_with_callees(
    mut store: wasmtime::StoreContextMut<'_, CallState>,
    hook: wasmtime::CallHook,
) -> wasmtime::Result<()> {
    let state = store.data_mut();
    state.wasm_returned = matches!(hook, wasmtime::CallHook::ReturningFromWasm);
    match hook {
        wasmtime::CallHook::CallingHost => {
            state.host_depth += 1;
            if state.host_depth == 1 {
                // Without fuel metering there is nothing to share (get_fuel fails): 0.
                let fuel = store.get_fuel().unwrap_or(0);
                store.data_mut().imports.fuel_at_import = fuel;
            }
        }
        wasmtime::CallHook::ReturningFromHost => {
            state.host_depth = state.host_depth.saturating_sub(1);
            if state.host_depth > 0 {
                return Ok(());
            }
            let random_bytes = state.random_produced.swap(0, Ordering::Relaxed);
            let charge = std::mem::take(&mut state.imports.fuel_charge)
                .saturating_add(random_bytes.saturating_mul(FUEL_PER_RANDOM_BYTE));
            if charge > 0 && state.fuel_metering {
                let fuel = store.get_fuel()?;
                store.set_fuel(fuel.saturating_sub(charge))?;
                if charge > fuel {
                    return Err(Trap::OutOfFuel.into());
                }
            }
        }
        wasmtime::CallHook::CallingWasm | wasmtime::CallHook::ReturningFromWasm => {}
    }
    Ok(())
}
