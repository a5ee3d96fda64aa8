#!/usr/bin/env python3
"""Throughput of seed 003's dynamic tree codec in numpy, for comparison with lpgen_golden::q8
(sw/golden/examples/q8_throughput.rs): the same 2^20-value N(0,1) f32 tensor size, absmax
scaling, encoding as a binary search over the midpoints of the sorted code values
(np.searchsorted), decoding as a table lookup; best of ROUNDS rounds, one thread.

The code values are built here from the rule in docs/formats.md (`q8:dynamic-tree`,
clusterNet's table), independently of the Rust code.

    target/bench-venv/bin/python scripts/q8_numpy_ref.py [ROUNDS]
"""
import sys
import time

import numpy as np


def tree_ratio(bits, path):
    parts = 1 << bits
    half = parts // 2
    if path < half:
        num = 2 * parts + 7 * (2 * path + 1)
    else:
        num = 9 * parts + 11 * (2 * (path - half) + 1)
    return num / (20 * parts)


def dynamic_tree_values():
    mags = []
    for m in range(128):
        if m == 0:
            mags.append(0.0)
        elif m == 1:
            mags.append(1.0)
        else:
            tree_bits = m.bit_length() - 1
            zeros = 6 - tree_bits
            mags.append(tree_ratio(tree_bits, m - (1 << tree_bits)) / 10**zeros)
    mags = np.array(mags, dtype=np.float32)
    return np.concatenate([mags, -mags])  # codes 0..127 positive, 128..255 negative


def best(rounds, f):
    times = []
    for _ in range(rounds):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return min(times)


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    n = 1 << 20
    x = np.random.default_rng(1).standard_normal(n).astype(np.float32)
    values = dynamic_tree_values()
    order = np.argsort(values, kind="stable")
    sorted_values = values[order]
    mid = (sorted_values[1:] + sorted_values[:-1]) / 2
    out = {}

    def encode():
        scale = np.abs(x).max()
        out["codes"] = order[np.searchsorted(mid, x / scale)].astype(np.uint8)
        out["scale"] = scale

    def decode():
        out["back"] = values[out["codes"]] * out["scale"]

    t_abs = best(rounds, lambda: np.abs(x).max())
    t_enc = best(rounds, encode)
    t_dec = best(rounds, decode)
    err = np.abs(out["back"] - x).mean()
    print(f"numpy {np.__version__}, {n} N(0,1) values, best of {rounds} rounds; values/s")
    print("type             absmax     encode (absmax + search)  decode")
    print(f"q8:dynamic-tree  {n / t_abs:<10.3e} {n / t_enc:<25.3e} {n / t_dec:.3e}")
    print(f"mean absolute error of the round trip: {err:.6f}")


if __name__ == "__main__":
    main()
