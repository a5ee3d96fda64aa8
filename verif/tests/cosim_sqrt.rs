//! The ALU lane's `sqrt` opcode (`--sqrt`, issue 46) against the golden lane
//! (`Alu::with_sqrt`): every opcode, sqrt among them, on every operand pair of lns:3:2,
//! lns:2:4, fp8:e4m3, float:2:5 (subnormal roots), posit:8:2, takum:8 and fix:3:4; every
//! word of posit:16:1 and fix:7:8 through the one-operand opcodes; vectors of lns:5:6 lanes
//! converting to lns:5:4, of bf16, posit:32:2 and fix:15:16 lanes on random operations; and
//! mutants the exhaustive runs catch: LNS odd codes rounded up instead of down and the sign
//! ignored (a negative value's root instead of NaN); float's sticky bit dropped, the
//! exponent's parity flipped and the root of −0 made +0; posit's and takum's sticky bit
//! dropped (roots one ulp low), posit's scale parity flipped and a negative posit rooted
//! instead of NaR; fix's rounding bit dropped (one ulp low) and a negative word rooted
//! instead of 0.

mod common;

use common::{check, mutant, params, toolchain};
use lpgen_hdl::{Params, Unit};
use lpgen_verif::Mode;

fn sqrt_alu(fmt: &str, stages: u32) -> Params {
    let mut p = params(Unit::Alu, fmt, stages);
    p.sqrt = true;
    p
}

#[test]
fn alu_every_opcode_with_sqrt_on_every_operand_pair() {
    let tc = toolchain();
    for (fmt, w, stages) in [
        ("lns:3:2", 7, 3),
        ("lns:2:4", 8, 0),
        ("fp8:e4m3", 8, 5),
        ("float:2:5", 8, 2),
        ("posit:8:2", 8, 4),
        ("takum:8", 8, 2),
        ("fix:3:4", 8, 1),
    ] {
        let r = check(&tc, &sqrt_alu(fmt, stages), Mode::Exhaustive, 0);
        assert_eq!(r.passed, (16 << (2 * w)) + (1 << w), "{fmt}");
    }
}

/// 16-bit lanes: sqrt, neg and abs on every word (t_out too), convert on every word of T.
#[test]
fn alu_one_operand_opcodes_with_sqrt_on_every_16_bit_word() {
    let tc = toolchain();
    for (fmt, stages) in [("posit:16:1", 4), ("fix:7:8", 2)] {
        let r = check(&tc, &sqrt_alu(fmt, stages), Mode::Exhaustive, 0);
        assert_eq!(r.passed, 4 << 16, "{fmt}");
    }
}

#[test]
fn vectors_with_sqrt_on_random_operations() {
    for (fmt, to, stages) in [
        ("lns:5:6", "lns:5:4", 3),
        ("bf16", "bf16", 4),
        ("posit:32:2", "posit:16:1", 4),
        ("fix:15:16", "fix:7:8", 2),
    ] {
        let mut p = params(Unit::Vector, fmt, stages);
        p.lanes = 4;
        p.to = Some(to.parse().unwrap()).filter(|t| *t != p.format);
        p.sqrt = true;
        let r = check(&toolchain(), &p, Mode::Vectors(20_000), 46);
        assert!(r.passed > 20_000, "{fmt}: {}", r.passed);
    }
}

#[test]
fn sqrt_mutants_are_caught() {
    let lns = sqrt_alu("lns:3:2", 0);
    let float = sqrt_alu("fp8:e4m3", 0);
    let posit = sqrt_alu("posit:8:0", 0);
    let takum = sqrt_alu("takum:8", 0);
    let fix = sqrt_alu("fix:3:4", 0);
    for (p, from, to) in [
        (
            &lns,
            "sqrt_a_log[5:1]})",
            "sqrt_a_log[5:1]} + {6'd0, sqrt_a_log[0]})",
        ),
        (&lns, "(sqrt_a_sign ? LNS_NAN", "(1'b0 ? LNS_NAN"),
        (
            &float,
            "assign root_sig = {root0, sticky};",
            "assign root_sig = {root0, 1'b0};",
        ),
        (
            &float,
            "assign odd = ~radicand_exp[0];",
            "assign odd = radicand_exp[0];",
        ),
        (
            &float,
            "(is_zero ? {a_decode_sign, 7'd0}",
            "(is_zero ? {1'b0, 7'd0}",
        ),
        (
            &posit,
            "assign sqrt_sticky = (|sqrt_rem0);",
            "assign sqrt_sticky = 1'b0;",
        ),
        (
            &posit,
            "assign sqrt_odd = sqrt_a_decode_scale[0];",
            "assign sqrt_odd = ~sqrt_a_decode_scale[0];",
        ),
        (
            &posit,
            "assign sqrt_is_nar = sqrt_a_decode_sign;",
            "assign sqrt_is_nar = (a == NAR);",
        ),
        (
            &takum,
            "assign sqrt_sticky = (|sqrt_rem0);",
            "assign sqrt_sticky = 1'b0;",
        ),
        (&fix, "+ {7'd0, sqrt_root0[0]})", "+ {7'd0, 1'b0})"),
        (
            &fix,
            "assign sqrt_positive = (~a[7] & (|a));",
            "assign sqrt_positive = (|a);",
        ),
    ] {
        let (failed, first) = mutant(p, from, to, Mode::Exhaustive);
        assert!(
            failed > 0 && first.contains("<-- differs"),
            "{from}: {first}"
        );
    }
}
