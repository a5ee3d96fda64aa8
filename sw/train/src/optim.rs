//! The optimizers' updates, in the optimizer's format O as machine lane operations: SGD with
//! momentum (seed 000), AdaGrad (seed 001, normalizing before or after momentum) and RMSProp
//! (seed 003), both with optional momentum (Adam and AdamW: `adam.rs`). Their per-parameter state lives in
//! `Params::vw`/`vb` (momentum) and `rw`/`rb` (squared gradients); with Kahan updates each
//! weight also keeps a compensation.

use lpgen_golden::{AluOp, Format};

use crate::config::{AdaGradAt, Config, Optimizer, Place};
use crate::machine::{Machine, Mat, Word};
use crate::model::Params;
use crate::net::Net;
use crate::storage::Role;
use crate::TrainError;

/// Newton steps of the reciprocal square root: from a start within a factor √2 the relative
/// error falls 0.29, 0.12, 0.02, 6e-4, 5e-7, 4e-13, past f32's precision at the sixth.
const RSQRT_STEPS: usize = 6;

/// The optimizer's rate constant in its format O at the first step: SGD multiplies the summed
/// gradient by lr/batch, AdaGrad and RMSProp the normalized one by lr. `Some(rate)` when the
/// rate rounds to zero there, so that no full batch changes a weight (only a smaller last
/// batch of an epoch has a larger rate): fp8:e4m3,
/// whose smallest subnormal is 2^−9, rounds seed 004's 0.0625/64 = 2^−10 to 0 (a tie, to the
/// even zero). `lpgen train` warns of it.
pub fn vanishing_rate(cfg: &Config) -> Option<f64> {
    let rate = match cfg.optimizer {
        Optimizer::Sgd => cfg.lr / cfg.batch as f64,
        Optimizer::AdaGrad { .. } | Optimizer::RmsProp { .. } | Optimizer::Adam { .. } => cfg.lr,
    };
    let o = cfg.stages.o;
    let held = o.calc().to_f64(o.calc().from_f64(rate));
    (rate > 0.0 && held == 0.0).then_some(rate)
}

/// Adam's ε as given and as its format O holds it (raised from zero by `positive`);
/// `None` for the other optimizers.
pub fn adam_eps(cfg: &Config) -> Option<(f64, f64)> {
    match cfg.optimizer {
        Optimizer::Adam { eps, .. } => {
            let o = cfg.stages.o;
            Some((eps, positive::<u64>(o, eps).value(o)))
        }
        Optimizer::Sgd | Optimizer::AdaGrad { .. } | Optimizer::RmsProp { .. } => None,
    }
}

impl<M: Machine> Net<'_, M> {
    /// Applies one step of the configured optimizer to a layer's parameters: `gw` and `gb`
    /// are the batch's summed gradients in O, or, when `normalized`, gradients that AdaGrad
    /// already normalized in the data-parallel exchange (`--adagrad-at local|aggregate`);
    /// `lr` is this update's rate and `step` its number (from 1; Adam's t).
    #[allow(clippy::too_many_arguments)] // the parameters, their gradients and the step's figures
    pub(crate) fn update(
        &mut self,
        at: usize,
        p: &mut Params<M::Word>,
        (gw, gb): (&[M::Word], &[M::Word]),
        (lr, step): (f64, u64),
        batch: usize,
        momentum: f64,
        normalized: bool,
    ) -> Result<(), TrainError> {
        let o = self.cfg.stages.o;
        let rows = p.w.rows;
        // Seed 002's storage: each change, and each parameter after it, is stored at U.
        for ((w, v, r, c, g), (params, changes)) in [
            (&mut p.w.data, &mut p.vw, &mut p.rw, &mut p.cw, gw),
            (&mut p.b, &mut p.vb, &mut p.rb, &mut p.cb, gb),
        ]
        .into_iter()
        .zip([
            (Role::Weights, Role::WeightChange),
            (Role::Biases, Role::BiasChange),
        ]) {
            let n = w.len();
            let change = match self.cfg.optimizer {
                Optimizer::Sgd => {
                    // v = μ·v − (lr / batch)·g
                    let rate = self.splat(o, lr / batch as f64, n);
                    let step = self.update_lanes(o, AluOp::Mul, g, &rate)?;
                    let kept = self.update_lanes(o, AluOp::Mul, v, &self.splat(o, momentum, n))?;
                    *v = self.update_lanes(o, AluOp::Sub, &kept, &step)?;
                    v.clone()
                }
                Optimizer::AdaGrad {
                    at: AdaGradAt::Momentum,
                    ..
                } => {
                    // s = μ·s + (1 − μ)·(g / batch), then −lr·s / (√r + ε) with r ← r + s².
                    let mean = self.mean(g, batch)?;
                    let kept = self.update_lanes(o, AluOp::Mul, v, &self.splat(o, momentum, n))?;
                    let new =
                        self.update_lanes(o, AluOp::Mul, &mean, &self.splat(o, 1.0 - momentum, n))?;
                    *v = self.update_lanes(o, AluOp::Add, &kept, &new)?;
                    let ratio = self.normalize(r, &v.clone())?;
                    self.scaled_step(&ratio, lr, v, 0.0)?
                }
                Optimizer::Adam { .. } => self.adam_change(w, (v, r), g, (lr, step), batch)?,
                Optimizer::AdaGrad { .. } | Optimizer::RmsProp { .. } => {
                    let ratio = if normalized {
                        g.to_vec()
                    } else {
                        let mean = self.mean(g, batch)?;
                        self.normalize(r, &mean)?
                    };
                    self.scaled_step(&ratio, lr, v, momentum)?
                }
            };
            let change = if self.storage.is_some() {
                let mut stored = change;
                self.store(at, changes, &mut stored, true)?;
                // Where the change is the velocity, the stored velocity is what momentum keeps.
                let velocity = match self.cfg.optimizer {
                    Optimizer::Sgd => true,
                    Optimizer::AdaGrad {
                        at: AdaGradAt::Momentum,
                        ..
                    }
                    | Optimizer::Adam { .. } => false,
                    Optimizer::AdaGrad { .. } | Optimizer::RmsProp { .. } => momentum > 0.0,
                };
                if velocity {
                    v.clone_from(&stored);
                }
                stored
            } else {
                change
            };
            self.add_change(w, c, &change)?;
            if let (Role::Weights, Some(limit)) = (params, self.cfg.max_norm) {
                self.max_norm(w, rows, limit)?;
            }
            self.store(at, params, w, true)?;
        }
        Ok(())
    }

    /// Seed 002 §8's constraint (Srebro and Shraibman): each of the `rows` rows of `w` (a
    /// unit's, a maxout piece's or a filter's weight vector) longer than `limit` is scaled
    /// back to length `limit`, in O: the squared lengths by a product with ones (accumulated
    /// as the format's sums are), 1/length by [`Net::rsqrt`], the factor min(1, limit/length).
    /// A row whose squared length is not positive keeps its weights.
    fn max_norm(
        &mut self,
        w: &mut Vec<M::Word>,
        rows: usize,
        limit: f64,
    ) -> Result<(), TrainError> {
        let o = self.cfg.stages.o;
        let squares = Mat {
            rows,
            cols: w.len() / rows.max(1),
            data: self.update_lanes(o, AluOp::Mul, w, w)?,
        };
        let acc = self.cfg.accumulation(Place::Sums, o);
        let lengths2 = self.row_sums(o, acc, squares.view())?;
        let inv = self.rsqrt(o, &lengths2)?;
        let factor = self.update_lanes(o, AluOp::Mul, &inv, &self.splat(o, limit, rows))?;
        let one = M::Word::constant(o, 1.0);
        let factor = self.update_lanes(o, AluOp::Min, &factor, &vec![one; rows])?;
        let per_weight: Vec<M::Word> = factor
            .iter()
            .zip(&lengths2)
            .flat_map(|(&f, &l2)| {
                let f = if l2.value(o) > 0.0 { f } else { one };
                std::iter::repeat_n(f, squares.cols)
            })
            .collect();
        *w = self.update_lanes(o, AluOp::Mul, w, &per_weight)?;
        Ok(())
    }

    /// g / batch in O: the mean gradient of a batch's summed gradient.
    pub(crate) fn mean(&mut self, g: &[M::Word], batch: usize) -> Result<Vec<M::Word>, TrainError> {
        let o = self.cfg.stages.o;
        self.update_lanes(o, AluOp::Div, g, &self.splat(o, batch as f64, g.len()))
    }

    /// AdaGrad's and RMSProp's normalization of a mean gradient m in O: the state r becomes
    /// r + m² (AdaGrad) or ρ·r + (1 − ρ)·m² (RMSProp); returns m / (√r + ε).
    pub(crate) fn normalize(
        &mut self,
        r: &mut Vec<M::Word>,
        mean: &[M::Word],
    ) -> Result<Vec<M::Word>, TrainError> {
        let o = self.cfg.stages.o;
        let n = mean.len();
        let (eps, decay) = match self.cfg.optimizer {
            Optimizer::AdaGrad { eps, .. } => (eps, None),
            Optimizer::RmsProp { eps, decay } => (eps, Some(decay)),
            Optimizer::Sgd | Optimizer::Adam { .. } => {
                unreachable!("SGD and Adam do not normalize")
            }
        };
        let square = self.update_lanes(o, AluOp::Mul, mean, mean)?;
        *r = match decay {
            Some(decay) => {
                let kept = self.update_lanes(o, AluOp::Mul, r, &self.splat(o, decay, n))?;
                let new =
                    self.update_lanes(o, AluOp::Mul, &square, &self.splat(o, 1.0 - decay, n))?;
                self.update_lanes(o, AluOp::Add, &kept, &new)?
            }
            None => self.update_lanes(o, AluOp::Add, r, &square)?,
        };
        let inv = self.rsqrt(o, r)?;
        let root = self.update_lanes(o, AluOp::Mul, r, &inv)?;
        let den = self.update_lanes(o, AluOp::Add, &root, &vec![positive(o, eps); n])?;
        self.update_lanes(o, AluOp::Div, mean, &den)
    }

    /// The change of a normalized gradient: −lr·ratio, or with momentum μ > 0 the velocity
    /// v ← μ·v − lr·ratio. The ratio is of order one; scaling it by lr last keeps small steps
    /// from underflowing in short formats (lr·m first would round to zero in fix:7:8).
    fn scaled_step(
        &mut self,
        ratio: &[M::Word],
        lr: f64,
        v: &mut Vec<M::Word>,
        momentum: f64,
    ) -> Result<Vec<M::Word>, TrainError> {
        let o = self.cfg.stages.o;
        let n = ratio.len();
        let step = self.update_lanes(o, AluOp::Mul, ratio, &self.splat(o, lr, n))?;
        if momentum == 0.0 {
            return self.update_lanes(o, AluOp::Neg, &step, &[]);
        }
        let kept = self.update_lanes(o, AluOp::Mul, v, &self.splat(o, momentum, n))?;
        *v = self.update_lanes(o, AluOp::Sub, &kept, &step)?;
        Ok(v.clone())
    }

    /// w ← w + change, with a Kahan compensation per weight where asked (seed 000 §3.3).
    fn add_change(
        &mut self,
        w: &mut Vec<M::Word>,
        c: &mut Vec<M::Word>,
        change: &[M::Word],
    ) -> Result<(), TrainError> {
        let o = self.cfg.stages.o;
        if self.cfg.kahan_update() {
            let tmp = self.update_lanes(o, AluOp::Add, c, change)?;
            let t = self.update_lanes(o, AluOp::Add, w, &tmp)?;
            let u = self.update_lanes(o, AluOp::Sub, &t, w)?;
            *c = self.update_lanes(o, AluOp::Sub, &tmp, &u)?;
            *w = t;
        } else {
            *w = self.update_lanes(o, AluOp::Add, w, change)?;
        }
        Ok(())
    }

    /// 1/√r by Newton's iteration y ← y·(3/2 − ½·(y·r)·y) on the machine, from the power of
    /// two nearest to 1/√r (chosen by the host, as `exp` chooses its scaling); 0 where r is
    /// not positive.
    pub(crate) fn rsqrt(&mut self, f: Format, r: &[M::Word]) -> Result<Vec<M::Word>, TrainError> {
        let n = r.len();
        let mut y: Vec<M::Word> = r
            .iter()
            .map(|&w| {
                let v = w.value(f);
                let start = if v > 0.0 && v.is_finite() {
                    (-(v.log2() / 2.0).round()).exp2()
                } else {
                    0.0
                };
                M::Word::constant(f, start)
            })
            .collect();
        let (half, three_halves) = (self.splat(f, 0.5, n), self.splat(f, 1.5, n));
        for _ in 0..RSQRT_STEPS {
            let t = self.update_lanes(f, AluOp::Mul, &y, r)?;
            let t = self.update_lanes(f, AluOp::Mul, &t, &y)?;
            let t = self.update_lanes(f, AluOp::Mul, &t, &half)?;
            let t = self.update_lanes(f, AluOp::Sub, &three_halves, &t)?;
            y = self.update_lanes(f, AluOp::Mul, &y, &t)?;
        }
        Ok(y)
    }
}

/// ε in `f`: the smallest of ε, 2ε, 4ε, … that `f` does not round to zero (so that √r + ε is
/// never zero, which fix:I:F would divide by with saturation).
pub(crate) fn positive<W: Word>(f: Format, eps: f64) -> W {
    let mut x = eps;
    loop {
        let w = W::constant(f, x);
        if w.value(f) > 0.0 {
            return w;
        }
        x *= 2.0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::Golden;
    use crate::net::tests::cfg;
    use lpgen_golden::F32;

    /// Seed 004's SGD rate 0.0625/64 = 2^−10 is half fp8:e4m3's smallest subnormal and rounds
    /// to zero; fp8:e5m2 (2^−16) and posit:8:2 hold it, and a batch of 32 gives e4m3 2^−9.
    #[test]
    fn a_rate_that_rounds_to_zero_is_found() {
        let at = |f: &str, lr: f64, batch: usize, optimizer: Optimizer| {
            let mut c = cfg(f);
            (c.lr, c.batch, c.optimizer) = (lr, batch, optimizer);
            vanishing_rate(&c)
        };
        assert_eq!(
            at("fp8:e4m3", 0.0625, 64, Optimizer::Sgd),
            Some(0.0625 / 64.0)
        );
        assert_eq!(at("fp8:e4m3", 0.0625, 32, Optimizer::Sgd), None);
        assert_eq!(at("fp8:e5m2", 0.0625, 64, Optimizer::Sgd), None);
        assert_eq!(at("posit:8:2", 0.0625, 64, Optimizer::Sgd), None);
        let rms = Optimizer::RmsProp {
            decay: 0.9,
            eps: 1e-8,
        };
        assert_eq!(
            at("fp8:e4m3", 0.0625, 64, rms),
            None,
            "RMSProp's rate is lr"
        );
        assert_eq!(at("fp8:e4m3", 0.0009, 1, rms), Some(0.0009));
    }

    #[test]
    fn rsqrt_converges_in_every_family() {
        for (f, tol) in [
            ("f32", 1e-6),
            ("posit:16:1", 2e-3),
            ("lns:5:6", 3e-2),
            ("fix:7:8", 5e-2),
        ] {
            let c = cfg(f);
            let fmt = c.stages.o;
            let mut g = Golden::default();
            let mut net = Net::new(&mut g, &c);
            let xs = [0.03, 0.25, 0.3, 1.0, 2.0, 3.0, 7.5, 50.0];
            let words: Vec<u64> = xs.iter().map(|&x| u64::constant(fmt, x)).collect();
            let got = net.rsqrt(fmt, &words).unwrap();
            for (&w, &y) in words.iter().zip(&got) {
                let x = w.value(fmt);
                let want = 1.0 / x.sqrt();
                let rel = (y.value(fmt) - want).abs() / want;
                assert!(
                    rel < tol,
                    "{f}: rsqrt({x}) = {} (want {want})",
                    y.value(fmt)
                );
            }
            assert_eq!(
                net.rsqrt(fmt, &[u64::constant(fmt, 0.0)]).unwrap()[0],
                u64::constant(fmt, 0.0)
            );
        }
    }

    #[test]
    fn eps_never_rounds_to_zero() {
        let fix: Format = "fix:7:8".parse().unwrap();
        assert_eq!(positive::<u64>(fix, 1e-8).value(fix), 1.0 / 256.0);
        assert_eq!(positive::<f32>(Format::F32(F32), 1e-8), 1e-8f32);
    }
}
