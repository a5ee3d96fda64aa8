//! Seed 002's low-precision *storage* (Courbariaux et al., Algorithm 1): the arithmetic stays
//! in f32, and every value is rounded as it is stored. Each layer with weights has ten groups
//! (§5, and Courbariaux's code): its input, weighted sums, their errors, the error it passes
//! back, its weights and biases, their gradients and their changes. Parameters are stored at
//! the update width U and read at the propagation width P (§6); everything else is stored at P.
//!
//! Two kinds, one interface ([`Storage`]): dynamic fixed point and fixed point
//! (`--format dfix:P:U`, [`dfix`]: each group on its own grid, whose scale moves by the
//! overflow rates) and floating point (`--format store:P/U`, [`float`]: each value rounded to
//! a float format, seed 002's half-precision row). The network meets storage only through
//! [`Storage`]'s methods (`net_storage.rs`).

pub mod dfix;
pub mod float;

use std::collections::BTreeMap;

use lpgen_golden::Format;
use serde::{Deserialize, Serialize};

pub use dfix::{DfixConfig, DfixGroups};
pub use float::FloatConfig;

use crate::machine::Word;
use crate::rounding::Draws;
use crate::TrainError;

/// What `--format dfix:P:U` or `--format store:P/U` asks for.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum StorageConfig {
    /// Dynamic fixed point, or fixed point with `radix_point`.
    Dfix(DfixConfig),
    /// Floating point.
    Float(FloatConfig),
}

impl StorageConfig {
    /// The one-line description of titles and fingerprints (`dynamic fixed point 10/12
    /// bits, …`, `fixed point 20/20 bits, …`, `floating point f16/f16`).
    pub fn describe(&self) -> String {
        match self {
            StorageConfig::Dfix(c) => c.describe(),
            StorageConfig::Float(c) => c.describe(),
        }
    }

    /// The `--format` that asks for this storage (`dfix:10:12`, `store:f16`).
    pub fn name(&self) -> String {
        match self {
            StorageConfig::Dfix(c) => format!("dfix:{}:{}", c.propagation.width, c.update.width),
            StorageConfig::Float(c) => c.name(),
        }
    }

    /// The kind's word for messages: `dfix` or `float`.
    pub fn kind(&self) -> &'static str {
        match self {
            StorageConfig::Dfix(_) => "dfix",
            StorageConfig::Float(_) => "float",
        }
    }
}

/// The ten groups of a layer with weights.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Role {
    /// What the layer reads (the previous layer's outputs, post-nonlinearity and dropout).
    Input,
    /// x·Wᵀ + b.
    WeightedSum,
    /// dE/d(weighted sum).
    SumError,
    /// dE/d(input): the error the layer passes back.
    InputError,
    Weights,
    Biases,
    WeightGradient,
    BiasGradient,
    /// ΔW: the change the update adds (SGD's velocity).
    WeightChange,
    BiasChange,
}

impl Role {
    pub const ALL: [Role; 10] = [
        Role::Input,
        Role::WeightedSum,
        Role::SumError,
        Role::InputError,
        Role::Weights,
        Role::Biases,
        Role::WeightGradient,
        Role::BiasGradient,
        Role::WeightChange,
        Role::BiasChange,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Role::Input => "input",
            Role::WeightedSum => "sum",
            Role::SumError => "sum_error",
            Role::InputError => "input_error",
            Role::Weights => "weights",
            Role::Biases => "biases",
            Role::WeightGradient => "weight_grad",
            Role::BiasGradient => "bias_grad",
            Role::WeightChange => "weight_change",
            Role::BiasChange => "bias_change",
        }
    }

    /// Stored at the update width (format).
    pub(crate) fn is_update(self) -> bool {
        matches!(
            self,
            Role::Weights | Role::Biases | Role::WeightChange | Role::BiasChange
        )
    }

    pub(crate) fn index(self) -> usize {
        Role::ALL.iter().position(|&r| r == self).expect("listed")
    }
}

/// Values stored in one epoch, and how many of them saturated (overflowed).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct EpochCounts {
    pub stored: u64,
    pub overflows: u64,
}

/// The storage of a run: its kind's state, and the epoch's counts.
#[derive(Clone, Debug, PartialEq)]
pub struct Storage {
    kind: Kind,
    pub epoch: EpochCounts,
}

#[derive(Clone, Debug, PartialEq)]
enum Kind {
    Dfix(DfixGroups),
    Float(FloatConfig),
}

/// The checkpoint line of a float storage: a float has no state.
const FLOAT_SAVED: &str = "{}";

impl Storage {
    /// The storage `config` asks for, for `layers` layers with weights (dfix: every group at
    /// its radix point's scale, or scale 0 until the fit sets them).
    pub fn new(config: StorageConfig, layers: usize) -> Storage {
        let kind = match config {
            StorageConfig::Dfix(c) => Kind::Dfix(DfixGroups::new(c, layers)),
            StorageConfig::Float(c) => Kind::Float(c),
        };
        Storage {
            kind,
            epoch: EpochCounts::default(),
        }
    }

    pub fn config(&self) -> StorageConfig {
        match &self.kind {
            Kind::Dfix(g) => StorageConfig::Dfix(g.config),
            Kind::Float(c) => StorageConfig::Float(*c),
        }
    }

    /// The dynamic fixed-point groups (`None` for float storage).
    pub fn dfix(&self) -> Option<&DfixGroups> {
        match &self.kind {
            Kind::Dfix(g) => Some(g),
            Kind::Float(_) => None,
        }
    }

    /// Whether initial scales are fitted from an f32 run before training (dynamic fixed
    /// point), and on how many training examples.
    pub fn needs_fit(&self) -> bool {
        self.dfix().is_some_and(DfixGroups::needs_fit)
    }

    /// Training examples of the initial fit (dfix's scale period; 0 where nothing is fitted).
    pub fn fit_examples(&self) -> u64 {
        match &self.kind {
            Kind::Dfix(g) if g.needs_fit() => g.config.scale_every,
            _ => 0,
        }
    }

    /// From here to [`Storage::end_fit`], stored values are kept in f32 and only counted
    /// (dfix; nothing for a float).
    pub fn begin_fit(&mut self) {
        if let Kind::Dfix(g) = &mut self.kind {
            g.begin_fit();
        }
    }

    /// Sets the scales the fit found (dfix; nothing for a float).
    pub fn end_fit(&mut self) {
        if let Kind::Dfix(g) = &mut self.kind {
            g.end_fit(&mut self.epoch);
        }
    }

    /// Stores `words` (f32 words of `f`) in group `role` of layer `layer`, rounding them to
    /// the storage's format (float storage: stochastically with `draws`, word i with draw i;
    /// dfix storage takes none, `lpgen train` refuses the combination); when `training` the
    /// epoch counts them (and dfix's scale updates see their overflows).
    pub fn store<W: Word>(
        &mut self,
        f: Format,
        (layer, role): (usize, Role),
        words: &mut [W],
        (training, draws): (bool, Option<&Draws>),
    ) -> Result<(), TrainError> {
        match &mut self.kind {
            Kind::Dfix(_) if draws.is_some() => {
                return Err(TrainError(
                    "dfix storage rounds to nearest onto its groups' grids: it takes no stochastic rounding"
                        .into(),
                ))
            }
            Kind::Dfix(g) => g.store(f, (layer, role), words, training, &mut self.epoch),
            Kind::Float(c) => c.store(f, role, words, (training, draws), &mut self.epoch),
        }
        Ok(())
    }

    /// A parameter group's words as propagations read them (§6: at P).
    pub fn read<W: Word>(&self, f: Format, layer: usize, role: Role, words: &[W]) -> Vec<W> {
        match &self.kind {
            Kind::Dfix(g) => g.read(f, layer, role, words),
            Kind::Float(c) => c.read(f, words),
        }
    }

    /// Whether products run on the stored dfix words now (`--dfix-products exact`).
    pub fn exact_products(&self) -> bool {
        self.dfix().is_some_and(DfixGroups::exact_products)
    }

    /// Counts a dfix product's read-outs into group `role` (see [`DfixGroups::count`]).
    pub fn count(&mut self, at: (usize, Role), counts: (u64, u64, u64), training: bool) {
        if let Kind::Dfix(g) = &mut self.kind {
            g.count(at, counts, training, &mut self.epoch);
        }
    }

    /// Counts `examples` more training examples (dfix's scale updates).
    pub fn examples(&mut self, examples: u64) {
        if let Kind::Dfix(g) = &mut self.kind {
            g.examples(examples);
        }
    }

    /// Every group's scale, named `L<layer>.<role>` (dfix; `None` for a float).
    pub fn scales(&self) -> Option<BTreeMap<String, i32>> {
        self.dfix().map(DfixGroups::scales)
    }

    /// The checkpoint's line.
    pub fn save(&self) -> String {
        match &self.kind {
            Kind::Dfix(g) => g.save(),
            Kind::Float(_) => FLOAT_SAVED.into(),
        }
    }

    /// Restores what [`Storage::save`] wrote for a storage of the same configuration.
    pub fn restore(&mut self, line: &str) -> Result<(), TrainError> {
        match &mut self.kind {
            Kind::Dfix(g) => g.restore(line),
            Kind::Float(_) if line == FLOAT_SAVED => Ok(()),
            Kind::Float(_) => Err(TrainError(format!(
                "checkpoint storage line {line:?} is not a float storage's ({FLOAT_SAVED:?})"
            ))),
        }
    }
}
