//! Where training accumulates, and how: `--kahan`'s defaults, `--accumulate`'s placements
//! (seed 000 Table 4.5) and the checks of both against the stage formats. The rule of a place
//! not chosen is the family's (`TrainFamily::accumulation`), applied by
//! [`Config::accumulation`](crate::config::Config::accumulation).

use lpgen_golden::float::fdpa::Fdpa;
use lpgen_golden::{Format, SumMode};

use crate::config::{KahanPlaces, Stages};
use crate::machine::Accumulate;
use crate::TrainError;

/// A place where training accumulates (seed 000 Table 4.5's placements; the matrix products
/// split by pass, seed 004's F, B and G stages, so that a quire can be given to some of them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// The forward pass's matrix products (dense layers and convolutions).
    Forward,
    /// The backward pass's matrix products (the error at a layer's input).
    Backward,
    /// The weight gradients' matrix products.
    Gradient,
    /// Tensor sums: bias gradients, the max-norm's row lengths, the workers' gradient sums.
    Sums,
    /// The softmax's denominator.
    Softmax,
    /// The weight update w ← w + change (one term per step: naive or Kahan).
    Update,
    /// Transformers: the denominators of attention's softmax and their backward sums.
    Attention,
    /// Transformers: the layer norm's sums (mean and variance, and their backward sums).
    Norm,
}

impl Place {
    pub const ALL: [Place; 8] = [
        Place::Forward,
        Place::Backward,
        Place::Gradient,
        Place::Sums,
        Place::Softmax,
        Place::Update,
        Place::Attention,
        Place::Norm,
    ];
    /// The places only a transformer has (a run of another network leaves them out of its
    /// fingerprint, so that `all=MODE` names the run it always named).
    pub const TRANSFORMER: [Place; 2] = [Place::Attention, Place::Norm];
    /// `matmul` on the command line: every matrix product, the three passes.
    pub const MATMUL: [Place; 3] = [Place::Forward, Place::Backward, Place::Gradient];

    pub fn name(self) -> &'static str {
        match self {
            Place::Forward => "forward",
            Place::Backward => "backward",
            Place::Gradient => "gradient",
            Place::Sums => "sums",
            Place::Softmax => "softmax",
            Place::Update => "update",
            Place::Attention => "attention",
            Place::Norm => "norm",
        }
    }
}

/// `--accumulate`: the accumulation chosen for some places; a place not chosen keeps the
/// family's rule (`TrainFamily::accumulation` from `--quire` and `--kahan`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct AccumulatePlaces {
    pub chosen: [Option<Accumulate>; 8],
}

/// An accumulation's name on the command line.
fn accumulate_name(a: Accumulate) -> String {
    match a {
        Accumulate::Naive => "naive".into(),
        Accumulate::Kahan => "kahan".into(),
        Accumulate::Pairwise => "pairwise".into(),
        Accumulate::Exact => "exact".into(),
        Accumulate::Fdpa(m) => m.to_string(),
    }
}

/// A mode of `--accumulate`: a name, or a GPU matrix unit's `fdpa:…` (the golden parser's
/// one-line refusal where it is no such mode).
fn parse_accumulate(mode: &str) -> Result<Accumulate, String> {
    if mode.starts_with("fdpa") {
        return match mode.parse::<SumMode>() {
            Ok(SumMode::Fdpa(m)) => Ok(Accumulate::Fdpa(m)),
            Ok(other) => Err(format!("{other} is not an fdpa mode")),
            Err(e) => Err(e.0),
        };
    }
    [
        Accumulate::Naive,
        Accumulate::Kahan,
        Accumulate::Pairwise,
        Accumulate::Exact,
    ]
    .into_iter()
    .find(|a| accumulate_name(*a) == mode)
    .ok_or_else(|| format!("unknown mode {mode:?}"))
}

impl AccumulatePlaces {
    /// A comma list of `place=mode`: places matmul (or one pass of it: forward, backward,
    /// gradient), sums, softmax, update, attention, norm (or `all`), modes naive, kahan, pairwise, exact (the
    /// format's exact accumulator: quires for posits).
    pub fn parse(s: &str) -> Result<AccumulatePlaces, TrainError> {
        let bad = |why: String| {
            TrainError(format!(
                "--accumulate {s:?}: {why} (expected e.g. matmul=pairwise,update=kahan: places matmul (or forward, backward, gradient), sums, softmax, update, attention, norm or all; modes naive, kahan, pairwise, exact, and for matmul fdpa:PRESET[:promoteN])"
            ))
        };
        let mut p = AccumulatePlaces::default();
        for item in s.split(',') {
            let (place, mode) = item
                .split_once('=')
                .ok_or_else(|| bad(format!("{item:?} is not place=mode")))?;
            let mode = parse_accumulate(mode).map_err(bad)?;
            let places: &[Place] = match place {
                "all" => &Place::ALL,
                "matmul" => &Place::MATMUL,
                _ => std::slice::from_ref(
                    Place::ALL
                        .iter()
                        .find(|q| q.name() == place)
                        .ok_or_else(|| bad(format!("unknown place {place:?}")))?,
                ),
            };
            for &q in places {
                if matches!(mode, Accumulate::Fdpa(_)) && !Place::MATMUL.contains(&q) {
                    return Err(bad(format!(
                        "{}={}: fdpa is a matrix unit's dot product, for the places matmul, \
                         forward, backward and gradient",
                        q.name(),
                        accumulate_name(mode)
                    )));
                }
                if p.chosen[q as usize].replace(mode).is_some() {
                    return Err(bad(format!("{} given twice", q.name())));
                }
            }
        }
        if let Some(m) = p
            .get(Place::Update)
            .filter(|m| !matches!(m, Accumulate::Naive | Accumulate::Kahan))
        {
            return Err(bad(format!(
                "update={}: the update adds one term per weight and step, so naive or kahan",
                accumulate_name(m)
            )));
        }
        Ok(p)
    }

    pub fn get(&self, place: Place) -> Option<Accumulate> {
        self.chosen[place as usize]
    }

    /// These placements with `places` left to their family's rule.
    pub fn without(&self, places: &[Place]) -> AccumulatePlaces {
        let mut p = *self;
        for &q in places {
            p.chosen[q as usize] = None;
        }
        p
    }

    /// An fdpa mode chosen for some place, if any.
    pub fn fdpa(&self) -> Option<Fdpa> {
        self.chosen.iter().find_map(|a| match a {
            Some(Accumulate::Fdpa(m)) => Some(*m),
            Some(
                Accumulate::Naive | Accumulate::Kahan | Accumulate::Pairwise | Accumulate::Exact,
            )
            | None => None,
        })
    }

    /// `matmul=pairwise,update=kahan` (`matmul` where the three passes have one mode, so a
    /// run that named it keeps its fingerprint); empty when nothing is chosen.
    pub fn describe(&self) -> String {
        let matmul = self.get(Place::Forward);
        let one_matmul = matmul.is_some() && Place::MATMUL.iter().all(|&q| self.get(q) == matmul);
        let named = |q: Place, a: Accumulate| format!("{}={}", q.name(), accumulate_name(a));
        let rest = Place::ALL.iter().filter_map(|&q| {
            let grouped = one_matmul && Place::MATMUL.contains(&q);
            self.get(q).filter(|_| !grouped).map(|a| named(q, a))
        });
        one_matmul
            .then(|| format!("matmul={}", accumulate_name(matmul.unwrap())))
            .into_iter()
            .chain(rest)
            .collect::<Vec<_>>()
            .join(",")
    }
}

/// Checks the accumulation options against the stages: `--quire` must change some stage's
/// accumulation (each family's `TrainFamily` says), `--keep-bits N` needs one LNS format with
/// at least N fraction bits (and rounded accumulations: naive or Kahan), and a mode chosen by
/// `--accumulate` must be one every stage's family offers (its golden registry entry's
/// `modes`). One-line refusals, as `lpgen train` and `lpgen eval` give them.
pub fn check_accumulation(
    stages: &Stages,
    quire: bool,
    keep_bits: Option<u32>,
    accumulate: &AccumulatePlaces,
) -> Result<(), TrainError> {
    for place in Place::ALL {
        let Some(a) = accumulate.get(place) else {
            continue;
        };
        if place == Place::Update {
            continue; // naive or Kahan lane operations, which every family has
        }
        for f in stages.list() {
            let refused = if f.entry().offers(a.mode()) {
                // An fdpa preset lists its operand formats: the golden model's check.
                f.calc().dot(a.mode(), &[], &[]).err()
            } else {
                f.entry().refuse_mode::<()>(a.mode(), &f).err()
            };
            if let Some(e) = refused {
                return Err(TrainError(format!(
                    "--accumulate {}: {e}",
                    accumulate.describe()
                )));
            }
        }
        if keep_bits.is_some() && !matches!(a, Accumulate::Naive | Accumulate::Kahan) {
            return Err(TrainError(format!(
                "--accumulate {}: --keep-bits rounds every step of a naive or Kahan sum",
                accumulate.describe()
            )));
        }
    }
    let changed_by_quire = |f: &Format| {
        let t = crate::family::train_family(f);
        t.accumulation(true, false) != t.accumulation(false, false)
    };
    if quire && !stages.list().iter().any(changed_by_quire) {
        return Err(TrainError(
            "--quire needs posit or float stages (fix and dfix always accumulate exactly)".into(),
        ));
    }
    if let Some(n) = keep_bits {
        match stages.f {
            Format::Lns(l) if n <= l.frac_bits && stages.list().iter().all(|s| *s == stages.f) => {}
            _ => {
                return Err(TrainError(format!(
                    "--keep-bits {n} needs one LNS format with at least {n} fraction bits"
                )))
            }
        }
    }
    Ok(())
}

/// The Kahan places of `--kahan` (`None`: the default of the forward format's family: all for
/// LNS, none otherwise).
pub fn kahan_places(kahan: Option<&str>, stages: &Stages) -> Result<KahanPlaces, TrainError> {
    match kahan {
        Some(k) => KahanPlaces::parse(k),
        None if crate::family::train_family(&stages.f).kahan_by_default() => Ok(KahanPlaces::all()),
        None => Ok(KahanPlaces::default()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `--accumulate`'s list: each place gets the named mode, `all` every place, anything
    /// else (an unknown place or mode, a place twice, a sum over many terms for the update)
    /// is refused in one line.
    #[test]
    fn accumulate_places_parse_and_refuse() {
        let p = AccumulatePlaces::parse("matmul=pairwise,update=kahan").unwrap();
        for q in Place::MATMUL {
            assert_eq!(p.get(q), Some(Accumulate::Pairwise), "{q:?}");
        }
        assert_eq!(p.get(Place::Update), Some(Accumulate::Kahan));
        assert_eq!((p.get(Place::Sums), p.get(Place::Softmax)), (None, None));
        assert_eq!(p.describe(), "matmul=pairwise,update=kahan");
        assert_eq!(AccumulatePlaces::parse(&p.describe()).unwrap(), p);
        let all = AccumulatePlaces::parse("all=naive").unwrap();
        assert!(Place::ALL
            .iter()
            .all(|&q| all.get(q) == Some(Accumulate::Naive)));
        assert_eq!(AccumulatePlaces::default().describe(), "");
        // The passes one at a time; all three with one mode print as `matmul`.
        let fg = AccumulatePlaces::parse("gradient=exact,forward=exact").unwrap();
        assert_eq!(fg.get(Place::Backward), None);
        assert_eq!(fg.describe(), "forward=exact,gradient=exact");
        assert_eq!(AccumulatePlaces::parse(&fg.describe()).unwrap(), fg);
        let three = AccumulatePlaces::parse("forward=kahan,backward=kahan,gradient=kahan");
        assert_eq!(three.unwrap().describe(), "matmul=kahan");
        let mixed =
            AccumulatePlaces::parse("forward=exact,backward=kahan,gradient=kahan,sums=exact");
        assert_eq!(
            mixed.unwrap().describe(),
            "forward=exact,backward=kahan,gradient=kahan,sums=exact"
        );
        for (bad, why) in [
            ("matmul=exactly", "unknown mode \"exactly\""),
            ("gemm=naive", "unknown place \"gemm\""),
            ("matmul", "is not place=mode"),
            ("all=kahan,sums=naive", "sums given twice"),
            ("matmul=exact,backward=naive", "backward given twice"),
            ("update=pairwise", "naive or kahan"),
            ("update=exact", "naive or kahan"),
        ] {
            let e = AccumulatePlaces::parse(bad).unwrap_err().0;
            assert!(e.contains(why) && !e.contains('\n'), "{bad}: {e}");
        }
    }

    /// `matmul=fdpa:PRESET[:promoteN]` (issue 49): parsed by the golden model, printed back
    /// whole, for the matrix products only; checked against every stage's format.
    #[test]
    fn fdpa_placements_parse_and_check_their_formats() {
        let p = AccumulatePlaces::parse("matmul=fdpa:hopper:promote128,update=kahan").unwrap();
        let Some(Accumulate::Fdpa(m)) = p.get(Place::Backward) else {
            panic!("{p:?}")
        };
        assert_eq!(m.to_string(), "fdpa:hopper:promote128");
        assert_eq!(p.fdpa(), Some(m));
        assert_eq!(p.describe(), "matmul=fdpa:hopper:promote128,update=kahan");
        assert_eq!(AccumulatePlaces::parse(&p.describe()).unwrap(), p);
        assert_eq!(
            AccumulatePlaces::parse("matmul=exact").unwrap().fdpa(),
            None
        );
        for (bad, why) in [
            ("sums=fdpa:hopper", "matrix unit's dot product"),
            ("all=fdpa:hopper", "matrix unit's dot product"),
            ("matmul=fdpa:nvidia", "unknown preset"),
            ("matmul=fdpa:4:0:rz-f32", "F = \"0\""),
            ("forward=fdpa:0:13:rz-f32", "L = \"0\""),
        ] {
            let e = AccumulatePlaces::parse(bad).unwrap_err().0;
            assert!(e.contains(why) && !e.contains('\n'), "{bad}: {e}");
        }
        let recipe = crate::config::parse_precision("O=bf16-L=bf16-F=fp8:e4m3-BG=fp8:e5m2");
        check_accumulation(&recipe.unwrap().0, false, None, &p).unwrap();
        for (stages, acc, why) in [
            (
                "posit:8:2",
                "matmul=fdpa:hopper",
                "'fdpa' is for float formats",
            ),
            (
                "float:8:10",
                "matmul=fdpa:ada",
                "ada takes f16, bf16 or fp8",
            ),
            ("fp8:e4m3", "matmul=fdpa:volta", "volta takes f16"),
        ] {
            let s = Stages::all(stages.parse().unwrap());
            let a = AccumulatePlaces::parse(acc).unwrap();
            let e = check_accumulation(&s, false, None, &a).unwrap_err().0;
            assert!(e.contains(why) && e.starts_with("--accumulate"), "{e}");
        }
    }

    /// Without `--accumulate` every place keeps its family's rule (so runs without it train
    /// as before, and their fingerprints are unchanged); a chosen place takes its mode; modes
    /// a stage's family does not offer are refused.
    #[test]
    fn placements_override_only_the_places_chosen() {
        let formats = [
            "lns:5:6",
            "posit:8:2",
            "fix:7:8",
            "dfix:10",
            "f32",
            "float:4:3",
            "takum:16",
        ];
        for e in lpgen_golden::FAMILIES {
            assert!(formats.iter().any(|f| f.starts_with(e.name)), "{}", e.name);
        }
        for f in formats {
            let mut cfg = crate::net::tests::cfg(f);
            let fmt = cfg.stages.f;
            for (quire, kahan) in [(false, KahanPlaces::default()), (true, KahanPlaces::all())] {
                cfg.quire = quire;
                cfg.kahan = kahan;
                let rule = crate::family::train_family(&fmt).accumulation(quire, kahan.matmul);
                for q in [Place::Forward, Place::Gradient, Place::Sums, Place::Softmax] {
                    assert_eq!(cfg.accumulation(q, fmt), rule, "{f} {q:?}");
                }
                assert_eq!(cfg.kahan_update(), kahan.update);
                assert!(!cfg.fingerprint().contains("accumulate"));
            }
            cfg.accumulate = AccumulatePlaces::parse("softmax=pairwise,update=naive").unwrap();
            assert_eq!(cfg.accumulation(Place::Softmax, fmt), Accumulate::Pairwise);
            assert_eq!(
                cfg.accumulation(Place::Backward, fmt),
                crate::family::train_family(&fmt).accumulation(true, true)
            );
            assert!(!cfg.kahan_update());
            assert!(cfg
                .fingerprint()
                .ends_with(" accumulate=softmax=pairwise,update=naive"));
        }
        let lns = Stages::all("lns:5:6".parse().unwrap());
        let exact = AccumulatePlaces::parse("matmul=exact").unwrap();
        let e = check_accumulation(&lns, false, None, &exact).unwrap_err().0;
        assert!(e.contains("not offered by lns:5:6"), "{e}");
        let pairwise = AccumulatePlaces::parse("sums=pairwise").unwrap();
        check_accumulation(&lns, false, None, &pairwise).unwrap();
        let e = check_accumulation(&lns, false, Some(4), &pairwise)
            .unwrap_err()
            .0;
        assert!(e.contains("--keep-bits"), "{e}");
        let posit = Stages::all("posit:8:2".parse().unwrap());
        check_accumulation(&posit, false, None, &exact).unwrap();
    }
}
