//! The LNS family's registration and its [`Family`] arithmetic.

use std::cmp::Ordering;

use num_bigint::{BigInt, BigUint};

use crate::arith::BinOp;
use crate::arith::Bits;
use crate::exact::Ratio;
use crate::family_trait::{
    field, no_underflow, unknown_format, Family, FamilyEntry, FamilyFormat, PeInfo,
};
use crate::format::FormatError;
use crate::hiprec;
use crate::sum::{self, Kahan, Running};
use crate::SumMode;

use super::{Lns, LnsFormat};

/// `lns:I:F`: naive, Kahan and pairwise sums (no exact accumulator: products of LNS words
/// are not fixed-point numbers); the seed-000 PE with Kahan compensation and a plain one.
pub const FAMILY: FamilyEntry = FamilyEntry {
    name: "lns",
    syntax: "lns:I:F",
    modes: &[SumMode::Naive, SumMode::Kahan, SumMode::Pairwise],
    pes: &[
        PeInfo {
            name: "lns-kahan",
            mode: SumMode::Kahan,
            about: "LNS multiply + Kahan-compensated accumulate (seed 000)",
        },
        PeInfo {
            name: "lns-plain",
            mode: SumMode::Naive,
            about: "LNS multiply + plain accumulate",
        },
    ],
    lanes: true,
    q8_word_rule: false,
    stochastic: false,
    example: "lns:5:6",
    expand_name: |_| None,
};

impl FamilyFormat for LnsFormat {
    fn width(&self) -> u32 {
        LnsFormat::width(self)
    }
    type Arith = Lns;
    fn arith(&self) -> Lns {
        self.ctx()
    }
    fn parse(fields: &[&str], underflow: bool, whole: &str) -> Result<Self, FormatError> {
        if underflow {
            return no_underflow(whole);
        }
        match fields {
            [i, f] => LnsFormat::new(
                field(i, "integer bits", whole)?,
                field(f, "fraction bits", whole)?,
            ),
            _ => unknown_format(whole),
        }
    }
    fn entry(&self) -> &'static FamilyEntry {
        &FAMILY
    }
    /// LNS saturates at ±its largest code.
    fn saturating(self) -> Option<Self> {
        Some(self)
    }
    fn canonical(self) -> crate::Format {
        self.into()
    }
}

impl Family for Lns {
    type Format = LnsFormat;
    fn format(&self) -> LnsFormat {
        self.fmt
    }
    /// +, − and · of whole lanes on the AVX-512 lanes (`lanes.rs`), where the machine has
    /// them.
    fn binop_lanes(&self, op: crate::AluOp, a: &[Bits], b: &[Bits], out: &mut [Bits]) -> bool {
        self.lanes().binop_words(op, a, b, out)
    }
    #[inline]
    fn add(&self, a: Bits, b: Bits) -> Bits {
        self.join(self.add_split(self.split(a), self.split(b)))
    }
    #[inline]
    fn sub(&self, a: Bits, b: Bits) -> Bits {
        let b = self.neg_split(self.split(b));
        self.join(self.add_split(self.split(a), b))
    }
    #[inline]
    fn mul(&self, a: Bits, b: Bits) -> Bits {
        self.join(self.mul_split(self.split(a), self.split(b)))
    }
    #[inline]
    fn div(&self, a: Bits, b: Bits) -> Bits {
        self.div_flagged(a, b).0
    }
    fn neg(&self, a: Bits) -> Bits {
        let f = &self.fmt;
        let (s, c) = f.unpack(a);
        if c == f.code_reserved() {
            a
        } else {
            f.pack(!s, c)
        }
    }
    fn abs(&self, a: Bits) -> Bits {
        let f = &self.fmt;
        let (_, c) = f.unpack(a);
        if f.is_nan(a) {
            a
        } else {
            f.pack(false, c)
        }
    }
    /// Numeric order; `None` when either is NaN.
    fn cmp(&self, a: Bits, b: Bits) -> Option<Ordering> {
        let f = &self.fmt;
        if f.is_nan(a) || f.is_nan(b) {
            return None;
        }
        // Map each word to a key that orders like its value.
        let key = |w: u64| -> i64 {
            let (s, c) = f.unpack(w);
            if c == f.code_reserved() {
                0
            } else {
                let m = c as i64 - f.code_reserved() as i64; // >= 1
                if s {
                    -m
                } else {
                    m
                }
            }
        };
        Some(key(a).cmp(&key(b)))
    }
    /// The larger; NaN if either is NaN.
    fn max(&self, a: Bits, b: Bits) -> Bits {
        match self.cmp(a, b) {
            None => self.fmt.nan(),
            Some(Ordering::Less) => b,
            _ => a,
        }
    }
    /// The smaller; NaN if either is NaN.
    fn min(&self, a: Bits, b: Bits) -> Bits {
        match self.cmp(a, b) {
            None => self.fmt.nan(),
            Some(Ordering::Greater) => b,
            _ => a,
        }
    }
    fn is_nan(&self, a: Bits) -> bool {
        self.fmt.is_nan(a)
    }
    fn nan(&self) -> Option<Bits> {
        Some(self.fmt.nan())
    }
    fn one(&self) -> Bits {
        self.fmt.one()
    }
    fn zero(&self) -> Bits {
        self.fmt.zero()
    }
    fn from_f64(&self, x: f64) -> Bits {
        self.fmt.from_f64(x)
    }
    fn to_f64(&self, a: Bits) -> f64 {
        self.fmt.to_f64_exact(a)
    }
    fn from_ratio(&self, r: &Ratio) -> Bits {
        self.fmt.from_ratio(r.neg, &r.num, &r.den)
    }
    /// e^x, correctly rounded: the result's log2 is x·log2(e) = ±2^(c/2^F) / ln 2.
    fn exp(&self, x: Bits) -> Bits {
        let f = self.fmt;
        let (neg, c) = f.unpack(x);
        if c == f.code_reserved() {
            return if neg { f.nan() } else { f.one() };
        }
        let fb = f.frac_bits;
        let mag = (c as f64 / (1u64 << fb) as f64).exp2() / std::f64::consts::LN_2;
        // Beyond 2^(I+2) the result saturates or flushes whatever the digits.
        if mag > (1u64 << (f.int_bits + 2)) as f64 {
            return if neg {
                f.zero()
            } else {
                f.pack(false, f.code_max())
            };
        }
        let fast = if neg { -mag } else { mag };
        f.pack_log2(false, fast, |w| {
            let p = hiprec::exp2(&BigInt::from(c), fb, w + 8);
            let v = (p << w) / hiprec::ln2(w + 8);
            if neg {
                -v
            } else {
                v
            }
        })
    }
    /// ln x, correctly rounded: ln(2^(c/2^F)) = c ln2 / 2^F, whose log2 is taken and rounded.
    /// NaN for x <= 0 or NaN.
    fn ln(&self, x: Bits) -> Bits {
        let f = self.fmt;
        let (neg, c) = f.unpack(x);
        if neg || c == f.code_reserved() {
            return f.nan();
        }
        if c == 0 {
            return f.zero();
        }
        let fb = f.frac_bits;
        let ac = c.unsigned_abs();
        let fast = (ac as f64 * std::f64::consts::LN_2).log2() - fb as f64;
        f.pack_log2(c < 0, fast, |w| {
            // log2(|c| ln2 / 2^F): ln2 as a ratio at w + 64 bits (its error is far below 2^-w).
            let wl = w + 64;
            let num = BigUint::from(ac) * hiprec::ln2(wl).to_biguint().unwrap();
            let den = BigUint::from(1u32) << (wl + fb);
            hiprec::log2_ratio(&num, &den, w)
        })
    }
    /// √a ([`LnsFormat::sqrt`]: needs no tables).
    fn sqrt(&self, a: Bits) -> Bits {
        self.fmt.sqrt(a)
    }
    fn sum(&self, mode: SumMode, xs: &[Bits]) -> Result<Bits, FormatError> {
        match sum::rounded_sum(self, mode, xs) {
            Some(s) => Ok(s),
            None => FAMILY.refuse_mode(mode, &self.format()),
        }
    }
    fn dot(&self, mode: SumMode, a: &[Bits], b: &[Bits]) -> Result<Bits, FormatError> {
        match sum::rounded_dot(self, mode, a, b) {
            Some(s) => Ok(s),
            None => FAMILY.refuse_mode(mode, &self.format()),
        }
    }
    /// Naive and Kahan sums on 32 lockstep lanes (`lanes.rs`); pairwise column by column.
    fn dots(
        &self,
        mode: SumMode,
        rows: &[&[Bits]],
        bs: &[&[Bits]],
    ) -> Result<Vec<Bits>, FormatError> {
        match mode {
            SumMode::Naive | SumMode::Kahan => {
                Ok(self.lanes().dots(mode == SumMode::Kahan, rows, bs))
            }
            _ => crate::family_trait::dots_by_element(self, mode, rows, bs),
        }
    }
    fn convert_to(&self, to: &Lns, a: Bits) -> Bits {
        crate::alu::lns_convert(self.fmt, to.fmt, a)
    }
    fn fma(&self, a: Bits, b: Bits, c: Bits) -> Option<Bits> {
        crate::family_trait::fma_by_quire(self, a, b, c)
    }
    fn binop_flagged(&self, op: BinOp, a: Bits, b: Bits) -> Option<(Bits, bool)> {
        Some(match op {
            BinOp::Add => self.add_flagged(a, b),
            BinOp::Sub => self.sub_flagged(a, b),
            BinOp::Mul => self.mul_flagged(a, b),
            BinOp::Div => self.div_flagged(a, b),
            BinOp::Max => (Lns::max(self, a, b), false),
            BinOp::Min => (Lns::min(self, a, b), false),
        })
    }
    /// Naive and Kahan step by step with the flags of `lns-plain` and `lns-kahan`: step k
    /// overflows when its product or one of its additions saturated. Pairwise: every prefix,
    /// no flags.
    fn running_dot(&self, mode: SumMode, a: &[Bits], b: &[Bits]) -> Result<Running, FormatError> {
        assert_eq!(a.len(), b.len());
        let mut k = Kahan::new(self);
        let step = |k: &mut Kahan, x: Bits, y: Bits| match mode {
            SumMode::Naive => {
                let (p, o1) = self.mul_flagged(x, y);
                let (s, o2) = self.add_flagged(k.sum, p);
                k.sum = s;
                o1 | o2
            }
            _ => self.kahan_mac_flagged(k, x, y),
        };
        match mode {
            SumMode::Naive | SumMode::Kahan => {
                let (words, overflow) = a
                    .iter()
                    .zip(b)
                    .map(|(&x, &y)| {
                        let o = step(&mut k, x, y);
                        (k.sum, o)
                    })
                    .unzip();
                Ok(Running {
                    words,
                    overflow: Some(overflow),
                })
            }
            _ => sum::running_by_prefix(self, mode, a, b),
        }
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
    /// LNS has no exact accumulation.
    fn exact_dot(&self) -> Option<&dyn crate::kernel::ExactDot> {
        None
    }
    /// Naive and Kahan sums in the working form (the lns-plain and lns-kahan PEs).
    fn accumulator(&self, mode: SumMode) -> Option<Box<dyn crate::accumulator::Accumulator>> {
        crate::accumulator::rounded(*self, FAMILY.modes, mode)
    }
}
