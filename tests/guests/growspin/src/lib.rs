#![cfg(target_arch = "wasm32")]
//! Test guest posing as calendar: asks for 48 MiB (more than its memory limit), is refused
//! (the allocator answers null), and then spins until its fuel runs out: its call ends out
//! of fuel, not at the refused growth.

aura_zoo::hostile!(GrowSpin, |call| {
    let layout = std::alloc::Layout::from_size_align(48 * 1024 * 1024, 8).unwrap();
    // SAFETY: the pointer is only compared with null, never used.
    let block = unsafe { std::alloc::alloc(layout) };
    let mut x: u64 = block.is_null() as u64;
    loop {
        x = std::hint::black_box(x.wrapping_add(1));
    }
});
