//! 1-bit quantization with error feedback, as seed 001 (Seide et al., *1-Bit SGD*, §3) defines
//! it, on words of any [`Format`] (f32 included), so that the training driver and the RTL
//! `quant1` unit share one rule. `docs/formats.md` ("`1bit`") states every rule in prose.
//!
//! For one column of gradient words g with residual words r (the quantization error carried
//! from the previous minibatch):
//! 1. v = g + r (the format's addition; without error feedback v = g and nothing is kept);
//! 2. bit = 1 if v ≥ 0 (zero and −0 included), 0 if v < 0 or v is NaN / NaR;
//! 3. the two reconstruction values are the means of v over each side: the side's words summed
//!    in row order with the [`SumMode`], divided by the integer count, the exact quotient rounded
//!    once to the format; a side without elements gets zero;
//! 4. the new residual is v − (its side's mean) (the format's subtraction).
//!
//! **Columns.** A weight matrix W of outputs × inputs is stored row-major (`W[o][i]` at
//! `o * inputs + i`, as `lpgen_train::machine::Mat`); its column i is `W[0..outputs][i]`: the
//! weights leaving input i, `outputs` words. This is the paper's column (j, ℓ) and CNTK's (the
//! reconstruction values are shared by the `rows` words of one column). A bias vector is one
//! column of `outputs` rows.
//!
//! **Transfer.** A quantized column is ⌈rows/32⌉ u32 words of bits, element i at bit i % 32
//! of word i / 32 (LSB first; padding bits zero), then the two values (`neg`, then `pos`),
//! each the word's ⌈width/8⌉ bytes, little-endian. A message of several columns is their
//! records in column order ([`Quantized::to_bytes`], [`message_bytes`]).
//!
//! **Integration** (data parallelism, §3.1; the transport is `lpgen-comm`): each rank
//! quantizes its whole gradient with its own residuals ([`Quantizer::matrix`]), sends the
//! columns of stripe j to rank j ([`Quantized::columns`], [`Quantized::to_bytes`]); the owner
//! decodes the K stripes ([`Quantized::from_bytes`]) and sums them unquantized in source-rank
//! order ([`Quantizer::sum_dequantized`]), post-processes, quantizes its stripe again with a
//! second residual of that stripe ([`Quantizer::matrix_columns`]) and all-gathers the result.
//!
//! ```
//! use lpgen_golden::onebit::Quantizer;
//! use lpgen_golden::{Format, SumMode, F32};
//! let q = Quantizer::new(Format::F32(F32), SumMode::Naive).unwrap();
//! let c = q.calc();
//! let g: Vec<u64> = [1.0, 3.0, -2.0, -4.0].iter().map(|&x| c.from_f64(x)).collect();
//! let mut r = vec![c.zero(); 4];
//! let mut bits = [0u32; 1];
//! let rec = q.column(&g, Some(&mut r), &mut bits);
//! assert_eq!(bits[0], 0b0011);
//! assert_eq!((c.to_f64(rec.neg), c.to_f64(rec.pos)), (-3.0, 2.0));
//! assert_eq!(r.iter().map(|&w| c.to_f64(w)).collect::<Vec<_>>(), [-1.0, 1.0, 1.0, -1.0]);
//! ```

use std::cmp::Ordering;
use std::ops::Range;

use num_bigint::BigUint;

use crate::arith::{Bits, Calc};
use crate::exact::{f64_ratio, Ratio};
use crate::format::{err, Format, FormatError};
use crate::lns::LnsFormat;
use crate::SumMode;

/// The two reconstruction values of a column: `neg` for bit 0, `pos` for bit 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Recon {
    pub neg: Bits,
    pub pos: Bits,
}

/// u32 words of bits for a column of `rows` elements.
pub fn words_per_column(rows: usize) -> usize {
    rows.div_ceil(32)
}

/// Bytes of one reconstruction value on the wire: the format's width in whole bytes.
pub fn value_bytes(format: Format) -> usize {
    (format.width() as usize).div_ceil(8)
}

/// Bytes of one quantized column: 4·⌈rows/32⌉ + 2·⌈width/8⌉.
pub fn column_bytes(format: Format, rows: usize) -> usize {
    4 * words_per_column(rows) + 2 * value_bytes(format)
}

/// Exact bytes of a quantized rows × cols matrix (or stripe of `cols` columns).
pub fn message_bytes(format: Format, rows: usize, cols: usize) -> usize {
    cols * column_bytes(format, rows)
}

/// Packs bits LSB first: bit i goes to bit i % 32 of word i / 32; padding bits are zero.
pub fn pack(bits: &[bool]) -> Vec<u32> {
    let mut words = vec![0u32; words_per_column(bits.len())];
    for (i, &b) in bits.iter().enumerate() {
        words[i / 32] |= (b as u32) << (i % 32);
    }
    words
}

/// The first `n` bits of `words` (LSB first), the inverse of [`pack`].
pub fn unpack(words: &[u32], n: usize) -> Vec<bool> {
    assert!(n <= 32 * words.len(), "{n} bits from {} words", words.len());
    (0..n).map(|i| words[i / 32] >> (i % 32) & 1 == 1).collect()
}

/// Quantized columns: their bits and reconstruction values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Quantized {
    pub rows: usize,
    pub cols: usize,
    /// Column c's bits are `bits[c * words_per_column(rows)..][..words_per_column(rows)]`.
    pub bits: Vec<u32>,
    pub recon: Vec<Recon>,
}

impl Quantized {
    /// The bit of element (row, col).
    pub fn bit(&self, row: usize, col: usize) -> bool {
        let w = self.bits[col * words_per_column(self.rows) + row / 32];
        w >> (row % 32) & 1 == 1
    }

    /// The reconstructed word of element (row, col).
    pub fn value(&self, row: usize, col: usize) -> Bits {
        let r = self.recon[col];
        if self.bit(row, col) {
            r.pos
        } else {
            r.neg
        }
    }

    /// Every reconstructed word, row-major (rows × cols).
    pub fn values(&self) -> Vec<Bits> {
        (0..self.rows)
            .flat_map(|row| (0..self.cols).map(move |col| self.value(row, col)))
            .collect()
    }

    /// All reconstructed words, row-major rows × cols.
    pub fn dequantize(&self) -> Vec<Bits> {
        let mut out = Vec::with_capacity(self.rows * self.cols);
        for row in 0..self.rows {
            out.extend((0..self.cols).map(|col| self.value(row, col)));
        }
        out
    }

    /// The columns of `range` (a stripe for one rank).
    pub fn columns(&self, range: Range<usize>) -> Quantized {
        let wpc = words_per_column(self.rows);
        Quantized {
            rows: self.rows,
            cols: range.len(),
            bits: self.bits[range.start * wpc..range.end * wpc].to_vec(),
            recon: self.recon[range].to_vec(),
        }
    }

    /// The transfer format: per column its bit words (u32, little-endian), then `neg` and
    /// `pos`, each in [`value_bytes`] little-endian bytes.
    pub fn to_bytes(&self, format: Format) -> Vec<u8> {
        let (wpc, vb) = (words_per_column(self.rows), value_bytes(format));
        let mut out = Vec::with_capacity(message_bytes(format, self.rows, self.cols));
        for (c, r) in self.recon.iter().enumerate() {
            for w in &self.bits[c * wpc..(c + 1) * wpc] {
                out.extend_from_slice(&w.to_le_bytes());
            }
            out.extend_from_slice(&r.neg.to_le_bytes()[..vb]);
            out.extend_from_slice(&r.pos.to_le_bytes()[..vb]);
        }
        out
    }

    /// Reads [`Quantized::to_bytes`]'s format back; refuses (one line) a wrong length, set
    /// padding bits, or a value with bits above the format's width.
    pub fn from_bytes(
        format: Format,
        rows: usize,
        cols: usize,
        bytes: &[u8],
    ) -> Result<Quantized, FormatError> {
        let expected = message_bytes(format, rows, cols);
        if bytes.len() != expected {
            return err(format!(
                "1-bit message of {} bytes where {rows} rows x {cols} columns of {format} take {expected}",
                bytes.len()
            ));
        }
        let (wpc, vb, width) = (words_per_column(rows), value_bytes(format), format.width());
        let padding = match rows % 32 {
            0 => 0,
            used => u32::MAX << used,
        };
        let mut q = Quantized {
            rows,
            cols,
            bits: Vec::with_capacity(cols * wpc),
            recon: Vec::with_capacity(cols),
        };
        let word = |b: &[u8]| {
            let mut le = [0u8; 8];
            le[..b.len()].copy_from_slice(b);
            u64::from_le_bytes(le)
        };
        for (c, rec) in bytes.chunks_exact(column_bytes(format, rows)).enumerate() {
            let (bit_bytes, values) = rec.split_at(4 * wpc);
            q.bits.extend(
                bit_bytes
                    .chunks_exact(4)
                    .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]])),
            );
            if wpc > 0 && q.bits[q.bits.len() - 1] & padding != 0 {
                return err(format!(
                    "1-bit message: column {c} has padding bits set beyond row {rows}"
                ));
            }
            let (neg, pos) = (word(&values[..vb]), word(&values[vb..]));
            if width < 64 && (neg | pos) >> width != 0 {
                return err(format!(
                    "1-bit message: column {c} has a reconstruction value wider than the {width} bits of {format}"
                ));
            }
            q.recon.push(Recon { neg, pos });
        }
        Ok(q)
    }
}

/// The quantizer of one format and summation mode.
#[derive(Clone, Copy, Debug)]
pub struct Quantizer {
    calc: Calc,
    mode: SumMode,
}

impl Quantizer {
    /// Refuses (one line) a mode the format cannot sum in (quire needs posit or fix).
    pub fn new(format: Format, mode: SumMode) -> Result<Quantizer, FormatError> {
        let calc = format.calc();
        calc.sum(mode, &[])?;
        Ok(Quantizer { calc, mode })
    }

    pub fn calc(&self) -> &Calc {
        &self.calc
    }

    pub fn mode(&self) -> SumMode {
        self.mode
    }

    /// Is v on the bit-1 side: v ≥ 0 (zero and −0 included); NaN and NaR are not.
    pub fn is_pos(&self, v: Bits) -> bool {
        !self.calc.is_nan(v) && self.calc.cmp(v, self.calc.zero()) != Some(Ordering::Less)
    }

    /// sum / count, the exact quotient rounded once to the format (zero for count 0).
    pub fn mean(&self, sum: Bits, count: usize) -> Bits {
        let c = &self.calc;
        if count == 0 {
            return c.zero();
        }
        if c.is_nan(sum) || count == 1 {
            return sum;
        }
        if let Calc::Lns(l) = c {
            return lns_div_count(l.fmt, sum, count);
        }
        let s = c.to_f64(sum); // exact for posit, fix and f32
        if !s.is_finite() || s == 0.0 {
            return sum; // zero, and f32 ±∞: divided by a count they stay as they are
        }
        // Where the count is a word of the format, the format's division is correctly rounded.
        let n = c.from_f64(count as f64);
        if c.to_f64(n) == count as f64 {
            return c.div(sum, n);
        }
        let (num, den) = f64_ratio(s);
        c.from_ratio(&Ratio {
            neg: s < 0.0,
            num,
            den: den * BigUint::from(count),
        })
    }

    /// Quantizes one column of gradient words `g`. With `residual` (error feedback) v = g + r
    /// and r becomes v − reconstruction; without, v = g. `bits` (⌈rows/32⌉ words) receives the
    /// packed bits, padding zero.
    pub fn column(&self, g: &[Bits], residual: Option<&mut [Bits]>, bits: &mut [u32]) -> Recon {
        let mut scratch = Scratch::default();
        self.column_strided(g.len(), |i| g[i], residual, 1, bits, &mut scratch)
    }

    /// Quantizes every column of the row-major rows × cols matrix `g` (see the module docs for
    /// which dimension is a column). `residual`, if given, has the same shape and is updated.
    pub fn matrix(
        &self,
        g: &[Bits],
        rows: usize,
        cols: usize,
        residual: Option<&mut [Bits]>,
    ) -> Quantized {
        self.matrix_columns(g, rows, cols, 0..cols, residual)
    }

    /// Quantizes the columns `range` of the row-major rows × cols matrix `g` (a rank's stripe);
    /// only those columns of `residual` (same shape as `g`) are read and updated.
    pub fn matrix_columns(
        &self,
        g: &[Bits],
        rows: usize,
        cols: usize,
        range: Range<usize>,
        mut residual: Option<&mut [Bits]>,
    ) -> Quantized {
        assert_eq!(g.len(), rows * cols, "matrix of {rows} x {cols}");
        assert!(range.end <= cols, "columns {range:?} of {cols}");
        if let Some(r) = residual.as_deref() {
            assert_eq!(r.len(), g.len(), "residual shape");
        }
        let wpc = words_per_column(rows);
        let mut q = Quantized {
            rows,
            cols: range.len(),
            bits: vec![0; range.len() * wpc],
            recon: Vec::with_capacity(range.len()),
        };
        let mut scratch = Scratch::default();
        for (k, col) in range.enumerate() {
            let bits = &mut q.bits[k * wpc..(k + 1) * wpc];
            // The column's residual words are strided in the row-major residual: offset it.
            let r = residual.as_deref_mut().map(|r| &mut r[col..]);
            let rec = self.column_strided(rows, |i| g[i * cols + col], r, cols, bits, &mut scratch);
            q.recon.push(rec);
        }
        q
    }

    /// The aggregation of §3.1: element-wise `Σ_k parts[k]` (dequantized) in the sum mode, k in
    /// source-rank order 0..K−1. All parts must have one shape; the result is row-major.
    pub fn sum_dequantized(&self, parts: &[Quantized]) -> Vec<Bits> {
        let Some(first) = parts.first() else {
            return Vec::new();
        };
        for p in parts {
            assert_eq!((p.rows, p.cols), (first.rows, first.cols), "part shapes");
        }
        let mut terms = vec![0; parts.len()];
        // A posit quire sums as a dot product with ones (as Calc::sum does): make them once.
        let ones = vec![self.calc.one(); parts.len()];
        let posit_quire = self.mode == SumMode::Quire && matches!(self.calc, Calc::Posit(_));
        let mut out = Vec::with_capacity(first.rows * first.cols);
        for row in 0..first.rows {
            for col in 0..first.cols {
                for (t, p) in terms.iter_mut().zip(parts) {
                    *t = p.value(row, col);
                }
                out.push(
                    if posit_quire {
                        self.calc.dot(SumMode::Quire, &terms, &ones)
                    } else {
                        self.calc.sum(self.mode, &terms)
                    }
                    .expect("mode checked in new"),
                );
            }
        }
        out
    }

    fn sum(&self, xs: &[Bits]) -> Bits {
        self.calc.sum(self.mode, xs).expect("mode checked in new")
    }

    /// The one implementation: element i of the column is `get(i)`, its residual
    /// `residual[i * stride]`.
    fn column_strided(
        &self,
        rows: usize,
        get: impl Fn(usize) -> Bits,
        residual: Option<&mut [Bits]>,
        stride: usize,
        bits: &mut [u32],
        s: &mut Scratch,
    ) -> Recon {
        assert_eq!(
            bits.len(),
            words_per_column(rows),
            "bit words for {rows} rows"
        );
        let c = &self.calc;
        s.v.clear();
        s.pos.clear();
        s.neg.clear();
        bits.fill(0);
        for i in 0..rows {
            let v = match residual.as_deref() {
                Some(r) => c.add(get(i), r[i * stride]),
                None => get(i),
            };
            s.v.push(v);
            if self.is_pos(v) {
                bits[i / 32] |= 1 << (i % 32);
                s.pos.push(v);
            } else {
                s.neg.push(v);
            }
        }
        let rec = Recon {
            neg: self.mean(self.sum(&s.neg), s.neg.len()),
            pos: self.mean(self.sum(&s.pos), s.pos.len()),
        };
        if let Some(r) = residual {
            for (i, &v) in s.v.iter().enumerate() {
                let q = if bits[i / 32] >> (i % 32) & 1 == 1 {
                    rec.pos
                } else {
                    rec.neg
                };
                r[i * stride] = c.sub(v, q);
            }
        }
        rec
    }
}

/// Buffers reused across the columns of a matrix.
#[derive(Default)]
struct Scratch {
    v: Vec<Bits>,
    pos: Vec<Bits>,
    neg: Vec<Bits>,
}

/// LNS sum / count: the code of the exact quotient is c_sum − 2^F·log2(count) rounded, and as
/// c_sum is an integer that is c_sum − round(2^F·log2 count) (no ties: the log is irrational
/// unless count is a power of two, then exact). The count's code comes from the widest LNS of
/// the same F, so it never saturates; the result saturates and flushes as division does.
fn lns_div_count(f: LnsFormat, sum: Bits, count: usize) -> Bits {
    let (neg, code) = f.unpack(sum);
    if code == f.code_reserved() {
        return sum; // zero or NaN
    }
    let wide = LnsFormat::new(crate::lns::MAX_INT_BITS, f.frac_bits).expect("valid LNS");
    let (_, count_code) = wide.unpack(wide.from_f64(count as f64));
    let q = code as i64 - count_code as i64;
    if q > f.code_max() as i64 {
        f.pack(neg, f.code_max())
    } else if q < f.code_min() as i64 {
        f.zero()
    } else {
        f.pack(neg, q as i32)
    }
}
