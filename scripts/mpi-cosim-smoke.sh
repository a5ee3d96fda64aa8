#!/usr/bin/env bash
# Distributed co-simulation (issue 20): the exhaustive posit-add on posit:6:0 run alone, as
# two threads (--workers 2) and as two MPI ranks (mpirun -np 2 ... --dist mpi) must end with
# the same one-line count. One small Verilator build, shared by the three runs.
set -euo pipefail
cd "$(dirname "$0")/.."

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_rmaps_base_oversubscribe=1

cargo build -p lpgen --features mpi --locked
lpgen=${CARGO_TARGET_DIR:-target}/debug/lpgen
args=(cosim posit-add --format posit:6:0 --stages 1 --exhaustive)
alone=$("$lpgen" "${args[@]}" 2>/dev/null | tail -1)
threads=$("$lpgen" "${args[@]}" --workers 2 2>/dev/null | tail -1)
ranks=$(timeout 300 mpirun -np 2 "$lpgen" "${args[@]}" --dist mpi 2>/dev/null | tail -1)
want="8192 passed, 0 failed"
for got in "$alone" "$threads" "$ranks"; do
  if [[ $got != "$want" ]]; then
    echo "mpi-cosim-smoke: FAILED: alone '$alone', --workers 2 '$threads', mpirun -np 2 '$ranks' (want '$want')" >&2
    exit 1
  fi
done
echo "mpi-cosim-smoke: 3 passed, 0 failed (alone, two threads and two MPI ranks: $want)"
