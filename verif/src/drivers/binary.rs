//! Stateless two-operand units: `lns-mul` (a, b, div → y, overflow, nan), `lns-add`
//! (a, b, sub → y, overflow, nan), `posit-add` (a, b, sub → y, nar), `posit-mul`
//! (a, b → y, nar), `float-add` (a, b, sub → y, nan), `float-mul` (a, b → y, nan).
//! Exhaustive: every pair with both settings of the flag; otherwise every
//! pair of corner cases, then random pairs.

use lpgen_golden::Family;
use lpgen_golden::Format;
use lpgen_hdl::{Params, Unit};

use super::float_words::{float_pair, float_specials};
use super::words::{posit_pair, posit_specials, LnsRef};
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

fn golden(p: &Params) -> (Golden, Vec<&'static str>, Vec<u64>) {
    match p.format {
        Format::Lns(f) => {
            let r = LnsRef::new(f);
            let sp = r.specials();
            let g: Golden = if p.unit == Unit::LnsMul {
                Box::new(move |a, b, div| {
                    let (y, o) = r.mul(a, b, div);
                    [y, o as u64, r.f.is_nan(y) as u64]
                })
            } else {
                Box::new(move |a, b, sub| {
                    let (y, o) = r.add(a, b, sub);
                    [y, o as u64, r.f.is_nan(y) as u64]
                })
            };
            (g, vec!["y", "overflow", "nan"], sp)
        }
        Format::Posit(f) => {
            let add = p.unit == Unit::PositAdd;
            let g: Golden = Box::new(move |a, b, sub| {
                let y = if !add {
                    f.mul(a, b)
                } else if sub {
                    f.sub(a, b)
                } else {
                    f.add(a, b)
                };
                [y, (y == f.nar()) as u64, 0]
            });
            (g, vec!["y", "nar"], posit_specials(f))
        }
        Format::Float(f) => {
            let add = p.unit == Unit::FloatAdd;
            let g: Golden = Box::new(move |a, b, sub| {
                let y = if !add {
                    f.mul(a, b)
                } else if sub {
                    f.sub(a, b)
                } else {
                    f.add(a, b)
                };
                [y, f.is_nan(y) as u64, 0]
            });
            (g, vec!["y", "nan"], float_specials(f))
        }
        _ => unreachable!("checked by plan"),
    }
}

fn drive(ctx: &mut Ctx) -> Result<()> {
    let l = ctx.layout;
    let (a, b, valid) = (l.slot("a")?, l.slot("b")?, l.slot("in_valid")?);
    let flag = flag_name(ctx.p.unit).map(|n| l.slot(n)).transpose()?;
    let (g, out_names, specials) = golden(ctx.p);
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
            let lns = match ctx.p.format {
                Format::Lns(f) => Some(LnsRef::new(f)),
                _ => None,
            };
            for _ in 0..n {
                let (x, y) = match (ctx.p.format, &lns) {
                    (_, Some(l)) => l.pair(&mut r),
                    (Format::Posit(f), _) => posit_pair(&mut r, f),
                    (Format::Float(f), _) => float_pair(&mut r, f),
                    _ => unreachable!("checked by plan"),
                };
                let fl = r.coin();
                op(ctx.chk, x, y, fl && flag.is_some());
            }
        }
    }
    Ok(())
}
