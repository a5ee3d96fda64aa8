//! `lpgen cosim UNIT --format F [--stages S --rows R --cols C --lanes L --pe KIND]
//! [--exhaustive | --vectors N] [--seed S] [--workers K | --dist mpi]` (SPEC.md §5): the
//! generated RTL, compiled with Verilator, against the golden model. Ends with `N passed, M
//! failed`; exit status 1 on any mismatch, 2 on bad input.
//!
//! With `--workers K` (threads) or under `mpirun -np K ... --dist mpi`, the steps are shared
//! among K ranks (each runs its own model instance on the stretches between the driver's
//! restart points numbered rank mod K; `lpgen_verif::Checker::share`), and rank 0 prints the
//! one report of their summed counts.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::Args;
use lpgen_comm::Transport;
use lpgen_hdl::{Design, Params};
use lpgen_verif::{rng, Mode, RunOptions, Toolchain};
use serde::{Deserialize, Serialize};

use crate::rtl_cmd::DesignArgs;
use crate::{dist, emit, CliError, CliResult};

#[derive(Args)]
pub struct CosimArgs {
    #[command(flatten)]
    design: DesignArgs,
    /// Every operand pair (posit <= 8 bits, LNS and float words <= 13 bits; MACs from quire
    /// states; float-fma: every triple of <= 8-bit words; alu --sqrt on 11- to 16-bit
    /// words: every word through sqrt, neg, abs and convert)
    #[arg(long, conflicts_with = "vectors")]
    exhaustive: bool,
    /// Corner cases, then random steps up to N (default 100000)
    #[arg(long)]
    vectors: Option<u64>,
    /// Seed of the random stimuli, decimal or 0x… (default: from the clock, printed)
    #[arg(long)]
    seed: Option<String>,
    /// Where to write the VCD of the first failing case (default: `<top>-fail.vcd`; with
    /// several ranks each writes its own, `-rank<r>` before the extension)
    #[arg(long)]
    vcd: Option<PathBuf>,
    /// Ranks as threads of this process, each checking a share of the steps
    #[arg(long, default_value_t = 1)]
    workers: usize,
    /// Where the ranks run: local (--workers threads) or mpi (one per rank of
    /// `mpirun -np K lpgen cosim --dist mpi ...`; an lpgen built with --features mpi)
    #[arg(long, default_value = "local")]
    dist: String,
}

/// One rank's counts, gathered by rank 0.
#[derive(Serialize, Deserialize)]
struct RankReport {
    passed: u64,
    failed: u64,
    details: Vec<String>,
    vcd: Option<String>,
}

fn parse_seed(s: &str) -> CliResult<u64> {
    let r = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16),
        None => s.parse(),
    };
    r.map_err(|_| {
        CliError(format!(
            "invalid seed {s:?}: expected a decimal or 0x-hex 64-bit number"
        ))
    })
}

pub fn run(args: &CosimArgs, out: &mut dyn Write) -> CliResult {
    let p = args.design.params()?;
    let mode = match (args.exhaustive, args.vectors) {
        (true, _) => Mode::Exhaustive,
        (false, Some(0)) => return Err(CliError("--vectors must be at least 1".into())),
        (false, Some(n)) => Mode::Vectors(n),
        (false, None) => Mode::Vectors(100_000),
    };
    let seed = args.seed.as_deref().map(parse_seed).transpose()?;
    let mpi = dist::is_mpi(&args.dist, args.workers)?;
    dist::check_workers(args.workers)?;
    let design = lpgen_hdl::generate(&p)?;
    lpgen_verif::drivers::supported(&p, mode).map_err(|e| CliError(e.0))?;
    let tc = Toolchain::find().map_err(|e| CliError(e.0))?;
    let job = Job {
        args,
        p: &p,
        mode,
        seed,
        design: &design,
        tc: &tc,
    };
    let failed = if mpi {
        let mut t = dist::mpi_transport()?;
        let rank = t.rank();
        job.run(Some(&mut *t), (rank == 0).then_some(out))?
    } else if args.workers == 1 {
        job.run(None, Some(out))?
    } else {
        let mut ends = lpgen_comm::local(args.workers);
        let mut first = ends.remove(0);
        std::thread::scope(|scope| {
            let others: Vec<_> = ends
                .into_iter()
                .map(|mut t| {
                    let job = &job;
                    scope.spawn(move || job.run(Some(&mut t), None))
                })
                .collect();
            let mine = job.run(Some(&mut first), Some(out));
            // The first error in rank order (a peer's failure ends rank 0's gather too).
            let mut results = vec![mine];
            results.extend(
                others
                    .into_iter()
                    .map(|h| h.join().expect("a co-simulation rank panicked")),
            );
            results
                .into_iter()
                .collect::<CliResult<Vec<bool>>>()
                .map(|f| f[0])
        })?
    };
    if failed {
        out.flush()?;
        std::process::exit(1);
    }
    Ok(())
}

/// A co-simulation as every rank runs it.
struct Job<'a> {
    args: &'a CosimArgs,
    p: &'a Params,
    mode: Mode,
    seed: Option<u64>,
    design: &'a Design,
    tc: &'a Toolchain,
}

impl Job<'_> {
    /// Runs this rank's share (all of it alone); `out` is rank 0's. Returns whether any step
    /// failed (on every rank).
    fn run(
        &self,
        mut t: Option<&mut dyn Transport>,
        mut out: Option<&mut dyn Write>,
    ) -> CliResult<bool> {
        let comm = |e: lpgen_comm::CommError| CliError(e.to_string());
        let (rank, size) = t.as_ref().map_or((0, 1), |t| (t.rank(), t.size()));
        let p = self.p;
        // Every rank runs rank 0's seed (drawn from its clock unless given).
        let mut seed = self.seed.unwrap_or_else(rng::fresh_seed);
        if let Some(t) = t.as_deref_mut() {
            t.agree(&format!(
                "unit={} format={} stages={} rows={} cols={} lanes={} pe={} mode={:?} seed={:?}",
                p.unit.name(),
                p.format_name(),
                p.stages,
                p.rows,
                p.cols,
                p.lanes,
                p.pe.name(),
                self.mode,
                self.seed
            ))
            .map_err(comm)?;
            let bytes = t.broadcast(0, seed.to_le_bytes().to_vec()).map_err(comm)?;
            seed = u64::from_le_bytes(
                bytes
                    .try_into()
                    .map_err(|_| CliError("rank 0 sent a seed that is not 8 bytes".into()))?,
            );
        }
        if let Some(out) = out.as_deref_mut() {
            let what = match self.mode {
                Mode::Exhaustive => "exhaustive".to_string(),
                Mode::Vectors(n) => {
                    format!("{n} vectors, seed {seed:#x} (replay with --seed {seed:#x})")
                }
            };
            let ranks = if size > 1 {
                format!(", {size} ranks")
            } else {
                String::new()
            };
            emit(
                out,
                &format!(
                    "cosim {}: {} on {}, {what}{ranks}",
                    self.design.top,
                    p.unit.name(),
                    p.format_name()
                ),
            )?;
            out.flush()?;
        }
        // Rank 0 builds the model once; the others find it in the cache.
        if let Some(t) = t.as_deref_mut() {
            if rank == 0 {
                lpgen_verif::drivers::prepare(self.tc, self.design).map_err(|e| CliError(e.0))?;
            }
            t.barrier().map_err(comm)?;
        }
        let mut opts = RunOptions::new(self.mode, seed);
        let vcd = self
            .args
            .vcd
            .clone()
            .unwrap_or_else(|| PathBuf::from(format!("{}-fail.vcd", self.design.top)));
        opts.vcd = Some(if size > 1 { per_rank(&vcd, rank) } else { vcd });
        if out.is_some() {
            opts.progress = Some(progress());
        }
        if size > 1 {
            opts.share = Some((rank, size));
        }
        let report = lpgen_verif::drivers::run_design(self.tc, p, self.design, opts)
            .map_err(|e| CliError(e.0))?;
        if out.is_some() && std::io::stderr().is_terminal() {
            eprint!("\r\x1b[K");
        }
        let mine = RankReport {
            passed: report.passed,
            failed: report.failed,
            details: report.details,
            vcd: report.vcd,
        };
        let reports = match t {
            None => vec![mine],
            Some(t) => {
                let bytes = serde_json::to_vec(&mine).expect("report serializes");
                t.all_gather(bytes)
                    .map_err(comm)?
                    .iter()
                    .enumerate()
                    .map(|(r, b)| {
                        serde_json::from_slice(b).map_err(|e| {
                            CliError(format!("rank {r} sent an unreadable report: {e}"))
                        })
                    })
                    .collect::<CliResult<Vec<RankReport>>>()?
            }
        };
        let passed: u64 = reports.iter().map(|r| r.passed).sum();
        let failed: u64 = reports.iter().map(|r| r.failed).sum();
        if let Some(out) = out {
            let shown: usize = reports.iter().map(|r| r.details.len()).sum();
            for d in reports.iter().flat_map(|r| &r.details) {
                emit(out, &format!("MISMATCH {d}"))?;
            }
            if failed > shown as u64 {
                emit(
                    out,
                    &format!("({} more mismatches not shown)", failed - shown as u64),
                )?;
            }
            for v in reports.iter().filter_map(|r| r.vcd.as_ref()) {
                emit(out, v)?;
            }
            emit(out, &format!("{passed} passed, {failed} failed"))?;
        }
        Ok(failed > 0)
    }
}

/// `dir/top-fail.vcd` as `dir/top-fail-rank2.vcd`.
fn per_rank(path: &Path, rank: usize) -> PathBuf {
    let stem = path
        .file_stem()
        .map_or_else(String::new, |s| s.to_string_lossy().into_owned());
    let name = match path.extension() {
        Some(e) => format!("{stem}-rank{rank}.{}", e.to_string_lossy()),
        None => format!("{stem}-rank{rank}"),
    };
    path.with_file_name(name)
}

/// Progress on stderr for runs longer than two seconds: a line redrawn in place on a
/// terminal, otherwise a line every ten seconds.
fn progress() -> Box<dyn FnMut(u64, u64)> {
    let start = Instant::now();
    let tty = std::io::stderr().is_terminal();
    let mut shown = 0.0f64;
    Box::new(move |done, total| {
        let t = start.elapsed().as_secs_f64();
        let every = if tty { 0.5 } else { 10.0 };
        if t < 2.0 || t - shown < every {
            return;
        }
        shown = t;
        let pct = 100.0 * done as f64 / total.max(1) as f64;
        let rate = done as f64 / t / 1e6;
        let line =
            format!("cosim: {done} of ~{total} cycles ({pct:.0}%), {rate:.2} M cycles/s, {t:.0} s");
        if tty {
            eprint!("\r\x1b[K{line}");
        } else {
            eprintln!("{line}");
        }
    })
}
