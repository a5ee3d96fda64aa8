#!/usr/bin/env bash
# Seed 004 Table 4.1 (LeNet-5 trained in posit(8,0), (8,1), (8,2), each with and without
# quires) and the quire ablation on posit(8,2): which sums take the quire, the forward pass's
# products (F), the backward pass's (B), the weight gradients' (G), the tensor sums and the
# softmax (`--accumulate`, docs/train.md); and Fig. 4.7: 12-bit posits for the optimizer and
# loss, 7, 6 or 5 bits everywhere else with quires, saturating at minpos or underflowing to 0
# (`:u`, the rows ending in u). Issue 32's floats beside them: FP8 E4M3 and E5M2 with and
# without exact accumulation, E5M2 with stochastic rounding, and the FP8 recipe (bf16 optimizer
# and loss, E4M3 forward, E5M2 backward and gradients); bf16 and f16 everywhere. LeNet-5 with seed 004's Fashion-MNIST training
# (scripts/train-results.sh's LENET), shortened to fit a shared 2-core machine: the first
# TRAIN training images, EPOCHS epochs, the whole test split.
# Runs go to results/PREFIX-<row>/ (scripts/lib-runs.sh); `--table` prints the table.
# Environment: TRAIN (10000), EPOCHS (3), JOBS (1), ROWS (a subset, by name), PREFIX (pgrid),
# SEED (1; another seed: SEED=2 PREFIX=pgrid-s2), LPGEN. The ablation on all the data, one
# epoch: TRAIN=60000 EPOCHS=1 PREFIX=pgrid60k.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/lib-runs.sh
source scripts/lib-runs.sh
LPGEN=${LPGEN:-target/release/lpgen}
DATA=${LPGEN_DATASETS:-../shared/datasets}
TRAIN=${TRAIN:-10000}
EPOCHS=${EPOCHS:-3}
PREFIX=${PREFIX:-pgrid}
SEED=${SEED:-1}
PAPER="thesis (Table 4.1, 10 epochs on 60k)"
NET="--model lenet5 --dataset $DATA/fashion-mnist --batch 64 --lr 0.0625 --momentum 0.5 --momentum-from 1 --schedule step:4 --normalize global --train-limit $TRAIN --epochs $EPOCHS --threads 1 --seed $SEED"

# row|the thesis' accuracy (Table 4.1)|options
rows() {
  cat <<'ROWS'
f32|90.28|--backend f32
p80|10.00|--format posit:8:0
p80-quire|15.12|--format posit:8:0 --quire
p81|12.54|--format posit:8:1
p81-quire|15.41|--format posit:8:1 --quire
p82|12.55|--format posit:8:2
p82-quire|19.39|--format posit:8:2 --quire
p82-F|—|--format posit:8:2 --accumulate forward=exact
p82-B|—|--format posit:8:2 --accumulate backward=exact
p82-G|—|--format posit:8:2 --accumulate gradient=exact
p82-FB|—|--format posit:8:2 --accumulate forward=exact,backward=exact
p82-FG|—|--format posit:8:2 --accumulate forward=exact,gradient=exact
p82-BG|—|--format posit:8:2 --accumulate backward=exact,gradient=exact
p82-FBG|—|--format posit:8:2 --accumulate matmul=exact
p82-sums|—|--format posit:8:2 --accumulate sums=exact,softmax=exact
p82-quire-but-G|—|--format posit:8:2 --quire --accumulate gradient=naive
p82-quire-but-softmax|—|--format posit:8:2 --quire --accumulate softmax=naive
p82-quire-but-sums|—|--format posit:8:2 --quire --accumulate sums=naive
FBG5|—|--precision O12-L12-FBG5q
FBG5u|—|--precision O12-L12-FBG5uq
FBG6|—|--precision O12-L12-FBG6q
FBG6u|—|--precision O12-L12-FBG6uq
FBG7|—|--precision O12-L12-FBG7q
FBG7u|—|--precision O12-L12-FBG7uq
e4m3|—|--format fp8:e4m3
e4m3-quire|—|--format fp8:e4m3 --quire
e5m2|—|--format fp8:e5m2
e5m2-quire|—|--format fp8:e5m2 --quire
e5m2-sr8|—|--format fp8:e5m2 --rounding stochastic:8
fp8-mixed|—|--precision O=bf16-L=bf16-F=fp8:e4m3-BG=fp8:e5m2
fp8-mixed-quire|—|--precision O=bf16-L=bf16-F=fp8:e4m3-BG=fp8:e5m2 --quire
bf16|—|--format bf16
f16|—|--format f16
ROWS
}

[[ "${1:-}" == --table ]] || rows | run_rows
rows | print_table
