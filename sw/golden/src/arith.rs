//! One interface over every format: [`Arith`] for the generic algorithms (sums, dot products,
//! training), and [`Calc`], the runtime-dispatched context a [`Format`] gives.

use std::cmp::Ordering;

use num_bigint::BigInt;

use crate::exact::{self, Ratio};
use crate::fixed::FixFormat;
use crate::format::{err, Format, FormatError};
use crate::hiprec;
use crate::lns::{Lns, Split};
use crate::posit::PositFormat;

/// A word of any format, in the low bits.
pub type Bits = u64;

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

/// For formats whose working form is the word itself.
macro_rules! word_arith {
    ($ty:ty, $zero:expr) => {
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
            <$ty>::add(self, a, b)
        }
        #[inline(always)]
        fn sub(&self, a: Bits, b: Bits) -> Bits {
            <$ty>::sub(self, a, b)
        }
        #[inline(always)]
        fn mul(&self, a: Bits, b: Bits) -> Bits {
            <$ty>::mul(self, a, b)
        }
    };
}

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
    word_arith!(PositFormat, |_: &PositFormat| 0);
}

impl Arith for FixFormat {
    word_arith!(FixFormat, |_: &FixFormat| 0);
}

/// IEEE binary32, the reference format (round to nearest even, as the hardware FPU does).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct F32;

fn f(b: Bits) -> f32 {
    f32::from_bits(b as u32)
}

fn b(x: f32) -> Bits {
    x.to_bits() as Bits
}

impl F32 {
    fn add(&self, x: Bits, y: Bits) -> Bits {
        b(f(x) + f(y))
    }
    fn sub(&self, x: Bits, y: Bits) -> Bits {
        b(f(x) - f(y))
    }
    fn mul(&self, x: Bits, y: Bits) -> Bits {
        b(f(x) * f(y))
    }
}

impl Arith for F32 {
    word_arith!(F32, |_: &F32| 0);
}

/// The arithmetic of a format, chosen at run time.
#[derive(Clone, Copy, Debug)]
pub enum Calc {
    Lns(Lns),
    Posit(PositFormat),
    Fix(FixFormat),
    F32,
}

impl Format {
    /// The arithmetic context of this format (builds the LNS tables on first use).
    pub fn calc(&self) -> Calc {
        match self {
            Format::Lns(l) => Calc::Lns(l.ctx()),
            Format::Posit(p) => Calc::Posit(*p),
            Format::Fix(x) => Calc::Fix(*x),
            Format::F32 => Calc::F32,
        }
    }

    /// Bits of one word.
    pub fn width(&self) -> u32 {
        match self {
            Format::Lns(l) => l.width(),
            Format::Posit(p) => p.n,
            Format::Fix(x) => x.width(),
            Format::F32 => 32,
        }
    }
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
        match self {
            Calc::Lns(l) => Format::Lns(l.fmt),
            Calc::Posit(p) => Format::Posit(*p),
            Calc::Fix(x) => Format::Fix(*x),
            Calc::F32 => Format::F32,
        }
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

    pub fn div(&self, a: Bits, b: Bits) -> Bits {
        match self {
            Calc::Lns(l) => l.div(a, b),
            Calc::Posit(p) => p.div(a, b),
            Calc::Fix(x) => x.div(a, b),
            Calc::F32 => self::b(f(a) / f(b)),
        }
    }

    pub fn neg(&self, a: Bits) -> Bits {
        match self {
            Calc::Lns(l) => l.neg(a),
            Calc::Posit(p) => p.neg(a),
            Calc::Fix(x) => x.neg(a),
            Calc::F32 => self::b(-f(a)),
        }
    }

    pub fn abs(&self, a: Bits) -> Bits {
        match self {
            Calc::Lns(l) => l.abs(a),
            Calc::Posit(p) => p.abs(a),
            Calc::Fix(x) => x.abs(a),
            Calc::F32 => self::b(f(a).abs()),
        }
    }

    /// Numeric order; `None` when unordered (LNS NaN, f32 NaN). Posits use the standard's
    /// total order, where NaR is below every real.
    pub fn cmp(&self, a: Bits, b: Bits) -> Option<Ordering> {
        match self {
            Calc::Lns(l) => l.cmp(a, b),
            Calc::Posit(p) => Some(p.cmp(a, b)),
            Calc::Fix(x) => Some(x.cmp(a, b)),
            Calc::F32 => f(a).partial_cmp(&f(b)),
        }
    }

    pub fn max(&self, a: Bits, b: Bits) -> Bits {
        match self {
            Calc::Lns(l) => l.max(a, b),
            Calc::Posit(p) => p.max(a, b),
            Calc::Fix(x) => {
                if x.cmp(a, b) == Ordering::Less {
                    b
                } else {
                    a
                }
            }
            Calc::F32 => self::b(if f(a).is_nan() || f(b).is_nan() {
                f32::NAN
            } else {
                f(a).max(f(b))
            }),
        }
    }

    pub fn min(&self, a: Bits, b: Bits) -> Bits {
        match self {
            Calc::Lns(l) => l.min(a, b),
            Calc::Posit(p) => p.min(a, b),
            Calc::Fix(x) => {
                if x.cmp(a, b) == Ordering::Greater {
                    b
                } else {
                    a
                }
            }
            Calc::F32 => self::b(if f(a).is_nan() || f(b).is_nan() {
                f32::NAN
            } else {
                f(a).min(f(b))
            }),
        }
    }

    /// Is this word NaN / NaR?
    pub fn is_nan(&self, a: Bits) -> bool {
        match self {
            Calc::Lns(l) => l.fmt.is_nan(a),
            Calc::Posit(p) => a == p.nar(),
            Calc::Fix(_) => false,
            Calc::F32 => f(a).is_nan(),
        }
    }

    pub fn one(&self) -> Bits {
        match self {
            Calc::Lns(l) => l.fmt.one(),
            Calc::Posit(p) => p.one(),
            Calc::Fix(x) => x.one(),
            Calc::F32 => self::b(1.0),
        }
    }

    /// The word nearest to `x` by the format's rounding.
    pub fn from_f64(&self, x: f64) -> Bits {
        match self {
            Calc::Lns(l) => l.fmt.from_f64(x),
            Calc::Posit(p) => p.from_f64(x),
            Calc::Fix(fx) => fx.from_f64(x),
            Calc::F32 => self::b(x as f32),
        }
    }

    /// The value of a word (exact for posit, fix and f32; correctly rounded for LNS).
    pub fn to_f64(&self, a: Bits) -> f64 {
        match self {
            Calc::Lns(l) => l.fmt.to_f64_exact(a),
            Calc::Posit(p) => p.to_f64(a),
            Calc::Fix(x) => x.to_f64(a),
            Calc::F32 => f(a) as f64,
        }
    }

    /// The word nearest to an exact ratio.
    pub fn from_ratio(&self, r: &Ratio) -> Bits {
        match self {
            Calc::Lns(l) => l.fmt.from_ratio(r.neg, &r.num, &r.den),
            Calc::Posit(p) => p.from_ratio(r.neg, &r.num, &r.den),
            Calc::Fix(x) => x.from_ratio(r.neg, &r.num, &r.den),
            Calc::F32 => {
                // Rust's decimal parser rounds correctly; go through the exact decimal string.
                let v: f64 = ratio_to_f32(r) as f64;
                self::b(v as f32)
            }
        }
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
                return match self {
                    Calc::Lns(l) => Ok(l.fmt.nan()),
                    Calc::Posit(p) => Ok(p.nar()),
                    Calc::F32 => Ok(self::b(f32::NAN)),
                    Calc::Fix(_) => err(format!("{fmt} has no NaN")),
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
            return match self {
                Calc::Posit(_) => "NaR".into(),
                _ => "NaN".into(),
            };
        }
        shortest(self.to_f64(a))
    }

    /// e^x, correctly rounded (f32: libm's f64 exp rounded to f32).
    pub fn exp(&self, a: Bits) -> Bits {
        match self {
            Calc::Lns(l) => l.exp(a),
            Calc::F32 => self::b((f(a) as f64).exp() as f32),
            _ => self.transcendental(a, Transcendental::Exp),
        }
    }

    /// ln x, correctly rounded; NaN/NaR for x <= 0 (fix: saturates to its most negative).
    pub fn ln(&self, a: Bits) -> Bits {
        match self {
            Calc::Lns(l) => l.ln(a),
            Calc::F32 => self::b((f(a) as f64).ln() as f32),
            _ => self.transcendental(a, Transcendental::Ln),
        }
    }

    /// exp/ln of posit and fix words: evaluate with `hiprec` and round the enclosure by the
    /// format's own rounding, with more bits until both ends agree.
    fn transcendental(&self, a: Bits, which: Transcendental) -> Bits {
        let x = self.to_f64(a);
        let nan = match self {
            Calc::Posit(p) => p.nar(),
            Calc::Fix(fx) => fx.from_int(i128::MIN),
            _ => unreachable!(),
        };
        if self.is_nan(a) {
            return nan;
        }
        match which {
            Transcendental::Exp => {
                if x == 0.0 {
                    return self.one();
                }
                // |x| > 2000 is beyond every posit and fix range: saturate / go to the bottom.
                if x > 2000.0 {
                    return self.from_f64(f64::MAX);
                }
                if x < -2000.0 {
                    return self.from_f64(f64::MIN_POSITIVE * 1e-300);
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
            let lo = self.from_ratio(&fixed_ratio(&(&m - hiprec::ERR_ULPS), w));
            let hi = self.from_ratio(&fixed_ratio(&(&m + hiprec::ERR_ULPS), w));
            if lo == hi {
                return lo;
            }
            assert!(w < 1 << 16, "transcendental rounding did not settle");
            w *= 2;
        }
    }
}

#[derive(Clone, Copy)]
enum Transcendental {
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
fn ratio_to_f32(r: &Ratio) -> f32 {
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

impl Calc {
    pub fn add(&self, a: Bits, b: Bits) -> Bits {
        match self {
            Calc::Lns(l) => l.add(a, b),
            Calc::Posit(p) => p.add(a, b),
            Calc::Fix(x) => x.add(a, b),
            Calc::F32 => F32.add(a, b),
        }
    }
    pub fn sub(&self, a: Bits, b: Bits) -> Bits {
        match self {
            Calc::Lns(l) => l.sub(a, b),
            Calc::Posit(p) => p.sub(a, b),
            Calc::Fix(x) => x.sub(a, b),
            Calc::F32 => F32.sub(a, b),
        }
    }
    pub fn mul(&self, a: Bits, b: Bits) -> Bits {
        match self {
            Calc::Lns(l) => l.mul(a, b),
            Calc::Posit(p) => p.mul(a, b),
            Calc::Fix(x) => x.mul(a, b),
            Calc::F32 => F32.mul(a, b),
        }
    }
    /// Zero of the format.
    pub fn zero(&self) -> Bits {
        match self {
            Calc::Lns(l) => l.fmt.zero(),
            _ => 0,
        }
    }
}

impl Arith for Calc {
    word_arith!(Calc, |c: &Calc| Calc::zero(c));
}
