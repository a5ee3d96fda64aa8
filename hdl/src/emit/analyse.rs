//! Analysis of the lowered module: which signals are live (reach an output) and which of
//! their bits the live logic reads, so that only live signals are printed and bits computed
//! but never read are declared inside `verilator lint_off UNUSED`.

use super::lower::LoweredModule;
use crate::ir::{Node, SigId, SigKind, E};

/// The lowered module with its liveness and bit use.
pub(super) struct Analysed<'m> {
    pub lowered: LoweredModule<'m>,
    /// Signal reaches an output (or is a port).
    pub live: Vec<bool>,
    /// Per signal, per bit: read by live logic (or a port bit).
    pub used: Vec<Vec<bool>>,
    /// The address signal of each ROM read's output signal.
    pub rom_addr_of: Vec<Option<SigId>>,
    /// An output of a live instance that nothing reads: left unconnected (`.port()`), not
    /// declared (an array's edge PEs pass their operands on to no neighbour).
    pub unconnected: Vec<bool>,
}

/// Calls `f(signal, bits)` for every signal `e` reads: `bits` is `Some((hi, lo))` for a slice
/// of the signal, `None` when all of it is read.
fn visit_sigs(e: &E, f: &mut impl FnMut(SigId, Option<(u32, u32)>)) {
    match &*e.node {
        Node::Sig(s) => f(*s, None),
        Node::Const(_) | Node::Named(..) => {}
        Node::Slice(x, hi, lo) => match x.sig() {
            Some(s) => f(s, Some((*hi, *lo))),
            None => visit_sigs(x, f),
        },
        Node::Concat(xs) => xs.iter().for_each(|x| visit_sigs(x, f)),
        Node::Repeat(x, _) | Node::Not(x) | Node::Reduce(_, x) | Node::Rom(_, x) => {
            visit_sigs(x, f)
        }
        Node::Bin(_, a, b) | Node::Cmp(_, a, b) | Node::Shift(_, a, b) => {
            visit_sigs(a, f);
            visit_sigs(b, f);
        }
        Node::Mux(c, a, b) => {
            visit_sigs(c, f);
            visit_sigs(a, f);
            visit_sigs(b, f);
        }
    }
}

/// Marks the bits of each signal that `e` reads.
fn mark_used(e: &E, used: &mut [Vec<bool>]) {
    visit_sigs(e, &mut |s, bits| {
        let (hi, lo) = bits.unwrap_or((used[s].len() as u32 - 1, 0));
        (lo..=hi).for_each(|i| used[s][i as usize] = true);
    });
}

fn sigs_of(e: &E, out: &mut Vec<SigId>) {
    visit_sigs(e, &mut |s, _| out.push(s));
}

/// Every expression that drives each signal: its assignment, its delay's source, its state
/// register's next value and enable, and for an instance's outputs all the instance's inputs.
fn drivers(l: &LoweredModule) -> (Vec<Vec<E>>, Vec<Option<usize>>) {
    let m = l.low.m;
    let n = l.low.signals.len();
    let mut driver: Vec<Vec<E>> = vec![vec![]; n];
    for (id, e) in &l.low.assigns {
        driver[*id].push(e.clone());
    }
    for (d, src, _) in &m.delays {
        driver[*d].push(E {
            node: std::rc::Rc::new(Node::Sig(*src)),
            width: m.signals[*src].width,
        });
    }
    for (id, _, next, en) in &l.states {
        driver[*id].push(next.clone());
        if let Some(en) = en {
            driver[*id].push(en.clone());
        }
    }
    // An instance drives its outputs from its inputs; one live output keeps all of them.
    let mut instance_of: Vec<Option<usize>> = vec![None; n];
    for (k, inst) in m.instances.iter().enumerate() {
        for (_, out) in &inst.outputs {
            driver[*out].extend(l.instances[k].iter().map(|(_, e)| e.clone()));
            instance_of[*out] = Some(k);
        }
    }
    (driver, instance_of)
}

/// Liveness from the ports: a signal is live if a live signal reads it.
fn liveness(
    l: &LoweredModule,
    driver: &[Vec<E>],
    instance_of: &[Option<usize>],
    rom_addr_of: &[Option<SigId>],
) -> Vec<bool> {
    let n = l.low.signals.len();
    let mut live = vec![false; n];
    let mut work: Vec<SigId> = (0..n)
        .filter(|&i| matches!(l.low.signals[i].kind, SigKind::Output | SigKind::Input))
        .collect();
    while let Some(s) = work.pop() {
        if live[s] {
            continue;
        }
        live[s] = true;
        let mut deps = vec![];
        for e in &driver[s] {
            sigs_of(e, &mut deps);
        }
        deps.extend(rom_addr_of[s]);
        if let Some(k) = instance_of[s] {
            deps.extend(l.low.m.instances[k].outputs.iter().map(|(_, o)| *o));
        }
        work.extend(deps.into_iter().filter(|&d| !live[d]));
    }
    live
}

/// The bits of each signal that the live logic reads; ports count as read, and so do `clk`
/// and `rst` where a live register uses them.
fn bit_use(l: &LoweredModule, driver: &[Vec<E>], live: &[bool]) -> Vec<Vec<bool>> {
    let m = l.low.m;
    let mut used: Vec<Vec<bool>> = l
        .low
        .signals
        .iter()
        .map(|s| vec![false; s.width as usize])
        .collect();
    for (s, drivers) in driver.iter().enumerate() {
        if live[s] && l.low.signals[s].kind != SigKind::Input {
            for e in drivers {
                mark_used(e, &mut used);
            }
        }
    }
    for (_, a, out) in &l.low.rom_reads {
        if live[*out] {
            used[*a].iter_mut().for_each(|b| *b = true);
        }
    }
    // Registers read clk (and rst, when one resets); instances get both.
    let clocked =
        m.delays.iter().any(|(d, _, _)| live[*d]) || l.states.iter().any(|(id, ..)| live[*id]);
    let reset = m.delays.iter().any(|(d, _, r)| live[*d] && *r)
        || l.states.iter().any(|(id, r, ..)| live[*id] && r.is_some());
    for (i, s) in l.low.signals.iter().enumerate() {
        let register_port = s.kind == SigKind::Input
            && ((s.name == "clk" && clocked) || (s.name == "rst" && reset));
        if s.kind == SigKind::Output || register_port {
            used[i].iter_mut().for_each(|b| *b = true);
        }
    }
    used
}

/// Liveness and bit use of the lowered module.
pub(super) fn analyse(lowered: LoweredModule<'_>) -> Analysed<'_> {
    let (driver, instance_of) = drivers(&lowered);
    let mut rom_addr_of: Vec<Option<SigId>> = vec![None; lowered.low.signals.len()];
    for (_, a, out) in &lowered.low.rom_reads {
        rom_addr_of[*out] = Some(*a);
    }
    let live = liveness(&lowered, &driver, &instance_of, &rom_addr_of);
    let used = bit_use(&lowered, &driver, &live);
    let unconnected = (0..lowered.low.signals.len())
        .map(|s| instance_of[s].is_some() && used[s].iter().all(|b| !b))
        .collect();
    Analysed {
        lowered,
        live,
        used,
        rom_addr_of,
        unconnected,
    }
}
