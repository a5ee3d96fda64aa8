//! The Verilator toolchain: finding Verilator and a C++ compiler ([`Toolchain::find`]), the
//! flags of every build, and building a design with its shim into a cache entry whose object
//! is loaded as a [`Model`].

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

use lpgen_hdl::Verilog;

use super::cache::{default_cache, STAMP_MAGIC};
use super::model::{ensure_loaded, Model, Shim};
use super::{fail, summary};
use crate::layout::Layout;
use crate::{digest, shim, Result, VerifError};

/// Flags of every build (the trace build adds `--trace`).
pub const VERILATOR_FLAGS: [&str; 7] = [
    "-O3",
    "--x-assign",
    "fast",
    "--x-initial",
    "fast",
    "--noassert",
    "-Wno-fatal",
];
const CFLAGS: &str = "-fPIC -O2";
/// Verilator's makefile compiles the model's hot code with `OPT_FAST` (default `-Os`).
const MAKEFLAGS: &str = "OPT_FAST=-O2 OPT_GLOBAL=-O2";
/// C++ compilers in order of preference. clang++ compiles Verilator's models into much
/// faster code here (the 8×8 lns-kahan array: 1.7× g++ 12's rate, docs/perf.md), mostly by
/// turning the datapath's selects into conditional moves instead of branches.
const COMPILERS: [&str; 2] = ["clang++", "g++"];

/// The Verilator installation used for builds.
#[derive(Clone, Debug)]
pub struct Toolchain {
    pub verilator: PathBuf,
    /// First line of `verilator --version`.
    pub version: String,
    /// The C++ compiler of the builds (`$LPGEN_CXX`, else the first of clang++, g++ found).
    pub cxx: String,
    /// First line of `cxx --version`.
    pub cxx_version: String,
    pub cache: PathBuf,
}

/// The first line of `exe --version`, if it runs.
fn version_line(exe: &str) -> Option<String> {
    let out = Command::new(exe).arg("--version").output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text.lines().next()?.trim().to_string();
    (out.status.success() && !line.is_empty()).then_some(line)
}

fn missing(what: &str) -> VerifError {
    fail(format!(
        "{what}: co-simulation needs Verilator 5 (install it with scripts/setup.sh or \
         `apt-get install verilator`, or point LPGEN_VERILATOR at it)"
    ))
}

impl Toolchain {
    /// Verilator from `$LPGEN_VERILATOR` or `PATH`, the cache from `$LPGEN_CACHE`.
    pub fn find() -> Result<Toolchain> {
        let exe = std::env::var_os("LPGEN_VERILATOR")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("verilator"));
        Toolchain::at(&exe, &default_cache())
    }

    /// Verilator at `exe`, caching under `cache`.
    pub fn at(exe: &Path, cache: &Path) -> Result<Toolchain> {
        let out = Command::new(exe)
            .arg("--version")
            .output()
            .map_err(|_| missing(&format!("verilator not found ({})", exe.display())))?;
        let version = String::from_utf8_lossy(&out.stdout)
            .lines()
            .next()
            .unwrap_or("")
            .trim()
            .to_string();
        if !out.status.success() || !version.starts_with("Verilator ") {
            return Err(missing(&format!(
                "{} is not a working verilator",
                exe.display()
            )));
        }
        let major = version
            .split_whitespace()
            .nth(1)
            .and_then(|v| v.split('.').next())
            .and_then(|m| m.parse::<u32>().ok())
            .unwrap_or(0);
        if major < 5 {
            return Err(missing(&format!("{version} is too old")));
        }
        let wanted = std::env::var("LPGEN_CXX").ok().filter(|c| !c.is_empty());
        let (cxx, cxx_version) = match wanted {
            Some(c) => {
                let v = version_line(&c)
                    .ok_or_else(|| fail(format!("LPGEN_CXX={c} is not a working C++ compiler")))?;
                (c, v)
            }
            None => COMPILERS
                .iter()
                .find_map(|c| version_line(c).map(|v| (c.to_string(), v)))
                .ok_or_else(|| {
                    missing("no C++ compiler (clang++ or g++) for Verilator's models")
                })?,
        };
        Ok(Toolchain {
            verilator: exe.to_path_buf(),
            version,
            cxx,
            cxx_version,
            cache: cache.to_path_buf(),
        })
    }

    /// Builds (or finds in the cache) the model of `verilog` (every file of the design) and
    /// loads it.
    pub fn model(&self, verilog: &Verilog, layout: &Layout, trace: bool) -> Result<Model> {
        let (so, shim) = self.entry(verilog, layout, trace)?;
        Model::create(shim, &so, None)
    }

    /// Path of the cached shared object of a design, building it if needed. The object is
    /// known to load (see [`Toolchain::model`]).
    pub fn shared_object(
        &self,
        verilog: &Verilog,
        layout: &Layout,
        trace: bool,
    ) -> Result<PathBuf> {
        Ok(self.entry(verilog, layout, trace)?.0)
    }

    /// The cache entry of a design, built if needed, and its object loaded. An entry that
    /// does not load is rebuilt once (`ensure_loaded`): the one place both `model` and the
    /// callers of `shared_object` (VCD replays, benchmarks) go through.
    fn entry(&self, verilog: &Verilog, layout: &Layout, trace: bool) -> Result<(PathBuf, Shim)> {
        let shim = shim::source(layout);
        let mut d = digest::Digest::new();
        d.field(STAMP_MAGIC.as_bytes())
            .field(self.version.as_bytes())
            .field(self.cxx_version.as_bytes())
            .field(VERILATOR_FLAGS.join(" ").as_bytes())
            .field(CFLAGS.as_bytes())
            .field(MAKEFLAGS.as_bytes())
            .field(&[trace as u8])
            .field(layout.top.as_bytes());
        for f in &verilog.files {
            d.field(f.name.as_bytes()).field(f.text.as_bytes());
        }
        d.field(shim.as_bytes());
        let cache = self.cache.join("verilator");
        let dir = cache.join(d.hex());
        let log = cache.join(format!("{}.log", d.hex()));
        let open = |entry: &Path| {
            Shim::open(&entry.join("model.so"), layout).map_err(|e| {
                fail(format!(
                    "{e} (built by {} with {}; set LPGEN_CXX to another compiler)",
                    self.version, self.cxx
                ))
            })
        };
        let loaded = ensure_loaded(
            &dir,
            |tmp| self.build(tmp, verilog, &shim, layout, trace, &log),
            open,
        )?;
        if loaded.1 {
            // Built now: a log of an earlier failure no longer applies.
            let _ = std::fs::remove_file(&log);
        }
        Ok((dir.join("model.so"), loaded.0))
    }

    /// Runs Verilator in `dir` and leaves `dir/model.so`; on failure the full output goes to
    /// `log`.
    fn build(
        &self,
        dir: &Path,
        verilog: &Verilog,
        shim: &str,
        l: &Layout,
        trace: bool,
        log: &Path,
    ) -> Result<()> {
        // One build at a time in this process: builds are long and the machine is shared.
        static BUILD: Mutex<()> = Mutex::new(());
        let _one = BUILD.lock().unwrap_or_else(|e| e.into_inner());
        let io = |e: std::io::Error| {
            fail(format!(
                "cannot write the build directory {}: {e}",
                dir.display()
            ))
        };
        // One file per module and the design's file list, which Verilator reads (`-f`).
        let list = verilog
            .write_to(dir, &l.top, |path, text| std::fs::write(path, text))
            .map_err(io)?;
        std::fs::write(dir.join("shim.cpp"), shim).map_err(io)?;
        let mut cflags = CFLAGS.to_string();
        if trace {
            cflags.push_str(" -DLPGEN_TRACE");
        }
        let mut cmd = Command::new(&self.verilator);
        cmd.current_dir(dir)
            .args(["--cc", "--exe", "--build", "-j", "1"])
            .args(VERILATOR_FLAGS)
            .args(["--top-module", &l.top, "--Mdir", "obj"])
            .args(["-CFLAGS", &cflags, "-LDFLAGS", "-shared", "-o", "model.so"])
            .args([
                "-MAKEFLAGS",
                &format!("CXX={cxx} LINK={cxx} {MAKEFLAGS}", cxx = self.cxx),
            ]);
        if trace {
            cmd.arg("--trace");
        }
        cmd.arg("-f").arg(&list).arg("shim.cpp");
        let out = cmd
            .output()
            .map_err(|e| missing(&format!("cannot run {}: {e}", self.verilator.display())))?;
        let built = dir.join("obj").join("model.so");
        if !out.status.success() || !built.exists() {
            let text = String::from_utf8_lossy(&out.stderr);
            let kept = std::fs::write(log, [&out.stdout[..], &out.stderr[..]].concat()).is_ok();
            return Err(fail(format!(
                "verilator could not build {} with {}: {}{} (is make installed? scripts/setup.sh)",
                l.top,
                self.cxx,
                summary(&text),
                if kept {
                    format!("; full log {}", log.display())
                } else {
                    String::new()
                }
            )));
        }
        std::fs::rename(&built, dir.join("model.so")).map_err(io)?;
        let _ = std::fs::remove_dir_all(dir.join("obj"));
        Ok(())
    }
}
