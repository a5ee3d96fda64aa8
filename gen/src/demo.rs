//! `lpgen demo`: the whole path on a small default that needs no download: the golden model
//! on the seeds' worked examples, RTL generation, co-simulation against the golden model,
//! and a little training through the simulated RTL checked bit for bit against the golden
//! model (the bundled `data/mnist-300`).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use lpgen_golden::{Format, SumMode};
use lpgen_hdl::{generate, Params, PeKind, Unit};
use lpgen_train::arch::Arch;
use lpgen_train::config::{Activation, Config, KahanPlaces, Normalize, Stages};
use lpgen_train::data;
use lpgen_train::machine::{Checked, Golden};
use lpgen_train::rtl::Rtl;
use lpgen_train::trainer::{self, Plan};
use lpgen_verif::{Mode, RunOptions, Toolchain};

use crate::golden_cmd::line;
use crate::{emit, CliError, CliResult};

/// Where the demo writes: generated RTL and the training results.
const OUT: &str = "demo-out";

pub fn run(out: &mut dyn Write) -> CliResult {
    golden(out)?;
    let t = Instant::now();
    rtl(out)?;
    // Co-simulation and training need Verilator: say so in one line if it is missing.
    let tc = Toolchain::find()?;
    cosim(out, &tc)?;
    train(out)?;
    emit(
        out,
        &format!(
            "\nDone in {:.0} s. Next: `lpgen rtl --help`, `lpgen cosim --help`, `lpgen train --help`; \
             docs/rtl.md, docs/formats.md, docs/perf.md.",
            t.elapsed().as_secs_f64()
        ),
    )
}

fn golden(out: &mut dyn Write) -> CliResult {
    emit(
        out,
        "lpgen demo: the golden model on the seeds' worked examples\n",
    )?;

    emit(
        out,
        "Seed 000 (Liu, Singular LNS = lns:5:6), abstract and Table 4.10:",
    )?;
    for (op, a, b) in [("add", "98", "2"), ("mul", "10", "10")] {
        let r = line("lns:5:6", op, &[a, b], "naive")?;
        emit(
            out,
            &format!("  lpgen golden lns:5:6 {op} {a} {b}  ->  {r}"),
        )?;
    }

    emit(out, "\nSeed 000 §2.6.1, summing 1000 ones in lns:5:6:")?;
    let ones: Vec<&str> = vec!["1"; 1000];
    for mode in ["naive", "kahan", "pairwise"] {
        let r = line("lns:5:6", "sum", &ones, mode)?;
        emit(out, &format!("  {mode:<8} {r}"))?;
    }

    emit(
        out,
        "\nSeed 004 eq. 4.1, 2×10 + 2×10 + 2×10 + 2×2 in posit:8:0:",
    )?;
    let pairs = ["2,10", "2,10", "2,10", "2,2"];
    for mode in ["naive", "quire"] {
        let r = line("posit:8:0", "dot", &pairs, mode)?;
        emit(out, &format!("  {mode:<8} {r}"))?;
    }

    emit(
        out,
        "\nThe same dot product in other formats (quire where the format has one):",
    )?;
    for fmt in ["posit:16:1", "posit:8", "fix:7:8", "lns:5:6", "f32"] {
        // The family's exact accumulator where it has one, else Kahan (the registry's modes).
        let modes = fmt.parse::<Format>()?.entry().modes;
        let mode = [SumMode::Quire, SumMode::Kahan]
            .into_iter()
            .find(|m| modes.contains(m))
            .unwrap_or(SumMode::Naive);
        let m = mode.name();
        let r = line(fmt, "dot", &pairs, m)?;
        emit(out, &format!("  {fmt:<10} {m:<8} {r}"))?;
    }
    Ok(())
}

/// Generates a few units into demo-out/rtl (as `lpgen rtl` does).
fn rtl(out: &mut dyn Write) -> CliResult {
    emit(
        out,
        &format!("\nGenerating RTL into {OUT}/rtl (lpgen rtl):"),
    )?;
    let dir = Path::new(OUT).join("rtl");
    std::fs::create_dir_all(&dir)
        .map_err(|e| CliError(format!("cannot create {}: {e}", dir.display())))?;
    let mut designs = vec![
        Params::new(Unit::LnsAdd, "lns:5:6".parse()?).stages(2),
        Params::new(Unit::PositMac, "posit:16:1".parse()?).stages(3),
    ];
    let mut array = Params::new(Unit::Array, "lns:5:6".parse()?).stages(1);
    (array.rows, array.cols, array.pe) = (4, 4, PeKind::LnsKahan);
    designs.push(array);
    let mut vector = Params::new(Unit::Vector, "lns:5:6".parse()?);
    vector.lanes = 8;
    designs.push(vector);
    for p in &designs {
        let d = generate(p)?;
        crate::rtl_cmd::write_design(&dir, &d)?;
        let lines = d.verilog.text().lines().count();
        let files = d.verilog.files.len();
        emit(
            out,
            &format!(
                "  {}.v  ({files} modules in {}.f, {lines} lines)",
                d.top, d.top
            ),
        )?;
    }
    Ok(())
}

/// Co-simulates two units against the golden model (as `lpgen cosim` does).
fn cosim(out: &mut dyn Write, tc: &Toolchain) -> CliResult {
    emit(
        out,
        "\nCo-simulating with Verilator against the golden model (lpgen cosim):",
    )?;
    for (unit, fmt, mode) in [
        (Unit::LnsAdd, "lns:4:4", Mode::Exhaustive),
        (Unit::PositMac, "posit:8:0", Mode::Vectors(200_000)),
    ] {
        let p = Params::new(unit, fmt.parse()?).stages(1);
        let t = Instant::now();
        let r = lpgen_verif::run(tc, &p, RunOptions::new(mode, 1))?;
        let how = match mode {
            Mode::Exhaustive => "every operand pair".to_string(),
            Mode::Vectors(n) => format!("{n} random and corner-case steps"),
        };
        emit(
            out,
            &format!(
                "  {} {fmt}, {how}: {} passed, {} failed ({:.1} s with the build)",
                unit.name(),
                r.passed,
                r.failed,
                t.elapsed().as_secs_f64()
            ),
        )?;
        if r.failed > 0 {
            return Err(CliError(format!("co-simulation of {} failed", r.top)));
        }
    }
    Ok(())
}

/// The bundled digits (`data/mnist-300` of the source tree).
fn dataset() -> CliResult<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/mnist-300");
    if dir.is_dir() {
        Ok(dir)
    } else {
        Err(CliError(format!(
            "the demo's dataset {} is missing: run the demo from an lpgen checkout",
            dir.display()
        )))
    }
}

/// Trains a little through the RTL with --check (as `lpgen train --backend rtl --check`).
fn train(out: &mut dyn Write) -> CliResult {
    let ds = dataset()?;
    let (train, test) = data::load_pair(&ds)?;
    let cfg = Config {
        kahan: KahanPlaces::all(),
        momentum: 0.5,
        momentum_from: 2,
        normalize: Normalize::PerPixel,
        ..Config::new(
            Arch::mlp(
                (1, train.shape.0, train.shape.1),
                &[32],
                Activation::Sigmoid,
                10,
            ),
            Stages::all("lns:5:6".parse()?),
        )
    };
    emit(
        out,
        &format!(
            "\nTraining a 784-32-10 sigmoid MLP in lns:5:6 (Kahan everywhere) on {} digits through the RTL\n\
             (4x4 lns-kahan array, 8-lane vector unit), the golden model in lockstep (lpgen train --backend rtl --check):",
            train.len()
        ),
    )?;
    let plan = Plan {
        epochs: 2,
        max_steps: None,
        out: Path::new(OUT).join("train"),
        resume: false,
        progress: true,
    };
    let mut m = Checked {
        dut: Rtl::new(4, 4, 8)?,
        reference: Golden::new("golden", None),
        ops: 0,
    };
    let mut report =
        |l: &str| emit(out, &format!("  {l}")).map_err(|e| lpgen_train::TrainError(e.0));
    trainer::run(&mut m, &cfg, &train, &test, &plan, &mut report)?;
    emit(
        out,
        &format!(
            "  --check: {} operations compared, 0 differing bits; metrics, plot and checkpoint in {OUT}/train",
            m.ops
        ),
    )
}
