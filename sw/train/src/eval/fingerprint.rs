//! A run's configuration read back from its fingerprint (`Config::fingerprint`, the second
//! line of every checkpoint), so that `lpgen eval` rebuilds the network and the forward pass
//! a checkpoint was trained with from the checkpoint alone. Each field is parsed by the rule
//! that printed it; the result is accepted only if its own fingerprint is the stored one,
//! character for character.

use lpgen_golden::dfix::DfixFormat;
use lpgen_golden::q8::Q8Type;
use lpgen_golden::{Format, Rounding};

use crate::arch::{Arch, Layer};
use crate::compress::Compression;
use crate::config::{
    AccumulatePlaces, Activation, AdaGradAt, Config, KahanPlaces, Normalize, Optimizer, Schedule,
    Stages,
};
use crate::storage::{DfixConfig, FloatConfig, StorageConfig};
use crate::TrainError;

/// The configuration of a run and the digests of the data it trained on.
#[derive(Clone, Debug, PartialEq)]
pub struct RunConfig {
    pub cfg: Config,
    /// `Dataset::digest` of the training set (its moments normalise the inputs).
    pub train_digest: u64,
    /// `Dataset::digest` of the test set the run evaluated on.
    pub test_digest: u64,
}

/// The keys of a fingerprint in the order it prints them; `true`: always present.
const KEYS: [(&str, bool); 28] = [
    ("O", true),
    ("L", true),
    ("F", true),
    ("B", true),
    ("G", true),
    ("quire", true),
    ("kahan", true),
    ("keep", true),
    ("net", true),
    ("optimizer", true),
    ("compress", true),
    ("batch", true),
    ("lr", true),
    ("momentum", true),
    ("from", true),
    ("schedule", true),
    ("normalize", true),
    ("seed", true),
    ("storage", false),
    ("mx", false),
    ("max_norm", false),
    ("accumulate", false),
    ("rounding", false),
    ("train", true),
    ("test", true),
    ("workers", false),
    ("exchange", false),
    ("double_buffer", false),
];

/// The value of each key, in [`KEYS`]' order (`None`: an optional key that is absent).
fn split(fp: &str) -> Option<Vec<Option<&str>>> {
    // Positions of each ` key=` (the first key starts the line), searched in order.
    let mut found: Vec<(usize, usize, usize)> = vec![]; // (key index, start of key, value start)
    let mut from = 0;
    for (i, (key, required)) in KEYS.iter().enumerate() {
        let at = if i == 0 {
            fp.starts_with("O=").then_some(0)
        } else {
            fp[from..].find(&format!(" {key}=")).map(|p| from + p + 1)
        };
        match at {
            Some(p) => {
                // An optional key is taken only before the next required one.
                let next_required = KEYS[i + 1..]
                    .iter()
                    .find(|(_, r)| *r)
                    .and_then(|(k, _)| fp[from..].find(&format!(" {k}=")).map(|q| from + q));
                if !required && next_required.is_some_and(|q| q < p) {
                    continue;
                }
                found.push((i, p, p + key.len() + 1));
                from = p + key.len() + 1;
            }
            None if *required => return None,
            None => {}
        }
    }
    let mut values = vec![None; KEYS.len()];
    for (n, &(i, _, start)) in found.iter().enumerate() {
        let end = found.get(n + 1).map_or(fp.len(), |&(_, next, _)| next - 1);
        values[i] = Some(&fp[start..end]);
    }
    Some(values)
}

/// The one of `candidates` whose `Debug` text is `text`.
fn by_debug<T: std::fmt::Debug>(candidates: impl IntoIterator<Item = T>, text: &str) -> Option<T> {
    candidates.into_iter().find(|c| format!("{c:?}") == text)
}

fn optimizer(text: &str) -> Option<Optimizer> {
    let defaults = ["sgd", "adagrad", "rmsprop"].map(|n| Optimizer::parse(n).expect("a name"));
    let places = [AdaGradAt::Local, AdaGradAt::Aggregate, AdaGradAt::Momentum];
    let adagrads = defaults.iter().flat_map(|o| match *o {
        Optimizer::AdaGrad { eps, .. } => places
            .iter()
            .map(|&at| Optimizer::AdaGrad { eps, at })
            .collect(),
        _ => vec![*o],
    });
    by_debug(adagrads, text).or_else(|| adam(text))
}

/// The values of a struct variant's `Debug` text `Name { a: 1, b: 2 }`, in order, if its
/// name and fields are `name` and `keys`.
fn fields<'t>(text: &'t str, name: &str, keys: &[&str]) -> Option<Vec<&'t str>> {
    let body = text
        .strip_prefix(name)?
        .strip_prefix(" { ")?
        .strip_suffix(" }")?;
    let parts: Vec<&str> = body.split(", ").collect();
    (parts.len() == keys.len()).then_some(()).and_then(|_| {
        parts
            .iter()
            .zip(keys)
            .map(|(p, k)| p.strip_prefix(k)?.strip_prefix(": "))
            .collect()
    })
}

/// `Optimizer::Adam`'s `Debug` text.
fn adam(text: &str) -> Option<Optimizer> {
    let v = fields(
        text,
        "Adam",
        &["beta1", "beta2", "eps", "weight_decay", "decoupled"],
    )?;
    Some(Optimizer::Adam {
        beta1: v[0].parse().ok()?,
        beta2: v[1].parse().ok()?,
        eps: v[2].parse().ok()?,
        weight_decay: v[3].parse().ok()?,
        decoupled: v[4].parse().ok()?,
    })
}

fn compression(text: &str) -> Option<Compression> {
    let codecs: Vec<Option<Q8Type>> = std::iter::once(None).chain(Q8Type::ALL.map(Some)).collect();
    let all = codecs
        .iter()
        .flat_map(|&grad| codecs.iter().map(move |&act| Compression { grad, act }));
    by_debug(all, text)
}

fn schedule(text: &str) -> Option<Schedule> {
    if let Some(n) = text
        .strip_prefix("Step { every: ")
        .and_then(|r| r.strip_suffix(" }"))
    {
        return Some(Schedule::Step {
            every: n.parse().ok()?,
        });
    }
    let halving = Schedule::Halving {
        hold: 8,
        threshold: 0.001,
    };
    if let Some(v) = fields(text, "Cosine", &["warmup", "total", "min"]) {
        return Some(Schedule::Cosine {
            warmup: v[0].parse().ok()?,
            total: v[1].parse().ok()?,
            min: v[2].parse().ok()?,
        });
    }
    by_debug([Schedule::Fixed, halving], text)
}

/// `dynamic fixed point P/U bits, scales every N examples at R overflow[, exact products]`,
/// `fixed point P/U bits, radix point after bit R[, exact products]` or `floating point P/U`.
fn storage(text: &str) -> Option<StorageConfig> {
    let inner = text.strip_prefix('[')?.strip_suffix(']')?;
    if let Some(spec) = inner.strip_prefix("floating point ") {
        return FloatConfig::parse(spec).ok().map(StorageConfig::Float);
    }
    let (inner, exact_products) = match inner.strip_suffix(", exact products") {
        Some(i) => (i, true),
        None => (inner, false),
    };
    let (dynamic, rest) = match inner.strip_prefix("dynamic fixed point ") {
        Some(r) => (true, r),
        None => (false, inner.strip_prefix("fixed point ")?),
    };
    let (widths, rest) = rest.split_once(" bits, ")?;
    let (p, u) = widths.split_once('/')?;
    let mut s = DfixConfig {
        propagation: DfixFormat::new(p.parse().ok()?).ok()?,
        update: DfixFormat::new(u.parse().ok()?).ok()?,
        scale_every: 10_000,
        max_overflow: 1e-4,
        radix_point: None,
        exact_products,
    };
    if dynamic {
        let rest = rest
            .strip_prefix("scales every ")?
            .strip_suffix(" overflow")?;
        let (n, rate) = rest.split_once(" examples at ")?;
        // As `lpgen train` takes them: updates at least every example, a rate in (0, 1).
        s.scale_every = n.parse().ok().filter(|&n| n >= 1)?;
        s.max_overflow = rate.parse().ok().filter(|r| *r > 0.0 && *r < 1.0)?;
    } else {
        // Integer bits below the narrower word's width.
        let min_width = s.propagation.width.min(s.update.width);
        let r = rest.strip_prefix("radix point after bit ")?.parse().ok();
        s.radix_point = Some(r.filter(|&r| r < min_width)?);
    }
    Some(StorageConfig::Dfix(s))
}

/// The largest count a checkpoint's network may name (a width, a side, a kernel, a padding):
/// `lpgen train` takes hidden widths up to 2^16 and the datasets' images are far smaller.
pub const MAX_COUNT: usize = 1 << 24;

/// The most values an image may have between two layers, and the most inputs of a weight
/// row (a product of counts, computed without overflow).
pub const MAX_VALUES: usize = 1 << 32;

/// A count of the checkpoint's network: a whole number in 1..=MAX_COUNT.
fn count(text: &str) -> Result<usize, String> {
    match text.parse::<u128>() {
        Ok(n) if (1..=MAX_COUNT as u128).contains(&n) => Ok(n as usize),
        Ok(n) => Err(format!("a size of {n}, not in 1..={MAX_COUNT}")),
        Err(_) => Err(format!("{text:?} is not a size")),
    }
}

/// The product of `factors`, if it is at most [`MAX_VALUES`].
fn values(factors: &[usize], what: &str) -> Result<usize, String> {
    factors
        .iter()
        .try_fold(1usize, |p, &f| p.checked_mul(f))
        .filter(|&p| p <= MAX_VALUES)
        .ok_or_else(|| format!("{what} of more than {MAX_VALUES} values"))
}

/// A gpt's shape as `Gpt::describe` writes it after `gpt ` (`layers 2 heads 4 dim 128
/// context 64 vocab 256`), each a count, the vocabulary the bytes'.
fn gpt(text: &str) -> Result<Arch, String> {
    let words: Vec<&str> = text.split(' ').collect();
    let ["layers", l, "heads", h, "dim", d, "context", t, "vocab", v] = words[..] else {
        return Err(format!("gpt {text:?} is not a gpt description"));
    };
    let vocab = count(v)?;
    if vocab != crate::transformer::text::VOCAB {
        return Err(format!("a gpt of vocabulary {vocab}, not the bytes' 256"));
    }
    let g = crate::transformer::Gpt {
        layers: count(l)?,
        heads: count(h)?,
        dim: count(d)?,
        context: count(t)?,
        vocab,
        task: crate::transformer::Task::Text,
    };
    values(&[4 * g.dim, g.dim.max(g.context)], "a gpt's weight matrix")?;
    Arch::gpt(g).map_err(|e| e.0)
}

/// The layers of `Arch::describe` (`1x28x28: dense 512, sigmoid, dense 10`), each layer's
/// input shape followed from the one before. Every count is in 1..=[`MAX_COUNT`] and every
/// image between layers, and every convolution's weight row, has at most [`MAX_VALUES`]
/// values, so that no size computed from them overflows.
fn arch(text: &str) -> Result<Arch, String> {
    let malformed = || "not a network description".to_string();
    let inner = text
        .strip_prefix('[')
        .and_then(|t| t.strip_suffix(']'))
        .ok_or_else(malformed)?;
    if let Some(g) = inner.strip_prefix("gpt ") {
        return gpt(g);
    }
    let (input, list) = inner.split_once(": ").ok_or_else(malformed)?;
    let dims: Vec<usize> = input.split('x').map(count).collect::<Result<_, _>>()?;
    let [c, h, w] = dims[..] else {
        return Err(format!("input {input:?} is not CxHxW"));
    };
    values(&[c, h, w], "an input")?;
    let (mut shape, mut layers) = ((c, h, w), vec![]);
    for item in list.split(", ") {
        let words: Vec<&str> = item.split(' ').collect();
        let flat = shape.0 * shape.1 * shape.2;
        let unknown = || format!("layer {item:?} is not one lpgen writes");
        let layer = match words[..] {
            ["dense", n] => {
                let outputs = count(n)?;
                shape = (outputs, 1, 1);
                Layer::Dense {
                    inputs: flat,
                    outputs,
                }
            }
            ["conv", k, "pad", pad] => {
                let sizes: Vec<usize> = k.split('x').map(count).collect::<Result<_, _>>()?;
                let [filters, kernel, k2] = sizes[..] else {
                    return Err(unknown());
                };
                let pad = match pad.parse::<usize>() {
                    Ok(p) if p <= MAX_COUNT => p,
                    _ => return Err(format!("padding {pad:?} is not in 0..={MAX_COUNT}")),
                };
                if kernel != k2 || shape.1 + 2 * pad < kernel || shape.2 + 2 * pad < kernel {
                    return Err(format!("layer {item:?} does not fit its input"));
                }
                values(&[shape.0, kernel, kernel], "a kernel")?;
                let l = Layer::Conv {
                    channels: shape.0,
                    height: shape.1,
                    width: shape.2,
                    filters,
                    kernel,
                    pad,
                };
                shape = (
                    filters,
                    shape.1 + 2 * pad + 1 - kernel,
                    shape.2 + 2 * pad + 1 - kernel,
                );
                l
            }
            ["maxpool", s] => {
                let size = count(s)?;
                let l = Layer::MaxPool {
                    channels: shape.0,
                    height: shape.1,
                    width: shape.2,
                    size,
                };
                shape = (shape.0, shape.1 / size, shape.2 / size);
                l
            }
            ["maxout", up] => {
                let (u, p) = up.split_once('x').ok_or_else(unknown)?;
                let (units, pieces) = (count(u)?, count(p)?);
                shape = (units, 1, 1);
                Layer::Maxout { units, pieces }
            }
            ["sigmoid"] => Layer::Activation(Activation::Sigmoid),
            ["relu"] => Layer::Activation(Activation::Relu),
            ["dropout", p] => Layer::Dropout {
                p: p.parse().map_err(|_| unknown())?,
            },
            _ => return Err(unknown()),
        };
        values(&[shape.0, shape.1, shape.2], "an image between layers")?;
        layers.push(layer);
    }
    let arch = Arch {
        name: format!("the checkpoint's {c}x{h}x{w} network"),
        input: (c, h, w),
        layers,
        gpt: None,
    };
    arch.check()
        .map_err(|e| e.0.replace(" (an architecture bug)", ""))?;
    Ok(arch)
}

/// The configuration and data digests of the run whose checkpoint line 2 is `fp`.
pub fn parse(fp: &str) -> Result<RunConfig, TrainError> {
    let bad = |what: &str| {
        TrainError(format!(
            "the checkpoint's configuration line cannot be read back ({what}); was it written by another lpgen version?"
        ))
    };
    if fp.contains(" scaling=[") {
        return Err(TrainError(
            "the checkpoint is a --scaling run's: evaluating scaled products is not built yet \
             (issue 50)"
                .into(),
        ));
    }
    let v = split(fp).ok_or_else(|| bad("a field is missing"))?;
    let get = |i: usize| v[i].expect("required keys are present");
    let format = |i: usize| -> Result<Format, TrainError> {
        get(i)
            .parse()
            .map_err(|_| bad(&format!("format {:?}", get(i))))
    };
    let num = |i: usize| -> Result<u64, TrainError> {
        get(i)
            .parse()
            .map_err(|_| bad(&format!("{} {:?}", KEYS[i].0, get(i))))
    };
    let real = |i: usize| -> Result<f64, TrainError> {
        get(i)
            .parse()
            .map_err(|_| bad(&format!("{} {:?}", KEYS[i].0, get(i))))
    };
    let hex = |i: usize| -> Result<u64, TrainError> {
        u64::from_str_radix(get(i), 16).map_err(|_| bad(&format!("digest {:?}", get(i))))
    };
    let stages = Stages {
        o: format(0)?,
        l: format(1)?,
        f: format(2)?,
        b: format(3)?,
        g: format(4)?,
    };
    let keep_bits = match get(7) {
        "None" => None,
        k => Some(
            k.strip_prefix("Some(")
                .and_then(|k| k.strip_suffix(')'))
                .and_then(|k| k.parse().ok())
                .ok_or_else(|| bad("keep"))?,
        ),
    };
    let cfg = Config {
        stages,
        quire: match get(5) {
            "true" => true,
            "false" => false,
            _ => return Err(bad("quire")),
        },
        kahan: KahanPlaces::parse(get(6)).map_err(|_| bad("kahan"))?,
        accumulate: v[21]
            .map(|a| AccumulatePlaces::parse(a).map_err(|_| bad("accumulate")))
            .transpose()?
            .unwrap_or_default(),
        keep_bits,
        arch: arch(get(8)).map_err(|why| bad(&format!("net {:?}: {why}", get(8))))?,
        optimizer: optimizer(get(9)).ok_or_else(|| bad("optimizer"))?,
        compression: compression(get(10)).ok_or_else(|| bad("compress"))?,
        storage: v[18]
            .map(|s| storage(s).ok_or_else(|| bad("storage")))
            .transpose()?,
        mx: v[19]
            .map(|m| {
                m.strip_prefix('[')
                    .and_then(|m| m.strip_suffix(']'))
                    .and_then(|m| m.parse().ok())
                    .ok_or_else(|| bad("mx"))
            })
            .transpose()?,
        max_norm: v[20].map(|_| real(20)).transpose()?,
        batch: match num(11)? {
            0 => return Err(bad("batch 0: a batch holds at least one image")),
            b => usize::try_from(b).map_err(|_| bad("batch"))?,
        },
        lr: real(12)?,
        momentum: real(13)?,
        momentum_from: num(14)? as u32,
        schedule: schedule(get(15)).ok_or_else(|| bad("schedule"))?,
        normalize: by_debug([Normalize::PerPixel, Normalize::Global], get(16))
            .ok_or_else(|| bad("normalize"))?,
        seed: num(17)?,
        rounding: v[22]
            .map(|r| r.parse().map_err(|_| bad("rounding")))
            .transpose()?
            .unwrap_or(Rounding::Nearest),
        scaling: Default::default(),
    };
    let own = format!("{} train={} test={}", cfg.fingerprint(), get(23), get(24));
    if !fp.starts_with(&own) {
        return Err(bad("it does not print back as itself"));
    }
    Ok(RunConfig {
        cfg,
        train_digest: hex(23)?,
        test_digest: hex(24)?,
    })
}
