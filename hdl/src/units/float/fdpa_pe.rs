//! The `fdpa` array PE (issue 49): `lpgen rtl array --pe fdpa --fdpa MODE --format F` on a
//! float format F. Each step of the array is one chunk of L operand pairs: PE (r, c) gets
//! words k·L .. k·L + L − 1 of row r of A and of column c of B, and accumulates as the golden
//! `FdpaPlan::dot` does (`lpgen_golden::float::fdpa`; docs/formats.md, "fdpa"): the chunk
//! carry C ← step(chunk, C), from C = +0 at `clear`. The read-out is the golden mode's dot
//! product in F (`FdpaPlan::dot_in_format`): the output word (binary32, or binary16 for
//! `rne-f16`) converted to F, rounded once to nearest even.
//!
//! Operand word (L·N bits): word i of the chunk at bits [i·N +: N]. A K that is not a
//! multiple of L ends in a chunk padded with +0 words: a zero product stands at e_zero, which
//! is never above C's exponent (C = +0 stands there too), so the padding changes nothing.
//!
//! `:promoteN` (DeepSeek-V3's promotion; N a multiple of L, binary32 output): every N/L
//! chunks the carry, started from +0, is added into a binary32 accumulator rounded to
//! nearest even (float-add's datapath). A chunk counter marks the interval's first chunk
//! (carry from +0) and its last (the carry goes into the accumulator). Every step also keeps
//! the sum of the accumulator and the step's carry (`promoted_now`): the read-out after a
//! `last` step that ends no interval is the golden's (the last, short interval added), and
//! the accumulator itself is left for the steps after a snapshot.
//!
//! The datapath is the `fdpa` unit's ([`fdpa_core`]), in the PE's one-cycle accumulation
//! loop (C is one of the chunk's terms: its exponent takes part in e_max). Candidate
//! boundaries: the operand register (0, cut at array stages 2), then the core's
//! [`FDPA_STAGES`], float-add's [`ADD_STAGES`] with promotion, and the read-out conversion's
//! [`CONVERT_STAGES`], none of them cut (all in the loop or after the accumulator).

use lpgen_golden::float::fdpa::FdpaPlan;
use lpgen_golden::Format;

use super::convert::float_to_float;
use super::fdpa::{fdpa_core, FDPA_STAGES, MAX_FDPA_L};
use super::{add_decoded, decode, float_format, ADD_STAGES, CONVERT_STAGES};
use crate::ir::{konst, mux, Module, StagePlan, E};
use crate::units::pe::ArrayPe;
use crate::units::{GenError, Params, PeIo, PeKind, Unit};

/// The golden plan of an fdpa array (promotion allowed), or the one-line refusal: a float
/// format, `--fdpa` given, a chunking the preset lists for the format, L ≤ [`MAX_FDPA_L`].
pub(crate) fn pe_plan(p: &Params) -> Result<FdpaPlan, GenError> {
    if !matches!(p.format, Format::Float(_)) {
        return Err(GenError(format!(
            "array PE 'fdpa' works on float formats (float:E:M, bf16, f16, fp8:e4m3, …), not {}",
            p.format
        )));
    }
    let f = float_format(p.format, "the fdpa PE")?;
    let Some(mode) = p.fdpa else {
        return Err(GenError(
            "array PE 'fdpa' needs --fdpa PRESET[:promoteN] (volta, ampere, ada, hopper, \
             blackwell) or --fdpa L:F:RHO[:promoteN]"
                .into(),
        ));
    };
    let plan = mode.plan(&f).map_err(|e| GenError(e.0))?;
    if plan.chunk.l > MAX_FDPA_L {
        return Err(GenError(format!(
            "array PE 'fdpa': L = {} is over the limit of {MAX_FDPA_L} (twice the longest \
             chunk of any preset)",
            plan.chunk.l
        )));
    }
    Ok(plan)
}

/// Refuses `--fdpa` on an array of another PE kind, and `--pe fdpa` without a usable mode.
pub(crate) fn check_array(p: &Params) -> Result<(), GenError> {
    match (p.pe == PeKind::Fdpa, p.fdpa) {
        (true, _) => pe_plan(p).map(|_| ()),
        (false, Some(m)) => Err(GenError(format!(
            "--fdpa {} is for --pe fdpa (and the fdpa unit), not array PE '{}'",
            m.to_string().trim_start_matches("fdpa:"),
            p.pe.name()
        ))),
        (false, None) => Ok(()),
    }
}

/// The most array `--stages` of the fdpa PE: the input register and the operand register.
pub(crate) const FDPA_PE_MAX_STAGES: u32 = 2;

/// The `fdpa` array PE.
pub(crate) struct FdpaPe;

pub(crate) static FDPA_PE: FdpaPe = FdpaPe;

impl ArrayPe for FdpaPe {
    fn max_stages(&self) -> u32 {
        FDPA_PE_MAX_STAGES
    }
    fn latency(&self, stages: u32) -> u32 {
        stages.saturating_sub(1)
    }
    fn no_inline(&self) -> bool {
        true
    }
    fn plan(&self, p: &Params) -> (u32, StagePlan) {
        let promote = pe_plan(p).ok().and_then(|pl| pl.promote).is_some();
        let add = if promote { ADD_STAGES } else { 0 };
        let cuts: &[usize] = if p.stages >= 2 { &[0] } else { &[] };
        (1 + FDPA_STAGES + add + CONVERT_STAGES, StagePlan::at(cuts))
    }
    fn operand_bits(&self, p: &Params) -> u32 {
        pe_plan(p).map_or(p.format.width(), |pl| pl.chunk.l * pl.fmt.width())
    }
    fn build(&self, pe: &mut Module, p: &Params, io: &PeIo, _: Option<&E>) -> Result<E, GenError> {
        let plan = pe_plan(p)?;
        pe.comment("the operand register (array --stages 2)");
        pe.stage();
        let d = match plan.promote {
            None => carry_loop(pe, &plan, io),
            Some(n) => promoted_loop(pe, &plan, io, n),
        };
        pe.comment(&format!(
            "read-out: the output word converted to {}, rounded once to nearest even",
            plan.fmt
        ));
        Ok(float_to_float(pe, plan.output(), plan.fmt, &d))
    }
}

/// C ← step(chunk, clear ? +0 : C): the carry register, the PE's result.
fn carry_loop(pe: &mut Module, plan: &FdpaPlan, io: &PeIo) -> E {
    let w = plan.output().width();
    pe.comment(&format!(
        "the chunk loop: C = step(chunk, clear ? +0 : C), the fdpa datapath in one cycle \
         ({} products and C)",
        plan.chunk.l
    ));
    let carry = pe.state("carry", w, Some(0));
    let base = pe.wire("carry_base", &mux(&io.clear, &konst(w, 0), &carry));
    let d = fdpa_core(pe, plan, &io.a, &io.b, &base);
    let d = pe.wire("carry_next", &d);
    pe.drive(&carry, &d, Some(&io.enable));
    carry
}

/// The chunk loop with promotion every `n` products (module docs); returns the register of
/// the promoted sum after the latest step.
fn promoted_loop(pe: &mut Module, plan: &FdpaPlan, io: &PeIo, n: u32) -> E {
    let out = plan.output();
    let w = out.width();
    let chunks = n / plan.chunk.l;
    let cw = (32 - (chunks - 1).leading_zeros()).max(1);
    pe.comment(&format!(
        "promotion every {n} products: {chunks} chunks an interval, counted (PROMOTE_CHUNKS)"
    ));
    let count = pe.state("chunk_count", cw, Some(0));
    let index = pe.wire("chunk_index", &mux(&io.clear, &konst(cw, 0), &count));
    let first = pe.wire("interval_first", &index.eq_k(0));
    let last_k = crate::ir::named("PROMOTE_CHUNKS_LAST", cw, u128::from(chunks - 1));
    let ends = pe.wire("interval_ends", &index.eq(&last_k));
    pe.comment("the chunk loop: C = step(chunk, first of its interval ? +0 : C)");
    let carry = pe.state("carry", w, Some(0));
    let base = pe.wire("carry_base", &mux(&first, &konst(w, 0), &carry));
    let d = fdpa_core(pe, plan, &io.a, &io.b, &base);
    let d = pe.wire("carry_next", &d);
    pe.drive(&carry, &d, Some(&io.enable));
    let next = index.add(&konst(cw, 1));
    let next = pe.wire("chunk_count_next", &mux(&ends, &konst(cw, 0), &next));
    pe.drive(&count, &next, Some(&io.enable));
    pe.comment("the binary32 accumulator: P + C rounded to nearest even (float-add's datapath)");
    let acc = pe.state("promoted", w, Some(0));
    let acc_base = pe.wire("promoted_base", &mux(&io.clear, &konst(w, 0), &acc));
    let da = decode(pe, out, "promoted", &acc_base);
    let dc = decode(pe, out, "carry", &d);
    let sum = add_decoded(pe, out, &da, &dc, &konst(1, 0), None);
    let sum = pe.wire("promoted_sum", &sum);
    let acc_next = pe.wire("promoted_next", &mux(&ends, &sum, &acc_base));
    pe.drive(&acc, &acc_next, Some(&io.enable));
    let now = pe.state("promoted_now", w, Some(0));
    pe.drive(&now, &sum, Some(&io.enable));
    now
}

/// The fdpa array designs of the lint grid: lean, fp8 E4M3 Hopper 1×1 at stages 0..=2 and a
/// 2×2 with :promote64 at 2; full, also bf16 Ampere 2×3, f16 into binary16 and fp4 pairs.
pub(crate) fn array_grid(full: bool) -> Vec<Params> {
    let mut designs = vec![
        ("fp8:e4m3", "hopper", (1, 1), 0),
        ("fp8:e4m3", "hopper", (1, 1), 1),
        ("fp8:e4m3", "hopper", (1, 1), 2),
        ("fp8:e4m3", "hopper:promote64", (2, 2), 2),
    ];
    if full {
        designs.extend([
            ("bf16", "ampere", (2, 3), 0),
            ("bf16", "ampere:promote16", (2, 3), 1),
            ("f16", "4:12:rne-f16", (2, 2), 2),
            ("float:2:1", "2:3:rz-f32", (4, 4), 0),
        ]);
    }
    designs
        .into_iter()
        .map(|(f, mode, (r, c), s)| array_params(f, mode, r, c).stages(s))
        .collect()
}

/// An R×C array of fdpa PEs on `format` with `--fdpa mode`.
pub fn array_params(format: &str, mode: &str, rows: u32, cols: u32) -> Params {
    let mut p = Params::new(Unit::Array, format.parse().expect("a float format"));
    (p.rows, p.cols, p.pe) = (rows, cols, PeKind::Fdpa);
    p.fdpa = Some(
        lpgen_golden::float::fdpa::Fdpa::parse(&format!("fdpa:{mode}")).expect("an fdpa mode"),
    );
    p
}
