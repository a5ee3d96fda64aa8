#!/usr/bin/env bash
# What a refactor must leave unchanged, as digests: every design of the full lint grid
# (`scripts/rtl-grid.sh`'s designs; the hdl example `design_digests`) and the model words of
# a set of short training runs covering every family (floats and MX too), accumulation and
# exchange (the checkpoint from its `layers` line on: weights, optimizer state, Kahan
# compensations, dfix storage; not the metrics, which hold times).
#
#   scripts/refactor-digests.sh before.txt      # on the old commit
#   scripts/refactor-digests.sh after.txt       # on the new one
#   diff before.txt after.txt                   # no output: nothing changed
#
# RTL=0 skips the rtl-backend runs (each compiles Verilator models: minutes).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: scripts/refactor-digests.sh OUTFILE}
RTL=${RTL:-1}
cargo build --release -q -p lpgen
cargo run --release -q -p lpgen-hdl --example design_digests >"$out.designs"
lpgen=target/release/lpgen
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
data=data/mnist-300
small=(--dataset "$data" --batch 20 --threads 2)
mlp="--epochs 2 --hidden 16 --train-limit 200 --test-limit 50"
runs=(
  "f32|$mlp --backend f32 --format f32"
  "lns-kahan|$mlp --format lns:5:6"
  "lns-plain|$mlp --format lns:5:6 --kahan none"
  "lns-kahan-mm|$mlp --format lns:5:6 --kahan matmul,update --optimizer rmsprop"
  "lns-keep|$mlp --format lns:5:6 --keep-bits 4"
  "posit|$mlp --format posit:8:2"
  "posit-quire|$mlp --format posit:8:2 --quire"
  "posit-u|$mlp --format posit:8:1:u"
  "fix|$mlp --format fix:7:8"
  "fix-adagrad|$mlp --format fix:7:8 --optimizer adagrad"
  "dfix-storage|$mlp --backend f32 --format dfix:10:12 --scale-every 100"
  "dfix-exact|$mlp --format dfix:10:12 --dfix-products exact --scale-every 100"
  "dfix-radix|$mlp --backend f32 --format dfix:10:12 --radix-point 5"
  "mixed|$mlp --precision O12-L9-FBG8q"
  "q8-grad|$mlp --format posit:16:1 --compress-grad q8:dynamic-tree --compress-act q8:linear"
  "ex-q8|$mlp --format lns:5:6 --workers 2 --compress q8:dynamic-tree"
  "ex-1bit|$mlp --format posit:16:1 --workers 2 --compress 1bit --optimizer adagrad --adagrad-at aggregate"
  "ex-1bit-f32|$mlp --backend f32 --format f32 --workers 2 --compress 1bit --double-buffer"
  "maxout|--epochs 2 --train-limit 200 --test-limit 50 --format fix:7:8 --model maxout --hidden 8 --maxout-k 3 --dropout 0.2,0.5"
  "lenet5|--epochs 1 --format posit:8:2 --quire --model lenet5 --train-limit 40 --test-limit 10"
  "lenet5-lns|--epochs 1 --format lns:5:6 --model lenet5 --train-limit 20 --test-limit 10"
  "bf16|$mlp --format bf16"
  "bf16-quire|$mlp --format bf16 --quire"
  "fp8-recipe|$mlp --precision O=bf16-L=bf16-F=fp8:e4m3-BG=fp8:e5m2"
  "mx|$mlp --format mx:fp8:e4m3"
  "lenet5-bf16|--epochs 1 --format bf16 --model lenet5 --train-limit 40 --test-limit 10"
  "fp8-scaled|$mlp --precision O=bf16-L=bf16-F=fp8:e4m3-BG=fp8:e5m2 --scaling all=delayed"
  "nvfp4-rht-sr|$mlp --format bf16 --scaling FB=nvfp4,G=nvfp4+rht16+sr"
  "fdpa-promote|--epochs 1 --hidden 8 --train-limit 40 --test-limit 10 --lr 0.05 --format bf16 --quire --accumulate matmul=fdpa:32:13:rz-e8m13:promote64"
)
if [ "$RTL" = 1 ]; then
  rtl=(--backend rtl --check --rows 2 --cols 2 --lanes 2 --train-limit 40 --test-limit 10
    --epochs 1 --hidden 8)
  runs+=(
    "rtl-lns|${rtl[*]} --format lns:5:6"
    "rtl-lns-s4|${rtl[*]} --format lns:5:6 --kahan none --array-stages 4"
    "rtl-posit|${rtl[*]} --format posit:8:2 --quire"
    "rtl-fix|${rtl[*]} --format fix:7:8 --array-stages 2"
    "rtl-dfix|${rtl[*]} --format dfix:10:12 --dfix-products exact --scale-every 20"
    # The same digest as fdpa-promote (the rtl backend's fdpa array, issue 49).
    "rtl-fdpa-promote|${rtl[*]} --lr 0.05 --format bf16 --quire --accumulate matmul=fdpa:32:13:rz-e8m13:promote64"
  )
fi
: >"$out.train"
for r in "${runs[@]}"; do
  name=${r%%|*}
  args=${r#*|}
  dir="$work/$name"
  # shellcheck disable=SC2086
  if ! "$lpgen" train "${small[@]}" $args --out "$dir" >"$work/$name.log" 2>&1; then
    echo "$name failed:" >&2
    tail -5 "$work/$name.log" >&2
    echo "$name FAILED" >>"$out.train"
    continue
  fi
  digest=$(sed -n '/^layers /,$p' "$dir/checkpoint.lpck" | grep -v '^end ' | sha256sum | cut -c1-16)
  echo "$name $digest" | tee -a "$out.train"
done
cat "$out.designs" "$out.train" >"$out"
rm -f "$out.designs" "$out.train"
echo "refactor-digests: $(wc -l <"$out") lines in $out"
