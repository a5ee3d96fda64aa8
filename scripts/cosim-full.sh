#!/usr/bin/env bash
# The full co-simulation set (issue 4; CI runs the lean subset in verif/tests/cosim_ci.rs):
# exhaustive posit <= 8 bits (both standards, several es, :u), all pairs of lns:5:6, lns:4:4
# and lns:3:5, posit-mac and fix-mac from quire states, random + corner cases for posit 16/32,
# lns:5:10 and fix, lns-kahan, and arrays of every PE kind and several shapes; every stage
# count each generator offers. Verilator models are cached (LPGEN_CACHE), so a rerun is fast.
#   scripts/cosim-full.sh            # everything (about an hour on 2 cores when uncached)
#   SEED=0x1234 scripts/cosim-full.sh  # other random stimuli (default seed below)
#   VECTORS=100000 scripts/cosim-full.sh  # fewer random steps per run (default 1000000)
#   ONLY='posit-mac|array' scripts/cosim-full.sh  # only runs whose arguments match (grep -E)
set -uo pipefail
cd "$(dirname "$0")/.."
SEED=${SEED:-0x5eedc051}
VECTORS=${VECTORS:-1000000}
cargo build --release --locked -p lpgen >/dev/null || exit 2
LPGEN=${CARGO_TARGET_DIR:-target}/release/lpgen
runs=0
failed_runs=()
echo "cosim-full: seed $SEED, $VECTORS vectors per random run"

cosim() {
  if [ -n "${ONLY:-}" ] && ! grep -qE -- "$ONLY" <<<"$*"; then return; fi
  runs=$((runs + 1))
  local line
  line=$(nice -n 5 "$LPGEN" cosim "$@" 2>/dev/null | tail -1)
  local rc=${PIPESTATUS[0]}
  printf '%-78s %s\n' "$*" "$line"
  if [ "$rc" -ne 0 ]; then failed_runs+=("$* (exit $rc)"); fi
}

stages() { seq 0 "$1"; }

# Posits: all pairs, both standards, es 0..3, the :u variant; every stage count at 8 bits.
for f in posit:8:0 posit:8; do
  for s in $(stages 4); do cosim posit-add --format $f --stages $s --exhaustive; done
  for s in $(stages 3); do cosim posit-mul --format $f --stages $s --exhaustive; done
  for s in $(stages 7); do cosim posit-mac --format $f --stages $s --exhaustive; done
done
for f in posit:8:1 posit:8:2 posit:8:2:u posit:7:3 posit:6:1 posit:5:u posit:4 posit:3:0; do
  for s in 0 4; do cosim posit-add --format $f --stages $s --exhaustive; done
  for s in 0 3; do cosim posit-mul --format $f --stages $s --exhaustive; done
  for s in 0 7; do cosim posit-mac --format $f --stages $s --exhaustive; done
done
# Posits 16 and 32: corner cases + random.
for f in posit:16 posit:16:1 posit:32 posit:32:2 posit:16:2:u; do
  for s in 0 2 4; do cosim posit-add --format $f --stages $s --vectors "$VECTORS" --seed "$SEED"; done
  for s in 0 3; do cosim posit-mul --format $f --stages $s --vectors "$VECTORS" --seed "$SEED"; done
  for s in 0 3 7; do cosim posit-mac --format $f --stages $s --vectors "$VECTORS" --seed "$SEED"; done
done

# LNS: all pairs of lns:4:4 and lns:3:5 at every stage count, lns:5:6 (2^27 operations per
# run) at the deepest pipeline and combinational; lns:5:10 random.
for f in lns:4:4 lns:3:5; do
  for s in $(stages 1); do cosim lns-mul --format $f --stages $s --exhaustive; done
  for s in $(stages 3); do cosim lns-add --format $f --stages $s --exhaustive; done
done
cosim lns-mul --format lns:5:6 --stages 1 --exhaustive
cosim lns-add --format lns:5:6 --stages 0 --exhaustive
cosim lns-add --format lns:5:6 --stages 3 --exhaustive
for s in $(stages 1); do cosim lns-mul --format lns:5:10 --stages $s --vectors "$VECTORS" --seed "$SEED"; done
for s in $(stages 3); do cosim lns-add --format lns:5:10 --stages $s --vectors "$VECTORS" --seed "$SEED"; done
for f in lns:5:6 lns:5:10 lns:3:2; do
  for s in $(stages 4); do cosim lns-kahan --format $f --stages $s --vectors "$VECTORS" --seed "$SEED"; done
done

# Fixed point: all pairs from accumulator states (8-bit words), random for wider words.
for f in fix:3:4 fix:7:0 fix:0:7; do
  for s in $(stages 2); do cosim fix-mac --format $f --stages $s --exhaustive; done
done
for f in fix:7:8 fix:15:16 fix:4:0; do
  for s in $(stages 2); do cosim fix-mac --format $f --stages $s --vectors "$VECTORS" --seed "$SEED"; done
done

# Arrays of every PE kind: shapes that are and are not square, at both stage counts.
for spec in "lns:5:6 lns-kahan" "lns:5:6 lns-plain" "lns:3:2 lns-kahan" "posit:16 posit-quire" \
  "posit:8:0 posit-quire" "fix:7:8 fix" "fix:3:4 fix"; do
  set -- $spec
  for shape in "1 1" "2 3" "4 4"; do
    set -- $spec $shape
    for s in 0 1 2; do
      cosim array --format "$1" --pe "$2" --rows "$3" --cols "$4" --stages $s --vectors 200000 --seed "$SEED"
    done
  done
done

echo "cosim-full: $runs runs, ${#failed_runs[@]} failed"
for f in "${failed_runs[@]}"; do echo "  FAILED: lpgen cosim $f"; done
[ ${#failed_runs[@]} -eq 0 ]
