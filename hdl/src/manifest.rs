//! The JSON manifest written next to every generated design (SPEC.md §4, docs/rtl.md): one
//! typed document, written and read through serde_json. Readers parse it; none depends on its
//! layout.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The manifest of a generated design: what `lpgen rtl` writes to `<top>.json` and what the
/// co-simulation runtime and the FPGA flows read back.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// The top-level module name.
    pub top: String,
    /// The unit, as `lpgen rtl` names it (`lns-mul`).
    pub unit: String,
    /// The number format (`lns:5:6`).
    pub format: String,
    pub parameters: Parameters,
    /// Cycles from `in_valid` to `out_valid`.
    pub latency: u32,
    /// `lpgen <version>`.
    pub generator: String,
    /// `<top>.f`: the file list `lpgen rtl` writes beside the manifest.
    pub file_list: String,
    /// The Verilog files, one module each, in the order tools read them (sub-modules first,
    /// the top's `<top>.v` last); names relative to the manifest's directory.
    pub files: Vec<String>,
    /// Every port of the top module, in declaration order.
    pub ports: Vec<Port>,
    /// Table name → digest of every ROM table the design holds (sorted by name).
    pub tables: BTreeMap<String, String>,
    /// A wrapper's (`lpgen rtl --wrap axis`): the top of the unit it wraps, whose manifest
    /// `<wraps>.json` lies beside this one. Absent for a unit's own design.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wraps: Option<String>,
    /// A wrapper's: how it streams the unit (docs/rtl.md, "AXI4-Stream wrapper").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<StreamRules>,
}

/// How an AXI4-Stream wrapper maps beats to the unit's steps.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StreamRules {
    /// The 1-bit input whose beats give a result (`last` for the array); absent: every beat.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_when: Option<String>,
    /// After a beat whose 1-bit inputs have these values (name → 0 or 1), `hold` cycles
    /// take no beat.
    pub hold_when: BTreeMap<String, u32>,
    pub hold: u32,
    /// 1-bit inputs the unit obeys without `in_valid`, given to it only with a beat taken.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gated: Vec<String>,
    /// Beat n joins the unit's accumulation n mod `slots`.
    pub slots: u32,
}

/// The parameters that selected the design: `stages`, and those of the unit's registry
/// options (`lpgen_hdl::units::UNITS`); the others are left out of the JSON.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Parameters {
    pub stages: u32,
    /// The array's rows, columns and PE kind (`lns-kahan`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rows: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cols: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pe: Option<String>,
    /// The array's interleaved accumulations per PE (1, or 2..=4 for lns-kahan at stages
    /// 3..=5): step t of the host's stream belongs to accumulation t mod this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accumulations: Option<u32>,
    /// The vector's lanes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lanes: Option<u32>,
    /// The conversion format of an ALU lane (the format itself when there is none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
    /// The 8-bit type of a q8 codec (`q8:dynamic-tree`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub q8: Option<String>,
    /// Bits of each saturating counter (`dfix-monitor`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counter_bits: Option<u32>,
    /// The float PE's accumulator format (`--acc`); absent for the exact accumulator.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub acc: Option<String>,
    /// `stochastic:R` (float-add, float-mul, float-fma; absent: round to nearest).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rounding: Option<String>,
    /// The seed of the stochastic rounding's xorshift32 stream (with `rounding`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rounding_seed: Option<u64>,
    /// The input word format of `mx-enc` (`--input`); absent for f32 words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<String>,
    /// `true` for an ALU lane with the `sqrt` opcode (`--sqrt`); absent without it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sqrt: Option<bool>,
    /// The chunking of an fdpa design, `L:F:RHO` (a preset resolved against the format).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fdpa: Option<String>,
}

/// One port of the top module.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Port {
    pub name: String,
    pub direction: Direction,
    /// Bits (at least 1).
    pub width: u32,
}

/// A port's direction, `"input"` or `"output"` in the JSON text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    Input,
    Output,
}

impl Port {
    /// The ports of `m` in declaration order.
    pub fn list(m: &crate::ir::Module) -> Vec<Port> {
        m.ports()
            .into_iter()
            .map(|(name, input, width)| Port {
                name,
                direction: if input {
                    Direction::Input
                } else {
                    Direction::Output
                },
                width,
            })
            .collect()
    }
}

impl Manifest {
    /// Reads a manifest. The error is serde_json's one-line description (what is missing or
    /// malformed, and where).
    pub fn from_json(text: &str) -> Result<Manifest, serde_json::Error> {
        serde_json::from_str(text)
    }

    /// The manifest's text: serde_json's pretty-printed form and a trailing newline. Fields
    /// come in struct order and tables sorted by name, so the same manifest always gives the
    /// same bytes.
    pub fn to_json(&self) -> String {
        // A struct of strings, integers and a string-keyed map cannot fail to serialize.
        let mut s = serde_json::to_string_pretty(self).expect("a manifest serializes");
        s.push('\n');
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{generate, Params, PeKind, Unit};

    fn some_params() -> Vec<Params> {
        let f = |s: &str| s.parse().unwrap();
        let mut v = vec![
            Params::new(Unit::LnsMul, f("lns:5:6")).stages(1),
            Params::new(Unit::LnsAdd, f("lns:4:4")).stages(2),
            Params::new(Unit::LnsKahan, f("lns:5:6")),
            Params::new(Unit::PositAdd, f("posit:8:1")),
            Params::new(Unit::PositMac, f("posit:8:0")).stages(3),
            Params::new(Unit::FixMac, f("fix:7:8")),
            Params::new(Unit::Alu, f("lns:5:6")),
        ];
        let mut vector = Params::new(Unit::Vector, f("posit:16:1"));
        vector.lanes = 4;
        vector.to = Some(f("posit:8:1"));
        v.push(vector);
        let mut array = Params::new(Unit::Array, f("lns:5:6"));
        (array.rows, array.cols, array.pe) = (2, 3, PeKind::LnsPlain);
        v.push(array);
        let mut quant1 = Params::new(Unit::Quant1, f("fix:7:8")).stages(1);
        quant1.rows = 784;
        v.push(quant1);
        v
    }

    #[test]
    fn generated_manifests_are_json_and_round_trip() {
        for p in some_params() {
            let d = generate(&p).unwrap();
            // Valid JSON to any reader, not only to the typed one.
            let v: serde_json::Value = serde_json::from_str(&d.manifest).unwrap();
            assert_eq!(v["top"], d.top.as_str());
            let m = Manifest::from_json(&d.manifest).unwrap();
            assert_eq!(m.to_json(), d.manifest, "{}", d.top);
            assert_eq!(m.top, d.top);
            assert_eq!(m.unit, p.unit.name());
            assert_eq!(m.format, p.format.to_string());
            assert_eq!(m.parameters.stages, p.stages);
            // Only the parameters of the unit's registry options are listed.
            let params = &v["parameters"];
            let array = p.unit == Unit::Array;
            let with_rows = array || p.unit == Unit::Quant1;
            assert_eq!(m.parameters.rows, with_rows.then_some(p.rows), "{}", d.top);
            assert_eq!(params.get("rows").is_some(), with_rows, "rows in {}", d.top);
            for key in ["cols", "pe", "accumulations"] {
                assert_eq!(params.get(key).is_some(), array, "{key} in {}", d.top);
            }
            assert_eq!(params.get("lanes").is_some(), p.unit == Unit::Vector);
            let lane = matches!(p.unit, Unit::Alu | Unit::Vector);
            assert_eq!(params.get("to").is_some(), lane, "{}", d.top);
            assert_eq!(
                m.generator,
                format!("lpgen {}", crate::units::GENERATOR_VERSION)
            );
            assert_eq!(m.ports[0].name, "clk");
            assert_eq!(m.ports[0].direction, Direction::Input);
            assert!(m.ports.iter().all(|p| p.width > 0));
            assert!(m
                .ports
                .iter()
                .any(|p| p.name == "out_valid" && p.direction == Direction::Output));
            let g_tables = matches!(p.unit, Unit::LnsAdd | Unit::LnsKahan | Unit::Alu)
                || (p.unit == Unit::Array && p.format.to_string().starts_with("lns"));
            let want: &[&str] = if g_tables { &["sb+db"] } else { &[] };
            assert_eq!(m.tables.keys().collect::<Vec<_>>(), want, "{}", d.top);
        }
    }

    #[test]
    fn manifest_is_pretty_printed_and_byte_stable() {
        let p = Params::new(Unit::LnsMul, "lns:3:2".parse().unwrap());
        let d = generate(&p).unwrap();
        assert_eq!(generate(&p).unwrap().manifest, d.manifest);
        let m = Manifest::from_json(&d.manifest).unwrap();
        let mut want = serde_json::to_string_pretty(&m).unwrap();
        want.push('\n');
        assert_eq!(d.manifest, want);
        // Keys in struct order, whatever a reader does with them.
        let v: serde_json::Value = serde_json::from_str(&d.manifest).unwrap();
        let keys: Vec<&str> = v.as_object().unwrap().keys().map(|k| k.as_str()).collect();
        let order = |k: &str| d.manifest.find(&format!("\"{k}\"")).unwrap();
        let mut sorted = keys.clone();
        sorted.sort_by_key(|k| order(k));
        assert_eq!(
            sorted,
            [
                "top",
                "unit",
                "format",
                "parameters",
                "latency",
                "generator",
                "file_list",
                "files",
                "ports",
                "tables"
            ]
        );
        assert_eq!(v["ports"][3]["name"], "a");
        assert_eq!(v["ports"][3]["direction"], "input");
        assert_eq!(v["ports"][3]["width"], 7);
    }

    #[test]
    fn refuses_malformed_manifests() {
        assert!(Manifest::from_json("").is_err());
        assert!(Manifest::from_json("{}").is_err());
        let d = generate(&Params::new(Unit::LnsMul, "lns:3:2".parse().unwrap())).unwrap();
        let inout = d.manifest.replace("\"output\"", "\"inout\"");
        assert!(Manifest::from_json(&inout).is_err());
        let no_top = d.manifest.replace("\"top\"", "\"tip\"");
        let e = Manifest::from_json(&no_top).unwrap_err().to_string();
        assert!(e.contains("top"), "{e}");
        assert!(!e.contains('\n'), "{e}");
    }
}
