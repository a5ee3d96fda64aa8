#!/usr/bin/env bash
# Seed 003's 8-bit codecs on the FPGA targets (issue 19): q8-enc and q8-dec on posit:16:1
# words, every type on the iCE40s and the dynamic tree on the ECP5, fully pipelined; the
# dynamic tree's codecs on f32 words, fully pipelined, on the three devices; beside them the
# 8-bit conversions as units of their own: `convert` from posit:16:1 to posit:8:2 and from
# lns:5:6 to lns:4:3, at no and all stages. One cached JSON per run in $Q8_SYNTH_DIR
# (build/q8-synth); the table prints at the end. ONLY=REGEX runs only the keys it matches
# (grep -E), e.g. ONLY='convert|f32'.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${Q8_SYNTH_DIR:-build/q8-synth}
LPGEN=${LPGEN:-target/release/lpgen}
mkdir -p "$OUT"

run() {
  local key=$1
  shift
  [ -s "$OUT/$key.json" ] || [ -s "$OUT/$key.err" ] && return 0
  if [ -n "${ONLY:-}" ] && ! grep -qE -- "$ONLY" <<<"$key"; then return 0; fi
  echo "== $key: lpgen synth $* ($(date -u +%H:%M:%S) UTC)" >&2
  if nice "$LPGEN" synth "$@" --json --out "$OUT/work/$key" >"$OUT/$key.tmp" 2>"$OUT/$key.errtmp"; then
    mv "$OUT/$key.tmp" "$OUT/$key.json"
  else
    mv "$OUT/$key.errtmp" "$OUT/$key.err"
  fi
  rm -f "$OUT/$key.tmp" "$OUT/$key.errtmp"
}

# The most stages of unit $1 with the other arguments (as the generator's refusal states it).
max_stages() { { "$LPGEN" rtl "$@" --stages 999 --out /tmp/q8-synth-probe 2>&1 || true; } | sed -n 's/.*at most \([0-9]*\) pipeline.*/\1/p'; }
enc_stages() { max_stages q8-enc --format posit:16:1 --q8 "$1"; }

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
    f32_enc=$(max_stages q8-enc --format f32 --q8 q8:dynamic-tree)
    run "${target}_q8-enc_f32_dynamic-tree" q8-enc --format f32 --q8 q8:dynamic-tree --stages "$f32_enc" --target "$target"
    run "${target}_q8-dec_f32_dynamic-tree" q8-dec --format f32 --q8 q8:dynamic-tree --stages 2 --target "$target"
    for pair in posit:16:1,posit:8:2 lns:5:6,lns:4:3; do
      from=${pair%,*} to=${pair#*,}
      for s in 0 $(max_stages convert --format "$from" --to "$to"); do
        run "${target}_convert_${from//:/}-to-${to//:/}_s$s" convert --format "$from" --to "$to" --stages "$s" --target "$target"
      done
    done
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
