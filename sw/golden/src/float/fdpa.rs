//! `fdpa:L:F:RHO`: the fused dot-product-add of GPU matrix units (issue 49, after MMA-Sim,
//! arXiv 2511.10909), D = Σ a_k·b_k + C on float operands with a binary32 (or binary16)
//! output word.
//!
//! The k are taken in chunks of L from k = 0; each chunk sets C ← step(chunk, C):
//!
//! 1. every operand is s·2^e with 1 ≤ |s| < 2 (a subnormal at its format's smallest normal
//!    exponent, s below 1); a product's term is s_a·s_b at e_a + e_b, C one more term, and a
//!    term whose s is 0 stands at e_zero (−133 for a binary32 output, −21 for binary16);
//! 2. e_max is the largest exponent of the chunk's terms, and each term is truncated toward
//!    zero to F fraction bits below 2^e_max;
//! 3. the truncated terms are summed exactly and the sum rounded once by RHO (`rz-f32`,
//!    `rz-e8m13`, `rne-f16`); NaN and ∞ propagate as in IEEE, a NaN result is 0x7FFFFFFF
//!    (0x7FFF), a −0 result +0.
//!
//! The presets name the chunking of five GPU generations per operand format, and
//! `:promoteN` adds DeepSeek-V3's promotion: every N products, the chunked result from
//! C = 0 is added into a binary32 accumulator rounded to nearest even. K = 0 leaves C as it
//! is. docs/formats.md ("fdpa") states the same rules.

use std::fmt;
use std::ops::Range;

use super::{Dy, FloatFormat, Val};
use crate::arith::Bits;
use crate::family_trait::Family;
use crate::format::{err, FormatError};
use round::{nan_of, round, shift_trunc};

/// The rounding of a chunk's sum (RHO).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Rho {
    /// Toward zero to binary32, with subnormals.
    RzF32,
    /// Toward zero to 13 fraction bits in binary32's exponent range, written as binary32.
    RzE8m13,
    /// To nearest even binary16.
    RneF16,
}

impl Rho {
    pub const ALL: [Rho; 3] = [Rho::RzF32, Rho::RzE8m13, Rho::RneF16];

    /// As the mode string names it.
    pub fn name(self) -> &'static str {
        match self {
            Rho::RzF32 => "rz-f32",
            Rho::RzE8m13 => "rz-e8m13",
            Rho::RneF16 => "rne-f16",
        }
    }

    /// The format of the output word (and of C): binary32 or binary16.
    pub fn output(self) -> FloatFormat {
        match self {
            Rho::RzF32 | Rho::RzE8m13 => BINARY32,
            Rho::RneF16 => BINARY16,
        }
    }

    /// The exponent of a term whose significand is 0.
    pub fn e_zero(self) -> i64 {
        match self {
            Rho::RzF32 | Rho::RzE8m13 => -133,
            Rho::RneF16 => -21,
        }
    }

    /// The fraction bits the rounding keeps toward zero in binary32's range (`None`: nearest
    /// even binary16).
    fn rz_bits(self) -> Option<i64> {
        match self {
            Rho::RzF32 => Some(23),
            Rho::RzE8m13 => Some(13),
            Rho::RneF16 => None,
        }
    }
}

/// binary32 as a float format (the output, and the promoted accumulator).
pub fn binary32() -> FloatFormat {
    BINARY32
}

/// binary32 and binary16 (`float:8:23`, `float:5:10`), written out as constants: the
/// output formats are asked for once a chunk (a test checks them against `FloatFormat::new`).
const BINARY32: FloatFormat = ieee(8, 23);
const BINARY16: FloatFormat = ieee(5, 10);

/// An IEEE interchange format's parameters, no suffixes.
const fn ieee(exp_bits: u32, frac_bits: u32) -> FloatFormat {
    FloatFormat {
        exp_bits,
        frac_bits,
        finite: false,
        sat: false,
        ftz: false,
        no_nan: false,
    }
}

/// A GPU generation's chunking (issue 49's table).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Preset {
    Volta,
    Ampere,
    Ada,
    Hopper,
    Blackwell,
}

/// The operand formats a preset may list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Operands {
    F16,
    Bf16,
    Tf32,
    Fp8,
}

impl Operands {
    /// The class of a float format by its E and M (suffixes aside): binary32 (float:8:23)
    /// counts as tf32, read as tf32 ([`FdpaPlan::tf32`]).
    fn of(f: &FloatFormat) -> Option<Operands> {
        match (f.exp_bits, f.frac_bits) {
            (5, 10) => Some(Operands::F16),
            (8, 7) => Some(Operands::Bf16),
            (8, 10) | (8, 23) => Some(Operands::Tf32),
            (4, 3) | (5, 2) => Some(Operands::Fp8),
            _ => None,
        }
    }
}

impl Preset {
    pub const ALL: [Preset; 5] = [
        Preset::Volta,
        Preset::Ampere,
        Preset::Ada,
        Preset::Hopper,
        Preset::Blackwell,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Preset::Volta => "volta",
            Preset::Ampere => "ampere",
            Preset::Ada => "ada",
            Preset::Hopper => "hopper",
            Preset::Blackwell => "blackwell",
        }
    }

    /// The operand formats the preset lists, for messages.
    pub fn operands(self) -> &'static str {
        match self {
            Preset::Volta => "f16",
            Preset::Ampere => "f16, bf16 or tf32 (float:8:10, or float:8:23 read as tf32)",
            Preset::Ada | Preset::Hopper | Preset::Blackwell => {
                "f16, bf16 or fp8 (fp8:e4m3, fp8:e5m2)"
            }
        }
    }

    /// (L, F, RHO) of the preset on operands `op`, `None` where it does not list them.
    fn chunking(self, op: Operands) -> Option<Chunking> {
        use Operands::*;
        let (l, f, rho) = match (self, op) {
            (Preset::Volta, F16) => (4, 23, Rho::RzF32),
            (Preset::Ampere | Preset::Ada, F16 | Bf16) => (8, 24, Rho::RzF32),
            (Preset::Ampere, Tf32) => (4, 24, Rho::RzF32),
            (Preset::Ada, Fp8) => (16, 13, Rho::RzE8m13),
            (Preset::Hopper | Preset::Blackwell, F16 | Bf16) => (16, 25, Rho::RzF32),
            (Preset::Hopper, Fp8) => (32, 13, Rho::RzE8m13),
            (Preset::Blackwell, Fp8) => (32, 25, Rho::RzF32),
            (Preset::Volta, Bf16 | Tf32 | Fp8)
            | (Preset::Ampere, Fp8)
            | (Preset::Ada | Preset::Hopper | Preset::Blackwell, Tf32) => return None,
        };
        Some(Chunking { l, f, rho })
    }
}

/// L products a chunk, F fraction bits below the chunk's largest exponent, rounding RHO.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Chunking {
    pub l: u32,
    pub f: u32,
    pub rho: Rho,
}

/// Where a mode's chunking comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Shape {
    /// A GPU generation's, chosen by the operand format.
    Preset(Preset),
    /// Given as `L:F:RHO`.
    Given(Chunking),
}

/// The mode `fdpa:PRESET[:promoteN]` or `fdpa:L:F:RHO[:promoteN]`, as parsed (a preset is
/// resolved against the operand format by [`Fdpa::plan`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Fdpa {
    pub shape: Shape,
    /// `:promoteN`: products per promotion into the binary32 accumulator.
    pub promote: Option<u32>,
}

/// The array PE of these modes (`lpgen rtl array --pe fdpa --fdpa MODE`): each step one
/// chunk of L operand pairs per PE, accumulated as [`FdpaPlan::dot`] and read out as
/// [`FdpaPlan::dot_in_format`]. Not in the float family's list (whose PEs accumulate in its
/// fixed modes): a mode's PE, listed here like the MX blocks' (`crate::mx::PE`); `mode`
/// names the mode family by its example, the design's chunking is `--fdpa`.
pub static PE: crate::family::PeInfo = crate::family::PeInfo {
    name: "fdpa",
    mode: crate::SumMode::Fdpa(Fdpa::EXAMPLE),
    about: "a GPU matrix unit's chunks (--fdpa): L products a step, truncated to F bits, rounded by RHO",
};

/// The largest L: chunks longer than any matrix unit's, and sums that fit an i128.
pub const MAX_L: u32 = 1 << 16;
/// The largest F: truncated terms below 2^(F + 2) fit an i128 with L of them.
pub const MAX_F: u32 = 64;

/// The syntax, for messages.
pub const SYNTAX: &str = "fdpa:PRESET[:promoteN] (volta, ampere, ada, hopper, blackwell) or \
                          fdpa:L:F:RHO[:promoteN] (RHO rz-f32, rz-e8m13 or rne-f16)";

impl Fdpa {
    /// `fdpa:16:25:rz-f32` (Hopper's and Blackwell's chunking of f16 and bf16), the
    /// registry's example of the mode: it takes every float format.
    pub const EXAMPLE: Fdpa = Fdpa {
        shape: Shape::Given(Chunking {
            l: 16,
            f: 25,
            rho: Rho::RzF32,
        }),
        promote: None,
    };

    /// A whole `fdpa:…` mode string.
    pub fn parse(s: &str) -> Result<Fdpa, FormatError> {
        let bad = |why: String| {
            Err(FormatError(format!(
                "mode {s:?}: {why} (expected {SYNTAX})"
            )))
        };
        let rest = match s.strip_prefix("fdpa") {
            Some("") => return bad("give a preset or L:F:RHO".into()),
            Some(r) if r.starts_with(':') => &r[1..],
            Some(_) | None => return bad("not an fdpa mode".into()),
        };
        let mut fields: Vec<&str> = rest.split(':').collect();
        let promote = match fields.last().and_then(|f| f.strip_prefix("promote")) {
            Some(n) => {
                fields.pop();
                match n.parse::<u32>() {
                    Ok(n) if n >= 1 => Some(n),
                    _ => return bad(format!("promote{n}: N must be a whole number >= 1")),
                }
            }
            None => None,
        };
        let shape = match fields[..] {
            [p] => match Preset::ALL.into_iter().find(|x| x.name() == p) {
                Some(p) => Shape::Preset(p),
                None => return bad(format!("unknown preset {p:?}")),
            },
            [l, f, rho] => {
                let num = |x: &str, what: &str, max: u32| match x.parse::<u32>() {
                    Ok(v) if (1..=max).contains(&v) => Ok(v),
                    _ => Err(format!("{what} = {x:?} must be a whole number 1 ..= {max}")),
                };
                let (l, f) = match (num(l, "L", MAX_L), num(f, "F", MAX_F)) {
                    (Ok(l), Ok(f)) => (l, f),
                    (Err(why), _) | (_, Err(why)) => return bad(why),
                };
                let Some(rho) = Rho::ALL.into_iter().find(|r| r.name() == rho) else {
                    return bad(format!("unknown rounding {rho:?}"));
                };
                Shape::Given(Chunking { l, f, rho })
            }
            _ => return bad("give a preset or L:F:RHO".into()),
        };
        let mode = Fdpa { shape, promote };
        if let Shape::Given(c) = shape {
            mode.check_promote(c)
                .map_err(|e| FormatError(format!("mode {s:?}: {}", e.0)))?;
        }
        Ok(mode)
    }

    /// The promotion interval against the chunking: a multiple of L, into binary32.
    fn check_promote(&self, c: Chunking) -> Result<(), FormatError> {
        match self.promote {
            Some(_) if c.rho == Rho::RneF16 => {
                err("promote accumulates binary32 words; rne-f16 gives binary16 ones (use rz-f32)")
            }
            Some(n) if n % c.l != 0 => err(format!(
                "promote{n} is not a multiple of the chunk length L = {}",
                c.l
            )),
            _ => Ok(()),
        }
    }

    /// The arithmetic of this mode on operands of `fmt`, or the one-line reason a preset
    /// does not list `fmt`.
    pub fn plan(&self, fmt: &FloatFormat) -> Result<FdpaPlan, FormatError> {
        let (chunk, tf32) = match self.shape {
            Shape::Given(c) => (c, false),
            Shape::Preset(p) => {
                let op = Operands::of(fmt);
                match op.and_then(|op| p.chunking(op)) {
                    Some(c) => (c, fmt.frac_bits == 23 && op == Some(Operands::Tf32)),
                    None => {
                        return err(format!(
                            "mode {self} does not take {fmt} operands: {} takes {}",
                            p.name(),
                            p.operands()
                        ))
                    }
                }
            }
        };
        self.check_promote(chunk)
            .map_err(|e| FormatError(format!("mode {self} on {fmt}: {}", e.0)))?;
        Ok(FdpaPlan {
            fmt: *fmt,
            chunk,
            promote: self.promote,
            tf32,
        })
    }
}

impl fmt::Display for Fdpa {
    fn fmt(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.shape {
            Shape::Preset(p) => write!(out, "fdpa:{}", p.name())?,
            Shape::Given(c) => write!(out, "fdpa:{}:{}:{}", c.l, c.f, c.rho.name())?,
        }
        match self.promote {
            Some(n) => write!(out, ":promote{n}"),
            None => Ok(()),
        }
    }
}

/// An fdpa mode resolved for one operand format: what the dot product computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FdpaPlan {
    pub fmt: FloatFormat,
    pub chunk: Chunking,
    pub promote: Option<u32>,
    /// binary32 operands read as tf32: the low 13 fraction bits dropped (Ampere's tf32).
    pub tf32: bool,
}

/// A term of a chunk: NaN, ±∞, or sig·2^exp standing at exponent `e` (s·2^e, 1 ≤ |s| < 2,
/// e = e_zero where sig = 0).
#[derive(Clone, Copy, Debug)]
enum Term {
    Nan,
    Inf(bool),
    Fin { d: Dy, e: i64 },
}

impl FdpaPlan {
    /// The format of the output word and of C: binary32, or binary16 for `rne-f16`.
    pub fn output(&self) -> FloatFormat {
        self.chunk.rho.output()
    }

    /// Σ a_k·b_k from C = 0, the output word rounded to nearest even into the operand
    /// format (by the format's conversion): the mode's `dot`.
    pub fn dot_in_format(&self, a: &[Bits], b: &[Bits]) -> Bits {
        self.output().convert(&self.fmt, self.dot(a, b, 0))
    }

    /// D = Σ a_k·b_k + C as the output word (C a word of [`Self::output`]).
    pub fn dot(&self, a: &[Bits], b: &[Bits], c: Bits) -> Bits {
        assert_eq!(a.len(), b.len());
        self.dot_of(a, b, c, |x: &Bits| self.operand(*x))
    }

    /// [`Self::dot_in_format`] of every row of `rows` with every column of `cols` (row-major
    /// result): [`Self::dots`], each word rounded into the operand format.
    pub fn dots_in_format(&self, rows: &[&[Bits]], cols: &[&[Bits]]) -> Vec<Bits> {
        let out = self.output();
        let mut words = self.dots(rows, cols);
        for w in &mut words {
            *w = out.convert(&self.fmt, *w);
        }
        words
    }

    /// [`Self::dot`] from C = 0 of every row of `rows` with every column of `cols`
    /// (row-major output words), each operand decoded once instead of once per dot product:
    /// the same words as `dot` element by element. Where every chunk's sum fits an i64 (the
    /// presets' chunkings do), pairs of lines without NaN or ∞ take the i64 lanes of
    /// `fdpa/lanes.rs` (held to `dot` by this module's tests); the rest take `dot`'s steps
    /// on values decoded once.
    pub fn dots(&self, rows: &[&[Bits]], cols: &[&[Bits]]) -> Vec<Bits> {
        if self.fits_i64() {
            return self.dots_on_lanes(rows, cols);
        }
        let decode = |w: &[Bits]| -> Vec<Val> { w.iter().map(|&x| self.operand(x)).collect() };
        let cols: Vec<Vec<Val>> = cols.iter().map(|c| decode(c)).collect();
        let mut words = Vec::with_capacity(rows.len() * cols.len());
        for row in rows {
            let row = decode(row);
            words.extend(cols.iter().map(|col| {
                assert_eq!(row.len(), col.len());
                self.dot_of(&row, col, 0, |v: &Val| *v)
            }));
        }
        words
    }

    /// D = Σ a_k·b_k + C over operands read by `value` (words, or values decoded already).
    fn dot_of<T>(&self, a: &[T], b: &[T], c: Bits, value: impl Fn(&T) -> Val + Copy) -> Bits {
        self.walk(a.len(), c, |r, c| self.step(&a[r.clone()], &b[r], c, value))
    }

    /// The chunks and promotions of a dot product of length `k` from C: `step(range, C)` is
    /// one chunk's C ← step(chunk, C). Without promotion the chunks of L run from C; with
    /// `:promoteN` each N products' chunks run from 0 and their result is added into the
    /// binary32 accumulator that starts at C.
    pub(super) fn walk(
        &self,
        k: usize,
        c: Bits,
        mut step: impl FnMut(Range<usize>, Bits) -> Bits,
    ) -> Bits {
        let l = self.chunk.l as usize;
        let mut chunked = |r: Range<usize>, mut c: Bits| {
            for i in r.clone().step_by(l) {
                c = step(i..(i + l).min(r.end), c);
            }
            c
        };
        let Some(n) = self.promote else {
            return chunked(0..k, c);
        };
        let f32 = binary32();
        let mut acc = c;
        for i in (0..k).step_by(n as usize) {
            acc = f32.add(acc, chunked(i..(i + n as usize).min(k), 0));
        }
        if f32.is_nan(acc) && k > 0 {
            NAN_F32
        } else {
            acc
        }
    }

    /// One chunk: its products and C aligned to the largest exponent, truncated to F
    /// fraction bits, summed exactly and rounded once.
    fn step<T>(&self, a: &[T], b: &[T], c: Bits, value: impl Fn(&T) -> Val + Copy) -> Bits {
        let rho = self.chunk.rho;
        let out = rho.output();
        let c = term(out.decode(c), i64::from(out.frac_bits), rho.e_zero());
        // Two passes over the products (decoding is cheaper than a buffer): the specials and
        // e_max, then the truncated sum.
        let products = || {
            a.iter()
                .zip(b)
                .map(|(x, y)| self.product(value(x), value(y)))
        };
        let (mut nan, mut pos, mut neg, mut e_max) = (false, false, false, i64::MIN);
        for t in products().chain([c]) {
            match t {
                Term::Nan => nan = true,
                Term::Inf(true) => neg = true,
                Term::Inf(false) => pos = true,
                Term::Fin { e, .. } => e_max = e_max.max(e),
            }
        }
        if nan || (pos && neg) {
            return nan_of(rho);
        }
        if pos || neg {
            return out.infinite(neg);
        }
        let f = i64::from(self.chunk.f);
        let truncated = |t: Term| match t {
            Term::Fin { d, .. } if d.sig != 0 => {
                let t = shift_trunc(d.sig, d.exp - e_max + f) as i128;
                if d.neg {
                    -t
                } else {
                    t
                }
            }
            Term::Fin { .. } | Term::Nan | Term::Inf(_) => 0,
        };
        let sum: i128 = products().chain([c]).map(truncated).sum();
        round(rho, sum, e_max - f)
    }

    /// The term of a·b: NaN for a NaN operand or ∞·0, ±∞, or the exact product at
    /// e_a + e_b (operands read by [`Self::operand`]).
    fn product(&self, a: Val, b: Val) -> Term {
        let m = i64::from(self.fmt.frac_bits);
        let e_zero = self.chunk.rho.e_zero();
        match (a, b) {
            (Val::Nan, _) | (_, Val::Nan) => Term::Nan,
            (Val::Inf(p), Val::Inf(q)) => Term::Inf(p != q),
            (Val::Inf(p), Val::Fin(x)) | (Val::Fin(x), Val::Inf(p)) => {
                if x.sig == 0 {
                    Term::Nan
                } else {
                    Term::Inf(p != x.neg)
                }
            }
            (Val::Fin(x), Val::Fin(y)) => term(
                Val::Fin(Dy {
                    neg: x.neg != y.neg,
                    sig: x.sig * y.sig,
                    exp: x.exp + y.exp,
                }),
                2 * m,
                e_zero,
            ),
        }
    }

    /// An operand's value (read as tf32 where asked: the low 13 fraction bits dropped).
    fn operand(&self, w: Bits) -> Val {
        match self.fmt.decode(w) {
            Val::Fin(d) if self.tf32 => Val::Fin(Dy {
                sig: d.sig >> 13 << 13,
                ..d
            }),
            v => v,
        }
    }
}

/// The term of a value whose significand has `m` fraction bits (s·2^e with e = exp + m),
/// a zero at `e_zero`.
fn term(v: Val, m: i64, e_zero: i64) -> Term {
    match v {
        Val::Nan => Term::Nan,
        Val::Inf(neg) => Term::Inf(neg),
        Val::Fin(d) if d.sig == 0 => Term::Fin { d, e: e_zero },
        Val::Fin(d) => Term::Fin { d, e: d.exp + m },
    }
}

/// binary32's NaN result.
pub const NAN_F32: Bits = 0x7FFF_FFFF;
/// binary16's NaN result.
pub const NAN_F16: Bits = 0x7FFF;

mod lanes;
mod round;

#[cfg(test)]
mod tests;
