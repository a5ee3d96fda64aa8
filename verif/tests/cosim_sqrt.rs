//! The ALU lane's `sqrt` opcode (`--sqrt`, issue 46) against the golden lane
//! (`Alu::with_sqrt`): every opcode, sqrt among them, on every operand pair of lns:3:2,
//! lns:2:4, fp8:e4m3 and float:2:5 (subnormal roots), vectors of lns:5:6 lanes converting to
//! lns:5:4 and of bf16 lanes on random operations, and mutants the exhaustive runs catch:
//! LNS odd codes rounded up instead of down and the sign ignored (a negative value's root
//! instead of NaN); float's sticky bit dropped, the exponent's parity flipped and the root
//! of −0 made +0.

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
    ] {
        let r = check(&tc, &sqrt_alu(fmt, stages), Mode::Exhaustive, 0);
        assert_eq!(r.passed, (16 << (2 * w)) + (1 << w), "{fmt}");
    }
}

#[test]
fn vectors_with_sqrt_on_random_operations() {
    for (fmt, to, stages) in [("lns:5:6", "lns:5:4", 3), ("bf16", "bf16", 4)] {
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
    ] {
        let (failed, first) = mutant(p, from, to, Mode::Exhaustive);
        assert!(
            failed > 0 && first.contains("<-- differs"),
            "{from}: {first}"
        );
    }
}
