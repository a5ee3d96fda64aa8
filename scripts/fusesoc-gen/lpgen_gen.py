#!/usr/bin/env python3
"""FuseSoC generator of lpgen units (lpgen-gen.core, docs/cocotb.md).

FuseSoC runs it in the directory of the generated core with one argument, a YAML file holding
`parameters` (the user's), `vlnv` (the generated core's name) and `files_root`. It runs
`lpgen rtl UNIT --format F [options] --out .` there and writes `<name>.core`: the Verilog files
in the file list's order (from the manifest `<top>.json`), with the top module's name and the
manifest's parameters and latency in the description.
"""

import json
import os
import pathlib
import shutil
import subprocess
import sys

import yaml  # FuseSoC's own dependency (PyYAML)

# Parameter -> `lpgen rtl` option; unit and format are required.
OPTIONS = ["stages", "rows", "cols", "lanes", "pe", "to", "q8", "counter_bits"]


def fail(msg):
    print(f"lpgen generator: {msg}", file=sys.stderr)
    sys.exit(2)


def lpgen_binary(params):
    given = params.get("lpgen") or os.environ.get("LPGEN_BIN") or shutil.which("lpgen")
    if not given:
        fail("no lpgen binary: set parameter `lpgen`, $LPGEN_BIN, or put lpgen on PATH")
    return str(given)


def command(params):
    for key in params:
        if key not in ("unit", "format", "lpgen", *OPTIONS):
            fail(f"unknown parameter {key!r} (expected unit, format, lpgen, {', '.join(OPTIONS)})")
    if "unit" not in params or "format" not in params:
        fail("parameters `unit` and `format` are required")
    cmd = [lpgen_binary(params), "rtl", str(params["unit"]), "--format", str(params["format"])]
    for key in OPTIONS:
        if key in params:
            cmd += ["--" + key.replace("_", "-"), str(params[key])]
    return cmd + ["--out", "."]


def main():
    with open(sys.argv[1]) as f:
        data = yaml.safe_load(f)
    params = data.get("parameters") or {}
    vlnv = data["vlnv"]
    p = subprocess.run(command(params), capture_output=True, text=True)
    if p.returncode != 0:
        fail(p.stderr.strip() or f"lpgen exited with status {p.returncode}")
    manifest_path = [pathlib.Path(w) for w in p.stdout.split() if w.endswith(".json")]
    if len(manifest_path) != 1:
        fail(f"lpgen wrote no single manifest: {p.stdout!r}")
    m = json.loads(manifest_path[0].read_text())
    core = {
        "name": vlnv,
        "description": (
            f"lpgen {m['unit']} {m['format']}: top {m['top']}, latency {m['latency']} "
            f"cycles, parameters {json.dumps(m['parameters'])} ({m['generator']})"
        ),
        "filesets": {"rtl": {"file_type": "verilogSource", "files": list(m["files"])}},
        "targets": {"default": {"filesets": ["rtl"]}},
    }
    out = pathlib.Path(vlnv.split(":")[2] + ".core")
    tmp = out.with_suffix(".core.tmp")
    tmp.write_text("CAPI=2:\n" + yaml.safe_dump(core, sort_keys=False))
    os.replace(tmp, out)


if __name__ == "__main__":
    main()
