//! Streaming a matrix product through a generated `array` (the host protocol of docs/rtl.md,
//! `array`), for every PE kind: words of the format, or MX blocks (`rtl/mx.rs`).

use lpgen_hdl::units::array_protocol::{
    clears, Beat, Host, Last, Protocol, PADDING_ROW_STATE, ROW_STATE_BITS,
};
use lpgen_verif::layout::{get_bits, put_bits};

use super::Device;
use crate::machine::Mat;
use crate::TrainError;

/// Writes operand (i, k) of A (or (k, j) of B) at a bit position of an input buffer: the
/// caller's words or blocks, and the padding beyond the matrix (i ≥ its rows) for the PEs
/// outside it.
pub(super) type Put<'a> = &'a dyn Fn(&mut [u64], usize, usize, usize);

/// The product to stream: A is m × k, B is k × n, one step per k.
pub(super) struct Operands<'a> {
    pub m: usize,
    pub k: usize,
    pub n: usize,
    /// Bits of one operand on `a_in`/`b_in` (a word of the format, or a block).
    pub bits: u32,
    /// `a(buf, pos, i, k)`: `A[i][k]` at bit `pos`.
    pub a: Put<'a>,
    /// `b(buf, pos, k, j)`: `B[k][j]` at bit `pos`.
    pub b: Put<'a>,
    /// Bits of a result word on `c_out`.
    pub out_bits: u32,
    /// A stochastic array's stream: the state of element (i, j) at i·n + j (`sr_row_state`,
    /// row r of a tile at (i0, j0) takes element (i0 + r, j0)'s, given with the last step).
    pub states: Option<&'a [u32]>,
}

/// Step k of a tile (at corner `at`, the `tile`-th of the product).
struct TileStep {
    tile: usize,
    at: (usize, usize),
    k: usize,
    last: bool,
}

impl Last for TileStep {
    fn last(&self) -> bool {
        self.last
    }
}

/// Streams A·B of two matrices of `w`-bit words through `dev`, padded with the format's
/// `zero` ([`stream`]).
pub(super) fn stream_tiles(
    dev: &mut Device,
    shape: (usize, usize),
    w: u32,
    zero: u64,
    (a, b): (&Mat, &Mat),
    shift: Option<i64>,
    states: Option<&[u32]>,
) -> Result<(Mat, (u64, u64)), TrainError> {
    let put_a = |buf: &mut [u64], pos: usize, i: usize, k: usize| {
        put_bits(buf, pos, w, if i < a.rows { a.at(i, k) } else { zero });
    };
    let put_b = |buf: &mut [u64], pos: usize, k: usize, j: usize| {
        put_bits(buf, pos, w, if j < b.cols { b.at(k, j) } else { zero });
    };
    let ops = Operands {
        m: a.rows,
        k: a.cols,
        n: b.cols,
        bits: w,
        a: &put_a,
        b: &put_b,
        out_bits: w,
        states,
    };
    stream(dev, shape, &ops, zero, shift)
}

/// Streams the tiles of A·B through an array `dev` of `rows` × `cols` PEs; returns the m × n
/// result words (`fill` where nothing is read, i.e. nowhere). With `shift` (a dfix array: the
/// read-out shift, given with each tile's last step) it also counts the set `overflow` and
/// `overflow_half` flags of the outputs that are not padding.
///
/// The host protocol of the array (`lpgen_hdl::units::array_protocol`, docs/rtl.md): tile i
/// ([`Protocol::tiles`], row-major) goes to accumulation i mod P, each accumulation takes its
/// tiles in order, one step k = 0..K−1 in each of its cycles, and the protocol's [`Host`]
/// holds a `last` step back (a bubble) until the spacing allows it. Results come out in the
/// order of the `last` steps.
pub(super) fn stream(
    dev: &mut Device,
    (rows, cols): (usize, usize),
    ops: &Operands<'_>,
    fill: u64,
    shift: Option<i64>,
) -> Result<(Mat, (u64, u64)), TrainError> {
    let k_len = ops.k;
    if k_len == 0 {
        return Err(TrainError(
            "a matrix product with K = 0 has no steps to stream".into(),
        ));
    }
    let (w, wo) = (ops.bits as usize, ops.out_bits);
    let is = dev.layout.in_slots;
    let (pa, pb, pv, pc, pl) = (
        dev.pos("a_in"),
        dev.pos("b_in"),
        dev.pos("in_valid"),
        dev.pos("clear"),
        dev.pos("last"),
    );
    let ps = shift.map(|_| dev.pos("shift"));
    let pr = ops.states.map(|s| (dev.pos("sr_row_state"), s));
    let proto = Protocol {
        rows,
        cols,
        accumulations: dev.accumulations,
    };
    let tiles = proto.tiles(ops.m, ops.n);
    // Each accumulation's next tile: tiles s, s + P, s + 2P, …
    let mut next_tile: Vec<usize> = (0..proto.accumulations).collect();
    let mut host = Host::new(proto);
    let mut order = vec![];
    let mut ins = vec![];
    let mut t = 0;
    while order.len() < tiles.len() {
        let mut words = vec![0u64; is];
        let beat = host.next(t as u64, |slot, queue| {
            if let Some(&(i0, j0)) = tiles.get(next_tile[slot]) {
                let tile = next_tile[slot];
                next_tile[slot] += proto.accumulations;
                queue.extend((0..k_len).map(|k| {
                    Beat::Step(TileStep {
                        tile,
                        at: (i0, j0),
                        k,
                        last: k + 1 == k_len,
                    })
                }));
            }
        });
        if let Some(Beat::Step(s)) = beat {
            let (i0, j0) = s.at;
            put_bits(&mut words, pv, 1, 1);
            put_bits(&mut words, pc, 1, clears(s.k) as u64);
            put_bits(&mut words, pl, 1, s.last as u64);
            if let (Some(ps), Some(sh), true) = (ps, shift, s.last) {
                put_bits(&mut words, ps, lpgen_hdl::units::DFIX_SHIFT_BITS, sh as u64);
            }
            if let (Some((pr, states)), true) = (pr, s.last) {
                for r in 0..rows {
                    let state = proto
                        .row_state_position((i0, j0), r, (ops.m, ops.n))
                        .map_or(PADDING_ROW_STATE, |at| states[at]);
                    let at = pr + Protocol::row_state_bit(r);
                    put_bits(&mut words, at, ROW_STATE_BITS, u64::from(state));
                }
            }
            for r in 0..rows {
                (ops.a)(&mut words, pa + r * w, i0 + r, s.k);
            }
            for c in 0..cols {
                (ops.b)(&mut words, pb + c * w, s.k, j0 + c);
            }
            if s.last {
                order.push(s.tile);
            }
        }
        ins.extend_from_slice(&words);
        t += 1;
    }
    let cycles = t;
    let outs = dev.stream(ins, cycles);
    let os = dev.layout.out_slots;
    let (po, pov) = (dev.pos("c_out"), dev.pos("out_valid"));
    let flags = shift.map(|_| (dev.pos("overflow"), dev.pos("overflow_half")));
    let mut data = vec![fill; ops.m * ops.n];
    let mut counts = (0, 0);
    let mut done = 0;
    for cyc in outs.chunks(os) {
        if get_bits(cyc, pov, 1) == 0 {
            continue;
        }
        let (i0, j0) = *order.get(done).map(|&tile| &tiles[tile]).ok_or_else(|| {
            TrainError("the array gave more results than tiles (a generator bug)".into())
        })?;
        for r in 0..rows.min(ops.m - i0) {
            for c in 0..cols.min(ops.n - j0) {
                let pe = proto.pe_index(r, c);
                data[(i0 + r) * ops.n + j0 + c] = get_bits(cyc, po + pe * wo as usize, wo);
                if let Some((pf, ph)) = flags {
                    counts.0 += get_bits(cyc, pf + pe, 1);
                    counts.1 += get_bits(cyc, ph + pe, 1);
                }
            }
        }
        done += 1;
    }
    if done != tiles.len() {
        return Err(TrainError(format!(
            "the array gave {done} results for {} tiles (a generator bug)",
            tiles.len()
        )));
    }
    let c = Mat {
        rows: ops.m,
        cols: ops.n,
        data,
    };
    Ok((c, counts))
}
