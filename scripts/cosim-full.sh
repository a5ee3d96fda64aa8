#!/usr/bin/env bash
# The full co-simulation set (issue 4; CI runs the lean subset in verif/tests/cosim_ci.rs):
# exhaustive posit <= 8 bits (both standards, several es, :u), all pairs of lns:5:6, lns:4:4
# and lns:3:5, posit-mac and fix-mac from quire states, random + corner cases for posit 16/32,
# lns:5:10 and fix, lns-kahan, arrays of every PE kind and several shapes, alu lanes (every
# opcode on every pair of small formats) and vectors, quant1 columns, the q8 encoder and
# decoder (fix, posit and f32 words), the conversion unit, the float units (all pairs/triples
# of 8-bit floats, random bf16/f16); every stage
# count each generator offers. Verilator models are cached (LPGEN_CACHE), so a rerun is fast.
#   scripts/cosim-full.sh            # everything (about 125 Verilator builds: an hour or more uncached)
#   SEED=0x1234 scripts/cosim-full.sh  # other random stimuli (default seed below)
#   VECTORS=100000 scripts/cosim-full.sh  # fewer random steps per run (default 1000000)
#   ONLY='posit-mac|array' scripts/cosim-full.sh  # only runs whose arguments match (grep -E)
# Last full run (VECTORS=300000, seed 0x5eedc051, Verilator 5.006, 26 min on the shared 2-core
# machine, models uncached): 123 runs, 480 958 398 results compared (468 923 298 in 67
# exhaustive runs), 0 failed.
# The float runs added since (ONLY='float-' scripts/cosim-full.sh, same seed, 1000000 vectors,
# 2026-11-27, 19 min on the shared machine): 67 runs, 323 201 300 results compared (305 070 080
# in 49 exhaustive runs: every pair/triple of 9 8-bit formats), 0 failed.
# The quant1 runs added since (ONLY=quant1, same seed, 1000000 vectors, 2026-11-23): 26 runs
# (14 fix, fix:0:F included, 12 posit), 32 581 038 words compared in both passes, 0 failed.
# After the emitted text changed (issue 36: comments, named constants, the LNS adder a module;
# commit 5911f15, every model rebuilt; VECTORS=200000, same seed, 2026-11-27, about 1 h 45 min
# beside CI, synthesis and helper builds): 356 runs, 646 487 880 results compared (623 341 490 in
# 181 exhaustive runs), 0 failed. The float units (ONLY=float-, 1000000 vectors): 67 runs,
# 323 201 300 results, 0 failed.
# The float lanes and conversions added since (ONLY='(alu|vector|convert) --format
# (fp8|float|bf16|f16)|--to (fp8|float|bf16|f16)', same seed, 1000000 vectors, 2026-11-27, 34 min
# on the shared machine): 95 runs, 30 578 174 results compared (22 098 944 in 85 exhaustive
# runs), 0 failed.
# The stochastic-rounding float units added since (ONLY='--rounding', same seed, 1000000
# vectors, 2026-11-27): float-add/float-mul 67 runs, 30 091 663 results (4 063 232 in 41
# exhaustive runs), 0 failed; float-fma 7 runs, 38 652 847 results, 0 failed.
# convert to floats with stochastic rounding (ONLY='convert --format .* --rounding', same
# seed, 1000000 vectors, 2026-11-27): 23 runs, 4 114 944 results (1 114 880 in 20 exhaustive
# runs), 0 failed.
# The stochastic float lanes added since (ONLY='^(alu|vector) .*--rounding', same seed, 1000000
# vectors, 2026-11-27, about 12 min on the shared machine): 17 runs, 5 984 198 cycles checked
# (every output of every lane; 3 021 760 in 12 exhaustive runs), 0 failed.
# The float array PE's stochastic read-out added since (ONLY='array .*--rounding', same seed,
# 200000 vectors, 2026-11-27): 8 runs, 380 046 read-outs (327 680 in 5 exhaustive runs), 0 failed.
# The MX arrays added since (ONLY='--pe mx', same seed, 20000 vectors, 2026-11-27): 23 runs,
# 576 046 read-outs compared (518 252 in 4 exhaustive runs), 0 failed.
# The NVFP4 arrays added since (ONLY='--pe nvfp4', same seed, 20000 vectors, 2026-11-30): 9 runs,
# 43 066 read-outs compared (18 688 in 1 exhaustive run), 0 failed.
set -uo pipefail
cd "$(dirname "$0")/.."
SEED=${SEED:-0x5eedc051}
VECTORS=${VECTORS:-1000000}
cargo build --release --locked -p lpgen >/dev/null || exit 2
LPGEN=${CARGO_TARGET_DIR:-target}/release/lpgen
runs=0
failed_runs=()
echo "cosim-full: seed $SEED, $VECTORS vectors per random run"

cosim() {
  if [ -n "${ONLY:-}" ] && ! grep -qE -- "$ONLY" <<<"$*"; then return; fi
  runs=$((runs + 1))
  local line
  line=$(nice -n 5 "$LPGEN" cosim "$@" 2>/dev/null | tail -1)
  local rc=${PIPESTATUS[0]}
  printf '%-78s %s\n' "$*" "$line"
  if [ "$rc" -ne 0 ]; then failed_runs+=("$* (exit $rc)"); fi
}

stages() { seq 0 "$1"; }
# The most stages of convert from $1 to $2.
max_convert_stages() {
  "$LPGEN" rtl convert --format "$1" --to "$2" --stages 999 --out /tmp/cosim-full-probe 2>&1 |
    sed -n 's/.*at most \([0-9]*\) pipeline.*/\1/p'
}
# The most stages of q8-enc for type $1 (as the generator's refusal states it).
q8_enc_stages() {
  "$LPGEN" rtl q8-enc --format f32 --q8 "q8:$1" --stages 999 --out /tmp/cosim-full-probe 2>&1 |
    sed -n 's/.*at most \([0-9]*\) pipeline.*/\1/p'
}

# LNS: all pairs of lns:5:6 (2^27 operations per run), lns:4:4 and lns:3:5 (every stage count).
cosim lns-mul --format lns:5:6 --stages 1 --exhaustive
cosim lns-add --format lns:5:6 --stages 0 --exhaustive
cosim lns-add --format lns:5:6 --stages 3 --exhaustive
for f in lns:4:4 lns:3:5; do
  for s in $(stages 1); do cosim lns-mul --format $f --stages $s --exhaustive; done
  for s in $(stages 3); do cosim lns-add --format $f --stages $s --exhaustive; done
done

# Posits, all pairs: every stage count on posit:8:0, both ends on the 2022 posit:8, the deepest
# pipeline on other es, the :u variant and tiny formats. MACs from quire states.
for s in $(stages 4); do cosim posit-add --format posit:8:0 --stages $s --exhaustive; done
for s in $(stages 4); do cosim posit-mul --format posit:8:0 --stages $s --exhaustive; done
for s in $(stages 8); do cosim posit-mac --format posit:8:0 --stages $s --exhaustive; done
for s in 0 4; do cosim posit-add --format posit:8 --stages $s --exhaustive; done
for s in 0 4; do cosim posit-mul --format posit:8 --stages $s --exhaustive; done
for s in 0 8; do cosim posit-mac --format posit:8 --stages $s --exhaustive; done
for f in posit:8:1 posit:8:2 posit:8:2:u posit:7:3 posit:6:1 posit:5:u posit:4 posit:3:0; do
  cosim posit-add --format $f --stages 4 --exhaustive
  cosim posit-mul --format $f --stages 4 --exhaustive
  cosim posit-mac --format $f --stages 8 --exhaustive
done

# Posits 16 and 32: corner cases + random.
for f in posit:16 posit:16:1 posit:32 posit:32:2; do
  for s in 0 4; do cosim posit-add --format $f --stages $s --vectors "$VECTORS" --seed "$SEED"; done
  cosim posit-mul --format $f --stages 4 --vectors "$VECTORS" --seed "$SEED"
  for s in 0 8; do cosim posit-mac --format $f --stages $s --vectors "$VECTORS" --seed "$SEED"; done
done

# lns:5:10 random; lns-kahan at every stage count (interleaved accumulations).
cosim lns-mul --format lns:5:10 --stages 1 --vectors "$VECTORS" --seed "$SEED"
cosim lns-add --format lns:5:10 --stages 3 --vectors "$VECTORS" --seed "$SEED"
for f in lns:5:6 lns:3:2; do
  for s in $(stages 4); do cosim lns-kahan --format $f --stages $s --vectors "$VECTORS" --seed "$SEED"; done
done
cosim lns-kahan --format lns:5:10 --stages 4 --vectors "$VECTORS" --seed "$SEED"

# Fixed point: all pairs from accumulator states (8-bit words), random for wider words.
for s in $(stages 2); do cosim fix-mac --format fix:3:4 --stages $s --exhaustive; done
cosim fix-mac --format fix:7:0 --stages 2 --exhaustive
cosim fix-mac --format fix:0:7 --stages 2 --exhaustive
for s in $(stages 2); do cosim fix-mac --format fix:7:8 --stages $s --vectors "$VECTORS" --seed "$SEED"; done
cosim fix-mac --format fix:15:16 --stages 2 --vectors "$VECTORS" --seed "$SEED"
cosim fix-mac --format fix:4:0 --stages 2 --vectors "$VECTORS" --seed "$SEED"

# Arrays of every PE kind against golden matrix products: every stage count on 2x3, other
# shapes (1x1, 3x2, 4x4) at one stage count each.
arr() { cosim array --format "$1" --pe "$2" --rows "$3" --cols "$4" --stages "$5" --vectors 200000 --seed "$SEED"; }
for s in $(stages 2); do
  arr lns:5:6 lns-kahan 2 3 $s
  arr lns:5:6 lns-plain 2 3 $s
  arr posit:16 posit-quire 2 3 $s
  arr fix:7:8 fix 2 3 $s
done
arr lns:5:6 lns-kahan 4 4 2
# LNS PEs with 1..3 registers inside the accumulation loop: 2..4 interleaved accumulations.
for s in 3 4 5; do
  for pe in lns-kahan lns-plain; do
    arr lns:5:6 $pe 2 3 $s
    arr lns:5:6 $pe 1 1 $s
  done
done
arr lns:5:6 lns-kahan 8 8 5
arr lns:5:6 lns-plain 8 8 5
# The posit-quire PE with registers before and after its quire (stages 3..=8).
for s in 3 4 5 6 7 8; do arr posit:16 posit-quire 2 3 $s; done
arr posit:8:0 posit-quire 1 1 8
arr posit:16:1 posit-quire 8 8 8
# The fix PE with registers on its long wires and in its read-out (stages 3..=9).
for s in 3 4 5 6 7 8 9; do arr fix:7:8 fix 2 3 $s; done
arr fix:7:8 fix 4 4 3
arr fix:3:4 fix 1 1 3
arr fix:7:8 fix 4 4 9
arr fix:3:4 fix 1 1 9
arr fix:4:0 fix 2 2 9
arr lns:3:2 lns-kahan 1 1 0
arr lns:5:6 lns-plain 3 2 1
arr posit:8:0 posit-quire 3 2 1
arr fix:7:8 fix 4 4 1
arr fix:3:4 fix 1 1 0

# ALU lanes: every opcode on every operand pair of small formats (with a conversion format),
# every stage count; corner cases + random for wide formats; vectors of 4 and 16 lanes.
for s in $(stages 4); do cosim alu --format posit:8:0 --to posit:6:1:u --stages $s --exhaustive; done
cosim alu --format posit:8 --to posit:10 --stages 4 --exhaustive
for s in $(stages 3); do cosim alu --format lns:4:4 --to lns:3:2 --stages $s --exhaustive; done
for s in $(stages 2); do cosim alu --format fix:3:4 --to fix:2:1 --stages $s --exhaustive; done
cosim alu --format fix:0:7 --to fix:3:0 --stages 2 --exhaustive
cosim alu --format lns:5:6 --to lns:5:4 --stages 3 --vectors "$VECTORS" --seed "$SEED"
cosim alu --format posit:16:1 --to posit:8:2 --stages 4 --vectors "$VECTORS" --seed "$SEED"
cosim alu --format posit:32:2 --to posit:16:1 --stages 4 --vectors "$VECTORS" --seed "$SEED"
cosim alu --format fix:15:16 --to fix:7:8 --stages 2 --vectors "$VECTORS" --seed "$SEED"
cosim vector --format lns:5:6 --lanes 4 --stages 3 --vectors 200000 --seed "$SEED"
cosim vector --format posit:8 --to posit:16 --lanes 16 --stages 1 --vectors 200000 --seed "$SEED"
cosim vector --format fix:7:8 --lanes 16 --stages 0 --vectors 200000 --seed "$SEED"

# quant1 (1-bit quantizer with error feedback): every column of every length up to the rows
# bound with every (g, r) pair (fix:1:1 up to 3 rows, fix:2:2 up to 2), both stage counts;
# random columns for MNIST-sized columns (784 and 1024 rows), the widest words and the
# longest column.
for s in $(stages 1); do
  cosim quant1 --format fix:1:1 --rows 3 --stages $s --exhaustive
  cosim quant1 --format fix:2:2 --rows 2 --stages $s --exhaustive
  cosim quant1 --format fix:3:4 --rows 5 --stages $s --vectors "$VECTORS" --seed "$SEED"
  cosim quant1 --format fix:7:8 --rows 1024 --stages $s --vectors "$VECTORS" --seed "$SEED"
done
cosim quant1 --format fix:1:1 --rows 1 --stages 0 --exhaustive
cosim quant1 --format fix:7:8 --rows 784 --stages 1 --vectors "$VECTORS" --seed "$SEED"
cosim quant1 --format fix:30:1 --rows 33 --stages 1 --vectors "$VECTORS" --seed "$SEED"
# fix:0:F (no word 1; the golden quire sum is the exact sum since 2026-11-23)
cosim quant1 --format fix:0:2 --rows 3 --stages 0 --exhaustive
cosim quant1 --format fix:0:7 --rows 64 --stages 1 --vectors "$VECTORS" --seed "$SEED"
cosim quant1 --format fix:15:16 --rows 65536 --stages 1 --vectors "$VECTORS" --seed "$SEED"
# quant1 on posits (quire sums): every column of up to 2 words of posit:4:0, posit:4 and
# posit:5:u and of up to 3 posit:3:0 words; random columns of 8, 16 and 32-bit posits.
for s in $(stages 1); do
  for f in posit:4:0 posit:4 posit:5:u; do cosim quant1 --format $f --rows 2 --stages $s --exhaustive; done
  cosim quant1 --format posit:8:0 --rows 5 --stages $s --vectors "$VECTORS" --seed "$SEED"
done
cosim quant1 --format posit:3:0 --rows 3 --stages 1 --exhaustive
cosim quant1 --format posit:8 --rows 33 --stages 1 --vectors "$VECTORS" --seed "$SEED"
cosim quant1 --format posit:16:1 --rows 784 --stages 1 --vectors "$VECTORS" --seed "$SEED"
cosim quant1 --format posit:32:2 --rows 1024 --stages 0 --vectors "$VECTORS" --seed "$SEED"

# The q8 codecs (issue 19), every type: the encoder on every 16-bit word (fix:7:8, posit:16:1,
# posit:16) with 20-26 scale words at no and all stages, the decoder on every code with every
# scale word of posit:8:0 and fix:3:4 and with corner + random scales for 16/32-bit words;
# random for 32-bit encoders.
for ty in dynamic-tree static-tree linear mantissa; do
  for f in fix:7:8 posit:16:1; do
    for s in 0 5 15; do cosim q8-enc --q8 q8:$ty --format $f --stages $s --exhaustive; done
  done
  cosim q8-enc --q8 q8:$ty --format posit:16 --stages 3 --exhaustive
  for f in posit:8:0 fix:3:4; do
    cosim q8-enc --q8 q8:$ty --format $f --stages 1 --exhaustive
    for s in $(stages 2); do cosim q8-dec --q8 q8:$ty --format $f --stages $s --exhaustive; done
  done
  for f in fix:7:8 posit:16:1 fix:15:16 posit:32:2; do
    cosim q8-dec --q8 q8:$ty --format $f --stages 1 --vectors "$VECTORS" --seed "$SEED"
  done
  for f in fix:15:16 posit:32:2; do
    cosim q8-enc --q8 q8:$ty --format $f --stages 4 --vectors "$VECTORS" --seed "$SEED"
  done
  # f32 words: the decoder on every code with corner + random scales (±0, subnormals, ±max,
  # ±∞, NaN) then random pairs; the encoder on corner cases, random x and x at midpoint ties
  # and one ulp either side; no and all stages.
  for s in 0 $(q8_enc_stages $ty); do
    cosim q8-enc --q8 q8:$ty --format f32 --stages $s --vectors "$VECTORS" --seed "$SEED"
  done
  for s in 0 2; do
    cosim q8-dec --q8 q8:$ty --format f32 --stages $s --vectors "$VECTORS" --seed "$SEED"
  done
done

# The conversion unit (issue 19): every input word of the 8- to 16-bit pairs (narrowing and
# widening, each family), every stage count; random words of the 32-bit ones.
for pair in posit:16:1,posit:8:2 posit:8:0,posit:16:1 posit:16,posit:16:1 lns:5:6,lns:4:3 \
  lns:4:3,lns:5:10 fix:7:8,fix:3:4 fix:3:4,fix:15:16; do
  from=${pair%,*} to=${pair#*,}
  for s in $(stages "$(max_convert_stages "$from" "$to")"); do
    cosim convert --format "$from" --to "$to" --stages "$s" --exhaustive
  done
done
for pair in posit:32:2,posit:16:1 fix:15:16,fix:7:8 lns:9:10,lns:5:6; do
  cosim convert --format "${pair%,*}" --to "${pair#*,}" --stages 1 --vectors "$VECTORS" --seed "$SEED"
done

# Dynamic fixed point (issue 18): the dfix PE on every operand pair of dfix:6 and dfix:8 (1x1)
# at every read-out shift that matters, every stage count; random tiles and shifts on 2x3
# arrays of dfix:10 and dfix:16 (every stage count), 8x8 dfix:10, the extreme widths; the
# overflow monitor with counters that saturate and with 32-bit ones.
for s in $(stages 2); do cosim array --pe dfix --format dfix:6 --stages $s --exhaustive; done
cosim array --pe dfix --format dfix:8 --stages 2 --exhaustive
for f in dfix:10 dfix:16; do
  for s in $(stages 2); do
    cosim array --pe dfix --format $f --rows 2 --cols 3 --stages $s --vectors "$VECTORS" --seed "$SEED"
  done
done
cosim array --pe dfix --format dfix:10 --rows 8 --cols 8 --stages 2 --vectors "$VECTORS" --seed "$SEED"
cosim array --pe dfix --format dfix:2 --rows 2 --cols 2 --stages 1 --vectors "$VECTORS" --seed "$SEED"
cosim array --pe dfix --format dfix:32 --rows 3 --cols 2 --stages 2 --vectors "$VECTORS" --seed "$SEED"
for s in $(stages 1); do
  cosim dfix-monitor --format dfix:10 --rows 2 --cols 3 --counter-bits 6 --stages $s --vectors "$VECTORS" --seed "$SEED"
  cosim dfix-monitor --format dfix:10 --rows 8 --cols 8 --stages $s --vectors "$VECTORS" --seed "$SEED"
done
cosim dfix-monitor --format dfix:10 --rows 1 --cols 1 --counter-bits 1 --stages 0 --vectors "$VECTORS" --seed "$SEED"
# dfix lanes: every opcode on every pair at the shifts that matter; random wider lanes.
for s in $(stages 2); do cosim alu --format dfix:6 --stages $s --exhaustive; done
cosim vector --format dfix:4 --lanes 3 --stages 2 --exhaustive
for f in dfix:2 dfix:10 dfix:16 dfix:32; do
  for s in 1 2; do cosim vector --format $f --lanes 4 --stages $s --vectors "$VECTORS" --seed "$SEED"; done
done

# Floats (issue 32): every operand pair (every triple for float-fma) of the 8-bit formats,
# every stage count on fp8:e4m3, both ends elsewhere, the :sat/:ftz/:fn variants at the
# deepest pipeline; corner cases + random pairs/triples for bf16 and f16.
for s in $(stages 5); do cosim float-add --format fp8:e4m3 --stages $s --exhaustive; done
for s in $(stages 4); do cosim float-mul --format fp8:e4m3 --stages $s --exhaustive; done
for s in $(stages 7); do cosim float-fma --format fp8:e4m3 --stages $s --exhaustive; done
for f in fp8:e5m2 float:3:4; do
  for s in 0 5; do cosim float-add --format $f --stages $s --exhaustive; done
  for s in 0 4; do cosim float-mul --format $f --stages $s --exhaustive; done
  for s in 0 7; do cosim float-fma --format $f --stages $s --exhaustive; done
done
for f in fp8:e4m3:sat fp8:e5m2:sat fp8:e5m2:ftz float:3:4:fn:sat:ftz float:2:5 float:5:2:fn; do
  cosim float-add --format $f --stages 5 --exhaustive
  cosim float-mul --format $f --stages 4 --exhaustive
  cosim float-fma --format $f --stages 7 --exhaustive
done
for f in bf16 f16 f16:sat:ftz; do
  for s in 0 5; do cosim float-add --format $f --stages $s --vectors "$VECTORS" --seed "$SEED"; done
  for s in 0 4; do cosim float-mul --format $f --stages $s --vectors "$VECTORS" --seed "$SEED"; done
  for s in 0 7; do cosim float-fma --format $f --stages $s --vectors "$VECTORS" --seed "$SEED"; done
done

# Float lanes and conversions (issue 32): every opcode on every operand pair of the 8-bit
# formats (every stage count on fp8:e4m3), the conversions of every word of 8- and 16-bit
# sources (among floats, float -> fix, fix -> float), random + corners for bf16/f16 lanes, a
# 32-bit fix source and vectors. ONLY='(alu|vector|convert) --format (fp8|float|bf16|f16)|--to (fp8|float|bf16|f16)'.
for s in $(stages 5); do cosim alu --format fp8:e4m3 --to fp8:e5m2 --stages $s --exhaustive; done
for f in fp8:e5m2 float:3:4 fp8:e4m3:sat fp8:e5m2:ftz float:3:4:fn:sat:ftz float:2:5; do
  for s in 0 5; do cosim alu --format $f --stages $s --exhaustive; done
done
cosim alu --format float:3:4:ftz --to float:2:5 --stages 3 --exhaustive
for s in 0 5; do cosim alu --format bf16 --to fp8:e4m3 --stages $s --vectors "$VECTORS" --seed "$SEED"; done
for s in 0 5; do cosim alu --format f16 --to bf16 --stages $s --vectors "$VECTORS" --seed "$SEED"; done
cosim alu --format f16:sat:ftz --to f16 --stages 2 --vectors "$VECTORS" --seed "$SEED"
cosim vector --format bf16 --to f16 --lanes 4 --stages 5 --vectors 200000 --seed "$SEED"
cosim vector --format fp8:e4m3 --lanes 16 --stages 1 --vectors 200000 --seed "$SEED"
for p in fp8:e4m3,fp8:e5m2 fp8:e5m2,fp8:e4m3 float:3:4,fp8:e4m3:sat fp8:e5m2:ftz,float:3:4:fn \
  bf16,fp8:e4m3 f16,fp8:e5m2 f16,bf16 bf16,f16 fp8:e4m3,f16 f16:sat:ftz,float:3:4:ftz \
  fp8:e4m3,fix:3:4 fp8:e5m2,fix:7:8 float:3:4:ftz,fix:0:7 bf16,fix:7:8 f16,fix:15:16 \
  bf16:ftz,fix:3:4 fix:3:4,fp8:e4m3 fix:0:7,fp8:e5m2 fix:7:8,bf16 fix:7:8,f16:sat:ftz \
  fix:7:8,fp8:e4m3:sat fix:3:4,float:3:4:ftz; do
  f=${p%,*}; t=${p#*,}
  for s in $(stages "$(max_convert_stages "$f" "$t")"); do
    cosim convert --format "$f" --to "$t" --stages $s --exhaustive
  done
done
for t in bf16 f16 fp8:e4m3; do
  cosim convert --format fix:15:16 --to $t --stages 2 --vectors "$VECTORS" --seed "$SEED"
done

# The float array PE (exact accumulator, rounded once): every product pair of the 8-bit
# formats through a 1x1 array (each tile round(a*b + c*d), --exhaustive), every stage count;
# random and corner tiles of bf16, f16 and fp8:e4m3 on 2x3 and 4x4.
for s in 0 1 2; do
  for f in fp8:e4m3 fp8:e5m2 float:3:4; do cosim array --format $f --pe float --rows 1 --cols 1 --stages $s --exhaustive; done
  for f in bf16 fp8:e4m3; do arr $f float 2 3 $s; done
done
for f in fp8:e4m3:sat fp8:e5m2:ftz float:3:4:fn:sat:ftz float:2:5; do
  cosim array --format $f --pe float --rows 1 --cols 1 --stages 2 --exhaustive
done
arr f16:sat:ftz float 2 2 0
arr bf16 float 4 4 2
arr fp8:e4m3 float 4 4 2
# --acc: products accumulated in a wider float, one rounding per add.
for s in 0 1 2; do
  for f in fp8:e4m3 fp8:e5m2; do cosim array --format $f --pe float --acc bf16 --rows 1 --cols 1 --stages $s --exhaustive; done
  cosim array --format fp8:e4m3 --pe float --acc bf16 --rows 2 --cols 3 --stages $s --vectors 200000 --seed "$SEED"
done
cosim array --format fp8:e5m2:ftz --pe float --acc float:8:7:ftz --rows 1 --cols 1 --stages 2 --exhaustive
cosim array --format fp8:e4m3:sat --pe float --acc bf16:sat --rows 1 --cols 1 --stages 2 --exhaustive
cosim array --format fp8:e4m3 --pe float --acc float:8:23 --rows 2 --cols 3 --stages 2 --vectors 200000 --seed "$SEED"
cosim array --format f16 --pe float --acc float:11:52 --rows 2 --cols 2 --stages 2 --vectors 200000 --seed "$SEED"

# Stochastic rounding (issue 32): float-add / float-mul --rounding stochastic:R against the
# golden stream of the same seed (one draw per operation, idle cycles between some): every
# pair of the 8-bit formats (every stage count on fp8:e4m3 at R = 4; R = 1, 8, 32 there too;
# R = 3 and 12 on the variants), random + corners for bf16/f16 at R = 8 and 32 and for
# float:11:52 at R = 32. ONLY='--rounding'.
for s in $(stages 5); do cosim float-add --format fp8:e4m3 --rounding stochastic:4 --rounding-seed 1 --stages $s --exhaustive; done
for s in $(stages 4); do cosim float-mul --format fp8:e4m3 --rounding stochastic:4 --rounding-seed 1 --stages $s --exhaustive; done
for r in 1 8 32; do
  cosim float-add --format fp8:e4m3 --rounding stochastic:$r --rounding-seed $r --stages 5 --exhaustive
  cosim float-mul --format fp8:e4m3 --rounding stochastic:$r --rounding-seed $r --stages 4 --exhaustive
done
for f in fp8:e5m2 float:3:4 fp8:e4m3:sat fp8:e5m2:ftz float:3:4:fn:sat:ftz float:2:5; do
  for r in 3 12; do
    cosim float-add --format $f --rounding stochastic:$r --rounding-seed 7 --stages 5 --exhaustive
    cosim float-mul --format $f --rounding stochastic:$r --rounding-seed 7 --stages 4 --exhaustive
  done
done
for f in bf16 f16 f16:sat:ftz; do
  for r in 8 32; do
    for s in 0 5; do cosim float-add --format $f --rounding stochastic:$r --rounding-seed 5 --stages $s --vectors "$VECTORS" --seed "$SEED"; done
    for s in 0 4; do cosim float-mul --format $f --rounding stochastic:$r --rounding-seed 5 --stages $s --vectors "$VECTORS" --seed "$SEED"; done
  done
done
cosim float-add --format float:11:52 --rounding stochastic:32 --rounding-seed 11 --stages 5 --vectors "$VECTORS" --seed "$SEED"
cosim float-mul --format float:11:52 --rounding stochastic:32 --rounding-seed 11 --stages 4 --vectors "$VECTORS" --seed "$SEED"
# float-fma: every triple of fp8:e4m3 and float:3:4 (2^24 each), random bf16/f16, float:11:52 at R = 18.
cosim float-fma --format fp8:e4m3 --rounding stochastic:4 --rounding-seed 1 --stages 7 --exhaustive
cosim float-fma --format float:3:4:ftz --rounding stochastic:12 --rounding-seed 2 --stages 3 --exhaustive
for f in bf16 f16:sat:ftz; do
  for s in 0 7; do cosim float-fma --format $f --rounding stochastic:16 --rounding-seed 5 --stages $s --vectors "$VECTORS" --seed "$SEED"; done
done
cosim float-fma --format float:11:52 --rounding stochastic:18 --rounding-seed 11 --stages 7 --vectors "$VECTORS" --seed "$SEED"
# convert to floats (ONLY='convert --format'): every word of each 16- and 8-bit source at every
# stage count, random words of the wider ones.
for pair in "bf16 fp8:e4m3 8" "f16 fp8:e5m2:ftz 32" "fp8:e5m2 float:3:4:sat 9" "bf16 f16 7" \
  "f16 f16 5" "fix:7:8 bf16 13" "fix:7:8 fp8:e4m3 1"; do
  set -- $pair
  for s in $(stages "$(max_convert_stages "$1" "$2")"); do
    cosim convert --format "$1" --to "$2" --rounding stochastic:$3 --rounding-seed 9 --stages $s --exhaustive
  done
done
for pair in "float:8:23 bf16 16" "fix:15:16 f16:sat 20" "float:11:52 bf16 32"; do
  set -- $pair
  cosim convert --format "$1" --to "$2" --rounding stochastic:$3 --rounding-seed 9 --stages 2 --vectors "$VECTORS" --seed "$SEED"
done

# Stochastic float lanes (issue 32, alu/vector --rounding stochastic:R; ONLY='^(alu|vector) .*--rounding'):
# the golden stream replayed L draws per beat of add/sub/mul/div, with idle cycles,
# non-rounding opcodes and sr_load placements interleaved (verif drivers/lane_sr.rs). Every
# pair of the 8-bit formats for the four rounding opcodes; random + corners for the wider.
for s in $(stages 5); do cosim alu --format fp8:e4m3 --rounding stochastic:4 --rounding-seed 1 --stages $s --exhaustive; done
for s in 0 5; do cosim vector --lanes 4 --format fp8:e4m3 --rounding stochastic:4 --rounding-seed 1 --stages $s --exhaustive; done
for s in 0 5; do cosim alu --format fp8:e5m2 --rounding stochastic:12 --rounding-seed 2 --stages $s --exhaustive; done
cosim alu --format float:3:4:sat:ftz --rounding stochastic:9 --rounding-seed 3 --stages 3 --exhaustive
cosim vector --lanes 2 --format fp8:e4m3 --to bf16 --rounding stochastic:1 --rounding-seed 4 --stages 2 --exhaustive
for s in 0 5; do cosim vector --lanes 4 --format bf16 --rounding stochastic:8 --rounding-seed 5 --stages $s --vectors "$VECTORS" --seed "$SEED"; done
cosim vector --lanes 16 --format bf16 --to fp8:e5m2 --rounding stochastic:32 --rounding-seed 6 --stages 2 --vectors "$VECTORS" --seed "$SEED"
cosim alu --format f16:sat:ftz --rounding stochastic:13 --rounding-seed 7 --stages 2 --vectors "$VECTORS" --seed "$SEED"
cosim alu --format float:11:52 --rounding stochastic:32 --rounding-seed 8 --stages 5 --vectors "$VECTORS" --seed "$SEED"

# The float array PE's stochastic read-out (issue 32, array --pe float --rounding stochastic:R;
# ONLY='array .*--rounding'): each last step presents one state a row on sr_row_state, PE (r, c)
# rounds with it after c + 1 steps (verif drivers/array.rs). Every pair of the 8-bit formats
# through small arrays; random tiles for the wider. Run (VECTORS=200000, seed 0x5eedc051,
# 2026-11-27, about 2 min): 8 runs, 380 046 read-outs compared (every word of c_out; 327 680
# in 5 exhaustive runs), 0 failed.
for s in 0 1 2; do cosim array --pe float --format fp8:e4m3 --rows 2 --cols 2 --rounding stochastic:4 --rounding-seed 1 --stages $s --exhaustive; done
cosim array --pe float --format fp8:e5m2 --rows 1 --cols 3 --rounding stochastic:12 --rounding-seed 2 --stages 1 --exhaustive
cosim array --pe float --format float:3:4:sat:ftz --rows 2 --cols 1 --rounding stochastic:9 --rounding-seed 3 --stages 2 --exhaustive
cosim array --pe float --format bf16 --rows 2 --cols 3 --rounding stochastic:8 --rounding-seed 5 --stages 2 --vectors "$VECTORS" --seed "$SEED"
cosim array --pe float --format fp8:e4m3 --rows 4 --cols 4 --rounding stochastic:32 --rounding-seed 6 --stages 0 --vectors "$VECTORS" --seed "$SEED"
cosim array --pe float --format f16:sat:ftz --rows 3 --cols 2 --rounding stochastic:13 --rounding-seed 7 --stages 1 --vectors "$VECTORS" --seed "$SEED"

# mx-enc on other input words (issue 33, `--input`): every input into each element type at 0
# and 3 stages, MXIN_VECTORS (4000) random + corner blocks each (ONLY='mx-enc.*--input';
# 2026-11-27: 210 runs, 842 492 blocks, 0 mismatches, docs/rtl.md).
for inp in bf16 f16 float:4:3 float:8:2 float:3:5 float:2:1 float:7:23 float:8:23 float:5:2:sat \
  fix:7:8 fix:0:15 fix:31:0 fix:0:1 fix:3:28 fix:1:0; do
  for f in mx:fp8:e4m3 mx:fp8:e5m2:b7 mx:fp6:e3m2:b5 mx:fp6:e2m3:b3 mx:fp4:e2m1:b4 mx:int8:b6 mx:int8:b1; do
    for s in 0 3; do
      cosim mx-enc --format $f --input $inp --stages $s --vectors "${MXIN_VECTORS:-4000}" --seed 0x33
    done
  done
done

# MX block dot products (issue 33): every element pair of the 4- and 6-bit types under seven
# scale pairs at every stage count and block sizes 1, 4 and 32; every pair of the 8-bit types
# at K = 2 and 32, random + corner blocks of them at every stage count (K = 32, and K = 2).
# ONLY=mx-dot.
for f in mx:fp4:e2m1 mx:fp6:e3m2 mx:fp6:e2m3; do
  for s in $(stages 3); do cosim mx-dot --format $f:b4 --stages $s --exhaustive; done
  cosim mx-dot --format $f --stages 3 --exhaustive
  cosim mx-dot --format $f:b1 --stages 0 --exhaustive
done
for f in mx:fp8:e4m3 mx:fp8:e5m2 mx:int8; do
  for s in $(stages 3); do cosim mx-dot --format $f --stages $s --vectors "$VECTORS" --seed "$SEED"; done
  cosim mx-dot --format $f:b2 --stages 1 --vectors "$VECTORS" --seed "$SEED"
  cosim mx-dot --format $f:b2 --stages 2 --exhaustive
  cosim mx-dot --format $f --stages 3 --exhaustive
done
# MX block encoder (f32 words in): random + corner blocks, every stage count at K = 32, K = 1
# and 3 at the most stages. ONLY=mx-enc.
for f in mx:fp4:e2m1 mx:fp6:e3m2 mx:fp6:e2m3 mx:fp8:e4m3 mx:fp8:e5m2 mx:int8; do
  for s in $(stages 3); do cosim mx-enc --format $f --stages $s --vectors "$VECTORS" --seed "$SEED"; done
  cosim mx-enc --format $f:b1 --stages 3 --vectors "$VECTORS" --seed "$SEED"
  cosim mx-enc --format $f:b3 --stages 3 --vectors "$VECTORS" --seed "$SEED"
done
# MX arrays (the array's mx PE, issue 33): every element type at K = 3 and 32 on 2x2 at
# stages 2, E4M3 at K = 4 on 2x3 at every stage count (random + corner tiles), and every
# element pair of the 4- and 6-bit types and E4M3 on 1x1 at stages 6. ONLY='--pe mx'.
for f in mx:fp8:e4m3 mx:fp8:e5m2 mx:fp6:e3m2 mx:fp6:e2m3 mx:fp4:e2m1 mx:int8; do
  for k in b3 b32; do
    cosim array --pe mx --format $f:$k --rows 2 --cols 2 --stages 2 --vectors "$VECTORS" --seed "$SEED"
  done
done
for s in $(stages 6); do
  cosim array --pe mx --format mx:fp8:e4m3:b4 --rows 2 --cols 3 --stages $s --vectors "$VECTORS" --seed "$SEED"
done
for f in mx:fp4:e2m1:b4 mx:fp6:e3m2:b2 mx:fp6:e2m3:b3 mx:fp8:e4m3:b2; do
  cosim array --pe mx --format $f --stages 6 --exhaustive
done

# fdpa (issue 49): every pair of fp4 pairs (L = 2) under each rounding at every stage count,
# every operand pair of fp8 at L = 1 (C = +0 and a corner C each), random + corner chunks of
# every preset on every operand format it lists at stages 0 and 6. ONLY=fdpa.
for mode in 2:3:rz-f32 2:2:rz-e8m13 2:1:rne-f16; do
  for s in $(stages 6); do cosim fdpa --format float:2:1 --fdpa $mode --stages $s --exhaustive; done
done
cosim fdpa --format fp8:e4m3 --fdpa 1:13:rz-e8m13 --stages 3 --exhaustive
cosim fdpa --format fp8:e5m2 --fdpa 1:3:rne-f16 --stages 2 --exhaustive
for fm in f16:volta f16:ampere f16:ada f16:hopper f16:blackwell bf16:ampere bf16:ada bf16:hopper \
  bf16:blackwell float:8:23:ampere fp8:e4m3:ada fp8:e4m3:hopper fp8:e4m3:blackwell fp8:e5m2:ada \
  fp8:e5m2:hopper fp8:e5m2:blackwell; do
  for s in 0 6; do
    cosim fdpa --format "${fm%:*}" --fdpa "${fm##*:}" --stages $s --vectors "$VECTORS" --seed "$SEED"
  done
done

# NVFP4 units (issue 50): the encoder (corners, the scale sweep, random blocks) at every stage
# count, UE5M3 and other block sizes; the dot product exhaustively at every stage count and
# K = 3. ONLY=nvfp4.
for s in $(stages 5); do cosim nvfp4-enc --format nvfp4 --stages $s --vectors "$VECTORS" --seed "$SEED"; done
for f in scaled/fp4:e2m1/b1/ue4m3/t scaled/fp4:e2m1/b3/ue4m3/t scaled/fp4:e2m1/b16/ue5m3/t \
  scaled/fp4:e2m1/b32/ue5m3/t; do
  cosim nvfp4-enc --format $f --stages 5 --vectors "$VECTORS" --seed "$SEED"
done
for s in $(stages 3); do cosim nvfp4-dot --format nvfp4 --stages $s --exhaustive; done
cosim nvfp4-dot --format scaled/fp4:e2m1/b3/ue4m3/t --stages 3 --exhaustive
# NVFP4 arrays (the array's nvfp4 PE, issue 50): `nvfp4` on 2x3 at every stage count and K = 3
# on 2x2 at stages 2 (random + corner tiles), and every element pair under eight scale pairs
# and every pair of UE4M3 scale bytes on 2x2 at stages 4. ONLY='--pe nvfp4'.
for s in $(stages 6); do
  cosim array --pe nvfp4 --format nvfp4 --rows 2 --cols 3 --stages $s --vectors "$VECTORS" --seed "$SEED"
done
cosim array --pe nvfp4 --format scaled/fp4:e2m1/b3/ue4m3/t --rows 2 --cols 2 --stages 2 --vectors "$VECTORS" --seed "$SEED"
cosim array --pe nvfp4 --format nvfp4 --rows 2 --cols 2 --stages 4 --exhaustive

echo "cosim-full: $runs runs, ${#failed_runs[@]} failed"
for f in "${failed_runs[@]}"; do echo "  FAILED: lpgen cosim $f"; done
[ ${#failed_runs[@]} -eq 0 ]
