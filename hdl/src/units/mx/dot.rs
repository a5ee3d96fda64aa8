//! `mx-dot`: the dot product of two MX blocks (§6.4 of the MX specification), exact, as the
//! golden `MxFormat::dot_block`.
//!
//! Ports: `xa`, `xb` (8: the E8M0 scales), `pa`, `pb` (K·w: the element words, element i
//! at bits [i·w +: w]); out `acc` (two's complement, the exact Σ P_A,i·P_B,i in units of
//! the element's last place squared), `exp` (signed: the result is acc·2^exp, exp =
//! 2·lsb + (xa − 127) + (xb − 127)), `nan` (a NaN scale or element, ∞·0, +∞ and −∞),
//! `inf` and `inf_neg` (±∞: E5M2's infinities). With `nan` or `inf`, `acc` and `exp` are 0.

use lpgen_golden::mx::{Elem, MxFormat, SCALE_BIAS, SCALE_NAN};

use super::super::float::decode;
use super::super::{finish, start, Built, GenError, Params};
use super::mx_format;
use crate::ir::{cat, konst, mux, named, signed_bits, Module, E};

/// Candidate stage boundaries (the most `--stages` accepts): decode, multiply and align,
/// sum.
pub(crate) const DOT_STAGES: u32 = 3;

/// One decoded element: its value is (−1)^sign · sig · 2^shift at the element's last place.
struct Elt {
    sign: E,
    nan: Option<E>,
    inf: Option<E>,
    zero: E,
    /// None for INT8 (no exponent).
    shift: Option<E>,
    sig: E,
}

/// Decodes element `x`: float elements through the float units' decoder (biased exponent 1
/// for subnormals, so the shift is exponent − 1), INT8 as sign and magnitude.
fn element(m: &mut Module, mx: &MxFormat, name: &str, x: &E) -> Elt {
    match mx.elem {
        Elem::Float(f) => {
            let d = decode(m, f, name, x);
            let shift = m.wire(&format!("{name}_shift"), &d.exp.sub(&konst(f.exp_bits, 1)));
            Elt {
                sign: d.sign,
                nan: (!f.no_nan).then_some(d.nan),
                inf: d.inf,
                zero: d.zero,
                shift: Some(shift),
                sig: d.sig,
            }
        }
        Elem::Int8 => {
            let mag = mux(&x.msb(), &konst(8, 0).sub(x), x);
            Elt {
                sign: x.msb(),
                nan: None,
                inf: None,
                zero: x.any().not(),
                shift: None,
                sig: m.wire(&format!("{name}_mag"), &mag),
            }
        }
    }
}

/// Bits of a product's magnitude at the block's fixed point (the last place squared).
fn product_bits(mx: &MxFormat) -> u32 {
    match mx.elem {
        Elem::Float(f) => {
            // The largest finite biased exponent: all ones but with infinities.
            let fmax = (1u32 << f.exp_bits) - if f.finite { 1 } else { 2 };
            2 * (f.frac_bits + 1) + 2 * (fmax - 1)
        }
        Elem::Int8 => 16,
    }
}

/// The OR of a list of one-bit signals (0 when empty).
fn any_of(v: &[E]) -> E {
    if v.is_empty() {
        konst(1, 0)
    } else {
        cat(v).any()
    }
}

/// `mx-dot` for `--format mx:ELEM[:bK]`.
pub(crate) fn dot(p: &Params) -> Result<Built, GenError> {
    let mx = mx_format(p);
    let (k, w) = (mx.block as u32, mx.elem_width());
    let (mut m, valid) = start(p, DOT_STAGES)?;
    let xa = m.input("xa", 8);
    let xb = m.input("xb", 8);
    let pa = m.input("pa", k * w);
    let pb = m.input("pb", k * w);
    let d = block_dot(&mut m, &mx, (&xa, &pa), (&xb, &pb));
    m.stage();
    m.output("acc", &d.acc);
    m.output("exp", &d.exp);
    m.output("nan", &d.nan);
    m.output("inf", &d.inf);
    m.output("inf_neg", &d.inf_neg);
    finish(m, &valid, vec![])
}

/// A block pair's exact dot product: `acc`·2^`exp` (both 0 with `nan` or `inf`), or NaN, or
/// ±∞ (`inf`, `inf_neg`).
pub(crate) struct BlockDot {
    /// Two's complement, the exact Σ P_A,i·P_B,i at the element's last place squared.
    pub acc: E,
    /// Signed: 2·lsb + (xa − 127) + (xb − 127).
    pub exp: E,
    pub nan: E,
    pub inf: E,
    pub inf_neg: E,
}

/// The datapath of `mx-dot` from the scales and element buses of blocks a and b (`xa`, `pa`;
/// `xb`, `pb`): decode, multiply and align, an exact sum. Marks two candidate boundaries
/// (after the decode, after the products); the sum ends in the cycle it returns in. Shared by
/// `mx-dot` and the array's `mx` PE (`pe.rs`).
pub(crate) fn block_dot(
    m: &mut Module,
    mx: &MxFormat,
    (xa, pa): (&E, &E),
    (xb, pb): (&E, &E),
) -> BlockDot {
    let (k, w) = (mx.block as u32, mx.elem_width());
    m.comment("decode the scales (E8M0: 0xFF is NaN) and every element of both blocks");
    let scale_nan = named("MX_SCALE_NAN", 8, u128::from(SCALE_NAN));
    let mut nans = vec![xa.eq(&scale_nan).or(&xb.eq(&scale_nan))];
    let (mut pos_inf, mut neg_inf) = (vec![], vec![]);
    let mut elems = vec![];
    for i in 0..k {
        let a = element(m, mx, &format!("a{i}"), &pa.bits(i * w + w - 1, i * w));
        let b = element(m, mx, &format!("b{i}"), &pb.bits(i * w + w - 1, i * w));
        let neg = m.wire(&format!("neg{i}"), &a.sign.xor(&b.sign));
        nans.extend(a.nan.iter().chain(b.nan.iter()).cloned());
        if let (Some(ia), Some(ib)) = (&a.inf, &b.inf) {
            // ∞·0 is NaN; otherwise an infinite operand makes an infinite product.
            nans.push(ia.and(&b.zero).or(&ib.and(&a.zero)));
            let inf = ia.or(ib);
            pos_inf.push(inf.and(&neg.not()));
            neg_inf.push(inf.and(&neg));
        }
        elems.push((a, b, neg));
    }
    let pos = m.wire("pos_inf", &any_of(&pos_inf));
    let negi = m.wire("neg_inf", &any_of(&neg_inf));
    let nan = m.wire("is_nan", &any_of(&nans).or(&pos.and(&negi)));
    let inf = m.wire("is_inf", &nan.not().and(&pos.or(&negi)));
    let inf_neg = m.wire("is_inf_neg", &inf.and(&negi));
    let special = m.wire("special", &nan.or(&inf));
    m.comment("the result's exponent: 2·lsb + (xa − 127) + (xb − 127)");
    let offset = 2 * mx.elem_lsb() - 2 * i64::from(SCALE_BIAS);
    let ew = signed_bits(offset, offset + 2 * 254);
    let off = named(
        "MX_EXP_OFFSET",
        ew,
        (offset as i128 as u128) & ((1u128 << ew) - 1),
    );
    let exp = m.wire("exp_sum", &xa.zext(ew).add(&xb.zext(ew)).add(&off));
    m.stage();
    m.comment("multiply the significands exactly; shift each product to the block's fixed point");
    let pw = product_bits(mx);
    let sw = pw + 1 + k.next_power_of_two().trailing_zeros();
    let mut terms = vec![];
    for (i, (a, b, neg)) in elems.iter().enumerate() {
        let prod = a.sig.mul_full(&b.sig).zext(pw);
        let prod = match (&a.shift, &b.shift) {
            (Some(sa), Some(sb)) => {
                let bits = sa.width + 1;
                prod.shl(&sa.zext(bits).add(&sb.zext(bits)))
            }
            _ => prod,
        };
        let t = m.wire(&format!("prod{i}"), &prod).zext(sw);
        let t = mux(neg, &konst(sw, 0).sub(&t), &t);
        terms.push(m.wire(&format!("term{i}"), &t));
    }
    m.stage();
    m.comment("add the K terms exactly (a balanced tree, two's complement)");
    let sum = m.tree("sum", terms, E::add);
    BlockDot {
        acc: mux(&special, &konst(sw, 0), &sum),
        exp: mux(&special, &konst(ew, 0), &exp),
        nan,
        inf,
        inf_neg,
    }
}
