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
//! A sum that would not fit the i128 (its bound past 2^127 units) is gathered in two
//! (`Wide`) where the family reads such sums from their top bits and a sticky bit
//! ([`ExactDot::reads_wide_sums`]: floats' rounding to nearest).
//!
//! Elements the kernel does not take go to `fallback` (the reference): a row or column
//! holding a special word, one needing more than [`MAX_SLICES`] slices, and a sum too wide
//! for the i128 that the family does not read from a sticky bit (or past [`WIDE_BITS`]).

use super::{ExactDot, Operand};
use crate::arith::Bits;

/// At most this many slices per row or column; a wider one goes to the reference.
pub const MAX_SLICES: usize = 4;

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

/// `v` with its bits below 2^b cleared (rounded toward zero to a multiple of 2^b): the
/// definition, which the kernel computes by [`trunc_fast`].
#[cfg(test)]
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

/// `trunc` without a branch (held to it by `tests::trunc_fast_is_trunc`): the bits below
/// 2^b cleared by a mask, every bit (the sign too) where the value lies below 2^b or is a
/// zero.
#[inline(always)]
fn trunc_fast(v: f64, b: i32) -> f64 {
    let bits = v.to_bits();
    let e = ((bits >> 52) & 0x7ff) as i32 - 1023;
    let drop = (b - (e - 52)).max(0);
    let mask = if drop > 52 || bits << 1 == 0 {
        0
    } else {
        u64::MAX << drop
    };
    f64::from_bits(bits & mask)
}

/// `slice` = each remainder of `left` cut at 2^b (`trunc`), taken away from it (exactly);
/// compiled for AVX-512 where the machine has it.
fn cut_off(slice: &mut [f64], left: &mut [f64], b: i32) {
    #[inline(always)]
    fn by(slice: &mut [f64], left: &mut [f64], b: i32) {
        for (hi, l) in slice.iter_mut().zip(left.iter_mut()) {
            *hi = trunc_fast(*l, b);
            *l -= *hi;
        }
    }
    #[cfg(target_arch = "x86_64")]
    if super::lockstep::avx512() {
        #[target_feature(enable = "avx512f,avx512dq")]
        unsafe fn avx512(slice: &mut [f64], left: &mut [f64], b: i32) {
            by(slice, left, b)
        }
        // SAFETY: the CPU has AVX-512 F and DQ (checked just above).
        return unsafe { avx512(slice, left, b) };
    }
    by(slice, left, b)
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

/// [`fn@line`] by a pass the compiler vectorizes (no `trailing_zeros`): the largest bit pattern
/// and the smallest lowest-set-bit value (|v| minus |v| with its last significand bit
/// cleared, or |v| itself for a power of two, as f64 bits), their exponents read once at the
/// end. The same line as [`fn@line`], held to it by `tests::line_fast_is_line`; a line whose
/// lowest bit falls below 2^−1022 (an f64 subnormal's among them) is left to [`fn@line`].
#[inline(always)]
fn line_by_values(values: &[f64], w: i32) -> Line {
    const FRAC: u64 = (1u64 << 52) - 1;
    const INF: u64 = 0x7ff0_0000_0000_0000;
    let (mut max, mut min_lsb) = (0u64, u64::MAX);
    let mut special = false;
    for &v in values {
        let b = v.to_bits() & !(1u64 << 63);
        special |= b >= INF;
        max = max.max(b);
        // The lowest set bit's value: b minus b with its last significand bit cleared, as
        // f64s; b itself for a power of two; +inf (as bits) for zero.
        let cleared = b & (b.wrapping_sub(1));
        let low = f64::from_bits(b) - f64::from_bits(cleared);
        let low = if b & FRAC == 0 { b } else { low.to_bits() };
        let low = if b == 0 { u64::MAX } else { low };
        min_lsb = min_lsb.min(low);
    }
    if special {
        return Line::Special;
    }
    // A lowest bit below 2^−1022 (an f64 subnormal's among them): the exponent of its value
    // does not say where it lies.
    if max != 0 && min_lsb <= FRAC {
        return line(values, w);
    }
    if max == 0 {
        return Line::Zero;
    }
    let (top, low) = ((max >> 52) as i32 - 1023, (min_lsb >> 52) as i32 - 1023);
    let slices = (top - low + w) as usize / w as usize;
    if slices > MAX_SLICES {
        Line::Wide
    } else {
        Line::Finite { top, low, slices }
    }
}

/// [`line_by_values`] compiled for the widest vector unit the machine has (found at run
/// time): AVX-512, whose 64-bit lanes have max and min (the fix:7:8 and bf16 exact LeNet-5
/// epochs 0.95× the time of AVX2's), or AVX2 (a tenth of those epochs against the portable
/// code; docs/perf.md).
fn line_fast(values: &[f64], w: i32) -> Line {
    #[cfg(target_arch = "x86_64")]
    {
        if super::lockstep::avx512() {
            // SAFETY: the CPU has AVX-512 F and DQ (checked just above).
            return unsafe { compiled::avx512(values, w) };
        }
        if std::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2 (checked just above).
            return unsafe { compiled::avx2(values, w) };
        }
    }
    line_by_values(values, w)
}

/// [`line_by_values`] compiled for each instruction set (the same code: the compiler's lanes).
#[cfg(target_arch = "x86_64")]
mod compiled {
    use super::{line_by_values, Line};

    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn avx2(values: &[f64], w: i32) -> Line {
        line_by_values(values, w)
    }

    #[target_feature(enable = "avx512f,avx512dq")]
    pub(super) unsafe fn avx512(values: &[f64], w: i32) -> Line {
        line_by_values(values, w)
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
            .extend(v.chunks(k.max(1)).map(|values| line_fast(values, w)));
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
            // Slice by slice from the top: the line's remainders, which wait in the last
            // slice, cut at the slice's lowest bit; what is cut off is the slice, and what is
            // left at the end the last slice.
            let (last, between) = rest[..slices - 1].split_last_mut().expect("two slices");
            let left = &mut last[i * k..(i + 1) * k];
            left.copy_from_slice(line);
            for s in 0..slices - 1 {
                let b = top - (s as i32 + 1) * w + 1;
                match s {
                    0 => cut_off(line, left, b),
                    _ => cut_off(&mut between[s - 1][i * k..(i + 1) * k], left, b),
                }
            }
            debug_assert!(
                (left.iter()).all(|&l| trunc_fast(l, top - slices as i32 * w + 1) == l),
                "the last slice holds every bit left"
            );
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
    // Blocks of rows (`block_rows`), the buffers reused from block to block.
    let rb = block_rows(k, n).min(m);
    let mut c = vec![0.0f64; rb * n];
    let mut acc: Vec<i128> = Vec::new(); // only for more than one slice pair
    let wide_ok = x.reads_wide_sums();
    let mut wide: Vec<Wide> = Vec::new(); // the same, for sums too wide for `acc`
    let mut a_block = Sliced::default();
    let mut out = Vec::with_capacity(m * n);
    for r0 in (0..m).step_by(rb) {
        let r1 = (r0 + rb).min(m);
        a_block.fill(a.data, (r0 * a.rs, a.rs, a.cs), (r1 - r0, k), &decode, w);
        let (a_slices, rows) = (a_block.slices(), &a_block.lines);
        let pairs = a_slices.len() * b_slices.len();
        let c = &mut c[..(r1 - r0) * n];
        wide.clear();
        if pairs > 1 {
            acc.clear();
            acc.resize((r1 - r0) * n, 0);
            if wide_ok {
                wide.resize((r1 - r0) * n, Wide::default());
            }
        }
        for sa_s in a_slices {
            for sb_t in b_slices {
                product(r1 - r0, k, n, sa_s, sb_t, c);
                if pairs > 1 {
                    add_units(&mut acc, &mut wide, c, rows, cols, lk);
                }
            }
        }
        let ordinary = |l: &Line| matches!(l, Line::Finite { .. } | Line::Zero);
        if pairs == 1 && rows.iter().chain(cols).all(ordinary) {
            // One slice pair and no line for the reference: each sum is the GEMM's f64,
            // exactly (a zero line's sums are zeros).
            x.read_values(c, &mut out);
            continue;
        }
        for (i, row) in rows.iter().enumerate() {
            for (j, col) in cols.iter().enumerate() {
                let e = i * n + j;
                out.push(match (row, col, unit(row, col, lk)) {
                    (_, _, Some(u)) if pairs > 1 => x.read_exact(acc[e], u),
                    (_, _, Some(u)) => x.read_exact(to_units(c[e], u), u),
                    (_, _, None) if !wide.is_empty() && wide_unit(row, col, lk).is_some() => {
                        let u = wide_unit(row, col, lk).expect("checked");
                        let (v, above) = wide[e].read();
                        x.read_exact(v, u + above)
                    }
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
const BLOCK_ELEMENTS: usize = 1 << 16;

/// Rows of A and C per block, at least this many: each block's GEMMs pack B again (k·n values
/// per slice pair), which fewer rows do not pay for. LeNet-5's C1 weight gradient (6 × 15,680
/// × 25, where [`BLOCK_ELEMENTS`] alone gives blocks of 4 rows) ran about 1.5× faster in one
/// block, and 64 × 15,680 × 150 2.4–4× faster in blocks of 32 rows than of 4 (docs/perf.md,
/// thirty-sixth session).
const MIN_BLOCK_ROWS: usize = 32;

/// The rows of A in a block of a product of depth `k` and `n` columns: few enough that the
/// block's decoded values and sums stay in cache (about [`BLOCK_ELEMENTS`]), but at least
/// [`MIN_BLOCK_ROWS`].
pub(super) fn block_rows(k: usize, n: usize) -> usize {
    (BLOCK_ELEMENTS / (k + n).max(1)).max(MIN_BLOCK_ROWS)
}

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

/// Adds each exact pair result of `c` into `acc` in its element's unit, or into `wide`
/// (where it is not empty) for an element whose sum is too wide for `acc`.
fn add_units(
    acc: &mut [i128],
    wide: &mut [Wide],
    c: &[f64],
    rows: &[Line],
    cols: &[Line],
    lk: i32,
) {
    let n = cols.len();
    for (i, row) in rows.iter().enumerate() {
        for (j, col) in cols.iter().enumerate() {
            let e = i * n + j;
            match unit(row, col, lk) {
                Some(u) => acc[e] += to_units(c[e], u),
                None if !wide.is_empty() => {
                    if let Some(u) = wide_unit(row, col, lk) {
                        wide[e].add(c[e], u);
                    }
                }
                None => {}
            }
        }
    }
}

/// Bits of the widest sum `Wide` gathers (with four to spare for the carries of up to
/// [`MAX_SLICES`]² pair results, each below the sum's bound).
pub const WIDE_BITS: i32 = 186;

/// The unit of an element whose sum is too wide for an i128 but not for [`Wide`] (both lines
/// finite, the bound at most [`WIDE_BITS`]), or None.
#[inline]
fn wide_unit(row: &Line, col: &Line, lk: i32) -> Option<i32> {
    match (*row, *col) {
        (Line::Finite { top, low, .. }, Line::Finite { top: u, low: l, .. }) => {
            (lk + (top - low) + (u - l) + 2 <= WIDE_BITS).then_some(low + l)
        }
        _ => None,
    }
}

/// An exact sum in units of 2^unit too wide for one i128: hi·2^64 + lo, lo kept in
/// [0, 2^64) (so hi carries the sign).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Wide {
    hi: i128,
    lo: i128,
}

impl Wide {
    /// Adds the exact f64 `c`, a multiple of 2^unit below 2^(unit + WIDE_BITS).
    #[inline]
    fn add(&mut self, c: f64, unit: i32) {
        let (m, e) = super::integer_and_scale(c);
        if m == 0 {
            return;
        }
        // m·2^e with m's 53 bits counted from its lowest place, which may lie below the
        // unit (the bits there are zero).
        let (m, d) = match e - unit {
            d if d < 0 => {
                debug_assert!(m & ((1 << -d) - 1) == 0, "{c} is a multiple of 2^{unit}");
                (m >> -d, 0)
            }
            d => (m, d),
        };
        debug_assert!(d < WIDE_BITS, "{c} below 2^({unit} + WIDE_BITS)");
        if d < 64 {
            self.lo += m << d;
        } else {
            self.hi += m << (d - 64);
        }
        self.hi += self.lo >> 64;
        self.lo &= (1 << 64) - 1;
    }

    /// The sum as an i128 and the power of two above the unit it is counted in: exactly
    /// where it fits in 126 bits; otherwise its bits from 2^64 up, doubled, with a sticky
    /// last bit set where anything below 2^64 is (round to odd: the sum lies strictly
    /// between the two multiples of 2^64 it is read between, as the sum itself does).
    fn read(&self) -> (i128, i32) {
        if (-(1 << 61)..1 << 61).contains(&self.hi) {
            return ((self.hi << 64) + self.lo, 0);
        }
        ((self.hi << 1) | i128::from(self.lo != 0), 63)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The branch-free truncation is [`trunc`]'s on zeros of both signs, f64 subnormals,
    /// normal values of every binade around the cut, and cuts above, within and below each.
    #[test]
    fn trunc_fast_is_trunc() {
        let mut r = crate::test_words(12);
        let mut values = vec![0.0, -0.0, f64::from_bits(1), -f64::MIN_POSITIVE, f64::MAX];
        for _ in 0..20_000 {
            let x = r();
            let e = (x >> 52) as i32 % 200 - 100;
            let v = f64::from_bits(x & ((1 << 52) - 1) | 1023u64 << 52) * 2f64.powi(e);
            values.push(if x & 1 == 1 { -v } else { v });
        }
        for &v in &values {
            let e = ((v.to_bits() >> 52) & 0x7ff) as i32 - 1023;
            for b in (e - 60..e + 3).chain([-1100, -1074, 0, 1100]) {
                let (got, want) = (trunc_fast(v, b), trunc(v, b));
                assert_eq!(got.to_bits(), want.to_bits(), "{v:e} at 2^{b}");
            }
        }
    }

    /// The vectorized line facts are [`line`]'s on lines of every kind: exact values of
    /// narrow formats (zeros, powers of two, signs), NaN and ±∞, f64 subnormals, values whose
    /// lowest bit lies below 2^−1022, lines of 1 to 70 values (not a multiple of any vector
    /// width), at every slice width the kernel uses.
    #[test]
    fn line_fast_is_line() {
        let mut r = crate::test_words(11);
        let specials = [
            0.0,
            -0.0,
            f64::NAN,
            f64::INFINITY,
            -f64::INFINITY,
            f64::from_bits(1),
            f64::from_bits(0x000f_ffff_ffff_ffff),
            f64::MIN_POSITIVE,
            f64::MIN_POSITIVE * 1.5,
            2f64.powi(-1000) * (1.0 + 2f64.powi(-40)),
            2f64.powi(-1020) * (1.0 + 2f64.powi(-3)),
            f64::MAX,
            1.0,
            -3.0,
        ];
        let mut lines = 0;
        for len in 1..=70 {
            for round in 0..60 {
                let values: Vec<f64> = (0..len)
                    .map(|_| {
                        let x = r();
                        match (round % 4, x % 23) {
                            (0, 0) => specials[(x >> 8) as usize % specials.len()],
                            (1, _) => 0.0,
                            (_, 1..=4) => 0.0,
                            _ => {
                                let sig = (x >> 12) % 256;
                                let e = ((x >> 40) % 60) as i32 - 30 - 10 * (round % 3);
                                let v = sig as f64 * 2f64.powi(e);
                                if x & 1 == 1 {
                                    -v
                                } else {
                                    v
                                }
                            }
                        }
                    })
                    .collect();
                for w in [1, 2, 7, 12, 20, 24, 26] {
                    let want = line(&values, w);
                    assert_eq!(line_fast(&values, w), want, "{values:?} at {w}");
                    assert_eq!(line_by_values(&values, w), want, "{values:?}");
                    #[cfg(target_arch = "x86_64")]
                    {
                        // SAFETY (both): each runs only where the CPU has its features.
                        if std::is_x86_feature_detected!("avx2") {
                            let avx2 = unsafe { compiled::avx2(&values, w) };
                            assert_eq!(avx2, want, "AVX2: {values:?} at {w}");
                        }
                        if super::super::lockstep::avx512() {
                            let avx512 = unsafe { compiled::avx512(&values, w) };
                            assert_eq!(avx512, want, "AVX-512: {values:?} at {w}");
                        }
                    }
                }
                lines += 1;
            }
        }
        assert_eq!(lines, 70 * 60);
    }
}
