#!/usr/bin/env bash
# Issue 35 item 6: seed 002's propagation-width knee (Fig. 2, dynamic fixed point with 32-bit
# updates) and update-width knee (Fig. 3, 32-bit propagations and UPDATES-bit updates) rerun
# on Fashion-MNIST (60,000 training images), with f32 and half precision
# storage (store:f16, Table 3's half row) beside it: the maxout network of seed002-figures.sh
# (HIDDEN units of 5 pieces), SEEDS, EPOCHS epochs, scales moved every 12,000 examples (5
# times an epoch, as the paper's 10,000 of 50,000). Runs go to results/s002-fm-<row>-s<seed>/
# (a finished run is skipped), JOBS at a time; the table prints each run's final test error,
# their mean and its ratio to f32's mean (the paper's "normalized test error").
#   scripts/seed002-fashion-knees.sh           every run, then the table
#   scripts/seed002-fashion-knees.sh --table   the table from finished runs
# Environment: EPOCHS (5), SEEDS (1 2 3), JOBS (1), HIDDEN (120,120), WIDTHS (5 6 7 8 9 10),
# UPDATES (6 7 8 10 12; Fig. 3's rows), FIXED (11 12 14) and FIXED_UPDATES (14 16): the fixed-point
# series of Figs. 2 and 3 (radix point after 5 integer bits, as seed002-figures.sh), LPGEN. An
# empty list runs none of its rows.
set -euo pipefail
cd "$(dirname "$0")/.."
LPGEN=${LPGEN:-target/release/lpgen}
DATA=${LPGEN_DATASETS:-../shared/datasets}
EPOCHS=${EPOCHS:-5}
SEEDS=${SEEDS:-1 2 3}
JOBS=${JOBS:-1}
HIDDEN=${HIDDEN:-120,120}
WIDTHS=${WIDTHS-5 6 7 8 9 10}
UPDATES=${UPDATES-6 7 8 10 12}
FIXED=${FIXED-11 12 14}
FIXED_UPDATES=${FIXED_UPDATES-14 16}
NET="--backend f32 --model maxout --hidden $HIDDEN --maxout-k 5 --dropout 0.2,0.5,0.5 --dataset $DATA/fashion-mnist --normalize global --batch 100 --lr 0.1 --momentum 0.5 --max-norm 1.9365 --schedule fixed --epochs $EPOCHS --threads 1"

# row|options
rows() {
  echo "f32|"
  echo "half|--format store:f16"
  for p in $WIDTHS; do echo "dfix-p$p|--format dfix:$p:32 --scale-every 12000"; done
  for u in $UPDATES; do echo "dfix-u$u|--format dfix:32:$u --scale-every 12000"; done
  for p in $FIXED; do echo "fix-p$p|--format dfix:$p:32 --radix-point 5"; done
  for u in $FIXED_UPDATES; do echo "fix-u$u|--format dfix:32:$u --radix-point 5"; done
}

run_one() {
  local name=$1 opts=$2 out=results/s002-fm-$1
  if [[ -f $out/metrics.jsonl ]] && [[ $(wc -l <"$out/metrics.jsonl") -ge $EPOCHS ]]; then
    return 0
  fi
  rm -rf "$out"
  echo "== $name: lpgen train $NET $opts" >&2
  # shellcheck disable=SC2086 # the options are words
  "$LPGEN" train $NET $opts --out "$out" >/dev/null
}
export -f run_one
export LPGEN NET EPOCHS

if [[ "${1:-}" != --table ]]; then
  for s in $SEEDS; do
    rows | while IFS='|' read -r row opts; do printf '%s\0' "$row-s$s|$opts --seed $s"; done
  done |
    xargs -0 -P "$JOBS" -I{} bash -c 'IFS="|" read -r n o <<<"$1"; run_one "$n" "$o"' _ {}
fi

python3 - "$(rows)" "$SEEDS" <<'PY'
import json, os, sys
got = {}
for line in sys.argv[1].splitlines():
    row, opts = line.split("|", 1)
    runs = []
    for s in sys.argv[2].split():
        f = f"results/s002-fm-{row}-s{s}/metrics.jsonl"
        if os.path.exists(f):
            m = [json.loads(l) for l in open(f) if l.strip()]
            runs.append((s, 1 - m[-1]["test_acc"], len(m), m[-1].get("overflow_rate")))
    if runs:
        got[row] = (opts, runs, sum(r[1] for r in runs) / len(runs))
base = got["f32"][2] if "f32" in got else float("nan")
print("| row | options | test error per seed (epochs) | mean | / f32 | overflow rate (last epoch) |")
print("| --- | --- | --- | ---: | ---: | --- |")
for row, (opts, runs, mean) in got.items():
    per = ", ".join(f"{100 * e:.2f} % (s{s}, {n})" for s, e, n, _ in runs)
    rates = ", ".join(f"{o:.1e}" for *_, o in runs if o is not None)
    print(f"| {row} | {('`' + opts + '`') if opts else '(none)'} | {per} | {100 * mean:.2f} % | {mean / base:.2f} | {rates} |")
PY
