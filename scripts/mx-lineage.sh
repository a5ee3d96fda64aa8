#!/usr/bin/env bash
# Issue 33 item 4, the line from the seeds to MX: on the same network and data, f32, seed 002's
# dynamic fixed point at 8 bits (dfix:8, per-group scales from overflow rates), seed 003's q8
# (per-tensor scales; in training only on gradients and hidden activations), MXINT8 and
# MXFP8/MXFP6/MXFP4 (per-32 E8M0 scales on every layer product's operands): final test accuracy
# of the MNIST-10k MLP (lpgen train's default 784-512-10 sigmoid net) and of LeNet-5 on
# Fashion-MNIST (on a subset), and the quantization error of each code
# (`lpgen quant`, seed 003 Table 1's distributions). Runs go to $OUT/<net>-<case>/ (a finished
# run is skipped); the table is printed at the end.
#   scripts/mx-lineage.sh            every run, then the tables
#   scripts/mx-lineage.sh --table    the tables from $OUT/*/metrics.jsonl
# LeNet-5 f32 and MXFP8 E4M3 also run on all of Fashion-MNIST (lenet-full-*, LENET_EPOCHS
# epochs). f32 and MXFP8 E4M3 are also run with the seeds in EXTRA_SEEDS (<net>-<case>-s<seed>/), for the
# spread between seeds.
# Environment: OUT (results/mx-lineage), MLP_EPOCHS (5), LENET_EPOCHS (3), LENET_TRAIN (10000),
# LENET_TEST (2000), EXTRA_SEEDS ("2 3"), LPGEN (target/release/lpgen).
set -euo pipefail
cd "$(dirname "$0")/.."
LPGEN=${LPGEN:-target/release/lpgen}
DATA=${LPGEN_DATASETS:-../shared/datasets}
OUT=${OUT:-results/mx-lineage}
MLP_EPOCHS=${MLP_EPOCHS:-5}
LENET_EPOCHS=${LENET_EPOCHS:-3}
LENET_TRAIN=${LENET_TRAIN:-10000}
LENET_TEST=${LENET_TEST:-2000}
EXTRA_SEEDS=${EXTRA_SEEDS:-2 3}
MLP="--dataset $DATA/mnist-10k --epochs $MLP_EPOCHS"
LENET="--model lenet5 --dataset $DATA/fashion-mnist --batch 64 --lr 0.0625 --momentum-from 1 --schedule step:4 --normalize global --epochs $LENET_EPOCHS --train-limit $LENET_TRAIN --test-limit $LENET_TEST"

mlp_cases() {
  echo "f32|--backend f32"
  echo "dfix8|--backend f32 --format dfix:8"
  echo "q8-dynamic-tree|--backend f32 --compress-grad q8:dynamic-tree --compress-act q8:dynamic-tree"
  echo "q8-linear|--backend f32 --compress-grad q8:linear --compress-act q8:linear"
  for e in int8 fp8:e4m3 fp8:e5m2; do
    echo "mx-${e//:/-}|--backend f32 --format mx:$e"
  done
}

mlp_cases_late() {
  for e in fp6:e3m2 fp6:e2m3 fp4:e2m1; do
    echo "mx-${e//:/-}|--backend f32 --format mx:$e"
  done
}

lenet_cases() {
  echo "f32|--backend f32"
  echo "mx-fp8-e4m3|--backend f32 --format mx:fp8:e4m3"
  echo "mx-fp8-e5m2|--backend f32 --format mx:fp8:e5m2"
}

# The rest of the lineage on LeNet-5 (run after the MLP's late cases).
lenet_cases_late() {
  mlp_cases | tail -n +2 | grep -v -e '^mx-fp8'
  mlp_cases_late
}

run() { # net case options...
  local dir="$OUT/$1-$2"
  shift 2
  if [ -f "$dir/metrics.jsonl" ] && [ "$(wc -l <"$dir/metrics.jsonl")" -ge "$EPOCHS" ]; then
    return
  fi
  echo "== $dir: lpgen train $*" >&2
  nice "$LPGEN" train "$@" --out "$dir" >"$dir.log" 2>&1 || { echo "failed: $dir (see $dir.log)" >&2; return 1; }
}

table() {
  python3 - "$OUT" <<'PY'
import json, os, sys
out = sys.argv[1]
for net in ("mlp", "lenet"):
    rows = sorted(d for d in os.listdir(out) if d.startswith(net + "-") and os.path.isdir(f"{out}/{d}"))
    if not rows:
        continue
    print(f"\n{net}\n\n| case | epochs | final test accuracy % | final train loss | seconds per epoch |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for d in rows:
        m = [json.loads(l) for l in open(f"{out}/{d}/metrics.jsonl") if l.strip()]
        last = m[-1]
        secs = sum(x["seconds"] for x in m) / len(m)
        print(f"| {d[len(net)+1:]} | {len(m)} | {100*last['test_acc']:.2f} | {last['train_loss']:.4f} | {secs:.1f} |")
PY
  echo
  echo "quantization error (mean abs, mean rel %), 10^6 samples, seed 1:"
  for t in q8:dynamic-tree q8:linear mx:int8 mx:fp8:e4m3 mx:fp8:e5m2 mx:fp6:e3m2 mx:fp6:e2m3 mx:fp4:e2m1; do
    for d in "U(0,1)" "N(0,1)" "N(0,100)" "N(0,0.04)"; do
      "$LPGEN" quant "$t" --dist "$d" | tail -1
    done
  done
}

if [ "${1:-}" != "--table" ]; then
  mkdir -p "$OUT"
  EPOCHS=$MLP_EPOCHS
  while IFS='|' read -r name opts; do
    # shellcheck disable=SC2086
    run mlp "$name" $MLP $opts
  done < <(mlp_cases)
  EPOCHS=$LENET_EPOCHS
  while IFS='|' read -r name opts; do
    # shellcheck disable=SC2086
    run lenet "$name" $LENET $opts
  done < <(lenet_cases)
  EPOCHS=$MLP_EPOCHS
  while IFS='|' read -r name opts; do
    # shellcheck disable=SC2086
    run mlp "$name" $MLP $opts
  done < <(mlp_cases_late)
  EPOCHS=$LENET_EPOCHS
  while IFS='|' read -r name opts; do
    # shellcheck disable=SC2086
    run lenet "$name" $LENET $opts
  done < <(lenet_cases_late)
  # LeNet-5 on all of Fashion-MNIST (60k/10k), f32 and MXFP8 E4M3.
  EPOCHS=$LENET_EPOCHS
  FULL="--model lenet5 --dataset $DATA/fashion-mnist --batch 64 --lr 0.0625 --momentum-from 1 --schedule step:4 --normalize global --epochs $LENET_EPOCHS"
  # shellcheck disable=SC2086
  run lenet full-f32 $FULL --backend f32
  # shellcheck disable=SC2086
  run lenet full-mx-fp8-e4m3 $FULL --backend f32 --format mx:fp8:e4m3
  for s in $EXTRA_SEEDS; do
    EPOCHS=$LENET_EPOCHS
    # shellcheck disable=SC2086
    run lenet "f32-s$s" $LENET --backend f32 --seed "$s"
    # shellcheck disable=SC2086
    run lenet "mx-fp8-e4m3-s$s" $LENET --backend f32 --format mx:fp8:e4m3 --seed "$s"
    EPOCHS=$MLP_EPOCHS
    # shellcheck disable=SC2086
    run mlp "f32-s$s" $MLP --backend f32 --seed "$s"
    # shellcheck disable=SC2086
    run mlp "mx-fp8-e4m3-s$s" $MLP --backend f32 --format mx:fp8:e4m3 --seed "$s"
  done
fi
table
