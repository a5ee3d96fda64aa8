//! The MLP and one SGD step, written as [`Machine`] operations only: the host decides what to
//! compute, in which format, and moves words; every arithmetic result comes from the machine.
//!
//! Stage formats (seed 004 ch. 4): forward in F, softmax and output error in L, error
//! propagation in B, gradients in G, momentum, update and master weights in O; words cross a
//! stage boundary by the machine's conversion (the identity when the formats agree).

use lpgen_golden::{AluOp, Format};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

use crate::config::{Activation, Config};
use std::borrow::Cow;

use crate::machine::{Accumulate, Machine, Mat, View, Word};
use crate::TrainError;

/// One layer: W (out × in), b, their momentum and (with Kahan updates) compensations, in O.
#[derive(Clone, Debug, PartialEq)]
pub struct Layer<W = u64> {
    pub w: Mat<W>,
    pub b: Vec<W>,
    pub vw: Vec<W>,
    pub vb: Vec<W>,
    pub cw: Vec<W>,
    pub cb: Vec<W>,
}

/// The network's parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct Model<W = u64> {
    pub layers: Vec<Layer<W>>,
}

impl<W: Word> Model<W> {
    /// Seed 000 §4.2.1: hidden weights uniform in ±4·sqrt(6 / (fan_in + fan_out)) for sigmoid
    /// (±sqrt(6 / (fan_in + fan_out)) for ReLU), hidden biases 0; the softmax layer's weights
    /// and biases 0. Drawn in f64 from `seed`, converted to O.
    pub fn init(cfg: &Config) -> Model<W> {
        let o = cfg.stages.o.calc();
        let zero = W::from_bits(o.zero());
        let mut rng = Pcg64::seed_from_u64(cfg.seed);
        let n = cfg.layers.len() - 1;
        let layers = (0..n)
            .map(|l| {
                let (fan_in, fan_out) = (cfg.layers[l], cfg.layers[l + 1]);
                let last = l + 1 == n;
                let gain = match cfg.activation {
                    Activation::Sigmoid => 4.0,
                    Activation::Relu => 1.0,
                };
                let r = gain * (6.0 / (fan_in + fan_out) as f64).sqrt();
                let data = (0..fan_in * fan_out)
                    .map(|_| {
                        if last {
                            zero
                        } else {
                            W::from_bits(o.from_f64(rng.gen_range(-r..r)))
                        }
                    })
                    .collect();
                let size = fan_in * fan_out;
                Layer {
                    w: Mat {
                        rows: fan_out,
                        cols: fan_in,
                        data,
                    },
                    b: vec![zero; fan_out],
                    vw: vec![zero; size],
                    vb: vec![zero; fan_out],
                    cw: vec![zero; size],
                    cb: vec![zero; fan_out],
                }
            })
            .collect();
        Model { layers }
    }
}

/// The accumulation of a product or sum in format `f`: exact with quires (posit) or always
/// (fix: the wide accumulator), Kahan where asked (LNS), otherwise naive.
fn accumulation(f: Format, quire: bool, kahan: bool) -> Accumulate {
    match f {
        Format::Posit(_) if quire => Accumulate::Exact,
        Format::Fix(_) => Accumulate::Exact,
        Format::Lns(_) if kahan => Accumulate::Kahan,
        _ => Accumulate::Naive,
    }
}

/// ⌈log2 |x|⌉ of a nonzero finite f64, exactly.
fn ceil_log2(x: f64) -> i32 {
    let bits = x.abs().to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i32;
    let mant = bits & ((1u64 << 52) - 1);
    if exp == 0 {
        // Subnormal: value = mant·2^−1074.
        let top = 63 - mant.leading_zeros() as i32;
        let pow2 = mant & (mant - 1) == 0;
        return top - 1074 + if pow2 { 0 } else { 1 };
    }
    exp - 1023 + if mant == 0 { 0 } else { 1 }
}

/// The largest k for which the format holds 2^−k exactly (LNS: 2^I − 1, posit: the largest
/// scale, fix: F).
fn pow2_reach(f: Format) -> i32 {
    match f {
        Format::Lns(l) => (1i32 << l.int_bits) - 1,
        Format::Posit(p) => p.max_scale(),
        Format::Fix(x) => x.frac_bits as i32,
        Format::F32 => 126,
    }
}

/// The operations of one run: a machine and the run's configuration.
pub struct Net<'a, M: Machine> {
    pub m: &'a mut M,
    pub cfg: &'a Config,
}

/// What a forward pass keeps for the backward pass: each layer's input (A_0 = X) in F and
/// its pre-activation Z in F; the output probabilities in L.
pub struct Forward<W = u64> {
    pub inputs: Vec<Mat<W>>,
    pub pre: Vec<Mat<W>>,
    pub probs: Mat<W>,
}

impl<M: Machine> Net<'_, M> {
    /// `a` in `to`: the machine's conversion, or `a` itself when the formats agree.
    fn convert<'m>(
        &mut self,
        from: Format,
        to: Format,
        a: &'m Mat<M::Word>,
    ) -> Result<Cow<'m, Mat<M::Word>>, TrainError> {
        if from == to {
            return Ok(Cow::Borrowed(a));
        }
        Ok(Cow::Owned(Mat {
            rows: a.rows,
            cols: a.cols,
            data: self.m.convert(from, to, &a.data)?,
        }))
    }

    /// Words of `a` in `to` (see [`Net::convert`]).
    fn convert_words<'m>(
        &mut self,
        from: Format,
        to: Format,
        a: &'m [M::Word],
    ) -> Result<Cow<'m, [M::Word]>, TrainError> {
        if from == to {
            return Ok(Cow::Borrowed(a));
        }
        Ok(Cow::Owned(self.m.convert(from, to, a)?))
    }

    fn splat(&self, f: Format, x: f64, n: usize) -> Vec<M::Word> {
        vec![M::Word::constant(f, x); n]
    }

    /// e^x elementwise. f32: libm. Other formats: seed 000 eq. 2.6 as lane operations (the
    /// golden `Lns::exp_taylor` op for op): y = x·2^−k with k = max(0, ⌈log2|x|⌉ + 1),
    /// p = 1 + y + y²/2 + y³/6 + y⁴/24 (t ← t·y / j), then p squared k times (a lane whose k
    /// is used up multiplies by one, which is exact).
    pub fn exp(&mut self, f: Format, x: &[M::Word]) -> Result<Vec<M::Word>, TrainError> {
        if f == Format::F32 {
            let c = f.calc();
            return Ok(x
                .iter()
                .map(|&v| M::Word::from_bits(c.exp(v.to_bits())))
                .collect());
        }
        let ks: Vec<i32> = x
            .iter()
            .map(|&v| {
                let r = v.value(f);
                if r == 0.0 || !r.is_finite() {
                    0
                } else {
                    (ceil_log2(r) + 1).max(0)
                }
            })
            .collect();
        // y = x·2^−k in steps of at most 2^−kmax, the smallest power of two the format holds
        // exactly (the intermediate values lie between x and y, so none saturates).
        let kmax = pow2_reach(f);
        let ks: Vec<i32> = ks.iter().map(|&k| if kmax == 0 { 0 } else { k }).collect();
        let one = self.splat(f, 1.0, x.len());
        let mut y = x.to_vec();
        let mut left = ks.clone();
        while left.iter().any(|&k| k > 0) {
            let scale: Vec<M::Word> = left
                .iter_mut()
                .map(|k| {
                    let s = (*k).min(kmax);
                    *k -= s;
                    M::Word::constant(f, (-s as f64).exp2())
                })
                .collect();
            y = self.m.lanes(f, AluOp::Mul, &y, &scale)?;
        }
        let mut p = self.m.lanes(f, AluOp::Add, &one, &y)?;
        let mut t = y.clone();
        for j in [2.0, 3.0, 4.0] {
            t = self.m.lanes(f, AluOp::Mul, &t, &y)?;
            t = self
                .m
                .lanes(f, AluOp::Div, &t, &self.splat(f, j, x.len()))?;
            p = self.m.lanes(f, AluOp::Add, &p, &t)?;
        }
        let rounds = ks.iter().copied().max().unwrap_or(0);
        for r in 1..=rounds {
            let b: Vec<M::Word> = p
                .iter()
                .zip(&ks)
                .map(|(&pv, &k)| if k >= r { pv } else { one[0] })
                .collect();
            p = self.m.lanes(f, AluOp::Mul, &p, &b)?;
        }
        Ok(p)
    }

    /// The activation of a hidden layer, elementwise in F.
    fn activate(&mut self, z: &Mat<M::Word>) -> Result<Mat<M::Word>, TrainError> {
        let f = self.cfg.stages.f;
        let n = z.data.len();
        let data = match self.cfg.activation {
            Activation::Relu => self
                .m
                .lanes(f, AluOp::Max, &z.data, &self.splat(f, 0.0, n))?,
            Activation::Sigmoid => {
                // 1 / (1 + e^−z)
                let nz = self.m.lanes(f, AluOp::Neg, &z.data, &[])?;
                let e = self.exp(f, &nz)?;
                let one = self.splat(f, 1.0, n);
                let d = self.m.lanes(f, AluOp::Add, &one, &e)?;
                self.m.lanes(f, AluOp::Div, &one, &d)?
            }
        };
        Ok(Mat {
            rows: z.rows,
            cols: z.cols,
            data,
        })
    }

    /// Adds the bias row to every row of `z`.
    fn add_bias(
        &mut self,
        f: Format,
        z: &Mat<M::Word>,
        b: &[M::Word],
    ) -> Result<Mat<M::Word>, TrainError> {
        let bb: Vec<M::Word> = (0..z.rows).flat_map(|_| b.iter().copied()).collect();
        Ok(Mat {
            rows: z.rows,
            cols: z.cols,
            data: self.m.lanes(f, AluOp::Add, &z.data, &bb)?,
        })
    }

    /// Row sums of `x` (a product with a column of ones, accumulated as `acc`).
    fn row_sums(
        &mut self,
        f: Format,
        acc: Accumulate,
        x: View<'_, M::Word>,
    ) -> Result<Vec<M::Word>, TrainError> {
        let ones = Mat::filled(x.cols(), 1, M::Word::constant(f, 1.0));
        Ok(self.m.matmul(f, acc, x, ones.view())?.data)
    }

    /// Softmax of each row of `z` (in L): e^(z − max) / Σ e^(z − max).
    fn softmax(&mut self, z: &Mat<M::Word>) -> Result<Mat<M::Word>, TrainError> {
        let l = self.cfg.stages.l;
        let cols: Vec<Vec<M::Word>> = (0..z.cols)
            .map(|c| (0..z.rows).map(|r| z.at(r, c)).collect())
            .collect();
        let mut max = cols[0].clone();
        for col in &cols[1..] {
            max = self.m.lanes(l, AluOp::Max, &max, col)?;
        }
        let mm: Vec<M::Word> = (0..z.rows)
            .flat_map(|r| std::iter::repeat_n(max[r], z.cols))
            .collect();
        let d = self.m.lanes(l, AluOp::Sub, &z.data, &mm)?;
        let e = Mat {
            rows: z.rows,
            cols: z.cols,
            data: self.exp(l, &d)?,
        };
        let acc = accumulation(l, self.cfg.quire, self.cfg.kahan.softmax);
        let s = self.row_sums(l, acc, e.view())?;
        let ss: Vec<M::Word> = (0..z.rows)
            .flat_map(|r| std::iter::repeat_n(s[r], z.cols))
            .collect();
        Ok(Mat {
            rows: z.rows,
            cols: z.cols,
            data: self.m.lanes(l, AluOp::Div, &e.data, &ss)?,
        })
    }

    /// The forward pass of a batch `x` (rows = samples, in F).
    pub fn forward(
        &mut self,
        model: &Model<M::Word>,
        x: Mat<M::Word>,
    ) -> Result<Forward<M::Word>, TrainError> {
        let st = self.cfg.stages;
        let acc = accumulation(st.f, self.cfg.quire, self.cfg.kahan.matmul);
        let n = model.layers.len();
        let mut inputs = vec![x];
        let mut pre = vec![];
        for (i, layer) in model.layers.iter().enumerate() {
            let w = self.convert(st.o, st.f, &layer.w)?;
            let b = self.convert_words(st.o, st.f, &layer.b)?;
            let z = self.m.matmul(st.f, acc, inputs[i].view(), w.t())?;
            let z = self.add_bias(st.f, &z, &b)?;
            if i + 1 < n {
                let a = self.activate(&z)?;
                inputs.push(a);
            }
            pre.push(z);
        }
        let logits = self.convert(st.f, st.l, &pre[n - 1])?.into_owned();
        let probs = self.softmax(&logits)?;
        Ok(Forward { inputs, pre, probs })
    }

    /// One SGD step on a batch: forward, backward, momentum and update (all in place).
    /// Returns the forward pass (for metrics). `lr` and `momentum` are this step's.
    pub fn step(
        &mut self,
        model: &mut Model<M::Word>,
        x: Mat<M::Word>,
        labels: &[u8],
        lr: f64,
        momentum: f64,
    ) -> Result<Forward<M::Word>, TrainError> {
        let st = self.cfg.stages;
        let q = self.cfg.quire;
        let k = self.cfg.kahan;
        let fw = self.forward(model, x)?;
        let batch = labels.len();
        let classes = fw.probs.cols;
        // Output error p − onehot, in L.
        let (one, zero) = (M::Word::constant(st.l, 1.0), M::Word::constant(st.l, 0.0));
        let onehot: Vec<M::Word> = (0..batch)
            .flat_map(|r| (0..classes).map(move |c| (r, c)))
            .map(|(r, c)| if labels[r] as usize == c { one } else { zero })
            .collect();
        let delta_l = Mat {
            rows: batch,
            cols: classes,
            data: self.m.lanes(st.l, AluOp::Sub, &fw.probs.data, &onehot)?,
        };
        let mut delta_b = self.convert(st.l, st.b, &delta_l)?.into_owned();
        let mut delta_g = self.convert(st.l, st.g, &delta_l)?.into_owned();
        let n = model.layers.len();
        let mut grads = vec![];
        for i in (0..n).rev() {
            // Gradients in G: δᵀ·A (a product over the batch) and Σ_batch δ.
            let a_g = self.convert(st.f, st.g, &fw.inputs[i])?;
            let gw = self.m.matmul(
                st.g,
                accumulation(st.g, q, k.matmul),
                delta_g.t(),
                a_g.view(),
            )?;
            let gb = self.row_sums(st.g, accumulation(st.g, q, k.sums), delta_g.t())?;
            grads.push((gw, gb));
            if i == 0 {
                break;
            }
            // Propagate in B: e = δ·W, times the activation's derivative at layer i − 1.
            let w_b = self.convert(st.o, st.b, &model.layers[i].w)?;
            let e = self.m.matmul(
                st.b,
                accumulation(st.b, q, k.matmul),
                delta_b.view(),
                w_b.view(),
            )?;
            let d = match self.cfg.activation {
                Activation::Sigmoid => {
                    let h = self.convert(st.f, st.b, &fw.inputs[i])?;
                    let one = self.splat(st.b, 1.0, h.data.len());
                    let om = self.m.lanes(st.b, AluOp::Sub, &one, &h.data)?;
                    let dh = self.m.lanes(st.b, AluOp::Mul, &h.data, &om)?;
                    self.m.lanes(st.b, AluOp::Mul, &e.data, &dh)?
                }
                Activation::Relu => {
                    let z = self.convert(st.f, st.b, &fw.pre[i - 1])?;
                    let zero = self.splat(st.b, 0.0, z.data.len());
                    let mask = self.m.lanes(st.b, AluOp::Lt, &zero, &z.data)?;
                    self.m.lanes(st.b, AluOp::Mul, &e.data, &mask)?
                }
            };
            delta_b = Mat {
                rows: e.rows,
                cols: e.cols,
                data: d,
            };
            delta_g = self.convert(st.b, st.g, &delta_b)?.into_owned();
        }
        grads.reverse();
        // Update in O: v = μ·v − (lr / batch)·g; w = w + v (Kahan with a compensation per
        // weight where asked).
        let rate = lr / batch as f64;
        for (layer, (gw, gb)) in model.layers.iter_mut().zip(grads) {
            let gw = self.convert_words(st.g, st.o, &gw.data)?;
            let gb = self.convert_words(st.g, st.o, &gb)?;
            let (nw, vw, cw) =
                self.update(&layer.w.data, &layer.vw, &layer.cw, &gw, rate, momentum)?;
            let (nb, vb, cb) = self.update(&layer.b, &layer.vb, &layer.cb, &gb, rate, momentum)?;
            (layer.w.data, layer.vw, layer.cw) = (nw, vw, cw);
            (layer.b, layer.vb, layer.cb) = (nb, vb, cb);
        }
        Ok(fw)
    }

    #[allow(clippy::type_complexity)]
    fn update(
        &mut self,
        w: &[M::Word],
        v: &[M::Word],
        c: &[M::Word],
        g: &[M::Word],
        rate: f64,
        momentum: f64,
    ) -> Result<(Vec<M::Word>, Vec<M::Word>, Vec<M::Word>), TrainError> {
        let o = self.cfg.stages.o;
        let n = w.len();
        let step = self.m.lanes(o, AluOp::Mul, g, &self.splat(o, rate, n))?;
        let kept = self
            .m
            .lanes(o, AluOp::Mul, v, &self.splat(o, momentum, n))?;
        let v = self.m.lanes(o, AluOp::Sub, &kept, &step)?;
        if self.cfg.kahan.update {
            let tmp = self.m.lanes(o, AluOp::Add, c, &v)?;
            let t = self.m.lanes(o, AluOp::Add, w, &tmp)?;
            let u = self.m.lanes(o, AluOp::Sub, &t, w)?;
            let c = self.m.lanes(o, AluOp::Sub, &tmp, &u)?;
            Ok((t, v, c))
        } else {
            let t = self.m.lanes(o, AluOp::Add, w, &v)?;
            Ok((t, v, c.to_vec()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{KahanPlaces, Normalize, Schedule, Stages};
    use crate::machine::Golden;

    fn cfg(f: &str) -> Config {
        Config {
            stages: Stages::all(f.parse().unwrap()),
            quire: true,
            kahan: KahanPlaces::all(),
            keep_bits: None,
            layers: vec![4, 3, 2],
            activation: Activation::Sigmoid,
            batch: 2,
            lr: 0.1,
            momentum: 0.5,
            momentum_from: 1,
            schedule: Schedule::Fixed,
            normalize: Normalize::PerPixel,
            seed: 1,
        }
    }

    /// The lane sequence of `exp` is the golden `Lns::exp_taylor`, for every lns:5:6 word.
    #[test]
    fn exp_by_lanes_is_the_golden_taylor_series() {
        let c = cfg("lns:5:6");
        let mut g = Golden::default();
        let mut net = Net { m: &mut g, cfg: &c };
        let f: Format = "lns:5:6".parse().unwrap();
        let words: Vec<u64> = (0..1u64 << f.width()).collect();
        let got = net.exp(f, &words).unwrap();
        let l = match f {
            Format::Lns(l) => l.ctx(),
            _ => unreachable!(),
        };
        for (&w, &e) in words.iter().zip(&got) {
            assert_eq!(e, l.exp_taylor(w), "exp of {w:#x}");
        }
    }

    /// A few steps on a tiny problem reduce the loss in every family.
    #[test]
    fn steps_reduce_the_loss() {
        for f in ["f32", "lns:5:6", "posit:16", "fix:7:8"] {
            let c = cfg(f);
            let fmt = c.stages.f;
            let mut model = Model::init(&c);
            let mut g = Golden::default();
            let mut net = Net { m: &mut g, cfg: &c };
            let calc = fmt.calc();
            let x = Mat {
                rows: 2,
                cols: 4,
                data: [1.0, -1.0, 0.5, 0.0, -1.0, 1.0, 0.0, 0.5]
                    .iter()
                    .map(|&v| calc.from_f64(v))
                    .collect(),
            };
            let labels = [0u8, 1];
            let loss = |fw: &Forward| -> f64 {
                (0..2)
                    .map(|r| {
                        -calc
                            .to_f64(fw.probs.at(r, labels[r] as usize))
                            .max(1e-9)
                            .ln()
                    })
                    .sum()
            };
            let first = loss(&net.step(&mut model, x.clone(), &labels, 0.5, 0.5).unwrap());
            for _ in 0..30 {
                net.step(&mut model, x.clone(), &labels, 0.5, 0.5).unwrap();
            }
            let last = loss(&net.forward(&model, x.clone()).unwrap());
            assert!(last < 0.5 * first, "{f}: loss {first} -> {last}");
        }
    }

    #[test]
    fn ceil_log2_is_exact() {
        for (x, k) in [
            (1.0, 0),
            (2.0, 1),
            (3.0, 2),
            (0.5, -1),
            (0.75, 0),
            (1.0000001, 1),
        ] {
            assert_eq!(ceil_log2(x), k, "{x}");
            assert_eq!(ceil_log2(-x), k, "{x}");
        }
        assert_eq!(ceil_log2(f64::from_bits(1)), -1074);
        assert_eq!(ceil_log2(f64::from_bits(3)), -1072);
    }
}
