#!/usr/bin/env bash
# Training throughput of `lpgen train` beside a numpy reference of the same algorithm
# (scripts/bench_train_ref.py, float32), one MNIST-10k epoch of a 784-512-10 sigmoid MLP,
# run one after another in one invocation so that all see the same machine state.
#   scripts/bench-train.sh               numpy, f32, lns, posit, fix
#   scripts/bench-train.sh f32           numpy and f32 only (cases: f32 lns posit fix golden all)
# Cases: numpy (always; the reference of the ratio column), f32 (`--backend f32`, a full
# epoch), and on the golden backend lns (`--format lns:5:6`, Kahan everywhere by default),
# posit (`--format posit:8:2 --quire`) and fix (`--format fix:7:8`), which are slow (minutes
# per epoch) and so run BENCH_STEPS batches; their seconds per epoch are projected.
# Every figure is training only: seconds per epoch = training samples / samples_per_s (lpgen's
# `seconds` includes the test pass and is not used).
# Environment:
#   BENCH_STEPS=20            batches of each golden case
#   BENCH_TEST_LIMIT=100      test samples of each golden case (its test pass is not timed)
#   BENCH_NUMPY_THREADS=1     BLAS threads of the numpy reference (a list runs each: "1 2")
#   BENCH_NUMPY_REPEAT=3      numpy runs per thread count (a fresh process each; median shown)
#   BENCH_HIDDEN=512, BENCH_DATASET=../shared/datasets/mnist-10k, BENCH_VENV=target/bench-venv
#   LPGEN_TRAIN_ARGS="..."    extra options for every lpgen run (e.g. "--threads 2")
# OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE (set on some machines for old OpenBLAS builds) are
# removed from the numpy command's environment only: they slow a current numpy's OpenBLAS.
set -euo pipefail
cd "$(dirname "$0")/.."

DATA=${BENCH_DATASET:-../shared/datasets/mnist-10k}
HIDDEN=${BENCH_HIDDEN:-512}
STEPS=${BENCH_STEPS:-20}
TEST_LIMIT=${BENCH_TEST_LIMIT:-100}
NUMPY_THREADS=${BENCH_NUMPY_THREADS:-1}
REPEAT=${BENCH_NUMPY_REPEAT:-3}
VENV=${BENCH_VENV:-target/bench-venv}
LPGEN=${CARGO_TARGET_DIR:-target}/release/lpgen
read -r -a EXTRA <<<"${LPGEN_TRAIN_ARGS:-}"

usage() {
  sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
  exit 2
}

CASES=()
for a in "${@:-all}"; do
  case $a in
    all) CASES+=(f32 lns posit fix) ;;
    golden) CASES+=(lns posit fix) ;;
    numpy) ;;
    f32 | lns | posit | fix) CASES+=("$a") ;;
    -h | --help) usage ;;
    *) echo "bench-train.sh: unknown case '$a'" >&2; usage ;;
  esac
done
for v in "$STEPS" "$TEST_LIMIT" "$REPEAT"; do
  [[ $v =~ ^[1-9][0-9]*$ ]] || { echo "bench-train.sh: BENCH_STEPS, BENCH_TEST_LIMIT and BENCH_NUMPY_REPEAT must be positive integers" >&2; exit 2; }
done
[ -d "$DATA" ] || { echo "bench-train.sh: dataset $DATA not found (BENCH_DATASET)" >&2; exit 2; }

# The venv: numpy and threadpoolctl (to name the BLAS numpy runs), made once and reused.
if ! "$VENV/bin/python" -c 'import numpy, threadpoolctl' 2>/dev/null; then
  echo "== creating $VENV (numpy, threadpoolctl)" >&2
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q numpy threadpoolctl
fi
NUMPY=(env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE "$VENV/bin/python" scripts/bench_train_ref.py)

if [ ${#CASES[@]} -gt 0 ]; then
  echo "== cargo build --release -p lpgen" >&2
  cargo build --release -p lpgen >&2
fi

TMP=$(mktemp -d "${TMPDIR:-/tmp}/bench-train.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
MANIFEST=$TMP/manifest.tsv
: >"$MANIFEST"

cpu=$(grep -m1 '^model name' /proc/cpuinfo | sed 's/^[^:]*: *//' || true)
echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')  commit: $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
echo "nproc: $(nproc)  cpu: ${cpu:-?}  load average: $(cut -d' ' -f1-3 /proc/loadavg)"
blas_env=""
for v in OPENBLAS_CORETYPE OPENBLAS_L2_SIZE; do
  if [ -n "${!v+x}" ]; then blas_env+=" $v=${!v}"; fi
done
echo "BLAS: $("${NUMPY[@]}" --dataset "$DATA" --threads "${NUMPY_THREADS%%[ ,]*}" --blas)${blas_env:+ (unset for numpy:$blas_env)}"
echo "lpgen extra args: ${LPGEN_TRAIN_ARGS:-(none)}"

FAILED=0
for t in ${NUMPY_THREADS//,/ }; do
  files=()
  for i in $(seq "$REPEAT"); do
    f=$TMP/numpy-t$t-$i.jsonl
    echo "== numpy, $t thread(s), run $i/$REPEAT" >&2
    if "${NUMPY[@]}" --dataset "$DATA" --hidden "$HIDDEN" --epochs 1 --threads "$t" >"$f"; then
      files+=("$f")
    else
      FAILED=1
    fi
  done
  printf 'numpy (%s thread%s, median of %s)\tnumpy\t%s\n' "$t" "$([ "$t" = 1 ] || echo s)" "$REPEAT" \
    "$(IFS=,; echo "${files[*]-}")" >>"$MANIFEST"
done

RUNS=0
run_lpgen() { # label, then options
  local label=$1 out
  shift
  RUNS=$((RUNS + 1))
  out=$TMP/lpgen-$RUNS
  local cmd=("$LPGEN" train --schedule fixed --epochs 1 --hidden "$HIDDEN" --dataset "$DATA" "$@"
    ${EXTRA[@]+"${EXTRA[@]}"} --out "$out")
  echo "== ${cmd[*]}" >&2
  if "${cmd[@]}" >&2; then
    printf '%s\tlpgen\t%s\n' "$label" "$out/metrics.jsonl" >>"$MANIFEST"
  else
    printf '%s\tlpgen\t\n' "$label" >>"$MANIFEST"
    FAILED=1
  fi
}

GOLDEN=(--backend golden --max-steps "$STEPS" --test-limit "$TEST_LIMIT")
for c in ${CASES[@]+"${CASES[@]}"}; do
  case $c in
    f32) run_lpgen "lpgen f32" --backend f32 ;;
    lns) run_lpgen "lpgen golden lns:5:6 (Kahan all)" --format lns:5:6 "${GOLDEN[@]}" ;;
    posit) run_lpgen "lpgen golden posit:8:2 --quire" --format posit:8:2 --quire "${GOLDEN[@]}" ;;
    fix) run_lpgen "lpgen golden fix:7:8" --format fix:7:8 "${GOLDEN[@]}" ;;
  esac
done

python3 - "$MANIFEST" "$DATA" <<'PY'
import gzip, json, os, statistics, sys

manifest, data = sys.argv[1], sys.argv[2]
# Training samples of the dataset: the count in the labels file's IDX header.
for name in ("train-labels-idx1-ubyte.gz", "train-labels-idx1-ubyte"):
    p = os.path.join(data, name)
    if os.path.isfile(p):
        with (gzip.open if name.endswith(".gz") else open)(p, "rb") as f:
            samples = int.from_bytes(f.read(8)[4:8], "big")
        break

rows = []
for line in open(manifest):
    label, kind, files = line.rstrip("\n").split("\t")
    runs = [json.loads(l) for f in files.split(",") if f and os.path.isfile(f) for l in open(f) if l.strip()]
    if not runs:
        rows.append((label, kind, None, None, None, ""))
        continue
    rates = [r["samples_per_s"] for r in runs]
    rate = statistics.median(rates)
    r0 = runs[0]
    full = r0["steps"] * 20 >= samples  # a full epoch (batch 20) or --max-steps
    acc = ", ".join(f"{100 * r['test_acc']:.2f}" for r in runs) if full else "–"
    note = f"{min(rates):.0f}–{max(rates):.0f}" if len(rates) > 1 else ""
    rows.append((label, kind, rate, r0["steps"], acc, note))

base = next((r[2] for r in rows if r[1] == "numpy" and r[2]), None)
print()
print(f"training samples per epoch: {samples}; s per training epoch = {samples} / samples_per_s "
      "(projected from the steps run where fewer than a full epoch)")
print()
print("| case | steps | samples/s | s per training epoch | ratio to numpy | test acc % |")
print("|---|---:|---:|---:|---:|---|")
for label, kind, rate, steps, acc, note in rows:
    if rate is None:
        print(f"| {label} | – | failed | – | – | – |")
        continue
    secs = samples / rate
    ratio = f"{base / rate:.1f}" if base else "–"  # (samples / rate) / (samples / base)
    shown = f"{rate:,.0f}" + (f" (range {note})" if note else "")
    print(f"| {label} | {steps} | {shown} | {secs:,.2f} | {ratio} | {acc} |")
PY
exit "$FAILED"
