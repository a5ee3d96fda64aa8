//! √x in LNS: the log halved, an arithmetic shift of the code.
//!
//! √(2^(c/2^F)) = 2^((c/2)/2^F). An even code c halves exactly. An odd code's half lies
//! exactly between the codes ⌊c/2⌋ and ⌊c/2⌋ + 1: a tie in the log domain, at the geometric
//! midpoint of the two values. The family's rounding of the log (to nearest) does not decide
//! it, and the value decides it: the arithmetic midpoint of 2^(k/2^F) and 2^((k+1)/2^F) lies
//! strictly above their geometric midpoint (AM > GM for two different values), so √x is
//! nearer the lower one. The result is therefore ⌊c/2⌋ (`c >> 1`), the correctly rounded
//! value on the LNS grid, and the hardware is a shift with no increment. (A conversion to
//! fewer fraction bits, `lns_convert`, breaks the same geometric tie to the even code
//! instead: it rounds a log given with more bits, where ties are rare and even is the
//! unbiased choice; here every odd code is one, and the lower value is the nearer.)
//!
//! Zero gives zero, NaN and every negative value give NaN. The result never saturates or
//! flushes: ⌊c/2⌋ lies between the smallest and the largest code whenever c does.

use super::LnsFormat;

impl LnsFormat {
    /// √a: the code halved, rounded down (the correctly rounded value); zero gives zero,
    /// NaN and negative values NaN.
    pub fn sqrt(&self, a: u64) -> u64 {
        let (neg, c) = self.unpack(a);
        if c == self.code_reserved() {
            return a; // zero or NaN
        }
        if neg {
            return self.nan();
        }
        self.pack(false, c >> 1)
    }
}
