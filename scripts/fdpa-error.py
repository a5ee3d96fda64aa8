#!/usr/bin/env python3
"""The relative error of an fp8:e4m3 dot product against its length K (issue 49): a GPU
matrix unit's accumulation (`fdpa:hopper`, with DeepSeek-V3's promotion every 128 products
`fdpa:hopper:promote128`), a naive binary32 sum, and exact accumulation rounded once to binary32,
through the Python package (`lpgen.Format.dot`, the golden model).

Operands: a_k, b_k drawn from a distribution (`--dist normal`: N(0, 1); `--dist positive`:
|N(0, 1)|, a sum without cancellation), rounded to nearest e4m3. The exact dot product of e4m3
words is exact in float64 (products of 4-bit significands in 2^-18 … 2^17, at most 2^14 of them),
so the reference is `math.fsum`. Relative error |D − exact| / |exact| (trials with an exact 0
are left out), mean and 95th percentile over `--trials` dot products per K.

    PYTHONPATH=… python3 scripts/fdpa-error.py [--trials 400] [--dist normal [positive]]
        [--seed 49] [--tsv FILE]

Each distribution draws from its own generator seeded `--seed`, so `--dist normal positive`
gives the tables of two runs with one distribution each. `--tsv FILE` also writes the figures
unrounded, one line per (distribution, mode, K): the data of experiments/fdpa-error.png
(scripts/fdpa-error-figure.sh draws it with `lpgen-train`'s example `fdpa-error`).
"""

import argparse
import math

import numpy as np

import lpgen

E4M3 = lpgen.Format("fp8:e4m3")
F32 = lpgen.Format("float:8:23")


def f32_values(words):
    return np.asarray(words, dtype=np.uint32).view(np.float32).astype(np.float64)


def errors(k, trials, dist, rng):
    x = rng.standard_normal((2, trials, k))
    if dist == "positive":
        x = np.abs(x)
    a, b = E4M3.encode(x[0]), E4M3.encode(x[1])
    av, bv = E4M3.decode(a), E4M3.decode(b)
    exact = np.array([math.fsum(p) for p in av * bv])
    # The same values as binary32 words (exact: e4m3 ⊂ binary32).
    a32, b32 = F32.encode(av), F32.encode(bv)
    results = {
        "fdpa:hopper": f32_values(E4M3.dot(a, b, mode="fdpa:hopper")),
        "fdpa:hopper:promote128": f32_values(E4M3.dot(a, b, mode="fdpa:hopper:promote128")),
        "naive f32": F32.decode(F32.dot(a32, b32, mode="naive")),
        "exact (rounded to f32)": F32.decode(F32.dot(a32, b32, mode="quire")),
    }
    keep = exact != 0
    return {
        name: np.abs(d[keep] - exact[keep]) / np.abs(exact[keep]) for name, d in results.items()
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trials", type=int, default=400)
    ap.add_argument("--dist", choices=["normal", "positive"], nargs="+", default=["normal"])
    ap.add_argument("--seed", type=int, default=49)
    ap.add_argument("--min-log2", type=int, default=5)
    ap.add_argument("--max-log2", type=int, default=14)
    ap.add_argument("--tsv", help="also write dist, mode, k, mean, p95 (unrounded) to this file")
    args = ap.parse_args()
    rows = []
    for dist in args.dist:
        if len(args.dist) > 1:
            print(f"\n{dist} operands:\n")
        rng = np.random.default_rng(args.seed)
        names = None
        for lg in range(args.min_log2, args.max_log2 + 1):
            e = errors(2**lg, args.trials, dist, rng)
            if names is None:
                names = list(e)
                print("| K | " + " | ".join(f"{n} mean | {n} p95" for n in names) + " |")
                print("| ---: |" + " ---: | ---: |" * len(names))
            cells = []
            for n in names:
                mean, p95 = e[n].mean(), np.percentile(e[n], 95)
                cells += [f"{100 * mean:.3g} %", f"{100 * p95:.3g} %"]
                rows.append(f"{dist}\t{n}\t{2**lg}\t{float(mean)!r}\t{float(p95)!r}")
            print(f"| 2^{lg} = {2**lg} | " + " | ".join(cells) + " |", flush=True)
    if args.tsv:
        with open(args.tsv, "w") as f:
            f.write("dist\tmode\tk\tmean\tp95\n" + "".join(r + "\n" for r in rows))


if __name__ == "__main__":
    main()
