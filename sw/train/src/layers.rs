//! Each layer's forward and backward pass on the machine. Convolutions run as matrix products
//! over im2col rows (so on the rtl backend they run on the generated array); the host only
//! moves words: im2col, the channel-major reshapes, the routes of max pooling and maxout, and
//! dropout masks.

use lpgen_golden::{AluOp, Format};
use rand::Rng;
use rand_pcg::Pcg64;

use crate::arch::Layer;
use crate::config::Activation;
use crate::config::Place;
use crate::machine::{Machine, Mat, Word};
use crate::model::Params;
use crate::net::{Cache, Delta, Net};
use crate::storage::Role;
use crate::TrainError;

mod reshape;
mod weighted;

pub use reshape::{flipped_kernels, from_channel_major, im2col, to_channel_major};

/// A layer's weight and bias gradients, in G.
pub type Grads<W> = (Mat<W>, Vec<W>);

/// A layer's output and what its backward pass needs.
pub type Output<W> = (Mat<W>, Cache<W>);

/// What a layer's backward pass gives: the error at its input (when asked to propagate it)
/// and, for a layer with weights, its gradients.
pub type Backward<W> = (Option<Delta<W>>, Option<Grads<W>>);

impl<M: Machine> Net<'_, M> {
    /// The forward pass of one layer: its output and what its backward pass needs. `noise`
    /// is present in training (dropout is active).
    pub(crate) fn layer_forward(
        &mut self,
        layer: &Layer,
        params: Option<(usize, &Params<M::Word>)>,
        mut a: Mat<M::Word>,
        noise: Option<&mut Pcg64>,
    ) -> Result<Output<M::Word>, TrainError> {
        let st = self.cfg.stages;
        let f = st.f;
        let acc = self.cfg.accumulation(Place::Forward, f);
        let training = noise.is_some();
        Ok(match *layer {
            Layer::Dense { .. } => {
                let (at, p) = params.expect("a dense layer has parameters");
                self.store(at, Role::Input, &mut a.data, training)?;
                let w = self.convert(st.o, f, &p.w)?;
                let w = self.read_weights(at, w);
                let b = self.convert_words(st.o, f, &p.b)?;
                let b = self.read_biases(at, b);
                let product = (a.view(), Role::Input);
                let z = match self.dfix_product(
                    at,
                    product,
                    (w.t(), Role::Weights),
                    Role::WeightedSum,
                    training,
                )? {
                    Some(z) => z,
                    None => match self.cfg.scaling.get(Place::Forward) {
                        Some(rule) => self.scaled_product(
                            (Place::Forward, at, rule),
                            (a.view(), f),
                            (p.w.t(), st.o),
                            training,
                        )?,
                        None => self.matmul_stored(f, acc, (a.view(), w.t()), training)?,
                    },
                };
                let mut z = self.add_bias(f, &z, &b, training)?;
                // An exact product's read-out counted the sums' overflows: the bias's addition
                // is rounded onto the grid uncounted.
                let counted = training && !self.exact_products();
                self.store(at, Role::WeightedSum, &mut z.data, counted)?;
                (z, Cache::Dense { input: a })
            }
            Layer::Conv {
                channels,
                height,
                width,
                kernel,
                pad,
                ..
            } => {
                let (at, p) = params.expect("a convolution has parameters");
                self.store(at, Role::Input, &mut a.data, training)?;
                let w = self.convert(st.o, f, &p.w)?;
                let w = self.read_weights(at, w);
                let b = self.convert_words(st.o, f, &p.b)?;
                let b = self.read_biases(at, b);
                let zero = M::Word::constant(f, 0.0);
                let cols = im2col(
                    &a,
                    (channels, height, width),
                    kernel,
                    pad,
                    zero,
                    self.m.threads(),
                );
                let y = match self.cfg.scaling.get(Place::Forward) {
                    Some(rule) => self.scaled_product(
                        (Place::Forward, at, rule),
                        (cols.view(), f),
                        (p.w.t(), st.o),
                        training,
                    )?,
                    None => self.matmul_stored(f, acc, (cols.view(), w.t()), training)?,
                };
                let mut y = self.add_bias(f, &y, &b, training)?;
                self.store(at, Role::WeightedSum, &mut y.data, training)?;
                (to_channel_major(&y, a.rows), Cache::Conv { cols })
            }
            Layer::MaxPool {
                channels,
                height,
                width,
                size,
            } => {
                let (oh, ow) = (height / size, width / size);
                let source = |o: usize, j: usize| {
                    let (c, y, x) = (o / (oh * ow), o / ow % oh, o % ow);
                    (c * height + y * size + j / size) * width + x * size + j % size
                };
                self.max_of_groups(&a, channels * oh * ow, size * size, source)?
            }
            Layer::Maxout { units, pieces } => {
                self.max_of_groups(&a, units, pieces, |u, j| u * pieces + j)?
            }
            Layer::Activation(act) => {
                let y = self.activate(act, &a)?;
                match act {
                    Activation::Sigmoid => (y.clone(), Cache::Sigmoid { output: y }),
                    Activation::Relu => (y, Cache::Relu { input: a }),
                }
            }
            Layer::Dropout { p } => match noise {
                None => (a, Cache::Dropout { keep: vec![] }),
                Some(rng) => {
                    let keep: Vec<bool> =
                        (0..a.data.len()).map(|_| rng.gen::<f64>() >= p).collect();
                    let mask = self.dropout_mask(f, p, &keep);
                    let data = self.m.lanes(f, AluOp::Mul, &a.data, &mask)?;
                    let y = Mat {
                        rows: a.rows,
                        cols: a.cols,
                        data,
                    };
                    (y, Cache::Dropout { keep })
                }
            },
        })
    }

    /// The words 1/(1 − p) where an input is kept and 0 where it is dropped, in `f`.
    fn dropout_mask(&self, f: Format, p: f64, keep: &[bool]) -> Vec<M::Word> {
        let (scale, zero) = (
            M::Word::constant(f, 1.0 / (1.0 - p)),
            M::Word::constant(f, 0.0),
        );
        keep.iter().map(|&k| if k { scale } else { zero }).collect()
    }

    /// Output `o` of each sample is the maximum of inputs `source(o, 0..pieces)`, taken by
    /// the machine in that order; the cache records which input it was (the first one whose
    /// word equals the maximum: the machine's max returns one of its operands).
    fn max_of_groups(
        &mut self,
        a: &Mat<M::Word>,
        outputs: usize,
        pieces: usize,
        source: impl Fn(usize, usize) -> usize,
    ) -> Result<Output<M::Word>, TrainError> {
        let f = self.cfg.stages.f;
        // Where piece j of output o lies in a sample's row (`at[j][o]`), worked out once.
        let at: Vec<Vec<usize>> = (0..pieces)
            .map(|j| (0..outputs).map(|o| source(o, j)).collect())
            .collect();
        // Piece j of every output of every sample, sample-major.
        let piece: Vec<Vec<M::Word>> = at
            .iter()
            .map(|at| {
                let mut v = Vec::with_capacity(a.rows * outputs);
                for row in a.data.chunks_exact(a.cols.max(1)).take(a.rows) {
                    v.extend(at.iter().map(|&c| row[c]));
                }
                v
            })
            .collect();
        let mut max = piece[0].clone();
        for p in &piece[1..] {
            max = self.m.lanes(f, AluOp::Max, &max, p)?;
        }
        let mut from: Vec<usize> = at[0].iter().copied().cycle().take(max.len()).collect();
        // The pieces last to first, each taking the outputs it equals: what stays is the
        // first piece equal to the maximum (piece 0 where none is: a NaN maximum).
        for (at, p) in at.iter().zip(&piece).rev() {
            // Sample s's outputs are elements s·outputs .. of every vector here.
            let chunks = p.chunks(outputs.max(1)).zip(max.chunks(outputs.max(1)));
            for ((p, max), from) in chunks.zip(from.chunks_mut(outputs.max(1))) {
                for (((w, m), from), &at) in p.iter().zip(max).zip(from).zip(at) {
                    if w.to_bits() == m.to_bits() {
                        *from = at;
                    }
                }
            }
        }
        let y = Mat {
            rows: a.rows,
            cols: outputs,
            data: max,
        };
        Ok((
            y,
            Cache::Max {
                from,
                inputs: a.cols,
            },
        ))
    }

    /// Stores the error arriving at a layer's weighted sums (seed 002's storage); the copy in
    /// G, present at the last layer, becomes the stored one (storage runs in one format).
    fn store_sum_error(&mut self, at: usize, delta: &mut Delta<M::Word>) -> Result<(), TrainError> {
        if self.storage.is_some() {
            self.store(at, Role::SumError, &mut delta.b.data, true)?;
            if delta.g.is_some() {
                delta.g = Some(delta.b.clone());
            }
        }
        Ok(())
    }

    /// The backward pass of one layer: the error at its input (when `propagate`) and, for a
    /// layer with weights, the gradients of its weights and biases in G.
    pub(crate) fn layer_backward(
        &mut self,
        layer: &Layer,
        params: Option<(usize, &Params<M::Word>)>,
        cache: &Cache<M::Word>,
        delta: Delta<M::Word>,
        propagate: bool,
    ) -> Result<Backward<M::Word>, TrainError> {
        match (layer, cache) {
            (Layer::Dense { .. }, Cache::Dense { input }) => {
                let params = params.expect("a dense layer has parameters");
                self.dense_backward(layer, params, input, delta, propagate)
            }
            (Layer::Conv { .. }, Cache::Conv { cols }) => {
                let params = params.expect("a convolution has parameters");
                self.conv_backward(layer, params, cols, delta, propagate)
            }
            (Layer::MaxPool { .. } | Layer::Maxout { .. }, Cache::Max { from, inputs }) => {
                Ok(self.max_backward(from, *inputs, &delta))
            }
            (Layer::Activation(_), Cache::Sigmoid { output }) => {
                self.sigmoid_backward(output, &delta)
            }
            (Layer::Activation(_), Cache::Relu { input }) => self.relu_backward(input, &delta),
            (Layer::Dropout { p }, Cache::Dropout { keep }) => {
                self.dropout_backward(*p, keep, &delta)
            }
            _ => unreachable!("a layer's cache comes from its own forward pass"),
        }
    }

    /// Max pooling's and maxout's backward pass: each output's error routed to the input it
    /// came `from`, zero elsewhere (`inputs` per sample).
    fn max_backward(
        &self,
        from: &[usize],
        inputs: usize,
        delta: &Delta<M::Word>,
    ) -> Backward<M::Word> {
        let b = self.cfg.stages.b;
        let outputs = delta.b.cols;
        let mut data = vec![M::Word::constant(b, 0.0); delta.b.rows * inputs];
        for (i, &e) in delta.b.data.iter().enumerate() {
            data[i / outputs * inputs + from[i]] = e;
        }
        let e = Mat {
            rows: delta.b.rows,
            cols: inputs,
            data,
        };
        (Some(Delta { b: e, g: None }), None)
    }

    /// The sigmoid's backward pass from its `output`: δ·h·(1 − h), in B.
    fn sigmoid_backward(
        &mut self,
        output: &Mat<M::Word>,
        delta: &Delta<M::Word>,
    ) -> Result<Backward<M::Word>, TrainError> {
        let st = self.cfg.stages;
        let b = st.b;
        let h = self.convert(st.f, b, output)?;
        let one = self.splat(b, 1.0, h.data.len());
        let om = self.m.lanes(b, AluOp::Sub, &one, &h.data)?;
        let dh = self.m.lanes(b, AluOp::Mul, &h.data, &om)?;
        let d = self.m.lanes(b, AluOp::Mul, &delta.b.data, &dh)?;
        Ok((Some(in_b(d, &delta.b)), None))
    }

    /// The ReLU's backward pass from its `input`: δ where the input is positive, else 0, in B.
    fn relu_backward(
        &mut self,
        input: &Mat<M::Word>,
        delta: &Delta<M::Word>,
    ) -> Result<Backward<M::Word>, TrainError> {
        let st = self.cfg.stages;
        let b = st.b;
        let z = self.convert(st.f, b, input)?;
        let zero = self.splat(b, 0.0, z.data.len());
        let mask = self.m.lanes(b, AluOp::Lt, &zero, &z.data)?;
        let d = self.m.lanes(b, AluOp::Mul, &delta.b.data, &mask)?;
        Ok((Some(in_b(d, &delta.b)), None))
    }

    /// Dropout's backward pass: δ times the forward pass's mask (inputs it `keep`s scaled by
    /// 1/(1 − p), the others 0), in B.
    fn dropout_backward(
        &mut self,
        p: f64,
        keep: &[bool],
        delta: &Delta<M::Word>,
    ) -> Result<Backward<M::Word>, TrainError> {
        let b = self.cfg.stages.b;
        let mask = self.dropout_mask(b, p, keep);
        let d = self.m.lanes(b, AluOp::Mul, &delta.b.data, &mask)?;
        Ok((Some(in_b(d, &delta.b)), None))
    }
}

/// An error of B words `data`, shaped like `like`.
fn in_b<W: Word>(data: Vec<W>, like: &Mat<W>) -> Delta<W> {
    Delta {
        b: Mat {
            rows: like.rows,
            cols: like.cols,
            data,
        },
        g: None,
    }
}

#[cfg(test)]
mod tests;
