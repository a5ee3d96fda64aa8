//! `--rounding stochastic:R` in training (issue 32): where values are stored, results are
//! rounded stochastically with the golden model's rounding stream (`lpgen_golden::rounding`,
//! docs/formats.md "Stochastic rounding"), one stream per run, seeded by `--seed`.
//!
//! The stream is handed out tensor by tensor, in the order the run computes them
//! ([`Stream::take`]): a tensor of n results takes the next n positions, element i (row-major)
//! the i-th, whether or not its result is exact. docs/train.md lists the tensors. A result at
//! position p is rounded with the generator as it stands after p steps from the seed's state:
//! the golden `Rounder` at that state takes one step and compares the top R bits.
//! Checkpoints save the generator's state and the count, so `--resume` goes on where the run
//! stopped.

use lpgen_golden::rounding::{Rounder, Rounding, Xorshift32};
use lpgen_golden::Format;

use crate::TrainError;

/// The rounding of each result of one tensor: `rounding` with the generator at `states[i]`
/// for element i.
#[derive(Clone, Debug, PartialEq)]
pub struct Draws {
    pub rounding: Rounding,
    pub states: Vec<u32>,
}

impl Draws {
    /// The rounder of element `i` (it takes one step, as the golden operation draws once).
    pub fn rounder(&self, i: usize) -> Rounder {
        let gen = Xorshift32::at(self.states[i]).expect("xorshift32 states are nonzero");
        Rounder::with_generator(self.rounding, gen)
    }

    /// One draw per result of a tensor of `results`, or the trainer bug that broke it.
    pub fn check(&self, results: usize) -> Result<(), TrainError> {
        if self.len() != results {
            return Err(TrainError(format!(
                "{} draws for {results} results (a trainer bug)",
                self.len()
            )));
        }
        Ok(())
    }

    pub fn len(&self) -> usize {
        self.states.len()
    }

    pub fn is_empty(&self) -> bool {
        self.states.is_empty()
    }
}

/// A run's stochastic-rounding stream: where it stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stream {
    pub rounding: Rounding,
    gen: Xorshift32,
    /// Positions handed out so far.
    pub taken: u64,
}

impl Stream {
    /// The stream of a run with `seed`: the golden generator from that seed, at position 0.
    pub fn new(rounding: Rounding, seed: u64) -> Stream {
        Stream {
            rounding,
            gen: Xorshift32::from_seed(seed),
            taken: 0,
        }
    }

    /// The next `n` positions, for a tensor of n results.
    pub fn take(&mut self, n: usize) -> Draws {
        let mut states = Vec::with_capacity(n);
        for _ in 0..n {
            states.push(self.gen.state());
            self.gen.step();
        }
        self.taken += n as u64;
        Draws {
            rounding: self.rounding,
            states,
        }
    }

    /// The checkpoint's line: the generator's state and the positions taken (hex).
    pub fn save(&self) -> String {
        format!("{:x} {:x}", self.gen.state(), self.taken)
    }

    /// Restores what [`Stream::save`] wrote.
    pub fn restore(&mut self, line: &str) -> Result<(), TrainError> {
        let bad = |why: &str| TrainError(format!("checkpoint rounding stream is unusable: {why}"));
        let parts: Vec<&str> = line.split(' ').collect();
        let [state, taken] = parts[..] else {
            return Err(bad("expected a state and a count"));
        };
        let state = u32::from_str_radix(state, 16).map_err(|_| bad("bad state"))?;
        self.gen = Xorshift32::at(state).ok_or_else(|| bad("a zero state"))?;
        self.taken = u64::from_str_radix(taken, 16).map_err(|_| bad("bad count"))?;
        Ok(())
    }
}

/// Whether every stage format rounds by `rounding` (all do to nearest): the golden family's
/// one-line refusal otherwise.
pub fn check(rounding: Rounding, stages: &[Format]) -> Result<(), TrainError> {
    for f in stages {
        f.calc()
            .check_rounding(rounding)
            .map_err(|e| TrainError(e.0))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Positions follow one another across tensors, and a saved stream restored goes on
    /// where it stood (the state seed 0 gives is docs/formats.md's pinned 0xe220a839).
    #[test]
    fn the_stream_goes_on_across_tensors_and_checkpoints() {
        let mut s = Stream::new(Rounding::Stochastic(8), 0);
        let a = s.take(3);
        assert_eq!(a.states[0], 0xe220a839);
        assert_eq!(a.states[1], 0x13d986ea);
        let mut whole = Stream::new(Rounding::Stochastic(8), 0);
        let all = whole.take(7);
        let saved = s.save();
        let mut back = Stream::new(Rounding::Stochastic(8), 0);
        back.restore(&saved).unwrap();
        assert_eq!(back.taken, 3);
        let b = back.take(4);
        assert_eq!([a.states, b.states].concat(), all.states);
        assert!(back.restore("0 5").is_err() && back.restore("x").is_err());
    }
}
