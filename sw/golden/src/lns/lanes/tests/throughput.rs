//! The LNS lanes' forms timed side by side (a benchmark run by hand, not a check).

use super::*;

/// The throughput of each form of the LNS lanes on this machine, printed: lns:5:6 Kahan sums
/// of 256 lines of K = 256 against sixteen lanes, four lines a call, with magnitudes in
/// the middle third of the range (where training values sit). A machine with AVX-512 runs
/// only that form in training; this shows the others' speed there too (the AVX2 form once
/// ran below the portable one unnoticed, docs/perf.md). Not a check:
/// `cargo test --release -p lpgen-golden --lib lane_forms_throughput -- --ignored --nocapture`.
#[test]
#[ignore]
fn lane_forms_throughput() {
    let l = lns("lns:5:6").lanes();
    let mut r = crate::test_words(77);
    let mut value = || {
        let v = l.cmax / 3 + (r() % (l.cmax as u64 / 3)) as i32;
        if r() & 1 == 0 {
            v
        } else {
            -v
        }
    };
    let k = 256;
    let xs: Vec<Vec<i32>> = (0..256)
        .map(|_| (0..k).map(|_| value()).collect())
        .collect();
    let y: Vec<[i32; L]> = (0..k).map(|_| std::array::from_fn(|_| value())).collect();
    let y2: Vec<[i32; L512]> = (0..k).map(|_| std::array::from_fn(|_| value())).collect();
    let report = |form: &str, lanes: usize, seconds: f64| {
        let macs = (xs.len() * lanes * k) as f64;
        println!("{form:<28} {:.3} G MAC/s", macs / seconds / 1e9);
    };
    let start = std::time::Instant::now();
    let portable: Vec<[i32; L]> = xs.iter().map(|x| l.run_portable(true, x, &y)).collect();
    report("portable", L, start.elapsed().as_secs_f64());
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        for (form, lanes) in [
            ("AVX2, formula", LnsLanes { steps: None, ..l }),
            ("AVX2", l),
        ] {
            let start = std::time::Instant::now();
            for (group, want) in xs.chunks(4).zip(portable.chunks(4)) {
                let g: Vec<&[i32]> = group.iter().map(Vec::as_slice).collect();
                let mut out = vec![[0; L]; g.len()];
                // SAFETY: the CPU has AVX2.
                unsafe { avx2::run(&lanes, true, &g, &y, &[], &mut out) };
                assert_eq!(out, want, "{form}");
            }
            report(form, L, start.elapsed().as_secs_f64());
        }
    }
    #[cfg(target_arch = "x86_64")]
    if avx512() {
        let start = std::time::Instant::now();
        for group in xs.chunks(4) {
            let g: Vec<&[i32]> = group.iter().map(Vec::as_slice).collect();
            let mut out = vec![[0; L512]; g.len()];
            // SAFETY: the CPU has AVX-512 F and DQ.
            unsafe { avx512::run(&l, true, &g, &y2, &[], &mut out) };
        }
        report("AVX-512", L512, start.elapsed().as_secs_f64());
    }
}
