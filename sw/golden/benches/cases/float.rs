//! bf16 and f16 lines: the golden float family (its binary32 path, `FloatFormat::narrow`)
//! beside the `half` crate's `bf16` and `f16`, which compute in f32 and round once more, on
//! the same words. Both sides must give the same words (the checks printed before the table).

use std::hint::black_box;

use half::{bf16, f16};
use lpgen_golden::{Family, FloatFormat, SumMode};
use rand_pcg::Pcg64;

use super::{normals, Case, Kernel, DOT_LEN, PAIRS};

pub use half::{bf16 as Bf16, f16 as F16};

/// One of `half`'s 16-bit types, seen through its bits and f32.
pub trait Half: Copy {
    fn from_word(w: u64) -> Self;
    fn word(self) -> u64;
    fn f32(self) -> f32;
    fn of(x: f32) -> Self;
}

macro_rules! half_impl {
    ($t:ty) => {
        impl Half for $t {
            fn from_word(w: u64) -> Self {
                <$t>::from_bits(w as u16)
            }
            fn word(self) -> u64 {
                u64::from(self.to_bits())
            }
            fn f32(self) -> f32 {
                self.to_f32()
            }
            fn of(x: f32) -> Self {
                <$t>::from_f32(x)
            }
        }
    };
}
half_impl!(bf16);
half_impl!(f16);

/// `half`'s a + b, a · b and naive dot product (each product and sum rounded), on words.
fn half_add<H: Half>(a: u64, b: u64) -> u64 {
    H::of(H::from_word(a).f32() + H::from_word(b).f32()).word()
}
fn half_mul<H: Half>(a: u64, b: u64) -> u64 {
    H::of(H::from_word(a).f32() * H::from_word(b).f32()).word()
}
fn half_dot<H: Half>(a: &[u64], b: &[u64]) -> u64 {
    let s = a.iter().zip(b).fold(H::of(0.0), |s, (&x, &y)| {
        let p = H::of(H::from_word(x).f32() * H::from_word(y).f32());
        H::of(s.f32() + p.f32())
    });
    s.word()
}

/// The operand words of `f` from normally distributed reals (nonzero, finite).
pub fn operands(f: FloatFormat, rng: &mut Pcg64) -> (Vec<u64>, Vec<u64>) {
    let mut words = || -> Vec<u64> {
        normals(rng, PAIRS)
            .into_iter()
            .map(|x| f.from_f64(x))
            .collect()
    };
    (words(), words())
}

/// add, mul and naive dot1024 of `name` (bf16 or f16), ours beside `half`'s `H`; the
/// agreement of every result goes to `checks`.
pub fn cases<'a, H: Half + 'a>(
    name: &'static str,
    f: FloatFormat,
    (a, b): (&'a [u64], &'a [u64]),
    checks: &mut Vec<String>,
) -> Vec<Case<'a>> {
    let f = black_box(f);
    let pairs = a.iter().zip(b);
    let add_diff = pairs
        .clone()
        .filter(|&(&x, &y)| f.add(x, y) != half_add::<H>(x, y));
    let mul_diff = pairs.filter(|&(&x, &y)| f.mul(x, y) != half_mul::<H>(x, y));
    let dots = a.chunks_exact(DOT_LEN).zip(b.chunks_exact(DOT_LEN));
    let ours_dot = move |x: &[u64], y: &[u64]| f.dot(SumMode::Naive, x, y).expect("naive");
    let dot_diff = dots.filter(|&(x, y)| ours_dot(x, y) != half_dot::<H>(x, y));
    checks.push(format!(
        "{name} (half): {} add, {} mul, {} dot1024 results differ",
        add_diff.count(),
        mul_diff.count(),
        dot_diff.count()
    ));
    let case = |op, unit, ours, reference| Case {
        format: name,
        op,
        unit,
        ours,
        softposit: Some(reference),
    };
    vec![
        case(
            "add",
            "Mops/s",
            Kernel::binop(a, b, move |x, y| f.add(x, y)),
            Kernel::binop(a, b, half_add::<H>),
        ),
        case(
            "mul",
            "Mops/s",
            Kernel::binop(a, b, move |x, y| f.mul(x, y)),
            Kernel::binop(a, b, half_mul::<H>),
        ),
        case(
            "naive dot1024",
            "MMAC/s",
            Kernel::dot(a, b, ours_dot),
            Kernel::dot(a, b, half_dot::<H>),
        ),
    ]
}
