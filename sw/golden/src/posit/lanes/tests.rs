//! The binary64 path against the posit operations, the vector lanes against the portable ones.

use super::*;

/// Every product and sum of two words of posit:10:1 and posit:9:0 (all pairs), and
/// random pairs of the 16-bit formats, rounded on the path, equal the posit operations.
#[test]
fn path_operations_equal_the_posit_operations() {
    let mut r = crate::test_words(11);
    for s in [
        "posit:9:0",
        "posit:10:1",
        "posit:16:1",
        "posit:16",
        "posit:16:1:u",
    ] {
        let f = match s.parse::<crate::Format>().unwrap() {
            crate::Format::Posit(f) => f,
            _ => unreachable!(),
        };
        let p = f.f64_path().unwrap();
        let pairs: Vec<(Bits, Bits)> = if f.n <= 10 {
            (0..1u64 << f.n)
                .flat_map(|a| (0..1u64 << f.n).map(move |b| (a, b)))
                .collect()
        } else {
            (0..400_000)
                .map(|_| (r() & f.mask(), r() & f.mask()))
                .collect()
        };
        for (a, b) in pairs {
            let (x, y) = (p.load(a), p.load(b));
            assert_eq!(
                p.store(p.mul(x, y)),
                Family::mul(&f, a, b),
                "{s} {a:#x}·{b:#x}"
            );
            assert_eq!(
                p.store(p.add(x, y)),
                Family::add(&f, a, b),
                "{s} {a:#x}+{b:#x}"
            );
            assert_eq!(
                p.store(p.sub(x, y)),
                Family::sub(&f, a, b),
                "{s} {a:#x}-{b:#x}"
            );
        }
    }
}

/// The AVX2 and AVX-512 lanes (where the machine has them) equal the portable ones on
/// random blocks of every word but NaR (the frame keeps NaR from the lanes), naive and
/// Kahan, one to five lines at once; and with runs of zeros in every line, told to the
/// lanes as runs to skip (`run_skipping`).
#[test]
fn vector_lanes_equal_the_portable_lanes() {
    let mut r = crate::test_words(21);
    for s in ["posit:16:1", "posit:12:2", "posit:9:0"] {
        let f = match s.parse::<crate::Format>().unwrap() {
            crate::Format::Posit(f) => f,
            _ => unreachable!(),
        };
        let p = f.f64_path().unwrap();
        let mut word = || loop {
            let w = r() & f.mask();
            if w != f.nar() {
                break p.load(w);
            }
        };
        let cases = [(1, 0), (1, 1), (2, 7), (4, 300), (5, 31)];
        for ((lines, k), skipping) in cases.into_iter().flat_map(|c| [(c, false), (c, true)]) {
            let runs: Vec<Range<usize>> = match skipping {
                true => [0..2, 5..7, 9..40, 41..43, 100..299]
                    .into_iter()
                    .filter(|r| r.end <= k)
                    .collect(),
                false => vec![],
            };
            let mut xs: Vec<Vec<f64>> = (0..lines)
                .map(|_| (0..k).map(|_| word()).collect())
                .collect();
            for x in &mut xs {
                runs.iter().for_each(|r| x[r.clone()].fill(0.0));
            }
            let xs: Vec<&[f64]> = xs.iter().map(Vec::as_slice).collect();
            let y: Vec<[f64; L512]> = (0..k).map(|_| std::array::from_fn(|_| word())).collect();
            let y8: Vec<[f64; L]> = y.iter().map(|v| std::array::from_fn(|l| v[l])).collect();
            for kahan in [false, true] {
                let want: Vec<[f64; L512]> =
                    xs.iter().map(|x| p.run_portable(kahan, x, &y)).collect();
                let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                #[cfg(target_arch = "x86_64")]
                if std::is_x86_feature_detected!("avx2") {
                    let mut got = vec![[0.0; L]; lines];
                    // SAFETY: the CPU has AVX2.
                    unsafe { avx2::run(&p, kahan, &xs, &y8, &runs, &mut got) };
                    for (g, w) in got.iter().zip(&want) {
                        assert_eq!(bits(g), bits(&w[..L]), "{s} K = {k}, AVX2");
                    }
                }
                #[cfg(target_arch = "x86_64")]
                if avx512() {
                    let mut got = vec![[0.0; L512]; lines];
                    // SAFETY: the CPU has AVX-512 F and DQ.
                    unsafe { avx512::run(&p, kahan, &xs, &y, &runs, &mut got) };
                    for (g, w) in got.iter().zip(&want) {
                        assert_eq!(bits(g), bits(w), "{s} K = {k}, AVX-512");
                    }
                }
            }
        }
    }
}

/// Lanes told where every product is zero (`run_skipping`) give the sums of every step, as
/// `lns::lanes`' test of the name: of random posit Kahan states, 0.4–0.7 % change under
/// a zero step (once; then they stand still), so 50 lines of 16 lanes and six runs each
/// meet them (mutants caught: a run skipped whole, a run left before the state stands
/// still).
#[test]
fn skipped_zero_runs_are_the_steps() {
    let mut r = crate::test_words(23);
    for fs in ["posit:16:1", "posit:9:0"] {
        let f = match fs.parse::<crate::Format>().unwrap() {
            crate::Format::Posit(f) => f,
            _ => unreachable!(),
        };
        let p = f.f64_path().unwrap();
        let mut word = || loop {
            let w = r() & f.mask();
            if w != f.nar() && w != 0 {
                break p.load(w);
            }
        };
        let runs = [0..3, 7..8, 10..50, 51..53, 60..99, 120..128];
        let skip: Vec<Range<usize>> = runs.iter().filter(|r| r.len() >= 2).cloned().collect();
        for _ in 0..50 {
            let mut x: Vec<f64> = (0..128).map(|_| word()).collect();
            runs.iter().for_each(|r| x[r.clone()].fill(0.0));
            let y: Vec<[f64; L512]> = (0..128).map(|_| std::array::from_fn(|_| word())).collect();
            let y8: Vec<[f64; L]> = y.iter().map(|v| std::array::from_fn(|l| v[l])).collect();
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            for kahan in [false, true] {
                let want = p.run_portable(kahan, &x, &y);
                let xs = [x.as_slice(); 3];
                #[cfg(target_arch = "x86_64")]
                if std::is_x86_feature_detected!("avx2") {
                    let mut got = [[0.0; L]; 3];
                    // SAFETY: the CPU has AVX2.
                    unsafe { avx2::run(&p, kahan, &xs, &y8, &skip, &mut got) };
                    assert!(got.iter().all(|g| bits(g) == bits(&want[..L])), "{fs} AVX2");
                }
                #[cfg(target_arch = "x86_64")]
                if avx512() {
                    let mut got = [[0.0; L512]; 3];
                    // SAFETY: the CPU has AVX-512 F and DQ.
                    unsafe { avx512::run(&p, kahan, &xs, &y, &skip, &mut got) };
                    assert!(got.iter().all(|g| bits(g) == bits(&want)), "{fs} AVX-512");
                }
            }
        }
    }
}

/// `encode_exact` packs every word's value back into the word (NaR's NaN included), for
/// every es a format of up to 16 bits has here, the 2022 standard and the `:u` variant.
#[test]
fn encode_exact_is_every_words_inverse() {
    for s in [
        "posit:16:0",
        "posit:16:1",
        "posit:16:2",
        "posit:16:3",
        "posit:16",
        "posit:12:1",
        "posit:10:4",
        "posit:9:0",
        "posit:8:0",
        "posit:8:2",
        "posit:16:1:u",
        "posit:3:0",
    ] {
        let f = match s.parse::<crate::Format>().unwrap() {
            crate::Format::Posit(f) => f,
            _ => unreachable!(),
        };
        let p = f.f64_path().unwrap();
        for w in 0..1u64 << f.n {
            assert_eq!(p.encode_exact(f.to_f64(w)), w, "{s}: {w:#x}");
        }
    }
}

/// Lines given by their nonzero values (`run_sparse`, naive sums) give the dense lines' sums
/// on every path: the portable one, AVX2 and AVX-512 where the machine has them. The lines
/// are three in four zeros at random (a ReLU's and max pooling's), one to five at once,
/// padded with zero values; AVX-512 with one vector a line and with two.
#[test]
fn sparse_lines_are_the_dense_lines() {
    let mut r = crate::test_words(29);
    for s in ["posit:16:1", "posit:9:0"] {
        let f = match s.parse::<crate::Format>().unwrap() {
            crate::Format::Posit(f) => f,
            _ => unreachable!(),
        };
        let p = f.f64_path().unwrap();
        for (lines, k) in [(1, 1), (2, 7), (3, 64), (4, 300), (5, 31)] {
            let mut value = || loop {
                let w = r() & f.mask();
                if w != f.nar() {
                    break if r().is_multiple_of(4) {
                        p.load(w)
                    } else {
                        0.0
                    };
                }
            };
            let dense: Vec<Vec<f64>> = (0..lines)
                .map(|_| (0..k).map(|_| value()).collect())
                .collect();
            let y: Vec<[f64; L512]> = (0..k)
                .map(|_| std::array::from_fn(|_| p.load(r() & f.mask() & !f.nar())))
                .collect();
            let y8: Vec<[f64; L]> = y.iter().map(|v| std::array::from_fn(|l| v[l])).collect();
            let sparse: Vec<(Vec<u32>, Vec<f64>)> = (dense.iter())
                .map(|x| {
                    (0..k)
                        .filter(|&i| x[i] != 0.0)
                        .map(|i| (i as u32, x[i]))
                        .unzip()
                })
                .collect();
            let len = sparse.iter().map(|s| s.0.len()).max().unwrap();
            let padded: Vec<(Vec<u32>, Vec<f64>)> = (sparse.iter().cloned())
                .map(|(mut ks, mut vs)| {
                    ks.resize(len, 0);
                    vs.resize(len, 0.0);
                    (ks, vs)
                })
                .collect();
            let xs: Vec<(&[u32], &[f64])> = padded
                .iter()
                .map(|(ks, vs)| (ks.as_slice(), vs.as_slice()))
                .collect();
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            for (x, &(ks, vs)) in dense.iter().zip(&xs) {
                let want = p.run_portable(false, x, &y);
                assert_eq!(bits(&p.run_portable_sparse(ks, vs, &y)), bits(&want), "{s}");
            }
            let want: Vec<[f64; L512]> =
                dense.iter().map(|x| p.run_portable(false, x, &y)).collect();
            #[cfg(target_arch = "x86_64")]
            if std::is_x86_feature_detected!("avx2") {
                let mut got = vec![[0.0; L]; lines];
                // SAFETY: the CPU has AVX2.
                unsafe { avx2::run_sparse(&p, &xs, &y8, &mut got) };
                for (g, w) in got.iter().zip(&want) {
                    assert_eq!(bits(g), bits(&w[..L]), "{s} K = {k}, AVX2");
                }
            }
            #[cfg(target_arch = "x86_64")]
            if avx512() {
                let mut got = vec![[0.0; L512]; lines];
                // SAFETY: the CPU has AVX-512 F and DQ.
                unsafe { avx512::run_sparse(&p, &xs, &y, &mut got) };
                for (g, w) in got.iter().zip(&want) {
                    assert_eq!(bits(g), bits(w), "{s} K = {k}, AVX-512");
                }
                // One vector a line (`Half512`).
                let mut got = vec![[0.0; L]; lines];
                // SAFETY: the CPU has AVX-512 F and DQ.
                unsafe { avx512::run_sparse(&p, &xs, &y8, &mut got) };
                for (g, w) in got.iter().zip(&want) {
                    assert_eq!(bits(g), bits(&w[..L]), "{s} K = {k}, AVX-512, 8 lanes");
                }
            }
        }
    }
}

/// The AVX-512 decoding (where the machine has it, with CD) gives every word's value, NaR
/// as zero and flagged, for every format of the path: N = 2 to 16, es = 0 to 5, every word,
/// in lines of every length to 17 (the eights and a tail) and whole; a word wider than the
/// format leaves it to the table (`None`, `out` as it was).
#[test]
fn vector_decoding_is_every_words_value() {
    #[cfg(target_arch = "x86_64")]
    if avx512() && std::is_x86_feature_detected!("avx512cd") {
        for n in 2..=16 {
            for es in 0..=crate::posit::MAX_ES {
                let Ok(crate::Format::Posit(f)) = format!("posit:{n}:{es}").parse() else {
                    continue;
                };
                let p = f.f64_path().unwrap();
                let words: Vec<Bits> = (0..1u64 << n).collect();
                let want: Vec<u64> = (words.iter())
                    .map(|&w| match Family::to_f64(&f, w) {
                        v if v.is_nan() => 0,
                        v => v.to_bits(),
                    })
                    .collect();
                let mut got = vec![1.5];
                // SAFETY: the CPU has AVX-512 F, DQ and CD.
                let nar = unsafe { avx512::decode(&p, &words, &mut got) };
                assert_eq!(nar, Some(true), "{f}: NaR is among the words");
                let bits: Vec<u64> = got[1..].iter().map(|v| v.to_bits()).collect();
                assert_eq!(bits, want, "{f}");
                for len in 0..=17.min(words.len()) {
                    let line = &words[words.len() - len..];
                    let mut got = vec![];
                    // SAFETY: as above.
                    let nar = unsafe { avx512::decode(&p, line, &mut got) };
                    assert_eq!(nar, Some(line.contains(&f.nar())), "{f} tail of {len}");
                    let bits: Vec<u64> = got.iter().map(|v| v.to_bits()).collect();
                    assert_eq!(bits, want[words.len() - len..], "{f} tail of {len}");
                }
                for at in [0, 7, 12, 18] {
                    let mut line = vec![1u64; 20];
                    line[at] = 1 << n;
                    let mut got = vec![2.0];
                    // SAFETY: as above.
                    assert_eq!(unsafe { avx512::decode(&p, &line, &mut got) }, None);
                    assert_eq!(got, [2.0], "{f}: a wide word at {at}");
                }
            }
        }
    }
}
