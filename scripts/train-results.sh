#!/usr/bin/env bash
# The training runs behind docs/results.md. Each row is one `lpgen train` command; results go
# to results/<row>/ (metrics.jsonl, plot.png, checkpoint.lpck). A row that finished is skipped;
# an interrupted one resumes from its last checkpoint.
#   scripts/train-results.sh            every row (hours: run it in the background)
#   scripts/train-results.sh ROW...     only these rows (names below)
#   scripts/train-results.sh --table    print the results table from results/*/metrics.jsonl
#   scripts/train-results.sh --same-weights ROW1 ROW2   digests of the two rows' model words
# LPGEN_TRAIN_EXTRA adds options to every run, e.g. "--threads 1" for a run in the background
# (results do not depend on the thread count). SEED=S (S other than 1) runs the rows at seed S
# into results/<row>-sS/.
set -euo pipefail
cd "$(dirname "$0")/.."
LPGEN=${LPGEN:-target/release/lpgen}
DATA=${LPGEN_DATASETS:-../shared/datasets}

# Seed 000 §4.2: 784-512-10 sigmoid, batch 20, lr 0.1, momentum 0.5 after epoch 1, fixed for
# 8 epochs then halving, 15 epochs.
MNIST="--dataset $DATA/mnist-10k --hidden 512 --activation sigmoid --batch 20 --lr 0.1 --momentum 0.5 --momentum-from 2 --schedule halving --epochs 15"
# Seed 004 §4 (PositNN's Fashion-MNIST example): batch 64, lr 1/16, momentum 0.5, halved
# every 4 epochs, 10 epochs, one global normalization; an MLP 784-100-10 ReLU stands in for
# the thesis' LeNet-5.
FASHION_SGD="--dataset $DATA/fashion-mnist --batch 64 --lr 0.0625 --momentum 0.5 --momentum-from 1 --schedule step:4 --normalize global --epochs 10"
FASHION="--hidden 100 --activation relu $FASHION_SGD"
# The thesis' own network: LeNet-5 (seed 004 Listing A.2) with the same training.
LENET="--model lenet5 $FASHION_SGD"
# The same on MNIST-10k (seed 004 ch. 5 evaluates LeNet-5 on MNIST too).
LENET_MNIST="--model lenet5 ${FASHION_SGD/fashion-mnist/mnist-10k}"

declare -A ROWS=(
  [mnist-f32]="--backend f32 $MNIST"
  [mnist-lns-kahan]="--format lns:5:6 --kahan all $MNIST"
  [mnist-lns-no-update-kahan]="--format lns:5:6 --kahan matmul,sums,softmax $MNIST"
  [mnist-lns-matmul-kahan]="--format lns:5:6 --kahan matmul $MNIST"
  [mnist-lns-keep5]="--format lns:5:6 --kahan all --keep-bits 5 $MNIST"
  [mnist-lns-keep4]="--format lns:5:6 --kahan all --keep-bits 4 $MNIST"
  [fashion-f32]="--backend f32 $FASHION"
  [fashion-posit8-2]="--format posit:8:2 $FASHION"
  [fashion-posit8-2-quire]="--format posit:8:2 --quire $FASHION"
  [fashion-O12-L9-FBG8q]="--precision O12-L9-FBG8q $FASHION"
  [lenet-f32]="--backend f32 $LENET"
  [lenet-mnist-f32]="--backend f32 $LENET_MNIST"
  [lenet-posit8-2]="--format posit:8:2 $LENET"
  [lenet-posit8-2-quire]="--format posit:8:2 --quire $LENET"
  [lenet-O12-L9-FBG8q]="--precision O12-L9-FBG8q $LENET"
  # Issue 32: floats on the same MLP. fp8:e4m3 alone: seed 004's SGD rate 0.0625/64 = 2^-10
  # rounds to 0 (lpgen train warns); the mixed rows keep the optimizer and loss in bf16, the
  # forward pass in E4M3 and the backward pass in E5M2 (the FP8 training recipe).
  [fashion-fp8-e4m3]="--format fp8:e4m3 $FASHION"
  [fashion-fp8-e5m2]="--format fp8:e5m2 $FASHION"
  [fashion-fp8-e5m2-quire]="--format fp8:e5m2 --quire $FASHION"
  [fashion-fp8-e5m2-sr8]="--format fp8:e5m2 --rounding stochastic:8 $FASHION"
  [fashion-fp8-mixed]="--precision O=bf16-L=bf16-F=fp8:e4m3-BG=fp8:e5m2 $FASHION"
  [fashion-fp8-mixed-quire]="--precision O=bf16-L=bf16-F=fp8:e4m3-BG=fp8:e5m2q $FASHION"
  # bf16 everywhere (the golden model's binary32 path: docs/perf.md).
  [fashion-bf16]="--format bf16 $FASHION"
  # Convolutions on the generated array: a few LeNet-5 steps through the RTL, the golden
  # model in lockstep (0 differing bits), on 256 test images.
  [lenet-rtl-steps]="--format lns:5:6 --backend rtl --check --model lenet5 --dataset $DATA/fashion-mnist --batch 64 --lr 0.0625 --normalize global --schedule fixed --epochs 1 --max-steps 3 --test-limit 256"
  # One MNIST-10k epoch of a 784-100-10 MLP through the RTL, the golden model in lockstep,
  # and the same epoch on the golden backend (its weights must be identical).
  [mnist-rtl-epoch]="--format lns:5:6 --backend rtl --check --dataset $DATA/mnist-10k --hidden 100 --epochs 1 --schedule fixed"
  [mnist-golden-epoch]="--format lns:5:6 --backend golden --dataset $DATA/mnist-10k --hidden 100 --epochs 1 --schedule fixed"
  # The same epoch through the RTL without the lockstep check: its wall time.
  [mnist-rtl-epoch-nocheck]="--format lns:5:6 --backend rtl --dataset $DATA/mnist-10k --hidden 100 --epochs 1 --schedule fixed"
)
ORDER=(mnist-f32 mnist-lns-kahan mnist-lns-no-update-kahan mnist-lns-matmul-kahan mnist-lns-keep5
       mnist-lns-keep4 fashion-f32 fashion-posit8-2 fashion-posit8-2-quire fashion-O12-L9-FBG8q
       fashion-fp8-e4m3 fashion-fp8-e5m2 fashion-fp8-e5m2-quire fashion-fp8-e5m2-sr8
       fashion-fp8-mixed fashion-fp8-mixed-quire
       lenet-f32 lenet-mnist-f32 lenet-posit8-2 lenet-posit8-2-quire lenet-O12-L9-FBG8q lenet-rtl-steps
       mnist-rtl-epoch mnist-golden-epoch mnist-rtl-epoch-nocheck)

table() {
  echo "| row | epochs | test accuracy | test loss | backend | seconds/epoch |"
  echo "| --- | ---: | ---: | ---: | --- | ---: |"
  for r in "${ORDER[@]}"; do
    f=results/$r/metrics.jsonl
    [ -s "$f" ] || continue
    python3 - "$r" "$f" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
last = rows[-1]
secs = sum(r["seconds"] for r in rows) / len(rows)
print(f"| {sys.argv[1]} | {last['epoch']} | {100*last['test_acc']:.2f}% | {last['test_loss']:.4f} | {last['backend']} | {secs:.0f} |")
PY
  done
}

# The model words (weights, biases, momenta, compensations) of two rows' checkpoints.
same_weights() {
  for r in "$1" "$2"; do sed -n '/^layers /,/^end /p' "results/$r/checkpoint.lpck" | grep -v '^end ' | sha256sum; done
}

if [ "${1:-}" = "--table" ]; then table; exit 0; fi
if [ "${1:-}" = "--same-weights" ]; then same_weights "$2" "$3"; exit 0; fi
[ -x "$LPGEN" ] || cargo build --release -p lpgen
rows=("$@")
[ ${#rows[@]} -gt 0 ] || rows=("${ORDER[@]}")
for r in "${rows[@]}"; do
  args=${ROWS[$r]:-}
  [ -n "$args" ] || { echo "unknown row '$r' (rows: ${ORDER[*]})" >&2; exit 2; }
  out=results/$r
  # SEED (1 unless set) other than 1: the row at that seed, in results/<row>-s<SEED>/.
  if [ "${SEED:-1}" != 1 ]; then out=results/$r-s$SEED; args="$args --seed $SEED"; fi
  # shellcheck disable=SC2086
  epochs=$(echo $args | sed -E 's/.*--epochs ([0-9]+).*/\1/')
  done_epochs=0
  [ -s "$out/metrics.jsonl" ] && done_epochs=$(wc -l < "$out/metrics.jsonl")
  if [ "$done_epochs" -ge "$epochs" ]; then echo "$r: done"; continue; fi
  resume=""
  [ -s "$out/checkpoint.lpck" ] && resume="--resume"
  echo "$r: lpgen train $args --out $out $resume"
  # shellcheck disable=SC2086
  /usr/bin/time -f "$r: %e s wall, %M KiB" "$LPGEN" train $args ${LPGEN_TRAIN_EXTRA:-} --out "$out" $resume
done
