//! The float array PE with a wider float accumulator (`lpgen rtl array --pe float --acc A`,
//! docs/rtl.md): each product of two words of F, exact in A (the generator refuses an A that
//! does not hold every product of F as a normal number), is added to an A word with one
//! rounding, s = A.fma(a, b, s) on the words widened to A, from +0; the read-out converts s
//! to F, rounded once. The co-simulation driver and the Python package both use this.

use super::FloatFormat;
use crate::arith::Bits;

/// One PE's running sum in A.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WideAcc {
    /// F, the words' format.
    pub fmt: FloatFormat,
    /// A, the accumulator's.
    pub acc: FloatFormat,
    /// s, a word of A.
    pub sum: Bits,
}

impl WideAcc {
    /// s = +0.
    pub fn new(fmt: FloatFormat, acc: FloatFormat) -> WideAcc {
        WideAcc {
            fmt,
            acc,
            sum: acc.zero_of(false),
        }
    }

    /// s = +0 again.
    pub fn clear(&mut self) {
        self.sum = self.acc.zero_of(false);
    }

    /// s = A.fma(a, b, s), a and b words of F widened to A.
    pub fn add_product(&mut self, a: Bits, b: Bits) {
        let (x, y) = (
            self.fmt.convert(&self.acc, a),
            self.fmt.convert(&self.acc, b),
        );
        self.sum = self.acc.fma(x, y, self.sum);
    }

    /// s converted to F, rounded once.
    pub fn result(&self) -> Bits {
        self.acc.convert(&self.fmt, self.sum)
    }
}

impl FloatFormat {
    /// Σ a_k·b_k, k = 0..K−1, accumulated in `acc` as [`WideAcc`], read out in this format.
    pub fn dot_wide(&self, acc: &FloatFormat, a: &[Bits], b: &[Bits]) -> Bits {
        assert_eq!(a.len(), b.len());
        let mut s = WideAcc::new(*self, *acc);
        for (&x, &y) in a.iter().zip(b) {
            s.add_product(x, y);
        }
        s.result()
    }
}

/// The float PE with `--acc A`: the running sum in A (`FloatFormat::wide_accumulator`).
impl crate::accumulator::Accumulator for WideAcc {
    fn clear(&mut self) {
        WideAcc::clear(self)
    }
    fn add_product(&mut self, a: Bits, b: Bits) {
        WideAcc::add_product(self, a, b)
    }
    fn word(&self) -> Bits {
        self.result()
    }
    fn word_with(&self, _: &mut crate::Rounder) -> Option<Bits> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::family_trait::Family;
    use crate::Format;

    fn float(s: &str) -> FloatFormat {
        match s.parse::<Format>().unwrap() {
            Format::Float(f) => f,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn each_add_rounds_in_a_and_the_read_out_rounds_once_to_f() {
        let (f, a) = (float("fp8:e4m3"), float("bf16"));
        let w = |x: f64| f.from_f64(x);
        // 1.125·1 = 1.125, then + 2^-4·2^-3 in bf16 (7 fraction bits): 1.125 + 2^-7 is a
        // bf16 word (1.0010001b), read out in e4m3 (3 fraction bits) to 1.125.
        let mut s = WideAcc::new(f, a);
        s.add_product(w(1.125), w(1.0));
        s.add_product(w(0.0625), w(0.125));
        assert_eq!(a.to_f64(s.sum), 1.125 + 1.0 / 128.0);
        assert_eq!(f.to_f64(s.result()), 1.125);
        // 256 + 2^-8 is not a bf16 word: the sum stays 256 (each add rounds in A, and an
        // exact accumulator would keep it until the read-out).
        let two = [w(16.0), w(0.0625)];
        assert_eq!(f.to_f64(f.dot_wide(&a, &two, &[w(16.0), w(0.0625)])), 256.0);
        s.clear();
        assert_eq!(s.sum, 0, "+0");
        assert_eq!(f.dot_wide(&a, &[], &[]), 0);
    }
}
