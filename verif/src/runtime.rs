//! Verilator at run time: find it, build a design and its shim into a shared object, cache
//! the result by content digest, and load it with `libloading`.
//!
//! Cache: `$LPGEN_CACHE/verilator/<digest>/` (default `$XDG_CACHE_HOME/lpgen` or
//! `~/.cache/lpgen`), the digest covering the Verilog, the shim, the flags and the Verilator
//! version. An entry is built in a temporary directory beside it
//! (`.tmp-<digest>-<pid>-<nanos>`) and renamed into place when complete; it holds `model.so`
//! and a `stamp` with the digest and length of `model.so`. An entry whose stamp is missing or
//! does not match its `model.so`, or a file or link where the entry's directory should be, is
//! removed and rebuilt, never loaded. An intact entry whose object does not load (built for
//! another machine, or cut short before it was stamped) is rebuilt once; then the load error
//! is reported. Temporaries that a killed build left behind are swept on the next use of the
//! cache (see [`ensure_entry`]): a temporary names its builder's pid, and holds `builder`,
//! the host and PID namespace where that pid means something. A failed build leaves its full
//! log beside the entries, as `<digest>.log`.

use std::ffi::{c_char, c_void, CString};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, SystemTime};

use lpgen_hdl::Verilog;

use crate::layout::Layout;
use crate::{digest, shim, tempfiles, Result, VerifError};

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
/// The longest quotation of a compiler's output in an error.
const QUOTE_CHARS: usize = 240;

/// `s` with its control characters escaped (a newline, a carriage return, a terminal's
/// escape), so that an error quoting a path or a tool's output stays one line.
fn one_line(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        if c.is_control() {
            o.extend(c.escape_default());
        } else {
            o.push(c);
        }
    }
    o
}

/// An error for the user, kept to one line.
fn fail(msg: String) -> VerifError {
    VerifError(one_line(&msg))
}

/// The line of a build log worth quoting (the first naming an error, else the last), without
/// terminal colours, trimmed and cut to `QUOTE_CHARS`.
fn summary(log: &str) -> String {
    let line = log
        .lines()
        .find(|l| l.contains("Error") || l.contains("error"))
        .or_else(|| log.lines().rev().find(|l| !l.trim().is_empty()))
        .unwrap_or("no output");
    // Drop ANSI sequences (ESC [ parameters final-byte); other controls are escaped later.
    let (mut plain, mut chars) = (String::new(), line.chars().peekable());
    while let Some(c) = chars.next() {
        if c == '\u{1b}' && chars.peek() == Some(&'[') {
            chars.next();
            for d in chars.by_ref() {
                if ('\u{40}'..='\u{7e}').contains(&d) {
                    break;
                }
            }
        } else {
            plain.push(c);
        }
    }
    let plain = plain.trim();
    match plain.char_indices().nth(QUOTE_CHARS) {
        Some((cut, _)) => format!("{}…", &plain[..cut]),
        None => plain.to_string(),
    }
}

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

/// Removes whatever is at `path`: a directory with its contents, a file, a link (not its
/// target). Nothing there is not an error.
fn remove_entry(path: &Path) -> std::io::Result<()> {
    let removed = match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => std::fs::remove_dir_all(path),
        Ok(_) => std::fs::remove_file(path),
        Err(e) => Err(e),
    };
    match removed {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        r => r,
    }
}

/// A build's temporary directory, removed when dropped: on every error path and when the
/// build panics (after the rename into place there is nothing left to remove).
struct Temporary(PathBuf);

impl Drop for Temporary {
    fn drop(&mut self) {
        let _ = remove_entry(&self.0);
    }
}

/// Where the pids of this process's temporaries mean something: the host and the PID
/// namespace. A cache shared by containers or machines holds temporaries whose pids this
/// process's `/proc` does not show; those are left to the age bound.
fn pid_scope() -> &'static str {
    static SCOPE: OnceLock<String> = OnceLock::new();
    SCOPE.get_or_init(|| {
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .ok()
            .or_else(|| std::env::var("HOSTNAME").ok())
            .unwrap_or_default();
        let ns = std::fs::read_link("/proc/self/ns/pid")
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        one_line(&format!("{} {ns}", host.trim()))
    })
}

/// The pid in a temporary's name `.tmp-<entry>-<pid>-<nanos>`, if it is one.
fn temporary_pid(name: &str) -> Option<u32> {
    let mut parts = name.strip_prefix(".tmp-")?.rsplitn(3, '-');
    let (nanos, pid, entry) = (parts.next()?, parts.next()?, parts.next()?);
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    (digits(nanos) && digits(pid) && !entry.is_empty())
        .then(|| pid.parse().ok())
        .flatten()
}

/// How long since `tmp` or its `obj/` (where a live build writes) last changed.
fn idle_for(tmp: &Path) -> Option<Duration> {
    let newest = [tmp.to_path_buf(), tmp.join("obj")]
        .iter()
        .filter_map(|p| std::fs::symlink_metadata(p).ok()?.modified().ok())
        .max()?;
    SystemTime::now().duration_since(newest).ok()
}

/// Whether the temporary `tmp` of process `pid` (not this one) was abandoned: the rule of
/// [`tempfiles`](crate::tempfiles), for a directory. Untouched for `STALE_AFTER` (a live build
/// writes into `obj/` at every compilation step, so only a dead one, or a reused pid, gets
/// there), or made on this host and PID namespace (or of unknown origin) by a process that
/// `/proc` shows has ended. Without `/proc` only the age bound applies.
fn abandoned(tmp: &Path, pid: u32) -> bool {
    if idle_for(tmp).is_some_and(|d| d > tempfiles::STALE_AFTER) {
        return true;
    }
    let here = match std::fs::read_to_string(tmp.join("builder")) {
        Ok(scope) => scope.trim_end() == pid_scope(),
        // Killed before it wrote its scope, or left by an older lpgen: taken as local.
        Err(_) => true,
    };
    here && Path::new("/proc/self").exists() && !tempfiles::alive(pid)
}

/// Removes the abandoned temporaries in the cache directory `cache` (those of a build that
/// was killed). Never this process's: another thread may be building into one.
fn sweep(cache: &Path) {
    let Ok(list) = std::fs::read_dir(cache) else {
        return;
    };
    let me = std::process::id();
    for e in list.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(temporary_pid) else {
            continue;
        };
        let path = e.path();
        if pid != me && abandoned(&path, pid) {
            let _ = remove_entry(&path);
        }
    }
}

/// Makes `dir` a valid entry: kept if valid, else (re)built by `build` in a temporary
/// directory that is stamped and renamed into place. Sweeps the abandoned temporaries beside
/// it first.
pub fn ensure_entry(dir: &Path, build: impl FnOnce(&Path) -> Result<()>) -> Result<()> {
    make_entry(dir, build).map(|_| ())
}

/// [`ensure_entry`], telling whether it built the entry.
fn make_entry(dir: &Path, build: impl FnOnce(&Path) -> Result<()>) -> Result<bool> {
    let parent = dir.parent().unwrap_or(Path::new("."));
    sweep(parent);
    if entry_valid(dir) {
        return Ok(false);
    }
    let io = |e: std::io::Error| {
        fail(format!(
            "cannot use the Verilator cache {}: {e} (set LPGEN_CACHE to a writable directory)",
            parent.display()
        ))
    };
    std::fs::create_dir_all(parent).map_err(io)?;
    let name = dir.file_name().and_then(|n| n.to_str()).unwrap_or("entry");
    let nanos = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let me = std::process::id();
    let tmp = Temporary(parent.join(format!(".tmp-{name}-{me}-{nanos}")));
    std::fs::create_dir(&tmp.0).map_err(io)?;
    std::fs::write(tmp.0.join("builder"), format!("{}\n", pid_scope())).map_err(io)?;
    build(&tmp.0)?;
    let so = std::fs::read(tmp.0.join("model.so")).map_err(|e| {
        fail(format!(
            "the build left no model.so in {}: {e}",
            tmp.0.display()
        ))
    })?;
    std::fs::write(tmp.0.join("stamp"), stamp_for(&so)).map_err(io)?;
    if !entry_valid(dir) {
        // Corrupt, half-written, or a file or link in its place: never trusted.
        remove_entry(dir).map_err(io)?;
    }
    match std::fs::rename(&tmp.0, dir) {
        Ok(()) => Ok(true),
        // Another process completed the same entry first.
        Err(_) if entry_valid(dir) => Ok(true),
        Err(e) => Err(io(e)),
    }
}

/// Makes `dir` a valid entry and loads it with `load`; also tells whether it was built now.
/// An intact entry whose object does not load (built for another machine, or cut short
/// before it was stamped) is rebuilt once; if that does not load either, or the entry was
/// built just now, the load error is reported.
fn ensure_loaded<T>(
    dir: &Path,
    mut build: impl FnMut(&Path) -> Result<()>,
    load: impl Fn(&Path) -> Result<T>,
) -> Result<(T, bool)> {
    let built = make_entry(dir, &mut build)?;
    match load(dir) {
        Ok(t) => Ok((t, built)),
        Err(e) if built => Err(e),
        Err(e) => {
            remove_entry(dir).map_err(|r| {
                fail(format!(
                    "{e}; the entry could not be removed to rebuild it: {r}"
                ))
            })?;
            make_entry(dir, &mut build)?;
            load(dir).map(|t| (t, true))
        }
    }
}

/// Refuses an object that the dynamic loader would map beyond its end: loading a truncated
/// object faults (SIGBUS) instead of failing. The ELF header, the program and section
/// header tables and every segment must lie within the file. Objects of another class or
/// byte order than this machine's are left to the loader, which refuses them.
fn check_object(so: &Path) -> std::result::Result<(), String> {
    let b = std::fs::read(so).map_err(|e| e.to_string())?;
    if b.len() < 16 || &b[..4] != b"\x7fELF" {
        return Err("not an ELF shared object".into());
    }
    let wide = match b[4] {
        1 => false,
        2 => true,
        _ => return Err("not an ELF shared object (unknown class)".into()),
    };
    let native = if cfg!(target_endian = "little") { 1 } else { 2 };
    if wide != cfg!(target_pointer_width = "64") || b[5] != native {
        return Ok(());
    }
    let short = || "the object is cut short (truncated)".to_string();
    let u16_at = |at: usize| -> Option<u64> {
        Some(u16::from_ne_bytes(b.get(at..at + 2)?.try_into().ok()?).into())
    };
    let u32_at = |at: usize| -> Option<u64> {
        Some(u32::from_ne_bytes(b.get(at..at + 4)?.try_into().ok()?).into())
    };
    let u64_at = |at: usize| -> Option<u64> {
        Some(u64::from_ne_bytes(b.get(at..at + 8)?.try_into().ok()?))
    };
    let word = |at: usize| if wide { u64_at(at) } else { u32_at(at) };
    // Offsets in the ELF header, then in a program header (ELF64, ELF32).
    let (phoff, shoff, phent) = if wide { (32, 40, 54) } else { (28, 32, 42) };
    let (p_offset, p_filesz) = if wide { (8, 32) } else { (4, 16) };
    let header = || -> Option<[u64; 6]> {
        Some([
            word(phoff)?,
            u16_at(phent)?,
            u16_at(phent + 2)?,
            word(shoff)?,
            u16_at(phent + 4)?,
            u16_at(phent + 6)?,
        ])
    };
    let [phoff, phentsize, phnum, shoff, shentsize, shnum] = header().ok_or_else(short)?;
    let len = b.len() as u64;
    let within = |off: u64, size: u64| off.checked_add(size).is_some_and(|end| end <= len);
    if !within(phoff, phentsize * phnum) || (shoff != 0 && !within(shoff, shentsize * shnum)) {
        return Err(short());
    }
    for i in 0..phnum {
        let at = (phoff + i * phentsize) as usize;
        let (off, size) = (word(at + p_offset), word(at + p_filesz));
        let (Some(off), Some(size)) = (off, size) else {
            return Err(short());
        };
        if !within(off, size) {
            return Err(short());
        }
    }
    Ok(())
}

type CreateFn = unsafe extern "C" fn(*const c_char) -> *mut c_void;
type DumpFn = unsafe extern "C" fn(*mut c_void, i32);
type DestroyFn = unsafe extern "C" fn(*mut c_void);
type RunFn = unsafe extern "C" fn(*mut c_void, *const u64, *mut u64, u64);
type CountFn = unsafe extern "C" fn() -> u64;
type AbiFn = unsafe extern "C" fn() -> u32;

/// A loaded shim object, its interface checked against the layout: what models are created
/// from.
struct Shim {
    create: CreateFn,
    run: RunFn,
    dump: DumpFn,
    destroy: DestroyFn,
    in_slots: usize,
    out_slots: usize,
    _lib: libloading::Library,
}

impl Shim {
    /// Loads the shim object `so` (checked complete first) and resolves its functions.
    fn open(so: &Path, layout: &Layout) -> Result<Shim> {
        let err = |e: String| fail(format!("cannot load the model {}: {e}", so.display()));
        check_object(so).map_err(err)?;
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
            Ok(Shim {
                create,
                run,
                dump,
                destroy,
                in_slots,
                out_slots,
                _lib: lib,
            })
        }
    }
}

/// A loaded model instance. Not `Sync`: one thread drives it.
pub struct Model {
    handle: *mut c_void,
    // Dropped after `drop` has destroyed the instance: the object is unloaded last.
    shim: Shim,
}

// The instance is owned by this value and used from one thread at a time.
unsafe impl Send for Model {}

impl Model {
    /// Loads a shim shared object and creates an instance (with a VCD at `vcd` if the object
    /// was built with tracing).
    pub fn load(so: &Path, layout: &Layout, vcd: Option<&Path>) -> Result<Model> {
        Model::create(Shim::open(so, layout)?, so, vcd)
    }

    /// An instance of the loaded `shim` (from `so`).
    fn create(shim: Shim, so: &Path, vcd: Option<&Path>) -> Result<Model> {
        let err = |e: &str| fail(format!("cannot load the model {}: {e}", so.display()));
        let path = match vcd {
            Some(p) => Some(
                CString::new(p.to_string_lossy().as_bytes())
                    .map_err(|_| err("VCD path contains a NUL byte"))?,
            ),
            None => None,
        };
        // SAFETY: `create` is the shim's constructor; the path outlives the call.
        let handle =
            unsafe { (shim.create)(path.as_ref().map_or(std::ptr::null(), |c| c.as_ptr())) };
        if handle.is_null() {
            return Err(err("the model could not be created"));
        }
        Ok(Model { handle, shim })
    }

    /// Runs `n = ins.len() / in_slots` cycles in one call; `outs` receives n × out_slots.
    pub fn run(&mut self, ins: &[u64], outs: &mut [u64]) {
        let n = ins.len() / self.shim.in_slots;
        assert!(ins.len() == n * self.shim.in_slots && outs.len() >= n * self.shim.out_slots);
        // SAFETY: the buffers hold n cycles of the layout the shim was generated for.
        unsafe { (self.shim.run)(self.handle, ins.as_ptr(), outs.as_mut_ptr(), n as u64) }
    }

    /// Turns VCD dumping on or off (a trace build only).
    pub fn set_dump(&mut self, on: bool) {
        // SAFETY: handle is live.
        unsafe { (self.shim.dump)(self.handle, on as i32) }
    }

    pub fn in_slots(&self) -> usize {
        self.shim.in_slots
    }

    pub fn out_slots(&self) -> usize {
        self.shim.out_slots
    }
}

impl Drop for Model {
    fn drop(&mut self) {
        // SAFETY: created by lpgen_shim_create, destroyed once.
        unsafe { (self.shim.destroy)(self.handle) }
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

    /// A design small enough to build in seconds: its Verilog and port layout.
    fn small_design() -> (Verilog, Layout) {
        let p = lpgen_hdl::Params::new(lpgen_hdl::Unit::LnsMul, "lns:3:2".parse().unwrap());
        let d = lpgen_hdl::generate(&p).unwrap();
        let l = Layout::from_manifest(&d.manifest).unwrap();
        (d.verilog, l)
    }

    /// A stand-in for Verilator in `root`: `--version` answers as Verilator 5, a build runs
    /// `body` (a shell fragment, in the build directory) and counts itself in `root/builds`.
    fn fake_verilator(root: &Path, body: &str) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        std::fs::create_dir_all(root).unwrap();
        let exe = root.join("verilator");
        let script = format!(
            "#!/bin/sh\ncase \"$1\" in --version) echo 'Verilator 5.999 fake'; exit 0;; esac\n\
             echo build >> '{}'\n{body}\n",
            root.join("builds").display()
        );
        std::fs::write(&exe, script).unwrap();
        std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
        exe
    }

    fn builds(root: &Path) -> usize {
        std::fs::read_to_string(root.join("builds"))
            .map(|s| s.lines().count())
            .unwrap_or(0)
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    /// Sets the modification time of `path` to `ago` in the past.
    fn age(path: &Path, ago: std::time::Duration) {
        let t = std::time::SystemTime::now() - ago;
        std::fs::File::open(path).unwrap().set_modified(t).unwrap();
    }

    #[test]
    fn temporaries_of_dead_builds_are_swept_and_live_ones_kept() {
        let root = tmpdir("sweep");
        let cache = root.join("verilator");
        std::fs::create_dir_all(&cache).unwrap();
        // A process that has exited (and been reaped), and a pid no process can have
        // (above Linux's largest pid_max, 2^22).
        let mut child = Command::new("true").spawn().unwrap();
        let gone = child.id();
        child.wait().unwrap();
        let me = std::process::id();
        let day = std::time::Duration::from_secs(24 * 3600);
        let mk = |name: &str| {
            let d = cache.join(name);
            std::fs::create_dir_all(d.join("obj")).unwrap();
            std::fs::write(d.join("obj").join("x.o"), b"").unwrap();
            d
        };
        mk(&format!(".tmp-abc-{gone}-123"));
        mk(".tmp-abc-1073741823-999");
        mk(".tmp-my-entry-name-1073741822-5"); // an entry name with dashes
                                               // Ours (another thread may be building into it) and a live process's: kept.
        mk(&format!(".tmp-def-{me}-1"));
        mk(".tmp-def-1-2");
        // A live pid's temporary untouched for more than a day: the pid was reused.
        let old = mk(".tmp-old-1-3");
        age(&old.join("obj"), day * 2);
        age(&old, day * 2);
        // Ours even when old; not temporaries of ours at all: kept.
        let mine_old = mk(&format!(".tmp-ghi-{me}-4"));
        age(&mine_old.join("obj"), day * 2);
        age(&mine_old, day * 2);
        mk(".tmp-notours");
        mk(".tmp-x-y-z");
        mk("0123abcd");
        std::fs::write(cache.join(".tmp-file-1073741823-7"), b"a stray file").unwrap();
        ensure_entry(&cache.join("e1"), |tmp| {
            std::fs::write(tmp.join("model.so"), b"object").map_err(|e| VerifError(e.to_string()))
        })
        .unwrap();
        let mut want = vec![
            format!(".tmp-def-{me}-1"),
            ".tmp-def-1-2".to_string(),
            format!(".tmp-ghi-{me}-4"),
            ".tmp-notours".to_string(),
            ".tmp-x-y-z".to_string(),
            "0123abcd".to_string(),
            "e1".to_string(),
        ];
        want.sort();
        assert_eq!(names(&cache), want);
        // The sweep also runs when the entry is already valid.
        mk(".tmp-abc-1073741823-11");
        ensure_entry(&cache.join("e1"), |_| panic!("rebuilt")).unwrap();
        assert_eq!(names(&cache), want);
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn a_build_that_fails_or_panics_leaves_no_temporary() {
        let root = tmpdir("errpaths");
        let cache = root.join("verilator");
        let e = ensure_entry(&cache.join("a"), |_| Err(VerifError("boom".into())));
        assert_eq!(e.unwrap_err().0, "boom");
        // A build that leaves no model.so.
        let e = ensure_entry(&cache.join("b"), |_| Ok(())).unwrap_err();
        assert!(!e.0.contains('\n'), "{e}");
        let caught = std::panic::catch_unwind(|| {
            let _ = ensure_entry(&cache.join("c"), |tmp| {
                std::fs::write(tmp.join("half"), b"").unwrap();
                panic!("a panicking build");
            });
        });
        assert!(caught.is_err());
        assert_eq!(names(&cache), Vec::<String>::new());
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn an_entry_replaced_by_a_file_or_a_link_is_rebuilt() {
        let root = tmpdir("notdir");
        let dir = root.join("verilator").join("abc");
        std::fs::create_dir_all(root.join("verilator")).unwrap();
        let build = |tmp: &Path| {
            std::fs::write(tmp.join("model.so"), b"object").map_err(|e| VerifError(e.to_string()))
        };
        std::fs::write(&dir, b"someone wrote a file here").unwrap();
        ensure_entry(&dir, build).unwrap();
        assert!(entry_valid(&dir));
        // A dangling symbolic link.
        std::fs::remove_dir_all(&dir).unwrap();
        std::os::unix::fs::symlink(root.join("nowhere"), &dir).unwrap();
        ensure_entry(&dir, build).unwrap();
        assert!(entry_valid(&dir) && dir.is_dir() && !dir.is_symlink());
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn an_unloadable_object_is_rebuilt_once_then_reported_in_one_line() {
        // Every build makes an object that cannot be loaded: one that is not ELF at all (our
        // check refuses it) and an executable (the dynamic loader refuses it).
        let objects = [
            (
                "notelf",
                "printf 'not an object' > obj/model.so",
                "not an ELF",
            ),
            ("exe", "cp /bin/true obj/model.so", "dynamically load"),
        ];
        for (tag, make, why) in objects {
            let root = tmpdir(&format!("unloadable-{tag}"));
            let exe = fake_verilator(&root, &format!("mkdir -p obj && {make}"));
            let tc = Toolchain::at(&exe, &root.join("cache")).unwrap();
            let (verilog, layout) = small_design();
            let one_line_load_error = |e: VerifError| {
                assert!(e.0.starts_with("cannot load the model"), "{e}");
                assert!(e.0.contains(why), "{e}");
                assert!(!e.0.contains('\n'), "{e}");
            };
            one_line_load_error(tc.model(&verilog, &layout, false).err().unwrap());
            // A fresh build that does not load is not built again.
            assert_eq!(builds(&root), 1);
            // Its entry is stamped: every later run rebuilds it once, then reports.
            one_line_load_error(tc.model(&verilog, &layout, false).err().unwrap());
            assert_eq!(builds(&root), 2);
            one_line_load_error(tc.shared_object(&verilog, &layout, false).unwrap_err());
            assert_eq!(builds(&root), 3);
            let entries = names(&root.join("cache").join("verilator"));
            assert_eq!(entries.len(), 1, "{entries:?}");
            let _ = std::fs::remove_dir_all(&root);
        }
    }

    #[test]
    fn a_compiler_error_is_quoted_in_one_line() {
        let root = tmpdir("cxxerr");
        let exe = fake_verilator(
            &root,
            "printf 'make: entering\\n\\033[1mdut.v:3: error: \\033[31mbad\\r thing\\nmore\\n' >&2; exit 1",
        );
        let tc = Toolchain::at(&exe, &root.join("cache")).unwrap();
        let (verilog, layout) = small_design();
        let e = tc.shared_object(&verilog, &layout, false).unwrap_err();
        assert!(e.0.contains("dut.v:3: error: bad"), "{e}");
        assert!(!e.0.chars().any(|c| c.is_control()), "{e:?}");
        // No temporary is left; the full output is kept beside the entries, and named.
        let cache = root.join("cache").join("verilator");
        let left = names(&cache);
        assert!(left.len() == 1 && left[0].ends_with(".log"), "{left:?}");
        assert!(e.0.contains(&left[0]), "{e}");
        let log = std::fs::read_to_string(cache.join(&left[0])).unwrap();
        assert!(
            log.contains("make: entering") && log.contains("more"),
            "{log}"
        );
        let _ = std::fs::remove_dir_all(&root);
    }

    /// With the real Verilator (CI installs it; a missing one fails with its one-line error):
    /// an entry whose object was truncated after stamping is rebuilt, and the model runs.
    #[test]
    fn a_stamped_but_truncated_object_is_rebuilt_with_verilator() {
        let root = tmpdir("truncated");
        let tc = Toolchain::at(Path::new("verilator"), &root).unwrap_or_else(|e| panic!("{e}"));
        let (verilog, layout) = small_design();
        let so = tc.shared_object(&verilog, &layout, false).unwrap();
        let good = std::fs::read(&so).unwrap();
        let bad = &good[..good.len() / 3];
        std::fs::write(&so, bad).unwrap();
        std::fs::write(so.with_file_name("stamp"), stamp_for(bad)).unwrap();
        assert!(entry_valid(so.parent().unwrap()));
        // Loaded as it is, the object would fault (SIGBUS): it is refused in one line.
        let e = Model::load(&so, &layout, None).err().unwrap();
        assert!(e.0.contains("truncated") && !e.0.contains('\n'), "{e}");
        let mut m = tc.model(&verilog, &layout, false).unwrap();
        assert!(std::fs::read(&so).unwrap().len() > bad.len());
        let mut outs = vec![0; m.out_slots()];
        m.run(&vec![0; m.in_slots()], &mut outs);
        let _ = std::fs::remove_dir_all(&root);
    }
}
