//! The target's versions of generated modules (`lpgen_fpga::tech`) simulated with Icarus
//! against the generated text, cycle for cycle: the ECP5 registered multiplier, through a
//! behavioural model of the MULT18X18D (`fixtures/mult18x18d_model.v`), at every operand
//! width the fix formats give it, extreme operands included.

use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

use lpgen_fpga::tech::replacement;
use lpgen_fpga::Target;
use lpgen_hdl::{generate, Params, PeKind, Unit, REGISTERED_MULTIPLIER_PREFIX};

/// The generated registered multiplier of the fix array PE for `format` at stages 6.
fn generated(format: &str) -> (String, String) {
    let mut p = Params::new(Unit::Array, format.parse().unwrap()).stages(6);
    p.pe = PeKind::Fix;
    let d = generate(&p).unwrap();
    let f = d
        .verilog
        .files
        .iter()
        .find(|f| f.name.starts_with(REGISTERED_MULTIPLIER_PREFIX))
        .expect("the fix PE at stages 6 has a registered multiplier");
    (f.name.trim_end_matches(".v").to_string(), f.text.clone())
}

/// Compiles `sources` with Icarus (`flags`) in `dir`, runs the simulation and returns what
/// it printed; removes `dir` unless KEEP_SIM is set.
fn simulate(dir: &std::path::Path, flags: &[&str], sources: &[std::path::PathBuf]) -> String {
    let o = Command::new("iverilog")
        .args(flags)
        .arg("-o")
        .arg(dir.join("sim"))
        .args(sources)
        .output()
        .expect("iverilog runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = Command::new("vvp")
        .arg("-n")
        .arg(dir.join("sim"))
        .output()
        .unwrap();
    if std::env::var_os("KEEP_SIM").is_none() {
        let _ = std::fs::remove_dir_all(dir);
    }
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Simulates the generated and the ECP5 module side by side; returns the number of cycles
/// whose products differ (after the two cycles of latency) and the cycles compared.
fn mismatches(format: &str, edit: impl Fn(String) -> String) -> (u32, u32) {
    let (name, ours) = generated(format);
    let w: u32 = name
        .trim_start_matches(REGISTERED_MULTIPLIER_PREFIX)
        .split('x')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let ecp5 = edit(replacement(Target::Ecp5_85k, &name, true).unwrap())
        .replace(&format!("module {name} ("), "module ecp5_version (");
    // Operands: random, and every pairing of the extremes (most negative, −1, 0, 1, largest).
    let tb = format!(
        "module tb;
  reg clk = 0;
  reg [{m}:0] a = 0, b = 0;
  wire [{pm}:0] p_ours, p_ecp5;
  {name} ours (.clk(clk), .a(a), .b(b), .p(p_ours));
  ecp5_version ecp5 (.clk(clk), .a(a), .b(b), .p(p_ecp5));
  reg [{m}:0] extremes [0:4];
  integer c, bad = 0, seen = 0;
  initial begin
    extremes[0] = {{1'b1, {{{m}{{1'b0}}}}}}; extremes[1] = {{{w}{{1'b1}}}}; extremes[2] = 0;
    extremes[3] = 1; extremes[4] = {{1'b0, {{{m}{{1'b1}}}}}};
    for (c = 0; c < 4000; c = c + 1) begin
      if (c < 25) begin a = extremes[c % 5]; b = extremes[c / 5]; end
      else begin a = $random; b = $random; end
      #1 clk = 1; #1 clk = 0;
      if (c >= 2) begin seen = seen + 1; if (p_ours !== p_ecp5) bad = bad + 1; end
    end
    $display(\"%0d %0d\", bad, seen);
    $finish;
  end
endmodule
",
        m = w - 1,
        pm = 2 * w - 1,
    );
    // Tests run in parallel threads of one process: a directory per simulation.
    static RUN: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "lpgen-tech-{}-{}-{}",
        std::process::id(),
        RUN.fetch_add(1, Ordering::Relaxed),
        format.replace(':', "_")
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let model = include_str!("fixtures/mult18x18d_model.v");
    for (file, text) in [
        ("tb.v", tb.as_str()),
        ("ours.v", ours.as_str()),
        ("ecp5.v", ecp5.as_str()),
        ("model.v", model),
    ] {
        std::fs::write(dir.join(file), text).unwrap();
    }
    let out = simulate(
        &dir,
        &["-g2005"],
        &["tb.v", "ours.v", "ecp5.v", "model.v"].map(|f| dir.join(f)),
    );
    let mut it = out
        .lines()
        .find(|l| l.split(' ').count() == 2)
        .expect("the testbench prints its counts")
        .split(' ')
        .map(|x| x.parse::<u32>().unwrap());
    (it.next().unwrap(), it.next().unwrap())
}

#[test]
fn the_ecp5_multiplier_equals_the_generated_one_at_every_width() {
    // Operand widths 16, 8, 5, 18 (the widest one block takes) and 2.
    for format in ["fix:7:8", "fix:3:4", "fix:2:2", "fix:9:8", "fix:0:1"] {
        let (bad, seen) = mismatches(format, |t| t);
        assert_eq!(seen, 3998, "{format}");
        assert_eq!(bad, 0, "{format}: {bad} of {seen} products differ");
    }
}

#[test]
fn a_wrong_latency_or_an_unsigned_operand_is_caught() {
    let no_output_register =
        |t: String| t.replace(".REG_OUTPUT_CLK(\"CLK0\")", ".REG_OUTPUT_CLK(\"NONE\")");
    let unsigned_a = |t: String| t.replace(".SIGNEDA(1'b1)", ".SIGNEDA(1'b0)");
    for edit in [no_output_register, unsigned_a] {
        let (bad, _) = mismatches("fix:7:8", edit);
        assert!(bad > 100, "only {bad} mismatches");
    }
}

/// Yosys's own simulation models of the iCE40 cells (next to the `yosys` on PATH).
fn ice40_cells_sim() -> std::path::PathBuf {
    let yosys = lpgen_fpga::find_tool("yosys").expect("yosys on PATH");
    let share = yosys
        .parent()
        .unwrap()
        .join("../share/yosys/ice40/cells_sim.v");
    assert!(share.exists(), "no {}", share.display());
    share
}

#[test]
fn the_up5k_netlists_of_stages_7_and_9_fix_pes_equal_their_rtl() {
    // Stages 9 has three product registers in a row, two of them outside the multiplier.
    for stages in [7, 9] {
        up5k_netlist_equals_rtl(stages);
    }
}

/// The PE as the UP5K flow gives it to Yosys (the registered multiplier replaced),
/// synthesized with DSPs, against the generated RTL: random dot products, bubbles and
/// saturating results, cycle for cycle, through Yosys's models of the iCE40 cells.
fn up5k_netlist_equals_rtl(stages: u32) {
    let mut p = Params::new(Unit::Array, "fix:7:8".parse().unwrap()).stages(stages);
    p.pe = PeKind::Fix;
    let d = generate(&p).unwrap();
    let file = |prefix: &str| {
        d.verilog
            .files
            .iter()
            .find(|f| f.name.starts_with(prefix))
            .unwrap()
    };
    let (pe, mul) = (file("lpgen_pe_fix_"), file(REGISTERED_MULTIPLIER_PREFIX));
    let pe_name = pe.name.trim_end_matches(".v");
    let mul_name = mul.name.trim_end_matches(".v");
    let ice40_mul = replacement(Target::Ice40Up5k, mul_name, true).unwrap();
    static RUN: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "lpgen-tech-up5k-{}-{}",
        std::process::id(),
        RUN.fetch_add(1, Ordering::Relaxed)
    ));
    let rtl = dir.join("rtl");
    std::fs::create_dir_all(&rtl).unwrap();
    std::fs::write(rtl.join("pe.v"), &pe.text).unwrap();
    std::fs::write(rtl.join("mul.v"), &mul.text).unwrap();
    std::fs::write(dir.join("mul_ice40.v"), &ice40_mul).unwrap();
    std::fs::write(dir.join("pe.v"), &pe.text).unwrap();
    let script = format!(
        "read_verilog mul_ice40.v pe.v; synth_ice40 -dsp -top {pe_name}; rename {pe_name} pe_netlist; write_verilog -noattr netlist.v"
    );
    let o = Command::new("yosys")
        .args(["-q", "-l", "yosys.log", "-p", &script])
        .current_dir(&dir)
        .output()
        .expect("yosys runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let log = std::fs::read_to_string(dir.join("yosys.log")).unwrap();
    assert!(!log.contains("Driver-driver conflict"), "{log}");
    let netlist = std::fs::read_to_string(dir.join("netlist.v")).unwrap();
    assert!(
        netlist.contains("SB_MAC16"),
        "the multiply is in a DSP block"
    );
    let tb = format!(
        "`timescale 1ns/1ps
module tb;
  reg clk = 0, rst = 1, valid = 0, clear = 0, last = 0;
  reg [15:0] a = 0, b = 0;
  wire [15:0] r0, r1, ao0, ao1, bo0, bo1;
  wire v0, v1, c0, c1, l0, l1;
  {pe_name} rtl (.clk(clk), .rst(rst), .a(a), .b(b), .valid(valid), .clear(clear), .last(last),
    .a_out(ao0), .b_out(bo0), .valid_out(v0), .clear_out(c0), .last_out(l0), .result(r0));
  pe_netlist syn (.clk(clk), .rst(rst), .a(a), .b(b), .valid(valid), .clear(clear), .last(last),
    .a_out(ao1), .b_out(bo1), .valid_out(v1), .clear_out(c1), .last_out(l1), .result(r1));
  integer i, bad = 0, changes = 0, k = 0;
  reg [15:0] prev = 0;
  initial begin
    for (i = 0; i < 8000; i = i + 1) begin
      if (i == 3) rst = 0;
      a = (i % 7 == 0) ? 16'h7fff : $random;
      b = (i % 11 == 0) ? 16'h8000 : $random;
      valid = ($random % 5) != 0;
      clear = (k == 0);
      k = (k + 1) % (1 + (i / 997) % 12);
      last = (k == 0);
      #1 clk = 1; #1 clk = 0;
      if (i > 3 && (r0 !== r1 || {{ao0, bo0, v0, c0, l0}} !== {{ao1, bo1, v1, c1, l1}})) bad = bad + 1;
      if (r0 !== prev) begin changes = changes + 1; prev = r0; end
    end
    $display(\"%0d %0d\", bad, changes);
    $finish;
  end
endmodule
"
    );
    std::fs::write(dir.join("tb.v"), tb).unwrap();
    let out = simulate(
        &dir,
        &["-g2012", "-DNO_ICE40_DEFAULT_ASSIGNMENTS"],
        &[
            dir.join("tb.v"),
            rtl.join("pe.v"),
            rtl.join("mul.v"),
            dir.join("netlist.v"),
            ice40_cells_sim(),
        ],
    );
    let counts: Vec<u32> = out
        .lines()
        .find(|l| l.split(' ').count() == 2)
        .unwrap_or_else(|| panic!("no counts in {out}"))
        .split(' ')
        .map(|x| x.parse().unwrap())
        .collect();
    assert!(
        counts[1] > 1000,
        "stages {stages}: only {} results",
        counts[1]
    );
    assert_eq!(
        counts[0], 0,
        "stages {stages}: {} of the cycles differ",
        counts[0]
    );
}
