//! Prints one line per design of the full lint grid (`scripts/rtl-grid.sh`'s designs): its
//! top name and an FNV-1a 64 digest of its files (names and text, in order) and manifest.
//! A refactor that must not change the emitted designs compares this list before and after:
//! `scripts/refactor-digests.sh`.

use lpgen_hdl::generate;
use lpgen_hdl::units::lint_grid;

fn fnv1a64(h: u64, bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .fold(h, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

fn main() {
    let grid = lint_grid(true);
    for (i, p) in grid.iter().enumerate() {
        match generate(p) {
            Ok(d) => {
                let mut h = 0xcbf2_9ce4_8422_2325;
                for f in &d.verilog.files {
                    h = fnv1a64(h, f.name.as_bytes());
                    h = fnv1a64(h, &[0]);
                    h = fnv1a64(h, f.text.as_bytes());
                }
                h = fnv1a64(h, d.manifest.as_bytes());
                println!("{} {h:016x}", d.top);
            }
            Err(e) => println!("design {i} of the grid refused: {e}"),
        }
    }
    eprintln!("{} designs", grid.len());
}
