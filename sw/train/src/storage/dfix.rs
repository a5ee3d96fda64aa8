//! Seed 002's dynamic fixed-point storage (`--format dfix:P:U`, Courbariaux et al.,
//! Algorithm 1): every stored value is rounded onto the grid of its group's dynamic
//! fixed-point format (`lpgen_golden::dfix`). Parameters are stored at the update width U and
//! read at the propagation width P (§6); everything else is stored at P.
//!
//! Dynamic fixed point moves each group's scale every `scale_every` training examples by the
//! overflow rates (golden `Group::update`); the initial scales come from a short f32 run
//! (§9.3, [`DfixGroups::begin_fit`]). Seed 002's fixed point is the same storage with one
//! global radix point that never moves (`radix_point`).

use std::collections::BTreeMap;

use lpgen_golden::dfix::group::{round_onto_grid, Group};
use lpgen_golden::dfix::DfixFormat;
use lpgen_golden::Format;
use serde::{Deserialize, Serialize};

use super::{EpochCounts, Role};
use crate::machine::Word;
use crate::TrainError;

/// What `--format dfix:P:U` (with `--scale-every`, `--max-overflow`, `--radix-point`) asks for.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DfixConfig {
    /// Activations, gradients, and parameters as propagations read them.
    pub propagation: DfixFormat,
    /// Parameters and their changes, as the update reads and writes them.
    pub update: DfixFormat,
    /// Training examples between scale updates (§9.3: 10,000).
    pub scale_every: u64,
    /// The overflow rate the scale updates aim under (§9.3: 0.01 %).
    pub max_overflow: f64,
    /// Seed 002's fixed point: every group holds this many integer bits (sign excluded; §9.2's
    /// "radix point after the fifth bit" is 5) and its scale never moves.
    pub radix_point: Option<u32>,
    /// `--dfix-products exact`: the dense layers' products on the stored words, accumulated
    /// exactly and read out once into the result's group (the dfix array PE's arithmetic),
    /// instead of f32 products rounded as they are stored.
    pub exact_products: bool,
}

impl DfixConfig {
    /// A group's format: parameters and their changes at U, the rest at P.
    fn format(&self, role: Role) -> DfixFormat {
        if role.is_update() {
            self.update
        } else {
            self.propagation
        }
    }

    /// The one-line description of titles and fingerprints.
    pub fn describe(&self) -> String {
        let (p, u) = (self.propagation.width, self.update.width);
        let products = if self.exact_products {
            ", exact products"
        } else {
            ""
        };
        match self.radix_point {
            Some(r) => format!("fixed point {p}/{u} bits, radix point after bit {r}{products}"),
            None => format!(
                "dynamic fixed point {p}/{u} bits, scales every {} examples at {:e} overflow{products}",
                self.scale_every, self.max_overflow
            ),
        }
    }
}

/// The groups of a run and where their scale updates stand.
#[derive(Clone, Debug, PartialEq)]
pub struct DfixGroups {
    pub config: DfixConfig,
    /// `groups[layer][role.index()]`, layers with weights in order.
    groups: Vec<[Group; 10]>,
    /// Training examples since the last scale update.
    since_update: u64,
    /// While the initial scales are fitted: per group, how many values needed each scale.
    fitting: Option<Vec<[BTreeMap<i32, u64>; 10]>>,
}

/// The checkpointed part of a [`DfixGroups`] (its configuration is the run's).
#[derive(Serialize, Deserialize)]
struct Saved {
    since_update: u64,
    /// Per group: scale, values seen, overflows, overflows at half the scale.
    groups: Vec<[[i64; 4]; 10]>,
}

impl DfixGroups {
    /// The groups of `layers` layers with weights. Fixed point: every group at its radix
    /// point's scale; dynamic: scale 0 until [`DfixGroups::begin_fit`] and
    /// [`DfixGroups::end_fit`] set them.
    pub fn new(config: DfixConfig, layers: usize) -> DfixGroups {
        let group = |role: Role| {
            let f = config.format(role);
            // r integer bits of W − 1: the scale is r − (W − 1).
            let scale = config
                .radix_point
                .map_or(0, |r| r as i32 - (f.width as i32 - 1));
            Group::new(f, scale)
        };
        DfixGroups {
            config,
            groups: (0..layers).map(|_| Role::ALL.map(group)).collect(),
            since_update: 0,
            fitting: None,
        }
    }

    /// Whether the scales are fitted from an f32 run before training (dynamic fixed point).
    pub fn needs_fit(&self) -> bool {
        self.config.radix_point.is_none()
    }

    /// From here to [`DfixGroups::end_fit`], stored values are kept in f32 and only counted:
    /// the higher-precision run of §9.3.
    pub fn begin_fit(&mut self) {
        self.fitting = Some(
            self.groups
                .iter()
                .map(|_| std::array::from_fn(|_| BTreeMap::new()))
                .collect(),
        );
    }

    /// Sets every group's scale to where the update rule would settle for the values the fit
    /// saw (golden `Group::settled_scale`); a group that saw only zeros (or nothing) keeps
    /// the scale that holds ±1.
    pub fn end_fit(&mut self, epoch: &mut EpochCounts) {
        let Some(fitting) = self.fitting.take() else {
            return;
        };
        let max_overflow = self.config.max_overflow;
        for (groups, needed) in self.groups.iter_mut().zip(fitting) {
            for (g, needed) in groups.iter_mut().zip(needed) {
                let total: u64 = needed.values().sum();
                g.scale = if total == 0 {
                    1 - (g.format.width as i32 - 1)
                } else {
                    Group::settled_scale(&needed, total, max_overflow)
                };
            }
        }
        self.since_update = 0;
        *epoch = EpochCounts::default();
    }

    /// Stores `words` (f32 words of `f`) in group `role` of layer `layer`: rounds them onto the
    /// group's grid, counting overflows when `training` (in the group and in `epoch`; test
    /// passes are rounded the same, but their overflows do not steer the scales).
    pub fn store<W: Word>(
        &mut self,
        f: Format,
        (layer, role): (usize, Role),
        words: &mut [W],
        training: bool,
        epoch: &mut EpochCounts,
    ) {
        let mut xs: Vec<f64> = words.iter().map(|w| w.value(f)).collect();
        let group = &mut self.groups[layer][role.index()];
        if let Some(fitting) = &mut self.fitting {
            let needed = &mut fitting[layer][role.index()];
            for &x in &xs {
                if let Some(e) = Group::needed_scale(group.format, x) {
                    *needed.entry(e).or_insert(0) += 1;
                }
            }
            return;
        }
        if training {
            let before = group.overflows;
            group.store(&mut xs);
            epoch.stored += xs.len() as u64;
            epoch.overflows += group.overflows - before;
        } else {
            // Rounded the same way, the counts dropped.
            round_onto_grid(group.format, group.scale, &mut xs);
        }
        for (w, x) in words.iter_mut().zip(xs) {
            *w = W::constant(f, x);
        }
    }

    /// A parameter group's words as propagations read them (§6): the U-bit words rounded to
    /// P bits over the same range (scale + U − P), saturating; not counted (the stored
    /// words already fit the range). Unchanged when P ≥ U or while fitting.
    pub fn read<W: Word>(&self, f: Format, layer: usize, role: Role, words: &[W]) -> Vec<W> {
        let (p, u) = (self.config.propagation, self.config.update);
        if p.width >= u.width || self.fitting.is_some() {
            return words.to_vec();
        }
        let scale = self.groups[layer][role.index()].scale + (u.width - p.width) as i32;
        let mut xs: Vec<f64> = words.iter().map(|w| w.value(f)).collect();
        round_onto_grid(p, scale, &mut xs);
        xs.into_iter().map(|x| W::constant(f, x)).collect()
    }

    /// Whether products run on the stored words now (`exact_products`, and not while the
    /// initial scales are fitted in f32).
    pub fn exact_products(&self) -> bool {
        self.config.exact_products && self.fitting.is_none()
    }

    /// The format and scale of group `role`'s words as a product reads them: parameters at
    /// the propagation width over their range (scale + U − P), everything else as stored.
    pub fn operand(&self, layer: usize, role: Role) -> (DfixFormat, i32) {
        let g = &self.groups[layer][role.index()];
        let (p, u) = (self.config.propagation, self.config.update);
        if role.is_update() && p.width < u.width {
            (p, g.scale + (u.width - p.width) as i32)
        } else {
            (g.format, g.scale)
        }
    }

    /// Counts `seen` values read out into group `role` by a product, of which `overflows`
    /// saturated and `overflows_at_half` would have at half the scale (`training` only).
    pub fn count(
        &mut self,
        (layer, role): (usize, Role),
        (seen, overflows, overflows_at_half): (u64, u64, u64),
        training: bool,
        epoch: &mut EpochCounts,
    ) {
        if !training || self.fitting.is_some() {
            return;
        }
        let g = &mut self.groups[layer][role.index()];
        g.seen += seen;
        g.overflows += overflows;
        g.overflows_at_half += overflows_at_half;
        epoch.stored += seen;
        epoch.overflows += overflows;
    }

    /// Counts `examples` more training examples; every `scale_every` of them each group's
    /// scale moves by its overflow rates (dynamic fixed point only).
    pub fn examples(&mut self, examples: u64) {
        if self.config.radix_point.is_some() || self.fitting.is_some() {
            return;
        }
        self.since_update += examples;
        if self.since_update >= self.config.scale_every {
            self.since_update = 0;
            for g in self.groups.iter_mut().flatten() {
                g.update(self.config.max_overflow);
            }
        }
    }

    /// Every group's scale, named `L<layer>.<role>` (layers from 1).
    pub fn scales(&self) -> BTreeMap<String, i32> {
        self.groups
            .iter()
            .enumerate()
            .flat_map(|(l, groups)| {
                Role::ALL
                    .iter()
                    .map(move |r| (format!("L{}.{}", l + 1, r.name()), groups[r.index()].scale))
            })
            .collect()
    }

    /// The checkpoint's line (JSON).
    pub fn save(&self) -> String {
        let saved = Saved {
            since_update: self.since_update,
            groups: self
                .groups
                .iter()
                .map(|gs| {
                    gs.map(|g| {
                        [
                            g.scale as i64,
                            g.seen as i64,
                            g.overflows as i64,
                            g.overflows_at_half as i64,
                        ]
                    })
                })
                .collect(),
        };
        serde_json::to_string(&saved).expect("storage state serializes")
    }

    /// Restores what [`DfixGroups::save`] wrote into groups of the same shape.
    pub fn restore(&mut self, line: &str) -> Result<(), TrainError> {
        let bad =
            |why: String| TrainError(format!("checkpoint storage scales are unusable: {why}"));
        let saved: Saved = serde_json::from_str(line).map_err(|e| bad(e.to_string()))?;
        if saved.groups.len() != self.groups.len() {
            return Err(bad(format!(
                "{} layers, the network has {}",
                saved.groups.len(),
                self.groups.len()
            )));
        }
        for (groups, saved) in self.groups.iter_mut().zip(&saved.groups) {
            for (g, &[scale, seen, overflows, half]) in groups.iter_mut().zip(saved) {
                let scale = lpgen_golden::dfix::check_scale(scale).map_err(|e| bad(e.0))?;
                if seen < 0 || overflows < 0 || half < 0 {
                    return Err(bad("a negative count".into()));
                }
                g.scale = scale;
                (g.seen, g.overflows, g.overflows_at_half) =
                    (seen as u64, overflows as u64, half as u64);
            }
        }
        self.since_update = saved.since_update;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lpgen_golden::F32;

    fn config(p: u32, u: u32, radix_point: Option<u32>) -> DfixConfig {
        DfixConfig {
            propagation: DfixFormat::new(p).unwrap(),
            update: DfixFormat::new(u).unwrap(),
            scale_every: 100,
            max_overflow: 0.01,
            radix_point,
            exact_products: false,
        }
    }

    #[test]
    fn fixed_point_puts_every_group_at_the_radix_point() {
        let s = DfixGroups::new(config(10, 12, Some(5)), 2);
        let mut epoch = EpochCounts::default();
        // 10 bits with 5 integer bits: scale 5 − 9 = −4; 12 bits: 5 − 11 = −6. Range ±32.
        let scales = s.scales();
        assert_eq!(scales["L1.input"], -4);
        assert_eq!(scales["L2.weights"], -6);
        assert_eq!(scales.len(), 20);
        let mut s = s;
        let mut words = [40.0f32, 0.03, -1.0];
        s.store(
            Format::F32(F32),
            (0, Role::Input),
            &mut words,
            true,
            &mut epoch,
        );
        assert_eq!(words, [31.9375, 0.0, -1.0]); // 511/16 saturated; 0.03 < 1/32 rounds to 0
        assert_eq!(
            epoch,
            EpochCounts {
                stored: 3,
                overflows: 1
            }
        );
        s.examples(1000);
        assert_eq!(s.scales()["L1.input"], -4, "fixed point never moves");
    }

    #[test]
    fn parameters_are_read_at_the_propagation_width_over_the_same_range() {
        let mut s = DfixGroups::new(config(4, 8, None), 1);
        let mut epoch = EpochCounts::default();
        s.groups[0][Role::Weights.index()].scale = -7; // 8 bits: steps of 1/128, range ±1
        let mut w = [0.3f32, -0.99, 0.05];
        s.store(
            Format::F32(F32),
            (0, Role::Weights),
            &mut w,
            true,
            &mut epoch,
        );
        assert_eq!(w, [38.0 / 128.0, -127.0 / 128.0, 6.0 / 128.0]);
        // 4 bits over ±1: steps of 1/8 (scale −3); −127/128 rounds to −1 (fits: −8/8).
        let read = s.read(Format::F32(F32), 0, Role::Weights, &w);
        assert_eq!(read, [0.25, -1.0, 0.0]);
    }

    #[test]
    fn fitting_counts_and_then_settles_scales_and_updates_move_them() {
        let mut s = DfixGroups::new(config(8, 8, None), 1);
        let mut epoch = EpochCounts::default();
        s.begin_fit();
        let mut xs: Vec<f32> = (0..1000)
            .map(|i| if i < 5 { 1000.0 } else { 1.0 })
            .collect();
        let copy = xs.clone();
        s.store(
            Format::F32(F32),
            (0, Role::WeightedSum),
            &mut xs,
            true,
            &mut epoch,
        );
        assert_eq!(xs, copy, "the fit keeps f32 values");
        s.end_fit(&mut epoch);
        // 0.5 % need scale 3 (1000 < 128·8), the rest −6 (1 = 64·2^−6): at 1 % the group
        // settles at −6; a group that saw nothing holds ±1.
        assert_eq!(s.scales()["L1.sum"], -6);
        assert_eq!(s.scales()["L1.weights"], -6);
        // 5 % overflow at −6: after 100 examples the scale doubles.
        let mut xs: Vec<f32> = (0..100).map(|i| if i < 5 { 3.0 } else { 1.0 }).collect();
        s.store(
            Format::F32(F32),
            (0, Role::WeightedSum),
            &mut xs,
            true,
            &mut epoch,
        );
        s.examples(99);
        assert_eq!(s.scales()["L1.sum"], -6);
        s.examples(1);
        assert_eq!(s.scales()["L1.sum"], -5);
        let saved = s.save();
        let mut back = DfixGroups::new(config(8, 8, None), 1);
        back.restore(&saved).unwrap();
        assert_eq!(back.groups, s.groups);
        assert!(DfixGroups::new(config(8, 8, None), 2)
            .restore(&saved)
            .is_err());
    }
}
