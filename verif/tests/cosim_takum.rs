//! Takum lanes (the posit datapath with takum's decoder and encoder, `hdl/src/units/takum.rs`)
//! against the golden `TakumFormat`: every opcode on every takum:8 operand pair, converting to
//! takum:6, pipelined; and a mutant that lets an out-of-range characteristic's garbage bits
//! saturate high (the bug the first exhaustive run found), which it catches. The
//! `takum-quire` array (the posit quire PE on takum words) against the golden takum quire
//! (`tapered::Quire`, the accumulator the registry pairs with the PE): a 2×2 array with every
//! register around its quire on random tiles, and three mutants of a 1×1 one, which it
//! catches: products placed one quire bit low, a NaR flag that `clear` does not reset, and a
//! read-out that drops the quire's bits below the guard (its sticky bit).

mod common;

use common::{array, check, mutant, params, toolchain};
use lpgen_hdl::{PeKind, Unit};
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

fn takum_quire() -> PeKind {
    "takum-quire".parse().unwrap()
}

#[test]
fn takum_quire_array_2x2_pipelined_front_and_read_out() {
    // Stages 8: every register of the quire PE, before and after its quire.
    let p = array("takum:8", takum_quire(), 2, 2, 8);
    assert_eq!(lpgen_hdl::units::array_accumulations(&p), 1);
    let r = check(&toolchain(), &p, Mode::Vectors(20_000), 0x7a4);
    assert!(r.passed > 1000, "{}", r.passed);
}

#[test]
fn takum_quire_array_mutants_are_caught() {
    let p = array("takum:8", takum_quire(), 1, 1, 0);
    for (from, to) in [
        // The product's position: QF = quire_frac_bits = 2·(255 + 8) = 526 quire LSBs.
        ("+ 12'd526)", "+ 12'd525)"),
        ("((quire_nar & ~clear) | nar_in)", "(quire_nar | nar_in)"),
        (
            "assign sticky_in = (1'b0 | (|sig[1061:0]));",
            "assign sticky_in = 1'b0;",
        ),
    ] {
        let (failed, first) = mutant(&p, from, to, Mode::Vectors(6_000));
        assert!(failed > 0, "the mutant {from:?} -> {to:?} passed");
        eprintln!("{first}");
    }
}
