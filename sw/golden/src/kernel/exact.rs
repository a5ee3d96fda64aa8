//! The exact kernel: Σ a_ik·b_kj summed without rounding, by error-free splitting onto f64
//! GEMMs, then read out once per element by the family's accumulator rule.
//!
//! Each row of A (and column of B) is decoded into exact f64s. Its nonzero values lie
//! between bit positions L (the lowest set bit of any of them) and T (the highest). With
//! W = ⌊(53 − ⌈log2 K⌉)/2⌋, the row is cut into slices of W bit positions from T down
//! (every value split by truncation, so its slices carry its sign and add back to it).
//! Slice s of row i and slice t of column j are multiples of 2^(T_i − (s+1)W + 1) and
//! 2^(U_j − (t+1)W + 1) below 2^(T_i − sW + 1) and 2^(U_j − tW + 1), so each of the K slice
//! products is an integer of fewer than 2W bits in units of their product and any sum of
//! them has fewer than 53: f64 adds them without rounding in any order, and the GEMM's
//! result is exact. The pair results, all multiples of 2^(L_i + M_j), are added as integers
//! in an i128 per element (the whole sum is below 2^(⌈log2 K⌉ + T_i + U_j + 2)), which the
//! family reads out ([`ExactDot::read_exact`]).
//!
//! Elements the kernel does not take go to `fallback` (the reference): a row or column
//! holding a special word, one needing more than [`MAX_SLICES`] slices, and a sum that
//! would not fit the i128.

use super::{ExactDot, Operand};
use crate::arith::Bits;

/// At most this many slices per row or column; a wider one goes to the reference.
pub const MAX_SLICES: usize = 3;

/// Bits of an f64 significand.
const F64_BITS: i32 = 53;

/// What a row of A or a column of B holds.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Line {
    /// A special word (NaN, NaR, ∞): its elements are the reference's.
    Special,
    /// Only zeros.
    Zero,
    /// Nonzero values between bit positions `low` and `top`, cut into `slices` slices.
    Finite { top: i32, low: i32, slices: usize },
    /// More than [`MAX_SLICES`] slices: the reference's.
    Wide,
}

/// `v` with its bits below 2^b cleared (rounded toward zero to a multiple of 2^b).
#[inline]
fn trunc(v: f64, b: i32) -> f64 {
    if v == 0.0 {
        return 0.0;
    }
    let bits = v.to_bits();
    let e = ((bits >> 52) & 0x7ff) as i32 - 1023;
    if b > e {
        return 0.0;
    }
    let drop = b - (e - 52);
    if drop <= 0 {
        v
    } else {
        f64::from_bits(bits & !((1u64 << drop) - 1))
    }
}

/// The line of `values` (NaN marks a special word) at slice width `w`: one branch-free
/// pass over the bit patterns.
fn line(values: &[f64], w: i32) -> Line {
    const FRAC: u64 = (1u64 << 52) - 1;
    let (mut top, mut low, mut special) = (0u64, u64::MAX, false);
    for &v in values {
        let b = v.to_bits() & !(1u64 << 63);
        special |= b >= 0x7ff0_0000_0000_0000;
        // Biased exponents: a zero has 0 (below every normal value) and no lowest bit.
        let e = b >> 52;
        top = top.max(e);
        let l = e + u64::from(((b & FRAC) | (FRAC + 1)).trailing_zeros());
        low = low.min(if b == 0 { u64::MAX } else { l });
    }
    if special {
        return Line::Special;
    }
    if top == 0 {
        return Line::Zero;
    }
    let (top, low) = (top as i32 - 1023, low as i32 - 1075);
    let slices = (top - low + w) as usize / w as usize;
    if slices > MAX_SLICES {
        Line::Wide
    } else {
        Line::Finite { top, low, slices }
    }
}

/// Slices `0..count` of the lines (each `k` values of `values`): slice s is `lines.len()`
/// rows of k, zero where a line has fewer slices or is not finite.
fn slices(mut values: Vec<f64>, lines: &[Line], k: usize, count: usize, w: i32) -> Vec<Vec<f64>> {
    let finite = |l: &Line| matches!(l, Line::Finite { .. });
    if count == 1 {
        // Every finite line is its own one slice: keep the values, zero the others.
        for (line, l) in values.chunks_mut(k).zip(lines) {
            if !finite(l) {
                line.fill(0.0);
            }
        }
        return vec![values];
    }
    let mut out = vec![vec![0.0; values.len()]; count];
    for (i, l) in lines.iter().enumerate() {
        let Line::Finite { top, slices, .. } = *l else {
            continue;
        };
        for kk in i * k..(i + 1) * k {
            let mut rest = values[kk];
            for (s, slice) in out.iter_mut().take(slices).enumerate() {
                let hi = trunc(rest, top - (s as i32 + 1) * w + 1);
                slice[kk] = hi;
                rest -= hi;
            }
            debug_assert_eq!(rest, 0.0, "the slices hold every bit");
        }
    }
    out
}

/// The `lines` × `k` values of an operand, line by line (`at(line, i)` decoded), with
/// each line's facts at slice width `w`.
fn decoded(
    lines: usize,
    k: usize,
    at: impl Fn(usize, usize) -> Bits,
    decode: &impl Fn(Bits) -> f64,
    w: i32,
) -> (Vec<f64>, Vec<Line>) {
    let mut v = vec![0.0; lines * k];
    let mut facts = Vec::with_capacity(lines);
    for (l, out) in v.chunks_mut(k).enumerate() {
        for (i, o) in out.iter_mut().enumerate() {
            *o = decode(at(l, i));
        }
        facts.push(line(out, w));
    }
    (v, facts)
}

/// The exact f64 `c`, a multiple of 2^scale, as an integer in units of 2^scale (the caller
/// has checked that it fits).
#[inline]
fn to_units(c: f64, scale: i32) -> i128 {
    if c == 0.0 {
        return 0;
    }
    let bits = c.to_bits();
    let e = ((bits >> 52) & 0x7ff) as i32 - 1075;
    let mant = (bits & ((1u64 << 52) - 1)) | (1u64 << 52);
    let shift = e - scale;
    let m = if shift >= 0 {
        (mant as i128) << shift
    } else {
        debug_assert!(
            mant & ((1u64 << -shift) - 1) == 0,
            "{c} is a multiple of 2^{scale}"
        );
        (mant >> -shift) as i128
    };
    if c < 0.0 {
        -m
    } else {
        m
    }
}

/// C = A·B (row-major m×n), every element the family's exact dot product of its row and
/// column read out once; the elements the kernel does not take are `fallback(i, j)`.
/// `decode` gives a word's exact value, NaN for a special word.
pub fn matmul(
    x: &dyn ExactDot,
    decode: impl Fn(Bits) -> f64,
    a: Operand,
    b: Operand,
    fallback: impl Fn(usize, usize) -> Bits,
) -> Vec<Bits> {
    let (m, k, n) = (a.rows, a.cols, b.cols);
    if m == 0 || n == 0 {
        return Vec::new();
    }
    if k == 0 || k as u64 > x.max_terms() {
        return (0..m * n).map(|e| fallback(e / n, e % n)).collect();
    }
    let lk = (usize::BITS - (k - 1).leading_zeros()) as i32; // ⌈log2 K⌉
    let w = (F64_BITS - lk) / 2;
    if w < 1 {
        return (0..m * n).map(|e| fallback(e / n, e % n)).collect();
    }
    // A by rows and B by columns, each line k contiguous values.
    let (av, rows) = decoded(m, k, |i, c| a.data[i * a.rs + c * a.cs], &decode, w);
    let (bv, cols) = decoded(n, k, |j, r| b.data[r * b.rs + j * b.cs], &decode, w);
    let count = |ls: &[Line]| {
        ls.iter()
            .map(|l| match l {
                Line::Finite { slices, .. } => *slices,
                _ => 0,
            })
            .max()
            .unwrap_or(0)
    };
    let (sa, sb) = (count(&rows), count(&cols));
    let a_slices = slices(av, &rows, k, sa, w);
    let b_slices = slices(bv, &cols, k, sb, w);

    // Each element's unit 2^(L_i + M_j), or None: the reference's.
    let fits = |row: &Line, col: &Line| -> Option<i32> {
        match (*row, *col) {
            (Line::Finite { top, low, .. }, Line::Finite { top: u, low: l, .. }) => {
                (lk + (top - low) + (u - l) + 2 <= 127).then_some(low + l)
            }
            _ => None,
        }
    };
    let mut units: Vec<Option<i32>> = Vec::with_capacity(m * n);
    for row in &rows {
        for col in &cols {
            units.push(fits(row, col));
        }
    }
    let mut acc = vec![0i128; m * n];
    let mut c = vec![0.0f64; m * n];
    for sa_s in &a_slices {
        for sb_t in &b_slices {
            // SAFETY: A is m×k with strides (k, 1), B is k×n held by columns (1, k), C is
            // m×n with strides (n, 1); the three slices hold exactly those elements.
            unsafe {
                matrixmultiply::dgemm(
                    m,
                    k,
                    n,
                    1.0,
                    sa_s.as_ptr(),
                    k as isize,
                    1,
                    sb_t.as_ptr(),
                    1,
                    k as isize,
                    0.0,
                    c.as_mut_ptr(),
                    n as isize,
                    1,
                );
            }
            for ((s, &cv), u) in acc.iter_mut().zip(&c).zip(&units) {
                if let Some(u) = u {
                    *s += to_units(cv, *u);
                }
            }
        }
    }
    let mut out = Vec::with_capacity(m * n);
    for (i, row) in rows.iter().enumerate() {
        for (j, col) in cols.iter().enumerate() {
            let e = i * n + j;
            out.push(match (row, col, units[e]) {
                (_, _, Some(u)) => x.read_exact(acc[e], u),
                (Line::Zero, Line::Zero | Line::Finite { .. }, _)
                | (Line::Finite { .. }, Line::Zero, _) => x.read_exact(0, 0),
                _ => fallback(i, j),
            });
        }
    }
    out
}
