//! `fix-mac` and the systolic `array` (fix PE) simulated with Icarus against the golden model:
//! the MAC after every step of random op sequences, the array on random tiles streamed in two
//! chunks with bubbles, shapes smaller than the array, and back-to-back tiles.

mod common;

use std::fmt::Write;
use std::process::Command;

use lpgen_golden::{Calc, Family, FixAcc, FixFormat, Format, SumMode};
use lpgen_hdl::units::array_protocol::{clears, Protocol};
use lpgen_hdl::{generate, Design, Manifest, Params, PeKind, Unit};

use common::Rng;

/// The operand generators of these tests, on the shared generator.
trait TileWords {
    fn word(&mut self, c: &Calc, small: bool) -> u64;
}

impl TileWords for Rng {
    /// A word: uniform bits with some extreme patterns, or `small` (|x| < 2, so sums of a
    /// few products stay in range and exercise the rounding) with rare extremes. The patterns
    /// 01…1, 10…0, 0…01, 1…1 are fix max/min/±ulp, posit maxpos/NaR/±minpos, LNS +max/−1/….
    fn word(&mut self, c: &Calc, small: bool) -> u64 {
        let w = c.format().width();
        let mask = (1u64 << w) - 1;
        let pick = if small {
            self.below(128)
        } else {
            self.below(16)
        };
        match pick {
            0 => (1 << (w - 1)) - 1,
            1 => 1 << (w - 1),
            2 => c.zero(),
            3 => 1,
            4 => mask,
            _ if small => c.from_f64(self.below(1 << 20) as f64 / (1 << 18) as f64 - 2.0),
            _ => self.next_u64() & mask,
        }
    }
}

/// acc −= a·b on the golden accumulator, exactly: a·(−b), and for b = min, a·max + a·(1 ulp).
fn sub_product(f: FixFormat, acc: &mut FixAcc, a: u64, b: u64) {
    if f.to_int(b) == f.min_int() {
        acc.add_product(a, f.from_int(f.max_int() as i128));
        acc.add_product(a, f.from_int(1));
    } else {
        acc.add_product(a, f.neg(b));
    }
}

/// Whether the golden read-out saturates (the rounded value lies outside the word).
fn saturates(f: FixFormat, acc: &FixAcc) -> bool {
    let (x, sh) = (acc.raw(), f.frac_bits);
    let q = if sh == 0 {
        x
    } else {
        let q = x >> sh;
        let rem = x - (q << sh);
        let half = 1i128 << (sh - 1);
        q + i128::from(rem > half || (rem == half && q & 1 == 1))
    };
    q > f.max_int() as i128 || q < f.min_int() as i128
}

/// Runs `ops` = (a, b, op) through fix-mac and checks y and overflow after every step.
fn check_mac(fmt: &str, stages: u32, ops: &[Vec<u64>]) {
    let format: Format = fmt.parse().unwrap();
    let Format::Fix(f) = format else {
        panic!("{fmt} is not a fix format")
    };
    let d = generate(&Params::new(Unit::FixMac, format).stages(stages)).unwrap();
    assert_eq!(latency(&d), stages, "{fmt} stages {stages}");
    let out = common::simulate(&d, &["a", "b", "op"], &["y", "overflow"], ops);
    assert_eq!(out.len(), ops.len(), "{fmt} stages {stages}");
    let mut acc = FixAcc::new(f);
    for (i, (v, o)) in ops.iter().zip(&out).enumerate() {
        let (a, b) = (v[0], v[1]);
        match v[2] {
            0 => acc.add_product(a, b),
            1 => sub_product(f, &mut acc, a, b),
            2 => {
                acc.clear();
                acc.add_product(a, b)
            }
            _ => acc.clear(),
        }
        let want = [acc.to_word(), saturates(f, &acc) as u64];
        assert_eq!(
            o[..],
            want,
            "{fmt} stages {stages} step {i}: a={a:#x} b={b:#x} op={} acc={}",
            v[2],
            acc.raw()
        );
    }
}

fn latency(d: &Design) -> u32 {
    Manifest::from_json(&d.manifest).unwrap().latency
}

fn random_ops(f: FixFormat, rng: &mut Rng, n: usize) -> Vec<Vec<u64>> {
    let c = Format::Fix(f).calc();
    (0..n)
        .map(|i| {
            let small = (i / 64) % 2 == 0;
            let op = match rng.below(20) {
                0 => 2,
                1 => 3,
                2..=7 => 1,
                _ => 0,
            };
            vec![rng.word(&c, small), rng.word(&c, small), op]
        })
        .collect()
}

#[test]
fn fix_mac_matches_the_golden_accumulator_after_every_step() {
    let mut rng = Rng(0x1f2e_3d4c);
    for fmt in ["fix:7:8", "fix:3:4", "fix:15:16", "fix:4:0", "fix:0:1"] {
        let f = fmt.parse::<Format>().unwrap();
        let Format::Fix(f) = f else { unreachable!() };
        let ops = random_ops(f, &mut rng, 3000);
        for stages in [0, 1, 2] {
            check_mac(fmt, stages, &ops);
        }
    }
}

#[test]
fn fix_mac_accumulator_wraps_like_the_golden_register() {
    // 2^17 products min·min reach 2^(acc_bits − 1) and wrap; then subtract max·min to wrap back.
    // (A format of its own: the harness's scratch directory is named by the design, and
    // tests run in parallel.)
    let f = FixFormat::new(2, 3).unwrap();
    let (min, max) = (
        f.from_int(f.min_int() as i128),
        f.from_int(f.max_int() as i128),
    );
    let mut ops = vec![vec![min, min, 2]];
    ops.extend((0..(1 << 17) + 5).map(|_| vec![min, min, 0]));
    ops.extend((0..40).map(|i| vec![max, min, 1 - (i % 2)]));
    ops.extend((0..(1 << 16)).map(|_| vec![max, min, 1]));
    check_mac("fix:2:3", 0, &ops);
    check_mac("fix:2:3", 2, &ops[..4096]);
}

/// One cycle of the array's input stream.
#[derive(Clone)]
struct Step {
    valid: bool,
    clear: bool,
    last: bool,
    a: Vec<u64>,
    b: Vec<u64>,
}

/// Bits (LSB first) as hex, most significant digit first.
fn hex(bits: &[bool]) -> String {
    let mut s = String::new();
    for chunk in bits.chunks(4).rev() {
        let d = chunk
            .iter()
            .enumerate()
            .map(|(i, &b)| (b as u32) << i)
            .sum();
        s.push(char::from_digit(d, 16).unwrap());
    }
    s
}

fn push_word(bits: &mut Vec<bool>, v: u64, w: u32) {
    bits.extend((0..w).map(|i| (v >> i) & 1 == 1));
}

/// Streams `steps` into an array design (one per clock after reset, then idle cycles) and
/// returns (cycle, c_out words) for every cycle with `out_valid`, cycle 0 being the first step.
fn stream(d: &Design, rows: u32, cols: u32, w: u32, steps: &[Step]) -> Vec<(usize, Vec<u64>)> {
    let dir = std::env::temp_dir().join(format!("lpgen-arr-{}-{}", std::process::id(), d.top));
    std::fs::create_dir_all(&dir).unwrap();
    let (aw, bw, cw) = (rows * w, cols * w, rows * cols * w);
    let sw = aw + bw + 3;
    let mut mem = String::new();
    for s in steps {
        let mut bits = vec![];
        for &x in &s.a {
            push_word(&mut bits, x, w);
        }
        for &x in &s.b {
            push_word(&mut bits, x, w);
        }
        bits.extend([s.last, s.clear, s.valid]);
        let _ = writeln!(mem, "{}", hex(&bits));
    }
    std::fs::write(dir.join("steps.hex"), mem).unwrap();
    let out_file = dir.join("out.txt");
    let tail = latency(d) as usize + 4;
    let tb = format!(
        "`timescale 1ns/1ps
module tb;
  reg clk = 0, rst = 1, in_valid = 0, clear = 0, last = 0;
  reg [{a1}:0] a_in = 0;
  reg [{b1}:0] b_in = 0;
  wire [{c1}:0] c_out;
  wire out_valid;
  reg [{s1}:0] mem [0:{n1}];
  integer f, i, cyc;
  {top} dut (.clk(clk), .rst(rst), .in_valid(in_valid), .a_in(a_in), .b_in(b_in),
    .clear(clear), .last(last), .c_out(c_out), .out_valid(out_valid));
  always #5 clk = ~clk;
  always @(posedge clk) if (!rst && out_valid) $fdisplay(f, \"%0d %h\", cyc, c_out);
  initial begin
    $readmemh(\"{mem}\", mem);
    f = $fopen(\"{out}\", \"w\");
    cyc = -1;
    @(negedge clk); @(negedge clk); rst = 0;
    for (i = 0; i < {n} + {tail}; i = i + 1) begin
      cyc = i;
      if (i < {n}) {{in_valid, clear, last, b_in, a_in}} = mem[i];
      else begin in_valid = 0; clear = 0; last = 0; end
      @(negedge clk);
    end
    $fclose(f); $finish;
  end
endmodule
",
        a1 = aw - 1,
        b1 = bw - 1,
        c1 = cw - 1,
        s1 = sw - 1,
        n1 = steps.len().max(1) - 1,
        n = steps.len(),
        top = d.top,
        mem = dir.join("steps.hex").display(),
        out = out_file.display(),
    );
    std::fs::write(dir.join("tb.v"), tb).unwrap();
    std::fs::write(dir.join("dut.v"), d.verilog.text()).unwrap();
    let run = |cmd: &mut Command, what: &str| {
        let o = cmd.output().unwrap_or_else(|e| panic!("{what}: {e}"));
        assert!(
            o.status.success(),
            "{what}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    };
    run(
        Command::new("iverilog")
            .args(["-g2005", "-o"])
            .arg(dir.join("sim"))
            .arg(dir.join("tb.v"))
            .arg(dir.join("dut.v")),
        "iverilog",
    );
    run(Command::new("vvp").arg(dir.join("sim")), "vvp");
    let text = std::fs::read_to_string(&out_file).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    text.lines()
        .map(|l| {
            let (cyc, h) = l.split_once(' ').unwrap();
            let bits: Vec<bool> = h
                .chars()
                .rev()
                .flat_map(|c| {
                    let d = c
                        .to_digit(16)
                        .unwrap_or_else(|| panic!("x/z in c_out: {l}"));
                    (0..4).map(move |i| (d >> i) & 1 == 1)
                })
                .collect();
            let words = (0..(rows * cols) as usize)
                .map(|i| {
                    (0..w as usize)
                        .map(|j| (bits[i * w as usize + j] as u64) << j)
                        .sum()
                })
                .collect();
            (cyc.parse().unwrap(), words)
        })
        .collect()
}

/// Builds a random stream of tiles for an R×C array and the outputs it must produce:
/// (cycle, words) for each `last` step, cycle = that step's cycle + latency.
struct Plan {
    steps: Vec<Step>,
    want: Vec<(usize, Vec<u64>)>,
    last_cycle: Option<usize>,
}

impl Plan {
    fn bubble(&mut self, rng: &mut Rng, c: &Calc, rows: u32, cols: u32) {
        // Garbage operands and flags that must be ignored without in_valid.
        let mask = (1u64 << c.format().width()) - 1;
        self.steps.push(Step {
            valid: false,
            clear: rng.below(2) == 1,
            last: rng.below(2) == 1,
            a: (0..rows).map(|_| rng.next_u64() & mask).collect(),
            b: (0..cols).map(|_| rng.next_u64() & mask).collect(),
        });
    }
}

/// Ten tiles: every other one smaller than the array (zero words outside it), K up to 20 in
/// two chunks with bubbles between them, sometimes a snapshot (`last`) after the first
/// chunk, tiles back to back or with gaps; the expected words are `c.dot(mode, …)`.
fn random_plan(
    rng: &mut Rng,
    c: &Calc,
    mode: SumMode,
    (rows, cols): (u32, u32),
    lat: usize,
) -> Plan {
    let mut plan = Plan {
        steps: vec![],
        want: vec![],
        last_cycle: None,
    };
    let spacing = Protocol::new(rows as usize, cols as usize, 1).last_spacing() as usize;
    for tile in 0..10 {
        // Every other tile uses the full array; the others a smaller shape.
        let (m, n) = if tile % 2 == 0 {
            (rows, cols)
        } else {
            (
                1 + rng.below(rows as u64) as u32,
                1 + rng.below(cols as u64) as u32,
            )
        };
        let k = 1 + rng.below(20) as usize;
        let small = rng.below(2) == 0;
        // Operands padded with zero words outside the m×K and K×n tile.
        let a: Vec<Vec<u64>> = (0..rows)
            .map(|r| {
                (0..k)
                    .map(|_| if r < m { rng.word(c, small) } else { c.zero() })
                    .collect()
            })
            .collect();
        let b: Vec<Vec<u64>> = (0..cols)
            .map(|j| {
                (0..k)
                    .map(|_| if j < n { rng.word(c, small) } else { c.zero() })
                    .collect()
            })
            .collect();
        let split = if k >= 2 {
            1 + rng.below(k as u64 - 1) as usize
        } else {
            k
        };
        let snapshot = rng.below(3) == 0;
        for kk in 0..k {
            if kk == split {
                for _ in 0..rng.below(4) {
                    plan.bubble(rng, c, rows, cols);
                }
            }
            let last = kk + 1 == k || (snapshot && kk + 1 == split);
            if last {
                while let Some(prev) = plan.last_cycle {
                    if plan.steps.len() - prev >= spacing {
                        break;
                    }
                    plan.bubble(rng, c, rows, cols);
                }
                let want = (0..rows as usize)
                    .flat_map(|r| (0..cols as usize).map(move |j| (r, j)))
                    .map(|(r, j)| c.dot(mode, &a[r][..=kk], &b[j][..=kk]).unwrap())
                    .collect();
                plan.want.push((plan.steps.len() + lat, want));
                plan.last_cycle = Some(plan.steps.len());
            }
            plan.steps.push(Step {
                valid: true,
                clear: clears(kk),
                last,
                a: (0..rows as usize).map(|r| a[r][kk]).collect(),
                b: (0..cols as usize).map(|j| b[j][kk]).collect(),
            });
        }
        // Sometimes a gap between tiles, often none.
        for _ in 0..rng.below(3).saturating_sub(1) {
            plan.bubble(rng, c, rows, cols);
        }
    }
    plan
}

fn array_params(fmt: &str, rows: u32, cols: u32, stages: u32) -> Params {
    let mut p = Params::new(Unit::Array, fmt.parse().unwrap()).stages(stages);
    p.rows = rows;
    p.cols = cols;
    p.pe = PeKind::Fix;
    p
}

/// Streams a random plan through the array `p` and compares every result (cycle and words).
fn check_array(rng: &mut Rng, p: &Params, mode: SumMode) {
    let d = generate(p).unwrap();
    let lat = latency(&d) as usize;
    assert_eq!(lat as u32, p.rows + p.cols + p.stages, "{}", d.top);
    let c = p.format.calc();
    let plan = random_plan(rng, &c, mode, (p.rows, p.cols), lat);
    let got = stream(&d, p.rows, p.cols, p.format.width(), &plan.steps);
    assert_eq!(got.len(), plan.want.len(), "{}: number of results", d.top);
    for (i, (g, w)) in got.iter().zip(&plan.want).enumerate() {
        assert_eq!(g, w, "{}: result {i} (cycle, row-major words)", d.top);
    }
}

#[test]
fn fix_arrays_match_golden_dot_products() {
    // Calc::dot in quire mode is FixFormat::dot_acc for fix formats.
    let mut rng = Rng(0xa77a_5eed);
    for (fmt, rows, cols) in [
        ("fix:7:8", 1, 1),
        ("fix:7:8", 2, 3),
        ("fix:3:4", 2, 3),
        ("fix:7:8", 4, 4),
        // No fraction bits (no rounding) and one.
        ("fix:4:0", 2, 2),
        ("fix:0:1", 1, 2),
    ] {
        for stages in 0..=9 {
            check_array(
                &mut rng,
                &array_params(fmt, rows, cols, stages),
                SumMode::Quire,
            );
        }
    }
}

#[test]
fn lns_and_posit_pes_in_multi_pe_arrays_match_golden_dot_products() {
    let mut rng = Rng(0x5eed_a77a);
    for (fmt, pe, mode) in [
        ("lns:5:6", PeKind::LnsKahan, SumMode::Kahan),
        ("lns:5:6", PeKind::LnsPlain, SumMode::Naive),
        ("posit:16", PeKind::PositQuire, SumMode::Quire),
        ("posit:8:0", PeKind::PositQuire, SumMode::Quire),
    ] {
        // The posit-quire PE also takes stages 3..=8 (registers before and after its quire).
        let deep: &[(u32, u32, u32)] = match pe {
            PeKind::PositQuire => &[(1, 2, 3), (2, 2, 8)],
            _ => &[],
        };
        for &(rows, cols, stages) in [(2, 3, 0), (3, 2, 1), (2, 2, 2)].iter().chain(deep) {
            let mut p = array_params(fmt, rows, cols, stages);
            p.pe = pe;
            check_array(&mut rng, &p, mode);
        }
    }
}

#[test]
fn array_refuses_mismatched_pe_kinds_and_too_many_stages_in_one_line() {
    let mut p = array_params("lns:5:6", 2, 2, 0);
    let e = generate(&p).unwrap_err();
    assert!(
        e.0.contains("does not work on lns:5:6") && !e.0.contains('\n'),
        "{e}"
    );
    p.format = "f32".parse().unwrap();
    assert!(generate(&p).is_err());
    let e = generate(&array_params("fix:7:8", 2, 2, 10)).unwrap_err();
    assert!(e.0.contains("at most 9 pipeline stages"), "{e}");
    let mut dfix = Params::parse(Unit::Array, "dfix:10").unwrap().stages(3);
    dfix.pe = PeKind::Dfix;
    let e = generate(&dfix).unwrap_err();
    assert!(e.0.contains("at most 2 pipeline stages"), "{e}");
}
