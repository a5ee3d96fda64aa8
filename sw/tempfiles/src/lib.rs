//! Files written atomically (a temporary beside the target, then a rename), and the one rule
//! for when such a temporary is a leftover: its writer, named by the pid in its name, is gone,
//! or it has not been touched for a day (the pid may have been reused). A process never
//! treats its own temporaries as leftovers. Used by `lpgen rtl`, training checkpoints and
//! results, and the Verilator model cache: a crate of its own so that each of them (training
//! among them) takes it without depending on another for it.

use std::io::Write;
use std::path::Path;
use std::time::{Duration, SystemTime};

/// A temporary untouched for this long is a leftover whatever its pid says.
pub const STALE_AFTER: Duration = Duration::from_secs(24 * 3600);

/// Whether the process `pid` exists (Linux: `/proc/<pid>`).
pub fn alive(pid: u32) -> bool {
    Path::new("/proc").join(pid.to_string()).exists()
}

/// Whether `path`, a temporary written by process `pid`, is a leftover.
pub fn is_stale(path: &Path, pid: u32) -> bool {
    if pid == std::process::id() {
        return false;
    }
    let old = std::fs::symlink_metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| SystemTime::now().duration_since(t).ok())
        .is_some_and(|age| age > STALE_AFTER);
    old || !alive(pid)
}

/// The temporary name `write_atomic` uses for `name`: `.NAME.tmpPID`.
pub fn temporary_name(name: &str) -> String {
    format!(".{name}.tmp{}", std::process::id())
}

/// The pid in a temporary name of [`temporary_name`]'s form.
fn temporary_pid(name: &str) -> Option<u32> {
    let (_, pid) = name.strip_prefix('.')?.rsplit_once(".tmp")?;
    pid.parse().ok()
}

/// Removes the leftover temporaries of [`write_atomic`] in `dir` (best effort: a directory
/// that cannot be read has none to remove).
pub fn sweep(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(pid) = name.to_str().and_then(temporary_pid) else {
            continue;
        };
        let path = e.path();
        if e.file_type().is_ok_and(|t| t.is_file()) && is_stale(&path, pid) {
            let _ = std::fs::remove_file(&path);
        }
    }
}

/// Writes `contents` to `path` atomically: a temporary in the same directory, synced, then
/// renamed over `path`, so a reader sees the old file or the new one, never half of one. The
/// directory's leftovers from killed writers are swept first; ours is removed on failure.
pub fn write_atomic(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    sweep(dir);
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("out");
    let tmp = dir.join(temporary_name(name));
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(contents)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leftovers_of_gone_writers_are_swept_and_live_ones_kept() {
        let dir = std::env::temp_dir().join(format!("lpgen-tempfiles-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        // Above Linux's largest pid_max (2^22): no process has it.
        let gone = dir.join(".a.v.tmp4194305");
        let live = dir.join(".a.v.tmp1");
        let ours = dir.join(temporary_name("b.v"));
        let other = dir.join(".notes.tmpfoo");
        for p in [&gone, &live, &ours, &other] {
            std::fs::write(p, b"x").unwrap();
        }
        write_atomic(&dir.join("a.v"), b"module a; endmodule\n").unwrap();
        assert!(!gone.exists() && live.exists() && ours.exists() && other.exists());
        assert_eq!(
            std::fs::read(dir.join("a.v")).unwrap(),
            b"module a; endmodule\n"
        );
        // A live pid's temporary untouched for two days: its pid was reused.
        let old = SystemTime::now() - 2 * STALE_AFTER;
        std::fs::File::open(&live)
            .unwrap()
            .set_modified(old)
            .unwrap();
        std::fs::File::open(&ours)
            .unwrap()
            .set_modified(old)
            .unwrap();
        sweep(&dir);
        assert!(!live.exists() && ours.exists());
        // A failed write leaves no temporary.
        assert!(write_atomic(&dir.join("no-such-dir").join("x"), b"").is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
