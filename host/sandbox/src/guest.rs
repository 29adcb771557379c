//! What a guest sees of the world: its WASI context, its clocks and its random source.
//!
//! It owns the deny-by-default WASI context of every call (no args, no env, no preopened
//! dirs, stdin closed, no network, bounded stdout and stderr), the virtual clocks that start at
//! the call's instant and move only when read, and the per-agent seed of a guest's random
//! source. It must never give a guest the machine's time, a file, a socket, an environment
//! variable or an argument.

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use rand::rngs::StdRng;
use rand::{SeedableRng, TryRng};
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi::{WasiCtx, WasiCtxBuilder};

use aura_contract::limits::{GUEST_CLOCK_STEP_NS, GUEST_RANDOM_BYTES_PER_REQUEST_MAX};

/// A guest's WASI context. Deny by default: no args, no env, no preopened dirs, stdin closed,
/// no network; stdout and stderr go to bounded pipes. Randomness is seeded from `seed` (per
/// agent, from the host's guest seed): a guest's HashMaps (and whatever else draws on WASI
/// random) behave the same on every call, so the same call on the same input burns the same
/// fuel every time. One request for random bytes is bounded
/// ([`GUEST_RANDOM_BYTES_PER_REQUEST_MAX`]) and every byte the generators produce is counted
/// in `random_produced`, for the store to charge. The clocks are virtual, starting at
/// `clock_start_unix_ns`.
pub(super) fn guest_wasi(
    seed: u64,
    clock_start_unix_ns: u64,
    stdout: &MemoryOutputPipe,
    stderr: &MemoryOutputPipe,
    random_produced: &Arc<AtomicU64>,
) -> WasiCtx {
    let metered = |rng| Metered {
        rng,
        produced: random_produced.clone(),
    };
    WasiCtxBuilder::new()
        .stdout(stdout.clone())
        .stderr(stderr.clone())
        .allow_tcp(false)
        .allow_udp(false)
        .allow_ip_name_lookup(false)
        .secure_random(metered(StdRng::seed_from_u64(seed)))
        .insecure_random(metered(StdRng::seed_from_u64(seed.rotate_left(32))))
        .insecure_random_seed(u128::from(seed))
        .max_random_size(GUEST_RANDOM_BYTES_PER_REQUEST_MAX)
        .wall_clock(VirtualWallClock::starting_at(clock_start_unix_ns))
        .monotonic_clock(VirtualMonotonicClock::default())
        .build()
}

/// A random generator that counts the bytes it produces (a `u32` is 4, a `u64` 8): what the
/// host did for the guest, which the store charges to the guest's fuel.
struct Metered<R> {
    rng: R,
    produced: Arc<AtomicU64>,
}

impl<R: TryRng<Error = Infallible>> TryRng for Metered<R> {
    type Error = Infallible;

    fn try_next_u32(&mut self) -> Result<u32, Infallible> {
        self.produced.fetch_add(4, Ordering::Relaxed);
        self.rng.try_next_u32()
    }

    fn try_next_u64(&mut self) -> Result<u64, Infallible> {
        self.produced.fetch_add(8, Ordering::Relaxed);
        self.rng.try_next_u64()
    }

    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Infallible> {
        self.produced.fetch_add(dst.len() as u64, Ordering::Relaxed);
        self.rng.try_fill_bytes(dst)
    }
}

/// The seed of an agent's random source: FNV-1a over the host's guest seed and the agent name,
/// so agents draw different but reproducible streams.
pub(super) fn guest_seed(host_seed: u64, agent: &str) -> u64 {
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

/// Logs what a guest printed during a call (agents report through their reply and `emit`).
pub(super) fn log_output(agent: &str, stream: &'static str, pipe: &MemoryOutputPipe) {
    let bytes = pipe.contents();
    if !bytes.is_empty() {
        tracing::info!(
            target: "aura::guest",
            agent,
            stream,
            text = %aura_contract::visible::visible(&String::from_utf8_lossy(&bytes)),
        );
    }
}

/// A guest's wall clock: starts at the call's instant and moves [`GUEST_CLOCK_STEP_NS`] per
/// read, never with the machine's time.
struct VirtualWallClock {
    start_unix_ns: u64,
    reads: std::cell::Cell<u64>,
}

impl VirtualWallClock {
    fn starting_at(start_unix_ns: u64) -> Self {
        Self {
            start_unix_ns,
            reads: Default::default(),
        }
    }
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
#[derive(Default)]
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

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;
    use wasmtime_wasi::{HostMonotonicClock, HostWallClock};

    #[test]
    fn the_metered_generator_counts_what_it_produces_and_draws_what_it_wraps() {
        let produced = Arc::new(AtomicU64::new(0));
        let mut metered = Metered {
            rng: StdRng::seed_from_u64(7),
            produced: produced.clone(),
        };
        let mut plain = StdRng::seed_from_u64(7);
        let mut bytes = [0u8; 10];
        metered.fill_bytes(&mut bytes);
        let mut expected = [0u8; 10];
        plain.fill_bytes(&mut expected);
        assert_eq!(bytes, expected, "the same stream as the generator it wraps");
        assert_eq!(metered.next_u32(), plain.next_u32());
        assert_eq!(metered.next_u64(), plain.next_u64());
        // 10 + 4 + 8 bytes.
        assert_eq!(produced.load(Ordering::Relaxed), 22);
    }

    #[test]
    fn clocks_start_at_the_call_and_move_only_when_read() {
        // 1 s after the epoch; each read advances GUEST_CLOCK_STEP_NS (1 µs).
        let wall = VirtualWallClock::starting_at(1_000_000_000);
        assert_eq!(wall.now(), Duration::from_nanos(1_000_000_000));
        assert_eq!(wall.now(), Duration::from_nanos(1_000_001_000));
        let mono = VirtualMonotonicClock::default();
        assert_eq!((mono.now(), mono.now(), mono.now()), (0, 1_000, 2_000));
        // Saturates rather than wraps at the end of time.
        let late = VirtualWallClock::starting_at(u64::MAX - 1);
        late.now();
        assert_eq!(late.now(), Duration::from_nanos(u64::MAX));
    }

    #[test]
    fn seeds_differ_by_agent_and_by_host_seed() {
        // FNV-1a 64 over the seed's 8 little-endian bytes then the name; the expected values
        // come from an independent implementation (Python, 2026-11-24), whose FNV-1a 64 of
        // "a" is the published 0xaf63dc4c8601ec8c.
        assert_eq!(guest_seed(0, "a"), 0xe604_613a_248f_f1ac);
        assert_eq!(guest_seed(7, "wellness"), 0x7100_4640_b435_fb55);
        assert_ne!(guest_seed(0, "calendar"), guest_seed(0, "comms"));
        assert_ne!(guest_seed(0, "calendar"), guest_seed(1, "calendar"));
    }

    /// sdk/build replaces the agents' imports of these by stubs that answer as this
    /// context does (`sdk/build/src/wasi_stubs.rs`): an empty environment, and no terminal
    /// for stdin, stdout or stderr. If the context ever gives a guest more, this fails and the
    /// stubs must go.
    #[test]
    fn the_context_answers_as_the_agents_wasi_stubs_do() {
        use wasmtime_wasi::p2::bindings::cli::{
            environment, terminal_stderr, terminal_stdin, terminal_stdout,
        };
        const PIPE_BYTES: usize = 64;
        let pipe = || MemoryOutputPipe::new(PIPE_BYTES);
        let (stdout, stderr) = (pipe(), pipe());
        let mut wasi = guest_wasi(7, 0, &stdout, &stderr, &Arc::new(AtomicU64::new(0)));
        let mut table = wasmtime_wasi::ResourceTable::new();
        let mut view = wasmtime_wasi::cli::WasiCliCtxView {
            ctx: wasi.cli(),
            table: &mut table,
        };
        assert_eq!(environment::Host::get_environment(&mut view).unwrap(), []);
        assert!(
            terminal_stdin::Host::get_terminal_stdin(&mut view)
                .unwrap()
                .is_none()
        );
        assert!(
            terminal_stdout::Host::get_terminal_stdout(&mut view)
                .unwrap()
                .is_none()
        );
        assert!(
            terminal_stderr::Host::get_terminal_stderr(&mut view)
                .unwrap()
                .is_none()
        );
    }
}
