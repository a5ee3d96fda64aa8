`timescale 1ns/1ps
// The generated fix:7:8 PE at stages 6 against its hand-mapped copy (module pe_dsp), cycle for
// cycle: random operands, bubbles, dot products of 1 to 12 terms, saturating ones among them.
module tb;
  reg clk = 0, rst = 1, valid = 0, clear = 0, last = 0;
  reg [15:0] a = 0, b = 0;
  wire [15:0] r0, r1, ao0, ao1, bo0, bo1; wire v0, v1, c0, c1, l0, l1;
  lpgen_pe_fix_fix_7_8_s5 g (.clk(clk), .rst(rst), .a(a), .b(b), .valid(valid), .clear(clear), .last(last),
    .a_out(ao0), .b_out(bo0), .valid_out(v0), .clear_out(c0), .last_out(l0), .result(r0));
  pe_dsp d (.clk(clk), .rst(rst), .a(a), .b(b), .valid(valid), .clear(clear), .last(last),
    .a_out(ao1), .b_out(bo1), .valid_out(v1), .clear_out(c1), .last_out(l1), .result(r1));
  always #5 clk = ~clk;
  integer i, bad = 0, results = 0, k = 0;
  reg [15:0] prev = 0;
  initial begin
    repeat (3) @(posedge clk);
    rst <= 0;
    for (i = 0; i < 200000; i = i + 1) begin
      @(posedge clk);
      // random operands, mostly valid; dot products of random length 1..12, some near saturation
      a <= (i % 7 == 0) ? 16'h7fff : $random; b <= (i % 11 == 0) ? 16'h8000 : $random;
      valid <= ($random % 5) != 0;
      clear <= (k == 0);
      k = (k + 1) % (1 + (i / 997) % 12);
      last <= (k == 0);
      if (r0 !== r1) begin bad = bad + 1; if (bad < 5) $display("mismatch at %0d: %h vs %h", i, r0, r1); end
      if (r0 !== prev) begin results = results + 1; prev = r0; end
    end
    $display("cycles %0d, result changes %0d, mismatches %0d", i, results, bad);
    $finish;
  end
endmodule
