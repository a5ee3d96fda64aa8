#!/usr/bin/env bash
# Seed 000 Table 4.3: a network trained in one arithmetic and evaluated in another. The MNIST-10k
# setting of scripts/train-results.sh (seed 000 §4.2: sigmoid MLP, batch 20, lr 0.1, momentum
# 0.5 from epoch 2, halving schedule, 15 epochs) with HIDDEN hidden units (100; the thesis has
# 512, whose LNS run takes over an hour here), trained once in f32 and once in lns:5:6 with
# Kahan sums everywhere (Table 4.2's two networks); then each is evaluated with `lpgen eval`
# in f32 and in lns:5:6 (Kahan everywhere, the default for LNS).
# Runs go to results/s000-t43-{f32,lns}/ (seed 1) and results/s000-t43-{f32,lns}-sS/ (seed S),
# evaluations to results/s000-t43.jsonl; `--table` prints the table, with mean ± sd when more than
# one seed has run.  Environment: SEEDS ("1"; "1 2 3" for three), HIDDEN (100), EPOCHS (15),
# LPGEN, LPGEN_DATASETS.
set -euo pipefail
cd "$(dirname "$0")/.."
LPGEN=${LPGEN:-target/release/lpgen}
DATA=${LPGEN_DATASETS:-../shared/datasets}
HIDDEN=${HIDDEN:-100}
EPOCHS=${EPOCHS:-15}
SEEDS=${SEEDS:-1}
MNIST="--dataset $DATA/mnist-10k --hidden $HIDDEN --activation sigmoid --batch 20 --lr 0.1 --momentum 0.5 --momentum-from 2 --schedule halving --epochs $EPOCHS --threads 1"
OUT=results/s000-t43.jsonl

# The run directory of run $1 at seed $2 (seed 1 keeps the name it had before seeds).
dir() { if [[ $2 == 1 ]]; then echo "results/s000-t43-$1"; else echo "results/s000-t43-$1-s$2"; fi; }

train() {
  local opts="$2 --seed $3" out
  out=$(dir "$1" "$3")
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
  touch "$OUT"
  for seed in $SEEDS; do
    train f32 "--backend f32" "$seed"
    train lns "--format lns:5:6 --kahan all" "$seed"
    for run in f32 lns; do
      for f in f32 lns:5:6; do
        # Seed 1's lines were written before seeds and carry no "seed" field.
        key="\"run\":\"$run\",\"eval\":\"$f\""
        [[ $seed != 1 ]] && key="\"seed\":$seed,$key"
        if [[ $seed == 1 ]]; then
          grep -v '"seed"' "$OUT" | grep -q "^{$key" && continue
        else
          grep -q "^{$key" "$OUT" && continue
        fi
        ckpt=$(dir "$run" "$seed")
        echo "== lpgen eval --checkpoint $ckpt --format $f" >&2
        line=$("$LPGEN" eval --checkpoint "$ckpt" --format "$f" \
          --dataset "$DATA/mnist-10k" --threads 1 | tail -1)
        echo "{$key,${line#\{}" >>"$OUT"
      done
    done
  done
fi
python3 - "$OUT" <<'PY'
import json, statistics, sys
rows = {}
for r in map(json.loads, open(sys.argv[1])):
    rows.setdefault((r["run"], r["eval"]), {})[r.get("seed", 1)] = 100 * (1 - r["test_acc"])
def cell(errs):
    if len(errs) == 1:
        return f"{next(iter(errs.values())):.2f} %"
    e = list(errs.values())
    return f"{statistics.mean(e):.2f} ± {statistics.stdev(e):.2f} % (n = {len(e)})"

paper = {("f32", "f32"): 2.14, ("f32", "lns:5:6"): 2.11, ("lns", "f32"): 2.34, ("lns", "lns:5:6"): 2.29}
print("| trained in | evaluated in f32: error (thesis) | evaluated in lns:5:6: error (thesis) |")
print("| --- | ---: | ---: |")
for run, name in [("f32", "f32"), ("lns", "lns:5:6, Kahan everywhere")]:
    cells = []
    for f in ["f32", "lns:5:6"]:
        errs = rows.get((run, f))
        cells.append(f"{cell(errs)} ({paper[(run, f)]:.2f} %)" if errs else "—")
    print(f"| {name} | " + " | ".join(cells) + " |")
PY
