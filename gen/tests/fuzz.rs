//! A seeded fuzz test of the command line (issue 15; SPEC.md §9): argument vectors for
//! `lpgen golden` and `lpgen rtl` mixing valid and invalid pieces (formats, operations,
//! operands up to 100,000 digits, units, sizes, PE kinds, output paths that cannot be
//! directories, standard input for `--stdin`). Every case must exit with status 0 or 2 (never
//! 101, an abort or a signal); a refusal must be exactly one line on stderr; no output may
//! say "panicked"; and the case must end within `DEADLINE`.
//!
//! How it stays fast. `lpgen` is a binary crate: its argument parser cannot be called in
//! process from a test, so every case is a process, and about 3 ms is what one costs (exec,
//! parse, compute, and for rtl the atomic, synced writes of two files). The cases run on
//! 2 to 4 threads at a time, each process killed at `DEADLINE` (the case then fails, named)
//! and capped at `MEMORY_KIB` of address space. Generated rtl designs stay small: the valid
//! sizes go up to 8 and the large values are beyond the limits (65 and up: refused before
//! any work), with at most one side of an array at 64. So the 10,000 cases CI runs take
//! 20 to 35 s on the shared two-core machine (4 at a time). `LPGEN_FUZZ_CASES` scales the run
//! (scripts/fuzz-cli.sh runs 100,000 for each of several seeds), `LPGEN_FUZZ_SEED` picks
//! another seed, `LPGEN_FUZZ_CASE=N` runs case N alone and prints its argv, and
//! `LPGEN_FUZZ_BIN` fuzzes another build. A failure shows the seed, the case number, the argv
//! (`{:?}`, a huge argument cut in the middle), its standard input and what went wrong.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStringExt;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The contract: a refusal within a few seconds; a case still running then is killed.
const DEADLINE: Duration = Duration::from_secs(10);
/// Cases in CI unless `LPGEN_FUZZ_CASES` says otherwise.
const DEFAULT_CASES: usize = 10_000;
const DEFAULT_SEED: u64 = 0x15_f022;
/// The memory a case may map (KiB): the largest valid design generated here needs ~0.6 GiB.
const MEMORY_KIB: u64 = 3 << 20;
/// The longest argument Linux passes (`MAX_ARG_STRLEN`, with its NUL): a dot pair of two
/// 100,000-digit operands is longer.
const MAX_ARG: usize = 128 << 10;
/// The run stops after this many failures (each may have cost a `DEADLINE`), unless
/// `LPGEN_FUZZ_MAX_FAILURES` says otherwise.
const MAX_FAILURES: usize = 24;

/// SplitMix64, with the case's leaning: `sane` is the percent chance that a piece is drawn
/// from the valid ones (per case, so that some cases are all but valid and reach deep into
/// parsing and generation, and others are mostly junk).
struct Rng {
    state: lpgen_golden::rng::Rng,
    sane: usize,
}

impl Rng {
    fn next(&mut self) -> u64 {
        self.state.next_u64()
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// True with probability `percent` / 100.
    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    /// Whether the next piece is a valid one.
    fn sane(&mut self) -> bool {
        let p = self.sane;
        self.chance(p)
    }

    fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len())]
    }

    fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi - lo + 1)
    }
}

/// Junk that is not made of the other pieces: unicode, controls, quotes, flags.
const JUNK: [&str; 24] = [
    "",
    " ",
    "x",
    "-",
    "--",
    "-1",
    "--bogus",
    "é",
    "∞",
    "１２",
    "😀",
    "\u{202e}lns",
    "a\nb",
    "\n",
    "\r",
    "\t",
    "\u{1b}[31m",
    "'",
    "\"",
    "\\",
    "%s%n",
    "${HOME}",
    "0x",
    "NaR",
];

/// Numbers a format's field may be.
const NUMBERS: [&str; 26] = [
    "0",
    "1",
    "2",
    "3",
    "4",
    "5",
    "6",
    "7",
    "8",
    "9",
    "12",
    "16",
    "31",
    "32",
    "33",
    "64",
    "1000",
    "1000000",
    "4294967295",
    "4294967296",
    "18446744073709551616",
    "-1",
    "+3",
    "03",
    " 4",
    "abc",
];

/// Values of --stages, --rows, --cols, --lanes besides the small ones: the limit's edges
/// and beyond, and what is not a number. (No large value within the limits: a 64 × 64 array
/// of a wide format takes minutes and gigabytes to generate, legitimately.)
const SIZES: [&str; 20] = [
    "0",
    "1",
    "2",
    "64",
    "65",
    "100",
    "1000",
    "1000000",
    "4294967295",
    "4294967296",
    "18446744073709551616",
    "-1",
    "+3",
    "03",
    " 4",
    "4 ",
    "abc",
    "",
    "1e3",
    "0x10",
];

fn junk(r: &mut Rng) -> OsString {
    match r.below(10) {
        // Bytes that are not UTF-8.
        0 => OsString::from_vec(vec![b'l', b'n', 0xff, b's', 0xc3]),
        1 => {
            let n = r.range(1, 12);
            let s: String = (0..n)
                .map(|_| char::from_u32(r.range(1, 0x2fff) as u32).unwrap_or('?'))
                .collect();
            s.into()
        }
        _ => r.pick(&JUNK).into(),
    }
}

/// A string of `lo..=hi` digits (a huge number).
fn digits(r: &mut Rng, lo: usize, hi: usize) -> String {
    let n = r.range(lo, hi);
    let first = (b'1' + r.below(9) as u8) as char;
    let rest = (1..n).map(|i| (b'0' + ((i * 7 + n) % 10) as u8) as char);
    std::iter::once(first).chain(rest).collect()
}

#[derive(Clone, Copy, PartialEq)]
enum Family {
    Lns,
    Posit,
    Fix,
    F32,
    /// dfix:W words: `lpgen rtl` only (array --pe dfix, vector, alu, dfix-monitor).
    Dfix,
    /// float:E:M words and their names: `lpgen rtl` only (float-add, float-mul, float-fma,
    /// alu, vector, convert, array --pe float).
    Float,
    /// mx:ELEM[:bK] blocks: `lpgen rtl` only (mx-dot, mx-enc).
    Mx,
}

/// A valid format of `family`; `small` keeps it cheap to generate as an array.
fn valid_format(r: &mut Rng, family: Family, small: bool) -> String {
    let n = |r: &mut Rng, lo, hi, small_hi| r.range(lo, if small { small_hi } else { hi });
    match family {
        Family::Lns => format!("lns:{}:{}", n(r, 1, 9, 5), n(r, 1, 10, 6)),
        Family::Posit => {
            let bits = n(r, 3, 32, 12);
            match r.below(3) {
                0 => format!("posit:{bits}"),
                1 => format!("posit:{bits}:{}", n(r, 0, 3, 2)),
                _ => format!("posit:{bits}:{}:u", n(r, 0, 3, 2)),
            }
        }
        Family::Fix => {
            let i = n(r, 0, 16, 6);
            format!("fix:{i}:{}", n(r, usize::from(i == 0), 15, 8))
        }
        Family::F32 => "f32".into(),
        Family::Dfix => format!("dfix:{}", n(r, 2, 32, 12)),
        Family::Float => {
            let base = match r.below(3) {
                0 => r.pick(&["bf16", "f16", "fp8:e4m3", "fp8:e5m2"]).to_string(),
                _ => format!("float:{}:{}", n(r, 2, 10, 5), n(r, 1, 52, 10)),
            };
            let suffix = r.pick(&["", ":sat", ":ftz", ":sat:ftz"]);
            format!("{base}{suffix}")
        }
        Family::Mx => {
            let elem = r.pick(&[
                "fp8:e4m3", "fp8:e5m2", "fp6:e3m2", "fp6:e2m3", "fp4:e2m1", "int8",
            ]);
            match r.below(2) {
                0 => format!("mx:{elem}"),
                _ => format!("mx:{elem}:b{}", n(r, 1, 1024, 8)),
            }
        }
    }
}

/// Number formats: valid ones, impossible widths, malformed and junk.
fn format(r: &mut Rng) -> OsString {
    if r.sane() {
        let family = r.pick(&[Family::Lns, Family::Posit, Family::Fix, Family::F32]);
        return valid_format(r, family, false).into();
    }
    match r.below(12) {
        // A real family with its number of fields, each from the pool (huge, negative,
        // signed, padded, not a number).
        8 | 9 => {
            let (head, fields) = r.pick(&[("lns", 2), ("posit", 1), ("posit", 2), ("fix", 2)]);
            let mut s = head.to_string();
            for _ in 0..fields {
                s.push(':');
                s.push_str(r.pick(&NUMBERS));
            }
            if r.chance(20) {
                s.push_str(":u");
            }
            s.into()
        }
        // Fields from the pools, any number of them.
        0..=5 => {
            let heads = ["lns", "posit", "fix", "f32", "u", "LNS", "posit ", "", "p"];
            let mut s = r.pick(&heads).to_string();
            for _ in 0..r.below(5) {
                s.push(':');
                s.push_str(match r.below(4) {
                    0 => r.pick(&["u", "", "x", "1e3", "0x5", "é", "\n"]),
                    _ => r.pick(&NUMBERS),
                });
            }
            s.into()
        }
        6 => format!("posit:{}", digits(r, 10, 60)).into(),
        7 => format!("lns:{}:{}", r.pick(&NUMBERS), digits(r, 20, 400)).into(),
        _ => junk(r),
    }
}

/// Operations: the real ones, near misses and junk.
fn op(r: &mut Rng) -> OsString {
    const OPS: [&str; 13] = [
        "add", "sub", "mul", "div", "neg", "abs", "max", "min", "cmp", "exp", "ln", "sum", "dot",
    ];
    if r.sane() {
        return r.pick(&OPS).into();
    }
    match r.below(3) {
        0 => r
            .pick(&[
                "ADD", "add ", "plus", "su", "dot,", "sum\n", "mod", "sqrt", "--mode",
            ])
            .into(),
        1 => junk(r),
        _ => r.pick(&OPS).into(),
    }
}

/// An operand: decimals, bit patterns, huge digit strings, special values, junk.
fn operand(r: &mut Rng) -> String {
    const DECIMALS: [&str; 20] = [
        "0", "1", "-1", "2", "98", "10", "0.5", "-2.5", "3.14159", ".5", "5.", "+1", "-0", "1e10",
        "1e-10", "1e400", "-1e400", "1e-400", "1E3", "0.1",
    ];
    if r.sane() {
        return match r.below(3) {
            0 => format!("0x{:x}", r.next() >> r.range(32, 63)),
            _ => r.pick(&DECIMALS).to_string(),
        };
    }
    match r.below(24) {
        0..=3 => r.pick(&DECIMALS).to_string(),
        4..=6 => format!("0x{:x}", r.next() >> r.below(64)),
        7 => r
            .pick(&[
                "0x", "0xg", "0X1F", "-0x1", "0x-1", "0x 1", "0x1.8", "0b101", "1_000", "1e", "e5",
                "--1",
            ])
            .to_string(),
        8 => format!("0x{}", "f".repeat(r.range(17, 200))),
        9 => digits(r, 20, 400),
        10 => format!("0.{}", digits(r, 20, 5000)),
        11 => format!("-{}e-{}", digits(r, 300, 5000), r.below(400)),
        // Linux passes at most 128 KiB in one argument.
        12 => {
            let n = r.pick(&[4096, 4097, 20_000, 100_000]);
            digits(r, n, n)
        }
        13 => format!("1e{}", digits(r, 3, 30)),
        14..=16 => r
            .pick(&["nan", "NaN", "-nan", "inf", "-inf", "Infinity", "NaR", "∞"])
            .to_string(),
        _ => junk(r).to_string_lossy().into_owned(),
    }
}

/// Where `--out` points: usually a fresh directory under the case's own, else a path that
/// cannot be a directory. Paths are relative to the case's directory (the child's working
/// directory), so even an empty or relative `--out` writes nowhere else.
fn out_dir(r: &mut Rng) -> OsString {
    if r.sane() {
        return r.pick(&["out", "deep/a/b/c", "out\ndir", "é ∞"]).into();
    }
    match r.below(6) {
        0 => "/proc/nonexistent/x".into(),
        1 => "file".into(),     // an existing regular file
        2 => "file/sub".into(), // under a regular file
        3 => "/dev/null".into(),
        4 => "".into(),
        _ => junk(r),
    }
}

/// A size option's value: small ones, the limits' edges, huge ones, not numbers.
fn size(r: &mut Rng, small_hi: usize) -> OsString {
    if r.sane() {
        return r.range(1, small_hi).to_string().into();
    }
    match r.below(8) {
        0..=5 => r.pick(&SIZES).into(),
        _ => junk(r),
    }
}

/// How many operands an operation takes, if it is one.
fn arity(op: &OsStr) -> Option<usize> {
    Some(match op.to_str()? {
        "add" | "sub" | "mul" | "div" | "max" | "min" | "cmp" => 2,
        "neg" | "abs" | "exp" | "ln" => 1,
        "sum" | "dot" => 0,
        _ => return None,
    })
}

/// One `lpgen golden …` argument vector and its standard input.
fn golden(r: &mut Rng) -> (Vec<OsString>, Vec<u8>) {
    let mut a: Vec<OsString> = vec!["golden".into()];
    if r.sane() || r.chance(90) {
        a.push(format(r));
    }
    let op = op(r);
    if r.sane() || r.chance(90) {
        a.push(op.clone());
    }
    let n = match (r.sane(), arity(&op)) {
        (true, Some(0)) => r.range(1, 40),
        (true, Some(k)) => k,
        _ => match r.below(20) {
            0 => 0,
            1 => r.range(3, 300),
            _ => r.range(1, 3),
        },
    };
    let is_dot = op == "dot";
    // Linux caps the whole argument list (with the environment) at a quarter of the stack
    // limit, 2 MiB by default, and one argument at 128 KiB: stay well under both.
    let mut room = 1 << 20;
    for _ in 0..n {
        let x = if is_dot && (r.sane() || r.chance(80)) {
            let sep = if r.sane() || r.chance(80) {
                ","
            } else {
                r.pick(&[";", ",,", ", ", ""])
            };
            format!("{}{sep}{}", operand(r), operand(r))
        } else {
            operand(r)
        };
        if x.len() > room || x.len() >= MAX_ARG {
            continue;
        }
        room -= x.len();
        a.push(x.into());
    }
    let mut stdin = Vec::new();
    for _ in 0..r.below(3) {
        match r.below(6) {
            0..=2 => {
                a.push("--mode".into());
                a.push(match r.sane() {
                    true => r.pick(&["naive", "kahan", "pairwise", "quire"]).into(),
                    false => junk(r),
                });
            }
            3 => a.push("--taylor".into()),
            4 => a.push(
                r.pick(&["--mode=quire", "--mode", "--stdin=1", "-m"])
                    .into(),
            ),
            _ => {
                a.push("--stdin".into());
                if r.sane() {
                    a.truncate(3);
                    a.push("--stdin".into());
                }
                for _ in 0..r.below(6) {
                    let k = match arity(&op) {
                        Some(k) if k > 0 && r.sane() => k,
                        _ => r.below(4),
                    };
                    for i in 0..k {
                        if i > 0 {
                            stdin.push(b' ');
                        }
                        stdin.extend(operand(r).bytes());
                    }
                    stdin.push(b'\n');
                }
                if !r.sane() && r.chance(20) {
                    stdin.extend([0xff, 0xfe, b'\n']);
                }
            }
        }
    }
    if !r.sane() && r.chance(10) {
        let at = r.range(1, a.len());
        a.insert(at, junk(r));
    }
    (a, stdin)
}

/// One `lpgen rtl …` argument vector.
fn rtl(r: &mut Rng) -> Vec<OsString> {
    use Family::*;
    const UNITS: [(&str, &[Family]); 21] = [
        ("lns-mul", &[Lns]),
        ("lns-add", &[Lns]),
        ("lns-kahan", &[Lns]),
        ("posit-add", &[Posit]),
        ("posit-mul", &[Posit]),
        ("posit-mac", &[Posit]),
        ("fix-mac", &[Fix]),
        ("alu", &[Lns, Posit, Fix, Dfix, Float]),
        ("vector", &[Lns, Posit, Fix, Dfix, Float]),
        ("array", &[Lns, Posit, Fix, Dfix, Float]),
        ("quant1", &[Fix, Posit]),
        ("q8-enc", &[Posit, Fix, F32]),
        ("q8-dec", &[Posit, Fix, F32]),
        ("convert", &[Lns, Posit, Fix, Float]),
        ("dfix-monitor", &[Dfix]),
        ("float-add", &[Float]),
        ("float-mul", &[Float]),
        ("float-fma", &[Float]),
        ("mx-dot", &[Mx]),
        ("mx-enc", &[Mx]),
        ("fdpa", &[Float]),
    ];
    let (unit, families) = r.pick(&UNITS);
    let family = r.pick(families);
    let mut a: Vec<OsString> = vec!["rtl".into()];
    if r.sane() {
        a.push(unit.into());
    } else if r.chance(90) {
        a.push(match r.below(3) {
            0 => r
                .pick(&["LNS-MUL", "lns_mul", "mul", "array ", "posit-div"])
                .into(),
            1 => junk(r),
            _ => unit.into(),
        });
    }
    if r.sane() || r.chance(90) {
        a.push("--format".into());
        a.push(match r.sane() {
            true => valid_format(r, family, true).into(),
            false => format(r),
        });
    }
    let mut sizes = Vec::new();
    for (flag, percent, small_hi) in [
        ("--stages", 50, 3),
        ("--rows", 30, 4),
        ("--cols", 30, 4),
        ("--lanes", 30, 8),
    ] {
        if r.chance(percent) {
            sizes.push((flag, size(r, small_hi)));
        }
    }
    // One side of an array may be at the limit, not both (legitimately slow).
    let big = |v: &OsString| v.to_str().and_then(|s| s.parse::<u32>().ok()).unwrap_or(0) > 8;
    let sides: Vec<usize> = (0..sizes.len())
        .filter(|&i| matches!(sizes[i].0, "--rows" | "--cols") && big(&sizes[i].1))
        .collect();
    if sides.len() == 2 {
        sizes[sides[1]].1 = "2".into();
    }
    for (flag, v) in sizes {
        a.push(flag.into());
        a.push(v);
    }
    // The PE kind asked for, when it is one of the valid ones: `--pe fdpa` takes `--fdpa`.
    let mut pe_asked = None;
    if unit == "array" && r.chance(40) || r.chance(5) {
        a.push("--pe".into());
        let pe = match family {
            Lns => r.pick(&["lns-kahan", "lns-plain"]),
            Posit => "posit-quire",
            Dfix => "dfix",
            Float => r.pick(&["float", "fdpa"]),
            Fix | F32 | Mx => "fix",
        };
        let asked = match r.sane() {
            true => pe,
            false if r.chance(50) => {
                a.push(junk(r));
                ""
            }
            false => r.pick(&[
                "lns-kahan",
                "lns-plain",
                "posit-quire",
                "fix",
                "posit",
                "dfix",
                "float",
                "fdpa",
            ]),
        };
        if !asked.is_empty() {
            a.push(asked.into());
            pe_asked = Some(asked);
        }
        if pe_asked == Some("float") && r.chance(40) || r.chance(3) {
            a.push("--acc".into());
            a.push(match r.sane() {
                true => valid_format(r, Float, true).into(),
                false => format(r),
            });
        }
    }
    if unit.starts_with("float-") && r.chance(40) || r.chance(3) {
        a.push("--rounding".into());
        a.push(match r.sane() {
            true => format!("stochastic:{}", r.range(1, 32)).into(),
            false => r
                .pick(&[
                    "stochastic:0",
                    "stochastic:99",
                    "stochastic",
                    "nearest:1",
                    "up",
                ])
                .into(),
        });
        if r.chance(60) {
            a.push("--rounding-seed".into());
            a.push(match r.sane() {
                true => digits(r, 1, 19).into(),
                false => junk(r),
            });
        }
    }
    if unit == "mx-enc" && r.chance(50) || r.chance(3) {
        // mx-enc's input words: float (bf16, f16, float:E:M; some too wide or not IEEE-style),
        // fix, or anything.
        a.push("--input".into());
        a.push(match r.sane() {
            true if r.chance(50) => valid_format(r, Float, true).into(),
            true => valid_format(r, Fix, true).into(),
            false => format(r),
        });
    }
    let fdpa_pe = pe_asked == Some("fdpa");
    if (unit == "fdpa" || fdpa_pe) && r.chance(90) || r.chance(3) {
        // fdpa's chunking: presets (some not listing the format), L:F:RHO (small L), or bad;
        // the array PE's also with :promoteN (N a multiple of L, or not, or rne-f16's:
        // refused).
        a.push("--fdpa".into());
        let l = r.range(1, 4);
        let mut mode = match r.sane() {
            true if r.chance(if fdpa_pe { 25 } else { 50 }) => r
                .pick(&["volta", "ampere", "ada", "hopper", "blackwell"])
                .into(),
            true => format!(
                "{l}:{}:{}",
                r.range(1, 30),
                r.pick(&["rz-f32", "rz-e8m13", "rne-f16"])
            )
            .into(),
            false if r.chance(50) => junk(r),
            false => r
                .pick(&[
                    "0:13:rz-f32",
                    "4:0:rz-f32",
                    "turing",
                    "hopper:promote128",
                    "65:13:rz-f32",
                    "4:13",
                    "4:13:rz-f32:promote0",
                    "4:13:rz-f32:promote",
                ])
                .into(),
        };
        if fdpa_pe && r.chance(40) {
            let n = match r.sane() {
                true => (l * r.range(1, 8)).to_string(),
                false => r
                    .pick(&["0", "3", "-4", "x", "99999999999999999999"])
                    .into(),
            };
            mode.push(":promote");
            mode.push(n);
        }
        a.push(mode);
    }
    if unit == "dfix-monitor" && r.chance(40) || r.chance(3) {
        a.push("--counter-bits".into());
        a.push(match r.sane() {
            true => size(r, 64),
            false => junk(r),
        });
    }
    if matches!(unit, "alu" | "vector") && r.chance(40)
        || unit == "convert" && r.chance(90)
        || r.chance(5)
    {
        a.push("--to".into());
        a.push(match r.sane() {
            true => valid_format(r, family, true).into(),
            false => format(r),
        });
    }
    if unit.starts_with("q8-") && r.chance(60) || r.chance(5) {
        a.push("--q8".into());
        a.push(match r.sane() {
            true => r
                .pick(&["q8:dynamic-tree", "q8:static-tree", "linear", "q8:mantissa"])
                .into(),
            false if r.chance(50) => junk(r),
            false => r
                .pick(&["q8:", "q8:tree", "Q8:LINEAR", "dynamic_tree"])
                .into(),
        });
    }
    if r.sane() || r.chance(90) {
        a.push("--out".into());
        a.push(out_dir(r));
    }
    if !r.sane() && r.chance(10) {
        let at = r.range(1, a.len());
        a.insert(at, junk(r));
    }
    a
}

/// Case `i` of the run with `seed`: its argument vector and standard input.
fn case(seed: u64, i: usize) -> (Vec<OsString>, Vec<u8>) {
    let mut r = Rng {
        state: lpgen_golden::rng::Rng(seed ^ (i as u64).wrapping_mul(0xd1b5_4a32_d192_ed03)),
        sane: 0,
    };
    r.next();
    r.sane = r.pick(&[98, 95, 90, 70, 40, 10]);
    match r.below(100) {
        0 => (
            r.pick(&[&[][..], &["bogus"][..], &["golden"][..], &["rtl"][..]])
                .iter()
                .map(OsString::from)
                .collect(),
            Vec::new(),
        ),
        1..=55 => golden(&mut r),
        _ => (rtl(&mut r), Vec::new()),
    }
}

/// The valid `--pe` kinds the generator asks for (`rtl`'s `--pe`).
const PE_KINDS: [&str; 7] = [
    "lns-kahan",
    "lns-plain",
    "posit-quire",
    "fix",
    "dfix",
    "float",
    "fdpa",
];

/// The PE kind of an `lpgen rtl array … --pe KIND …` case, if it asks for a valid one.
fn array_pe(argv: &[OsString]) -> Option<&'static str> {
    if argv.get(..2)? != ["rtl", "array"] {
        return None;
    }
    let at = argv.iter().position(|a| a == "--pe")?;
    let kind = argv.get(at + 1)?;
    PE_KINDS.iter().copied().find(|k| kind == k)
}

/// The program under test: `LPGEN_FUZZ_BIN` (another build, e.g. an older commit's), else
/// this package's.
fn lpgen() -> OsString {
    std::env::var_os("LPGEN_FUZZ_BIN").unwrap_or_else(|| env!("CARGO_BIN_EXE_lpgen").into())
}

/// A number from the environment (decimal, or hexadecimal after 0x), else `default`.
fn env_or(name: &str, default: u64) -> u64 {
    let Ok(v) = std::env::var(name) else {
        return default;
    };
    let t = v.trim();
    match t.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => t.parse(),
    }
    .unwrap_or_else(|_| panic!("{name}={v:?} is not a number"))
}

/// Runs one case in `dir`: its exit status (0 or 2), or what went wrong.
fn check(argv: &[OsString], stdin: &[u8], dir: &Path) -> Result<i32, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("case directory: {e}"))?;
    std::fs::write(dir.join("file"), b"a regular file\n").unwrap();
    std::fs::write(dir.join("stdin"), stdin).unwrap();
    let err_path = dir.join("stderr");
    // Through sh, to cap the child's memory: a case that would eat the machine fails (an
    // allocation failure aborts) instead of starving everything else on it.
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -v {MEMORY_KIB} && exec \"$0\" \"$@\""))
        .arg(lpgen())
        .args(argv)
        .current_dir(dir)
        .env("RUST_BACKTRACE", "0")
        .stdin(std::fs::File::open(dir.join("stdin")).unwrap())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&err_path).unwrap())
        .spawn()
        .map_err(|e| format!("cannot run lpgen: {e}"))?;
    let start = Instant::now();
    let mut pause = Duration::from_micros(200);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > DEADLINE {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("still running after {DEADLINE:?}, killed"));
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(20));
    };
    let err = std::fs::read(&err_path).unwrap();
    let err = String::from_utf8_lossy(&err);
    let code = match (status.code(), status.signal()) {
        (Some(c), _) => c,
        (None, s) => return Err(format!("killed by signal {s:?}; stderr {err:?}")),
    };
    if err.contains("panicked") {
        return Err(format!("status {code}, a panic: {err:?}"));
    }
    match code {
        0 => Ok(0),
        2 if err.ends_with('\n') && err.matches('\n').count() == 1 => Ok(2),
        2 => Err(format!("status 2 but not one line on stderr: {err:?}")),
        _ => Err(format!("status {code}: {err:?}")),
    }
}

#[test]
fn the_command_line_refuses_bad_input_in_one_line() {
    let mut cases = env_or("LPGEN_FUZZ_CASES", DEFAULT_CASES as u64) as usize;
    // LPGEN_FUZZ_CASE=i runs case i alone and shows its whole argv.
    let mut first = 0;
    if std::env::var_os("LPGEN_FUZZ_CASE").is_some() {
        first = env_or("LPGEN_FUZZ_CASE", 0) as usize;
        cases = first + 1;
    }
    let seed = env_or("LPGEN_FUZZ_SEED", DEFAULT_SEED);
    let max_failures = env_or("LPGEN_FUZZ_MAX_FAILURES", MAX_FAILURES as u64) as usize;
    // Twice the cores, 2 to 4: a case's process waits on exec and on fsync (rtl writes its
    // files atomically) about as long as it computes.
    let workers = std::thread::available_parallelism()
        .map_or(2, |n| 2 * n.get())
        .clamp(2, 4);
    let root = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("lpgen-fuzz-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let next = AtomicUsize::new(first);
    let stop = AtomicBool::new(false);
    let failures: Mutex<Vec<String>> = Mutex::new(Vec::new());
    let (ok, refused) = (AtomicUsize::new(0), AtomicUsize::new(0));
    // Per valid PE kind of `rtl array`: cases accepted, cases refused.
    let pes = Mutex::new([[0usize; 2]; PE_KINDS.len()]);
    let slowest = Mutex::new((Duration::ZERO, 0));
    let start = Instant::now();
    std::thread::scope(|s| {
        for w in 0..workers {
            let (root, next, stop, failures) = (&root, &next, &stop, &failures);
            let (ok, refused, slowest, pes) = (&ok, &refused, &slowest, &pes);
            s.spawn(move || {
                let dir: PathBuf = root.join(format!("w{w}"));
                while !stop.load(Ordering::Relaxed) {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= cases {
                        break;
                    }
                    let (argv, stdin) = case(seed, i);
                    if first + 1 == cases {
                        eprintln!("case {i}: lpgen {argv:?}");
                    }
                    let t = Instant::now();
                    let result = check(&argv, &stdin, &dir);
                    let took = t.elapsed();
                    {
                        let mut sl = slowest.lock().unwrap();
                        if took > sl.0 {
                            *sl = (took, i);
                        }
                    }
                    let _ = std::fs::remove_dir_all(&dir);
                    if let (Ok(code), Some(pe)) = (&result, array_pe(&argv)) {
                        let k = PE_KINDS.iter().position(|k| *k == pe).unwrap();
                        pes.lock().unwrap()[k][usize::from(*code != 0)] += 1;
                    }
                    match result {
                        Ok(0) => ok.fetch_add(1, Ordering::Relaxed),
                        Ok(_) => refused.fetch_add(1, Ordering::Relaxed),
                        Err(_) => 0,
                    };
                    if let Err(why) = result {
                        let input = if stdin.is_empty() {
                            String::new()
                        } else {
                            format!(" stdin {}", shorten(&OsString::from_vec(stdin)))
                        };
                        let shown: Vec<String> = argv.iter().map(|a| shorten(a)).collect();
                        let shown = shown.join(", ");
                        let mut f = failures.lock().unwrap();
                        f.push(format!("case {i}: lpgen [{shown}]{input}: {why}"));
                        if f.len() >= max_failures {
                            stop.store(true, Ordering::Relaxed);
                        }
                    }
                }
            });
        }
    });
    let _ = std::fs::remove_dir_all(&root);
    let failures = failures.into_inner().unwrap();
    let (slow, slow_case) = slowest.into_inner().unwrap();
    eprintln!(
        "{} cases (seed {seed:#x}, {workers} at a time) in {:.1?}: {} accepted, {} refused, \
         {} failed; slowest case {slow_case} {slow:.1?}",
        next.load(Ordering::Relaxed).min(cases) - first,
        start.elapsed(),
        ok.into_inner(),
        refused.into_inner(),
        failures.len(),
    );
    let pes = pes.into_inner().unwrap();
    let shown: Vec<String> = PE_KINDS
        .iter()
        .zip(pes)
        .map(|(k, [ok, no])| format!("{k} {ok}/{no}"))
        .collect();
    eprintln!(
        "rtl array --pe KIND, accepted/refused: {}",
        shown.join(", ")
    );
    assert!(
        failures.is_empty(),
        "{} failing cases{} (seed {seed:#x}; LPGEN_FUZZ_SEED=S LPGEN_FUZZ_CASE=N reruns case N \
         alone and shows its whole argv):\n{}",
        failures.len(),
        if failures.len() >= max_failures {
            ", the run stopped there"
        } else {
            ""
        },
        failures.join("\n")
    );
}

/// An argument as `{:?}` shows it, a huge one cut to its start, its length and its end.
fn shorten(a: &OsStr) -> String {
    let s = a.to_string_lossy();
    if s.chars().count() <= 200 {
        return format!("{a:?}");
    }
    let head: String = s.chars().take(40).collect();
    let tail: String = s.chars().skip(s.chars().count() - 10).collect();
    format!("{head:?}…({} chars)…{tail:?}", s.chars().count())
}

/// The generator asks for every valid PE kind of `rtl array`, fdpa as often as float, and for
/// fdpa PEs with their chunking (`--fdpa`, the PE's `:promoteN` too): 100,000 cases
/// generated, not run (under a second).
#[test]
fn the_generator_asks_for_every_pe_kind() {
    let mut seen = [0usize; PE_KINDS.len()];
    let (mut fdpa_modes, mut promoted) = (0, 0);
    for i in 0..10 * DEFAULT_CASES {
        let (argv, _) = case(DEFAULT_SEED, i);
        let Some(pe) = array_pe(&argv) else { continue };
        seen[PE_KINDS.iter().position(|k| *k == pe).unwrap()] += 1;
        if pe == "fdpa" {
            let at = argv.iter().position(|a| a == "--fdpa");
            if let Some(mode) = at.and_then(|at| argv.get(at + 1)?.to_str()) {
                fdpa_modes += 1;
                promoted += usize::from(mode.contains(":promote"));
            }
        }
    }
    for (k, n) in PE_KINDS.iter().zip(seen) {
        assert!(n > 0, "no case asks for --pe {k}: {seen:?}");
    }
    // Float formats' valid picks are float and fdpa alike (seed 0x15f022: 63 and 62 in
    // 100,000 cases; 123 and 10 when float formats' only valid pick was float).
    let at = |k: &str| seen[PE_KINDS.iter().position(|p| *p == k).unwrap()];
    assert!(2 * at("fdpa") >= at("float"), "{seen:?}");
    assert!(
        fdpa_modes > 0 && promoted > 0,
        "{fdpa_modes} fdpa modes, {promoted} promoted"
    );
}
