//! `convert`: one word of F (`--format`) converted to T (`--to`: posit to posit, LNS to LNS,
//! fix to fix, float to float, float to fix and fix to float): the ALU lane's conversion on
//! its own, built by the families' own `convert` (posit/lane.rs, lns/lane.rs, fix/lane.rs,
//! float/convert.rs) and checked against the golden `lpgen_golden::alu::convert`, as the
//! lane's `t_out` is.
//!
//! | ports | candidate boundaries | latency |
//! | --- | --- | --- |
//! | `x` (width of F) in, `y` (width of T) out | posit: 2 (after the input, inside the encoder between its shift and its rounding); float (to float or fix) and fix to float: 2 (after the input; in the rounder, or between the fix result's shift and its rounding); LNS, fix, and F = T: 1 (after the input) | stages |
//!
//! One conversion a cycle. `--stages 1` registers the input.

use lpgen_golden::alu::convert_format;
use lpgen_golden::Format;

use super::family::hw;
use super::{finish, float, start, Built, GenError, Params, Unit};

/// The pair (F, T) as the datapath converts it (f32 as `float:8:23`, golden
/// `alu::convert_format`): `--to` given, a pair golden `alu::convert_pair` converts (one family
/// with lanes, or float and fix), not a float without RTL (`:nonan`).
fn formats(p: &Params) -> Result<(Format, Format), GenError> {
    let Some(to) = p.to else {
        return Err(GenError(format!(
            "convert needs --to T, the format to convert {} to (same family: posit, lns, fix or \
             float; or float and fix)",
            p.format_name()
        )));
    };
    lpgen_golden::alu::convert_pair(p.format, to).map_err(|e| GenError(e.to_string()))?;
    lpgen_golden::alu::convert_rounding(p.format, to, p.rounding)
        .map_err(|e| GenError(e.to_string()))?;
    let (f, to) = (convert_format(p.format), convert_format(to));
    for x in [f, to] {
        if let Format::Float(x) = x {
            float::check_hardware(x, "convert")?;
        }
    }
    Ok((f, to))
}

/// Candidate boundaries (1 until the pair is known to be a posit conversion).
pub(crate) fn max_stages(p: &Params) -> u32 {
    formats(p).map_or(1, |(f, to)| hw(&f).convert_stages(to))
}

pub(crate) fn convert(p: &Params) -> Result<Built, GenError> {
    let (f, to) = formats(p)?;
    let (mut m, valid) = start(p, max_stages(p))?;
    let x = m.input("x", f.width());
    let random = float::random_bits(&mut m, p, &valid);
    m.stage();
    let y = match &random {
        None => hw(&f).convert(&mut m, to, "", &x),
        Some(r) => float::convert_stochastic(&mut m, (f, to), &x, r).ok_or_else(|| {
            GenError(format!("convert {f} to {to}: no stochastic rounding (a lpgen bug: the golden check passed)"))
        })?,
    };
    m.output("y", &y);
    finish(m, &valid, vec![])
}

/// The lint grid: lean, the two conversions the FPGA table measures (no and all stages);
/// full, narrowing and widening pairs of each family and F = T, every stage count; then the
/// conversions to floats rounded stochastically (`float::stochastic_convert_grid`).
pub(crate) fn grid(full: bool) -> Vec<Params> {
    let pairs: &[(&str, &str)] = if full {
        &[
            ("posit:16:1", "posit:8:2"),
            ("posit:8:0", "posit:16:1"),
            ("posit:32:2", "posit:16:1"),
            ("posit:8:0", "posit:8:0"),
            ("lns:5:6", "lns:4:3"),
            ("lns:4:3", "lns:5:10"),
            ("fix:7:8", "fix:3:4"),
            ("fix:3:4", "fix:15:16"),
            ("fix:7:8", "fix:7:8"),
            ("bf16", "fp8:e4m3"),
            ("fp8:e5m2", "f16"),
            ("float:3:4:ftz", "fp8:e4m3:sat"),
            ("f16", "f16"),
            ("bf16", "fix:7:8"),
            ("fp8:e4m3", "fix:3:4"),
            ("fix:7:8", "bf16"),
            ("fix:15:16", "f16:sat"),
        ]
    } else {
        &[
            ("posit:16:1", "posit:8:2"),
            ("lns:5:6", "lns:4:3"),
            ("bf16", "fix:7:8"),
            ("fix:7:8", "fp8:e4m3"),
        ]
    };
    let mut g = vec![];
    for (i, (f, t)) in pairs.iter().enumerate() {
        let mut p = Params::new(Unit::Convert, f.parse().expect("grid format"));
        p.to = Some(t.parse().expect("grid format"));
        let max = max_stages(&p);
        let stages: Vec<u32> = match (full, i) {
            (true, _) => (0..=max).collect(),
            (false, 0 | 2) => vec![max],
            (false, _) => vec![0],
        };
        for s in stages {
            g.push(p.clone().stages(s));
        }
    }
    g.extend(float::stochastic_convert_grid(full));
    g
}
