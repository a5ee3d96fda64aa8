#!/usr/bin/env bash
# The command-line fuzz test (gen/tests/fuzz.rs; issue 15) at length: CI runs 10,000 argument
# vectors of `lpgen golden` and `lpgen rtl`; this runs 100,000 per seed, over several seeds.
# Every case must exit 0 or 2, a refusal in exactly one line on stderr, no panic, within 10 s.
#   scripts/fuzz-cli.sh                       # 100,000 cases for each of three seeds
#   CASES=1000000 SEEDS="0x1 0x2" scripts/fuzz-cli.sh
#   LPGEN_FUZZ_BIN=/path/to/lpgen scripts/fuzz-cli.sh   # fuzz another build of lpgen
# A failure prints the seed, the case number and its argv; LPGEN_FUZZ_SEED=S LPGEN_FUZZ_CASE=N
# cargo test -p lpgen --test fuzz -- --nocapture reruns that one case and
# shows its whole argv.
set -uo pipefail
cd "$(dirname "$0")/.."
CASES=${CASES:-100000}
SEEDS=${SEEDS:-0x15f022 0x5eed0001 0x5eed0002}
cargo test --locked -p lpgen --test fuzz --no-run >/dev/null 2>&1 || {
  echo "fuzz-cli: the fuzz test does not build (cargo test -p lpgen --test fuzz --no-run)" >&2
  exit 2
}
status=0
for seed in $SEEDS; do
  if ! LPGEN_FUZZ_CASES=$CASES LPGEN_FUZZ_SEED=$seed \
    cargo test --locked -q -p lpgen --test fuzz -- --nocapture; then
    status=1
  fi
done
exit $status
