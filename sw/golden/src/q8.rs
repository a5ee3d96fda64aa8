//! The 8-bit approximation codecs of seed 003 (Dettmers, *8-Bit Approximations for Parallelism
//! in Deep Learning*, §3.1): `q8:dynamic-tree`, `q8:static-tree`, `q8:linear`, `q8:mantissa`.
//!
//! Each type is a table of 256 code values, built once from exact rationals and rounded to f32.
//! A code is sign-magnitude: bit 7 is the sign, bits 6..0 select a magnitude. Encoding picks the
//! nearest magnitude by binary search over the sorted positive half (§3.2) and keeps the sign;
//! decoding is a table look-up. Values are scaled: the dynamic tree and linear quantization by
//! the tensor's absolute maximum (§3.1 last paragraph, §3.4), the static tree and the mantissa
//! type by a fixed exponent offset 10^o (§3.1, §3.4). `docs/formats.md` states every rule; the
//! RTL and the training driver call these tables, so they are the one source of truth.
//!
//! ```
//! use lpgen_golden::q8::Q8Type;
//! let t: Q8Type = "q8:dynamic-tree".parse().unwrap();
//! let absmax = 4.0;
//! let code = t.encode(0.2345678 * absmax, absmax);
//! assert_eq!(t.value(code), 0.23671875); // seed 003 §3.1: 0.2345678 -> 0.236719
//! assert_eq!(t.decode(code, absmax), 0.946875);
//! ```

use std::fmt;
use std::sync::OnceLock;

use crate::arith::{Bits, Calc};
use crate::format::{err, FormatError};

mod tensor;
mod word;
pub use tensor::TensorScale;
pub use word::{FixedTables, F32_NAN};

/// Bit 7 of a code: the sign.
pub const SIGN_BIT: u8 = 0x80;

/// The largest |o| of an exponent offset 10^o: 10^±10 keeps every scaled table value a normal
/// f32 (the smallest unit magnitude is 1e-8) and covers the paper's 10^1 to 10^4.
pub const MAX_OFFSET: i32 = 10;

/// One of seed 003's four 8-bit data types.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Q8Type {
    DynamicTree,
    StaticTree,
    Linear,
    Mantissa,
}

/// How a tensor is scaled before encoding (and multiplied back after decoding).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scaling {
    /// By the tensor's largest finite |x| ([`absmax`]).
    Absmax,
    /// By the fixed power of ten 10^o.
    Offset(i32),
}

impl Q8Type {
    pub const ALL: [Q8Type; 4] = [
        Q8Type::DynamicTree,
        Q8Type::StaticTree,
        Q8Type::Linear,
        Q8Type::Mantissa,
    ];

    /// The name without the `q8:` prefix.
    pub fn name(self) -> &'static str {
        match self {
            Q8Type::DynamicTree => "dynamic-tree",
            Q8Type::StaticTree => "static-tree",
            Q8Type::Linear => "linear",
            Q8Type::Mantissa => "mantissa",
        }
    }

    /// The paper's scaling (§3.4): absmax for the dynamic tree and linear quantization, the
    /// exponent offset 10^1 for the others (the paper uses 10^2 for N(0, 10^2)).
    pub fn default_scaling(self) -> Scaling {
        match self {
            Q8Type::DynamicTree | Q8Type::Linear => Scaling::Absmax,
            Q8Type::StaticTree | Q8Type::Mantissa => Scaling::Offset(1),
        }
    }

    /// Whether the type is absmax-normalised (then an exponent offset does not apply).
    pub fn is_normalised(self) -> bool {
        self.default_scaling() == Scaling::Absmax
    }

    /// The exact unit magnitude of the 7-bit field `m` (0..=127) as num/den.
    pub fn magnitude_ratio(self, m: u8) -> (u64, u64) {
        assert!(m < 128, "magnitude field {m} has more than 7 bits");
        let m = m as u64;
        match self {
            Q8Type::DynamicTree => match m {
                0 => (0, 1),
                // clusterNet's choice: the code the paper gives to the single 10^-6 value
                // holds the absmax itself, so the largest element is kept exactly.
                1 => (1, 1),
                _ => {
                    let tree_bits = 63 - m.leading_zeros(); // bits after the flag: 1..=6
                    let zeros = 6 - tree_bits; // the decade 10^-zeros
                    let (num, den) = tree_ratio(tree_bits, m - (1 << tree_bits));
                    (num, den * 10u64.pow(zeros))
                }
            },
            Q8Type::StaticTree => {
                let (num, den) = tree_ratio(4, m & 15);
                (num, den * 10u64.pow((m >> 4) as u32))
            }
            Q8Type::Linear => (m, 127),
            Q8Type::Mantissa => (m & 15, 10u64.pow((m >> 4) as u32 + 1)),
        }
    }

    /// The codec: the tables of this type, built on first use.
    pub fn codebook(self) -> &'static Codebook {
        static BOOKS: [OnceLock<Codebook>; 4] = [
            OnceLock::new(),
            OnceLock::new(),
            OnceLock::new(),
            OnceLock::new(),
        ];
        BOOKS[self as usize].get_or_init(|| Codebook::build(self))
    }

    /// The unit value of a code (scale 1).
    pub fn value(self, code: u8) -> f32 {
        self.codebook().values[code as usize]
    }

    /// All 256 codes with their unit values, sorted by value (−0 before +0).
    pub fn table(self) -> &'static [(f32, u8)] {
        &self.codebook().sorted
    }

    /// The code nearest to x/scale (see [`Codebook::encode`]).
    pub fn encode(self, x: f32, scale: f32) -> u8 {
        self.codebook().encode(x, scale)
    }

    /// The code's value times `scale`, rounded once to f32.
    pub fn decode(self, code: u8, scale: f32) -> f32 {
        self.codebook().decode(code, scale)
    }

    /// [`Codebook::encode_slice`]: every x of `xs` into `out`, one scale.
    pub fn encode_slice(self, xs: &[f32], scale: f32, out: &mut [u8]) {
        self.codebook().encode_slice(xs, scale, out)
    }

    /// [`Codebook::decode_slice`]: every code of `codes` into `out`, one scale.
    pub fn decode_slice(self, codes: &[u8], scale: f32, out: &mut [f32]) {
        self.codebook().decode_slice(codes, scale, out)
    }

    /// A tensor compressed as the paper transfers it: its scale and one code per element.
    pub fn compress(self, xs: &[f32], scaling: Scaling) -> Result<(f32, Vec<u8>), FormatError> {
        let scale = Q8Type::scale_of(xs, scaling)?;
        let mut codes = vec![0u8; xs.len()];
        self.encode_slice(xs, scale, &mut codes);
        Ok((scale, codes))
    }

    /// The scale of a tensor under `scaling`.
    pub fn scale_of(xs: &[f32], scaling: Scaling) -> Result<f32, FormatError> {
        match scaling {
            Scaling::Absmax => Ok(absmax(xs)),
            Scaling::Offset(o) => offset_scale(o),
        }
    }
}

/// The tree of the dynamic and static types with `bits` bits: the first bit splits (0.1, 1)
/// at 0.45 (clusterNet's root, not the midpoint 0.55), the other bits cut the chosen half into
/// 2^(bits-1) equal parts; the value is the middle of the part. Returns num/den.
fn tree_ratio(bits: u32, path: u64) -> (u64, u64) {
    debug_assert!((1..=6).contains(&bits) && path < 1 << bits);
    let parts = 1u64 << bits; // twice the parts per half: middles are odd multiples
    let half = parts / 2;
    // 0.1 = 2/20, 0.35 = 7/20, 0.45 = 9/20, 0.55 = 11/20 (of 20·parts)
    let num = if path < half {
        2 * parts + 7 * (2 * path + 1)
    } else {
        9 * parts + 11 * (2 * (path - half) + 1)
    };
    (num, 20 * parts)
}

/// num/den rounded to the nearest f32, ties to even (exact integer arithmetic, so no double
/// rounding); `num/den` must lie in f32's normal range or be 0.
pub fn ratio_to_f32(num: u64, den: u64) -> f32 {
    assert!(den > 0);
    if num == 0 {
        return 0.0;
    }
    // k with 2^23 <= num·2^k/den < 2^24
    let mut k = 23 - (63 - num.leading_zeros() as i32) + (63 - den.leading_zeros() as i32);
    let scaled = |k: i32| -> (u128, u128) {
        if k >= 0 {
            ((num as u128) << k, den as u128)
        } else {
            (num as u128, (den as u128) << -k)
        }
    };
    let (mut n, mut d) = scaled(k);
    if n / d >= 1 << 24 {
        k -= 1;
        (n, d) = scaled(k);
    } else if n / d < 1 << 23 {
        k += 1;
        (n, d) = scaled(k);
    }
    let (q, r) = (n / d, n % d);
    let q = if 2 * r > d || (2 * r == d && q & 1 == 1) {
        q + 1
    } else {
        q
    };
    (q as f64 * 2f64.powi(-k)) as f32 // exact: q <= 2^24
}

/// The scale 10^o of an exponent offset, correctly rounded to f32.
pub fn offset_scale(o: i32) -> Result<f32, FormatError> {
    if o.unsigned_abs() > MAX_OFFSET.unsigned_abs() {
        return err(format!(
            "exponent offset {o} is out of range: use -{MAX_OFFSET}..={MAX_OFFSET} (scale 10^o)"
        ));
    }
    let p = 10u64.pow(o.unsigned_abs());
    Ok(if o >= 0 {
        ratio_to_f32(p, 1)
    } else {
        ratio_to_f32(1, p)
    })
}

/// The largest |x| over the finite elements (0 if there are none): NaN and ±∞ do not set the
/// scale, they encode as stated in `docs/formats.md`.
pub fn absmax(xs: &[f32]) -> f32 {
    // Branch-free over 16 running maxima so that the loop vectorises: a non-finite |x| (NaN
    // compares false, ∞ is not below ∞) contributes 0.
    const LANES: usize = 16;
    let keep = |m: f32, x: f32| {
        let a = x.abs();
        let a = if a < f32::INFINITY { a } else { 0.0 };
        if a > m {
            a
        } else {
            m
        }
    };
    let mut maxima = [0.0f32; LANES];
    let chunks = xs.chunks_exact(LANES);
    let tail = chunks.remainder();
    for chunk in chunks {
        for (m, &x) in maxima.iter_mut().zip(chunk) {
            *m = keep(*m, x);
        }
    }
    let m = tail.iter().fold(0.0f32, |m, &x| keep(m, x));
    maxima.iter().fold(m, |a, &b| if b > a { b } else { a })
}

/// The tables of one type.
#[derive(Clone, Debug)]
pub struct Codebook {
    pub ty: Q8Type,
    /// Unit value of every code, indexed by code.
    pub values: [f32; 256],
    /// All codes sorted by value (total order: −0 < +0; equal values by code).
    pub sorted: Vec<(f32, u8)>,
    /// The distinct positive magnitudes, ascending: what encoding searches.
    pub magnitudes: Vec<f32>,
    /// The canonical 7-bit field of each magnitude: the lowest field with that value.
    pub magnitude_fields: Vec<u8>,
    /// Exact midpoints of neighbouring magnitudes (f32 + f32 halved is exact in f64).
    pub midpoints: Vec<f64>,
}

impl Codebook {
    fn build(ty: Q8Type) -> Codebook {
        let mut values = [0f32; 256];
        for m in 0..128u8 {
            let (num, den) = ty.magnitude_ratio(m);
            let v = ratio_to_f32(num, den);
            values[m as usize] = v;
            values[(m | SIGN_BIT) as usize] = -v;
        }
        let mut sorted: Vec<(f32, u8)> = (0..=255u8).map(|c| (values[c as usize], c)).collect();
        sorted.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        let mut fields: Vec<u8> = (0..128).collect();
        fields.sort_by(|&a, &b| {
            values[a as usize]
                .total_cmp(&values[b as usize])
                .then(a.cmp(&b))
        });
        fields.dedup_by_key(|m| values[*m as usize]);
        let magnitudes: Vec<f32> = fields.iter().map(|&m| values[m as usize]).collect();
        let midpoints = magnitudes
            .windows(2)
            .map(|w| (w[0] as f64 + w[1] as f64) / 2.0)
            .collect();
        Codebook {
            ty,
            values,
            sorted,
            magnitudes,
            magnitude_fields: fields,
            midpoints,
        }
    }

    /// The code of the magnitude nearest to |x|/scale, with x's sign. Ties (|x| exactly at
    /// scale × a midpoint) go to the larger magnitude; equal magnitudes to the lowest field;
    /// beyond the largest magnitude it saturates. NaN encodes as +(smallest magnitude), ±∞ as
    /// ±(largest); scale 0 gives ±(smallest). `scale` must be finite and >= 0.
    pub fn encode(&self, x: f32, scale: f32) -> u8 {
        debug_assert!(scale.is_finite() && scale >= 0.0, "scale {scale}");
        let (a, sign) = split(x);
        // scale·midpoint is exact in f64 (24 + at most 27 significant bits), so the
        // comparison is the exact real comparison.
        let s = scale as f64;
        let i = if scale == 0.0 {
            0
        } else {
            self.midpoints.partition_point(|&m| m * s <= a)
        };
        self.magnitude_fields[i] | sign
    }

    /// `encode` over a slice into `out` (same length), with the scaled midpoints computed once.
    pub fn encode_slice(&self, xs: &[f32], scale: f32, out: &mut [u8]) {
        assert_eq!(xs.len(), out.len());
        debug_assert!(scale.is_finite() && scale >= 0.0, "scale {scale}");
        let s = scale as f64;
        let scaled: Vec<f64> = self.midpoints.iter().map(|&m| m * s).collect();
        for (x, o) in xs.iter().zip(out.iter_mut()) {
            let (a, sign) = split(*x);
            let i = if scale == 0.0 {
                0
            } else {
                scaled.partition_point(|&m| m <= a)
            };
            *o = self.magnitude_fields[i] | sign;
        }
    }

    /// The code's unit value times `scale`: the f64 product is exact, rounded once to f32.
    pub fn decode(&self, code: u8, scale: f32) -> f32 {
        (self.values[code as usize] as f64 * scale as f64) as f32
    }

    /// `decode` over a slice into `out` (same length).
    pub fn decode_slice(&self, codes: &[u8], scale: f32, out: &mut [f32]) {
        assert_eq!(codes.len(), out.len());
        let scaled: Vec<f32> = (0..=255u8).map(|c| self.decode(c, scale)).collect();
        for (c, o) in codes.iter().zip(out.iter_mut()) {
            *o = scaled[*c as usize];
        }
    }
}

/// |x| as f64 (NaN as 0) and the sign bit of the code (never set for NaN).
fn split(x: f32) -> (f64, u8) {
    if x.is_nan() {
        (0.0, 0)
    } else {
        let sign = if x.is_sign_negative() { SIGN_BIT } else { 0 };
        ((x as f64).abs(), sign)
    }
}

/// Words of a golden format through a codec, as a gradient is sent between workers (seed 003
/// §3.4): the one rule that the training driver's `--compress-grad` and the data-parallel
/// `--compress q8:TYPE` exchange share.
impl Q8Type {
    /// Each word's value divided by `unit` (the batch size, so that the codec sees mean
    /// gradients, as the paper's did), rounded to f32, then compressed with the type's own
    /// scaling: the scale and one code per word. NaN and NaR encode as [`Codebook::encode`]
    /// states.
    pub fn encode_words(
        self,
        calc: &Calc,
        words: &[Bits],
        unit: f64,
    ) -> Result<(f32, Vec<u8>), FormatError> {
        let values: Vec<f32> = words
            .iter()
            .map(|&w| (calc.to_f64(w) / unit) as f32)
            .collect();
        self.compress(&values, self.default_scaling())
    }

    /// Each code's value times `scale` (rounded to f32), times `unit`, rounded into `calc`'s
    /// format: the words a receiver of [`Q8Type::encode_words`] holds.
    pub fn decode_words(self, calc: &Calc, codes: &[u8], scale: f32, unit: f64) -> Vec<Bits> {
        codes
            .iter()
            .map(|&c| calc.from_f64(self.decode(c, scale) as f64 * unit))
            .collect()
    }
}

impl std::str::FromStr for Q8Type {
    type Err = FormatError;
    fn from_str(s: &str) -> Result<Self, FormatError> {
        let name = s.trim();
        let name = name.strip_prefix("q8:").unwrap_or(name);
        match Q8Type::ALL.iter().find(|t| t.name() == name) {
            Some(t) => Ok(*t),
            None => err(format!(
                "unknown 8-bit type {s:?}: expected q8:dynamic-tree, q8:static-tree, q8:linear or q8:mantissa"
            )),
        }
    }
}

impl fmt::Display for Q8Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "q8:{}", self.name())
    }
}
