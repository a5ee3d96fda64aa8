//! SplitMix64 (Steele, Lea and Flood): lpgen's one small deterministic generator, for the
//! test and co-simulation stimuli of every crate (`lpgen_verif::rng` is this). A run prints
//! its seed; the same seed gives the same stimuli on every machine.

/// SplitMix64's finaliser: a bijective mix of 64 bits (each output of the stream is the mix
/// of its state).
pub fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The generator's state; `Rng(seed)` starts a stream.
#[derive(Clone, Debug)]
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        mix(self.0)
    }

    /// Uniform in 0..n (n > 0), by multiply-shift (Lemire; no modulo bias worth a test).
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    pub fn coin(&mut self) -> bool {
        self.next_u64() & 1 == 1
    }

    /// One element of a non-empty slice.
    pub fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len() as u64) as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The published SplitMix64 stream from seed 0 (its first outputs), and `below` in range.
    #[test]
    fn the_stream_is_splitmix64s() {
        let mut r = Rng(0);
        assert_eq!(r.next_u64(), 0xe220_a839_7b1d_cdaf);
        assert_eq!(r.next_u64(), 0x6e78_9e6a_a1b9_65f4);
        let mut r = Rng(7);
        assert!((0..1000).all(|_| r.below(10) < 10));
    }
}
