//! What selects a design: the unit, its PE kind and the parameters (`Params`), the refusal
//! every generator returns (`GenError`), and the top-level module name they give.

use std::fmt;

use lpgen_golden::dfix::DfixFormat;
use lpgen_golden::family::{pe_kind, pe_kinds, FamilyEntry, PeInfo};
use lpgen_golden::float::fdpa::{Fdpa, Shape};
use lpgen_golden::mx::MxFormat;
use lpgen_golden::q8::Q8Type;
use lpgen_golden::scale::ScaledFormat;
use lpgen_golden::{Format, Rounding, SumMode};

use super::{entry, mx, Opt, DFIX_COUNTER_BITS, UNITS};

/// The units `lpgen rtl` knows; each has one entry in [`UNITS`] (name, help, options,
/// stages, generator, lint grid).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    LnsMul,
    LnsAdd,
    LnsKahan,
    PositAdd,
    PositMul,
    PositMac,
    FixMac,
    Alu,
    Vector,
    Array,
    Quant1,
    Q8Enc,
    Q8Dec,
    Convert,
    DfixMonitor,
    FloatAdd,
    FloatMul,
    FloatFma,
    MxDot,
    MxEnc,
    Fdpa,
    Nvfp4Enc,
    Nvfp4Dot,
}

impl Unit {
    pub const ALL: [Unit; 23] = [
        Unit::LnsMul,
        Unit::LnsAdd,
        Unit::LnsKahan,
        Unit::PositAdd,
        Unit::PositMul,
        Unit::PositMac,
        Unit::FixMac,
        Unit::Alu,
        Unit::Vector,
        Unit::Array,
        Unit::Quant1,
        Unit::Q8Enc,
        Unit::Q8Dec,
        Unit::Convert,
        Unit::DfixMonitor,
        Unit::FloatAdd,
        Unit::FloatMul,
        Unit::FloatFma,
        Unit::MxDot,
        Unit::MxEnc,
        Unit::Fdpa,
        Unit::Nvfp4Enc,
        Unit::Nvfp4Dot,
    ];

    /// As `lpgen rtl` names it (the registry's entry).
    pub fn name(self) -> &'static str {
        entry(self).name
    }
}

impl std::str::FromStr for Unit {
    type Err = GenError;
    fn from_str(s: &str) -> Result<Unit, GenError> {
        UNITS
            .iter()
            .find(|e| e.name == s)
            .map(|e| e.unit)
            .ok_or_else(|| {
                let names: Vec<&str> = UNITS.iter().map(|e| e.name).collect();
                GenError(format!(
                    "unknown unit {s:?}: expected one of {}",
                    names.join(", ")
                ))
            })
    }
}

/// A generator refusal: one line naming the problem and the fix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GenError(pub String);

impl fmt::Display for GenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for GenError {}

/// The PE named `name` in a family's registration, found when the program is compiled (a
/// name the registration lacks fails the build), so that the constants below do not depend
/// on the order of a family's PEs.
const fn named(entry: &'static FamilyEntry, name: &str) -> &'static PeInfo {
    let mut i = 0;
    while i < entry.pes.len() {
        let (a, b) = (entry.pes[i].name.as_bytes(), name.as_bytes());
        let mut same = a.len() == b.len();
        let mut j = 0;
        while same && j < a.len() {
            same = a[j] == b[j];
            j += 1;
        }
        if same {
            return &entry.pes[i];
        }
        i += 1;
    }
    panic!("a PE name that the family's registration lacks")
}

/// An array PE kind: one of the golden family registry's (`lpgen_golden::family::pe_kinds`,
/// which says which format family and accumulation it is), each with its generator
/// (`pe::PE_GENERATORS`; `pe_kinds_are_the_registrys` checks that every one has one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PeKind(&'static PeInfo);

#[allow(non_upper_case_globals)]
impl PeKind {
    /// LNS multiply + Kahan-compensated accumulate (seed 000).
    pub const LnsKahan: PeKind = PeKind(named(&lpgen_golden::lns::FAMILY, "lns-kahan"));
    /// LNS multiply + plain accumulate.
    pub const LnsPlain: PeKind = PeKind(named(&lpgen_golden::lns::FAMILY, "lns-plain"));
    /// Posit multiply into a quire, rounded once at read-out.
    pub const PositQuire: PeKind = PeKind(named(&lpgen_golden::posit::FAMILY, "posit-quire"));
    /// Fixed-point MAC with a wide accumulator.
    pub const Fix: PeKind = PeKind(named(&lpgen_golden::fixed::FAMILY, "fix"));
    /// Dynamic fixed point (`dfix:W`): the integer MAC of `Fix`, read out through a runtime
    /// shift into the output group's scale, with the two overflow flags.
    pub const Dfix: PeKind = PeKind(named(&lpgen_golden::dfix::FAMILY, "dfix"));
    /// float:E:M: exact products in an exact fixed-point accumulator over the format's
    /// range, rounded once at read-out (`units/float/pe.rs`).
    pub const Float: PeKind = PeKind(named(&lpgen_golden::float::FAMILY, "float"));
    /// MX blocks (`--format mx:ELEM[:bK]`): each step a block pair's exact dot product,
    /// rounded to f32 and added in f32 (`units/mx/pe.rs`). The block formats' PE, not a
    /// family's (`lpgen_golden::mx::PE`).
    pub const Mx: PeKind = PeKind(&lpgen_golden::mx::PE);
    /// A GPU matrix unit's chunks (`--fdpa MODE`, float formats): each step L operand pairs,
    /// accumulated as the golden fdpa mode (`units/float/fdpa_pe.rs`). A mode's PE, not a
    /// family's (`lpgen_golden::float::fdpa::PE`).
    pub const Fdpa: PeKind = PeKind(&lpgen_golden::float::fdpa::PE);
    /// NVFP4 blocks (`--format nvfp4`): each step a block pair's exact dot product, rounded
    /// to f32 and added in f32; the tensor scales are the host's (`units/nvfp4/pe.rs`). The
    /// NVFP4 blocks' PE, not a family's (`lpgen_golden::scale::dot::PE`).
    pub const Nvfp4: PeKind = PeKind(&lpgen_golden::scale::dot::PE);

    /// The PE kinds no family lists (a block format's or a mode's), in `PE_GENERATORS`' order
    /// after the families'.
    pub const OUTSIDE_FAMILIES: [PeKind; 3] = [PeKind::Mx, PeKind::Fdpa, PeKind::Nvfp4];

    /// Every PE kind: the family registry's, in its order, then the MX PE, the fdpa PE and
    /// the NVFP4 PE.
    pub fn all() -> Vec<PeKind> {
        pe_kinds()
            .map(|(_, info)| PeKind(info))
            .chain(PeKind::OUTSIDE_FAMILIES)
            .collect()
    }

    /// As `--pe` names it.
    pub fn name(self) -> &'static str {
        self.0.name
    }

    /// The registry's word on this PE: its family and the accumulation it performs (`None`
    /// for the PEs no family has, [`PeKind::OUTSIDE_FAMILIES`]).
    pub fn info(self) -> Option<(&'static FamilyEntry, &'static PeInfo)> {
        pe_kind(self.name()).ok()
    }

    /// The registry's default PE of `format`'s family (the first it lists); formats without
    /// PEs (f32) get the registry's first, which the array refuses for them.
    pub fn default_for(format: Format) -> PeKind {
        let info = match format.entry().pes.first() {
            Some(info) => info,
            None => pe_kinds().next().expect("the registry has PEs").1,
        };
        PeKind(info)
    }

    /// The PE of `format`'s family that accumulates in `mode`, as the registry pairs them.
    pub fn for_mode(format: Format, mode: SumMode) -> Result<PeKind, GenError> {
        let entry = format.entry();
        match entry.pes.iter().find(|p| p.mode == mode) {
            Some(pe) => Ok(PeKind(pe)),
            None => Err(GenError(format!(
                "no array PE accumulates {format} in mode '{}' (PEs: {})",
                mode.name(),
                pe_list(entry)
            ))),
        }
    }
}

/// A family's PE names, for messages (`none` where it has none).
fn pe_list(entry: &FamilyEntry) -> String {
    if entry.pes.is_empty() {
        return "none".into();
    }
    entry
        .pes
        .iter()
        .map(|p| p.name)
        .collect::<Vec<_>>()
        .join(", ")
}

impl std::str::FromStr for PeKind {
    type Err = GenError;
    fn from_str(s: &str) -> Result<PeKind, GenError> {
        if let Some(k) = PeKind::OUTSIDE_FAMILIES.into_iter().find(|k| k.name() == s) {
            return Ok(k);
        }
        let (_, info) = pe_kind(s).map_err(|_| {
            let names: Vec<&str> = PeKind::all().iter().map(|k| k.name()).collect();
            GenError(format!(
                "unknown PE kind {s:?}: expected {}",
                lpgen_golden::family::or_list(&names)
            ))
        })?;
        Ok(PeKind(info))
    }
}

/// Everything that selects a design.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Params {
    pub unit: Unit,
    pub format: Format,
    /// Pipeline registers (0 = combinational).
    pub stages: u32,
    /// Array rows and columns (array only); `rows` is also quant1's longest column.
    pub rows: u32,
    pub cols: u32,
    /// Lanes (vector only).
    pub lanes: u32,
    /// PE kind (array only).
    pub pe: PeKind,
    /// The conversion format of an ALU lane (alu, vector; same family; `None`: the format)
    /// and of `convert` (required there).
    pub to: Option<Format>,
    /// The 8-bit type of a q8 codec (q8-enc, q8-dec).
    pub q8: Q8Type,
    /// Bits of each saturating counter (dfix-monitor only).
    pub counter_bits: u32,
    /// The float PE's accumulator format (`--acc`; array with `--pe float` only; `None`: the
    /// exact accumulator).
    pub acc: Option<Format>,
    /// How results are rounded (units with [`Opt::Rounding`]: float-add, float-mul, float-fma):
    /// `nearest`, or `stochastic:R` with R random bits from the golden xorshift32 stream.
    pub rounding: Rounding,
    /// The seed of that stream (`stochastic:R` only): the register resets to
    /// `lpgen_golden::rounding::Xorshift32::from_seed(seed)`, as the golden `Rounder`.
    pub rounding_seed: u64,
    /// The MX block format of an MX unit (`--format mx:ELEM[:bK]`; `format` is then f32,
    /// unused): `Some` exactly for the units that take [`Opt::Mx`].
    pub mx: Option<MxFormat>,
    /// The input word format of `mx-enc` (`--input`; `None`: f32). A format the golden
    /// [`lpgen_golden::mx::MxInput`] takes (checked by `generate`).
    pub input: Option<Format>,
    /// The scaled block format of an NVFP4 unit (`--format nvfp4` or
    /// `scaled/fp4:e2m1/bK/ue4m3|ue5m3/t`; `format` is then f32, unused): `Some` exactly for
    /// the units that take [`Opt::Scaled`].
    pub scaled: Option<ScaledFormat>,
    /// Whether an ALU lane (alu, vector; [`Opt::Sqrt`]) has the `sqrt` opcode (11); without
    /// it code 11 gives zero, as in every lane before issue 46 (golden `Alu::with_sqrt`).
    pub sqrt: bool,
    /// The fdpa mode of an fdpa design (`--fdpa L:F:RHO` or a preset; [`Opt::Fdpa`]), the
    /// golden's: its chunking is resolved against `format` by `Fdpa::plan`.
    pub fdpa: Option<Fdpa>,
}

impl Params {
    /// A unit in a format with the defaults: combinational, 1×1, 1 lane, the family's
    /// default PE.
    pub fn new(unit: Unit, format: Format) -> Params {
        let pe = PeKind::default_for(format);
        Params {
            unit,
            format,
            stages: 0,
            rows: 1,
            cols: 1,
            lanes: 1,
            pe,
            to: None,
            q8: Q8Type::DynamicTree,
            counter_bits: DFIX_COUNTER_BITS,
            acc: None,
            rounding: Rounding::Nearest,
            rounding_seed: 0,
            mx: None,
            input: None,
            scaled: None,
            sqrt: false,
            fdpa: None,
        }
    }

    /// A unit on `dfix:W` words (`array` with the `dfix` PE, `dfix-monitor`).
    pub fn dfix(unit: Unit, f: DfixFormat) -> Params {
        Params::new(unit, Format::Dfix(f))
    }

    /// A unit on the format named `format` (an MX block format: [`Params::mx`]).
    pub fn parse(unit: Unit, format: &str) -> Result<Params, GenError> {
        if lpgen_golden::mx::is_mx(format) {
            let mx: MxFormat = format
                .parse()
                .map_err(|e: lpgen_golden::FormatError| GenError(e.0))?;
            let mut p = Params::new(unit, Format::F32(lpgen_golden::F32));
            p.mx = Some(mx);
            // An array on MX blocks: the MX PE.
            p.pe = PeKind::Mx;
            return Ok(p);
        }
        if lpgen_golden::scale::is_scaled(format) {
            let sf: ScaledFormat = format
                .parse()
                .map_err(|e: lpgen_golden::FormatError| GenError(e.0))?;
            let mut p = Params::new(unit, Format::F32(lpgen_golden::F32));
            p.scaled = Some(sf);
            // An array on NVFP4 blocks: the NVFP4 PE.
            p.pe = PeKind::Nvfp4;
            return Ok(p);
        }
        let f: Format = format
            .parse()
            .map_err(|e: lpgen_golden::FormatError| GenError(e.0))?;
        Ok(Params::new(unit, f))
    }

    /// The format as names, manifests and reports spell it (`dfix:10`, `fix:7:8`).
    pub fn format_name(&self) -> String {
        match (self.mx, self.scaled) {
            (Some(mx), _) => mx.to_string(),
            (None, Some(sf)) => sf.to_string(),
            (None, None) => self.format.to_string(),
        }
    }

    /// The dfix format of a design on dfix words.
    pub fn dfix_format(&self) -> Option<DfixFormat> {
        match self.format {
            Format::Dfix(d) => Some(d),
            _ => None,
        }
    }

    pub fn stages(mut self, s: u32) -> Params {
        self.stages = s;
        self
    }

    /// Results rounded by `rounding`, its random stream seeded with `seed`.
    pub fn rounding(mut self, rounding: Rounding, seed: u64) -> Params {
        self.rounding = rounding;
        self.rounding_seed = seed;
        self
    }
}

/// The top-level module name for a unit and format: `lpgen_lns_mul_lns_5_6_s1`.
pub fn top_name(p: &Params) -> String {
    let f = p.format_name().replace([':', '/'], "_");
    let e = entry(p.unit);
    let mut extra = String::new();
    if e.takes(Opt::Array) {
        extra = format!("_{}x{}_{}", p.rows, p.cols, p.pe.name().replace('-', "_"));
        if let Some(acc) = p.acc {
            extra += &format!("_acc_{}", acc.to_string().replace(':', "_"));
        }
    }
    if e.takes(Opt::Monitor) {
        extra = format!("_{}x{}_c{}", p.rows, p.cols, p.counter_bits);
    }
    if e.takes(Opt::Lanes) {
        extra = format!("_l{}", p.lanes);
    }
    if e.takes(Opt::Rows) {
        extra = format!("_r{}", p.rows);
    }
    if e.takes(Opt::Q8) {
        extra = format!("_{}", p.q8.name().replace('-', "_"));
    }
    if let (true, Rounding::Stochastic(r)) = (e.takes(Opt::Rounding), p.rounding) {
        extra = format!("{extra}_sr{r}");
    }
    if e.takes(Opt::Sqrt) && p.sqrt {
        extra = format!("{extra}_sqrt");
    }
    if let (true, Some(input)) = (e.takes(Opt::Input), mx::shown_input(p)) {
        extra = format!("_in_{}", input.replace(':', "_"));
    }
    if let (true, Some(mode)) = (e.takes(Opt::Fdpa), p.fdpa) {
        // After the array's shape and PE (the fdpa unit has nothing before it).
        extra = format!("{extra}{}", fdpa_name(p.format, mode));
    }
    let to = match p.to {
        Some(t) if e.takes(Opt::To) && t != p.format => {
            format!("_to_{}", t.to_string().replace(':', "_"))
        }
        _ => String::new(),
    };
    format!(
        "lpgen_{}_{f}{to}{extra}_s{}",
        p.unit.name().replace('-', "_"),
        p.stages
    )
}

/// The chunking part of an fdpa design's name: `_l32_f13_rz_e8m13` (a preset by the chunking
/// it resolves to, so that `hopper` and `32:13:rz-e8m13` name one design; `_tf32` for binary32
/// words read as tf32; `_promoteN` for the array PE's promotion), or the mode as given where
/// it does not resolve.
pub(crate) fn fdpa_name(format: Format, mode: Fdpa) -> String {
    let plan = match format {
        Format::Float(f) => mode.plan(&f).ok(),
        _ => None,
    };
    let promote = mode
        .promote
        .map_or(String::new(), |n| format!("_promote{n}"));
    let chunking = match (plan, mode.shape) {
        (Some(pl), _) => format!(
            "_l{}_f{}_{}{}",
            pl.chunk.l,
            pl.chunk.f,
            pl.chunk.rho.name().replace('-', "_"),
            if pl.tf32 { "_tf32" } else { "" }
        ),
        (None, Shape::Preset(pr)) => format!("_{}", pr.name()),
        (None, Shape::Given(c)) => format!("_l{}_f{}_{}", c.l, c.f, c.rho.name().replace('-', "_")),
    };
    chunking + &promote
}

#[cfg(test)]
mod family_tests {
    use super::*;
    use crate::units::pe;

    /// Every PE generator is a PE kind of the golden registry and every registry PE kind has
    /// a generator: the PE ↔ format ↔ accumulation rule is written once, there.
    #[test]
    fn pe_kinds_are_the_registrys() {
        let generators: Vec<&str> = pe::PE_GENERATORS.iter().map(|(n, _)| *n).collect();
        let registry: Vec<&str> = pe_kinds().map(|(_, p)| p.name).collect();
        let n = generators.len();
        let outside: Vec<&str> = PeKind::OUTSIDE_FAMILIES.iter().map(|k| k.name()).collect();
        assert_eq!(generators[n - outside.len()..], outside[..]);
        assert_eq!(generators[..n - outside.len()], registry[..]);
        for k in PeKind::all() {
            match k.info() {
                Some((family, info)) => {
                    assert_eq!(info.name, k.name());
                    assert!(family.pes.contains(info));
                }
                None => assert!(PeKind::OUTSIDE_FAMILIES.contains(&k), "{}", k.name()),
            }
            assert!(k.gen().max_stages() >= 2, "{}", k.name());
            assert_eq!(k.name().parse::<PeKind>().unwrap(), k);
        }
        let e = "mxx".parse::<PeKind>().unwrap_err().0;
        assert!(e.contains("mx, fdpa or nvfp4"), "{e}");
        // The named constants are the registry's PEs of those names.
        for (k, name) in [
            (PeKind::LnsKahan, "lns-kahan"),
            (PeKind::LnsPlain, "lns-plain"),
            (PeKind::PositQuire, "posit-quire"),
            (PeKind::Fix, "fix"),
            (PeKind::Dfix, "dfix"),
        ] {
            assert_eq!(k.name(), name);
            assert_eq!(name.parse::<PeKind>().unwrap(), k);
        }
    }

    /// Every format of a family with PEs defaults to the family's first, and the PE for a
    /// mode is the registry's.
    #[test]
    fn default_and_mode_pes_come_from_the_registry() {
        for (s, pe) in [
            ("lns:5:6", PeKind::LnsKahan),
            ("posit:8:0", PeKind::PositQuire),
            ("fix:7:8", PeKind::Fix),
            ("dfix:10", PeKind::Dfix),
        ] {
            let f: Format = s.parse().unwrap();
            assert_eq!(Params::new(Unit::Array, f).pe, pe, "{s}");
        }
        let lns: Format = "lns:5:6".parse().unwrap();
        assert_eq!(
            PeKind::for_mode(lns, SumMode::Naive).unwrap(),
            PeKind::LnsPlain
        );
        let e = PeKind::for_mode(lns, SumMode::Quire).unwrap_err().0;
        assert!(e.contains("lns-kahan, lns-plain"), "{e}");
        let f32: Format = "f32".parse().unwrap();
        assert!(PeKind::for_mode(f32, SumMode::Naive).is_err());
    }
}
