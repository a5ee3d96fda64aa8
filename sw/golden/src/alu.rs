//! One lane of the vector ALU (the `alu` and `vector` RTL units): its operations, their codes,
//! and the exact result of each. The RTL lane, the co-simulation and the training driver's
//! elementwise work all follow this definition.
//!
//! A lane works in a format F and converts to and from a second format T of the same family
//! (`--to`; T = F by default, where conversion is the identity). Every cycle it reads an
//! opcode, two F words `a`, `b`, a select bit and a T word `t_in`, and gives:
//! - `y`, the F result of the opcode;
//! - `t_out` = `a` converted to T (on every opcode, so a narrowing pass needs no opcode);
//! - `cmp`, how `a` compares with `b` (on every opcode): 0 equal, 1 less, 2 greater,
//!   3 unordered (an LNS NaN; posits use the standard's total order, where NaR is below every
//!   real; fixed point is always ordered);
//! - `nan`, `y` is NaN / NaR (never for fixed point).
//!
//! Opcode 11, `sqrt`, is an option of the lane ([`Alu::with_sqrt`], `lpgen rtl --sqrt`): a
//! lane built without it (every design before issue 46, and the default) gives the zero word
//! for code 11 as for the unassigned codes, so that adding the opcode changed no design.

use std::cmp::Ordering;

use crate::arith::{Bits, Calc};
use crate::fixed::FixFormat;
use crate::format::{err, Format, FormatError};
use crate::lns::LnsFormat;
use crate::posit::PositFormat;
use crate::rounding::{Rounder, Rounding};

/// The opcodes of a lane. Code 11 (`sqrt`) is the lane's option ([`Alu::with_sqrt`]);
/// codes 12..=15 are unassigned and give the zero word.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AluOp {
    /// a + b
    Add = 0,
    /// a − b
    Sub = 1,
    /// a · b
    Mul = 2,
    /// a / b
    Div = 3,
    /// The larger (NaN / NaR if either is).
    Max = 4,
    /// The smaller (NaN / NaR if either is).
    Min = 5,
    /// One if a < b, else zero (a mask: the ReLU derivative is `lt(0, x)`).
    Lt = 6,
    /// −a
    Neg = 7,
    /// |a|
    Abs = 8,
    /// `sel ? a : b`
    Select = 9,
    /// `t_in` converted from T to F.
    Convert = 10,
    /// √a, the family's correctly rounded root (`Calc::sqrt`), in lanes built with it;
    /// the zero word otherwise.
    Sqrt = 11,
}

/// Width of the opcode port.
pub const ALU_OP_BITS: u32 = 4;

impl AluOp {
    pub const ALL: [AluOp; 12] = [
        AluOp::Add,
        AluOp::Sub,
        AluOp::Mul,
        AluOp::Div,
        AluOp::Max,
        AluOp::Min,
        AluOp::Lt,
        AluOp::Neg,
        AluOp::Abs,
        AluOp::Select,
        AluOp::Convert,
        AluOp::Sqrt,
    ];

    pub fn code(self) -> u8 {
        self as u8
    }

    pub fn from_code(code: u8) -> Option<AluOp> {
        AluOp::ALL.into_iter().find(|o| o.code() == code)
    }

    pub fn name(self) -> &'static str {
        match self {
            AluOp::Add => "add",
            AluOp::Sub => "sub",
            AluOp::Mul => "mul",
            AluOp::Div => "div",
            AluOp::Max => "max",
            AluOp::Min => "min",
            AluOp::Lt => "lt",
            AluOp::Neg => "neg",
            AluOp::Abs => "abs",
            AluOp::Select => "select",
            AluOp::Convert => "convert",
            AluOp::Sqrt => "sqrt",
        }
    }
}

/// The inputs of one lane in one cycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AluIn {
    pub op: u8,
    pub a: Bits,
    pub b: Bits,
    pub sel: bool,
    pub t_in: Bits,
}

/// The outputs of one lane for one cycle's inputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AluOut {
    pub y: Bits,
    pub t_out: Bits,
    pub cmp: u8,
    pub nan: bool,
}

/// A lane of format `f` converting to and from `to`, with or without the `sqrt` opcode.
#[derive(Clone, Copy, Debug)]
pub struct Alu {
    pub f: Calc,
    pub to: Calc,
    /// Whether opcode 11 is `sqrt` (else it gives the zero word, as unassigned codes do).
    pub sqrt: bool,
}

impl Alu {
    /// A lane of `f` with conversion partner `to` (same family, one whose registry entry
    /// has lanes).
    pub fn new(f: Format, to: Format) -> Result<Alu, FormatError> {
        if !f.entry().lanes || !f.same_family(&to) {
            return err(format!(
                "an ALU lane converts within one family of {} formats, not {f} to {to}",
                crate::family::families_with(|e| e.lanes)
            ));
        }
        Ok(Alu {
            f: f.calc(),
            to: to.calc(),
            sqrt: false,
        })
    }

    /// This lane with the `sqrt` opcode (`on`) or without it.
    pub fn with_sqrt(self, on: bool) -> Alu {
        Alu { sqrt: on, ..self }
    }

    /// The opcodes this lane computes.
    pub fn ops(&self) -> impl Iterator<Item = AluOp> + '_ {
        AluOp::ALL
            .into_iter()
            .filter(|&o| o != AluOp::Sqrt || self.sqrt)
    }

    pub fn eval(&self, i: &AluIn) -> AluOut {
        let c = &self.f;
        let y = if i.op == AluOp::Sqrt.code() && !self.sqrt {
            c.zero()
        } else {
            result(c, i.op, i.a, i.b, i.sel, || {
                convert(&self.to, &self.f, i.t_in)
            })
        };
        let cmp = match c.cmp(i.a, i.b) {
            Some(Ordering::Equal) => 0,
            Some(Ordering::Less) => 1,
            Some(Ordering::Greater) => 2,
            None => 3,
        };
        AluOut {
            y,
            t_out: convert(&self.f, &self.to, i.a),
            cmp,
            nan: c.is_nan(y),
        }
    }
}

/// The `y` of opcode `op` on `a`, `b` in the arithmetic `c` (any format, f32 included, for
/// software that runs the lane's operations); `from_t` gives `t_in` converted to the lane's
/// format and is asked only by `convert`.
pub fn result(
    c: &Calc,
    op: u8,
    a: Bits,
    b: Bits,
    sel: bool,
    from_t: impl FnOnce() -> Bits,
) -> Bits {
    match AluOp::from_code(op) {
        Some(AluOp::Add) => c.add(a, b),
        Some(AluOp::Sub) => c.sub(a, b),
        Some(AluOp::Mul) => c.mul(a, b),
        Some(AluOp::Div) => c.div(a, b),
        Some(AluOp::Max) => c.max(a, b),
        Some(AluOp::Min) => c.min(a, b),
        Some(AluOp::Lt) => {
            if c.cmp(a, b) == Some(Ordering::Less) {
                c.one()
            } else {
                c.zero()
            }
        }
        Some(AluOp::Neg) => c.neg(a),
        Some(AluOp::Abs) => c.abs(a),
        Some(AluOp::Select) => {
            if sel {
                a
            } else {
                b
            }
        }
        Some(AluOp::Convert) => from_t(),
        Some(AluOp::Sqrt) => c.sqrt(a),
        None => c.zero(),
    }
}

/// `a` of format `from` converted to `to`: both of one family (see [`Alu::new`]), or one
/// float and one fix format (the `convert` unit's cross-family pairs, [`convert_pair`]; the
/// float family's rule, `float/fix.rs`).
/// f32 converts as `float:8:23` ([`convert_format`]).
pub fn convert(from: &Calc, to: &Calc, a: Bits) -> Bits {
    Conversion::new(from, to).word(a)
}

/// [`convert`] from one format to another with the calculators found once, for many words.
#[derive(Clone, Copy, Debug)]
pub struct Conversion {
    from: Calc,
    to: Calc,
    /// [`Conversion::tabled`]: every word of the source format converted, by [`Conversion::
    /// convert`] itself.
    table: Option<&'static [u32]>,
}

/// Source formats of at most this many bits convert by table ([`Conversion::tabled`]).
const CONVERSION_TABLE_BITS: u32 = 16;

impl Conversion {
    pub fn new(from: &Calc, to: &Calc) -> Conversion {
        Conversion {
            from: as_float(from),
            to: as_float(to),
            table: None,
        }
    }

    /// [`Conversion::new`] with a table of every word's conversion where the source has at
    /// most `CONVERSION_TABLE_BITS` bits and the target at most 32: for converting many
    /// words. The table is built once per pair of formats per process, from
    /// `Conversion::convert`, so it holds the same words.
    pub fn tabled(from: &Calc, to: &Calc) -> Conversion {
        let mut c = Conversion::new(from, to);
        let (fw, tw) = (from.format().width(), to.format().width());
        if fw <= CONVERSION_TABLE_BITS && tw <= 32 {
            let table: &'static Vec<u32> =
                crate::table::cached_pair(from.format(), to.format(), || {
                    (0..1u64 << fw).map(|a| c.convert(a) as u32).collect()
                });
            c.table = Some(table);
        }
        c
    }

    /// The word `a` converted ([`convert`]).
    #[inline]
    pub fn word(&self, a: Bits) -> Bits {
        match self.table.and_then(|t| t.get(a as usize)) {
            Some(&w) => u64::from(w),
            None => self.convert(a),
        }
    }

    /// The word `a` converted by the formats' rules: the definition.
    fn convert(&self, a: Bits) -> Bits {
        match (&self.from, &self.to) {
            (Calc::Float(f), Calc::Fix(t)) => f.to_fix(*t, a),
            (Calc::Fix(f), Calc::Float(t)) => t.from_fix(*f, a),
            (from, to) => from
                .convert_to(to, a)
                .unwrap_or_else(|| panic!("convert across families: {from:?} to {to:?}")),
        }
    }
}

/// The calculator `convert` uses for `c`: f32's is `float:8:23`'s ([`convert_format`]).
fn as_float(c: &Calc) -> Calc {
    let (f, canonical) = (c.format(), c.format().canonical());
    if canonical == f {
        *c
    } else {
        canonical.calc()
    }
}

/// [`convert`] rounded by `r`: to nearest as [`convert`], or stochastically (one draw per
/// conversion, whatever the word) where [`convert_rounding`] allows it, by the float family's
/// rounding (`FloatFormat::convert_with` / `from_fix_with`).
pub fn convert_with(from: &Calc, to: &Calc, a: Bits, r: &mut Rounder) -> Result<Bits, FormatError> {
    convert_rounding(from.format(), to.format(), r.rounding())?;
    Ok(match (as_float(from), as_float(to)) {
        (Calc::Float(f), Calc::Float(t)) => f.convert_with(&t, a, r),
        (Calc::Fix(f), Calc::Float(t)) => t.from_fix_with(f, a, r),
        // Rounding to nearest (convert_rounding refused stochastic rounding of the rest).
        _ => convert(from, to, a),
    })
}

/// Whether `convert` rounds F to T by `rounding`: every pair to nearest; stochastically only
/// where the result is a float (float to float, fix to float). One line otherwise.
pub fn convert_rounding(f: Format, t: Format, rounding: Rounding) -> Result<(), FormatError> {
    match (rounding, convert_format(f), convert_format(t)) {
        (Rounding::Nearest, _, _)
        | (Rounding::Stochastic(_), Format::Float(_) | Format::Fix(_), Format::Float(_)) => Ok(()),
        (r, _, _) => err(format!(
            "rounding {r}: convert rounds stochastically to float formats (from float or fix), \
             not {f} to {t}"
        )),
    }
}

/// The format the `convert` unit converts `f` as: f32 as `float:8:23` (the same words), any
/// other format itself.
pub fn convert_format(f: Format) -> Format {
    f.canonical()
}

/// Refuses a pair the `convert` unit does not convert: it converts within one family that
/// has lanes, and between float and fix (both ways); f32 converts as `float:8:23`
/// ([`convert_format`]).
pub fn convert_pair(f: Format, t: Format) -> Result<(), FormatError> {
    let (cf, ct) = (convert_format(f), convert_format(t));
    let float_fix = matches!(
        (cf, ct),
        (Format::Float(_), Format::Fix(_)) | (Format::Fix(_), Format::Float(_))
    );
    if float_fix || (cf.entry().lanes && cf.same_family(&ct)) {
        return Ok(());
    }
    err(format!(
        "convert converts within one family of {} formats, or between float and fix, not {f} \
         to {t}",
        crate::family::families_with(|e| e.lanes)
    ))
}

/// LNS to LNS: the log is rounded to T's fraction bits, to nearest with ties to the even code
/// (a tie is a value at the geometric midpoint of two T codes), then saturated above T's
/// largest code and flushed to zero at or below its reserved code. Zero and NaN stay so.
pub fn lns_convert(f: LnsFormat, t: LnsFormat, a: Bits) -> Bits {
    if f.is_nan(a) {
        return t.nan();
    }
    if f.is_zero(a) {
        return t.zero();
    }
    let (neg, code) = f.unpack(a);
    let code = code as i64;
    let c = if t.frac_bits >= f.frac_bits {
        code << (t.frac_bits - f.frac_bits)
    } else {
        let sh = t.frac_bits.abs_diff(f.frac_bits);
        let q = code >> sh;
        let rem = code - (q << sh);
        let half = 1i64 << (sh - 1);
        if rem > half || (rem == half && q & 1 == 1) {
            q + 1
        } else {
            q
        }
    };
    if c > t.code_max() as i64 {
        t.pack(neg, t.code_max())
    } else if c <= t.code_reserved() as i64 {
        t.zero()
    } else {
        t.pack(neg, c as i32)
    }
}

/// Posit to posit: the exact value rounded once in T (bit-string rounding, T's saturation and
/// `:u` rules). Zero and NaR stay so.
pub fn posit_convert(f: PositFormat, t: PositFormat, a: Bits) -> Bits {
    crate::tapered::convert(f, t, a)
}

/// Fixed point to fixed point: rounded to T's fraction bits (nearest, ties to even) and
/// saturated at T's most negative and most positive codes.
pub fn fix_convert(f: FixFormat, t: FixFormat, a: Bits) -> Bits {
    let x = f.to_int(a) as i128;
    let v = if t.frac_bits >= f.frac_bits {
        x << (t.frac_bits - f.frac_bits)
    } else {
        crate::fixed::rne_shift(x, f.frac_bits - t.frac_bits)
    };
    t.from_int(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::family_trait::Family;

    fn alu(f: &str, t: &str) -> Alu {
        Alu::new(f.parse().unwrap(), t.parse().unwrap()).unwrap()
    }

    fn run(a: &Alu, op: AluOp, x: Bits, y: Bits) -> AluOut {
        a.eval(&AluIn {
            op: op.code(),
            a: x,
            b: y,
            sel: false,
            t_in: 0,
        })
    }

    #[test]
    fn opcodes_round_trip_and_unassigned_codes_give_zero() {
        for op in AluOp::ALL {
            assert_eq!(AluOp::from_code(op.code()), Some(op));
        }
        let a = alu("lns:5:6", "lns:5:6");
        let z = a.f.zero();
        let four = a.f.from_f64(4.0);
        let at = |lane: &Alu, code: u8| {
            lane.eval(&AluIn {
                op: code,
                a: four,
                b: four,
                sel: true,
                t_in: 0,
            })
            .y
        };
        // Without the option, sqrt is an unassigned code; with it, √4 = 2.
        for code in 11..16u8 {
            assert_eq!(at(&a, code), z);
        }
        let s = a.with_sqrt(true);
        assert_eq!(at(&s, AluOp::Sqrt.code()), a.f.from_f64(2.0));
        for code in 12..16u8 {
            assert_eq!(at(&s, code), z);
        }
        assert_eq!(a.ops().count(), 11);
        assert_eq!(s.ops().last(), Some(AluOp::Sqrt));
    }

    #[test]
    fn lane_results_match_the_format_arithmetic() {
        let a = alu("posit:8:0", "posit:16:1");
        let (two, three) = (a.f.from_f64(2.0), a.f.from_f64(3.0));
        assert_eq!(run(&a, AluOp::Add, two, three).y, a.f.from_f64(5.0));
        assert_eq!(run(&a, AluOp::Div, three, two).y, a.f.from_f64(1.5));
        assert_eq!(run(&a, AluOp::Lt, two, three).y, a.f.one());
        assert_eq!(run(&a, AluOp::Lt, three, two).y, 0);
        assert_eq!(run(&a, AluOp::Max, two, three).cmp, 1);
        // 3 in posit:16:1 is exact.
        assert_eq!(run(&a, AluOp::Neg, three, two).t_out, a.to.from_f64(3.0));
        let nar = run(&a, AluOp::Div, two, 0);
        assert!(nar.nan);
        let sel = a.eval(&AluIn {
            op: AluOp::Select.code(),
            a: two,
            b: three,
            sel: true,
            t_in: 0,
        });
        assert_eq!(sel.y, two);
    }

    #[test]
    fn narrowing_conversions_round_to_nearest_even_and_saturate() {
        // lns:5:6 -> lns:5:4: code 0b10 (2/64) is a tie between 0 and 4/64: even code 0.
        let f: LnsFormat = LnsFormat::new(5, 6).unwrap();
        let t: LnsFormat = LnsFormat::new(5, 4).unwrap();
        assert_eq!(lns_convert(f, t, f.pack(false, 2)), t.pack(false, 0));
        assert_eq!(lns_convert(f, t, f.pack(false, 6)), t.pack(false, 2));
        assert_eq!(lns_convert(f, t, f.pack(true, 3)), t.pack(true, 1));
        // lns:5:6 -> lns:3:6: beyond 2^8 saturates, below 2^-8 flushes.
        let s = LnsFormat::new(3, 6).unwrap();
        assert_eq!(
            lns_convert(f, s, f.pack(false, 9 * 64)),
            s.pack(false, s.code_max())
        );
        assert_eq!(lns_convert(f, s, f.pack(true, -9 * 64)), s.zero());
        // Widening is exact and round-trips.
        let w = LnsFormat::new(6, 9).unwrap();
        for code in [f.code_min(), -1, 0, 1, f.code_max()] {
            let x = f.pack(true, code);
            assert_eq!(lns_convert(w, f, lns_convert(f, w, x)), x);
        }
        // fix:7:8 -> fix:3:2: 1.125 ties to 1.0, 1.375 to 1.5, 100 saturates.
        let (x, y) = (FixFormat::new(7, 8).unwrap(), FixFormat::new(3, 2).unwrap());
        assert_eq!(fix_convert(x, y, x.from_int(288)), y.from_int(4));
        assert_eq!(fix_convert(x, y, x.from_int(352)), y.from_int(6));
        assert_eq!(fix_convert(x, y, x.from_int(100 << 8)), y.from_int(31));
        // posit:16:1 -> posit:8:0 rounds once; NaR and zero stay.
        let (p, q) = (PositFormat::draft(16, 1), PositFormat::draft(8, 0));
        assert_eq!(posit_convert(p, q, p.from_f64(1.0 + 1.0 / 64.0)), q.one());
        assert_eq!(posit_convert(p, q, p.nar()), q.nar());
        assert_eq!(posit_convert(p, q, p.from_f64(1e9)), q.maxpos());
    }

    /// Posit and fixed-point conversion against rounding the exact value (`from_ratio`), for
    /// every word of small formats into narrower, wider and differently scaled ones.
    #[test]
    fn conversions_equal_rounding_the_exact_value() {
        use crate::exact::f64_ratio;
        let pairs = [
            ("posit:8:0", "posit:6:1"),
            ("posit:8:2", "posit:5:0"),
            ("posit:10:1", "posit:8:2:u"),
            ("posit:8", "posit:16"),
            ("posit:9:3", "posit:7:0:u"),
            ("fix:3:4", "fix:2:1"),
            ("fix:3:4", "fix:5:6"),
            ("fix:0:7", "fix:1:3"),
            ("fix:6:1", "fix:2:3"),
        ];
        for (f, t) in pairs {
            let (ff, tf): (Format, Format) = (f.parse().unwrap(), t.parse().unwrap());
            let (fc, tc) = (ff.calc(), tf.calc());
            for a in 0..1u64 << ff.width() {
                let got = convert(&fc, &tc, a);
                if fc.is_nan(a) {
                    assert!(tc.is_nan(got), "{f} -> {t}: {a:#x}");
                    continue;
                }
                let x = fc.to_f64(a);
                let (num, den) = f64_ratio(x.abs());
                let want = match tc {
                    Calc::Posit(p) => p.from_ratio(x < 0.0, &num, &den),
                    Calc::Fix(q) => q.from_ratio(x < 0.0, &num, &den),
                    _ => unreachable!(),
                };
                assert_eq!(got, want, "{f} -> {t}: {a:#x} ({x})");
            }
        }
    }

    #[test]
    fn families_do_not_mix() {
        assert!(Alu::new("lns:5:6".parse().unwrap(), "posit:8".parse().unwrap()).is_err());
        assert!(Alu::new("f32".parse().unwrap(), "f32".parse().unwrap()).is_err());
    }

    /// A tabled conversion gives `convert`'s word for every word of a source format of at
    /// most 16 bits (the table) and for random words of wider ones (no table).
    #[test]
    fn tabled_conversions_are_convert() {
        for (from, to) in [
            ("bf16", "fp8:e4m3"),
            ("bf16", "fp8:e5m2"),
            ("fp8:e5m2", "bf16"),
            ("f16", "f32"),
            ("f32", "bf16"),
            ("posit:16:1", "posit:8:2"),
            ("fix:7:8", "bf16"),
            ("bf16", "fix:7:8"),
            ("lns:5:6", "lns:3:4"),
        ] {
            let (f, t): (Format, Format) = (from.parse().unwrap(), to.parse().unwrap());
            let (fc, tc) = (f.calc(), t.calc());
            let c = Conversion::tabled(&fc, &tc);
            assert_eq!(c.table.is_some(), f.width() <= 16, "{from} to {to}");
            let words = (0..1u64 << f.width().min(16)).chain([u64::MAX]);
            for a in words.chain((0..20_000u64).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15))) {
                let a = a & (u64::MAX >> (64 - f.width()));
                assert_eq!(c.word(a), convert(&fc, &tc, a), "{from} to {to}: {a:#x}");
            }
        }
    }
}
