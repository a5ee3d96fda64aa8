//! Adam and AdamW (issue 46; Kingma and Ba 2015, Loshchilov and Hutter 2019) in the
//! optimizer's format O, every operation on a tensor a machine lane operation (on
//! `--backend rtl` the vector unit's lanes; the square root is the `Sqrt` opcode).
//!
//! The order of the operations, each rounded to O (this order is the contract the f32
//! reference of `tests/adam.rs` follows bit for bit):
//!
//! ```text
//! g  ← G / batch                                  the mean gradient
//! g  ← g + λ·w                                    Adam only, when λ > 0 (L2)
//! m  ← β1·m + (1 − β1)·g                          (β1·m) + ((1 − β1)·g)
//! v  ← β2·v + (1 − β2)·(g·g)                      (β2·v) + ((1 − β2)·(g·g))
//! m̂  ← m / c1,  v̂ ← v / c2                        c1 = 1 − β1^t, c2 = 1 − β2^t
//! d  ← √v̂ + ε
//! Δ  ← −((m̂ / d)·lr)
//! Δ  ← Δ − (lr·λ)·w                               AdamW only, when λ > 0 (decoupled)
//! w  ← w + Δ                                      (with Kahan's compensation if asked)
//! ```
//!
//! The constants β1, 1 − β1, β2, 1 − β2, c1, c2, λ, lr and lr·λ are computed in f64 on the
//! host (lr from the schedule, as every rate is) and rounded to O once; ε, c1 and c2 are
//! rounded by [`positive`] (the smallest of x, 2x, 4x, … that O does not round to zero), so
//! that no division is by zero. m and v are stored in O in the parameters' `vw`/`vb` and
//! `rw`/`rb`, and so in every checkpoint.

use lpgen_golden::AluOp;

use crate::config::Optimizer;
use crate::machine::Machine;
use crate::net::Net;
use crate::optim::positive;
use crate::TrainError;

impl<M: Machine> Net<'_, M> {
    /// Adam's change of the parameters `w` from their summed gradient `g` over `batch`
    /// samples, updating the moments `m` and `v` in place; `lr` is the update's rate and `t`
    /// its step (from 1).
    pub(crate) fn adam_change(
        &mut self,
        w: &[M::Word],
        (m, v): (&mut Vec<M::Word>, &mut Vec<M::Word>),
        g: &[M::Word],
        (lr, t): (f64, u64),
        batch: usize,
    ) -> Result<Vec<M::Word>, TrainError> {
        let Optimizer::Adam {
            beta1,
            beta2,
            eps,
            weight_decay,
            decoupled,
        } = self.cfg.optimizer
        else {
            unreachable!("adam_change runs for --optimizer adam and adamw only")
        };
        let o = self.cfg.stages.o;
        let n = g.len();
        let mut g = self.mean(g, batch)?;
        if weight_decay > 0.0 && !decoupled {
            let decay = self.update_lanes(o, AluOp::Mul, w, &self.splat(o, weight_decay, n))?;
            g = self.update_lanes(o, AluOp::Add, &g, &decay)?;
        }
        let kept = self.update_lanes(o, AluOp::Mul, m, &self.splat(o, beta1, n))?;
        let new = self.update_lanes(o, AluOp::Mul, &g, &self.splat(o, 1.0 - beta1, n))?;
        *m = self.update_lanes(o, AluOp::Add, &kept, &new)?;
        let square = self.update_lanes(o, AluOp::Mul, &g, &g)?;
        let kept = self.update_lanes(o, AluOp::Mul, v, &self.splat(o, beta2, n))?;
        let new = self.update_lanes(o, AluOp::Mul, &square, &self.splat(o, 1.0 - beta2, n))?;
        *v = self.update_lanes(o, AluOp::Add, &kept, &new)?;
        let exponent = i32::try_from(t).unwrap_or(i32::MAX);
        let c1 = positive::<M::Word>(o, 1.0 - beta1.powi(exponent));
        let c2 = positive::<M::Word>(o, 1.0 - beta2.powi(exponent));
        let m_hat = self.update_lanes(o, AluOp::Div, m, &vec![c1; n])?;
        let v_hat = self.update_lanes(o, AluOp::Div, v, &vec![c2; n])?;
        let root = self.update_lanes(o, AluOp::Sqrt, &v_hat, &[])?;
        let den = self.update_lanes(o, AluOp::Add, &root, &vec![positive(o, eps); n])?;
        let ratio = self.update_lanes(o, AluOp::Div, &m_hat, &den)?;
        let step = self.update_lanes(o, AluOp::Mul, &ratio, &self.splat(o, lr, n))?;
        let mut change = self.update_lanes(o, AluOp::Neg, &step, &[])?;
        if weight_decay > 0.0 && decoupled {
            let decay =
                self.update_lanes(o, AluOp::Mul, w, &self.splat(o, lr * weight_decay, n))?;
            change = self.update_lanes(o, AluOp::Sub, &change, &decay)?;
        }
        Ok(change)
    }
}
