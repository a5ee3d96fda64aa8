//! `array --pe mx` (`--format mx:ELEM[:bK]`): every step a block pair per PE, against the
//! golden `F32Acc` of each PE (each block pair's exact dot product rounded to f32,
//! `MxFormat::dot_block_f32`, added in f32 from +0: the reference accumulation training uses).
//! Each `last` step expects every f32 word of `c_out` exactly `latency` cycles later, and
//! `out_valid` nowhere else; the host protocol is the array's (docs/rtl.md, `array`).
//!
//! Corner tiles (both modes): every corner element code of `mx-dot`'s driver (±0, ±the
//! smallest subnormal, ±max: saturated elements, the all-ones code, INT8's −2, E5M2's ±∞)
//! filling whole blocks, under every scale pair of its [`SCALES`] (1·1, 2^−127 and 2^127:
//! zero and f32-subnormal sums, overflow, and the NaN scale 0xFF on either side); alone, and
//! followed by a random block pair. Exhaustive (elements up to 8 bits): every element pair
//! (ca, cb) under each scale pair, at position i mod K of blocks whose other elements are
//! random, then a random block pair. Vectors: random tiles of 1..=12 steps in two chunks with
//! bubbles between them (bubbles carry random operands and controls that must be ignored),
//! sometimes a snapshot after the first chunk, every other tile smaller than the array (the
//! zero block, scale 0 and codes 0, outside it); each tile's blocks in one scale regime (near
//! 1, tiny: f32-subnormal and zero sums, huge: overflow to ±∞, or anything), random codes or
//! blocks quantized by the golden `quantize_block` (saturation; a short block padded with
//! code 0, as training's last block), sometimes a step that cancels the one before it
//! exactly, NaN scales now and then.

use lpgen_golden::mx::{MxBlock, MxFormat, SCALE_NAN};
use lpgen_hdl::Params;

use super::block_array::{self, BlockArray};
use super::mx::{corner_codes, finite_codes, mx_of, SCALES};
use super::tiles::{self, BlockSource, Regime};
use super::{Ctx, Mode, Plan};
use crate::rng::Rng;
use crate::{Result, VerifError};

/// Exhaustive runs take every element pair up to this element width.
const MAX_EXHAUSTIVE_BITS: u32 = 8;

/// Tiles of the corner set: per corner code and scale pair, a one-step tile and a two-step
/// one.
fn corner_tiles(mx: &MxFormat) -> u64 {
    corner_codes(mx).len() as u64 * SCALES.len() as u64 * 2
}

pub(crate) fn plan(p: &Params, mode: Mode) -> Result<Plan> {
    let mx = mx_of(p)?;
    let w = mx.elem_width();
    let spacing = u64::from(p.rows + p.cols - 1).max(3);
    let corners = corner_tiles(&mx) * spacing;
    let cycles = match mode {
        Mode::Exhaustive if w > MAX_EXHAUSTIVE_BITS => {
            return Err(VerifError(format!(
                "--exhaustive is not available for array on {mx}: every element pair is 2^{} \
                 (exhaustive up to {MAX_EXHAUSTIVE_BITS}-bit elements; use --vectors N)",
                2 * w
            )))
        }
        Mode::Exhaustive => corners + ((SCALES.len() as u64) << (2 * w)) * spacing,
        Mode::Vectors(n) => corners + n,
    };
    Ok(Plan { cycles, drive })
}

type Event = block_array::Event<MxBlock>;

/// Makes the blocks of one format.
struct Blocks {
    mx: MxFormat,
    finite: Vec<u8>,
}

impl Blocks {
    /// A scale byte of the regime: Normal near 1 (117..=137), Tiny 40..=75 (block sums in
    /// f32's subnormal range or below it), Huge 180..=230 (block sums past f32's largest, to
    /// ±∞), Wide any byte; 1 in 100 the NaN scale.
    fn scale(&self, r: &mut Rng, regime: Regime) -> u8 {
        if r.below(100) == 0 {
            return SCALE_NAN;
        }
        match regime {
            Regime::Normal => 117 + r.below(21) as u8,
            Regime::Tiny => 40 + r.below(36) as u8,
            Regime::Huge => 180 + r.below(51) as u8,
            Regime::Wide => r.below(255) as u8,
        }
    }

    /// A block of `code` under `scale`.
    fn filled(&self, scale: u8, code: u8) -> MxBlock {
        MxBlock {
            scale,
            codes: vec![code; self.mx.block],
        }
    }
}

impl BlockSource for Blocks {
    type Block = MxBlock;

    fn zero(&self) -> MxBlock {
        MxBlock {
            scale: 0,
            codes: vec![0; self.mx.block],
        }
    }

    /// Random codes (from all codes an eighth of the time, else finite ones) under a scale of
    /// the regime (1 in 100 NaN).
    fn random(&self, r: &mut Rng, regime: Regime) -> MxBlock {
        let any = r.below(8) == 0;
        let w = self.mx.elem_width();
        let codes = (0..self.mx.block)
            .map(|_| {
                if any {
                    r.below(1 << w) as u8
                } else {
                    r.pick(&self.finite)
                }
            })
            .collect();
        MxBlock {
            scale: self.scale(r, regime),
            codes,
        }
    }

    /// A block the golden encoder makes of random values (a quarter of the time fewer than
    /// K, padded with code 0).
    fn quantized(&self, r: &mut Rng) -> MxBlock {
        let k = self.mx.block;
        let n = if r.below(4) == 0 {
            1 + r.below(k as u64) as usize
        } else {
            k
        };
        let e = r.below(80) as i32 - 40;
        let xs: Vec<f64> = (0..n)
            .map(|_| match r.below(8) {
                0 => 0.0,
                _ => (r.below(1 << 20) as f64 - f64::from(1 << 19)) * 2f64.powi(e - 19),
            })
            .collect();
        let mut b = self.mx.quantize_block(&xs).expect("1..=K values");
        b.codes.resize(k, 0);
        b
    }

    /// The block of the negated values (each element's sign flipped; INT8 negated).
    fn negated(&self, b: &MxBlock) -> MxBlock {
        let w = self.mx.elem_width();
        let codes = b
            .codes
            .iter()
            .map(|&c| match self.mx.elem {
                lpgen_golden::mx::Elem::Int8 => (c as i8).wrapping_neg() as u8,
                lpgen_golden::mx::Elem::Float(_) => c ^ (1 << (w - 1)),
            })
            .collect();
        MxBlock {
            scale: b.scale,
            codes,
        }
    }
}

/// Exhaustive tile `i` of scale pair (sa, sb): element pair (i >> w, i mod 2^w) at position
/// i mod K of every PE's blocks (the rest random), then a random block pair.
fn pair_events(
    r: &mut Rng,
    g: &Blocks,
    shape: (usize, usize),
    i: u64,
    (sa, sb): (u8, u8),
) -> Vec<Event> {
    let w = g.mx.elem_width();
    let at = i as usize % g.mx.block;
    let mut a = g.random(r, Regime::Normal);
    let mut b = g.random(r, Regime::Normal);
    (a.scale, b.scale) = (sa, sb);
    let mask = (1u64 << w) - 1;
    (a.codes[at], b.codes[at]) = (((i >> w) & mask) as u8, (i & mask) as u8);
    tiles::block_pair(r, g, shape, (a, b), false)
}

impl BlockArray for Blocks {
    const PE: &'static str = "mx";

    fn elem_bits(&self) -> usize {
        self.mx.elem_width() as usize
    }

    fn parts(b: &MxBlock) -> (u8, &[u8]) {
        (b.scale, &b.codes)
    }

    /// Every corner code filling whole blocks, under every scale pair.
    fn corners(&self, r: &mut Rng, shape: (usize, usize)) -> Vec<Event> {
        let mut events = vec![];
        for &c in &corner_codes(&self.mx) {
            for &s in &SCALES {
                let pair = (self.filled(s.0, c), self.filled(s.1, c));
                events.extend(tiles::block_corner(r, self, shape, pair));
            }
        }
        events
    }

    fn exhaustive_tiles(&self) -> u64 {
        (SCALES.len() as u64) << (2 * self.mx.elem_width())
    }

    fn exhaustive(&self, r: &mut Rng, shape: (usize, usize), i: u64) -> Vec<Event> {
        let s = SCALES[(i >> (2 * self.mx.elem_width())) as usize];
        pair_events(r, self, shape, i, s)
    }

    fn term(&self, a: &MxBlock, b: &MxBlock) -> Result<f32> {
        let mx = self.mx;
        mx.dot_block_f32(a, b)
            .map_err(|e| VerifError(format!("golden {mx}: {e}")))
    }
}

fn drive(ctx: &mut Ctx) -> Result<()> {
    let mx = mx_of(ctx.p)?;
    let g = Blocks {
        mx,
        finite: finite_codes(&mx),
    };
    block_array::drive(ctx, &g)
}

#[cfg(test)]
mod tests {
    use super::*;
    use lpgen_golden::mx::F32Acc;
    use lpgen_hdl::units::array_protocol::Beat;

    /// The stimuli reach every kind of f32 result on every element type: NaN, ±∞, +0,
    /// subnormal and normal words, block terms that are f32 subnormals, and additions that
    /// round (the f32 sum differs from the exact sum of the two terms). The golden PEs of a
    /// 2×2 array over the corner tiles and 400 random tiles.
    #[test]
    fn stimuli_reach_every_kind_of_result() {
        for f in [
            "mx:fp8:e4m3",
            "mx:fp8:e5m2:b4",
            "mx:fp6:e3m2:b3",
            "mx:fp6:e2m3:b2",
            "mx:fp4:e2m1:b4",
            "mx:int8:b5",
        ] {
            let mx: MxFormat = f.parse().unwrap();
            let g = Blocks {
                mx,
                finite: finite_codes(&mx),
            };
            let mut r = Rng(5);
            let mut events = g.corners(&mut r, (2, 2));
            for t in 0..400 {
                events.extend(tiles::block_tile(&mut r, &g, (2, 2), t % 2 == 0));
            }
            let mut pes = [F32Acc::new(); 4];
            // nan, +inf, -inf, +0, subnormal, normal, subnormal term, rounded addition.
            let mut seen = [0u32; 8];
            for e in &events {
                let Beat::Step(s) = e else { continue };
                for (i, acc) in pes.iter_mut().enumerate() {
                    if s.clear {
                        acc.clear();
                    }
                    let before = acc.result();
                    let t = mx.dot_block_f32(&s.a[i / 2], &s.b[i % 2]).unwrap();
                    acc.add(t);
                    let sum = acc.result();
                    if t.is_subnormal() {
                        seen[6] += 1;
                    }
                    let exact = f64::from(before) + f64::from(t);
                    if sum.is_finite() && exact.is_finite() && f64::from(sum) != exact {
                        seen[7] += 1;
                    }
                    if s.last {
                        let k = if sum.is_nan() {
                            0
                        } else if sum == f32::INFINITY {
                            1
                        } else if sum == f32::NEG_INFINITY {
                            2
                        } else if sum.to_bits() == 0 {
                            3
                        } else if sum.is_subnormal() {
                            4
                        } else {
                            5
                        };
                        seen[k] += 1;
                    }
                }
            }
            assert!(seen.iter().all(|&n| n > 0), "{f}: {seen:?}");
        }
    }
}
