//! The 8-bit approximation codecs of seed 003 in hardware: `q8-enc` (word → code) and `q8-dec`
//! (code → word) for one type (`--q8 TYPE`) on words of a fix, posit or f32 format, with the scale
//! (the tensor's absolute maximum, or 10^o) a runtime word of the same format. The rule is the
//! golden `Q8Type::encode_word` / `decode_word` (docs/formats.md, "q8 on words"); every
//! table comes from the golden `Codebook::fixed`.
//!
//! | unit | inputs | outputs | candidate boundaries | latency |
//! | --- | --- | --- | --- | --- |
//! | `q8-dec` | `code` (8), `scale` (W) | `y` (W), `overflow` (fix), `nar` (posit) or `nan` (f32) | 2: table read / scale decode, product | stages |
//! | `q8-enc` | `x` (W), `scale` (W) | `code` (8) | 15 to 20 by type: input decode, every four divider steps and after it, six in the search | stages |
//!
//! f32 words: [`mod@f32`] (the IEEE input decode and the decoder's rounding to f32).
//!
//! Both accept one operation per cycle. Sub-modules: the decoder's value ROM and the
//! encoder's field ROM (`lpgen_q8_values_…`, `lpgen_q8_fields_…`), one per type.

mod dec;
mod enc;
mod f32;

pub(crate) use dec::dec;
pub(crate) use enc::{enc, enc_stages};

use std::rc::Rc;

use lpgen_golden::q8::Q8Type;
use lpgen_golden::Format;

use super::{GenError, Params, Unit};
use crate::ir::{Module, StagePlan, SubModule, E};

/// Candidate stage boundaries of `q8-dec` (the most `--stages` accepts; `q8-enc`'s depend on
/// the type: [`enc_stages`]).
pub(crate) const DEC_STAGES: u32 = 2;

/// Refuses a format the codecs do not take (LNS and dfix words).
fn check_format(p: &Params) -> Result<(), GenError> {
    match p.format {
        Format::Fix(_) | Format::Posit(_) | Format::F32(_) => Ok(()),
        other => Err(GenError(format!(
            "{} needs a fix, posit or f32 format (e.g. fix:7:8, posit:16:1, f32), not {other}",
            p.unit.name()
        ))),
    }
}

/// Bits that hold `v` (at least 1).
fn bits_of(v: u64) -> u32 {
    (64 - v.leading_zeros()).max(1)
}

/// A combinational ROM module `name` (`addr` in, `q` out), defined once per design.
fn rom_module(
    m: &Module,
    name: &str,
    comment: &str,
    width: u32,
    contents: Vec<u128>,
) -> Rc<SubModule> {
    let aw = bits_of(contents.len() as u64 - 1);
    m.define_ok(name, StagePlan::none(), |r| {
        r.header.push(comment.to_string());
        let addr = r.input("addr", aw);
        let q = r.rom("rom", width, contents, &addr);
        r.output("q", &q);
    })
}

/// Reads `rom` at `addr` through an instance named `name`.
fn read(m: &mut Module, rom: &Rc<SubModule>, name: &str, addr: &E) -> E {
    let q = m.instance(rom, name, &[("addr", addr)]).port("q");
    m.wire(&format!("{name}_q"), &q)
}

/// `q8_dynamic_tree`: the type as it appears in module names.
fn type_tag(ty: Q8Type) -> String {
    format!("q8_{}", ty.name().replace('-', "_"))
}

/// The q8 designs of the lint grid: each type, fix, posit and f32 words, stages 0, 1 and all.
pub(crate) fn grid(unit: Unit, full: bool) -> Vec<Params> {
    let max = |p: &Params| match unit {
        Unit::Q8Dec => DEC_STAGES,
        _ => enc_stages(p),
    };
    let mut g = vec![];
    if full {
        for ty in Q8Type::ALL {
            for f in [
                "fix:7:8",
                "fix:15:16",
                "posit:8:0",
                "posit:16:1",
                "posit:32:2",
                "f32",
            ] {
                let p = params(unit, f, ty, 0);
                for s in [0, 1, max(&p)] {
                    g.push(p.clone().stages(s));
                }
            }
        }
    } else {
        // Three designs a unit: the four types between the two units, fix, posit and f32
        // words, no and all stages.
        let lean = match unit {
            Unit::Q8Dec => [
                ("posit:16:1", Q8Type::StaticTree, true),
                ("fix:15:16", Q8Type::Linear, false),
                ("f32", Q8Type::DynamicTree, true),
            ],
            _ => [
                ("fix:7:8", Q8Type::DynamicTree, true),
                ("posit:8:0", Q8Type::Mantissa, false),
                ("f32", Q8Type::Linear, false),
            ],
        };
        for (f, ty, deepest) in lean {
            let p = params(unit, f, ty, 0);
            let s = if deepest { max(&p) } else { 0 };
            g.push(p.stages(s));
        }
    }
    g
}

fn params(unit: Unit, f: &str, ty: Q8Type, stages: u32) -> Params {
    let mut p = Params::new(unit, f.parse().expect("grid format")).stages(stages);
    p.q8 = ty;
    p
}
