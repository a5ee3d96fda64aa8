//! The `nvfp4` array PE (issue 50): `lpgen rtl array --format nvfp4` (`--pe nvfp4`, the
//! default for NVFP4 formats). Each step of the array is one block pair: PE (r, c) gets block
//! k of row r of A and block k of column c of B, and accumulates as the golden
//! `lpgen_golden::scale::dot::dot_unscaled_f32` does: s = (clear ? +0 : s) +
//! round_f32(S_A·S_B·Σ q_A,i·q_B,i), the F32 accumulation of the golden NVFP4 dot product
//! without its tensor scales. The tensor scales are the host's: it multiplies each word read
//! out by alpha = f32(1/(s_A·s_B)) (golden `dot::dot` with `Accumulation::F32`), as
//! TransformerEngine applies them in the GEMM's epilogue; the array never sees them.
//!
//! Operand word (8 + K·4 bits, 72 for `nvfp4`): the UE4M3 scale at bits `[7:0]`, E2M1 element i
//! at bits `[8 + 4·i +: 4]`. Result: the f32 word s.
//!
//! The datapath: `nvfp4-dot`'s ([`block_dot`]: the scales' significands and exponents, the
//! elements in halves, exact products, an exact adder tree, times the significands), the
//! exact sum rounded once to f32 (MX's rounder, [`round_exact_f32`]: the sum has at most 20
//! significant bits, so the rounding is exact, but the rounder is the one the golden model
//! names), NaN (a scale byte 0x7F, or 0x80 and above, which is no UE4M3 scale) to 0x7fc00000,
//! an exact zero to +0; then the f32 accumulation by float-add's datapath
//! ([`accumulate_f32`]), the PE's one-cycle loop.
//!
//! Candidate boundaries and `--stages` as the `mx` PE's ([`block_pe_plan`]): 1 is the array's
//! input register; 2 cuts the term register; 3 also the sum; 4 the products; 5 the decode;
//! 6 the rounder. The PE's latency is S − 1 and it accumulates one block per cycle at every S.

use lpgen_golden::FloatFormat;

use super::super::float::{qnan, zero_word};
use super::super::mx::{accumulate_f32, block_pe_plan, round_exact_f32};
use super::super::pe::ArrayPe;
use super::super::{GenError, Params, PeIo};
use super::dot::{block_dot, BlockDot};
use super::{design, Nvfp4Design};
use crate::ir::{konst, mux, Module, StagePlan, E};

/// The most array `--stages` of the `nvfp4` PE (the `mx` PE's plan).
pub(crate) const NVFP4_PE_MAX_STAGES: u32 = 6;

/// Bits of an operand: the scale byte and K E2M1 codes.
pub(crate) fn block_bits(d: &Nvfp4Design) -> u32 {
    8 + d.block * d.elem.width()
}

/// The block pair's exact dot product rounded once to f32 (golden `dot_block_f32`).
fn round_block(m: &mut Module, d: &BlockDot) -> E {
    let f = FloatFormat::new(8, 23, false, false, false).expect("binary32");
    let (word, zero) = round_exact_f32(m, &d.acc, &d.exp);
    m.comment("specials: an exact zero is +0; a NaN scale (or no UE4M3 byte) is NaN");
    let word = mux(&zero, &zero_word(f, &konst(1, 0)), &word);
    m.wire("block_word", &mux(&d.nan, &qnan(f), &word))
}

/// The `nvfp4` array PE.
pub(crate) struct Nvfp4Pe;

pub(crate) static NVFP4_PE: Nvfp4Pe = Nvfp4Pe;

impl ArrayPe for Nvfp4Pe {
    fn max_stages(&self) -> u32 {
        NVFP4_PE_MAX_STAGES
    }
    fn latency(&self, stages: u32) -> u32 {
        stages.saturating_sub(1)
    }
    fn no_inline(&self) -> bool {
        true
    }
    fn plan(&self, p: &Params) -> (u32, StagePlan) {
        block_pe_plan(p)
    }
    fn operand_bits(&self, p: &Params) -> u32 {
        p.scaled.map_or(0, |_| block_bits(&design(p)))
    }
    fn result_bits(&self, _: &Params) -> u32 {
        32
    }
    fn build(&self, pe: &mut Module, p: &Params, io: &PeIo, _: Option<&E>) -> Result<E, GenError> {
        let d = design(p);
        let top = block_bits(&d) - 1;
        let (xa, pa) = (io.a.bits(7, 0), io.a.bits(top, 8));
        let (xb, pb) = (io.b.bits(7, 0), io.b.bits(top, 8));
        let dot = block_dot(pe, &d, (&xa, &pa), (&xb, &pb));
        pe.stage();
        let term = round_block(pe, &dot);
        pe.stage();
        Ok(accumulate_f32(pe, io, &term))
    }
}

#[cfg(test)]
mod tests {
    use crate::manifest::Manifest;
    use crate::{generate, Params, PeKind, Unit};

    fn array(f: &str, pe: Option<&str>) -> Params {
        let mut p = Params::parse(Unit::Array, f).unwrap();
        (p.rows, p.cols) = (2, 3);
        if let Some(pe) = pe {
            p.pe = pe.parse().unwrap();
        }
        p
    }

    /// An NVFP4 format makes an array of `nvfp4` PEs: one block (8 + 16·4 bits) per row and
    /// column and step, an f32 word per PE; the latency is the array's (R + C + stages).
    #[test]
    fn an_nvfp4_array_takes_blocks_and_reads_out_f32() {
        let p = array("nvfp4", None).stages(4);
        assert_eq!(p.pe, PeKind::Nvfp4);
        let d = generate(&p).unwrap();
        let m = Manifest::from_json(&d.manifest).unwrap();
        let width = |n: &str| m.ports.iter().find(|p| p.name == n).unwrap().width;
        assert_eq!(width("a_in"), 2 * 72);
        assert_eq!(width("b_in"), 3 * 72);
        assert_eq!(width("c_out"), 6 * 32);
        assert_eq!(m.latency, 2 + 3 + 4);
        assert_eq!(m.format, "nvfp4");
        assert_eq!(d.top, "lpgen_array_nvfp4_2x3_nvfp4_s4");
        let small = generate(&array("scaled/fp4:e2m1/b3/ue4m3/t", None)).unwrap();
        assert!(small.verilog.files.iter().any(|f| f
            .text
            .contains("module lpgen_pe_nvfp4_scaled_fp4_e2m1_b3_ue4m3_t_s0")));
    }

    /// NVFP4 blocks only with the nvfp4 PE, the nvfp4 PE only with NVFP4 blocks (UE4M3
    /// scales, K <= 16), and no more than six stages: each refused in one line.
    #[test]
    fn mismatched_pe_and_format_are_refused_in_one_line() {
        for (p, needle) in [
            (array("nvfp4", Some("float")), "take --pe nvfp4"),
            (array("nvfp4", Some("mx")), "take --pe nvfp4"),
            (array("mx:fp4:e2m1", Some("nvfp4")), "take --pe mx"),
            (array("fp8:e4m3", Some("nvfp4")), "works on NVFP4 blocks"),
            (array("nvfp4", None).stages(7), "0..=6"),
            (array("scaled/fp4:e2m1/b4/ue5m3/t", None), "UE4M3 scales"),
            (array("scaled/fp4:e2m1/b32/ue4m3/t", None), "K <= 16"),
        ] {
            let e = generate(&p).unwrap_err().0;
            assert!(e.contains(needle) && !e.contains('\n'), "{e}");
        }
    }
}
