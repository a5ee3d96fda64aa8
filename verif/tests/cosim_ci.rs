//! The lean co-simulation subset CI runs (about 17 small Verilator builds; cosim-full.sh runs
//! the full set): exhaustive lns-add and posit-add, posit-mac from quire states, a 2×3
//! lns-kahan array with K in chunks and smaller shapes, a 2×2 lns-kahan array interleaving
//! four accumulations in its pipelined Kahan loop and a 1×1 lns-plain one interleaving three,
//! a 2×2 posit:8:0 quire array with every register of its pipelined front and read-out,
//! a quant1 column unit on every column of up to 3 fix:1:1 words and random posit:5:0 columns,
//! and mutation tests proving the
//! harness catches a flipped G-table entry, a dropped quire bit, a wrong latency and a wrong
//! ALU constant; every ALU opcode on every posit:8:0 operand pair; a co-simulation shared
//! among ranks checking each step exactly once, failures included; the q8 encoder on every
//! fix:7:8 word and the decoder on every code and posit:8:0 scale, the decoder on f32 words
//! (and a mutant that never rounds up, which it catches), the conversion unit on every
//! lns:5:6 word; the dfix array PE on
//! every dfix:6 operand pair at every read-out shift that matters, a 2×3 dfix:10 array on
//! random tiles and shifts (and a mutant rounding ties up, which it catches), and the dfix
//! overflow monitor with counters small enough to saturate (and a mutant whose counter
//! wraps, which it catches), and the dfix lane's every opcode
//! on every dfix:5 operand pair at every shift that matters.

mod common;

use common::{array, check, params, toolchain};
use lpgen_hdl::{generate, PeKind, Unit};
use lpgen_verif::{drivers::run_design, Mode, RunOptions};

#[test]
fn lns_add_lns_4_4_all_pairs() {
    let r = check(
        &toolchain(),
        &params(Unit::LnsAdd, "lns:4:4", 3),
        Mode::Exhaustive,
        0,
    );
    assert_eq!(r.passed, 2 << 20);
}

#[test]
fn lns_kahan_array_2x2_four_interleaved_accumulations() {
    let p = array("lns:5:6", PeKind::LnsKahan, 2, 2, 5);
    assert_eq!(lpgen_hdl::units::array_accumulations(&p), 4);
    let r = check(&toolchain(), &p, Mode::Vectors(60_000), 0x1eaf);
    assert!(r.passed > 1000, "{}", r.passed);
}

#[test]
fn lns_plain_array_1x1_three_interleaved_accumulations() {
    let p = array("lns:5:6", PeKind::LnsPlain, 1, 1, 4);
    assert_eq!(lpgen_hdl::units::array_accumulations(&p), 3);
    let r = check(&toolchain(), &p, Mode::Vectors(60_000), 0x91a1);
    assert!(r.passed > 1000, "{}", r.passed);
}

#[test]
fn posit_quire_array_2x2_pipelined_front_and_read_out() {
    // Stages 8: every register the posit-quire PE has, before and after its quire.
    let p = array("posit:8:0", PeKind::PositQuire, 2, 2, 8);
    assert_eq!(lpgen_hdl::units::array_accumulations(&p), 1);
    let r = check(&toolchain(), &p, Mode::Vectors(20_000), 0x9e7);
    assert!(r.passed > 1000, "{}", r.passed);
}

#[test]
fn posit_add_posit_8_0_all_pairs() {
    let r = check(
        &toolchain(),
        &params(Unit::PositAdd, "posit:8:0", 4),
        Mode::Exhaustive,
        0,
    );
    assert_eq!(r.passed, 2 << 16);
}

#[test]
fn posit_mac_posit_8_0_all_pairs_from_quire_states() {
    let tc = toolchain();
    let p = params(Unit::PositMac, "posit:8:0", 7);
    let r = check(&tc, &p, Mode::Exhaustive, 0);
    assert!(r.passed >= 8 * 4 * 65536, "{}", r.passed);
    // Random dot products, the carry-guard wrap and NaR, on the same build.
    check(&tc, &p, Mode::Vectors(60_000), 0x05ee_d3ac);
}

#[test]
fn lns_kahan_array_2x3_tiles_in_chunks_and_smaller_shapes() {
    let r = check(
        &toolchain(),
        &array("lns:5:6", PeKind::LnsKahan, 2, 3, 1),
        Mode::Vectors(100_000),
        0xa77a,
    );
    assert!(r.passed > 3000, "{}", r.passed);
}

/// Replaces the one occurrence of `from` in a design's files (so a mutation can never be a
/// no-op).
fn mutate(verilog: &mut lpgen_hdl::Verilog, from: &str, to: &str) {
    assert_eq!(
        verilog.text().matches(from).count(),
        1,
        "mutation site '{from}'"
    );
    for f in &mut verilog.files {
        f.text = f.text.replacen(from, to, 1);
    }
}

#[test]
fn mutation_a_flipped_g_table_entry_is_caught() {
    let tc = toolchain();
    let p = params(Unit::LnsAdd, "lns:4:4", 3);
    let mut d = generate(&p).unwrap();
    // sb[40] = 4 in lns:4:4 (the lower half of the {opposite, d} ROM): make it 5.
    mutate(
        &mut d.verilog,
        "8'd40: g_rom = 8'd4;",
        "8'd40: g_rom = 8'd5;",
    );
    let vcd = std::env::temp_dir().join(format!("lpgen-mutant-{}.vcd", std::process::id()));
    let mut opts = RunOptions::new(Mode::Exhaustive, 0);
    opts.vcd = Some(vcd.clone());
    let r = run_design(&tc, &p, &d, opts).unwrap();
    // The failing case replayed on a trace build into a VCD that shows the mismatch.
    let note = r.vcd.unwrap();
    assert!(note.contains("the mismatch reproduces"), "{note}");
    let text = std::fs::read_to_string(&vcd).unwrap();
    assert!(
        text.contains("$enddefinitions") && text.contains(" sub "),
        "{note}"
    );
    let _ = std::fs::remove_file(&vcd);
    // Every same-sign pair at code distance 40 whose result is not saturated differs.
    assert!(r.failed > 1000, "{} failed", r.failed);
    assert!(r.passed > 2_000_000);
    assert!(r.details[0].contains("<-- differs"), "{}", r.details[0]);
    eprintln!("what a user sees of the first mismatch:\n{}", r.details[0]);
}

#[test]
fn mutation_a_dropped_quire_bit_is_caught() {
    let tc = toolchain();
    let p = params(Unit::PositMac, "posit:8:0", 0);
    let mut d = generate(&p).unwrap();
    mutate(
        &mut d.verilog,
        "if (in_valid) quire <= quire_next;",
        "if (in_valid) quire <= quire_next & ~32'd1;",
    );
    let vcd = std::env::temp_dir().join(format!("lpgen-quire-{}.vcd", std::process::id()));
    let mut opts = RunOptions::new(Mode::Exhaustive, 0);
    opts.vcd = Some(vcd.clone());
    let r = run_design(&tc, &p, &d, opts).unwrap();
    assert!(r.failed > 100, "{} failed", r.failed);
    // A stateful unit: the replay starts at the last clear before the failing step and must
    // rebuild the same quire state.
    let note = r.vcd.unwrap();
    assert!(
        note.contains("the mismatch reproduces") && note.contains("restart point"),
        "{note}"
    );
    assert!(
        std::fs::read_to_string(&vcd).unwrap().contains(" quire "),
        "{note}"
    );
    let _ = std::fs::remove_file(&vcd);
    eprintln!("what a user sees of the first mismatch:\n{}", r.details[0]);
}

#[test]
fn mutation_a_wrong_latency_is_caught_by_the_out_valid_check() {
    // The same Verilog as `lns_add_lns_4_4_all_pairs` (a cache hit), but a manifest that
    // claims one cycle more or less: every result is then due in the wrong cycle.
    let tc = toolchain();
    let p = params(Unit::LnsAdd, "lns:4:4", 3);
    for claimed in [4, 2] {
        let mut d = generate(&p).unwrap();
        let mut m = lpgen_hdl::Manifest::from_json(&d.manifest).unwrap();
        assert_eq!(m.latency, 3);
        m.latency = claimed;
        d.manifest = m.to_json();
        let r = run_design(&tc, &p, &d, RunOptions::new(Mode::Vectors(2000), 1)).unwrap();
        // (A result that happens to equal its neighbour's still passes.)
        assert!(
            r.failed > 2000 && r.failed > 10 * r.passed,
            "{claimed}: {r:?}"
        );
    }
}

#[test]
fn alu_posit_8_0_every_opcode_and_operand_pair() {
    let mut p = params(Unit::Alu, "posit:8:0", 4);
    p.to = Some("posit:6:1:u".parse().unwrap());
    let r = check(&toolchain(), &p, Mode::Exhaustive, 0);
    assert_eq!(r.passed, (16 << 16) + 64);
}

#[test]
fn mutation_a_wrong_alu_constant_is_caught() {
    let tc = toolchain();
    let p = params(Unit::Alu, "posit:8:0", 0);
    let mut d = generate(&p).unwrap();
    // `lt` gives one (0x40 in posit:8:0) when a < b: make it 0x3f.
    mutate(&mut d.verilog, "? 8'd64 : 8'd0)", "? 8'd63 : 8'd0)");
    let r = run_design(&tc, &p, &d, RunOptions::new(Mode::Vectors(5000), 3)).unwrap();
    assert!(r.failed > 0, "the mutant passed");
    assert!(r.details[0].contains("<-- differs"), "{}", r.details[0]);
}

/// `lpgen cosim --workers K` / `--dist mpi`: K ranks, each checking the stretches between
/// restart points numbered rank mod K, together check every step of the one-rank run exactly
/// once: the same passed count for a stateful unit (posit-mac from quire states, on the build
/// of `posit_mac_posit_8_0_all_pairs_from_quire_states`), and the same failed count for the
/// dropped-quire-bit mutant (on the build of `mutation_a_dropped_quire_bit_is_caught`).
#[test]
fn shared_runs_check_every_step_once() {
    let tc = toolchain();
    let shares = |p: &lpgen_hdl::Params, d: &lpgen_hdl::Design, parts: usize| -> (u64, u64) {
        (0..parts)
            .map(|rank| {
                let mut opts = RunOptions::new(Mode::Exhaustive, 0);
                if parts > 1 {
                    opts.share = Some((rank, parts));
                }
                let r = run_design(&tc, p, d, opts).unwrap();
                assert!(r.passed > 0, "rank {rank} of {parts} checked nothing");
                (r.passed, r.failed)
            })
            .fold((0, 0), |(p, f), (rp, rf)| (p + rp, f + rf))
    };
    let p = params(Unit::PositMac, "posit:8:0", 7);
    let d = generate(&p).unwrap();
    let whole = shares(&p, &d, 1);
    assert_eq!(whole.1, 0);
    assert_eq!(shares(&p, &d, 3), whole, "posit-mac in 3 shares");
    let p = params(Unit::PositMac, "posit:8:0", 0);
    let mut d = generate(&p).unwrap();
    mutate(
        &mut d.verilog,
        "if (in_valid) quire <= quire_next;",
        "if (in_valid) quire <= quire_next & ~32'd1;",
    );
    let whole = shares(&p, &d, 1);
    assert!(whole.1 > 100, "{whole:?}");
    assert_eq!(shares(&p, &d, 2), whole, "the mutant in 2 shares");
}

#[test]
fn quant1_fix_1_1_every_column_of_up_to_3_words_posit_5_0_columns_and_two_mutants() {
    let tc = toolchain();
    let mut p = params(Unit::Quant1, "fix:1:1", 1);
    p.rows = 3;
    // Every (g, r) pair in every position: 64 + 64^2 + 64^3 columns, each word compared in
    // both passes (bit, r_out, both means).
    let r = check(&tc, &p, Mode::Exhaustive, 0);
    assert_eq!(r.passed, 2 * 64 + 4 * 4096 + 6 * 262_144);
    check(&tc, &p, Mode::Vectors(50_000), 0x0b17);
    // Ties of sum / count rounded up instead of to even: the means of ±0.5 per word differ.
    let mut d = generate(&p).unwrap();
    mutate(&mut d.verilog, "& quotient[0]", "& 1'b1");
    let m = run_design(&tc, &p, &d, RunOptions::new(Mode::Exhaustive, 0)).unwrap();
    assert!(m.failed > 1000, "{} failed", m.failed);
    assert!(m.details[0].contains("<-- differs"), "{}", m.details[0]);
    eprintln!("what a user sees of the first mismatch:\n{}", m.details[0]);
    // The restart points (a cycle of rst every 64 columns) make stretches that ranks check
    // on their own models: 2 shares check every word once, of the design and of the mutant.
    let designs = [
        (generate(&p).unwrap(), r.passed, 0),
        (d, m.passed, m.failed),
    ];
    for (design, passed, failed) in designs {
        let (mut sum_passed, mut sum_failed) = (0, 0);
        for rank in 0..2 {
            let mut opts = RunOptions::new(Mode::Exhaustive, 0);
            opts.share = Some((rank, 2));
            let s = run_design(&tc, &p, &design, opts).unwrap();
            assert!(s.passed > 0, "rank {rank} checked nothing");
            (sum_passed, sum_failed) = (sum_passed + s.passed, sum_failed + s.failed);
        }
        assert_eq!((sum_passed, sum_failed), (passed, failed));
    }
    // Posits: quire sums and the posit mean divider on random columns of up to 3 posit:5:0
    // words; a divider that drops its sticky bit (the remainder of sum / 3) is caught.
    let mut p = params(Unit::Quant1, "posit:5:0", 1);
    p.rows = 3;
    check(&tc, &p, Mode::Vectors(100_000), 0x9051);
    let mut d = generate(&p).unwrap();
    mutate(
        &mut d.verilog,
        "assign sticky = (|remainder);",
        "assign sticky = 1'b0;",
    );
    let m = run_design(&tc, &p, &d, RunOptions::new(Mode::Vectors(100_000), 0x9051)).unwrap();
    assert!(m.failed > 100, "{} failed", m.failed);
}

/// The q8 encoder on every fix:7:8 word with each of 20 scale words (zero, negative and the
/// most negative among them), the dynamic tree, the search split by three registers.
#[test]
fn q8_enc_fix_7_8_dynamic_tree_every_word() {
    let mut p = params(Unit::Q8Enc, "fix:7:8", 3);
    p.q8 = lpgen_golden::q8::Q8Type::DynamicTree;
    let r = check(&toolchain(), &p, Mode::Exhaustive, 0x98);
    assert_eq!(r.passed, 20 << 16);
}

/// The q8 decoder on every code with every posit:8:0 scale word (NaR and zero among them),
/// the mantissa type, fully pipelined.
#[test]
fn q8_dec_posit_8_0_mantissa_every_code_and_scale() {
    let mut p = params(Unit::Q8Dec, "posit:8:0", 2);
    p.q8 = lpgen_golden::q8::Q8Type::Mantissa;
    let r = check(&toolchain(), &p, Mode::Exhaustive, 0);
    assert_eq!(r.passed, 256 << 8);
}

/// The q8 decoder on f32 words: every code with the corner scales (±0, subnormals, ±max, ±∞,
/// NaN) and random pairs, the linear type, fully pipelined; a decoder that never rounds up is
/// caught.
#[test]
fn q8_dec_f32_linear_codes_and_corner_scales_and_a_truncating_mutant() {
    let tc = toolchain();
    let mut p = params(Unit::Q8Dec, "f32", 2);
    p.q8 = lpgen_golden::q8::Q8Type::Linear;
    let r = check(&tc, &p, Mode::Vectors(20_000), 0xf32);
    assert!(r.passed > 20_000, "{}", r.passed);
    let mut d = generate(&p).unwrap();
    mutate(
        &mut d.verilog,
        "assign round_up = (",
        "assign round_up = 1'b0 & (",
    );
    let m = run_design(&tc, &p, &d, RunOptions::new(Mode::Vectors(20_000), 0xf32)).unwrap();
    assert!(m.failed > 100, "{} failed", m.failed);
}

/// The conversion unit on every lns:5:6 word to lns:4:3, input registered.
#[test]
fn convert_lns_5_6_to_lns_4_3_every_word() {
    let mut p = params(Unit::Convert, "lns:5:6", 1);
    p.to = Some("lns:4:3".parse().unwrap());
    let r = check(&toolchain(), &p, Mode::Exhaustive, 0);
    assert_eq!(r.passed, 1 << 13);
}

/// A convert mutant whose NaR gives 0 is caught, and its failure shows `y` as a word of
/// `--to` (6 bits: NaR is 0x20), not of the input format.
#[test]
fn mutation_convert_nar_to_zero_is_caught_and_y_shown_in_the_output_format() {
    let tc = toolchain();
    let mut p = params(Unit::Convert, "posit:8:0", 0);
    p.to = Some("posit:6:1".parse().unwrap());
    let mut d = generate(&p).unwrap();
    mutate(
        &mut d.verilog,
        "(in_decode_nar ? NAR :",
        "(in_decode_nar ? 6'd0 :",
    );
    let r = run_design(&tc, &p, &d, RunOptions::new(Mode::Exhaustive, 0)).unwrap();
    assert_eq!(r.failed, 1, "only NaR converts wrongly");
    let detail = &r.details[0];
    assert!(detail.contains("y: expected 0x20 (NaR)"), "{detail}");
}

/// A dfix design of `unit` on `fmt` (`array --pe dfix` or `dfix-monitor`).
fn dfix(unit: Unit, fmt: &str, rows: u32, cols: u32, stages: u32) -> lpgen_hdl::Params {
    let mut p = lpgen_hdl::Params::parse(unit, fmt).unwrap().stages(stages);
    (p.rows, p.cols) = (rows, cols);
    p
}

#[test]
fn dfix_array_1x1_dfix_6_all_pairs_at_every_shift() {
    let p = dfix(Unit::Array, "dfix:6", 1, 1, 2);
    let r = check(&toolchain(), &p, Mode::Exhaustive, 0);
    // 4096 pairs at 33 shifts.
    assert_eq!(r.passed, 4096 * 33);
}

#[test]
fn dfix_array_2x3_random_tiles_and_shifts_and_a_ties_up_mutant() {
    let tc = toolchain();
    let p = dfix(Unit::Array, "dfix:10", 2, 3, 1);
    let r = check(&tc, &p, Mode::Vectors(60_000), 0xdf1c);
    assert!(r.passed > 4000, "{}", r.passed);
    // Ties at the output scale rounded up instead of to even: caught.
    let mut d = generate(&p).unwrap();
    mutate(
        &mut d.verilog,
        "| readout_sticky) | readout_floor_half[1])",
        "| readout_sticky) | 1'b1)",
    );
    let r = run_design(&tc, &p, &d, RunOptions::new(Mode::Vectors(60_000), 0xdf1c)).unwrap();
    assert!(r.failed > 10, "{} failed", r.failed);
}

#[test]
fn dfix_monitor_2x3_counts_and_saturates_and_a_wrapping_mutant() {
    let mut p = dfix(Unit::DfixMonitor, "dfix:10", 2, 3, 1);
    p.counter_bits = 6;
    let tc = toolchain();
    let r = check(&tc, &p, Mode::Vectors(30_000), 0x3011);
    assert!(r.passed > 15_000, "{}", r.passed);
    // A `seen` counter that wraps instead of saturating: caught.
    let mut d = generate(&p).unwrap();
    mutate(
        &mut d.verilog,
        "((|seen_sum[6]) ? 6'd63 : seen_sum[5:0])",
        "seen_sum[5:0]",
    );
    let r = run_design(&tc, &p, &d, RunOptions::new(Mode::Vectors(30_000), 0x3011)).unwrap();
    assert!(r.failed > 10, "{} failed", r.failed);
}

#[test]
fn dfix_lane_dfix_5_every_opcode_pair_and_shift() {
    let p = dfix(Unit::Alu, "dfix:5", 1, 1, 1);
    let r = check(&toolchain(), &p, Mode::Exhaustive, 0);
    // 8 opcodes (3 unassigned) × 1024 pairs × 21 shifts (−8..=8, ±12, ±1000).
    assert_eq!(r.passed, 8 * 1024 * 21);
}
