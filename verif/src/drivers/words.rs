//! Operand generators (corner cases and random words), and the LNS golden operations with
//! their overflow flags (`lpgen_golden::Lns::*_flagged`).

use lpgen_golden::{
    DfixFormat, Family, FixAcc, FixFormat, FloatFormat, Format, GTables, Lns, LnsFormat,
    PositFormat, TakumFormat, F32,
};

use crate::rng::Rng;

/// LNS operands and golden results with the RTL's `overflow` flag, which the golden model
/// defines (`Lns::add_flagged` and the others: the result saturated at ±code_max).
pub struct LnsRef {
    pub f: LnsFormat,
    pub l: Lns,
    t: &'static GTables,
}

impl LnsRef {
    pub fn new(f: LnsFormat) -> LnsRef {
        LnsRef {
            f,
            l: f.ctx(),
            t: GTables::get(f.int_bits, f.frac_bits),
        }
    }

    /// (a·b or a/b, overflow) by the golden flagged operations.
    pub fn mul(&self, a: u64, b: u64, div: bool) -> (u64, bool) {
        if div {
            self.l.div_flagged(a, b)
        } else {
            self.l.mul_flagged(a, b)
        }
    }

    /// (a ± b, overflow) by the golden flagged operations.
    pub fn add(&self, a: u64, b: u64, sub: bool) -> (u64, bool) {
        if sub {
            self.l.sub_flagged(a, b)
        } else {
            self.l.add_flagged(a, b)
        }
    }

    /// Zero, NaN, ±max, ±min, ±1.
    pub fn specials(&self) -> Vec<u64> {
        let f = self.f;
        let mut v = vec![f.zero(), f.nan()];
        for neg in [false, true] {
            for c in [
                f.code_max(),
                f.code_max() - 1,
                f.code_min(),
                f.code_min() + 1,
                0,
                1,
                -1,
            ] {
                v.push(f.pack(neg, c));
            }
        }
        v
    }

    /// A pair for an adder or multiplier: random, near each other (the G tables read over
    /// their length, cancellation), ±equal, or special.
    pub fn pair(&self, r: &mut Rng) -> (u64, u64) {
        let f = self.f;
        let m = (1u64 << f.width()) - 1;
        let reach = self.t.sb.len().max(self.t.db.len()) as i64 + 4;
        let sp = self.specials();
        let a = if r.below(16) == 0 {
            r.pick(&sp)
        } else {
            r.next_u64() & m
        };
        let ca = f.unpack(a).1;
        let b = match r.below(16) {
            0 => r.pick(&sp),
            1 => a,
            2 => a ^ (1 << f.log_width()),
            3..=6 => r.next_u64() & m,
            _ => {
                let c = (i64::from(ca) + r.below(2 * reach as u64 + 1) as i64 - reach)
                    .clamp(i64::from(f.code_min()), i64::from(f.code_max()));
                f.pack(r.coin(), c as i32)
            }
        };
        if r.coin() {
            (a, b)
        } else {
            (b, a)
        }
    }

    /// A dot-product operand: mostly moderate, sometimes large, rarely special.
    pub fn operand(&self, r: &mut Rng) -> u64 {
        let f = self.f;
        let neg = r.coin();
        let span = |r: &mut Rng, lo: i32, hi: i32| lo + r.below((hi - lo + 1) as u64) as i32;
        match r.below(64) {
            0 => r.pick(&self.specials()),
            1..=6 => f.pack(neg, span(r, f.code_min(), f.code_max())),
            _ => f.pack(neg, span(r, -f.code_max() / 4, f.code_max() / 4)),
        }
    }
}

/// Zero, NaR, ±minpos, ±maxpos, ±1 and their neighbours.
pub fn posit_specials(f: PositFormat) -> Vec<u64> {
    let m = f.mask();
    let base = [
        0,
        f.nar(),
        1,
        2,
        3,
        f.maxpos(),
        f.maxpos() - 1,
        f.one(),
        f.one() + 1,
        f.one() - 1,
    ];
    let mut v: Vec<u64> = base.iter().map(|&x| x & m).collect();
    v.extend(base.iter().map(|&x| f.neg(x & m)));
    v.sort_unstable();
    v.dedup();
    v
}

/// A posit: uniform, near one, short fraction (rounding ties), or special; either sign.
pub fn posit_word(r: &mut Rng, f: PositFormat) -> u64 {
    let w = match r.below(10) {
        0..=2 => r.next_u64() & f.mask(),
        3..=5 => {
            let spread = 1u64 << (f.n - 3);
            (f.one() + r.below(2 * spread) - spread) & f.mask()
        }
        6..=8 => {
            let cut = r.below(u64::from(f.n) - 1);
            (r.next_u64() & f.mask()) >> cut << cut
        }
        _ => r.pick(&posit_specials(f)),
    };
    if r.coin() {
        f.neg(w)
    } else {
        w
    }
}

/// A posit pair: words, or b close to ±a (cancellation).
pub fn posit_pair(r: &mut Rng, f: PositFormat) -> (u64, u64) {
    let a = posit_word(r, f);
    let b = if r.below(4) == 0 {
        let x = a.wrapping_add(r.below(64)).wrapping_sub(32) & f.mask();
        if r.coin() {
            f.neg(x)
        } else {
            x
        }
    } else {
        posit_word(r, f)
    };
    (a, b)
}

/// Fix extremes: max, min, 0, ±ulp, ±1.
pub fn fix_specials(f: FixFormat) -> Vec<u64> {
    let m = (1u64 << f.width()) - 1;
    let mut v = vec![
        f.from_int(i128::from(f.max_int())),
        f.from_int(i128::from(f.min_int())),
        0,
        1,
        m,
        f.one() & m,
        f.neg(f.one()) & m,
        f.from_int(i128::from(f.max_int()) - 1),
    ];
    v.sort_unstable();
    v.dedup();
    v
}

/// A fix word: small (|x| < 2, sums stay in range and exercise rounding), uniform, or extreme.
pub fn fix_word(r: &mut Rng, f: FixFormat, small: bool) -> u64 {
    match r.below(if small { 64 } else { 8 }) {
        0 => r.pick(&fix_specials(f)),
        _ if small => f.from_f64(r.below(1 << 20) as f64 / f64::from(1 << 18) - 2.0),
        _ => r.next_u64() & ((1u64 << f.width()) - 1),
    }
}

/// acc −= a·b on the golden accumulator, exactly: a·(−b), and for b = min, a·max + a·ulp.
pub fn fix_sub_product(f: FixFormat, acc: &mut FixAcc, a: u64, b: u64) {
    if f.to_int(b) == f.min_int() {
        acc.add_product(a, f.from_int(i128::from(f.max_int())));
        acc.add_product(a, f.from_int(1));
    } else {
        acc.add_product(a, f.neg(b));
    }
}

/// What the drivers need of a number family's words: corner cases and random operands. One
/// implementation per family (above: LNS, posit, fix; below: dfix and f32, which only the
/// codec drivers meet), registered in [`VerifFamily`].
pub(crate) trait FamilyWords {
    /// Corner-case words: zero, NaN/NaR, ±1, the extremes and their neighbours.
    fn specials(&self) -> Vec<u64>;
    /// A random operand of a dot product or lane; `small`: magnitudes whose sums and products
    /// stay in range (fix).
    fn word(&self, r: &mut Rng, small: bool) -> u64;
    /// A random operand pair of a two-operand unit: where the family defines one, pairs
    /// near each other as well (cancellation, alignment), else two words.
    fn pair(&self, r: &mut Rng) -> (u64, u64) {
        (self.word(r, false), self.word(r, false))
    }
}

/// The drivers' view of a number family: this crate's one extension point per family (an
/// impl below for each; the golden registry's `with_family!` dispatches to them, so a family
/// without one does not compile).
pub(crate) trait VerifFamily {
    /// The family's corner cases and random operands.
    fn words(&self) -> Box<dyn FamilyWords>;
}

/// The words of `f`'s family.
pub(crate) fn family_words(f: Format) -> Box<dyn FamilyWords> {
    lpgen_golden::with_family!(f, x => x.words())
}

impl VerifFamily for LnsFormat {
    fn words(&self) -> Box<dyn FamilyWords> {
        Box::new(LnsRef::new(*self))
    }
}

impl VerifFamily for PositFormat {
    fn words(&self) -> Box<dyn FamilyWords> {
        Box::new(*self)
    }
}

impl VerifFamily for FixFormat {
    fn words(&self) -> Box<dyn FamilyWords> {
        Box::new(*self)
    }
}

impl VerifFamily for FloatFormat {
    fn words(&self) -> Box<dyn FamilyWords> {
        Box::new(*self)
    }
}

impl VerifFamily for DfixFormat {
    fn words(&self) -> Box<dyn FamilyWords> {
        Box::new(BitPatterns(Format::Dfix(*self)))
    }
}

impl VerifFamily for F32 {
    fn words(&self) -> Box<dyn FamilyWords> {
        Box::new(BitPatterns(Format::F32(*self)))
    }
}

impl VerifFamily for TakumFormat {
    fn words(&self) -> Box<dyn FamilyWords> {
        Box::new(BitPatterns(Format::Takum(*self)))
    }
}

impl FamilyWords for LnsRef {
    fn specials(&self) -> Vec<u64> {
        LnsRef::specials(self)
    }
    fn word(&self, r: &mut Rng, _: bool) -> u64 {
        self.operand(r)
    }
    fn pair(&self, r: &mut Rng) -> (u64, u64) {
        LnsRef::pair(self, r)
    }
}

impl FamilyWords for PositFormat {
    fn specials(&self) -> Vec<u64> {
        posit_specials(*self)
    }
    fn word(&self, r: &mut Rng, _: bool) -> u64 {
        posit_word(r, *self)
    }
    fn pair(&self, r: &mut Rng) -> (u64, u64) {
        posit_pair(r, *self)
    }
}

impl FamilyWords for FixFormat {
    /// The lanes' corners of two's-complement words ([`BitPatterns`]), not [`fix_specials`]
    /// (the MAC's).
    fn specials(&self) -> Vec<u64> {
        BitPatterns(Format::Fix(*self)).specials()
    }
    fn word(&self, r: &mut Rng, small: bool) -> u64 {
        fix_word(r, *self, small)
    }
}

/// Words chosen by their bit patterns: 0, 1, all ones, the sign bit and its neighbours, the
/// format's ±1, 2, all ones less one (dfix and f32 words, and the fix lanes' corners).
pub(crate) struct BitPatterns(pub Format);

impl FamilyWords for BitPatterns {
    fn specials(&self) -> Vec<u64> {
        let w = self.0.width();
        let m = (1u64 << w) - 1;
        let c = self.0.calc();
        let half = 1u64 << (w - 1);
        vec![
            0,
            1,
            m,
            half,
            half + 1,
            half - 1,
            c.one(),
            c.neg(c.one()) & m,
            2,
            m - 1,
        ]
    }
    fn word(&self, r: &mut Rng, _: bool) -> u64 {
        r.next_u64() & ((1u64 << self.0.width()) - 1)
    }
}
