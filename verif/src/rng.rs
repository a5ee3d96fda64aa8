//! The suites' deterministic generator: SplitMix64, `lpgen_golden::rng` (one copy for every
//! crate). A run prints its seed; the same seed gives the same stimuli.

pub use lpgen_golden::rng::Rng;

/// A seed from the clock, for runs without `--seed`.
pub fn fresh_seed() -> u64 {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    Rng(t ^ u64::from(std::process::id())).next_u64()
}
