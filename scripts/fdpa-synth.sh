#!/usr/bin/env bash
# Synthesis of the fdpa unit (issue 49) on the three devices, serial wrapper, seed 1, beside
# the float-fma / mx-dot / posit-mac rows of docs/fpga.md (scripts/fpga-sweep.sh madd, mx):
# fp8:e4m3 chunks of L = 8 (F = 13, rz-e8m13: Ada's fp8 chunking at half its L, the K of the
# mx-dot rows) at --stages 0 and 6 on every device; Hopper's fp8 chunk (L = 32) at 6 on the
# ECP5 and the HX8K, and bf16 under Ampere (L = 8, F = 24, rz-f32) at 6 on the ECP5. One JSON
# line per run into
# $OUT/fdpa-synth.jsonl (default build/fdpa-synth); failures as "does not fit" lines.
#
#   scripts/fdpa-synth.sh [TARGET...]
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${FDPA_SYNTH_DIR:-build/fdpa-synth}
LPGEN=${LPGEN:-target/debug/lpgen}
mkdir -p "$OUT"
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(ice40-up5k ice40-hx8k ecp5-85k)
run() {
  local t=$1 f=$2 mode=$3 s=$4 t0=$SECONDS
  local key="${t}_${f//:/_}_${mode//:/_}_s$s"
  if out=$(nice "$LPGEN" synth fdpa --format "$f" --fdpa "$mode" --stages "$s" --target "$t" \
      --seed 1 --json --out "$OUT/work/$key" 2>&1); then
    echo "{\"key\": \"$key\", \"secs\": $((SECONDS - t0)), \"result\": $out}" | tee -a "$OUT/fdpa-synth.jsonl"
  else
    echo "{\"key\": \"$key\", \"failed\": \"$(echo "$out" | tr -d '"' | head -c 300)\"}" | tee -a "$OUT/fdpa-synth.jsonl"
  fi
}
for t in "${targets[@]}"; do
  for s in 0 6; do run "$t" fp8:e4m3 8:13:rz-e8m13 "$s"; done
done
for t in "${targets[@]}"; do
  case "$t" in
    ecp5-85k) run "$t" fp8:e4m3 hopper 6; run "$t" bf16 ampere 6 ;;
    ice40-hx8k) run "$t" fp8:e4m3 hopper 6 ;; # 97 % of the device (2026-11-30)
  esac
done
