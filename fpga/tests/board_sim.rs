//! The UART board top in simulation (Icarus): identify, two steps, read, reset. A small
//! stand-in design keeps it to about a second. Skipped with a notice without iverilog.

use std::process::Command;

use lpgen_fpga::board::{board_top, Board};
use lpgen_fpga::wrap::Port;

const DUT: &str = r#"
module dut (input wire clk, input wire rst, input wire in_valid,
            input wire [7:0] a, input wire [7:0] b, input wire [1:0] op,
            output reg [11:0] y, output reg out_valid);
  always @(posedge clk) begin
    out_valid <= rst ? 1'b0 : in_valid;
    if (in_valid) y <= {2'b00, op, a} + {4'b0000, b};
  end
endmodule
"#;

const TB: &str = r#"
`timescale 1ns/1ps
module tb;
  reg clk = 0, rx = 1;
  wire tx, led;
  lpgen_board top (.clk(clk), .uart_rx(rx), .uart_tx(tx), .led(led));
  always #41.667 clk = ~clk;
  localparam BIT = 104 * 83.333;
  task send(input [7:0] c);
    integer i;
    begin
      rx = 0; #(BIT);
      for (i = 0; i < 8; i = i + 1) begin rx = c[i]; #(BIT); end
      rx = 1; #(BIT);
    end
  endtask
  task recv(output [7:0] c);
    integer i;
    begin
      @(negedge tx); #(BIT * 1.5);
      for (i = 0; i < 8; i = i + 1) begin c[i] = tx; #(BIT); end
    end
  endtask
  reg [7:0] r0, r1, r2, r3;
  // A reply that never comes ends the run instead of hanging it.
  initial begin #(BIT * 400); $display("TIMEOUT"); $finish; end
  initial begin
    #(BIT * 3);
    fork send("I"); begin recv(r0); recv(r1); recv(r2); recv(r3); end join
    $display("ID %h %h %h %h", r0, r1, r2, r3);
    send("S"); send(8'd200); send(8'd100); send(8'd2);
    fork send("R"); begin recv(r0); recv(r1); end join
    $display("R1 %h %h led %b", r0, r1, led);
    send("S"); send(8'd1); send(8'd2); send(8'd0);
    fork send("R"); begin recv(r0); recv(r1); end join
    $display("R2 %h %h", r0, r1);
    send("X"); #(BIT);
    fork send("I"); begin recv(r0); recv(r1); recv(r2); recv(r3); end join
    $display("ID %h %h %h %h", r0, r1, r2, r3);
    $finish;
  end
endmodule
"#;

fn on_path(name: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(name).is_file()))
}

#[test]
fn uart_top_steps_and_reads_back() {
    if !on_path("iverilog") || !on_path("vvp") {
        eprintln!("skipped: iverilog not on PATH (scripts/setup.sh installs it)");
        return;
    }
    let p = |name: &str, input, width| Port {
        name: name.into(),
        input,
        width,
    };
    let ports = [
        p("clk", true, 1),
        p("rst", true, 1),
        p("in_valid", true, 1),
        p("a", true, 8),
        p("b", true, 8),
        p("op", true, 2),
        p("y", false, 12),
        p("out_valid", false, 1),
    ];
    // At the oscillator's 12 MHz and at half of it: the bit time is the same 104 / 12 MHz.
    for clock_div in [1, 2] {
        let top = board_top(Board::IceBreaker, "dut", &ports, clock_div).unwrap();
        simulate(&top, clock_div);
    }
}

fn simulate(top: &str, clock_div: u32) {
    let dir = std::env::temp_dir().join(format!(
        "lpgen-board-sim-{}-{clock_div}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("board.v"), top).unwrap();
    std::fs::write(dir.join("dut.v"), DUT).unwrap();
    std::fs::write(dir.join("tb.v"), TB).unwrap();
    let c = Command::new("iverilog")
        .args(["-g2005", "-o", "sim", "tb.v", "board.v", "dut.v"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(c.status.success(), "{}", String::from_utf8_lossy(&c.stderr));
    let r = Command::new("vvp")
        .arg("sim")
        .current_dir(&dir)
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&r.stdout);
    let lines: Vec<&str> = out.lines().filter(|l| !l.starts_with("VCD")).collect();
    // 'L', 3 payload bytes (18 bits), 2 reply bytes (12 bits), no result yet.
    assert_eq!(lines[0], "ID 4c 03 02 00", "clock / {clock_div}: {out}");
    // y = {op, a} + b = 0x2c8 + 100 = 0x32c; the LED (active low) is lit.
    assert_eq!(lines[1], "R1 2c 03 led 0", "{out}");
    assert_eq!(lines[2], "R2 03 00", "{out}");
    // After 'X' the captured flag is clear again.
    assert_eq!(lines[3], "ID 4c 03 02 00", "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}
