//! Summation and dot products in any format, in the order SPEC.md §3 fixes.
//!
//! Naive: s = s + x_k, k = 0..K-1. Kahan (seed 000 §2.6.1, every operation rounded):
//! `tmp = c + x; t = s + tmp; c = tmp - (t - s); s = t`. Pairwise: sum(x[..K/2]) +
//! sum(x[K/2..]), recursively. Dot products round each product a_k·b_k first, then sum it
//! with the chosen method; the fused (quire / wide accumulator) forms are on the formats.

use crate::arith::{Arith, Bits};

/// A running Kahan sum: the total and its compensation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Kahan {
    pub sum: Bits,
    pub comp: Bits,
}

impl Kahan {
    pub fn new<A: Arith>(a: &A) -> Kahan {
        Kahan {
            sum: a.zero(),
            comp: a.zero(),
        }
    }

    /// Adds x with compensation.
    #[inline(always)]
    pub fn add<A: Arith>(&mut self, a: &A, x: Bits) {
        let tmp = a.add(self.comp, x);
        let t = a.add(self.sum, tmp);
        self.comp = a.sub(tmp, a.sub(t, self.sum));
        self.sum = t;
    }
}

pub fn naive_sum<A: Arith>(a: &A, xs: &[Bits]) -> Bits {
    xs.iter().fold(a.zero(), |s, &x| a.add(s, x))
}

pub fn kahan_sum<A: Arith>(a: &A, xs: &[Bits]) -> Bits {
    let mut k = Kahan::new(a);
    for &x in xs {
        k.add(a, x);
    }
    k.sum
}

pub fn pairwise_sum<A: Arith>(a: &A, xs: &[Bits]) -> Bits {
    match xs.len() {
        0 => a.zero(),
        1 => xs[0],
        n => {
            let (l, r) = xs.split_at(n / 2);
            a.add(pairwise_sum(a, l), pairwise_sum(a, r))
        }
    }
}

pub fn naive_dot<A: Arith>(a: &A, x: &[Bits], y: &[Bits]) -> Bits {
    x.iter()
        .zip(y)
        .fold(a.zero(), |s, (&p, &q)| a.add(s, a.mul(p, q)))
}

pub fn kahan_dot<A: Arith>(a: &A, x: &[Bits], y: &[Bits]) -> Bits {
    let mut k = Kahan::new(a);
    for (&p, &q) in x.iter().zip(y) {
        k.add(a, a.mul(p, q));
    }
    k.sum
}

pub fn pairwise_dot<A: Arith>(a: &A, x: &[Bits], y: &[Bits]) -> Bits {
    let products: Vec<Bits> = x.iter().zip(y).map(|(&p, &q)| a.mul(p, q)).collect();
    pairwise_sum(a, &products)
}
