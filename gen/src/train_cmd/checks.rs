//! `lpgen train`'s checks of options that need no dataset: run first, so that bad input is
//! refused in one line before anything is read, started or built.

use super::{bad, TrainArgs, MAX_THREADS};
use crate::CliResult;
use lpgen_golden::{Format, Rounding};
use lpgen_train::config::AccumulatePlaces;
use lpgen_train::parallel::Exchange;
use lpgen_train::storage::StorageConfig;

/// Checks the options that need no dataset; returns whether this process is a rank of an
/// `mpirun` job.
pub(super) fn before_data(a: &TrainArgs) -> CliResult<bool> {
    if !matches!(a.backend.as_str(), "f32" | "golden" | "rtl") {
        return Err(bad(format!(
            "unknown backend {:?}: expected f32, golden or rtl",
            a.backend
        )));
    }
    if a.check && a.backend != "rtl" {
        return Err(bad(
            "--check compares the rtl backend with the golden model; add --backend rtl".into(),
        ));
    }
    if let Some(t) = a.threads {
        if !(1..=MAX_THREADS).contains(&t) {
            return Err(bad(format!(
                "--threads {t} is out of range: give 1..={MAX_THREADS} (default: every core)"
            )));
        }
    }
    // Data parallelism: checked before the dataset is read.
    Exchange::parse(&a.compress, !a.no_error_feedback)?;
    if a.no_overlap && !a.double_buffer {
        return Err(bad(
            "--no-overlap applies to --double-buffer (whose exchange it runs in turn with the computation)"
                .into(),
        ));
    }
    let mpi = crate::dist::is_mpi(&a.dist, a.workers)?;
    if a.compress_grad.is_some() && (mpi || a.workers > 1 || a.compress != "none") {
        return Err(bad(
            "--compress-grad simulates the exchange on one worker: with workers give --compress q8:TYPE"
                .into(),
        ));
    }
    let storage = super::dfix::storage(a)?;
    if storage.is_some() && (mpi || a.workers > 1 || a.compress != "none" || a.double_buffer) {
        return Err(bad(match storage {
            Some(StorageConfig::Float(_)) => {
                "float storage trains one worker (data-parallel storage runs are not implemented)"
            }
            _ => "dfix storage trains one worker: each worker's overflow counts would move its scales apart",
        }
        .into()));
    }
    crate::dist::check_workers(a.workers)?;
    if rounding(a)? != Rounding::Nearest {
        // Float storage rounds its stored values on the host, whatever computes in f32 (its
        // parser, `dfix::storage`, has refused rtl). The rtl backend rounds float lanes
        // (`rtl_rounding` refuses what it does not).
        let storage_rounds = matches!(storage, Some(StorageConfig::Float(_)));
        let on_rtl = a.backend == "rtl" && storage.is_none();
        if a.backend != "golden" && !(storage_rounds && a.backend == "f32") && !on_rtl {
            return Err(bad(format!(
                "--rounding {} runs on --backend golden (the {} backend rounds to nearest)",
                a.rounding, a.backend
            )));
        }
        if mpi || a.workers > 1 || a.compress != "none" || a.double_buffer {
            return Err(bad(format!(
                "--rounding {} trains one worker: the run has one rounding stream",
                a.rounding
            )));
        }
        match storage {
            Some(StorageConfig::Dfix(_)) => {
                return Err(bad(format!(
                    "--rounding {}: dfix storage rounds to nearest onto its groups' grids; stochastic rounding is for float and fix formats",
                    a.rounding
                )))
            }
            Some(StorageConfig::Float(_)) | None => {}
        }
    }
    if a.backend == "rtl" {
        // Before the dataset is read and any design is built.
        let fdpa = a
            .accumulate
            .as_deref()
            .map(AccumulatePlaces::parse)
            .transpose()?;
        // The fdpa array builds chunks of up to MAX_FDPA_L pairs (every preset's).
        if let Some(m) = fdpa.and_then(|p| p.fdpa()) {
            if let lpgen_golden::float::fdpa::Shape::Given(c) = m.shape {
                if c.l > lpgen_hdl::units::MAX_FDPA_L {
                    return Err(bad(format!(
                        "--accumulate matmul={m} on --backend rtl: the fdpa array PE takes \
                         chunks of up to L = {} pairs, not {}",
                        lpgen_hdl::units::MAX_FDPA_L,
                        c.l
                    )));
                }
            }
        }
        lpgen_hdl::limits::check_array(a.rows, a.cols)?;
        lpgen_hdl::limits::check_lanes(a.lanes)?;
        let most = lpgen_hdl::PeKind::all()
            .into_iter()
            .map(lpgen_hdl::units::array_max_stages)
            .max()
            .unwrap_or(0);
        if a.array_stages > most {
            return Err(bad(format!(
                "--array-stages {} is more than any array PE takes (at most {most})",
                a.array_stages
            )));
        }
    } else if a.array_stages != 0 {
        return Err(bad(format!(
            "--array-stages is for --backend rtl, not {}",
            a.backend
        )));
    }
    for (option, limit) in [
        ("--train-limit", a.train_limit),
        ("--test-limit", a.test_limit),
    ] {
        if limit == Some(0) {
            return Err(bad(format!(
                "{option} 0 leaves no samples; give at least 1 or drop the option"
            )));
        }
    }
    Ok(mpi)
}

/// `--rounding`: nearest or stochastic:R (the golden parser's one-line refusal otherwise).
pub(super) fn rounding(a: &TrainArgs) -> CliResult<Rounding> {
    Ok(a.rounding.parse::<Rounding>()?)
}

/// `--rounding stochastic:R` on `--backend rtl`: float stages run (the float lanes on the
/// `vector --rounding` unit, `Rtl::lanes_rounded`; exact products read out by the float
/// array PE's stochastic read-out, `Rtl::matmul_rounded`); other families' lanes have no
/// stochastic RTL, refused in one line.
pub(super) fn rtl_rounding(a: &TrainArgs, rounding: Rounding, stages: &[Format]) -> CliResult {
    if a.backend != "rtl" || rounding == Rounding::Nearest {
        return Ok(());
    }
    if let Some(f) = stages.iter().find(|f| !matches!(f, Format::Float(_))) {
        return Err(bad(format!(
            "--rounding {rounding} on --backend rtl: {f} lanes round to nearest on the RTL \
             (stochastic lanes and read-out: float formats); use --backend golden"
        )));
    }
    Ok(())
}

/// `--scaling` (issue 50): parsed, its stages' formats checked, and what it does not combine
/// with refused in one line: storage and MX formats (`stored`), stochastic rounding, several
/// workers.
pub(super) fn scaling(
    a: &TrainArgs,
    stages: &lpgen_train::config::Stages,
    stored: bool,
    rounding: Rounding,
) -> CliResult<lpgen_train::scaling::Scaling> {
    let s = lpgen_train::scaling::Scaling::parse(&a.scaling)?;
    if s.is_none() {
        return Ok(s);
    }
    let no = |why: &str| -> CliResult<lpgen_train::scaling::Scaling> {
        Err(bad(format!("--scaling {}: {why}", a.scaling)))
    };
    if stored {
        return no(
            "scales products of arithmetic stages (--format F or --precision); dfix, \
                   store: and mx formats carry their own scales",
        );
    }
    if rounding != Rounding::Nearest {
        return no("scaled products round to nearest (with --rounding stochastic: not built yet)");
    }
    if a.workers > 1 || a.dist != "local" || a.double_buffer {
        return no("trains one worker (each worker's amax histories would move apart)");
    }
    s.check(stages)?;
    if a.backend == "rtl" {
        s.check_lanes(stages)?;
    }
    Ok(s)
}
