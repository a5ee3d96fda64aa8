#!/usr/bin/env python3
"""Checks of scripts/fpga-render.py's MX table on made-up records (scripts/test.sh runs it).

The expected rows are written out here by hand from the records below, not produced by the
renderer's own helpers. Standard library only; exits 1 with the first difference."""
import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("fpga_render", os.path.join(HERE, "fpga-render.py"))
render = importlib.util.module_from_spec(spec)
spec.loader.exec_module(render)


def run(target, unit, fmt, stages, lc, ff, dsp, fmax, dsp_inference=True):
    return {"lc": lc, "ff": ff, "dsp": dsp, "bram": 0, "fmax_mhz": fmax, "target": target,
            "unit": unit, "format": fmt, "stages": stages, "rows": 1, "cols": 1, "pe": "mx",
            "dsp_inference": dsp_inference, "lc_available": 5280}


ok = {
    "ecp5-85k_mx-dot_mx_fp4_e2m1_b8_s0": run("ecp5-85k", "mx-dot", "mx:fp4:e2m1:b8", 0, 400, 100, 8, 50.0),
    "ecp5-85k_mx-dot_mx_fp4_e2m1_b8_s3": run("ecp5-85k", "mx-dot", "mx:fp4:e2m1:b8", 3, 480, 260, 8, 90.5),
    # int8 at K = 32 ran out of the UP5K's DSPs, then fitted with multipliers in logic.
    "ice40-up5k_mx-dot_mx_int8_b32_s0_nodsp": run("ice40-up5k", "mx-dot", "mx:int8", 0, 5000, 300, 0, 10.0, False),
    "ice40-up5k_array_mx_mx_fp8_e4m3_b8_1x1_s6": run("ice40-up5k", "array", "mx:fp8:e4m3:b8", 6, 4000, 900, 0, 20.25),
    # A unit of the units tables, so that the UP5K's is rendered.
    "ice40-up5k_posit-add_posit_8_1_s0": run("ice40-up5k", "posit-add", "posit:8:1", 0, 342, 40, 0, 7.95),
}
err = {
    "ice40-up5k_mx-dot_mx_int8_b32_s0": {"error": "lpgen_mx_dot_mx_int8_s0_wrap does not fit iCE40UP5K-SG48 (ICESTORM_DSP 32 of 8): use a larger --target"},
    "ice40-up5k_mx-dot_mx_int8_b32_s3": {"error": "lpgen_mx_dot_mx_int8_s3_wrap does not fit iCE40UP5K-SG48 (ICESTORM_LC 5400 of 5280): use a larger --target"},
    "ice40-hx8k_mx-enc_mx_fp8_e4m3_b32_s0": {"error": "lpgen_mx_enc_mx_fp8_e4m3_s0_wrap does not fit iCE40HX8K-CT256 (ICESTORM_LC 12000 of 7680): use a larger --target"},
    "ice40-hx8k_mx-enc_mx_fp8_e4m3_b32_s3": {"error": "not run: stages 0 does not fit"},
    "ice40-up5k_array_mx_mx_fp8_e4m3_b8_1x1": {"error": "yosys failed: ERROR: something else"},
}

want = [
    "| ice40-up5k | mx-dot | int8 | 32 | 5000 | 300 | 0 (--no-dsp) | 10.00 | 3 | does not fit (5400 of 5280 LC) | – | – | – | – | – |",
    "| ice40-up5k | array (mx PE, 1×1) | fp8:e4m3 | 8 | failed | – | – | – | 6 | 4000 | 900 | 0 | 0 | 20.25 | 500 |",
    "| ice40-hx8k | mx-enc | fp8:e4m3 | 32 | does not fit (12000 of 7680 LC) | – | – | – | 3 | not run | – | – | – | – | – |",
    "| ecp5-85k | mx-dot | fp4:e2m1 | 8 | 400 | 100 | 8 | 50.00 | 3 | 480 | 260 | 8 | 0 | 90.50 | 60 |",
    "- `ice40-up5k` `array mx:fp8:e4m3:b8` stages 0: yosys failed: ERROR: something else",
]

table = render.mx_table(ok, err)
rows = [line for line in table if line.startswith("| ice40") or line.startswith("| ecp5")
        or line.startswith("- ")]
if rows != want:
    print("fpga-render-test: the MX table's rows differ", file=sys.stderr)
    for w, g in zip(want + [""] * len(rows), rows + [""] * len(want)):
        if w != g:
            print(f"  want: {w}\n  got:  {g}", file=sys.stderr)
    sys.exit(1)
# The MX units are the MX table's alone: no units table or array table lists them.
body = render.render(ok, err)
others = body.replace("\n".join(table), "")
if "| posit-add | posit:8:1 | 342 |" not in others:
    print("fpga-render-test: the UP5K's units table is not rendered", file=sys.stderr)
    sys.exit(1)
for stem in ["mx-dot", "mx-enc", "| mx |", "int8"]:
    if stem in others:
        print(f"fpga-render-test: {stem!r} is rendered outside the MX table", file=sys.stderr)
        sys.exit(1)
print(f"fpga-render-test: the MX table renders {len(want)} rows as expected")
