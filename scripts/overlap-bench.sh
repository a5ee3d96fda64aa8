#!/usr/bin/env bash
# Seed 001 §2.2 measured (docs/perf.md, "Double buffering: the overlap"): the time per step of
# double buffering with each half's exchange overlapped with the next half's computation
# against the turn-taking rule (--no-overlap), K = 1, 2 and 4 MPI ranks (on this machine's
# cores: K = 4 is oversubscribed), beside one worker alone; the f32 784-512-10 MLP, 32-bit
# words exchanged, minibatch N. Time per step = N / samples_per_s of the epoch's training
# passes (rank 0's metrics.jsonl). ROUNDS rounds, the runs of each round one after another.
#
#   bash scripts/overlap-bench.sh [N] [STEPS] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_rmaps_base_oversubscribe=1

n=${1:-2048}
steps=${2:-6}
rounds=${3:-3}
cargo build --release -p lpgen --features mpi --locked
lpgen=${CARGO_TARGET_DIR:-target}/release/lpgen
data=../shared/datasets/fashion-mnist
[ -d "$data" ] || data=data/mnist-300
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
args=(--backend f32 --hidden 512 --batch "$n" --compress none --threads 1 --dataset "$data"
      --epochs 1 --max-steps "$steps" --test-limit 20 --schedule fixed)

# ms per step of the run in $1 (rank 0's first metrics line).
per_step() {
  python3 -c "import json,sys; m=json.loads(open(sys.argv[1]).readline()); print(f'{1e3*$n/m[\"samples_per_s\"]:.1f}')" "$1/metrics.jsonl"
}
words() { sed -n '/^layers /,/^end /p' "$1/checkpoint.lpck" | grep -v '^end '; }

echo "N = $n, $steps steps, data $data; ms per step (round by round)"
for r in $(seq "$rounds"); do
  "$lpgen" train "${args[@]}" --out "$out/alone" >/dev/null 2>&1
  line="round $r: alone $(per_step "$out/alone")"
  for k in 1 2 4; do
    for mode in turns overlap; do
      flag=(); [ "$mode" = turns ] && flag=(--no-overlap)
      timeout 600 mpirun -np "$k" "$lpgen" train "${args[@]}" --dist mpi --double-buffer "${flag[@]}" \
        --out "$out/k$k-$mode" >/dev/null 2>&1
      line+="  K=$k $mode $(per_step "$out/k$k-$mode")"
    done
    cmp -s <(words "$out/k$k-turns") <(words "$out/k$k-overlap") || {
      echo "overlap-bench: K = $k: the overlapped model differs from the turn-taking one" >&2
      exit 1
    }
  done
  echo "$line"
done
echo "(every K: the overlapped and turn-taking models are the same words)"
