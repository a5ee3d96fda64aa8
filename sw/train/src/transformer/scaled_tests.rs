//! `--scaling` on the transformers (issue 50 on issue 46's models): every linear product (the
//! q k v and output projections, fc1, fc2, the head, a vit's patch embedding) is the dense
//! layer's scaled product, with its own amax histories; attention's QKᵀ and P·V are not
//! scaled. One linear product of each kind equals a scaled product computed here by hand.

use lpgen_golden::Format;

use super::tests::{gpt_cfg, small, small_vit, wiggled_in};
use super::*;
use crate::machine::Golden;
use crate::net::Cache;
use crate::scaling::{Scales, Scaling};

/// A one-block `g` with the FP8 recipe's stages (O, L bf16; F E4M3; B, G E5M2), products
/// scaled by `scaling`.
fn fp8(g: Gpt, scaling: &str) -> Config {
    let mut c = gpt_cfg("bf16", g);
    let (stages, _) =
        crate::config::parse_precision("O=bf16-L=bf16-F=fp8:e4m3-BG=fp8:e5m2").unwrap();
    c.stages = stages;
    c.scaling = Scaling::parse(scaling).unwrap();
    c
}

fn one_block(g: Gpt) -> Gpt {
    Gpt { layers: 1, ..g }
}

/// A batch of `g`'s task in F: two windows of 4 tokens (a gpt) or two 4×4 images (a vit),
/// and its labels.
fn batch(g: &Gpt, f: Format) -> (Mat<u64>, Vec<u8>) {
    match g.task {
        Task::Text => (
            Mat {
                rows: 2,
                cols: 4,
                data: vec![3, 7, 3, 9, 7, 7, 1, 3],
            },
            vec![7, 3, 9, 1, 7, 1, 3, 9],
        ),
        Task::Image { .. } => (
            Mat {
                rows: 2,
                cols: 16,
                data: (0..32)
                    .map(|i| u64::constant(f, ((i * 7) % 13) as f64 / 6.0 - 1.0))
                    .collect(),
            },
            vec![2, 0],
        ),
    }
}

/// The model's gradients (parameter by parameter) after one forward and backward pass.
fn gradients(c: &Config, scales: Option<&mut Scales>) -> Vec<Grads<u64>> {
    let g = c.arch.gpt.expect("a transformer");
    let model = wiggled_in(c, c.stages.o);
    let (x, labels) = batch(&g, c.stages.f);
    let mut golden = Golden::default();
    let mut net = Net {
        m: &mut golden,
        cfg: c,
        storage: None,
        stream: None,
        scales,
    };
    let mut noise = c.stream(&[0]);
    net.gpt_gradients(&g, &model, &x, &labels, &mut noise)
        .unwrap()
        .1
}

/// Two training steps of a one-block gpt and vit with delayed scaling record one amax per
/// step for each operand of each linear product: F and G of every dense layer, B of those
/// whose error propagates (not a vit's patch embedding, the first layer); a forward pass
/// (evaluation) records none, and attention's products have no history. The checkpoint line
/// reads back as itself.
#[test]
fn each_linear_product_keeps_its_operands_histories() {
    // Parameters: 0 input embedding, 1 position, 2 norm 1, 3 q k v, 4 projection, 5 norm 2,
    // 6 fc1, 7 fc2, 8 final norm, 9 head.
    for (g, first) in [(small(), None), (small_vit(), Some(0))] {
        let g = one_block(g);
        let c = fp8(g, "all=delayed:5");
        let mut model = wiggled_in(&c, c.stages.o);
        let (x, labels) = batch(&g, c.stages.f);
        let mut scales = Scales::default();
        let mut golden = Golden::default();
        let mut net = Net {
            m: &mut golden,
            cfg: &c,
            storage: None,
            stream: None,
            scales: Some(&mut scales),
        };
        let mut noise = c.stream(&[0]);
        for _ in 0..2 {
            net.step(&mut model, x.clone(), &labels, 0.01, 0.0, &mut noise)
                .unwrap();
        }
        net.gpt_forward(&g, &model, &x, None).unwrap();
        let mut want = vec![];
        if let Some(at) = first {
            want.extend([(at, 'F', 0), (at, 'F', 1), (at, 'G', 0), (at, 'G', 1)]);
        }
        for at in [3, 4, 6, 7, 9] {
            for st in ['B', 'F', 'G'] {
                want.extend([(at, st, 0), (at, st, 1)]);
            }
        }
        let got = scales.histories();
        let keys: Vec<_> = got.iter().map(|&(k, _)| k).collect();
        assert_eq!(keys, want, "{:?}", g.task);
        assert!(got.iter().all(|&(_, n)| n == 2), "{got:?}");
        let line = scales.save();
        let back = Scales::restore(&line, &c.scaling, &c.stages).unwrap();
        assert_eq!(back.save(), line);
    }
}

/// A scaled step trains other words than an unscaled one, stage by stage and with a block
/// recipe, for the gpt and the vit.
#[test]
fn a_scaled_step_differs_from_an_unscaled_one() {
    for g in [one_block(small()), one_block(small_vit())] {
        let plain = gradients(&fp8(g, "none"), None);
        for s in ["F=current", "B=current", "G=current", "all=delayed"] {
            let mut scales = Scales::default();
            let scaled = gradients(&fp8(g, s), Some(&mut scales));
            assert!(scaled != plain, "{:?} {s}: the same gradients", g.task);
        }
        let mut c = fp8(g, "FB=nvfp4,G=nvfp4+rht16");
        c.stages = crate::config::Stages::all("bf16".parse().unwrap());
        let blocks = gradients(&c, None);
        c.scaling = Scaling::default();
        assert!(blocks != gradients(&c, None), "{:?} nvfp4", g.task);
    }
}

/// TransformerEngine's current per-tensor scaling by hand, for C = A·B (A: m × k values, B:
/// k × n values) in `elem` (largest finite value `max`): each operand quantized as
/// elem(x / S), S = f32(amax / max), clamped to ±max; the products (exact in f32) summed in
/// f32 from +0 in k order; the sum times S_a, then times S_b, in f32; rounded into `elem`.
fn by_hand(a: &[f64], b: &[f64], (m, k, n): (usize, usize, usize), elem: Format) -> Vec<u64> {
    let max = match elem.to_string().as_str() {
        "fp8:e4m3" => 448.0,
        "fp8:e5m2" => 57344.0,
        e => panic!("{e}"),
    };
    let calc = elem.calc();
    let quantize = |x: &[f64]| -> (Vec<f32>, f32) {
        let amax = x.iter().fold(0f64, |m, v| m.max(v.abs()));
        let s = (amax / max) as f32;
        let q = x
            .iter()
            .map(|&v| {
                let y = (v / f64::from(s)).clamp(-max, max);
                calc.to_f64(calc.from_f64(y)) as f32
            })
            .collect();
        (q, s)
    };
    let ((qa, sa), (qb, sb)) = (quantize(a), quantize(b));
    let mut out = Vec::with_capacity(m * n);
    for i in 0..m {
        for j in 0..n {
            let mut s = 0f32;
            for kk in 0..k {
                s += qa[i * k + kk] * qb[kk * n + j];
            }
            out.push(calc.from_f64(f64::from(s * sa * sb)));
        }
    }
    out
}

/// The values of `m`'s words (format `f`), transposed when `t`.
fn values(m: &Mat<u64>, f: Format, t: bool) -> Vec<f64> {
    let v = |r: usize, c: usize| f.calc().to_f64(m.at(r, c));
    match t {
        false => (0..m.rows)
            .flat_map(|r| (0..m.cols).map(move |c| v(r, c)))
            .collect(),
        true => (0..m.cols)
            .flat_map(|c| (0..m.rows).map(move |r| v(r, c)))
            .collect(),
    }
}

/// fc1 of a gpt's block with `F=current` (E4M3): its output (GELU's input) is the hand-scaled
/// product of its input (the norm's output, E4M3) and its weights as O holds them (bf16, not
/// first rounded into E4M3) plus the bias; and the head's weight gradient with `G=current`
/// (E5M2) is the hand-scaled product of the output error (in G) and the head's input.
#[test]
fn a_linear_product_equals_the_hand_scaled_one() {
    let g = one_block(small());
    let c = fp8(g, "F=current");
    let (o, f) = (c.stages.o, c.stages.f);
    let model = wiggled_in(&c, o);
    let (x, _) = batch(&g, f);
    let mut golden = Golden::default();
    let mut net = Net::new(&mut golden, &c);
    let (_, cache) = net.gpt_forward(&g, &model, &x, None).unwrap();
    let Cache::Dense { input } = &cache.blocks[0].fc1 else {
        panic!("fc1 is a dense layer")
    };
    let fc1 = &model.layers[g.block(0) + 4];
    let (rows, d, units) = (input.rows, g.dim, 4 * g.dim);
    let z = by_hand(
        &values(input, f, false),
        &values(&fc1.w, o, true),
        (rows, d, units),
        f,
    );
    let calc = f.calc();
    let u: Vec<u64> = z
        .iter()
        .enumerate()
        .map(|(i, &w)| {
            let bias = calc.to_f64(calc.from_f64(o.calc().to_f64(fc1.b[i % units])));
            calc.from_f64(calc.to_f64(w) + bias)
        })
        .collect();
    assert_eq!(cache.blocks[0].gelu.x, u, "fc1's scaled product");
    assert!(u.iter().any(|&w| calc.to_f64(w) != 0.0));

    let c = fp8(g, "G=current");
    let gr = gradients(&c, None);
    let mut golden = Golden::default();
    let mut net = Net::new(&mut golden, &c);
    let (x, labels) = batch(&g, c.stages.f);
    let (probs, cache) = net.gpt_forward(&g, &model, &x, None).unwrap();
    let dl = net.output_error(&probs, &labels).unwrap();
    let dg = net
        .convert(c.stages.l, c.stages.g, &dl)
        .unwrap()
        .into_owned();
    let Cache::Dense { input } = &cache.head else {
        panic!("the head is a dense layer")
    };
    let gw = by_hand(
        &values(&dg, c.stages.g, true),
        &values(input, f, false),
        (g.vocab, input.rows, g.dim),
        c.stages.g,
    );
    let head = g.final_norm() + 1;
    assert_eq!(gr[head].0.data, gw, "the head's scaled weight gradient");
    assert!(gw.iter().any(|&w| c.stages.g.calc().to_f64(w) != 0.0));
}
