//! One interface over every format: [`Arith`] for the generic algorithms (sums, dot products,
//! training), and [`Calc`], the runtime-dispatched context a [`Format`] gives, whose
//! operations are each family's [`Family`] implementation (`family.rs`).

use std::cmp::Ordering;

use num_bigint::BigInt;

use crate::exact::{self, Ratio};
pub use crate::family::Calc;
use crate::family::{with_calc, Family, Format};
use crate::fixed::FixFormat;
use crate::format::{err, FormatError};
use crate::hiprec;
use crate::lns::{Lns, Split};
use crate::posit::PositFormat;
use crate::SumMode;

/// A word of any format, in the low bits.
pub type Bits = u64;

/// 2^k as an f64, for k in the normal range (−1022 ≤ k ≤ 1023): the exponent field alone.
#[inline(always)]
pub(crate) fn pow2(k: i64) -> f64 {
    debug_assert!((-1022..=1023).contains(&k), "2^{k} is not a normal f64");
    f64::from_bits(((k + 1023) as u64) << 52)
}

/// The four operations the summation and dot-product algorithms need, on a working form
/// `Val` of the format's words (the word itself, or a cheaper split form for LNS). Results
/// are the same as word-by-word evaluation: `load`/`store` are exact inverses.
pub trait Arith {
    type Val: Copy;
    fn load(&self, w: Bits) -> Self::Val;
    fn store(&self, v: Self::Val) -> Bits;
    fn zero(&self) -> Self::Val;
    fn add(&self, a: Self::Val, b: Self::Val) -> Self::Val;
    fn sub(&self, a: Self::Val, b: Self::Val) -> Self::Val;
    fn mul(&self, a: Self::Val, b: Self::Val) -> Self::Val;
}

/// `Arith` for formats whose working form is the word itself: their `add`, `sub`, `mul` (every
/// family module implements `Arith` with its [`Family`] operations, except LNS; `Calc` with
/// its dispatch).
macro_rules! word_arith {
    ($ty:ty, $zero:expr) => {
        word_arith!(@ [<$ty>] $zero);
    };
    ($ty:ty: $tr:path, $zero:expr) => {
        word_arith!(@ [<$ty as $tr>] $zero);
    };
    (@ [$($ops:tt)*] $zero:expr) => {
        type Val = Bits;
        #[inline(always)]
        fn load(&self, w: Bits) -> Bits {
            w
        }
        #[inline(always)]
        fn store(&self, v: Bits) -> Bits {
            v
        }
        #[inline(always)]
        fn zero(&self) -> Bits {
            #[allow(clippy::redundant_closure_call)]
            ($zero)(self)
        }
        #[inline(always)]
        fn add(&self, a: Bits, b: Bits) -> Bits {
            $($ops)*::add(self, a, b)
        }
        #[inline(always)]
        fn sub(&self, a: Bits, b: Bits) -> Bits {
            $($ops)*::sub(self, a, b)
        }
        #[inline(always)]
        fn mul(&self, a: Bits, b: Bits) -> Bits {
            $($ops)*::mul(self, a, b)
        }
    };
}
pub(crate) use word_arith;

impl Arith for Lns {
    type Val = Split;
    #[inline(always)]
    fn load(&self, w: Bits) -> Split {
        self.split(w)
    }
    #[inline(always)]
    fn store(&self, v: Split) -> Bits {
        self.join(v)
    }
    fn zero(&self) -> Split {
        self.split(self.fmt.zero())
    }
    #[inline(always)]
    fn add(&self, a: Split, b: Split) -> Split {
        self.add_split(a, b)
    }
    #[inline(always)]
    fn sub(&self, a: Split, b: Split) -> Split {
        self.add_split(a, self.neg_split(b))
    }
    #[inline(always)]
    fn mul(&self, a: Split, b: Split) -> Split {
        self.mul_split(a, b)
    }
}

impl Arith for PositFormat {
    word_arith!(PositFormat: Family, |_: &PositFormat| 0);
}

impl Arith for FixFormat {
    word_arith!(FixFormat: Family, |_: &FixFormat| 0);
}

/// Which two-operand operation (for dispatch from the command line and the vector unit).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Max,
    Min,
}

impl Calc {
    pub fn format(&self) -> Format {
        with_calc!(self, c => Format::from(Family::format(c)))
    }

    /// The family's exact accumulation as the matrix-product kernel takes it.
    pub fn exact_dot(&self) -> Option<&dyn crate::kernel::ExactDot> {
        with_calc!(self, c => Family::exact_dot(c))
    }

    /// ±sig·2^exp (sig's lowest bit sticky) rounded by `r` without big integers, where the
    /// family can ([`Family::round_parts`]).
    pub fn round_parts(
        &self,
        neg: bool,
        sig: u128,
        exp: i64,
        r: &mut crate::rounding::Rounder,
    ) -> Option<Bits> {
        with_calc!(self, c => Family::round_parts(c, neg, sig, exp, r))
    }

    /// The family's accumulator of `mode`, step by step ([`crate::accumulator`]).
    pub fn accumulator(&self, mode: SumMode) -> Option<Box<dyn crate::accumulator::Accumulator>> {
        with_calc!(self, c => Family::accumulator(c, mode))
    }

    pub fn binop(&self, op: BinOp, a: Bits, b: Bits) -> Bits {
        match op {
            BinOp::Add => self.add(a, b),
            BinOp::Sub => self.sub(a, b),
            BinOp::Mul => self.mul(a, b),
            BinOp::Div => self.div(a, b),
            BinOp::Max => self.max(a, b),
            BinOp::Min => self.min(a, b),
        }
    }

    /// a·b + c rounded once, where the family defines it ([`Family::fma`]).
    pub fn fma(&self, a: Bits, b: Bits, c: Bits) -> Option<Bits> {
        with_calc!(self, x => Family::fma(x, a, b, c))
    }

    /// `op` with the family's overflow flag ([`Family::binop_flagged`]); `None` where the
    /// family defines none.
    pub fn binop_flagged(&self, op: BinOp, a: Bits, b: Bits) -> Option<(Bits, bool)> {
        with_calc!(self, c => Family::binop_flagged(c, op, a, b))
    }

    /// The running dot product in `mode` ([`Family::running_dot`]).
    pub fn running_dot(
        &self,
        mode: SumMode,
        a: &[Bits],
        b: &[Bits],
    ) -> Result<crate::sum::Running, FormatError> {
        with_calc!(self, c => Family::running_dot(c, mode, a, b))
    }

    #[inline]
    pub fn add(&self, a: Bits, b: Bits) -> Bits {
        with_calc!(self, c => Family::add(c, a, b))
    }

    #[inline]
    pub fn sub(&self, a: Bits, b: Bits) -> Bits {
        with_calc!(self, c => Family::sub(c, a, b))
    }

    #[inline]
    pub fn mul(&self, a: Bits, b: Bits) -> Bits {
        with_calc!(self, c => Family::mul(c, a, b))
    }

    pub fn div(&self, a: Bits, b: Bits) -> Bits {
        with_calc!(self, c => Family::div(c, a, b))
    }

    pub fn neg(&self, a: Bits) -> Bits {
        with_calc!(self, c => Family::neg(c, a))
    }

    pub fn abs(&self, a: Bits) -> Bits {
        with_calc!(self, c => Family::abs(c, a))
    }

    /// Numeric order; `None` when unordered (LNS NaN, f32 NaN). Posits use the standard's
    /// total order, where NaR is below every real.
    pub fn cmp(&self, a: Bits, b: Bits) -> Option<Ordering> {
        with_calc!(self, c => Family::cmp(c, a, b))
    }

    pub fn max(&self, a: Bits, b: Bits) -> Bits {
        with_calc!(self, c => Family::max(c, a, b))
    }

    pub fn min(&self, a: Bits, b: Bits) -> Bits {
        with_calc!(self, c => Family::min(c, a, b))
    }

    /// Is this word NaN / NaR?
    pub fn is_nan(&self, a: Bits) -> bool {
        with_calc!(self, c => Family::is_nan(c, a))
    }

    /// The NaN / NaR word, if the format has one.
    pub fn nan(&self) -> Option<Bits> {
        with_calc!(self, c => Family::nan(c))
    }

    pub fn one(&self) -> Bits {
        with_calc!(self, c => Family::one(c))
    }

    /// Zero of the format.
    pub fn zero(&self) -> Bits {
        with_calc!(self, c => Family::zero(c))
    }

    /// The word nearest to `x` by the format's rounding.
    pub fn from_f64(&self, x: f64) -> Bits {
        with_calc!(self, c => Family::from_f64(c, x))
    }

    /// The value of a word (exact for posit, fix and f32; correctly rounded for LNS).
    pub fn to_f64(&self, a: Bits) -> f64 {
        with_calc!(self, c => Family::to_f64(c, a))
    }

    /// The word nearest to an exact ratio.
    pub fn from_ratio(&self, r: &Ratio) -> Bits {
        with_calc!(self, c => Family::from_ratio(c, r))
    }

    /// e^x, correctly rounded (f32: libm's f64 exp rounded to f32).
    pub fn exp(&self, a: Bits) -> Bits {
        with_calc!(self, c => Family::exp(c, a))
    }

    /// ln x, correctly rounded; NaN/NaR for x <= 0 (fix: saturates to its most negative).
    pub fn ln(&self, a: Bits) -> Bits {
        with_calc!(self, c => Family::ln(c, a))
    }

    /// √x, correctly rounded by the family's rule ([`Family::sqrt`]; docs/formats.md).
    pub fn sqrt(&self, a: Bits) -> Bits {
        with_calc!(self, c => Family::sqrt(c, a))
    }

    /// Parses an operand: a `0x…` bit pattern of this format or a decimal real.
    pub fn parse(&self, s: &str) -> Result<Bits, FormatError> {
        let t = s.trim();
        let fmt = self.format();
        if let Some(hex) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
            let v = u64::from_str_radix(hex, 16).map_err(|_| {
                FormatError(format!(
                    "{t:?} is not a hexadecimal bit pattern (e.g. 0x40)"
                ))
            })?;
            if fmt.width() < 64 && v >> fmt.width() != 0 {
                return err(format!(
                    "bit pattern {t:?} has more than the {} bits of {fmt}",
                    fmt.width()
                ));
            }
            return Ok(v);
        }
        match t.to_ascii_lowercase().as_str() {
            "nan" | "nar" => {
                return match self.nan() {
                    Some(n) => Ok(n),
                    None => err(format!("{fmt} has no NaN")),
                }
            }
            "inf" | "+inf" | "-inf" | "infinity" | "-infinity" => {
                return Ok(self.from_f64(if t.starts_with('-') {
                    f64::NEG_INFINITY
                } else {
                    f64::INFINITY
                }))
            }
            _ => {}
        }
        let r = exact::parse_decimal(t)?;
        Ok(self.from_ratio(&r))
    }

    /// The printed value: shortest decimal that reads back to the same f64, or NaN / NaR.
    pub fn value_string(&self, a: Bits) -> String {
        if self.is_nan(a) {
            return with_calc!(self, c => Family::nan_name(c)).into();
        }
        shortest(self.to_f64(a))
    }
}

pub(crate) fn transcendental<F: Family>(c: &F, a: Bits, which: Transcendental, nan: Bits) -> Bits {
    let x = c.to_f64(a);
    if c.is_nan(a) {
        return nan;
    }
    match which {
        Transcendental::Exp => {
            if x == 0.0 {
                return c.one();
            }
            // |x| > 2000 is beyond every posit and fix range: saturate / go to the bottom.
            if x > 2000.0 {
                return c.from_f64(f64::MAX);
            }
            if x < -2000.0 {
                return c.from_f64(f64::MIN_POSITIVE * 1e-300);
            }
        }
        Transcendental::Ln => {
            if x <= 0.0 {
                return nan;
            }
            if x == 1.0 {
                return 0;
            }
        }
    }
    let (xn, xd) = exact::f64_ratio(x.abs());
    let approx = |w: u32| -> BigInt {
        match which {
            Transcendental::Exp => {
                // e^x = 2^(x / ln 2); t at w + 16 bits, then 2^t.
                let wt = w + 16 + 16;
                let xf = (BigInt::from(xn.clone()) << wt) / BigInt::from(xd.clone());
                let xf = if x < 0.0 { -xf } else { xf };
                let t = (xf << wt) / hiprec::ln2(wt);
                hiprec::exp2(&t, wt, w)
            }
            Transcendental::Ln => hiprec::ln_ratio(&xn, &xd, w),
        }
    };
    let mut w = 128;
    loop {
        let m = approx(w);
        let lo = c.from_ratio(&fixed_ratio(&(&m - hiprec::ERR_ULPS), w));
        let hi = c.from_ratio(&fixed_ratio(&(&m + hiprec::ERR_ULPS), w));
        if lo == hi {
            return lo;
        }
        assert!(w < 1 << 16, "transcendental rounding did not settle");
        w *= 2;
    }
}

#[derive(Clone, Copy)]
pub(crate) enum Transcendental {
    Exp,
    Ln,
}

fn fixed_ratio(m: &BigInt, w: u32) -> Ratio {
    use num_bigint::Sign;
    let (sign, mag) = (m.sign(), m.magnitude().clone());
    Ratio {
        neg: sign == Sign::Minus,
        num: mag,
        den: num_bigint::BigUint::from(1u32) << w,
    }
}

/// num/den rounded to nearest even f32 (24-bit significand, subnormals, overflow to ∞).
pub(crate) fn ratio_to_f32(r: &Ratio) -> f32 {
    use num_bigint::BigUint;
    use num_integer::Integer;
    if r.num.bits() == 0 {
        return if r.neg { -0.0 } else { 0.0 };
    }
    // s = floor(log2(num/den)).
    let mut s = r.num.bits() as i64 - r.den.bits() as i64;
    let below = if s >= 0 {
        r.num < (&r.den << s as u64)
    } else {
        (&r.num << (-s) as u64) < r.den
    };
    if below {
        s -= 1;
    }
    // Significant bits available at this exponent (fewer in the subnormal range).
    let p = (24 - (-126 - s).max(0)).max(0);
    // m = round(num/den · 2^(p-1-s)).
    let sh = p - 1 - s;
    let (a, d) = if sh >= 0 {
        (&r.num << sh as u64, r.den.clone())
    } else {
        (r.num.clone(), &r.den << (-sh) as u64)
    };
    let (q, rem) = a.div_rem(&d);
    let twice = rem * 2u32;
    let up = twice > d || (twice == d && q.is_odd());
    let m = q + BigUint::from(up as u32);
    let m: u64 = (&m).try_into().unwrap_or(u64::MAX);
    let v = (m as f64 * (2f64).powi(-(sh as i32).clamp(-2000, 2000))) as f32;
    if r.neg {
        -v
    } else {
        v
    }
}

/// Shortest decimal that reads back to the same f64: plain for 1e-5 <= |x| < 1e16.
pub fn shortest(x: f64) -> String {
    if x.is_nan() {
        return "NaN".into();
    }
    let a = x.abs();
    if a == 0.0 || (1e-5..1e16).contains(&a) {
        format!("{x}")
    } else {
        format!("{x:e}")
    }
}

impl Arith for Calc {
    word_arith!(Calc, |c: &Calc| Calc::zero(c));
}
