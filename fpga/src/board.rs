//! A board top for loading a generated design (typically an array) on a real board behind a
//! simple UART command interface: 115200 baud, 8N1.
//!
//! Commands (one byte each, then the payload if any):
//! - `S` + P payload bytes: one step. The payload holds every design input except `clk`,
//!   `rst` and `in_valid`, in manifest order from bit 0, bytes least significant first; the
//!   design sees it with `in_valid` high for exactly one cycle. No reply.
//! - `R`: read. Replies with Q bytes: every design output except `out_valid`, in manifest
//!   order from bit 0, least significant byte first, as captured at the last `out_valid`.
//! - `X`: reset the design (`rst` for one cycle). No reply.
//! - `I`: identify. Replies `L`, P, Q, and 1 if a result has been captured since reset else 0.
//!
//! Between steps the design sees bubbles (`in_valid` low): accumulators persist, so a host
//! streams a tile step by step (docs/rtl.md). The board clock may be divided by a power of
//! two (`clock_div`) when the design is slower than the oscillator; everything but the
//! divider runs on the divided clock, so there is no clock-domain crossing.

use crate::wrap::Port;
use crate::{FpgaError, Target};

/// Boards with a bitstream flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Board {
    /// iCEBreaker (iCE40UP5K-SG48, 12 MHz oscillator, FTDI UART).
    IceBreaker,
    /// ULX3S with LFE5U-85F (CABGA381, 25 MHz oscillator, FTDI UART).
    Ulx3s85f,
}

impl Board {
    pub const ALL: [Board; 2] = [Board::IceBreaker, Board::Ulx3s85f];

    pub fn name(self) -> &'static str {
        match self {
            Board::IceBreaker => "icebreaker",
            Board::Ulx3s85f => "ulx3s-85f",
        }
    }

    pub fn target(self) -> Target {
        match self {
            Board::IceBreaker => Target::Ice40Up5k,
            Board::Ulx3s85f => Target::Ecp5_85k,
        }
    }

    pub fn clock_hz(self) -> u64 {
        match self {
            Board::IceBreaker => 12_000_000,
            Board::Ulx3s85f => 25_000_000,
        }
    }

    /// Pin constraints: the iCEBreaker's `.pcf` (its user LED is active low) or the
    /// ULX3S's `.lpf`.
    pub fn constraints(self) -> &'static str {
        match self {
            Board::IceBreaker => {
                "# iCEBreaker v1.0: 12 MHz oscillator, FTDI channel B UART, red user LED (active low)\n\
                 set_io -nowarn clk_in 35\n\
                 set_io -nowarn uart_rx 6\n\
                 set_io -nowarn uart_tx 9\n\
                 set_io -nowarn led 11\n"
            }
            Board::Ulx3s85f => {
                "# ULX3S (LFE5U-85F): 25 MHz oscillator, FTDI UART, LED D0\n\
                 LOCATE COMP \"clk_in\" SITE \"G2\";\n\
                 IOBUF PORT \"clk_in\" PULLMODE=NONE IO_TYPE=LVCMOS33;\n\
                 FREQUENCY PORT \"clk_in\" 25 MHZ;\n\
                 LOCATE COMP \"uart_rx\" SITE \"M1\";\n\
                 IOBUF PORT \"uart_rx\" PULLMODE=UP IO_TYPE=LVCMOS33;\n\
                 LOCATE COMP \"uart_tx\" SITE \"L4\";\n\
                 IOBUF PORT \"uart_tx\" PULLMODE=UP IO_TYPE=LVCMOS33 DRIVE=4;\n\
                 LOCATE COMP \"led\" SITE \"B2\";\n\
                 IOBUF PORT \"led\" PULLMODE=NONE IO_TYPE=LVCMOS33 DRIVE=4;\n"
            }
        }
    }

    fn led_active_low(self) -> bool {
        self == Board::IceBreaker
    }
}

impl std::str::FromStr for Board {
    type Err = FpgaError;
    fn from_str(s: &str) -> Result<Board, FpgaError> {
        Board::ALL
            .into_iter()
            .find(|b| b.name() == s)
            .ok_or_else(|| {
                FpgaError::Usage(format!(
                    "unknown board {s:?}: expected icebreaker or ulx3s-85f"
                ))
            })
    }
}

pub const BAUD: u64 = 115_200;
/// The board top's module name.
pub const BOARD_TOP: &str = "lpgen_board";

/// Payload and reply sizes in bytes: (P, Q).
pub fn frame_bytes(ports: &[Port]) -> (u32, u32) {
    let p: u32 = ports
        .iter()
        .filter(|p| p.input && !matches!(p.name.as_str(), "clk" | "rst" | "in_valid"))
        .map(|p| p.width)
        .sum();
    let q: u32 = ports
        .iter()
        .filter(|p| !p.input && p.name != "out_valid")
        .map(|p| p.width)
        .sum();
    (p.div_ceil(8), q.div_ceil(8))
}

/// Verilog-2005 text of the board top around module `top` with `ports`.
pub fn board_top(
    board: Board,
    top: &str,
    ports: &[Port],
    clock_div: u32,
) -> Result<String, FpgaError> {
    if !clock_div.is_power_of_two() || clock_div > 64 {
        return Err(FpgaError::Usage(format!(
            "--clock-div must be 1, 2, 4, ... 64, not {clock_div}"
        )));
    }
    let sys_hz = board.clock_hz() / u64::from(clock_div);
    let baud_div = (sys_hz + BAUD / 2) / BAUD;
    if baud_div < 16 {
        return Err(FpgaError::Usage(format!(
            "a {} MHz system clock is too slow for {BAUD} baud: use a smaller --clock-div",
            sys_hz as f64 / 1e6
        )));
    }
    let (p, q) = frame_bytes(ports);
    if p == 0 || q == 0 || p > 255 || q > 255 {
        return Err(FpgaError::Design(format!(
            "{top}: the UART frame needs 1..=255 payload and reply bytes, not {p} and {q}"
        )));
    }
    let has = |n: &str| ports.iter().any(|x| x.name == n);
    let mut conns = Vec::new();
    let (mut at_in, mut at_out) = (0u32, 0u32);
    for x in ports {
        let src = match (x.input, x.name.as_str()) {
            (true, "clk") => "sys_clk".to_string(),
            (true, "rst") => "rst".to_string(),
            (true, "in_valid") => "step".to_string(),
            (false, "out_valid") => "dout_valid".to_string(),
            (true, _) => {
                let s = format!("pay[{}:{at_in}]", at_in + x.width - 1);
                at_in += x.width;
                s
            }
            (false, _) => {
                let s = format!("dout[{}:{at_out}]", at_out + x.width - 1);
                at_out += x.width;
                s
            }
        };
        conns.push(format!("    .{}({src})", x.name));
    }
    let (pw, qw) = (p * 8, q * 8);
    let clock = if clock_div == 1 {
        "  wire sys_clk = clk_in;\n".to_string()
    } else {
        let k = clock_div.trailing_zeros();
        format!(
            "  reg [{}:0] div = 0;\n  always @(posedge clk_in) div <= div + 1'b1;\n  wire sys_clk = div[{}];\n",
            k - 1,
            k - 1
        )
    };
    let valid = if has("out_valid") {
        "  wire dout_valid;\n"
    } else {
        // A design without out_valid is sampled every cycle.
        "  wire dout_valid = 1'b1;\n"
    };
    let step_decl = if has("in_valid") {
        ""
    } else {
        "  // the design has no in_valid: the payload drives it directly\n"
    };
    // The reply bytes beyond the outputs read as zero.
    let pad = if at_out < qw {
        format!("  assign dout[{}:{at_out}] = {}'d0;\n", qw - 1, qw - at_out)
    } else {
        String::new()
    };
    let led = if board.led_active_low() {
        "~have"
    } else {
        "have"
    };
    Ok(format!(
        r#"// {BOARD_TOP}: {top} behind a UART command interface on the {board_name}, generated by
// lpgen-fpga. {baud} baud 8N1 at a {sys_mhz} MHz system clock (oscillator / {clock_div}).
// 'S' + {p} bytes: one step; 'R': read {q} bytes; 'X': reset; 'I': identify.
module {BOARD_TOP} (
  input wire clk_in,
  input wire uart_rx,
  output wire uart_tx,
  output wire led
);
{clock}{valid}{step_decl}  reg [3:0] por = 4'd0;
  reg soft_rst = 1'b0;
  always @(posedge sys_clk) if (por != 4'hf) por <= por + 4'd1;
  wire rst = (por != 4'hf) | soft_rst;

  // UART receiver: start bit found, sampled mid-bit.
  reg rx_s1 = 1'b1, rx_s2 = 1'b1;
  always @(posedge sys_clk) begin rx_s1 <= uart_rx; rx_s2 <= rx_s1; end
  reg [15:0] rx_cnt = 16'd0;
  reg [3:0] rx_bit = 4'd0;
  reg rx_busy = 1'b0, rx_done = 1'b0;
  reg [7:0] rx_sh = 8'd0, rx_byte = 8'd0;
  always @(posedge sys_clk) begin
    rx_done <= 1'b0;
    if (!rx_busy) begin
      if (!rx_s2) begin rx_busy <= 1'b1; rx_cnt <= 16'd{half}; rx_bit <= 4'd0; end
    end else if (rx_cnt != 16'd0) rx_cnt <= rx_cnt - 16'd1;
    else begin
      rx_cnt <= 16'd{div_m1};
      if (rx_bit == 4'd0) begin
        if (rx_s2) rx_busy <= 1'b0;
        rx_bit <= 4'd1;
      end else if (rx_bit <= 4'd8) begin
        rx_sh <= {{rx_s2, rx_sh[7:1]}};
        rx_bit <= rx_bit + 4'd1;
      end else begin
        rx_busy <= 1'b0;
        if (rx_s2) begin rx_done <= 1'b1; rx_byte <= rx_sh; end
      end
    end
  end

  // UART transmitter: start, 8 data bits LSB first, stop.
  reg [9:0] tx_sh = 10'h3ff;
  reg [3:0] tx_left = 4'd0;
  reg [15:0] tx_cnt = 16'd0;
  assign uart_tx = tx_sh[0];
  wire tx_idle = (tx_left == 4'd0);
  reg tx_go = 1'b0;
  reg [7:0] tx_byte = 8'd0;
  always @(posedge sys_clk) begin
    if (tx_go && tx_idle) begin
      tx_sh <= {{1'b1, tx_byte, 1'b0}};
      tx_left <= 4'd10;
      tx_cnt <= 16'd{div_m1};
    end else if (!tx_idle) begin
      if (tx_cnt != 16'd0) tx_cnt <= tx_cnt - 16'd1;
      else begin
        tx_cnt <= 16'd{div_m1};
        tx_sh <= {{1'b1, tx_sh[9:1]}};
        tx_left <= tx_left - 4'd1;
      end
    end
  end

  // Commands.
  reg [{pw_m1}:0] pay = {pw}'d0;
  reg [{qw_m1}:0] res = {qw}'d0;
  reg [{txw_m1}:0] txbuf = {txw}'d0;
  wire [{qw_m1}:0] dout;
  reg [7:0] pay_left = 8'd0, tx_bytes = 8'd0;
  reg step = 1'b0, have = 1'b0, sent = 1'b0;
  always @(posedge sys_clk) begin
    step <= 1'b0;
    soft_rst <= 1'b0;
    tx_go <= 1'b0;
    if (dout_valid && !rst) begin res <= dout; have <= 1'b1; end
    if (rst) have <= 1'b0;
    if (tx_bytes != 8'd0) begin
      // One byte per idle transmitter; tx_go is held one cycle, then the shifter is busy.
      if (tx_idle && !tx_go && !sent) begin
        tx_byte <= txbuf[7:0];
        txbuf <= txbuf >> 8;
        tx_go <= 1'b1;
        sent <= 1'b1;
      end else if (!tx_idle && sent) begin
        sent <= 1'b0;
        tx_bytes <= tx_bytes - 8'd1;
      end
    end else if (rx_done) begin
      if (pay_left != 8'd0) begin
        pay <= {pay_next};
        pay_left <= pay_left - 8'd1;
        if (pay_left == 8'd1) step <= 1'b1;
      end else if (rx_byte == 8'h53) pay_left <= 8'd{p};
      else if (rx_byte == 8'h52) begin txbuf <= res; tx_bytes <= 8'd{q}; end
      else if (rx_byte == 8'h58) soft_rst <= 1'b1;
      else if (rx_byte == 8'h49) begin
        txbuf <= {{7'd0, have, 8'd{q}, 8'd{p}, 8'h4c}};
        tx_bytes <= 8'd4;
      end
    end
  end
  assign led = {led};

  {top} u (
{conns}
  );
{pad}endmodule
"#,
        board_name = board.name(),
        baud = BAUD,
        sys_mhz = sys_hz as f64 / 1e6,
        half = baud_div / 2,
        div_m1 = baud_div - 1,
        pw_m1 = pw - 1,
        qw_m1 = qw - 1,
        pay_next = if pw == 8 {
            "rx_byte".to_string()
        } else {
            format!("{{rx_byte, pay[{}:8]}}", pw - 1)
        },
        txw = qw.max(32),
        txw_m1 = qw.max(32) - 1,
        conns = conns.join(",\n"),
    ))
}

/// Runs the bitstream flow of `design` behind the UART top on `board`; fails when the
/// placed design is slower than the board's (divided) clock.
pub fn run_board(
    design: &lpgen_hdl::Design,
    board: Board,
    clock_div: u32,
    mut opts: crate::FlowOptions,
) -> Result<crate::Report, FpgaError> {
    let ports = crate::wrap::ports_from_manifest(&design.manifest)?;
    let text = board_top(board, &design.top, &ports, clock_div)?;
    let sys_mhz = board.clock_hz() as f64 / f64::from(clock_div) / 1e6;
    opts.target = board.target();
    opts.wrap = false;
    opts.bitstream = true;
    opts.extra_sources = vec![("board.v".into(), text)];
    opts.top_override = Some(BOARD_TOP.into());
    opts.constraints = Some(board.constraints().into());
    opts.freq_mhz = Some(opts.freq_mhz.unwrap_or(sys_mhz));
    let report = crate::run(design, &opts)?;
    // With a divider the oscillator only clocks the counter; the design runs on sys_clk.
    let slowest = report
        .clocks
        .iter()
        .filter(|(n, _)| clock_div == 1 || !n.contains("clk_in"))
        .map(|(_, f)| *f)
        .fold(f64::INFINITY, f64::min);
    if slowest < sys_mhz {
        let need = (sys_mhz / slowest).ceil() as u32;
        return Err(FpgaError::DoesNotFit(format!(
            "{} reaches {slowest:.2} MHz on the {} but its system clock is {sys_mhz} MHz: use --clock-div {}",
            design.top,
            board.name(),
            (clock_div * need).next_power_of_two()
        )));
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn port(name: &str, input: bool, width: u32) -> Port {
        Port {
            name: name.into(),
            input,
            width,
        }
    }

    fn array_ports() -> Vec<Port> {
        vec![
            port("clk", true, 1),
            port("rst", true, 1),
            port("a_in", true, 24),
            port("b_in", true, 24),
            port("in_valid", true, 1),
            port("clear", true, 1),
            port("last", true, 1),
            port("c_out", false, 48),
            port("out_valid", false, 1),
        ]
    }

    #[test]
    fn frames_cover_the_ports() {
        assert_eq!(frame_bytes(&array_ports()), (7, 6));
    }

    #[test]
    fn board_top_wires_the_design() {
        let v = board_top(Board::IceBreaker, "arr", &array_ports(), 1).unwrap();
        assert!(v.contains("module lpgen_board ("));
        assert!(v.contains(".a_in(pay[23:0])"));
        assert!(v.contains(".b_in(pay[47:24])"));
        assert!(v.contains(".clear(pay[48:48])"));
        assert!(v.contains(".last(pay[49:49])"));
        assert!(v.contains(".in_valid(step)"));
        assert!(v.contains(".c_out(dout[47:0])"));
        assert!(v.contains(".out_valid(dout_valid)"));
        assert!(v.contains(".clk(sys_clk)"));
        // 12 MHz / 115200 rounds to 104 cycles a bit.
        assert!(v.contains("rx_cnt <= 16'd103;"));
        assert!(v.contains("assign led = ~have;"));
        let e = board_top(Board::Ulx3s85f, "arr", &array_ports(), 4).unwrap();
        assert!(e.contains("wire sys_clk = div[1];"));
        assert!(e.contains("assign led = have;"));
    }

    #[test]
    fn board_refusals() {
        let p = array_ports();
        assert!(board_top(Board::IceBreaker, "arr", &p, 3).is_err());
        // 12 MHz / 64 is too slow for 115200 baud.
        assert!(board_top(Board::IceBreaker, "arr", &p, 64).is_err());
        assert!(board_top(Board::IceBreaker, "arr", &p[..2], 1).is_err());
        assert!("de0".parse::<Board>().is_err());
        assert_eq!(
            "ulx3s-85f".parse::<Board>().unwrap().target(),
            Target::Ecp5_85k
        );
        assert!(Board::IceBreaker
            .constraints()
            .contains("set_io -nowarn uart_rx 6"));
        assert!(Board::Ulx3s85f
            .constraints()
            .contains("LOCATE COMP \"clk_in\" SITE \"G2\";"));
    }
}
