#!/usr/bin/env bash
# The full parameter grid of the RTL generator: every design through verilator -Wall, yosys
# synth and iverilog. CI runs a lean subset of the same test.
set -euo pipefail
cd "$(dirname "$0")/.."
LPGEN_FULL_GRID=1 cargo test --release -p lpgen-hdl --test lint -- --nocapture
