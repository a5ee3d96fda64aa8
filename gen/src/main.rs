//! `lpgen`: the command-line program over the lpgen libraries (SPEC.md §1). Thin: parsing,
//! dispatch and printing; the work is in the libraries.

mod cocotb;
mod cosim_cmd;
mod demo;
mod dist;
mod eval_cmd;
mod fusesoc;
mod golden_cmd;
mod golden_dfix;
mod golden_mx;
mod golden_scaled;
mod quant_cmd;
mod rtl_cmd;
mod sweep;
mod synth_cmd;
mod train_cmd;

use std::ffi::OsString;
use std::io::{self, Write};
use std::process::ExitCode;

use clap::error::ErrorKind;
use clap::{Parser, Subcommand};

/// An error for the user: printed as one line, exit status 2.
#[derive(Debug)]
pub struct CliError(pub String);

impl<E: std::error::Error> From<E> for CliError {
    fn from(e: E) -> Self {
        CliError(e.to_string())
    }
}

pub type CliResult<T = ()> = Result<T, CliError>;

#[derive(Parser)]
#[command(
    name = "lpgen",
    version,
    about = "Generate, prove, train through and synthesize low-precision arithmetic RTL"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// The golden model as a calculator: `lpgen golden lns:5:6 add 98 2`
    Golden(golden_cmd::GoldenArgs),
    /// Generate Verilog and its JSON manifest: `lpgen rtl lns-mul --format lns:5:6 --out rtl/`
    Rtl(rtl_cmd::RtlArgs),
    /// Prove RTL bit-exact against the golden model: `lpgen cosim posit-mac --format posit:8:0`
    Cosim(cosim_cmd::CosimArgs),
    /// Synthesize, place and route: `lpgen synth lns-mul --format lns:5:6 --target ice40-up5k`
    Synth(synth_cmd::SynthArgs),
    /// Train a network through a backend: `lpgen train --format lns:5:6 --dataset DIR`
    Train(Box<train_cmd::TrainArgs>),
    /// A trained model's test figures in another format: `lpgen eval --checkpoint runs/f32
    /// --format posit:6:1 --dataset DIR`
    Eval(Box<eval_cmd::EvalArgs>),
    /// Run an experiment's grid of training runs and render its results page:
    /// `lpgen sweep experiments/sr-storage.toml`
    Sweep(sweep::SweepArgs),
    /// Error of seed 003's 8-bit codecs: `lpgen quant q8:dynamic-tree --dist "N(0,1)"`
    Quant(quant_cmd::QuantArgs),
    /// A short tour: the seeds' worked examples computed by the golden model
    Demo,
}

/// The arguments with every operand of `lpgen golden` that begins with `-` (`-1e-3`, `-inf`,
/// `-nan`, `-1,2`) kept an operand: clap reads such a word as an unknown option, and its
/// `allow_negative_numbers` takes only plain decimals. The options of `golden` (asked of its
/// clap definition, with the value each takes) go first, then `--` and the positionals in
/// their order, so that options may still come anywhere. Any other word beginning with `--`
/// is left an option (clap refuses it), and a `--` the user gave ends the rewriting.
fn operands_after_options(args: Vec<OsString>) -> Vec<OsString> {
    if args.get(1).and_then(|a| a.to_str()) != Some("golden") {
        return args;
    }
    let mut cmd = <Cli as clap::CommandFactory>::command();
    // Built, so that the generated options (`-h`, `--help`) are listed.
    cmd.build();
    let golden = cmd
        .find_subcommand("golden")
        .expect("golden is a subcommand");
    let takes_value = |a: &clap::Arg| a.get_action().takes_values();
    // An option by its name or any alias (the hidden ones too: `--seed`).
    let long = |name: &str| {
        golden.get_arguments().find(|a| {
            a.get_long() == Some(name) || a.get_all_aliases().is_some_and(|v| v.contains(&name))
        })
    };
    let short = |c: char| golden.get_arguments().find(|a| a.get_short() == Some(c));
    let (mut options, mut operands) = (vec![], vec![]);
    let mut rest = args[2..].iter();
    while let Some(a) = rest.next() {
        let Some(text) = a.to_str() else {
            operands.push(a.clone());
            continue;
        };
        if text == "--" {
            operands.extend(rest.by_ref().cloned());
            break;
        }
        let option = if let Some(name) = text.strip_prefix("--") {
            // `--name value`, `--name=value`, a flag, or an unknown option for clap to refuse.
            Some(long(name).filter(|o| takes_value(o)).is_some())
        } else if let Some(flags) = text.strip_prefix('-').filter(|f| !f.is_empty()) {
            // `-h`: a short option only if every letter is one (golden's: help).
            let known: Option<Vec<_>> = flags.chars().map(short).collect();
            known.map(|k| k.last().is_some_and(|o| takes_value(o)) && flags.len() == 1)
        } else {
            None
        };
        match option {
            Some(with_value) => {
                options.push(a.clone());
                if with_value {
                    options.extend(rest.next().cloned());
                }
            }
            None => operands.push(a.clone()),
        }
    }
    let mut out = args[..2].to_vec();
    out.extend(options);
    out.push("--".into());
    out.extend(operands);
    out
}

/// Keeps freed memory in the process (docs/decisions.md). A training step's threads free and
/// allocate buffers of megabytes; by default glibc's malloc gives them back to the kernel
/// (blocks past its adaptive mmap threshold, and the top of a thread's arena past the trim
/// threshold) and the next step faults them in, zeroed, again, the threads waiting on the
/// process's one memory map. Blocks up to 32 MiB (glibc's largest threshold) now come from
/// the arenas, and the arenas keep up to 1 GiB free.
fn keep_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets two of malloc's parameters; it is called before any thread
    // but this one starts.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 1 << 30);
    }
}

fn main() -> ExitCode {
    keep_freed_memory();
    let cli = match Cli::try_parse_from(operands_after_options(std::env::args_os().collect())) {
        Ok(cli) => cli,
        Err(e) => {
            return match e.kind() {
                ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
                    let _ = e.print();
                    ExitCode::SUCCESS
                }
                _ => {
                    // clap's message is several lines; keep the first, which names the problem.
                    let text = e.render().to_string();
                    let first = text.lines().next().unwrap_or("invalid arguments");
                    let first = first.trim_start_matches("error: ");
                    eprintln!("lpgen: error: {first} (see 'lpgen --help')");
                    ExitCode::from(2)
                }
            };
        }
    };
    let stdout = io::stdout();
    let mut out = stdout.lock();
    let result = match cli.command {
        Command::Golden(args) => golden_cmd::run(&args, &mut out),
        Command::Rtl(args) => rtl_cmd::run(&args, &mut out),
        Command::Cosim(args) => cosim_cmd::run(&args, &mut out),
        Command::Synth(args) => synth_cmd::run(&args, &mut out),
        Command::Train(args) => train_cmd::run(&args, &mut out),
        Command::Eval(args) => eval_cmd::run(&args, &mut out),
        Command::Sweep(args) => sweep::run(&args, &mut out),
        Command::Quant(args) => quant_cmd::run(&args, &mut out),
        Command::Demo => demo::run(&mut out),
    };
    let flushed = out.flush();
    match result.and(flushed.map_err(CliError::from)) {
        Ok(()) => ExitCode::SUCCESS,
        // A closed pipe (`lpgen … | head`) is not an error of ours.
        Err(e) if e.0.contains("Broken pipe") => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("lpgen: error: {}", one_line(&e.0));
            ExitCode::from(2)
        }
    }
}

/// An error message as one line: messages quote user input with `{:?}`, and this catches any
/// control character that still slipped in (from a file name, or a tool's output).
fn one_line(message: &str) -> String {
    message
        .chars()
        .flat_map(|c| {
            let escaped: Vec<char> = if c.is_control() {
                c.escape_default().collect()
            } else {
                vec![c]
            };
            escaped
        })
        .collect()
}

/// Writes a line, turning I/O errors into `CliError`.
pub fn emit(out: &mut dyn Write, line: &str) -> CliResult {
    writeln!(out, "{line}")?;
    Ok(())
}
