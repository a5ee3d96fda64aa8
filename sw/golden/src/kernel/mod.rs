//! Matrix-product kernels: C = A·B with every element bit-identical to
//! [`Calc::dot`](crate::Calc::dot) of its row and column, k = 0..K−1, in the same mode, at
//! the speed of the machine's floating-point unit.
//!
//! The per-element `Calc::dot` stays the definition ([`fn@reference`]); a kernel is a fast path
//! that must give the same words, and `kernel/tests.rs` holds each kernel to the reference on
//! random and corner matrices. [`matmul`] picks the kernel:
//!
//! - **exact modes** (`quire`: the posit quire, the float exact accumulator, fix's wide
//!   accumulator) go through [`exact`]: each operand is decoded once into an exact f64, split
//!   into slices of at most W bits so that every slice product sums exactly in f64 (Ozaki's
//!   error-free splitting), the slice pairs multiplied by `matrixmultiply`'s f64 GEMM, the
//!   exact pair sums gathered in an i128 per element and read out once by the family's own
//!   rule ([`ExactDot`]; for words of at most 8 bits by a table of where that rule steps
//!   from word to word, `readout`);
//! - the sequential modes (naive, Kahan: a rounding after every operation) go through the
//!   family's [`Calc::dots`](crate::Calc::dots): many outputs in lockstep (the frame
//!   `lockstep`: up to four lines of one side against 16 or 32 lanes of the other, for
//!   posits of at most 16 bits, LNS and floats on the binary32 path; a row at a time,
//!   `sum::rounded_dots`, otherwise), each output's operations those of its own dot product
//!   in its own order, so that the core overlaps independent chains;
//! - every element of an exact product whose row or column holds a special word (NaN, NaR,
//!   ∞) or whose exact sum would not fit the kernel's integer is computed by the reference.
//!
//! A family joins by answering [`Family::exact_dot`] in its own module: how a word reads as
//! an exact f64, how many products its accumulator sums before it could wrap, and how it
//! reads out an exact sum.

use crate::arith::Bits;
use crate::family::{with_calc, Calc, Family};
use crate::format::FormatError;
use crate::{AluOp, SumMode};
use std::cell::OnceCell;

pub mod elementwise;
pub mod exact;
pub(crate) mod lockstep;
pub(crate) mod readout;
#[cfg(test)]
mod tests;

/// A family's exact accumulation (mode `quire`) as the exact kernel sees it. Implemented in
/// each family's module beside its accumulator, so that the read-out is written once.
pub trait ExactDot: Sync {
    /// The value of word `w` as an f64, exactly; `None` for a word the kernel leaves to the
    /// family's own dot product (NaN, NaR, ∞). Every value the family returns here must be
    /// exact, and the products of two of them must be normal f64s.
    fn exact_f64(&self, w: Bits) -> Option<f64>;
    /// How many products the accumulator sums without any chance of wrapping; longer dot
    /// products go to the reference.
    fn max_terms(&self) -> u64;
    /// The accumulator's read-out of the exact sum `v`·2^`scale` (v = 0: the exact zero).
    fn read_exact(&self, v: i128, scale: i32) -> Bits;
    /// Whether the read-out of a sum of at least 2^125 units (of any power of two) depends
    /// only on which multiple of 2^64 units it is, or which two it lies strictly between:
    /// true of a rounding to nearest of at most 60 significant bits. The exact kernel then
    /// reads a sum too wide for an i128 from its bits from 2^64 units up and a sticky bit
    /// below them (rounding to odd) instead of leaving it to the reference. False (the
    /// default) keeps those sums the reference's.
    fn reads_wide_sums(&self) -> bool {
        false
    }
    /// The dot product of a row and a column where the specials decide it: `Some(word)`
    /// when some product is special (a NaN, NaR or ∞ operand) and the family's accumulator
    /// then reads out from the specials alone, whatever the finite products; `None` (the
    /// default) leaves the element to the family's own dot product. The kernel asks it of
    /// the elements it leaves to the reference, first; the kernel's tests hold it to the
    /// reference.
    fn special_dot(&self, a: &[Bits], b: &[Bits]) -> Option<Bits> {
        let _ = (a, b);
        None
    }
    /// The read-outs of exact sums held in f64s (the exact kernel's one-slice products),
    /// appended to `out`: each [`Self::read_exact`] of its value, as this default computes
    /// them. A family may override it with arithmetic on the f64s, held to this default by
    /// the kernel's tests (`read_values_are_read_exact`).
    fn read_values(&self, sums: &[f64], out: &mut Vec<Bits>) {
        out.extend(sums.iter().map(|&v| readout::read(self, v)));
    }
}

/// A finite f64 as an integer times a power of two, (0, 0) for either zero.
#[inline]
pub(crate) fn integer_and_scale(v: f64) -> (i128, i32) {
    if v == 0.0 {
        return (0, 0);
    }
    let bits = v.to_bits();
    let field = ((bits >> 52) & 0x7ff) as i32;
    let frac = (bits & ((1u64 << 52) - 1)) as i128;
    let (m, e) = if field == 0 {
        (frac, -1074)
    } else {
        (frac | 1 << 52, field - 1075)
    };
    (if v < 0.0 { -m } else { m }, e)
}

/// A matrix operand of a product: element (r, c) is `data[r·rs + c·cs]`, so a matrix, its
/// transpose and a block of rows or columns are all views of one slice.
#[derive(Clone, Copy, Debug)]
pub struct Operand<'a> {
    pub data: &'a [Bits],
    pub rows: usize,
    pub cols: usize,
    /// Row and column strides.
    pub rs: usize,
    pub cs: usize,
}

impl<'a> Operand<'a> {
    /// A row-major `rows` × `cols` matrix.
    pub fn row_major(data: &'a [Bits], rows: usize, cols: usize) -> Operand<'a> {
        assert_eq!(data.len(), rows * cols, "a {rows}x{cols} matrix");
        Operand {
            data,
            rows,
            cols,
            rs: cols,
            cs: 1,
        }
    }

    /// The transpose, read in place.
    pub fn t(self) -> Operand<'a> {
        Operand {
            rows: self.cols,
            cols: self.rows,
            rs: self.cs,
            cs: self.rs,
            ..self
        }
    }

    #[inline]
    pub fn at(&self, r: usize, c: usize) -> Bits {
        self.data[r * self.rs + c * self.cs]
    }

    /// Row r, copied.
    pub fn row(&self, r: usize) -> Vec<Bits> {
        (0..self.cols).map(|c| self.at(r, c)).collect()
    }

    /// Column c, copied.
    pub fn col(&self, c: usize) -> Vec<Bits> {
        (0..self.rows).map(|r| self.at(r, c)).collect()
    }

    /// Rows `r0..r1` as an operand.
    pub fn rows_range(&self, r0: usize, r1: usize) -> Operand<'a> {
        assert!(r0 <= r1 && r1 <= self.rows);
        let start = (r0 * self.rs).min(self.data.len());
        Operand {
            data: &self.data[start..],
            rows: r1 - r0,
            ..*self
        }
    }

    /// Columns `c0..c1` as an operand.
    pub fn cols_range(&self, c0: usize, c1: usize) -> Operand<'a> {
        assert!(c0 <= c1 && c1 <= self.cols);
        let start = (c0 * self.cs).min(self.data.len());
        Operand {
            data: &self.data[start..],
            cols: c1 - c0,
            ..*self
        }
    }
}

/// Checks that `a` (m×k) and `b` (k×n) can be multiplied.
fn check(a: &Operand, b: &Operand) -> Result<(), FormatError> {
    if a.cols != b.rows {
        return Err(FormatError(format!(
            "product of {}x{} by {}x{}: inner dimensions differ",
            a.rows, a.cols, b.rows, b.cols
        )));
    }
    Ok(())
}

/// Which side of an m×n product to cut when it is computed in parts (by threads, each part
/// a call of [`matmul`]): the rows of A or the columns of B. The words are the same whichever
/// is cut; this is the cut that shares the work evenly and repeats the least of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cut {
    Rows,
    Cols,
}

impl Cut {
    /// The longer side of an m×n product (the rows where there are as many).
    pub fn longer(m: usize, n: usize) -> Cut {
        if m >= n {
            Cut::Rows
        } else {
            Cut::Cols
        }
    }
}

/// The [`Cut`] of an m×n product in `mode` into `parts` parts.
///
/// - The exact kernel decodes the whole of B once per call and A a block of rows at a time:
///   each part repeats the side it does not cut, so the longer side is cut.
/// - The lockstep lanes run over the longer side, L (up to 32) lines at a time, against up
///   to `lockstep::ROWS` lines of the shorter. Where the longer side has only a block or
///   two of lanes per part, cutting it leaves them part-empty (25 lines are one block of 32
///   whole, and a block each cut in two, which costs as much), so the shorter side is cut
///   if it has a line for every part (LeNet-5's C1 weight gradient, 6×15,680×25 in lns:5:6:
///   0.31 s against 0.22 s an epoch on two threads, docs/perf.md). Elsewhere the longer.
pub fn cut(calc: &Calc, mode: SumMode, m: usize, n: usize, parts: usize) -> Cut {
    let longer = Cut::longer(m, n);
    let exact = mode == SumMode::Quire && calc.exact_dot().is_some();
    if exact || m.min(n) < parts || m.max(n) > FEW_LANES * parts {
        return longer;
    }
    match longer {
        Cut::Rows => Cut::Cols,
        Cut::Cols => Cut::Rows,
    }
}

/// Lines of the longer side per part below which [`cut`] keeps the lockstep lanes whole.
const FEW_LANES: usize = 64;

/// C = A·B (row-major m×n) in `mode`: every element equal to
/// `calc.dot(mode, row i of A, column j of B)`, by the fastest kernel that applies.
pub fn matmul(
    calc: &Calc,
    mode: SumMode,
    a: Operand,
    b: Operand,
) -> Result<Vec<Bits>, FormatError> {
    check(&a, &b)?;
    if a.rows == 0 || b.cols == 0 {
        return Ok(Vec::new());
    }
    if mode == SumMode::Quire {
        if let Some(x) = calc.exact_dot() {
            // The mode is the family's (a family without a quire has no exact kernel).
            // Each row and column copied once, when an element first needs it (a diverged
            // network sends whole rows and columns here).
            let rows: Vec<OnceCell<Vec<Bits>>> = (0..a.rows).map(|_| OnceCell::new()).collect();
            let cols: Vec<OnceCell<Vec<Bits>>> = (0..b.cols).map(|_| OnceCell::new()).collect();
            let fallback = |i: usize, j: usize| {
                let row = rows[i].get_or_init(|| a.row(i));
                let col = cols[j].get_or_init(|| b.col(j));
                x.special_dot(row, col).unwrap_or_else(|| {
                    calc.dot(mode, row, col)
                        .expect("the family offers mode quire")
                })
            };
            return Ok(match exact_values(calc, x) {
                Some(t) => exact::matmul(x, |w| decode(t, w), a, b, fallback),
                None => exact::matmul(x, |w| x.exact_f64(w).unwrap_or(f64::NAN), a, b, fallback),
            });
        }
    }
    // Every other mode: the family's `dots`, whose sequential sums run several independent
    // outputs in lockstep, each in its own order.
    let (mut a_copy, mut b_copy) = (Vec::new(), Vec::new());
    let (rows, cols) = (lines(a, &mut a_copy), lines(b.t(), &mut b_copy));
    calc.dots(mode, &rows, &cols)
}

/// `out[i]` = the ALU lane's `a[i]` op `b[i]` ([`alu::result`](crate::alu::result), which
/// stays the definition), for `a`, `b` and `out` of one length: +, −, · and ÷ of floats of at
/// most 16 bits through their elementwise kernels ([`elementwise::FloatKernel`], held to the
/// golden operations by its tests), of formats of at most 8 bits by table, then a family's
/// own fast path where it has one ([`Family::binop_lanes`]: fix's in i64), every other
/// operation and format element by element, the operation chosen once per slice.
pub fn lane_op(calc: &Calc, op: AluOp, a: &[Bits], b: &[Bits], out: &mut [Bits]) {
    assert!(
        a.len() == out.len() && b.len() == out.len(),
        "operands of one length"
    );
    let elem = match op {
        AluOp::Add => Some(elementwise::ElemOp::Add),
        AluOp::Sub => Some(elementwise::ElemOp::Sub),
        AluOp::Mul => Some(elementwise::ElemOp::Mul),
        AluOp::Div => Some(elementwise::ElemOp::Div),
        _ => None,
    };
    if let (Some(e), Calc::Float(f)) = (elem, calc) {
        if let Some(k) = elementwise::FloatKernel::of(*f) {
            return k.binop_words(e, a, b, out);
        }
    }
    if let (Some(e), Some(t)) = (elem, lane_tables(calc)) {
        let i = match e {
            elementwise::ElemOp::Add => 0,
            elementwise::ElemOp::Sub => 1,
            elementwise::ElemOp::Mul => 2,
            elementwise::ElemOp::Div => 3,
        };
        let (table, w) = (&t.0[i], calc.format().width());
        for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
            *o = match table.get(((x << w) | y) as usize) {
                Some(&r) if x >> w == 0 && y >> w == 0 => u64::from(r),
                _ => crate::alu::result(calc, op.code(), x, y, false, || x),
            };
        }
        return;
    }
    with_calc!(calc, f => family_lanes(f, calc, op, a, b, out));
}

/// [`lane_op`] of one family, the operation chosen once for the whole slice: each word is
/// still [`alu::result`](crate::alu::result)'s, which for these operations calls the same
/// [`Family`] method; the others go through `alu::result` itself.
fn family_lanes<F: Family>(
    f: &F,
    calc: &Calc,
    op: AluOp,
    a: &[Bits],
    b: &[Bits],
    out: &mut [Bits],
) {
    if f.binop_lanes(op, a, b, out) {
        return;
    }
    let pairs = out.iter_mut().zip(a.iter().zip(b));
    match op {
        AluOp::Add => pairs.for_each(|(o, (&x, &y))| *o = f.add(x, y)),
        AluOp::Sub => pairs.for_each(|(o, (&x, &y))| *o = f.sub(x, y)),
        AluOp::Mul => pairs.for_each(|(o, (&x, &y))| *o = f.mul(x, y)),
        AluOp::Max => pairs.for_each(|(o, (&x, &y))| *o = f.max(x, y)),
        AluOp::Min => pairs.for_each(|(o, (&x, &y))| *o = f.min(x, y)),
        _ => pairs
            .for_each(|(o, (&x, &y))| *o = crate::alu::result(calc, op.code(), x, y, false, || x)),
    }
}

/// Formats of at most this many bits take + − · ÷ from tables (4 × 2^16 bytes at 8 bits).
const LANE_TABLE_BITS: u32 = 8;

/// `alu::result` of + − · ÷ (in [`elementwise::ElemOp`]'s order) for every pair of words
/// x, y of one format, at x·2^width + y.
struct LaneTables([Vec<u8>; 4]);

/// The lane tables of `calc`'s format, built on first use, if it has at most
/// [`LANE_TABLE_BITS`] bits.
fn lane_tables(calc: &Calc) -> Option<&'static LaneTables> {
    let w = calc.format().width();
    (w <= LANE_TABLE_BITS).then(|| {
        crate::table::cached(calc.format(), || {
            let ops = [AluOp::Add, AluOp::Sub, AluOp::Mul, AluOp::Div];
            LaneTables(ops.map(|op| {
                (0..1u64 << (2 * w))
                    .map(|xy| {
                        let (x, y) = (xy >> w, xy & ((1 << w) - 1));
                        let r = crate::alu::result(calc, op.code(), x, y, false, || x);
                        u8::try_from(r).expect("a word of an 8-bit format")
                    })
                    .collect()
            }))
        })
    })
}

/// The rows of `m` as slices: where they are contiguous, `m`'s own; else `m` copied into
/// `copy` row by row (read in its storage order, each row a run of `copy`).
fn lines<'a>(m: Operand<'a>, copy: &'a mut Vec<Bits>) -> Vec<&'a [Bits]> {
    if m.cs == 1 && m.cols > 0 {
        return (0..m.rows)
            .map(|r| &m.data[r * m.rs..r * m.rs + m.cols])
            .collect();
    }
    copy.clear();
    copy.resize(m.rows * m.cols, 0);
    if m.cols > 0 {
        for (c, src) in (0..m.cols).map(|c| (c, c * m.cs)) {
            for (r, dst) in copy.chunks_exact_mut(m.cols).enumerate() {
                dst[c] = m.data[src + r * m.rs];
            }
        }
    }
    match m.cols {
        0 => vec![&[][..]; m.rows],
        n => copy.chunks_exact(n).collect(),
    }
}

/// Whether every one of `words` has an exact value in `calc`'s exact accumulator
/// (`ExactDot::exact_f64` is `Some`: no NaN, NaR or ∞), so that products of them sum
/// exactly; false for a family without one. Formats of at most 16 bits read the table of
/// values the exact kernel decodes by.
pub fn sums_exactly(calc: &Calc, words: &[Bits]) -> bool {
    let Some(x) = calc.exact_dot() else {
        return false;
    };
    match exact_values(calc, x) {
        Some(t) => words.iter().all(|&w| !decode(t, w).is_nan()),
        None => words.iter().all(|&w| x.exact_f64(w).is_some()),
    }
}

/// Formats up to this width decode through a table of every word's exact value.
const VALUE_TABLE_BITS: u32 = 16;

/// Every word's exact value, NaN for a special word (the exact kernel's decoding).
struct ExactValues(Vec<f64>);

/// The exact values of `calc`'s words, for formats of at most [`VALUE_TABLE_BITS`] bits.
fn exact_values(calc: &Calc, x: &dyn ExactDot) -> Option<&'static [f64]> {
    let f = calc.format();
    (f.width() <= VALUE_TABLE_BITS).then(|| {
        let t = crate::table::cached(f, || {
            ExactValues(
                (0..1u64 << f.width())
                    .map(|w| x.exact_f64(w).unwrap_or(f64::NAN))
                    .collect(),
            )
        });
        t.0.as_slice()
    })
}

/// The value of `w` from the table; a word beyond the format is special (the reference's).
#[inline]
fn decode(table: &[f64], w: Bits) -> f64 {
    table.get(w as usize).copied().unwrap_or(f64::NAN)
}

/// The definition: C = A·B (row-major m×n), element by element, each `Calc::dot` of its row
/// and column, k = 0..K−1 in order.
pub fn reference(
    calc: &Calc,
    mode: SumMode,
    a: Operand,
    b: Operand,
) -> Result<Vec<Bits>, FormatError> {
    check(&a, &b)?;
    let cols: Vec<Vec<Bits>> = (0..b.cols).map(|j| b.col(j)).collect();
    let mut out = Vec::with_capacity(a.rows * b.cols);
    for i in 0..a.rows {
        let row = a.row(i);
        for col in &cols {
            out.push(calc.dot(mode, &row, col)?);
        }
    }
    Ok(out)
}
