//! The codecs on words of a fix, posit or f32 format, with a runtime scale word: the exact rule
//! the RTL units `q8-enc` and `q8-dec` implement (docs/formats.md, "q8 on words").
//!
//! The f32 path ([`Codebook::encode`], [`Codebook::decode`]) divides nothing and rounds once,
//! but its operands are f32 values; a 32-bit fix word or the product of a table value and a
//! posit scale is not always one. Here every operand is the exact value of its word:
//! - decoding: the code's table value times the scale, rounded once to the format (the
//!   format's own rounding: nearest even and saturation for fix, the posit standard's
//!   bit-string rounding for posits); a NaR scale gives NaR;
//! - encoding: the magnitude field whose value times the scale is nearest to |x|, that is
//!   the number of midpoints m with m·scale <= |x| (ties to the larger magnitude, as
//!   [`Codebook::encode`]), with x's sign. A scale that is zero, negative or NaR acts as 0:
//!   every x encodes as ±(smallest magnitude); a NaR x as +(smallest magnitude).
//!
//! Where both apply (every value of the words exact in f32 and scale > 0), encoding agrees
//! with [`Codebook::encode`]; the tests check that, and check both rules against an exact
//! nearest-value search over all 128 magnitudes.
//!
//! f32 words (the u64 holds the IEEE pattern) follow the same rule with IEEE's specials:
//! encoding keeps −0's sign, a NaN x gives +(smallest magnitude), ±∞ gives ±(largest), and a
//! scale that is not finite and > 0 acts as 0; decoding is exactly [`Codebook::decode`] (the
//! exact product rounded once to f32: nearest even, subnormals, overflow to ±∞), a NaN
//! result (NaN scale, or 0·∞) the canonical quiet NaN [`F32_NAN`], flagged `nan`.

use std::sync::OnceLock;

use num_bigint::BigUint;
use num_traits::Zero;

use super::{Codebook, Q8Type, SIGN_BIT};
use crate::format::{err, Format, FormatError};
use crate::posit::Decoded;
use crate::F32;

/// The tables as integers, what the RTL's ROMs hold: every magnitude value is
/// `values[field] / 2^frac_bits` and every midpoint `midpoints[j] / 2^(frac_bits + 1)`, exactly.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FixedTables {
    /// The fewest fraction bits that hold every magnitude value exactly.
    pub frac_bits: u32,
    /// By 7-bit magnitude field.
    pub values: Vec<u64>,
    /// Between neighbouring distinct magnitudes, ascending (as [`Codebook::midpoints`]).
    pub midpoints: Vec<u64>,
}

impl Codebook {
    /// The tables as integers (exact: every value is an f32 below 2, every midpoint the sum
    /// of two of them).
    pub fn fixed(&self) -> FixedTables {
        // An f32 v = sig·2^(e − 23) with a 24-bit sig; v·2^k is an integer once k >= 23 − e
        // less the trailing zeros of sig.
        let bits_needed = |v: f32| -> u32 {
            if v == 0.0 {
                return 0;
            }
            let b = v.to_bits();
            let exp = ((b >> 23) & 0xff) as i32 - 127;
            let sig = (b & 0x7f_ffff) | 0x80_0000;
            (23 - exp - sig.trailing_zeros() as i32).max(0) as u32
        };
        let frac_bits = self.values[..128]
            .iter()
            .map(|&v| bits_needed(v))
            .max()
            .unwrap_or(0);
        let to_int = |v: f32| -> u64 {
            let x = v as f64 * 2f64.powi(frac_bits as i32);
            assert!(
                x.fract() == 0.0 && x < 2f64.powi(62),
                "{v} in {frac_bits} bits"
            );
            x as u64
        };
        let values: Vec<u64> = self.values[..128].iter().map(|&v| to_int(v)).collect();
        let midpoints = self
            .magnitude_fields
            .windows(2)
            .map(|w| values[w[0] as usize] + values[w[1] as usize])
            .collect();
        FixedTables {
            frac_bits,
            values,
            midpoints,
        }
    }
}

impl FixedTables {
    /// A short, stable digest of the values and midpoints (FNV-1a 64 over the little-endian
    /// entries), for RTL manifests.
    pub fn digest(&self) -> String {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for v in self.values.iter().chain(&self.midpoints) {
            for b in v.to_le_bytes() {
                h ^= b as u64;
                h = h.wrapping_mul(0x0100_0000_01b3);
            }
        }
        format!(
            "fnv1a64:{h:016x}:f{}:values{}:midpoints{}",
            self.frac_bits,
            self.values.len(),
            self.midpoints.len()
        )
    }
}

/// [`Codebook::fixed`] of each type, built on first use.
pub(super) fn fixed_of(ty: Q8Type) -> &'static FixedTables {
    static TABLES: [OnceLock<FixedTables>; 4] = [
        OnceLock::new(),
        OnceLock::new(),
        OnceLock::new(),
        OnceLock::new(),
    ];
    TABLES[ty as usize].get_or_init(|| ty.codebook().fixed())
}

/// The NaN `q8-dec` gives on f32 words: the canonical quiet NaN.
pub const F32_NAN: u64 = 0x7fc0_0000;

/// The exact value of a word: None for NaR (and for f32 NaN and ±∞, which the codecs handle
/// first), else (negative, num, den).
pub(super) type WordValue = Option<(bool, BigUint, BigUint)>;

/// The f32 of a word, refusing words of more than 32 bits.
fn f32_of(word: u64) -> Result<f32, FormatError> {
    match u32::try_from(word) {
        Ok(b) => Ok(f32::from_bits(b)),
        Err(_) => err(format!("{word:#x} is not a word of f32")),
    }
}

pub(super) fn word_value(format: Format, word: u64) -> Result<WordValue, FormatError> {
    match format {
        Format::F32(F32) => {
            let v = f32_of(word)?;
            if !v.is_finite() {
                return Ok(None);
            }
            // Every finite f32 is sig·2^e with |e| small enough for exact rationals.
            let b = word as u32;
            let (exp, frac) = ((b >> 23) & 0xff, b & 0x7f_ffff);
            let (sig, e) = if exp == 0 {
                (frac, -149i32)
            } else {
                (frac | 0x80_0000, exp as i32 - 150)
            };
            let one = BigUint::from(1u8);
            let (num, den) = if e >= 0 {
                (BigUint::from(sig) << e as u32, one)
            } else {
                (BigUint::from(sig), one << (-e) as u32)
            };
            Ok(Some((b >> 31 == 1, num, den)))
        }
        Format::Fix(f) => {
            if !f.is_word(word) {
                return err(format!("{word:#x} is not a word of {format}"));
            }
            let i = f.to_int(word);
            Ok(Some((
                i < 0,
                BigUint::from(i.unsigned_abs()),
                BigUint::from(1u8) << f.frac_bits,
            )))
        }
        Format::Posit(f) => {
            if !f.is_word(word) {
                return err(format!("{word:#x} is not a word of {format}"));
            }
            Ok(match f.decode(word) {
                Decoded::Zero => Some((false, BigUint::zero(), BigUint::from(1u8))),
                Decoded::NaR => None,
                Decoded::Num { neg, scale, sig } => {
                    // sig holds the hidden bit at bit 62: value = sig·2^(scale − 62).
                    let e = scale as i64 - 62;
                    let one = BigUint::from(1u8);
                    let (num, den) = if e >= 0 {
                        (BigUint::from(sig) << e as u64, one)
                    } else {
                        (BigUint::from(sig), one << (-e) as u64)
                    };
                    Some((neg, num, den))
                }
            })
        }
        other => err(format!(
            "q8 words need a fix, posit or f32 format (e.g. fix:7:8, posit:16:1, f32), not {other}"
        )),
    }
}

impl Q8Type {
    /// The code of the word `x` (see the module comment), scale word `scale`, both of
    /// `format` (fix, posit or f32).
    pub fn encode_word(self, format: Format, x: u64, scale: u64) -> Result<u8, FormatError> {
        let book = self.codebook();
        let x_word = x;
        let x = word_value(format, x)?;
        let s = word_value(format, scale)?;
        // f32: ±∞ x (x's value is None, as NaN's) is ±(largest magnitude) at a valid scale.
        let infinite = format == Format::F32(F32) && f32_of(x_word)?.is_infinite();
        let neg = match &x {
            Some((neg, _, _)) => *neg,
            None if infinite => x_word >> 31 == 1,
            None => return Ok(book.magnitude_fields[0]),
        };
        let sign = if neg { SIGN_BIT } else { 0 };
        let (sn, sd) = match s {
            Some((false, n, d)) if !n.is_zero() => (n, d),
            _ => return Ok(book.magnitude_fields[0] | sign),
        };
        let Some((_, xn, xd)) = x else {
            return Ok(book.magnitude_fields[book.magnitude_fields.len() - 1] | sign);
        };
        let t = fixed_of(self);
        // m/2^(F+1) · sn/sd <= xn/xd  <=>  m·sn·xd <= xn·sd·2^(F+1)
        let right = (&xn * &sd) << (t.frac_bits + 1);
        let left = &sn * &xd;
        let i = t
            .midpoints
            .partition_point(|&m| &left * BigUint::from(m) <= right);
        Ok(book.magnitude_fields[i] | sign)
    }

    /// The word of `format` nearest to the code's value times the scale word `scale`.
    pub fn decode_word(self, format: Format, code: u8, scale: u64) -> Result<u64, FormatError> {
        self.decode_word_flagged(format, code, scale)
            .map(|(y, _)| y)
    }

    /// [`Q8Type::decode_word`] and its flag, as `q8-dec` outputs it: for fix, `overflow`
    /// (the rounded product lies outside the word, so the word saturated); for posits, `nar`
    /// (the result is NaR: the scale was); for f32, `nan` (the result is NaN, [`F32_NAN`]).
    pub fn decode_word_flagged(
        self,
        format: Format,
        code: u8,
        scale: u64,
    ) -> Result<(u64, bool), FormatError> {
        if format == Format::F32(F32) {
            // The f64 product of two f32 values is exact; the cast rounds it once.
            let y = self.decode(code, f32_of(scale)?);
            return Ok(if y.is_nan() {
                (F32_NAN, true)
            } else {
                (y.to_bits() as u64, false)
            });
        }
        let t = fixed_of(self);
        let Some((s_neg, sn, sd)) = word_value(format, scale)? else {
            return match format {
                Format::Posit(f) => Ok((f.nar(), true)),
                _ => unreachable!("only posits have NaR"),
            };
        };
        let v = BigUint::from(t.values[(code & !SIGN_BIT) as usize]);
        let num = v * sn;
        let den = sd << t.frac_bits;
        let neg = (code & SIGN_BIT != 0) != s_neg;
        Ok(match format {
            Format::Fix(f) => {
                // The magnitude in units of the word, rounded to nearest, ties to even.
                let (q, r) = ((&num << f.frac_bits) / &den, (&num << f.frac_bits) % &den);
                let twice = r << 1u32;
                let up = twice > den || (twice == den && q.bit(0));
                let q = if up { q + 1u32 } else { q };
                let top = BigUint::from(1u8) << (f.width() - 1);
                let over = if neg { q > top } else { q >= top };
                (f.from_ratio(neg, &num, &den), over)
            }
            Format::Posit(f) => (f.from_ratio(neg, &num, &den), false),
            _ => unreachable!("word_value refused it"),
        })
    }
}

#[cfg(test)]
mod f32_tests;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::family_trait::Family;
    use crate::{FixFormat, PositFormat};
    use std::cmp::Ordering;

    fn fix(i: u32, f: u32) -> Format {
        Format::Fix(FixFormat::new(i, f).unwrap())
    }

    /// The nearest field by exhaustive search: |x| against v·s for all 128 fields, exact
    /// rationals; ties to the larger magnitude, equal magnitudes to the lowest field.
    pub(super) fn nearest(ty: Q8Type, format: Format, x: u64, scale: u64) -> u8 {
        let (neg, xn, xd) = word_value(format, x).unwrap().unwrap();
        let (sn, sd) = match word_value(format, scale).unwrap() {
            Some((false, n, d)) if !n.is_zero() => (n, d),
            _ => (BigUint::zero(), BigUint::from(1u8)),
        };
        let t = ty.codebook().fixed();
        // Compare |x − v·s| with common denominator xd·sd·2^F.
        let dist = |m: usize| -> BigUint {
            let a = (&xn * &sd) << t.frac_bits;
            let b = BigUint::from(t.values[m]) * &sn * &xd;
            if a > b {
                a - b
            } else {
                b - a
            }
        };
        let mut best = 0usize;
        for m in 1..128 {
            let (dm, db) = (dist(m), dist(best));
            let closer = match dm.cmp(&db) {
                Ordering::Less => true,
                Ordering::Equal => t.values[m] > t.values[best],
                Ordering::Greater => false,
            };
            if closer {
                best = m;
            }
        }
        best as u8 | if neg { SIGN_BIT } else { 0 }
    }

    #[test]
    fn fixed_tables_are_the_f32_tables() {
        for ty in Q8Type::ALL {
            let book = ty.codebook();
            let t = book.fixed();
            let unit = 2f64.powi(-(t.frac_bits as i32));
            for m in 0..128 {
                assert_eq!(t.values[m] as f64 * unit, book.values[m] as f64, "{ty}");
            }
            for (a, b) in t.midpoints.iter().zip(&book.midpoints) {
                assert_eq!(*a as f64 * unit / 2.0, *b, "{ty}");
            }
            assert!(t.midpoints.windows(2).all(|w| w[0] < w[1]), "{ty}");
            // The fewest bits: some value needs the last one.
            assert!(t.values.iter().any(|v| v & 1 == 1), "{ty}");
            // As docs/formats.md states them ("q8 on words").
            let documented = match ty {
                Q8Type::DynamicTree => 41,
                Q8Type::StaticTree => 50,
                Q8Type::Linear => 28,
                Q8Type::Mantissa => 50,
            };
            assert_eq!(t.frac_bits, documented, "{ty}");
        }
    }

    /// Every 16-bit fix:7:8 word is an f32, so the word rule is the f32 rule at any positive
    /// scale; the exhaustive search agrees too.
    #[test]
    fn encode_word_is_the_f32_encode_on_fix_7_8() {
        let f = fix(7, 8);
        let Format::Fix(ff) = f else { unreachable!() };
        let scales = [0x0100u64, 0x0003, 0x7fff, 0x0180, 0x1234, 0x0001];
        for ty in Q8Type::ALL {
            for &s in &scales {
                let sv = ff.to_f64(s) as f32;
                for x in 0..1u64 << 16 {
                    let want = ty.encode(ff.to_f64(x) as f32, sv);
                    assert_eq!(ty.encode_word(f, x, s).unwrap(), want, "{ty} {x:#x} {s:#x}");
                }
                for x in (0..1u64 << 16).step_by(97) {
                    assert_eq!(
                        ty.encode_word(f, x, s).unwrap(),
                        nearest(ty, f, x, s),
                        "{ty} {x:#x} {s:#x}"
                    );
                }
            }
        }
    }

    #[test]
    fn encode_word_is_the_nearest_value_on_posits() {
        let f = Format::Posit(PositFormat::draft(8, 0));
        let Format::Posit(pf) = f else { unreachable!() };
        for ty in Q8Type::ALL {
            for s in [0x40u64, 0x01, 0x7f, 0x23, 0x5a] {
                for x in 0..256u64 {
                    if x == pf.nar() {
                        continue;
                    }
                    let got = ty.encode_word(f, x, s).unwrap();
                    assert_eq!(got, nearest(ty, f, x, s), "{ty} {x:#x} {s:#x}");
                    let want = ty.encode(pf.to_f64(x) as f32, pf.to_f64(s) as f32);
                    assert_eq!(got, want, "{ty} {x:#x} {s:#x}");
                }
            }
        }
    }

    /// Ties: |x| exactly at a midpoint times the scale goes to the larger magnitude, one
    /// word below it to a smaller one. With a 32-bit fix format, scale 2^k and x the midpoint's
    /// odd part make the tie exact wherever both fit.
    #[test]
    fn encode_word_ties_go_up() {
        let f = fix(15, 16);
        for ty in Q8Type::ALL {
            let book = ty.codebook();
            let t = book.fixed();
            let mut ties = 0;
            for (j, &m) in t.midpoints.iter().enumerate() {
                let tz = m.trailing_zeros();
                let k = (t.frac_bits + 1) as i64 - tz as i64; // s = 2^k / 2^16
                let x = m >> tz;
                if !(0..=30).contains(&k) || x >> 31 != 0 || x < 2 {
                    continue;
                }
                let s = 1u64 << k;
                let up = book.magnitude_fields[j + 1];
                assert_eq!(ty.encode_word(f, x, s).unwrap(), up, "{ty} tie {j}");
                let below = ty.encode_word(f, x - 1, s).unwrap();
                assert!(
                    book.values[below as usize] < book.values[up as usize],
                    "{ty} {j}"
                );
                assert_eq!(below, nearest(ty, f, x - 1, s), "{ty} below {j}");
                let neg = (x as i64).wrapping_neg() as u64 & 0xffff_ffff;
                assert_eq!(
                    ty.encode_word(f, neg, s).unwrap(),
                    up | SIGN_BIT,
                    "{ty} −tie {j}"
                );
                assert_eq!(nearest(ty, f, x, s), up, "{ty} tie {j}");
                ties += 1;
            }
            assert!(ties >= 20, "{ty}: only {ties} ties");
        }
    }

    #[test]
    fn decode_word_agrees_with_f32_at_power_of_two_scales() {
        let fmts = [
            fix(7, 8),
            fix(3, 12),
            Format::Posit(PositFormat::draft(16, 1)),
        ];
        for f in fmts {
            let calc = f.calc();
            for ty in Q8Type::ALL {
                for e in [-6i32, 0, 3] {
                    let s = calc.from_f64(2f64.powi(e));
                    let sv = calc.to_f64(s) as f32;
                    for code in 0..=255u8 {
                        let want = calc.from_f64(ty.decode(code, sv) as f64);
                        let got = ty.decode_word(f, code, s).unwrap();
                        assert_eq!(got, want, "{ty} {f} {code:#x} 2^{e}");
                    }
                }
            }
        }
    }

    /// Every code and scale word of fix:3:4 against f64 (exact there: 24 + 8 bits): the word
    /// is the product rounded to nearest even and clamped, the flag says it was clamped.
    #[test]
    fn fix_decode_flags_saturation_exactly() {
        let f = fix(3, 4);
        let Format::Fix(ff) = f else { unreachable!() };
        let mut flagged = 0;
        for ty in Q8Type::ALL {
            for s in 0..256u64 {
                for code in 0..=255u8 {
                    let exact = ty.value(code) as f64 * ff.to_f64(s) * 16.0;
                    let q = exact.round_ties_even();
                    let over = !(-128.0..=127.0).contains(&q);
                    let want = ff.from_int(q as i128);
                    let got = ty.decode_word_flagged(f, code, s).unwrap();
                    assert_eq!(got, (want, over), "{ty} {code:#x} {s:#x}");
                    flagged += over as u32;
                }
            }
        }
        assert!(flagged > 100, "{flagged}");
    }

    #[test]
    fn decode_word_rounds_once_and_handles_nar_and_negative_scales() {
        let f = fix(7, 8);
        let Format::Fix(ff) = f else { unreachable!() };
        let ty = Q8Type::Linear;
        // 1/127 · 1.0 = 0.00787..: 2.0157/256 rounds to 2/256.
        assert_eq!(ty.decode_word(f, 1, ff.one()).unwrap(), 2);
        // A negative scale flips the sign; code 127 is 1.0.
        assert_eq!(
            ty.decode_word(f, 127, ff.neg(ff.one())).unwrap(),
            ff.neg(ff.one())
        );
        // Saturation: 1.0 · 127.99 rounds to 127.99 exactly; −(−128) saturates.
        assert_eq!(ty.decode_word(f, 0xff, 0x8000).unwrap(), 0x7fff);
        let p = Format::Posit(PositFormat::draft(8, 0));
        assert_eq!(ty.decode_word(p, 5, 0x80).unwrap(), 0x80);
        assert_eq!(ty.decode_word(p, 0, 0x40).unwrap(), 0);
        assert!(ty.decode_word(Format::F32(F32), 0, 1 << 32).is_err());
        assert!(ty
            .decode_word(Format::Lns(crate::LnsFormat::new(3, 2).unwrap()), 0, 0)
            .is_err());
        // Flags: saturation (not its neighbour), NaR.
        assert_eq!(
            ty.decode_word_flagged(f, 0xff, 0x8000).unwrap(),
            (0x7fff, true)
        );
        assert_eq!(
            ty.decode_word_flagged(f, 0x7f, 0x8000).unwrap(),
            (0x8000, false)
        );
        assert_eq!(
            ty.decode_word_flagged(f, 0x7f, 0x7fff).unwrap(),
            (0x7fff, false)
        );
        assert_eq!(ty.decode_word_flagged(p, 5, 0x80).unwrap(), (0x80, true));
        assert!(!ty.decode_word_flagged(p, 5, 0x7f).unwrap().1);
        assert!(ty.encode_word(f, 1 << 16, 0).is_err());
    }
}
