#!/usr/bin/env python3
"""`lpgen.Format.matmul` (the golden kernels) beside the same products as per-element `dot`
(broadcast rows and columns) and numpy's float32 matmul, in one run: G MAC/s and ratios.

    .venv/bin/python scripts/bench-python-matmul.py [--size 256] [--formats posit:8:2 ...]
"""

import argparse
import time

import numpy as np

import lpgen

CASES = [("posit:8:2", "quire"), ("fp8:e4m3", "quire"), ("bf16", "quire"), ("bf16", "naive"),
         ("fix:7:8", "quire"), ("lns:5:6", "kahan")]


def best(f, rounds=3):
    t = []
    for _ in range(rounds):
        s = time.perf_counter()
        f()
        t.append(time.perf_counter() - s)
    return min(t)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=256)
    ap.add_argument("--dot-size", type=int, default=64,
                    help="size of the per-element dot reference (slow)")
    args = ap.parse_args()
    n, d = args.size, args.dot_size
    rng = np.random.default_rng(1)
    x, y = rng.normal(size=(n, n)).astype(np.float32), rng.normal(size=(n, n)).astype(np.float32)
    t32 = best(lambda: x @ y)
    print(f"numpy float32 matmul {n}^3: {n**3 / t32 / 1e9:.2f} G MAC/s")
    print("| format | mode | matmul G MAC/s | dot G MAC/s | matmul / dot | time × numpy f32 |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    for spec, mode in CASES:
        f = lpgen.Format(spec)
        a, b = f.encode(x), f.encode(y)
        tm = best(lambda: f.matmul(a, b, mode=mode))
        ad, bd = a[:d, :d], b[:d, :d]
        td = best(lambda: f.dot(ad[:, None, :], bd.T[None, :, :], mode=mode), rounds=1)
        gm, gd = n**3 / tm / 1e9, d**3 / td / 1e9
        print(f"| {spec} | {mode} | {gm:.3f} | {gd:.3f} | {gm / gd:.1f} | {tm / t32:.1f} |")


if __name__ == "__main__":
    main()
