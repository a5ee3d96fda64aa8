#!/usr/bin/env bash
# The test command of README.md and CI: formatting, lints, every test of the workspace, the MPI
# transport and data-parallel training under mpirun, and docs/fpga.md's tables against the run
# records they are rendered from.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo fmt --all -- --check
cargo clippy --workspace --all-targets --locked -- -D warnings
cargo test --workspace --locked
# The MPI transport (lpgen-comm's feature `mpi`): lints, tests, and two ranks under mpirun.
cargo clippy -p lpgen-comm --features mpi --all-targets --locked -- -D warnings
cargo test -p lpgen-comm --features mpi --locked
bash scripts/mpi-smoke.sh
# Data-parallel training: the local and mpi transports give the same weights.
bash scripts/mpi-train-smoke.sh
# Co-simulation shared among ranks: alone, threads and MPI ranks give one count.
bash scripts/mpi-cosim-smoke.sh
python3 scripts/fpga-render.py --check docs/fpga-runs.jsonl docs/fpga.md
