//! `alu` and `vector` simulated with Icarus against the golden lane (`lpgen_golden::Alu`):
//! every opcode (and the unassigned ones) on random and extreme operands, every output
//! (`y`, `t_out`, `cmp`, `nan`), for LNS, posit and fixed-point lanes with a narrowing or
//! widening conversion format, combinational and fully pipelined.

mod common;

use lpgen_golden::{Alu, AluIn, Format};
use lpgen_hdl::{generate, Params, Unit};

use common::{simulate, Rng};

/// Words that exercise the corners of a format: zero, NaN/NaR, ±the largest and smallest
/// magnitudes, ±1, and the words next to them.
fn specials(f: Format) -> Vec<u64> {
    let c = f.calc();
    let mask = (1u64 << f.width()) - 1;
    let mut v = vec![0, c.zero(), c.one(), c.neg(c.one()), mask, 1, mask >> 1];
    v.push((mask >> 1) + 1);
    v.push((mask >> 1) + 2);
    if let Format::Lns(l) = f {
        v.extend([
            l.nan(),
            l.pack(false, l.code_max()),
            l.pack(true, l.code_min()),
        ]);
    }
    v.into_iter().map(|w| w & mask).collect()
}

fn check(format: &str, to: &str, stages: u32, lanes: u32, count: usize, seed: u64) {
    let f: Format = format.parse().unwrap();
    let t: Format = to.parse().unwrap();
    let golden = Alu::new(f, t).unwrap();
    let unit = if lanes == 1 { Unit::Alu } else { Unit::Vector };
    let mut p = Params::new(unit, f).stages(stages);
    p.lanes = lanes;
    p.to = Some(t);
    let design = generate(&p).unwrap();
    let (w, wt) = (f.width(), t.width());
    let sp = specials(f);
    let spt = specials(t);
    let mut rng = Rng(seed);
    let word = |rng: &mut Rng, sp: &[u64], width: u32| {
        if rng.below(4) == 0 {
            sp[rng.below(sp.len() as u64) as usize]
        } else {
            rng.next_u64() & ((1 << width) - 1)
        }
    };
    let mut vectors = vec![];
    let mut want = vec![];
    for k in 0..count {
        let op = (k % 16) as u64;
        let (mut a, mut b, mut sel, mut t_in) = (0u64, 0u64, 0u64, 0u64);
        let mut outs = vec![0u64; 4];
        for l in 0..lanes {
            let i = AluIn {
                op: op as u8,
                a: word(&mut rng, &sp, w),
                b: if rng.below(8) == 0 {
                    0
                } else {
                    word(&mut rng, &sp, w)
                },
                sel: rng.below(2) == 1,
                t_in: word(&mut rng, &spt, wt),
            };
            let o = golden.eval(&i);
            a |= i.a << (l * w);
            b |= i.b << (l * w);
            sel |= (i.sel as u64) << l;
            t_in |= i.t_in << (l * wt);
            outs[0] |= o.y << (l * w);
            outs[1] |= o.t_out << (l * wt);
            outs[2] |= (o.cmp as u64) << (2 * l);
            outs[3] |= (o.nan as u64) << l;
        }
        vectors.push(vec![op, a, b, sel, t_in]);
        want.push(outs);
    }
    let got = simulate(
        &design,
        &["op", "a", "b", "sel", "t_in"],
        &["y", "t_out", "cmp", "nan"],
        &vectors,
    );
    assert_eq!(got.len(), want.len(), "{}", design.top);
    for (k, (g, e)) in got.iter().zip(&want).enumerate() {
        assert_eq!(
            g, e,
            "{} vector {k}: op {} a {:#x} b {:#x} sel {} t_in {:#x}: got [y t_out cmp nan] {g:x?}, want {e:x?}",
            design.top, vectors[k][0], vectors[k][1], vectors[k][2], vectors[k][3], vectors[k][4]
        );
    }
}

#[test]
fn lns_lane_matches_golden() {
    check("lns:4:4", "lns:3:2", 0, 1, 6000, 1);
    check("lns:5:6", "lns:6:9", 3, 1, 3000, 2);
}

#[test]
fn posit_lane_matches_golden() {
    check("posit:8:0", "posit:6:1:u", 0, 1, 6000, 3);
    check("posit:8", "posit:16", 4, 1, 3000, 4);
    check("posit:16:1", "posit:8:2", 2, 1, 4000, 5);
}

#[test]
fn fix_lane_matches_golden() {
    check("fix:3:4", "fix:2:1", 0, 1, 6000, 6);
    check("fix:7:8", "fix:7:10", 2, 1, 4000, 7);
    check("fix:0:7", "fix:3:0", 1, 1, 3000, 8);
}

#[test]
fn vector_lanes_are_independent() {
    check("posit:8:0", "posit:8:0", 4, 4, 2000, 9);
    check("lns:3:2", "lns:2:3", 1, 8, 1500, 10);
    check("fix:3:4", "fix:3:4", 2, 4, 1500, 11);
}
