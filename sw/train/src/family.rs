//! What training needs of a number family beyond its golden arithmetic: [`TrainFamily`], one
//! `impl` block per family below, which the golden registry's `with_family!` dispatches
//! to in [`train_family`] (a family without one does not compile). The golden arithmetic
//! itself (every operation, sum and dot product) is `lpgen_golden::Family`'s.

use lpgen_golden::{
    DfixFormat, FixFormat, FloatFormat, Format, LnsFormat, PositFormat, TakumFormat, F32,
};

use crate::machine::Accumulate;

pub trait TrainFamily {
    /// The accumulation of a product or sum, given `--quire` and whether `--kahan` covers it.
    fn accumulation(&self, quire: bool, kahan: bool) -> Accumulate;
    /// The largest k for which the format holds 2^−k exactly (the reach of the host's powers
    /// of two: e^x's range reduction, ε of the optimizers).
    fn pow2_reach(&self) -> i32;
    /// Whether `--kahan` defaults to every place (seed 000's LNS training) rather than none.
    fn kahan_by_default(&self) -> bool;
    /// The format a scaled product of this stage format accumulates in (`--scaling`,
    /// [`crate::scaling::wide_format`]), as a format string; `None`: no scaled products.
    fn scaled_wide_format(&self) -> Option<&'static str>;
}

/// The training rules of `f`'s family: the registration of every family in this crate.
pub fn train_family(f: &Format) -> &dyn TrainFamily {
    lpgen_golden::with_family!(f, x => x)
}

/// LNS: Kahan where asked (seed 000).
impl TrainFamily for LnsFormat {
    fn accumulation(&self, _: bool, kahan: bool) -> Accumulate {
        if kahan {
            Accumulate::Kahan
        } else {
            Accumulate::Naive
        }
    }
    fn pow2_reach(&self) -> i32 {
        (1i32 << self.int_bits) - 1
    }
    fn kahan_by_default(&self) -> bool {
        true
    }
    fn scaled_wide_format(&self) -> Option<&'static str> {
        None
    }
}

/// Posits: exact with quires (seed 004), naive otherwise.
impl TrainFamily for PositFormat {
    fn accumulation(&self, quire: bool, _: bool) -> Accumulate {
        if quire {
            Accumulate::Exact
        } else {
            Accumulate::Naive
        }
    }
    fn pow2_reach(&self) -> i32 {
        self.max_scale()
    }
    fn kahan_by_default(&self) -> bool {
        false
    }
    fn scaled_wide_format(&self) -> Option<&'static str> {
        Some("posit:32:2")
    }
}

/// Fix: always the wide accumulator.
impl TrainFamily for FixFormat {
    fn accumulation(&self, _: bool, _: bool) -> Accumulate {
        Accumulate::Exact
    }
    fn pow2_reach(&self) -> i32 {
        self.frac_bits as i32
    }
    fn kahan_by_default(&self) -> bool {
        false
    }
    fn scaled_wide_format(&self) -> Option<&'static str> {
        None
    }
}

/// dfix: the exact accumulator, read out once into the result's group (seed 002's storage
/// trains through `storage.rs`; these are the rules of dfix words as a stage format).
impl TrainFamily for DfixFormat {
    fn accumulation(&self, _: bool, _: bool) -> Accumulate {
        Accumulate::Exact
    }
    /// Integers at scale 0.
    fn pow2_reach(&self) -> i32 {
        0
    }
    fn kahan_by_default(&self) -> bool {
        false
    }
    fn scaled_wide_format(&self) -> Option<&'static str> {
        None
    }
}

/// f32: naive, as the FPU sums; runs on the f32 machine.
impl TrainFamily for F32 {
    fn accumulation(&self, _: bool, _: bool) -> Accumulate {
        Accumulate::Naive
    }
    fn pow2_reach(&self) -> i32 {
        126
    }
    fn kahan_by_default(&self) -> bool {
        false
    }
    fn scaled_wide_format(&self) -> Option<&'static str> {
        None
    }
}

/// float:E:M: exact with the exact accumulator (`--quire`), naive otherwise.
impl TrainFamily for FloatFormat {
    fn accumulation(&self, quire: bool, _: bool) -> Accumulate {
        if quire {
            Accumulate::Exact
        } else {
            Accumulate::Naive
        }
    }
    /// −emin, as f32's 126: the powers of two down to the smallest normal (the subnormals
    /// reach M further, with fewer significant bits).
    fn pow2_reach(&self) -> i32 {
        -self.emin() as i32
    }
    fn kahan_by_default(&self) -> bool {
        false
    }
    fn scaled_wide_format(&self) -> Option<&'static str> {
        // IEEE binary32 itself (the binary32 family's words are float:8:23's), whose
        // products the golden machine computes natively (TE's f32 accumulation).
        Some("f32")
    }
}

/// Takums: exact with quires, as posits (seed 004's rule), naive otherwise.
impl TrainFamily for TakumFormat {
    fn accumulation(&self, quire: bool, _: bool) -> Accumulate {
        if quire {
            Accumulate::Exact
        } else {
            Accumulate::Naive
        }
    }
    /// 2^−k is a word down to k = 255 where the characteristic's field fits in the word
    /// (N ≥ 12); narrower takums cut it: the run of exact powers, asked of the golden words.
    fn pow2_reach(&self) -> i32 {
        use lpgen_golden::Family;
        let exact = |k: i32| self.to_f64(self.from_f64((-k as f64).exp2())) == (-k as f64).exp2();
        (0..=255).take_while(|&k| exact(k)).last().unwrap_or(0)
    }
    fn kahan_by_default(&self) -> bool {
        false
    }
    fn scaled_wide_format(&self) -> Option<&'static str> {
        None
    }
}

#[cfg(all(test, feature = "rtl"))]
mod tests {
    use lpgen_golden::FAMILIES;
    use lpgen_hdl::{Params, Unit};

    /// The rtl machine sends a family's words to the q8 and quant1 units when the golden
    /// registry gives it the word rule: the units must take exactly those families.
    #[test]
    fn the_word_rule_families_are_the_codec_units_families() {
        for entry in FAMILIES {
            let f: lpgen_golden::Format = entry.example.parse().unwrap();
            for unit in [Unit::Quant1, Unit::Q8Enc] {
                let mut p = Params::new(unit, f);
                p.rows = 4;
                let takes_words = match lpgen_hdl::generate(&p) {
                    // q8-enc also takes f32, by the f32 rule on its values.
                    Ok(_) => entry.name != "f32",
                    Err(_) => false,
                };
                assert_eq!(
                    takes_words, entry.q8_word_rule,
                    "{} on {unit:?}",
                    entry.name
                );
            }
        }
    }
}
