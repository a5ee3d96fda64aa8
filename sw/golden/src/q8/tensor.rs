//! A tensor of words through a codec and back: the rule of training's `--compress-grad` and
//! `--compress-act` (docs/formats.md, "q8 in training"), which the rtl machine runs on the
//! `q8-enc` and `q8-dec` units.
//!
//! - fix and posit words follow the word rule ([`Q8Type::encode_word`],
//!   [`Q8Type::decode_word`]) with one scale word per tensor ([`Q8Type::scale_word`]): the
//!   absmax word for the normalised types, 10^o × unit rounded into the format for the
//!   exponent-offset types;
//! - every other format (f32, LNS) follows the f32 rule ([`Q8Type::encode_words`],
//!   [`Q8Type::decode_words`]).
//!
//! [`Q8Type::encode_tensor`] gives, word for word, what `encode_word` gives at the tensor's
//! scale, but compares integer keys with thresholds computed once per tensor (one per
//! midpoint), so that training does not spend a big-integer product per word.

use num_bigint::BigUint;
use num_traits::Zero;

use super::word::{fixed_of, word_value};
use super::{Q8Type, Scaling, SIGN_BIT};
use crate::exact::f64_ratio;
use crate::family_trait::Family;
use crate::format::{err, Format, FormatError};

/// The scale that travels with a tensor's codes: a word of the format (fix, posit) or an f32
/// (the f32 rule of f32 and LNS words).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum TensorScale {
    Word(u64),
    F32(f32),
}

impl TensorScale {
    /// Bytes of the scale of a tensor of `format` on the wire: ⌈width/8⌉ for a word, 4 for
    /// an f32.
    pub fn byte_len(format: Format) -> usize {
        if format.entry().q8_word_rule {
            format.width().div_ceil(8) as usize
        } else {
            4
        }
    }

    /// The scale's [`TensorScale::byte_len`] little-endian bytes.
    pub fn to_bytes(self, format: Format) -> Vec<u8> {
        match self {
            TensorScale::Word(w) => w.to_le_bytes()[..Self::byte_len(format)].to_vec(),
            TensorScale::F32(s) => s.to_le_bytes().to_vec(),
        }
    }

    /// The scale of a tensor of `format` from its bytes ([`TensorScale::byte_len`] of them),
    /// checked to be a word of the format.
    pub fn from_bytes(format: Format, bytes: &[u8]) -> Result<TensorScale, FormatError> {
        if bytes.len() != Self::byte_len(format) {
            return err(format!(
                "a {format} scale takes {} bytes, not {}",
                Self::byte_len(format),
                bytes.len()
            ));
        }
        if format.entry().q8_word_rule {
            let mut b = [0u8; 8];
            b[..bytes.len()].copy_from_slice(bytes);
            let w = u64::from_le_bytes(b);
            key(format, w)?;
            Ok(TensorScale::Word(w))
        } else {
            Ok(TensorScale::F32(f32::from_le_bytes(
                bytes.try_into().expect("4 bytes"),
            )))
        }
    }
}

impl Q8Type {
    /// The scale word of a tensor of fix or posit `words`, gradients summed over `unit`
    /// samples (1 for activations):
    /// - normalised types (`dynamic-tree`, `linear`): the largest |x| over the words, as a word
    ///   (posit: the word's negation, exact; fix: the saturating |x|, so the most negative
    ///   word −2^I gives the largest word, one unit below its magnitude). NaR words do not
    ///   count; none left gives 0. `unit` does not enter: x/unit against absmax/unit is x
    ///   against absmax, exactly.
    /// - exponent-offset types (`static-tree`, `mantissa`): 10^o × unit, the exact product
    ///   rounded once into the format by its own rule (fix: nearest even, saturating; posit:
    ///   the standard's rounding). Encoding x against 10^o × unit is encoding the mean x/unit
    ///   against 10^o, without rounding x/unit.
    pub fn scale_word(self, format: Format, words: &[u64], unit: f64) -> Result<u64, FormatError> {
        check_format(format)?;
        match self.default_scaling() {
            Scaling::Absmax => {
                let mut best: Option<(u128, u64)> = None;
                for &w in words {
                    if let Some(k) = key(format, w)? {
                        if best.is_none_or(|(b, _)| k > b) {
                            best = Some((k, w));
                        }
                    }
                }
                Ok(match (best, format) {
                    (None, _) => 0,
                    (Some((_, w)), Format::Fix(f)) => f.abs(w),
                    (Some((_, w)), Format::Posit(f)) => f.abs(w),
                    _ => unreachable!("check_format refused it"),
                })
            }
            Scaling::Offset(o) => {
                if !(unit.is_finite() && unit > 0.0) {
                    return err(format!(
                        "the q8 unit (batch size) must be a positive number, not {unit}"
                    ));
                }
                let (mut num, mut den) = f64_ratio(unit);
                let p = BigUint::from(10u8).pow(o.unsigned_abs());
                if o >= 0 {
                    num *= p;
                } else {
                    den *= p;
                }
                Ok(match format {
                    Format::Fix(f) => f.from_ratio(false, &num, &den),
                    Format::Posit(f) => f.from_ratio(false, &num, &den),
                    _ => unreachable!("check_format refused it"),
                })
            }
        }
    }

    /// The code of every word at one scale word: [`Q8Type::encode_word`] of each.
    pub fn encode_tensor(
        self,
        format: Format,
        words: &[u64],
        scale: u64,
    ) -> Result<Vec<u8>, FormatError> {
        let book = self.codebook();
        let smallest = book.magnitude_fields[0];
        let thresholds = match word_value(format, scale)? {
            Some((false, n, d)) if !n.is_zero() => Some(self.thresholds(format, &n, &d)?),
            _ => None,
        };
        words
            .iter()
            .map(|&w| {
                let Some(k) = key(format, w)? else {
                    return Ok(smallest); // NaR: no sign
                };
                let sign = if is_negative(format, w) { SIGN_BIT } else { 0 };
                let i = thresholds
                    .as_ref()
                    .map_or(0, |t| t.partition_point(|&t| t <= k));
                Ok(book.magnitude_fields[i] | sign)
            })
            .collect()
    }

    /// The word of every code at one scale word: [`Q8Type::decode_word`] of each.
    pub fn decode_tensor(
        self,
        format: Format,
        codes: &[u8],
        scale: u64,
    ) -> Result<Vec<u64>, FormatError> {
        let table = (0..=255u8)
            .map(|c| self.decode_word(format, c, scale))
            .collect::<Result<Vec<u64>, FormatError>>()?;
        Ok(codes.iter().map(|&c| table[c as usize]).collect())
    }

    /// `words` of `format` through the codec and back, gradients summed over `unit` samples:
    /// [`Q8Type::compress_tensor`] then [`Q8Type::expand_tensor`].
    pub fn through_words(
        self,
        format: Format,
        words: &[u64],
        unit: f64,
    ) -> Result<Vec<u64>, FormatError> {
        let (scale, codes) = self.compress_tensor(format, words, unit)?;
        self.expand_tensor(format, &codes, scale, unit)
    }

    /// A tensor's scale and codes, as a sender holds them: the word rule at
    /// [`Q8Type::scale_word`] for fix and posit, the f32 rule ([`Q8Type::encode_words`])
    /// otherwise.
    pub fn compress_tensor(
        self,
        format: Format,
        words: &[u64],
        unit: f64,
    ) -> Result<(TensorScale, Vec<u8>), FormatError> {
        if format.entry().q8_word_rule {
            let scale = self.scale_word(format, words, unit)?;
            Ok((
                TensorScale::Word(scale),
                self.encode_tensor(format, words, scale)?,
            ))
        } else {
            let (scale, codes) = self.encode_words(&format.calc(), words, unit)?;
            Ok((TensorScale::F32(scale), codes))
        }
    }

    /// The words a receiver of [`Q8Type::compress_tensor`]'s scale and codes holds.
    pub fn expand_tensor(
        self,
        format: Format,
        codes: &[u8],
        scale: TensorScale,
        unit: f64,
    ) -> Result<Vec<u64>, FormatError> {
        match scale {
            TensorScale::Word(w) => self.decode_tensor(format, codes, w),
            TensorScale::F32(s) => Ok(self.decode_words(&format.calc(), codes, s, unit)),
        }
    }

    /// For each midpoint μ_j, the smallest key whose value v has μ_j·S <= v (S = sn/sd > 0);
    /// one past the largest key where none has. Non-decreasing in j.
    fn thresholds(
        self,
        format: Format,
        sn: &BigUint,
        sd: &BigUint,
    ) -> Result<Vec<u128>, FormatError> {
        let t = fixed_of(self);
        let shift = t.frac_bits as u64 + 1;
        match format {
            Format::Fix(f) => {
                // k/2^F >= M·S/2^(T+1)  <=>  k >= ceil(M·sn·2^F / (sd·2^(T+1)))
                let past = (1u128 << (f.width() - 1)) + 1;
                let den = sd << shift;
                Ok(t.midpoints
                    .iter()
                    .map(|&m| {
                        let num = (BigUint::from(m) * sn) << f.frac_bits as u64;
                        let k = (&num + &den - 1u8) / &den;
                        u128::try_from(k).map_or(past, |k| k.min(past))
                    })
                    .collect())
            }
            Format::Posit(f) => {
                // Positive posits ascend with their bits: binary search over 0..=maxpos for
                // the first with M·sn·vd <= vn·sd·2^(T+1).
                let past = f.maxpos() as u128 + 1;
                let mut lo = 0u128;
                let mut out = Vec::with_capacity(t.midpoints.len());
                for &m in &t.midpoints {
                    let left = BigUint::from(m) * sn;
                    let holds = |k: u128| -> Result<bool, FormatError> {
                        Ok(match word_value(format, k as u64)? {
                            Some((_, vn, vd)) => &left * vd <= (vn * sd) << shift,
                            None => unreachable!("positive posit words are not NaR"),
                        })
                    };
                    let mut hi = past;
                    while lo < hi {
                        let mid = lo + (hi - lo) / 2;
                        if holds(mid)? {
                            hi = mid;
                        } else {
                            lo = mid + 1;
                        }
                    }
                    out.push(lo);
                }
                Ok(out)
            }
            _ => unreachable!("word_value refused it"),
        }
    }
}

fn check_format(format: Format) -> Result<(), FormatError> {
    if format.entry().q8_word_rule {
        return Ok(());
    }
    err(format!(
        "q8 words need a {} format (e.g. fix:7:8, posit:16:1), not {format}",
        crate::family::families_with(|e| e.q8_word_rule)
    ))
}

/// A key that orders words by |value|: fix |integer|, posit the bits of |x|; None for NaR.
fn key(format: Format, w: u64) -> Result<Option<u128>, FormatError> {
    match format {
        Format::Fix(f) if f.is_word(w) => Ok(Some(f.to_int(w).unsigned_abs() as u128)),
        Format::Posit(f) if f.is_word(w) => Ok((w != f.nar()).then(|| f.abs(w) as u128)),
        _ => err(format!("{w:#x} is not a word of {format}")),
    }
}

fn is_negative(format: Format, w: u64) -> bool {
    match format {
        Format::Fix(f) => f.to_int(w) < 0,
        Format::Posit(f) => w != f.nar() && w >> (f.n - 1) & 1 == 1,
        // Refused by `check_format` (the word rule is the registry's `q8_word_rule`).
        _ => unreachable!("{format} words have no word rule"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{FixFormat, PositFormat};

    /// Tensors that reach every corner: zero, ± the extremes, NaR, the most negative fix word,
    /// and a spread of ordinary values.
    fn tensor(format: Format, n: usize) -> Vec<u64> {
        let c = format.calc();
        let mut v: Vec<u64> = (0..n)
            .map(|i| c.from_f64(((i * 7919 % 613) as f64 - 306.0) / 97.0))
            .collect();
        match format {
            Format::Fix(f) => v.extend([0, f.from_int(f.min_int() as i128), f.from_int(1)]),
            Format::Posit(f) => v.extend([0, f.maxpos(), f.neg(f.maxpos()), 1, f.nar()]),
            _ => {}
        }
        v
    }

    fn formats() -> Vec<Format> {
        vec![
            Format::Fix(FixFormat::new(7, 8).unwrap()),
            Format::Fix(FixFormat::new(3, 12).unwrap()),
            Format::Fix(FixFormat::new(15, 16).unwrap()),
            Format::Posit(PositFormat::draft(8, 2)),
            Format::Posit(PositFormat::draft(16, 1)),
            Format::Posit(PositFormat::draft(32, 2)),
        ]
    }

    /// The tensor rule is encode_word and decode_word element by element, at the scale word
    /// of the tensor and at others (zero, negative, tiny, huge, NaR).
    #[test]
    fn tensor_rule_is_the_word_rule_element_wise() {
        for format in formats() {
            let words = tensor(format, 400);
            let c = format.calc();
            for ty in Q8Type::ALL {
                let own = ty.scale_word(format, &words, 16.0).unwrap();
                let mut scales = vec![own, 0, c.from_f64(-2.5), c.from_f64(1e-3), c.from_f64(7.0)];
                scales.push(match format {
                    Format::Fix(f) => f.from_int(f.max_int() as i128),
                    Format::Posit(f) => f.nar(),
                    _ => unreachable!(),
                });
                for s in scales {
                    let codes = ty.encode_tensor(format, &words, s).unwrap();
                    for (&w, &code) in words.iter().zip(&codes) {
                        let want = ty.encode_word(format, w, s).unwrap();
                        assert_eq!(code, want, "{ty} {format} x {w:#x} scale {s:#x}");
                    }
                    let back = ty.decode_tensor(format, &codes, s).unwrap();
                    for (&code, &y) in codes.iter().zip(&back) {
                        assert_eq!(y, ty.decode_word(format, code, s).unwrap(), "{ty} {format}");
                    }
                }
                let through = ty.through_words(format, &words, 16.0).unwrap();
                let codes = ty.encode_tensor(format, &words, own).unwrap();
                assert_eq!(through, ty.decode_tensor(format, &codes, own).unwrap());
                assert_ne!(through, words, "{ty} {format} changed nothing");
            }
        }
    }

    /// Every word of fix:7:8 at a few scales, against encode_word.
    #[test]
    fn tensor_rule_is_the_word_rule_on_every_fix_7_8_word() {
        let f = Format::Fix(FixFormat::new(7, 8).unwrap());
        let words: Vec<u64> = (0..1u64 << 16).collect();
        for ty in Q8Type::ALL {
            for s in [0x0100u64, 0x0003, 0x7fff, 0x1234] {
                let codes = ty.encode_tensor(f, &words, s).unwrap();
                for (&w, &code) in words.iter().zip(&codes) {
                    assert_eq!(code, ty.encode_word(f, w, s).unwrap(), "{ty} {w:#x} {s:#x}");
                }
            }
        }
    }

    #[test]
    fn scale_words_are_the_absmax_or_the_offset_times_the_unit() {
        let fix = FixFormat::new(7, 8).unwrap();
        let f = Format::Fix(fix);
        let w = |x: f64| fix.from_f64(x);
        let words = [w(0.5), w(-3.25), w(2.0)];
        for ty in [Q8Type::DynamicTree, Q8Type::Linear] {
            assert_eq!(ty.scale_word(f, &words, 32.0).unwrap(), w(3.25));
            assert_eq!(ty.scale_word(f, &[], 1.0).unwrap(), 0);
            // −128 has no positive word: the scale saturates.
            assert_eq!(ty.scale_word(f, &[0x8000], 1.0).unwrap(), 0x7fff);
        }
        for ty in [Q8Type::StaticTree, Q8Type::Mantissa] {
            assert_eq!(ty.scale_word(f, &words, 1.0).unwrap(), w(10.0));
            assert_eq!(ty.scale_word(f, &words, 12.0).unwrap(), w(120.0));
            // 10 × 32 saturates in fix:7:8.
            assert_eq!(ty.scale_word(f, &words, 32.0).unwrap(), 0x7fff);
            assert!(ty.scale_word(f, &words, 0.0).is_err());
        }
        let p = PositFormat::draft(8, 2);
        let pf = Format::Posit(p);
        let words = [p.from_f64(-0.75), p.nar(), p.from_f64(0.5)];
        assert_eq!(
            Q8Type::Linear.scale_word(pf, &words, 1.0).unwrap(),
            p.from_f64(0.75)
        );
        // 10 × 10 = 100 rounds to a posit:8:2 word (96 or 128 by the standard's rounding).
        assert_eq!(
            Q8Type::StaticTree.scale_word(pf, &words, 10.0).unwrap(),
            p.from_f64(100.0)
        );
        let lns: Format = "lns:5:6".parse().unwrap();
        assert!(Q8Type::Linear.scale_word(lns, &[], 1.0).is_err());
        assert!(Q8Type::Linear.encode_tensor(f, &[1 << 16], 0x100).is_err());
    }
}
