//! Posit units simulated with Icarus against the golden model: every output of `posit-add`
//! (add and sub), `posit-mul` and `posit-mac` is compared with `PositFormat::add/sub/mul` and
//! the golden `Quire` read-out after each step.

mod common;

use lpgen_golden::Family;
use lpgen_golden::{Format, PositFormat, Quire};
use lpgen_hdl::{generate, Design, Params, Unit};

fn posit(s: &str) -> (Format, PositFormat) {
    let f: Format = s.parse().unwrap();
    match f {
        Format::Posit(p) => (f, p),
        _ => unreachable!(),
    }
}

fn design(unit: Unit, f: Format, stages: u32) -> Design {
    generate(&Params::new(unit, f).stages(stages)).unwrap()
}

/// The most stages each unit accepts (read from the refusal of one more).
fn max_stages(unit: Unit, f: Format) -> u32 {
    (1..16)
        .find(|&s| generate(&Params::new(unit, f).stages(s)).is_err())
        .unwrap()
        - 1
}

use common::Rng;

/// Zero, NaR, ±minpos, ±maxpos, ±1 and their neighbours.
fn specials(f: PositFormat) -> Vec<u64> {
    let m = f.mask();
    let base = [
        0,
        f.nar(),
        1,
        2,
        f.maxpos(),
        f.maxpos() - 1,
        f.one(),
        f.one() + 1,
        f.one() - 1,
    ];
    let mut v: Vec<u64> = base.iter().map(|&x| x & m).collect();
    v.extend(base.iter().map(|&x| f.neg(x)));
    v.sort_unstable();
    v.dedup();
    v
}

/// A word: uniform, near one (small scales, long fractions), with its low bits cleared
/// (short fractions), or special.
fn word(r: &mut Rng, f: PositFormat) -> u64 {
    let w = match r.below(10) {
        0..=2 => r.next_u64() & f.mask(),
        3..=5 => {
            let spread = 1u64 << (f.n - 3);
            f.one() + r.below(2 * spread) - spread
        }
        6..=8 => {
            // Short fractions: sums and products that land on rounding ties.
            let cut = r.below(f.n as u64 - 1);
            (r.next_u64() & f.mask()) >> cut << cut
        }
        _ => {
            let s = specials(f);
            s[r.below(s.len() as u64) as usize]
        }
    };
    if r.below(2) == 1 {
        f.neg(w)
    } else {
        w
    }
}

/// Operand pairs: every pair (exhaustive) or specials × specials plus random pairs, some of
/// them close in value (cancellation).
fn pairs(f: PositFormat, exhaustive: bool, seed: u64) -> Vec<(u64, u64)> {
    if exhaustive {
        let all = 1u64 << f.n;
        return (0..all)
            .flat_map(|a| (0..all).map(move |b| (a, b)))
            .collect();
    }
    let s = specials(f);
    let mut v: Vec<(u64, u64)> = s
        .iter()
        .flat_map(|&a| s.iter().map(move |&b| (a, b)))
        .collect();
    let mut r = Rng(seed);
    for _ in 0..12_000 {
        let a = word(&mut r, f);
        let b = if r.below(4) == 0 {
            // Close to ±a.
            let d = r.below(64);
            let x = a.wrapping_add(d).wrapping_sub(32) & f.mask();
            if r.below(2) == 1 {
                f.neg(x)
            } else {
                x
            }
        } else {
            word(&mut r, f)
        };
        v.push((a, b));
    }
    v
}

/// Fails with the number of mismatches and the first few.
fn report(fmt: &str, stages: u32, bad: &[String]) {
    assert!(
        bad.is_empty(),
        "{fmt} stages {stages}: {} mismatches, first:\n{}",
        bad.len(),
        bad[..bad.len().min(10)].join("\n")
    );
}

fn check_add(fmt: &str, exhaustive: bool) {
    let (ff, f) = posit(fmt);
    let mut vectors = vec![];
    for (a, b) in pairs(f, exhaustive, 1) {
        vectors.push(vec![a, b, 0]);
        vectors.push(vec![a, b, 1]);
    }
    let max = max_stages(Unit::PositAdd, ff);
    assert_eq!(max, 4);
    for stages in [0, 2, max] {
        if exhaustive && stages == 2 {
            continue;
        }
        let d = design(Unit::PositAdd, ff, stages);
        let out = common::simulate(&d, &["a", "b", "sub"], &["y", "nar"], &vectors);
        assert_eq!(out.len(), vectors.len(), "{fmt} stages {stages}");
        let mut bad = vec![];
        for (v, o) in vectors.iter().zip(&out) {
            let want = if v[2] == 1 {
                f.sub(v[0], v[1])
            } else {
                f.add(v[0], v[1])
            };
            if (o[0], o[1]) != (want, (want == f.nar()) as u64) {
                let op = if v[2] == 1 { "-" } else { "+" };
                bad.push(format!(
                    "{:#x} {op} {:#x} = {:#x} (nar {}), golden {want:#x}",
                    v[0], v[1], o[0], o[1]
                ));
            }
        }
        report(fmt, stages, &bad);
    }
}

fn check_mul(fmt: &str, exhaustive: bool) {
    let (ff, f) = posit(fmt);
    let vectors: Vec<Vec<u64>> = pairs(f, exhaustive, 2)
        .into_iter()
        .map(|(a, b)| vec![a, b])
        .collect();
    let max = max_stages(Unit::PositMul, ff);
    assert_eq!(max, 4);
    for stages in [0, 1, max] {
        if exhaustive && stages == 1 {
            continue;
        }
        let d = design(Unit::PositMul, ff, stages);
        let out = common::simulate(&d, &["a", "b"], &["y", "nar"], &vectors);
        assert_eq!(out.len(), vectors.len(), "{fmt} stages {stages}");
        let mut bad = vec![];
        for (v, o) in vectors.iter().zip(&out) {
            let want = f.mul(v[0], v[1]);
            if (o[0], o[1]) != (want, (want == f.nar()) as u64) {
                bad.push(format!(
                    "{:#x} * {:#x} = {:#x} (nar {}), golden {want:#x}",
                    v[0], v[1], o[0], o[1]
                ));
            }
        }
        report(fmt, stages, &bad);
    }
}

#[test]
fn posit_add_8_0_all_pairs() {
    check_add("posit:8:0", true);
}

#[test]
fn posit_add_8_2_u_all_pairs() {
    check_add("posit:8:2:u", true);
}

#[test]
fn posit_add_6_1_all_pairs() {
    check_add("posit:6:1", true);
}

#[test]
fn posit_add_16_1_random() {
    check_add("posit:16:1", false);
}

#[test]
fn posit_add_16_2022_random() {
    check_add("posit:16", false);
}

#[test]
fn posit_add_32_2_random() {
    check_add("posit:32:2", false);
}

#[test]
fn posit_mul_8_0_all_pairs() {
    check_mul("posit:8:0", true);
}

#[test]
fn posit_mul_8_2_u_all_pairs() {
    check_mul("posit:8:2:u", true);
}

#[test]
fn posit_mul_6_1_all_pairs() {
    check_mul("posit:6:1", true);
}

#[test]
fn posit_mul_16_1_random() {
    check_mul("posit:16:1", false);
}

#[test]
fn posit_mul_16_2022_random() {
    check_mul("posit:16", false);
}

#[test]
fn posit_mul_32_2_random() {
    check_mul("posit:32:2", false);
}

/// Random dot products of length 1..=40 (each starting with a clear, op 2 or op 3), with
/// subtract ops, NaR and zero operands, and products repeated with the other sign so sums
/// cancel exactly.
fn mac_steps(f: PositFormat, seed: u64, dots: usize) -> Vec<Vec<u64>> {
    let mut r = Rng(seed);
    let mut v = vec![];
    for _ in 0..dots {
        let len = 1 + r.below(40);
        let mut seen: Vec<(u64, u64)> = vec![];
        for k in 0..len {
            let op = if k == 0 {
                if r.below(4) == 0 {
                    3
                } else {
                    2
                }
            } else if r.below(3) == 0 {
                1
            } else {
                0
            };
            let (a, b) = if !seen.is_empty() && r.below(6) == 0 {
                seen[r.below(seen.len() as u64) as usize]
            } else if r.below(60) == 0 {
                (f.nar(), word(&mut r, f))
            } else {
                (word(&mut r, f), word(&mut r, f))
            };
            seen.push((a, b));
            v.push(vec![a, b, op]);
        }
    }
    v
}

/// The golden quire after each step: (read-out, NaR).
fn mac_golden(f: PositFormat, steps: &[Vec<u64>]) -> Vec<(u64, u64)> {
    let mut q = Quire::new(f);
    steps
        .iter()
        .map(|s| {
            match s[2] {
                0 => q.fma(s[0], s[1], false),
                1 => q.fma(s[0], s[1], true),
                2 => {
                    q.clear();
                    q.fma(s[0], s[1], false)
                }
                _ => q.clear(),
            }
            (q.to_word(), q.is_nar() as u64)
        })
        .collect()
}

fn check_mac(fmt: &str, steps: &[Vec<u64>], stage_list: &[u32]) {
    let (ff, f) = posit(fmt);
    let want = mac_golden(f, steps);
    for &stages in stage_list {
        let d = design(Unit::PositMac, ff, stages);
        let out = common::simulate(&d, &["a", "b", "op"], &["y", "nar"], steps);
        assert_eq!(out.len(), steps.len(), "{fmt} stages {stages}");
        let mut bad = vec![];
        for (i, ((s, o), w)) in steps.iter().zip(&out).zip(&want).enumerate() {
            if (o[0], o[1]) != *w {
                bad.push(format!(
                    "step {i}: op {} a={:#x} b={:#x}: y={:#x} nar={}, golden {:#x} nar={}",
                    s[2], s[0], s[1], o[0], o[1], w.0, w.1
                ));
            }
        }
        report(fmt, stages, &bad);
    }
}

#[test]
fn posit_mac_8_0_dot_products() {
    let (ff, f) = posit("posit:8:0");
    let mut steps = mac_steps(f, 3, 150);
    // 128 products maxpos² wrap the 32-bit quire to 10…0 (NaR); accumulation continues, and
    // subtracting brings it back.
    steps.push(vec![f.maxpos(), f.maxpos(), 2]);
    for k in 1..140 {
        steps.push(vec![f.maxpos(), f.maxpos(), (k >= 135) as u64]);
    }
    steps.push(vec![f.one(), f.one(), 0]);
    let max = max_stages(Unit::PositMac, ff);
    assert_eq!(max, 8);
    check_mac("posit:8:0", &steps, &[0, 1, 2, max]);
}

#[test]
fn posit_mac_16_1_dot_products() {
    let (ff, f) = posit("posit:16:1");
    let steps = mac_steps(f, 4, 150);
    check_mac(
        "posit:16:1",
        &steps,
        &[0, 3, max_stages(Unit::PositMac, ff)],
    );
}

#[test]
fn posit_mac_8_2022_dot_products() {
    let (ff, f) = posit("posit:8");
    let steps = mac_steps(f, 5, 150);
    check_mac("posit:8", &steps, &[0, 1, max_stages(Unit::PositMac, ff)]);
}

/// Small and unusual formats, every unit at stages 0 and the most: all operand pairs for
/// add/sub and mul, random dot products for the MAC. Covers es = 0 with no exponent field,
/// the 2022 standard's truncated exponent (N < 5), N = 3, es = N − 3 and `:u` quires.
#[test]
fn small_and_unusual_formats() {
    for fmt in [
        "posit:3:0",
        "posit:4:1",
        "posit:5:2",
        "posit:7:3:u",
        "posit:3",
        "posit:4",
        "posit:5:u",
        "posit:6",
    ] {
        let (ff, f) = posit(fmt);
        let all: Vec<(u64, u64)> = pairs(f, true, 0);
        let add_vec: Vec<Vec<u64>> = all
            .iter()
            .flat_map(|&(a, b)| [vec![a, b, 0], vec![a, b, 1]])
            .collect();
        let mul_vec: Vec<Vec<u64>> = all.iter().map(|&(a, b)| vec![a, b]).collect();
        for stages in [0, max_stages(Unit::PositAdd, ff)] {
            let d = design(Unit::PositAdd, ff, stages);
            let out = common::simulate(&d, &["a", "b", "sub"], &["y", "nar"], &add_vec);
            let bad: Vec<String> = add_vec
                .iter()
                .zip(&out)
                .filter_map(|(v, o)| {
                    let want = if v[2] == 1 {
                        f.sub(v[0], v[1])
                    } else {
                        f.add(v[0], v[1])
                    };
                    ((o[0], o[1]) != (want, (want == f.nar()) as u64))
                        .then(|| format!("add {v:?}: {o:?}, golden {want:#x}"))
                })
                .collect();
            assert_eq!(out.len(), add_vec.len());
            report(fmt, stages, &bad);
        }
        for stages in [0, max_stages(Unit::PositMul, ff)] {
            let d = design(Unit::PositMul, ff, stages);
            let out = common::simulate(&d, &["a", "b"], &["y", "nar"], &mul_vec);
            let bad: Vec<String> = mul_vec
                .iter()
                .zip(&out)
                .filter_map(|(v, o)| {
                    let want = f.mul(v[0], v[1]);
                    ((o[0], o[1]) != (want, (want == f.nar()) as u64))
                        .then(|| format!("mul {v:?}: {o:?}, golden {want:#x}"))
                })
                .collect();
            assert_eq!(out.len(), mul_vec.len());
            report(fmt, stages, &bad);
        }
        let steps = mac_steps(f, 6, 60);
        check_mac(fmt, &steps, &[0, max_stages(Unit::PositMac, ff)]);
    }
}

/// Wider exponents and the 2022 standard at 32 bits: random pairs and dot products.
#[test]
fn wide_exponent_formats_random() {
    for fmt in ["posit:12:3", "posit:24:3", "posit:32"] {
        let (ff, f) = posit(fmt);
        let ps = pairs(f, false, 7);
        let add_vec: Vec<Vec<u64>> = ps.iter().map(|&(a, b)| vec![a, b, a & 1]).collect();
        let mul_vec: Vec<Vec<u64>> = ps.iter().map(|&(a, b)| vec![a, b]).collect();
        let d = design(Unit::PositAdd, ff, 1);
        let out = common::simulate(&d, &["a", "b", "sub"], &["y"], &add_vec);
        let bad: Vec<String> = add_vec
            .iter()
            .zip(&out)
            .filter_map(|(v, o)| {
                let want = if v[2] == 1 {
                    f.sub(v[0], v[1])
                } else {
                    f.add(v[0], v[1])
                };
                (o[0] != want).then(|| format!("add {v:x?}: {:#x}, golden {want:#x}", o[0]))
            })
            .collect();
        report(fmt, 1, &bad);
        let d = design(Unit::PositMul, ff, 2);
        let out = common::simulate(&d, &["a", "b"], &["y"], &mul_vec);
        let bad: Vec<String> = mul_vec
            .iter()
            .zip(&out)
            .filter_map(|(v, o)| {
                let want = f.mul(v[0], v[1]);
                (o[0] != want).then(|| format!("mul {v:x?}: {:#x}, golden {want:#x}", o[0]))
            })
            .collect();
        report(fmt, 2, &bad);
        check_mac(fmt, &mac_steps(f, 8, 80), &[2]);
    }
}
