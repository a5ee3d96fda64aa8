//! The port layout of a design, read from its manifest: which 64-bit slots of the packed
//! input and output buffers each port occupies. `clk` is driven by the shim and has no slot.
//! A port of width w takes ⌈w/64⌉ slots, least significant first; words of a bus (the
//! array's `a_in`, `b_in`, `c_out`) are packed at bit offsets i·w across slots.

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

fn field<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    let rest = line.split(&format!("\"{key}\": ")).nth(1)?;
    Some(if let Some(s) = rest.strip_prefix('"') {
        s.split('"').next()?
    } else {
        rest.split([',', '}']).next()?.trim()
    })
}

impl Layout {
    /// Reads the manifest of `lpgen_hdl::generate` (one port per line).
    pub fn from_manifest(manifest: &str) -> Result<Layout> {
        let bad = |what: &str| VerifError(format!("unreadable design manifest: {what}"));
        let top = manifest
            .lines()
            .find_map(|l| field(l, "top"))
            .ok_or_else(|| bad("no top"))?
            .to_string();
        let latency = manifest
            .lines()
            .find_map(|l| field(l, "latency"))
            .and_then(|l| l.parse().ok())
            .ok_or_else(|| bad("no latency"))?;
        let (mut ports, mut in_slots, mut out_slots) = (vec![], 0, 0);
        for l in manifest.lines().filter(|l| l.contains("\"direction\"")) {
            let name = field(l, "name").ok_or_else(|| bad("port without a name"))?;
            let input = field(l, "direction") == Some("input");
            let width: u32 = field(l, "width")
                .and_then(|w| w.parse().ok())
                .filter(|&w| w > 0)
                .ok_or_else(|| bad("port without a width"))?;
            if name == "clk" {
                continue;
            }
            let ok =
                !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !ok {
                return Err(bad(&format!("port name '{name}'")));
            }
            let slot = if input { &mut in_slots } else { &mut out_slots };
            let p = Port {
                name: name.to_string(),
                input,
                width,
                slot: *slot,
            };
            *slot += p.slots();
            ports.push(p);
        }
        let l = Layout {
            top,
            latency,
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
}
