//! A training step's samples in shares, one share per thread.
//!
//! Until the gradients, a step computes sample by sample: no output element of a product, a
//! lane operation or a softmax reads another sample's words, and the machines compute each
//! element whole on one thread. So where nothing in the run couples the samples, the batch
//! is cut into shares of consecutive samples, and each share runs the forward pass and every
//! layer's input error on a machine of its own ([`Machine::fork`], one thread), with the
//! host's work between the operations (im2col, pooling routes, reshapes) in the share. The
//! shares run at once, in one block of work each, instead of the step waking the threads
//! for every operation.
//!
//! Only the weight and bias gradients sum over the batch. They run after the shares, over the
//! shares' rows put back in sample order: the same products, on the same words, as the whole
//! step's. Each layer's weight gradient is cut into one part per fork, of whole output rows
//! or columns where the machine would cut its own product ([`Machine::cut`]), and its bias
//! gradient is a piece of its own; the pieces are dealt out largest first. (Dealing whole
//! layers left one fork with LeNet-5's C1, as long as all the rest in the exact modes:
//! docs/perf.md, thirty-sixth session.) Every output element is still one sum computed
//! whole, so the gradients, and the model, are word for word those of the whole step, for
//! every thread count (`shares_are_the_whole_step`).
//!
//! What couples samples, and makes a step run whole: seed 002's storage groups (a group's
//! exponent follows its largest word), a rounding stream (draws taken in the order of the
//! operations), scaling (an amax over the batch; block recipes and their draws), the 8-bit
//! codec of activations, dropout (masks drawn in order from one stream), a gpt (its own
//! passes), and a machine that cannot fork (the rtl simulation, the checked pair).

use std::borrow::Cow;
use std::sync::Mutex;

use lpgen_golden::kernel::Cut;
use rand_pcg::Pcg64;

use crate::arch::Layer;
use crate::layers::Grads;
use crate::machine::{in_parallel, join_column_blocks, Machine, Mat, Word};
use crate::model::Model;
use crate::net::{Backward, Cache, Forward, Net};
use crate::TrainError;

/// A share's machine.
type Fork<W> = Box<dyn Machine<Word = W>>;

/// A layer's sum errors and inputs in G, one matrix from each share.
type Sides<W> = (Vec<Mat<W>>, Vec<Mat<W>>);

/// What a share's passes leave for the gradients: its probabilities in L and, for each layer
/// with weights from the last to the first, its sum errors and its inputs in G, one row per
/// sample (or per sample and output position).
struct Share<W> {
    probs: Mat<W>,
    sides: Vec<(Mat<W>, Mat<W>)>,
}

impl<M: Machine> Net<'_, M> {
    /// The machines a step of `batch` samples runs its shares on, one per thread; none where
    /// the step runs whole (one thread, one sample, or something that couples the samples:
    /// module doc).
    pub(crate) fn share_machines(&self, batch: usize) -> Vec<Fork<M::Word>> {
        let cfg = self.cfg;
        let scaled = [cfg.scaling.f, cfg.scaling.b, cfg.scaling.g]
            .iter()
            .any(Option::is_some);
        let dropout = cfg
            .arch
            .layers
            .iter()
            .any(|l| matches!(l, Layer::Dropout { .. }));
        let coupled = cfg.arch.gpt.is_some()
            || self.storage.is_some()
            || self.stream.is_some()
            || self.scales.is_some()
            || scaled
            || cfg.compression.act.is_some()
            || dropout;
        let shares = self.m.threads().min(batch);
        if coupled || shares < 2 {
            return vec![];
        }
        (0..shares).map_while(|_| self.m.fork()).collect()
    }

    /// [`Net::gradients`] of batch `x` with `labels`, in shares on `forks` (from
    /// [`Net::share_machines`]). The forward pass it gives has the probabilities only.
    pub(crate) fn gradients_in_shares(
        &mut self,
        model: &Model<M::Word>,
        x: &Mat<M::Word>,
        labels: &[u8],
        noise: &Pcg64,
        forks: Vec<Fork<M::Word>>,
    ) -> Result<Backward<M::Word>, TrainError> {
        let (batch, cols, k) = (x.rows, x.cols, forks.len());
        let cfg = self.cfg;
        let forks: Vec<Mutex<Fork<M::Word>>> = forks.into_iter().map(Mutex::new).collect();
        let shares = in_parallel(k, k, |s| {
            let rows = s * batch / k..(s + 1) * batch / k;
            let x = Mat {
                rows: rows.len(),
                cols,
                data: x.data[rows.start * cols..rows.end * cols].to_vec(),
            };
            let mut m = forks[s].lock().unwrap_or_else(|e| e.into_inner());
            Net::new(&mut *m, cfg).share_passes(model, x, &labels[rows], &mut noise.clone())
        });
        let mut probs = vec![];
        let mut sides: Vec<Sides<M::Word>> = vec![];
        for share in shares {
            let share = share?;
            probs.push(share.probs);
            sides.resize_with(share.sides.len(), Default::default);
            for ((dgs, inputs), (dg, a)) in sides.iter_mut().zip(share.sides) {
                dgs.push(dg);
                inputs.push(a);
            }
        }
        let pieces = self.pieces(&sides, k);
        let dealt = deal(&pieces, k);
        let parts = in_parallel(k, k, |t| {
            let mut m = forks[t].lock().unwrap_or_else(|e| e.into_inner());
            let mut net = Net::new(&mut *m, cfg);
            dealt[t]
                .iter()
                .map(|&p| net.piece_gradients(&pieces[p], &sides[pieces[p].layer]))
                .collect::<Result<Vec<_>, _>>()
        });
        let mut done: Vec<Option<Computed<M::Word>>> = pieces.iter().map(|_| None).collect();
        for (t, part) in parts.into_iter().enumerate() {
            for (&p, computed) in dealt[t].iter().zip(part?) {
                done[p] = Some(computed);
            }
        }
        let done: Vec<Computed<M::Word>> = done
            .into_iter()
            .map(|c| c.expect("every piece dealt"))
            .collect();
        let mut grads = joined(&pieces, done, sides.len());
        grads.reverse();
        let fw = Forward {
            caches: vec![],
            probs: stack(&probs).into_owned(),
        };
        Ok((fw, grads))
    }

    /// One share's forward pass and its input errors down to the first layer with weights,
    /// as [`Net::gradients`] computes them; what the weight gradients need is kept.
    fn share_passes(
        &mut self,
        model: &Model<M::Word>,
        x: Mat<M::Word>,
        labels: &[u8],
        noise: &mut Pcg64,
    ) -> Result<Share<M::Word>, TrainError> {
        let st = self.cfg.stages;
        let fw = self.forward_with(model, x, Some(noise))?;
        let mut delta = self.output_delta(&fw.probs, labels)?;
        let cfg = self.cfg;
        let layers = &cfg.arch.layers;
        let first = self.first_weighted();
        let mut sides = vec![];
        let mut p = model.layers.len();
        for (i, cache) in fw.caches.into_iter().enumerate().rev() {
            if i < first {
                break;
            }
            let layer = &layers[i];
            let propagate = i > first;
            let next = match (layer, cache) {
                (Layer::Dense { .. }, Cache::Dense { input: a })
                | (Layer::Conv { .. }, Cache::Conv { cols: a }) => {
                    p -= 1;
                    let params = (p, &model.layers[p]);
                    let dg = self.sum_error_in_g(layer, &mut delta)?;
                    let a_g = if st.f == st.g {
                        a
                    } else {
                        self.convert(st.f, st.g, &a)?.into_owned()
                    };
                    sides.push((dg, a_g));
                    match (propagate, layer) {
                        (false, _) => None,
                        (true, Layer::Dense { .. }) => {
                            Some(self.dense_input_error(params, &delta)?)
                        }
                        (true, Layer::Conv { .. }) => {
                            Some(self.conv_input_error(layer, params, &delta)?)
                        }
                        (true, _) => unreachable!("only dense layers and convolutions"),
                    }
                }
                (_, cache) => {
                    self.layer_backward(layer, None, &cache, delta, propagate)?
                        .0
                }
            };
            match next {
                Some(d) => delta = d,
                None => break,
            }
        }
        Ok(Share {
            probs: fw.probs,
            sides,
        })
    }
}

/// A job of the gradient phase, on one layer's sides.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Job {
    /// Part `part` of `parts` of the weight gradient: its output rows or columns as `cut`
    /// says, in `parts` runs as even as can be.
    Weights { cut: Cut, part: usize, parts: usize },
    /// The bias gradient, whole.
    Bias,
}

/// A job of the gradient phase on layer `layer` (in the sides' order), and what it costs in
/// multiply-adds (or adds).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Piece {
    layer: usize,
    job: Job,
    cost: usize,
}

/// What a piece computes: weight gradient rows, or a bias gradient.
enum Computed<W> {
    Weights(Mat<W>),
    Bias(Vec<W>),
}

impl<M: Machine> Net<'_, M> {
    /// The gradient phase's pieces for `forks` forks: each layer's weight gradient cut into
    /// one part per fork where the machine would cut its product (whole if that side has
    /// fewer lines than forks), and its bias gradient.
    fn pieces(&self, sides: &[Sides<M::Word>], forks: usize) -> Vec<Piece> {
        let mut pieces = vec![];
        for (layer, (dgs, inputs)) in sides.iter().enumerate() {
            let k: usize = dgs.iter().map(|d| d.rows).sum();
            let (m, n) = (dgs[0].cols, inputs[0].cols);
            let cut = self.weight_gradient_cut((m, n), forks);
            let lines = if cut == Cut::Rows { m } else { n };
            let parts = if lines >= forks { forks } else { 1 };
            pieces.extend((0..parts).map(|part| Piece {
                layer,
                job: Job::Weights { cut, part, parts },
                cost: m * n * k / parts,
            }));
            pieces.push(Piece {
                layer,
                job: Job::Bias,
                cost: m * k,
            });
        }
        pieces
    }

    /// What `piece` computes, from its layer's `sides`.
    fn piece_gradients(
        &mut self,
        piece: &Piece,
        (dgs, inputs): &Sides<M::Word>,
    ) -> Result<Computed<M::Word>, TrainError> {
        let (cut, part, parts) = match piece.job {
            Job::Bias => return Ok(Computed::Bias(self.bias_gradient(&stack(dgs))?)),
            Job::Weights { cut, part, parts } => (cut, part, parts),
        };
        let range = |len: usize| part * len / parts..(part + 1) * len / parts;
        let (dg, a) = match cut {
            Cut::Rows => (stack_columns(dgs, range(dgs[0].cols)), stack(inputs)),
            Cut::Cols => (stack(dgs), stack_columns(inputs, range(inputs[0].cols))),
        };
        Ok(Computed::Weights(self.weight_gradient(&dg, &a)?))
    }
}

/// `pieces` dealt to `forks` forks, largest first to the fork with the least work so far:
/// each fork's pieces, in the order it computes them.
fn deal(pieces: &[Piece], forks: usize) -> Vec<Vec<usize>> {
    let mut order: Vec<usize> = (0..pieces.len()).collect();
    order.sort_by_key(|&p| std::cmp::Reverse(pieces[p].cost));
    let mut dealt = vec![(0, vec![]); forks];
    for p in order {
        let least = (0..forks).min_by_key(|&t| dealt[t].0).expect("a fork");
        dealt[least].0 += pieces[p].cost;
        dealt[least].1.push(p);
    }
    dealt.into_iter().map(|(_, ps)| ps).collect()
}

/// Each of `layers` layers' weight and bias gradients, joined from what its pieces
/// (`pieces`, a layer's weight parts in order) computed (`done`).
fn joined<W: Word>(pieces: &[Piece], done: Vec<Computed<W>>, layers: usize) -> Vec<Grads<W>> {
    let mut weights: Vec<Vec<Mat<W>>> = (0..layers).map(|_| vec![]).collect();
    let mut biases: Vec<Vec<W>> = (0..layers).map(|_| vec![]).collect();
    let mut cuts = vec![Cut::Rows; layers];
    for (piece, computed) in pieces.iter().zip(done) {
        match (piece.job, computed) {
            (Job::Weights { cut, .. }, Computed::Weights(gw)) => {
                cuts[piece.layer] = cut;
                weights[piece.layer].push(gw);
            }
            (Job::Bias, Computed::Bias(gb)) => biases[piece.layer] = gb,
            _ => unreachable!("a piece computes what its job says"),
        }
    }
    weights
        .into_iter()
        .zip(cuts)
        .map(|(parts, cut)| match cut {
            Cut::Rows => stack(&parts).into_owned(),
            Cut::Cols => {
                let rows = parts[0].rows;
                Mat {
                    rows,
                    cols: parts.iter().map(|g| g.cols).sum(),
                    data: join_column_blocks(
                        rows,
                        &parts.into_iter().map(|g| g.data).collect::<Vec<_>>(),
                    ),
                }
            }
        })
        .zip(biases)
        .collect()
}

/// Columns `cols` of the rows of `parts`, one after another.
fn stack_columns<W: Word>(parts: &[Mat<W>], cols: std::ops::Range<usize>) -> Cow<'_, Mat<W>> {
    let width = parts.first().map_or(0, |p| p.cols);
    if cols == (0..width) {
        return stack(parts);
    }
    let rows: usize = parts.iter().map(|p| p.rows).sum();
    let mut data = Vec::with_capacity(rows * cols.len());
    for p in parts {
        assert_eq!(p.cols, width, "the shares' rows have one width");
        for r in 0..p.rows {
            data.extend_from_slice(&p.data[r * width + cols.start..r * width + cols.end]);
        }
    }
    Cow::Owned(Mat {
        rows,
        cols: cols.len(),
        data,
    })
}

/// The rows of `parts` one after another.
fn stack<W: Word>(parts: &[Mat<W>]) -> Cow<'_, Mat<W>> {
    if let [one] = parts {
        return Cow::Borrowed(one);
    }
    let cols = parts.first().map_or(0, |p| p.cols);
    let mut data = Vec::with_capacity(parts.iter().map(|p| p.data.len()).sum());
    for p in parts {
        assert_eq!(p.cols, cols, "the shares' rows have one width");
        data.extend_from_slice(&p.data);
    }
    Cow::Owned(Mat {
        rows: parts.iter().map(|p| p.rows).sum(),
        cols,
        data,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arch::{Arch, ArchOptions, ModelKind};
    use crate::config::{parse_precision, Activation, Config, Stages};
    use crate::float::Float;
    use crate::machine::Golden;
    use lpgen_golden::Format;
    use rand::{Rng, SeedableRng};

    /// LeNet-5 (ReLU) on 28×28 images in `stages`.
    fn lenet(stages: Stages) -> Config {
        let options = ArchOptions {
            kind: ModelKind::Lenet5,
            hidden: vec![],
            activation: Activation::Relu,
            maxout_pieces: 2,
            dropout: vec![],
        };
        Config::new(Arch::build(&options, (1, 28, 28), 10).unwrap(), stages)
    }

    /// A model of `c`'s shapes with every weight and bias drawn in ±1 (so that errors reach
    /// every layer), `samples` random images in F and their labels.
    fn drawn<W: Word>(c: &Config, samples: usize, seed: u64) -> (Model<W>, Mat<W>, Vec<u8>) {
        let mut rng = Pcg64::seed_from_u64(seed);
        let (o, f) = (c.stages.o.calc(), c.stages.f.calc());
        let mut model: Model<W> = Model::init(c);
        for p in &mut model.layers {
            for w in p.w.data.iter_mut().chain(p.b.iter_mut()) {
                *w = W::from_bits(o.from_f64(rng.gen_range(-1.0..1.0)));
            }
        }
        let x = Mat {
            rows: samples,
            cols: 784,
            data: (0..samples * 784)
                .map(|_| W::from_bits(f.from_f64(rng.gen_range(-1.0..2.0))))
                .collect(),
        };
        let labels = (0..samples).map(|_| rng.gen_range(0..10)).collect();
        (model, x, labels)
    }

    /// The probabilities and gradients of one step, as words.
    fn step<M: Machine>(
        m: &mut M,
        c: &Config,
        case: &(Model<M::Word>, Mat<M::Word>, Vec<u8>),
    ) -> Vec<Vec<u64>> {
        let (model, x, labels) = case;
        let mut noise = Pcg64::seed_from_u64(9);
        let (fw, grads) = Net::new(m, c)
            .gradients(model, x.clone(), labels, &mut noise)
            .unwrap();
        let words = |w: &[M::Word]| w.iter().map(|w| w.to_bits()).collect::<Vec<u64>>();
        let mut out = vec![words(&fw.probs.data)];
        for (gw, gb) in &grads {
            out.push(words(&gw.data));
            out.push(words(gb));
        }
        out
    }

    /// The configurations of the issue 45 rows (every family, exact and rounded sums) and one of
    /// mixed stages.
    fn configs() -> Vec<(&'static str, Config)> {
        let all = |f: &str| Stages::all(f.parse::<Format>().unwrap());
        let quire = |c: Config| Config { quire: true, ..c };
        let (recipe, _) = parse_precision("O=bf16-L=bf16-F=fp8:e4m3-BG=fp8:e5m2").unwrap();
        // B narrower than L and G: the last layer's gradient is not rounded through B.
        let (posits, _) = parse_precision("O16-L12-F8-B8-G12").unwrap();
        vec![
            ("posit:8:2 --quire", quire(lenet(all("posit:8:2")))),
            ("posit:16:1", lenet(all("posit:16:1"))),
            ("fix:7:8", lenet(all("fix:7:8"))),
            ("lns:5:6", lenet(all("lns:5:6"))),
            ("bf16", lenet(all("bf16"))),
            ("bf16 --quire", quire(lenet(all("bf16")))),
            ("FP8 recipe --quire", quire(lenet(recipe))),
            ("O16-L12-F8-B8-G12q", quire(lenet(posits))),
            (
                "mx:fp8:e4m3",
                Config {
                    mx: Some("mx:fp8:e4m3".parse().unwrap()),
                    ..lenet(all("f32"))
                },
            ),
        ]
    }

    /// A step in shares of 2 and of 3 samples' runs gives the probabilities and gradients of
    /// the whole step, word for word, in every family, on 7 samples (shares of 3 and 4, and
    /// of 2, 2 and 3), and on the float machine.
    #[test]
    fn shares_are_the_whole_step() {
        for (name, c) in configs() {
            let case = drawn::<u64>(&c, 7, 5);
            let whole = step(
                &mut Golden {
                    threads: 1,
                    ..Golden::default()
                },
                &c,
                &case,
            );
            for threads in [2, 3] {
                let mut g = Golden {
                    threads,
                    ..Golden::default()
                };
                assert_eq!(
                    Net::new(&mut g, &c).share_machines(7).len(),
                    threads,
                    "{name}"
                );
                assert!(
                    step(&mut g, &c, &case) == whole,
                    "{name} in {threads} shares"
                );
            }
        }
        let c = lenet(Stages::all("f32".parse().unwrap()));
        let case = drawn::<f32>(&c, 7, 6);
        let whole = step(&mut Float { threads: 1 }, &c, &case);
        assert!(
            step(&mut Float { threads: 2 }, &c, &case) == whole,
            "f32 in 2 shares"
        );
        let mut keep = Golden {
            threads: 2,
            ..Golden::new("golden", Some(4))
        };
        let c = lenet(Stages::all("lns:5:6".parse().unwrap()));
        let case = drawn::<u64>(&c, 7, 7);
        let whole = step(
            &mut Golden {
                threads: 1,
                ..Golden::new("golden", Some(4))
            },
            &c,
            &case,
        );
        assert!(
            step(&mut keep, &c, &case) == whole,
            "lns:5:6 --keep-bits 4 in 2 shares"
        );
    }

    /// Each layer's weight gradient is cut into one part per fork where the machine cuts its
    /// product (so the test above joins rows and columns), whole where it has fewer lines,
    /// and each bias gradient is a piece of its own.
    #[test]
    fn gradients_are_cut_where_the_machine_cuts() {
        let side = |k: usize, m: usize, n: usize| -> Sides<u64> {
            (
                vec![Mat::filled(k, m, 0u64); 2],
                vec![Mat::filled(k, n, 0u64); 2],
            )
        };
        // LeNet-5's C1 weight gradient (6×25 over 20 samples), a 10×1 and a 1×1.
        let sides = [side(15_680 / 2, 6, 25), side(10, 10, 1), side(10, 1, 1)];
        let jobs = |c: &Config| {
            let mut g = Golden {
                threads: 2,
                ..Golden::default()
            };
            let net = Net::new(&mut g, c);
            let pieces = net.pieces(&sides, 2);
            pieces.iter().map(|p| (p.layer, p.job)).collect::<Vec<_>>()
        };
        let weights = |cut, part, parts| Job::Weights { cut, part, parts };
        let exact = Config {
            quire: true,
            ..lenet(Stages::all("bf16".parse().unwrap()))
        };
        let lanes = lenet(Stages::all("lns:5:6".parse().unwrap()));
        for (c, cut) in [(&exact, Cut::Cols), (&lanes, Cut::Rows)] {
            assert_eq!(
                jobs(c),
                [
                    (0, weights(cut, 0, 2)),
                    (0, weights(cut, 1, 2)),
                    (0, Job::Bias),
                    (1, weights(Cut::Rows, 0, 2)),
                    (1, weights(Cut::Rows, 1, 2)),
                    (1, Job::Bias),
                    (2, weights(Cut::Rows, 0, 1)),
                    (2, Job::Bias),
                ]
            );
        }
    }

    /// What couples samples keeps a step whole: dropout, scaling, the activations' codec, a
    /// machine that cannot fork, one thread, one sample.
    #[test]
    fn what_couples_samples_keeps_the_step_whole() {
        let bf16 = || lenet(Stages::all("bf16".parse().unwrap()));
        let mut g = Golden {
            threads: 2,
            ..Golden::default()
        };
        assert_eq!(Net::new(&mut g, &bf16()).share_machines(20).len(), 2);
        assert!(Net::new(&mut g, &bf16()).share_machines(1).is_empty());
        let options = ArchOptions {
            kind: ModelKind::Maxout,
            hidden: vec![8],
            activation: Activation::Sigmoid,
            maxout_pieces: 2,
            dropout: vec![0.2, 0.5],
        };
        let dropout = Config::new(
            Arch::build(&options, (1, 28, 28), 10).unwrap(),
            Stages::all("bf16".parse().unwrap()),
        );
        let scaled = Config {
            scaling: crate::scaling::Scaling::parse("F=current").unwrap(),
            ..bf16()
        };
        let codec = Config {
            compression: crate::compress::Compression {
                grad: None,
                act: Some("q8:linear".parse().unwrap()),
            },
            ..bf16()
        };
        for c in [&dropout, &scaled, &codec] {
            assert!(Net::new(&mut g, c).share_machines(20).is_empty());
        }
        let mut one = Golden {
            threads: 1,
            ..Golden::default()
        };
        assert!(Net::new(&mut one, &bf16()).share_machines(20).is_empty());
        let lock = std::sync::Mutex::new(&mut g);
        assert!(crate::machine::Shared(&lock).fork().is_none());
    }
}
