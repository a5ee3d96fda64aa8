//! `lpgen demo`: what lpgen can do today, on the seeds' worked examples. Each later stage
//! (RTL, co-simulation, training, synthesis) adds its step here.

use std::io::Write;

use lpgen_golden::{Format, SumMode};

use crate::golden_cmd::line;
use crate::{emit, CliResult};

pub fn run(out: &mut dyn Write) -> CliResult {
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
        let mode = match fmt.parse::<Format>()? {
            Format::Posit(_) | Format::Fix(_) => SumMode::Quire,
            _ => SumMode::Kahan,
        };
        let m = format!("{mode:?}").to_lowercase();
        let r = line(fmt, "dot", &pairs, &m)?;
        emit(out, &format!("  {fmt:<10} {m:<8} {r}"))?;
    }
    emit(
        out,
        "\nNext: `lpgen golden --help`; formats and rounding rules are in docs/formats.md.",
    )
}
