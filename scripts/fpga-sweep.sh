#!/usr/bin/env bash
# The FPGA sweep of issue 6: every unit/format of docs/fpga.md at every pipeline depth, the
# largest arrays per PE kind and device, then the tables of docs/fpga.md.
#
#   scripts/fpga-sweep.sh units [TARGET...]   # units at every --stages (default: ice40-up5k)
#   scripts/fpga-sweep.sh arrays [TARGET...]  # largest square array per PE kind (default: all)
#   scripts/fpga-sweep.sh render              # rewrite the tables in docs/fpga.md
#
# Results are cached one JSON file per run in $FPGA_SWEEP_DIR (default build/fpga-sweep), so
# an interrupted sweep resumes where it stopped; a run that failed leaves a .err file with the
# one-line reason (e.g. "does not fit"). Runs are sequential and niced: synthesis of the 32-bit
# posit units takes minutes. Logs of each run stay in $FPGA_SWEEP_DIR/work/<key>/.
set -euo pipefail
cd "$(dirname "$0")/.."

OUT=${FPGA_SWEEP_DIR:-build/fpga-sweep}
SEED=${FPGA_SEED:-1}
mkdir -p "$OUT/res" "$OUT/work"
if [ -z "${LPGEN:-}" ]; then
  cargo build --release -q -p lpgen
  LPGEN=${CARGO_TARGET_DIR:-target}/release/lpgen
fi

# synth KEY ARGS...: one cached run; prints the result file's status.
synth() {
  local key=$1
  shift
  local res="$OUT/res/$key"
  if [ -s "$res.json" ] || [ -s "$res.err" ]; then return 0; fi
  local t0=$SECONDS
  if nice "$LPGEN" synth "$@" --seed "$SEED" --json --work "$OUT/work/$key" >"$res.tmp" 2>"$res.errtmp"; then
    mv "$res.tmp" "$res.json"
    rm -f "$res.errtmp"
    echo "$key: $(cat "$res.json" | cut -c1-90)... ($((SECONDS - t0)) s)"
  else
    mv "$res.errtmp" "$res.err"
    rm -f "$res.tmp"
    echo "$key: FAILED $(cat "$res.err") ($((SECONDS - t0)) s)"
  fi
}

fits() { [ -s "$OUT/res/$1.json" ]; }

# Maximum --stages of each unit (docs/rtl.md).
max_stages() {
  case $1 in
    posit-add) echo 4 ;; posit-mul) echo 3 ;; posit-mac) echo 7 ;;
    lns-add) echo 3 ;; lns-mul) echo 1 ;; lns-kahan) echo 4 ;; fix-mac) echo 2 ;;
    *) echo 0 ;;
  esac
}

UNITS=(
  "posit-add posit:8:1" "posit-mul posit:8:1" "posit-mac posit:8:1"
  "posit-add posit:16:1" "posit-mul posit:16:1" "posit-mac posit:16:1"
  "posit-add posit:8" "posit-mul posit:8" "posit-mac posit:8"
  "posit-add posit:16" "posit-mul posit:16" "posit-mac posit:16"
  "lns-add lns:5:6" "lns-mul lns:5:6" "lns-kahan lns:5:6"
  "lns-add lns:4:4" "lns-mul lns:4:4" "lns-kahan lns:4:4"
  "fix-mac fix:7:8"
  "posit-add posit:32:2" "posit-mul posit:32:2" "posit-mac posit:32:2"
)

units() {
  local targets=("$@")
  [ ${#targets[@]} -gt 0 ] || targets=(ice40-up5k)
  for t in "${targets[@]}"; do
    for uf in "${UNITS[@]}"; do
      set -- $uf
      local u=$1 f=$2 s
      for s in $(seq 0 "$(max_stages "$u")"); do
        local key="${t}_${u}_${f//:/_}_s$s"
        synth "$key" "$u" --format "$f" --stages "$s" --target "$t"
        # A unit that does not fit at one depth does not fit deeper (registers only add).
        if grep -qs "does not fit" "$OUT/res/$key.err"; then break; fi
      done
    done
  done
}

# PE kind -> format of the array sweep.
PES=("lns-kahan lns:5:6" "lns-plain lns:5:6" "fix fix:7:8" "posit-quire posit:16:1" "posit-quire posit:8:1")

arrays() {
  local targets=("$@")
  [ ${#targets[@]} -gt 0 ] || targets=(ice40-up5k ice40-hx8k ecp5-85k)
  for t in "${targets[@]}"; do
    for pf in "${PES[@]}"; do
      set -- $pf
      local pe=$1 f=$2 n=1 last=0
      # Grow the square array n x n until it does not fit; then try n x (n+1).
      while :; do
        local key="${t}_array_${pe}_${f//:/_}_${n}x${n}"
        synth "$key" array --pe "$pe" --format "$f" --rows "$n" --cols "$n" --target "$t"
        if fits "$key"; then last=$n; n=$((n + 1)); else break; fi
        [ "$n" -le "${FPGA_MAX_N:-16}" ] || break
      done
      if [ "$last" -gt 0 ]; then
        synth "${t}_array_${pe}_${f//:/_}_${last}x$((last + 1))" array --pe "$pe" --format "$f" \
          --rows "$last" --cols "$((last + 1))" --target "$t"
      fi
    done
  done
}

case "${1:-}" in
  units) shift; units "$@" ;;
  arrays) shift; arrays "$@" ;;
  array) shift; synth "$1_array_$2_${3//:/_}_$4x$5" array --pe "$2" --format "$3" --rows "$4" --cols "$5" --target "$1" ;;
  render) python3 scripts/fpga-render.py "$OUT/res" docs/fpga.md ;;
  *) sed -n '2,13p' "$0"; exit 2 ;;
esac
