//! Seed 003's 8-bit codecs on the generated `q8-enc` and `q8-dec` units (docs/formats.md,
//! "q8 in training"): one encoder and one decoder per (format, type), built on first use;
//! every word of a tensor streams through the encoder, one per cycle, then every code through
//! the decoder, with the tensor's scale word (golden [`Q8Type::scale_word`]) on the `scale`
//! input. The absmax word of the normalised types comes from the vector unit (lane `abs` of
//! every word but NaR, then `max` folding halves); 10^o × unit of the exponent-offset types is
//! a constant of the host, rounded into the format as every constant is.

use lpgen_golden::q8::Q8Type;
use lpgen_golden::{AluOp, Format};
use lpgen_hdl::{Params, Unit};
use lpgen_verif::layout::{get_bits, put_bits};

use super::{Device, Rtl};
use crate::TrainError;

impl Rtl {
    /// How many `q8-enc` and `q8-dec` designs this machine has built (two per format and type
    /// it compressed with).
    pub fn q8_designs(&self) -> usize {
        self.codecs.len()
    }

    /// The `unit` (`q8-enc` or `q8-dec`) of `codec` on words of `f`, built on first use.
    fn codec_unit(
        &mut self,
        unit: Unit,
        codec: Q8Type,
        f: Format,
    ) -> Result<&mut Device, TrainError> {
        let key = (f, codec, unit.name());
        if !self.codecs.contains_key(&key) {
            let mut p = Params::new(unit, f);
            p.q8 = codec;
            let d = Device::build(&self.tc, &p)?;
            self.codecs.insert(key, d);
        }
        Ok(self.codecs.get_mut(&key).expect("inserted"))
    }

    /// `words` of `f` (fix or posit) through `codec` on the units, gradients summed over `unit`
    /// samples: the golden [`Q8Type::through_words`], computed by the RTL.
    pub(super) fn q8_run(
        &mut self,
        codec: Q8Type,
        f: Format,
        words: &[u64],
        unit: f64,
    ) -> Result<Vec<u64>, TrainError> {
        let scale = if codec.is_normalised() {
            self.absmax_word(f, words)?
        } else {
            codec
                .scale_word(f, words, unit)
                .map_err(|e| TrainError(e.to_string()))?
        };
        if words.is_empty() {
            return Ok(vec![]);
        }
        let w = f.width();
        let enc = self.codec_unit(Unit::Q8Enc, codec, f)?;
        let codes = one_per_cycle(enc, [("x", w, words), ("scale", w, &[scale])], ("code", 8))?;
        let dec = self.codec_unit(Unit::Q8Dec, codec, f)?;
        one_per_cycle(dec, [("code", 8, &codes), ("scale", w, &[scale])], ("y", w))
    }
}

impl Rtl {
    /// The largest |x| of `words` (fix or posit) as a word, NaR words left out, 0 if none is
    /// left: [`Q8Type::scale_word`] of the normalised types, on the vector unit. Halves are
    /// folded with `max`, the shorter padded with the zero word (|x| >= 0 everywhere).
    fn absmax_word(&mut self, f: Format, words: &[u64]) -> Result<u64, TrainError> {
        let nar = f.calc().nan();
        let mut v: Vec<u64> = words.iter().copied().filter(|&w| Some(w) != nar).collect();
        if v.is_empty() {
            return Ok(f.calc().zero());
        }
        v = self.vector_run((f, f), AluOp::Abs, (&v, &[]), "y", None)?;
        while v.len() > 1 {
            let (a, b) = v.split_at(v.len().div_ceil(2));
            v = self.vector_run((f, f), AluOp::Max, (a, b), "y", None)?;
        }
        Ok(v[0])
    }
}

/// Streams operation i (input port p gets `values[i]`, or `values[0]` if it holds one word)
/// through `dev`, one per cycle, and returns output port `out` of every valid result.
fn one_per_cycle(
    dev: &mut Device,
    inputs: [(&str, u32, &[u64]); 2],
    (out, out_width): (&str, u32),
) -> Result<Vec<u64>, TrainError> {
    let n = inputs[0].2.len();
    let is = dev.layout.in_slots;
    let valid = dev.pos("in_valid");
    let ports: Vec<(usize, u32, &[u64])> = inputs
        .iter()
        .map(|&(name, width, values)| (dev.pos(name), width, values))
        .collect();
    let mut ins = vec![0u64; n * is];
    for (i, slot) in ins.chunks_mut(is).enumerate() {
        put_bits(slot, valid, 1, 1);
        for &(pos, width, values) in &ports {
            let v = if values.len() == 1 {
                values[0]
            } else {
                values[i]
            };
            put_bits(slot, pos, width, v);
        }
    }
    let outs = dev.stream(ins, n);
    let (po, pov) = (dev.pos(out), dev.pos("out_valid"));
    let got: Vec<u64> = outs
        .chunks(dev.layout.out_slots)
        .filter(|c| get_bits(c, pov, 1) == 1)
        .map(|c| get_bits(c, po, out_width))
        .collect();
    if got.len() != n {
        return Err(TrainError(format!(
            "a q8 unit gave {} results for {n} operands (a generator bug)",
            got.len()
        )));
    }
    Ok(got)
}
