//! The port layout of a design, read from its manifest: which 64-bit slots of the packed
//! input and output buffers each port occupies. `clk` is driven by the shim and has no slot.
//! A port of width w takes ⌈w/64⌉ slots, least significant first; words of a bus (the
//! array's `a_in`, `b_in`, `c_out`) are packed at bit offsets i·w across slots.

use lpgen_hdl::{Direction, Manifest};

use crate::{Result, VerifError};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Port {
    pub name: String,
    pub input: bool,
    pub width: u32,
    /// First slot in the input or output buffer.
    pub slot: usize,
}

impl Port {
    pub fn slots(&self) -> usize {
        self.width.div_ceil(64) as usize
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    pub top: String,
    pub latency: u32,
    pub ports: Vec<Port>,
    pub in_slots: usize,
    pub out_slots: usize,
}

impl Layout {
    /// Reads the manifest of `lpgen_hdl::generate` ([`lpgen_hdl::Manifest`]).
    pub fn from_manifest(manifest: &str) -> Result<Layout> {
        let bad = |what: &str| VerifError(format!("unreadable design manifest: {what}"));
        let m = Manifest::from_json(manifest).map_err(|e| bad(&e.to_string()))?;
        let (mut ports, mut in_slots, mut out_slots) = (vec![], 0, 0);
        for port in m.ports {
            let name = port.name;
            if port.width == 0 {
                return Err(bad(&format!("port '{name}' of width 0")));
            }
            if name == "clk" {
                continue;
            }
            let ok =
                !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !ok {
                return Err(bad(&format!("port name '{name}'")));
            }
            let input = port.direction == Direction::Input;
            let slot = if input { &mut in_slots } else { &mut out_slots };
            let p = Port {
                name,
                input,
                width: port.width,
                slot: *slot,
            };
            *slot += p.slots();
            ports.push(p);
        }
        let l = Layout {
            top: m.top,
            latency: m.latency,
            ports,
            in_slots,
            out_slots,
        };
        for need in ["rst", "in_valid", "out_valid"] {
            l.port(need)?;
        }
        Ok(l)
    }

    pub fn port(&self, name: &str) -> Result<&Port> {
        self.ports
            .iter()
            .find(|p| p.name == name)
            .ok_or_else(|| VerifError(format!("design {} has no port '{name}'", self.top)))
    }

    /// The slot of a port of at most 64 bits.
    pub fn slot(&self, name: &str) -> Result<usize> {
        let p = self.port(name)?;
        Ok(p.slot)
    }

    pub fn outputs(&self) -> impl Iterator<Item = &Port> {
        self.ports.iter().filter(|p| !p.input)
    }
}

/// Mask of the low `w` bits (w ≤ 64).
pub fn mask(w: u32) -> u64 {
    if w >= 64 {
        u64::MAX
    } else {
        (1u64 << w) - 1
    }
}

/// Writes the low `w` bits of `v` (w ≤ 64) at bit `pos` of a slot buffer (bits there must be 0).
#[inline]
pub fn put_bits(slots: &mut [u64], pos: usize, w: u32, v: u64) {
    let v = v & mask(w);
    let (i, off) = (pos / 64, (pos % 64) as u32);
    slots[i] |= v << off;
    if off + w > 64 {
        slots[i + 1] |= v >> (64 - off);
    }
}

/// Reads `w` bits (w ≤ 64) at bit `pos` of a slot buffer.
#[inline]
pub fn get_bits(slots: &[u64], pos: usize, w: u32) -> u64 {
    let (i, off) = (pos / 64, (pos % 64) as u32);
    let mut v = slots[i] >> off;
    if off + w > 64 {
        v |= slots[i + 1] << (64 - off);
    }
    v & mask(w)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_round_trip_across_slot_boundaries() {
        let mut s = vec![0u64; 3];
        for i in 0..9 {
            put_bits(&mut s, i * 13, 13, 0x1000 + i as u64 * 77);
        }
        for i in 0..9 {
            assert_eq!(get_bits(&s, i * 13, 13), 0x1000 + i as u64 * 77);
        }
        let mut s = vec![0u64; 2];
        put_bits(&mut s, 60, 64, u64::MAX - 5);
        assert_eq!(get_bits(&s, 60, 64), u64::MAX - 5);
    }

    #[test]
    fn reads_the_generator_manifest() {
        let mut p = lpgen_hdl::Params::new(lpgen_hdl::Unit::Array, "lns:5:6".parse().unwrap());
        (p.rows, p.cols) = (8, 8);
        let d = lpgen_hdl::generate(&p).unwrap();
        let l = Layout::from_manifest(&d.manifest).unwrap();
        assert_eq!(l.latency, 16);
        assert_eq!(l.port("c_out").unwrap().width, 64 * 13);
        assert_eq!(l.port("c_out").unwrap().slots(), 13);
        assert!(l.port("clk").is_err());
        assert!(Layout::from_manifest("{}").is_err());
    }

    #[test]
    fn refuses_bad_manifests() {
        let p = lpgen_hdl::Params::new(lpgen_hdl::Unit::LnsMul, "lns:3:2".parse().unwrap());
        let good = lpgen_hdl::generate(&p).unwrap().manifest;
        assert!(Layout::from_manifest(&good).is_ok());
        let refused = |text: &str, why: &str| {
            let e = Layout::from_manifest(text).unwrap_err().0;
            assert!(e.starts_with("unreadable design manifest: "), "{e}");
            assert!(e.contains(why), "{why}: {e}");
            assert!(!e.contains('\n'), "{e}");
        };
        refused(&good[..good.len() / 2], "EOF");
        refused("[1, 2]", "invalid type");
        refused(&good.replace("\"top\"", "\"name\""), "missing field `top`");
        // Layout-independent edits: a negative latency ahead of the renamed real one, and every
        // `width` key renamed.
        refused(
            &good.replacen("\"latency\"", "\"latency\": -1, \"old_latency\"", 1),
            "invalid value",
        );
        refused(
            &good.replace("\"output\"", "\"inout\""),
            "unknown variant `inout`",
        );
        refused(
            &good.replace("\"width\"", "\"wide\""),
            "missing field `width`",
        );
        // Ports that parse but the runtime refuses: edited in the typed manifest.
        let m = lpgen_hdl::Manifest::from_json(&good).unwrap();
        let a = m.ports.iter().position(|p| p.name == "a").unwrap();
        let port = |edit: &dyn Fn(&mut lpgen_hdl::manifest::Port)| {
            let mut m = m.clone();
            edit(&mut m.ports[a]);
            m.to_json()
        };
        refused(&port(&|p| p.name = "a b".into()), "port name 'a b'");
        refused(&port(&|p| p.name = String::new()), "port name ''");
        refused(&port(&|p| p.width = 0), "port 'a' of width 0");
        // A design without a port the runtime drives.
        let no_rst = good.replace("\"rst\"", "\"rst2\"");
        let e = Layout::from_manifest(&no_rst).unwrap_err().0;
        assert!(e.contains("has no port 'rst'"), "{e}");
    }
}
