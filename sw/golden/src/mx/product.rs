//! Vectors quantized once and dotted many times: what a matrix product of MX operands needs
//! (training: every row of A and every column of B quantized in blocks along the reduction
//! dimension, then every pair dotted). [`MxVector::dot_f32`] is [`MxFormat::dot_f32`] of the
//! same blocks, bit for bit, without building a big integer per block: each block's exact sum
//! is an integer at 2^(2·lsb) that fits an i128 (docs/formats.md: "every block's exact dot
//! product fits an i128"), rounded to f32 by the float family's one rounding.

use crate::arith::pow2;
use crate::float::{FloatFormat, Val};

use super::{Elem, F32Acc, MxBlock, MxFormat};

/// A vector of values quantized in blocks of K (the last block shorter where K does not
/// divide the length), kept for [`MxVector::dot_f32`]: the scale bytes, the element codes and
/// each element as a signed integer at 2^lsb (`None` for a NaN or ±∞ element; such a block
/// takes the general [`MxFormat::dot_block`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MxVector {
    pub(super) format: MxFormat,
    pub(super) scales: Vec<u8>,
    codes: Vec<u8>,
    /// Each element's integer at 2^lsb (0 for a NaN or ±∞ element).
    pub(super) ints: Vec<i64>,
    /// Per block: whether an element is NaN or ±∞.
    special: Vec<bool>,
}

/// Quantizes vectors of one MX format for products: [`MxFormat::quantize`] with every
/// element code's integer at 2^lsb looked up in a table made once.
#[derive(Clone, Debug)]
pub struct MxQuantizer {
    format: MxFormat,
    table: Vec<Option<i64>>,
}

/// Whether Σ over a block of products of element integers fits an i64: each element integer
/// is below 2^bits, so a product below 2^(2·bits) and K of them below 2^(2·bits + ⌈log2 K⌉).
fn fits_i64(format: &MxFormat) -> bool {
    2 * int_bits(format) + format.block.next_power_of_two().trailing_zeros() < 63
}

/// The bits of the largest element integer's magnitude at 2^lsb: every element integer is
/// below 2^bits.
pub(super) fn int_bits(format: &MxFormat) -> u32 {
    match format.elem {
        // The largest finite magnitude at 2^lsb: below 2^(emax + 1 − lsb).
        Elem::Float(f) => (f.emax() + 1 - (f.emin() - i64::from(f.frac_bits))) as u32,
        Elem::Int8 => 8,
    }
}

impl MxFormat {
    /// A quantizer for vectors of this format.
    pub fn quantizer(&self) -> MxQuantizer {
        let lsb = self.elem_lsb();
        let table = (0..1u16 << self.elem_width())
            .map(|c| match self.elem_value(c as u8) {
                Val::Fin(d) => {
                    let m = (d.sig << (d.exp - lsb)) as i64;
                    Some(if d.neg { -m } else { m })
                }
                Val::Nan | Val::Inf(_) => None,
            })
            .collect();
        MxQuantizer {
            format: *self,
            table,
        }
    }
}

impl MxQuantizer {
    /// `xs` quantized as [`MxFormat::quantize`] does, decoded for products.
    pub fn quantize_vector(&self, xs: &[f64]) -> MxVector {
        let f = &self.format;
        let mut codes = Vec::with_capacity(xs.len());
        let scales = xs
            .chunks(f.block)
            .map(|c| f.quantize_block_into(c, &mut codes))
            .collect();
        let mut ints = Vec::with_capacity(codes.len());
        let special = codes
            .chunks(f.block)
            .map(|block| {
                let mut special = false;
                ints.extend(block.iter().map(|&c| {
                    let int = self.table[usize::from(c)];
                    special |= int.is_none();
                    int.unwrap_or(0)
                }));
                special
            })
            .collect();
        MxVector {
            format: *f,
            scales,
            codes,
            ints,
            special,
        }
    }
}

impl MxVector {
    /// The blocks (scale and element codes).
    pub fn blocks(&self) -> Vec<MxBlock> {
        self.scales
            .iter()
            .zip(self.codes.chunks(self.format.block))
            .map(|(&scale, c)| MxBlock {
                scale,
                codes: c.to_vec(),
            })
            .collect()
    }

    /// The values the blocks stand for, X · P_i (exact in f64; NaN under a NaN scale).
    pub fn values(&self) -> Vec<f64> {
        self.blocks()
            .iter()
            .flat_map(|b| {
                self.format
                    .dequantize_block(b)
                    .expect("blocks of this format")
            })
            .collect()
    }

    /// [`MxFormat::dot_f32`] of the two vectors' blocks (the specification's reference
    /// accumulation: each block's exact dot product rounded to f32, added in block order to
    /// an f32 accumulator from +0). The vectors must be of one format and one length.
    pub fn dot_f32(&self, other: &MxVector) -> f32 {
        assert!(
            self.format == other.format && self.codes.len() == other.codes.len(),
            "MX vectors of one format and length"
        );
        let k = self.format.block;
        let wide = !fits_i64(&self.format);
        let mut acc = F32Acc::new();
        for (i, (p, q)) in self.ints.chunks(k).zip(other.ints.chunks(k)).enumerate() {
            acc.add(self.block_term(other, i, || {
                if wide {
                    p.iter()
                        .zip(q)
                        .map(|(&a, &b)| i128::from(a) * i128::from(b))
                        .sum()
                } else {
                    i128::from(p.iter().zip(q).map(|(&a, &b)| a * b).sum::<i64>())
                }
            }));
        }
        acc.result()
    }

    /// Block `i`'s scale exponent if its product is the plain exact sum of element integers
    /// (no NaN scale, no NaN or ±∞ element).
    #[inline]
    pub(super) fn block_exp(&self, i: usize) -> Option<i64> {
        match MxFormat::scale_exp(self.scales[i]) {
            Some(e) if !self.special[i] => Some(i64::from(e)),
            _ => None,
        }
    }

    /// Block `i`'s term of the dot product with `other`: its exact dot product rounded once
    /// to f32. `sum` gives Σ of the block's element integer products (at 2^(2·lsb)); it is
    /// asked only where both blocks are plain ([`Self::block_exp`]); other blocks take the
    /// general [`MxFormat::dot_block`].
    pub(super) fn block_term(&self, other: &MxVector, i: usize, sum: impl FnOnce() -> i128) -> f32 {
        match (self.block_exp(i), other.block_exp(i)) {
            (Some(ea), Some(eb)) => round_term(sum(), 2 * self.format.elem_lsb() + ea + eb),
            // A NaN scale or a special element: the general block product.
            _ => {
                let k = self.format.block;
                let block = |v: &MxVector| MxBlock {
                    scale: v.scales[i],
                    codes: v.codes.chunks(k).nth(i).expect("block i").to_vec(),
                };
                let d = self
                    .format
                    .dot_block(&block(self), &block(other))
                    .expect("blocks of one format");
                d.to_f32()
            }
        }
    }
}

/// A plain block's term: its exact sum s·2^exp rounded once to nearest f32, as the float
/// family rounds (the one rounding of [`MxVector::dot_f32`] and of the block product kernel,
/// [`super::gemm`]).
#[inline]
pub(super) fn round_term(s: i128, exp: i64) -> f32 {
    if s.unsigned_abs() < 1 << 53 && (-900..=900).contains(&exp) {
        // Exact in f64 (|s| < 2^53, 2^exp normal, the product far from f64's limits).
        (s as i64 as f64 * pow2(exp)) as f32
    } else {
        f32::from_bits(f32_format().round(s < 0, s.unsigned_abs(), exp) as u32)
    }
}

fn f32_format() -> FloatFormat {
    FloatFormat::new(8, 23, false, false, false).expect("binary32")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mx::ELEMS;
    use rand::{Rng, SeedableRng};
    use rand_pcg::Pcg64;

    /// Random values of wide range, with zeros, ties near the element grid and, rarely, NaN.
    fn values(rng: &mut Pcg64, n: usize, nan: bool) -> Vec<f64> {
        (0..n)
            .map(|_| match rng.gen_range(0..40) {
                0 => 0.0,
                1 if nan => f64::NAN,
                2 => f64::from(rng.gen_range(-16i32..16)) * 0.25,
                _ => {
                    let m: f64 = rng.gen_range(-1.0..1.0);
                    // Tiny and huge blocks too: f32 subnormal, zero and infinite block sums.
                    m * 2f64.powi(rng.gen_range(-100..100))
                }
            })
            .collect()
    }

    /// The fast dot product is the general one (`dot_f32` over the same blocks), bit for bit,
    /// for every element type, short and long blocks, NaN blocks included.
    #[test]
    fn dot_f32_is_the_blocks_general_dot_product() {
        let mut rng = Pcg64::seed_from_u64(33);
        for &(name, _) in ELEMS {
            for k in [32, 7, 1024] {
                let f = MxFormat::new(name, k).unwrap();
                for round in 0..60 {
                    let n = rng.gen_range(1..3 * k.min(100));
                    let (a, b) = (
                        values(&mut rng, n, round % 7 == 0),
                        values(&mut rng, n, false),
                    );
                    let qz = f.quantizer();
                    let (va, vb) = (qz.quantize_vector(&a), qz.quantize_vector(&b));
                    assert_eq!(va.blocks(), f.quantize(&a));
                    let want = f.dot_f32(&va.blocks(), &vb.blocks()).unwrap();
                    let got = va.dot_f32(&vb);
                    assert_eq!(got.to_bits(), want.to_bits(), "{f} n={n}: {got} vs {want}");
                }
            }
        }
    }

    /// Block by block, [`F32Acc`] from +0 is `dot_f32`; +∞ and −∞ blocks (E5M2 elements at
    /// the largest scales: each block's sum overflows f32) add to f32's canonical NaN
    /// 0x7fc00000 (x86's ∞ − ∞ would be 0xffc00000), and a lone −0 term leaves +0.
    #[test]
    fn the_f32_accumulator_is_dot_f32_and_its_nan_is_canonical() {
        let f = MxFormat::new("fp8:e5m2", 2).unwrap();
        let block = |scale: u8, codes: [u8; 2]| MxBlock {
            scale,
            codes: codes.to_vec(),
        };
        // 57344² · 2^254 overflows f32: +∞, then −∞ (a's second block negated).
        let a = [block(254, [0x7b, 0]), block(254, [0xfb, 0])];
        let b = [block(254, [0x7b, 0]), block(254, [0x7b, 0])];
        let got = f.dot_f32(&a, &b).unwrap();
        assert_eq!(got.to_bits(), 0x7fc0_0000, "{got}");
        let mut acc = F32Acc::new();
        for (x, y) in a.iter().zip(&b) {
            acc.add(f.dot_block_f32(x, y).unwrap());
        }
        assert_eq!(acc.result().to_bits(), 0x7fc0_0000);
        // −(2^−16)² · 2^−254 rounds to −0 in f32; +0 + −0 = +0.
        let tiny = f
            .dot_f32(&[block(0, [0x81, 0])], &[block(0, [0x01, 0])])
            .unwrap();
        assert_eq!(tiny.to_bits(), 0, "{tiny}");
        let term = f
            .dot_block_f32(&block(0, [0x81, 0]), &block(0, [0x01, 0]))
            .unwrap();
        assert_eq!(term.to_bits(), 0x8000_0000, "{term}");
        // The vectors' fast path agrees (its NaN too).
        let qz = f.quantizer();
        let (va, vb) = (
            qz.quantize_vector(&[f64::INFINITY, 1.0]),
            qz.quantize_vector(&[1.0, 1.0]),
        );
        assert_eq!(va.dot_f32(&vb).to_bits(), 0x7fc0_0000);
    }

    #[test]
    fn values_are_the_dequantized_blocks() {
        let f = MxFormat::new("fp4:e2m1", 3).unwrap();
        let v = f.quantizer().quantize_vector(&[1.0, -6.5, 0.3, 5.0]);
        // Block 1: max 6.5, e = 2 − 2 = 0: 1, −6 (saturated), 0.5 (0.3 to nearest of 0, 0.5);
        // block 2: max 5, e = 0: 5 to nearest of 4 and 6, a tie, to the even code (4).
        assert_eq!(v.values(), vec![1.0, -6.0, 0.5, 4.0]);
    }
}
