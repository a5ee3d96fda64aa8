#!/usr/bin/env bash
# Seed 003 §3.4 on MNIST-10k: a 784-1024-1024-10 ReLU network with dropout (0.2, 0.3, 0.3) and
# RMSProp (lr 0.003), trained in f32 with 32-bit gradients and activations, and with every
# gradient (--compress-grad, data parallelism) or every hidden activation (--compress-act,
# model parallelism) passed through each 8-bit type; SEEDS seeds each. Runs go to
# results/q8-<case>-s<seed>/ (a finished run is skipped, an interrupted one resumes).
#   scripts/q8-train.sh            every run, then the table
#   scripts/q8-train.sh --table    the table from results/q8-*/metrics.jsonl
# Environment: EPOCHS (10), SEEDS ("1 2 3"), BATCH (128), LPGEN (target/release/lpgen).
set -euo pipefail
cd "$(dirname "$0")/.."
LPGEN=${LPGEN:-target/release/lpgen}
DATA=${LPGEN_DATASETS:-../shared/datasets}
EPOCHS=${EPOCHS:-10}
SEEDS=${SEEDS:-1 2 3}
BATCH=${BATCH:-128}
TYPES="dynamic-tree static-tree linear mantissa"
NET="--backend f32 --dataset $DATA/mnist-10k --hidden 1024,1024 --activation relu --dropout 0.2,0.3,0.3 --optimizer rmsprop --lr 0.003 --batch $BATCH --schedule fixed --epochs $EPOCHS"

cases() {
  echo "f32|"
  for t in $TYPES; do echo "grad-$t|--compress-grad q8:$t"; done
  for t in $TYPES; do echo "act-$t|--compress-act q8:$t"; done
}

table() {
  python3 - "$EPOCHS" "$SEEDS" <<'PY'
import json, statistics, sys, glob, os
epochs, seeds = int(sys.argv[1]), sys.argv[2].split()
names = ["f32"] + [f"{k}-{t}" for k in ("grad", "act")
                   for t in ("dynamic-tree", "static-tree", "linear", "mantissa")]
print("| case | runs | final test error % (mean ± sd) | best test error % (mean) | train loss, epoch 1 / 3 / last (mean) |")
print("| --- | ---: | ---: | ---: | --- |")
for n in names:
    runs = []
    for s in seeds:
        f = f"results/q8-{n}-s{s}/metrics.jsonl"
        if os.path.exists(f):
            rows = [json.loads(l) for l in open(f) if l.strip()]
            if len(rows) >= epochs:
                runs.append(rows[:epochs])
    if not runs:
        continue
    final = [100 * (1 - r[-1]["test_acc"]) for r in runs]
    best = [100 * (1 - max(x["test_acc"] for x in r)) for r in runs]
    loss = lambda i: statistics.mean(r[i]["train_loss"] for r in runs)
    sd = statistics.stdev(final) if len(final) > 1 else 0.0
    print(f"| {n} | {len(runs)} | {statistics.mean(final):.2f} ± {sd:.2f} | {statistics.mean(best):.2f} | "
          f"{loss(0):.3f} / {loss(min(2, epochs - 1)):.3f} / {loss(epochs - 1):.3f} |")
PY
}

if [ "${1:-}" = "--table" ]; then table; exit 0; fi
[ -x "$LPGEN" ] || cargo build --release -p lpgen
while IFS='|' read -r name extra; do
  for s in $SEEDS; do
    out=results/q8-$name-s$s
    if [ -s "$out/metrics.jsonl" ] && [ "$(wc -l < "$out/metrics.jsonl")" -ge "$EPOCHS" ]; then continue; fi
    resume=""
    [ -s "$out/checkpoint.lpck" ] && resume="--resume"
    echo "q8-$name-s$s: lpgen train $NET $extra --seed $s --out $out $resume"
    # shellcheck disable=SC2086
    "$LPGEN" train $NET $extra --seed "$s" --out "$out" $resume >/dev/null
  done
done < <(cases)
table
