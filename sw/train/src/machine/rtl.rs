//! The RTL machine: matrix products on a generated systolic `array` and lane operations on a
//! generated `vector` unit, both compiled with Verilator and driven through `lpgen-verif`'s
//! runtime, a whole stream of cycles per FFI call. The host only cuts matrices into tiles,
//! pads them with the format's zero, and moves words. Seed 003's codecs run on the `q8-enc`
//! and `q8-dec` units (`rtl/q8.rs`).

mod fdpa;
mod mx;
mod q8;
mod quant1;
mod tiles;

use std::collections::HashMap;

use lpgen_golden::dfix::DfixFormat;
use lpgen_golden::float::fdpa::Fdpa;
use lpgen_golden::mx::MxFormat;
use lpgen_golden::onebit::{Quantized, Quantizer};
use lpgen_golden::q8::Q8Type;
use lpgen_golden::rounding::Xorshift32;
use lpgen_golden::{AluOp, Format, Rounding, SumMode, ALU_OP_BITS, F32};
use lpgen_hdl::{generate, Params, PeKind, Unit};
use lpgen_verif::layout::{get_bits, put_bits, Layout};
use lpgen_verif::{Model, Toolchain};
use tiles::stream_tiles;

use crate::compress::through_codec;
use crate::machine::{check_shapes, Accumulate, DfixProduct, Golden, Machine, Mat, View};
use crate::rounding::Draws;
use crate::TrainError;

/// A loaded design and its port positions (bit offsets into the packed buffers).
struct Device {
    model: Model,
    layout: Layout,
    latency: usize,
    /// Accumulations an array's PEs interleave (`array_accumulations`); 1 for other units.
    accumulations: usize,
}

impl Device {
    fn build(tc: &Toolchain, p: &Params) -> Result<Device, TrainError> {
        let d = generate(p).map_err(|e| TrainError(e.0))?;
        let layout = Layout::from_manifest(&d.manifest).map_err(|e| TrainError(e.0))?;
        let model = tc
            .model(&d.verilog, &layout, false)
            .map_err(|e| TrainError(e.0))?;
        let latency = layout.latency as usize;
        let accumulations = match p.unit {
            Unit::Array => lpgen_hdl::units::array_accumulations(p) as usize,
            _ => 1,
        };
        Ok(Device {
            model,
            layout,
            latency,
            accumulations,
        })
    }

    /// Bit position of a port in its buffer.
    fn pos(&self, name: &str) -> usize {
        self.layout
            .port(name)
            .expect("port of a generated unit")
            .slot
            * 64
    }

    /// Runs `cycles` input vectors (each `in_slots` words) after two reset cycles and
    /// `latency` + 1 flush cycles; returns every cycle's outputs (after the reset cycles).
    fn stream(&mut self, mut ins: Vec<u64>, cycles: usize) -> Vec<u64> {
        let (is, os) = (self.layout.in_slots, self.layout.out_slots);
        let rst = self.pos("rst");
        let mut all = vec![0u64; 2 * is];
        for c in 0..2 {
            put_bits(&mut all[c * is..], rst, 1, 1);
        }
        all.append(&mut ins);
        all.resize((2 + cycles + self.latency + 1) * is, 0);
        let n = all.len() / is;
        let mut outs = vec![0u64; n * os];
        self.model.run(&all, &mut outs);
        outs.split_off(2 * os)
    }
}

/// The RTL machine: one array per (format, PE kind), one vector unit per format.
pub struct Rtl {
    tc: Toolchain,
    rows: u32,
    cols: u32,
    lanes: u32,
    /// `--stages` of the arrays.
    array_stages: u32,
    /// Arrays by (format, PE kind, read-out rounding).
    arrays: HashMap<(Format, &'static str, Rounding), Device>,
    /// Vector units by (lane format, conversion format, rounding: `stochastic:R` units are
    /// placed on the stream by `sr_load`, docs/rtl.md). A unit of a format's own lanes to
    /// nearest has the `sqrt` opcode where the family's lane has it ([`Rtl::vector`]).
    vectors: HashMap<(Format, Format, Rounding), Device>,
    /// `quant1` units by (format, longest column).
    quantizers: HashMap<(Format, u32), Device>,
    /// `q8-enc` and `q8-dec` units by (format, type, unit name).
    codecs: HashMap<(Format, Q8Type, &'static str), Device>,
    /// `array --pe dfix` units by word width.
    dfix_arrays: HashMap<u32, Device>,
    /// `array --pe mx` units by MX format (`rtl/mx.rs`), and the products run on them.
    mx_arrays: HashMap<MxFormat, Device>,
    mx_products: u64,
    /// `array --pe fdpa` units by (format, fdpa mode) (`rtl/fdpa.rs`).
    fdpa_arrays: HashMap<(Format, Fdpa), Device>,
    /// Words whose square root a vector unit took (`sqrt` opcode).
    sqrt_words: u64,
    /// The host's golden f32 operations, for dfix storage runs (f32 arithmetic, products on
    /// the dfix array).
    host: Golden,
}

impl Rtl {
    /// Finds Verilator (or says how to install it); designs are built on first use.
    pub fn new(rows: u32, cols: u32, lanes: u32) -> Result<Rtl, TrainError> {
        lpgen_hdl::limits::check_array(rows, cols).map_err(|e| TrainError(e.0))?;
        lpgen_hdl::limits::check_lanes(lanes).map_err(|e| TrainError(e.0))?;
        let tc = Toolchain::find().map_err(|e| TrainError(e.0))?;
        Ok(Rtl {
            tc,
            rows,
            cols,
            lanes,
            array_stages: 0,
            arrays: HashMap::new(),
            vectors: HashMap::new(),
            quantizers: HashMap::new(),
            codecs: HashMap::new(),
            dfix_arrays: HashMap::new(),
            mx_arrays: HashMap::new(),
            mx_products: 0,
            fdpa_arrays: HashMap::new(),
            sqrt_words: 0,
            host: Golden {
                threads: 1,
                ..Golden::new("host", None)
            },
        })
    }

    /// The arrays' pipeline stages (default 0); a PE kind that does not take them is
    /// refused in one line when its array is built. Where the PEs interleave accumulations
    /// (LNS PEs beyond 2 stages), every matrix product streams that many output tiles at once.
    pub fn with_array_stages(mut self, stages: u32) -> Rtl {
        self.array_stages = stages;
        self
    }

    /// The array PE the registry pairs with `f`'s family and the accumulation (not fdpa
    /// modes: `rtl/fdpa.rs`); the refusal names the modes the family's PEs take, from the
    /// registry.
    fn pe(f: Format, acc: Accumulate) -> Result<PeKind, TrainError> {
        PeKind::for_mode(f, acc.mode()).map_err(|e| {
            let modes: Vec<&str> = f.entry().pes.iter().map(|p| p.mode.name()).collect();
            TrainError(format!(
                "the rtl backend has no array PE for {acc:?} accumulation in {f} (its PEs take \
                 mode {}; --quire selects quire, --kahan kahan): {e}",
                lpgen_golden::family::or_list(&modes)
            ))
        })
    }

    /// Refuses `--array-stages` beyond what the PE kind `pe` takes, naming the option.
    fn check_array_stages(&self, pe: PeKind) -> Result<(), TrainError> {
        let most = lpgen_hdl::units::array_max_stages(pe);
        if self.array_stages > most {
            return Err(TrainError(format!(
                "--array-stages {}: this run's {} PEs take at most {most}",
                self.array_stages,
                pe.name()
            )));
        }
        Ok(())
    }

    fn array(&mut self, f: Format, pe: PeKind, r: Rounding) -> Result<&mut Device, TrainError> {
        let key = (f, pe.name(), r);
        if !self.arrays.contains_key(&key) {
            self.check_array_stages(pe)?;
            let mut p = Params::new(Unit::Array, f)
                .stages(self.array_stages)
                .rounding(r, 0);
            p.rows = self.rows;
            p.cols = self.cols;
            p.pe = pe;
            let d = Device::build(&self.tc, &p)?;
            self.arrays.insert(key, d);
        }
        Ok(self.arrays.get_mut(&key).expect("inserted"))
    }

    /// The vector unit of `f` lanes converting to `to` with rounding `r`. The unit of `f`'s
    /// own lanes to nearest is built with the `sqrt` opcode where the family's lane has one
    /// (layer norm, attention's 1/√d and Adam take roots; the other opcodes give the same
    /// words either way, and the root costs no measurable build time).
    fn vector(&mut self, f: Format, to: Format, r: Rounding) -> Result<&mut Device, TrainError> {
        let key = (f, to, r);
        if !self.vectors.contains_key(&key) {
            let mut p = Params::new(Unit::Vector, f).rounding(r, 0);
            p.lanes = self.lanes;
            p.to = Some(to);
            p.sqrt = Rtl::sqrt_unit(f, to, r);
            let d = Device::build(&self.tc, &p)?;
            self.vectors.insert(key, d);
        }
        Ok(self.vectors.get_mut(&key).expect("inserted"))
    }

    /// Whether the vector unit of (f, to, r) has the `sqrt` opcode.
    fn sqrt_unit(f: Format, to: Format, r: Rounding) -> bool {
        to == f && r == Rounding::Nearest && lpgen_hdl::units::lane_has_sqrt(f)
    }

    /// How many words' square roots the vector units have taken.
    pub fn sqrt_words(&self) -> u64 {
        self.sqrt_words
    }

    /// How many `array --pe dfix` designs this machine has built.
    pub fn dfix_designs(&self) -> usize {
        self.dfix_arrays.len()
    }

    /// Streams `a` (and `b`) through the vector unit of (f, to) with `op`, `lanes` words per
    /// cycle; returns the words of output port `out` (`y` in f, or `t_out` in `to`). With
    /// `draws`, on the `stochastic:R` unit: element i is rounded with draw i (`sr_load`s
    /// place the unit's stream where it is not already at the beat's first state).
    fn vector_run(
        &mut self,
        (f, to): (Format, Format),
        op: AluOp,
        (a, b): (&[u64], &[u64]),
        out: &str,
        draws: Option<&Draws>,
    ) -> Result<Vec<u64>, TrainError> {
        let lanes = self.lanes as usize;
        let w = f.width();
        let wo = if out == "t_out" { to.width() } else { w };
        let rounding = draws.map_or(Rounding::Nearest, |d| d.rounding);
        let dev = self.vector(f, to, rounding)?;
        let is = dev.layout.in_slots;
        let (pop, pa, pb, pv) = (
            dev.pos("op"),
            dev.pos("a"),
            dev.pos("b"),
            dev.pos("in_valid"),
        );
        let cycles = a.len().div_ceil(lanes);
        let mut ins = vec![0u64; cycles * is];
        let load = draws.map(|_| (dev.pos("sr_load"), dev.pos("sr_load_state")));
        // The unit's stream state before the beat (None: not known, as after reset).
        let mut at: Option<u32> = None;
        for (i, &x) in a.iter().enumerate() {
            let slot = &mut ins[(i / lanes) * is..][..is];
            if i % lanes == 0 {
                put_bits(slot, pop, ALU_OP_BITS, op.code() as u64);
                put_bits(slot, pv, 1, 1);
                if let (Some(d), Some((pl, ps))) = (draws, load) {
                    at = Some(place_stream(slot, (pl, ps), d.states[i], at, lanes)?);
                }
            }
            let l = (i % lanes) * w as usize;
            put_bits(slot, pa + l, w, x);
            put_bits(slot, pb + l, w, b.get(i).copied().unwrap_or(0));
        }
        let outs = dev.stream(ins, cycles);
        let os = dev.layout.out_slots;
        let (py, pov) = (dev.pos(out), dev.pos("out_valid"));
        let mut y = Vec::with_capacity(a.len());
        for cyc in outs.chunks(os).filter(|c| get_bits(c, pov, 1) == 1) {
            for l in 0..lanes {
                if y.len() < a.len() {
                    y.push(get_bits(cyc, py + l * wo as usize, wo));
                }
            }
        }
        if y.len() != a.len() {
            return Err(TrainError(format!(
                "the vector unit gave {} results for {} operands (a generator bug)",
                y.len(),
                a.len()
            )));
        }
        Ok(y)
    }
}

impl Machine for Rtl {
    type Word = u64;

    /// On the `quant1` unit where it matches the golden rule: fix words, and posit words summed
    /// in quires; other formats and sum modes on the host (the golden quantizer).
    fn quantize_1bit(
        &mut self,
        f: Format,
        mode: SumMode,
        g: &[u64],
        shape: (usize, usize),
        residual: Option<&mut [u64]>,
    ) -> Result<Quantized, TrainError> {
        let hardware = mode == SumMode::Quire && f.entry().q8_word_rule;
        if !hardware || shape.0 == 0 || shape.1 == 0 {
            let q = Quantizer::new(f, mode).map_err(|e| TrainError(e.to_string()))?;
            return Ok(q.matrix(g, shape.0, shape.1, residual));
        }
        self.quant1_run(f, g, shape, residual)
    }

    /// On the `q8-enc` and `q8-dec` units for fix and posit words (the word rule); LNS words
    /// follow the f32 rule, on the host.
    fn through_q8(
        &mut self,
        codec: Q8Type,
        f: Format,
        words: &[u64],
        unit: f64,
    ) -> Result<Vec<u64>, TrainError> {
        // The q8 and quant1 units take exactly the families of the word rule (a test below
        // holds the two registries together).
        if f.entry().q8_word_rule {
            self.q8_run(codec, f, words, unit)
        } else {
            through_codec(codec, f, words, unit)
        }
    }

    /// Tiles of R rows of A × C columns of B stream back to back: step k of a tile puts
    /// `A[i0 + r][k]` on row r and `B[k][j0 + c]` on column c (the format's zero beyond the
    /// matrix), `clear` with k = 0, `last` with k = K − 1, and bubbles after a short tile so
    /// that `last` steps are R + C − 1 cycles apart; each `out_valid` carries one tile.
    fn matmul(
        &mut self,
        f: Format,
        acc: Accumulate,
        a: View<'_, u64>,
        b: View<'_, u64>,
    ) -> Result<Mat, TrainError> {
        check_shapes(a, b)?;
        if f == Format::F32(F32) {
            // Only dfix storage runs ask for f32 on this machine: its f32 arithmetic is the
            // host's (the golden f32 operations); its products run on the dfix array.
            return self.host.matmul(f, acc, a, b);
        }
        let (a, b) = (a.to_mat(), b.to_mat());
        if let Accumulate::Fdpa(mode) = acc {
            return self.fdpa_product(f, mode, (&a, &b));
        }
        let pe = Rtl::pe(f, acc)?;
        let shape = (self.rows as usize, self.cols as usize);
        let zero = f.calc().zero();
        let dev = self.array(f, pe, Rounding::Nearest)?;
        let (c, _) = stream_tiles(dev, shape, f.width(), zero, (&a, &b), None, None)?;
        Ok(c)
    }

    fn lanes(
        &mut self,
        f: Format,
        op: AluOp,
        a: &[u64],
        b: &[u64],
    ) -> Result<Vec<u64>, TrainError> {
        if f == Format::F32(F32) || !f.entry().lanes {
            // dfix storage runs: f32 arithmetic on the host (no f32 vector unit); a family
            // without ALU lanes (its registry entry's `lanes`) computes its lanes on the host
            // too, its products on its array.
            return self.host.lanes(f, op, a, b);
        }
        if op == AluOp::Sqrt && !Rtl::sqrt_unit(f, f, Rounding::Nearest) {
            // A family whose lane has no sqrt datapath (`lpgen rtl alu --sqrt` refuses it).
            return Err(TrainError(format!(
                "sqrt lanes of {f} on --backend rtl: the {} lane has no sqrt datapath yet; \
                 use --backend golden",
                f.entry().name
            )));
        }
        if op == AluOp::Sqrt {
            self.sqrt_words += a.len() as u64;
        }
        self.vector_run((f, f), op, (a, b), "y", None)
    }

    /// On the vector unit of `from` with `--to` `to`: `t_out` is `a` converted.
    fn convert(&mut self, from: Format, to: Format, a: &[u64]) -> Result<Vec<u64>, TrainError> {
        if from == to {
            return Ok(a.to_vec());
        }
        if !from.entry().lanes {
            // No conversion unit for the family yet: the host's (golden) conversion.
            return self.host.convert(from, to, a);
        }
        self.vector_run((from, to), AluOp::Add, (a, &[]), "t_out", None)
    }

    /// On the `array --pe dfix` unit of the format's width: the read-out shift e − (ea + eb)
    /// given with each tile's last step, the overflow flags of every output counted.
    fn dfix_matmul(
        &mut self,
        f: DfixFormat,
        (a, ea): (&Mat, i32),
        (b, eb): (&Mat, i32),
        e: i32,
    ) -> Result<DfixProduct, TrainError> {
        check_shapes(a.view(), b.view())?;
        let shape = (self.rows as usize, self.cols as usize);
        if !self.dfix_arrays.contains_key(&f.width) {
            self.check_array_stages(PeKind::Dfix)?;
            let mut p = Params::dfix(Unit::Array, f).stages(self.array_stages);
            p.rows = self.rows;
            p.cols = self.cols;
            let d = Device::build(&self.tc, &p)?;
            self.dfix_arrays.insert(f.width, d);
        }
        let dev = self.dfix_arrays.get_mut(&f.width).expect("inserted");
        let shift = e as i64 - (ea as i64 + eb as i64);
        let (c, (overflows, overflows_at_half)) =
            stream_tiles(dev, shape, f.width, 0, (a, b), Some(shift), None)?;
        Ok(DfixProduct {
            c,
            overflows,
            overflows_at_half,
        })
    }

    /// On the `array --pe mx` unit of the format (`rtl/mx.rs`).
    fn mx_matmul(
        &mut self,
        mx: MxFormat,
        a: View<'_, u64>,
        b: View<'_, u64>,
    ) -> Result<Mat, TrainError> {
        self.mx_product(mx, a, b)
    }

    /// Float lanes on the `vector --rounding stochastic:R` unit; other families' lanes have
    /// no stochastic RTL and refuse in one line.
    fn lanes_rounded(
        &mut self,
        f: Format,
        op: AluOp,
        a: &[u64],
        b: &[u64],
        draws: &Draws,
    ) -> Result<Vec<u64>, TrainError> {
        draws.check(a.len())?;
        // The unit rounds lane j of a beat with the state j + 1 steps after the beat's
        // first: a tensor's draws are consecutive positions (`Stream::take`).
        let next = |s: u32| Xorshift32::at(s).map(|mut g| g.step());
        let states = &draws.states;
        if let Some(i) = (1..states.len()).find(|&i| next(states[i - 1]) != Some(states[i])) {
            return Err(TrainError(format!(
                "draw {i} of {} does not follow on from draw {} (a trainer bug: the rtl lanes \
                 take consecutive positions)",
                states.len(),
                i - 1
            )));
        }
        let rounds = matches!(op, AluOp::Add | AluOp::Sub | AluOp::Mul | AluOp::Div);
        let stochastic = lpgen_hdl::units::lane_has_stochastic(f);
        match (f, draws.rounding) {
            (_, Rounding::Nearest) => self.lanes(f, op, a, b),
            _ if stochastic && rounds => self.vector_run((f, f), op, (a, b), "y", Some(draws)),
            _ if stochastic => Err(TrainError(format!(
                "lane {} does not round (a trainer bug: only add, sub, mul and div take draws)",
                op.name()
            ))),
            (_, r) => Err(TrainError(format!(
                "--rounding {r} on --backend rtl: {f} lanes round to nearest on the RTL \
                 (stochastic lanes: float formats); use --backend golden"
            ))),
        }
    }

    /// Refused: the float array PE rounds its read-out to nearest.
    /// On `array --pe float --rounding stochastic:R`: each tile's last step gives row r the
    /// state of element (i0 + r, j0), and PE (r, c) rounds with that state after c + 1 steps,
    /// element (i, j)'s at position i·n + j (docs/rtl.md, `array`).
    fn matmul_rounded(
        &mut self,
        f: Format,
        a: View<'_, u64>,
        b: View<'_, u64>,
        draws: &Draws,
    ) -> Result<Mat, TrainError> {
        check_shapes(a, b)?;
        let (m, n) = (a.rows(), b.cols());
        if !matches!(f, Format::Float(_)) {
            return Err(TrainError(format!(
                "--rounding {} on --backend rtl: the {f} array reads out to nearest (stochastic \
                 read-out: the float PE)",
                draws.rounding
            )));
        }
        draws.check(m * n)?;
        let (a, b) = (a.to_mat(), b.to_mat());
        let shape = (self.rows as usize, self.cols as usize);
        let zero = f.calc().zero();
        let dev = self.array(f, PeKind::Float, draws.rounding)?;
        let states = Some(&draws.states[..]);
        let (c, _) = stream_tiles(dev, shape, f.width(), zero, (&a, &b), None, states)?;
        Ok(c)
    }

    fn name(&self) -> String {
        "rtl".into()
    }
}

/// Puts the `sr_load` of a beat whose first draw is at `state` into `slot` unless the unit's
/// stream is already there (`at`); returns the state after the beat's `lanes` steps.
fn place_stream(
    slot: &mut [u64],
    (load, load_state): (usize, usize),
    state: u32,
    at: Option<u32>,
    lanes: usize,
) -> Result<u32, TrainError> {
    if at != Some(state) {
        put_bits(slot, load, 1, 1);
        put_bits(slot, load_state, 32, u64::from(state));
    }
    let mut g = Xorshift32::at(state)
        .ok_or_else(|| TrainError("a draw at state 0 (a trainer bug)".into()))?;
    for _ in 0..lanes {
        g.step();
    }
    Ok(g.state())
}
