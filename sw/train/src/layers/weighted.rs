//! The backward passes of the layers with weights: dense layers and convolutions, in two
//! parts each, the weight and bias gradients (which sum over the batch) and the error at the
//! layer's input (sample by sample), so that a step in shares (`net_shares`) runs the second
//! part in its shares and the first over the whole batch.

use lpgen_golden::kernel::Cut;

use super::{flipped_kernels, from_channel_major, im2col, to_channel_major, Backward};
use crate::arch::Layer;
use crate::config::Place;
use crate::machine::{Machine, Mat, Word};
use crate::model::Params;
use crate::net::{Delta, Net};
use crate::storage::Role;
use crate::TrainError;

impl<M: Machine> Net<'_, M> {
    /// A dense layer's backward pass from the `input` its forward pass kept: the weight and
    /// bias gradients in G (dfix products where `--dfix-products exact`), and the error at
    /// its input in B when `propagate`.
    pub(super) fn dense_backward(
        &mut self,
        layer: &Layer,
        (at, p): (usize, &Params<M::Word>),
        input: &Mat<M::Word>,
        mut delta: Delta<M::Word>,
        propagate: bool,
    ) -> Result<Backward<M::Word>, TrainError> {
        let st = self.cfg.stages;
        let cfg = self.cfg;
        let g = st.g;
        self.store_sum_error(at, &mut delta)?;
        let dg = self.sum_error_in_g(layer, &mut delta)?;
        let a_g = self.convert(st.f, g, input)?;
        // Exact products read out onto their groups' grids, counted there.
        let exact = self.exact_products();
        let errors = (dg.t(), Role::SumError);
        let mut gw = match self.dfix_product(
            at,
            errors,
            (a_g.view(), Role::Input),
            Role::WeightGradient,
            true,
        )? {
            Some(gw) => gw,
            None => match cfg.scaling.get(Place::Gradient) {
                Some(rule) => self.scaled_product(
                    (Place::Gradient, at, rule),
                    (dg.t(), g),
                    (input.view(), st.f),
                    true,
                )?,
                None => self.weight_gradient(&dg, &a_g)?,
            },
        };
        let mut gb = self.bias_gradient(&dg)?;
        if !exact {
            self.store(at, Role::WeightGradient, &mut gw.data, true)?;
        }
        self.store(at, Role::BiasGradient, &mut gb, true)?;
        let next = if propagate {
            Some(self.dense_input_error((at, p), &delta)?)
        } else {
            None
        };
        Ok((next, Some((gw, gb))))
    }

    /// A dense layer's error at its input in B, from the error `delta` at its weighted sums.
    pub(crate) fn dense_input_error(
        &mut self,
        (at, p): (usize, &Params<M::Word>),
        delta: &Delta<M::Word>,
    ) -> Result<Delta<M::Word>, TrainError> {
        let (st, cfg) = (self.cfg.stages, self.cfg);
        let b = st.b;
        let exact = self.exact_products();
        let w_b = self.convert(st.o, b, &p.w)?;
        let w_b = self.read_weights(at, w_b);
        let errors = (delta.b.view(), Role::SumError);
        let mut e = match self.dfix_product(
            at,
            errors,
            (w_b.view(), Role::Weights),
            Role::InputError,
            true,
        )? {
            Some(e) => e,
            None => match cfg.scaling.get(Place::Backward) {
                Some(rule) => self.scaled_product(
                    (Place::Backward, at, rule),
                    (delta.b.view(), b),
                    (p.w.view(), st.o),
                    true,
                )?,
                None => self.matmul_stored(
                    b,
                    cfg.accumulation(Place::Backward, b),
                    (delta.b.view(), w_b.view()),
                    true,
                )?,
            },
        };
        if !exact {
            self.store(at, Role::InputError, &mut e.data, true)?;
        }
        Ok(Delta { b: e, g: None })
    }

    /// The error `delta` at a weighted `layer`'s sums, in G, as its weight gradient takes it:
    /// one row per sample (a dense layer) or per sample and output position (a convolution),
    /// one column per output. The copy in G, where `delta` has one, is taken, not rounded
    /// through B.
    pub(crate) fn sum_error_in_g(
        &mut self,
        layer: &Layer,
        delta: &mut Delta<M::Word>,
    ) -> Result<Mat<M::Word>, TrainError> {
        let (b, g) = (self.cfg.stages.b, self.cfg.stages.g);
        Ok(match *layer {
            Layer::Dense { .. } => match delta.g.take() {
                Some(dg) => dg,
                None => self.convert(b, g, &delta.b)?.into_owned(),
            },
            Layer::Conv { filters, .. } => match &delta.g {
                Some(dg) => from_channel_major(dg, filters),
                None => self
                    .convert(b, g, &from_channel_major(&delta.b, filters))?
                    .into_owned(),
            },
            Layer::MaxPool { .. }
            | Layer::Maxout { .. }
            | Layer::Activation(_)
            | Layer::Dropout { .. } => unreachable!("only layers with weights have sums"),
        })
    }

    /// A layer's weight gradient Σ δ·a over the rows of `dg` (its sum errors in G) and `a_g`
    /// (its inputs in G, row for row), by the plain product: no dfix and no scaling.
    pub(crate) fn weight_gradient(
        &mut self,
        dg: &Mat<M::Word>,
        a_g: &Mat<M::Word>,
    ) -> Result<Mat<M::Word>, TrainError> {
        let g = self.cfg.stages.g;
        let acc = self.cfg.accumulation(Place::Gradient, g);
        self.matmul_stored(g, acc, (dg.t(), a_g.view()), true)
    }

    /// Where [`Net::weight_gradient`] of an m×n gradient is best cut into `parts` parts.
    pub(crate) fn weight_gradient_cut(&self, (m, n): (usize, usize), parts: usize) -> Cut {
        let g = self.cfg.stages.g;
        let acc = self.cfg.accumulation(Place::Gradient, g);
        self.product_cut(g, acc, (m, n), parts)
    }

    /// A layer's bias gradient: the column sums of its sum errors `dg` in G.
    pub(crate) fn bias_gradient(&mut self, dg: &Mat<M::Word>) -> Result<Vec<M::Word>, TrainError> {
        let g = self.cfg.stages.g;
        self.row_sums(g, self.cfg.accumulation(Place::Sums, g), dg.t())
    }

    /// A convolution's backward pass from the im2col rows `cols` its forward pass kept: the
    /// weight and bias gradients in G, and when `propagate` the error at its input in B (a
    /// convolution of the padded error with the flipped kernels).
    pub(super) fn conv_backward(
        &mut self,
        layer: &Layer,
        (at, p): (usize, &Params<M::Word>),
        cols: &Mat<M::Word>,
        mut delta: Delta<M::Word>,
        propagate: bool,
    ) -> Result<Backward<M::Word>, TrainError> {
        let st = self.cfg.stages;
        let cfg = self.cfg;
        let g = st.g;
        self.store_sum_error(at, &mut delta)?;
        // Rows of (sample, position), one column per filter.
        let dg = self.sum_error_in_g(layer, &mut delta)?;
        let cols_g = self.convert(st.f, g, cols)?;
        let mut gw = match cfg.scaling.get(Place::Gradient) {
            Some(rule) => self.scaled_product(
                (Place::Gradient, at, rule),
                (dg.t(), g),
                (cols.view(), st.f),
                true,
            )?,
            None => self.weight_gradient(&dg, &cols_g)?,
        };
        let mut gb = self.bias_gradient(&dg)?;
        self.store(at, Role::WeightGradient, &mut gw.data, true)?;
        self.store(at, Role::BiasGradient, &mut gb, true)?;
        let next = if propagate {
            Some(self.conv_input_error(layer, (at, p), &delta)?)
        } else {
            None
        };
        Ok((next, Some((gw, gb))))
    }

    /// A convolution's error at its input in B, from the error `delta` at its weighted sums
    /// (channel-major, one row per sample).
    pub(crate) fn conv_input_error(
        &mut self,
        layer: &Layer,
        (at, p): (usize, &Params<M::Word>),
        delta: &Delta<M::Word>,
    ) -> Result<Delta<M::Word>, TrainError> {
        let Layer::Conv {
            channels,
            height,
            width,
            filters,
            kernel,
            pad,
        } = *layer
        else {
            unreachable!("conv_input_error is called for convolutions")
        };
        let (st, cfg) = (self.cfg.stages, self.cfg);
        let b = st.b;
        let samples = delta.b.rows;
        let out = (
            filters,
            height + 2 * pad + 1 - kernel,
            width + 2 * pad + 1 - kernel,
        );
        if let Some(e) = self.point_conv_input_error(layer, at, p, delta)? {
            return Ok(e);
        }
        let zero = M::Word::constant(b, 0.0);
        let rows = im2col(
            &delta.b,
            out,
            kernel,
            kernel - 1 - pad,
            zero,
            self.m.threads(),
        );
        let w_b = self.convert(st.o, b, &p.w)?;
        let w_b = self.read_weights(at, w_b);
        let flipped = flipped_kernels(&w_b, channels, kernel);
        let mut e = match cfg.scaling.get(Place::Backward) {
            Some(rule) => {
                // The flipped kernels of the O words: scaled from where they are widest.
                let flipped_o = flipped_kernels(&p.w, channels, kernel);
                self.scaled_product(
                    (Place::Backward, at, rule),
                    (rows.view(), b),
                    (flipped_o.t(), st.o),
                    true,
                )?
            }
            None => self.matmul_stored(
                b,
                cfg.accumulation(Place::Backward, b),
                (rows.view(), flipped.t()),
                true,
            )?,
        };
        self.store(at, Role::InputError, &mut e.data, true)?;
        Ok(Delta {
            b: to_channel_major(&e, samples),
            g: None,
        })
    }

    /// The input error of a convolution whose output is one point (LeNet-5's C5: no padding,
    /// the kernel the whole image), where the sums are exact: then δ·W, the filters' weights
    /// as they lie (filter × channel, row, column), is the input error in channel-major
    /// order. It is the full convolution below without the zero rows of its padded im2col
    /// (kernel² − 1 of every kernel² terms), whose products an exact sum does not see; a
    /// special weight word would reach other sums through them (0·NaR), so then, as with
    /// stochastic rounding (another order of draws), MX blocks or scaling, it is None and the
    /// full form runs. `conv_point_input_error_is_the_full_form` holds the two equal.
    fn point_conv_input_error(
        &mut self,
        layer: &Layer,
        at: usize,
        p: &Params<M::Word>,
        delta: &Delta<M::Word>,
    ) -> Result<Option<Delta<M::Word>>, TrainError> {
        let Layer::Conv {
            height,
            width,
            kernel,
            pad,
            ..
        } = *layer
        else {
            return Ok(None);
        };
        let (st, cfg) = (self.cfg.stages, self.cfg);
        let b = st.b;
        let acc = cfg.accumulation(Place::Backward, b);
        if (height, width, pad) != (kernel, kernel, 0)
            || cfg.mx.is_some()
            || cfg.scaling.get(Place::Backward).is_some()
            || self.arithmetic_stream().is_some()
            || !self.m.sums_exactly(b, acc, &[])
        {
            return Ok(None);
        }
        let w_b = self.convert(st.o, b, &p.w)?;
        let w_b = self.read_weights(at, w_b);
        if !self.m.sums_exactly(b, acc, &w_b.data) {
            return Ok(None);
        }
        let mut e = self.matmul_stored(b, acc, (delta.b.view(), w_b.view()), true)?;
        self.store(at, Role::InputError, &mut e.data, true)?;
        Ok(Some(Delta { b: e, g: None }))
    }
}
