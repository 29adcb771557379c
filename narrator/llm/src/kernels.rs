//! The arithmetic that is nearly all of the model's work: a Q4_1 or a Q8_0 matrix times a vector
//! quantized to int8 in blocks of 32 (as llama.cpp's CPU kernels take it, `q8_1` and `q8_0`;
//! the vector's side is [`crate::quant::Activations`]), and the f32 dot products and sums of an
//! attention head. Written once as four-lane arithmetic: in WebAssembly's 128-bit SIMD when
//! built for wasm32 (the component), and in plain Rust elsewhere (the native tests).
//!
//! Within a block every product and sum is an integer, exact in any order; lane `l` holds the
//! products of elements `2l, 2l+1, 8+2l, 9+2l` of each half of the block (how the SIMD code's
//! 16-bit products pair under `extadd_pairwise`). It owns the order of the float sums, which is
//! the same in both: each block's lanes, as floats, times `d_w·d_x`, are added to the row's
//! lanes; a Q4_1 block's `m_w·s_x` to a running scalar; the row's lanes are summed
//! `(l0 + l1) + (l2 + l3)`; an f32 dot product's lane `l` takes elements `4c + l`. The component
//! takes two rows of a matrix a pass (each row's sums unchanged). WebAssembly's arithmetic is
//! IEEE's, lane by lane, with no fused multiply-add, so the component gives the same bits on
//! every machine and runtime (Cranelift on x86_64 or aarch64, Pulley). It must not use relaxed
//! SIMD, whose results may differ between machines.

use std::sync::OnceLock;

use crate::quant::{BLOCK, f16_to_f32};

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

#[cfg(not(target_arch = "wasm32"))]
fn scale(h: &Halves, block: &[u8], at: usize) -> f32 {
    h[u16::from_le_bytes([block[at], block[at + 1]]) as usize]
}

fn reduce(lanes: [f32; 4]) -> f32 {
    (lanes[0] + lanes[1]) + (lanes[2] + lanes[3])
}

/// A vector in int8 blocks, as the kernels read it: `q` its values, and for each block of 32
/// its scale `d` and `s = d·Σq`.
#[derive(Clone, Copy)]
pub(crate) struct Int8<'a> {
    pub q: &'a [i8],
    pub d: &'a [f32],
    pub s: &'a [f32],
}

/// A block's four integer lanes, as the SIMD code pairs them: `first` the weights of the
/// block's elements 0..16, `second` those of 16..32, `x` its 32 int8 values.
///
/// No sum can overflow: a weight is a nibble (0..=15) or an i8 (-128..=127) and a value an i8,
/// so a product is at most 128·128 = 16,384 in size and a lane, eight of them, 131,072, far
/// inside i32. The sums are written as wrapping ones so that a build with overflow checks (the
/// tests') does not check each of them, which kept the compiler from vectorizing the loop: the
/// native engine took twice as long in the tests (BENCHMARKS.md, "The narrator"). The values are
/// the same.
#[cfg(not(target_arch = "wasm32"))]
fn int_lanes(first: [i32; 16], second: [i32; 16], x: &[i8]) -> [i32; 4] {
    let x = |j: usize| x[j] as i32;
    let mut lanes = [0i32; 4];
    for k in 0..8 {
        let four = first[k]
            .wrapping_mul(x(k))
            .wrapping_add(first[8 + k].wrapping_mul(x(8 + k)))
            .wrapping_add(second[k].wrapping_mul(x(16 + k)))
            .wrapping_add(second[8 + k].wrapping_mul(x(24 + k)));
        lanes[k / 2] = lanes[k / 2].wrapping_add(four);
    }
    lanes
}

/// `row_lanes += lanes · scale`, lane by lane.
#[cfg(not(target_arch = "wasm32"))]
fn accumulate(row_lanes: &mut [f32; 4], lanes: [i32; 4], scale: f32) {
    for (r, l) in row_lanes.iter_mut().zip(lanes) {
        *r += l as f32 * scale;
    }
}

/// Bytes of a Q4_1 block: d and m (halves), then 16 bytes of nibbles: element j's in the low
/// nibble of byte j, element 16 + j's in its high one.
pub(crate) const Q4_1_BLOCK_BYTES: usize = 20;

/// Bytes of a Q8_0 block: d (a half), then 32 signed bytes.
pub(crate) const Q8_0_BLOCK_BYTES: usize = 34;

/// `out = W·x` for a Q4_1 matrix `w` of `out.len()` rows (each row's dot product
/// Σ_b (d_b·d_x·Σ q·q_x + m_b·s_x)). The component takes two rows a pass, sharing the vector's
/// loads; each row's sums are the same either way.
pub(crate) fn mul_q4_1(h: &Halves, w: &[u8], x: Int8, out: &mut [f32]) {
    #[cfg(target_arch = "wasm32")]
    // SAFETY: the component is built for wasm32 with SIMD, which every runtime it runs on
    // validates when it loads the component (a runtime without it refuses the component).
    return unsafe { simd::mul_q4_1(h, w, x, out) };
    #[cfg(not(target_arch = "wasm32"))]
    for (row, o) in w.chunks_exact(w.len() / out.len()).zip(out) {
        let mut row_lanes = [0f32; 4];
        let mut minimums = 0f32;
        let blocks = row
            .chunks_exact(Q4_1_BLOCK_BYTES)
            .zip(x.q.chunks_exact(BLOCK));
        for ((block, xq), (dx, sx)) in blocks.zip(x.d.iter().zip(x.s)) {
            let (d, m) = (scale(h, block, 0), scale(h, block, 2));
            let qs = &block[4..20];
            let lanes = int_lanes(
                std::array::from_fn(|j| (qs[j] & 0x0f) as i32),
                std::array::from_fn(|j| (qs[j] >> 4) as i32),
                xq,
            );
            accumulate(&mut row_lanes, lanes, d * dx);
            minimums += m * sx;
        }
        *o = reduce(row_lanes) + minimums;
    }
}

/// `out = W·x` for a Q8_0 matrix `w` of `out.len()` rows (each row's dot product
/// Σ_b d_b·d_x·Σ q·q_x), two rows a pass in the component as for Q4_1.
pub(crate) fn mul_q8_0(h: &Halves, w: &[u8], x: Int8, out: &mut [f32]) {
    #[cfg(target_arch = "wasm32")]
    // SAFETY: as for mul_q4_1.
    return unsafe { simd::mul_q8_0(h, w, x, out) };
    #[cfg(not(target_arch = "wasm32"))]
    for (row, o) in w.chunks_exact(w.len() / out.len()).zip(out) {
        let mut row_lanes = [0f32; 4];
        let blocks = row
            .chunks_exact(Q8_0_BLOCK_BYTES)
            .zip(x.q.chunks_exact(BLOCK));
        for ((block, xq), dx) in blocks.zip(x.d) {
            let d = scale(h, block, 0);
            let lanes = int_lanes(
                std::array::from_fn(|j| block[2 + j] as i8 as i32),
                std::array::from_fn(|j| block[18 + j] as i8 as i32),
                xq,
            );
            accumulate(&mut row_lanes, lanes, d * dx);
        }
        *o = reduce(row_lanes);
    }
}

/// Σ a·b over two f32 vectors of a length divisible by 4 (a head's query and key, a vector with
/// itself): lane `l` takes elements `4c + l`, the lanes summed `(l0 + l1) + (l2 + l3)`.
pub(crate) fn dot_f32(a: &[f32], b: &[f32]) -> f32 {
    debug_assert!(a.len() == b.len() && a.len().is_multiple_of(4));
    #[cfg(target_arch = "wasm32")]
    // SAFETY: as for dot_q4_1.
    return unsafe { simd::dot_f32(a, b) };
    #[cfg(not(target_arch = "wasm32"))]
    {
        let mut lanes = [0f32; 4];
        for (a, b) in a.chunks_exact(4).zip(b.chunks_exact(4)) {
            for l in 0..4 {
                lanes[l] += a[l] * b[l];
            }
        }
        reduce(lanes)
    }
}

/// `out += p·v`, element by element (a value's share of an attention head's output), over
/// vectors of a length divisible by 4.
pub(crate) fn add_scaled(out: &mut [f32], p: f32, v: &[f32]) {
    debug_assert!(out.len() == v.len() && out.len().is_multiple_of(4));
    #[cfg(target_arch = "wasm32")]
    // SAFETY: as for dot_q4_1.
    return unsafe { simd::add_scaled(out, p, v) };
    #[cfg(not(target_arch = "wasm32"))]
    for (o, v) in out.iter_mut().zip(v) {
        *o += p * v;
    }
}

#[cfg(target_arch = "wasm32")]
mod simd {
    use core::arch::wasm32::*;

    use super::{BLOCK, Halves, Int8, Q4_1_BLOCK_BYTES, Q8_0_BLOCK_BYTES, reduce};

    /// 128 bits at element `$at` of the slice `$s`. Callers check `$at` + 128 bits is in it.
    /// (A macro, not a function: a function with its own target feature is not inlined into
    /// its caller, and a call per block costs more than the block.)
    macro_rules! load {
        ($s:expr, $at:expr) => {
            v128_load($s.as_ptr().add($at).cast())
        };
    }

    /// A block of the vector, its 32 int8 values widened to four i16x8 (elements 0..8, 8..16,
    /// 16..24, 24..32), once for every row of the pass.
    macro_rules! widened {
        ($xq:expr) => {{
            // Callers check that 32 bytes are at $xq.
            let (x0, x1) = (load_at!($xq, 0), load_at!($xq, 16));
            [
                i16x8_extend_low_i8x16(x0),
                i16x8_extend_high_i8x16(x0),
                i16x8_extend_low_i8x16(x1),
                i16x8_extend_high_i8x16(x1),
            ]
        }};
    }

    /// The row's lanes plus a block's integer lanes times `$scale`.
    macro_rules! accumulate {
        ($row:expr, $lanes:expr, $scale:expr) => {
            f32x4_add(
                $row,
                f32x4_mul(f32x4_convert_i32x4($lanes), f32x4_splat($scale)),
            )
        };
    }

    /// The half at byte `$at` after the pointer `$block` as its f32, from the table (one
    /// 16-bit load). Callers check that the two bytes are there.
    macro_rules! half {
        ($h:expr, $block:expr, $at:expr) => {
            $h[$block.add($at).cast::<u16>().read_unaligned() as usize]
        };
    }

    /// 128 bits at byte `$at` after the pointer `$p`. Callers check that they are there.
    macro_rules! load_at {
        ($p:expr, $at:expr) => {
            v128_load($p.add($at).cast())
        };
    }

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

    /// `$out = $w·x` by [`ROWS`] rows a pass (`$pass(rows, row_bytes)`), and the last odd row
    /// alone (`$one(row, row_bytes)`).
    macro_rules! by_pairs {
        ($w:expr, $out:expr, $pass:expr, $one:expr) => {{
            let (w, out) = ($w, $out);
            let row_bytes = w.len() / out.len();
            let (grouped, rest) = out.split_at_mut(out.len() / ROWS * ROWS);
            for (rows, o) in w
                .chunks_exact(ROWS * row_bytes)
                .zip(grouped.chunks_exact_mut(ROWS))
            {
                o.copy_from_slice(&$pass(rows, row_bytes));
            }
            let done = grouped.len() * row_bytes;
            for (row, o) in w[done..].chunks_exact(row_bytes).zip(rest) {
                *o = $one(row, row_bytes)[0];
            }
        }};
    }

    /// Rows of `w` a pass: they share the vector's loads and widening. Four were slower than
    /// two (more fuel and time in Cranelift: their state no longer stays in registers).
    const ROWS: usize = 2;

    #[target_feature(enable = "simd128")]
    pub(super) unsafe fn mul_q4_1(h: &Halves, w: &[u8], x: Int8, out: &mut [f32]) {
        // SAFETY: as the caller's.
        by_pairs!(
            w,
            out,
            |rows, n| unsafe { q4_1_rows::<ROWS>(h, rows, n, x) },
            |row, n| unsafe { q4_1_rows::<1>(h, row, n, x) }
        );
    }

    /// `R` rows of Q4_1 (`rows`, `R · row_bytes` bytes) against `x`.
    #[target_feature(enable = "simd128")]
    unsafe fn q4_1_rows<const R: usize>(
        h: &Halves,
        rows: &[u8],
        row_bytes: usize,
        x: Int8,
    ) -> [f32; R] {
        let mut row_lanes = [f32x4_splat(0.0); R];
        let mut minimums = [0f32; R];
        // The blocks every slice holds (what zipping their chunks would give), walked with
        // pointers: the checks are made here once, not per block.
        let blocks = (row_bytes / Q4_1_BLOCK_BYTES)
            .min(x.q.len() / BLOCK)
            .min(x.d.len())
            .min(x.s.len());
        let blocks = if rows.len() >= R * row_bytes {
            blocks
        } else {
            0
        };
        let mut at: [*const u8; R] = std::array::from_fn(|r| rows[r * row_bytes..].as_ptr());
        for b in 0..blocks {
            // SAFETY: b < blocks, so block b of x is in x.q, x.d and x.s, and block b of each
            // row is in rows (R rows of row_bytes, each at least blocks · 20 bytes).
            let (xw, dx, sx) = unsafe {
                let xq = x.q.as_ptr().add(b * BLOCK);
                (widened!(xq), *x.d.get_unchecked(b), *x.s.get_unchecked(b))
            };
            for r in 0..R {
                // SAFETY: as above: 20 bytes at at[r], the block's d, m and 16 nibble bytes.
                let (d, m, q) = unsafe {
                    let block = at[r];
                    at[r] = block.add(Q4_1_BLOCK_BYTES);
                    (half!(h, block, 0), half!(h, block, 2), load_at!(block, 4))
                };
                let (low, high) = (v128_and(q, u8x16_splat(0x0f)), u8x16_shr(q, 4));
                // Nibbles (0..15) times int8: at most 15·127 each, so the four products of a
                // lane fit 16 bits.
                let sum = i16x8_add(
                    i16x8_add(
                        i16x8_mul(u16x8_extend_low_u8x16(low), xw[0]),
                        i16x8_mul(u16x8_extend_high_u8x16(low), xw[1]),
                    ),
                    i16x8_add(
                        i16x8_mul(u16x8_extend_low_u8x16(high), xw[2]),
                        i16x8_mul(u16x8_extend_high_u8x16(high), xw[3]),
                    ),
                );
                let lanes = i32x4_extadd_pairwise_i16x8(sum);
                row_lanes[r] = accumulate!(row_lanes[r], lanes, d * dx);
                minimums[r] += m * sx;
            }
        }
        std::array::from_fn(|r| reduce(lanes(row_lanes[r])) + minimums[r])
    }

    #[target_feature(enable = "simd128")]
    pub(super) unsafe fn mul_q8_0(h: &Halves, w: &[u8], x: Int8, out: &mut [f32]) {
        // SAFETY: as the caller's.
        by_pairs!(
            w,
            out,
            |rows, n| unsafe { q8_0_rows::<ROWS>(h, rows, n, x) },
            |row, n| unsafe { q8_0_rows::<1>(h, row, n, x) }
        );
    }

    /// `R` rows of Q8_0 (`rows`, `R · row_bytes` bytes) against `x`.
    #[target_feature(enable = "simd128")]
    unsafe fn q8_0_rows<const R: usize>(
        h: &Halves,
        rows: &[u8],
        row_bytes: usize,
        x: Int8,
    ) -> [f32; R] {
        let mut row_lanes = [f32x4_splat(0.0); R];
        // As for Q4_1: the blocks every slice holds, walked with pointers.
        let blocks = (row_bytes / Q8_0_BLOCK_BYTES)
            .min(x.q.len() / BLOCK)
            .min(x.d.len());
        let blocks = if rows.len() >= R * row_bytes {
            blocks
        } else {
            0
        };
        let mut at: [*const u8; R] = std::array::from_fn(|r| rows[r * row_bytes..].as_ptr());
        for b in 0..blocks {
            // SAFETY: as for Q4_1.
            let (xw, dx) = unsafe {
                let xq = x.q.as_ptr().add(b * BLOCK);
                (widened!(xq), *x.d.get_unchecked(b))
            };
            for r in 0..R {
                // SAFETY: as for Q4_1: 34 bytes at at[r], the block's d and 32 signed bytes.
                let (d, first, second) = unsafe {
                    let block = at[r];
                    at[r] = block.add(Q8_0_BLOCK_BYTES);
                    (half!(h, block, 0), load_at!(block, 2), load_at!(block, 18))
                };
                // A product reaches 128·127, so two fit 16 bits and four do not: each pair is
                // widened to 32 bits before they are added.
                let lanes = i32x4_add(
                    i32x4_extadd_pairwise_i16x8(i16x8_add(
                        i16x8_mul(i16x8_extend_low_i8x16(first), xw[0]),
                        i16x8_mul(i16x8_extend_high_i8x16(first), xw[1]),
                    )),
                    i32x4_extadd_pairwise_i16x8(i16x8_add(
                        i16x8_mul(i16x8_extend_low_i8x16(second), xw[2]),
                        i16x8_mul(i16x8_extend_high_i8x16(second), xw[3]),
                    )),
                );
                row_lanes[r] = accumulate!(row_lanes[r], lanes, d * dx);
            }
        }
        std::array::from_fn(|r| reduce(lanes(row_lanes[r])))
    }

    #[target_feature(enable = "simd128")]
    pub(super) unsafe fn dot_f32(a: &[f32], b: &[f32]) -> f32 {
        let mut sum = f32x4_splat(0.0);
        for (a, b) in a.chunks_exact(4).zip(b.chunks_exact(4)) {
            // SAFETY: both chunks are 4 floats (chunks_exact).
            let (a, b) = unsafe { (load!(a, 0), load!(b, 0)) };
            sum = f32x4_add(sum, f32x4_mul(a, b));
        }
        reduce(lanes(sum))
    }

    #[target_feature(enable = "simd128")]
    pub(super) unsafe fn add_scaled(out: &mut [f32], p: f32, v: &[f32]) {
        let p = f32x4_splat(p);
        for (o, v) in out.chunks_exact_mut(4).zip(v.chunks_exact(4)) {
            // SAFETY: both chunks are 4 floats (chunks_exact).
            unsafe {
                let sum = f32x4_add(load!(o, 0), f32x4_mul(p, load!(v, 0)));
                v128_store(o.as_mut_ptr().cast(), sum);
            }
        }
    }
}
