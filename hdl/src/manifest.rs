//! The JSON manifest written next to every generated design (SPEC.md §4, docs/rtl.md): one
//! typed document, written and read through serde. [`json_text`] is the JSON layout lpgen's
//! documents share: `"key": value, ` spacing, the first levels one entry per line.

use std::collections::BTreeMap;
use std::io;

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
    /// Every port of the top module, in declaration order.
    pub ports: Vec<Port>,
    /// Table name → digest of every ROM table the design holds (sorted by name).
    pub tables: BTreeMap<String, String>,
}

/// The parameters that selected the design (every unit lists all of them).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Parameters {
    pub stages: u32,
    pub rows: u32,
    pub cols: u32,
    pub lanes: u32,
    /// The array's PE kind (`lns-kahan`).
    pub pe: String,
    /// The conversion format of an ALU lane (the format itself when there is none).
    pub to: String,
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

impl Manifest {
    /// Reads a manifest. The error is serde_json's one-line description (what is missing or
    /// malformed, and where).
    pub fn from_json(text: &str) -> Result<Manifest, serde_json::Error> {
        serde_json::from_str(text)
    }

    /// The manifest's text: the top object and its `parameters`, `ports` and `tables` one
    /// entry per line, each port on one line, a trailing newline. The same manifest always
    /// gives the same bytes.
    pub fn to_json(&self) -> String {
        let mut s = json_text(self, 2);
        s.push('\n');
        s
    }
}

/// `value` as JSON text with `"key": value` and `, ` spacing: containers of the first `open`
/// levels hold one entry per line (indented by two spaces a level), deeper ones stay on one
/// line. `open = 0` gives a single line, e.g. `{"lc": 364, "fmax_mhz": 7.72}`. Non-finite
/// floats are written as `null` (serde_json's rule). No trailing newline.
pub fn json_text<T: Serialize + ?Sized>(value: &T, open: usize) -> String {
    let mut out = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(&mut out, Layout::new(open));
    // Serializing the plain data types of lpgen's documents (strings, numbers, string-keyed
    // maps) into memory cannot fail.
    value
        .serialize(&mut ser)
        .expect("a JSON document of plain data serializes");
    String::from_utf8(out).expect("serde_json writes UTF-8")
}

/// The formatter of [`json_text`].
struct Layout {
    /// Levels written one entry per line.
    open: usize,
    /// Containers entered and not yet left; the last says whether it has an entry.
    stack: Vec<bool>,
}

impl Layout {
    fn new(open: usize) -> Layout {
        Layout {
            open,
            stack: Vec::new(),
        }
    }

    /// Whether the innermost container lays out one entry per line.
    fn is_open(&self) -> bool {
        self.stack.len() <= self.open
    }

    fn begin<W: ?Sized + io::Write>(&mut self, w: &mut W, bracket: &[u8]) -> io::Result<()> {
        self.stack.push(false);
        w.write_all(bracket)
    }

    fn entry<W: ?Sized + io::Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        if self.is_open() {
            w.write_all(if first { b"\n" } else { b",\n" })?;
            w.write_all("  ".repeat(self.stack.len()).as_bytes())
        } else if first {
            Ok(())
        } else {
            w.write_all(b", ")
        }
    }

    fn end<W: ?Sized + io::Write>(&mut self, w: &mut W, bracket: &[u8]) -> io::Result<()> {
        let open = self.is_open();
        let had_entries = self.stack.pop().unwrap_or(false);
        if open && had_entries {
            w.write_all(b"\n")?;
            w.write_all("  ".repeat(self.stack.len()).as_bytes())?;
        }
        w.write_all(bracket)
    }

    fn entry_done(&mut self) {
        if let Some(has) = self.stack.last_mut() {
            *has = true;
        }
    }
}

impl serde_json::ser::Formatter for Layout {
    fn begin_array<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.begin(w, b"[")
    }

    fn end_array<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.end(w, b"]")
    }

    fn begin_array_value<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.entry(w, first)
    }

    fn end_array_value<W: ?Sized + io::Write>(&mut self, _w: &mut W) -> io::Result<()> {
        self.entry_done();
        Ok(())
    }

    fn begin_object<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.begin(w, b"{")
    }

    fn end_object<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.end(w, b"}")
    }

    fn begin_object_key<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.entry(w, first)
    }

    fn begin_object_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        w.write_all(b": ")
    }

    fn end_object_value<W: ?Sized + io::Write>(&mut self, _w: &mut W) -> io::Result<()> {
        self.entry_done();
        Ok(())
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
    fn manifest_layout() {
        let d = generate(&Params::new(Unit::LnsMul, "lns:3:2".parse().unwrap())).unwrap();
        let text = &d.manifest;
        assert!(text.starts_with("{\n  \"top\": \"lpgen_lns_mul_lns_3_2_s0\",\n"));
        assert!(text.ends_with("\n  \"tables\": {}\n}\n"), "{text}");
        assert!(text.contains("\n  \"latency\": 0,\n"), "{text}");
        assert!(text.contains("\n  \"parameters\": {\n    \"stages\": 0,\n"));
        // One port a line: tests and scripts read ports line by line.
        assert!(text.contains("\n    {\"name\": \"a\", \"direction\": \"input\", \"width\": 7},\n"));
        assert!(text.contains("\"direction\": \"output\""));
    }

    #[test]
    fn one_line_layout_and_non_finite_floats() {
        let mut m = BTreeMap::new();
        m.insert("a", vec![f64::NAN, 1.5, f64::INFINITY]);
        m.insert("b", vec![]);
        assert_eq!(json_text(&m, 0), "{\"a\": [null, 1.5, null], \"b\": []}");
        assert_eq!(
            json_text(&m, 1),
            "{\n  \"a\": [null, 1.5, null],\n  \"b\": []\n}"
        );
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
