//! `array --pe nvfp4` (`--format nvfp4`, or `scaled/fp4:e2m1/bK/ue4m3/t`): every step a block
//! pair per PE, against the golden accumulation of each PE (`scale::dot::dot_block_f32` of
//! each block pair, added in f32 from +0 by `F32Acc`: `dot_unscaled_f32`, the golden NVFP4
//! dot product's F32 accumulation without the tensor scales, which are the host's). A scale
//! byte of 0x80 or more is no UE4M3 scale (the golden model refuses it) and makes the PE's
//! term NaN, as 0x7F does. Each `last` step expects every f32 word of `c_out` exactly
//! `latency` cycles later, and `out_valid` nowhere else; the host protocol is the array's
//! (docs/rtl.md, `array`).
//!
//! Corner tiles (both modes): each E2M1 code filling whole blocks under each scale pair of
//! `nvfp4-dot`'s driver (1·1, zero, the smallest subnormal, 448, mixed, the NaN 0x7F and a
//! refused byte), alone and followed by a random block pair. Exhaustive: every element pair
//! at position i mod K of random blocks under each of those scale pairs, then every pair of
//! UE4M3 scale bytes (0x00..=0x7F) on random blocks, each followed by a random block pair.
//! Vectors: random tiles of 1..=12 steps in two chunks with bubbles between them (the shared
//! tile generator), every other tile smaller than the array (the zero block outside it);
//! each tile's scales in one regime (near 1, subnormal, near 448, or any), random codes or
//! blocks the golden NVFP4 quantizer makes of random values, sometimes a step that cancels
//! the one before it exactly, a NaN or refused scale now and then.

use lpgen_golden::mx::F32_NAN;
use lpgen_golden::scale::dot::dot_block_f32;
use lpgen_golden::scale::{Nvfp4Block, ScaledFormat};
use lpgen_hdl::Params;

use super::block_array::{self, BlockArray};
use super::nvfp4_dot::{block_of, SCALES};
use super::nvfp4_enc::format_of;
use super::tiles::{self, BlockSource, Regime};
use super::{Ctx, Mode, Plan};
use crate::rng::Rng;
use crate::{Result, VerifError};

/// Every UE4M3 scale byte (the NaN 0x7F included) pairs with every other in exhaustive runs.
const UE4M3_BYTES: u64 = 128;

/// Tiles of the corner set: per code and scale pair, a one-step tile and a two-step one.
const CORNER_TILES: u64 = 16 * SCALES.len() as u64 * 2;

pub(crate) fn plan(p: &Params, mode: Mode) -> Result<Plan> {
    block_of(p)?;
    let spacing = u64::from(p.rows + p.cols - 1).max(3);
    let corners = CORNER_TILES * spacing;
    let cycles = match mode {
        Mode::Exhaustive => {
            corners + (256 * SCALES.len() as u64 + UE4M3_BYTES * UE4M3_BYTES) * 2 * spacing
        }
        Mode::Vectors(n) => corners + n,
    };
    Ok(Plan { cycles, drive })
}

type Event = block_array::Event<Nvfp4Block>;

/// Makes the blocks of one format (K elements).
struct Blocks {
    sf: ScaledFormat,
    k: usize,
}

fn block(scale: u8, codes: Vec<u8>) -> Nvfp4Block {
    Nvfp4Block {
        tensor_scale: 0x3f80_0000,
        scale,
        codes,
    }
}

impl Blocks {
    /// A scale byte of the regime: Normal near 1 (0x30..=0x40), Tiny zero, subnormal
    /// (0x00..=0x07) and the smallest normal ones, Huge up to 448 (0x70..=0x7E), Wide any
    /// UE4M3 byte; 1 in 100 the NaN 0x7F, 1 in 100 a refused byte (0x80 or more).
    fn scale(&self, r: &mut Rng, regime: Regime) -> u8 {
        match r.below(100) {
            0 => return 0x7f,
            1 => return 0x80 | r.below(128) as u8,
            _ => {}
        }
        match regime {
            Regime::Normal => 0x30 + r.below(17) as u8,
            Regime::Tiny => r.below(12) as u8,
            Regime::Huge => 0x70 + r.below(15) as u8,
            Regime::Wide => r.below(127) as u8,
        }
    }
}

impl BlockSource for Blocks {
    type Block = Nvfp4Block;

    fn zero(&self) -> Nvfp4Block {
        block(0, vec![0; self.k])
    }

    /// Random codes under a scale of the regime.
    fn random(&self, r: &mut Rng, regime: Regime) -> Nvfp4Block {
        let codes = (0..self.k).map(|_| r.below(16) as u8).collect();
        block(self.scale(r, regime), codes)
    }

    /// A block the golden quantizer makes of K random values (its own tensor scale, which
    /// the array never sees).
    fn quantized(&self, r: &mut Rng) -> Nvfp4Block {
        let e = r.below(40) as i32 - 20;
        let xs: Vec<f64> = (0..self.k)
            .map(|_| match r.below(8) {
                0 => 0.0,
                _ => (r.below(1 << 20) as f64 - f64::from(1 << 19)) * 2f64.powi(e - 19),
            })
            .collect();
        let q = self
            .sf
            .quantize(&xs, 1, self.k, None)
            .expect("K values of one block");
        block(
            q.scales[0] as u8,
            q.codes.iter().map(|&c| c as u8).collect(),
        )
    }

    /// The block of the negated values (each element's sign bit flipped).
    fn negated(&self, b: &Nvfp4Block) -> Nvfp4Block {
        block(b.scale, b.codes.iter().map(|&c| c ^ 8).collect())
    }
}

/// The PE's term for a block pair: the golden `dot_block_f32`, NaN for a refused scale byte.
fn term(a: &Nvfp4Block, b: &Nvfp4Block) -> Result<f32> {
    if a.scale >= 0x80 || b.scale >= 0x80 {
        return Ok(f32::from_bits(F32_NAN));
    }
    dot_block_f32(a, b).map_err(|e| VerifError(format!("golden nvfp4 block dot: {}", e.0)))
}

/// Exhaustive tile `i`: element pairs under the scale pairs of [`SCALES`] first, then every
/// pair of UE4M3 bytes on random blocks.
fn exhaustive_events(r: &mut Rng, g: &Blocks, shape: (usize, usize), i: u64) -> Vec<Event> {
    let k = g.k;
    let mut a = g.random(r, Regime::Normal);
    let mut b = g.random(r, Regime::Normal);
    let pairs = 256 * SCALES.len() as u64;
    if i < pairs {
        (a.scale, b.scale) = SCALES[(i / 256) as usize];
        let at = i as usize % k;
        (a.codes[at], b.codes[at]) = (((i >> 4) & 15) as u8, (i & 15) as u8);
    } else {
        let j = i - pairs;
        (a.scale, b.scale) = ((j / UE4M3_BYTES) as u8, (j % UE4M3_BYTES) as u8);
    }
    tiles::block_pair(r, g, shape, (a, b), false)
}

impl BlockArray for Blocks {
    const PE: &'static str = "nvfp4";

    fn elem_bits(&self) -> usize {
        4
    }

    fn parts(b: &Nvfp4Block) -> (u8, &[u8]) {
        (b.scale, &b.codes)
    }

    /// Every E2M1 code filling whole blocks, under every scale pair.
    fn corners(&self, r: &mut Rng, shape: (usize, usize)) -> Vec<Event> {
        let mut events = vec![];
        for c in 0..16u8 {
            for &(sa, sb) in &SCALES {
                let pair = (block(sa, vec![c; self.k]), block(sb, vec![c; self.k]));
                events.extend(tiles::block_corner(r, self, shape, pair));
            }
        }
        events
    }

    fn exhaustive_tiles(&self) -> u64 {
        256 * SCALES.len() as u64 + UE4M3_BYTES * UE4M3_BYTES
    }

    fn exhaustive(&self, r: &mut Rng, shape: (usize, usize), i: u64) -> Vec<Event> {
        exhaustive_events(r, self, shape, i)
    }

    fn term(&self, a: &Nvfp4Block, b: &Nvfp4Block) -> Result<f32> {
        term(a, b)
    }
}

fn drive(ctx: &mut Ctx) -> Result<()> {
    let g = Blocks {
        sf: format_of(ctx.p)?,
        k: block_of(ctx.p)?,
    };
    block_array::drive(ctx, &g)
}

#[cfg(test)]
mod tests {
    use super::*;
    use lpgen_golden::mx::F32Acc;
    use lpgen_hdl::units::array_protocol::Beat;

    /// The stimuli reach every kind of f32 result an NVFP4 PE makes: NaN (0x7F and refused
    /// bytes), +0 (zero blocks and exact cancellations), normal words, and additions that
    /// round (the f32 sum differs from the exact sum of the two terms); the golden PEs of a
    /// 2×2 array over the corner tiles and 400 random tiles, at K = 16 and K = 3.
    #[test]
    fn stimuli_reach_every_kind_of_result() {
        for f in ["nvfp4", "scaled/fp4:e2m1/b3/ue4m3/t"] {
            let sf: ScaledFormat = f.parse().unwrap();
            let k = match sf.granularity {
                lpgen_golden::scale::Granularity::Block(k) => k,
                g => panic!("{g}"),
            };
            let g = Blocks { sf, k };
            let mut r = Rng(5);
            let mut events = g.corners(&mut r, (2, 2));
            for t in 0..400 {
                events.extend(tiles::block_tile(&mut r, &g, (2, 2), t % 2 == 0));
            }
            let mut pes = [F32Acc::new(); 4];
            // nan, +0, normal, rounded addition, cancellation to +0 of a nonzero sum.
            let mut seen = [0u32; 5];
            for e in &events {
                let Beat::Step(s) = e else { continue };
                for (i, acc) in pes.iter_mut().enumerate() {
                    if s.clear {
                        acc.clear();
                    }
                    let before = acc.result();
                    let t = term(&s.a[i / 2], &s.b[i % 2]).unwrap();
                    acc.add(t);
                    let sum = acc.result();
                    let exact = f64::from(before) + f64::from(t);
                    if sum.is_finite() && exact.is_finite() && f64::from(sum) != exact {
                        seen[3] += 1;
                    }
                    if sum.to_bits() == 0 && before != 0.0 {
                        seen[4] += 1;
                    }
                    if s.last {
                        let kind = if sum.is_nan() {
                            0
                        } else if sum.to_bits() == 0 {
                            1
                        } else {
                            2
                        };
                        seen[kind] += 1;
                    }
                }
            }
            assert!(seen.iter().all(|&n| n > 0), "{f}: {seen:?}");
        }
    }
}
