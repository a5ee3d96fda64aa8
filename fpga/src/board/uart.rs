//! The board top's logic in the hardware IR: a UART receiver and transmitter, the command
//! decoder of [`super`], and the design's instance, in `lpgen_board_uart`; the oscillator
//! divider and that module in [`super::BOARD_TOP`]. Everything but the divider runs on the
//! divided clock, so there is no clock-domain crossing. The board has no reset pin: every
//! register has a power-on value ([`Module::power_on`]) and the design's `rst` comes from a
//! power-on counter and the `X` command.

use lpgen_hdl::ir::{cat, konst, mux, named, Module, StagePlan, SubModule, E};

use super::{Board, BAUD, BOARD_TOP};
use crate::wrap::Port;

/// The command bytes.
const CMD_STEP: u128 = 0x53; // 'S'
const CMD_READ: u128 = 0x52; // 'R'
const CMD_RESET: u128 = 0x58; // 'X'
const CMD_IDENTIFY: u128 = 0x49; // 'I'
const ID_MARK: u128 = 0x4c; // 'L', the first byte of the identify reply

/// What the UART logic is built for.
pub(super) struct Frame<'p> {
    pub board: Board,
    pub top: &'p str,
    pub ports: &'p [Port],
    pub clock_div: u32,
    /// System clock cycles per UART bit.
    pub baud_div: u64,
    /// Payload and reply bytes.
    pub p: u32,
    pub q: u32,
}

/// A state register with a power-on value.
fn reg(m: &mut Module, name: &str, width: u32, power_on: u128) -> E {
    let r = m.state(name, width, None);
    m.power_on(&r, power_on);
    r
}

/// The receiver: a start bit found, then sampled mid-bit. (`rx_done` for one cycle, `rx_byte`)
fn receiver(m: &mut Module, uart_rx: &E, f: &Frame) -> (E, E) {
    m.comment("UART receiver: the start bit found, then each bit sampled mid-bit");
    let rx_s1 = reg(m, "rx_s1", 1, 1);
    m.drive(&rx_s1, uart_rx, None);
    let rx = reg(m, "rx_s2", 1, 1);
    m.drive(&rx, &rx_s1, None);
    let cnt = reg(m, "rx_cnt", 16, 0);
    let bit = reg(m, "rx_bit", 4, 0);
    let busy = reg(m, "rx_busy", 1, 0);
    let done = reg(m, "rx_done", 1, 0);
    let shift = reg(m, "rx_sh", 8, 0);
    let byte = reg(m, "rx_byte", 8, 0);
    let start = m.wire("rx_start", &busy.not().and(&rx.not()));
    let tick = m.wire("rx_tick", &busy.and(&cnt.eq_k(0)));
    let (first, data) = (bit.eq_k(0), bit.le(&konst(4, 8)));
    let half = konst(16, u128::from(f.baud_div / 2));
    let full = konst(16, u128::from(f.baud_div - 1));
    let cnt_next = mux(&start, &half, &mux(&tick, &full, &cnt.sub(&konst(16, 1))));
    m.drive(&cnt, &cnt_next, Some(&start.or(&busy)));
    let bit_next = mux(&start, &konst(4, 0), &bit.add(&konst(4, 1)));
    m.drive(&bit, &bit_next, Some(&start.or(&tick.and(&data))));
    // A start bit that does not hold is a glitch; after the stop bit the byte is done.
    let busy_next = mux(&start, &konst(1, 1), &mux(&first, &rx.not(), &data));
    m.drive(&busy, &busy_next, Some(&start.or(&tick)));
    let sample = tick.and(&bit.ne(&konst(4, 0))).and(&data);
    m.drive(&shift, &cat(&[rx.clone(), shift.bits(7, 1)]), Some(&sample));
    let stop = m.wire("rx_stop", &tick.and(&data.not()).and(&rx));
    m.drive(&done, &stop, None);
    m.drive(&byte, &shift, Some(&stop));
    (done, byte)
}

/// The transmitter's registers: `tx_go` starts `tx_byte` when the shifter is idle.
struct Transmitter {
    go: E,
    byte: E,
    idle: E,
}

/// The transmitter: start bit, 8 data bits least significant first, stop bit.
fn transmitter(m: &mut Module, f: &Frame) -> Transmitter {
    m.comment("UART transmitter: start bit, 8 data bits LSB first, stop bit");
    let shift = reg(m, "tx_sh", 10, 0x3ff);
    let left = reg(m, "tx_left", 4, 0);
    let cnt = reg(m, "tx_cnt", 16, 0);
    let go = reg(m, "tx_go", 1, 0);
    let byte = reg(m, "tx_byte", 8, 0);
    let idle = m.wire("tx_idle", &left.eq_k(0));
    let load = m.wire("tx_load", &go.and(&idle));
    let next_bit = m.wire("tx_next_bit", &idle.not().and(&cnt.eq_k(0)));
    let moves = load.or(&next_bit);
    let framed = cat(&[konst(1, 1), byte.clone(), konst(1, 0)]);
    let shifted = cat(&[konst(1, 1), shift.bits(9, 1)]);
    m.drive(&shift, &mux(&load, &framed, &shifted), Some(&moves));
    let left_next = mux(&load, &konst(4, 10), &left.sub(&konst(4, 1)));
    m.drive(&left, &left_next, Some(&moves));
    let full = konst(16, u128::from(f.baud_div - 1));
    let cnt_next = mux(&moves, &full, &cnt.sub(&konst(16, 1)));
    m.drive(&cnt, &cnt_next, Some(&load.or(&idle.not())));
    m.output("uart_tx", &shift.bit(0));
    Transmitter { go, byte, idle }
}

/// `lpgen_board_uart`: receiver, transmitter, commands and the design, on one clock.
fn uart_module(m: &mut Module, f: &Frame) {
    let (pw, qw) = (f.p * 8, f.q * 8);
    let txw = qw.max(32);
    m.input("clk", 1);
    let uart_rx = m.input("uart_rx", 1);

    m.comment("Reset: held for 15 cycles after configuration, and for one cycle after 'X'");
    let por = reg(m, "por", 4, 0);
    let powering_up = m.wire("powering_up", &por.ne(&konst(4, 15)));
    m.drive(&por, &por.add(&konst(4, 1)), Some(&powering_up));
    let soft_rst = reg(m, "soft_rst", 1, 0);
    let rst = m.wire("rst", &powering_up.or(&soft_rst));

    let (rx_done, rx_byte) = receiver(m, &uart_rx, f);
    let tx = transmitter(m, f);

    m.comment("Commands: 'S' + payload steps the design, 'R' reads, 'X' resets, 'I' identifies");
    let pay = reg(m, "pay", pw, 0);
    let res = reg(m, "res", qw, 0);
    let txbuf = reg(m, "txbuf", txw, 0);
    let pay_left = reg(m, "pay_left", 8, 0);
    let tx_bytes = reg(m, "tx_bytes", 8, 0);
    let step = reg(m, "step", 1, 0);
    let have = reg(m, "have", 1, 0);
    let sent = reg(m, "sent", 1, 0);
    // A reply goes out one byte per idle transmitter: tx_go for one cycle, then the shifter
    // is busy and the byte counts as sent. Commands wait until the reply is out.
    let replying = m.wire("replying", &tx_bytes.ne(&konst(8, 0)));
    let listening = replying.not().and(&rx_done);
    let send = m.wire(
        "send",
        &replying.and(&tx.idle).and(&tx.go.not()).and(&sent.not()),
    );
    let sent_one = m.wire("sent_one", &replying.and(&tx.idle.not()).and(&sent));
    let expecting = m.wire("expecting", &pay_left.ne(&konst(8, 0)));
    let command = m.wire("command", &listening.and(&expecting.not()));
    let payload = m.wire("payload", &listening.and(&expecting));
    let is = |m: &mut Module, name: &str, code: u128| {
        let e = command.and(&rx_byte.eq(&named(name, 8, code)));
        m.wire(&name.to_lowercase(), &e)
    };
    let cmd_step = is(m, "CMD_STEP", CMD_STEP);
    let cmd_read = is(m, "CMD_READ", CMD_READ);
    let cmd_reset = is(m, "CMD_RESET", CMD_RESET);
    let cmd_identify = is(m, "CMD_IDENTIFY", CMD_IDENTIFY);

    let pay_next = if pw == 8 {
        rx_byte.clone()
    } else {
        cat(&[rx_byte.clone(), pay.bits(pw - 1, 8)])
    };
    m.drive(&pay, &pay_next, Some(&payload));
    let left_next = mux(&payload, &pay_left.sub(&konst(8, 1)), &konst(8, f.p.into()));
    m.drive(&pay_left, &left_next, Some(&payload.or(&cmd_step)));
    m.drive(&step, &payload.and(&pay_left.eq_k(1)), None);
    m.drive(&soft_rst, &cmd_reset, None);
    m.drive(&tx.go, &send, None);
    m.drive(&tx.byte, &txbuf.bits(7, 0), Some(&send));
    m.drive(&sent, &send, Some(&send.or(&sent_one)));
    let identity = cat(&[
        konst(7, 0),
        have.clone(),
        konst(8, f.q.into()),
        konst(8, f.p.into()),
        named("ID_MARK", 8, ID_MARK),
    ])
    .zext(txw);
    let reply = mux(&cmd_read, &res.zext(txw), &identity);
    let txbuf_next = mux(&send, &txbuf.shr(&konst(8, 8)), &reply);
    m.drive(
        &txbuf,
        &txbuf_next,
        Some(&send.or(&cmd_read).or(&cmd_identify)),
    );
    let count = mux(&cmd_read, &konst(8, f.q.into()), &konst(8, 4));
    let bytes_next = mux(&sent_one, &tx_bytes.sub(&konst(8, 1)), &count);
    m.drive(
        &tx_bytes,
        &bytes_next,
        Some(&sent_one.or(&cmd_read).or(&cmd_identify)),
    );

    m.comment(&format!("The design, {}", f.top));
    let mut inputs = vec![];
    let mut at = 0;
    for x in f.ports {
        let e = match (x.input, x.name.as_str()) {
            (true, "clk") => continue,
            (true, "rst") => rst.clone(),
            (true, "in_valid") => step.clone(),
            (true, _) => {
                at += x.width;
                pay.bits(at - 1, at - x.width)
            }
            (false, _) => continue,
        };
        inputs.push((x.name.as_str(), e));
    }
    let refs: Vec<(&str, &E)> = inputs.iter().map(|(n, e)| (*n, e)).collect();
    let unit = m.instance(&crate::wrap::definition(f.top, f.ports), "u", &refs);
    // The reply: every output but out_valid, from bit 0; the bytes beyond them read 0.
    let mut outs: Vec<E> = f
        .ports
        .iter()
        .filter(|x| !x.input && x.name != "out_valid")
        .rev()
        .map(|x| unit.port(&x.name))
        .collect();
    let out_bits: u32 = outs.iter().map(|e| e.width).sum();
    if out_bits < qw {
        outs.insert(0, konst(qw - out_bits, 0));
    }
    let dout = m.wire("dout", &cat(&outs));
    // A design without out_valid is sampled every cycle.
    let dout_valid = match f.ports.iter().any(|x| !x.input && x.name == "out_valid") {
        true => unit.port("out_valid"),
        false => konst(1, 1),
    };
    let capture = m.wire("capture", &dout_valid.and(&rst.not()));
    m.drive(&res, &dout, Some(&capture));
    m.drive(&have, &rst.not().and(&capture.or(&have)), None);
    let led = if f.board.led_active_low() {
        have.not()
    } else {
        have
    };
    m.output("led", &led);
}

/// The board top's Verilog: [`BOARD_TOP`] (oscillator divider) and `lpgen_board_uart`.
pub(super) fn verilog(f: &Frame) -> String {
    let sys_hz = f.board.clock_hz() / u64::from(f.clock_div);
    let mut m = Module::new(BOARD_TOP, StagePlan::none());
    m.header = vec![
        format!(
            "{BOARD_TOP}: {} behind a UART command interface on the {}, generated by",
            f.top,
            f.board.name()
        ),
        format!(
            "lpgen-fpga. {BAUD} baud 8N1 at a {} MHz system clock (oscillator / {}).",
            sys_hz as f64 / 1e6,
            f.clock_div
        ),
        format!(
            "'S' + {} bytes: one step; 'R': read {} bytes; 'X': reset; 'I': identify.",
            f.p, f.q
        ),
    ];
    let clk = m.input("clk", 1);
    let uart_rx = m.input("uart_rx", 1);
    let def = m.define_ok("lpgen_board_uart", StagePlan::none(), |u| uart_module(u, f));
    let sys_clk = if f.clock_div == 1 {
        clk
    } else {
        m.comment(&format!(
            "The system clock: the oscillator divided by {}",
            f.clock_div
        ));
        let k = f.clock_div.trailing_zeros();
        let div = reg(&mut m, "div", k, 0);
        m.drive(&div, &div.add(&konst(k, 1)), None);
        m.wire("sys_clk", &div.bit(k - 1))
    };
    let uart = m.instance(&def, "uart", &[("clk", &sys_clk), ("uart_rx", &uart_rx)]);
    m.output("uart_tx", &uart.port("uart_tx"));
    m.output("led", &uart.port("led"));
    let mut text = String::new();
    for d in SubModule::closure(&m.children()) {
        if !d.verilog.is_empty() {
            text.push_str(&d.verilog);
            text.push('\n');
        }
    }
    text.push_str(&lpgen_hdl::emit::verilog(&m));
    text
}
