#!/usr/bin/env bash
# Issue 32: stochastic rounding of stored values (docs/results.md, "Stochastic rounding of
# stored values"). lpgen train's default network on MNIST-10k, EPOCHS epochs, f32 arithmetic,
# every stored value rounded to F to nearest or with stochastic:8; and the f32 run. Runs go
# to results/sr-store-<F>-<rounding>/ (a finished run is skipped); the table is printed.
# Environment: EPOCHS (3), LPGEN, LPGEN_DATASETS.
set -euo pipefail
cd "$(dirname "$0")/.."
LPGEN=${LPGEN:-target/release/lpgen}
DATA=${LPGEN_DATASETS:-../shared/datasets}
EPOCHS=${EPOCHS:-3}
NET="--dataset $DATA/mnist-10k --epochs $EPOCHS --backend f32 --threads 1"
run() { # name options...
  local out=results/sr-store-$1
  shift
  if [[ -f $out/metrics.jsonl ]] && [[ $(wc -l <"$out/metrics.jsonl") -ge $EPOCHS ]]; then return; fi
  echo "== lpgen train $NET $* --out $out" >&2
  # shellcheck disable=SC2086 # the options are words
  nice "$LPGEN" train $NET "$@" --out "$out" >/dev/null
}
run f32
for f in fp8:e5m2 bf16; do
  for r in nearest stochastic:8; do
    run "${f//:/-}-${r//:/-}" --format "store:$f" --rounding "$r"
  done
done
python3 - <<'PY'
import glob, json
for d in sorted(glob.glob("results/sr-store-*/metrics.jsonl")):
    m = [json.loads(l) for l in open(d)]
    acc = ", ".join(f"{100 * x['test_acc']:.2f}" for x in m)
    print(f"| {d.split('/')[1][9:]} | {acc} % | {m[-1]['train_loss']:.3f} |")
PY
