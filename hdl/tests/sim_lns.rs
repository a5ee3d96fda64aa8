//! LNS units simulated with Icarus against the golden model: `lns-mul`, `lns-add` (every
//! output, exhaustive over lns:4:4 words × a spread, random lns:5:6 pairs), `lns-kahan`
//! (random dot products, interleaved slots, bubbles, clears) and the `lns-kahan` /
//! `lns-plain` PEs inside a 1×1 array.

mod common;

use lpgen_golden::sum::{kahan_dot, naive_dot, Kahan};
use lpgen_golden::Family;
use lpgen_golden::{Lns, LnsFormat};
use lpgen_hdl::manifest::Port;
use lpgen_hdl::{generate, Design, Direction, Manifest, Params, PeKind, Unit};

use common::Rng;

/// The operand generators of these tests, on the shared generator.
trait LnsOperands {
    fn code(&mut self, lo: i32, hi: i32) -> i32;
    fn extreme(&mut self, f: LnsFormat) -> u64;
    fn add_pair(&mut self, f: LnsFormat) -> (u64, u64);
    fn operand(&mut self, f: LnsFormat) -> u64;
}

impl LnsOperands for Rng {
    /// A code uniform in lo..=hi.
    fn code(&mut self, lo: i32, hi: i32) -> i32 {
        lo + self.below((hi - lo + 1) as u64) as i32
    }
    /// A special or extreme word: zero, NaN, ±the largest and ±the smallest magnitude, ±1.
    fn extreme(&mut self, f: LnsFormat) -> u64 {
        let neg = self.below(2) == 1;
        match self.below(8) {
            0 | 1 => f.zero(),
            2 => f.nan(),
            3 | 4 => f.pack(neg, f.code_max()),
            5 | 6 => f.pack(neg, f.code_min()),
            _ => f.pack(neg, 0),
        }
    }
    /// A pair for an adder: a random; b random, or near a (so the G tables are read over
    /// their whole length), or ±a exactly, or an extreme.
    fn add_pair(&mut self, f: LnsFormat) -> (u64, u64) {
        let t = lpgen_golden::GTables::get(f.int_bits, f.frac_bits);
        let reach = t.sb.len().max(t.db.len()) as i32 + 4;
        let a = if self.below(16) == 0 {
            self.extreme(f)
        } else {
            self.next_u64() & ((1 << f.width()) - 1)
        };
        let (_, ca) = f.unpack(a);
        let b = match self.below(16) {
            0 => self.extreme(f),
            1 => a,
            2 => a ^ (1 << f.log_width()),
            3..=6 => self.next_u64() & ((1 << f.width()) - 1),
            _ => {
                let c = (ca + self.code(-reach, reach)).clamp(f.code_min(), f.code_max());
                f.pack(self.below(2) == 1, c)
            }
        };
        if self.below(2) == 0 {
            (a, b)
        } else {
            (b, a)
        }
    }
    /// An operand of a dot product: mostly moderate magnitudes (products and sums stay in
    /// range), sometimes large, rarely an extreme (zero, NaN, saturation).
    fn operand(&mut self, f: LnsFormat) -> u64 {
        let neg = self.below(2) == 1;
        match self.below(64) {
            0 => self.extreme(f),
            1..=6 => f.pack(neg, self.code(f.code_min(), f.code_max())),
            _ => f.pack(neg, self.code(-f.code_max() / 4, f.code_max() / 4)),
        }
    }
}

/// The value of `latency` in a design's manifest.
fn latency(d: &Design) -> u32 {
    Manifest::from_json(&d.manifest).unwrap().latency
}

/// Golden results plus saturation flags. A result saturated at ±code_max when the same
/// operation on the same codes in lns:(I+1):F (the same G tables, a range the exact result
/// cannot leave) gives a code above code_max.
struct Ref {
    f: LnsFormat,
    l: Lns,
    wide: Lns,
}

impl Ref {
    fn new(f: LnsFormat) -> Ref {
        let wide = LnsFormat::new(f.int_bits + 1, f.frac_bits).unwrap();
        Ref {
            f,
            l: f.ctx(),
            wide: wide.ctx(),
        }
    }
    fn widen(&self, w: u64) -> u64 {
        let wf = self.wide.fmt;
        if self.f.is_zero(w) {
            wf.zero()
        } else if self.f.is_nan(w) {
            wf.nan()
        } else {
            let (s, c) = self.f.unpack(w);
            wf.pack(s, c)
        }
    }
    fn above_max(&self, wide_result: u64) -> bool {
        let wf = self.wide.fmt;
        let (_, c) = wf.unpack(wide_result);
        c != wf.code_reserved() && c > self.f.code_max()
    }
    /// (a ± b, saturated)
    fn add(&self, a: u64, b: u64, sub: bool) -> (u64, bool) {
        let (wa, wb) = (self.widen(a), self.widen(b));
        if sub {
            (self.l.sub(a, b), self.above_max(self.wide.sub(wa, wb)))
        } else {
            (self.l.add(a, b), self.above_max(self.wide.add(wa, wb)))
        }
    }
    fn mul(&self, a: u64, b: u64) -> (u64, bool) {
        let w = self.wide.mul(self.widen(a), self.widen(b));
        (self.l.mul(a, b), self.above_max(w))
    }
}

#[test]
fn lns_mul_and_div_match_the_golden_model() {
    let f = LnsFormat::new(4, 4).unwrap();
    let l = f.ctx();
    // Every word against a spread of words, both operations.
    let words: Vec<u64> = (0..1u64 << f.width()).collect();
    let bs: Vec<u64> = words.iter().copied().step_by(7).collect();
    let mut vectors = vec![];
    for &a in &words {
        for &b in &bs {
            vectors.push(vec![a, b, (a ^ b) & 1]);
        }
    }
    for stages in [0, 1] {
        let d = generate(&Params::new(Unit::LnsMul, "lns:4:4".parse().unwrap()).stages(stages))
            .unwrap();
        let out = common::simulate(&d, &["a", "b", "div"], &["y"], &vectors);
        assert_eq!(out.len(), vectors.len(), "stages {stages}");
        for (v, o) in vectors.iter().zip(&out) {
            let want = if v[2] == 1 {
                l.div(v[0], v[1])
            } else {
                l.mul(v[0], v[1])
            };
            assert_eq!(
                o[0], want,
                "stages {stages}: a={:#x} b={:#x} div={}",
                v[0], v[1], v[2]
            );
        }
    }
}

/// Simulates `lns-add` in `fmt` at every stage count on `vectors` ([a, b, sub]) and compares
/// y, overflow and nan with the golden model.
fn check_add(fmt: &str, vectors: &[Vec<u64>]) {
    let f: LnsFormat = match fmt.parse().unwrap() {
        lpgen_golden::Format::Lns(f) => f,
        _ => unreachable!(),
    };
    let r = Ref::new(f);
    let want: Vec<(u64, bool, bool)> = vectors
        .iter()
        .map(|v| {
            let (y, sat) = r.add(v[0], v[1], v[2] == 1);
            (y, sat, f.is_nan(v[0]) || f.is_nan(v[1]))
        })
        .collect();
    for stages in 0..=3 {
        let d = generate(&Params::new(Unit::LnsAdd, fmt.parse().unwrap()).stages(stages)).unwrap();
        assert_eq!(latency(&d), stages);
        let digest = lpgen_golden::GTables::get(f.int_bits, f.frac_bits).digest();
        let tables = Manifest::from_json(&d.manifest).unwrap().tables;
        assert!(tables.values().any(|t| *t == digest), "{tables:?}");
        let out = common::simulate(&d, &["a", "b", "sub"], &["y", "overflow", "nan"], vectors);
        assert_eq!(out.len(), vectors.len(), "{fmt} stages {stages}");
        for ((v, o), w) in vectors.iter().zip(&out).zip(&want) {
            assert_eq!(
                (o[0], o[1] == 1, o[2] == 1),
                *w,
                "{fmt} stages {stages}: a={:#x} b={:#x} sub={} (y, overflow, nan)",
                v[0],
                v[1],
                v[2]
            );
        }
    }
}

#[test]
fn lns_add_and_sub_match_the_golden_model_on_every_lns_4_4_word() {
    let f = LnsFormat::new(4, 4).unwrap();
    // Every word against a spread of words (every 7th, and the extremes), both operations.
    let mut bs: Vec<u64> = (0..1u64 << f.width()).step_by(7).collect();
    bs.extend([
        f.zero(),
        f.nan(),
        f.pack(false, f.code_max()),
        f.pack(true, f.code_max()),
    ]);
    let mut vectors = vec![];
    for a in 0..1u64 << f.width() {
        for &b in &bs {
            for sub in [0, 1] {
                vectors.push(vec![a, b, sub]);
            }
        }
    }
    check_add("lns:4:4", &vectors);
}

#[test]
fn lns_add_and_sub_match_the_golden_model_on_all_pairs_of_tiny_formats() {
    // lns:1:3: the tables end at the largest distance of two codes, not at a zero entry,
    // and db entries are wider than the log field (as in lns:2:4); lns:3:1: one fraction bit.
    for fmt in ["lns:1:3", "lns:2:4", "lns:3:1"] {
        let f: LnsFormat = match fmt.parse().unwrap() {
            lpgen_golden::Format::Lns(f) => f,
            _ => unreachable!(),
        };
        let mut vectors = vec![];
        for a in 0..1u64 << f.width() {
            for b in 0..1u64 << f.width() {
                for sub in [0, 1] {
                    vectors.push(vec![a, b, sub]);
                }
            }
        }
        check_add(fmt, &vectors);
    }
}

#[test]
fn lns_add_and_sub_match_the_golden_model_on_random_lns_5_6_pairs() {
    let f = LnsFormat::new(5, 6).unwrap();
    let mut rng = Rng(0x5eed_add5);
    let vectors: Vec<Vec<u64>> = (0..40_000)
        .map(|_| {
            let (a, b) = rng.add_pair(f);
            vec![a, b, rng.below(2)]
        })
        .collect();
    check_add("lns:5:6", &vectors);
}

/// Interleaved accumulations of `lns-kahan` at each stage count (the table in
/// units/lns/mac.rs).
const KAHAN_SLOTS: [usize; 6] = [1, 1, 2, 3, 4, 5];

/// Wraps `d` so that a cycle's step is `in_valid & en`: the harness drives `in_valid` high
/// for every vector, the extra input `en` makes bubbles (cycles without a step).
fn with_bubbles(d: &Design) -> Design {
    let mut ports = vec!["input wire en".to_string()];
    let mut conns = vec![];
    let mut manifest = Manifest::from_json(&d.manifest).unwrap();
    for p in &manifest.ports {
        let (name, w) = (&p.name, p.width);
        let dir = match p.direction {
            Direction::Input => "input",
            Direction::Output => "output",
        };
        let range = if w == 1 {
            String::new()
        } else {
            format!("[{}:0] ", w - 1)
        };
        ports.push(format!("{dir} wire {range}{name}"));
        conns.push(if name == "in_valid" {
            ".in_valid(in_valid & en)".to_string()
        } else {
            format!(".{name}({name})")
        });
    }
    let top = format!("bubbles_{}", d.top);
    let wrapper = format!(
        "module {top} ({});\n    {} dut ({});\nendmodule\n",
        ports.join(", "),
        d.top,
        conns.join(", ")
    );
    // The wrapper's manifest: its name, `en` first as the wrapper declares it.
    manifest.top = top.clone();
    manifest.ports.insert(
        0,
        Port {
            name: "en".into(),
            direction: Direction::Input,
            width: 1,
        },
    );
    let mut verilog = d.verilog.clone();
    verilog.files.push(lpgen_hdl::VerilogFile {
        name: format!("{top}.v"),
        text: wrapper,
    });
    Design {
        top,
        verilog,
        manifest: manifest.to_json(),
    }
}

/// One accumulation slot of the Kahan test: the golden state and the current dot product.
#[derive(Default)]
struct Slot {
    s: u64,
    c: u64,
    left: usize,
    started: bool,
    xs: Vec<u64>,
    ys: Vec<u64>,
}

/// Random dot products of length 1..=50, `slots` of them interleaved round-robin by cycle,
/// with bubbles (and ignored `clear`s in them); vectors [en, a, b, clear] and the expected
/// (sum, overflow, nan) of every step.
fn kahan_plan(r: &Ref, slots: usize, cycles: usize, seed: u64) -> (Vec<Vec<u64>>, Vec<[u64; 3]>) {
    let (f, l) = (r.f, &r.l);
    let mut rng = Rng(seed);
    let mut st: Vec<Slot> = (0..slots)
        .map(|_| Slot {
            s: f.zero(),
            c: f.zero(),
            ..Slot::default()
        })
        .collect();
    let (mut vectors, mut want) = (vec![], vec![]);
    for i in 0..cycles {
        let sl = &mut st[i % slots];
        if rng.below(8) == 0 {
            vectors.push(vec![0, rng.operand(f), rng.operand(f), rng.below(2)]);
            continue;
        }
        // A slot's first dot product may start from the reset state, without clear.
        let clear = sl.left == 0 && (sl.started || rng.below(2) == 0);
        if sl.left == 0 {
            sl.left = 1 + rng.below(50) as usize;
            sl.started = true;
        }
        if clear {
            (sl.s, sl.c) = (f.zero(), f.zero());
            sl.xs.clear();
            sl.ys.clear();
        }
        let (a, b) = (rng.operand(f), rng.operand(f));
        vectors.push(vec![1, a, b, clear as u64]);
        // The step as the hardware computes it, every operation's saturation recorded.
        let (x, o1) = r.mul(a, b);
        let (tmp, o2) = r.add(sl.c, x, false);
        let (t, o3) = r.add(sl.s, tmp, false);
        let (u, o4) = r.add(t, sl.s, true);
        let (c, o5) = r.add(tmp, u, true);
        // ... which is the golden Kahan step.
        let mut k = Kahan {
            sum: sl.s,
            comp: sl.c,
        };
        k.add(l, x);
        assert_eq!((k.sum, k.comp), (t, c));
        (sl.s, sl.c) = (t, c);
        sl.xs.push(a);
        sl.ys.push(b);
        sl.left -= 1;
        if sl.left == 0 {
            // Each dot product starts from the zero state: the golden kahan_dot agrees.
            assert_eq!(kahan_dot(l, &sl.xs, &sl.ys), sl.s);
        }
        let over = o1 || o2 || o3 || o4 || o5;
        want.push([t, over as u64, f.is_nan(t) as u64]);
    }
    (vectors, want)
}

fn check_kahan(fmt: &str, cycles: usize) {
    let f: LnsFormat = match fmt.parse().unwrap() {
        lpgen_golden::Format::Lns(f) => f,
        _ => unreachable!(),
    };
    let r = Ref::new(f);
    for (stages, &slots) in KAHAN_SLOTS.iter().enumerate() {
        let stages = stages as u32;
        let (vectors, want) = kahan_plan(&r, slots, cycles, 0xcafe + stages as u64);
        let d =
            generate(&Params::new(Unit::LnsKahan, fmt.parse().unwrap()).stages(stages)).unwrap();
        assert_eq!(latency(&d), stages);
        let out = common::simulate(
            &with_bubbles(&d),
            &["en", "a", "b", "clear"],
            &["sum", "overflow", "nan"],
            &vectors,
        );
        assert_eq!(out.len(), want.len(), "{fmt} stages {stages}: steps");
        let steps: Vec<(usize, &Vec<u64>)> = vectors
            .iter()
            .enumerate()
            .filter(|(_, v)| v[0] == 1)
            .collect();
        for ((o, w), (cycle, v)) in out.iter().zip(&want).zip(&steps) {
            assert_eq!(
                o.as_slice(),
                w.as_slice(),
                "{fmt} stages {stages}: cycle {cycle} (slot {}) a={:#x} b={:#x} clear={}: \
                 (sum, overflow, nan)",
                cycle % slots,
                v[1],
                v[2],
                v[3]
            );
        }
    }
}

#[test]
fn lns_kahan_matches_the_golden_kahan_on_random_dot_products() {
    check_kahan("lns:5:6", 3000);
}

#[test]
fn lns_kahan_saturates_and_flushes_like_the_golden_kahan_in_lns_3_2() {
    // A narrow range: products and sums saturate and flush often.
    check_kahan("lns:3:2", 3000);
}

#[test]
fn lns_kahan_refuses_deeper_pipelines_in_one_line() {
    let e =
        generate(&Params::new(Unit::LnsKahan, "lns:5:6".parse().unwrap()).stages(6)).unwrap_err();
    assert!(
        e.0.contains("at most 5 pipeline stages") && !e.0.contains('\n'),
        "{e}"
    );
    let e = generate(&Params::new(Unit::LnsAdd, "posit:16".parse().unwrap())).unwrap_err();
    assert!(e.0.contains("needs an LNS format"), "{e}");
}

/// The array PEs (`kahan_pe`, `plain_pe`) in a 1×1 array: back-to-back dot products of
/// length 1..=50 (clear on the first step, last on the final one) against the golden
/// kahan_dot / naive_dot.
#[test]
fn lns_pes_in_a_one_by_one_array_match_the_golden_dot_products() {
    let f = LnsFormat::new(5, 6).unwrap();
    let l = f.ctx();
    let mut rng = Rng(0xa77a7);
    let mut vectors = vec![];
    let mut dots = vec![];
    for _ in 0..100 {
        let k = 1 + rng.below(50) as usize;
        let a: Vec<u64> = (0..k).map(|_| rng.operand(f)).collect();
        let b: Vec<u64> = (0..k).map(|_| rng.operand(f)).collect();
        for j in 0..k {
            vectors.push(vec![a[j], b[j], (j == 0) as u64, (j + 1 == k) as u64]);
        }
        dots.push((a, b));
    }
    for (pe, dot) in [
        (
            PeKind::LnsKahan,
            kahan_dot::<Lns> as fn(&Lns, &[u64], &[u64]) -> u64,
        ),
        (PeKind::LnsPlain, naive_dot::<Lns>),
    ] {
        for stages in [0, 1] {
            let mut p = Params::new(Unit::Array, "lns:5:6".parse().unwrap()).stages(stages);
            p.pe = pe;
            let d = match generate(&p) {
                Ok(d) => d,
                // The array generator is another unit; skip until it is generated.
                Err(e) if e.0.contains("not generated yet") => {
                    eprintln!("skipped: {e}");
                    return;
                }
                Err(e) => panic!("{e}"),
            };
            let out =
                common::simulate(&d, &["a_in", "b_in", "clear", "last"], &["c_out"], &vectors);
            assert_eq!(out.len(), dots.len(), "{} stages {stages}", pe.name());
            for (i, (o, (a, b))) in out.iter().zip(&dots).enumerate() {
                assert_eq!(
                    o[0],
                    dot(&l, a, b),
                    "{} stages {stages}: dot product {i}",
                    pe.name()
                );
            }
        }
    }
}
