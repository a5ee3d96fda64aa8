//! Exact table-driven fast paths for posits of at most 8 bits: every rounded product and sum
//! of two words is looked up instead of decoded, computed and encoded, and the exact products
//! of quire dot products are formed from words decoded by table. The tables are built from the
//! golden operations themselves (so they cannot disagree with them: one source of truth), once
//! per format, and shared; the tests compare the fast paths with the operations word for word.

use super::quire::Quire;
use super::PositFormat;
use crate::family_trait::Family;
use crate::table::{cached, OpTables, MAX_TABLE_BITS};
use crate::tapered::Tapered;

/// The tables of one format.
pub(crate) struct Tables {
    /// Every rounded product and sum of two words.
    pub ops: OpTables,
    /// Each word decoded for exact products (present when the quire has at most 128 bits).
    pub terms: Option<Vec<Term>>,
    /// The quire's fraction bits less 62: with it, a product's position in quire LSBs.
    pub product_shift: i32,
}

/// A word as ±m·2^e (m odd or zero) scaled so that the product of two words is
/// m_a·m_b·2^(e_a + e_b + product_shift) quire LSBs. NaR is zero here and checked apart.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Term {
    pub m: i64,
    pub e: i32,
}

/// The tables of `f`, or `None` when it is wider than [`MAX_TABLE_BITS`] (built once per
/// format, [`cached`]).
pub(crate) fn tables(f: PositFormat) -> Option<&'static Tables> {
    (f.n <= MAX_TABLE_BITS).then(|| cached(f, || build(f)))
}

fn build(f: PositFormat) -> Tables {
    let words = 1u64 << f.n;
    let quire = Quire::new(f);
    let terms = (quire.limbs.len() <= 2).then(|| {
        (0..words)
            .map(|w| {
                if w == 0 || w == f.nar() {
                    return Term::default();
                }
                // product(w, 1) = (sign, m·2^31, e): the word's own significand and scale.
                let (neg, sig, e) = f.product(w, f.one());
                let m = sig >> 31;
                let zeros = m.trailing_zeros();
                let m = (m >> zeros) as i64;
                Term {
                    m: if neg { -m } else { m },
                    e: e + zeros as i32,
                }
            })
            .collect()
    });
    Tables {
        ops: OpTables::build(f.n, |a, b| f.add(a, b), |a, b| f.mul(a, b)),
        terms,
        product_shift: quire.frac_bits - 62,
    }
}

impl Tables {
    /// Σ a_k·b_k exactly, as a wrapping two's-complement u128 of quire LSBs (the quire
    /// register of at most 128 bits); `None` if a term is NaR or the format has no terms.
    #[inline]
    pub fn quire_dot(&self, nar: u64, a: &[u64], b: &[u64]) -> Option<u128> {
        let terms = self.terms.as_ref()?;
        let mut acc = 0u128;
        for (&x, &y) in a.iter().zip(b) {
            if x == nar || y == nar {
                return None;
            }
            if x == 0 || y == 0 {
                continue;
            }
            let (p, q) = (terms[x as usize], terms[y as usize]);
            let shift = (p.e + q.e + self.product_shift) as u32;
            acc = acc.wrapping_add(((p.m * q.m) as i128).wrapping_shl(shift) as u128);
        }
        Some(acc)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::posit::PositStandard;
    use crate::sum;

    fn formats() -> Vec<PositFormat> {
        vec![
            PositFormat::new(8, 2, PositStandard::Std2022, false).unwrap(),
            PositFormat::new(8, 0, PositStandard::Draft2017, false).unwrap(),
            PositFormat::new(8, 2, PositStandard::Draft2017, true).unwrap(),
            PositFormat::new(6, 1, PositStandard::Draft2017, false).unwrap(),
        ]
    }

    /// Every pair of words: the tables' operations are the golden ones, and a one-term quire
    /// dot product through the table is the slow path's.
    #[test]
    fn tables_hold_the_golden_operations_for_every_pair() {
        for f in formats() {
            let t = tables(f).unwrap();
            for a in 0..1u64 << f.n {
                for b in 0..1u64 << f.n {
                    assert_eq!(t.ops.mul(a, b), f.mul(a, b), "{f:?} {a:#x}*{b:#x}");
                    assert_eq!(t.ops.add(a, b), f.add(a, b), "{f:?} {a:#x}+{b:#x}");
                    let mut q = Quire::new(f);
                    q.add_product(a, b);
                    assert_eq!(f.dot_quire(&[a], &[b]), q.to_word(), "{f:?} {a:#x}·{b:#x}");
                }
            }
        }
    }

    /// Long random dot products: the fast paths equal the generic loops (quire: one
    /// `add_product` per term; naive: `sum::naive_dot`), NaR included.
    #[test]
    fn fast_dot_products_equal_the_generic_loops() {
        let mut next = crate::test_words(0x1234_5678_9abc_def0u64);
        for f in formats() {
            let t = tables(f).unwrap();
            for len in [0usize, 1, 7, 100, 1000] {
                for _ in 0..20 {
                    let mask = (1u64 << f.n) - 1;
                    let a: Vec<u64> = (0..len).map(|_| next() & mask).collect();
                    let b: Vec<u64> = (0..len).map(|_| next() & mask).collect();
                    let mut q = Quire::new(f);
                    for (&x, &y) in a.iter().zip(&b) {
                        q.add_product(x, y);
                    }
                    assert_eq!(f.dot_quire(&a, &b), q.to_word(), "{f:?} quire, {len} terms");
                    assert_eq!(
                        t.ops.naive_dot(0, &a, &b),
                        sum::naive_dot(&f, &a, &b),
                        "{f:?} naive, {len} terms"
                    );
                }
            }
        }
    }
}
