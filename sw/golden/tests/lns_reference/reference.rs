//! The reference arithmetic: words decoded by hand, exact logs in astro-float, rounding
//! decisions in integer arithmetic.

use super::*;

// ---------------------------------------------------------------------------------------------
// Words, decoded independently of the golden model.

/// A decoded word.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Word {
    Zero,
    NaN,
    Num { neg: bool, code: i64 },
}

/// `lns:I:F` as the reference sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Fmt {
    pub(crate) i: u32,
    pub(crate) f: u32,
}

impl Fmt {
    pub(crate) const fn new(i: u32, f: u32) -> Fmt {
        Fmt { i, f }
    }

    pub(crate) fn golden(&self) -> LnsFormat {
        LnsFormat::new(self.i, self.f).unwrap()
    }

    /// Bits of the log field.
    pub(crate) fn lw(&self) -> u32 {
        1 + self.i + self.f
    }

    /// Number of distinct words (sign + log field).
    pub(crate) fn words(&self) -> u64 {
        1 << (self.lw() + 1)
    }

    pub(crate) fn code_max(&self) -> i64 {
        (1 << (self.i + self.f)) - 1
    }

    pub(crate) fn code_min(&self) -> i64 {
        -self.code_max()
    }

    pub(crate) fn decode(&self, bits: u64) -> Word {
        let lw = self.lw();
        assert!(bits < self.words(), "{bits:#x} is not a word of {self:?}");
        let neg = (bits >> lw) & 1 == 1;
        let raw = (bits & ((1 << lw) - 1)) as i64;
        let code = if raw >= 1 << (lw - 1) {
            raw - (1 << lw)
        } else {
            raw
        };
        if code == -(1 << (lw - 1)) {
            if neg {
                Word::NaN
            } else {
                Word::Zero
            }
        } else {
            Word::Num { neg, code }
        }
    }

    pub(crate) fn encode(&self, w: Word) -> u64 {
        let lw = self.lw();
        let reserved = 1u64 << (lw - 1);
        match w {
            Word::Zero => reserved,
            Word::NaN => (1 << lw) | reserved,
            Word::Num { neg, code } => {
                assert!((self.code_min()..=self.code_max()).contains(&code));
                ((neg as u64) << lw) | (code as u64 & ((1 << lw) - 1))
            }
        }
    }

    /// The word of a rounded code: saturate above code_max, flush below code_min.
    pub(crate) fn finish(&self, neg: bool, code: i128) -> u64 {
        if code > self.code_max() as i128 {
            self.encode(Word::Num {
                neg,
                code: self.code_max(),
            })
        } else if code < self.code_min() as i128 {
            self.encode(Word::Zero)
        } else {
            self.encode(Word::Num {
                neg,
                code: code as i64,
            })
        }
    }

    pub(crate) fn describe(&self, bits: u64) -> String {
        match self.decode(bits) {
            Word::Zero => format!("{bits:#06x} (zero)"),
            Word::NaN => format!("{bits:#06x} (NaN)"),
            Word::Num { neg, code } => format!(
                "{bits:#06x} ({}2^({code}/{}))",
                if neg { "-" } else { "+" },
                1 << self.f
            ),
        }
    }
}

pub(crate) const LNS_5_6: Fmt = Fmt::new(5, 6);
pub(crate) const LNS_4_4: Fmt = Fmt::new(4, 4);

// ---------------------------------------------------------------------------------------------
// High precision: astro-float values and exact rounding decisions on them.

pub(crate) fn consts() -> Consts {
    Consts::new().expect("astro-float constants cache")
}

/// floor(x · 2^w) as an exact integer (w may be negative).
pub(crate) fn to_fixed(x: &BigFloat, w: i64) -> BigInt {
    assert!(
        !x.is_nan() && !x.is_inf(),
        "reference value is not finite: {x}"
    );
    if x.is_zero() {
        return BigInt::zero();
    }
    let (words, _, sign, exp, _) = x.as_raw_parts().expect("finite value");
    // value = M / 2^(64·len) · 2^exp, words little-endian.
    let mut m = BigUint::zero();
    for &wd in words.iter().rev() {
        m = (m << 64u32) + BigUint::from(wd);
    }
    let m = BigInt::from(m);
    let shift = exp as i64 + w - 64 * words.len() as i64;
    let m = if sign == Sign::Neg { -m } else { m };
    if shift >= 0 {
        m << shift as u64
    } else {
        m.div_floor(&(BigInt::one() << (-shift) as u64))
    }
}

/// The integer nearest to `t`, after checking that `t` is more than 2^-MARGIN_BITS from a
/// half-integer (and small enough for PREC bits to resolve that).
pub(crate) fn nearest(t: &BigFloat, what: &dyn Fn() -> String) -> i64 {
    let fx = to_fixed(t, FIX_BITS as i64);
    let unit = BigInt::one() << FIX_BITS;
    let half = BigInt::one() << (FIX_BITS - 1);
    let (q, r) = fx.div_mod_floor(&unit);
    assert!(
        q.abs() < BigInt::from(1i64 << 40),
        "reference value too large to resolve: {} = {t}",
        what()
    );
    let margin = BigInt::one() << (FIX_BITS - MARGIN_BITS);
    assert!(
        (&r - &half).abs() > margin,
        "reference value within 2^-{MARGIN_BITS} of a rounding boundary: {} = {t}; \
         raise PREC and MARGIN_BITS",
        what()
    );
    let q = q.to_i64().unwrap();
    if r > half {
        q + 1
    } else {
        q
    }
}

/// A finite positive x rounded to f64: `nearest` or toward zero, with the margin check
/// (relative 2^-MARGIN_BITS) unless x is exactly representable.
pub(crate) fn to_f64_checked(x: &BigFloat, nearest_even: bool, what: &dyn Fn() -> String) -> f64 {
    assert!(x.is_positive() && !x.is_zero());
    // x in [2^(e-1), 2^e): the 53-bit significand is floor(x · 2^(53-e)).
    let e = x.exponent().unwrap() as i64;
    let extra = MARGIN_BITS as i64 + 16;
    let fx = to_fixed(x, 53 - e + extra);
    let unit = BigInt::one() << extra as u64;
    let (q, r) = fx.div_mod_floor(&unit);
    let margin = BigInt::one() << 15u32;
    let exact = r.is_zero() && !x.inexact();
    if !exact {
        let half = BigInt::one() << (extra - 1) as u64;
        assert!(
            r > margin && (&unit - &r) > margin && (&r - &half).abs() > margin,
            "reference value within 2^-{MARGIN_BITS} (relative) of an f64 or an f64 midpoint: {}",
            what()
        );
    }
    let mut q = q.to_u64().unwrap();
    assert!((1 << 52..1 << 53).contains(&q));
    if nearest_even && !exact && r > (BigInt::one() << (extra - 1) as u64) {
        q += 1; // may carry to 2^53: still exact in f64
    }
    // The f64 range of these tests keeps everything normal, so this scaling is exact.
    q as f64 * 2f64.powi((e - 53) as i32)
}

/// 2^(k / 2^q) for integer k, from one power per residue of k mod 2^q (exact scaling by 2^n).
pub(crate) struct Pow2 {
    pub(crate) q: u32,
    pub(crate) base: Vec<BigFloat>,
}

impl Pow2 {
    pub(crate) fn new(q: u32, cc: &mut Consts) -> Pow2 {
        let two = BigFloat::from_word(2, PREC);
        let base = (0..1u64 << q)
            .map(|r| {
                // r / 2^q is a small dyadic: exact in f64 and in BigFloat.
                let y = BigFloat::from_f64(r as f64 / (1u64 << q) as f64, PREC);
                two.pow(&y, PREC, RM, cc)
            })
            .collect();
        Pow2 { q, base }
    }

    pub(crate) fn get(&self, k: i64) -> BigFloat {
        let n = k.div_euclid(1 << self.q);
        let r = k.rem_euclid(1 << self.q) as usize;
        let scale = BigFloat::from_f64(2f64.powi(n as i32), PREC);
        self.base[r].mul(&scale, PREC, RM) // exact: a power of two
    }
}

/// Reference value of a word as the correctly rounded f64.
pub(crate) fn value(fmt: Fmt, w: u64, pow: &Pow2) -> f64 {
    match fmt.decode(w) {
        Word::NaN => f64::NAN,
        Word::Zero => 0.0,
        Word::Num { neg, code } => {
            let v = to_f64_checked(&pow.get(code), true, &|| fmt.describe(w));
            if neg {
                -v
            } else {
                v
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The reference arithmetic of one format.

pub(crate) struct Reference {
    pub(crate) fmt: Fmt,
    /// floor(2^G_BITS · 2^F log2(1 + 2^(-d/2^F))) for every d in 0..=2·code_max.
    pub(crate) sb: Vec<i128>,
    /// floor(2^G_BITS · 2^F log2(1 - 2^(-d/2^F))) for every d in 1..=2·code_max (db[0] unused).
    pub(crate) db: Vec<i128>,
    /// For j = code_min-1 ..= code_max: the largest f64 below the rounding boundary
    /// 2^((2j+1)/2^(F+1)) between codes j and j+1 (the boundary is irrational).
    pub(crate) boundary_below: Vec<f64>,
}

impl Reference {
    pub(crate) fn build(fmt: Fmt) -> Reference {
        let scale_f = BigFloat::from_u64(1 << fmt.f, PREC);
        let one = BigFloat::from_word(1, PREC);
        let dmax = 2 * fmt.code_max();
        // The G values, in two threads (each astro-float log2 is ~0.1 ms).
        let threads = 2;
        let parts: Vec<Vec<(i64, i128, i128)>> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..threads)
                .map(|t| {
                    let (scale_f, one) = (scale_f.clone(), one.clone());
                    s.spawn(move || {
                        let mut cc = consts();
                        let pow = Pow2::new(fmt.f, &mut cc);
                        let mut out = Vec::new();
                        let mut d = t as i64;
                        while d <= dmax {
                            let y = pow.get(-d);
                            let mut g = |v: BigFloat, what: &str| -> i128 {
                                let t = v.log2(PREC, RM, &mut cc).mul(&scale_f, PREC, RM);
                                // Check the rounding boundary margin even though only the
                                // floor is stored: the rounding is decided from it later.
                                nearest(&t, &|| format!("{what} d={d} of {fmt:?}"));
                                let fx = to_fixed(&t, G_BITS as i64);
                                fx.to_i128().unwrap()
                            };
                            let sb = g(one.add(&y, PREC, RM), "sb");
                            let db = if d == 0 {
                                i128::MIN
                            } else {
                                g(one.sub(&y, PREC, RM), "db")
                            };
                            out.push((d, sb, db));
                            d += threads as i64;
                        }
                        out
                    })
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let mut sb = vec![0; dmax as usize + 1];
        let mut db = vec![0; dmax as usize + 1];
        for (d, s, t) in parts.into_iter().flatten() {
            sb[d as usize] = s;
            db[d as usize] = t;
        }

        let mut cc = consts();
        let pow = Pow2::new(fmt.f + 1, &mut cc);
        let boundary_below = (fmt.code_min() - 1..=fmt.code_max())
            .map(|j| {
                let b = pow.get(2 * j + 1);
                to_f64_checked(&b, false, &|| format!("boundary j={j} of {fmt:?}"))
            })
            .collect();
        Reference {
            fmt,
            sb,
            db,
            boundary_below,
        }
    }

    /// The shared reference of a format, built once (concurrent callers wait for it).
    pub(crate) fn get(fmt: Fmt) -> &'static Reference {
        static R56: OnceLock<Reference> = OnceLock::new();
        static R44: OnceLock<Reference> = OnceLock::new();
        let cell = match fmt {
            LNS_5_6 => &R56,
            LNS_4_4 => &R44,
            _ => panic!("no reference cache for {fmt:?}"),
        };
        cell.get_or_init(|| Reference::build(fmt))
    }

    /// round(2^F log2(1 ± 2^(-d/2^F))) + lead, in the G_BITS fixed point (exact).
    pub(crate) fn round_g(&self, lead: i64, g: i128) -> i128 {
        let t = ((lead as i128) << G_BITS) + g;
        (t + (1i128 << (G_BITS - 1))) >> G_BITS
    }

    /// a + b (or a - b): the exact sum's log2, rounded, then saturate/flush.
    pub(crate) fn add(&self, a: u64, b: u64, negate_b: bool) -> u64 {
        let fmt = self.fmt;
        match (fmt.decode(a), fmt.decode(b)) {
            (Word::NaN, _) | (_, Word::NaN) => fmt.encode(Word::NaN),
            (Word::Zero, Word::Zero) => fmt.encode(Word::Zero),
            (Word::Zero, Word::Num { neg, code }) => fmt.encode(Word::Num {
                neg: neg ^ negate_b,
                code,
            }),
            (Word::Num { .. }, Word::Zero) => a,
            (Word::Num { neg: na, code: ca }, Word::Num { neg: nb, code: cb }) => {
                let nb = nb ^ negate_b;
                // |a ± b| = 2^(lead/2^F) (1 ± 2^(-d/2^F)), the sign is the larger magnitude's.
                let (neg, lead, d) = if ca >= cb {
                    (na, ca, ca - cb)
                } else {
                    (nb, cb, cb - ca)
                };
                if na == nb {
                    fmt.finish(neg, self.round_g(lead, self.sb[d as usize]))
                } else if d == 0 {
                    fmt.encode(Word::Zero) // x - x = 0 exactly
                } else {
                    fmt.finish(neg, self.round_g(lead, self.db[d as usize]))
                }
            }
        }
    }

    pub(crate) fn mul(&self, a: u64, b: u64) -> u64 {
        let fmt = self.fmt;
        match (fmt.decode(a), fmt.decode(b)) {
            (Word::NaN, _) | (_, Word::NaN) => fmt.encode(Word::NaN),
            (Word::Zero, _) | (_, Word::Zero) => fmt.encode(Word::Zero),
            (Word::Num { neg: na, code: ca }, Word::Num { neg: nb, code: cb }) => {
                fmt.finish(na ^ nb, (ca + cb) as i128)
            }
        }
    }

    pub(crate) fn div(&self, a: u64, b: u64) -> u64 {
        let fmt = self.fmt;
        match (fmt.decode(a), fmt.decode(b)) {
            (Word::NaN, _) | (_, Word::NaN) | (_, Word::Zero) => fmt.encode(Word::NaN),
            (Word::Zero, _) => fmt.encode(Word::Zero),
            (Word::Num { neg: na, code: ca }, Word::Num { neg: nb, code: cb }) => {
                fmt.finish(na ^ nb, (ca - cb) as i128)
            }
        }
    }

    /// The word nearest to x in the log domain, by comparison with the boundaries.
    pub(crate) fn convert_f64(&self, x: f64) -> u64 {
        let fmt = self.fmt;
        if !x.is_finite() {
            return fmt.encode(Word::NaN);
        }
        if x == 0.0 {
            return fmt.encode(Word::Zero);
        }
        let a = x.abs();
        // Boundary j lies below |x| iff its f64 floor does (no boundary is an f64).
        let above = self.boundary_below.partition_point(|&b| b < a) as i64;
        if above == 0 {
            return fmt.encode(Word::Zero);
        }
        fmt.finish(x < 0.0, (fmt.code_min() - 1 + above) as i128)
    }
}
