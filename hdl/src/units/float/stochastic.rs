//! Stochastic rounding of `float-add`, `float-mul`, `float-fma` and `convert` to floats
//! (`--rounding stochastic:R`, issue 32):
//! the unit holds the golden stream's generator, a 32-bit xorshift32 state register
//! (`sr_state`). It resets (on `rst`) to the golden `Xorshift32::from_seed(seed)` state, a
//! constant of the design, and steps once in every cycle with `in_valid`: the operation
//! presented in that cycle is rounded with the top R bits of the new state, which travel
//! down the pipeline beside it (`sr_random`). So the k-th operation after reset is rounded
//! with the golden `Rounder::new(stochastic:R, seed)`'s k-th draw, whatever the operands,
//! the stage count or the idle cycles between operations (docs/rtl.md).

use lpgen_golden::rounding::Xorshift32;
use lpgen_golden::Rounding;

use super::super::{convert, Params, Unit};
use super::{ADD_STAGES, FMA_STAGES, MUL_STAGES};
use crate::ir::{cat, konst, mux, Module, E};

/// The header line of a stochastic design.
pub(crate) fn stochastic_header(bits: u32, seed: u64) -> String {
    format!(
        "Rounding: stochastic:{bits}, xorshift32 (13, 17, 5) reset to {:#010x} (seed {seed}), \
         one step per in_valid; the top {bits} bits of the new state round that operation.",
        Xorshift32::from_seed(seed).state()
    )
}

/// `x << k` and `x >> k` of a 32-bit word, as wiring.
fn shl32(x: &E, k: u32) -> E {
    cat(&[x.bits(31 - k, 0), konst(k, 0)])
}

fn shr32(x: &E, k: u32) -> E {
    cat(&[konst(k, 0), x.bits(31, k)])
}

/// The random bits of the operation presented in this cycle (cycle 0), or `None` for
/// rounding to nearest: the generator's register, its step and its enable.
pub(crate) fn random_bits(m: &mut Module, p: &Params, in_valid: &E) -> Option<E> {
    let Rounding::Stochastic(bits) = p.rounding else {
        return None;
    };
    m.comment("stochastic rounding: the xorshift32 stream, one step per operation");
    let reset = Xorshift32::from_seed(p.rounding_seed).state();
    let state = m.state("sr_state", 32, Some(u128::from(reset)));
    let next = step(m, "sr_", &state);
    m.drive(&state, &next, Some(in_valid));
    Some(m.wire("sr_random", &next.bits(31, 32 - bits)))
}

/// One xorshift32 step (13, 17, 5) of `x` as wiring: wires `PXx13`, `PXx17`, `PXnext`.
pub(crate) fn step(m: &mut Module, px: &str, x: &E) -> E {
    let x = m.wire(&format!("{px}x13"), &x.xor(&shl32(x, 13)));
    let x = m.wire(&format!("{px}x17"), &x.xor(&shr32(&x, 17)));
    m.wire(&format!("{px}next"), &x.xor(&shl32(&x, 5)))
}

/// The header line of a stochastic `array --pe float` design.
pub(crate) fn array_header(bits: u32) -> String {
    format!(
        "Rounding: stochastic:{bits} at read-out, xorshift32 (13, 17, 5): sr_row_state (32 bits \
         a row) comes with the last step, PE (r, c) steps what it receives once, rounds with \
         the top {bits} bits and passes the stepped state right (PE (r, c): c+1 steps)."
    )
}

/// The header line of a stochastic `alu`/`vector` design of `lanes` lanes.
pub(crate) fn lanes_header(bits: u32, seed: u64, lanes: u32) -> String {
    format!(
        "Rounding: stochastic:{bits} in add, sub, mul, div (other opcodes and t_out to \
         nearest), xorshift32 (13, 17, 5) reset to {:#010x} (seed {seed}); in an in_valid \
         cycle sr_load loads sr_load_state first, then a rounding opcode rounds lane j with \
         the top {bits} bits of the state after j+1 steps and advances {lanes} steps.",
        Xorshift32::from_seed(seed).state()
    )
}

/// The random bits of each of `lanes` lanes (`alu`/`vector` with `stochastic:R`), or `None`
/// for rounding to nearest; adds the inputs `sr_load`, `sr_load_state` and the register
/// `sr_state` (reset as [`random_bits`]'). In a cycle, the base state is `sr_load_state`
/// when `sr_load` and `in_valid` are high (a load is part of a beat, so a stream wrapper's
/// stalls cannot repeat it), else the register; lane j takes the top R bits of the base
/// after j+1 steps (a chain of xorshift steps as wiring). The register takes the base after
/// `lanes` steps in a cycle with `in_valid` and a rounding opcode (`rounds`), else the base
/// (so a load with a non-rounding opcode places the stream, and a load with a rounding one
/// rounds that beat from there).
pub(crate) fn lane_random_bits(
    m: &mut Module,
    p: &Params,
    in_valid: &E,
    rounds: &E,
    lanes: u32,
) -> Option<Vec<E>> {
    let Rounding::Stochastic(bits) = p.rounding else {
        return None;
    };
    let load = m.input("sr_load", 1);
    let load_state = m.input("sr_load_state", 32);
    m.comment("stochastic rounding: the xorshift32 stream, one step per lane of a rounding op");
    let reset = Xorshift32::from_seed(p.rounding_seed).state();
    let state = m.state("sr_state", 32, Some(u128::from(reset)));
    let take = m.wire("sr_take", &load.and(in_valid));
    let mut x = m.wire("sr_base", &mux(&take, &load_state, &state));
    let base = x.clone();
    let mut randoms = vec![];
    for j in 0..lanes {
        x = step(m, &format!("sr_l{j}_"), &x);
        randoms.push(m.wire(&format!("sr_l{j}_random"), &x.bits(31, 32 - bits)));
    }
    let advance = m.wire("sr_advance", &in_valid.and(rounds));
    m.drive(&state, &mux(&advance, &x, &base), Some(&take.or(&advance)));
    Some(randoms)
}

/// The stochastic designs of the lint grid: (format, R, seed) × float-add, float-mul,
/// float-fma at stages 0 and max (lean: four of them). `convert`'s are [`convert_grid`].
pub(crate) fn grid(full: bool) -> Vec<Params> {
    let units = [
        (Unit::FloatAdd, ADD_STAGES),
        (Unit::FloatMul, MUL_STAGES),
        (Unit::FloatFma, FMA_STAGES),
    ];
    let mut g = vec![];
    let mut push = |unit, f: &str, r, seed, s| {
        let p = Params::new(unit, f.parse().expect("a float format"));
        g.push(p.rounding(Rounding::Stochastic(r), seed).stages(s));
    };
    if !full {
        push(Unit::FloatAdd, "fp8:e4m3", 4, 1, ADD_STAGES);
        push(Unit::FloatMul, "bf16", 8, 7, 0);
        push(Unit::FloatAdd, "float:3:4:ftz", 9, 0, 2);
        push(Unit::FloatFma, "bf16", 32, 3, FMA_STAGES);
        return g;
    }
    for (f, r, seed) in [
        ("fp8:e4m3", 4, 1),
        ("fp8:e5m2:ftz", 1, 2),
        ("float:3:4:sat", 9, 3),
        ("bf16", 8, 7),
        ("f16", 13, 5),
        ("float:11:52", 32, 11),
    ] {
        for (unit, max) in units {
            // float:11:52's fma takes at most R = 18 (the sum's width).
            let r = if unit == Unit::FloatFma { r.min(18) } else { r };
            for s in [0, max] {
                push(unit, f, r, seed, s);
            }
        }
    }
    g
}

/// The stochastic `convert` designs of the lint grid (the convert unit's grid takes them):
/// conversions to floats, seven pairs at every stage count (lean: two).
pub(crate) fn convert_grid(full: bool) -> Vec<Params> {
    let mut g = vec![];
    let design = |from: &str, to: &str, r, seed| {
        let mut p = Params::new(Unit::Convert, from.parse().expect("a grid format"));
        p.to = Some(to.parse().expect("a grid format"));
        p.rounding(Rounding::Stochastic(r), seed)
    };
    if !full {
        g.push(design("bf16", "fp8:e4m3", 8, 3).stages(2));
        g.push(design("fix:7:8", "bf16", 13, 5).stages(0));
    } else {
        for (from, to, r, seed) in [
            ("bf16", "fp8:e4m3", 8, 3),
            ("f32", "bf16", 16, 1),
            ("f16", "fp8:e5m2:ftz", 32, 2),
            ("fp8:e5m2", "float:3:4:sat", 9, 4),
            ("f16", "f16", 5, 6),
            ("fix:7:8", "bf16", 13, 5),
            ("fix:15:16", "f16:sat", 20, 7),
        ] {
            let p = design(from, to, r, seed);
            for s in 0..=convert::max_stages(&p) {
                g.push(p.clone().stages(s));
            }
        }
    }
    g
}

#[cfg(test)]
mod tests {
    use super::super::super::{generate, Unit};
    use super::*;

    fn design(unit: Unit, f: &str, rounding: Rounding, seed: u64) -> String {
        let p = Params::new(unit, f.parse().unwrap()).rounding(rounding, seed);
        generate(&p).unwrap().verilog.text()
    }

    /// The register resets to the stream's pinned first states (docs/formats.md: seed 0
    /// starts at 0xe220a839, seed 7 at 0x63cbe1e4), and steps only with in_valid.
    #[test]
    fn the_register_resets_to_the_pinned_seed_states() {
        for (seed, state) in [(0u64, 0xe220_a839u32), (7, 0x63cb_e1e4)] {
            let v = design(Unit::FloatMul, "bf16", Rounding::Stochastic(8), seed);
            assert!(v.contains(&format!("sr_state <= 32'd{state};")), "{seed}");
            assert!(v.contains(&format!("reset to {state:#010x} (seed {seed})")));
            assert!(v.contains("if (in_valid) sr_state <= sr_next;"));
            assert!(v.contains("assign sr_random = sr_next[31:24];"));
        }
        let v = design(Unit::FloatAdd, "bf16", Rounding::Nearest, 0);
        assert!(!v.contains("sr_"));
    }

    /// A stochastic vector: the register resets to the seed's state; lane j rounds with the
    /// state after j+1 steps from the base (sr_load_state when sr_load with in_valid); the
    /// register takes the base after L steps on in_valid with a rounding opcode (0..=3),
    /// else the base.
    #[test]
    fn vector_lanes_chain_l_steps_and_load_first() {
        let mut p = Params::new(Unit::Vector, "bf16".parse().unwrap());
        p.lanes = 3;
        let d = generate(&p.rounding(Rounding::Stochastic(8), 7)).unwrap();
        assert_eq!(d.top, "lpgen_vector_bf16_l3_sr8_s0");
        let v = d.verilog.text();
        for line in [
            "sr_state <= 32'd1674306020;",
            "assign sr_take = (sr_load & in_valid);",
            "assign sr_base = (sr_take ? sr_load_state : sr_state);",
            "assign sr_l0_x13 = (sr_base ^ {sr_base[18:0], 13'd0});",
            "assign sr_l1_x13 = (sr_l0_next ^ {sr_l0_next[18:0], 13'd0});",
            "assign sr_l2_random = sr_l2_next[31:24];",
            "assign sr_advance = (in_valid & ((((op == 4'd0) | (op == 4'd1)) | (op == 4'd2)) \
             | (op == 4'd3)));",
            "if ((sr_take | sr_advance)) sr_state <= (sr_advance ? sr_l2_next : sr_base);",
            "advances 3 steps.",
            "module lpgen_float_div_bf16_sr8 (",
        ] {
            assert!(v.contains(line), "{line}");
        }
        assert_eq!(
            v.matches(".r(sr_l1_random)").count(),
            3,
            "add, mul, div of lane 1"
        );
    }

    /// Units without stochastic rounding, and a seed without it, are refused in one line.
    #[test]
    fn refusals_are_one_line() {
        let f = "bf16".parse().unwrap();
        let p = Params::new(Unit::FixMac, "fix:7:8".parse().unwrap());
        let e = generate(&p.rounding(Rounding::Stochastic(4), 0))
            .unwrap_err()
            .0;
        assert!(
            e.contains("alu, vector, array, convert, float-add, float-mul, float-fma")
                && !e.contains('\n'),
            "{e}"
        );
        // The array: only the float PE with its exact accumulator reads out stochastically.
        let mut p = Params::new(Unit::Array, f).rounding(Rounding::Stochastic(4), 0);
        p.pe = crate::PeKind::Float;
        p.acc = Some("float:8:23".parse().unwrap());
        let e = generate(&p).unwrap_err().0;
        assert_eq!(
            e,
            "array PE 'float' --acc float:8:23 reads out to nearest only, not stochastic:4 \
             (stochastic read-out: --pe float with its exact accumulator)"
        );
        let p = Params::new(Unit::Vector, "fix:7:8".parse().unwrap());
        let e = generate(&p.rounding(Rounding::Stochastic(4), 0))
            .unwrap_err()
            .0;
        assert_eq!(
            e,
            "unit 'vector': fix:7:8 lanes round to nearest only, not stochastic:4 \
             (stochastic lanes: float formats)"
        );
        let p = Params::new(Unit::FloatAdd, f).rounding(Rounding::Nearest, 3);
        let e = generate(&p).unwrap_err().0;
        assert!(e.contains("stochastic") && !e.contains('\n'), "{e}");
    }
}
