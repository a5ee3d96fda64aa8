//! The posit quire (the tapered [`crate::tapered::Quire`] of a posit format) and the posit
//! dot products on it: a quire of at most 128 bits on a stack value, words of at most 8 bits
//! decoded by table, and the matrix kernels' read-out.

use super::PositFormat;
use crate::family_trait::Family;
use crate::tapered::{accumulate_small, round_exact, Tapered};

/// A quire of posit products.
pub type Quire = crate::tapered::Quire<PositFormat>;

impl PositFormat {
    /// Fused dot product: Σ a_k·b_k accumulated exactly in a quire, rounded once.
    pub fn dot_quire(&self, a: &[u64], b: &[u64]) -> u64 {
        let bits = self.quire_bits();
        if bits > 128 {
            let mut q = Quire::new(*self);
            for (&x, &y) in a.iter().zip(b) {
                q.add_product(x, y);
            }
            return q.to_word();
        }
        // Up to 128 bits: the same steps as `fma` on a local u128, one read-out at the end,
        // without a heap-allocated quire (a dot product per output element would otherwise
        // allocate three times, and threads contend in the allocator).
        let nar = self.nar();
        if let Some(t) = super::table::tables(*self).filter(|t| t.terms.is_some()) {
            // Up to 8 bits: words decoded by table.
            return match t.quire_dot(nar, a, b) {
                Some(acc) => self.small_quire_to_posit(bits, acc),
                None => nar,
            };
        }
        let frac_bits = self.quire_frac_bits() as i32;
        let mut acc = 0u128;
        for (&x, &y) in a.iter().zip(b) {
            if x == nar || y == nar {
                return nar;
            }
            if x != 0 && y != 0 {
                let (neg, m, scale) = self.product(x, y);
                acc = accumulate_small(acc, neg, m, scale - 62 + frac_bits);
            }
        }
        self.small_quire_to_posit(bits, acc)
    }

    /// `tapered::Quire::to_word` of a quire of `bits` ≤ 128 bits held in one u128 (its bits above
    /// `bits` are don't-care, as in the register): the same rounding, on a stack value.
    fn small_quire_to_posit(&self, bits: u32, acc: u128) -> u64 {
        let unused = 128 - bits;
        let v = ((acc << unused) as i128) >> unused;
        // NaR is the sign bit alone.
        if v == i128::MIN >> unused {
            return self.nar();
        }
        round_exact(*self, v, -(self.quire_frac_bits() as i32))
    }
}

/// The quire as the matrix-product kernel feeds it.
impl crate::kernel::ExactDot for PositFormat {
    /// NaR where either line holds it (NaR is sticky in the quire).
    fn special_dot(&self, a: &[crate::Bits], b: &[crate::Bits]) -> Option<crate::Bits> {
        a.iter()
            .chain(b)
            .any(|&w| w == self.nar())
            .then(|| self.nar())
    }
    /// Every posit the kernel takes (up to 32 bits, es ≤ 5) is an f64; NaR is the reference's.
    fn exact_f64(&self, w: u64) -> Option<f64> {
        (w != self.nar()).then(|| self.to_f64(w))
    }
    /// A quire of up to 128 bits: any number (the read-out wraps the sum as the register
    /// would have). A wider one: fewer than 2^carry products of maxpos², which cannot wrap.
    fn max_terms(&self) -> u64 {
        if self.quire_bits() <= 128 {
            u64::MAX
        } else {
            (1u64 << self.quire_carry_bits().min(63)) - 1
        }
    }
    /// The quire holding v·2^scale (modulo 2^quire_bits, as the register wraps) read out.
    fn read_exact(&self, v: i128, scale: i32) -> u64 {
        let bits = self.quire_bits();
        if bits > 128 {
            return round_exact(*self, v, scale);
        }
        // In quire units of 2^-frac_bits (every product is a multiple of minpos²).
        let sh = scale + self.quire_frac_bits() as i32;
        let q = match sh {
            0.. if sh >= 128 => 0,
            0.. => v.wrapping_shl(sh as u32),
            // Below the quire's last bit: truncated as the register does (a shift past its
            // width is the sign alone).
            _ => v >> (-sh).min(127),
        };
        self.small_quire_to_posit(bits, q as u128)
    }
    /// By the read-out table of a posit of at most 8 bits (`kernel::readout`).
    fn read_values(&self, sums: &[f64], out: &mut Vec<u64>) {
        crate::kernel::readout::read_values(self, ((*self).into(), self.n), sums, out)
    }
}
