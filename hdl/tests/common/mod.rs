//! Simulates a generated design with Icarus Verilog on a list of input vectors, one vector
//! per clock, and returns the outputs of every cycle in which `out_valid` is high (for a
//! combinational design: every vector). A quick functional check for generator tests; the
//! bit-exact proof against the golden model is the co-simulation suite's job.

#![allow(dead_code)]

use std::fmt::Write;
use std::process::Command;

use lpgen_hdl::{Design, Manifest};

/// The tests' deterministic generator: SplitMix64, `lpgen_golden::rng` (one copy for every
/// crate). Each test file adds the operand generators it needs as functions of its own.
pub use lpgen_golden::rng::Rng;

/// Runs `design` with `vectors` (values for the named inputs, in order) and returns, for each
/// valid output cycle, the values of the named outputs. `in_valid` is driven high for every
/// vector; `rst` is held for two cycles first. Extra cycles flush the pipeline.
pub fn simulate(
    design: &Design,
    inputs: &[&str],
    outputs: &[&str],
    vectors: &[Vec<u64>],
) -> Vec<Vec<u64>> {
    let dir = std::env::temp_dir().join(format!("lpgen-sim-{}-{}", std::process::id(), design.top));
    std::fs::create_dir_all(&dir).unwrap();
    let widths = port_widths(&design.manifest);
    let width = |n: &str| -> u32 {
        widths
            .iter()
            .find(|(p, _)| p == n)
            .unwrap_or_else(|| panic!("no port {n} in {}", design.top))
            .1
    };
    let mut tb = String::new();
    let _ = writeln!(tb, "`timescale 1ns/1ps\nmodule tb;");
    let _ = writeln!(tb, "  reg clk = 0, rst = 1, in_valid = 0;");
    for n in inputs {
        let _ = writeln!(tb, "  reg [{}:0] {n} = 0;", width(n) - 1);
    }
    for n in outputs {
        let _ = writeln!(tb, "  wire [{}:0] {n};", width(n) - 1);
    }
    let _ = writeln!(tb, "  wire out_valid;");
    let mut conns = vec![
        ".clk(clk)".to_string(),
        ".rst(rst)".into(),
        ".in_valid(in_valid)".into(),
        ".out_valid(out_valid)".into(),
    ];
    for n in inputs.iter().chain(outputs) {
        conns.push(format!(".{n}({n})"));
    }
    // Unconnected outputs are fine for Icarus.
    let _ = writeln!(tb, "  {} dut ({});", design.top, conns.join(", "));
    let _ = writeln!(tb, "  integer f;");
    let fmt: Vec<&str> = outputs.iter().map(|_| "%h").collect();
    let vals: Vec<&str> = outputs.to_vec();
    let _ = writeln!(
        tb,
        "  always @(posedge clk) if (!rst && out_valid) $fdisplay(f, \"{}\", {});",
        fmt.join(" "),
        vals.join(", ")
    );
    let _ = writeln!(tb, "  always #5 clk = ~clk;");
    let n = vectors.len().max(1);
    for (k, name) in inputs.iter().enumerate() {
        let _ = writeln!(
            tb,
            "  reg [{}:0] mem_{name} [0:{}];",
            width(name) - 1,
            n - 1
        );
        let hex: String = vectors.iter().map(|v| format!("{:x}\n", v[k])).collect();
        std::fs::write(dir.join(format!("{name}.hex")), hex).unwrap();
    }
    let _ = writeln!(tb, "  integer i;");
    let _ = writeln!(tb, "  initial begin");
    for name in inputs {
        let _ = writeln!(
            tb,
            "    $readmemh(\"{}\", mem_{name});",
            dir.join(format!("{name}.hex")).display()
        );
    }
    let _ = writeln!(
        tb,
        "    f = $fopen(\"{}\", \"w\");",
        dir.join("out.txt").display()
    );
    let _ = writeln!(tb, "    @(negedge clk); @(negedge clk); rst = 0;");
    let assigns: String = inputs
        .iter()
        .map(|n| format!(" {n} = mem_{n}[i];"))
        .collect();
    let _ = writeln!(
        tb,
        "    for (i = 0; i < {}; i = i + 1) begin in_valid = 1;{assigns} @(negedge clk); end",
        vectors.len()
    );
    let _ = writeln!(tb, "    in_valid = 0; repeat (64) @(negedge clk);");
    let _ = writeln!(tb, "    $fclose(f); $finish;\n  end\nendmodule");
    std::fs::write(dir.join("tb.v"), tb).unwrap();
    std::fs::write(dir.join("dut.v"), design.verilog.text()).unwrap();
    let out = Command::new("iverilog")
        .args(["-g2005", "-o"])
        .arg(dir.join("sim"))
        .arg(dir.join("tb.v"))
        .arg(dir.join("dut.v"))
        .output()
        .expect("iverilog (install with scripts/setup.sh)");
    assert!(
        out.status.success(),
        "iverilog: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = Command::new("vvp")
        .arg(dir.join("sim"))
        .output()
        .expect("vvp");
    assert!(
        out.status.success(),
        "vvp: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(dir.join("out.txt")).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    text.lines()
        .map(|l| {
            l.split_whitespace()
                .map(|h| {
                    u64::from_str_radix(h, 16).unwrap_or_else(|_| panic!("x/z in output: {l}"))
                })
                .collect()
        })
        .collect()
}

/// (name, width) of every port, read from the manifest.
pub fn port_widths(manifest: &str) -> Vec<(String, u32)> {
    Manifest::from_json(manifest)
        .unwrap()
        .ports
        .into_iter()
        .map(|p| (p.name, p.width))
        .collect()
}
