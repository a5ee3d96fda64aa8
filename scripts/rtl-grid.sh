#!/usr/bin/env bash
# The full parameter grid of the RTL generator: every design through verilator -Wall, yosys
# synth and iverilog. CI runs a lean subset of the same test. Designs that passed are listed in
# target/rtl-grid-passed.txt (keyed by a digest of their Verilog and the tool versions) and
# skipped on the next run, so the grid can be finished in several sittings; delete the file to
# start over. Progress: one `lint N/total: <top> ok` line per design on stderr.
set -euo pipefail
cd "$(dirname "$0")/.."
LPGEN_LINT_PASSED=${LPGEN_LINT_PASSED:-$PWD/target/rtl-grid-passed.txt} \
  LPGEN_FULL_GRID=1 cargo test --release -p lpgen-hdl --test lint -- --nocapture
