//! Upper bounds on the sizes a design may have, each with the reason it sits where it does.
//! They are checked before any generation work, by the generator and by every caller that
//! builds designs from user options (`lpgen rtl`, `cosim`, `synth`, `train --backend rtl`).

use crate::GenError;

/// Rows and columns of an array: 64 × 64 is 4,096 PEs, 20× the largest array that fits the
/// largest supported device (lns-plain 13×14 on the ECP5-85F, docs/fpga.md). Generation is
/// not what limits it since the PE is one shared module (64×64 lns:9:10: 0.31 s, 35 MB,
/// docs/perf.md); the Verilator model and synthesis of such an array are.
pub const MAX_ARRAY_SIDE: u32 = 64;

/// Lanes of a vector unit: 4× the widest unit the lint grid proves (16 lanes).
pub const MAX_LANES: u32 = 64;

/// Rows of a `quant1` column: the golden fix quire sum (an accumulator of 2·width + 16 bits)
/// is exact for 2^16 words and wraps beyond, which a longer column would have to copy.
pub const MAX_COLUMN_ROWS: u32 = 1 << 16;

/// Checks one size option (named as on the command line, e.g. `--rows`) against 1..=`max`.
pub fn check(option: &str, value: u32, max: u32, why: &str) -> Result<(), GenError> {
    if value == 0 {
        return Err(GenError(format!("{option} 0: must be at least 1")));
    }
    if value > max {
        return Err(GenError(format!(
            "{option} {value} is over the limit of {max}: {why}"
        )));
    }
    Ok(())
}

/// Checks array rows and columns.
pub fn check_array(rows: u32, cols: u32) -> Result<(), GenError> {
    let why = "larger arrays fit no supported FPGA and take Verilator hours";
    check("--rows", rows, MAX_ARRAY_SIDE, why)?;
    check("--cols", cols, MAX_ARRAY_SIDE, why)
}

/// Checks the longest column of a `quant1` unit.
pub fn check_column_rows(rows: u32) -> Result<(), GenError> {
    check(
        "--rows",
        rows,
        MAX_COLUMN_ROWS,
        "the golden fix sum it matches is exact for at most 2^16 words",
    )
}

/// Checks the size options of `p` that apply to its unit.
pub fn check_params(p: &crate::Params) -> Result<(), GenError> {
    let e = crate::units::entry(p.unit);
    if e.takes(crate::units::Opt::Rows) {
        check_column_rows(p.rows)?;
        check_array(1, p.cols)?;
    } else {
        check_array(p.rows, p.cols)?;
    }
    check_lanes(p.lanes)
}

/// Checks vector lanes.
pub fn check_lanes(lanes: u32) -> Result<(), GenError> {
    check(
        "--lanes",
        lanes,
        MAX_LANES,
        "the lint grid proves at most 16 lanes; wider units only repeat the lane",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_out_of_range_name_the_option_and_the_limit() {
        assert!(check_array(64, 1).is_ok() && check_lanes(64).is_ok());
        let e = check_array(1000, 1).unwrap_err().0;
        assert!(
            e.starts_with("--rows 1000 is over the limit of 64: "),
            "{e}"
        );
        assert_eq!(
            check_array(1, 0).unwrap_err().0,
            "--cols 0: must be at least 1"
        );
        assert!(check_column_rows(65536).is_ok());
        let e = check_column_rows(65537).unwrap_err().0;
        assert!(
            e.starts_with("--rows 65537 is over the limit of 65536: "),
            "{e}"
        );
        let e = check_lanes(u32::MAX).unwrap_err().0;
        assert!(
            e.starts_with("--lanes 4294967295 is over the limit of 64"),
            "{e}"
        );
    }
}
