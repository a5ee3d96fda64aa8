#!/usr/bin/env bash
# Seed 000 Table 4.5: where Kahan or pairwise sums are needed, in lns:5:6. The thesis' TIMIT
# network had sums thousands of terms long; here long sums come from the batch: a sigmoid MLP
# 784-HIDDEN-10 on Fashion-MNIST with batch BATCH, so the weight gradients and bias sums add
# BATCH terms and the first layer's products 784. Every row keeps Kahan in the weight update
# (as the thesis' did) and varies the matrix products, the softmax and the tensor sums
# (`--kahan`, `--accumulate`; docs/train.md). The rows after LP7 are ours: Kahan in the softmax
# alone; the softmax and loss stage in lns:5:3 (a naive sum of ones stops growing at 22.6 there,
# against 185 in lns:5:6, so 250 classes are to it what the thesis' 1,943 are to lns:5:6),
# naive and with a Kahan softmax; and pairwise everywhere.
# Runs go to results/s000-t45-<row>/ (scripts/lib-runs.sh); `--table` prints the table.
# Environment: HIDDEN (100), BATCH (256), LR (1), TRAIN (10000), EPOCHS (5), JOBS (1), ROWS, LPGEN,
# PREFIX (s000-t45; longer sums: BATCH=2048 PREFIX=s000-t45-b2048), DATASET (Fashion-MNIST; a
# 250-class task, whose softmax sums 250 terms: scripts/many-class-dataset.py writes it, and
# DATASET=results/fashion-250 PREFIX=s000-t45-c250 runs the rows on it).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/lib-runs.sh
source scripts/lib-runs.sh
LPGEN=${LPGEN:-target/release/lpgen}
DATA=${LPGEN_DATASETS:-../shared/datasets}
HIDDEN=${HIDDEN:-100}
BATCH=${BATCH:-256}
LR=${LR:-1}
TRAIN=${TRAIN:-10000}
EPOCHS=${EPOCHS:-5}
PREFIX=${PREFIX:-s000-t45}
DATASET=${DATASET:-$DATA/fashion-mnist}
PAPER="thesis: validation frame error (TIMIT)"
ERROR=1
NET="--dataset $DATASET --hidden $HIDDEN --activation sigmoid --batch $BATCH --lr $LR --momentum 0.5 --momentum-from 2 --schedule fixed --train-limit $TRAIN --epochs $EPOCHS --threads 1"

# row (matrix products, softmax, tensor sums)|the thesis' error|options
rows() {
  cat <<'ROWS'
f32|42.19|--backend f32
LP1-naive-naive-naive|61.17|--format lns:5:6 --kahan update
LP2-naive-kahan-kahan|43.90|--format lns:5:6 --kahan update,softmax,sums
LP3-kahan-naive-naive|60.02|--format lns:5:6 --kahan update,matmul
LP4-kahan-kahan-naive|42.25|--format lns:5:6 --kahan update,matmul,softmax
LP5-kahan-naive-kahan|57.93|--format lns:5:6 --kahan update,matmul,sums
LP6-kahan-pairwise-pairwise|42.06|--format lns:5:6 --kahan update,matmul --accumulate softmax=pairwise,sums=pairwise
LP7-kahan-kahan-kahan|42.33|--format lns:5:6 --kahan all
naive-kahan-naive|—|--format lns:5:6 --kahan update,softmax
L3-naive-naive-naive|—|--precision O=lns:5:6-L=lns:5:3-FBG=lns:5:6 --kahan update
L3-naive-kahan-naive|—|--precision O=lns:5:6-L=lns:5:3-FBG=lns:5:6 --kahan update,softmax
pairwise-pairwise-pairwise|—|--format lns:5:6 --kahan update --accumulate matmul=pairwise,softmax=pairwise,sums=pairwise
ROWS
}

[[ "${1:-}" == --table ]] || rows | run_rows
rows | print_table
