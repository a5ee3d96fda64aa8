//! The array designs of the lint grid.

use crate::units::{Params, PeKind, Unit};

/// The array designs of the lint grid: each PE family's own (its module's `array_grid`),
/// dfix, fix, LNS, posit, float, MX, fdpa, NVFP4 and takum in turn.
pub(crate) fn grid(full: bool) -> Vec<Params> {
    let mut g = crate::units::dfix::array_grid(full);
    g.extend(crate::units::fix::array_grid(full));
    g.extend(crate::units::lns::array_grid(full));
    g.extend(crate::units::posit::array_grid(full));
    g.extend(crate::units::float::array_grid(full));
    g.extend(crate::units::mx::array_grid(full));
    g.extend(crate::units::float::fdpa_array_grid(full));
    g.extend(crate::units::nvfp4::array_grid(full));
    g.extend(crate::units::takum::array_grid(full));
    g
}

/// The array shapes of the grid: full 1×1, 2×3, 4×4, 8×8 and 16×16; lean 1×1 and 2×3.
/// (Yosys `synth` keeps the hierarchy, so it maps the PE module once whatever the size.)
fn shapes(full: bool) -> &'static [(u32, u32)] {
    if full {
        &[(1, 1), (2, 3), (4, 4), (8, 8), (16, 16)]
    } else {
        &[(1, 1), (2, 3)]
    }
}

/// The `pe` arrays on `fmt` at every shape of the grid, each at the stage counts
/// `stages(PEs)` gives for its number of PEs (none: the shape is left out).
pub(crate) fn pe_designs(
    pe: PeKind,
    fmt: &str,
    full: bool,
    stages: impl Fn(u32) -> &'static [u32],
) -> Vec<Params> {
    let mut g = vec![];
    for &(r, c) in shapes(full) {
        for &s in stages(r * c) {
            let mut p = Params::new(Unit::Array, fmt.parse().expect("a grid format")).stages(s);
            (p.rows, p.cols, p.pe) = (r, c, pe);
            g.push(p);
        }
    }
    g
}
