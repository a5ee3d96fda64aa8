//! NVFP4 (`nvfp4`, SPEC.md §3): FP4 E2M1 elements, a UE4M3 scale per 16 along the reduction
//! dimension and an f32 tensor scale, by NVIDIA's recipe: for a tensor amax A,
//! s_enc = f32(6 · 448 / A) (1 when A = 0), each block's S = ue4m3(amax(block) / 6 · s_enc),
//! elements e2m1(x · s_enc / S) (0 where S = 0), dequantized q · S / s_enc. It is the scaled
//! format `scaled/fp4:e2m1/b16/ue4m3/t` ([`super::ScaledFormat`] does the arithmetic).

use super::{Granularity, Scale, ScaledFormat};
use crate::family::Format;
use crate::float::FloatFormat;

/// The format's name.
pub const NAME: &str = "nvfp4";

/// Elements per block scale.
pub const NVFP4_BLOCK: usize = 16;

/// FP4 E2M1 (`float:2:1:nonan`, MX's `fp4:e2m1`).
pub(super) const E2M1: FloatFormat = FloatFormat {
    exp_bits: 2,
    frac_bits: 1,
    finite: true,
    sat: true,
    ftz: false,
    no_nan: true,
};

/// UE4M3: OCP E4M3 (`float:4:3:fn`) saturating, used with the sign 0.
pub(super) const UE4M3: FloatFormat = FloatFormat {
    exp_bits: 4,
    frac_bits: 3,
    finite: true,
    sat: true,
    ftz: false,
    no_nan: false,
};

/// NVFP4 as a scaled format.
pub const NVFP4: ScaledFormat = ScaledFormat {
    elem_name: "fp4:e2m1",
    elem: Format::Float(E2M1),
    granularity: Granularity::Block(NVFP4_BLOCK),
    scale: Scale::Word {
        name: "ue4m3",
        format: Format::Float(UE4M3),
    },
    tensor_scale: true,
    // E2M1's largest value, 6: a float's band of most precision reaches its maximum.
    target: 0x4018_0000_0000_0000,
};

/// One NVFP4 block as stored: the tensor scale's f32 bits, the UE4M3 scale byte and the
/// E2M1 codes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Nvfp4Block {
    pub tensor_scale: u32,
    pub scale: u8,
    pub codes: Vec<u8>,
}

impl super::Quantized {
    /// The tensor's blocks (NVFP4: the codes and scales as bytes).
    pub fn nvfp4_blocks(&self) -> Vec<Nvfp4Block> {
        self.codes
            .chunks(NVFP4_BLOCK)
            .zip(&self.scales)
            .map(|(c, &s)| Nvfp4Block {
                tensor_scale: self.tensor_scale,
                scale: s as u8,
                codes: c.iter().map(|&w| w as u8).collect(),
            })
            .collect()
    }
}
