#!/usr/bin/env bash
# Seed 001's ablation on MNIST-10k with seed 000's 784-512-10 sigmoid MLP in f32, K workers as
# threads: AdaGrad at its three places (Table 3: local, aggregate, momentum) with 1-bit
# exchange for K = 1, 2, 4; double buffering on and off (§2.2); and the 8-bit exchange of
# seed 003 (--compress q8:TYPE) for K = 2. Runs go to results/s001-<case>/ (a finished run is
# skipped); the table is printed at the end.
#   scripts/seed001-ablation.sh            every run, then the table
#   scripts/seed001-ablation.sh --table    the table from results/s001-*/metrics.jsonl
# Environment: EPOCHS (5), LPGEN (target/release/lpgen).
set -euo pipefail
cd "$(dirname "$0")/.."
LPGEN=${LPGEN:-target/release/lpgen}
DATA=${LPGEN_DATASETS:-../shared/datasets}
EPOCHS=${EPOCHS:-5}
NET="--backend f32 --format f32 --hidden 512 --activation sigmoid --dataset $DATA/mnist-10k --batch 20 --schedule fixed --epochs $EPOCHS --threads 1"
SGD="--lr 0.1 --momentum-from 2"
ADAGRAD="--optimizer adagrad --lr 0.01 --momentum 0.9"

# name|options
cases() {
  echo "adagrad-words-k1|$ADAGRAD --workers 1"
  for k in 1 2 4; do
    for at in local aggregate momentum; do
      echo "adagrad-$at-1bit-k$k|$ADAGRAD --adagrad-at $at --workers $k --compress 1bit"
    done
  done
  echo "sgd-1bit-k2|$SGD --workers 2 --compress 1bit"
  echo "sgd-1bit-db-k2|$SGD --workers 2 --compress 1bit --double-buffer"
  echo "adagrad-aggregate-1bit-db-k2|$ADAGRAD --adagrad-at aggregate --workers 2 --compress 1bit --double-buffer"
  for t in dynamic-tree static-tree linear mantissa; do
    echo "sgd-q8-$t-k2|$SGD --workers 2 --compress q8:$t"
  done
}

table() {
  python3 - "$EPOCHS" "$(cases)" <<'PY'
import json, os, sys
epochs = int(sys.argv[1])
print("| run | test accuracy, last epoch | train loss, last epoch | bytes per worker and step | s per step |")
print("| --- | ---: | ---: | ---: | ---: |")
for line in sys.argv[2].splitlines():
    name, opts = line.rstrip("\n").split("|", 1)
    f = f"results/s001-{name}/metrics.jsonl"
    if not os.path.exists(f):
        print(f"| {name} | (not run) | | | |")
        continue
    rows = [json.loads(l) for l in open(f) if l.strip()]
    last = rows[-1]
    b = last.get("bytes_sent_per_step")
    per_step = sum(r["seconds"] for r in rows) / sum(r["steps"] for r in rows)
    done = "" if len(rows) >= epochs else f" ({len(rows)} epochs)"
    print(f"| {name}{done} | {100 * last['test_acc']:.2f} % | {last['train_loss']:.4f} | "
          f"{'' if b is None else f'{b:,.0f}'} | {1000 * per_step:.1f} ms |")
PY
}

if [[ "${1:-}" != --table ]]; then
  cases | while IFS='|' read -r name opts; do
    out=results/s001-$name
    if [[ -f $out/metrics.jsonl ]] && [[ $(wc -l <"$out/metrics.jsonl") -ge $EPOCHS ]]; then
      continue
    fi
    rm -rf "$out"
    echo "== $name: lpgen train $NET $opts" >&2
    # shellcheck disable=SC2086 # the options are words
    "$LPGEN" train $NET $opts --out "$out" >/dev/null
  done
fi
table
