#!/usr/bin/env python3
"""lpgen's Python package against ml_dtypes on the same 10^6-element arrays (issue 45): for
bf16, f16, fp8:e4m3 and fp8:e5m2 and each of encode, decode, quantize, add and mul, the two
alternate in one run (lpgen, ml_dtypes, lpgen, ...; --rounds pairs), and the table gives both
median times, the median of the pairs' ratios (lpgen / ml), the ratio of the two fastest runs
(min / min: the cost with the least interference from a shared machine), and how many results
differ and which is nearer.

    .venv/bin/python scripts/bench-python-mldtypes.py [--n 1000000] [--rounds 15]
    taskset -c 0 .venv/bin/python scripts/bench-python-mldtypes.py   # one core each

The comparisons (x: float64 values; a, b: words of the format, numpy uint16 / uint8):
- encode:   lpgen `f.encode(x)`          ml_dtypes `x.astype(T).view(uintN)`
- decode:   lpgen `f.decode(a)`          ml_dtypes `a.view(T).astype(float64)`
- quantize: lpgen `f.quantize(x)`        ml_dtypes `x.astype(T).astype(float64)`
- add, mul: lpgen `f.add(a, b)`          ml_dtypes `(a.view(T) + b.view(T)).view(uintN)`
T is ml_dtypes.bfloat16, float8_e4m3fn, float8_e5m2, and numpy's own float16 for f16
(ml_dtypes defines no float16). float8_e4m3fn is lpgen's fp8:e4m3 (OCP E4M3: bias 7, no
infinities, NaN = S.1111.111, largest 448; both send overflow and ±inf to NaN), but lpgen's NaN
result is the one canonical code 0x7f where ml_dtypes keeps the sign (0xff): such pairs are
counted as "NaN codes", not as differences of value.

numpy computes float16 arithmetic, and ml_dtypes bfloat16 and float8 arithmetic, in float32
and rounds the float32 result once more to the format. For these formats that is still the
correctly rounded result (a product is exact in float32; a sum is rounded to 24 >= 2p + 2 bits
first, where a second rounding is innocuous), so add and mul may differ only in NaN codes; the
casts from float64 differ in value where ml_dtypes rounds through float32 (double rounding).

A differing result is judged against the exact value (Python Fractions: x itself for encode
and quantize, the exact sum or product of the two words' values for add and mul): "lpgen
nearer" or "ml nearer"; "tie" when both are equally near (then the tie rule decides: IEEE's
is ties to even); "special" when ±inf or NaN is involved (overflow rules). x is half standard
normal draws and half log-uniform magnitudes over the format's whole range (subnormals and
overflow included), with random signs and a few ±0, ±inf and NaN; a and b are lpgen's words of
two such arrays.

lpgen splits these loops over the cores only from 2^21 elements (2^20 a thread), so at 10^6
both run on one core.
Every lpgen result is also checked against lpgen's general (per-element golden) path
(`lpgen._fast_paths(False)`), bit for bit.
"""

import argparse
import os
import statistics
import time
from fractions import Fraction

import ml_dtypes
import numpy as np

import lpgen

FORMATS = [
    ("bf16", ml_dtypes.bfloat16, "ml_dtypes.bfloat16"),
    ("f16", np.float16, "numpy.float16"),
    ("fp8:e4m3", ml_dtypes.float8_e4m3fn, "ml_dtypes.float8_e4m3fn"),
    ("fp8:e5m2", ml_dtypes.float8_e5m2, "ml_dtypes.float8_e5m2"),
]
OPS = ["encode", "decode", "quantize", "add", "mul"]


def values(rng, n, info):
    """Half N(0, 1), half log-uniform over [smallest subnormal / 4, 2 · max], random signs,
    and a few specials."""
    h = n // 2
    lo = np.log2(float(info.smallest_subnormal)) - 2
    hi = np.log2(float(info.max)) + 1
    mags = 2.0 ** rng.uniform(lo, hi, n - h)
    x = np.concatenate([rng.standard_normal(h), mags * rng.choice([-1.0, 1.0], n - h)])
    rng.shuffle(x)
    x[:6] = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0]
    return x


def timed(f):
    t = time.perf_counter()
    r = f()
    return time.perf_counter() - t, r


def exact(v):
    return Fraction(float(v))


def judge(op, lp_val, ml_val, x=None, a=None, b=None):
    """Which of two differing results (as float64 values) is nearer the exact one."""
    if np.isnan(lp_val) and np.isnan(ml_val):
        return "nan"
    if op in ("encode", "quantize"):
        if not np.isfinite(x):
            return "special"
        want = exact(x)
    else:
        if not (np.isfinite(a) and np.isfinite(b)):
            return "special"
        want = exact(a) + exact(b) if op == "add" else exact(a) * exact(b)
    if not (np.isfinite(lp_val) and np.isfinite(ml_val)):
        return "special"
    dl, dm = abs(exact(lp_val) - want), abs(exact(ml_val) - want)
    return "lpgen" if dl < dm else "ml" if dm < dl else "tie"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--formats", nargs="*", default=[f[0] for f in FORMATS])
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    cores = len(os.sched_getaffinity(0))
    load0 = os.getloadavg()
    print(f"# n = {args.n}, rounds = {args.rounds}, cores for this process = {cores}, "
          f"load average at start {load0[0]:.2f} {load0[1]:.2f} {load0[2]:.2f}; "
          f"lpgen {lpgen.__version__}, ml_dtypes {ml_dtypes.__version__}, numpy {np.__version__}")
    print("| format | op | lpgen ms | ml_dtypes ms | lpgen / ml | min / min | differ | "
          "lpgen nearer | ml nearer | tie | special | NaN codes |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    worst = 0.0
    np.seterr(all="ignore")  # overflow and inf - inf are part of the test
    for spec, dt, dt_name in FORMATS:
        if spec not in args.formats:
            continue
        f = lpgen.Format(spec)
        info = ml_dtypes.finfo(dt)
        udt = f.dtype
        x = values(rng, args.n, info)
        a, b = f.encode(values(rng, args.n, info)), f.encode(values(rng, args.n, info))
        av, bv = a.view(dt), b.view(dt)
        cases = {
            "encode": (lambda: f.encode(x), lambda: x.astype(dt).view(udt)),
            "decode": (lambda: f.decode(a), lambda: av.astype(np.float64)),
            "quantize": (lambda: f.quantize(x), lambda: x.astype(dt).astype(np.float64)),
            "add": (lambda: f.add(a, b), lambda: (av + bv).view(udt)),
            "mul": (lambda: f.mul(a, b), lambda: (av * bv).view(udt)),
        }
        for op in OPS:
            run_lp, run_ml = cases[op]
            run_lp(), run_ml()  # warm-up: tables built, pages touched
            t_lp, t_ml = [], []
            for _ in range(args.rounds):
                t, lp = timed(run_lp)
                t_lp.append(t)
                t, ml = timed(run_ml)
                t_ml.append(t)
            m_lp, m_ml = statistics.median(t_lp), statistics.median(t_ml)
            # The ratio pair by pair (each lpgen run with the ml_dtypes run right after it),
            # its median: what a drift of the machine's speed moves least.
            ratio = statistics.median(x / y for x, y in zip(t_lp, t_ml))
            worst = max(worst, ratio)
            # The general path gives the same bits.
            was = lpgen._fast_paths(False)
            ref = run_lp()
            lpgen._fast_paths(was)
            if lp.dtype == np.float64:
                assert np.array_equal(lp.view(np.uint64), ref.view(np.uint64)), (spec, op)
            else:
                assert np.array_equal(lp, ref), (spec, op)
            # Differences, as values (NaN codes apart).
            if lp.dtype == np.float64:
                lv, mv = lp, ml
                diff = np.flatnonzero(lv.view(np.uint64) != mv.view(np.uint64))
            else:
                lv, mv = f.decode(lp), f.decode(ml)
                diff = np.flatnonzero(lp != ml)
            counts = dict.fromkeys(["lpgen", "ml", "tie", "special", "nan"], 0)
            for i in diff:
                if op in ("encode", "quantize", "decode"):
                    if op == "decode":
                        kind = "nan" if np.isnan(lv[i]) and np.isnan(mv[i]) else "special"
                    else:
                        kind = judge(op, lv[i], mv[i], x=x[i])
                else:
                    va, vb = f.decode(a[i:i + 1])[0], f.decode(b[i:i + 1])[0]
                    kind = judge(op, lv[i], mv[i], a=va, b=vb)
                counts[kind] += 1
            print(f"| {spec} | {op} | {m_lp * 1e3:.2f} | {m_ml * 1e3:.2f} | {ratio:.2f} | "
                  f"{min(t_lp) / min(t_ml):.2f} | {len(diff)} | {counts['lpgen']} | {counts['ml']} | "
                  f"{counts['tie']} | {counts['special']} | {counts['nan']} |", flush=True)
    load1 = os.getloadavg()
    print(f"# yardsticks: {', '.join(n for _, _, n in FORMATS)}; "
          f"load average at end {load1[0]:.2f} {load1[1]:.2f} {load1[2]:.2f}; "
          f"largest lpgen / ml ratio {worst:.2f}")


if __name__ == "__main__":
    main()
