//! Loading and driving a compiled model: a cache entry loaded with a rebuild if its object
//! does not load ([`ensure_loaded`]), the check that refuses a truncated object, the shim's
//! functions resolved from it ([`Shim`]) and a model instance ([`Model`]).

use std::ffi::{c_char, c_void, CString};
use std::path::Path;

use super::cache::{make_entry, remove_entry};
use super::fail;
use crate::layout::Layout;
use crate::{shim, Result};

/// Makes `dir` a valid entry and loads it with `load`; also tells whether it was built now.
/// An intact entry whose object does not load (built for another machine, or cut short
/// before it was stamped) is rebuilt once; if that does not load either, or the entry was
/// built just now, the load error is reported.
pub(super) fn ensure_loaded<T>(
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
pub(super) struct Shim {
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
    pub(super) fn open(so: &Path, layout: &Layout) -> Result<Shim> {
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
    pub(super) fn create(shim: Shim, so: &Path, vcd: Option<&Path>) -> Result<Model> {
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
