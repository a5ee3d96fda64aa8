//! Takum lanes (the posit datapath with takum's decoder and encoder, `hdl/src/units/takum.rs`)
//! against the golden `TakumFormat`: every opcode on every takum:8 operand pair, converting to
//! takum:6, pipelined; and a mutant that lets an out-of-range characteristic's garbage bits
//! saturate high (the bug the first exhaustive run found), which it catches.

mod common;

use common::{check, params, toolchain};
use lpgen_hdl::Unit;
use lpgen_verif::{drivers::run_design, Mode, RunOptions};

#[test]
fn alu_takum_8_every_opcode_and_operand_pair() {
    let mut p = params(Unit::Alu, "takum:8", 4);
    p.to = Some("takum:6".parse().unwrap());
    let r = check(&toolchain(), &p, Mode::Exhaustive, 0);
    // 16 opcode codes × every pair, then every takum:6 word converted in.
    assert_eq!(r.passed, (16 << 16) + 64);
}

#[test]
fn mutation_saturating_on_an_out_of_range_characteristic_is_caught() {
    let tc = toolchain();
    let p = params(Unit::Alu, "takum:8", 0);
    let mut d = lpgen_hdl::generate(&p).unwrap();
    let (from, to) = (
        "(~(maxpos | below_minpos) & (kept == 7'd127))",
        "(kept == 7'd127)",
    );
    assert!(d.verilog.text().contains(from), "mutation site");
    for f in &mut d.verilog.files {
        f.text = f.text.replace(from, to);
    }
    let r = run_design(&tc, &p, &d, RunOptions::new(Mode::Exhaustive, 0)).unwrap();
    assert!(r.failed > 0, "the mutant passed");
}
