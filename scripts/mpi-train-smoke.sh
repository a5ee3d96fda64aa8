#!/usr/bin/env bash
# Data-parallel training on both transports (issue 20): two workers as threads (--workers 2)
# and two MPI ranks (mpirun -np 2 ... --dist mpi) train the same small network with 1-bit
# gradient exchange and must end with the same model words; so must double buffering with the
# exchange overlapped (mpirun, a communication thread per rank) and taken in turn (threads,
# --no-overlap); ranks started with different options must fail in one line each. A few
# seconds after the build.
set -euo pipefail
cd "$(dirname "$0")/.."

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_rmaps_base_oversubscribe=1

cargo build -p lpgen --features mpi --locked
lpgen=${CARGO_TARGET_DIR:-target}/debug/lpgen
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
args=(--format posit:16:1 --quire --hidden 16 --dataset data/mnist-300 --epochs 2 --batch 20
      --compress 1bit --threads 1 --schedule fixed)

"$lpgen" train "${args[@]}" --workers 2 --out "$out/local" >/dev/null 2>&1
timeout 120 mpirun -np 2 "$lpgen" train "${args[@]}" --dist mpi --out "$out/mpi" >/dev/null 2>&1
words() { sed -n '/^layers /,/^end /p' "$1/checkpoint.lpck" | grep -v '^end '; }
if ! cmp -s <(words "$out/local") <(words "$out/mpi"); then
  echo "mpi-train-smoke: FAILED: --workers 2 and mpirun -np 2 --dist mpi ended with different weights" >&2
  exit 1
fi
# Double buffering: overlapped over MPI, in turn on threads: the same words.
"$lpgen" train "${args[@]}" --workers 2 --double-buffer --no-overlap --out "$out/db-local" >/dev/null 2>&1
timeout 120 mpirun -np 2 "$lpgen" train "${args[@]}" --double-buffer --dist mpi --out "$out/db-mpi" >/dev/null 2>&1
if ! cmp -s <(words "$out/db-local") <(words "$out/db-mpi"); then
  echo "mpi-train-smoke: FAILED: --double-buffer overlapped under mpirun and --no-overlap on threads ended with different weights" >&2
  exit 1
fi
if cmp -s <(words "$out/db-mpi") <(words "$out/mpi"); then
  echo "mpi-train-smoke: FAILED: --double-buffer changed nothing" >&2
  exit 1
fi
# Different options on the two ranks: one line each, status 2.
if timeout 60 mpirun -np 2 sh -c "exec $lpgen train ${args[*]} --dist mpi --lr 0.\$((OMPI_COMM_WORLD_RANK + 1)) --out $out/bad" \
  >"$out/log" 2>&1; then
  echo "mpi-train-smoke: FAILED: ranks with different --lr trained" >&2
  exit 1
fi
grep -q "ranks disagree on their options: rank 0 has \`lr=0.1\` where rank 1 has \`lr=0.2\`" "$out/log" || {
  echo "mpi-train-smoke: FAILED: no one-line refusal of mismatched options:" >&2
  cat "$out/log" >&2
  exit 1
}
echo "mpi-train-smoke: 3 passed, 0 failed (the local and mpi transports give the same weights, overlapped or not)"
