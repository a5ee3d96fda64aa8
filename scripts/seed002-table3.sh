#!/usr/bin/env bash
# Seed 002 Table 3's permutation-invariant MNIST rows on MNIST-10k: f32, fixed point 20/20
# (radix point after bit 5), dynamic fixed point 10/12 and half precision floating point
# (store:f16: f32 arithmetic, every stored value rounded to binary16), each over SEEDS seeds,
# with the maxout network of seed002-figures.sh at HIDDEN units (Goodfellow et al.'s 240 x 5
# pieces). Runs go to results/s002-t3-<row>-s<seed>/ (a finished run is skipped), JOBS at a
# time; the table prints test errors (mean over seeds) and the ratio to f32 beside the paper's.
# Environment: EPOCHS (20), SEEDS (1 2 3), JOBS (2), HIDDEN (240,240), ROWS (every row; e.g.
# "f32 half" runs those only, the table still lists every row), LPGEN.
set -euo pipefail
cd "$(dirname "$0")/.."
LPGEN=${LPGEN:-target/release/lpgen}
DATA=${LPGEN_DATASETS:-../shared/datasets}
EPOCHS=${EPOCHS:-20}
SEEDS=${SEEDS:-1 2 3}
JOBS=${JOBS:-2}
HIDDEN=${HIDDEN:-240,240}
ROWS=${ROWS:-}
NET="--backend f32 --model maxout --hidden $HIDDEN --maxout-k 5 --dropout 0.2,0.5,0.5 --dataset $DATA/mnist-10k --normalize global --batch 100 --lr 0.1 --momentum 0.5 --max-norm 1.9365 --schedule fixed --epochs $EPOCHS --threads 1"

# row|paper's test error|options
rows() {
  echo "f32|1.05|"
  echo "fix-20-20|1.39|--format dfix:20:20 --radix-point 5"
  echo "dfix-10-12|1.28|--format dfix:10:12 --scale-every 2000"
  echo "half|1.10|--format store:f16"
}

# The rows to run: ROWS, or every row.
chosen() {
  rows | while IFS='|' read -r row rest; do
    if [[ -z $ROWS || " $ROWS " == *" $row "* ]]; then echo "$row|$rest"; fi
  done
}

run_one() {
  local name=$1 opts=$2 out=results/s002-t3-$1
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
    chosen | while IFS='|' read -r row _ opts; do printf '%s\0' "$row-s$s|$opts --seed $s"; done
  done | xargs -0 -P "$JOBS" -I{} bash -c 'IFS="|" read -r n o <<<"$1"; run_one "$n" "$o"' _ {}
fi

python3 - "$(rows)" "$SEEDS" <<'PY'
import json, os, sys
seeds = sys.argv[2].split()
errs = {}
for line in sys.argv[1].splitlines():
    row, paper, _ = line.split("|", 2)
    e = []
    for s in seeds:
        f = f"results/s002-t3-{row}-s{s}/metrics.jsonl"
        if os.path.exists(f):
            m = [json.loads(l) for l in open(f) if l.strip()]
            e.append((1 - m[-1]["test_acc"], len(m)))
    errs[row] = (float(paper), e)
f32 = errs["f32"][1]
base = sum(x for x, _ in f32) / len(f32) if f32 else float("nan")
print("| row | test error per seed | mean | ours / f32 | paper (PI MNIST) | paper / f32 |")
print("| --- | --- | ---: | ---: | ---: | ---: |")
for row, (paper, e) in errs.items():
    if not e:
        print(f"| {row} | (not run) | | | {paper:.2f} % | {paper / 1.05:.2f} |")
        continue
    mean = sum(x for x, _ in e) / len(e)
    per = ", ".join(f"{100 * x:.2f} % ({n} ep.)" for x, n in e)
    print(f"| {row} | {per} | {100 * mean:.2f} % | {mean / base:.2f} | {paper:.2f} % | {paper / 1.05:.2f} |")
PY
