//! `lpgen quant TYPE --dist D --samples N [--seed S] [--offset O]` and `lpgen quant --table1`:
//! the approximation error of seed 003's 8-bit codecs (§3.4, Table 1) on random samples.
//!
//! Samples are drawn in f64 and rounded to f32 (the paper compresses 32-bit floats), then
//! encoded and decoded by `lpgen_golden::q8`; errors are summed in f64. The sample is made
//! twice from its seed (once for the absmax, once to measure), so memory stays flat.

use std::io::Write;

use clap::Args;
use lpgen_golden::q8::{self, Q8Type, Scaling};
use lpgen_golden::MxFormat;

use crate::{emit, CliError, CliResult};

/// Largest --samples: 40 times the paper's 2.5·10^7, and a run still ends in under a minute
/// per type on one core (10^8 samples: 3.8 s, docs/perf.md); its f64 sums of per-chunk sums
/// keep a relative error below 1e-10, far under the printed digits.
pub const MAX_SAMPLES: u64 = 1_000_000_000;

/// The paper's sample size (§3.4: "a sample of size 25 million numbers").
const TABLE1_SAMPLES: u64 = 25_000_000;

/// Bounds of a distribution's reach and spread, so that every sample is a finite f32 and a
/// relative error can be formed (well inside f32's 1.2e-38 ..= 3.4e38).
const PARAM_MIN: f64 = 1e-30;
const PARAM_MAX: f64 = 1e30;

/// Samples per chunk: errors are summed per chunk, then the chunk sums are added.
const CHUNK: usize = 1 << 16;

#[derive(Args)]
pub struct QuantArgs {
    /// q8:dynamic-tree, q8:static-tree, q8:linear or q8:mantissa, or an MX block format
    /// `mx:ELEM[:bK]` (omit with --table1)
    #[arg(value_name = "TYPE")]
    ty: Option<String>,
    /// Distribution of the samples: U(a,b) or N(mean,variance), e.g. "N(0,0.04)"
    #[arg(long)]
    dist: Option<String>,
    /// Number of samples [default: 1000000; 25000000 with --table1]
    #[arg(long)]
    samples: Option<u64>,
    /// Seed of the sample generator
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Exponent offset o (scale 10^o) of q8:static-tree and q8:mantissa [default: 1]
    #[arg(long, allow_negative_numbers = true)]
    offset: Option<i32>,
    /// Seed 003 Table 1: the four distributions × four types beside the paper's figures
    #[arg(long)]
    table1: bool,
}

/// A distribution of §3.4: U(a, b) or N(mean, variance).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Dist {
    Uniform(f64, f64),
    Normal { mean: f64, variance: f64 },
}

fn parse_dist(s: &str) -> CliResult<Dist> {
    let bad = |why: &str| {
        CliError(format!(
            "distribution {s:?} {why}: expected U(a,b) or N(mean,variance), e.g. \"N(0,1)\""
        ))
    };
    let compact: String = s.chars().filter(|c| !c.is_whitespace()).collect();
    let (kind, rest) = compact.split_at(compact.chars().next().map_or(0, char::len_utf8));
    let inner = rest
        .strip_prefix('(')
        .and_then(|r| r.strip_suffix(')'))
        .ok_or_else(|| bad("is not of the form X(p,q)"))?;
    let params: Vec<f64> = inner
        .split(',')
        .map(|p| p.parse::<f64>().ok().filter(|v| v.is_finite()))
        .collect::<Option<_>>()
        .ok_or_else(|| bad("has a parameter that is not a finite number"))?;
    let [p, q] = params[..] else {
        return Err(bad("needs exactly two parameters"));
    };
    // Samples must stay finite, nonzero f32: Box–Muller's |z| is below 9 with 53-bit uniforms.
    let (lo, hi) = (PARAM_MIN, PARAM_MAX);
    let dist = match kind {
        "U" if p < q => Dist::Uniform(p, q),
        "U" => return Err(bad("needs a < b")),
        "N" if q > 0.0 => Dist::Normal {
            mean: p,
            variance: q,
        },
        "N" => return Err(bad("needs a variance > 0")),
        _ => return Err(bad("is neither U nor N")),
    };
    let (reach, spread) = match dist {
        Dist::Uniform(a, b) => (a.abs().max(b.abs()), b - a),
        Dist::Normal { mean, variance } => (mean.abs() + 9.0 * variance.sqrt(), variance.sqrt()),
    };
    if reach > hi || spread < lo {
        return Err(bad(&format!(
            "leaves f32's range: keep |values| below {hi:e} and the spread (b - a, or the standard deviation) at least {lo:e}"
        )));
    }
    Ok(dist)
}

/// xoshiro256** seeded by SplitMix64: small, fast and the same on every machine. (The normal
/// samples go through libm's ln/sin/cos, so they may differ in the last bit elsewhere.)
struct Rng([u64; 4]);

impl Rng {
    fn new(seed: u64) -> Rng {
        let mut z = lpgen_golden::rng::Rng(seed);
        Rng([z.next_u64(), z.next_u64(), z.next_u64(), z.next_u64()])
    }

    fn next_u64(&mut self) -> u64 {
        let s = &mut self.0;
        let out = s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        out
    }

    /// Uniform on [0, 1) with 53 random bits.
    fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

/// Fills `out` with the next samples of `dist` (Box–Muller pairs for the normal).
fn fill(rng: &mut Rng, dist: Dist, out: &mut [f32]) {
    match dist {
        Dist::Uniform(a, b) => out
            .iter_mut()
            .for_each(|x| *x = (a + (b - a) * rng.unit()) as f32),
        Dist::Normal { mean, variance } => {
            let sd = variance.sqrt();
            for pair in out.chunks_mut(2) {
                let r = (-2.0 * (1.0 - rng.unit()).ln()).sqrt(); // 1 - u in (0, 1]
                let (sin, cos) = (std::f64::consts::TAU * rng.unit()).sin_cos();
                pair[0] = (mean + sd * r * cos) as f32;
                if let Some(x) = pair.get_mut(1) {
                    *x = (mean + sd * r * sin) as f32;
                }
            }
        }
    }
}

/// Calls `each` on every chunk of the sample of `samples` values made from `seed`.
fn for_each_chunk(dist: Dist, samples: u64, seed: u64, each: impl FnMut(&[f32])) {
    for_each_chunk_of(CHUNK, dist, samples, seed, each)
}

/// [`for_each_chunk`] with chunks of `chunk` values (even: the sample is the same whatever
/// the chunk, as Box–Muller pairs never straddle two chunks).
fn for_each_chunk_of(
    chunk: usize,
    dist: Dist,
    samples: u64,
    seed: u64,
    mut each: impl FnMut(&[f32]),
) {
    debug_assert!(chunk.is_multiple_of(2));
    let mut rng = Rng::new(seed);
    let mut buf = vec![0f32; chunk];
    let mut left = samples;
    while left > 0 {
        let n = left.min(chunk as u64) as usize;
        fill(&mut rng, dist, &mut buf[..n]);
        each(&buf[..n]);
        left -= n as u64;
    }
}

/// Mean errors of one type on one sample.
#[derive(Clone, Copy, Debug, Default)]
struct Errors {
    abs_sum: f64,
    rel_sum: f64,
    samples: u64,
    /// Samples equal to 0: they have no relative error and are left out of its mean.
    zeros: u64,
}

impl Errors {
    fn mean_abs(&self) -> f64 {
        self.abs_sum / self.samples as f64
    }
    fn mean_rel_percent(&self) -> f64 {
        100.0 * self.rel_sum / (self.samples - self.zeros) as f64
    }
}

/// A measurement: each type with its scale, on one sample.
fn measure(dist: Dist, samples: u64, seed: u64, types: &[(Q8Type, Scaling)]) -> Vec<(f32, Errors)> {
    let mut absmax = 0f32;
    if types.iter().any(|(_, s)| *s == Scaling::Absmax) {
        for_each_chunk(dist, samples, seed, |xs| {
            absmax = absmax.max(q8::absmax(xs))
        });
    }
    let scales: Vec<f32> = types
        .iter()
        .map(|(_, s)| match s {
            Scaling::Absmax => absmax,
            Scaling::Offset(o) => q8::offset_scale(*o).expect("offset checked by the caller"),
        })
        .collect();
    let mut errors = vec![Errors::default(); types.len()];
    let (mut codes, mut back) = (vec![0u8; CHUNK], vec![0f32; CHUNK]);
    for_each_chunk(dist, samples, seed, |xs| {
        for (i, (ty, _)) in types.iter().enumerate() {
            let book = ty.codebook();
            let n = xs.len();
            book.encode_slice(xs, scales[i], &mut codes[..n]);
            book.decode_slice(&codes[..n], scales[i], &mut back[..n]);
            let (mut abs, mut rel, mut zeros) = (0f64, 0f64, 0u64);
            for (x, y) in xs.iter().zip(&back[..n]) {
                let e = (*x as f64 - *y as f64).abs();
                abs += e;
                if *x == 0.0 {
                    zeros += 1;
                } else {
                    rel += e / (*x as f64).abs();
                }
            }
            let acc = &mut errors[i];
            acc.abs_sum += abs;
            acc.rel_sum += rel;
            acc.zeros += zeros;
            acc.samples += n as u64;
        }
    });
    scales.into_iter().zip(errors).collect()
}

fn scale_text(scaling: Scaling, scale: f32) -> String {
    match scaling {
        Scaling::Absmax => format!("absmax={scale}"),
        Scaling::Offset(o) => format!("10^{o}"),
    }
}

const HEADER: &str = "type             dist         samples     seed  scale              mean_abs_error  mean_rel_error_%  zeros";

pub fn run(args: &QuantArgs, out: &mut dyn Write) -> CliResult {
    if args.table1 {
        if args.ty.is_some() || args.dist.is_some() || args.offset.is_some() {
            return Err(CliError(
                "--table1 runs the paper's four distributions with all four types and offsets: drop TYPE, --dist and --offset".into(),
            ));
        }
        return table1(
            check_samples(args.samples.unwrap_or(TABLE1_SAMPLES))?,
            args.seed,
            out,
        );
    }
    let ty_text = args
        .ty
        .as_deref()
        .ok_or_else(|| CliError("quant needs a TYPE (e.g. q8:dynamic-tree) or --table1".into()))?;
    // The type first: a bad TYPE is named before a missing --dist (issue 48).
    // Ok: a q8 type; Err: an MX format.
    let ty: Result<Q8Type, MxFormat> = match lpgen_golden::mx::is_mx(ty_text) {
        true => Err(ty_text.parse()?),
        false => Ok(ty_text.parse()?),
    };
    let dist_text = args
        .dist
        .as_deref()
        .ok_or_else(|| CliError("quant needs --dist, e.g. --dist \"N(0,1)\"".into()))?;
    let dist = parse_dist(dist_text)?;
    let samples = check_samples(args.samples.unwrap_or(1_000_000))?;
    let ty = match ty {
        Ok(q8) => q8,
        Err(f) if args.offset.is_some() => {
            return Err(CliError(format!(
                "--offset applies to q8:static-tree and q8:mantissa; {f} is scaled per block"
            )))
        }
        Err(f) => return mx_row(f, dist, dist_text, samples, args.seed, out),
    };
    let scaling = match (ty.default_scaling(), args.offset) {
        (Scaling::Absmax, Some(_)) => {
            return Err(CliError(format!(
                "--offset applies to q8:static-tree and q8:mantissa; {ty} is scaled by the sample's absmax"
            )))
        }
        (Scaling::Offset(_), Some(o)) => {
            q8::offset_scale(o)?;
            Scaling::Offset(o)
        }
        (default, None) => default,
    };
    let (scale, e) = measure(dist, samples, args.seed, &[(ty, scaling)])[0];
    emit(out, HEADER)?;
    let name: String = dist_text.chars().filter(|c| !c.is_whitespace()).collect();
    emit(
        out,
        &format!(
            "{:<16} {:<12} {:<11} {:<5} {:<18} {:<15.4e} {:<17.4} {}",
            ty.to_string(),
            name,
            samples,
            args.seed,
            scale_text(scaling, scale),
            e.mean_abs(),
            e.mean_rel_percent(),
            e.zeros
        ),
    )
}

/// The errors of MX format `f` on the sample (f32 values quantized in blocks of K in sample
/// order, the last block shorter), in the q8 rows' columns.
fn mx_errors(f: MxFormat, dist: Dist, samples: u64, seed: u64) -> Errors {
    let pair = if f.block.is_multiple_of(2) {
        f.block
    } else {
        2 * f.block
    };
    let mut e = Errors::default();
    let mut xs = Vec::with_capacity(CHUNK);
    for_each_chunk_of(CHUNK - CHUNK % pair, dist, samples, seed, |chunk| {
        xs.clear();
        xs.extend(chunk.iter().map(|&x| f64::from(x)));
        for (block, vals) in f.quantize(&xs).iter().zip(xs.chunks(f.block)) {
            let back = f.dequantize_block(block).expect("a block just made");
            for (x, y) in vals.iter().zip(back) {
                let err = (x - y).abs();
                e.abs_sum += err;
                if *x == 0.0 {
                    e.zeros += 1;
                } else {
                    e.rel_sum += err / x.abs();
                }
            }
        }
        e.samples += chunk.len() as u64;
    });
    e
}

fn mx_row(
    f: MxFormat,
    dist: Dist,
    dist_text: &str,
    samples: u64,
    seed: u64,
    out: &mut dyn Write,
) -> CliResult {
    let e = mx_errors(f, dist, samples, seed);
    emit(out, HEADER)?;
    let name: String = dist_text.chars().filter(|c| !c.is_whitespace()).collect();
    emit(
        out,
        &format!(
            "{:<16} {:<12} {:<11} {:<5} {:<18} {:<15.4e} {:<17.4} {}",
            f.to_string(),
            name,
            samples,
            seed,
            format!("E8M0 per {}", f.block),
            e.mean_abs(),
            e.mean_rel_percent(),
            e.zeros
        ),
    )
}

fn check_samples(n: u64) -> CliResult<u64> {
    if n == 0 || n > MAX_SAMPLES {
        return Err(CliError(format!(
            "--samples {n} is out of range: use 1..={MAX_SAMPLES} (the paper used 25000000)"
        )));
    }
    Ok(n)
}

/// A row of the paper's Table 1: type, mean absolute error, mean relative error in %, as printed.
type PaperRow = (&'static str, &'static str, &'static str);

/// Seed 003 Table 1, the four distribution blocks: (distribution, exponent offset of the
/// static tree and mantissa, then the types in the paper's row order).
const PAPER: [(&str, i32, [PaperRow; 4]); 4] = [
    (
        "U(0,1)",
        1,
        [
            ("dynamic-tree", "0.00004", "1.39"),
            ("linear", "0.0024", "2.16"),
            ("mantissa", "0.0017", "7.22"),
            ("static-tree", "0.0007", "4.82"),
        ],
    ),
    (
        "N(0,1)",
        1,
        [
            ("dynamic-tree", "0.0005", "2.46"),
            ("linear", "0.0004", "6.47"),
            ("mantissa", "0.0104", "6.89"),
            ("static-tree", "0.0093", "6.3"),
        ],
    ),
    (
        "N(0,100)",
        2,
        [
            ("dynamic-tree", "0.049", "2.49"),
            ("linear", "0.041", "6.44"),
            ("mantissa", "1.066", "7.19"),
            ("static-tree", "0.926", "6.28"),
        ],
    ),
    (
        "N(0,0.04)",
        1,
        [
            ("dynamic-tree", "0.000018", "2.45"),
            ("linear", "0.000015", "6.15"),
            ("mantissa", "0.00055", "8.26"),
            ("static-tree", "0.00022", "6.58"),
        ],
    ),
];

fn table1(samples: u64, seed: u64, out: &mut dyn Write) -> CliResult {
    emit(
        out,
        &format!(
            "# seed 003 Table 1: {samples} samples per distribution (the same sample for all four types), seed {seed}; relative errors leave out samples equal to 0"
        ),
    )?;
    emit(
        out,
        "dist       type             scale              mean_abs_error  paper     ratio    mean_rel_error_%  paper  ratio",
    )?;
    let mut verdicts = Vec::new();
    for (block, (dist_text, offset, rows)) in PAPER.iter().enumerate() {
        let dist = parse_dist(dist_text)?;
        let types: Vec<(Q8Type, Scaling)> = rows
            .iter()
            .map(|(name, _, _)| {
                let ty: Q8Type = name.parse().expect("a q8 type name");
                let scaling = match ty.default_scaling() {
                    Scaling::Absmax => Scaling::Absmax,
                    Scaling::Offset(_) => Scaling::Offset(*offset),
                };
                (ty, scaling)
            })
            .collect();
        // each block its own stream, so a block does not depend on the ones before it
        let results = measure(dist, samples, seed.wrapping_add(block as u64), &types);
        for (((ty, scaling), (scale, e)), (_, mae, mre)) in types.iter().zip(&results).zip(rows) {
            let ratio = |ours: f64, paper: &str| ours / paper.parse::<f64>().expect("a figure");
            emit(
                out,
                &format!(
                    "{:<10} {:<16} {:<18} {:<15.4e} {:<9} {:<8.3} {:<17.3} {:<6} {:.3}",
                    dist_text,
                    ty.to_string(),
                    scale_text(*scaling, *scale),
                    e.mean_abs(),
                    mae,
                    ratio(e.mean_abs(), mae),
                    e.mean_rel_percent(),
                    mre,
                    ratio(e.mean_rel_percent(), mre)
                ),
            )?;
        }
        let best = types
            .iter()
            .zip(&results)
            .min_by(|a, b| {
                a.1 .1
                    .mean_rel_percent()
                    .total_cmp(&b.1 .1.mean_rel_percent())
            })
            .map(|((ty, _), _)| *ty)
            .expect("four types");
        verdicts.push(format!(
            "{dist_text}: {best}{}",
            if best == Q8Type::DynamicTree {
                ""
            } else {
                " (not the dynamic tree)"
            }
        ));
    }
    emit(
        out,
        &format!("# lowest mean relative error: {}", verdicts.join(", ")),
    )
}
