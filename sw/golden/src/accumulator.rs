//! One accumulation step by step, as a hardware accumulator holds it (an array PE, a MAC
//! unit): `Family::accumulator` gives each family's for a mode, so that the co-simulation
//! drivers, training and Python ask the golden library instead of naming families. After
//! `clear` and the products of a_0·b_0 … a_k·b_k, `word` is `Calc::dot` of those terms in the
//! mode, bit for bit (tested below for every family and mode that has one).

use crate::arith::Arith;
use crate::rounding::Rounder;
use crate::sum::kahan_formula;
use crate::{Bits, SumMode};

pub trait Accumulator: Send {
    /// Back to the empty sum.
    fn clear(&mut self);
    /// acc (+)= a·b by the family's rule for the mode.
    fn add_product(&mut self, a: Bits, b: Bits);
    /// The read-out word.
    fn word(&self) -> Bits;
    /// The read-out rounded under `r` (`--rounding stochastic:R`), where the accumulator is
    /// exact and its family rounds stochastically (the float PE); `None` otherwise.
    fn word_with(&self, r: &mut Rounder) -> Option<Bits>;
}

/// The rounded modes, naive and Kahan, of any family's arithmetic: each product rounded,
/// then added with one rounding (naive) or with compensation (Kahan), as `sum::naive_dot`
/// and `sum::kahan_dot` do in the working form.
pub struct Rounded<A: Arith> {
    arith: A,
    kahan: bool,
    sum: A::Val,
    comp: A::Val,
}

impl<A: Arith> Rounded<A> {
    /// The accumulator of `mode` if it is naive or Kahan.
    pub fn new(arith: A, mode: SumMode) -> Option<Rounded<A>> {
        let kahan = match mode {
            SumMode::Naive => false,
            SumMode::Kahan => true,
            SumMode::Pairwise | SumMode::Quire | SumMode::Fdpa(_) => return None,
        };
        let z = arith.zero();
        Some(Rounded {
            arith,
            kahan,
            sum: z,
            comp: z,
        })
    }
}

impl<A: Arith + Send> Accumulator for Rounded<A>
where
    A::Val: Send,
{
    fn clear(&mut self) {
        (self.sum, self.comp) = (self.arith.zero(), self.arith.zero());
    }
    fn add_product(&mut self, a: Bits, b: Bits) {
        let f = &self.arith;
        let x = f.mul(f.load(a), f.load(b));
        if self.kahan {
            (self.sum, self.comp) = kahan_formula(
                self.sum,
                self.comp,
                x,
                |p, q| f.add(p, q),
                |p, q| f.sub(p, q),
            );
        } else {
            self.sum = f.add(self.sum, x);
        }
    }
    fn word(&self) -> Bits {
        self.arith.store(self.sum)
    }
    fn word_with(&self, _: &mut Rounder) -> Option<Bits> {
        None
    }
}

/// A family's rounded accumulators: `Rounded` for naive and Kahan where its entry offers
/// them, `None` for the other modes (the caller adds the exact one).
pub(crate) fn rounded<A>(
    arith: A,
    offered: &[SumMode],
    mode: SumMode,
) -> Option<Box<dyn Accumulator>>
where
    A: Arith + Send + 'static,
    A::Val: Send,
{
    if !offered.contains(&mode) {
        return None;
    }
    Rounded::new(arith, mode).map(|r| Box::new(r) as Box<dyn Accumulator>)
}

#[cfg(test)]
mod tests {
    use crate::{Format, SumMode};

    /// After every step, `word` is `Calc::dot` of the terms so far; `clear` starts over.
    #[test]
    fn accumulators_read_out_the_golden_dot_products() {
        let mut seen = 0;
        for spec in [
            "lns:5:6",
            "posit:8:2",
            "posit:16:1",
            "fix:7:8",
            "f32",
            "bf16",
            "fp8:e4m3",
            "float:3:2",
            "dfix:8",
        ] {
            let f: Format = spec.parse().unwrap();
            let c = f.calc();
            for mode in SumMode::ALL {
                let Some(mut acc) = c.accumulator(mode) else {
                    assert!(
                        !f.entry().modes.contains(&mode)
                            || mode == SumMode::Pairwise
                            || spec == "dfix:8",
                        "{spec} offers {mode:?} but has no accumulator"
                    );
                    continue;
                };
                seen += 1;
                let mut x = 0x9e37_79b9_7f4a_7c15u64;
                let mut next = || {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x & ((1u64 << f.width()) - 1)
                };
                for round in 0..20 {
                    acc.clear();
                    let (mut a, mut b) = (vec![], vec![]);
                    for _ in 0..(1 + round * 7) {
                        a.push(next());
                        b.push(next());
                        acc.add_product(*a.last().unwrap(), *b.last().unwrap());
                        let (got, want) = (acc.word(), c.dot(mode, &a, &b).unwrap());
                        // f32's NaN payloads are the host's, which follow operand order.
                        let nans = spec == "f32" && c.is_nan(got) && c.is_nan(want);
                        assert!(
                            got == want || nans,
                            "{spec} {mode:?} {got:x} {want:x} {a:x?} {b:x?}"
                        );
                    }
                }
            }
        }
        assert!(seen >= 12, "{seen}");
    }
}
