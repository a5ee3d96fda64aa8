//! `lpgen train --model gpt` (issue 46): the transformer's shape (`--layers`, `--heads`,
//! `--dim`, `--context`), its data (`--dataset text:PATH`) and the options it does not take
//! yet, each refused in one line.

use std::path::PathBuf;

use lpgen_train::arch::Arch;
use lpgen_train::data::Dataset;
use lpgen_train::transformer::{text, Gpt, Task};

use super::{bad, TrainArgs};
use crate::CliResult;

/// The widest transformer: dim up to 4096, context up to 4096, 64 layers.
const MAX_DIM: usize = 4096;
const MAX_LAYERS: usize = 64;

/// Whether the run trains a gpt (`--model gpt`).
pub(super) fn is_gpt(a: &TrainArgs) -> bool {
    a.model == "gpt"
}

/// Whether the run trains a transformer (`--model gpt` or `vit`).
pub(super) fn is_transformer(a: &TrainArgs) -> bool {
    is_gpt(a) || a.model == "vit"
}

/// The text file of `--dataset text:PATH`, if the dataset is one; a gpt needs one and the
/// other networks refuse one.
pub(super) fn text_path(a: &TrainArgs) -> CliResult<Option<PathBuf>> {
    let text = a
        .dataset
        .to_str()
        .and_then(|d| d.strip_prefix("text:"))
        .map(PathBuf::from);
    match (is_gpt(a), text) {
        (true, None) => Err(bad(format!(
            "--model gpt trains on a text file: give --dataset text:PATH, not {}",
            a.dataset.display()
        ))),
        (false, Some(_)) => Err(bad(format!(
            "--dataset {}: text datasets are for --model gpt (the other networks take IDX directories)",
            a.dataset.display()
        ))),
        (_, text) => Ok(text),
    }
}

/// The gpt of `--layers`, `--heads`, `--dim` and `--context` (a vit's of `--patch` on
/// images of `input` in `classes` classes), after refusing what a transformer does not take
/// yet.
pub(super) fn arch(a: &TrainArgs, input: (usize, usize, usize), classes: usize) -> CliResult<Arch> {
    let unsupported = [
        (
            a.format.as_deref().is_some_and(|f| {
                f.starts_with("dfix") || f.starts_with("store:") || f.starts_with("mx:")
            }),
            "storage and MX formats (--format dfix:…, store:…, mx:…)",
        ),
        (
            a.compress_grad.is_some() || a.compress_act.is_some(),
            "--compress-grad and --compress-act",
        ),
        (a.max_norm.is_some(), "--max-norm"),
        (a.dropout.is_some(), "--dropout"),
        (
            a.workers > 1 || a.compress != "none" || a.double_buffer || a.dist != "local",
            "data-parallel workers (--workers, --compress, --double-buffer, --dist)",
        ),
    ];
    if let Some((_, what)) = unsupported.iter().find(|(given, _)| *given) {
        return Err(bad(format!("--model {} does not take {what} yet", a.model)));
    }
    for (name, v, max) in [
        ("--layers", a.layers, MAX_LAYERS),
        ("--dim", a.dim, MAX_DIM),
        ("--context", a.context, MAX_DIM),
    ] {
        if v > max {
            return Err(bad(format!(
                "{name} {v} is out of range: give at most {max}"
            )));
        }
    }
    if !is_gpt(a) {
        let (_, side, width) = input;
        if side != width || input.0 != 1 || a.patch < 1 {
            return Err(bad(format!(
                "--model vit takes square single-channel images and a --patch of at least 1, not {side}x{width} and {}",
                a.patch
            )));
        }
        let per = side / a.patch;
        return Ok(Arch::gpt(Gpt {
            layers: a.layers,
            heads: a.heads,
            dim: a.dim,
            context: per * per,
            vocab: classes,
            task: Task::Image {
                side,
                patch: a.patch,
            },
        })?);
    }
    Ok(Arch::gpt(Gpt {
        layers: a.layers,
        heads: a.heads,
        dim: a.dim,
        context: a.context,
        vocab: text::VOCAB,
        task: Task::Text,
    })?)
}

/// The training and test windows of the text file `path`.
pub(super) fn load(a: &TrainArgs, path: &std::path::Path) -> CliResult<(Dataset, Dataset)> {
    Ok(text::load(path, a.context)?)
}
