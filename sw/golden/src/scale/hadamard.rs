//! The 16 × 16 random Hadamard transform (RHT) of the FP4 training recipes (NVIDIA,
//! "Pretraining LLMs with NVFP4", 2025; Tseng et al., "Training LLMs with MXFP4", 2025).
//!
//! M = H·D, with H the Sylvester Hadamard matrix of order 16 normalised by 1/4
//! (H_ij = (−1)^popcount(i & j) / 4, an orthogonal matrix: 1/4 is a power of two, so its
//! entries are exact in binary32) and D = diag(d_0 … d_15) of random signs. M is applied to
//! each tile of 16 consecutive values along the reduction dimension of **both** operands of
//! a product, so the product is unchanged in exact arithmetic: (M a)ᵀ(M b) = aᵀ Dᵀ Hᵀ H D b
//! = aᵀ b. What changes is what the quantizer sees: the outliers of a tile are spread over
//! all 16 of its values.
//!
//! **Rounding** (the definition, to the bit): each input value is first rounded to binary32
//! (to nearest even; infinities stay, a NaN stays a NaN); then each output
//!
//! y_i = f32( f32( … f32( f32(+0 + σ_i0·x_0) + σ_i1·x_1 ) … + σ_i15·x_15 ) · 1/4 ),
//!
//! σ_ij = (−1)^popcount(i & j) · d_j: the signed inputs added in order j = 0 … 15 to a
//! binary32 accumulator that starts at +0, every addition rounded to nearest even, and the
//! sum multiplied by 1/4 in binary32 (exact unless the result is subnormal). That is a
//! straightforward GPU kernel's order (a negation is exact). Overflow gives ±∞, and ∞ − ∞ a
//! NaN, as binary32 arithmetic does.
//!
//! **Signs**: d_j = −1 where bit j of a 16-bit mask is set; [`Rht::from_seed`] takes the mask
//! as the low 16 bits of the first output of SplitMix64 (`crate::rng::Rng`) seeded with the
//! seed, one mask for every tile (NVIDIA's recipe keeps one sign vector).

use crate::format::{err, FormatError};
use crate::rng::Rng;

/// Values per tile: the transform's order.
pub const TILE: usize = 16;

/// A random Hadamard transform: H16 times the diagonal of signs `neg` (bit j set: d_j = −1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Rht {
    pub neg: u16,
}

impl Rht {
    /// The transform with sign mask `neg`.
    pub fn new(neg: u16) -> Rht {
        Rht { neg }
    }

    /// The transform of a run's seed: the low 16 bits of SplitMix64's first output.
    pub fn from_seed(seed: u64) -> Rht {
        Rht::new(Rng(seed).next_u64() as u16)
    }

    /// Whether σ_ij = (−1)^popcount(i & j) · d_j is −1.
    pub fn negative(&self, i: usize, j: usize) -> bool {
        ((i & j).count_ones() & 1 == 1) ^ (self.neg >> j & 1 == 1)
    }

    /// One tile's outputs (module doc: the sums in binary32, in order j = 0 … 15, then · 1/4).
    pub fn tile(&self, x: &[f32; TILE]) -> [f32; TILE] {
        let mut y = [0f32; TILE];
        for (i, yi) in y.iter_mut().enumerate() {
            let mut acc = 0f32;
            for (j, &xj) in x.iter().enumerate() {
                acc += if self.negative(i, j) { -xj } else { xj };
            }
            *yi = acc * 0.25;
        }
        y
    }

    /// Every row of an R × K tensor (row-major, K the reduction dimension) transformed tile
    /// by tile: each value rounded to binary32 first, the outputs binary32 values as f64s.
    /// K must be a multiple of 16 (one line otherwise).
    pub fn transform_rows(
        &self,
        x: &[f64],
        rows: usize,
        cols: usize,
    ) -> Result<Vec<f64>, FormatError> {
        if !cols.is_multiple_of(TILE) || x.len() != rows * cols {
            return err(format!(
                "the Hadamard transform takes tiles of {TILE} along K: {} values as {rows} × \
                 {cols} (K a multiple of {TILE})",
                x.len()
            ));
        }
        let mut out = Vec::with_capacity(x.len());
        for chunk in x.chunks_exact(TILE) {
            let mut t = [0f32; TILE];
            for (d, &s) in t.iter_mut().zip(chunk) {
                *d = s as f32;
            }
            out.extend(self.tile(&t).iter().map(|&v| f64::from(v)));
        }
        Ok(out)
    }
}
