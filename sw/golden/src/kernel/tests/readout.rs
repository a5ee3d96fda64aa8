//! The exact kernel's read-outs: each family's `read_values` against `read_exact`, and sums
//! below an accumulator's last bit.

use super::*;

/// Each family's `read_values` is `read_exact` of each sum's value (the trait's default):
/// every boundary of a read-out table (`kernel::readout`) and its neighbours, zeros of both
/// signs, sums below the accumulators' last bits, products of two words, exact sums of two products (ties and
/// cancellation among them) and products scaled up by powers of two into saturation, past
/// the accumulators' wraps and out of the f64 fast paths' ranges.
#[test]
fn read_values_are_read_exact() {
    for (n, spec) in EXACT.iter().enumerate() {
        let f: Format = spec.parse().unwrap();
        let c = f.calc();
        let x = c.exact_dot().expect("an exact kernel");
        let values: Vec<f64> = (0..4)
            .flat_map(|kind| words(f, kind, 400, n as u64 * 7 + u64::from(kind)))
            .filter_map(|w| x.exact_f64(w))
            .collect();
        let mut r = test_words(n as u64 + 90);
        let mut sums = vec![0.0, -0.0];
        for _ in 0..4000 {
            let mut pick = || values[r() as usize % values.len()];
            let (p, q) = (pick() * pick(), pick() * pick());
            // p + q where the f64 holds it exactly (its rounding error, by TwoSum, is zero).
            let s = p + q;
            let back = s - p;
            if (p - (s - back)) + (q - back) == 0.0 && s.is_finite() {
                sums.push(s);
            }
            sums.push(p);
            let up = p * 2f64.powi((r() % 64) as i32);
            if up.is_finite() {
                sums.push(up);
            }
        }
        // Around every boundary of a read-out table, the product units (the smallest
        // value's square) each side of it, both signs; sums below the accumulator's last bit.
        let bits = f.width();
        let table = (bits <= crate::kernel::readout::TABLE_BITS)
            .then(|| crate::kernel::readout::ReadTable::new(x, 0..1 << bits))
            .flatten();
        assert_eq!(
            table.is_some(),
            bits <= crate::kernel::readout::TABLE_BITS,
            "{f}: a read-out table"
        );
        if let Some(t) = table {
            let small = values.iter().map(|v| v.abs()).filter(|&v| v > 0.0);
            let unit = small.fold(f64::INFINITY, f64::min).powi(2);
            for (sign, up) in [1.0, -1.0].into_iter().zip(t.boundaries()) {
                for &b in up {
                    // On the grid of products' sums: the units at and around the boundary.
                    let (below, above) = ((b / unit).floor() * unit, (b / unit).ceil() * unit);
                    let near = [below - unit, below, above, above + unit];
                    sums.extend(near.map(|v| sign * v));
                }
            }
        }
        sums.extend([
            2f64.powi(-300),
            -2f64.powi(-300),
            f64::from_bits(1),
            -f64::from_bits(1),
        ]);
        let mut got = Vec::new();
        x.read_values(&sums, &mut got);
        assert_eq!(got.len(), sums.len());
        for (&v, &g) in sums.iter().zip(&got) {
            let (units, scale) = integer_and_scale(v);
            assert_eq!(g, x.read_exact(units, scale), "{f}: the sum {v:e}");
        }
    }
}

/// A sum below the accumulator's last bit reads as the register truncates it: a positive one
/// as zero, a negative one as one unit below zero (the shift past the register's width keeps
/// the sign alone, and does not wrap around to a shift by its remainder).
#[test]
fn sums_below_the_last_bit_truncate() {
    for spec in ["posit:8:2", "posit:8:2:u", "posit:16:1", "fix:7:8"] {
        let f: Format = spec.parse().unwrap();
        let c = f.calc();
        let x = c.exact_dot().expect("an exact kernel");
        for scale in [-200, -300, -1074] {
            assert_eq!(x.read_exact(1, scale), x.read_exact(0, 0), "{f}: 2^{scale}");
            assert_eq!(
                x.read_exact(3, scale),
                x.read_exact(0, 0),
                "{f}: 3·2^{scale}"
            );
            let wide = x.read_exact(1 << 100 | 1 << 40, scale - 100);
            assert_eq!(
                wide,
                x.read_exact(0, 0),
                "{f}: (2^100 + 2^40)·2^({scale} − 100)"
            );
        }
    }
    // posit(8,2)'s quire one unit below zero reads −minpos (a posit never rounds to zero).
    let p: Format = "posit:8:2".parse().unwrap();
    let c = p.calc();
    let x = c.exact_dot().expect("the quire");
    assert_eq!(x.read_exact(-1, -300), 0xff);
}
