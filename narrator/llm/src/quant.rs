//! The weights' number formats: f16, and ggml's Q4_1 and Q8_0 blocks, read and multiplied
//! straight from their bytes.
//!
//! It owns the matrix-vector product every layer runs (the vector quantized once to int8
//! blocks, then row by row, each row's dot product in `kernels`, whose four lanes fix the order
//! of every float sum) and the dequantization of a single row (the token embedding). It must not depend on the machine: plain f32, no fused
//! multiply-add, so the compiled component gives the same bits on x86_64, aarch64 and Pulley.

use crate::gguf::{DType, Tensor};
use crate::kernels;

/// Elements in a Q4_1 or Q8_0 block.
pub const BLOCK: usize = 32;

/// An IEEE half's bits as an f32 (exact: every half is an f32).
pub fn f16_to_f32(h: u16) -> f32 {
    let sign = ((h >> 15) as u32) << 31;
    let exp = ((h >> 10) & 0x1f) as u32;
    let mant = (h & 0x3ff) as u32;
    let bits = match (exp, mant) {
        (0, 0) => sign,
        (0, _) => {
            // A subnormal half, mant·2⁻²⁴: shift its leading one up to the implicit bit.
            let mut e = 127 - 15 + 1;
            let mut m = mant;
            while m & 0x400 == 0 {
                m <<= 1;
                e -= 1;
            }
            sign | (e << 23) | ((m & 0x3ff) << 13)
        }
        (0x1f, _) => sign | 0x7f80_0000 | (mant << 13),
        _ => sign | ((exp + 127 - 15) << 23) | (mant << 13),
    };
    f32::from_bits(bits)
}

fn half(bytes: &[u8], at: usize) -> f32 {
    f16_to_f32(u16::from_le_bytes([bytes[at], bytes[at + 1]]))
}

/// A weight matrix: `rows` rows of `cols` elements, in the file's bytes.
#[derive(Debug, Clone, Copy)]
pub struct Matrix<'w> {
    pub dtype: DType,
    pub rows: usize,
    pub cols: usize,
    pub data: &'w [u8],
}

impl<'w> Matrix<'w> {
    /// A 2-d tensor as a matrix (its rows are ne1, its columns ne0).
    pub fn of(t: &Tensor<'w>) -> Matrix<'w> {
        Matrix {
            dtype: t.dtype,
            rows: t.rows(),
            cols: t.row_len(),
            data: t.data,
        }
    }

    fn row_bytes(&self) -> usize {
        let (per_block, block_bytes) = self.dtype.block();
        self.cols / per_block as usize * block_bytes as usize
    }

    fn row(&self, r: usize) -> &'w [u8] {
        let n = self.row_bytes();
        &self.data[r * n..(r + 1) * n]
    }

    /// The bytes of all its rows.
    fn rows_bytes(&self) -> &'w [u8] {
        &self.data[..self.rows * self.row_bytes()]
    }

    /// Row `r` as f32s into `out` (`cols` long).
    pub fn dequantize_row(&self, r: usize, out: &mut [f32]) {
        let row = self.row(r);
        match self.dtype {
            DType::F32 => {
                for (o, b) in out.iter_mut().zip(row.chunks_exact(4)) {
                    *o = f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                }
            }
            DType::F16 => {
                for (i, o) in out.iter_mut().enumerate() {
                    *o = half(row, 2 * i);
                }
            }
            DType::Q4_1 => {
                for (block, o) in row.chunks_exact(20).zip(out.chunks_exact_mut(BLOCK)) {
                    let (d, m) = (half(block, 0), half(block, 2));
                    for j in 0..16 {
                        let q = block[4 + j];
                        o[j] = d * (q & 0x0f) as f32 + m;
                        o[j + 16] = d * (q >> 4) as f32 + m;
                    }
                }
            }
            DType::Q8_0 => {
                for (block, o) in row.chunks_exact(34).zip(out.chunks_exact_mut(BLOCK)) {
                    let d = half(block, 0);
                    for j in 0..BLOCK {
                        o[j] = d * (block[2 + j] as i8) as f32;
                    }
                }
            }
        }
    }

    /// `out = W·x` ([`Activations`]): `x` is `cols` long, `out` `rows` long.
    pub fn mul_vec(&self, x: &Activations, out: &mut [f32]) {
        debug_assert_eq!(x.len(), self.cols);
        debug_assert_eq!(out.len(), self.rows);
        match self.dtype {
            DType::Q4_1 => kernels::mul_q4_1(kernels::halves(), self.rows_bytes(), x.int8(), out),
            DType::Q8_0 => kernels::mul_q8_0(kernels::halves(), self.rows_bytes(), x.int8(), out),
            DType::F32 | DType::F16 => {
                let mut row = vec![0f32; self.cols];
                for (r, o) in out.iter_mut().enumerate() {
                    self.dequantize_row(r, &mut row);
                    *o = row.iter().zip(&x.x).map(|(w, x)| w * x).sum();
                }
            }
        }
    }
}

/// A vector as the matrices take it, made once for every row that multiplies it: its values
/// (for f32 and f16 rows), and its blocks of 32 in int8 as llama.cpp quantizes a vector for
/// Q4_1 and Q8_0 rows (`q8_1`, `q8_0`): scale `d = max|x|/127`, values `q = x·(1/d)` rounded to
/// the nearest (ties to even: one `nearest` instruction in WebAssembly), and `s = d·Σq` for a
/// Q4_1 row's `m` term. The integer products are then exact, and a block costs the SIMD code a
/// third of what widening every weight to f32 did.
#[derive(Debug, Clone, Default)]
pub struct Activations {
    x: Vec<f32>,
    q: Vec<i8>,
    d: Vec<f32>,
    s: Vec<f32>,
}

/// The largest int8 value a vector's block is scaled to (−127..127: symmetric, as llama.cpp's).
const INT8_MAX: f32 = 127.0;

impl Activations {
    /// Takes `x` (its length a multiple of 32).
    pub fn prepare(&mut self, x: &[f32]) {
        debug_assert_eq!(x.len() % BLOCK, 0);
        self.x.clear();
        self.x.extend_from_slice(x);
        self.q.clear();
        self.d.clear();
        self.s.clear();
        for xb in x.chunks_exact(BLOCK) {
            let amax = xb.iter().fold(0f32, |a, v| a.max(v.abs()));
            let d = amax / INT8_MAX;
            let inverse = if d != 0.0 { 1.0 / d } else { 0.0 };
            let mut total = 0i32;
            for v in xb {
                // A NaN becomes 0 (Rust's saturating cast), on every machine.
                let q = (v * inverse).round_ties_even().clamp(-INT8_MAX, INT8_MAX) as i8;
                total += q as i32;
                self.q.push(q);
            }
            self.d.push(d);
            self.s.push(d * total as f32);
        }
    }

    fn int8(&self) -> kernels::Int8<'_> {
        kernels::Int8 {
            q: &self.q,
            d: &self.d,
            s: &self.s,
        }
    }

    /// The vector's length.
    pub fn len(&self) -> usize {
        self.x.len()
    }

    /// Whether it is empty.
    pub fn is_empty(&self) -> bool {
        self.x.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Halves worked out by hand from IEEE 754's binary16: sign, 5-bit exponent (bias 15),
    /// 10-bit fraction.
    #[test]
    fn halves_are_read_exactly() {
        assert_eq!(f16_to_f32(0x3c00), 1.0);
        assert_eq!(f16_to_f32(0xc000), -2.0);
        assert_eq!(f16_to_f32(0x3555), 0.333_251_95); // 1 + 341/1024, times 2^-2
        assert_eq!(f16_to_f32(0x7bff), 65504.0); // the largest half
        assert_eq!(f16_to_f32(0x0001), 2f32.powi(-24)); // the smallest subnormal
        assert_eq!(f16_to_f32(0x03ff), 1023.0 * 2f32.powi(-24)); // the largest subnormal
        assert_eq!(f16_to_f32(0x8000).to_bits(), 0x8000_0000); // −0
        assert_eq!(f16_to_f32(0x7c00), f32::INFINITY);
        assert!(f16_to_f32(0x7e00).is_nan());
    }

    /// One Q4_1 block with d = 0.5 and m = −1: element j is 0.5·q − 1, with q the low nibble of
    /// byte j for the first 16 and its high nibble for the last 16.
    #[test]
    fn a_q4_1_block_is_d_times_q_plus_m() {
        let mut block = vec![0x00, 0x38, 0x00, 0xbc]; // 0.5, −1.0
        for j in 0..16u8 {
            block.push(j | ((15 - j) << 4));
        }
        let m = Matrix {
            dtype: DType::Q4_1,
            rows: 1,
            cols: 32,
            data: &block,
        };
        let mut row = [0f32; 32];
        m.dequantize_row(0, &mut row);
        for j in 0..16 {
            assert_eq!(row[j], 0.5 * j as f32 - 1.0);
            assert_eq!(row[j + 16], 0.5 * (15 - j) as f32 - 1.0);
        }
        // Against x = 1, 2, …, 31, 127: the block's largest is 127, so its scale is 1 and its
        // int8 values are x itself. Σ (0.5·q_j − 1)·x_j, every partial sum a multiple of 0.5
        // well inside f32's exact integers, so any order gives this.
        let x: Vec<f32> = (1..=31).chain([127]).map(|v| v as f32).collect();
        let expected: f32 = (0..16)
            .map(|j| (0.5 * j as f32 - 1.0) * x[j])
            .chain((0..16).map(|j| (0.5 * (15 - j) as f32 - 1.0) * x[j + 16]))
            .sum();
        let mut xq = Activations::default();
        xq.prepare(&x);
        let mut out = [0f32; 1];
        m.mul_vec(&xq, &mut out);
        assert_eq!(out[0], expected);
    }

    /// One Q8_0 block with d = 2: element j is 2·q_j.
    #[test]
    fn a_q8_0_block_is_d_times_q() {
        let mut block = vec![0x00, 0x40]; // 2.0
        for j in 0..32i8 {
            block.push((j - 16) as u8);
        }
        let m = Matrix {
            dtype: DType::Q8_0,
            rows: 1,
            cols: 32,
            data: &block,
        };
        let mut row = [0f32; 32];
        m.dequantize_row(0, &mut row);
        for (j, v) in row.iter().enumerate() {
            assert_eq!(*v, 2.0 * (j as f32 - 16.0));
        }
        // x = −127, 1, 1, …: Σ 2·q_j·x_j = 2·(−16·−127 + Σ_{j≥1} (j − 16)), exact in f32.
        let mut x = [1f32; 32];
        x[0] = -127.0;
        let mut xq = Activations::default();
        xq.prepare(&x);
        let mut out = [0f32; 1];
        m.mul_vec(&xq, &mut out);
        assert_eq!(
            out[0],
            2.0 * (16 * 127 + (1..32).map(|j| j - 16).sum::<i32>()) as f32
        );
    }

    /// A block whose largest magnitude is 254 has scale 2: 3 → 1.5 and 5 → 2.5 round to the
    /// even 2, −3 → −1.5 to −2, 7 → 3.5 to 4, 253 → 126.5 to 126, and a NaN is 0. Against a
    /// Q8_0 row of ones with d = 1, the product is 2·Σq.
    #[test]
    fn a_vector_is_quantized_to_int8_by_its_largest_value_ties_to_even() {
        let mut x = [0f32; 32];
        x[..7].copy_from_slice(&[3.0, 5.0, -3.0, 7.0, 253.0, -254.0, f32::NAN]);
        let mut xq = Activations::default();
        xq.prepare(&x);
        assert_eq!(xq.d, [2.0]);
        assert_eq!(xq.q[..7], [2, 2, -2, 4, 126, -127, 0]);
        assert!(xq.q[7..].iter().all(|q| *q == 0));
        assert_eq!(xq.s, [2.0 * (2 + 2 - 2 + 4 + 126 - 127) as f32]);
        let mut block = vec![0x00, 0x3c]; // 1.0
        block.extend([1u8; 32]);
        let m = Matrix {
            dtype: DType::Q8_0,
            rows: 1,
            cols: 32,
            data: &block,
        };
        let mut out = [0f32; 1];
        m.mul_vec(&xq, &mut out);
        assert_eq!(out[0], 2.0 * 5.0);
        // An all-zero block has scale 0 and values 0, not a division by zero.
        xq.prepare(&[0f32; 32]);
        assert_eq!((xq.d[0], xq.s[0]), (0.0, 0.0));
        assert!(xq.q.iter().all(|q| *q == 0));
    }
}
