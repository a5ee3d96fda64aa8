//! Seed 001's 1-bit quantizer (`lpgen_golden::onebit`) against the rules of `docs/formats.md`:
//! hand-computed columns, the error-feedback identity, the mean's single rounding, packing and
//! the transfer format, and an independent plain-f32 implementation of the same algorithm.

use lpgen_golden::onebit::{self, Quantized, Quantizer, Recon};
use lpgen_golden::{Bits, Calc, Format, SumMode, F32};
use num_bigint::BigUint;
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

fn q(format: &str, mode: SumMode) -> Quantizer {
    Quantizer::new(format.parse().unwrap(), mode).unwrap()
}

fn words(c: &Calc, xs: &[f64]) -> Vec<Bits> {
    xs.iter().map(|&x| c.from_f64(x)).collect()
}

fn values(c: &Calc, ws: &[Bits]) -> Vec<f64> {
    ws.iter().map(|&w| c.to_f64(w)).collect()
}

/// Two steps of error feedback on a column where every operation is exact: the residuals carry
/// the error, and Σ g_t = Σ dequantized_t + r_T holds exactly (the telescoping of §3).
#[test]
fn two_exact_steps_by_hand() {
    let q = q("f32", SumMode::Naive);
    let c = *q.calc();
    let mut r = words(&c, &[0.0; 4]);
    let mut bits = [0u32];
    let g1 = words(&c, &[1.0, 3.0, -2.0, -4.0]);
    let rec1 = q.column(&g1, Some(&mut r), &mut bits);
    assert_eq!(bits[0], 0b0011);
    assert_eq!(values(&c, &[rec1.neg, rec1.pos]), [-3.0, 2.0]);
    assert_eq!(values(&c, &r), [-1.0, 1.0, 1.0, -1.0]);

    let g2 = words(&c, &[0.5, -0.5, 0.25, 0.75]);
    let rec2 = q.column(&g2, Some(&mut r), &mut bits);
    // v = [-0.5, 0.5, 1.25, -0.25]: pos side {0.5, 1.25}, neg side {-0.5, -0.25}.
    assert_eq!(bits[0], 0b0110);
    assert_eq!(values(&c, &[rec2.neg, rec2.pos]), [-0.375, 0.875]);
    assert_eq!(values(&c, &r), [-0.125, -0.375, 0.375, 0.125]);
    let deq =
        |rec: Recon, b: u32, i: usize| c.to_f64(if b >> i & 1 == 1 { rec.pos } else { rec.neg });
    for i in 0..4 {
        let sent = deq(rec1, 0b0011, i) + deq(rec2, 0b0110, i);
        assert_eq!(c.to_f64(g1[i]) + c.to_f64(g2[i]), sent + c.to_f64(r[i]));
    }
}

/// Without error feedback v = g, nothing is kept; zero and −0 are on the bit-1 side, NaN on
/// bit 0 (its side's mean becomes NaN); an empty side reconstructs as zero.
#[test]
fn sides_zero_nan_and_empty() {
    let q = q("f32", SumMode::Naive);
    let c = *q.calc();
    let mut bits = [0u32];
    let g = words(&c, &[0.0, -0.0, 2.0, -1.0]);
    let rec = q.column(&g, None, &mut bits);
    assert_eq!(bits[0], 0b0111);
    assert_eq!(
        values(&c, &[rec.neg, rec.pos]),
        [-1.0, (2.0f32 / 3.0) as f64]
    );

    let g = words(&c, &[f64::NAN, 1.0, -3.0]);
    let rec = q.column(&g, None, &mut bits);
    assert_eq!(bits[0], 0b010);
    assert!(c.is_nan(rec.neg));
    assert_eq!(c.to_f64(rec.pos), 1.0);

    let g = words(&c, &[1.0, 2.0]);
    let rec = q.column(&g, None, &mut bits);
    assert_eq!((rec.neg, c.to_f64(rec.pos)), (c.zero(), 1.5));

    let rec = q.column(&[], None, &mut []);
    assert_eq!((rec.neg, rec.pos), (c.zero(), c.zero()));
}

#[test]
fn golden_formats_by_hand() {
    // posit:16: NaR is on the bit-0 side and poisons its mean and residuals.
    let q16 = q("posit:16", SumMode::Quire);
    let c = *q16.calc();
    let g = vec![c.from_f64(-1.0), c.from_f64(0.0), 0x8000, c.from_f64(3.0)];
    let mut r = vec![0; 4];
    let mut bits = [0u32];
    let rec = q16.column(&g, Some(&mut r), &mut bits);
    assert_eq!(bits[0], 0b1010);
    assert_eq!((rec.neg, c.to_f64(rec.pos)), (0x8000, 1.5));
    assert_eq!(values(&c, &[r[1], r[3]]), [-1.5, 1.5]);
    assert!(c.is_nan(r[0]) && c.is_nan(r[2]));

    // lns:5:6: zero has no sign and goes to bit 1; 1 + 2 + 0 over three is 1 exactly.
    let ql = q("lns:5:6", SumMode::Kahan);
    let c = *ql.calc();
    let g = words(&c, &[0.0, 1.0, 2.0, -4.0]);
    let rec = ql.column(&g, None, &mut bits);
    assert_eq!(bits[0], 0b0111);
    assert_eq!(values(&c, &[rec.neg, rec.pos]), [-4.0, 1.0]);
}

/// fix:I:F: the mean is the exact quotient rounded once (nearest, ties to even) and saturated,
/// also for counts the format cannot hold (784 > 127.99 of fix:7:8), checked in integers.
#[test]
fn fix_mean_is_the_exact_quotient_rounded_once() {
    let q = q("fix:7:8", SumMode::Naive);
    let c = *q.calc();
    for count in [1usize, 2, 3, 7, 256, 784, 1000, 1 << 20] {
        for code in 0..1u64 << 16 {
            let a = (code as i64) << 48 >> 48; // the integer of a/256
            let (n, qt, rem) = (
                count as i64,
                a.div_euclid(count as i64),
                a.rem_euclid(count as i64),
            );
            let up = 2 * rem > n || (2 * rem == n && qt & 1 == 1);
            let expect = c.from_f64((qt + up as i64) as f64 / 256.0);
            assert_eq!(q.mean(code, count), expect, "{a}/256 / {count}");
        }
    }
}

/// posit and LNS: the mean equals the format's own correctly rounded result (from the exact
/// ratio; LNS: the format's division by the count where the count converts exactly).
#[test]
fn posit_and_lns_means() {
    for f in ["posit:8", "posit:16", "posit:8:0"] {
        let q = q(f, SumMode::Naive);
        let c = *q.calc();
        let mut rng = Pcg64::seed_from_u64(1);
        for _ in 0..2000 {
            let w = rng.gen::<u64>() & ((1 << c.format().width()) - 1);
            let count = rng.gen_range(1..2000usize);
            let expect = if c.is_nan(w) || c.to_f64(w) == 0.0 {
                w
            } else {
                let s = c.to_f64(w);
                let (num, den) = lpgen_golden::exact::f64_ratio(s);
                c.from_ratio(&lpgen_golden::exact::Ratio {
                    neg: s < 0.0,
                    num,
                    den: den * BigUint::from(count),
                })
            };
            assert_eq!(q.mean(w, count), expect, "{f} {w:#x} / {count}");
        }
    }
    // docs/formats.md's examples: posit:16 holds the counts 784 and 1024, posit:8 rounds 784.
    let p16 = "posit:16".parse::<Format>().unwrap().calc();
    let p8 = "posit:8".parse::<Format>().unwrap().calc();
    assert_eq!(
        values(&p16, &words(&p16, &[784.0, 1024.0])),
        [784.0, 1024.0]
    );
    assert_eq!(values(&p8, &words(&p8, &[784.0])), [768.0]);

    let q = q("lns:5:6", SumMode::Naive);
    let c = *q.calc();
    for w in 0..1u64 << 13 {
        for count in [2usize, 3, 5, 784, 1000] {
            assert_eq!(
                q.mean(w, count),
                c.div(w, c.from_f64(count as f64)),
                "{w:#x}"
            );
        }
    }
}

#[test]
fn packing_is_lsb_first_and_round_trips() {
    assert_eq!(onebit::pack(&[true, false, true]), [0b101]);
    let mut bits = vec![false; 33];
    bits[32] = true;
    bits[31] = true;
    assert_eq!(onebit::pack(&bits), [1 << 31, 1]);
    let mut rng = Pcg64::seed_from_u64(2);
    for n in [0usize, 1, 31, 32, 33, 64, 100, 784] {
        let bits: Vec<bool> = (0..n).map(|_| rng.gen()).collect();
        let words = onebit::pack(&bits);
        assert_eq!(words.len(), n.div_ceil(32));
        assert_eq!(onebit::unpack(&words, n), bits);
        if n % 32 != 0 {
            assert_eq!(words[words.len() - 1] >> (n % 32), 0, "padding zero");
        }
    }
}

#[test]
fn byte_counts_and_transfer_round_trip() {
    let f32f = Format::F32(F32);
    // 784 rows: 25 words of bits + two f32 = 108 bytes against 3136 as f32: 29.0x less.
    assert_eq!(onebit::message_bytes(f32f, 784, 1), 108);
    assert_eq!(onebit::message_bytes(f32f, 1024, 784), 784 * (128 + 8));
    assert_eq!(
        onebit::message_bytes("lns:5:6".parse().unwrap(), 10, 3),
        3 * (4 + 4)
    );
    assert_eq!(
        onebit::message_bytes("posit:8".parse().unwrap(), 33, 2),
        2 * (8 + 2)
    );

    let mut rng = Pcg64::seed_from_u64(3);
    for f in ["f32", "lns:5:6", "posit:8", "fix:7:8"] {
        let format: Format = f.parse().unwrap();
        let q = Quantizer::new(format, SumMode::Naive).unwrap();
        let c = *q.calc();
        for (rows, cols) in [(1, 1), (31, 3), (32, 2), (33, 4), (100, 5)] {
            let g: Vec<Bits> = (0..rows * cols)
                .map(|_| c.from_f64(rng.gen_range(-2.0..2.0)))
                .collect();
            let m = q.matrix(&g, rows, cols, None);
            let bytes = m.to_bytes(format);
            assert_eq!(bytes.len(), onebit::message_bytes(format, rows, cols));
            assert_eq!(
                Quantized::from_bytes(format, rows, cols, &bytes).unwrap(),
                m
            );
            // Refusals are one line.
            let mut bad = bytes.clone();
            bad.pop();
            let e = Quantized::from_bytes(format, rows, cols, &bad).unwrap_err();
            assert!(e.0.contains("bytes") && !e.0.contains('\n'), "{e}");
            if rows % 32 != 0 {
                let mut bad = bytes.clone();
                bad[4 * rows.div_ceil(32) - 1] |= 0x80;
                let e = Quantized::from_bytes(format, rows, cols, &bad).unwrap_err();
                assert!(e.0.contains("padding"), "{e}");
            }
            if !format.width().is_multiple_of(8) {
                let mut bad = bytes.clone();
                bad[onebit::column_bytes(format, rows) - 1] |= 0x80;
                let e = Quantized::from_bytes(format, rows, cols, &bad).unwrap_err();
                assert!(e.0.contains("wider"), "{e}");
            }
        }
    }
}

/// Columns are W[.., j] of a row-major W; a stripe of columns equals the same columns of the
/// whole matrix and touches only its own residuals; aggregation sums parts in rank order.
#[test]
fn matrix_columns_stripes_and_aggregation() {
    let q = q("f32", SumMode::Kahan);
    let c = *q.calc();
    let (rows, cols) = (5, 7);
    let mut rng = Pcg64::seed_from_u64(4);
    let g: Vec<Bits> = (0..rows * cols)
        .map(|_| c.from_f64(rng.gen_range(-1.0..1.0)))
        .collect();
    let r0: Vec<Bits> = (0..rows * cols)
        .map(|_| c.from_f64(rng.gen_range(-0.1..0.1)))
        .collect();
    let mut r_all = r0.clone();
    let all = q.matrix(&g, rows, cols, Some(&mut r_all));
    for col in 0..cols {
        let column: Vec<Bits> = (0..rows).map(|i| g[i * cols + col]).collect();
        let mut rc: Vec<Bits> = (0..rows).map(|i| r0[i * cols + col]).collect();
        let mut bits = [0u32];
        assert_eq!(q.column(&column, Some(&mut rc), &mut bits), all.recon[col]);
        assert_eq!(bits[0], all.bits[col]);
        assert!((0..rows).all(|i| rc[i] == r_all[i * cols + col]));
    }
    let mut r_part = r0.clone();
    let stripe = q.matrix_columns(&g, rows, cols, 2..5, Some(&mut r_part));
    assert_eq!(stripe, all.columns(2..5));
    for i in 0..rows * cols {
        let inside = (2..5).contains(&(i % cols));
        assert_eq!(r_part[i], if inside { r_all[i] } else { r0[i] });
    }
    let deq = all.dequantize();
    assert_eq!(deq[cols + 3], all.value(1, 3));
    let parts = [all.clone(), stripe.clone(), all.clone()].map(|p| p.columns(0..3));
    let sum = q.sum_dequantized(&parts);
    for i in 0..rows {
        for j in 0..3 {
            let terms: Vec<Bits> = parts.iter().map(|p| p.value(i, j)).collect();
            assert_eq!(sum[i * 3 + j], c.sum(SumMode::Kahan, &terms).unwrap());
        }
    }
}

/// The same algorithm in plain f32 (naive and Kahan sums in row order, the mean by f64 division
/// rounded to f32, which is correctly rounded for f32 operands), against the golden words, with
/// and without error feedback over several steps; and the error-feedback identity
/// g + r_old = reconstruction + r_new wherever both f32 operations were exact.
#[test]
fn f32_against_an_independent_reference() {
    let mut rng = Pcg64::seed_from_u64(5);
    let mut exact_cases = 0;
    for mode in [SumMode::Naive, SumMode::Kahan] {
        let q = Quantizer::new(Format::F32(F32), mode).unwrap();
        for _ in 0..40 {
            let rows = rng.gen_range(1..200);
            let feedback = rng.gen_bool(0.7);
            let mut r_gold = vec![0u64; rows];
            let mut r_ref = vec![0f32; rows];
            for _step in 0..3 {
                let g: Vec<f32> = (0..rows)
                    .map(|_| (rng.gen_range(-1.0f64..1.0).powi(3) * 4.0) as f32)
                    .collect();
                let gw: Vec<Bits> = g.iter().map(|x| x.to_bits() as u64).collect();
                let r_old = r_ref.clone();
                let mut bits = vec![0u32; rows.div_ceil(32)];
                let rec = q.column(&gw, feedback.then_some(&mut r_gold[..]), &mut bits);

                let v: Vec<f32> = (0..rows)
                    .map(|i| if feedback { g[i] + r_ref[i] } else { g[i] })
                    .collect();
                let side = |pos: bool| -> Vec<f32> {
                    v.iter().copied().filter(|&x| (x >= 0.0) == pos).collect()
                };
                let sum = |xs: &[f32]| -> f32 {
                    let (mut s, mut comp) = (0f32, 0f32);
                    for &x in xs {
                        if mode == SumMode::Naive {
                            s += x;
                        } else {
                            let tmp = comp + x;
                            let t = s + tmp;
                            comp = tmp - (t - s);
                            s = t;
                        }
                    }
                    s
                };
                let mean = |xs: &[f32]| {
                    if xs.is_empty() {
                        0.0
                    } else {
                        (sum(xs) as f64 / xs.len() as f64) as f32
                    }
                };
                let (neg, pos) = (mean(&side(false)), mean(&side(true)));
                assert_eq!(
                    (rec.neg, rec.pos),
                    (neg.to_bits() as u64, pos.to_bits() as u64)
                );
                for i in 0..rows {
                    assert_eq!(bits[i / 32] >> (i % 32) & 1 == 1, v[i] >= 0.0);
                }
                if feedback {
                    for i in 0..rows {
                        let recon = if v[i] >= 0.0 { pos } else { neg };
                        r_ref[i] = v[i] - recon;
                        assert_eq!(r_gold[i], r_ref[i].to_bits() as u64);
                        let add_exact = g[i] as f64 + r_old[i] as f64 == v[i] as f64;
                        let sub_exact = v[i] as f64 - recon as f64 == r_ref[i] as f64;
                        if add_exact && sub_exact {
                            exact_cases += 1;
                            assert_eq!(
                                g[i] as f64 + r_old[i] as f64,
                                recon as f64 + r_ref[i] as f64
                            );
                        }
                    }
                }
            }
        }
    }
    assert!(exact_cases > 100, "{exact_cases}");
}

/// With Kahan sums the two values are the means of each side to within f32 rounding: the
/// values that minimise the squared error of the column (§3).
#[test]
fn reconstruction_values_are_the_side_means() {
    let q = q("f32", SumMode::Kahan);
    let mut rng = Pcg64::seed_from_u64(6);
    let g: Vec<f32> = (0..1024).map(|_| rng.gen_range(-1.0f32..3.0)).collect();
    let gw: Vec<Bits> = g.iter().map(|x| x.to_bits() as u64).collect();
    let rec = q.column(&gw, None, &mut [0u32; 32]);
    for (pos, w) in [(false, rec.neg), (true, rec.pos)] {
        let side: Vec<f64> = g
            .iter()
            .filter(|&&x| (x >= 0.0) == pos)
            .map(|&x| x as f64)
            .collect();
        let exact = side.iter().sum::<f64>() / side.len() as f64;
        let got = f32::from_bits(w as u32) as f64;
        assert!(
            (got - exact).abs() <= exact.abs() * 1e-6,
            "{got} vs {exact}"
        );
    }
}

#[test]
fn refuses_a_quire_where_the_format_has_none() {
    for f in ["f32", "lns:5:6"] {
        let e = Quantizer::new(f.parse().unwrap(), SumMode::Quire).unwrap_err();
        assert!(e.0.contains("quire") && !e.0.contains('\n'), "{e}");
    }
    assert!(Quantizer::new("fix:7:8".parse().unwrap(), SumMode::Quire).is_ok());
}
