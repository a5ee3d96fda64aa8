//! MX products of whole f32 matrices, quantized in place and multiplied on an f64 GEMM: what
//! training needs (every row of A and every column of B quantized in blocks of K along the
//! reduction dimension, then every pair dotted), without a vector object per row.
//!
//! Quantization ([`MxFormat::quantize_dense`]) writes each element's *value*, X · P (the
//! element's value times its block's scale, exact in f64), into a matrix of the operand's
//! layout; a block with a NaN scale holds NaN. The product ([`matmul_dense`]) then runs one
//! `matrixmultiply` f64 GEMM per block of K along the reduction dimension: where the format
//! passes [`MxFormat::dense_product_is_exact`], every value of a block of row i (column j) is
//! an integer below 2^W times the one power of two 2^(lsb + e_i) (2^(lsb + e_j)), so every
//! partial sum the GEMM forms, in whatever order, is an integer below 2^53 times
//! 2^(2·lsb + e_i + e_j): exact. The block's exact sum is then rounded once to f32 and added
//! to the element's f32 accumulator in block order, as the definition does. A NaN scale
//! makes the block's products NaN, as the definition's NaN block does.
//!
//! Where one GEMM is not exact (fp8 E5M2: W = 32, so 2·32 + 5 bits), A is split in two
//! ([`DenseSums::Split`]): in each block of each row, every value is I · u with I < 2^W, u =
//! 2^(⌊log2 M⌋ + 1 − W) for the block's largest magnitude M (a power of two that divides the
//! block's grid, whatever its scale), and I = I_hi · 2^s + I_lo with I_lo < 2^s. Each part's
//! GEMM is exact (s + W + log2 K ≤ 53 and 2·W − s + log2 K ≤ 53), and the block's exact sum,
//! P_hi + P_lo, is rounded once to f32 through binary64 rounded to odd ([`round_sum_f32`]:
//! 53 ≥ 24 + 2 bits, so the second rounding is the first's).
//!
//! The definitions stay: [`MxFormat::quantize`] and [`MxVector::dot_f32`](super::MxVector);
//! `tests` holds this path to them, value for value and bit for bit.

use crate::arith::pow2;
use std::mem::MaybeUninit;

use super::block::F32Acc;
use super::product::int_bits;
use super::{Elem, MxFormat, SCALE_EXP_MAX, SCALE_EXP_MIN};
use crate::family_trait::Family;

/// Bits of an f64's significand: integers below 2^53 are exact.
const F64_EXACT_BITS: u32 = 53;

/// Which way an operand's vectors (the runs along the reduction dimension) lie in its
/// row-major storage.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Along {
    /// Each stored row is one vector (A of C = A·B stored m × k).
    Rows,
    /// Each stored column is one vector (B stored k × n).
    Columns,
}

/// A row-major matrix of values read as an operand: element (r, c) at
/// `values[r · row_stride + c · col_stride]`.
#[derive(Clone, Copy, Debug)]
pub struct Operand<'a> {
    pub values: &'a [f64],
    pub rows: usize,
    pub cols: usize,
    pub row_stride: usize,
    pub col_stride: usize,
}

impl<'a> Operand<'a> {
    /// `values` (stored rows × cols, row-major) as the operand, or as its transpose.
    pub fn stored(values: &'a [f64], rows: usize, cols: usize, transposed: bool) -> Operand<'a> {
        assert_eq!(values.len(), rows * cols, "a {rows}×{cols} matrix");
        if transposed {
            Operand {
                values,
                rows: cols,
                cols: rows,
                row_stride: 1,
                col_stride: cols,
            }
        } else {
            Operand {
                values,
                rows,
                cols,
                row_stride: cols,
                col_stride: 1,
            }
        }
    }
}

/// The constants of one element type's rounding on an unbounded grid: the grid's unit at a
/// value of binade `top` is 2^max(top − m, lo), results saturate to ±max.
#[derive(Clone, Copy, Debug)]
struct Grid {
    m: i64,
    lo: i64,
    max: f64,
}

impl Grid {
    fn of(f: &MxFormat) -> Grid {
        match f.elem {
            Elem::Float(ef) => Grid {
                m: i64::from(ef.frac_bits),
                lo: ef.emin() - i64::from(ef.frac_bits),
                max: ef.to_f64(ef.max_finite(false)),
            },
            // k/64 for every magnitude: a unit of 2^−6 (m far beyond any value's binade).
            Elem::Int8 => Grid {
                m: 1 << 20,
                lo: -6,
                max: 127.0 / 64.0,
            },
        }
    }

    /// v (a normal f64 or zero, |v| < 2^256) to the nearest grid value, ties to even,
    /// saturating: 1.5·2^(52 + unit) added and taken away again rounds to a multiple of
    /// 2^unit, since |v| < 2^(51 + unit) (the grid has fewer than 51 fraction bits).
    #[inline(always)]
    fn round(&self, v: f64) -> f64 {
        let top = ((v.to_bits() >> 52) & 0x7ff) as i64 - 1023;
        let unit = (top - self.m).max(self.lo);
        let magic = f64::from_bits(((unit + 1075) as u64) << 52 | 1 << 51);
        ((v + magic) - magic).clamp(-self.max, self.max)
    }
}

/// The scale exponent of a block whose largest magnitude has the f32 bits `amax` (sign
/// cleared): ⌊log2 amax⌋ − emax_elem clamped to [−127, 127], −127 for an all-zero block
/// (§6.3; [`MxFormat::quantize_block`]); `None` for a NaN or ±∞ (the NaN scale).
#[inline]
fn scale_exp(amax: u32, emax_elem: i64) -> Option<i64> {
    let field = i64::from(amax >> 23);
    let log2 = match (field, amax) {
        (0xff, _) => return None,
        (_, 0) => return Some(i64::from(SCALE_EXP_MIN)),
        // f32 subnormal: 2^−149 times the fraction.
        (0, _) => 31 - i64::from(amax.leading_zeros()) - 149,
        _ => field - 127,
    };
    Some((log2 - emax_elem).clamp(i64::from(SCALE_EXP_MIN), i64::from(SCALE_EXP_MAX)))
}

/// How [`matmul_dense`] forms a block's exact sums on binary64 GEMMs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum DenseSums {
    /// One GEMM: a block's sum of element-integer products stays below 2^53.
    One,
    /// Two: A's element integers split at bit s (the module documentation says why).
    Split(u32),
}

impl MxFormat {
    /// Whether [`matmul_dense`] is exact for this format: in one GEMM per block, or in two
    /// with A's element integers split (`DenseSums`). Element types too wide for both (none
    /// of OCP's at K = 32; fp8 E5M2 at K ≥ 128) take [`super::matmul_f32`] on
    /// [`super::MxVector`]s.
    pub fn dense_product_is_exact(&self) -> bool {
        self.dense_sums().is_some()
    }

    /// How [`matmul_dense`] sums a block exactly, if it can.
    fn dense_sums(&self) -> Option<DenseSums> {
        let log_k = self.block.next_power_of_two().trailing_zeros();
        let w = int_bits(self);
        if 2 * w + log_k <= F64_EXACT_BITS {
            return Some(DenseSums::One);
        }
        // The low part as wide as its GEMM allows; the high part must then fit too.
        let s = F64_EXACT_BITS.checked_sub(w + log_k)?;
        (2 * w + log_k <= F64_EXACT_BITS + s).then_some(DenseSums::Split(s))
    }

    /// The f32 matrix `x` (rows × cols, row-major, as f32 words of any width: [`F32Word`])
    /// quantized in blocks of K along each row or each column (`along`), as
    /// [`MxFormat::quantize`] quantizes each such vector: every element's value X · P in the
    /// same layout, NaN for every element of a block whose scale is NaN (a NaN or ±∞ among
    /// its inputs). Zeros are +0.
    pub fn quantize_dense<W: F32Word>(
        &self,
        x: &[W],
        rows: usize,
        cols: usize,
        along: Along,
    ) -> Vec<f64> {
        self.quantize_dense_on(Compiled::best(), x, rows, cols, along)
    }

    /// [`Self::quantize_dense`] written into `out` (as long as `x`), so that callers may
    /// quantize runs of whole rows on threads into one matrix: a run of rows is quantized as
    /// the whole matrix quantizes it where its vectors lie along the rows, or where it holds
    /// whole blocks of rows (a multiple of K, or the last rows) when they run down the columns.
    pub fn quantize_dense_to<W: F32Word>(
        &self,
        x: &[W],
        (rows, cols): (usize, usize),
        along: Along,
        out: &mut [MaybeUninit<f64>],
    ) {
        self.quantize_dense_write(Compiled::best(), x, (rows, cols), along, out);
    }

    /// [`Self::quantize_dense`] by one compilation of its code (`compiled` must be one this
    /// machine runs: [`Compiled::here`]).
    fn quantize_dense_on<W: F32Word>(
        &self,
        compiled: Compiled,
        x: &[W],
        rows: usize,
        cols: usize,
        along: Along,
    ) -> Vec<f64> {
        let mut out = Vec::with_capacity(x.len());
        let room = &mut out.spare_capacity_mut()[..x.len()];
        self.quantize_dense_write(compiled, x, (rows, cols), along, room);
        // SAFETY: the quantization wrote every one of the x.len() values (it asserts so).
        unsafe { out.set_len(x.len()) };
        out
    }

    /// The values of `x` written into `out` (as long as `x`) by one compilation of the code
    /// (`compiled` must be one this machine runs), every one of them (asserted).
    fn quantize_dense_write<W: F32Word>(
        &self,
        compiled: Compiled,
        x: &[W],
        (rows, cols): (usize, usize),
        along: Along,
        out: &mut [MaybeUninit<f64>],
    ) {
        assert_eq!(x.len(), rows * cols, "a {rows}×{cols} matrix");
        assert_eq!(out.len(), x.len(), "room for every value");
        let written = match compiled {
            Compiled::Portable => self.quantize_dense_into(x, cols, along, out),
            // SAFETY (both): the caller's `compiled` runs on this CPU.
            #[cfg(target_arch = "x86_64")]
            Compiled::Avx2 => unsafe { self.quantize_dense_avx2(x, cols, along, out) },
            #[cfg(target_arch = "x86_64")]
            Compiled::Avx512 => unsafe { self.quantize_dense_avx512(x, cols, along, out) },
        };
        assert_eq!(written, x.len(), "every value written");
    }

    /// [`Self::quantize_dense_into`] compiled for AVX2 (the same code: the compiler's lanes).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn quantize_dense_avx2<W: F32Word>(
        &self,
        x: &[W],
        cols: usize,
        along: Along,
        out: &mut [MaybeUninit<f64>],
    ) -> usize {
        self.quantize_dense_into(x, cols, along, out)
    }

    /// [`Self::quantize_dense_into`] compiled for AVX-512 (the same code: the compiler's lanes).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512dq")]
    unsafe fn quantize_dense_avx512<W: F32Word>(
        &self,
        x: &[W],
        cols: usize,
        along: Along,
        out: &mut [MaybeUninit<f64>],
    ) -> usize {
        self.quantize_dense_into(x, cols, along, out)
    }

    /// The values of `x`'s elements written to `out` in `x`'s order; how many (all of them).
    #[inline(always)]
    fn quantize_dense_into<W: F32Word>(
        &self,
        x: &[W],
        cols: usize,
        along: Along,
        out: &mut [MaybeUninit<f64>],
    ) -> usize {
        let mut at = 0;
        if x.is_empty() {
            return at;
        }
        let (grid, emax, k) = (Grid::of(self), i64::from(self.emax_elem()), self.block);
        let scales = |amax: u32| match scale_exp(amax, emax) {
            Some(e) => (pow2(-e), pow2(e)),
            None => (f64::NAN, f64::NAN),
        };
        match along {
            Along::Rows => {
                // Blocks of K from the start of each row (a shorter last one where K does
                // not divide the row).
                for row in x.chunks(cols) {
                    for xs in row.chunks(k) {
                        let amax = xs.iter().fold(0, |m, v| m.max(v.f32_bits() & ABS));
                        let (up, down) = scales(amax);
                        put(out, &mut at, xs.iter().map(|&v| element(v, up, down, grid)));
                    }
                }
            }
            Along::Columns => {
                let rows = x.len() / cols;
                let mut amax = vec![0u32; cols];
                let (mut up, mut down) = (vec![0f64; cols], vec![0f64; cols]);
                for r0 in (0..rows).step_by(k) {
                    let block = &x[r0 * cols..(r0 + k).min(rows) * cols];
                    amax.fill(0);
                    for row in block.chunks(cols) {
                        for (m, &v) in amax.iter_mut().zip(row) {
                            *m = (*m).max(v.f32_bits() & ABS);
                        }
                    }
                    for ((&m, u), d) in amax.iter().zip(&mut up).zip(&mut down) {
                        (*u, *d) = scales(m);
                    }
                    for row in block.chunks(cols) {
                        let scales = up.iter().zip(&down);
                        put(
                            out,
                            &mut at,
                            row.iter()
                                .zip(scales)
                                .map(|(&v, (&u, &d))| element(v, u, d, grid)),
                        );
                    }
                }
            }
        }
        at
    }
}

/// `values` written to `out` from `at` on (`at` moved past them): in place, without zeroing
/// the room first (zeroing a block at a time was a third of the time).
#[inline(always)]
fn put(out: &mut [MaybeUninit<f64>], at: &mut usize, values: impl ExactSizeIterator<Item = f64>) {
    let room = &mut out[*at..*at + values.len()];
    for (y, v) in room.iter_mut().zip(values) {
        y.write(v);
    }
    *at += room.len();
}

/// The compilations of [`MxFormat::quantize_dense`]'s code: one source, the compiler's lanes
/// for each instruction set (AVX-512 takes 0.6× the time of AVX2, whose 64-bit lanes have no
/// max: docs/perf.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Compiled {
    Portable,
    #[cfg(target_arch = "x86_64")]
    Avx2,
    #[cfg(target_arch = "x86_64")]
    Avx512,
}

impl Compiled {
    /// The compilations this machine runs, the fastest last.
    fn here() -> Vec<Compiled> {
        #[allow(unused_mut)]
        let mut here = vec![Compiled::Portable];
        #[cfg(target_arch = "x86_64")]
        {
            if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") {
                here.push(Compiled::Avx2);
            }
            if crate::kernel::lockstep::avx512() {
                here.push(Compiled::Avx512);
            }
        }
        here
    }

    /// The fastest compilation this machine runs (found once).
    fn best() -> Compiled {
        static BEST: std::sync::OnceLock<Compiled> = std::sync::OnceLock::new();
        *BEST.get_or_init(|| *Compiled::here().last().expect("the portable code"))
    }
}

/// The mask of an f32 word's magnitude bits.
const ABS: u32 = 0x7fff_ffff;

/// An f32 as stored by its user: `f32` itself, or its bits in a `u32` or in the low half of
/// a `u64` (the training machines' words).
pub trait F32Word: Copy {
    fn f32_bits(self) -> u32;
}

impl F32Word for f32 {
    #[inline(always)]
    fn f32_bits(self) -> u32 {
        self.to_bits()
    }
}

impl F32Word for u32 {
    #[inline(always)]
    fn f32_bits(self) -> u32 {
        self
    }
}

impl F32Word for u64 {
    #[inline(always)]
    fn f32_bits(self) -> u32 {
        self as u32
    }
}

/// One element's value: the nearest grid value to v·2^−e (`up` = 2^−e, exact), times 2^e
/// (`down`, exact); NaN under a NaN scale (`up` NaN); +0 for zeros.
#[inline(always)]
fn element<W: F32Word>(v: W, up: f64, down: f64, grid: Grid) -> f64 {
    let v = f64::from(f32::from_bits(v.f32_bits()));
    grid.round(v * up) * down + 0.0
}

/// C = A·B (m × n, row-major) for operands quantized by [`MxFormat::quantize_dense`] of
/// format `f` (A's rows and B's columns its vectors): element (i, j) is
/// [`super::MxVector::dot_f32`] of row i and column j, bit for bit. `f` must pass
/// [`MxFormat::dense_product_is_exact`].
pub fn matmul_dense(f: &MxFormat, a: Operand<'_>, b: Operand<'_>) -> Vec<f32> {
    let sums = f
        .dense_sums()
        .expect("a format whose block sums fit binary64 GEMMs");
    assert_eq!(a.cols, b.rows, "A's columns are B's rows");
    let (m, len, n) = (a.rows, a.cols, b.cols);
    if m == 0 || n == 0 {
        return Vec::new();
    }
    let mut acc = vec![F32Acc::new(); m * n];
    let mut c = vec![0f64; m * n];
    match sums {
        DenseSums::One => {
            for k0 in (0..len).step_by(f.block) {
                gemm_block(a, b, k0..len.min(k0 + f.block), &mut c);
                // The block's exact sum, rounded once to f32 (as `round_term`), added in
                // block order.
                for (slot, &sum) in acc.iter_mut().zip(&c) {
                    slot.add(sum as f32);
                }
            }
        }
        DenseSums::Split(s) => {
            let (hi, lo) = split(f, a, s);
            let (hi, lo) = (
                Operand::stored(&hi, m, len, false),
                Operand::stored(&lo, m, len, false),
            );
            let mut c_lo = vec![0f64; m * n];
            for k0 in (0..len).step_by(f.block) {
                let ks = k0..len.min(k0 + f.block);
                gemm_block(hi, b, ks.clone(), &mut c);
                gemm_block(lo, b, ks, &mut c_lo);
                for ((slot, &p_hi), &p_lo) in acc.iter_mut().zip(&c).zip(&c_lo) {
                    slot.add(round_sum_f32(p_hi, p_lo));
                }
            }
        }
    }
    acc.iter().map(F32Acc::result).collect()
}

/// C = A·B over the reduction indices `ks` (C m × n, row-major), on `matrixmultiply`'s GEMM.
fn gemm_block(a: Operand<'_>, b: Operand<'_>, ks: std::ops::Range<usize>, c: &mut [f64]) {
    let (m, n) = (a.rows, b.cols);
    assert!(ks.end <= a.cols && a.cols == b.rows && c.len() == m * n);
    // SAFETY: A is m × len, read from column ks.start for ks.len() columns; B is len × n,
    // read from row ks.start for ks.len() rows; C is m × n, row-major. Every index stays in
    // its slice (the strides are the operands' own; asserted just above).
    unsafe {
        matrixmultiply::dgemm(
            m,
            ks.len(),
            n,
            1.0,
            a.values[ks.start * a.col_stride..].as_ptr(),
            a.row_stride as isize,
            a.col_stride as isize,
            b.values[ks.start * b.row_stride..].as_ptr(),
            b.row_stride as isize,
            b.col_stride as isize,
            0.0,
            c.as_mut_ptr(),
            n as isize,
            1,
        );
    }
}

/// A (m × len) as its high and low parts, each m × len row-major: in each block of each
/// row, the values' integers I (in units of u = 2^(⌊log2 M⌋ + 1 − W), M the block's largest
/// magnitude) cut at bit `s`, the high part I truncated to a multiple of 2^s, the low part
/// the rest (both exact).
fn split(f: &MxFormat, a: Operand<'_>, s: u32) -> (Vec<f64>, Vec<f64>) {
    let (m, len) = (a.rows, a.cols);
    let w = i64::from(int_bits(f));
    let (mut hi, mut lo) = (vec![0f64; m * len], vec![0f64; m * len]);
    for i in 0..m {
        let at = |k: usize| a.values[i * a.row_stride + k * a.col_stride];
        for k0 in (0..len).step_by(f.block) {
            let ks = k0..len.min(k0 + f.block);
            let (nan, max) = ks.clone().map(at).fold((false, 0f64), |(nan, max), v| {
                (nan || v.is_nan(), max.max(v.abs()))
            });
            for k in ks {
                let v = at(k);
                // A NaN block (NaN throughout) and a zero block are their high part.
                let (h, l) = if nan || max == 0.0 {
                    (v, 0.0)
                } else {
                    // The step of the high part: 2^s units, u = 2^(⌊log2 M⌋ + 1 − W).
                    let log2_max = ((max.to_bits() >> 52) & 0x7ff) as i64 - 1023;
                    let step = pow2(log2_max + 1 - w + i64::from(s));
                    let h = (v / step).trunc() * step;
                    (h, v - h)
                };
                (hi[i * len + k], lo[i * len + k]) = (h, l);
            }
        }
    }
    (hi, lo)
}

/// The f32 nearest to the exact sum a + b of two binary64 values (ties to even): the sum
/// rounded to odd in binary64 (its nearest binary64 s and, if s is inexact and even, the
/// neighbour toward the exact sum), then to f32; NaN stays NaN.
fn round_sum_f32(a: f64, b: f64) -> f32 {
    let s = a + b;
    // TwoSum: the exact error of s (a finite s; a zero s is exact).
    let bb = s - a;
    let err = (a - (s - bb)) + (b - bb);
    if !s.is_finite() || err == 0.0 || s.to_bits() & 1 == 1 {
        return s as f32;
    }
    let away = (err > 0.0) == (s > 0.0);
    f64::from_bits(if away {
        s.to_bits() + 1
    } else {
        s.to_bits() - 1
    }) as f32
}

#[cfg(test)]
mod tests;
