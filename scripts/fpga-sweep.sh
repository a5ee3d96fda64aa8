#!/usr/bin/env bash
# The FPGA sweep of issue 6: every unit/format of docs/fpga.md at every pipeline depth, the
# largest arrays per PE kind and device, then the tables of docs/fpga.md.
#
#   scripts/fpga-sweep.sh units [TARGET...]   # units at every --stages (default: ice40-up5k)
#   scripts/fpga-sweep.sh arrays [TARGET...]  # largest square array per PE kind (default: all)
#   scripts/fpga-sweep.sh arrays-deep [TARGET...]  # the same at each PE kind's deepest
#                                             # --stages, the PE module kept (--keep-hierarchy)
#                                             # (ARRAY_PE=KIND: that PE kind only)
#   scripts/fpga-sweep.sh array T PE F R C     # one array run (ARRAY_STAGES=S: at S stages,
#                                             # PE kept; ARRAY_FLOORPLAN=1: --floorplan)
#   scripts/fpga-sweep.sh madd [TARGET...]    # each family's multiply-add at 8 and 16 bits
#                                             # (float-fma, posit-mac, lns-kahan), at --stages
#                                             # 0 and the deepest (default: all three devices)
#   scripts/fpga-sweep.sh mx [TARGET...]      # the MX units (issue 33): mx-dot and mx-enc per
#                                             # element type at K = 8 and 32, the array's mx PE
#                                             # as a 1x1, q8-enc on f32 words beside them, at
#                                             # --stages 0 and the deepest (default: all three)
#   scripts/fpga-sweep.sh render              # merge the runs into docs/fpga-runs.jsonl and
#                                             # rewrite the tables of docs/fpga.md and the
#                                             # figure docs/fpga-units.png from it
#
# Results are cached one JSON file per run in $FPGA_SWEEP_DIR (default build/fpga-sweep), so
# an interrupted sweep resumes where it stopped; a run that failed leaves a .err file with the
# one-line reason (e.g. "does not fit"). Runs are sequential and niced: synthesis of the 32-bit
# posit units takes minutes. Logs of each run stay in $FPGA_SWEEP_DIR/work/<key>/. `render`
# keeps every run's record in docs/fpga-runs.jsonl (committed), so the tables can be rendered
# again on any machine; a key run again replaces its record.
set -euo pipefail
cd "$(dirname "$0")/.."

OUT=${FPGA_SWEEP_DIR:-build/fpga-sweep}
SEED=${FPGA_SEED:-1}
mkdir -p "$OUT/res" "$OUT/work"
if [ -z "${LPGEN:-}" ] && [ "${1:-}" != render ]; then
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
  if nice "$LPGEN" synth "$@" --seed "$SEED" --json --out "$OUT/work/$key" >"$res.tmp" 2>"$res.errtmp"; then
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

# max_stages ARGS...: the most --stages of the design `lpgen rtl ARGS` (asked of lpgen, whose
# registry holds it: an out-of-range --stages names the range).
max_stages() {
  local most
  most=$({ "$LPGEN" rtl "$@" --stages 999 --out "$OUT/stages-probe" 2>&1 || true; } |
    sed -n 's/.*at most \([0-9]*\) pipeline.*/\1/p')
  [ -n "$most" ] || { echo "fpga-sweep: lpgen rtl $* did not name its most stages" >&2; return 2; }
  echo "$most"
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
      for s in $(seq 0 "$(max_stages "$u" --format "$f")"); do
        local key="${t}_${u}_${f//:/_}_s$s"
        synth "$key" "$u" --format "$f" --stages "$s" --target "$t"
        # A unit that does not fit at one depth does not fit deeper (registers only add).
        if grep -qs "does not fit" "$OUT/res/$key.err"; then break; fi
      done
    done
  done
}

# madd [TARGET...]: each family's multiply-add at 8 and 16 bits (issue 32; the list is
# fpga-render.py's MADD, which renders their table) at stages 0 and the deepest.
madd() {
  local targets=("$@") madd_units
  [ ${#targets[@]} -gt 0 ] || targets=(ice40-up5k ice40-hx8k ecp5-85k)
  mapfile -t madd_units < <(python3 scripts/fpga-render.py --madd)
  for t in "${targets[@]}"; do
    for uf in "${madd_units[@]}"; do
      set -- $uf
      local u=$1 f=$2 s
      for s in 0 "$(max_stages "$u" --format "$f")"; do
        synth "${t}_${u}_${f//:/_}_s$s" "$u" --format "$f" --stages "$s" --target "$t"
      done
    done
  done
}

# mx [TARGET...]: the MX designs of issue 33 (the list is fpga-render.py's mx_designs, which
# renders their table), each at its deepest stages and, on the targets the list names, at
# stages 0 first. A design that does not fit at stages 0 is not run deeper (registers only
# add); one that ran out of DSPs is run again with multipliers in logic (--no-dsp, key
# _nodsp), as the array sweep does.
mx() {
  local targets=("$@") designs
  [ ${#targets[@]} -gt 0 ] || targets=(ice40-up5k ice40-hx8k ecp5-85k)
  mapfile -t designs < <(python3 scripts/fpga-render.py --mx)
  for t in "${targets[@]}"; do
    for d in "${designs[@]}"; do
      set -- $d
      local stem=$1 u=$2 f=$3 s0_targets=",$4," extra=("${@:5}") size=() s deepest
      [ "$u" = array ] && size=(--pe mx --rows 1 --cols 1)
      deepest=$(max_stages "$u" --format "$f" "${extra[@]}" "${size[@]}")
      for s in 0 "$deepest"; do
        [ "$s" = 0 ] && [[ $s0_targets != *",$t,"* ]] && continue
        local key="${t}_${stem}_s$s" nodsp=()
        [ "$u" = array ] && [ "$s" = 0 ] && key="${t}_${stem}"
        # Stages 0's outcome: its run in logic (_nodsp) if it ran out of DSPs.
        local first="$OUT/res/${t}_${stem}"
        [ "$u" = array ] || first="${first}_s0"
        [ -e "${first}_nodsp.json" ] || [ -e "${first}_nodsp.err" ] && first="${first}_nodsp"
        if [ "$s" != 0 ] && grep -qs "does not fit" "$first.err"; then
          [ -s "$OUT/res/$key.err" ] || echo "not run: stages 0 does not fit" >"$OUT/res/$key.err"
          continue
        fi
        synth "$key" "$u" --format "$f" "${extra[@]}" "${size[@]}" --stages "$s" --target "$t"
        if grep -qs "does not fit.*\(ICESTORM_DSP\|MULT18X18D\)" "$OUT/res/$key.err"; then
          synth "${key}_nodsp" "$u" --format "$f" "${extra[@]}" "${size[@]}" --stages "$s" --target "$t" --no-dsp
        fi
      done
    done
  done
}

# PE kind -> format of the array sweep.
PES=("fix fix:7:8" "lns-plain lns:5:6" "lns-kahan lns:5:6" "posit-quire posit:16:1" "posit-quire posit:8:1")

# jnum FILE KEY: the number KEY of a result file (lpgen synth --json); nothing when the key is
# missing or not a number (null).
jnum() {
  python3 -c 'import json, sys; v = json.load(open(sys.argv[1])).get(sys.argv[2])
if isinstance(v, (int, float)) and not isinstance(v, bool): print(v)' "$1" "$2"
}

# array_run T PE F R C: one array run; with DSP inference unless the device ran out of DSPs
# at a smaller size (then multipliers go to logic: --no-dsp). Sets KEY to the result's key.
# With ARRAY_STAGES=S (not 0) the array has S stages and its PE module is kept
# (--keep-hierarchy), and the key ends in _sS. With ARRAY_FLOORPLAN=1 the multipliers are
# locked to DSP sites in the array's order (--floorplan), and the key ends in _fp.
array_run() {
  local t=$1 pe=$2 f=$3 r=$4 c=$5
  local deep=()
  KEY="${t}_array_${pe}_${f//:/_}_${r}x${c}"
  if [ "${ARRAY_STAGES:-0}" != 0 ]; then
    deep=(--stages "$ARRAY_STAGES" --keep-hierarchy)
    KEY="${KEY}_s$ARRAY_STAGES"
  fi
  if [ "${ARRAY_FLOORPLAN:-0}" = 1 ]; then
    deep+=(--floorplan)
    KEY="${KEY}_fp"
  fi
  # Skip a size whose estimate from the last fitting run (LC per PE) is over the device by
  # more than 8 %: a failing run of a large array costs minutes.
  if [ -n "${PER_PE:-}" ] && [ -n "${AVAIL:-}" ]; then
    local est
    est=$(awk -v p="$PER_PE" -v n=$((r * c)) 'BEGIN { printf "%d", p * n }')
    if [ "$est" -gt $((AVAIL * 108 / 100)) ]; then
      local k=$KEY
      [ -n "${NODSP:-}" ] && k="${KEY}_nodsp"
      [ -s "$OUT/res/$k.json" ] || [ -s "$OUT/res/$k.err" ] ||
        echo "not run: estimated $est LC from $PER_PE per PE, over the $AVAIL of the device" >"$OUT/res/$k.err"
      KEY=$k
      return 0
    fi
  fi
  # Likewise a size that needs more DSPs than the device has, at the last run's DSPs per PE.
  if [ -z "${NODSP:-}" ] && [ -n "${DSP_PER_PE:-}" ] && [ -n "${DSP_AVAIL:-}" ]; then
    local need
    need=$(awk -v p="$DSP_PER_PE" -v n=$((r * c)) 'BEGIN { printf "%d", p * n }')
    if [ "$need" -gt "$DSP_AVAIL" ]; then
      [ -s "$OUT/res/$KEY.json" ] || [ -s "$OUT/res/$KEY.err" ] ||
        echo "not run: needs $need DSPs at $DSP_PER_PE per PE, over the $DSP_AVAIL of the device" >"$OUT/res/$KEY.err"
      NODSP=1
    fi
  fi
  if [ -z "${NODSP:-}" ]; then
    synth "$KEY" array --pe "$pe" --format "$f" --rows "$r" --cols "$c" --target "$t" "${deep[@]}"
    if grep -qs "does not fit.*\(ICESTORM_DSP\|MULT18X18D\)" "$OUT/res/$KEY.err"; then NODSP=1; fi
  fi
  if [ -n "${NODSP:-}" ]; then
    KEY="${KEY}_nodsp"
    synth "$KEY" array --pe "$pe" --format "$f" --rows "$r" --cols "$c" --target "$t" --no-dsp "${deep[@]}"
  fi
}

# The largest square array that fits, found from the logic cost per PE of the runs so far:
# each run predicts the largest n from LC/PE; the prediction is run, then n+1 (or n-1 down)
# to confirm. Ends with an n x (n+1) attempt.
arrays() {
  local targets=("$@")
  [ ${#targets[@]} -gt 0 ] || targets=(ice40-up5k ice40-hx8k ecp5-85k)
  for t in "${targets[@]}"; do
    for pf in "${PES[@]}"; do
      set -- $pf
      local pe=$1 f=$2 best=0 n=2 tried=" "
      [ -z "${ARRAY_PE:-}" ] || [ "$pe" = "$ARRAY_PE" ] || continue
      NODSP= PER_PE= AVAIL= DSP_PER_PE= DSP_AVAIL=
      ARRAY_STAGES=0
      [ "${DEEP:-}" = 1 ] && ARRAY_STAGES=$(max_stages array --pe "$pe" --format "$f")
      while [ "$n" -ge 1 ] && [ "$n" -le "${FPGA_MAX_N:-12}" ] && [[ $tried != *" $n "* ]]; do
        tried="$tried$n "
        array_run "$t" "$pe" "$f" "$n" "$n"
        if fits "$KEY"; then
          [ "$n" -gt "$best" ] && best=$n
          local lc avail pred
          lc=$(jnum "$OUT/res/$KEY.json" lc)
          avail=$(jnum "$OUT/res/$KEY.json" lc_available)
          AVAIL=$avail
          PER_PE=$(awk -v lc="$lc" -v n=$((n * n)) 'BEGIN { printf "%.1f", lc / n }')
          if [ -z "${NODSP:-}" ]; then
            DSP_AVAIL=$(jnum "$OUT/res/$KEY.json" dsp_available)
            DSP_PER_PE=$(awk -v d="$(jnum "$OUT/res/$KEY.json" dsp)" -v n=$((n * n)) 'BEGIN { printf "%.2f", d / n }')
          fi
          pred=$(awk -v lc="$lc" -v a="$avail" -v n="$n" -v m="${FPGA_MAX_N:-12}" \
            'BEGIN { p = int(sqrt(0.92 * a / (lc / (n * n)))); if (p > m) p = m; print (p > n) ? p : n + 1 }')
          n=$pred
        else
          [ "$best" -gt 0 ] && [ "$n" -le $((best + 1)) ] && break
          n=$((n - 1))
          [ "$n" -le "$best" ] && break
        fi
      done
      if [ "$best" -gt 0 ] && [ "$best" -lt "${FPGA_MAX_N:-12}" ]; then
        # With DSPs again: the square search may have run out of them only at a larger size.
        NODSP='' array_run "$t" "$pe" "$f" "$best" "$((best + 1))"
      fi
    done
  done
}

main() {
case "${1:-}" in
  units) shift; units "$@" ;;
  madd) shift; madd "$@" ;;
  mx) shift; mx "$@" ;;
  arrays) shift; arrays "$@" ;;
  arrays-deep) shift; DEEP=1 arrays "$@" ;;
  array) shift; array_run "$@" ;;
  render)
    python3 scripts/fpga-render.py docs/fpga-runs.jsonl docs/fpga.md "$OUT/res"
    cargo run --release -q -p lpgen-fpga --example fpga-plot -- docs/fpga-runs.jsonl docs/fpga-units.png ;;
  *) sed -n '2,28p' "$0"; exit 2 ;;
esac
}
main "$@"; exit
