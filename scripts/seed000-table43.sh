#!/usr/bin/env bash
# Seed 000 Table 4.3: a network trained in one arithmetic and evaluated in another. The MNIST-10k
# setting of scripts/train-results.sh (seed 000 §4.2: sigmoid MLP, batch 20, lr 0.1, momentum
# 0.5 from epoch 2, halving schedule, 15 epochs) with HIDDEN hidden units (100; the thesis has
# 512, whose LNS run takes over an hour here), trained once in f32 and once in lns:5:6 with
# Kahan sums everywhere (Table 4.2's two networks); then each is evaluated with `lpgen eval`
# in f32 and in lns:5:6 (Kahan everywhere, the default for LNS).
# Runs go to results/s000-t43-{f32,lns}/, evaluations to results/s000-t43.jsonl; `--table`
# prints the table.  Environment: HIDDEN (100), EPOCHS (15), LPGEN, LPGEN_DATASETS.
set -euo pipefail
cd "$(dirname "$0")/.."
LPGEN=${LPGEN:-target/release/lpgen}
DATA=${LPGEN_DATASETS:-../shared/datasets}
HIDDEN=${HIDDEN:-100}
EPOCHS=${EPOCHS:-15}
MNIST="--dataset $DATA/mnist-10k --hidden $HIDDEN --activation sigmoid --batch 20 --lr 0.1 --momentum 0.5 --momentum-from 2 --schedule halving --epochs $EPOCHS --threads 1"
OUT=results/s000-t43.jsonl

train() {
  local name=$1 opts=$2 out=results/s000-t43-$1
  if [[ -f $out/metrics.jsonl ]] && [[ $(wc -l <"$out/metrics.jsonl") -ge $EPOCHS ]]; then
    return 0
  fi
  local resume=""
  [[ -s $out/checkpoint.lpck ]] && resume="--resume"
  echo "== lpgen train $MNIST $opts --out $out $resume" >&2
  # shellcheck disable=SC2086 # the options are words
  "$LPGEN" train $MNIST $opts --out "$out" $resume >/dev/null
}

if [[ "${1:-}" != --table ]]; then
  train f32 "--backend f32"
  train lns "--format lns:5:6 --kahan all"
  touch "$OUT"
  for run in f32 lns; do
    for f in f32 lns:5:6; do
      grep -q "\"run\":\"$run\",\"eval\":\"$f\"" "$OUT" && continue
      echo "== lpgen eval --checkpoint results/s000-t43-$run --format $f" >&2
      line=$("$LPGEN" eval --checkpoint "results/s000-t43-$run" --format "$f" \
        --dataset "$DATA/mnist-10k" --threads 1 | tail -1)
      echo "{\"run\":\"$run\",\"eval\":\"$f\",${line#\{}" >>"$OUT"
    done
  done
fi
python3 - "$OUT" <<'PY'
import json, sys
rows = {(r["run"], r["eval"]): r for r in map(json.loads, open(sys.argv[1]))}
paper = {("f32", "f32"): 2.14, ("f32", "lns:5:6"): 2.11, ("lns", "f32"): 2.34, ("lns", "lns:5:6"): 2.29}
print("| trained in | evaluated in f32: error (thesis) | evaluated in lns:5:6: error (thesis) |")
print("| --- | ---: | ---: |")
for run, name in [("f32", "f32"), ("lns", "lns:5:6, Kahan everywhere")]:
    cells = []
    for f in ["f32", "lns:5:6"]:
        r = rows.get((run, f))
        cells.append(f"{100 * (1 - r['test_acc']):.2f} % ({paper[(run, f)]:.2f} %)" if r else "—")
    print(f"| {name} | " + " | ".join(cells) + " |")
PY
