//! The ALU lane's `sqrt` opcode (`--sqrt`, issue 46) against the golden lane
//! (`Alu::with_sqrt`): every opcode, sqrt among them, on every operand pair of lns:3:2 and
//! lns:2:4, a vector of lns:5:6 lanes converting to lns:5:4 on random operations, and two
//! mutants the exhaustive run catches (odd codes rounded up instead of down; the sign
//! ignored, so that a negative value gives a root instead of NaN).

mod common;

use common::{check, mutant, params, toolchain};
use lpgen_hdl::Unit;
use lpgen_verif::Mode;

fn sqrt_alu(fmt: &str, stages: u32) -> lpgen_hdl::Params {
    let mut p = params(Unit::Alu, fmt, stages);
    p.sqrt = true;
    p
}

#[test]
fn alu_lns_every_opcode_with_sqrt_on_every_operand_pair() {
    let tc = toolchain();
    for (fmt, w, stages) in [("lns:3:2", 7, 3), ("lns:2:4", 8, 0)] {
        let r = check(&tc, &sqrt_alu(fmt, stages), Mode::Exhaustive, 0);
        assert_eq!(r.passed, (16 << (2 * w)) + (1 << w), "{fmt}");
    }
}

#[test]
fn vector_lns_with_sqrt_and_a_conversion_on_random_operations() {
    let mut p = params(Unit::Vector, "lns:5:6", 3);
    p.lanes = 4;
    p.to = Some("lns:5:4".parse().unwrap());
    p.sqrt = true;
    let r = check(&toolchain(), &p, Mode::Vectors(20_000), 46);
    assert!(r.passed > 20_000, "{}", r.passed);
}

#[test]
fn sqrt_mutants_are_caught() {
    let p = sqrt_alu("lns:3:2", 0);
    let (failed, first) = mutant(
        &p,
        "sqrt_a_log[5:1]})",
        "sqrt_a_log[5:1]} + {6'd0, sqrt_a_log[0]})",
        Mode::Exhaustive,
    );
    assert!(failed > 0 && first.contains("<-- differs"), "{first}");
    let (failed, _) = mutant(
        &p,
        "(sqrt_a_sign ? LNS_NAN",
        "(1'b0 ? LNS_NAN",
        Mode::Exhaustive,
    );
    assert!(failed > 0, "the sign mutant passed");
}
