#!/usr/bin/env bash
# The K figure of experiments/fdpa.md (issue 49): the relative error of an fp8:e4m3 dot product
# against K = 2^5 … 2^14 for fdpa:hopper, fdpa:hopper:promote128, a naive binary32 sum and exact
# accumulation, measured through the Python package (scripts/fdpa-error.py, the golden model;
# 500 trials per K, normal and positive operands, seed 49: the tables of the results page),
# written unrounded to experiments/fdpa-error.tsv, then drawn from that file to experiments/fdpa-error.png
# with plotters (lpgen-train's example fdpa-error).
#
#   PYTHON=.venv/bin/python scripts/fdpa-error-figure.sh   # measure (about 30 s), then draw
#   scripts/fdpa-error-figure.sh --draw                    # draw from experiments/fdpa-error.tsv only
#
# PYTHON must import lpgen (a venv with the package, or PYTHONPATH=<the built package>).
set -euo pipefail
cd "$(dirname "$0")/.."
TSV=experiments/fdpa-error.tsv
PNG=experiments/fdpa-error.png
case "${1:-}" in
  --draw) ;;
  "") "${PYTHON:-python3}" scripts/fdpa-error.py --trials 500 --dist normal positive --seed 49 \
        --tsv "$TSV" ;;
  *) echo "usage: scripts/fdpa-error-figure.sh [--draw]" >&2; exit 2 ;;
esac
cargo run -q -p lpgen-train --example fdpa-error -- "$TSV" "$PNG"
echo "wrote $PNG from $TSV"
