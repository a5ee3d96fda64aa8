//! The `mx` array PE (issue 33): `lpgen rtl array --format mx:ELEM[:bK]` (`--pe mx`, the
//! default for MX formats). Each step of the array is one block pair: PE (r, c) gets block k
//! of row r of A and block k of column c of B, and accumulates as the golden
//! `lpgen_golden::mx::F32Acc` does (the specification's reference accumulation, the one
//! training uses, `MxVector::dot_f32`): s = (clear ? +0 : s) + round_f32(X_A·X_B·Σ P_A,i·P_B,i).
//!
//! Operand word (8 + K·w bits): the E8M0 scale at bits `[7:0]`, element i at bits
//! `[8 + i·w +: w]` (a block shorter than K is padded with element code 0, which adds an exact
//! zero). Result: the f32 word s.
//!
//! The datapath: `mx-dot`'s ([`block_dot`]: element decoders, exact products shifted to the
//! block's fixed point, an exact adder tree, the scales' exponents added), the exact sum
//! rounded once to f32 (a leading-zero count, the top 26 bits and a sticky bit into the float
//! units' rounder `round_encode`: subnormals, overflow to ±∞), NaN (a NaN scale or element,
//! ∞·0, +∞ with −∞) to 0x7fc00000, ±∞ blocks (E5M2) to ±∞, an exact zero to +0; then the
//! accumulation by float-add's datapath (`add_decoded` on float:8:23, round to nearest even,
//! NaN canonical), the PE's one-cycle loop.
//!
//! Candidate boundaries (10): after the decode (0), after the products (1), after the sum
//! (2), the f32 rounder's (3), the product register before the loop (4), and float-add's
//! five inside the loop (never cut). Array `--stages` S: 1 is the array's input register;
//! 2 cuts 4; 3 also 2; 4 also 1; 5 also 0; 6 also 3. All are before the loop: the PE's
//! latency is S − 1 and it accumulates one block per cycle at every S.

use lpgen_golden::mx::MxFormat;
use lpgen_golden::FloatFormat;

use super::super::float::{
    add_decoded, decode, inf_word, qnan, round_encode, zero_word, ADD_STAGES,
};
use super::super::pe::ArrayPe;
use super::super::posit::decode::lzc;
use super::super::{GenError, Params, PeIo};
use super::dot::{block_dot, BlockDot};
use super::mx_format;
use crate::ir::{cat, konst, mux, signed_bits, signed_konst, Module, StagePlan, E};

/// IEEE binary32, the accumulator's words.
fn f32_format() -> FloatFormat {
    FloatFormat::new(8, 23, false, false, false).expect("binary32")
}

/// Bits of an operand: the scale byte and K elements.
pub(crate) fn block_bits(mx: &MxFormat) -> u32 {
    8 + mx.block as u32 * mx.elem_width()
}

/// The candidate boundaries and cuts of a block PE (`mx`, `nvfp4`: decode, products, sum,
/// the f32 rounder, the term register, float-add's five) at the array's stages (module docs).
pub(crate) fn block_pe_plan(p: &Params) -> (u32, StagePlan) {
    (5 + ADD_STAGES, StagePlan::at(cuts(p.stages)))
}

/// The cut boundaries at array stages `stages` (module docs).
fn cuts(stages: u32) -> &'static [usize] {
    match stages {
        0 | 1 => &[],
        2 => &[4],
        3 => &[2, 4],
        4 => &[1, 2, 4],
        5 => &[0, 1, 2, 4],
        _ => &[0, 1, 2, 3, 4],
    }
}

/// The block pair's exact dot product `d` rounded once to an f32 word (golden
/// `Exact::to_f32`). Marks one candidate boundary (the rounder's).
fn round_block(m: &mut Module, d: &BlockDot) -> E {
    let f = f32_format();
    let (word, zero) = round_exact_f32(m, &d.acc, &d.exp);
    m.comment("specials: an exact zero is +0; a +-inf block; NaN");
    let word = mux(&zero, &zero_word(f, &konst(1, 0)), &word);
    let word = mux(&d.inf, &inf_word(f, &d.inf_neg), &word);
    m.wire("block_word", &mux(&d.nan, &qnan(f), &word))
}

/// The exact value `acc` · 2^`exp` (`acc` two's complement, `exp` signed) rounded once to an
/// f32 word, to nearest even (subnormals, overflow to ±∞), and whether it is zero (the word
/// is then not +0 yet: the caller's specials say). Marks one candidate boundary (the
/// rounder's). Shared by the `mx` and `nvfp4` PEs.
pub(crate) fn round_exact_f32(m: &mut Module, acc: &E, exp: &E) -> (E, E) {
    let f = f32_format();
    let sw = acc.width;
    m.comment(
        "the block's exact sum rounded once to f32: |acc|, its leading one, 26 bits and sticky",
    );
    let neg = m.wire("block_neg", &acc.msb());
    let mag = mux(&neg, &konst(sw, 0).sub(acc), acc);
    let mag = m.wire("block_mag", &mag);
    let (lz, zero) = lzc(m, "block", &mag);
    let norm = m.wire("block_norm", &mag.shl(&lz));
    let keep = f.frac_bits + 3;
    let top = if sw > keep {
        let sticky = norm.bits(sw - keep - 1, 0).any();
        cat(&[norm.bits(sw - 1, sw - keep), sticky])
    } else {
        cat(&[norm.clone(), konst(keep + 1 - sw, 0)])
    };
    let top = m.wire("block_top", &top);
    // The leading one at bit sw − 1 − lz weighs 2^(sw − 1 − lz + exp): its biased f32
    // exponent is exp + sw − 1 + 127 − lz (lz < 2·sw, the counter's padded width).
    let (lo, hi) = exp_range(exp.width);
    let k = i64::from(sw) - 1 + f.bias();
    let bw = signed_bits(lo + k - 2 * i64::from(sw), hi + k)
        .max(lz.width + 1)
        .max(exp.width + 1);
    let be = exp.sext(bw).add(&signed_konst(bw, k)).sub(&lz.zext(bw));
    let be = m.wire("block_exp", &be);
    (round_encode(m, f, &neg, &be, &top), zero)
}

/// The PE's accumulator: s = (clear ? +0 : s) + `term` (an f32 word), rounded once by
/// float-add's datapath (its five candidate boundaries inside the loop, never cut), loaded
/// when `io.enable`. Returns the register s. Shared by the `mx` and `nvfp4` PEs.
pub(crate) fn accumulate_f32(pe: &mut Module, io: &PeIo, term: &E) -> E {
    let f = f32_format();
    pe.comment("the accumulator: s = (clear ? +0 : s) + term, rounded once (float-add's datapath)");
    let s = pe.state("acc", 32, Some(0));
    let base = pe.wire("acc_base", &mux(&io.clear, &konst(32, 0), &s));
    let ds = decode(pe, f, "acc", &base);
    let dt = decode(pe, f, "term", term);
    let next = add_decoded(pe, f, &ds, &dt, &konst(1, 0), None);
    let next = pe.wire("acc_next", &next);
    pe.drive(&s, &next, Some(&io.enable));
    s
}

/// The range of a signed value of `w` bits.
fn exp_range(w: u32) -> (i64, i64) {
    (-(1i64 << (w - 1)), (1i64 << (w - 1)) - 1)
}

/// The most array `--stages` of the `mx` PE.
pub(crate) const MX_PE_MAX_STAGES: u32 = 6;

/// The `mx` array PE.
pub(crate) struct MxPe;

pub(crate) static MX_PE: MxPe = MxPe;

impl ArrayPe for MxPe {
    fn max_stages(&self) -> u32 {
        MX_PE_MAX_STAGES
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
        p.mx.map_or(0, |mx| block_bits(&mx))
    }
    fn result_bits(&self, _: &Params) -> u32 {
        32
    }
    fn build(&self, pe: &mut Module, p: &Params, io: &PeIo, _: Option<&E>) -> Result<E, GenError> {
        let mx = mx_format(p);
        let top = block_bits(&mx) - 1;
        let (xa, pa) = (io.a.bits(7, 0), io.a.bits(top, 8));
        let (xb, pb) = (io.b.bits(7, 0), io.b.bits(top, 8));
        let d = block_dot(pe, &mx, (&xa, &pa), (&xb, &pb));
        pe.stage();
        let term = round_block(pe, &d);
        pe.stage();
        let s = accumulate_f32(pe, io, &term);
        Ok(s)
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

    /// An MX format makes an array of `mx` PEs: one block (8 + K·w bits) per row and column
    /// and step, an f32 word per PE; the latency is the array's (R + C + stages).
    #[test]
    fn an_mx_array_takes_blocks_and_reads_out_f32() {
        let p = array("mx:fp6:e2m3:b5", None).stages(4);
        assert_eq!(p.pe, PeKind::Mx);
        let d = generate(&p).unwrap();
        let m = Manifest::from_json(&d.manifest).unwrap();
        let width = |n: &str| m.ports.iter().find(|p| p.name == n).unwrap().width;
        assert_eq!(width("a_in"), 2 * (8 + 5 * 6));
        assert_eq!(width("b_in"), 3 * (8 + 5 * 6));
        assert_eq!(width("c_out"), 6 * 32);
        assert_eq!(m.latency, 2 + 3 + 4);
        assert_eq!(m.format, "mx:fp6:e2m3:b5");
        assert_eq!(d.top, "lpgen_array_mx_fp6_e2m3_b5_2x3_mx_s4");
    }

    /// MX blocks only with the mx PE, the mx PE only with MX blocks, and no more than six
    /// stages: each refused in one line.
    #[test]
    fn mismatched_pe_and_format_are_refused_in_one_line() {
        for (p, needle) in [
            (array("mx:fp8:e4m3", Some("float")), "take --pe mx"),
            (array("fp8:e4m3", Some("mx")), "works on MX blocks"),
            (array("mx:int8", None).stages(7), "0..=6"),
        ] {
            let e = generate(&p).unwrap_err().0;
            assert!(e.contains(needle) && !e.contains('\n'), "{e}");
        }
        // Units other than the array still refuse MX formats.
        let e = generate(&Params::parse(Unit::FloatAdd, "mx:int8").unwrap())
            .unwrap_err()
            .0;
        assert!(e.contains("array (--pe mx)"), "{e}");
    }
}
