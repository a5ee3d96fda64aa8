//! `lpgen train`'s Adam and AdamW options and the per-update learning-rate schedule (issue
//! 46): `--beta1`, `--beta2`, `--eps`, `--weight-decay`, `--lr-schedule`, `--warmup`,
//! `--lr-min`, each checked and refused in one line.

use clap::Args;
use lpgen_train::config::{Optimizer, Schedule};

use super::{bad, TrainArgs};
use crate::CliResult;

#[derive(Args)]
pub struct OptimArgs {
    /// adam, adamw: the first moment's decay β1 [default: 0.9]
    #[arg(long, allow_negative_numbers = true)]
    beta1: Option<f64>,
    /// adam, adamw: the second moment's decay β2 [default: 0.999]
    #[arg(long, allow_negative_numbers = true)]
    beta2: Option<f64>,
    /// adam, adamw: ε of the denominator √v̂ + ε, rounded to the optimizer's format (to its
    /// smallest power-of-two multiple that is not 0 there) [default: 1e-8]
    #[arg(long, allow_negative_numbers = true)]
    eps: Option<f64>,
    /// adamw: decoupled weight decay λ (the change −lr·λ·w) [default: 0.01]; adam: L2, λ·w
    /// added to the gradient [default: 0]
    #[arg(long, allow_negative_numbers = true)]
    weight_decay: Option<f64>,
    /// constant (the rate of --lr and --schedule) or cosine (per update: a linear warm-up
    /// over --warmup updates from lr/warmup to --lr, then a cosine decay to --lr-min over the
    /// run's remaining updates, epochs × batches per epoch)
    #[arg(long, default_value = "constant")]
    lr_schedule: String,
    /// cosine: updates of linear warm-up (at most the run's updates)
    #[arg(long, default_value_t = 0)]
    warmup: u64,
    /// cosine: the rate the decay ends at
    #[arg(long, default_value_t = 0.0, allow_negative_numbers = true)]
    lr_min: f64,
}

/// The optimizer of `--optimizer` with `--beta1`, `--beta2`, `--eps` and `--weight-decay`.
pub(super) fn optimizer(a: &TrainArgs) -> CliResult<Optimizer> {
    let o = &a.optim;
    let mut optimizer = Optimizer::parse(&a.optimizer)?;
    let Optimizer::Adam {
        beta1,
        beta2,
        eps,
        weight_decay,
        ..
    } = &mut optimizer
    else {
        if o.beta1.is_some() || o.beta2.is_some() || o.eps.is_some() || o.weight_decay.is_some() {
            return Err(bad(format!(
                "--beta1, --beta2, --eps and --weight-decay apply to --optimizer adam or adamw, not {:?}",
                a.optimizer
            )));
        }
        return Ok(optimizer);
    };
    for (name, given, at) in [("--beta1", o.beta1, beta1), ("--beta2", o.beta2, beta2)] {
        if let Some(b) = given {
            if !(0.0..1.0).contains(&b) {
                return Err(bad(format!(
                    "{name} {b} is out of range: give a value in [0, 1)"
                )));
            }
            *at = b;
        }
    }
    if let Some(e) = o.eps {
        if !(e.is_finite() && e > 0.0) {
            return Err(bad(format!(
                "--eps {e}: give a positive finite ε (e.g. 1e-8)"
            )));
        }
        *eps = e;
    }
    if let Some(w) = o.weight_decay {
        if !(w.is_finite() && w >= 0.0) {
            return Err(bad(format!(
                "--weight-decay {w}: give a finite λ of at least 0"
            )));
        }
        *weight_decay = w;
    }
    if a.momentum.is_some_and(|m| m != 0.0) {
        return Err(bad(format!(
            "--momentum applies to sgd, adagrad and rmsprop; {}'s first moment is --beta1",
            a.optimizer
        )));
    }
    Ok(optimizer)
}

/// The schedule: `--schedule`'s (`base`, per epoch) or `--lr-schedule cosine`'s over `total`
/// updates (`None` before the dataset is read: only the options are checked).
pub(super) fn schedule(a: &TrainArgs, base: Schedule, total: Option<u64>) -> CliResult<Schedule> {
    let o = &a.optim;
    match o.lr_schedule.as_str() {
        "constant" => {
            if o.warmup != 0 || o.lr_min != 0.0 {
                return Err(bad(
                    "--warmup and --lr-min apply to --lr-schedule cosine".into()
                ));
            }
            Ok(base)
        }
        "cosine" => {
            if a.schedule.as_deref().is_some_and(|s| s != "fixed") {
                return Err(bad(format!(
                    "--lr-schedule cosine sets the rate of every update: drop --schedule {}",
                    a.schedule.as_deref().unwrap_or_default()
                )));
            }
            if a.double_buffer {
                return Err(bad(
                    "--lr-schedule cosine counts one update per batch: --double-buffer makes two"
                        .into(),
                ));
            }
            if !(o.lr_min.is_finite() && o.lr_min >= 0.0 && o.lr_min <= a.lr) {
                return Err(bad(format!(
                    "--lr-min {}: give a rate in [0, --lr]",
                    o.lr_min
                )));
            }
            let total = total.unwrap_or(u64::MAX);
            if o.warmup > total {
                return Err(bad(format!(
                    "--warmup {} is beyond the run's {total} updates (--epochs × batches per epoch); give at most {total}",
                    o.warmup
                )));
            }
            Ok(Schedule::Cosine {
                warmup: o.warmup,
                total,
                min: o.lr_min,
            })
        }
        other => Err(bad(format!(
            "unknown --lr-schedule {other:?}: expected constant or cosine"
        ))),
    }
}

/// The run's updates: `--epochs` × its batches per epoch (`train` samples in batches of
/// `--batch`, at most `--max-steps`).
pub(super) fn total_updates(a: &TrainArgs, train: usize) -> u64 {
    let batches = train.div_ceil(a.batch.max(1));
    let per_epoch = a.max_steps.map_or(batches, |m| m.min(batches));
    a.epochs as u64 * per_epoch as u64
}

/// Adam's ε as the optimizer's format holds it: refused where it rounds to a non-finite
/// value (an IEEE-style float's ∞, which would make every step 0); a warning where it had to
/// be raised from 0 to the format's smallest power-of-two multiple of it.
pub(super) fn check_eps(cfg: &lpgen_train::config::Config) -> CliResult {
    let Some((eps, held)) = lpgen_train::optim::adam_eps(cfg) else {
        return Ok(());
    };
    let o = cfg.stages.o;
    if !held.is_finite() {
        return Err(bad(format!(
            "--eps {eps} rounds to {held} in {o} (stage O): give an ε below the format's largest value"
        )));
    }
    if held >= 2.0 * eps {
        eprintln!("lpgen: warning: --eps {eps} is 0 in {o} (stage O); Adam's ε is {held} there");
    }
    Ok(())
}
