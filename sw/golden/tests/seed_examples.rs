//! The worked examples of the seeds, as SPEC.md and the foundation issue quote them.

use lpgen_golden::Family;
use lpgen_golden::{Format, SumMode};

fn calc(s: &str) -> lpgen_golden::Calc {
    s.parse::<Format>().unwrap().calc()
}

#[test]
fn lns_5_6_add_and_mul_of_seed_000_table_4_10() {
    let c = calc("lns:5:6");
    let v = |x: f64| c.from_f64(x);
    let sum = c.to_f64(c.add(v(98.0), v(2.0)));
    let prod = c.to_f64(c.mul(v(10.0), v(10.0)));
    assert!((sum - 99.776).abs() < 0.001, "98 + 2 = {sum}");
    assert!((prod - 100.863).abs() < 0.001, "10 * 10 = {prod}");
}

#[test]
fn reduced_precision_mode_reproduces_table_4_10() {
    // Seed 000 §4.5: lns:5:6 arithmetic with the low 6-n bits of the log cleared after every
    // operation (conversion included). Table 4.10 gives 98 + 2 and 10 * 10 to 2 decimals.
    let rows = [
        (6, 99.78, 100.86),
        (5, 98.70, 98.70),
        (4, 94.52, 98.70),
        (3, 90.51, 90.51),
        (2, 90.51, 90.51),
        (1, 90.51, 64.00),
        (0, 64.00, 64.00),
    ];
    let f = lpgen_golden::LnsFormat::new(5, 6).unwrap();
    let l = f.ctx();
    for (n, add, mul) in rows {
        let v = |x: f64| l.clear_low_bits(f.from_f64(x), n);
        let s = f.to_f64(l.clear_low_bits(l.add(v(98.0), v(2.0)), n));
        let p = f.to_f64(l.clear_low_bits(l.mul(v(10.0), v(10.0)), n));
        assert!((s - add).abs() < 0.006, "n={n}: 98 + 2 = {s}, table {add}");
        assert!((p - mul).abs() < 0.006, "n={n}: 10 * 10 = {p}, table {mul}");
    }
}

#[test]
fn thousand_ones_naive_stalls_kahan_and_pairwise_recover() {
    let c = calc("lns:5:6");
    let ones = vec![c.one(); 1000];
    let naive = c.to_f64(c.sum(SumMode::Naive, &ones).unwrap());
    let kahan = c.to_f64(c.sum(SumMode::Kahan, &ones).unwrap());
    let pairwise = c.to_f64(c.sum(SumMode::Pairwise, &ones).unwrap());
    assert!(naive < 200.0, "naive {naive}");
    assert!((kahan - 1000.0).abs() < 10.0, "kahan {kahan}");
    assert!((pairwise - 1000.0).abs() < 5.0, "pairwise {pairwise}");
}

#[test]
fn posit_8_0_quire_example_of_seed_004_eq_4_1() {
    let c = calc("posit:8:0");
    let a: Vec<_> = [2.0, 2.0, 2.0, 2.0]
        .iter()
        .map(|&x| c.from_f64(x))
        .collect();
    let b: Vec<_> = [10.0, 10.0, 10.0, 2.0]
        .iter()
        .map(|&x| c.from_f64(x))
        .collect();
    let naive = c.to_f64(c.dot(SumMode::Naive, &a, &b).unwrap());
    let quire = c.to_f64(c.dot(SumMode::Quire, &a, &b).unwrap());
    assert_eq!(naive, 32.0);
    assert_eq!(quire, 64.0);
    // The intermediate steps of eq. 4.2: 2×10 → 16, 32 + 16 → 32.
    assert_eq!(c.to_f64(c.mul(c.from_f64(2.0), c.from_f64(10.0))), 16.0);
    assert_eq!(c.to_f64(c.add(c.from_f64(32.0), c.from_f64(16.0))), 32.0);
}
