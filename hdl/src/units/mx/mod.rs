//! MX block units (OCP Microscaling v1.0, issue 33): `mx-dot`, `mx-enc` and the array's `mx`
//! PE (`pe.rs`), bit-exact to the golden
//! `lpgen_golden::mx` (docs/formats.md, "MX block formats"; docs/rtl.md, "MX units").
//! The element decoders are the float units' (`lpgen_float_decode_*`, with `:nonan` for
//! FP6/FP4); the format rules (element types, E8M0, the block size) are the golden
//! [`MxFormat`]'s.

mod dot;
mod enc;
mod enc_fix;
mod pe;

use lpgen_golden::mx::{MxFormat, MxInput};

use super::{GenError, Params, Unit};

pub(crate) use dot::{dot, DOT_STAGES};
pub(crate) use enc::{enc, max_tree, ENC_STAGES};
pub(crate) use pe::{accumulate_f32, block_pe_plan, round_exact_f32, MX_PE, MX_PE_MAX_STAGES};

/// An MX design has an MX format and only an MX unit takes one (`takes_mx`: the registry
/// entry's `Opt::Mx`); the array takes one with its `mx` PE (the array pairs PE and format).
/// An input format (`--input`) only for a unit that takes one, and one the golden
/// [`MxInput`] takes.
pub(crate) fn check(p: &Params, takes_mx: bool, takes_input: bool) -> Result<(), GenError> {
    if let Some(f) = p.input {
        if !takes_input {
            return Err(GenError(format!(
                "--input {f} is for mx-enc (the words a block conversion takes), not unit '{}'",
                p.unit.name()
            )));
        }
        MxInput::new(f).map_err(|e| GenError(format!("mx-enc --input {}", e.0)))?;
    }
    match (p.mx, takes_mx) {
        (Some(_), true) | (None, false) => Ok(()),
        (Some(_), false) if p.unit == Unit::Array => Ok(()),
        (None, true) => Err(GenError(format!(
            "unit '{}' needs an MX block format (--format mx:ELEM[:bK], e.g. mx:fp8:e4m3, \
             mx:fp4:e2m1:b8), not {}",
            p.unit.name(),
            p.format_name()
        ))),
        (Some(mx), false) => Err(GenError(format!(
            "{mx} is an MX block format: only mx-dot, mx-enc and array (--pe mx) take it (unit '{}' needs a scalar format)",
            p.unit.name()
        ))),
    }
}

/// The input words of `mx-enc` (checked by [`check`]): f32 unless `--input` says otherwise.
fn input_of(p: &Params) -> MxInput {
    p.input.map_or(MxInput::F32, |f| {
        MxInput::new(f).expect("checked: an input the golden MxInput takes")
    })
}

/// The input format as design names and manifests show it: `None` for f32 words (the
/// default, so that a design on f32 words is the one it always was).
pub(crate) fn shown_input(p: &Params) -> Option<String> {
    match p.input.map(MxInput::new) {
        Some(Ok(MxInput::F32)) | None => None,
        Some(Ok(i)) => Some(i.to_string()),
        Some(Err(_)) => p.input.map(|f| f.to_string()),
    }
}

/// The MX format of an MX design (checked by [`check`] before any generator runs).
fn mx_format(p: &Params) -> MxFormat {
    p.mx.expect("checked: an MX unit has an MX format")
}

/// The MX designs of the lint grid: every element type at a small and the default block
/// size (full: every stage count), lean: three element types at both ends of `--stages`.
pub(crate) fn grid(full: bool) -> Vec<Params> {
    let formats: Vec<&str> = if full {
        vec![
            "mx:fp8:e4m3",
            "mx:fp8:e5m2",
            "mx:fp6:e3m2",
            "mx:fp6:e2m3",
            "mx:fp4:e2m1",
            "mx:int8",
            "mx:fp8:e5m2:b2",
            "mx:fp6:e2m3:b5",
            "mx:int8:b1",
        ]
    } else {
        vec!["mx:fp8:e4m3:b4", "mx:fp4:e2m1", "mx:int8:b3"]
    };
    let stages: Vec<u32> = if full {
        (0..=DOT_STAGES.max(ENC_STAGES)).collect()
    } else {
        vec![0, DOT_STAGES.max(ENC_STAGES)]
    };
    let mut g = vec![];
    for (unit, max) in [(Unit::MxDot, DOT_STAGES), (Unit::MxEnc, ENC_STAGES)] {
        for f in &formats {
            for &s in stages.iter().filter(|&&s| s <= max) {
                g.push(Params::parse(unit, f).expect("an MX format").stages(s));
            }
        }
    }
    g.extend(input_grid(full));
    g
}

/// The `mx-enc --input` designs of the lint grid. Full: bf16, f16, an FP8 with subnormals
/// (float:4:3), float:8:2 (8 exponent bits, INT8's padded significand) and two fix formats,
/// each into E4M3 (K = 32), FP4 and INT8 (small blocks) at every stage count. Lean: f16 into
/// E4M3, fix:7:8 into INT8 and bf16 into FP4, at one end of `--stages` each.
fn input_grid(full: bool) -> Vec<Params> {
    let mut designs: Vec<(&str, &str, u32)> = vec![];
    if full {
        for input in [
            "bf16",
            "f16",
            "float:4:3",
            "float:8:2",
            "fix:7:8",
            "fix:0:15",
        ] {
            for f in ["mx:fp8:e4m3", "mx:fp4:e2m1:b5", "mx:int8:b3"] {
                for s in 0..=ENC_STAGES {
                    designs.push((f, input, s));
                }
            }
        }
    } else {
        designs = vec![
            ("mx:fp8:e4m3:b4", "f16", 0),
            ("mx:int8:b3", "fix:7:8", ENC_STAGES),
            ("mx:fp4:e2m1", "bf16", ENC_STAGES),
        ];
    }
    designs
        .into_iter()
        .map(|(f, input, s)| {
            let mut p = Params::parse(Unit::MxEnc, f)
                .expect("an MX format")
                .stages(s);
            p.input = Some(input.parse().expect("an input format"));
            p
        })
        .collect()
}

/// The `array --pe mx` designs of the lint grid. Full: every element type 1×1 at every stage
/// count (0..=6; K = 32 for E4M3, small blocks for the others), E4M3 K = 32 2×2 at 0 and 2
/// and a 4×4 of FP4 blocks of 8 at 2. Lean: E4M3 blocks of 4 and INT8 blocks of 3, 1×1, at
/// 0, 2 and 6.
pub(crate) fn array_grid(full: bool) -> Vec<Params> {
    let mut shapes: Vec<(&str, (u32, u32), Vec<u32>)> = vec![];
    let all: Vec<u32> = (0..=MX_PE_MAX_STAGES).collect();
    if full {
        for f in [
            "mx:fp8:e4m3",
            "mx:fp8:e5m2:b2",
            "mx:fp6:e3m2:b3",
            "mx:fp6:e2m3:b5",
            "mx:fp4:e2m1:b4",
            "mx:int8:b3",
        ] {
            shapes.push((f, (1, 1), all.clone()));
        }
        shapes.push(("mx:fp8:e4m3", (2, 2), vec![0, 2]));
        shapes.push(("mx:fp4:e2m1:b8", (4, 4), vec![2]));
    } else {
        shapes.push(("mx:fp8:e4m3:b4", (1, 1), vec![0, 2, MX_PE_MAX_STAGES]));
        shapes.push(("mx:int8:b3", (1, 1), vec![0, 2, MX_PE_MAX_STAGES]));
    }
    let mut g = vec![];
    for (f, (rows, cols), stages) in shapes {
        for s in stages {
            let mut p = Params::parse(Unit::Array, f)
                .expect("an MX format")
                .stages(s);
            (p.rows, p.cols) = (rows, cols);
            g.push(p);
        }
    }
    g
}
