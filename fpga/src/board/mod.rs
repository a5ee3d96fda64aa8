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
//! divider runs on the divided clock, so there is no clock-domain crossing. The logic is
//! built in the hardware IR (`uart`) and printed by its emitter like every generated module.

mod uart;

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
                 set_io -nowarn clk 35\n\
                 set_io -nowarn uart_rx 6\n\
                 set_io -nowarn uart_tx 9\n\
                 set_io -nowarn led 11\n"
            }
            Board::Ulx3s85f => {
                "# ULX3S (LFE5U-85F): 25 MHz oscillator, FTDI UART, LED D0\n\
                 LOCATE COMP \"clk\" SITE \"G2\";\n\
                 IOBUF PORT \"clk\" PULLMODE=NONE IO_TYPE=LVCMOS33;\n\
                 FREQUENCY PORT \"clk\" 25 MHZ;\n\
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

/// Verilog-2005 text of the board top around module `top` with `ports`: [`BOARD_TOP`] and
/// the module it instantiates, `lpgen_board_uart`.
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
    Ok(uart::verilog(&uart::Frame {
        board,
        top,
        ports,
        clock_div,
        baud_div,
        p,
        q,
    }))
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
    let mut report = crate::run(design, &opts)?;
    // With a divider the oscillator (`clk`) only clocks the counter; the design runs on the
    // divided clock, and the figure reported is that clock's.
    let slowest = report
        .clocks
        .iter()
        .filter(|(n, _)| clock_div == 1 || !crate::report::is_clk_net(n))
        .map(|(_, f)| *f)
        .fold(f64::INFINITY, f64::min);
    if clock_div > 1 && slowest.is_finite() {
        report.fmax_mhz = Some(slowest);
    }
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
        assert!(v.contains("module lpgen_board_uart ("));
        assert!(v.contains("module lpgen_board ("));
        assert!(v.contains(".a_in(pay[23:0])"));
        assert!(v.contains(".b_in(pay[47:24])"));
        assert!(v.contains(".clear(pay[48])"));
        assert!(v.contains(".last(pay[49])"));
        assert!(v.contains(".in_valid(step)"));
        assert!(v.contains(".rst(rst)"));
        assert!(v.contains("assign dout = u_c_out;"));
        assert!(v.contains("assign capture = (u_out_valid & ~rst);"));
        // 12 MHz / 115200 rounds to 104 cycles a bit; a start bit waits half of one.
        assert!(v.contains("rx_cnt <= (rx_start ? 16'd52 : (rx_tick ? 16'd103 :"));
        assert!(v.contains("assign led = ~have;"));
        assert!(v.contains("reg  [3:0] por = 4'd0;"));
        assert!(v.contains("reg  [9:0] tx_sh = 10'd1023;"));
        assert!(v.contains("lpgen_board_uart uart (\n        .clk(clk),"));
        let e = board_top(Board::Ulx3s85f, "arr", &array_ports(), 4).unwrap();
        assert!(e.contains("assign sys_clk = div[1];"));
        assert!(e.contains(".clk(sys_clk)"));
        assert!(e.contains("assign led = have;"));
        // Replies are 6 bytes of c_out; a 1-byte reply design gets its padding.
        let mut small = array_ports();
        small[7].width = 5;
        let s = board_top(Board::IceBreaker, "arr", &small, 1).unwrap();
        assert!(s.contains("assign dout = {3'd0, u_c_out};"), "{s}");
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
            .contains("LOCATE COMP \"clk\" SITE \"G2\";"));
    }
}
