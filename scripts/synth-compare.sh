#!/usr/bin/env bash
# Area of a fixed set of designs from two lpgen binaries, side by side in one run (issue 36:
# readability must not cost area). Prints LC (iCE40) / LUT4 (ECP5), FF and DSP of each and the
# ratio new/old of the logic cells.
#   scripts/synth-compare.sh OLD_LPGEN NEW_LPGEN [TARGETS]   # TARGETS default "ice40-up5k ecp5-85k"
set -uo pipefail
old=$1
new=$2
targets=${3:-"ice40-up5k ecp5-85k"}
designs=(
  "posit-add --format posit:16:1 --stages 2"
  "lns-kahan --format lns:5:6 --stages 5"
  "array --pe lns-kahan --format lns:5:6 --rows 4 --cols 4 --stages 2"
  "array --pe fix --format fix:7:8 --rows 4 --cols 4 --stages 2"
  "q8-enc --format f32 --stages 2"
)
work=$(mktemp -d /tmp/lpgen-synth-compare.XXXXXX)
field() { python3 -c "import json,sys; d=json.loads(sys.stdin.read() or '{}'); print(d.get('$1','-'))"; }
printf '%-12s %-66s %8s %8s %6s %6s %7s\n' target design old new ff_old ff_new ratio
for t in $targets; do
  for d in "${designs[@]}"; do
    # shellcheck disable=SC2086
    a=$(nice "$old" synth $d --target "$t" --json --work "$work/old" 2>/dev/null | tail -1)
    # shellcheck disable=SC2086
    b=$(nice "$new" synth $d --target "$t" --json --work "$work/new" 2>/dev/null | tail -1)
    lo=$(field lc <<<"$a"); ln=$(field lc <<<"$b")
    fo=$(field ff <<<"$a"); fn=$(field ff <<<"$b")
    ratio=$(python3 -c "print(f'{$ln/$lo:.4f}')" 2>/dev/null || echo -)
    printf '%-12s %-66s %8s %8s %6s %6s %7s\n' "$t" "$d" "$lo" "$ln" "$fo" "$fn" "$ratio"
  done
done
rm -rf "$work"
