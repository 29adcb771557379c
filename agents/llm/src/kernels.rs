//! The two dot products that are nearly all of the model's work (a Q4_1 or a Q8_0 row against
//! an f32 vector), written once as four-lane arithmetic: in WebAssembly's 128-bit SIMD when
//! built for wasm32 (the component), and in plain Rust over `[f32; 4]` elsewhere (the native
//! tests).
//!
//! It owns the order of every sum, which is the same in both: within a block, lane `l` takes
//! elements `4c + l` of chunk `c` in chunk order (a Q4_1 block's low nibbles, then its high
//! ones); each block's lanes are scaled by the block's `d` and added to the row's lanes; the
//! row's lanes are summed `(l0 + l1) + (l2 + l3)`. WebAssembly's f32x4 arithmetic is IEEE's, lane
//! by lane, with no fused multiply-add, so the component gives the same bits on every machine
//! and runtime (Cranelift on x86_64 or aarch64, Pulley). It must not use relaxed SIMD, whose
//! results may differ between machines.

use std::sync::OnceLock;

#[cfg(not(target_arch = "wasm32"))]
use crate::quant::BLOCK;
use crate::quant::f16_to_f32;

/// Every half's value, by its bits: a block's scale is one load, not a conversion.
pub(crate) type Halves = [f32; 1 << 16];

/// The table of halves, made once (256 KiB).
pub(crate) fn halves() -> &'static Halves {
    static TABLE: OnceLock<Box<Halves>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut table = Box::new([0f32; 1 << 16]);
        for (bits, value) in table.iter_mut().enumerate() {
            *value = f16_to_f32(bits as u16);
        }
        table
    })
}

fn scale(h: &Halves, block: &[u8], at: usize) -> f32 {
    h[u16::from_le_bytes([block[at], block[at + 1]]) as usize]
}

fn reduce(lanes: [f32; 4]) -> f32 {
    (lanes[0] + lanes[1]) + (lanes[2] + lanes[3])
}

/// A Q4_1 row (blocks of d, m and 16 bytes of nibbles) against `x`, whose block sums are
/// `sums`: Σ_b (d_b·Σ q·x + m_b·Σx).
pub(crate) fn dot_q4_1(h: &Halves, row: &[u8], x: &[f32], sums: &[f32]) -> f32 {
    #[cfg(target_arch = "wasm32")]
    // SAFETY: the component is built for wasm32 with SIMD, which every runtime it runs on
    // validates when it loads the component (a runtime without it refuses the component).
    return unsafe { simd::dot_q4_1(h, row, x, sums) };
    #[cfg(not(target_arch = "wasm32"))]
    {
        let mut row_lanes = [0f32; 4];
        let mut minimums = 0f32;
        for ((block, xb), s) in row.chunks_exact(20).zip(x.chunks_exact(BLOCK)).zip(sums) {
            let (d, m) = (scale(h, block, 0), scale(h, block, 2));
            let qs = &block[4..20];
            let mut lanes = [0f32; 4];
            for c in 0..4 {
                for l in 0..4 {
                    lanes[l] += (qs[4 * c + l] & 0x0f) as f32 * xb[4 * c + l];
                }
            }
            for c in 0..4 {
                for l in 0..4 {
                    lanes[l] += (qs[4 * c + l] >> 4) as f32 * xb[16 + 4 * c + l];
                }
            }
            for l in 0..4 {
                row_lanes[l] += lanes[l] * d;
            }
            minimums += m * s;
        }
        reduce(row_lanes) + minimums
    }
}

/// A Q8_0 row (blocks of d and 32 signed bytes) against `x`: Σ_b d_b·Σ q·x.
pub(crate) fn dot_q8_0(h: &Halves, row: &[u8], x: &[f32]) -> f32 {
    #[cfg(target_arch = "wasm32")]
    // SAFETY: as for dot_q4_1.
    return unsafe { simd::dot_q8_0(h, row, x) };
    #[cfg(not(target_arch = "wasm32"))]
    {
        let mut row_lanes = [0f32; 4];
        for (block, xb) in row.chunks_exact(34).zip(x.chunks_exact(BLOCK)) {
            let d = scale(h, block, 0);
            let qs = &block[2..34];
            let mut lanes = [0f32; 4];
            for c in 0..8 {
                for l in 0..4 {
                    lanes[l] += (qs[4 * c + l] as i8) as f32 * xb[4 * c + l];
                }
            }
            for l in 0..4 {
                row_lanes[l] += lanes[l] * d;
            }
        }
        reduce(row_lanes)
    }
}

#[cfg(target_arch = "wasm32")]
mod simd {
    use core::arch::wasm32::*;

    use super::{Halves, reduce, scale};
    use crate::quant::BLOCK;

    /// The four lanes of a vector.
    #[target_feature(enable = "simd128")]
    fn lanes(v: v128) -> [f32; 4] {
        [
            f32x4_extract_lane::<0>(v),
            f32x4_extract_lane::<1>(v),
            f32x4_extract_lane::<2>(v),
            f32x4_extract_lane::<3>(v),
        ]
    }

    // The helpers are macros, not functions: a function with its own target feature is not
    // inlined into its caller, and a call per group of four costs more than the group.

    /// The 16 bytes of `$v` as four groups of four floats (bytes `4c..4c+4` in group `c`),
    /// widened by `$half` (to 16 bits) and `$quarter` (to 32): unsigned or signed.
    macro_rules! groups {
        ($v:expr, $low_half:ident, $high_half:ident, $low_quarter:ident, $high_quarter:ident) => {{
            let (low, high) = ($low_half($v), $high_half($v));
            [
                f32x4_convert_i32x4($low_quarter(low)),
                f32x4_convert_i32x4($high_quarter(low)),
                f32x4_convert_i32x4($low_quarter(high)),
                f32x4_convert_i32x4($high_quarter(high)),
            ]
        }};
    }

    /// 128 bits at element `$at` of the slice `$s`. Callers check `$at` + 128 bits is in it.
    macro_rules! load {
        ($s:expr, $at:expr) => {
            v128_load($s.as_ptr().add($at).cast())
        };
    }

    /// A block's four lanes: Σ of its eight weight groups `$w` times its 32 floats `$xb`, group
    /// by group in order.
    macro_rules! block_lanes {
        ($w:expr, $xb:expr) => {{
            let mut lanes = f32x4_splat(0.0);
            for (c, w) in $w.into_iter().enumerate() {
                // SAFETY: xb is a block of 32 floats (chunks_exact); 4c + 4 <= 32.
                let x = unsafe { load!($xb, 4 * c) };
                lanes = f32x4_add(lanes, f32x4_mul(w, x));
            }
            lanes
        }};
    }

    #[target_feature(enable = "simd128")]
    pub(super) unsafe fn dot_q4_1(h: &Halves, row: &[u8], x: &[f32], sums: &[f32]) -> f32 {
        let mut row_lanes = f32x4_splat(0.0);
        let mut minimums = 0f32;
        for ((block, xb), s) in row.chunks_exact(20).zip(x.chunks_exact(BLOCK)).zip(sums) {
            let (d, m) = (scale(h, block, 0), scale(h, block, 2));
            // SAFETY: a block is 20 bytes, 16 of them from byte 4 (chunks_exact).
            let q = unsafe { load!(block, 4) };
            let (low, high) = (v128_and(q, u8x16_splat(0x0f)), u8x16_shr(q, 4));
            let [w0, w1, w2, w3] = groups!(
                low,
                u16x8_extend_low_u8x16,
                u16x8_extend_high_u8x16,
                u32x4_extend_low_u16x8,
                u32x4_extend_high_u16x8
            );
            let [w4, w5, w6, w7] = groups!(
                high,
                u16x8_extend_low_u8x16,
                u16x8_extend_high_u8x16,
                u32x4_extend_low_u16x8,
                u32x4_extend_high_u16x8
            );
            let lanes = block_lanes!([w0, w1, w2, w3, w4, w5, w6, w7], xb);
            row_lanes = f32x4_add(row_lanes, f32x4_mul(lanes, f32x4_splat(d)));
            minimums += m * s;
        }
        reduce(lanes(row_lanes)) + minimums
    }

    #[target_feature(enable = "simd128")]
    pub(super) unsafe fn dot_q8_0(h: &Halves, row: &[u8], x: &[f32]) -> f32 {
        let mut row_lanes = f32x4_splat(0.0);
        for (block, xb) in row.chunks_exact(34).zip(x.chunks_exact(BLOCK)) {
            let d = scale(h, block, 0);
            // SAFETY: a block is 34 bytes, 16 from byte 2 and 16 from byte 18 (chunks_exact).
            let (first, second) = unsafe { (load!(block, 2), load!(block, 18)) };
            let [w0, w1, w2, w3] = groups!(
                first,
                i16x8_extend_low_i8x16,
                i16x8_extend_high_i8x16,
                i32x4_extend_low_i16x8,
                i32x4_extend_high_i16x8
            );
            let [w4, w5, w6, w7] = groups!(
                second,
                i16x8_extend_low_i8x16,
                i16x8_extend_high_i8x16,
                i32x4_extend_low_i16x8,
                i32x4_extend_high_i16x8
            );
            let lanes = block_lanes!([w0, w1, w2, w3, w4, w5, w6, w7], xb);
            row_lanes = f32x4_add(row_lanes, f32x4_mul(lanes, f32x4_splat(d)));
        }
        reduce(lanes(row_lanes))
    }
}
