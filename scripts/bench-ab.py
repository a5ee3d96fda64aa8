#!/usr/bin/env python3
"""Two lpgen binaries (or thread counts) side by side: training images/s of a LeNet-5 epoch.

    scripts/bench-ab.py OLD:2 NEW:2                      # two binaries, two threads each
    scripts/bench-ab.py target/release/lpgen:1 target/release/lpgen:2 --rounds 7
    scripts/bench-ab.py A:2 B:2 --formats f32 "posit:8:2 --quire" lns:5:6

Each side is BINARY:THREADS. Each round runs every format once on A and then on B, so both
see the same machine state. For each format it prints the median of metrics.jsonl's
`samples_per_s` (the training steps alone) on each side, and the median and range of the
per-round ratios B/A: the figure docs/perf.md records ("A/B"). A BINARY may be a wrapper
script that sets the environment (e.g. GLIBC_TUNABLES) and execs lpgen.
"""

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile


def options(case):
    if case == "f32":
        return ["--backend", "f32", "--format", "f32"]
    first, *rest = shlex.split(case)
    return ["--format", first, *rest]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("a", help="BINARY:THREADS")
    p.add_argument("b", help="BINARY:THREADS")
    p.add_argument("--dataset", default="../shared/datasets/fashion-mnist")
    p.add_argument("--images", type=int, default=1000)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--formats", nargs="+",
                   default=["f32", "posit:8:2 --quire", "lns:5:6", "bf16", "fix:7:8"])
    args = p.parse_args()
    sides = {}
    for name, spec in (("A", args.a), ("B", args.b)):
        binary, _, threads = spec.rpartition(":")
        if not binary or not threads.isdigit() or not os.path.exists(binary):
            print(f"bench-ab: {spec!r}: expected BINARY:THREADS with an existing BINARY",
                  file=sys.stderr)
            sys.exit(2)
        sides[name] = (binary, threads)
    rates = {}
    with tempfile.TemporaryDirectory() as work:
        out = os.path.join(work, "run")
        for r in range(args.rounds):
            for case in args.formats:
                for name, (binary, threads) in sides.items():
                    cmd = [binary, "train", "--model", "lenet5", "--epochs", "1", "--threads",
                           threads, "--dataset", args.dataset, "--train-limit",
                           str(args.images), "--test-limit", "100", "--out", out,
                           *options(case)]
                    done = subprocess.run(cmd, stdout=subprocess.DEVNULL,
                                          stderr=subprocess.PIPE, text=True)
                    if done.returncode != 0:
                        sys.exit(f"bench-ab: {shlex.join(cmd)} failed:\n{done.stderr}")
                    with open(os.path.join(out, "metrics.jsonl")) as f:
                        last = json.loads(f.read().splitlines()[-1])
                    rates.setdefault((case, name), []).append(last["samples_per_s"])
            print(f"round {r + 1} done", file=sys.stderr)
    print("| format | A images/s | B images/s | B/A median | range |")
    print("| --- | ---: | ---: | ---: | --- |")
    for case in args.formats:
        a, b = rates[(case, "A")], rates[(case, "B")]
        ratios = [y / x for x, y in zip(a, b)]
        print(f"| `{case}` | {statistics.median(a):,.0f} | {statistics.median(b):,.0f} | "
              f"{statistics.median(ratios):.2f} | {min(ratios):.2f}–{max(ratios):.2f} |")


if __name__ == "__main__":
    main()
