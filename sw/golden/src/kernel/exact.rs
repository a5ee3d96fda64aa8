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

/// An operand's lines decoded and cut into slices, in buffers reused from block to block.
#[derive(Default)]
struct Sliced {
    /// Slice s of every line, `k` values per line: zero where a line has fewer slices or is
    /// not finite. Slice 0 is written over the decoded values themselves.
    slices: Vec<Vec<f64>>,
    /// Each line's facts.
    lines: Vec<Line>,
    /// The slices in use: the most any line needs.
    count: usize,
}

impl Sliced {
    /// Decodes `lines` lines of `k` words, word i of line l at `data[base + l·ls + i·es]`,
    /// and cuts them into slices of width `w`.
    fn fill(
        &mut self,
        data: &[Bits],
        (base, ls, es): (usize, usize, usize),
        (lines, k): (usize, usize),
        decode: &impl Fn(Bits) -> f64,
        w: i32,
    ) {
        if self.slices.is_empty() {
            self.slices.push(Vec::new());
        }
        let v = &mut self.slices[0];
        v.clear();
        if ls == 1 && es > 1 {
            // Lines interleaved in memory (a transposed operand): read the words in the
            // order they lie, each into its line's run.
            v.resize(lines * k, 0.0);
            for i in 0..k {
                let words = &data[base + i * es..base + i * es + lines];
                for (l, &x) in words.iter().enumerate() {
                    v[l * k + i] = decode(x);
                }
            }
        } else {
            for l in 0..lines {
                let at = base + l * ls;
                v.extend((0..k).map(|i| decode(data[at + i * es])));
            }
        }
        self.lines.clear();
        self.lines
            .extend(v.chunks(k.max(1)).map(|values| line(values, w)));
        self.count = count(&self.lines);
        self.split(k, w);
    }

    /// Cuts every finite line into its slices (slice 0 in place), zeroes the others.
    fn split(&mut self, k: usize, w: i32) {
        let count = self.count;
        while self.slices.len() < count {
            self.slices.push(Vec::new());
        }
        let (values, rest) = self.slices.split_at_mut(1);
        let values = &mut values[0];
        for extra in rest.iter_mut().take(count.saturating_sub(1)) {
            extra.clear();
            extra.resize(values.len(), 0.0);
        }
        for (i, l) in self.lines.iter().enumerate() {
            let line = &mut values[i * k..(i + 1) * k];
            let Line::Finite { top, slices, .. } = *l else {
                line.fill(0.0);
                continue;
            };
            if slices == 1 {
                // Every bit lies within the top slice: the values are it.
                continue;
            }
            for (kk, v) in line.iter_mut().enumerate() {
                let mut left = *v;
                for s in 0..slices {
                    let hi = trunc(left, top - (s as i32 + 1) * w + 1);
                    match s {
                        0 => *v = hi,
                        _ => rest[s - 1][i * k + kk] = hi,
                    }
                    left -= hi;
                }
                debug_assert_eq!(left, 0.0, "the slices hold every bit");
            }
        }
    }

    /// The slices in use.
    fn slices(&self) -> &[Vec<f64>] {
        &self.slices[..self.count]
    }
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
    // B by columns (line j is column j), once; A a block of rows at a time (below).
    let mut bs = Sliced::default();
    bs.fill(b.data, (0, b.cs, b.rs), (n, k), &decode, w);
    let (b_slices, cols) = (bs.slices(), &bs.lines);
    // Blocks of rows small enough that a block's decoded values and sums stay in cache
    // (about 2^16 elements), the buffers reused from block to block.
    let rb = (BLOCK_ELEMENTS / (k + n)).clamp(1, m);
    let mut c = vec![0.0f64; rb * n];
    let mut acc: Vec<i128> = Vec::new(); // only for more than one slice pair
    let mut a_block = Sliced::default();
    let mut out = Vec::with_capacity(m * n);
    for r0 in (0..m).step_by(rb) {
        let r1 = (r0 + rb).min(m);
        a_block.fill(a.data, (r0 * a.rs, a.rs, a.cs), (r1 - r0, k), &decode, w);
        let (a_slices, rows) = (a_block.slices(), &a_block.lines);
        let pairs = a_slices.len() * b_slices.len();
        let c = &mut c[..(r1 - r0) * n];
        if pairs > 1 {
            acc.clear();
            acc.resize((r1 - r0) * n, 0);
        }
        for sa_s in a_slices {
            for sb_t in b_slices {
                product(r1 - r0, k, n, sa_s, sb_t, c);
                if pairs > 1 {
                    add_units(&mut acc, c, rows, cols, lk);
                }
            }
        }
        for (i, row) in rows.iter().enumerate() {
            for (j, col) in cols.iter().enumerate() {
                let e = i * n + j;
                out.push(match (row, col, unit(row, col, lk)) {
                    (_, _, Some(u)) if pairs > 1 => x.read_exact(acc[e], u),
                    (_, _, Some(u)) => x.read_exact(to_units(c[e], u), u),
                    (Line::Zero, Line::Zero | Line::Finite { .. }, _)
                    | (Line::Finite { .. }, Line::Zero, _) => x.read_exact(0, 0),
                    _ => fallback(r0 + i, j),
                });
            }
        }
    }
    out
}

/// Rows of A and C per block: about this many elements of both.
pub(super) const BLOCK_ELEMENTS: usize = 1 << 16;

/// The maximum slice count of `lines`.
fn count(lines: &[Line]) -> usize {
    lines
        .iter()
        .map(|l| match l {
            Line::Finite { slices, .. } => *slices,
            _ => 0,
        })
        .max()
        .unwrap_or(0)
}

/// The unit 2^(L_i + M_j) of the element of `row` and `col` (sums of `⌈log2 K⌉ = lk`
/// bits more), or None: the reference's (a line not finite, or a sum too wide for i128).
#[inline]
fn unit(row: &Line, col: &Line, lk: i32) -> Option<i32> {
    match (*row, *col) {
        (Line::Finite { top, low, .. }, Line::Finite { top: u, low: l, .. }) => {
            (lk + (top - low) + (u - l) + 2 <= 127).then_some(low + l)
        }
        _ => None,
    }
}

/// C (rows × n, row-major) = A-slice (rows × k by rows) · B-slice (k × n by columns), exact.
fn product(rows: usize, k: usize, n: usize, a: &[f64], b: &[f64], c: &mut [f64]) {
    assert!(a.len() >= rows * k && b.len() >= k * n && c.len() >= rows * n);
    // SAFETY: A is rows×k with strides (k, 1), B is k×n held by columns (1, k), C is
    // rows×n with strides (n, 1); the asserts above say the slices hold those elements.
    unsafe {
        matrixmultiply::dgemm(
            rows,
            k,
            n,
            1.0,
            a.as_ptr(),
            k as isize,
            1,
            b.as_ptr(),
            1,
            k as isize,
            0.0,
            c.as_mut_ptr(),
            n as isize,
            1,
        );
    }
}

/// Adds each exact pair result of `c` into `acc` in its element's unit.
fn add_units(acc: &mut [i128], c: &[f64], rows: &[Line], cols: &[Line], lk: i32) {
    let n = cols.len();
    for (i, row) in rows.iter().enumerate() {
        for (j, col) in cols.iter().enumerate() {
            if let Some(u) = unit(row, col, lk) {
                acc[i * n + j] += to_units(c[i * n + j], u);
            }
        }
    }
}
