#!/usr/bin/env python3
"""Training time per format against the f32 backend, measured side by side in one run.

    scripts/bench-formats.py                      # LeNet-5, 1,000 Fashion images, 1 thread
    scripts/bench-formats.py --images 2000 --threads 1 2 --rounds 3
    scripts/bench-formats.py --model mlp --formats "posit:8:2 --quire" fix:7:8
    scripts/bench-formats.py --model gpt --images 8   # the gpt of experiments/transformers.md,
                                                      # 8 steps of 1,024 tokens on the seeds' text

Each round runs the f32 backend and then every format once, in turn, so that all see the
same machine state; the table gives each case's median wall time over the rounds and its
ratio to the f32 backend's median at the same thread count (the figure docs/perf.md records).
The wall time is the whole `lpgen train` process (data loading and the test pass included:
the same for every case); the training columns are metrics.jsonl's `samples_per_s` (images,
or gpt's tokens, per second of the training steps alone) and their ratio to the f32
backend's. Needs target/release/lpgen (`cargo build --release -p lpgen`).
"""

import argparse
import glob
import os
import json
import shlex
import statistics
import subprocess
import sys
import tempfile
import time

# The issue 45 rows: (label, lpgen train options).
FORMATS = [
    "posit:8:2 --quire",
    "fix:7:8",
    "mx:fp8:e4m3",
    "mx:fp4:e2m1",
    "bf16 --quire",
    "bf16",
    "lns:5:6",
    "posit:16:1",
    "fp8-recipe",
]
RECIPE = "--precision O=bf16-L=bf16-F=fp8:e4m3-BG=fp8:e5m2 --quire"


def options(case):
    if case == "f32":
        return ["--backend", "f32", "--format", "f32"]
    if case == "fp8-recipe":
        return shlex.split(RECIPE)
    first, *rest = shlex.split(case)
    return ["--format", first, *rest]


GPT = ("--layers 2 --dim 128 --heads 4 --context 64 --batch 16 --lr 0.001 --momentum 0.9 "
       "--momentum-from 1 --schedule fixed --test-limit 16 --seed 1")


def workload(a, work):
    """The data and size options: images of the IDX dataset, or (gpt) steps on the text."""
    if a.model != "gpt":
        return ["--dataset", a.dataset, "--train-limit", str(a.images), "--test-limit", "100"]
    text = os.path.join(work, "seeds.txt")
    if not os.path.exists(text):
        seeds = sorted(glob.glob(os.path.join(a.seeds, "*.txt")))
        if not seeds:
            sys.exit(f"bench-formats: no *.txt in {a.seeds}")
        with open(text, "wb") as out:
            for path in seeds:
                with open(path, "rb") as f:
                    out.write(f.read())
    return ["--dataset", f"text:{text}", "--max-steps", str(a.images), *shlex.split(GPT)]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--lpgen", default=os.environ.get("LPGEN", "target/release/lpgen"))
    p.add_argument("--dataset", default="../shared/datasets/fashion-mnist")
    p.add_argument("--model", default="lenet5")
    p.add_argument("--images", type=int, default=1000,
                   help="training images (gpt: training steps of 16 windows of 64 tokens)")
    p.add_argument("--seeds", default="../shared/seeds", help="gpt: the text files to train on")
    p.add_argument("--threads", type=int, nargs="+", default=[1])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--formats", nargs="+", default=FORMATS)
    a = p.parse_args()
    if not os.path.exists(a.lpgen):
        sys.exit(f"bench-formats: {a.lpgen} not found: cargo build --release -p lpgen")
    cases = ["f32", *a.formats]
    times = {(c, t): [] for c in cases for t in a.threads}
    # The training part alone (metrics.jsonl's samples_per_s: images, or gpt's tokens, per
    # second of training, without the process start, the data's loading and the test pass).
    rates = {(c, t): [] for c in cases for t in a.threads}
    with tempfile.TemporaryDirectory() as work:
        for r in range(a.rounds):
            for t in a.threads:
                for c in cases:
                    cmd = [a.lpgen, "train", "--model", a.model, "--epochs", "1",
                           "--threads", str(t), "--out", os.path.join(work, "run"),
                           *workload(a, work), *options(c)]
                    start = time.perf_counter()
                    done = subprocess.run(cmd, stdout=subprocess.DEVNULL,
                                          stderr=subprocess.PIPE, text=True)
                    secs = time.perf_counter() - start
                    if done.returncode != 0:
                        sys.exit(f"bench-formats: {shlex.join(cmd)} failed:\n{done.stderr}")
                    times[(c, t)].append(secs)
                    with open(os.path.join(work, "run", "metrics.jsonl")) as f:
                        last = json.loads(f.read().splitlines()[-1])
                    rates[(c, t)].append(last["samples_per_s"])
                    print(f"round {r + 1} threads {t} {c}: {secs:.2f} s", file=sys.stderr)
    head = f"{a.model}, {a.images} images, one epoch, median of {a.rounds} rounds"
    both = a.threads == [1, 2]
    unit = "tokens/s" if a.model == "gpt" else "images/s"
    cols = [f"format ({head})"]
    cols += [x for t in a.threads for x in (f"{t} thr s", "× f32", f"training {unit}", "× f32")]
    cols += ["2 thr / 1 thr speed-up", "training 2 / 1 thr"] if both else []
    print("| " + " | ".join(cols) + " |")
    print("| --- |" + " ---: |" * (len(cols) - 1))
    for c in cases:
        row = [f"`{c}`" if c != "fp8-recipe" else f"FP8 recipe `{RECIPE}`"]
        for t in a.threads:
            m = statistics.median(times[(c, t)])
            rate = statistics.median(rates[(c, t)])
            row += [f"{m:.2f}", f"{m / statistics.median(times[('f32', t)]):.1f}"]
            row += [f"{rate:,.0f}", f"{statistics.median(rates[('f32', t)]) / rate:.1f}"]
        if both:
            row.append(f"{statistics.median(times[(c, 1)]) / statistics.median(times[(c, 2)]):.2f}")
            row.append(f"{statistics.median(rates[(c, 2)]) / statistics.median(rates[(c, 1)]):.2f}")
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
