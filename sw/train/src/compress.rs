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

/// Words of `f` sent through `codec` and back ([`Q8Type::encode_words`] and
/// [`Q8Type::decode_words`]): each word's value divided by `unit` (the batch size for
/// gradients summed over a batch, so that the codec sees mean gradients as the paper's did),
/// rounded to f32, compressed with the type's scaling (absmax, or its exponent offset), decoded,
/// multiplied by `unit` and rounded back into `f`; NaN or NaR words come back as the codec's
/// encoding of NaN.
pub fn through_codec<W: Word>(
    codec: Q8Type,
    f: Format,
    words: &[W],
    unit: f64,
) -> Result<Vec<W>, TrainError> {
    let calc = f.calc();
    let bits: Vec<u64> = words.iter().map(|w| w.to_bits()).collect();
    let (scale, codes) = codec
        .encode_words(&calc, &bits, unit)
        .map_err(|e| TrainError(e.to_string()))?;
    Ok(codec
        .decode_words(&calc, &codes, scale, unit)
        .into_iter()
        .map(W::from_bits)
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tensor of words through each codec comes back as the codec's own encode and decode
    /// of its values (mean gradients: divided by the unit first), near the input, and changed.
    #[test]
    fn words_come_back_as_the_codec_gives_them() {
        for codec in Q8Type::ALL {
            for f in ["f32", "posit:16:1"] {
                let f: Format = f.parse().unwrap();
                let words: Vec<u64> = (0..200)
                    .map(|i| u64::constant(f, ((i * 37 % 101) as f64 - 50.0) / 20.0))
                    .collect();
                let back = through_codec(codec, f, &words, 20.0).unwrap();
                let values: Vec<f32> = words.iter().map(|w| (w.value(f) / 20.0) as f32).collect();
                let (scale, codes) = codec.compress(&values, codec.default_scaling()).unwrap();
                for ((&w, &b), &c) in words.iter().zip(&back).zip(&codes) {
                    let want = u64::constant(f, codec.decode(c, scale) as f64 * 20.0);
                    assert_eq!(b, want, "{codec} in {f}");
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
