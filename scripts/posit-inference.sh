#!/usr/bin/env bash
# Seed 004 ch. 5 (Tables 4.2, 5.4, 5.5): LeNet-5 trained in f32 (the mnist-f32 and f32 rows of
# experiments/seed004-lenet.toml, trained first by `lpgen sweep` if missing), evaluated with `lpgen eval`
# in posit(N, es) for N = 3..8 and every es the Posit Standard allows (es <= N - 3), with and
# without quires, on the whole test split of MNIST-10k and of Fashion-MNIST. Two grids:
#   loss16 (the thesis' tables): weights and the forward pass in posit(N, es), the softmax that
#          turns the logits into the prediction in posit(16, es) (the logits convert exactly);
#   all:   every stage in posit(N, es), the softmax too (at 4 and 5 bits its outputs tie and
#          the first of the tied classes is predicted).
# One JSON line per evaluation in results/pinf-<dataset>.jsonl (an evaluation already there is
# skipped); `--table` prints the tables.
# More seeds: SEEDS="2 3" trains the f32 models at those seeds (results/seed004-lenet/<row>-sS/) and writes
# results/pinf-<dataset>-sS.jsonl; the table then adds the mean ± sd over seed 1 and those
# seeds of every cell all of them have (WIDTHS="8" DATASETS=fashion-mnist GRIDS=loss16: the
# 8-bit cells of Table 4.2, differences under a point).
# Environment: LPGEN, LPGEN_DATASETS, THREADS (1), GRIDS ("loss16 all"), SEEDS (1),
# WIDTHS ("8 7 6 5 4 3"), DATASETS ("mnist-10k fashion-mnist").
set -euo pipefail
cd "$(dirname "$0")/.."
LPGEN=${LPGEN:-target/release/lpgen}
DATA=${LPGEN_DATASETS:-../shared/datasets}
THREADS=${THREADS:-1}
GRIDS=${GRIDS:-loss16 all}
SEEDS=${SEEDS:-1}
WIDTHS=${WIDTHS:-8 7 6 5 4 3}
DATASETS=${DATASETS:-mnist-10k fashion-mnist}

# dataset directory|training row
SETS=()
for ds in $DATASETS; do
  case $ds in
    mnist-10k) SETS+=("mnist-10k|mnist-f32") ;;
    fashion-mnist) SETS+=("fashion-mnist|f32") ;;
    *) echo "posit-inference: unknown dataset '$ds' (mnist-10k, fashion-mnist)" >&2; exit 2 ;;
  esac
done

formats() {
  for n in $WIDTHS; do
    for es in 0 1 2; do
      ((es <= n - 3)) && echo "$n:$es"
    done
  done
  return 0
}

# The `lpgen eval` options of posit(n, es) in grid $1, with quires if $2 is q.
options() {
  local grid=$1 q=$2 n=${3%:*} es=${3#*:}
  case $grid in
    loss16) echo "--precision O=posit:$n:$es-L=posit:16:$es-FBG=posit:$n:$es$q" ;;
    all) echo "--format posit:$n:$es${q:+ --quire}" ;;
  esac
}

# Evaluates training row $2 at seed $3 on dataset $1.
evaluate() {
  local ds=$1 row=results/seed004-lenet/$2-s$3 seed=$3 out=results/pinf-$1.jsonl
  [[ $seed == 1 ]] || out=results/pinf-$ds-s$seed.jsonl
  [[ -s $row/checkpoint.lpck ]] ||
    "$LPGEN" sweep experiments/seed004-lenet.toml --rows "$2" --seeds "$seed" >&2
  touch "$out"
  local key
  key='{"grid":"f32","posit":"f32","quire":false,'
  if ! grep -qF "$key" "$out"; then
    line=$("$LPGEN" eval --checkpoint "$row" --format f32 --dataset "$DATA/$ds" --threads "$THREADS" | tail -1)
    echo "$key${line#\{}" >>"$out"
  fi
  for grid in $GRIDS; do
    for f in $(formats); do
      for q in q ""; do
        key="{\"grid\":\"$grid\",\"posit\":\"$f\",\"quire\":$([[ -n $q ]] && echo true || echo false),"
        grep -qF "$key" "$out" && continue
        local opts
        opts=$(options "$grid" "$q" "$f")
        echo "== $ds: lpgen eval --checkpoint $row $opts" >&2
        # shellcheck disable=SC2086 # the options are words
        line=$("$LPGEN" eval --checkpoint "$row" $opts --dataset "$DATA/$ds" \
          --threads "$THREADS" | tail -1)
        echo "$key${line#\{}" >>"$out"
      done
    done
  done
}

table() {
  python3 - "${SETS[@]}" <<'PY'
import json, os, sys
# Seed 004 Tables 5.4 (MNIST) and 5.5 (Fashion-MNIST), quires; Table 4.2 (Fashion, 8 bits, without).
paper = {
    "mnist-10k": {"f32": 99.21, "8:0": 99.18, "8:1": 99.21, "8:2": 99.20, "7:0": 98.70,
                  "7:1": 99.13, "7:2": 99.17, "6:0": 94.94, "6:1": 98.77, "6:2": 98.83,
                  "5:0": 63.97, "5:1": 95.97, "5:2": 95.68, "4:0": 46.79, "4:1": 70.90,
                  "3:0": 19.53},
    "fashion-mnist": {"f32": 90.28, "8:0": 89.93, "8:1": 90.23, "8:2": 90.05, "7:0": 88.51,
                      "7:1": 89.80, "7:2": 89.58, "6:0": 81.16, "6:1": 87.71, "6:2": 87.36,
                      "5:0": 42.03, "5:1": 83.14, "5:2": 81.77, "4:0": 23.28, "4:1": 52.53,
                      "3:0": 10.83},
}
no_quire = {"fashion-mnist": {"8:0": 88.80, "8:1": 89.14, "8:2": 88.71}}
for item in sys.argv[1:]:
    ds = item.split("|")[0]
    path = f"results/pinf-{ds}.jsonl"
    if not os.path.exists(path):
        continue
    rows = [json.loads(l) for l in open(path) if l.strip()]
    got = {(r["grid"], r["posit"], r["quire"]): 100 * r["test_acc"] for r in rows}
    images = rows[0]["test_images"] if rows else 0
    f32 = got.get(("f32", "f32", False))
    for grid in ["loss16", "all"]:
        if not any(k[0] == grid for k in got):
            continue
        print(f"\n{ds}, {images} test images, grid {grid}: accuracy with quires / without (thesis: with / without)")
        print(f"f32: {f32:.2f} % (thesis {paper[ds]['f32']:.2f} %)\n" if f32 else "")
        print("| N | es = 0 | es = 1 | es = 2 |")
        print("| --- | --- | --- | --- |")
        for n in range(8, 2, -1):
            cells = []
            for es in range(3):
                f = f"{n}:{es}"
                if (grid, f, True) not in got:
                    cells.append("—")
                    continue
                p, nq = paper[ds].get(f), no_quire.get(ds, {}).get(f)
                thesis = f"{p:.2f}" if p is not None else "—"
                thesis += f" / {nq:.2f}" if nq is not None else ""
                ours = f"{got[(grid, f, True)]:.2f} / {got.get((grid, f, False), float('nan')):.2f}"
                cells.append(f"{ours} ({thesis})")
            print(f"| {n} | " + " | ".join(cells) + " |")
PY
}

# Mean ± sd over seed 1 and the other seeds' files, of every cell all of them have.
seeds_table() {
  python3 - "$SEEDS" "${SETS[@]}" <<'PY'
import json, os, statistics, sys
seeds = sorted({1} | {int(s) for s in sys.argv[1].split()})
if len(seeds) < 2:
    sys.exit(0)
for item in sys.argv[2:]:
    ds = item.split("|")[0]
    per = []
    for s in seeds:
        path = f"results/pinf-{ds}.jsonl" if s == 1 else f"results/pinf-{ds}-s{s}.jsonl"
        if not os.path.exists(path):
            break
        per.append({(r["grid"], r["posit"], r["quire"]): 100 * r["test_acc"]
                    for r in map(json.loads, filter(str.strip, open(path)))})
    if len(per) < len(seeds):
        continue
    common = [k for k in per[0] if all(k in p for p in per)]
    print(f"\n{ds}: accuracy over seeds {', '.join(map(str, seeds))} (mean ± sd; each seed)")
    print("| grid | format | quire | mean ± sd | per seed |")
    print("| --- | --- | --- | ---: | --- |")
    for k in common:
        v = [p[k] for p in per]
        each = ", ".join(f"{x:.2f}" for x in v)
        print(f"| {k[0]} | {k[1]} | {'yes' if k[2] else 'no'} | {statistics.mean(v):.2f} ± {statistics.stdev(v):.2f} % | {each} |")
PY
}

if [[ "${1:-}" != --table ]]; then
  for seed in $SEEDS; do
    for s in "${SETS[@]}"; do
      IFS='|' read -r ds row <<<"$s"
      evaluate "$ds" "$row" "$seed"
    done
  done
fi
table
seeds_table
