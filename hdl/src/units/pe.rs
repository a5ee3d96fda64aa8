//! What the systolic array (`units/array.rs`) needs of a PE kind: [`ArrayPe`], one
//! implementation per PE kind of the golden registry, each in its family's module
//! (`lns/mac.rs`, `posit/quire.rs`, `fix/mod.rs`, `dfix/mod.rs`, `float/pe.rs`, `mx/pe.rs`,
//! `float/fdpa_pe.rs`, `nvfp4/pe.rs`; `posit/quire.rs` also for takums), registered in
//! [`PE_GENERATORS`].

use super::{GenError, Params, PeIo, PeKind};
use crate::ir::{Module, StagePlan, E};

/// A runtime control of the PE that travels with the step marked `last`, from PE to PE like
/// the other controls (the dfix read-out shift; the float PE's stochastic row state): an
/// input port of the array, prepared once at its edge, then registered through every PE.
pub(crate) struct Sideband {
    /// The port's name (the array's input, the PE's input; `<port>_out` passes it on).
    pub port: &'static str,
    /// Bits of the array's input port (of each row's part, when `per_row`).
    pub bits: u32,
    /// One value per row (the port is R·`bits` wide, row r in bits r·`bits` up, skewed down
    /// the rows like `a_row<r>`) instead of one for the whole array.
    pub per_row: bool,
    /// What a PE makes of the value it receives before it uses it and passes it on (the
    /// float PE's xorshift32 step), if anything: PE (r, c) then sees pass^(c+1) of its row's.
    pub pass: Option<fn(m: &mut Module, s: &E) -> E>,
    /// Bits of what the PEs receive, for words of `w` bits.
    pub pe_bits: fn(w: u32) -> u32,
    /// The value the PEs receive, made from the port at the array's edge (for words of `w`
    /// bits).
    pub prepare: fn(m: &mut Module, port: &E, w: u32) -> E,
}

/// One PE kind's generator. `stages` is the array's `--stages`: stage 1 is the array's input
/// register, every later one lies inside the PE module.
pub(crate) trait ArrayPe: Sync {
    /// The most `--stages` an array of these PEs takes.
    fn max_stages(&self) -> u32;
    /// Registers inside the accumulation loop: each adds an accumulation the PE interleaves
    /// (none unless the PE says).
    fn loop_registers(&self, _stages: u32) -> u32 {
        0
    }
    /// Registers inside the read-out, after the accumulator; they add to the array's latency
    /// (none unless the PE says).
    fn readout_registers(&self, _stages: u32) -> u32 {
        0
    }
    /// Registers of the PE module on the way from its inputs to its accumulator read-out.
    fn latency(&self, stages: u32) -> u32;
    /// Keep the PE a class of its own in Verilator (large PEs: compile once, run faster).
    fn no_inline(&self) -> bool;
    /// The PE module's candidate boundaries and which of them are cut, for `p` (its stages).
    fn plan(&self, p: &Params) -> (u32, StagePlan);
    /// Names of the flag bits the result carries above the word (low first): each becomes an
    /// output bus of the array beside `c_out` (none unless the PE says).
    fn flags(&self) -> &'static [&'static str] {
        &[]
    }
    /// The control that travels with `last`, if the PE has one (for the design `p`).
    fn sideband(&self, _: &Params) -> Option<Sideband> {
        None
    }
    /// Whether the PE reads out with stochastic rounding (`--rounding stochastic:R`) for
    /// `p`; refused in one line otherwise.
    fn rounds_stochastically(&self, _: &Params) -> bool {
        false
    }
    /// Bits of an operand (the words of `a_in` and `b_in`, one per step): a word of the
    /// format, unless the PE takes something else (the `mx` PE: a block).
    fn operand_bits(&self, p: &Params) -> u32 {
        p.format.width()
    }
    /// Bits of a result word (the words of `c_out`, without the flags): a word of the format
    /// unless the PE reads out another (the `mx` PE: f32).
    fn result_bits(&self, p: &Params) -> u32 {
        p.format.width()
    }
    /// Builds the PE's arithmetic into `pe`: returns {flags, word}, the accumulator's
    /// read-out (rounded once where the accumulator is wide). `side` is the sideband, in the
    /// PE's input cycle.
    fn build(
        &self,
        pe: &mut Module,
        p: &Params,
        io: &PeIo,
        side: Option<&E>,
    ) -> Result<E, GenError>;
}

/// The generator of every PE kind of the registry, by its name: the registration of every
/// PE in this crate (one line each). The families' PEs in the golden registry's order, then
/// the MX block formats' (`lpgen_golden::mx::PE`), the fdpa modes'
/// (`lpgen_golden::float::fdpa::PE`) and NVFP4's (`lpgen_golden::scale::dot::PE`).
pub(crate) static PE_GENERATORS: [(&str, &dyn ArrayPe); 10] = [
    ("lns-kahan", &super::lns::KAHAN_PE),
    ("lns-plain", &super::lns::PLAIN_PE),
    ("posit-quire", &super::posit::QUIRE_PE),
    ("fix", &super::fix::FIX_PE),
    ("dfix", &super::dfix::DFIX_PE),
    ("float", &super::float::FLOAT_PE),
    ("takum-quire", &super::takum::QUIRE_PE),
    ("mx", &super::mx::MX_PE),
    ("fdpa", &super::float::FDPA_PE),
    ("nvfp4", &super::nvfp4::NVFP4_PE),
];

impl PeKind {
    /// The generator of this PE kind.
    pub(crate) fn gen(self) -> &'static dyn ArrayPe {
        PE_GENERATORS
            .iter()
            .find(|(name, _)| *name == self.name())
            .map(|(_, g)| *g)
            .expect("every registry PE has a generator (pe_kinds_are_the_registrys)")
    }
}
