//! Posits from the definition: a bit pattern read bit by bit, and rounding to a format by
//! the bit-string midpoints of adjacent posits.

use super::*;

/// The value of the `n`-bit posit with bit pattern `p` and `es` exponent bits, read bit by bit;
/// `None` for NaR.
///
/// After the sign comes the regime, a run of equal bits ended by the opposite bit (or by the
/// end of the word): a run of m ones means k = m - 1, a run of m zeros k = -m. Then come es
/// exponent bits (those cut off by the end of the word are 0) and the fraction f of the
/// remaining F bits. The value is (1 + f/2^F) · 2^(k·2^es + e). A negative posit is the two's
/// complement of the pattern of its absolute value.
pub(crate) fn decode(n: u32, es: u32, p: u64) -> Option<Dyadic> {
    assert!(n < 64 && p >> n == 0);
    if p == 0 {
        return Some(Dyadic::zero());
    }
    if p == 1 << (n - 1) {
        return None;
    }
    let negative = p >> (n - 1) == 1;
    let w = if negative { (1 << n) - p } else { p };
    // The n-1 bits after the sign, most significant first.
    let bits: Vec<u64> = (0..n - 1).rev().map(|i| (w >> i) & 1).collect();
    let run = bits.iter().take_while(|&&b| b == bits[0]).count();
    let k = if bits[0] == 1 {
        run as i64 - 1
    } else {
        -(run as i64)
    };
    let mut rest = bits.iter().skip(run + 1); // the regime and its terminating bit
    let mut e = 0;
    for _ in 0..es {
        e = 2 * e + *rest.next().unwrap_or(&0) as i64;
    }
    let fraction: Vec<u64> = rest.copied().collect();
    let mut m = BigInt::one(); // the hidden bit
    for &b in &fraction {
        m = m * 2 + b;
    }
    let v = Dyadic::new(m, k * (1 << es) + e - fraction.len() as i64);
    Some(if negative { v.neg() } else { v })
}

/// Rounding to one posit format by the bit-string midpoints.
pub(crate) struct Reference {
    pub(crate) n: u32,
    pub(crate) es: u32,
    pub(crate) underflow: bool,
    /// For small n: the values of the patterns -maxpos ..= maxpos in two's-complement order,
    /// and the midpoints above each of them.
    pub(crate) table: Option<(Vec<Dyadic>, Vec<Dyadic>)>,
}

impl Reference {
    pub(crate) fn new(fmt: &PositFormat) -> Reference {
        let mut r = Reference {
            n: fmt.n,
            es: fmt.es,
            underflow: fmt.underflow,
            table: None,
        };
        if r.n <= 16 {
            let all = -r.maxi()..=r.maxi();
            let values = all.clone().map(|i| r.value(i).into_owned()).collect();
            let mids = all.map(|i| r.midpoint(i).into_owned()).collect();
            r.table = Some((values, mids));
        }
        r
    }

    /// The signed index of maxpos; the posits are the indices -maxi ..= maxi.
    pub(crate) fn maxi(&self) -> i64 {
        (1 << (self.n - 1)) - 1
    }

    pub(crate) fn word(&self, i: i64) -> u64 {
        (i as u64) & ((1 << self.n) - 1)
    }

    pub(crate) fn nar(&self) -> u64 {
        1 << (self.n - 1)
    }

    /// The value of the posit with (signed) pattern i.
    pub(crate) fn value(&self, i: i64) -> Cow<'_, Dyadic> {
        match &self.table {
            Some((values, _)) => Cow::Borrowed(&values[(i + self.maxi()) as usize]),
            None => Cow::Owned(decode(self.n, self.es, self.word(i)).expect("not NaR")),
        }
    }

    /// The bit-string midpoint between the posits i and i + 1: the (N+1)-bit posit 2i + 1.
    pub(crate) fn midpoint(&self, i: i64) -> Cow<'_, Dyadic> {
        match &self.table {
            Some((_, mids)) => Cow::Borrowed(&mids[(i + self.maxi()) as usize]),
            None => {
                let p = ((2 * i + 1) as u64) & ((1 << (self.n + 1)) - 1);
                Cow::Owned(decode(self.n + 1, self.es, p).expect("not NaR"))
            }
        }
    }

    /// The value of a posit word; `None` for NaR.
    pub(crate) fn operand(&self, p: u64) -> Option<Cow<'_, Dyadic>> {
        if p == self.nar() {
            return None;
        }
        let i = ((p << (64 - self.n)) as i64) >> (64 - self.n);
        Some(self.value(i))
    }

    pub(crate) fn round(&self, x: &Exact) -> u64 {
        let x = match x {
            Exact::NaR => return self.nar(),
            x => x,
        };
        let maxi = self.maxi();
        if x.cmp(&Dyadic::zero()) == Ordering::Equal {
            return 0;
        }
        if x.cmp(&self.value(maxi)) != Ordering::Less {
            return self.word(maxi);
        }
        if x.cmp(&self.value(-maxi)) != Ordering::Greater {
            return self.word(-maxi);
        }
        // value(lo) < x < value(hi).
        let (mut lo, mut hi) = (-maxi, maxi);
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            match x.cmp(&self.value(mid)) {
                Ordering::Less => hi = mid,
                Ordering::Equal => return self.word(mid),
                Ordering::Greater => lo = mid,
            }
        }
        if !self.underflow {
            // Never round to zero: between 0 and ±minpos the result is ±minpos.
            if lo == 0 {
                return self.word(1);
            }
            if hi == 0 {
                return self.word(-1);
            }
        }
        match x.cmp(&self.midpoint(lo)) {
            Ordering::Less => self.word(lo),
            Ordering::Greater => self.word(hi),
            Ordering::Equal => self.word(if lo % 2 == 0 { lo } else { hi }),
        }
    }
}
