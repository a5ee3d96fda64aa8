//! The network `lpgen train` builds: `--model`, `--hidden`, `--activation`, `--maxout-k` and
//! `--dropout`, each checked against its bounds.

use lpgen_train::arch::{Arch, ArchOptions, ModelKind};
use lpgen_train::config::Activation;

use super::{bad, TrainArgs};
use crate::CliResult;

/// The widest layer: 64 Ki units (a 784-65536 layer is 51 M weights).
const MAX_WIDTH: usize = 1 << 16;

/// Pieces of a maxout unit: seed 002 uses 5; more only multiplies the layer's weights.
const MAX_PIECES: usize = 64;

/// Weights of the whole network: 2^26 (64 Mi) of them take 1.5 GiB as weights, momenta
/// and Kahan compensations in 8-byte words, beside activations and gradients.
const MAX_WEIGHTS: usize = 1 << 26;

/// The network of `--model`, `--hidden`, `--activation`, `--maxout-k` and `--dropout`.
pub(super) fn arch(a: &TrainArgs, input: (usize, usize, usize), classes: usize) -> CliResult<Arch> {
    let kind: ModelKind = a.model.parse()?;
    let mut hidden = vec![];
    for h in a.hidden.split(',').filter(|h| !h.is_empty()) {
        match h.trim().parse::<usize>() {
            Ok(n) if (1..=MAX_WIDTH).contains(&n) => hidden.push(n),
            _ => {
                return Err(bad(format!(
                    "--hidden {:?}: expected widths of 1..={MAX_WIDTH} such as 512 or 256,128",
                    a.hidden
                )))
            }
        }
    }
    if !(2..=MAX_PIECES).contains(&a.maxout_k) {
        return Err(bad(format!(
            "--maxout-k {} is out of range: give 2..={MAX_PIECES}",
            a.maxout_k
        )));
    }
    let mut dropout = vec![];
    for p in a.dropout.iter().flat_map(|d| d.split(',')) {
        match p.trim().parse::<f64>() {
            Ok(p) if (0.0..1.0).contains(&p) => dropout.push(p),
            _ => {
                return Err(bad(format!(
                    "--dropout {:?}: expected probabilities in [0, 1) such as 0.2,0.5",
                    a.dropout.as_deref().unwrap_or_default()
                )))
            }
        }
    }
    let activation = match a.activation.as_str() {
        "sigmoid" => Activation::Sigmoid,
        "relu" => Activation::Relu,
        other => {
            return Err(bad(format!(
                "unknown activation {other:?}: expected sigmoid or relu"
            )))
        }
    };
    let options = ArchOptions {
        kind,
        hidden,
        activation,
        maxout_pieces: a.maxout_k,
        dropout,
    };
    let arch = Arch::build(&options, input, classes)?;
    let weights = arch.weight_count();
    if weights > MAX_WEIGHTS {
        return Err(bad(format!(
            "--hidden {:?} makes {weights} weights, over the limit of {MAX_WEIGHTS}: each is held \
             three times (weight, optimizer state, Kahan compensation) in 8-byte words",
            a.hidden
        )));
    }
    Ok(arch)
}
