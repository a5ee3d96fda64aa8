//! The lean co-simulation of the `float` array PE CI runs (issue 32; scripts/cosim-full.sh
//! runs more formats and stage counts): every fp8:e4m3 product pair through a 1×1 array
//! (each tile round(a·b + c·d) in the exact accumulator), random and corner bf16 and
//! float:3:4:ftz tiles; with `--acc bf16` every fp8:e4m3 and fp8:e5m2 product pair and random
//! fp8:e4m3 tiles; and three mutants it catches: the read-out dropping the sticky bit of
//! the accumulator bits below the kept ones, the NaN flag surviving `clear`, and `--acc`'s
//! accumulator not restarting on `clear`.

mod common;

use common::{array, check, toolchain};
use lpgen_hdl::{generate, PeKind};
use lpgen_verif::{drivers::run_design, Mode, RunOptions};

#[test]
fn float_pe_fp8_e4m3_every_product_pair() {
    let r = check(
        &toolchain(),
        &array("fp8:e4m3", PeKind::Float, 1, 1, 2),
        Mode::Exhaustive,
        0,
    );
    assert_eq!(r.passed, 1 << 16);
}

#[test]
fn float_pe_bf16_and_float_3_4_ftz_random_tiles() {
    let tc = toolchain();
    let r = check(
        &tc,
        &array("bf16", PeKind::Float, 2, 3, 2),
        Mode::Vectors(20_000),
        0xbf16,
    );
    assert!(r.passed > 1_000, "{}", r.passed);
    let r = check(
        &tc,
        &array("float:3:4:ftz", PeKind::Float, 2, 2, 0),
        Mode::Vectors(20_000),
        0x34,
    );
    assert!(r.passed > 1_000, "{}", r.passed);
}

/// `--acc bf16`: every fp8:e4m3 and fp8:e5m2 product pair (each tile round(round(a·b) +
/// c·d) in bf16, read out into the format), and random bf16-accumulated fp8:e4m3 tiles of
/// up to 24 steps on a 2×3 array.
#[test]
fn float_pe_accumulating_in_bf16() {
    let tc = toolchain();
    for f in ["fp8:e4m3", "fp8:e5m2"] {
        let r = check(&tc, &wide(f, 1, 1, 2), Mode::Exhaustive, 0);
        assert_eq!(r.passed, 1 << 16);
    }
    let r = check(
        &tc,
        &wide("fp8:e4m3", 2, 3, 1),
        Mode::Vectors(20_000),
        0xacc,
    );
    assert!(r.passed > 1_000, "{}", r.passed);
}

fn wide(f: &str, rows: u32, cols: u32, stages: u32) -> lpgen_hdl::Params {
    let mut p = array(f, PeKind::Float, rows, cols, stages);
    p.acc = Some("bf16".parse().unwrap());
    p
}

/// Runs the exhaustive fp8:e4m3 1×1 array with `from` replaced by `to` in its Verilog.
fn mutant(from: &str, to: &str) -> lpgen_verif::Report {
    mutant_of(array("fp8:e4m3", PeKind::Float, 1, 1, 2), from, to)
}

fn mutant_of(p: lpgen_hdl::Params, from: &str, to: &str) -> lpgen_verif::Report {
    let tc = toolchain();
    let mut d = generate(&p).unwrap();
    assert_eq!(d.verilog.text().matches(from).count(), 1, "mutation site");
    for f in &mut d.verilog.files {
        f.text = f.text.replacen(from, to, 1);
    }
    let r = run_design(&tc, &p, &d, RunOptions::new(Mode::Exhaustive, 0)).unwrap();
    eprintln!("{from} -> {to}: {} passed, {} failed", r.passed, r.failed);
    r
}

/// Without the sticky bit of the accumulator bits below the kept M + 3, sums just above a
/// tie round to even instead of up.
#[test]
fn mutation_a_dropped_read_out_sticky_bit_is_caught() {
    let r = mutant("(|acc_norm[94:0])", "1'b0");
    assert!(r.failed > 100, "{} failed", r.failed);
}

/// A NaN flag that `clear` does not reset poisons every later tile.
#[test]
fn mutation_a_nan_flag_surviving_clear_is_caught() {
    let r = mutant("(acc_nan & ~clear_d1)", "acc_nan");
    assert!(r.failed > 1000, "{} failed", r.failed);
}

/// `--acc bf16` with an accumulator that `clear` does not restart: every tile adds to the
/// previous one's sum. (A read-out turning −0 into +0 is no mutant: the sum starts at +0,
/// and +0 + −0 = +0, so no tile reads out −0.)
#[test]
fn mutation_an_accumulator_not_restarted_by_clear_is_caught() {
    let r = mutant_of(wide("fp8:e4m3", 1, 1, 2), "(clear_d1 ? 16'd0 : acc)", "acc");
    assert!(r.failed > 1000, "{} failed", r.failed);
}
