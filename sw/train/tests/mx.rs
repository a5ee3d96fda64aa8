//! `--format mx:ELEM[:bK]` (issue 33): one training step of a 16-8-3 ReLU network in
//! mx:fp4:e2m1 with blocks of 3 against a reference written here from the specification's
//! words: every product's operands cut into blocks of K along *its* reduction dimension (the
//! inputs for X·Wᵀ, the batch for the weight gradients, the classes for the error δ·W; the
//! last block shorter), each block converted by golden `quantize_block` (§6.3), each block pair
//! summed exactly in integers (§6.4) and rounded to f32, the blocks added in f32 in order;
//! biases, the ReLU and the output error in f32.

use lpgen_golden::mx::MxFormat;
use lpgen_golden::{Format, F32};
use lpgen_train::arch::Arch;
use lpgen_train::config::{Activation, Config, Stages};
use lpgen_train::machine::{Golden, Mat};
use lpgen_train::model::Model;
use lpgen_train::net::{Cache, Net};
use rand::SeedableRng;

const FORMAT: &str = "mx:fp4:e2m1:b3";

fn config() -> Config {
    Config {
        mx: Some(FORMAT.parse().unwrap()),
        batch: 5,
        seed: 5,
        ..Config::new(
            Arch::mlp((1, 4, 4), &[8], Activation::Relu, 3),
            Stages::all(Format::F32(F32)),
        )
    }
}

/// A deterministic value in about ±2 for index `i` (wide enough that blocks get different
/// scales and FP4's coarse grid matters).
fn value(i: usize) -> f32 {
    let x = (i as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 40;
    ((x as f64 / (1u64 << 24) as f64) * 4.0 - 2.0) as f32
}

fn words(n: usize, from: usize) -> Vec<u64> {
    (0..n)
        .map(|i| u64::from(value(from + i).to_bits()))
        .collect()
}

fn f(w: u64) -> f32 {
    f32::from_bits(w as u32)
}

/// The reference dot product of `a` and `b` (equal lengths) in `FORMAT`: blocks of K in
/// order, the last one shorter. A block converts by §6.3 (golden `quantize_block`); FP4
/// elements are multiples of 1/2, so 2·P is an integer and a block's exact value is
/// Σ (2·P_a)(2·P_b) · X_a · X_b / 4, an integer times a power of two, exact in f64 and then
/// rounded once to f32; the blocks' f32 values are added in f32 from +0.
fn reference_dot(a: &[f32], b: &[f32]) -> f32 {
    let mx: MxFormat = FORMAT.parse().unwrap();
    assert_eq!(a.len(), b.len());
    let mut acc = 0f32;
    for (ca, cb) in a.chunks(mx.block).zip(b.chunks(mx.block)) {
        let to64 = |c: &[f32]| c.iter().map(|&x| f64::from(x)).collect::<Vec<_>>();
        let (qa, qb) = (
            mx.quantize_block(&to64(ca)).unwrap(),
            mx.quantize_block(&to64(cb)).unwrap(),
        );
        let (xa, xb) = (i32::from(qa.scale) - 127, i32::from(qb.scale) - 127);
        // FP4 E2M1 (OCP MX §5.3.3): S.EE.M, bias 1; E = 0 is subnormal (0 or 0.5).
        let twice = |code: u8| -> i64 {
            let (e, m) = (i64::from(code >> 1 & 3), i64::from(code & 1));
            let mag = if e == 0 { m } else { (2 + m) << (e - 1) };
            if code & 8 != 0 {
                -mag
            } else {
                mag
            }
        };
        let sum: i64 = qa
            .codes
            .iter()
            .zip(&qb.codes)
            .map(|(&p, &q)| twice(p) * twice(q))
            .sum();
        acc += (sum as f64 * 2f64.powi(xa + xb - 2)) as f32;
    }
    acc
}

fn column(m: &Mat<u64>, c: usize) -> Vec<f32> {
    (0..m.rows).map(|r| f(m.at(r, c))).collect()
}

fn row(m: &Mat<u64>, r: usize) -> Vec<f32> {
    m.row(r).iter().map(|&w| f(w)).collect()
}

#[test]
fn an_mx_step_quantizes_every_product_along_its_reduction_dimension() {
    let cfg = config();
    let mut model: Model<u64> = Model::init(&cfg);
    for (l, p) in model.layers.iter_mut().enumerate() {
        p.w.data = words(p.w.data.len(), 1000 * l);
        p.b = words(p.b.len(), 1000 * l + 500);
    }
    let (batch, inputs) = (5, 16);
    let x = Mat {
        rows: batch,
        cols: inputs,
        data: words(batch * inputs, 7000),
    };
    let labels = [0u8, 2, 1, 1, 0];
    // One thread: the step runs whole and keeps its layers' caches (net_shares).
    let mut machine = Golden {
        threads: 1,
        ..Golden::default()
    };
    let mut net = Net::new(&mut machine, &cfg);
    let mut noise = rand_pcg::Pcg64::seed_from_u64(1);
    let (fw, grads) = net
        .gradients(&model, x.clone(), &labels, &mut noise)
        .unwrap();
    let (w1, b1, w2) = (&model.layers[0].w, &model.layers[0].b, &model.layers[1].w);
    // Forward: z1 = X·W1ᵀ + b1, each sum over the 16 inputs (blocks 3,3,3,3,3,1).
    let Cache::Relu { input: z1 } = &fw.caches[1] else {
        panic!("layer 1 is the ReLU")
    };
    let Cache::Dense { input: h } = &fw.caches[2] else {
        panic!("layer 2 is dense")
    };
    for s in 0..batch {
        for (u, &bias) in b1.iter().enumerate() {
            let want = reference_dot(&row(&x, s), &row(w1, u)) + f(bias);
            assert_eq!(f(z1.at(s, u)).to_bits(), want.to_bits(), "z1[{s}][{u}]");
        }
    }
    // The output error δ2 = p − onehot, in f32.
    let d2 = Mat {
        rows: batch,
        cols: 3,
        data: (0..batch * 3)
            .map(|i| {
                let one = if labels[i / 3] as usize == i % 3 {
                    1.0
                } else {
                    0.0
                };
                u64::from((f(fw.probs.data[i]) - one).to_bits())
            })
            .collect(),
    };
    // dW2 = δ2ᵀ·H, each sum over the batch of 5 (blocks 3, 2); db2 = Σ δ2 in f32.
    for c in 0..3 {
        for j in 0..8 {
            let want = reference_dot(&column(&d2, c), &column(h, j));
            assert_eq!(
                f(grads[1].0.at(c, j)).to_bits(),
                want.to_bits(),
                "dW2[{c}][{j}]"
            );
        }
        let sum = column(&d2, c).iter().fold(0f32, |s, &v| s + v);
        assert_eq!(f(grads[1].1[c]).to_bits(), sum.to_bits(), "db2[{c}]");
    }
    // The error at the hidden layer, δ2·W2 (a sum over the 3 classes: one block), masked by
    // the ReLU; then dW1 = δ1ᵀ·X over the batch.
    let d1 = Mat {
        rows: batch,
        cols: 8,
        data: (0..batch * 8)
            .map(|i| {
                let (s, j) = (i / 8, i % 8);
                let e = reference_dot(&row(&d2, s), &column(w2, j));
                let mask = if f(z1.at(s, j)) > 0.0 { 1.0 } else { 0.0 };
                u64::from((e * mask).to_bits())
            })
            .collect(),
    };
    let mut nonzero = 0;
    for u in 0..8 {
        for i in 0..inputs {
            let want = reference_dot(&column(&d1, u), &column(&x, i));
            nonzero += usize::from(want != 0.0);
            assert_eq!(
                f(grads[0].0.at(u, i)).to_bits(),
                want.to_bits(),
                "dW1[{u}][{i}]"
            );
        }
    }
    assert!(
        nonzero > 40,
        "the test exercises the hidden layer's gradient"
    );
}

/// The machine's MX product adds the blocks in f32, in order (not exactly): blocks of very
/// different magnitudes, so that the f32 additions round, against the reference; and the
/// operands exercise both dimensions (A's rows and B's columns cut along k = 12).
#[test]
fn the_mx_product_adds_the_blocks_in_f32_in_order() {
    use lpgen_train::machine::Machine;
    let (m, k, n) = (4, 12, 5);
    // Block b of each row of A scaled by 2^(20, 0, -7, 11)[b].
    let scale = [20, 0, -7, 11];
    let a = Mat {
        rows: m,
        cols: k,
        data: (0..m * k)
            .map(|i| u64::from((value(i) * 2f32.powi(scale[i % k / 3])).to_bits()))
            .collect(),
    };
    let b = Mat {
        rows: k,
        cols: n,
        data: words(k * n, 300),
    };
    let c = Golden::default()
        .mx_matmul(FORMAT.parse().unwrap(), a.view(), b.view())
        .unwrap();
    let mut rounded = 0;
    for i in 0..m {
        for j in 0..n {
            let (ra, cb) = (row(&a, i), column(&b, j));
            let want = reference_dot(&ra, &cb);
            assert_eq!(f(c.at(i, j)).to_bits(), want.to_bits(), "C[{i}][{j}]");
            // The same blocks added exactly (f64 holds these sums), rounded once.
            let exact = ra
                .chunks(3)
                .zip(cb.chunks(3))
                .map(|(x, y)| f64::from(reference_dot(x, y)))
                .sum::<f64>() as f32;
            rounded += usize::from(exact != want);
        }
    }
    assert!(rounded > 0, "some sums round in f32");
}
