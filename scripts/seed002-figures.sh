#!/usr/bin/env bash
# Seed 002's sweeps (Courbariaux et al., Figs. 1-4) on MNIST-10k with a permutation-invariant
# maxout network with dropout, f32 arithmetic and low-precision storage (--format dfix:P:U):
#   fig1  fixed point, radix point after bit 1..9 (32-bit propagations and updates)
#   fig2  propagation width P, dynamic vs fixed (radix point 5), 32-bit updates
#   fig3  update width U, dynamic vs fixed (radix point 5), 32-bit propagations
#   fig4  maximum overflow rate 1e-5..1e-1 at P = 5, 6, 8 (32-bit updates; our knee of fig2
#         is near 6 bits, the paper's near 10)
# Each point's final test error is divided by the f32 runs' mean (the paper's "normalized
# test error"). Runs go to results/s002-<name>/ (a finished run is skipped), two at a time;
# then results/s002-figures.tsv and one PNG per figure (results/s002-figN.png).
#   scripts/seed002-figures.sh           every run, then the table and plots
#   scripts/seed002-figures.sh --table   only the table and plots from finished runs
# Environment: EPOCHS (20), JOBS (2), HIDDEN (120,120), LPGEN (target/release/lpgen).
set -euo pipefail
cd "$(dirname "$0")/.."
LPGEN=${LPGEN:-target/release/lpgen}
DATA=${LPGEN_DATASETS:-../shared/datasets}
EPOCHS=${EPOCHS:-20}
JOBS=${JOBS:-2}
HIDDEN=${HIDDEN:-120,120}
# Seed 002 §8-9: SGD with momentum, dropout 0.2 on the input and 0.5 on the hidden layers, the
# max-norm constraint (Goodfellow et al.'s 1.9365), inputs scaled by one global mean and
# deviation; scales move every 2000 examples (5 times an epoch here, as 10,000 of 50,000 in
# the paper).
NET="--backend f32 --model maxout --hidden $HIDDEN --maxout-k 5 --dropout 0.2,0.5,0.5 --dataset $DATA/mnist-10k --normalize global --batch 100 --lr 0.1 --momentum 0.5 --max-norm 1.9365 --schedule fixed --epochs $EPOCHS --threads 1"
DYN="--scale-every 2000"

# name|figure|series|x|options
cases() {
  for s in 1 2 3; do echo "f32-s$s|base|f32|$s|--seed $s"; done
  for r in 1 2 3 4 5 6 7 8 9; do echo "fig1-r$r|fig1|fixed point|$r|--format dfix:32:32 --radix-point $r"; done
  for p in 3 4 5 6 7 8 9 10 11 12 14 16 18 20 22 24; do
    echo "fig2-dyn-p$p|fig2|dynamic fixed point|$p|--format dfix:$p:32 $DYN"
    # Fixed point with 5 integer bits needs 6 bits at least.
    if ((p > 5)); then echo "fig2-fix-p$p|fig2|fixed point|$p|--format dfix:$p:32 --radix-point 5"; fi
  done
  for u in 6 8 10 11 12 13 14 16 18 20 22 24; do
    echo "fig3-dyn-u$u|fig3|dynamic fixed point|$u|--format dfix:32:$u $DYN"
    echo "fig3-fix-u$u|fig3|fixed point|$u|--format dfix:32:$u --radix-point 5"
  done
  for p in 5 6 8; do
    for m in 0.00001 0.0001 0.001 0.01 0.1; do
      echo "fig4-p$p-m$m|fig4|$p-bit propagations|$m|--format dfix:$p:32 --scale-every 2000 --max-overflow $m"
    done
  done
}

run_one() {
  local name=$1 opts=$2 out=results/s002-$1
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
  cases | cut -d'|' -f1,5 | tr '\n' '\0' |
    xargs -0 -P "$JOBS" -I{} bash -c 'IFS="|" read -r n o <<<"$1"; run_one "$n" "$o"' _ {}
fi

python3 - "$EPOCHS" "$(cases)" <<'PY'
import json, os, sys
epochs = int(sys.argv[1])
rows = []
for line in sys.argv[2].splitlines():
    name, fig, series, x, _ = line.split("|", 4)
    f = f"results/s002-{name}/metrics.jsonl"
    if not os.path.exists(f):
        continue
    m = [json.loads(l) for l in open(f) if l.strip()]
    rows.append((name, fig, series, x, 1 - m[-1]["test_acc"], len(m), m[-1].get("overflow_rate")))
base = [r[4] for r in rows if r[1] == "base"]
if not base:
    sys.exit("no f32 run finished")
f32 = sum(base) / len(base)
with open("results/s002-figures.tsv", "w") as out:
    out.write("figure\tseries\tx\ttest_error\tnormalized\tepochs\n")
    print(f"f32 test error {100 * f32:.2f} % (mean of {len(base)} seeds)")
    print("| figure | series | x | test error | normalized | epochs | overflow rate, last epoch |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
    for name, fig, series, x, err, n, rate in rows:
        out.write(f"{fig}\t{series}\t{x}\t{err}\t{err / f32}\t{n}\n")
        rate = "" if rate is None else f"{rate:.1e}"
        print(f"| {fig} | {series} | {x} | {100 * err:.2f} % | {err / f32:.2f} | {n} | {rate} |")
PY
for fig in fig1 fig2 fig3 fig4; do
  case $fig in
    fig1) x="radix point (integer bits of fixed point)"; t="Seed 002 Fig. 1: fixed point, 32-bit storage";;
    fig2) x="propagation width (bits, sign included)"; t="Seed 002 Fig. 2: propagation width, 32-bit updates";;
    fig3) x="update width (bits, sign included)"; t="Seed 002 Fig. 3: update width, 32-bit propagations";;
    fig4) x="maximum overflow rate"; t="Seed 002 Fig. 4: dynamic fixed point, 32-bit updates";;
  esac
  log=""; [[ $fig == fig4 ]] && log="--log-x"
  # shellcheck disable=SC2086
  cargo run -q --release -p lpgen-train --example lines -- results/s002-figures.tsv "$fig" \
    "results/s002-$fig.png" --title "$t (maxout $HIDDEN, MNIST-10k)" --x-label "$x" \
    --y-label "test error / f32 test error" $log
done
