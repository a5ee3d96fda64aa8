//! Quires: random and tie-making dot products against their exact sums.

use super::*;
use lpgen_golden::Family;

/// One step of a dot product.
#[derive(Clone, Copy, Debug)]
enum Step {
    AddProduct(u64, u64),
    SubProduct(u64, u64),
    AddPosit(u64),
}

/// A random operand for a dot product of the given style.
fn dot_operand(rng: &mut Pcg64, fmt: &PositFormat, style: u32, nar_allowed: bool) -> u64 {
    let mask = fmt.mask();
    let specials = [
        0,
        1,
        mask,
        fmt.maxpos(),
        fmt.nar() + 1,
        fmt.one(),
        fmt.one().wrapping_neg() & mask,
    ];
    loop {
        let p = match (style, rng.gen_range(0..32)) {
            (_, 0) => specials[rng.gen_range(0..specials.len())],
            (_, 1) if nar_allowed => fmt.nar(),
            // Near ±1: sums with much cancellation and many rounding cases.
            (0, _) => {
                let off = rng.gen_range(0..1u64 << (fmt.n - 3));
                let p = fmt.one().wrapping_add(off).wrapping_sub(1 << (fmt.n - 4)) & mask;
                if rng.gen() {
                    p
                } else {
                    p.wrapping_neg() & mask
                }
            }
            // Near ±minpos: tiny sums, rounding around minpos and, for :u, to zero.
            (1, _) => {
                let p = rng.gen_range(1..64u64.min(fmt.maxpos()));
                if rng.gen() {
                    p
                } else {
                    p.wrapping_neg() & mask
                }
            }
            // Any pattern.
            _ => rng.gen::<u64>() & mask,
        };
        if p != fmt.nar() || nar_allowed {
            return p;
        }
    }
}

/// A random dot product of 1..=64 steps. One in 16 ends by undoing every step, so that its
/// sum is exactly 0; two in 16 also add a posit and the distance to the bit-string midpoint
/// above it, so that the sum is a tie.
fn random_dot(rng: &mut Pcg64, fmt: &PositFormat, r: &Reference) -> Vec<Step> {
    let len: usize = rng.gen_range(1..=64);
    let style = rng.gen_range(0..3);
    let nar_allowed = rng.gen_ratio(1, 20);
    let ending = rng.gen_range(0..16);
    let mut steps = if ending == 1 || ending == 2 {
        tie_steps(rng, fmt, r)
    } else {
        Vec::new()
    };
    let len = if ending <= 2 { len.div_ceil(2) } else { len };
    let first = steps.len();
    while steps.len() < len {
        let a = dot_operand(rng, fmt, style, nar_allowed);
        let b = dot_operand(rng, fmt, style, nar_allowed);
        steps.push(match rng.gen_range(0..16) {
            0 => Step::AddPosit(a),
            // Undo an earlier product, so that the sum cancels.
            1 | 2 if !steps.is_empty() => undo(fmt, steps[rng.gen_range(0..steps.len())]),
            3..=9 => Step::AddProduct(a, b),
            _ => Step::SubProduct(a, b),
        });
    }
    if ending <= 2 {
        let undo: Vec<Step> = steps[first..].iter().rev().map(|&s| undo(fmt, s)).collect();
        steps.extend(undo);
    }
    steps
}

/// ±(x + d), where x is a posit and d, also a posit, is the distance from x to the midpoint
/// between x and the next posit.
fn tie_steps(rng: &mut Pcg64, fmt: &PositFormat, r: &Reference) -> Vec<Step> {
    loop {
        let i = rng.gen_range(1..r.maxi());
        let d = r.midpoint(i).sub(&r.value(i));
        let p = r.round(&Exact::Dyadic(d.clone()));
        if r.operand(p).is_some_and(|v| *v == d) {
            let one = fmt.one();
            return if rng.gen() {
                vec![Step::AddPosit(r.word(i)), Step::AddProduct(p, one)]
            } else {
                vec![Step::AddPosit(r.word(-i)), Step::SubProduct(p, one)]
            };
        }
    }
}

fn undo(fmt: &PositFormat, s: Step) -> Step {
    match s {
        Step::AddProduct(a, b) => Step::SubProduct(a, b),
        Step::SubProduct(a, b) => Step::AddProduct(a, b),
        Step::AddPosit(a) => Step::AddPosit(fmt.neg(a)),
    }
}

/// The exact value of a dot product; `None` if an operand is NaR.
fn exact_dot(r: &Reference, steps: &[Step]) -> Option<Dyadic> {
    let mut sum = Dyadic::zero();
    for &s in steps {
        let term = match s {
            Step::AddProduct(a, b) => r.operand(a)?.mul(&*r.operand(b)?),
            Step::SubProduct(a, b) => r.operand(a)?.mul(&*r.operand(b)?).neg(),
            Step::AddPosit(a) => r.operand(a)?.into_owned(),
        };
        sum = sum.add(&term);
    }
    Some(sum)
}

fn golden_dot(fmt: PositFormat, steps: &[Step]) -> Quire {
    let mut q = Quire::new(fmt);
    for &s in steps {
        match s {
            Step::AddProduct(a, b) => q.add_product(a, b),
            Step::SubProduct(a, b) => q.sub_product(a, b),
            Step::AddPosit(a) => q.add_word(a),
        }
    }
    q
}

/// Random dot products: the quire holds the exact sum (scaled by 2^quire_frac_bits) and reads
/// out its reference rounding.
fn check_quire(fmt: PositFormat, dots: usize) {
    let r = Reference::new(&fmt);
    let qfb = fmt.quire_frac_bits();
    let mut rng = Pcg64::seed_from_u64(seed() ^ u64::from(fmt.n << 8 | fmt.es));
    let (mut nar, mut zero, mut inexact, mut ties) = (0, 0, 0, 0);
    for _ in 0..dots {
        let steps = random_dot(&mut rng, &fmt, &r);
        let q = golden_dot(fmt, &steps);
        let ctx = || format!("{fmt}, seed {:#x}, steps {steps:x?}", seed());
        match exact_dot(&r, &steps) {
            None => {
                nar += 1;
                assert_eq!(q.to_bigint(), None, "{}", ctx());
                assert_eq!(q.to_word(), fmt.nar(), "{}", ctx());
            }
            Some(sum) => {
                let scaled = sum
                    .scaled(qfb)
                    .unwrap_or_else(|| panic!("{}: sum {sum:?} has bits below the quire", ctx()));
                assert_eq!(q.to_bigint(), Some(scaled), "quire contents, {}", ctx());
                let want = r.round(&Exact::Dyadic(sum.clone()));
                let got = q.to_word();
                assert_eq!(
                    got,
                    want,
                    "read-out {} vs reference {} of {sum:?}, {}",
                    hex(&fmt, got),
                    hex(&fmt, want),
                    ctx()
                );
                zero += sum.is_zero() as u32;
                inexact += (r.operand(got).is_some_and(|v| *v != sum)) as u32;
                let i = ((got << (64 - fmt.n)) as i64) >> (64 - fmt.n);
                ties += (i.abs() < r.maxi() && (*r.midpoint(i) == sum || *r.midpoint(i - 1) == sum))
                    as u32;
            }
        }
    }
    // The sums covered NaR, exact zeros, rounding and ties.
    assert!(
        nar > 0 && zero > 0 && inexact > dots as u32 / 4 && ties > dots as u32 / 20,
        "{fmt}: {nar} NaR, {zero} zero, {inexact} inexact, {ties} tied sums"
    );
}

#[test]
fn quire_sizes() {
    // quire_frac_bits = 2·(N-2)·2^es, enough for minpos²; the carry guard is N-1 bits in the
    // 2017 draft and 31 in the 2022 standard; plus a sign bit and as many integer bits.
    for n in 3..=32 {
        for es in 0..=(n - 3).min(5) {
            let fmt = draft(n, es);
            assert_eq!(fmt.quire_frac_bits(), (2 * (n - 2)) << es, "{fmt}");
            assert_eq!(fmt.quire_bits(), 1 + (n - 1) + 4 * ((n - 2) << es), "{fmt}");
        }
        let fmt = std2022(n, false);
        assert_eq!(fmt.quire_bits(), 1 + 31 + 4 * ((n - 2) << 2), "{fmt}");
        assert_eq!(fmt.quire_bits(), 16 * n, "{fmt}");
    }
    // N²/2 for the draft's recommended es.
    for (n, es) in [(8, 0), (16, 1), (32, 2)] {
        assert_eq!(draft(n, es).quire_bits(), n * n / 2);
    }
}

#[test]
fn quire_posit_16_and_32_of_the_2022_standard() {
    assert_eq!(std2022(16, false).quire_bits(), 256);
    assert_eq!(std2022(32, false).quire_bits(), 512);
    check_quire(std2022(16, false), 3000);
    check_quire(std2022(32, false), 3000);
}

#[test]
fn quire_draft_formats() {
    assert_eq!(draft(16, 1).quire_bits(), 128);
    assert_eq!(draft_u(8, 2).quire_bits(), 1 + 7 + 2 * 2 * 6 * 4);
    for fmt in [
        draft(16, 1),
        draft_u(8, 2),
        draft(8, 0),
        draft(10, 3),
        draft(12, 5),
        draft(32, 2),
        draft_u(16, 1),
        std2022(12, true),
    ] {
        check_quire(fmt, 2000);
    }
}

#[test]
fn quire_reads_tiny_posit_32_sums() {
    // Sums below 2^-112, where softposit 0.4's Q32E2 reads 0 (see posit_softposit.rs).
    for fmt in [draft(32, 2), std2022(32, false)] {
        let r = Reference::new(&fmt);
        let mut q = Quire::new(fmt);
        q.sub_product(0xffff_ffff, 0x5a15_df2f);
        assert_eq!(q.to_word(), 2);
        let sum = exact_dot(&r, &[Step::SubProduct(0xffff_ffff, 0x5a15_df2f)]).unwrap();
        assert_eq!(r.round(&Exact::Dyadic(sum)), 2);
        let mut rng = Pcg64::seed_from_u64(seed() ^ 0x7149);
        for _ in 0..2000 {
            // Products of two operands of scale about -60 or of minpos and a small one.
            let steps: Vec<Step> = (0..rng.gen_range(1..4))
                .map(|_| {
                    let a = rng.gen_range(0x0000_0001..0x0800_0000u64);
                    let b = if rng.gen() {
                        rng.gen_range(0x4000_0000..0x7000_0000)
                    } else {
                        a
                    };
                    if rng.gen() {
                        Step::AddProduct(a, b)
                    } else {
                        Step::SubProduct(a, b)
                    }
                })
                .collect();
            let sum = exact_dot(&r, &steps).unwrap();
            let q = golden_dot(fmt, &steps);
            assert_eq!(
                q.to_bigint(),
                sum.scaled(fmt.quire_frac_bits()),
                "{steps:x?}"
            );
            assert_eq!(q.to_word(), r.round(&Exact::Dyadic(sum)), "{steps:x?}");
        }
    }
}

#[test]
fn quire_wraps_modulo_its_width() {
    // posit:8:0: 32-bit quire, 12 fraction bits, maxpos² = 2^12 = 2^24 quire units.
    let fmt = draft(8, 0);
    assert_eq!(fmt.quire_bits(), 32);
    let maxpos = fmt.maxpos();
    let half = fmt.from_f64(32.0);
    let mut q = Quire::new(fmt);
    for _ in 0..127 {
        q.add_product(maxpos, maxpos);
    }
    assert_eq!(q.to_bigint(), Some(BigInt::from((1i64 << 31) - (1 << 24))));
    q.add_product(maxpos, half); // + 2^23 units
    q.add_product(maxpos, maxpos); // 2^31 + 2^23 wraps to -(2^31 - 2^23)
    assert_eq!(q.to_bigint(), Some(-BigInt::from((1i64 << 31) - (1 << 23))));
    assert_eq!(q.to_word(), fmt.neg(maxpos));
    // Bits that wrap to exactly 2^31, the standard's NaR pattern 10…0, read out as NaR.
    let mut q = Quire::new(fmt);
    for _ in 0..128 {
        q.add_product(maxpos, maxpos);
    }
    assert_eq!(q.to_word(), fmt.nar());
}
