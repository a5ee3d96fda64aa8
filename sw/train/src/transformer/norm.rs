//! Layer norm, GELU and the embeddings of a transformer, forward and backward, as machine
//! operations in the stage formats (F forward, B the error, G the parameter gradients).

use lpgen_golden::{AluOp, Format};

use crate::config::{Activation, Place};
use crate::layers::Grads;
use crate::machine::{Machine, Mat, Word};
use crate::model::Params;
use crate::net::Net;
use crate::net_softmax::per_row;
use crate::TrainError;

use super::Pass;

/// The ε of the layer norm's 1/√(var + ε), rounded into F (in formats whose smallest value
/// exceeds it, that value or zero, as the format rounds).
pub const NORM_EPS: f64 = 1e-5;

/// GELU's sigmoid form x·σ(1.702·x) (Hendrycks and Gimpel §2).
pub const GELU_SLOPE: f64 = 1.702;

/// What a layer norm's backward pass needs: the normalized input x̂ and each row's
/// 1/√(var + ε), in F.
pub struct NormCache<W> {
    pub xhat: Mat<W>,
    pub rstd: Vec<W>,
}

/// What GELU's backward pass needs: its input x and σ(1.702·x), in F.
pub struct GeluCache<W> {
    pub x: Vec<W>,
    pub s: Vec<W>,
}

/// `v` (one word per column) repeated for each of `rows` rows.
pub(crate) fn tile<W: Copy>(v: &[W], rows: usize) -> Vec<W> {
    (0..rows).flat_map(|_| v.iter().copied()).collect()
}

/// A matrix of `rows` × `cols` words `data`.
pub(crate) fn mat<W>(rows: usize, cols: usize, data: Vec<W>) -> Mat<W> {
    Mat { rows, cols, data }
}

impl<M: Machine> Net<'_, M> {
    /// The mean of each row of `x` in `f`: its sum accumulated at `place`, divided by the
    /// row's length.
    fn row_means(
        &mut self,
        f: Format,
        place: Place,
        x: &Mat<M::Word>,
    ) -> Result<Vec<M::Word>, TrainError> {
        let acc = self.cfg.accumulation(place, f);
        let s = self.row_sums(f, acc, x.view())?;
        let n = self.splat(f, x.cols as f64, x.rows);
        self.m.lanes(f, AluOp::Div, &s, &n)
    }

    /// Layer norm of each row of `x` (in F) with the gains `p.w` (dim × 1) and biases `p.b`:
    /// x̂ = (x − mean)·1/√(var + ε), y = x̂·γ + β; the sums at the `norm` place.
    pub fn norm_forward(
        &mut self,
        p: &Params<M::Word>,
        x: &Mat<M::Word>,
    ) -> Pass<M::Word, NormCache<M::Word>> {
        let st = self.cfg.stages;
        let f = st.f;
        let (rows, d) = (x.rows, x.cols);
        let lens = vec![d; rows];
        let mean = self.row_means(f, Place::Norm, x)?;
        let xc = self
            .m
            .lanes(f, AluOp::Sub, &x.data, &per_row(&mean, &lens))?;
        let sq = self.m.lanes(f, AluOp::Mul, &xc, &xc)?;
        let var = self.row_means(f, Place::Norm, &mat(rows, d, sq))?;
        let ve = self
            .m
            .lanes(f, AluOp::Add, &var, &self.splat(f, NORM_EPS, rows))?;
        let sd = self.m.lanes(f, AluOp::Sqrt, &ve, &[])?;
        let rstd = self
            .m
            .lanes(f, AluOp::Div, &self.splat(f, 1.0, rows), &sd)?;
        let xhat = self.m.lanes(f, AluOp::Mul, &xc, &per_row(&rstd, &lens))?;
        let gamma = self.convert_words(st.o, f, &p.w.data)?.into_owned();
        let beta = self.convert_words(st.o, f, &p.b)?.into_owned();
        let y = self.m.lanes(f, AluOp::Mul, &xhat, &tile(&gamma, rows))?;
        let y = self.m.lanes(f, AluOp::Add, &y, &tile(&beta, rows))?;
        let cache = NormCache {
            xhat: mat(rows, d, xhat),
            rstd,
        };
        Ok((mat(rows, d, y), cache))
    }

    /// Layer norm's backward pass from the error `dy` (in B): the gradients of γ (Σ dy·x̂)
    /// and β (Σ dy) in G (sums at the `sums` place), and the error at the input in B,
    /// dx = (dx̂ − mean(dx̂) − x̂·mean(dx̂·x̂))·1/√(var + ε) with dx̂ = dy·γ (means at `norm`).
    pub fn norm_backward(
        &mut self,
        p: &Params<M::Word>,
        c: &NormCache<M::Word>,
        dy: &Mat<M::Word>,
    ) -> Pass<M::Word, Grads<M::Word>> {
        let st = self.cfg.stages;
        let (b, g) = (st.b, st.g);
        let (rows, d) = (dy.rows, dy.cols);
        let lens = vec![d; rows];
        let dy_g = self.convert(b, g, dy)?.into_owned();
        let xhat_g = self.convert(st.f, g, &c.xhat)?.into_owned();
        let prod = mat(
            rows,
            d,
            self.m.lanes(g, AluOp::Mul, &dy_g.data, &xhat_g.data)?,
        );
        let sums = self.cfg.accumulation(Place::Sums, g);
        let dgamma = self.row_sums(g, sums, prod.t())?;
        let dbeta = self.row_sums(g, sums, dy_g.t())?;
        let gamma = self.convert_words(st.o, b, &p.w.data)?.into_owned();
        let xhat = self.convert(st.f, b, &c.xhat)?.into_owned();
        let rstd = self.convert_words(st.f, b, &c.rstd)?.into_owned();
        let dxhat = mat(
            rows,
            d,
            self.m.lanes(b, AluOp::Mul, &dy.data, &tile(&gamma, rows))?,
        );
        let m1 = self.row_means(b, Place::Norm, &dxhat)?;
        let dx_x = mat(
            rows,
            d,
            self.m.lanes(b, AluOp::Mul, &dxhat.data, &xhat.data)?,
        );
        let m2 = self.row_means(b, Place::Norm, &dx_x)?;
        let t = self
            .m
            .lanes(b, AluOp::Sub, &dxhat.data, &per_row(&m1, &lens))?;
        let u = self
            .m
            .lanes(b, AluOp::Mul, &xhat.data, &per_row(&m2, &lens))?;
        let t = self.m.lanes(b, AluOp::Sub, &t, &u)?;
        let dx = self.m.lanes(b, AluOp::Mul, &t, &per_row(&rstd, &lens))?;
        Ok((mat(rows, d, dx), (mat(d, 1, dgamma), dbeta)))
    }

    /// GELU in its sigmoid form, x·σ(1.702·x), in F (σ by the network's sigmoid).
    pub fn gelu_forward(&mut self, x: Mat<M::Word>) -> Pass<M::Word, GeluCache<M::Word>> {
        let f = self.cfg.stages.f;
        let n = x.data.len();
        let u = self
            .m
            .lanes(f, AluOp::Mul, &x.data, &self.splat(f, GELU_SLOPE, n))?;
        let s = self
            .activate(Activation::Sigmoid, &mat(x.rows, x.cols, u))?
            .data;
        let y = self.m.lanes(f, AluOp::Mul, &x.data, &s)?;
        Ok((mat(x.rows, x.cols, y), GeluCache { x: x.data, s }))
    }

    /// GELU's backward pass in B: dy·(s + 1.702·x·s·(1 − s)), s = σ(1.702·x).
    pub fn gelu_backward(
        &mut self,
        c: &GeluCache<M::Word>,
        dy: &Mat<M::Word>,
    ) -> Result<Mat<M::Word>, TrainError> {
        let st = self.cfg.stages;
        let b = st.b;
        let n = c.s.len();
        let s = self.convert_words(st.f, b, &c.s)?.into_owned();
        let x = self.convert_words(st.f, b, &c.x)?.into_owned();
        let om = self.m.lanes(b, AluOp::Sub, &self.splat(b, 1.0, n), &s)?;
        let t = self.m.lanes(b, AluOp::Mul, &s, &om)?;
        let t = self.m.lanes(b, AluOp::Mul, &t, &x)?;
        let t = self
            .m
            .lanes(b, AluOp::Mul, &t, &self.splat(b, GELU_SLOPE, n))?;
        let dg = self.m.lanes(b, AluOp::Add, &s, &t)?;
        let dx = self.m.lanes(b, AluOp::Mul, &dy.data, &dg)?;
        Ok(mat(dy.rows, dy.cols, dx))
    }

    /// The embeddings of `tokens` (one per row; row r at position r mod `context`): the token's
    /// row of `tok` plus the position's row of `pos`, in F.
    pub fn embed_forward(
        &mut self,
        (tok, pos): (&Params<M::Word>, &Params<M::Word>),
        tokens: &[usize],
        context: usize,
    ) -> Result<Mat<M::Word>, TrainError> {
        let st = self.cfg.stages;
        let te = self.convert(st.o, st.f, &tok.w)?.into_owned();
        let pe = self.convert(st.o, st.f, &pos.w)?.into_owned();
        let d = te.cols;
        let a: Vec<M::Word> = tokens.iter().flat_map(|&t| te.row(t).to_vec()).collect();
        let p: Vec<M::Word> = (0..tokens.len())
            .flat_map(|r| pe.row(r % context).to_vec())
            .collect();
        let x = self.m.lanes(st.f, AluOp::Add, &a, &p)?;
        Ok(mat(tokens.len(), d, x))
    }

    /// The embeddings' gradients in G from the error `dx` (in B) at their sum: a position's
    /// row sums its rows' errors, a token's its occurrences' (both at the `sums` place; a
    /// token that does not occur gets zeros).
    pub fn embed_backward(
        &mut self,
        tokens: &[usize],
        (vocab, context): (usize, usize),
        dx: &Mat<M::Word>,
    ) -> Result<[Grads<M::Word>; 2], TrainError> {
        let st = self.cfg.stages;
        let g = st.g;
        let sums = self.cfg.accumulation(Place::Sums, g);
        let d = dx.cols;
        let dg = self.convert(st.b, g, dx)?.into_owned();
        // One row per sequence of the batch: its positions' errors side by side.
        let seqs = mat(dg.rows / context, context * d, dg.data.clone());
        let dpos = self.row_sums(g, sums, seqs.t())?;
        let zero = M::Word::constant(g, 0.0);
        let mut dtok = Mat::filled(vocab, d, zero);
        let mut seen: Vec<usize> = tokens.to_vec();
        seen.sort_unstable();
        seen.dedup();
        for t in seen {
            let rows: Vec<M::Word> = (0..tokens.len())
                .filter(|&r| tokens[r] == t)
                .flat_map(|r| dg.row(r).to_vec())
                .collect();
            let m = mat(rows.len() / d, d, rows);
            let s = self.row_sums(g, sums, m.t())?;
            dtok.data[t * d..(t + 1) * d].copy_from_slice(&s);
        }
        Ok([(dtok, vec![]), (mat(context, d, dpos), vec![])])
    }
}
