//! The array designs of the lint grid.

use crate::units::{Params, PeKind, Unit};

/// The array designs of the lint grid. Full: 1×1, 2×3, 4×4, 8×8 and 16×16 of every PE kind
/// (stages 0..=2 up to 2×3, the LNS PEs 0..=5 there and the posit-quire PE 0..=8; 0 and 2
/// at 4×4, 2 from 8×8; Yosys `synth` keeps the hierarchy, so it maps the PE module once
/// whatever the size; the fix PE 0..=9 up to 2×3, and 0, 2, 4, 7, 9 at 4×4). Lean: the
/// fix PE at 1×1 and 2×3 at stages 0..=9, the others 1×1 at stages 0..=2, the LNS PEs 1×1
/// at 5 and the posit-quire PE 1×1 at 8. The float PE: fp8:e4m3 as the other PEs, bf16 1×1
/// only (0..=2); with `--acc`: fp8:e4m3 into bf16 and fp8:e5m2 into float:8:23, 1×1 at
/// 0..=2 (and 2×3 in the full grid); with `--rounding stochastic:R`, the designs below.
/// The takum-quire PE's: `takum::array_grid`.
pub(crate) fn grid(full: bool) -> Vec<Params> {
    let shapes: &[(u32, u32)] = if full {
        &[(1, 1), (2, 3), (4, 4), (8, 8), (16, 16)]
    } else {
        &[(1, 1), (2, 3)]
    };
    let kinds = [
        (PeKind::Fix, "fix:7:8"),
        (PeKind::LnsKahan, "lns:5:6"),
        (PeKind::LnsPlain, "lns:5:6"),
        (PeKind::PositQuire, "posit:16"),
        (PeKind::Float, "fp8:e4m3"),
        (PeKind::Float, "bf16"),
    ];
    let mut g = crate::units::dfix::array_grid(full);
    for (pe, fmt) in kinds {
        for &(r, c) in shapes {
            if !full && pe != PeKind::Fix && r * c > 1 {
                continue;
            }
            // bf16's PE holds a 587-bit accumulator: one PE is enough to lint it.
            if fmt == "bf16" && r * c > 1 {
                continue;
            }
            let stages: &[u32] = match (r * c, pe) {
                // Interleaved Kahan loops (stages 3..=5): the lean grid checks the deepest.
                (0..=6, PeKind::LnsKahan | PeKind::LnsPlain) if full => &[0, 1, 2, 3, 4, 5],
                (1, PeKind::LnsKahan | PeKind::LnsPlain) => &[0, 1, 2, 5],
                // Registers around the quire (stages 3..=8): the lean grid checks the deepest.
                (0..=6, PeKind::PositQuire) if full => &[0, 1, 2, 3, 4, 5, 6, 7, 8],
                (1, PeKind::PositQuire) => &[0, 1, 2, 8],
                (0..=6, PeKind::Fix) => &[0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
                (0..=6, _) => &[0, 1, 2],
                (7..=16, PeKind::Fix) => &[0, 2, 4, 7, 9],
                (7..=16, _) => &[0, 2],
                _ => &[2],
            };
            for &s in stages {
                let mut p = Params::new(Unit::Array, fmt.parse().unwrap()).stages(s);
                p.rows = r;
                p.cols = c;
                p.pe = pe;
                g.push(p);
            }
        }
    }
    // The float PE accumulating in a wider float (`--acc`): 1×1 at every stage count, and
    // 2×3 in the full grid.
    for (fmt, acc, shape) in [
        ("fp8:e4m3", "bf16", (1, 1)),
        ("fp8:e5m2", "float:8:23", (1, 1)),
        ("fp8:e4m3", "bf16", (2, 3)),
    ] {
        if !full && shape != (1, 1) {
            continue;
        }
        for s in 0..=2 {
            let mut p = Params::new(Unit::Array, fmt.parse().unwrap()).stages(s);
            (p.rows, p.cols, p.pe) = (shape.0, shape.1, PeKind::Float);
            p.acc = Some(acc.parse().unwrap());
            g.push(p);
        }
    }
    // The float PE's stochastic read-out: lean, fp8:e4m3 2×2 at stages 1; full, fp8:e4m3
    // 2×3 and bf16 1×1 at 0..=2, fp8:e5m2 4×4 at 2.
    for (fmt, r, shape, stages) in [
        ("fp8:e4m3", 4, (2, 2), &[1][..]),
        ("fp8:e4m3", 4, (2, 3), &[0, 1, 2][..]),
        ("bf16", 8, (1, 1), &[0, 1, 2][..]),
        ("fp8:e5m2", 12, (4, 4), &[2][..]),
    ] {
        // The lean design is the 2×2 one; the full grid has the others.
        if full == (shape == (2, 2)) {
            continue;
        }
        for &s in stages {
            let mut p = Params::new(Unit::Array, fmt.parse().unwrap())
                .stages(s)
                .rounding(lpgen_golden::Rounding::Stochastic(r), 3);
            (p.rows, p.cols, p.pe) = (shape.0, shape.1, PeKind::Float);
            g.push(p);
        }
    }
    g.extend(crate::units::mx::array_grid(full));
    g.extend(crate::units::float::fdpa_array_grid(full));
    g.extend(crate::units::nvfp4::array_grid(full));
    g.extend(crate::units::takum::array_grid(full));
    g
}
