#!/usr/bin/env bash
# lpgen-comm's MPI transport under mpirun with 2 ranks (docs/dist.md), in a few seconds: the
# collectives checked, and the failures that must end with one line and status 2, never a hang:
# options that differ across ranks, a process started without mpirun, a rank that stalls past
# the timeout, and a rank that crashes.
set -euo pipefail
cd "$(dirname "$0")/.."

# Containers run as root and have no shared-memory single copy; allow oversubscription of the
# cores (CI machines have 2).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_rmaps_base_oversubscribe=1

cargo build -p lpgen-comm --features mpi --example mpi_smoke --locked
smoke=${CARGO_TARGET_DIR:-target}/debug/examples/mpi_smoke
log=$(mktemp)
trap 'rm -f "$log"' EXIT

# expect STATUS PATTERN -- COMMAND...: runs it (60 s at most), checks its exit status (a number,
# or "nonzero") and that its output has PATTERN.
expect() {
  local want=$1 pattern=$2
  shift 3
  local got=0
  timeout 60 "$@" >"$log" 2>&1 || got=$?
  local status_ok=0
  if [ "$want" = nonzero ]; then [ "$got" -ne 0 ] || status_ok=1; else [ "$got" -eq "$want" ] || status_ok=1; fi
  if [ "$status_ok" -ne 0 ] || ! grep -q -- "$pattern" "$log"; then
    echo "mpi-smoke: FAILED: $* exited $got (want $want) and printed:" >&2
    cat "$log" >&2
    exit 1
  fi
}

expect 0 "rank 1 of 2 ok" -- mpirun -np 2 "$smoke"
grep -q "rank 0 of 2 ok" "$log"
expect 2 "ranks disagree on their options: rank 0 has \`lr=0.0\` where rank 1 has \`lr=0.1\`" -- \
  mpirun -np 2 sh -c "exec $smoke --fingerprint lr=0.\$OMPI_COMM_WORLD_RANK"
expect 2 "needs a process started by mpirun" -- "$smoke"
expect 2 "no message from rank 1 within 500ms" -- mpirun -np 2 "$smoke" --stall-rank 1 --timeout-ms 500
# A crash is noticed by mpirun, which ends the job (OpenMPI 4.1 exits 134: the rank's SIGABRT).
expect nonzero "exited on signal 6" -- mpirun -np 2 "$smoke" --die-rank 1 --timeout-ms 20000
echo "mpi-smoke: 5 passed, 0 failed"
