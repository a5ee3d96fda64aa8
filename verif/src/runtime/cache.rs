//! The model cache: where it lives ([`default_cache`]), the stamp that makes an entry valid,
//! building an entry in a temporary directory and renaming it into place ([`ensure_entry`]),
//! and sweeping the temporaries of builds that were killed.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, SystemTime};

use super::{fail, one_line};
use crate::{digest, tempfiles, Result};

pub(super) const STAMP_MAGIC: &str = "lpgen-verilator-cache 1";

pub(super) fn default_cache() -> PathBuf {
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
pub(super) fn stamp_for(so: &[u8]) -> String {
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
pub(super) fn remove_entry(path: &Path) -> std::io::Result<()> {
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
/// [`tempfiles`], for a directory. Untouched for `STALE_AFTER` (a live build writes into
/// `obj/` at every compilation step, so only a dead one, or a reused pid, gets there), or
/// made on this host and PID namespace (or of unknown origin) by a process that `/proc`
/// shows has ended. Without `/proc` only the age bound applies.
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
pub(super) fn make_entry(dir: &Path, build: impl FnOnce(&Path) -> Result<()>) -> Result<bool> {
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
