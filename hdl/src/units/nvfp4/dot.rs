//! `nvfp4-dot`: the dot product of two NVFP4 blocks, exact, as the golden
//! `scale::dot::dot_block`: S_a · S_b · Σ q_a,i · q_b,i (the tensor scales and the accumulation
//! over blocks are the GEMM's, outside the block).
//!
//! Ports: `xa`, `xb` (8: the UE4M3 scale bytes), `pa`, `pb` (K·4: the E2M1 codes, element i at
//! bits [i·4 +: 4]); out `acc` (two's complement: Σ (2·q_a,i)(2·q_b,i) · m_a · m_b, the golden
//! `Exact`'s numerator), `exp` (signed: the result is acc · 2^exp, exp = e_a + e_b − 2 with
//! S = m · 2^e, m the scale's significand 0..15) and `nan` (a NaN scale 0x7F; also a byte of
//! 0x80 or more, which is not a UE4M3 scale and which the golden model refuses). With `nan`,
//! `acc` and `exp` are 0.

use super::super::{finish, start, Built, GenError, Params};
use super::{design, Nvfp4Design};
use crate::ir::{cat, konst, mux, named, signed_bits, signed_konst, Module, E};

/// Candidate stage boundaries (the most `--stages` accepts): decode, products, sum.
pub(crate) const DOT_STAGES: u32 = 3;

/// The UE4M3 scale's significand (4 bits, 0 for 0) and exponent field (1 for subnormals).
fn scale_parts(m: &mut Module, name: &str, x: &E) -> (E, E) {
    let field = x.bits(6, 3);
    let field_zero = field.any().not();
    let sig = m.wire(&format!("{name}_sig"), &cat(&[field.any(), x.low(3)]));
    let e = m.wire(
        &format!("{name}_field"),
        &mux(&field_zero, &konst(4, 1), &field),
    );
    (sig, e)
}

/// An E2M1 code's magnitude in halves (0, 1, 2, 3, 4, 6, 8, 12): its significand (the hidden
/// bit and the fraction bit) shifted left by field − 1 (subnormals: field 0, shift 0).
fn halves(m: &mut Module, name: &str, c: &E) -> E {
    let field = c.bits(2, 1);
    let field_zero = field.any().not();
    let sig = cat(&[field.any(), c.bit(0)]).zext(4);
    let shift = mux(&field_zero, &konst(2, 0), &field.sub(&konst(2, 1)));
    m.wire(&format!("{name}_halves"), &sig.shl(&shift))
}

/// `nvfp4-dot` for `--format nvfp4` (or `scaled/fp4:e2m1/bK/ue4m3/t`, K <= 16).
pub(crate) fn dot(p: &Params) -> Result<Built, GenError> {
    let d = design(p);
    let (k, w) = (d.block, d.elem.width());
    let (mut m, valid) = start(p, DOT_STAGES)?;
    let xa = m.input("xa", 8);
    let xb = m.input("xb", 8);
    let pa = m.input("pa", k * w);
    let pb = m.input("pb", k * w);
    let b = block_dot(&mut m, &d, (&xa, &pa), (&xb, &pb));
    m.stage();
    let aw = b.acc.width;
    let ew = b.exp.width;
    m.output("acc", &mux(&b.nan, &konst(aw, 0), &b.acc));
    m.output("exp", &mux(&b.nan, &konst(ew, 0), &b.exp));
    m.output("nan", &b.nan);
    finish(m, &valid, vec![])
}

/// A block pair's exact dot product: `acc` · 2^`exp`, or NaN (`nan`; `acc` and `exp` are then
/// meaningless).
pub(crate) struct BlockDot {
    /// Two's complement: Σ (2·q_a,i)(2·q_b,i) · m_a · m_b.
    pub acc: E,
    /// Signed: e_a + e_b − 2.
    pub exp: E,
    pub nan: E,
}

/// The datapath of `nvfp4-dot` from the scales and element buses of blocks a and b (`xa`,
/// `pa`; `xb`, `pb`): decode, multiply, an exact sum times the scales' significands. Marks two
/// candidate boundaries (after the decode, after the products); the sum ends in the cycle it
/// returns in. Shared by `nvfp4-dot` and the array's `nvfp4` PE (`pe.rs`).
pub(crate) fn block_dot(
    m: &mut Module,
    d: &Nvfp4Design,
    (xa, pa): (&E, &E),
    (xb, pb): (&E, &E),
) -> BlockDot {
    let (k, w) = (d.block, d.elem.width());
    m.comment("decode both scales (0x7F is NaN; a byte >= 0x80 is not a UE4M3 scale)");
    let scale_nan = named("NVFP4_SCALE_NAN", 7, 0x7f);
    let is_nan = |x: &E| x.msb().or(&x.low(7).eq(&scale_nan));
    let nan = m.wire("is_nan", &is_nan(xa).or(&is_nan(xb)));
    let (ma, fa) = scale_parts(m, "xa", xa);
    let (mb, fb) = scale_parts(m, "xb", xb);
    let scale_prod = m.wire("scale_sig_prod", &ma.mul_full(&mb));
    m.comment("the exponent: (fa - bias - 3) + (fb - bias - 3) - 2 (elements counted in halves)");
    let offset = -2 * (d.scale.bias() + i64::from(d.scale.frac_bits)) - 2;
    let ew = signed_bits(offset + 2, offset + 30);
    let exp = fa.zext(ew).add(&fb.zext(ew)).add(&signed_konst(ew, offset));
    let exp = m.wire("exp_sum", &exp);
    m.comment("each element's magnitude in halves, and the product's sign");
    let mut elems = vec![];
    for i in 0..k {
        let a = pa.bits(i * w + w - 1, i * w);
        let b = pb.bits(i * w + w - 1, i * w);
        let ha = halves(m, &format!("a{i}"), &a);
        let hb = halves(m, &format!("b{i}"), &b);
        let neg = m.wire(&format!("neg{i}"), &a.msb().xor(&b.msb()));
        elems.push((ha, hb, neg));
    }
    m.stage();

    m.comment("multiply exactly (at most 12 * 12 quarter units), two's complement");
    // Σ over K of at most 144: below 2^(8 + log2 K), one sign bit.
    let sw = 9 + k.next_power_of_two().trailing_zeros();
    let mut terms = vec![];
    for (i, (ha, hb, neg)) in elems.iter().enumerate() {
        let prod = m.wire(&format!("prod{i}"), &ha.mul_full(hb)).zext(sw);
        let t = mux(neg, &konst(sw, 0).sub(&prod), &prod);
        terms.push(m.wire(&format!("term{i}"), &t));
    }
    m.stage();

    m.comment("add the K terms exactly (a balanced tree), then times m_a * m_b");
    let sum = m.tree("sum", terms, E::add);
    let aw = sw + 8;
    let acc = sum.sext(aw).smul_full(&scale_prod.zext(9)).low(aw);
    let acc = m.wire("acc_exact", &acc);
    BlockDot { acc, exp, nan }
}
