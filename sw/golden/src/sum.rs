//! Summation and dot products in any format, in the order SPEC.md §3 fixes.
//!
//! Naive: s = s + x_k, k = 0..K-1. Kahan (seed 000 §2.6.1, every operation rounded):
//! `tmp = c + x; t = s + tmp; c = tmp - (t - s); s = t`. Pairwise: sum(x[..K/2]) +
//! sum(x[K/2..]), recursively. Dot products round each product a_k·b_k first, then sum it
//! with the chosen method; the fused (quire / wide accumulator) forms are on the formats.

use crate::arith::{Arith, Bits};
use crate::family_trait::Family;
use crate::format::FormatError;
use crate::SumMode;

/// A running (cumulative) dot product, as [`Family::running_dot`] gives it: `words[k]` is the
/// dot product of the first k + 1 terms, and `overflow[k]` whether step k saturated, where the
/// family defines that flag in the mode (`None` where it does not).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Running {
    pub words: Vec<Bits>,
    pub overflow: Option<Vec<bool>>,
}

/// The running dot product as every prefix's `dot` (O(K²) work), without flags: for the
/// modes and families with no step-by-step form here.
pub fn running_by_prefix<F: Family>(
    f: &F,
    mode: SumMode,
    a: &[Bits],
    b: &[Bits],
) -> Result<Running, FormatError> {
    assert_eq!(a.len(), b.len());
    f.dot(mode, &[], &[])?;
    let words = (0..a.len())
        .map(|k| f.dot(mode, &a[..=k], &b[..=k]))
        .collect::<Result<_, _>>()?;
    Ok(Running {
        words,
        overflow: None,
    })
}

/// A running Kahan sum: the total and its compensation, as words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Kahan {
    pub sum: Bits,
    pub comp: Bits,
}

/// The Kahan step (sum, comp) <- (sum, comp) + x with the given rounded addition and
/// subtraction: `tmp = c + x; t = s + tmp; c = tmp - (t - s); s = t`. The one statement of the
/// algorithm (a family that reports flags, LNS, passes its flagged operations).
#[inline(always)]
pub fn kahan_formula<V: Copy>(
    s: V,
    c: V,
    x: V,
    add: impl Fn(V, V) -> V,
    sub: impl Fn(V, V) -> V,
) -> (V, V) {
    let tmp = add(c, x);
    let t = add(s, tmp);
    (t, sub(tmp, sub(t, s)))
}

/// One Kahan step in the working form: (sum, comp) <- (sum, comp) + x.
#[inline(always)]
fn kahan_step<A: Arith>(a: &A, s: A::Val, c: A::Val, x: A::Val) -> (A::Val, A::Val) {
    kahan_formula(s, c, x, |p, q| a.add(p, q), |p, q| a.sub(p, q))
}

impl Kahan {
    pub fn new<A: Arith>(a: &A) -> Kahan {
        let z = a.store(a.zero());
        Kahan { sum: z, comp: z }
    }

    /// Adds x with compensation.
    pub fn add<A: Arith>(&mut self, a: &A, x: Bits) {
        let (s, c) = kahan_step(a, a.load(self.sum), a.load(self.comp), a.load(x));
        self.sum = a.store(s);
        self.comp = a.store(c);
    }
}

/// Σ x_k in one of the rounded modes (naive, Kahan, pairwise); `None` for the exact mode
/// and fdpa, which each family provides itself or refuses.
pub fn rounded_sum<A: Arith>(a: &A, mode: SumMode, xs: &[Bits]) -> Option<Bits> {
    match mode {
        SumMode::Naive => Some(naive_sum(a, xs)),
        SumMode::Kahan => Some(kahan_sum(a, xs)),
        SumMode::Pairwise => Some(pairwise_sum(a, xs)),
        SumMode::Quire | SumMode::Fdpa(_) => None,
    }
}

/// Σ a_k·b_k in one of the rounded modes; `None` for the exact mode and fdpa.
pub fn rounded_dot<A: Arith>(a: &A, mode: SumMode, x: &[Bits], y: &[Bits]) -> Option<Bits> {
    assert_eq!(x.len(), y.len());
    match mode {
        SumMode::Naive => Some(naive_dot(a, x, y)),
        SumMode::Kahan => Some(kahan_dot(a, x, y)),
        SumMode::Pairwise => Some(pairwise_dot(a, x, y)),
        SumMode::Quire | SumMode::Fdpa(_) => None,
    }
}

pub fn naive_sum<A: Arith>(a: &A, xs: &[Bits]) -> Bits {
    a.store(xs.iter().fold(a.zero(), |s, &x| a.add(s, a.load(x))))
}

pub fn kahan_sum<A: Arith>(a: &A, xs: &[Bits]) -> Bits {
    let (mut s, mut c) = (a.zero(), a.zero());
    for &x in xs {
        (s, c) = kahan_step(a, s, c, a.load(x));
    }
    a.store(s)
}

pub fn pairwise_sum<A: Arith>(a: &A, xs: &[Bits]) -> Bits {
    fn go<A: Arith>(a: &A, xs: &[Bits]) -> A::Val {
        match xs.len() {
            0 => a.zero(),
            1 => a.load(xs[0]),
            n => {
                let (l, r) = xs.split_at(n / 2);
                a.add(go(a, l), go(a, r))
            }
        }
    }
    a.store(go(a, xs))
}

/// Columns the lockstep dot products ([`rounded_dots`]) take at a time: independent chains
/// of operations the core overlaps.
pub const LOCKSTEP: usize = 8;

/// [`rounded_dot`] of `x` with every column of `ys`, in order: the naive and Kahan sums of
/// [`LOCKSTEP`] columns at a time in lockstep, each column's operations exactly those of its
/// own `naive_dot` or `kahan_dot` in the same order (only independent columns interleave);
/// pairwise sums column by column. `None` for mode quire, as `rounded_dot`.
pub fn rounded_dots<A: Arith>(
    a: &A,
    mode: SumMode,
    x: &[Bits],
    ys: &[&[Bits]],
) -> Option<Vec<Bits>> {
    if !matches!(mode, SumMode::Naive | SumMode::Kahan) {
        return ys.iter().map(|y| rounded_dot(a, mode, x, y)).collect();
    }
    let mut out = Vec::with_capacity(ys.len());
    let mut blocks = ys.chunks_exact(LOCKSTEP);
    for block in &mut blocks {
        let block: &[&[Bits]; LOCKSTEP] = block.try_into().expect("a block of LOCKSTEP");
        out.extend(if mode == SumMode::Naive {
            naive_lockstep(a, x, block)
        } else {
            kahan_lockstep(a, x, block)
        });
    }
    for y in blocks.remainder() {
        out.push(rounded_dot(a, mode, x, y)?);
    }
    Some(out)
}

/// `naive_dot(a, x, y)` for the L columns `ys` at once.
fn naive_lockstep<A: Arith, const L: usize>(a: &A, x: &[Bits], ys: &[&[Bits]; L]) -> [Bits; L] {
    assert!(ys.iter().all(|y| y.len() == x.len()));
    let mut s = [a.zero(); L];
    for (k, &p) in x.iter().enumerate() {
        let p = a.load(p);
        for (s, y) in s.iter_mut().zip(ys) {
            *s = a.add(*s, a.mul(p, a.load(y[k])));
        }
    }
    s.map(|v| a.store(v))
}

/// `kahan_dot(a, x, y)` for the L columns `ys` at once.
fn kahan_lockstep<A: Arith, const L: usize>(a: &A, x: &[Bits], ys: &[&[Bits]; L]) -> [Bits; L] {
    assert!(ys.iter().all(|y| y.len() == x.len()));
    let (mut s, mut c) = ([a.zero(); L], [a.zero(); L]);
    for (k, &p) in x.iter().enumerate() {
        let p = a.load(p);
        for ((s, c), y) in s.iter_mut().zip(c.iter_mut()).zip(ys) {
            (*s, *c) = kahan_step(a, *s, *c, a.mul(p, a.load(y[k])));
        }
    }
    s.map(|v| a.store(v))
}

pub fn naive_dot<A: Arith>(a: &A, x: &[Bits], y: &[Bits]) -> Bits {
    let s = x.iter().zip(y).fold(a.zero(), |s, (&p, &q)| {
        a.add(s, a.mul(a.load(p), a.load(q)))
    });
    a.store(s)
}

pub fn kahan_dot<A: Arith>(a: &A, x: &[Bits], y: &[Bits]) -> Bits {
    let (mut s, mut c) = (a.zero(), a.zero());
    for (&p, &q) in x.iter().zip(y) {
        (s, c) = kahan_step(a, s, c, a.mul(a.load(p), a.load(q)));
    }
    a.store(s)
}

pub fn pairwise_dot<A: Arith>(a: &A, x: &[Bits], y: &[Bits]) -> Bits {
    let products: Vec<Bits> = x
        .iter()
        .zip(y)
        .map(|(&p, &q)| a.store(a.mul(a.load(p), a.load(q))))
        .collect();
    pairwise_sum(a, &products)
}
