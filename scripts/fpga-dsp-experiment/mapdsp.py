#!/usr/bin/env python3
"""Rewrites a generated fix PE (fix:7:8, stages >= 6) in place so that its multiply and the
registers around it (a_c2, b_c2, product_c3) are one ECP5 MULT18X18D with its input and
output registers: an experiment, not the generator's output."""
import sys
p = sys.argv[1]
src = open(p).read()
for l in ["    assign product = ($signed({{16{a_c2[15]}}, a_c2}) * $signed({{16{b_c2[15]}}, b_c2}));\n",
          "        a_c2 <= a_c1;\n", "        b_c2 <= b_c1;\n", "        product_c3 <= product;\n",
          "    reg  [15:0] a_c2;\n", "    reg  [15:0] b_c2;\n", "    wire [31:0] product;\n",
          "    reg  [31:0] product_c3;\n"]:
    assert l in src, l
    src = src.replace(l, "", 1)
pa = ", ".join(f".A{i}(a_x[{i}])" for i in range(18))
pb = ", ".join(f".B{i}(b_x[{i}])" for i in range(18))
pc = ", ".join(f".C{i}(1'b0)" for i in range(18))
pp = ", ".join(f".P{i}(p_x[{i}])" for i in range(36))
inst = f"""    wire [17:0] a_x = {{{{2{{a_c1[15]}}}}, a_c1}};
    wire [17:0] b_x = {{{{2{{b_c1[15]}}}}, b_c1}};
    wire [35:0] p_x;
    wire [31:0] product_c3 = p_x[31:0];
    // The ECP5 DSP with its input registers (a_c2, b_c2) and output register (product_c3).
    MULT18X18D #(.REG_INPUTA_CLK("CLK0"), .REG_INPUTB_CLK("CLK0"), .REG_OUTPUT_CLK("CLK0"), .GSR("DISABLED"))
      dsp ({pa}, {pb}, {pc},
        .SIGNEDA(1'b1), .SIGNEDB(1'b1), .SOURCEA(1'b0), .SOURCEB(1'b0),
        .CLK0(clk), .CLK1(1'b0), .CLK2(1'b0), .CLK3(1'b0), .CE0(1'b1), .CE1(1'b0), .CE2(1'b0), .CE3(1'b0),
        .RST0(1'b0), .RST1(1'b0), .RST2(1'b0), .RST3(1'b0), {pp});
"""
src = src.replace("    assign a_out = a_out_q;", inst + "\n    assign a_out = a_out_q;", 1)
open(p, "w").write(src)
