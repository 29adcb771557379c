//! The guests' allocator: a bump arena in front of the standard allocator (dlmalloc), made for
//! instances that live for one call.
//!
//! The host gives every call a fresh instance and drops it when the call returns
//! (`host/src/sandbox.rs`), so nearly everything a guest frees is freed moments before its
//! whole memory goes. dlmalloc's bookkeeping for those frees was about a quarter of the small
//! call's time in the guest (BENCHMARKS.md, "What dominates a crossing's cost"). Here the first
//! [`ARENA_BYTES`] of allocations are bumped out of one static block; freeing them
//! is free (the most recent allocation is rolled back, so a `Vec` growing at the end reallocates
//! in place); once the block is used up, every later allocation goes to dlmalloc, whose frees
//! are real. So a call never holds more than [`ARENA_BYTES`] of dead memory, however long it
//! runs.
//!
//! It owns the wasm32 global allocator of every agent built on the SDK. It must not be used
//! where an instance outlives a call, and must not be compiled for targets with threads: its
//! state is unsynchronized (wasm32-wasip2 has one thread).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::UnsafeCell;

/// Bytes of the arena: more than a call or a tick allocates in all (the day's ticks burn the
/// same fuel with 1 and 2 MiB, so none outgrows 1 MiB; 128 KiB sends the larger ones back to
/// dlmalloc and costs them ~20 %), and small against an instance's memory limit (32 MiB by
/// default). It is static memory: address space in every instance, resident only as far as a
/// call touches it.
pub const ARENA_BYTES: usize = 1024 * 1024;

/// Alignment of the arena block itself (any Rust allocation on wasm32 asks for at most this,
/// except over-aligned types, which the bump rounds up to).
const ARENA_ALIGN: usize = 16;

/// The arena's block: zero-initialized static memory on wasm32 (part of the module's initial
/// memory, so taking it grows nothing), a leaked System block elsewhere (the unit tests).
#[cfg(target_arch = "wasm32")]
fn arena_block() -> *mut u8 {
    #[repr(align(16))]
    struct Block(UnsafeCell<[u8; ARENA_BYTES]>);
    // SAFETY: one thread; only the allocator below takes the pointer, once.
    unsafe impl Sync for Block {}
    const _: () = assert!(std::mem::align_of::<Block>() == ARENA_ALIGN);
    static BLOCK: Block = Block(UnsafeCell::new([0; ARENA_BYTES]));
    BLOCK.0.get().cast()
}

#[cfg(not(target_arch = "wasm32"))]
fn arena_block() -> *mut u8 {
    // SAFETY: a non-zero size and a power-of-two alignment.
    unsafe { System.alloc(Layout::from_size_align_unchecked(ARENA_BYTES, ARENA_ALIGN)) }
}

/// Where the bump stands.
struct Bump {
    /// First byte of the arena block; 0 until the first allocation takes it.
    start: usize,
    /// One past the arena's last byte.
    end: usize,
    /// Next free byte.
    next: usize,
    /// Start of the most recent arena allocation (it may be rolled back or grown in place).
    last: usize,
    /// The arena could not be taken (dlmalloc refused): everything goes to dlmalloc.
    unavailable: bool,
}

/// The allocator.
pub struct CallArena {
    bump: UnsafeCell<Bump>,
}

// SAFETY: wasm32-wasip2 runs one thread; nothing else can reach the state concurrently.
unsafe impl Sync for CallArena {}

impl CallArena {
    /// An allocator whose arena is taken on first use.
    pub const fn new() -> Self {
        Self {
            bump: UnsafeCell::new(Bump {
                start: 0,
                end: 0,
                next: 0,
                last: 0,
                unavailable: false,
            }),
        }
    }

    /// # Safety
    /// One thread only (see the impl of Sync), and no two borrows alive at once: each method
    /// below takes it once and drops it before calling into another.
    #[allow(clippy::mut_from_ref)]
    unsafe fn bump(&self) -> &mut Bump {
        // SAFETY: the caller's contract.
        unsafe { &mut *self.bump.get() }
    }

    fn owns(bump: &Bump, ptr: *mut u8) -> bool {
        let address = ptr as usize;
        bump.start != 0 && address >= bump.start && address < bump.end
    }
}

impl Default for CallArena {
    fn default() -> Self {
        Self::new()
    }
}

unsafe impl GlobalAlloc for CallArena {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: single thread; the borrow ends before System is called below.
        let bump = unsafe { self.bump() };
        if bump.start == 0 && !bump.unavailable {
            let block = arena_block();
            if block.is_null() {
                bump.unavailable = true;
            } else {
                bump.start = block as usize;
                bump.next = bump.start;
                bump.last = bump.start;
                bump.end = bump.start + ARENA_BYTES;
            }
        }
        if bump.start != 0 {
            let align = layout.align();
            let start = bump.next.checked_add(align - 1).map(|n| n & !(align - 1));
            if let Some(start) = start
                && let Some(end) = start.checked_add(layout.size())
                && end <= bump.end
            {
                bump.last = start;
                bump.next = end;
                return start as *mut u8;
            }
        }
        // SAFETY: the caller's layout, as GlobalAlloc requires.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: single thread.
        let bump = unsafe { self.bump() };
        if Self::owns(bump, ptr) {
            // The most recent allocation is given back; any other arena block stays dead.
            if ptr as usize == bump.last && bump.last + layout.size() == bump.next {
                bump.next = bump.last;
            }
            return;
        }
        // SAFETY: `ptr` came from System with `layout` (it is not the arena's).
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: single thread; the borrow ends before self.alloc below.
        let bump = unsafe { self.bump() };
        if !Self::owns(bump, ptr) {
            // SAFETY: `ptr` came from System with `layout`.
            return unsafe { System.realloc(ptr, layout, new_size) };
        }
        let address = ptr as usize;
        let is_last = address == bump.last && address + layout.size() == bump.next;
        if is_last
            && let Some(end) = address.checked_add(new_size)
            && end <= bump.end
        {
            bump.next = end;
            return ptr;
        }
        if new_size <= layout.size() {
            return ptr;
        }
        // SAFETY: new_size is non-zero (it exceeds the old size) and the alignment is the
        // block's own.
        let new_layout = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        // SAFETY: a valid layout.
        let moved = unsafe { self.alloc(new_layout) };
        if !moved.is_null() {
            // SAFETY: both blocks are at least layout.size() long and do not overlap (the new
            // one was allocated while the old one was live).
            unsafe { std::ptr::copy_nonoverlapping(ptr, moved, layout.size()) };
            // SAFETY: the old block, with its layout.
            unsafe { self.dealloc(ptr, layout) };
        }
        moved
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(size: usize, align: usize) -> Layout {
        Layout::from_size_align(size, align).unwrap()
    }

    #[test]
    fn bumps_rolls_back_the_last_and_grows_it_in_place() {
        let arena = CallArena::new();
        unsafe {
            let a = arena.alloc(layout(10, 1));
            let b = arena.alloc(layout(8, 8));
            // b is a's end rounded up to 8.
            assert_eq!(b as usize, (a as usize + 10 + 7) & !7);
            // Growing the last block keeps it where it is.
            let b2 = arena.realloc(b, layout(8, 8), 100);
            assert_eq!(b2, b);
            // Freeing it gives its bytes back: the next block starts where it started (the
            // padding before it stays).
            arena.dealloc(b2, layout(100, 8));
            let c = arena.alloc(layout(4, 4));
            assert_eq!(c, b);
            // Growing a block that is not the last moves it and keeps its bytes.
            a.write_bytes(7, 10);
            let a2 = arena.realloc(a, layout(10, 1), 20);
            assert_ne!(a2, a);
            assert_eq!(std::slice::from_raw_parts(a2, 10), &[7; 10]);
        }
    }

    #[test]
    fn past_the_arena_everything_goes_to_the_system_allocator() {
        let arena = CallArena::new();
        unsafe {
            let big = arena.alloc(layout(ARENA_BYTES - 64, 16));
            assert!(CallArena::owns(arena.bump(), big));
            let outside = arena.alloc(layout(128, 16));
            assert!(!CallArena::owns(arena.bump(), outside));
            outside.write_bytes(1, 128);
            // A block in the arena that must grow past it moves out, bytes kept.
            big.write_bytes(3, 16);
            let moved = arena.realloc(big, layout(ARENA_BYTES - 64, 16), ARENA_BYTES * 2);
            assert!(!CallArena::owns(arena.bump(), moved));
            assert_eq!(std::slice::from_raw_parts(moved, 16), &[3; 16]);
            arena.dealloc(moved, layout(ARENA_BYTES * 2, 16));
            arena.dealloc(outside, layout(128, 16));
        }
    }
}
