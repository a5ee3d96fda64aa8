//! `lpgen train --format mx:ELEM[:bK]` (issue 33): the MX block format of the products, and
//! the options and backends that do not go with it, refused in one line each.

use lpgen_golden::mx::{self, MxFormat};
use lpgen_golden::Rounding;

use super::{bad, TrainArgs};
use crate::CliResult;

/// The MX format of `--format mx:…`, or `None` for any other format.
pub(super) fn blocks(a: &TrainArgs) -> CliResult<Option<MxFormat>> {
    let Some(f) = a.format.as_deref().filter(|f| mx::is_mx(f)) else {
        return Ok(None);
    };
    let m: MxFormat = f.parse()?;
    match a.backend.as_str() {
        // rtl: the products on `array --format mx:…` (the mx PE), everything else on the
        // host's golden f32 operations, as for dfix storage.
        "golden" | "f32" | "rtl" => {}
        other => {
            return Err(bad(format!(
                "unknown backend {other:?}: expected f32, golden or rtl"
            )))
        }
    }
    let given = [
        ("--quire", a.quire),
        ("--kahan", a.kahan.is_some()),
        ("--accumulate", a.accumulate.is_some()),
        ("--keep-bits", a.keep_bits.is_some()),
        (
            "--rounding",
            a.rounding.parse::<Rounding>()? != Rounding::Nearest,
        ),
    ];
    let stages = (a.backend == "rtl").then_some(a.array_stages);
    check_options(m, &given, stages)?;
    Ok(Some(m))
}

/// The refusals `lpgen train` and `lpgen eval` share for `--format {m}`: an option `given`
/// (name, whether it was given) that does not apply to MX products, and `--array-stages`
/// beyond the mx array PE's (`array_stages`: on the rtl backend).
pub(crate) fn check_options(
    m: MxFormat,
    given: &[(&str, bool)],
    array_stages: Option<u32>,
) -> CliResult {
    let most = lpgen_hdl::units::array_max_stages(lpgen_hdl::PeKind::Mx);
    if let Some(s) = array_stages.filter(|&s| s > most) {
        return Err(bad(format!(
            "--array-stages {s}: the mx array PE of --format {m} takes at most {most}"
        )));
    }
    if let Some((option, _)) = given.iter().find(|g| g.1) {
        return Err(bad(format!(
            "{option} does not apply to --format {m}: its products are MX block dot products summed in f32 (OCP MX §6.4) and everything else is f32"
        )));
    }
    Ok(())
}

/// What `--check` adds to its summary about MX products run on the array (nothing for none).
pub(super) fn products(n: u64) -> String {
    match n {
        0 => String::new(),
        n => format!(" ({n} MX products on the array)"),
    }
}
