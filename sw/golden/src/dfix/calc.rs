//! The dfix family's registration and its [`Family`] arithmetic: words of one group at the
//! group's scale e, the family's runtime parameter ([`DfixCalc`]). Every result rounds to
//! nearest even into scale e and saturates (the overflow flag of [`super::Converted`] is the
//! scale updates' business, not the arithmetic's).

use std::cmp::Ordering;

use num_bigint::BigUint;

use crate::arith::BinOp;
use crate::arith::{transcendental, word_arith, Arith, Bits, Transcendental};
use crate::exact::Ratio;
use crate::family_trait::{no_underflow, Family, FamilyEntry, FamilyFormat, PeInfo};
use crate::format::{err, FormatError};
use crate::sum::{self, Running};
use crate::SumMode;

use super::{Converted, DfixFormat};

/// `dfix:W`: the rounded sums and the exact accumulator (mode `quire`); one PE, the
/// integer MAC read out into the output group's scale with its two overflow flags.
pub const FAMILY: FamilyEntry = FamilyEntry {
    name: "dfix",
    syntax: "dfix:W",
    modes: &[
        SumMode::Naive,
        SumMode::Kahan,
        SumMode::Pairwise,
        SumMode::Quire,
    ],
    pes: &[PeInfo {
        name: "dfix",
        mode: SumMode::Quire,
        about: "dynamic fixed point MAC, read out through a runtime shift into the output \
                group's scale, with overflow flags (seed 002)",
    }],
    lanes: false,
    q8_word_rule: false,
    stochastic: false,
    example: "dfix:10",
    expand_name: |_| None,
};

/// The arithmetic of `dfix:W` words at scale `scale` (a word means int·2^scale).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DfixCalc {
    pub fmt: DfixFormat,
    pub scale: i32,
}

impl DfixCalc {
    pub fn new(fmt: DfixFormat, scale: i32) -> DfixCalc {
        DfixCalc { fmt, scale }
    }
}

impl FamilyFormat for DfixFormat {
    fn width(&self) -> u32 {
        self.width
    }
    /// At scale 0 (integers); [`DfixCalc::new`] gives another.
    type Arith = DfixCalc;
    fn arith(&self) -> DfixCalc {
        DfixCalc::new(*self, 0)
    }
    fn parse(fields: &[&str], underflow: bool, whole: &str) -> Result<Self, FormatError> {
        if underflow {
            return no_underflow(whole);
        }
        match fields {
            [_] => whole.parse(),
            _ => err(format!(
                "format {whole:?} is not dfix:W with a whole width W (e.g. dfix:10)"
            )),
        }
    }
    fn entry(&self) -> &'static FamilyEntry {
        &FAMILY
    }
    /// dfix words carry their group's scale, not one a scaling layer gives.
    fn saturating(self) -> Option<Self> {
        None
    }
    fn canonical(self) -> crate::Format {
        self.into()
    }
}

impl DfixCalc {
    fn mul_converted(&self, a: Bits, b: Bits) -> Converted {
        let e = self.scale;
        self.fmt.mul(a, e, b, e, e)
    }
    /// The exact quotient rounded into the scale; x/0 saturates with x's sign (an overflow),
    /// 0/0 is 0.
    fn div_converted(&self, a: Bits, b: Bits) -> Converted {
        let (x, y) = (self.fmt.to_int(a), self.fmt.to_int(b));
        if y == 0 {
            return self.fmt.saturate(x.signum() as i128 * i128::MAX);
        }
        let q = Ratio {
            neg: (x < 0) != (y < 0),
            num: BigUint::from(x.unsigned_abs()),
            den: BigUint::from(y.unsigned_abs()),
        };
        // a/b = x/y, at scale e: round(x/y · 2^−e).
        self.fmt.from_ratio(&q, self.scale)
    }
}

impl Arith for DfixCalc {
    word_arith!(DfixCalc: Family, |_: &DfixCalc| 0);
}

impl Family for DfixCalc {
    type Format = DfixFormat;
    fn format(&self) -> DfixFormat {
        self.fmt
    }
    fn add(&self, a: Bits, b: Bits) -> Bits {
        self.fmt.add(a, b).word
    }
    fn sub(&self, a: Bits, b: Bits) -> Bits {
        self.fmt.sub(a, b).word
    }
    fn mul(&self, a: Bits, b: Bits) -> Bits {
        self.mul_converted(a, b).word
    }
    fn div(&self, a: Bits, b: Bits) -> Bits {
        self.div_converted(a, b).word
    }
    fn neg(&self, a: Bits) -> Bits {
        self.fmt.neg(a).word
    }
    fn abs(&self, a: Bits) -> Bits {
        if self.fmt.to_int(a) < 0 {
            self.neg(a)
        } else {
            a
        }
    }
    fn cmp(&self, a: Bits, b: Bits) -> Option<Ordering> {
        Some(self.fmt.to_int(a).cmp(&self.fmt.to_int(b)))
    }
    fn max(&self, a: Bits, b: Bits) -> Bits {
        if self.fmt.to_int(a) < self.fmt.to_int(b) {
            b
        } else {
            a
        }
    }
    fn min(&self, a: Bits, b: Bits) -> Bits {
        if self.fmt.to_int(a) > self.fmt.to_int(b) {
            b
        } else {
            a
        }
    }
    fn is_nan(&self, _: Bits) -> bool {
        false
    }
    fn nan(&self) -> Option<Bits> {
        None
    }
    fn one(&self) -> Bits {
        self.from_f64(1.0)
    }
    fn zero(&self) -> Bits {
        0
    }
    fn from_f64(&self, x: f64) -> Bits {
        self.fmt.from_f64(x, self.scale).word
    }
    fn to_f64(&self, a: Bits) -> f64 {
        self.fmt.to_f64(a, self.scale)
    }
    fn from_ratio(&self, r: &Ratio) -> Bits {
        self.fmt.from_ratio(r, self.scale).word
    }
    fn exp(&self, a: Bits) -> Bits {
        let most_negative = self.fmt.saturate(i128::MIN).word;
        transcendental(self, a, Transcendental::Exp, most_negative)
    }
    /// ln of x <= 0 saturates to the most negative word.
    fn ln(&self, a: Bits) -> Bits {
        let most_negative = self.fmt.saturate(i128::MIN).word;
        transcendental(self, a, Transcendental::Ln, most_negative)
    }
    /// √x in the scale, to nearest even, saturated; a negative x gives 0
    /// ([`DfixFormat::sqrt`]).
    fn sqrt(&self, a: Bits) -> Bits {
        self.fmt.sqrt(a, self.scale, self.scale).word
    }
    fn sum(&self, mode: SumMode, xs: &[Bits]) -> Result<Bits, FormatError> {
        Ok(match mode {
            SumMode::Quire => {
                let acc: i128 = xs.iter().map(|&x| self.fmt.to_int(x) as i128).sum();
                self.fmt.saturate(acc).word
            }
            SumMode::Fdpa(_) => return FAMILY.refuse_mode(mode, &self.format()),
            _ => sum::rounded_sum(self, mode, xs).expect("a rounded mode"),
        })
    }
    fn dot(&self, mode: SumMode, a: &[Bits], b: &[Bits]) -> Result<Bits, FormatError> {
        assert_eq!(a.len(), b.len());
        let e = self.scale;
        Ok(match mode {
            SumMode::Quire => self.fmt.dot(a, e, b, e, e).word,
            SumMode::Fdpa(_) => return FAMILY.refuse_mode(mode, &self.format()),
            _ => sum::rounded_dot(self, mode, a, b).expect("a rounded mode"),
        })
    }
    fn dots(
        &self,
        mode: SumMode,
        rows: &[&[Bits]],
        bs: &[&[Bits]],
    ) -> Result<Vec<Bits>, FormatError> {
        let row = |a: &[Bits]| -> Result<Vec<Bits>, FormatError> {
            let e = self.scale;
            Ok(match mode {
                SumMode::Quire => bs
                    .iter()
                    .map(|b| self.fmt.dot(a, e, b, e, e).word)
                    .collect(),
                SumMode::Fdpa(_) => return FAMILY.refuse_mode(mode, &self.format()),
                _ => sum::rounded_dots(self, mode, a, bs).expect("a rounded mode"),
            })
        };
        crate::family_trait::dots_by_row(rows, row)
    }
    /// The same value in a word of another width (the scale kept), saturated.
    fn convert_to(&self, to: &DfixCalc, a: Bits) -> Bits {
        to.fmt
            .rescale_int(self.fmt.to_int(a) as i128, self.scale, to.scale)
            .word
    }
    /// The conversion's overflow ([`super::Converted`]): the rounded integer lay outside the
    /// word and saturated.
    fn fma(&self, a: Bits, b: Bits, c: Bits) -> Option<Bits> {
        crate::family_trait::fma_by_quire(self, a, b, c)
    }
    fn binop_flagged(&self, op: BinOp, a: Bits, b: Bits) -> Option<(Bits, bool)> {
        let c = match op {
            BinOp::Add => self.fmt.add(a, b),
            BinOp::Sub => self.fmt.sub(a, b),
            BinOp::Mul => self.mul_converted(a, b),
            BinOp::Div => self.div_converted(a, b),
            BinOp::Max => return Some((Family::max(self, a, b), false)),
            BinOp::Min => return Some((Family::min(self, a, b), false)),
        };
        Some((c.word, c.overflow))
    }
    fn running_dot(&self, mode: SumMode, a: &[Bits], b: &[Bits]) -> Result<Running, FormatError> {
        sum::running_by_prefix(self, mode, a, b)
    }
    /// fdpa is the float family's (a GPU matrix unit's): refused.
    fn fdpa(
        &self,
        mode: crate::float::fdpa::Fdpa,
        _: &[Bits],
        _: &[Bits],
        _: Bits,
    ) -> Result<(Bits, crate::float::FloatFormat), FormatError> {
        FAMILY.refuse_mode(SumMode::Fdpa(mode), &self.format())
    }
    fn rounded(&self) -> Option<&dyn crate::rounding::RoundedOps> {
        None
    }
    /// Not yet: dfix's exact products are computed element by element (`DfixFormat::dot`).
    fn exact_dot(&self) -> Option<&dyn crate::kernel::ExactDot> {
        None
    }
    /// Not here: a dfix accumulation reads out at a runtime shift, which the dfix array's
    /// driver and `DfixFormat::dot` hold.
    fn accumulator(&self, _: SumMode) -> Option<Box<dyn crate::accumulator::Accumulator>> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Format;

    #[test]
    fn words_at_a_scale_compute_as_that_fixed_point() {
        // dfix:10 at scale −4 holds the values of fix:5:4.
        let d = DfixCalc::new(DfixFormat::new(10).unwrap(), -4);
        let x: Format = "fix:5:4".parse().unwrap();
        let x = x.calc();
        for (a, b) in [(1.5, 2.25), (-3.0625, 0.5), (31.0, 2.0), (-20.0, -7.5)] {
            let (da, db) = (d.from_f64(a), d.from_f64(b));
            let (xa, xb) = (x.from_f64(a), x.from_f64(b));
            for (dv, xv) in [
                (Family::add(&d, da, db), x.add(xa, xb)),
                (Family::mul(&d, da, db), x.mul(xa, xb)),
                (d.div(da, db), x.div(xa, xb)),
            ] {
                assert_eq!(d.to_f64(dv), x.to_f64(xv), "{a} {b}");
            }
        }
        assert_eq!(
            d.to_f64(d.div(d.from_f64(1.0), 0)),
            d.to_f64(d.fmt.max_int() as u64)
        );
    }
}
