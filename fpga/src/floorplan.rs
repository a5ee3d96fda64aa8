//! Floorplanning an array's multipliers (`lpgen synth array --floorplan`, ECP5).
//!
//! With most of the device's DSP blocks in use, nextpnr 0.11's placer gives the array's
//! multipliers DSP sites with no regard to where each PE's neighbours are. The PE's logic then
//! sits somewhere between its DSP and its neighbours' DSPs: in the ECP5-85F 12×12 fix array
//! it was up to 88 columns from its DSP (docs/fpga.md). Here each PE's multipliers are locked
//! to sites in the array's own order, with nextpnr's `BEL` attribute on the cell, and the
//! logic follows its DSP:
//! - the array's rows are cut into strips, one per DSP row of the device (as few as fit);
//! - inside a strip, the PEs of one column take consecutive sites.
//!
//! So PE (r, c)'s neighbour (r+1, c) is the next site, or the next strip at a strip's edge.
//! Its neighbour (r, c+1) is a strip's height of sites further along the row.

use serde_json::Value;

use crate::{FpgaError, Target};

/// The yosys cell type of a multiplier that is placed on a DSP site.
const MULTIPLIER_CELL: &str = "MULT18X18D";

/// One row of DSP sites: its y, and the x and BEL name of each multiplier site, left to right.
struct DspRow {
    y: u32,
    sites: Vec<(u32, &'static str)>,
}

/// The LFE5U-85F's 156 multiplier sites. They lie in three rows (y = 10, 34, 58) of 13 DSP
/// blocks each. A block has MULT18_0, _1, _4 and _5 at x, x+1, x+4 and x+5 from its first
/// column. The sites were read from nextpnr 0.11's placement of 156 multipliers
/// (`scripts/ecp5-dsp-sites.sh` prints them again).
fn ecp5_85k_rows() -> Vec<DspRow> {
    const BLOCK_X: [u32; 13] = [4, 13, 22, 31, 40, 49, 58, 69, 78, 87, 96, 105, 114];
    const IN_BLOCK: [(u32, &str); 4] = [
        (0, "MULT18_0"),
        (1, "MULT18_1"),
        (4, "MULT18_4"),
        (5, "MULT18_5"),
    ];
    [10, 34, 58]
        .into_iter()
        .map(|y| DspRow {
            y,
            sites: BLOCK_X
                .iter()
                .flat_map(|&x| IN_BLOCK.iter().map(move |&(dx, bel)| (x + dx, bel)))
                .collect(),
        })
        .collect()
}

/// Whether `--floorplan` can place DSPs on `target`.
pub fn supported(target: Target) -> bool {
    target == Target::Ecp5_85k
}

/// The BEL of multiplier `k` of PE (r, c) in an R×C array with `per_pe` multipliers per PE,
/// as `sites[(r * cols + c) * per_pe + k]`.
pub fn array_sites(rows: u32, cols: u32, per_pe: u32) -> Result<Vec<String>, FpgaError> {
    let dsp_rows = ecp5_85k_rows();
    let row_len = dsp_rows[0].sites.len() as u32;
    let strip_width = |strips: u32| rows.div_ceil(strips) * cols * per_pe;
    // The fewest strips: the wires between strips cross the rows of logic between DSP rows.
    let strips = (1..=dsp_rows.len() as u32)
        .find(|&s| strip_width(s) <= row_len)
        .ok_or_else(|| {
            FpgaError::DoesNotFit(format!(
                "--floorplan: a {rows}×{cols} array with {per_pe} multiplier(s) per PE needs {} \
                 DSP sites in each of the device's {} DSP rows, which have {row_len}: drop --floorplan",
                strip_width(dsp_rows.len() as u32),
                dsp_rows.len()
            ))
        })?;
    let height = rows.div_ceil(strips);
    let first_row = (dsp_rows.len() as u32 - strips) / 2;
    // Centred in the row: the middle of the device is nearest to everything else.
    let offset = (row_len - strip_width(strips)) / 2;
    let mut bels = Vec::with_capacity((rows * cols * per_pe) as usize);
    for r in 0..rows {
        let dsp_row = &dsp_rows[(first_row + r / height) as usize];
        for c in 0..cols {
            for k in 0..per_pe {
                let slot = offset + (c * height + r % height) * per_pe + k;
                let (x, bel) = dsp_row.sites[slot as usize];
                bels.push(format!("X{x}/Y{}/{bel}", dsp_row.y));
            }
        }
    }
    Ok(bels)
}

/// Locks every multiplier of the array's PEs in a flattened Yosys JSON netlist to its site
/// (the `BEL` attribute nextpnr reads). Returns how many multipliers were locked; multipliers
/// outside the PEs are left to the placer.
pub fn constrain_netlist(netlist: &mut Value, rows: u32, cols: u32) -> Result<usize, FpgaError> {
    let bad = |what: &str| FpgaError::Design(format!("--floorplan: the netlist has {what}"));
    let pe_of: std::collections::HashMap<String, (u32, u32)> = (0..rows)
        .flat_map(|r| (0..cols).map(move |c| (lpgen_hdl::units::pe_instance_name(r, c), (r, c))))
        .collect();
    let modules = netlist
        .get_mut("modules")
        .and_then(Value::as_object_mut)
        .ok_or_else(|| bad("no modules"))?;
    let mut total = 0;
    for module in modules.values_mut() {
        let Some(cells) = module.get_mut("cells").and_then(Value::as_object_mut) else {
            continue;
        };
        // (PE, cell name) of each multiplier; sorted so that a PE's k-th multiplier is the
        // same cell in every run.
        let mut found: Vec<((u32, u32), String)> = cells
            .iter()
            .filter(|(_, cell)| cell.get("type").and_then(Value::as_str) == Some(MULTIPLIER_CELL))
            .filter_map(|(name, _)| {
                let pe = name.split('.').find_map(|part| pe_of.get(part))?;
                Some((*pe, name.clone()))
            })
            .collect();
        if found.is_empty() {
            continue;
        }
        found.sort();
        let mut per_pe = vec![0u32; (rows * cols) as usize];
        for ((r, c), _) in &found {
            per_pe[(r * cols + c) as usize] += 1;
        }
        let most = per_pe.iter().copied().max().unwrap_or(0);
        let bels = array_sites(rows, cols, most)?;
        let mut seen = vec![0u32; (rows * cols) as usize];
        for ((r, c), name) in found {
            let pe = (r * cols + c) as usize;
            let bel = &bels[pe * most as usize + seen[pe] as usize];
            seen[pe] += 1;
            let attributes = cells[&name]
                .get_mut("attributes")
                .and_then(Value::as_object_mut)
                .ok_or_else(|| bad(&format!("a cell {name} without attributes")))?;
            attributes.insert("BEL".into(), Value::String(bel.clone()));
            total += 1;
        }
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    fn xy(bel: &str) -> (i64, i64) {
        let mut parts = bel.split('/');
        let x = parts.next().unwrap()[1..].parse().unwrap();
        let y = parts.next().unwrap()[1..].parse().unwrap();
        (x, y)
    }

    #[test]
    fn the_85k_has_156_distinct_sites() {
        let rows = ecp5_85k_rows();
        let all: HashSet<(u32, u32, &str)> = rows
            .iter()
            .flat_map(|r| r.sites.iter().map(move |&(x, b)| (x, r.y, b)))
            .collect();
        assert_eq!(all.len(), 156);
        for r in &rows {
            assert!(r.sites.windows(2).all(|w| w[0].0 < w[1].0), "left to right");
        }
    }

    #[test]
    fn a_12x12_takes_three_strips_of_four_rows_and_neighbours_are_near() {
        let bels = array_sites(12, 12, 1).unwrap();
        assert_eq!(bels.len(), 144);
        assert_eq!(
            bels.iter().collect::<HashSet<_>>().len(),
            144,
            "no site twice"
        );
        let at = |r: u32, c: u32| xy(&bels[(r * 12 + c) as usize]);
        // Strips: rows 0..4 on y 10, 4..8 on y 34, 8..12 on y 58.
        assert_eq!((at(0, 0).1, at(4, 0).1, at(11, 11).1), (10, 34, 58));
        // Inside a strip, PE (r+1, c) is on the next site; PE (r, c+1) 4 sites along.
        for r in 0..12 {
            for c in 0..12 {
                if r % 4 != 3 {
                    let (a, b) = (at(r, c), at(r + 1, c));
                    assert!(b.1 == a.1 && (1..=6).contains(&(b.0 - a.0)), "{a:?} {b:?}");
                }
                if c < 11 {
                    let (a, b) = (at(r, c), at(r, c + 1));
                    assert!(b.1 == a.1 && (6..=13).contains(&(b.0 - a.0)), "{a:?} {b:?}");
                }
            }
        }
        // The 48 sites of a strip are centred in the row of 52: the first two are left free.
        assert_eq!(bels[0], "X8/Y10/MULT18_4");
    }

    #[test]
    fn a_small_array_takes_one_strip_in_the_middle_row() {
        let bels = array_sites(2, 2, 1).unwrap();
        assert!(bels.iter().all(|b| xy(b).1 == 34), "{bels:?}");
        let two = array_sites(2, 2, 2).unwrap();
        assert_eq!(two.len(), 8);
        assert_eq!(two.iter().collect::<HashSet<_>>().len(), 8);
    }

    #[test]
    fn too_many_multipliers_is_a_one_line_error() {
        let e = array_sites(13, 12, 1).unwrap_err().to_string();
        assert!(e.contains("13×12") && e.contains("drop --floorplan"), "{e}");
        assert!(!e.contains('\n'));
        assert!(array_sites(1, 53, 1).is_err());
        assert_eq!(array_sites(1, 52, 1).unwrap().len(), 52);
    }

    #[test]
    fn every_pe_multiplier_gets_its_bel_and_others_stay_free() {
        let cell = |t: &str| serde_json::json!({"type": t, "attributes": {}});
        let mut netlist = serde_json::json!({"modules": {
            "top": {"cells": {
                "u.pe1_0.mul.dsp": cell("MULT18X18D"),
                "u.pe0_0.mul.dsp": cell("MULT18X18D"),
                "u.pe0_1.mul.dsp": cell("MULT18X18D"),
                "u.pe1_1.mul.dsp": cell("MULT18X18D"),
                "u.pe1_1.acc": cell("TRELLIS_FF"),
                "u.wrapper_mul": cell("MULT18X18D"),
            }},
            "MULT18X18D": {"attributes": {}},
        }});
        assert_eq!(constrain_netlist(&mut netlist, 2, 2).unwrap(), 4);
        let want = array_sites(2, 2, 1).unwrap();
        let cells = &netlist["modules"]["top"]["cells"];
        for (name, i) in [("pe0_0", 0), ("pe0_1", 1), ("pe1_0", 2), ("pe1_1", 3)] {
            let bel = &cells[format!("u.{name}.mul.dsp")]["attributes"]["BEL"];
            assert_eq!(bel.as_str(), Some(want[i].as_str()), "{name}");
        }
        assert!(cells["u.wrapper_mul"]["attributes"].get("BEL").is_none());
        assert!(cells["u.pe1_1.acc"]["attributes"].get("BEL").is_none());
    }
}
