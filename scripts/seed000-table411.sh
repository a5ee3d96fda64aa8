#!/usr/bin/env bash
# Seed 000 Table 4.11: lns:5:6 with only n fraction bits kept after every operation (n = 6, 5,
# 4; `--keep-bits`, Kahan sums everywhere as the thesis had), over several seeds, on
# Fashion-MNIST (60,000 training images where MNIST-10k has 8,004: the optimisation losses the
# small set hid behind its generalisation gap show in the train loss). Seed 000's MNIST
# training (sigmoid MLP, batch 20, lr 0.1, momentum 0.5 from epoch 2) with HIDDEN hidden units,
# the first TRAIN training images, EPOCHS epochs; an f32 run per seed beside them.
# Runs go to results/s000-t411-<row>/ (scripts/lib-runs.sh); `--table` prints every run and
# the mean ± sd over seeds.
# Environment: HIDDEN (100), TRAIN (60000), EPOCHS (5), SEEDS (1 2 3), JOBS (1), ROWS, LPGEN.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/lib-runs.sh
source scripts/lib-runs.sh
LPGEN=${LPGEN:-target/release/lpgen}
DATA=${LPGEN_DATASETS:-../shared/datasets}
HIDDEN=${HIDDEN:-100}
TRAIN=${TRAIN:-60000}
EPOCHS=${EPOCHS:-5}
SEEDS=${SEEDS:-1 2 3}
PREFIX=s000-t411
PAPER="thesis: error (MNIST)"
ERROR=1
NET="--dataset $DATA/fashion-mnist --hidden $HIDDEN --activation sigmoid --batch 20 --lr 0.1 --momentum 0.5 --momentum-from 2 --schedule fixed --train-limit $TRAIN --epochs $EPOCHS --threads 1"

# row|the thesis' error|options, one row per seed
rows() {
  for s in $SEEDS; do
    echo "f32-s$s|—|--backend f32 --seed $s"
    echo "n6-s$s|2.29|--format lns:5:6 --kahan all --seed $s"
    echo "n5-s$s|3.76|--format lns:5:6 --kahan all --keep-bits 5 --seed $s"
    echo "n4-s$s|9.73|--format lns:5:6 --kahan all --keep-bits 4 --seed $s"
  done
}

[[ "${1:-}" == --table ]] || rows | run_rows
rows | print_table
echo
rows | select_rows | cut -d'|' -f1 | PREFIX=$PREFIX python3 -c '
import json, os, statistics, sys
runs = {}
for row in sys.stdin.read().split():
    path = "results/" + os.environ["PREFIX"] + f"-{row}/metrics.jsonl"
    ms = [json.loads(l) for l in open(path) if l.strip()] if os.path.exists(path) else []
    if ms:
        runs.setdefault(row.rsplit("-s", 1)[0], []).append(ms[-1])
sd = lambda xs: statistics.stdev(xs) if len(xs) > 1 else 0.0
print("| n | test error, mean ± sd over seeds | train loss, mean ± sd | seeds |")
print("| --- | ---: | ---: | ---: |")
for name, last in runs.items():
    err = [100 * (1 - m["test_acc"]) for m in last]
    loss = [m["train_loss"] for m in last]
    print(f"| {name} | {statistics.mean(err):.2f} ± {sd(err):.2f} % | {statistics.mean(loss):.3f} ± {sd(loss):.3f} | {len(last)} |")
'
