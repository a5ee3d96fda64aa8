//! Seed 003's 8-bit approximations in training, as its §3.4 simulates them on one machine:
//! every weight and bias gradient passes through an 8-bit codec before it is applied (data
//! parallelism: what a worker would receive from its peers), or every hidden activation before
//! the next layer reads it (model parallelism: what the other half of a split layer would
//! receive). No error feedback, as in the paper.

use lpgen_golden::q8::Q8Type;
use lpgen_golden::Format;

use crate::machine::Word;
use crate::TrainError;

/// Where a run compresses, and with which type.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Compression {
    /// Gradients (`--compress-grad`).
    pub grad: Option<Q8Type>,
    /// Hidden activations (`--compress-act`).
    pub act: Option<Q8Type>,
}

/// Words of `f` sent through `codec` and back, the golden rule ([`Q8Type::through_words`],
/// docs/formats.md "q8 in training"): `unit` is the number of samples a gradient is summed
/// over (the batch size; 1 for activations), so that the codec sees mean gradients as the
/// paper's did.
/// - fix and posit words: the word rule (`encode_word`/`decode_word`, what the RTL units
///   compute) against one scale word per tensor, the absmax word for the normalised types,
///   10^o × `unit` rounded into `f` for the exponent-offset types;
/// - f32 and LNS words: each value divided by `unit`, rounded to f32, compressed with the
///   type's scaling, decoded, multiplied by `unit` and rounded back into `f`; NaN words come
///   back as the codec's encoding of NaN.
pub fn through_codec<W: Word>(
    codec: Q8Type,
    f: Format,
    words: &[W],
    unit: f64,
) -> Result<Vec<W>, TrainError> {
    let bits: Vec<u64> = words.iter().map(|w| w.to_bits()).collect();
    Ok(codec
        .through_words(f, &bits, unit)
        .map_err(|e| TrainError(e.to_string()))?
        .into_iter()
        .map(W::from_bits)
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tensor of words through each codec comes back as the golden rule of its format gives
    /// it (f32 and LNS: the f32 codec on the mean values; fix and posit: the word rule at the
    /// tensor's scale word, element by element), near the input, and changed.
    #[test]
    fn words_come_back_as_the_codec_gives_them() {
        for codec in Q8Type::ALL {
            for f in ["f32", "lns:5:6", "posit:16:1", "fix:7:8"] {
                let f: Format = f.parse().unwrap();
                let words: Vec<u64> = (0..200)
                    .map(|i| u64::constant(f, ((i * 37 % 101) as f64 - 50.0) / 20.0))
                    .collect();
                let back = through_codec(codec, f, &words, 20.0).unwrap();
                let want: Vec<u64> = if matches!(f, Format::Fix(_) | Format::Posit(_)) {
                    let s = codec.scale_word(f, &words, 20.0).unwrap();
                    words
                        .iter()
                        .map(|&w| {
                            let code = codec.encode_word(f, w, s).unwrap();
                            codec.decode_word(f, code, s).unwrap()
                        })
                        .collect()
                } else {
                    let values: Vec<f32> =
                        words.iter().map(|w| (w.value(f) / 20.0) as f32).collect();
                    let (scale, codes) = codec.compress(&values, codec.default_scaling()).unwrap();
                    codes
                        .iter()
                        .map(|&c| u64::constant(f, codec.decode(c, scale) as f64 * 20.0))
                        .collect()
                };
                assert_eq!(back, want, "{codec} in {f}");
                for (&w, &b) in words.iter().zip(&back) {
                    // Every type is within 0.02 of inputs of at most 0.125 (the static tree's
                    // 16 values per decade are its coarsest).
                    assert!(
                        (b.value(f) - w.value(f)).abs() / 20.0 < 0.02,
                        "{codec} in {f}"
                    );
                }
                assert_ne!(back, words, "{codec} in {f} changed nothing");
            }
        }
    }
}
