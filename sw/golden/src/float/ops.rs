//! The float family's operations under a draw (`add_d`, `mul_d`, …) and their tables: each
//! decodes its operands exactly, computes the exact result with integers, and rounds once
//! ([`FloatFormat::round`]). The operations to nearest are the float `Family` impl's
//! (`family.rs`), which calls these.

use num_bigint::BigUint;
use num_integer::Integer;

use super::{Dy, FloatFormat, Val};
use crate::arith::Bits;
use crate::exact::Ratio;
use crate::rounding::Draw;
use crate::table::{cached, OpTables, Zeros, MAX_TABLE_BITS};

fn bitlen(x: u128) -> i64 {
    128 - i64::from(x.leading_zeros())
}

/// x + y, exact when the operands' significands overlap within 125 bits; otherwise the
/// smaller one's bits below the larger's 125-bit window are jammed into a sticky bit (the
/// result then has at least 124 bits, so rounding to at most 53 sees the right round and
/// sticky bits). Significands of at most 107 bits (a product of two, or one word's).
/// A zero result has sig 0 and the caller's sign.
pub(super) fn add_dy(a: Dy, b: Dy) -> Dy {
    if a.sig == 0 {
        return b;
    }
    if b.sig == 0 {
        return a;
    }
    let (x, y) = if a.exp + bitlen(a.sig) >= b.exp + bitlen(b.sig) {
        (a, b)
    } else {
        (b, a)
    };
    let sh = 125 - bitlen(x.sig);
    let xs = x.sig << sh;
    let e = x.exp - sh;
    let d = y.exp - e;
    let ys = if d >= 0 {
        // y's top is at most x's: y.sig << d < 2^125.
        y.sig << d
    } else if -d >= 128 {
        1
    } else {
        let r = -d;
        (y.sig >> r) | u128::from(y.sig & ((1u128 << r) - 1) != 0)
    };
    if x.neg == y.neg {
        Dy {
            neg: x.neg,
            sig: xs + ys,
            exp: e,
        }
    } else if xs >= ys {
        Dy {
            neg: x.neg,
            sig: xs - ys,
            exp: e,
        }
    } else {
        Dy {
            neg: y.neg,
            sig: ys - xs,
            exp: e,
        }
    }
}

fn mul_dy(a: Dy, b: Dy) -> Dy {
    Dy {
        neg: a.neg != b.neg,
        sig: a.sig * b.sig,
        exp: a.exp + b.exp,
    }
}

/// The rounded sum and product of every pair of words of `f`, built from
/// [`FloatFormat::add_d`] and [`FloatFormat::mul_d`] rounding to nearest, or `None` when `f`
/// is wider than [`MAX_TABLE_BITS`].
pub(crate) fn tables(f: FloatFormat) -> Option<&'static OpTables> {
    (f.width() <= MAX_TABLE_BITS).then(|| {
        cached(f, || {
            OpTables::build(
                f.width(),
                |a, b| f.add_d(a, b, Draw::Nearest),
                |a, b| f.mul_d(a, b, Draw::Nearest),
            )
        })
    })
}

impl FloatFormat {
    /// What a naive sum's step with the +0 word (word 0) as an operand does in a product of
    /// `rows` and `cols`, for the table lanes ([`Zeros`]). Its product is ±0 where the other
    /// word is finite, and s + ±0 rounded to nearest is s for every s but −0 (−0 + +0 is
    /// +0). A naive sum from +0 never reaches −0 where results keep their subnormals: a
    /// nonzero sum of two words never rounds to zero (a sum below the normal range is exact),
    /// and an exact zero sum of words not both −0 is +0. So with no ∞ or NaN word among the
    /// operands and no flush to zero, the step leaves every sum, and each line may skip its
    /// +0 words.
    pub(crate) fn zero_steps(&self, rows: &[&[Bits]], cols: &[&[Bits]]) -> Zeros {
        let finite = |&w: &Bits| matches!(self.decode(w), Val::Fin(_));
        match !self.ftz && rows.iter().chain(cols).all(|line| line.iter().all(finite)) {
            true => Zeros::LeaveSums { nan: None },
            false => Zeros::Step,
        }
    }

    /// The sum of two exact values rounded once, with IEEE's zero sign: an exact zero sum is
    /// +0 unless both terms are −0 (or zeros of negative sign).
    fn round_sum(&self, x: Dy, y: Dy, draw: Draw) -> Bits {
        let s = add_dy(x, y);
        if s.sig == 0 {
            return self.zero_of(x.neg && y.neg);
        }
        self.round_dy(s, draw)
    }

    /// a + b, rounded once by `draw`.
    pub(super) fn add_d(&self, a: Bits, b: Bits, draw: Draw) -> Bits {
        match (self.decode(a), self.decode(b)) {
            (Val::Nan, _) | (_, Val::Nan) => self.nan(),
            (Val::Inf(p), Val::Inf(q)) if p != q => self.nan(),
            (Val::Inf(p), _) | (_, Val::Inf(p)) => self.infinite(p),
            (Val::Fin(x), Val::Fin(y)) => self.round_sum(x, y, draw),
        }
    }

    /// a · b, rounded once by `draw`.
    pub(super) fn mul_d(&self, a: Bits, b: Bits, draw: Draw) -> Bits {
        match (self.decode(a), self.decode(b)) {
            (Val::Nan, _) | (_, Val::Nan) => self.nan(),
            (Val::Inf(p), Val::Inf(q)) => self.infinite(p != q),
            (Val::Inf(p), Val::Fin(x)) | (Val::Fin(x), Val::Inf(p)) => {
                if x.sig == 0 {
                    self.nan()
                } else {
                    self.infinite(p != x.neg)
                }
            }
            (Val::Fin(x), Val::Fin(y)) => self.round_dy(mul_dy(x, y), draw),
        }
    }

    /// a / b, rounded once by `draw`.
    pub(super) fn div_d(&self, a: Bits, b: Bits, draw: Draw) -> Bits {
        match (self.decode(a), self.decode(b)) {
            (Val::Nan, _) | (_, Val::Nan) | (Val::Inf(_), Val::Inf(_)) => self.nan(),
            (Val::Inf(p), Val::Fin(y)) => self.infinite(p != y.neg),
            (Val::Fin(x), Val::Inf(q)) => self.zero_of(x.neg != q),
            (Val::Fin(x), Val::Fin(y)) => {
                let neg = x.neg != y.neg;
                match (x.sig == 0, y.sig == 0) {
                    (true, true) => self.nan(),
                    (false, true) => self.infinite(neg),
                    (true, false) => self.zero_of(neg),
                    (false, false) => {
                        let (sig, exp) = div_sig(x, y);
                        self.round_with(neg, sig, exp, draw)
                    }
                }
            }
        }
    }

    /// √a, rounded once by `draw`.
    pub(super) fn sqrt_d(&self, a: Bits, draw: Draw) -> Bits {
        match self.decode(a) {
            Val::Nan | Val::Inf(true) => self.nan(),
            Val::Inf(false) => self.infinite(false),
            Val::Fin(x) if x.sig == 0 => self.zero_of(x.neg),
            Val::Fin(x) if x.neg => self.nan(),
            Val::Fin(x) => {
                // The rounding looks at M + 1 bits, a round bit and (stochastic) R more.
                let extra = match draw {
                    Draw::Nearest => 0,
                    Draw::Stochastic { bits, .. } => bits,
                };
                let (sig, exp) = sqrt_sig(x, self.frac_bits + 3 + extra);
                self.round_with(false, sig, exp, draw)
            }
        }
    }

    /// a · b + c with one rounding (the fused multiply-add). IEEE's special cases: NaN
    /// operands, 0·∞ and ∞ − ∞ give NaN; an exact zero result is +0 unless a·b and c are
    /// zeros of negative sign.
    pub fn fma(&self, a: Bits, b: Bits, c: Bits) -> Bits {
        self.fma_d(a, b, c, Draw::Nearest)
    }

    /// a · b + c, rounded once by `draw`.
    pub(super) fn fma_d(&self, a: Bits, b: Bits, c: Bits, draw: Draw) -> Bits {
        let (va, vb, vc) = (self.decode(a), self.decode(b), self.decode(c));
        // The product: NaN, ±∞ or an exact dyadic.
        let p = match (va, vb) {
            (Val::Nan, _) | (_, Val::Nan) => Val::Nan,
            (Val::Inf(p), Val::Inf(q)) => Val::Inf(p != q),
            (Val::Inf(p), Val::Fin(x)) | (Val::Fin(x), Val::Inf(p)) => {
                if x.sig == 0 {
                    Val::Nan
                } else {
                    Val::Inf(p != x.neg)
                }
            }
            (Val::Fin(x), Val::Fin(y)) => Val::Fin(mul_dy(x, y)),
        };
        match (p, vc) {
            (Val::Nan, _) | (_, Val::Nan) => self.nan(),
            (Val::Inf(p), Val::Inf(q)) if p != q => self.nan(),
            (Val::Inf(p), _) | (_, Val::Inf(p)) => self.infinite(p),
            (Val::Fin(x), Val::Fin(y)) => self.round_sum(x, y, draw),
        }
    }

    /// The word of `x` rounded by `draw`.
    #[allow(clippy::wrong_self_convention)]
    pub(super) fn from_f64_d(&self, x: f64, draw: Draw) -> Bits {
        if x.is_nan() {
            return self.nan();
        }
        if x.is_infinite() {
            return self.infinite(x < 0.0);
        }
        let bits = x.to_bits();
        let neg = bits >> 63 != 0;
        let field = ((bits >> 52) & 0x7ff) as i64;
        let frac = bits & ((1 << 52) - 1);
        let (sig, exp) = if field == 0 {
            (frac, -1074)
        } else {
            (frac | 1 << 52, field - 1075)
        };
        self.round_with(neg, u128::from(sig), exp, draw)
    }

    /// The word of an exact ratio rounded by `draw`.
    #[allow(clippy::wrong_self_convention)]
    pub(super) fn from_ratio_d(&self, r: &Ratio, draw: Draw) -> Bits {
        if r.num.bits() == 0 {
            return self.zero_of(r.neg);
        }
        // q = floor(num/den · 2^k) in [2^124, 2^126), then a sticky bit.
        let k = 125 - (r.num.bits() as i64 - r.den.bits() as i64);
        let (n, d) = if k >= 0 {
            (&r.num << k as u64, r.den.clone())
        } else {
            (r.num.clone(), &r.den << (-k) as u64)
        };
        let (q, rem): (BigUint, BigUint) = n.div_rem(&d);
        let q = u128::try_from(&q).expect("a quotient of at most 126 bits");
        self.round_with(r.neg, q << 1 | u128::from(rem.bits() != 0), -k - 1, draw)
    }

    /// `a` of this format as a word of `to` (one rounding; NaN → `to`'s NaN, ±∞ → `to`'s
    /// infinite result).
    pub fn convert(&self, to: &FloatFormat, a: Bits) -> Bits {
        self.convert_d(to, a, Draw::Nearest)
    }

    /// `a` as a word of `to`, rounded by `draw`.
    pub(super) fn convert_d(&self, to: &FloatFormat, a: Bits, draw: Draw) -> Bits {
        match self.decode(a) {
            Val::Nan => to.nan(),
            Val::Inf(neg) => to.infinite(neg),
            Val::Fin(d) => to.round_dy(d, draw),
        }
    }
}

/// The quotient x.sig / y.sig (both nonzero) as (sig, exp) with sig·2^exp within the
/// sticky rule of the exact quotient of the dyadics: sig = q·2 + sticky with q ≥ 2^125, so
/// that every rounding (to at most 53 bits, stochastic with up to 32 bits below them) sees
/// exact bits. Long division in two steps: the divisor normalised to 64 bits, 127 bits of
/// dividend give a 63- or 64-bit quotient, its remainder (< 2^64) shifted by 63 the next 63.
fn div_sig(x: Dy, y: Dy) -> (u128, i64) {
    let sx = 127 - bitlen(x.sig);
    let sy = 64 - bitlen(y.sig);
    let (xs, ys) = (x.sig << sx, y.sig << sy);
    let (q1, r1) = (xs / ys, xs % ys);
    let n2 = r1 << 63;
    let (q2, r2) = (n2 / ys, n2 % ys);
    let q = q1 << 63 | q2;
    (
        q << 1 | u128::from(r2 != 0),
        x.exp - sx - y.exp + sy - 63 - 1,
    )
}

/// √x of a positive dyadic as (sig, exp) within the sticky rule: sig = q·2 + sticky with
/// q = ⌊√(x.sig·2^s)⌋ of at least `want` bits (s ≥ 0 makes x.exp − s even and the root that
/// long) and sticky set iff the root is inexact, so that every rounding that looks at fewer
/// than `want` bits sees exact bits. u128 for roots of up to 63 bits, big integers above.
fn sqrt_sig(x: Dy, want: u32) -> (u128, i64) {
    let mut s = (2 * i64::from(want) - bitlen(x.sig)).max(0);
    s += (x.exp - s) & 1;
    let (q, inexact) = if bitlen(x.sig) + s <= 126 {
        let m = x.sig << s;
        let q = num_integer::Roots::sqrt(&m);
        (q, q * q != m)
    } else {
        let m = BigUint::from(x.sig) << s as u64;
        let q = m.sqrt();
        let inexact = &q * &q != m;
        (
            u128::try_from(q).expect("a root of at most 127 bits"),
            inexact,
        )
    };
    (q << 1 | u128::from(inexact), (x.exp - s) / 2 - 1)
}

/// The f64 of an exact dyadic that is one (a word's value: at most 53 bits, exponent in
/// f64's range).
pub(super) fn dy_to_f64(d: Dy) -> f64 {
    let sign = u64::from(d.neg) << 63;
    if d.sig == 0 {
        return f64::from_bits(sign);
    }
    let msb = bitlen(d.sig) - 1;
    let top = d.exp + msb;
    debug_assert!(msb <= 52 && top <= 1023 && d.exp >= -1074);
    let bits = if top >= -1022 {
        let mant = (d.sig as u64) << (52 - msb);
        (((top + 1023) as u64) << 52) | (mant & ((1 << 52) - 1))
    } else {
        (d.sig as u64) << (d.exp + 1074)
    };
    f64::from_bits(sign | bits)
}
