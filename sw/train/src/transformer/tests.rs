//! The gpt against an independent f64 implementation written here (not derived from the
//! machine code): its forward pass, and its gradients against central differences of that
//! reference's loss; causality; learning in f32 and in narrow formats.

use lpgen_golden::Format;

use super::*;
use crate::arch::Arch;
use crate::config::Stages;
use crate::machine::f32::Float;
use crate::machine::Golden;

/// A gpt of `layers` blocks, dim 8, 2 heads, context 4 in `f`, SGD.
pub(crate) fn gpt_cfg(f: &str, g: Gpt) -> Config {
    Config {
        batch: 2,
        lr: 0.01,
        seed: 5,
        ..Config::new(Arch::gpt(g).unwrap(), Stages::all(f.parse().unwrap()))
    }
}

pub(super) fn small() -> Gpt {
    Gpt {
        layers: 2,
        heads: 2,
        dim: 8,
        context: 4,
        vocab: 256,
        task: Task::Text,
    }
}

/// A vit of the same blocks on 4×4 images in 2×2 patches, 3 classes.
pub(super) fn small_vit() -> Gpt {
    Gpt {
        vocab: 3,
        task: Task::Image { side: 4, patch: 2 },
        ..small()
    }
}

/// Two 4×4 images and their classes.
fn images() -> (Mat<f32>, Vec<u8>) {
    let x = Mat {
        rows: 2,
        cols: 16,
        data: (0..32).map(|i| wiggle(500 + i) as f32).collect(),
    };
    (x, vec![2, 0])
}

/// The batch of `g`'s task.
fn batch_of(g: &Gpt) -> (Mat<f32>, Vec<u8>) {
    match g.task {
        Task::Text => windows(),
        Task::Image { .. } => images(),
    }
}

/// A deterministic value in [−1, 1) for index `i`.
fn wiggle(i: usize) -> f64 {
    let x = (i as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 11;
    x as f64 / (1u64 << 52) as f64 - 1.0
}

/// The initial model with every parameter moved off its initial value (the head and the
/// biases start at zero and the gains at one, which would hide gradients).
fn wiggled(cfg: &Config) -> Model<f32> {
    let mut m: Model<f32> = Model::init(cfg);
    let mut k = 0;
    for p in &mut m.layers {
        for w in p.w.data.iter_mut().chain(p.b.iter_mut()) {
            *w += 0.3 * wiggle(k) as f32;
            k += 1;
        }
    }
    m
}

/// Two windows of 4 tokens and their next tokens.
fn windows() -> (Mat<f32>, Vec<u8>) {
    let tokens = [3u8, 7, 3, 9, 7, 7, 1, 3];
    let labels = vec![7u8, 3, 9, 1, 7, 1, 3, 9];
    let x = Mat {
        rows: 2,
        cols: 4,
        data: tokens.iter().map(|&t| f32::from_bits(t as u32)).collect(),
    };
    (x, labels)
}

/// [`wiggled`]'s values rounded into `fmt` (a model of `cfg`).
pub(super) fn wiggled_in(cfg: &Config, fmt: Format) -> Model<u64> {
    let g = cfg.arch.gpt.expect("a gpt");
    let m = wiggled(&gpt_cfg("f32", g));
    let mut out: Model<u64> = Model::init(cfg);
    for (o, p) in out.layers.iter_mut().zip(&m.layers) {
        for (a, &b) in o.w.data.iter_mut().zip(&p.w.data) {
            *a = u64::constant(fmt, b as f64);
        }
        for (a, &b) in o.b.iter_mut().zip(&p.b) {
            *a = u64::constant(fmt, b as f64);
        }
    }
    out
}

// ---- the f64 reference ----

type M64 = Vec<Vec<f64>>;

fn weights(p: &Params<f32>) -> (M64, Vec<f64>) {
    let w = (0..p.w.rows)
        .map(|r| p.w.row(r).iter().map(|&v| v as f64).collect())
        .collect();
    (w, p.b.iter().map(|&v| v as f64).collect())
}

/// x·Wᵀ + b.
fn linear(x: &M64, p: &Params<f32>) -> M64 {
    let (w, b) = weights(p);
    x.iter()
        .map(|row| {
            (0..w.len())
                .map(|o| {
                    let s: f64 = row.iter().zip(&w[o]).map(|(a, c)| a * c).sum();
                    s + b.get(o).copied().unwrap_or(0.0)
                })
                .collect()
        })
        .collect()
}

fn layer_norm(x: &M64, p: &Params<f32>) -> M64 {
    let (g, b) = weights(p);
    x.iter()
        .map(|row| {
            let n = row.len() as f64;
            let mean = row.iter().sum::<f64>() / n;
            let var = row.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n;
            let r = 1.0 / (var + 1e-5).sqrt();
            (0..row.len())
                .map(|j| (row[j] - mean) * r * g[j][0] + b[j])
                .collect()
        })
        .collect()
}

fn add(a: &M64, b: &M64) -> M64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| x.iter().zip(y).map(|(u, v)| u + v).collect())
        .collect()
}

fn softmax(z: &[f64]) -> Vec<f64> {
    let m = z.iter().cloned().fold(f64::MIN, f64::max);
    let e: Vec<f64> = z.iter().map(|v| (v - m).exp()).collect();
    let s: f64 = e.iter().sum();
    e.iter().map(|v| v / s).collect()
}

/// Causal multi-head attention of the rows of one window.
fn attention(g: &Gpt, x: &M64, qkv_p: &Params<f32>, proj: &Params<f32>) -> M64 {
    let (d, dh) = (g.dim, g.dim / g.heads);
    let qkv = linear(x, qkv_p);
    let t = x.len();
    let mut out = vec![vec![0.0; d]; t];
    for h in 0..g.heads {
        for i in 0..t {
            let keys = match g.task {
                Task::Text => i + 1,
                Task::Image { .. } => t,
            };
            let scores: Vec<f64> = (0..keys)
                .map(|j| {
                    (0..dh)
                        .map(|c| qkv[i][h * dh + c] * qkv[j][d + h * dh + c])
                        .sum::<f64>()
                        / (dh as f64).sqrt()
                })
                .collect();
            let p = softmax(&scores);
            for c in 0..dh {
                out[i][h * dh + c] = (0..keys).map(|j| p[j] * qkv[j][2 * d + h * dh + c]).sum();
            }
        }
    }
    linear(&out, proj)
}

/// The reference's probabilities of every position of every window.
fn reference(g: &Gpt, m: &Model<f32>, x: &Mat<f32>) -> M64 {
    let p = &m.layers;
    let mut probs = vec![];
    for s in 0..x.rows {
        let position = |i: usize| (0..g.dim).map(move |j| p[1].w.at(i, j) as f64);
        let mut h: M64 = match g.task {
            Task::Text => x
                .row(s)
                .iter()
                .enumerate()
                .map(|(i, w)| {
                    let t = w.to_bits() as usize;
                    let e = (0..g.dim).map(|j| p[0].w.at(t, j) as f64);
                    e.zip(position(i)).map(|(a, b)| a + b).collect()
                })
                .collect(),
            Task::Image { side, patch } => {
                let per = side / patch;
                let pixels: M64 = (0..per * per)
                    .map(|q| {
                        let (py, px) = (q / per, q % per);
                        (0..patch * patch)
                            .map(|k| {
                                let (y, xx) = (py * patch + k / patch, px * patch + k % patch);
                                x.row(s)[y * side + xx] as f64
                            })
                            .collect()
                    })
                    .collect();
                let e = linear(&pixels, &p[0]);
                e.iter()
                    .enumerate()
                    .map(|(i, r)| r.iter().zip(position(i)).map(|(a, b)| a + b).collect())
                    .collect()
            }
        };
        for l in 0..g.layers {
            let at = g.block(l);
            let a = attention(g, &layer_norm(&h, &p[at]), &p[at + 1], &p[at + 2]);
            h = add(&h, &a);
            let u = linear(&layer_norm(&h, &p[at + 3]), &p[at + 4]);
            let gl: M64 = u
                .iter()
                .map(|r| r.iter().map(|&v| v / (1.0 + (-1.702 * v).exp())).collect())
                .collect();
            h = add(&h, &linear(&gl, &p[at + 5]));
        }
        let at = g.final_norm();
        let hn = layer_norm(&h, &p[at]);
        let hn = match g.task {
            Task::Text => hn,
            Task::Image { .. } => {
                let n = hn.len() as f64;
                vec![(0..g.dim)
                    .map(|j| hn.iter().map(|r| r[j]).sum::<f64>() / n)
                    .collect()]
            }
        };
        let z = linear(&hn, &p[at + 1]);
        probs.extend(z.iter().map(|r| softmax(r)));
    }
    probs
}

fn reference_loss(g: &Gpt, m: &Model<f32>, x: &Mat<f32>, labels: &[u8]) -> f64 {
    let p = reference(g, m, x);
    labels
        .iter()
        .enumerate()
        .map(|(r, &l)| -p[r][l as usize].ln())
        .sum()
}

// ---- the tests ----

/// The machine's forward pass (f32) equals the f64 reference's to f32 precision.
#[test]
fn forward_matches_the_f64_reference() {
    for g in [small(), small_vit()] {
        forward_matches(g);
    }
}

fn forward_matches(g: Gpt) {
    let cfg = gpt_cfg("f32", g);
    let model = wiggled(&cfg);
    let (x, _) = batch_of(&g);
    let mut m = Float { threads: 1 };
    let mut net = Net::new(&mut m, &cfg);
    let (probs, _) = net.gpt_forward(&g, &model, &x, None).unwrap();
    let want = reference(&g, &model, &x);
    for (r, row) in want.iter().enumerate() {
        for (c, &p) in row.iter().enumerate() {
            let got = probs.at(r, c) as f64;
            assert!(
                (got - p).abs() < 1e-5 + 1e-4 * p,
                "position {r} token {c}: {got} vs {p}"
            );
        }
    }
}

/// Every parameter's gradient (f32 machine) against central differences of the f64
/// reference's loss: each layer's backward pass (embeddings, norms, attention, GELU, the
/// dense layers, the residuals) is on the path of some of them.
#[test]
fn gradients_match_central_differences_of_the_reference() {
    for g in [small(), small_vit()] {
        gradients_match(g);
    }
}

fn gradients_match(g: Gpt) {
    let cfg = gpt_cfg("f32", g);
    let model = wiggled(&cfg);
    let (x, labels) = batch_of(&g);
    let mut m = Float { threads: 1 };
    let mut net = Net::new(&mut m, &cfg);
    let mut noise = cfg.stream(&[0]);
    let (_, grads) = net
        .gpt_gradients(&g, &model, &x, &labels, &mut noise)
        .unwrap();
    let mut checked = 0;
    for (i, (gw, gb)) in grads.iter().enumerate() {
        let n = gw.data.len() + gb.len();
        // The token embedding: the rows of tokens that occur.
        let picks: Vec<usize> = match (i, g.task) {
            (0, Task::Text) => [3usize, 7, 9, 1]
                .iter()
                .flat_map(|&t| (0..g.dim).step_by(3).map(move |j| t * g.dim + j))
                .collect(),
            _ => (0..n).step_by(n.div_ceil(10)).collect(),
        };
        for k in picks {
            let nw = gw.data.len();
            let backprop = if k < nw { gw.data[k] } else { gb[k - nw] } as f64;
            let h = 1e-3f32;
            let at = |dv: f32| {
                let mut m = model.clone();
                let p = &mut m.layers[i];
                match k < nw {
                    true => p.w.data[k] += dv,
                    false => p.b[k - nw] += dv,
                }
                reference_loss(&g, &m, &x, &labels)
            };
            let numeric = (at(h) - at(-h)) / (2.0 * h as f64);
            let scale = numeric.abs().max(backprop.abs()).max(1e-3);
            assert!(
                (numeric - backprop).abs() / scale < 2e-3,
                "{:?} parameter {i} word {k}: backprop {backprop}, central difference {numeric}",
                g.task
            );
            checked += (numeric.abs() > 1e-3) as usize;
        }
    }
    assert!(
        checked >= 50,
        "{:?}: only {checked} nonzero gradients",
        g.task
    );
}

/// A token changes no earlier position's prediction (the causal mask), in f32 and posit.
#[test]
fn attention_is_causal() {
    for f in ["f32", "posit:16:1"] {
        let g = small();
        let cfg = gpt_cfg(f, g);
        let fmt: Format = f.parse().unwrap();
        let model = wiggled_in(&cfg, fmt);
        let mut golden = Golden::default();
        let mut net = Net::new(&mut golden, &cfg);
        let x = |last: u64| Mat {
            rows: 1,
            cols: 4,
            data: vec![3, 7, 3, last],
        };
        let (a, _) = net.gpt_forward(&g, &model, &x(9), None).unwrap();
        let (b, _) = net.gpt_forward(&g, &model, &x(200), None).unwrap();
        assert_eq!(a.data[..3 * 256], b.data[..3 * 256], "{f}");
        assert_ne!(a.data[3 * 256..], b.data[3 * 256..], "{f}");
    }
}

/// The `attention` and `norm` places reach their sums: in lns:5:6 each changes the
/// gradients when its mode changes, and the forward and backward formats of a mixed
/// precision run (posit:16:1 optimizer, posit:8:2 elsewhere) train without error.
#[test]
fn attention_and_norm_places_and_mixed_precision_reach_the_gpt() {
    use crate::config::AccumulatePlaces;
    let g = small();
    let grads_with = |acc: &str| {
        let mut cfg = gpt_cfg("lns:5:6", g);
        cfg.accumulate = AccumulatePlaces::parse(acc).unwrap();
        let model = wiggled_in(&cfg, cfg.stages.f);
        let x = Mat {
            rows: 2,
            cols: 4,
            data: vec![3, 7, 3, 9, 7, 7, 1, 3],
        };
        let mut golden = Golden::default();
        let mut net = Net::new(&mut golden, &cfg);
        let mut noise = cfg.stream(&[0]);
        let (_, grads) = net
            .gpt_gradients(&g, &model, &x, &[7, 3, 9, 1, 7, 1, 3, 9], &mut noise)
            .unwrap();
        (grads, cfg.fingerprint())
    };
    let (base, fp) = grads_with("attention=kahan,norm=kahan");
    for acc in ["attention=naive,norm=kahan", "attention=kahan,norm=naive"] {
        let (other, other_fp) = grads_with(acc);
        assert!(other != base, "{acc}: the same gradients");
        assert!(other_fp.contains(acc) && other_fp != fp, "{other_fp}");
    }
    let (stages, _) = crate::config::parse_precision("O=posit:16:1-LFBG=posit:8:2").unwrap();
    let mut cfg = gpt_cfg("posit:16:1", g);
    cfg.stages = stages;
    let mut model: Model<u64> = Model::init(&cfg);
    let mut golden = Golden::default();
    let mut net = Net::new(&mut golden, &cfg);
    let x = Mat {
        rows: 1,
        cols: 4,
        data: vec![3, 7, 3, 9],
    };
    let mut noise = cfg.stream(&[0]);
    let fw = net
        .step(&mut model, x, &[7, 3, 9, 1], 0.01, 0.0, &mut noise)
        .unwrap();
    assert_eq!((fw.probs.rows, fw.probs.cols), (4, 256));
}

/// `text:DIR` is the directory's `*.txt` files concatenated in name order (other files left
/// out); a directory without one is refused.
#[test]
fn a_text_directory_is_its_txt_files_in_name_order() {
    let dir = std::env::temp_dir().join(format!("lpgen-text-dir-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let parts: [(&str, &[u8]); 3] = [
        ("b.txt", b"second part of the text, long enough "),
        ("a.txt", b"first part of the text comes here and "),
        ("c.bin", b"not text"),
    ];
    for (name, bytes) in parts {
        std::fs::write(dir.join(name), bytes).unwrap();
    }
    let whole = [parts[1].1, parts[0].1].concat();
    let (train, test) = text::load(&dir, 4).unwrap();
    let (want_train, want_test) = text::split(&whole, 4).unwrap();
    assert_eq!(train.images, want_train.images);
    assert_eq!(test.images, want_test.images);
    for (name, _) in parts {
        std::fs::remove_file(dir.join(name)).unwrap();
    }
    let why = text::load(&dir, 4).unwrap_err().0;
    assert!(why.contains("no *.txt file"), "{why}");
    std::fs::remove_dir_all(&dir).unwrap();
}
