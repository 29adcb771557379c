//! The narrator's sandbox: SmolLM2 inside wasmtime, one fresh instance per narration.
//!
//! It owns the narrator's engine (the agents' settings, memory on demand up to
//! [`NARRATOR_MEMORY_BYTES_MAX`] rather than the agents' pool: [`narrator_config_for`]), its
//! linker (deny-by-default WASI and nothing else: the narrator imports no host function), and
//! running `narrate(facts)` under a fuel budget, an epoch backstop ([`NARRATOR_BACKSTOP_MS`]),
//! the memory bound and a cap on what crosses, turning wasmtime's failures into
//! [`NarrateError`], and stopping its narrations when its owner stops (within an epoch tick,
//! [`NarratorSandbox::stop`]). The instance is dropped after its one call: a narration never sees
//! another's facts. It must not build the facts, read the answer or judge its text (the host's
//! narration module does) and never gives the guest a file, a socket, a clock or an argument.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use wasmtime::component::{Component, Linker, ResourceTable};

use wasmtime::{Engine, Store, Trap, UpdateDeadline};
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

#[cfg(feature = "jit")]
use super::cached;
use super::engine::{EpochTicker, narrator_config_for};
use super::store::CallLimiter;
use super::{Code, CodeTarget, SandboxError, guest, map_precompiled};
use aura_contract::limits::{
    EPOCH_TICK_MS, GUEST_OUTPUT_BYTES_MAX, NARRATOR_ANSWER_BYTES_MAX, NARRATOR_BACKSTOP_MS,
    NARRATOR_FACTS_BYTES_MAX, NARRATOR_MEMORY_BYTES_MAX,
};
use aura_plugins::code_cache::CodeCache;

/// Host bindings for `wit/narrator/narrator.wit`.
mod bindings {
    wasmtime::component::bindgen!({
        path: "../../wit/narrator",
        world: "narrator",
    });
}

/// The name the narrator's errors and logs carry.
const NARRATOR: &str = "narrator";

/// Why a narration gave no answer. Each leaves the template's rationale in place.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NarrateError {
    /// The facts are larger than [`NARRATOR_FACTS_BYTES_MAX`] (a defect of whoever built them).
    #[error("the facts are {bytes} bytes, more than {NARRATOR_FACTS_BYTES_MAX}")]
    FactsTooLarge {
        /// Their size.
        bytes: usize,
    },
    /// The narration burned its whole fuel budget.
    #[error("the narrator ran out of fuel ({fuel_used} burned)")]
    OutOfFuel {
        /// Fuel burned: the whole budget.
        fuel_used: u64,
    },
    /// The wall-clock backstop stopped it ([`NARRATOR_BACKSTOP_MS`]).
    #[error(
        "the narrator ran past its {NARRATOR_BACKSTOP_MS} ms backstop ({fuel_used} fuel burned)"
    )]
    Backstop {
        /// Fuel burned until then.
        fuel_used: u64,
    },
    /// Its memory would have grown past [`NARRATOR_MEMORY_BYTES_MAX`].
    #[error("the narrator hit its memory bound: {reason}")]
    MemoryLimit {
        /// What it asked for.
        reason: String,
        /// Fuel burned until then.
        fuel_used: u64,
    },
    /// Its answer is larger than [`NARRATOR_ANSWER_BYTES_MAX`].
    #[error("the narrator's answer is {bytes} bytes, more than {NARRATOR_ANSWER_BYTES_MAX}")]
    AnswerTooLarge {
        /// Its size.
        bytes: usize,
    },
    /// Its owner stopped it ([`NarratorSandbox::stop`]): no answer, and nothing to record (the
    /// case is narrated again at the next start).
    #[error("the narrator was stopped ({fuel_used} fuel burned)")]
    Stopped {
        /// Fuel burned until then.
        fuel_used: u64,
    },
    /// Any other trap (a defect of the component, or a refusal of wasmtime's).
    #[error("the narrator trapped: {reason}")]
    Trapped {
        /// wasmtime's explanation.
        reason: String,
        /// Fuel burned until then.
        fuel_used: u64,
    },
}

impl NarrateError {
    /// Fuel the narration burned before it failed.
    pub fn fuel_used(&self) -> u64 {
        match self {
            Self::FactsTooLarge { .. } | Self::AnswerTooLarge { .. } => 0,
            Self::OutOfFuel { fuel_used }
            | Self::Backstop { fuel_used }
            | Self::Stopped { fuel_used }
            | Self::MemoryLimit { fuel_used, .. }
            | Self::Trapped { fuel_used, .. } => *fuel_used,
        }
    }
}

/// What one narration returned, before anyone reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NarratorAnswer {
    /// The component's raw answer (canonical JSON, not yet parsed).
    pub answer: String,
    /// Fuel it burned, instantiation included.
    pub fuel_used: u64,
    /// The most its linear memory held, in bytes.
    pub memory_bytes_peak: usize,
}

/// The narrator's engine and linker.
pub struct NarratorSandbox {
    engine: Engine,
    target: CodeTarget,
    linker: Linker<NarratorState>,
    _ticker: EpochTicker,
    /// Set by [`Self::stop`]: every narration, running or to come, traps at its next tick.
    stopping: Arc<AtomicBool>,
}

/// The trap of a narration whose sandbox was stopped.
#[derive(Debug)]
struct StoppedTrap;

impl std::fmt::Display for StoppedTrap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the narrator's owner stopped it")
    }
}

impl std::error::Error for StoppedTrap {}

impl std::fmt::Debug for NarratorSandbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NarratorSandbox")
            .field("target", &self.target)
            .finish()
    }
}

/// The narrator's component, compiled (or its precompiled code mapped) and linked.
pub struct PreparedNarrator {
    pre: bindings::NarratorPre<NarratorState>,
}

impl std::fmt::Debug for PreparedNarrator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PreparedNarrator")
    }
}

/// One narration's store data.
struct NarratorState {
    wasi: WasiCtx,
    table: ResourceTable,
    limiter: CallLimiter,
}

impl WasiView for NarratorState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

impl NarratorSandbox {
    /// The narrator's engine for `target` (the agents' target: native, or Pulley), its linker
    /// and its epoch ticker.
    pub fn new(target: &CodeTarget) -> Result<Self, SandboxError> {
        let engine = Engine::new(&narrator_config_for(target)?)
            .map_err(|e| SandboxError::Engine(format!("{e:#}")))?;
        let mut linker = Linker::new(&engine);
        wasmtime_wasi::p2::add_to_linker_sync(&mut linker)
            .map_err(|e| SandboxError::Link(format!("{e:#}")))?;
        let ticker = EpochTicker::start(engine.clone());
        Ok(Self {
            engine,
            target: target.clone(),
            linker,
            _ticker: ticker,
            stopping: Arc::new(AtomicBool::new(false)),
        })
    }

    /// Stops this sandbox's narrations: the one running traps at its next epoch tick
    /// ([`EPOCH_TICK_MS`]) with [`NarrateError::Stopped`], and every later one at once. For an
    /// owner that is stopping (a live session, an app closing): a narration runs on a thread
    /// of its own for seconds to minutes, and must not hold that stop up.
    pub fn stop(&self) {
        self.stopping.store(true, Ordering::SeqCst);
    }

    /// Whether [`Self::stop`] was called.
    pub fn stopped(&self) -> bool {
        self.stopping.load(Ordering::SeqCst)
    }

    /// The target this engine runs.
    pub fn target_name(&self) -> &str {
        self.target.name()
    }

    /// Compiles the component, or maps its precompiled code, and links it.
    pub fn prepare(&self, code: Code<'_>) -> Result<PreparedNarrator, SandboxError> {
        let component = match code {
            Code::Wasm(bytes) => self.compile(bytes)?,
            Code::Precompiled(file) => map_precompiled(&self.engine, NARRATOR, file)?,
        };
        self.link(component)
    }

    /// [`Self::prepare`] for a plain component whose digest is `sha256`, through `cache`: its
    /// code compiled and stored on the first start, mapped on the next ones. A sandbox that
    /// does not compile refuses the plain component as [`Self::prepare`] does.
    pub fn prepare_cached<E: From<SandboxError>>(
        &self,
        sha256: &str,
        cache: &CodeCache,
        wasm: impl FnOnce() -> Result<Vec<u8>, E>,
    ) -> Result<PreparedNarrator, E> {
        #[cfg(not(feature = "jit"))]
        {
            let _ = (sha256, cache);
            Ok(self.prepare(Code::Wasm(&wasm()?))?)
        }
        #[cfg(feature = "jit")]
        {
            let key = cached::code_key(&self.engine, &self.target, sha256);
            let component = cached::component(&self.engine, &key, NARRATOR, cache, wasm)?;
            Ok(self.link(component)?)
        }
    }

    /// Links the component against WASI, once, for every later instance.
    fn link(&self, component: Component) -> Result<PreparedNarrator, SandboxError> {
        let instantiate = |e: wasmtime::Error| SandboxError::Instantiate {
            agent: NARRATOR.to_owned(),
            message: format!("{e:#}"),
        };
        let pre = self
            .linker
            .instantiate_pre(&component)
            .map_err(instantiate)?;
        let pre = bindings::NarratorPre::new(pre).map_err(instantiate)?;
        Ok(PreparedNarrator { pre })
    }

    #[cfg(feature = "jit")]
    fn compile(&self, bytes: &[u8]) -> Result<Component, SandboxError> {
        cached::compile(&self.engine, NARRATOR, bytes)
    }

    #[cfg(not(feature = "jit"))]
    fn compile(&self, _bytes: &[u8]) -> Result<Component, SandboxError> {
        Err(SandboxError::NeedsPrecompiled {
            agent: NARRATOR.to_owned(),
            target: self.target_name().to_owned(),
        })
    }

    /// Runs `narrate(facts)` in a fresh instance of `narrator` with `fuel`. Blocks the thread
    /// for as long as the model runs (seconds): callers run it off their executor.
    pub fn narrate(
        &self,
        narrator: &PreparedNarrator,
        facts: &str,
        fuel: u64,
    ) -> Result<NarratorAnswer, NarrateError> {
        if facts.len() > NARRATOR_FACTS_BYTES_MAX {
            return Err(NarrateError::FactsTooLarge { bytes: facts.len() });
        }
        if self.stopped() {
            return Err(NarrateError::Stopped { fuel_used: 0 });
        }
        let stdout = MemoryOutputPipe::new(GUEST_OUTPUT_BYTES_MAX);
        let stderr = MemoryOutputPipe::new(GUEST_OUTPUT_BYTES_MAX);
        let unused = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
        // Its random source and clock are fixed: the narrator reads neither, and if it did,
        // every machine would give it the same.
        let wasi = guest::guest_wasi(0, 0, &stdout, &stderr, &unused);
        let state = NarratorState {
            wasi,
            table: ResourceTable::new(),
            limiter: CallLimiter::new(NARRATOR_MEMORY_BYTES_MAX),
        };
        let mut store = Store::new(&self.engine, state);
        store.limiter(|state| &mut state.limiter);
        let setup = |e: wasmtime::Error| NarrateError::Trapped {
            reason: format!("store setup failed: {e:#}"),
            fuel_used: 0,
        };
        store.set_fuel(fuel).map_err(setup)?;
        // Every tick: a stop ends it, and so does the backstop. Neither touches what it
        // computes, so a narration that ends by itself is the same on every machine.
        let (stopping, backstop_ticks) = (
            self.stopping.clone(),
            NARRATOR_BACKSTOP_MS.div_ceil(EPOCH_TICK_MS),
        );
        let mut ticks = 0u64;
        store.set_epoch_deadline(1);
        store.epoch_deadline_callback(move |_| {
            ticks += 1;
            if stopping.load(Ordering::SeqCst) {
                return Err(wasmtime::Error::new(StoppedTrap));
            }
            if ticks >= backstop_ticks {
                return Err(Trap::Interrupt.into());
            }
            Ok(UpdateDeadline::Continue(1))
        });
        store.set_hostcall_fuel(NARRATOR_FACTS_BYTES_MAX.max(NARRATOR_ANSWER_BYTES_MAX));
        let outcome = narrator
            .pre
            .instantiate(&mut store)
            .and_then(|instance| instance.call_narrate(&mut store, facts));
        guest::log_output(NARRATOR, "stdout", &stdout);
        guest::log_output(NARRATOR, "stderr", &stderr);
        let fuel_used = fuel - store.get_fuel().unwrap_or(0);
        let limiter = &store.data().limiter;
        match outcome {
            Ok(answer) if answer.len() > NARRATOR_ANSWER_BYTES_MAX => {
                Err(NarrateError::AnswerTooLarge {
                    bytes: answer.len(),
                })
            }
            Ok(answer) => Ok(NarratorAnswer {
                answer,
                fuel_used,
                memory_bytes_peak: limiter.peak_bytes,
            }),
            Err(error) if error.downcast_ref::<StoppedTrap>().is_some() || self.stopped() => {
                Err(NarrateError::Stopped { fuel_used })
            }
            Err(error) => Err(match error.downcast_ref::<Trap>() {
                Some(Trap::OutOfFuel) => NarrateError::OutOfFuel { fuel_used },
                Some(Trap::Interrupt) => NarrateError::Backstop { fuel_used },
                _ => match &limiter.limit_hit {
                    Some(reason) => NarrateError::MemoryLimit {
                        reason: reason.clone(),
                        fuel_used,
                    },
                    None => NarrateError::Trapped {
                        reason: format!("{error:#}"),
                        fuel_used,
                    },
                },
            }),
        }
    }
}
