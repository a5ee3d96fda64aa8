//! `lpgen rtl … --core`: a FuseSoC CAPI2 core `<top>.core` beside the design (docs/cocotb.md):
//! the Verilog files of the manifest in the file list's order, the top module, the selecting
//! parameters in the description, and a `lint` target (Edalize's lint flow: `verilator --lint-only -Wall`).

use std::path::{Path, PathBuf};

use lpgen_hdl::{Design, Manifest};

use crate::rtl_cmd::write_atomic;
use crate::CliResult;

/// A YAML scalar: the JSON string literal, which YAML reads as the same string.
fn quoted(s: &str) -> String {
    serde_json::Value::from(s).to_string()
}

/// The core's text for the design whose manifest is `m`.
pub fn core_text(m: &Manifest) -> String {
    let version = m.generator.strip_prefix("lpgen ").unwrap_or("0");
    let params = serde_json::to_string(&m.parameters).unwrap_or_default();
    let description = format!(
        "lpgen {} {}, latency {} cycles, parameters {params} ({})",
        m.unit, m.format, m.latency, m.generator
    );
    let files: String = m
        .files
        .iter()
        .map(|f| format!("      - {}\n", quoted(f)))
        .collect();
    format!(
        "CAPI=2:\n\
         # Written by `lpgen rtl {unit} --format {format} ... --core` (docs/cocotb.md).\n\
         name: {name}\n\
         description: {description}\n\
         \n\
         filesets:\n  rtl:\n    file_type: verilogSource\n    files:\n{files}\n\
         targets:\n\
         \x20 default: &default\n\
         \x20   filesets: [rtl]\n\
         \x20   toplevel: {top}\n\
         \x20 lint:\n\
         \x20   <<: *default\n\
         \x20   flow: lint\n\
         \x20   flow_options:\n\
         \x20     tool: verilator\n\
         \x20     verilator_options: [-Wall]\n",
        unit = m.unit,
        format = m.format,
        name = quoted(&format!("lpgen:units:{}:{version}", m.top)),
        description = quoted(&description),
        top = m.top,
    )
}

/// Writes `<top>.core` into `dir` atomically; returns its path.
pub fn write(dir: &Path, design: &Design) -> CliResult<PathBuf> {
    let m = Manifest::from_json(&design.manifest)?;
    let path = dir.join(format!("{}.core", design.top));
    write_atomic(&path, &core_text(&m))?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use lpgen_hdl::{generate, Params, Unit};

    #[test]
    fn core_lists_the_manifest_files_in_order_and_the_top() {
        let d =
            generate(&Params::new(Unit::PositAdd, "posit:8:0".parse().unwrap()).stages(2)).unwrap();
        let m = Manifest::from_json(&d.manifest).unwrap();
        let t = core_text(&m);
        assert!(t.starts_with("CAPI=2:\n"));
        assert!(t.contains("name: \"lpgen:units:lpgen_posit_add_posit_8_0_s2:0.1.0\"\n"));
        assert!(t.contains("toplevel: lpgen_posit_add_posit_8_0_s2\n"));
        assert!(
            t.contains("latency 2 cycles, parameters {\\\"stages\\\":2}"),
            "{t}"
        );
        let listed: Vec<&str> = t
            .lines()
            .filter_map(|l| l.strip_prefix("      - \""))
            .map(|l| l.trim_end_matches('"'))
            .collect();
        assert_eq!(listed, m.files);
        assert!(t.contains("flow: lint\n    flow_options:\n      tool: verilator\n"));
    }
}
