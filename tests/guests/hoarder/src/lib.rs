#![cfg(target_arch = "wasm32")]
//! Hostile test guest: tries to carry a secret from one call to the next. Each call (`invoke`
//! or `tick`: both run the same body) first reports what it finds (how many 8-byte words of its
//! whole linear memory hold the secret, its memory's size, a static and an initialised static,
//! its first random number and the handle WASI gives its first stdout stream), then leaves the
//! secret everywhere it can: both statics, the SDK's arena (a small box), the heap past the
//! arena (a 2 MiB vector, which grows memory), the stack (deep frames full of it), and a stdout
//! stream it never drops. A fresh instance per call finds nothing of the call before, and its
//! random numbers and handles start over.

use std::hint::black_box;

/// What a call leaves behind: no ASCII byte, so no JSON the host writes can hold it.
const SECRET: u64 = 0x5EC2_E75E_C2E7_A55A;

/// The secret, computed when a call runs: the compiler cannot fold it into a constant copied
/// from the memory image, so a fresh instance holds no word of it.
fn secret() -> u64 {
    SECRET ^ black_box(0)
}

/// A zeroed static (.bss).
static mut ZEROED: [u64; 512] = [0; 512];
/// An initialised static (.data): the memory image's bytes.
static mut INITIALISED: [u64; 4] = [1, 2, 3, 4];

#[link(wasm_import_module = "wasi:random/random@0.2.6")]
unsafe extern "C" {
    /// `get-random-u64: func() -> u64`.
    #[link_name = "get-random-u64"]
    fn get_random_u64() -> i64;
}

#[link(wasm_import_module = "wasi:cli/stdout@0.2.6")]
unsafe extern "C" {
    /// `get-stdout: func() -> output-stream`: a new handle each time.
    #[link_name = "get-stdout"]
    fn get_stdout() -> i32;
}

/// 8-byte words of the whole linear memory that hold the secret.
fn secret_words() -> u64 {
    let bytes = core::arch::wasm32::memory_size(0) * 65536;
    let (secret, mut count) = (secret(), 0);
    // From 8: address 0 is no pointer Rust may read.
    for address in (8..bytes).step_by(8) {
        // SAFETY: every address below memory.size is readable linear memory; volatile, so the
        // compiler reads each word as it is.
        let word = unsafe { core::ptr::read_volatile(address as *const u64) };
        if word == secret {
            count += 1;
        }
    }
    count
}

/// Frames `depth` deep, each with 4 KiB of the secret on the stack.
#[inline(never)]
fn stack_full_of_secrets(depth: u32) -> u64 {
    let frame = black_box([secret(); 512]);
    match depth {
        0 => frame[7],
        _ => stack_full_of_secrets(depth - 1) ^ frame[depth as usize],
    }
}

/// One call (an `invoke` or a `tick`: both run this): what it finds, then the secret left
/// everywhere.
fn hoard() -> String {
    // SAFETY: one call at a time; the statics are this guest's own.
    let (zeroed, initialised) = unsafe { (ZEROED[0], INITIALISED[0]) };
    let findings = format!(
        r#"{{"secret_words":{},"pages":{},"zeroed":{zeroed},"initialised":{initialised},"random":"{:016x}","stdout_handle":{}}}"#,
        secret_words(),
        core::arch::wasm32::memory_size(0),
        // SAFETY: imports of the WASI the host links; a u64 and a handle come back.
        unsafe { get_random_u64() },
        unsafe { get_stdout() },
    );
    let secret = secret();
    // SAFETY: as above.
    unsafe {
        ZEROED = [secret; 512];
        INITIALISED = [secret; 4];
    }
    let small: &'static mut [u64; 16] = Box::leak(Box::new([secret; 16]));
    black_box(small);
    let large = vec![secret; 1 << 18];
    black_box(&large);
    std::mem::forget(large);
    black_box(stack_full_of_secrets(16));
    aura_zoo::report(&findings)
}

aura_zoo::hostile!(Hoarder, |call| { hoard() }, tick: |context| { hoard() });
