"""`lpgen rtl … --core` and the FuseSoC generator scripts/fusesoc-gen (docs/cocotb.md): the
generated core's `lint` target (verilator --lint-only -Wall) passes, and fails on a design with
a lint warning; a user's core that asks the generator for a unit lints the generated files.
Needs fusesoc in the venv (scripts/setup.sh) and verilator on PATH."""

import os
import subprocess
import sys
from pathlib import Path

from conftest import ROOT

GEN_CORES = ROOT / "scripts" / "fusesoc-gen"
VENV_BIN = Path(sys.executable).parent


def fusesoc(cwd, cli, *args):
    env = dict(os.environ, LPGEN_BIN=str(Path(cli.path).resolve()))
    # The generator's interpreter `python3` is the venv's (it imports PyYAML, FuseSoC's own).
    env["PATH"] = f"{VENV_BIN}{os.pathsep}{env.get('PATH', '')}"
    return subprocess.run(
        [str(VENV_BIN / "fusesoc"), *args], cwd=cwd, env=env, capture_output=True, text=True,
        timeout=300,
    )


def generated_core(cli, tmp_path):
    out = tmp_path / "rtl"
    p = cli.run(["rtl", "posit-add", "--format", "posit:8:0", "--stages", "2", "--out", str(out),
                 "--core"])
    assert p.returncode == 0, p.stderr
    cores = [w for w in p.stdout.split() if w.endswith(".core")]
    assert cores == [str(out / "lpgen_posit_add_posit_8_0_s2.core")], p.stdout
    return out


def lint(cli, tmp_path, cores_root):
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    p = fusesoc(work, cli, "--cores-root", str(cores_root), "run", "--target", "lint",
                "lpgen:units:lpgen_posit_add_posit_8_0_s2:0.1.0")
    return p, work


def test_the_lint_target_of_a_generated_core_passes(cli, tmp_path):
    out = generated_core(cli, tmp_path)
    p, work = lint(cli, tmp_path, out)
    assert p.returncode == 0, p.stdout + p.stderr
    (vc,) = work.glob("build/*/lint/*.vc")
    args = vc.read_text().split()
    assert "--lint-only" in args and "-Wall" in args
    listed = [Path(a).name for a in args if a.endswith(".v")]
    assert listed == (out / "lpgen_posit_add_posit_8_0_s2.f").read_text().split()


def test_the_lint_target_fails_on_a_lint_warning(cli, tmp_path):
    out = generated_core(cli, tmp_path)
    top = out / "lpgen_posit_add_posit_8_0_s2.v"
    text = top.read_text()
    assert text.rstrip().endswith("`default_nettype wire")
    # An undriven, unused wire (not named *unused*, which Verilator exempts).
    top.write_text(text.replace("endmodule", "    wire lpgen_mutant_w;\nendmodule"))
    p, _ = lint(cli, tmp_path, out)
    assert p.returncode != 0
    assert "lpgen_mutant_w" in p.stdout + p.stderr


USER_CORE = """CAPI=2:
name: user:demo:adder:0.1
filesets:
  gen:
    depend: ["lpgen:gen:lpgen"]
generate:
  adder:
    generator: lpgen
    parameters: {unit: lns-add, format: "FORMAT", stages: 2}
targets:
  lint:
    filesets: [gen]
    generate: [adder]
    toplevel: lpgen_lns_add_lns_4_4_s2
    flow: lint
    flow_options: {tool: verilator, verilator_options: [-Wall]}
"""


def user_core(cli, tmp_path, fmt):
    cores = tmp_path / "cores"
    cores.mkdir()
    (cores / "user.core").write_text(USER_CORE.replace("FORMAT", fmt))
    return fusesoc(tmp_path, cli, "--cores-root", str(GEN_CORES), "--cores-root", str(cores),
                   "run", "--target", "lint", "user:demo:adder:0.1")


def test_a_user_core_gets_a_unit_from_the_generator(cli, tmp_path):
    p = user_core(cli, tmp_path, "lns:4:4")
    assert p.returncode == 0, p.stdout + p.stderr
    (vc,) = tmp_path.glob("build/*/lint/*.vc")
    listed = [Path(a).name for a in vc.read_text().split() if a.endswith(".v")]
    assert listed == ["lpgen_lns_g_rom_lns_4_4.v", "lpgen_lns_add_lns_4_4_s2.v"]
    (core,) = tmp_path.glob("build/*/lint/generator_cache/*/adder-adder.core")
    assert "latency 2 cycles" in core.read_text()


def test_the_generator_passes_on_lpgens_refusal(cli, tmp_path):
    p = user_core(cli, tmp_path, "lns:99:4")
    assert p.returncode != 0
    want = cli.run(["rtl", "lns-add", "--format", "lns:99:4", "--out", str(tmp_path / "x")])
    assert want.returncode == 2
    assert want.stderr.strip().removeprefix("error: ") in p.stdout + p.stderr
