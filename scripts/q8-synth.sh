#!/usr/bin/env bash
# Seed 003's 8-bit codecs on the FPGA targets (issue 19): q8-enc and q8-dec on posit:16:1
# words, every type on the iCE40s and the dynamic tree on the ECP5, fully pipelined;
# beside them the 8-bit conversions lpgen has as units: a vector lane of posit:16:1 with
# --to posit:8:2 and of lns:5:6 with --to lns:4:3 (a whole lane, add to convert: an upper
# bound on its conversion's area). One cached JSON per run in $Q8_SYNTH_DIR
# (build/q8-synth); the table prints at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${Q8_SYNTH_DIR:-build/q8-synth}
LPGEN=${LPGEN:-target/release/lpgen}
mkdir -p "$OUT"

run() {
  local key=$1
  shift
  [ -s "$OUT/$key.json" ] || [ -s "$OUT/$key.err" ] && return 0
  echo "== $key: lpgen synth $*" >&2
  if nice "$LPGEN" synth "$@" --json --work "$OUT/work/$key" >"$OUT/$key.tmp" 2>"$OUT/$key.errtmp"; then
    mv "$OUT/$key.tmp" "$OUT/$key.json"
  else
    mv "$OUT/$key.errtmp" "$OUT/$key.err"
  fi
  rm -f "$OUT/$key.tmp" "$OUT/$key.errtmp"
}

enc_stages() { "$LPGEN" rtl q8-enc --format posit:16:1 --q8 "$1" --stages 999 --out /tmp/q8-synth-probe 2>&1 | sed -n 's/.*at most \([0-9]*\) pipeline.*/\1/p'; }

if [[ "${1:-}" != --table ]]; then
  for target in ice40-up5k ice40-hx8k ecp5-85k; do
    types=(q8:dynamic-tree)
    # Every type on the UP5K; the static tree's and mantissa's encoders (20 stages) do not
    # fit it, so the HX8K takes them too.
    [[ $target != ecp5-85k ]] && types=(q8:dynamic-tree q8:static-tree q8:linear q8:mantissa)
    for t in "${types[@]}"; do
      run "${target}_q8-enc_${t#q8:}" q8-enc --format posit:16:1 --q8 "$t" --stages "$(enc_stages "$t")" --target "$target"
      run "${target}_q8-dec_${t#q8:}" q8-dec --format posit:16:1 --q8 "$t" --stages 2 --target "$target"
    done
    run "${target}_alu_posit16-to-posit8" alu --format posit:16:1 --to posit:8:2 --stages 4 --target "$target"
    run "${target}_alu_lns56-to-lns43" alu --format lns:5:6 --to lns:4:3 --stages 3 --target "$target"
  done
fi

python3 - "$OUT" <<'PY'
import glob, json, os, sys
print("| target | unit | LC/LUT | FF | DSP | BRAM | Fmax (MHz) |")
print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
for f in sorted(glob.glob(os.path.join(sys.argv[1], "*.json")) + glob.glob(os.path.join(sys.argv[1], "*.err"))):
    key = os.path.basename(f).rsplit(".", 1)[0]
    target, unit = key.split("_", 1)
    if f.endswith(".err"):
        print(f"| {target} | {unit} | failed: {open(f).read().strip()[:80]} | | | | |")
        continue
    r = json.load(open(f))
    print(f"| {target} | {unit} (stages {r['stages']}) | {r['lc']} | {r['ff']} | {r['dsp']} | {r['bram']} | {r['fmax_mhz']} |")
PY
