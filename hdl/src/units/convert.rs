//! `convert`: one word of F (`--format`) converted to T (`--to`, same family: posit to posit,
//! LNS to LNS, fix to fix): the ALU lane's conversion on its own, built by the families' own
//! `convert` (posit/lane.rs, lns/lane.rs, fix/lane.rs) and checked against the golden
//! `lpgen_golden::alu::convert`, as the lane's `t_out` is.
//!
//! | ports | candidate boundaries | latency |
//! | --- | --- | --- |
//! | `x` (width of F) in, `y` (width of T) out | posit: 2 (after the input, inside the encoder between its shift and its rounding); LNS, fix, and F = T: 1 (after the input) | stages |
//!
//! One conversion a cycle. `--stages 1` registers the input.

use lpgen_golden::Format;

use super::family::hw;
use super::{finish, start, Built, GenError, Params, Unit};

/// The pair (F, T): `--to` given, same family, not f32 or dfix.
fn formats(p: &Params) -> Result<(Format, Format), GenError> {
    let Some(to) = p.to else {
        return Err(GenError(format!(
            "convert needs --to T, the format to convert {} to (same family: posit, lns or fix)",
            p.format_name()
        )));
    };
    if !p.format.entry().lanes || !p.format.same_family(&to) {
        return Err(GenError(format!(
            "convert converts within one family of {} formats, not {} to {to}",
            lpgen_golden::family::families_with(|e| e.lanes),
            p.format_name()
        )));
    }
    Ok((p.format, to))
}

/// Candidate boundaries (1 until the pair is known to be a posit conversion).
pub(crate) fn max_stages(p: &Params) -> u32 {
    formats(p).map_or(1, |(f, to)| hw(&f).convert_stages(to))
}

pub(crate) fn convert(p: &Params) -> Result<Built, GenError> {
    let (f, to) = formats(p)?;
    let (mut m, valid) = start(p, max_stages(p))?;
    let x = m.input("x", f.width());
    m.stage();
    let y = hw(&f).convert(&mut m, to, "", &x);
    m.output("y", &y);
    finish(m, &valid, vec![])
}

/// The lint grid: lean, the two conversions the FPGA table measures (no and all stages);
/// full, narrowing and widening pairs of each family and F = T, every stage count.
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
        ]
    } else {
        &[("posit:16:1", "posit:8:2"), ("lns:5:6", "lns:4:3")]
    };
    let mut g = vec![];
    for (i, (f, t)) in pairs.iter().enumerate() {
        let mut p = Params::new(Unit::Convert, f.parse().expect("grid format"));
        p.to = Some(t.parse().expect("grid format"));
        let max = max_stages(&p);
        let stages: Vec<u32> = match (full, i) {
            (true, _) => (0..=max).collect(),
            (false, 0) => vec![max],
            (false, _) => vec![0],
        };
        for s in stages {
            g.push(p.clone().stages(s));
        }
    }
    g
}
