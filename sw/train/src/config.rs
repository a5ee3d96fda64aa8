//! What a training run is: the formats of its stages, where Kahan sums and quires are used,
//! the network and the optimiser (seed 000 ch. 4, seed 004 ch. 4).

use lpgen_golden::mx::MxFormat;
use lpgen_golden::{Format, Rounding};
use rand::SeedableRng;
use rand_pcg::Pcg64;

use crate::arch::Arch;
use crate::compress::Compression;
use crate::machine::Accumulate;
pub use crate::placement::{check_accumulation, kahan_places, AccumulatePlaces, Place};
use crate::storage::StorageConfig;
use crate::TrainError;

/// The formats of the five stages of seed 004 ch. 4: optimizer (master weights, momentum,
/// update), loss (softmax, output error), forward, backward (error propagation), gradient.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stages {
    pub o: Format,
    pub l: Format,
    pub f: Format,
    pub b: Format,
    pub g: Format,
}

impl Stages {
    pub fn all(f: Format) -> Stages {
        Stages {
            o: f,
            l: f,
            f,
            b: f,
            g: f,
        }
    }

    pub fn list(&self) -> [Format; 5] {
        [self.o, self.l, self.f, self.b, self.g]
    }

    /// The one format when every stage has it, else each stage's (`O=posit:16 L=...`).
    pub fn describe(&self) -> String {
        if self.list().iter().all(|f| *f == self.o) {
            return self.o.to_string();
        }
        format!(
            "O={} L={} F={} B={} G={}",
            self.o, self.l, self.f, self.b, self.g
        )
    }
}

/// Parses a seed 004 configuration such as `O16-L12-FBG8q`: groups of stage letters (O, L,
/// F, B, G), each followed by its format, separated by `-`; a final `q` accumulates in
/// quires. A format is a posit width `N` (posit:N, es = 2 as the seed's experiments), a width
/// with `u` (`5u`: posit:5:u, seed 004 §4.4's posits that underflow to 0), or `=` and any
/// format string the golden registry parses (`FBG=posit:6:1:u`, `O=lns:5:6`). Every stage
/// must be given once, and all five in one family (stage conversions run within a family).
/// Returns (stages, quire).
pub fn parse_precision(s: &str) -> Result<(Stages, bool), TrainError> {
    let bad = |why: &str| {
        TrainError(format!(
            "precision {s:?}: {why} (expected e.g. O16-L12-FBG8q or O12-L12-FBG=posit:5:1:u: stage letters O L F B G, a posit width N or Nu or =FORMAT, optional final q)"
        ))
    };
    let (body, quire) = match s.strip_suffix('q') {
        Some(b) => (b, true),
        None => (s, false),
    };
    let mut formats: [Option<Format>; 5] = [None; 5];
    for group in body.split('-') {
        let split = group
            .find(|c: char| c.is_ascii_digit() || c == '=')
            .ok_or_else(|| bad(&format!("group {group:?} has no format")))?;
        let (letters, spec) = group.split_at(split);
        if letters.is_empty() {
            return Err(bad(&format!("group {group:?} names no stage")));
        }
        let text = match spec.strip_prefix('=') {
            Some(f) => f.to_string(),
            None => {
                let (digits, underflow) = match spec.strip_suffix('u') {
                    Some(d) => (d, ":u"),
                    None => (spec, ""),
                };
                let n: u32 = digits
                    .parse()
                    .map_err(|_| bad(&format!("{spec:?} is not a width")))?;
                format!("posit:{n}{underflow}")
            }
        };
        let f: Format = text
            .parse()
            .map_err(|e: lpgen_golden::FormatError| bad(&e.to_string()))?;
        for ch in letters.chars() {
            let i = "OLFBG"
                .find(ch)
                .ok_or_else(|| bad(&format!("unknown stage {ch:?}")))?;
            if formats[i].replace(f).is_some() {
                return Err(bad(&format!("stage {ch:?} given twice")));
            }
        }
    }
    let get =
        |i: usize| formats[i].ok_or_else(|| bad(&format!("stage '{}' missing", &"OLFBG"[i..=i])));
    let stages = Stages {
        o: get(0)?,
        l: get(1)?,
        f: get(2)?,
        b: get(3)?,
        g: get(4)?,
    };
    if let Some(other) = stages.list().iter().find(|f| !f.same_family(&stages.o)) {
        return Err(bad(&format!(
            "{other} is not of {}'s family (stage conversions run within a family)",
            stages.o
        )));
    }
    Ok((stages, quire))
}

/// Where Kahan summation is used (seed 000 §3.3: matrix multiply, tensor sums, softmax,
/// weight updates with a compensation per weight).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct KahanPlaces {
    pub matmul: bool,
    pub sums: bool,
    pub softmax: bool,
    pub update: bool,
}

impl KahanPlaces {
    pub fn all() -> KahanPlaces {
        KahanPlaces {
            matmul: true,
            sums: true,
            softmax: true,
            update: true,
        }
    }

    /// `all`, `none`, or a comma list of `matmul`, `sums`, `softmax`, `update`.
    pub fn parse(s: &str) -> Result<KahanPlaces, TrainError> {
        match s {
            "all" => return Ok(KahanPlaces::all()),
            "none" => return Ok(KahanPlaces::default()),
            _ => {}
        }
        let mut k = KahanPlaces::default();
        for part in s.split(',') {
            match part {
                "matmul" => k.matmul = true,
                "sums" => k.sums = true,
                "softmax" => k.softmax = true,
                "update" => k.update = true,
                _ => {
                    return Err(TrainError(format!(
                        "--kahan {s:?}: unknown place {part:?} (use all, none, or a list of matmul,sums,softmax,update)"
                    )))
                }
            }
        }
        Ok(k)
    }

    pub fn describe(&self) -> String {
        let mut v = vec![];
        for (on, name) in [
            (self.matmul, "matmul"),
            (self.sums, "sums"),
            (self.softmax, "softmax"),
            (self.update, "update"),
        ] {
            if on {
                v.push(name);
            }
        }
        if v.is_empty() {
            "none".into()
        } else {
            v.join(",")
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Activation {
    Sigmoid,
    Relu,
}

/// The learning-rate schedule.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Schedule {
    /// The same rate every epoch.
    Fixed,
    /// Seed 000 §4.2.2: fixed for `hold` epochs, then halved every epoch once the relative
    /// improvement of the test cross-entropy falls below `threshold`.
    Halving { hold: u32, threshold: f64 },
    /// Seed 004's PositNN examples: halved after every `every` epochs.
    Step { every: u32 },
    /// Issue 46: per update, a linear warm-up over the first `warmup` updates, then a cosine
    /// decay to `min` at `total` updates (`--lr-schedule cosine`; [`Schedule::rate`]).
    Cosine { warmup: u64, total: u64, min: f64 },
}

impl Schedule {
    /// The rate of update `i` (0-based, counted over the whole run) for the base rate `lr`,
    /// in f64 on the host (the machine sees it rounded to O): the base rate itself, or for
    /// [`Schedule::Cosine`] lr·(i + 1)/warmup while i < warmup, then
    /// min + (lr − min)·(1 + cos(π·(i − warmup)/(total − warmup)))/2.
    pub fn rate(&self, lr: f64, i: u64) -> f64 {
        match *self {
            Schedule::Fixed | Schedule::Halving { .. } | Schedule::Step { .. } => lr,
            Schedule::Cosine { warmup, total, min } => {
                if i < warmup {
                    return lr * (i + 1) as f64 / warmup as f64;
                }
                let span = total.saturating_sub(warmup).max(1) as f64;
                let p = ((i - warmup) as f64 / span).min(1.0);
                min + (lr - min) * (1.0 + (std::f64::consts::PI * p).cos()) / 2.0
            }
        }
    }
}

/// The rule that turns a layer's gradients into a change of its parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Optimizer {
    /// Gradient descent with momentum (`--momentum`).
    Sgd,
    /// Duchi et al. (seed 001 §4): the change is −lr·g / (√Σg² + ε), the normalization done
    /// where `at` says.
    AdaGrad { eps: f64, at: AdaGradAt },
    /// Tieleman and Hinton (seed 003): −lr·g / (√r + ε) with r ← ρ·r + (1 − ρ)·g².
    RmsProp { decay: f64, eps: f64 },
    /// Kingma and Ba (issue 46), with bias correction: m ← β1·m + (1 − β1)·g,
    /// v ← β2·v + (1 − β2)·g², the change −lr·(m/(1 − β1^t)) / (√(v/(1 − β2^t)) + ε).
    /// `decoupled` (AdamW, Loshchilov and Hutter): the weight decay is −lr·λ·w added to the
    /// change; else (Adam) λ·w is added to the gradient (L2), as PyTorch's `weight_decay`.
    /// The operations and their order: `adam.rs`.
    Adam {
        beta1: f64,
        beta2: f64,
        eps: f64,
        weight_decay: f64,
        decoupled: bool,
    },
}

/// Where AdaGrad normalizes the gradient (seed 001 §4, Table 3). One worker: `local` and
/// `aggregate` are the same, the minibatch's gradient normalized before momentum.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AdaGradAt {
    /// Each worker normalizes its own sub-gradient, with its own state, before the exchange.
    Local,
    /// The owner of a stripe normalizes the aggregated gradient, between the two exchanges
    /// (the paper's choice: "AdaGrad is best applied here").
    Aggregate,
    /// After momentum smoothing: s ← μ·s + (1 − μ)·g, then s normalized.
    Momentum,
}

impl AdaGradAt {
    pub fn parse(s: &str) -> Result<AdaGradAt, TrainError> {
        match s {
            "local" => Ok(AdaGradAt::Local),
            "aggregate" => Ok(AdaGradAt::Aggregate),
            "momentum" => Ok(AdaGradAt::Momentum),
            _ => Err(TrainError(format!(
                "unknown AdaGrad place {s:?}: expected local, aggregate or momentum"
            ))),
        }
    }
}

impl Optimizer {
    /// Whether the optimizer keeps an accumulated squared gradient per parameter.
    pub fn is_adaptive(self) -> bool {
        !matches!(self, Optimizer::Sgd)
    }

    /// `sgd`, `adagrad` (ε = 1e-8), `rmsprop` (ρ = 0.9, ε = 1e-8), `adam` (β1 = 0.9,
    /// β2 = 0.999, ε = 1e-8, λ = 0) or `adamw` (the same with λ = 0.01, PyTorch's defaults).
    pub fn parse(s: &str) -> Result<Optimizer, TrainError> {
        match s {
            "adam" | "adamw" => Ok(Optimizer::Adam {
                beta1: 0.9,
                beta2: 0.999,
                eps: 1e-8,
                weight_decay: if s == "adamw" { 0.01 } else { 0.0 },
                decoupled: s == "adamw",
            }),
            "sgd" => Ok(Optimizer::Sgd),
            "adagrad" => Ok(Optimizer::AdaGrad {
                eps: 1e-8,
                at: AdaGradAt::Aggregate,
            }),
            "rmsprop" => Ok(Optimizer::RmsProp {
                decay: 0.9,
                eps: 1e-8,
            }),
            _ => Err(TrainError(format!(
                "unknown optimizer {s:?}: expected sgd, adagrad, rmsprop, adam or adamw"
            ))),
        }
    }
}

/// How pixels become inputs (the host's data loading; in f64, then rounded into F).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Normalize {
    /// Each pixel to zero mean and unit variance over the training set (seed 000 §4.2.1).
    PerPixel,
    /// One mean and deviation over all pixels (seed 004: torch's Normalize(0.2860, 0.3300)
    /// for Fashion-MNIST, here computed from the training set).
    Global,
}

/// Everything that determines a run (and must match when resuming).
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    pub stages: Stages,
    /// Posit quires / exact accumulation in matrix products and sums.
    pub quire: bool,
    pub kahan: KahanPlaces,
    /// `--accumulate`: places whose accumulation is chosen, overriding `quire` and `kahan`.
    pub accumulate: AccumulatePlaces,
    /// LNS only: keep this many fraction bits after every operation (seed 000 §4.5).
    pub keep_bits: Option<u32>,
    /// The network.
    pub arch: Arch,
    pub optimizer: Optimizer,
    /// Seed 003's 8-bit approximations of gradients and activations.
    pub compression: Compression,
    /// Seed 002's low-precision storage (`--format dfix:P:U`): f32 arithmetic, every value
    /// rounded onto its group's (dynamic) fixed-point grid as it is stored.
    pub storage: Option<StorageConfig>,
    /// `--format mx:ELEM[:bK]` (issue 33): f32 stages, every product of a layer's weighted sums
    /// and gradients on operands quantized in MX blocks along its reduction dimension
    /// (`Machine::mx_matmul`); `None` otherwise.
    pub mx: Option<MxFormat>,
    /// Seed 002 §8: after each update, every weight vector (a row of W) longer than this is
    /// scaled back to this length.
    pub max_norm: Option<f64>,
    pub batch: usize,
    pub lr: f64,
    pub momentum: f64,
    /// Momentum applies from this epoch on (seed 000: "0.5 after epoch 1" is 2).
    pub momentum_from: u32,
    pub schedule: Schedule,
    pub normalize: Normalize,
    pub seed: u64,
    /// `--rounding`: nearest, or stochastic rounding where values are stored (`rounding.rs`;
    /// its stream is seeded by `seed`).
    pub rounding: Rounding,
    /// `--scaling`: per-tensor scaled products of the F, B and G stages (issue 50,
    /// `scaling.rs`); none by default.
    pub scaling: crate::scaling::Scaling,
}

impl Config {
    /// A run of `arch` with `stages`, everything else the plainest: SGD without momentum,
    /// batch 20, lr 0.1, seed 1, no quires, Kahan sums, `--accumulate`, storage, MX,
    /// compression, norm clipping or scaling, global normalization, round to nearest. Tests
    /// and examples name only what they change: `Config { batch: 3, ..Config::new(arch,
    /// stages) }`, so that a new field is given its default here once.
    pub fn new(arch: Arch, stages: Stages) -> Config {
        Config {
            stages,
            quire: false,
            kahan: KahanPlaces::default(),
            accumulate: AccumulatePlaces::default(),
            keep_bits: None,
            arch,
            optimizer: Optimizer::Sgd,
            compression: Compression::default(),
            storage: None,
            mx: None,
            max_norm: None,
            batch: 20,
            lr: 0.1,
            momentum: 0.0,
            momentum_from: 1,
            schedule: Schedule::Fixed,
            normalize: Normalize::Global,
            seed: 1,
            rounding: Rounding::Nearest,
            scaling: crate::scaling::Scaling::default(),
        }
    }

    /// A stable one-line description; a checkpoint stores it and `--resume` compares it.
    pub fn fingerprint(&self) -> String {
        let s = self.stages;
        format!(
            "O={} L={} F={} B={} G={} quire={} kahan={} keep={:?} net=[{}] optimizer={:?} compress={:?} batch={} lr={} momentum={} from={} schedule={:?} normalize={:?} seed={}",
            s.o, s.l, s.f, s.b, s.g, self.quire, self.kahan.describe(), self.keep_bits,
            self.arch.describe(), self.optimizer, self.compression, self.batch, self.lr, self.momentum,
            self.momentum_from, self.schedule, self.normalize, self.seed
        ) + &self
            .storage
            .map_or(String::new(), |s| format!(" storage=[{}]", s.describe()))
            + &self.mx.map_or(String::new(), |m| format!(" mx=[{m}]"))
            + &self
                .max_norm
                .map_or(String::new(), |c| format!(" max_norm={c}"))
            + &match self.fingerprint_accumulate().describe() {
                d if d.is_empty() => String::new(),
                d => format!(" accumulate={d}"),
            }
            + &match self.rounding {
                Rounding::Nearest => String::new(),
                r => format!(" rounding={r}"),
            }
            + &match self.scaling.is_none() {
                true => String::new(),
                false => format!(" scaling=[{}]", self.scaling.describe()),
            }
    }

    /// The placements a fingerprint names: a network without attention and layer norms
    /// leaves their places out.
    fn fingerprint_accumulate(&self) -> AccumulatePlaces {
        match self.arch.gpt {
            Some(_) => self.accumulate,
            None => self.accumulate.without(&Place::TRANSFORMER),
        }
    }

    /// The accumulation at `place` in format `f`: `--accumulate`'s where chosen, else the
    /// family's rule from `--quire` and `--kahan`.
    pub fn accumulation(&self, place: Place, f: Format) -> Accumulate {
        let kahan = match place {
            Place::Forward | Place::Backward | Place::Gradient => self.kahan.matmul,
            Place::Sums => self.kahan.sums,
            Place::Softmax | Place::Attention => self.kahan.softmax,
            Place::Update => self.kahan.update,
            Place::Norm => self.kahan.sums,
        };
        self.accumulate
            .get(place)
            .unwrap_or_else(|| crate::family::train_family(&f).accumulation(self.quire, kahan))
    }

    /// Whether the weight update carries a Kahan compensation per weight.
    pub fn kahan_update(&self) -> bool {
        match self.accumulate.get(Place::Update) {
            Some(a) => a == Accumulate::Kahan,
            None => self.kahan.update,
        }
    }

    /// The run's random stream for `parts` (e.g. an epoch, or an epoch and a step): each
    /// part is mixed into the seed, so that streams of different parts are unrelated. Every
    /// random choice of a run (shuffles, dropout masks) draws from a stream named here.
    pub fn stream(&self, parts: &[u64]) -> Pcg64 {
        let mut state = self.seed;
        for (i, &part) in parts.iter().enumerate() {
            if i > 0 {
                state = lpgen_golden::rng::mix(state);
            }
            state ^= part.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
        Pcg64::seed_from_u64(state)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn precision_strings_parse_as_seed_004_names_them() {
        let (s, q) = parse_precision("O16-L12-FBG8q").unwrap();
        assert!(q);
        let p = |n: u32| -> Format { format!("posit:{n}").parse().unwrap() };
        assert_eq!((s.o, s.l, s.f, s.b, s.g), (p(16), p(12), p(8), p(8), p(8)));
        let (s, q) = parse_precision("O12-L9-FBG8").unwrap();
        assert!(!q);
        assert_eq!(s.l, p(9));
        for (bad, why) in [
            ("O16-L12-FB8q", "stage 'G' missing"),
            ("O16-O12-LFBG8", "given twice"),
            ("X16-LFBG8", "unknown stage"),
            ("O-LFBG8", "no format"),
            ("O2-LFBG8", "3..=32"),
            ("16-OLFBG8", "names no stage"),
        ] {
            let e = parse_precision(bad).unwrap_err().0;
            assert!(e.contains(why) && !e.contains('\n'), "{bad}: {e}");
        }
    }

    /// Seed 004 Fig. 4.7's posits that underflow (`Nu`), and any registry format after `=`:
    /// each stage gets the format the registry parses from the string; bad ones are refused
    /// in one line naming the problem.
    #[test]
    fn precision_stages_take_underflow_posits_and_any_registry_format() {
        let p = |t: &str| -> Format { t.parse().unwrap() };
        let (s, q) = parse_precision("O12-L12-FBG5uq").unwrap();
        assert!(q);
        assert_eq!(
            (s.o, s.f, s.b, s.g),
            (
                p("posit:12"),
                p("posit:5:u"),
                p("posit:5:u"),
                p("posit:5:u")
            )
        );
        // posit:5:u is es = 2 with underflow: its 0 and minpos differ from posit:5's rounding
        // of minpos/32 (Posit Standard es = 2: minpos = 2^-12; seed 004 eq. 4.7's threshold
        // 2^-16 rounds to 0 with underflow, to minpos without).
        let tiny = (-16f64).exp2();
        assert_eq!(s.f.calc().from_f64(tiny), 0);
        assert_eq!(p("posit:5").calc().from_f64(tiny), 1);
        let (s, q) = parse_precision("O=posit:12:1-L12-FBG=posit:6:1:u").unwrap();
        assert!(!q);
        assert_eq!(
            (s.o, s.l, s.f),
            (p("posit:12:1"), p("posit:12"), p("posit:6:1:u"))
        );
        let (s, _) = parse_precision("OL=lns:8:10-FBG=lns:5:6").unwrap();
        assert_eq!((s.o, s.g), (p("lns:8:10"), p("lns:5:6")));
        let (s, _) = parse_precision("OLFBG=bf16").unwrap();
        assert_eq!(s.b, p("float:8:7"));
        for (bad, why) in [
            ("O12-L12-FBG=posit:6:9:u", "posit:6:9:u"),
            ("O12-L12-FBG=lns:5:6", "not of posit:12's family"),
            ("O12-L12-FBG=", "unknown format"),
            ("O12-L12-FBG5x", "\"5x\" is not a width"),
            (
                "O12-L12-FBG=fix:7:8:u",
                "underflow suffix applies to posits only",
            ),
        ] {
            let e = parse_precision(bad).unwrap_err().0;
            assert!(e.contains(why) && !e.contains('\n'), "{bad}: {e}");
        }
    }

    #[test]
    fn streams_of_different_parts_differ_and_one_part_keeps_the_shuffle_rule() {
        use rand::Rng;
        let mut cfg = crate::net::tests::cfg("f32");
        cfg.seed = 7;
        // The epoch shuffle's rule before streams existed: seed ^ epoch·φ.
        let old = Pcg64::seed_from_u64(7 ^ 3u64.wrapping_mul(0x9e37_79b9_7f4a_7c15)).gen::<u64>();
        assert_eq!(cfg.stream(&[3]).gen::<u64>(), old);
        let a = cfg.stream(&[1, 2]).gen::<u64>();
        assert_ne!(a, cfg.stream(&[2, 1]).gen::<u64>());
        assert_ne!(a, cfg.stream(&[1]).gen::<u64>());
        assert_eq!(a, cfg.stream(&[1, 2]).gen::<u64>());
    }

    /// The cosine schedule: lr/warmup, 2·lr/warmup, … up to lr at the last warm-up update,
    /// then lr at the first decaying one, the midpoint of min and lr halfway, towards min.
    #[test]
    fn the_cosine_schedule_warms_up_then_decays_to_its_minimum() {
        let s = Schedule::Cosine {
            warmup: 4,
            total: 14,
            min: 0.1,
        };
        let r = |i| s.rate(1.0, i);
        assert_eq!([r(0), r(1), r(3)], [0.25, 0.5, 1.0]);
        assert_eq!(r(4), 1.0);
        assert!((r(9) - 0.55).abs() < 1e-12, "{}", r(9));
        assert!(r(13) > 0.1 && r(13) < 0.13, "{}", r(13));
        assert_eq!(r(14), 0.1);
        assert_eq!(r(1000), 0.1);
        assert_eq!(Schedule::Fixed.rate(0.3, 7), 0.3);
        let none = Schedule::Cosine {
            warmup: 0,
            total: 2,
            min: 0.0,
        };
        assert_eq!(none.rate(1.0, 0), 1.0);
    }

    #[test]
    fn kahan_places_parse() {
        assert_eq!(KahanPlaces::parse("all").unwrap(), KahanPlaces::all());
        let k = KahanPlaces::parse("matmul,sums,softmax").unwrap();
        assert!(k.matmul && k.sums && k.softmax && !k.update);
        assert_eq!(k.describe(), "matmul,sums,softmax");
        assert!(KahanPlaces::parse("matmul,bogus").is_err());
    }
}
