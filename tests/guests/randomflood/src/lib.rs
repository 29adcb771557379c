#![cfg(target_arch = "wasm32")]
//! Test guest posing as wellness that makes the host work for it through WASI random:
//! `invoke` asks, in one request, for as many KiB as the call's `readings.sleep_minutes` says,
//! or for 64 MiB when there is none; `tick` asks for the most one request may have (64 KiB)
//! over and over, until its fuel runs out.

#[link(wasm_import_module = "wasi:random/random@0.2.6")]
unsafe extern "C" {
    /// `get-random-bytes: func(len: u64) -> list<u8>`, lowered: the list's pointer and length
    /// are written at `ret`.
    #[link_name = "get-random-bytes"]
    fn get_random_bytes(len: i64, ret: *mut usize);
}

/// One request for `len` random bytes; the bytes are left to the allocator.
fn ask(len: u64) -> usize {
    let mut ret = [0usize; 2];
    // SAFETY: the canonical ABI writes (pointer, length) at `ret`, allocated through this
    // module's cabi_realloc.
    unsafe { get_random_bytes(len as i64, ret.as_mut_ptr()) };
    ret[1]
}

aura_zoo::hostile!(as wellness, RandomFlood, |call| {
    let call: aura_zoo::aura_sdk::serde_json::Value =
        aura_zoo::aura_sdk::serde_json::from_str(&call).unwrap_or_default();
    let kib = call["args"]["readings"]["sleep_minutes"]
        .as_u64()
        .unwrap_or(64 * 1024);
    let got = ask(kib * 1024);
    aura_zoo::report(&format!("got {got} random bytes"))
}, tick: |context| {
    let mut total: usize = 0;
    loop {
        total = std::hint::black_box(total.wrapping_add(ask(64 * 1024)));
    }
});
