//! The overflow flag against the format's own words (docs/formats.md): "results whose rounded
//! log exceeds the largest code saturate to it", and a unit's `overflow` says that happened.
//! The references compute the exact result's log in f64 from the operands' values.

use super::*;
use crate::family_trait::Family;
use crate::sum::{kahan_dot, naive_dot, Kahan};
use crate::SumMode;

/// The rounded code of |x| (x a nonzero f64 value), or None within 1e-6 of a rounding
/// boundary, where f64 cannot decide.
fn rounded_code(f: LnsFormat, x: f64) -> Option<i64> {
    let t = x.abs().log2() * f64::from(1u32 << f.frac_bits);
    ((t - t.floor() - 0.5).abs() > 1e-6).then(|| t.round() as i64)
}

/// Every pair of words of two small formats: the flag is set exactly when the operands are
/// numbers (neither zero nor NaN) and the exact result's rounded code exceeds code_max; the
/// word equals the unflagged operation's.
#[test]
fn overflow_is_the_rounded_code_beyond_the_largest() {
    for (i, fr) in [(2, 2), (3, 3)] {
        let f = LnsFormat::new(i, fr).unwrap();
        let l = f.ctx();
        let number = |w: u64| !f.is_nan(w) && !f.is_zero(w);
        let (mut flagged, mut checked) = (0, 0);
        for a in 0..1u64 << f.width() {
            for b in 0..1u64 << f.width() {
                let (va, vb) = (f.to_f64_exact(a), f.to_f64_exact(b));
                let cases = [
                    (l.add_flagged(a, b), l.add(a, b), va + vb),
                    (l.sub_flagged(a, b), l.sub(a, b), va - vb),
                    (l.mul_flagged(a, b), l.mul(a, b), va * vb),
                    (l.div_flagged(a, b), l.div(a, b), va / vb),
                ];
                for (k, ((y, over), plain, exact)) in cases.into_iter().enumerate() {
                    assert_eq!(y, plain, "{f} {a:#x} {b:#x} op {k}");
                    let want = if !number(a) || !number(b) || exact == 0.0 {
                        Some(false)
                    } else {
                        rounded_code(f, exact).map(|c| c > i64::from(f.code_max()))
                    };
                    if let Some(want) = want {
                        assert_eq!(over, want, "{f} {a:#x} {b:#x} op {k}: {exact}");
                        flagged += usize::from(over);
                        checked += 1;
                    }
                }
            }
        }
        assert!(
            flagged > 100 && checked > 4 * (1 << (2 * f.width())) * 9 / 10,
            "{f}: {flagged}/{checked}"
        );
    }
}

/// The lns-kahan step: the golden Kahan dot product's running sum, and a flag that is the
/// OR of its five operations' flags, each operation written out from the algorithm's
/// statement (seed 000 §2.6.1: tmp = c + x; t = s + tmp; c = tmp − (t − s)).
#[test]
fn kahan_step_flags_its_five_operations() {
    let f = LnsFormat::new(3, 4).unwrap();
    let l = f.ctx();
    let mut next = crate::test_words(0x6b61_6861_6e21);
    let mask = (1u64 << f.width()) - 1;
    let mut flagged = 0;
    for len in 1..60 {
        let a: Vec<u64> = (0..len).map(|_| next() & mask).collect();
        let b: Vec<u64> = (0..len).map(|_| next() & mask).collect();
        let mut k = Kahan::new(&l);
        let (mut s, mut c) = (f.zero(), f.zero());
        let run = Family::running_dot(&l, SumMode::Kahan, &a, &b).unwrap();
        for j in 0..len {
            let over = l.kahan_mac_flagged(&mut k, a[j], b[j]);
            let (x, o1) = l.mul_flagged(a[j], b[j]);
            let (tmp, o2) = l.add_flagged(c, x);
            let (t, o3) = l.add_flagged(s, tmp);
            let (u, o4) = l.sub_flagged(t, s);
            let (c2, o5) = l.sub_flagged(tmp, u);
            (s, c) = (t, c2);
            assert_eq!((k.sum, k.comp, over), (s, c, o1 | o2 | o3 | o4 | o5));
            assert_eq!(k.sum, kahan_dot(&l, &a[..=j], &b[..=j]));
            assert_eq!(run.words[j], k.sum);
            assert_eq!(run.overflow.as_ref().unwrap()[j], over);
            flagged += usize::from(over);
        }
        let naive = Family::running_dot(&l, SumMode::Naive, &a, &b).unwrap();
        let mut acc = f.zero();
        for j in 0..len {
            let (p, o1) = l.mul_flagged(a[j], b[j]);
            let (s2, o2) = l.add_flagged(acc, p);
            acc = s2;
            assert_eq!(naive.words[j], naive_dot(&l, &a[..=j], &b[..=j]));
            assert_eq!(naive.overflow.as_ref().unwrap()[j], o1 | o2);
        }
    }
    assert!(flagged > 50, "{flagged}");
}
