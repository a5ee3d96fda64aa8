use super::*;
use crate::ir::mux;

#[test]
fn stage_plans_spread_evenly() {
    assert_eq!(StagePlan::spread(0, 4).cuts, vec![false; 4]);
    assert_eq!(StagePlan::spread(4, 4).cuts, vec![true; 4]);
    assert_eq!(StagePlan::spread(1, 3).cuts, vec![false, true, false]);
    assert_eq!(StagePlan::at(&[2]).cuts, vec![false, false, true]);
    assert_eq!(StagePlan::at(&[]), StagePlan::none());
    assert_eq!(
        StagePlan::spread(2, 5).cuts.iter().filter(|&&c| c).count(),
        2
    );
}

#[test]
fn reading_an_older_signal_inserts_shared_delays() {
    let mut m = Module::new("t", StagePlan::spread(2, 2));
    let a = m.input("a", 8);
    m.stage();
    m.stage();
    let b = m.wire("b", &a.add(&a));
    let _c = m.wire("c", &a.xor(&b));
    // a is delayed twice, once for both uses.
    assert_eq!(m.delays.len(), 2);
    assert_eq!(m.cycle(), 2);
}

/// A section comment prints before the first live assignment created after it; one
/// with no live assignment after it (here: before a dead wire only) is not printed.
#[test]
fn section_comments_print_before_their_first_live_assignment() {
    let mut m = Module::new("t", StagePlan::none());
    let a = m.input("a", 8);
    m.comment("decode");
    let d = m.wire("d", &a.add(&a));
    m.comment("unused branch");
    let _dead = m.wire("dead", &a.xor(&a));
    m.comment("encode");
    let e = m.wire("e", &d.xor(&a));
    m.output("y", &e);
    let v = crate::emit::verilog(&m);
    let at = |s: &str| v.find(s).unwrap_or_else(|| panic!("{s:?} missing in {v}"));
    assert!(at("// decode") < at("assign d ="));
    assert!(at("assign d =") < at("// unused branch"));
    assert!(at("// unused branch") < at("// encode"));
    assert!(at("// encode") < at("assign e ="));
    assert!(!v.contains("assign dead"));
}

/// A negated negation prints with parentheses (Icarus refuses `~~x`).
#[test]
fn a_double_negation_prints_with_parentheses() {
    let mut m = Module::new("t", StagePlan::none());
    let a = m.input("a", 4);
    m.output("y", &a.not().not());
    let v = crate::emit::verilog(&m);
    assert!(v.contains("assign y = ~(~a);"), "{v}");
}

/// A power-on value is the declaration's initial value; registers without one keep a
/// plain declaration.
#[test]
fn power_on_values_print_as_initial_values() {
    let mut m = Module::new("t", StagePlan::none());
    m.input("clk", 1);
    let count = m.state("count", 4, None);
    m.power_on(&count, 9);
    m.drive(&count, &count.add(&crate::ir::konst(4, 1)), None);
    let plain = m.register("plain", &count, None);
    m.output("y", &plain);
    let v = crate::emit::verilog(&m);
    assert!(v.contains("reg  [3:0] count = 4'd9;"), "{v}");
    assert!(v.contains("reg  [3:0] plain;"), "{v}");
}

#[test]
#[should_panic(expected = "power-on value wider than the register")]
fn power_on_value_must_fit() {
    let mut m = Module::new("t", StagePlan::none());
    let r = m.state("r", 2, None);
    m.power_on(&r, 4);
}

#[test]
#[should_panic(expected = "differ in width")]
fn width_mismatch_is_a_generator_bug() {
    let mut m = Module::new("t", StagePlan::none());
    let a = m.input("a", 8);
    let b = m.input("b", 4);
    mux(&a.bit(0), &a, &b);
}

/// A tree of five terms: pairs (a+b, c+d) and e passed on alone at level 0, then
/// ((a+b)+(c+d)) and e, then the root; one term is its own root, no wire.
#[test]
fn a_tree_pairs_neighbours_and_passes_an_odd_term_on() {
    let mut m = Module::new("t", StagePlan::none());
    let terms: Vec<E> = ["a", "b", "c", "d", "e"]
        .iter()
        .map(|n| m.input(n, 8))
        .collect();
    let root = m.tree("s", terms, E::add);
    m.output("y", &root);
    let v = crate::emit::verilog(&m);
    for line in [
        "assign s_l0_0 = (a + b);",
        "assign s_l0_1 = (c + d);",
        "assign s_l0_2 = e;",
        "assign s_l1_0 = (s_l0_0 + s_l0_1);",
        "assign s_l1_1 = s_l0_2;",
        "assign s_l2_0 = (s_l1_0 + s_l1_1);",
        "assign y = s_l2_0;",
    ] {
        assert!(v.contains(line), "{line:?} missing in {v}");
    }
    let mut one = Module::new("t", StagePlan::none());
    let a = one.input("a", 8);
    let root = one.tree("s", vec![a], E::add);
    one.output("y", &root);
    let v = crate::emit::verilog(&one);
    assert!(v.contains("assign y = a;") && !v.contains("s_l0"), "{v}");
    // The expression tree: the same shape, no wires.
    let mut e = Module::new("t", StagePlan::none());
    let terms: Vec<E> = ["a", "b", "c"].iter().map(|n| e.input(n, 8)).collect();
    e.output("y", &crate::ir::tree(terms, E::add));
    let v = crate::emit::verilog(&e);
    assert!(v.contains("assign y = ((a + b) + c);"), "{v}");
}
