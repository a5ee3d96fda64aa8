//! Tests of the runtime: the cache (corrupt, half-written, replaced and abandoned entries),
//! the toolchain's one-line errors, and rebuilding objects that do not load (with a fake
//! Verilator, and one test with the real one).

use std::path::{Path, PathBuf};
use std::process::Command;

use lpgen_hdl::Verilog;

use super::cache::stamp_for;
use super::{ensure_entry, entry_valid, Model, Toolchain};
use crate::layout::Layout;
use crate::VerifError;

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
