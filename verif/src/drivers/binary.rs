//! Stateless two-operand units: `lns-mul` (a, b, div → y, overflow, nan), `lns-add`
//! (a, b, sub → y, overflow, nan), `posit-add` (a, b, sub → y, nar), `posit-mul`
//! (a, b → y, nar), `float-add` (a, b, sub → y, nan), `float-mul` (a, b → y, nan).
//! Exhaustive: every pair with both settings of the flag; otherwise every
//! pair of corner cases, then random pairs.

use lpgen_golden::Format;
use lpgen_hdl::{Params, Unit};

use super::words::{family_words, LnsRef};
use super::{no_exhaustive, Ctx, Mode, Plan};
use crate::rng::Rng;
use crate::Result;

/// Exhaustive runs up to this many operand pairs (13-bit words: lns:5:6).
const MAX_PAIRS_LOG2: u32 = 26;

fn flag_name(u: Unit) -> Option<&'static str> {
    match u {
        Unit::LnsMul => Some("div"),
        Unit::LnsAdd | Unit::PositAdd | Unit::FloatAdd => Some("sub"),
        _ => None,
    }
}

pub(crate) fn plan(p: &Params, mode: Mode) -> Result<Plan> {
    let w = p.format.width();
    let flags = 1 + u64::from(flag_name(p.unit).is_some());
    let cycles = match mode {
        Mode::Exhaustive if 2 * w > MAX_PAIRS_LOG2 => {
            return Err(no_exhaustive(
                p,
                &format!("{w}-bit words give 2^{} operand pairs", 2 * w),
            ))
        }
        Mode::Exhaustive => (1u64 << (2 * w)) * flags,
        Mode::Vectors(n) => n + 40 * 40 * flags,
    };
    let ok = matches!(
        (p.unit, p.format),
        (Unit::LnsMul | Unit::LnsAdd, Format::Lns(_))
            | (Unit::PositAdd | Unit::PositMul, Format::Posit(_))
            | (Unit::FloatAdd | Unit::FloatMul, Format::Float(_))
    );
    if !ok {
        let kind = match p.unit {
            Unit::LnsMul | Unit::LnsAdd => "an LNS",
            Unit::FloatAdd | Unit::FloatMul => "a float",
            _ => "a posit",
        };
        return Err(crate::VerifError(format!(
            "{} needs {kind} format, not {}",
            p.unit.name(),
            p.format
        )));
    }
    Ok(Plan { cycles, drive })
}

/// The golden outputs (in the order of `outs`) of one operation.
type Golden = Box<dyn Fn(u64, u64, bool) -> [u64; 3]>;

/// The golden outputs of one operation and the units' output ports: the LNS units' (y,
/// overflow and nan: the golden flagged operations), else y and the family's NaN flag
/// (posit `nar`, float `nan`) from the format's arithmetic.
fn golden(p: &Params) -> (Golden, Vec<&'static str>) {
    let add = matches!(p.unit, Unit::LnsAdd | Unit::PositAdd | Unit::FloatAdd);
    if let Format::Lns(f) = p.format {
        let r = LnsRef::new(f);
        let g: Golden = Box::new(move |a, b, flag| {
            let (y, o) = if add {
                r.add(a, b, flag)
            } else {
                r.mul(a, b, flag)
            };
            [y, o as u64, r.f.is_nan(y) as u64]
        });
        return (g, vec!["y", "overflow", "nan"]);
    }
    let c = p.format.calc();
    let g: Golden = Box::new(move |a, b, sub| {
        let y = if !add {
            c.mul(a, b)
        } else if sub {
            c.sub(a, b)
        } else {
            c.add(a, b)
        };
        [y, c.is_nan(y) as u64, 0]
    });
    let nan = match p.unit {
        Unit::PositAdd | Unit::PositMul => "nar",
        _ => "nan",
    };
    (g, vec!["y", nan])
}

fn drive(ctx: &mut Ctx) -> Result<()> {
    let l = ctx.layout;
    let (a, b, valid) = (l.slot("a")?, l.slot("b")?, l.slot("in_valid")?);
    let flag = flag_name(ctx.p.unit).map(|n| l.slot(n)).transpose()?;
    let (g, out_names) = golden(ctx.p);
    let words = family_words(ctx.p.format);
    let specials = words.specials();
    let outs: Vec<usize> = out_names.iter().map(|n| l.slot(n)).collect::<Result<_>>()?;
    let mut ins = vec![0u64; l.in_slots];
    let mut want = vec![0u64; l.out_slots];
    ins[valid] = 1;
    let flags: &[bool] = if flag.is_some() {
        &[false, true]
    } else {
        &[false]
    };
    let mut op = |chk: &mut crate::Checker, x: u64, y: u64, fl: bool| {
        ins[a] = x;
        ins[b] = y;
        if let Some(s) = flag {
            ins[s] = fl as u64;
        }
        let r = g(x, y, fl);
        for (k, &s) in outs.iter().enumerate() {
            want[s] = r[k];
        }
        chk.mark_restart();
        chk.push(&ins, Some(&want));
    };
    let w = ctx.p.format.width();
    match ctx.mode {
        Mode::Exhaustive => {
            for x in 0..1u64 << w {
                for y in 0..1u64 << w {
                    for &fl in flags {
                        op(ctx.chk, x, y, fl);
                    }
                }
            }
        }
        Mode::Vectors(n) => {
            for &x in &specials {
                for &y in &specials {
                    for &fl in flags {
                        op(ctx.chk, x, y, fl);
                    }
                }
            }
            let mut r = Rng(ctx.seed);
            for _ in 0..n {
                let (x, y) = words.pair(&mut r);
                let fl = r.coin();
                op(ctx.chk, x, y, fl && flag.is_some());
            }
        }
    }
    Ok(())
}
