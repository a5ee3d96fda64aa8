//! Verilator at run time: find it, build a design and its shim into a shared object, cache
//! the result by content digest, and load it with `libloading`.
//!
//! Cache: `$LPGEN_CACHE/verilator/<digest>/` (default `$XDG_CACHE_HOME/lpgen` or
//! `~/.cache/lpgen`), the digest covering the Verilog, the shim, the flags and the Verilator
//! version. An entry is built in a temporary directory beside it and renamed into place
//! when complete; it holds `model.so` and a `stamp` with the digest and length of
//! `model.so`. An entry whose stamp is missing or does not match its `model.so` is removed
//! and rebuilt, never loaded.

use std::ffi::{c_char, c_void, CString};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

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
const STAMP_MAGIC: &str = "lpgen-verilator-cache 1";

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
    VerifError(format!(
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
                let v = version_line(&c).ok_or_else(|| {
                    VerifError(format!("LPGEN_CXX={c} is not a working C++ compiler"))
                })?;
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

    /// Builds (or finds in the cache) the model of `verilog` and loads it.
    pub fn model(&self, verilog: &str, layout: &Layout, trace: bool) -> Result<Model> {
        let so = self.shared_object(verilog, layout, trace)?;
        Model::load(&so, layout, None)
    }

    /// Path of the cached shared object of a design, building it if needed.
    pub fn shared_object(&self, verilog: &str, layout: &Layout, trace: bool) -> Result<PathBuf> {
        let shim = shim::source(layout);
        let mut d = digest::Digest::new();
        d.field(STAMP_MAGIC.as_bytes())
            .field(self.version.as_bytes())
            .field(self.cxx_version.as_bytes())
            .field(VERILATOR_FLAGS.join(" ").as_bytes())
            .field(CFLAGS.as_bytes())
            .field(MAKEFLAGS.as_bytes())
            .field(&[trace as u8])
            .field(layout.top.as_bytes())
            .field(verilog.as_bytes())
            .field(shim.as_bytes());
        let dir = self.cache.join("verilator").join(d.hex());
        ensure_entry(&dir, |tmp| self.build(tmp, verilog, &shim, layout, trace))?;
        Ok(dir.join("model.so"))
    }

    /// Runs Verilator in `dir` and leaves `dir/model.so`.
    fn build(&self, dir: &Path, verilog: &str, shim: &str, l: &Layout, trace: bool) -> Result<()> {
        // One build at a time in this process: builds are long and the machine is shared.
        static BUILD: Mutex<()> = Mutex::new(());
        let _one = BUILD.lock().unwrap_or_else(|e| e.into_inner());
        let io = |e: std::io::Error| {
            VerifError(format!(
                "cannot write the build directory {}: {e}",
                dir.display()
            ))
        };
        std::fs::write(dir.join("dut.v"), verilog).map_err(io)?;
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
        cmd.args(["dut.v", "shim.cpp"]);
        let out = cmd
            .output()
            .map_err(|e| missing(&format!("cannot run {}: {e}", self.verilator.display())))?;
        let built = dir.join("obj").join("model.so");
        if !out.status.success() || !built.exists() {
            let log = String::from_utf8_lossy(&out.stderr);
            let first = log
                .lines()
                .find(|l| l.contains("Error") || l.contains("error"))
                .unwrap_or_else(|| log.lines().last().unwrap_or("no output"));
            let _ = std::fs::write(dir.join("build.log"), log.as_bytes());
            return Err(VerifError(format!(
                "verilator could not build {} with {}: {first} (is make installed? scripts/setup.sh)",
                l.top, self.cxx
            )));
        }
        std::fs::rename(&built, dir.join("model.so")).map_err(io)?;
        let _ = std::fs::remove_dir_all(dir.join("obj"));
        Ok(())
    }
}

fn default_cache() -> PathBuf {
    if let Some(c) = std::env::var_os("LPGEN_CACHE") {
        return PathBuf::from(c);
    }
    if let Some(x) = std::env::var_os("XDG_CACHE_HOME") {
        return PathBuf::from(x).join("lpgen");
    }
    match std::env::var_os("HOME") {
        Some(h) => PathBuf::from(h).join(".cache").join("lpgen"),
        None => std::env::temp_dir().join("lpgen-cache"),
    }
}

/// The stamp of a complete entry: magic, then the digest and length of `model.so`.
fn stamp_for(so: &[u8]) -> String {
    format!("{STAMP_MAGIC}\nmodel.so {} {}\n", digest::hex(so), so.len())
}

/// Whether `dir` is a complete, intact cache entry.
pub fn entry_valid(dir: &Path) -> bool {
    let (Ok(stamp), Ok(so)) = (
        std::fs::read_to_string(dir.join("stamp")),
        std::fs::read(dir.join("model.so")),
    ) else {
        return false;
    };
    stamp == stamp_for(&so)
}

/// Makes `dir` a valid entry: kept if valid, else (re)built by `build` in a temporary
/// directory that is stamped and renamed into place.
pub fn ensure_entry(dir: &Path, build: impl FnOnce(&Path) -> Result<()>) -> Result<()> {
    if entry_valid(dir) {
        return Ok(());
    }
    let parent = dir.parent().unwrap_or(Path::new("."));
    let io = |e: std::io::Error| {
        VerifError(format!(
            "cannot use the Verilator cache {}: {e} (set LPGEN_CACHE to a writable directory)",
            parent.display()
        ))
    };
    std::fs::create_dir_all(parent).map_err(io)?;
    let name = dir.file_name().and_then(|n| n.to_str()).unwrap_or("entry");
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let tmp = parent.join(format!(".tmp-{name}-{}-{nanos}", std::process::id()));
    std::fs::create_dir_all(&tmp).map_err(io)?;
    let result = build(&tmp).and_then(|()| {
        let so = std::fs::read(tmp.join("model.so")).map_err(io)?;
        std::fs::write(tmp.join("stamp"), stamp_for(&so)).map_err(io)?;
        if dir.exists() && !entry_valid(dir) {
            // Corrupt or half-written: never trusted.
            let _ = std::fs::remove_dir_all(dir);
        }
        match std::fs::rename(&tmp, dir) {
            Ok(()) => Ok(()),
            // Another process completed the same entry first.
            Err(_) if entry_valid(dir) => Ok(()),
            Err(e) => Err(io(e)),
        }
    });
    let _ = std::fs::remove_dir_all(&tmp);
    result
}

type CreateFn = unsafe extern "C" fn(*const c_char) -> *mut c_void;
type DumpFn = unsafe extern "C" fn(*mut c_void, i32);
type DestroyFn = unsafe extern "C" fn(*mut c_void);
type RunFn = unsafe extern "C" fn(*mut c_void, *const u64, *mut u64, u64);
type CountFn = unsafe extern "C" fn() -> u64;
type AbiFn = unsafe extern "C" fn() -> u32;

/// A loaded model instance. Not `Sync`: one thread drives it.
pub struct Model {
    handle: *mut c_void,
    run: RunFn,
    dump: DumpFn,
    destroy: DestroyFn,
    in_slots: usize,
    out_slots: usize,
    // Declared last: unloaded after the instance is destroyed.
    _lib: libloading::Library,
}

// The instance is owned by this value and used from one thread at a time.
unsafe impl Send for Model {}

impl Model {
    /// Loads a shim shared object and creates an instance (with a VCD at `vcd` if the object
    /// was built with tracing).
    pub fn load(so: &Path, layout: &Layout, vcd: Option<&Path>) -> Result<Model> {
        let err = |e: String| VerifError(format!("cannot load the model {}: {e}", so.display()));
        // SAFETY: the object is our shim, built by `Toolchain::build` and verified against its
        // stamp; its functions have the signatures declared above (checked by the ABI version).
        unsafe {
            let lib = libloading::Library::new(so).map_err(|e| err(e.to_string()))?;
            let abi: AbiFn = *lib
                .get(b"lpgen_shim_abi\0")
                .map_err(|e| err(e.to_string()))?;
            if abi() != shim::ABI {
                return Err(err(
                    "shim interface version differs (clear the cache)".into()
                ));
            }
            let ins: CountFn = *lib
                .get(b"lpgen_shim_in_slots\0")
                .map_err(|e| err(e.to_string()))?;
            let outs: CountFn = *lib
                .get(b"lpgen_shim_out_slots\0")
                .map_err(|e| err(e.to_string()))?;
            let (in_slots, out_slots) = (ins() as usize, outs() as usize);
            if (in_slots, out_slots) != (layout.in_slots, layout.out_slots) {
                return Err(err("port layout differs from the manifest".into()));
            }
            let create: CreateFn = *lib
                .get(b"lpgen_shim_create\0")
                .map_err(|e| err(e.to_string()))?;
            let run: RunFn = *lib
                .get(b"lpgen_shim_run\0")
                .map_err(|e| err(e.to_string()))?;
            let dump: DumpFn = *lib
                .get(b"lpgen_shim_dump\0")
                .map_err(|e| err(e.to_string()))?;
            let destroy: DestroyFn = *lib
                .get(b"lpgen_shim_destroy\0")
                .map_err(|e| err(e.to_string()))?;
            let path = match vcd {
                Some(p) => Some(
                    CString::new(p.to_string_lossy().as_bytes())
                        .map_err(|_| err("VCD path contains a NUL byte".into()))?,
                ),
                None => None,
            };
            let handle = create(path.as_ref().map_or(std::ptr::null(), |c| c.as_ptr()));
            if handle.is_null() {
                return Err(err("the model could not be created".into()));
            }
            Ok(Model {
                handle,
                run,
                dump,
                destroy,
                in_slots,
                out_slots,
                _lib: lib,
            })
        }
    }

    /// Runs `n = ins.len() / in_slots` cycles in one call; `outs` receives n × out_slots.
    pub fn run(&mut self, ins: &[u64], outs: &mut [u64]) {
        let n = ins.len() / self.in_slots;
        assert!(ins.len() == n * self.in_slots && outs.len() >= n * self.out_slots);
        // SAFETY: the buffers hold n cycles of the layout the shim was generated for.
        unsafe { (self.run)(self.handle, ins.as_ptr(), outs.as_mut_ptr(), n as u64) }
    }

    /// Turns VCD dumping on or off (a trace build only).
    pub fn set_dump(&mut self, on: bool) {
        // SAFETY: handle is live.
        unsafe { (self.dump)(self.handle, on as i32) }
    }

    pub fn in_slots(&self) -> usize {
        self.in_slots
    }

    pub fn out_slots(&self) -> usize {
        self.out_slots
    }
}

impl Drop for Model {
    fn drop(&mut self) {
        // SAFETY: created by lpgen_shim_create, destroyed once.
        unsafe { (self.destroy)(self.handle) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmpdir(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("lpgen-verif-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn cache_entries_that_are_corrupt_or_half_written_are_rebuilt_not_trusted() {
        let root = tmpdir("cache");
        let dir = root.join("verilator").join("abc");
        let builds = std::cell::Cell::new(0);
        let build = |tmp: &Path| {
            builds.set(builds.get() + 1);
            std::fs::write(tmp.join("model.so"), b"\x7fELF pretend object").unwrap();
            Ok(())
        };
        ensure_entry(&dir, build).unwrap();
        assert!(entry_valid(&dir));
        ensure_entry(&dir, build).unwrap();
        assert_eq!(builds.get(), 1, "a valid entry is reused");
        // A flipped byte in the object.
        std::fs::write(dir.join("model.so"), b"\x7fELF pretend objecT").unwrap();
        assert!(!entry_valid(&dir));
        ensure_entry(&dir, build).unwrap();
        assert_eq!(builds.get(), 2);
        assert_eq!(
            std::fs::read(dir.join("model.so")).unwrap(),
            b"\x7fELF pretend object"
        );
        // Half-written: no stamp.
        std::fs::remove_file(dir.join("stamp")).unwrap();
        assert!(!entry_valid(&dir));
        ensure_entry(&dir, build).unwrap();
        assert_eq!(builds.get(), 3);
        // A truncated object.
        std::fs::write(dir.join("model.so"), b"").unwrap();
        ensure_entry(&dir, build).unwrap();
        assert_eq!(builds.get(), 4);
        assert!(entry_valid(&dir));
        // A failed build leaves nothing behind.
        let other = root.join("verilator").join("def");
        let e = ensure_entry(&other, |_| Err(VerifError("boom".into())));
        assert!(e.is_err() && !other.exists());
        let leftovers = std::fs::read_dir(root.join("verilator")).unwrap().count();
        assert_eq!(leftovers, 1);
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn a_missing_verilator_is_a_one_line_error_naming_the_fix() {
        let e = Toolchain::at(Path::new("/nonexistent/verilator"), Path::new("/tmp")).unwrap_err();
        assert!(e.0.contains("verilator not found"), "{e}");
        assert!(e.0.contains("scripts/setup.sh") && e.0.contains("apt-get install verilator"));
        assert!(!e.0.contains('\n'));
        let e = Toolchain::at(Path::new("/bin/true"), Path::new("/tmp")).unwrap_err();
        assert!(e.0.contains("not a working verilator"), "{e}");
    }
}
