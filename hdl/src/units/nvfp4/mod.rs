//! NVFP4 block units (issue 50): `nvfp4-enc` (`enc.rs`), `nvfp4-dot` (`dot.rs`) and the
//! array's `nvfp4` PE (`pe.rs`), bit-exact to the golden `lpgen_golden::scale` (docs/formats.md, "`nvfp4` and scaled formats";
//! docs/rtl.md, "NVFP4 units"). The format rules (E2M1, UE4M3, UE5M3, the block size) are the
//! golden [`ScaledFormat`]'s: `--format nvfp4` (E2M1, UE4M3 per 16, the f32 tensor scale) or
//! `scaled/fp4:e2m1/bK/ue4m3/t` and `scaled/fp4:e2m1/bK/ue5m3/t` (the encoder; the dot
//! product and the PE are the golden's for UE4M3 scales and K <= 16 only).

mod dot;
mod enc;
mod pe;

use lpgen_golden::scale::{Granularity, Scale, ScaledFormat, NVFP4, NVFP4_BLOCK};
use lpgen_golden::{FloatFormat, Format};

use super::{GenError, Params, Unit};

pub(crate) use dot::{dot, DOT_STAGES};
pub(crate) use enc::{enc, ENC_STAGES};
pub(crate) use pe::{NVFP4_PE, NVFP4_PE_MAX_STAGES};

/// The largest block the encoder is generated for (the lint grid proves up to 32).
pub const MAX_ENC_BLOCK: usize = 32;

/// An NVFP4 unit's format, checked: E2M1 elements, a block granularity, a UE4M3 or UE5M3
/// block scale, the f32 tensor scale.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Nvfp4Design {
    /// Elements per block.
    pub block: u32,
    /// The element format (E2M1).
    pub elem: FloatFormat,
    /// The scale's float format (its sign bit 0: UE4M3 is `float:4:3:fn:sat`, UE5M3
    /// `float:5:3:fn:sat`).
    pub scale: FloatFormat,
    /// Bits of a stored scale code (8: the word without a sign bit where the format has 9).
    pub scale_bits: u32,
}

/// Whether `sf` is an NVFP4-style format the units build: the one-line reason if not.
fn design_of(unit: Unit, sf: &ScaledFormat) -> Result<Nvfp4Design, GenError> {
    let name = unit.name();
    let bad = |why: String| Err(GenError(format!("{name} --format {sf}: {why}")));
    let Format::Float(elem) = sf.elem else {
        return bad("the elements must be fp4:e2m1".into());
    };
    if sf.elem_name != "fp4:e2m1" {
        return bad(format!(
            "elements {} are not built (fp4:e2m1 only)",
            sf.elem_name
        ));
    }
    let Granularity::Block(k) = sf.granularity else {
        return bad(format!(
            "granularity {} is not built (a block bK along a row)",
            sf.granularity
        ));
    };
    let Scale::Word {
        name: sname,
        format: Format::Float(scale),
    } = sf.scale
    else {
        return bad(format!("scale {} is not built (ue4m3 or ue5m3)", sf.scale));
    };
    if !matches!(sname, "ue4m3" | "ue5m3") {
        return bad(format!("scale {sname} is not built (ue4m3 or ue5m3)"));
    }
    if !sf.tensor_scale {
        return bad("the f32 tensor scale (/t) is the unit's s_enc input: add /t".into());
    }
    // The block dot product (nvfp4-dot and the array's nvfp4 PE) is the golden's: UE4M3
    // scales and K <= 16; the encoder takes either scale and larger blocks.
    let dot = unit != Unit::Nvfp4Enc;
    let max = if dot { NVFP4_BLOCK } else { MAX_ENC_BLOCK };
    if k > max {
        return bad(format!("a block of {k}: {name} is built for K <= {max}"));
    }
    if dot && sname != "ue4m3" {
        return bad("the golden NVFP4 block dot product takes UE4M3 scales (ue4m3)".into());
    }
    Ok(Nvfp4Design {
        block: k as u32,
        elem,
        scale,
        scale_bits: sf.scale.code_bits(),
    })
}

/// A scaled format only for a unit that takes one ([`super::Opt::Scaled`]; the array takes
/// one with its `nvfp4` PE, which pairs PE and format), and one it builds.
pub(crate) fn check(p: &Params, takes_scaled: bool) -> Result<(), GenError> {
    match (p.scaled, takes_scaled) {
        (Some(sf), true) => design_of(p.unit, &sf).map(|_| ()),
        (Some(sf), false) if p.unit == Unit::Array => design_of(p.unit, &sf).map(|_| ()),
        (None, false) => Ok(()),
        (None, true) => Err(GenError(format!(
            "unit '{}' needs an NVFP4 block format (--format nvfp4, or \
             scaled/fp4:e2m1/bK/ue4m3/t), not {}",
            p.unit.name(),
            p.format_name()
        ))),
        (Some(sf), false) => Err(GenError(format!(
            "{sf} is a scaled block format: only nvfp4-enc, nvfp4-dot and array (--pe nvfp4) \
             take it (unit '{}' needs another format)",
            p.unit.name()
        ))),
    }
}

/// The checked design of an NVFP4 unit ([`check`] ran before any generator).
pub(crate) fn design(p: &Params) -> Nvfp4Design {
    let sf = p
        .scaled
        .expect("checked: an NVFP4 unit has a scaled format");
    design_of(p.unit, &sf).expect("checked: a format the unit builds")
}

/// The NVFP4 designs of the lint grid: `nvfp4` at every stage count (full) or at the most
/// (lean: the 16-lane encoder is the grid's slowest synthesis), and a small block (UE5M3
/// scales for the encoder) at 0 stages.
pub(crate) fn grid(full: bool) -> Vec<Params> {
    let mut g = vec![];
    let nv = NVFP4.to_string();
    for (unit, max, other) in [
        (Unit::Nvfp4Enc, ENC_STAGES, "scaled/fp4:e2m1/b4/ue5m3/t"),
        (Unit::Nvfp4Dot, DOT_STAGES, "scaled/fp4:e2m1/b3/ue4m3/t"),
    ] {
        // The lean grid (CI) skips the 16-lane encoder: Yosys takes about two minutes on
        // it; its pipeline is the small block's at the most stages.
        let whole = full || unit == Unit::Nvfp4Dot;
        let stages: Vec<u32> = if full { (0..=max).collect() } else { vec![max] };
        for &s in stages.iter().filter(|_| whole) {
            g.push(Params::parse(unit, &nv).expect("nvfp4").stages(s));
        }
        let small = Params::parse(unit, other).expect("a scaled format");
        g.push(small.clone());
        if !whole {
            g.push(small.stages(max));
        }
    }
    g
}

/// The `array --pe nvfp4` designs of the lint grid. Full: `nvfp4` 1×1 at every stage count
/// (0..=6), 2×2 at 0 and 2, and blocks of 3 as a 4×4 at 2. Lean: blocks of 3, 1×1, at 0, 2
/// and 6, and `nvfp4` 1×1 at 2.
pub(crate) fn array_grid(full: bool) -> Vec<Params> {
    let nv = NVFP4.to_string();
    let small = "scaled/fp4:e2m1/b3/ue4m3/t";
    let shapes: Vec<(&str, (u32, u32), Vec<u32>)> = if full {
        vec![
            (&nv, (1, 1), (0..=NVFP4_PE_MAX_STAGES).collect()),
            (&nv, (2, 2), vec![0, 2]),
            (small, (4, 4), vec![2]),
        ]
    } else {
        vec![
            (small, (1, 1), vec![0, 2, NVFP4_PE_MAX_STAGES]),
            (&nv, (1, 1), vec![2]),
        ]
    };
    let mut g = vec![];
    for (f, (rows, cols), stages) in shapes {
        for s in stages {
            let mut p = Params::parse(Unit::Array, f)
                .expect("a scaled format")
                .stages(s);
            (p.rows, p.cols) = (rows, cols);
            g.push(p);
        }
    }
    g
}
