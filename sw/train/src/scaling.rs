//! `--scaling` (issue 50): per-tensor scaled products, TransformerEngine's FP8 recipe; and
//! block-scaled products, the FP4 recipes (NVFP4, MXFP4, with the random Hadamard transform
//! of the weight gradients' operands: `block`).
//!
//! In a stage with a rule (F: the forward products, B: the error propagation's, G: the
//! weight gradients'), each operand of a dense or convolution layer's product is quantized
//! into the stage's format with one scale for the tensor: the golden
//! [`ScaledFormat::per_tensor`] (the decode scale S = f32(amax · 2^margin / elem_target),
//! elem_target a float's largest value or a posit's top of the binades around 1; each
//! element elem(x / S) rounded once, saturating as TE's cast does), S chosen by the golden
//! rule ([`Rule::Current`] from this tensor's amax, [`Delayed`] from an amax history). An
//! operand is read where it is widest: the weights from O, the layer's input from F; the
//! errors as the stage holds them. The machine then converts both operands' words into the
//! family's binary32-wide format, multiplies them there (the stage's accumulation), scales
//! the result by S_a and then S_b (f32 values, exact in the wide format's words) and converts
//! it into the stage's format: an FP8 GEMM with f32 accumulation and an `alpha` of
//! scale_inv_a · scale_inv_b, as TE runs it.
//!
//! Each product operand (layer, stage, operand) keeps its own history, updated once per
//! training step when the operand is quantized; evaluation passes quantize with the scale
//! as it stands and record nothing. The histories are saved in checkpoints ([`Scales::save`]).

use std::collections::BTreeMap;

use lpgen_golden::scale::{Delayed, Quantized, Rule, ScaledFormat};
use lpgen_golden::{AluOp, Format};
pub use recipe::{Recipe, MXFP4, RHT, SR};

use crate::machine::{Accumulate, Machine, Mat, View, Word};
use crate::net::Net;
use crate::placement::Place;
use crate::TrainError;

mod block;
mod fdpa;
mod recipe;

/// The recipe of each stage with products (`None`: that stage's products are not scaled).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Scaling {
    pub f: Option<Recipe>,
    pub b: Option<Recipe>,
    pub g: Option<Recipe>,
}

/// The syntax, for refusals and help.
pub const SYNTAX: &str = "none, or comma-separated STAGES=RULE groups (STAGES from F B G, or \
                          all; RULE current or delayed[:H[:MARGIN]], each optionally /ELEM (the operands' format, \
                          the stage's by default), or a block recipe nvfp4, mxfp4 or \
                          scaled/ELEM/bK/SCALE[/t], for G optionally +rht16 and +sr), e.g. \
                          F=delayed,BG=delayed:16, F=delayed/fp8:e4m3,BG=delayed/fp8:e5m2 or \
                          FB=nvfp4,G=nvfp4+rht16+sr";

impl Scaling {
    /// `none`, or groups `STAGES=RULE` separated by commas: stage letters F, B, G (the
    /// stages with matrix products; `all` for the three), each given once.
    pub fn parse(s: &str) -> Result<Scaling, TrainError> {
        let bad = |why: &str| TrainError(format!("--scaling {s:?}: {why} (expected {SYNTAX})"));
        let mut out = Scaling::default();
        if s == "none" {
            return Ok(out);
        }
        for group in s.split(',') {
            let (letters, rule) = group
                .split_once('=')
                .ok_or_else(|| bad(&format!("group {group:?} has no '='")))?;
            let rule = Recipe::parse(rule).map_err(|e| bad(&e))?;
            let letters = if letters == "all" { "FBG" } else { letters };
            if letters.is_empty() {
                return Err(bad(&format!("group {group:?} names no stage")));
            }
            for ch in letters.chars() {
                let slot = match ch {
                    'F' => &mut out.f,
                    'B' => &mut out.b,
                    'G' => &mut out.g,
                    'O' | 'L' => {
                        return Err(bad(&format!(
                            "stage '{ch}' has no matrix products to scale (F, B and G have)"
                        )))
                    }
                    _ => return Err(bad(&format!("unknown stage {ch:?}"))),
                };
                if rule.rht() && ch != 'G' {
                    return Err(bad(&format!(
                        "+{RHT} transforms the weight gradients' (G) operands, not stage '{ch}''s"
                    )));
                }
                if rule.sr() && ch != 'G' {
                    return Err(bad(&format!(
                        "+{SR} rounds the weight gradients' (G) operands, not stage '{ch}''s"
                    )));
                }
                if slot.replace(rule).is_some() {
                    return Err(bad(&format!("stage '{ch}' given twice")));
                }
            }
        }
        Ok(out)
    }

    pub fn is_none(&self) -> bool {
        *self == Scaling::default()
    }

    /// The recipe of the products at `place` (forward, backward, gradient).
    pub fn get(&self, place: Place) -> Option<Recipe> {
        match place {
            Place::Forward => self.f,
            Place::Backward => self.b,
            Place::Gradient => self.g,
            Place::Sums | Place::Softmax | Place::Update | Place::Attention | Place::Norm => None,
        }
    }

    /// `F=delayed:1024:0 B=… G=…` (the stages with a rule), for fingerprints.
    pub fn describe(&self) -> String {
        [("F", self.f), ("B", self.b), ("G", self.g)]
            .iter()
            .filter_map(|(n, r)| r.map(|r| format!("{n}={r}")))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// Refuses a stage format the golden per-tensor scaling does not take, or a block recipe
    /// a stage whose products are not converted from binary32, in one line.
    pub fn check(&self, stages: &crate::config::Stages) -> Result<(), TrainError> {
        for (n, r, f) in [
            ("F", self.f, stages.f),
            ("B", self.b, stages.b),
            ("G", self.g, stages.g),
        ] {
            let wide = match r {
                None => continue,
                Some(r @ Recipe::Tensor { .. }) => tensor_wide(f, r.element(f)),
                Some(Recipe::Block { .. }) => wide_format(f),
            };
            let wide = wide.map_err(|e| TrainError(format!("--scaling {n}: {}", e.0)))?;
            if matches!(r, Some(Recipe::Block { .. })) && wide != Format::F32(lpgen_golden::F32) {
                return Err(TrainError(format!(
                    "--scaling {n}: block recipes are built for float stages ({f}'s products \
                     would be rounded twice)"
                )));
            }
        }
        Ok(())
    }
}

impl Scaling {
    /// On `--backend rtl` the machine's conversions run on the vector lanes, which convert
    /// within one family (the golden [`lpgen_golden::Alu::new`] says which): refuses, in one
    /// line, a stage whose scaled products would convert its words into another family's
    /// format or back (a float stage's per-tensor products into binary32, a block product's
    /// f32 results into the stage). Posit stages scale within their family (posit:32:2).
    pub fn check_lanes(&self, stages: &crate::config::Stages) -> Result<(), TrainError> {
        let f32_format = Format::F32(lpgen_golden::F32);
        for (n, r, f) in [
            ("F", self.f, stages.f),
            ("B", self.b, stages.b),
            ("G", self.g, stages.g),
        ] {
            let pairs = match r {
                None => continue,
                Some(r @ Recipe::Tensor { .. }) => {
                    let wide = wide_format(f).map_err(te)?;
                    vec![(r.element(f), wide), (wide, f)]
                }
                Some(Recipe::Block { .. }) => vec![(f32_format, f)],
            };
            for (from, to) in pairs {
                if from.entry().lanes {
                    lpgen_golden::Alu::new(from, to).map_err(|e| {
                        TrainError(format!(
                            "--scaling {n} on --backend rtl: scaled {f} products convert \
                             {from} to {to}, and {}: run them on --backend golden",
                            e.0
                        ))
                    })?;
                }
            }
        }
        Ok(())
    }
}

/// The format a scaled product of stage format `f` accumulates in: its family's
/// (`TrainFamily::scaled_wide_format`: binary32 for a float stage, posit:32:2 for a posit
/// stage), or a one-line refusal.
pub fn wide_format(f: Format) -> Result<Format, lpgen_golden::FormatError> {
    match crate::family::train_family(&f).scaled_wide_format() {
        Some(s) => s.parse(),
        None => Err(lpgen_golden::FormatError(format!(
            "scaled products of {f}: built for float and posit stages"
        ))),
    }
}

/// The format a per-tensor scaled product of stage `stage` accumulates in, its operands
/// quantized into `element`: [`wide_format`] of the stage, which must be the element's too
/// (their words convert within one family), or the one-line refusal.
fn tensor_wide(stage: Format, element: Format) -> Result<Format, lpgen_golden::FormatError> {
    ScaledFormat::per_tensor(element)?;
    let wide = wide_format(stage)?;
    if wide_format(element)? != wide {
        return Err(lpgen_golden::FormatError(format!(
            "{stage} products with operands in {element}: another family's format (a {stage} \
             stage's scaled products sum in {wide})"
        )));
    }
    Ok(wide)
}

/// The format a per-tensor scaled product's element words are summed in by `acc`: the wide
/// format, or for a mode binary32 does not offer (the exact sum: no accumulator of its own)
/// the float family's binary32, whose words and rounding are f32's ([`lpgen_golden::F32::as_float`]):
/// Σ a·b exactly, rounded once to binary32.
fn sum_format(wide: Format, acc: Accumulate) -> Format {
    if wide.entry().offers(acc.mode()) {
        wide
    } else {
        wide.canonical()
    }
}

/// One operand's key: (layer with weights, stage letter, operand 0 or 1).
type Key = (usize, char, u8);

/// The delayed rules' amax histories of a run, one per product operand.
#[derive(Clone, Debug, Default)]
pub struct Scales {
    delayed: BTreeMap<Key, Delayed>,
    /// `+sr`: the stochastic rounding stream of the current gradients pass, started from the
    /// pass's noise stream (`--seed`, epoch and step) by [`Net::begin_rounding`]; not saved
    /// (each pass starts its own).
    pub(crate) sr: Option<lpgen_golden::rounding::Rounder>,
}

impl PartialEq for Scales {
    fn eq(&self, o: &Scales) -> bool {
        self.save() == o.save()
    }
}

fn stage_letter(place: Place) -> char {
    match place {
        Place::Forward => 'F',
        Place::Backward => 'B',
        Place::Gradient => 'G',
        Place::Sums | Place::Softmax | Place::Update | Place::Attention | Place::Norm => '?',
    }
}

impl Scales {
    /// The histories as one checkpoint line's fields: the count, then per operand
    /// `layer stage operand word n amax…` (hex words, f64 bits).
    pub fn save(&self) -> String {
        let mut out = format!("{}", self.delayed.len());
        for (&(at, st, op), d) in &self.delayed {
            let h: Vec<String> = d.history().map(|a| format!("{:x}", a.to_bits())).collect();
            out.push_str(&format!(
                " {at} {st} {op} {:x} {} {}",
                d.scale_word(),
                h.len(),
                h.join(" ")
            ));
            if h.is_empty() {
                out.pop();
            }
        }
        out
    }

    /// Every operand's key (layer, stage letter, operand) and the length of its history.
    pub fn histories(&self) -> Vec<((usize, char, u8), usize)> {
        self.delayed
            .iter()
            .map(|(&k, d)| (k, d.history().count()))
            .collect()
    }

    /// The histories of a saved line, under the run's `scaling` and `stages`.
    pub fn restore(
        line: &str,
        scaling: &Scaling,
        stages: &crate::config::Stages,
    ) -> Result<Scales, TrainError> {
        let bad = |why: &str| TrainError(format!("scales line: {why}"));
        let mut it = line.split(' ');
        let mut next = || it.next().ok_or_else(|| bad("short"));
        let n: usize = next()?.parse().map_err(|_| bad("bad count"))?;
        let mut delayed = BTreeMap::new();
        for _ in 0..n {
            let at: usize = next()?.parse().map_err(|_| bad("bad layer"))?;
            let (place, f) = match next()? {
                "F" => (Place::Forward, stages.f),
                "B" => (Place::Backward, stages.b),
                "G" => (Place::Gradient, stages.g),
                s => return Err(bad(&format!("unknown stage {s:?}"))),
            };
            let op: u8 = match next()? {
                "0" => 0,
                "1" => 1,
                s => return Err(bad(&format!("operand {s:?}"))),
            };
            let word = u64::from_str_radix(next()?, 16).map_err(|_| bad("bad scale word"))?;
            let len: usize = next()?.parse().map_err(|_| bad("bad history length"))?;
            let mut h = Vec::with_capacity(len.min(1 << 20));
            for _ in 0..len {
                let bits = u64::from_str_radix(next()?, 16).map_err(|_| bad("bad amax"))?;
                h.push(f64::from_bits(bits));
            }
            let (rule, f) = match scaling.get(place) {
                Some(r @ Recipe::Tensor { rule, .. }) => (rule, r.element(f)),
                _ => {
                    return Err(bad(&format!(
                        "stage {place:?} has no per-tensor rule in this run"
                    )))
                }
            };
            let sf = ScaledFormat::per_tensor(f).map_err(|e| bad(&e.0))?;
            let d = Delayed::resume(sf, rule, &h, word).map_err(|e| bad(&e.0))?;
            if delayed.insert((at, stage_letter(place), op), d).is_some() {
                return Err(bad("an operand given twice"));
            }
        }
        if it.next().is_some() {
            return Err(bad("trailing fields"));
        }
        Ok(Scales { delayed, sr: None })
    }
}

/// An operand of a scaled product: its words' matrix, whether the product reads it
/// transposed, and the format of its words.
pub type Operand<'a, W> = (View<'a, W>, Format);

/// A tensor's shape.
struct Shape {
    rows: usize,
    cols: usize,
}

/// The stage format of the products at `place`.
pub(crate) fn stage_of(place: Place, stages: &crate::config::Stages) -> Result<Format, TrainError> {
    match place {
        Place::Forward => Ok(stages.f),
        Place::Backward => Ok(stages.b),
        Place::Gradient => Ok(stages.g),
        Place::Sums | Place::Softmax | Place::Update | Place::Attention | Place::Norm => Err(
            TrainError(format!("{place:?} has no scaled product (a trainer bug)")),
        ),
    }
}

pub(crate) fn te(e: lpgen_golden::FormatError) -> TrainError {
    TrainError(e.0)
}

impl<M: Machine> Net<'_, M> {
    /// The format the operands of the scaled products at `place` are quantized into: the
    /// recipe's element format, or the stage's.
    fn element_at(&self, place: Place) -> Result<Format, TrainError> {
        let stage = stage_of(place, &self.cfg.stages)?;
        Ok(self
            .cfg
            .scaling
            .get(place)
            .map_or(stage, |r| r.element(stage)))
    }

    /// Operand `op` of the product at `place` of layer `at` (the words of `m`, of format
    /// `from`) quantized by `rule` into the element format ([`Net::element_at`]): the golden
    /// per-tensor scaling.
    /// A delayed rule uses the scale as it stands and, in `training`, records the amax.
    pub(crate) fn quantize_operand(
        &mut self,
        (place, at, op): (Place, usize, u8),
        rule: Rule,
        (m, from): (&Mat<M::Word>, Format),
        training: bool,
    ) -> Result<Quantized, TrainError> {
        let element = self.element_at(place)?;
        let sf = ScaledFormat::per_tensor(element).map_err(te)?;
        let mut x: Vec<f64> = m.data.iter().map(|w| w.value(from)).collect();
        // A NaN or infinity (from an overflow elsewhere in the stage) takes no part in the
        // amax and becomes the element format's word of itself, as an unscaled product's
        // operand would.
        let odd: Vec<(usize, f64)> = x
            .iter()
            .enumerate()
            .filter(|(_, v)| !v.is_finite())
            .map(|(i, &v)| (i, v))
            .collect();
        for &(i, _) in &odd {
            x[i] = 0.0;
        }
        let mut q =
            self.quantize_values((place, at, op), rule, sf, (&x, m.rows, m.cols), training)?;
        for (i, v) in odd {
            q.codes[i] = element.calc().from_f64(v);
        }
        Ok(q)
    }

    /// [`Net::quantize_operand`] of finite values `x` (an R × K tensor).
    fn quantize_values(
        &mut self,
        (place, at, op): (Place, usize, u8),
        rule: Rule,
        sf: ScaledFormat,
        (x, rows, cols): (&[f64], usize, usize),
        training: bool,
    ) -> Result<Quantized, TrainError> {
        let m = Shape { rows, cols };
        match rule {
            Rule::Current => sf.quantize(x, m.rows, m.cols, None).map_err(te),
            Rule::Delayed { .. } => {
                let scales = self.scales.as_deref_mut().ok_or_else(|| {
                    TrainError(
                        "a delayed-scaled product without its histories (a trainer bug)".into(),
                    )
                })?;
                let key = (at, stage_letter(place), op);
                if !training {
                    // The scale as it stands (a rule's first before any step), nothing kept.
                    let word = match scales.delayed.get(&key) {
                        Some(d) => d.scale_word(),
                        None => Delayed::new(sf, rule).map_err(te)?.scale_word(),
                    };
                    return sf.quantize_with(x, m.rows, m.cols, word).map_err(te);
                }
                let d = match scales.delayed.entry(key) {
                    std::collections::btree_map::Entry::Occupied(e) => e.into_mut(),
                    std::collections::btree_map::Entry::Vacant(e) => {
                        e.insert(Delayed::new(sf, rule).map_err(te)?)
                    }
                };
                d.quantize(x, m.rows, m.cols).map_err(te)
            }
        }
    }

    /// `+sr` in G: starts this gradients pass's stochastic rounding stream (the golden
    /// `stochastic:32` rounder) from one draw of the pass's `noise` (`--seed`, epoch and step:
    /// a resumed run draws the same). Without `+sr` it draws nothing, so other runs' noise is
    /// as before.
    pub(crate) fn begin_rounding(&mut self, noise: &mut rand_pcg::Pcg64) {
        use lpgen_golden::rounding::{Rounder, Rounding, MAX_RANDOM_BITS};
        use rand::RngCore;
        if !self.cfg.scaling.g.is_some_and(|r| r.sr()) {
            return;
        }
        if let Some(s) = self.scales.as_deref_mut() {
            let seed = noise.next_u64();
            s.sr = Some(Rounder::new(Rounding::Stochastic(MAX_RANDOM_BITS), seed));
        }
    }

    /// C = A·B of the products at `place` of layer `at`, scaled by the stage's recipe:
    /// per tensor (module doc; `training`: the delayed histories record the operands'
    /// amaxes), or in blocks ([`block`]).
    pub(crate) fn scaled_product(
        &mut self,
        (place, at, recipe): (Place, usize, Recipe),
        a: Operand<'_, M::Word>,
        b: Operand<'_, M::Word>,
        training: bool,
    ) -> Result<Mat<M::Word>, TrainError> {
        match recipe {
            Recipe::Tensor { rule, .. } => self.tensor_product((place, at, rule), a, b, training),
            Recipe::Block { format, rht, sr } => self.block_product(place, (format, rht, sr), a, b),
        }
    }

    /// C = A·B scaled per tensor by `rule` (module doc).
    fn tensor_product(
        &mut self,
        (place, at, rule): (Place, usize, Rule),
        a: Operand<'_, M::Word>,
        b: Operand<'_, M::Word>,
        training: bool,
    ) -> Result<Mat<M::Word>, TrainError> {
        let stage = stage_of(place, &self.cfg.stages)?;
        let element = self.element_at(place)?;
        let sf = ScaledFormat::per_tensor(element).map_err(te)?;
        let wide = wide_format(stage).map_err(te)?;
        let mut quantized = vec![];
        for (op, (view, from)) in [(0u8, a), (1, b)] {
            let q = self.quantize_operand((place, at, op), rule, (view.mat, from), training)?;
            let codes = Mat {
                rows: q.rows,
                cols: q.cols,
                data: q.codes.iter().map(|&c| M::Word::from_bits(c)).collect(),
            };
            let s = sf.scale.value(q.scales[0]);
            quantized.push((codes, view.transposed, s));
        }
        let (qa, qb) = (&quantized[0], &quantized[1]);
        let c = match self.cfg.accumulation(place, wide) {
            // A GPU's FP8 GEMM: the matrix unit's chunks on the element words themselves.
            Accumulate::Fdpa(mode) => {
                let va = View {
                    mat: &qa.0,
                    transposed: qa.1,
                };
                let vb = View {
                    mat: &qb.0,
                    transposed: qb.1,
                };
                fdpa::product(element, mode, (va, vb), wide)?
            }
            acc => {
                let sum = sum_format(wide, acc);
                let wa = self.convert(element, sum, &qa.0)?.into_owned();
                let wb = self.convert(element, sum, &qb.0)?.into_owned();
                self.m.matmul(
                    sum,
                    acc,
                    View {
                        mat: &wa,
                        transposed: qa.1,
                    },
                    View {
                        mat: &wb,
                        transposed: qb.1,
                    },
                )?
            }
        };
        let mut data = c.data;
        for (_, _, s) in &quantized {
            let k = self.splat(wide, *s, data.len());
            data = self.m.lanes(wide, AluOp::Mul, &data, &k)?;
        }
        Ok(Mat {
            rows: c.rows,
            cols: c.cols,
            data: self.m.convert(wide, stage, &data)?,
        })
    }
}

#[cfg(test)]
mod tests;
