//! The float family's registration and its [`Family`] arithmetic.

use std::cmp::Ordering;

use crate::arith::BinOp;
use crate::arith::{transcendental, word_arith, Bits, Transcendental};
use crate::exact::Ratio;
use crate::family_trait::{
    field, no_underflow, unknown_format, Family, FamilyEntry, FamilyFormat, PeInfo,
};
use crate::format::{err, FormatError};
use crate::rounding::Draw;
use crate::sum::{self, Running};
use crate::SumMode;

use super::fdpa::Fdpa;
use super::ops::{dy_to_f64, tables};
use super::{FloatFormat, Val};

/// `float:E:M` with `:fn`, `:sat`, `:ftz` in any order, and the names `bf16`, `f16`,
/// `fp8:e4m3`, `fp8:e5m2` (the registry's parser expands them, [`super::expand_name`]): the
/// rounded sums and the exact accumulator (mode `quire`, the `float` array PE's); ALU lanes
/// (`alu`, `vector`, `convert` among floats and, by [`crate::alu::convert`], to and from fix).
pub const FAMILY: FamilyEntry = FamilyEntry {
    name: "float",
    syntax: "float:E:M (optionally :fn, :sat, :ftz, :nonan), bf16, f16, fp8:e4m3, fp8:e5m2",
    modes: &[
        SumMode::Naive,
        SumMode::Kahan,
        SumMode::Pairwise,
        SumMode::Quire,
        SumMode::Fdpa(Fdpa::EXAMPLE),
    ],
    pes: &[PeInfo {
        name: "float",
        mode: SumMode::Quire,
        about: "exact products of two float words in the exact accumulator over the format's range, rounded once at read-out",
    }],
    lanes: true,
    q8_word_rule: false,
    stochastic: true,
    example: "float:3:4",
    expand_name: super::expand_name,
};

/// The refusal of a sum in an fdpa mode, which is a mode of dot products.
fn no_fdpa_sum(m: Fdpa) -> Result<Bits, FormatError> {
    err(format!(
        "mode {m} is a dot-product mode (a matrix unit's): take the dot product with ones"
    ))
}

impl FamilyFormat for FloatFormat {
    fn width(&self) -> u32 {
        FloatFormat::width(self)
    }
    type Arith = FloatFormat;
    fn arith(&self) -> FloatFormat {
        *self
    }
    fn parse(fields: &[&str], underflow: bool, whole: &str) -> Result<Self, FormatError> {
        if underflow {
            return no_underflow(whole);
        }
        let [e, m, suffixes @ ..] = fields else {
            return unknown_format(whole);
        };
        let (e, m) = (
            field(e, "exponent bits", whole)?,
            field(m, "fraction bits", whole)?,
        );
        let (mut finite, mut sat, mut ftz, mut no_nan) = (false, false, false, false);
        for &s in suffixes {
            let flag = match s {
                "fn" => &mut finite,
                "sat" => &mut sat,
                "ftz" => &mut ftz,
                "nonan" => &mut no_nan,
                _ => {
                    return err(format!(
                        "format {whole:?}: unknown suffix {s:?} (a float takes :fn, :sat, :ftz \
                         and :nonan)"
                    ))
                }
            };
            if *flag {
                return err(format!("format {whole:?}: the suffix :{s} is given twice"));
            }
            *flag = true;
        }
        if no_nan && (finite || sat) {
            return err(format!(
                "format {whole:?}: :nonan already means no infinities and saturation; drop :fn \
                 and :sat"
            ));
        }
        let made = if no_nan {
            FloatFormat::new_no_nan(e, m, ftz)
        } else {
            FloatFormat::new(e, m, finite, sat, ftz)
        };
        made.map_err(|e| FormatError(format!("format {whole:?}: {}", e.0)))
    }
    fn entry(&self) -> &'static FamilyEntry {
        &FAMILY
    }
    /// TransformerEngine's cast: the `:sat` variant (finite words past the largest).
    fn saturating(self) -> Option<Self> {
        Some(FloatFormat { sat: true, ..self })
    }
    fn canonical(self) -> crate::Format {
        self.into()
    }
}

impl crate::arith::Arith for FloatFormat {
    word_arith!(FloatFormat: Family, |_: &FloatFormat| 0);
}

impl Family for FloatFormat {
    type Format = FloatFormat;
    fn format(&self) -> FloatFormat {
        *self
    }
    /// a + b, rounded once (by table for formats of at most 8 bits, `tables`; by f32 for
    /// bf16, f16 and their like, [`FloatFormat::narrow`]).
    #[inline]
    fn add(&self, a: Bits, b: Bits) -> Bits {
        if let Some(t) = tables(*self) {
            return t.add(a, b);
        }
        match self.narrow() {
            Some(n) => n.add(a, b),
            None => self.add_d(a, b, Draw::Nearest),
        }
    }
    /// a − b, rounded once (a + (−b)).
    #[inline]
    fn sub(&self, a: Bits, b: Bits) -> Bits {
        self.add(a, self.neg(b))
    }
    /// a · b, rounded once (by table for formats of at most 8 bits, `tables`; by f32 for
    /// bf16, f16 and their like, [`FloatFormat::narrow`]).
    #[inline]
    fn mul(&self, a: Bits, b: Bits) -> Bits {
        if let Some(t) = tables(*self) {
            return t.mul(a, b);
        }
        match self.narrow() {
            Some(n) => n.mul(a, b),
            None => self.mul_d(a, b, Draw::Nearest),
        }
    }
    /// a / b, rounded once: x/0 is an infinite result (±∞; NaN with `:fn`, ±max with
    /// `:fn:sat`), 0/0 and ∞/∞ are NaN.
    fn div(&self, a: Bits, b: Bits) -> Bits {
        self.div_d(a, b, Draw::Nearest)
    }
    /// The word's sign bit flipped (IEEE negate: a bit operation, NaN and `:ftz` alike).
    fn neg(&self, w: Bits) -> Bits {
        w ^ self.sign_bit()
    }
    /// The word's sign bit cleared (IEEE abs).
    fn abs(&self, w: Bits) -> Bits {
        w & !self.sign_bit()
    }
    /// IEEE comparison: `None` with a NaN, −0 == +0 (and with `:ftz` a subnormal equals
    /// zero).
    fn cmp(&self, a: Bits, b: Bits) -> Option<Ordering> {
        self.to_f64(a).partial_cmp(&self.to_f64(b))
    }
    /// [`Self::max`] and [`Self::min`] of whole lanes by the elementwise kernel's table of
    /// values (formats it serves: at most 16 bits, no `:ftz`).
    fn binop_lanes(&self, op: crate::AluOp, a: &[Bits], b: &[Bits], out: &mut [Bits]) -> bool {
        let larger = match op {
            crate::AluOp::Max => true,
            crate::AluOp::Min => false,
            _ => return false,
        };
        match crate::kernel::elementwise::FloatKernel::of(*self) {
            Some(k) => {
                k.max_min_words(larger, a, b, out);
                true
            }
            None => false,
        }
    }
    /// The larger operand; NaN if either is NaN; the first operand when they are equal
    /// (±0: as the `f32` family computes on x86-64's `maxss`); with `:ftz` a subnormal
    /// result is zero of its sign.
    fn max(&self, a: Bits, b: Bits) -> Bits {
        if self.is_nan(a) || self.is_nan(b) {
            return self.nan();
        }
        self.canon(if self.to_f64(b) > self.to_f64(a) {
            b
        } else {
            a
        })
    }
    /// The smaller operand; as [`Self::max`] otherwise.
    fn min(&self, a: Bits, b: Bits) -> Bits {
        if self.is_nan(a) || self.is_nan(b) {
            return self.nan();
        }
        self.canon(if self.to_f64(b) < self.to_f64(a) {
            b
        } else {
            a
        })
    }
    /// Whether `w` is a NaN code.
    fn is_nan(&self, w: Bits) -> bool {
        if self.no_nan {
            return false;
        }
        let field = (w >> self.frac_bits) & self.exp_ones();
        let frac = w & self.frac_mask();
        field == self.exp_ones()
            && if self.finite {
                frac == self.frac_mask()
            } else {
                frac != 0
            }
    }
    fn nan(&self) -> Option<Bits> {
        (!self.no_nan).then(|| FloatFormat::nan(self))
    }
    /// 1.0.
    fn one(&self) -> Bits {
        (self.bias() as Bits) << self.frac_bits
    }
    fn zero(&self) -> Bits {
        0
    }
    /// The word nearest to `x` (NaN → the canonical NaN, ±∞ → [`Self::infinite`]).
    fn from_f64(&self, x: f64) -> Bits {
        self.from_f64_d(x, Draw::Nearest)
    }
    /// The exact value of a word (every value of a format with E <= 11, M <= 52 is an f64;
    /// with `:ftz` a subnormal is ±0).
    fn to_f64(&self, w: Bits) -> f64 {
        match self.decode(w) {
            Val::Nan => f64::NAN,
            Val::Inf(neg) => {
                if neg {
                    f64::NEG_INFINITY
                } else {
                    f64::INFINITY
                }
            }
            Val::Fin(d) => dy_to_f64(d),
        }
    }
    /// The word nearest to an exact ratio (a zero keeps the ratio's sign).
    fn from_ratio(&self, r: &Ratio) -> Bits {
        self.from_ratio_d(r, Draw::Nearest)
    }
    /// e^x correctly rounded; e^(+∞) is an infinite result, e^(−∞) = +0.
    fn exp(&self, a: Bits) -> Bits {
        match self.decode(a) {
            Val::Inf(false) => self.infinite(false),
            Val::Inf(true) => 0,
            _ => transcendental(self, a, Transcendental::Exp, FloatFormat::nan(self)),
        }
    }
    /// ln x correctly rounded; ln(±0) = −∞ (an infinite result: NaN with `:fn`, −max with
    /// `:fn:sat`), ln(+∞) = +∞, NaN for x < 0.
    fn ln(&self, a: Bits) -> Bits {
        match self.decode(a) {
            Val::Fin(x) if x.sig == 0 => self.infinite(true),
            Val::Inf(false) => self.infinite(false),
            _ => transcendental(self, a, Transcendental::Ln, FloatFormat::nan(self)),
        }
    }
    /// √a, rounded once (IEEE 754 squareRoot): √(±0) = ±0, √(+∞) = +∞, NaN for NaN and
    /// for a < 0 (−∞ included; `:nonan`'s NaN result is +0). With `:ftz` a subnormal
    /// operand is a zero of its sign.
    fn sqrt(&self, a: Bits) -> Bits {
        self.sqrt_d(a, Draw::Nearest)
    }
    fn sum(&self, mode: SumMode, xs: &[Bits]) -> Result<Bits, FormatError> {
        Ok(match (mode, self.narrow()) {
            (SumMode::Fdpa(m), _) => return no_fdpa_sum(m),
            (SumMode::Quire, _) => self.sum_exact(xs),
            (_, Some(n)) => sum::rounded_sum(&n, mode, xs).expect("a rounded mode"),
            (_, None) => sum::rounded_sum(self, mode, xs).expect("a rounded mode"),
        })
    }
    fn dot(&self, mode: SumMode, a: &[Bits], b: &[Bits]) -> Result<Bits, FormatError> {
        assert_eq!(a.len(), b.len());
        Ok(match mode {
            SumMode::Quire => self.dot_exact(a, b),
            SumMode::Fdpa(m) => m.plan(self)?.dot_in_format(a, b),
            // One table lookup per product and sum for formats of at most 8 bits.
            SumMode::Naive => match (super::ops::tables(*self), self.narrow()) {
                (Some(t), _) => t.naive_dot(0, a, b),
                (None, Some(n)) => sum::naive_dot(&n, a, b),
                (None, None) => sum::naive_dot(self, a, b),
            },
            // bf16, f16 and their like keep their partial results as f32s.
            _ => match self.narrow() {
                Some(n) => sum::rounded_dot(&n, mode, a, b),
                None => sum::rounded_dot(self, mode, a, b),
            }
            .expect("a rounded mode"),
        })
    }
    fn dots(
        &self,
        mode: SumMode,
        rows: &[&[Bits]],
        bs: &[&[Bits]],
    ) -> Result<Vec<Bits>, FormatError> {
        // Naive sums of at most 8 bits by table.
        if let (SumMode::Naive, Some(t)) = (mode, super::ops::tables(*self)) {
            return Ok(t.naive_dots(self.zero_steps(rows, bs), rows, bs));
        }
        // Naive (where no table serves) and Kahan on the binary32 path: the whole product at
        // once, each word loaded once.
        if let Some(n) = self.narrow() {
            match mode {
                SumMode::Naive => return Ok(n.dots(false, rows, bs)),
                SumMode::Kahan => return Ok(n.dots(true, rows, bs)),
                _ => {}
            }
        }
        if let SumMode::Fdpa(m) = mode {
            // Each operand decoded once for the whole product.
            return Ok(m.plan(self)?.dots_in_format(rows, bs));
        }
        let row = |a: &[Bits]| -> Result<Vec<Bits>, FormatError> {
            Ok(match mode {
                SumMode::Quire => bs.iter().map(|b| self.dot_exact(a, b)).collect(),
                _ => match self.narrow() {
                    Some(n) => sum::rounded_dots(&n, mode, a, bs),
                    None => sum::rounded_dots(self, mode, a, bs),
                }
                .expect("a rounded mode"),
            })
        };
        crate::family_trait::dots_by_row(rows, row)
    }
    fn convert_to(&self, to: &FloatFormat, a: Bits) -> Bits {
        self.convert(to, a)
    }
    /// Posits, floats and f32 report no overflow: they round it by their own rule.
    /// IEEE's fused multiply-add (signed zeros, NaN and ∞ included), the `float-fma` unit's.
    fn fma(&self, a: Bits, b: Bits, c: Bits) -> Option<Bits> {
        Some(FloatFormat::fma(self, a, b, c))
    }
    fn binop_flagged(&self, _: BinOp, _: Bits, _: Bits) -> Option<(Bits, bool)> {
        None
    }
    fn running_dot(&self, mode: SumMode, a: &[Bits], b: &[Bits]) -> Result<Running, FormatError> {
        sum::running_by_prefix(self, mode, a, b)
    }
    fn fdpa(
        &self,
        mode: Fdpa,
        a: &[Bits],
        b: &[Bits],
        c: Bits,
    ) -> Result<(Bits, FloatFormat), FormatError> {
        if a.len() != b.len() {
            return err(format!(
                "a dot product of {} by {} operands: the lengths differ",
                a.len(),
                b.len()
            ));
        }
        let p = mode.plan(self)?;
        Ok((p.dot(a, b, c), p.output()))
    }
    fn rounded(&self) -> Option<&dyn crate::rounding::RoundedOps> {
        Some(self)
    }
    /// The exact accumulator, for formats whose values and products are normal f64s.
    fn exact_dot(&self) -> Option<&dyn crate::kernel::ExactDot> {
        let m = i64::from(self.frac_bits);
        (m <= 52 && self.emax() <= 500 && self.emin() - m >= -500).then_some(self as _)
    }
    /// The exact accumulator (the float PE), or a rounded sum.
    fn accumulator(&self, mode: SumMode) -> Option<Box<dyn crate::accumulator::Accumulator>> {
        match mode {
            SumMode::Quire => Some(Box::new(super::ExactAcc::new(*self))),
            m => crate::accumulator::rounded(*self, FAMILY.modes, m),
        }
    }
    /// [`FloatFormat::round_with`] (74 bits and a sticky bit: exact round and sticky bits
    /// for any significand up to 53 bits and any draw of up to 32 random bits).
    fn round_parts(
        &self,
        neg: bool,
        sig: u128,
        exp: i64,
        r: &mut crate::rounding::Rounder,
    ) -> Option<Bits> {
        Some(self.round_with(neg, sig, exp, r.draw()))
    }
}
