"""How much faster `lpgen.Format(F).quantize(x)` of 10^6 values is than the same values through
the command line's batch mode, `lpgen golden F add X 0 --stdin` (X rounded into F, plus zero,
printed as `0x<bits> <value>`). The goal is a ratio of at least 20 (docs/perf.md).

    .venv/bin/python python/bench.py [--format posit:8:2] [--n 1000000] [--repeat 3]

The command line is target/release/lpgen ($LPGEN_BIN to use another), built first; its time
includes writing the decimals to it and reading its lines back, not making the decimals. Each
figure is the best of --repeat runs. The results of both are checked to be equal.
"""

import argparse
import os
import subprocess
import time
from pathlib import Path

import numpy as np

import lpgen

ROOT = Path(__file__).resolve().parents[1]


def cli_path():
    given = os.environ.get("LPGEN_BIN")
    if given:
        return given
    subprocess.run(["cargo", "build", "--quiet", "--release", "-p", "lpgen", "--bin", "lpgen"],
                   cwd=ROOT, check=True)
    return str(ROOT / "target" / "release" / "lpgen")


def best(repeat, run):
    times, result = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        result = run()
        times.append(time.perf_counter() - t)
    return min(times), result


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--format", default="posit:8:2")
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()

    fmt = lpgen.Format(args.format)
    x = np.random.default_rng(args.seed).standard_normal(args.n) * 4
    # What a user would type: the shortest decimal of each float64 (it reads back exactly).
    lines = "".join(f"{v!r} 0\n" for v in x.tolist())
    exe = cli_path()

    t_py, q = best(args.repeat, lambda: fmt.quantize(x))

    def cli():
        p = subprocess.run([exe, "golden", args.format, "add", "--stdin"], input=lines,
                           capture_output=True, text=True, check=True)
        return p.stdout

    t_cli, out = best(args.repeat, cli)
    values = np.array([float("nan") if v in ("NaN", "NaR") else float(v)
                       for v in (line.split()[1] for line in out.splitlines())])
    same = np.array_equal(values, q, equal_nan=True)

    print(f"format {args.format}, {args.n} values (N(0, 16)), best of {args.repeat}, "
          f"{os.cpu_count()} cores")
    print(f"lpgen.Format.quantize        {t_py * 1e3:10.1f} ms  {args.n / t_py / 1e6:8.2f} M values/s")
    print(f"lpgen golden add X 0 --stdin {t_cli * 1e3:10.1f} ms  {args.n / t_cli / 1e6:8.2f} M values/s")
    print(f"ratio {t_cli / t_py:.0f}x (goal >= 20x); results equal: {same}")
    if not same:
        raise SystemExit("quantize and the command line differ")


if __name__ == "__main__":
    main()
