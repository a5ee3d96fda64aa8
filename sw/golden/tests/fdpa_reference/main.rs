//! The mode `fdpa` (issue 49) against a reference written in this test from the issue's
//! "The arithmetic" with exact rationals (`reference.rs`), and the presets table
//! restated here:
//!
//! - random chunks per preset and operand format (one chunk with a random C, several
//!   chunks, and `:promoteN`), with operands drawn in exponent bands so that alignment,
//!   truncation, cancellation, subnormals, zeros at e_zero and specials all occur;
//! - given chunkings with `rne-f16` (ties), small F, and fp6/fp4 operands;
//! - corner cases written out: ties, subnormals, cancellation to zero, −0, NaN and ∞
//!   (∞·0, ∞ − ∞), C terms, promotion, tf32 reading.
//!
//! `FDPA_CHUNKS` sets the random chunks per case (default 2000, under a second);
//! the 10^5: `FDPA_CHUNKS=100000 cargo test --release -p lpgen-golden --test
//! fdpa_reference`.

mod reference;

use lpgen_golden::float::fdpa::Fdpa;
use lpgen_golden::{Bits, Calc, Format, SumMode};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use reference::{fdpa, Fmt, Rho, Spec};

/// The presets table: (preset, operand format, L, F, RHO).
const PRESETS: &[(&str, &str, usize, i64, Rho)] = &[
    ("volta", "f16", 4, 23, Rho::RzF32),
    ("ampere", "f16", 8, 24, Rho::RzF32),
    ("ampere", "bf16", 8, 24, Rho::RzF32),
    ("ampere", "float:8:10", 4, 24, Rho::RzF32),
    ("ampere", "float:8:23", 4, 24, Rho::RzF32),
    ("ada", "f16", 8, 24, Rho::RzF32),
    ("ada", "bf16", 8, 24, Rho::RzF32),
    ("ada", "fp8:e4m3", 16, 13, Rho::RzE8m13),
    ("ada", "fp8:e5m2", 16, 13, Rho::RzE8m13),
    ("hopper", "f16", 16, 25, Rho::RzF32),
    ("hopper", "bf16", 16, 25, Rho::RzF32),
    ("hopper", "fp8:e4m3", 32, 13, Rho::RzE8m13),
    ("hopper", "fp8:e5m2", 32, 13, Rho::RzE8m13),
    ("blackwell", "f16", 16, 25, Rho::RzF32),
    ("blackwell", "bf16", 16, 25, Rho::RzF32),
    ("blackwell", "fp8:e4m3", 32, 25, Rho::RzF32),
    ("blackwell", "fp8:e5m2", 32, 25, Rho::RzF32),
];

/// Given chunkings: (L:F:RHO, operand format, L, F, RHO).
const GIVEN: &[(&str, &str, usize, i64, Rho)] = &[
    ("8:30:rne-f16", "f16", 8, 30, Rho::RneF16),
    ("4:5:rne-f16", "f16", 4, 5, Rho::RneF16),
    ("5:11:rne-f16", "fp8:e4m3", 5, 11, Rho::RneF16),
    ("4:3:rz-f32", "bf16", 4, 3, Rho::RzF32),
    ("6:13:rz-e8m13", "float:3:2:nonan", 6, 13, Rho::RzE8m13),
    ("3:8:rz-f32", "float:2:1:nonan", 3, 8, Rho::RzF32),
    ("7:20:rz-f32", "float:4:3:ftz", 7, 20, Rho::RzF32),
];

fn chunks() -> usize {
    std::env::var("FDPA_CHUNKS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2000)
}

/// A case: the mode string, the format, and what the test says it computes.
struct Case {
    mode: Fdpa,
    format: Format,
    calc: Calc,
    fmt: Fmt,
    spec: Spec,
}

impl Case {
    fn new(mode: &str, format: &str, spec: Spec) -> Case {
        let SumMode::Fdpa(m) = mode.parse::<SumMode>().unwrap() else {
            panic!("{mode} is not fdpa")
        };
        let format: Format = format.parse().unwrap();
        let Format::Float(f) = format else {
            panic!("{format} is not a float")
        };
        let fmt = Fmt {
            e: f.exp_bits,
            m: f.frac_bits,
            fin: f.finite,
            nonan: f.no_nan,
            ftz: f.ftz,
        };
        Case {
            mode: m,
            format,
            calc: format.calc(),
            fmt,
            spec,
        }
    }

    fn out_bits(&self) -> (u32, u32) {
        match self.spec.rho {
            Rho::RzF32 | Rho::RzE8m13 => (8, 23),
            Rho::RneF16 => (5, 10),
        }
    }

    /// The model's word against the reference's; the message on a mismatch.
    fn check(&self, a: &[Bits], b: &[Bits], c: Bits) -> Result<(), String> {
        let (got, _) = self.calc.fdpa(self.mode, a, b, c).unwrap();
        let want = fdpa(&self.spec, self.fmt, a, b, c);
        if got == want {
            return Ok(());
        }
        Err(format!(
            "{} on {}: a = {a:x?}, b = {b:x?}, C = {c:#x}: got {got:#x}, want {want:#x}",
            self.mode, self.format
        ))
    }
}

fn spec(l: usize, f: i64, rho: Rho, promote: Option<usize>, tf32: bool) -> Spec {
    Spec {
        l,
        f,
        rho,
        promote,
        tf32,
    }
}

/// Every case: the presets, the given chunkings, each with and without promotion.
fn cases(promote: bool) -> Vec<Case> {
    let mut out = Vec::new();
    for &(p, f, l, ff, rho) in PRESETS {
        let tf32 = f == "float:8:23";
        if promote {
            let n = 2 * l;
            let mode = format!("fdpa:{p}:promote{n}");
            out.push(Case::new(&mode, f, spec(l, ff, rho, Some(n), tf32)));
        } else {
            out.push(Case::new(
                &format!("fdpa:{p}"),
                f,
                spec(l, ff, rho, None, tf32),
            ));
        }
    }
    for &(g, f, l, ff, rho) in GIVEN {
        match (promote, rho) {
            (true, Rho::RneF16) => {}
            (true, _) => {
                let mode = format!("fdpa:{g}:promote{}", 3 * l);
                out.push(Case::new(&mode, f, spec(l, ff, rho, Some(3 * l), false)));
            }
            (false, _) => out.push(Case::new(
                &format!("fdpa:{g}"),
                f,
                spec(l, ff, rho, None, false),
            )),
        }
    }
    out
}

/// Random words of an (E, M) format in a band of exponent fields: mostly finite, some zeros,
/// subnormals and specials.
struct Words {
    rng: Pcg64,
}

impl Words {
    /// A band: (centre field, half-width) for one chunk.
    fn band(&mut self, e: u32) -> (i64, i64) {
        let top = (1i64 << e) - 1;
        let w = [0, 1, 3, 8, top][self.rng.gen_range(0..5)];
        (self.rng.gen_range(0..=top), w)
    }

    fn word(&mut self, e: u32, m: u32, (c, w): (i64, i64)) -> Bits {
        let r = &mut self.rng;
        let sign = u64::from(r.gen_bool(0.5)) << (e + m);
        let top = (1i64 << e) - 1;
        let frac = r.gen_range(0..1u64 << m);
        let field = match r.gen_range(0..1000) {
            0..=29 => return sign,                             // ±0
            30..=34 => return sign | (top as u64) << m | frac, // a special, or the top binade
            35..=84 => 0,                                      // subnormal
            _ => (c + r.gen_range(-w..=w)).clamp(0, top - 1),
        };
        sign | (field as u64) << m | frac
    }

    /// C for a chunk of products in band `b` of a format with `e` exponent bits: near the
    /// products' scale, or a zero, a subnormal, a special.
    fn c(&mut self, (oe, om): (u32, u32), e: u32, (c, _): (i64, i64)) -> Bits {
        let bias = (1i64 << (e - 1)) - 1;
        let obias = (1i64 << (oe - 1)) - 1;
        let centre = 2 * (c - bias) + obias + self.rng.gen_range(-12..=12);
        let band = match self.rng.gen_range(0..10) {
            0 => return u64::from(self.rng.gen_bool(0.5)) << (oe + om),
            1 => ((1i64 << oe) - 1, 0),
            2 => (0, 0),
            _ => (centre, 0),
        };
        self.word(oe, om, band)
    }
}

/// `n` random dot products of K = `k(L)` terms per case, each with a random C.
fn random_cases(promote: bool, k: impl Fn(usize, &mut Pcg64) -> usize, n: usize, seed: u64) {
    let mut words = Words {
        rng: Pcg64::seed_from_u64(seed),
    };
    let mut bad = Vec::new();
    let mut count = 0;
    for case in cases(promote) {
        let (e, m) = (case.fmt.e, case.fmt.m);
        for _ in 0..n {
            let k = k(case.spec.promote.unwrap_or(case.spec.l), &mut words.rng);
            let band = words.band(e);
            let a: Vec<Bits> = (0..k).map(|_| words.word(e, m, band)).collect();
            let b: Vec<Bits> = (0..k).map(|_| words.word(e, m, band)).collect();
            let c = words.c(case.out_bits(), e, band);
            count += 1;
            if let Err(s) = case.check(&a, &b, c) {
                bad.push(s);
            }
        }
    }
    eprintln!("{count} dot products, {} mismatches", bad.len());
    assert!(
        bad.is_empty(),
        "{} mismatches, e.g.\n{}",
        bad.len(),
        bad[..bad.len().min(5)].join("\n")
    );
}

/// One chunk of L products plus C per step, `FDPA_CHUNKS` per case.
#[test]
fn random_chunks_equal_the_reference() {
    random_cases(false, |l, _| l, chunks(), 49);
}

/// Several chunks (and a partial last one) from C.
#[test]
fn random_chains_of_chunks_equal_the_reference() {
    random_cases(false, |l, r| r.gen_range(0..=3 * l + 2), chunks() / 4, 50);
}

/// `:promoteN`: groups of N products chunked from 0, added into binary32 from C.
#[test]
fn random_promotions_equal_the_reference() {
    random_cases(true, |n, r| r.gen_range(0..=3 * n + 5), chunks() / 8, 51);
}

mod corners;
