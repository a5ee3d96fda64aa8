//! Expressions: immutable trees that know their width.

use std::rc::Rc;

use super::SigId;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    And,
    Or,
    Xor,
    /// Unsigned multiply; both operands already have the result's width.
    Mul,
    /// Signed multiply, likewise (emitted with `$signed` so synthesis sees the sign
    /// extension and maps an N×M product to one N×M multiplier, e.g. one iCE40 SB_MAC16).
    SMul,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    /// Signed (two's-complement) variants.
    SLt,
    SLe,
    SGt,
    SGe,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShiftOp {
    Shl,
    Shr,
    /// Arithmetic right shift.
    Sar,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReduceOp {
    Or,
    And,
    Xor,
}

#[derive(Debug)]
pub enum Node {
    Sig(SigId),
    /// A constant of up to 128 bits.
    Const(u128),
    /// A constant with a name (a special code: `LNS_ZERO`, `NAR`): printed as a `localparam`
    /// of the module that reads it ([`named`]).
    Named(std::rc::Rc<str>, u128),
    /// `[hi:lo]` of the inner expression.
    Slice(E, u32, u32),
    /// Most significant part first.
    Concat(Vec<E>),
    /// `{n{e}}`
    Repeat(E, u32),
    Not(E),
    Bin(BinOp, E, E),
    Cmp(CmpOp, E, E),
    Shift(ShiftOp, E, E),
    Reduce(ReduceOp, E),
    Mux(E, E, E),
    Rom(usize, E),
}

/// An expression: a shared node and its width.
#[derive(Clone, Debug)]
pub struct E {
    pub node: Rc<Node>,
    pub width: u32,
}

pub(super) fn mk(node: Node, width: u32) -> E {
    assert!(width > 0, "zero-width expression");
    E {
        node: Rc::new(node),
        width,
    }
}

/// The smallest two's-complement width that holds every value in `lo..=hi`.
pub fn signed_bits(lo: i64, hi: i64) -> u32 {
    (1..=64)
        .find(|&w| w == 64 || (-(1i64 << (w - 1)) <= lo && hi < (1i64 << (w - 1))))
        .expect("fits 64 bits")
}

/// A constant of `width` bits (at most 128) holding the two's-complement pattern of `v`,
/// which must fit.
pub fn signed_konst(width: u32, v: i64) -> E {
    assert!(
        width <= 128 && signed_bits(v, v) <= width,
        "{v} does not fit {width} bits"
    );
    let mask = if width == 128 {
        u128::MAX
    } else {
        (1u128 << width) - 1
    };
    konst(width, (v as i128 as u128) & mask)
}

/// A constant of `width` bits (wider than 128 bits only for 0 and all-ones patterns).
pub fn konst(width: u32, value: u128) -> E {
    if width > 128 {
        assert!(
            value == 0 || value == u128::MAX,
            "wide constants are 0 or all ones"
        );
        return mk(Node::Repeat(konst(1, value & 1), width), width);
    }
    assert!(
        width == 128 || value >> width == 0,
        "constant {value} does not fit {width} bits"
    );
    mk(Node::Const(value), width)
}

/// A named constant of `width` bits (at most 128): a special code of a format, printed as
/// `localparam [width-1:0] NAME = value;` in every module that reads it, and by its name where
/// it is read. Names are upper case; one name means one value in a module.
pub fn named(name: &str, width: u32, value: u128) -> E {
    assert!(
        name.chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'),
        "constant names are upper case: {name}"
    );
    let value = konst(width, value);
    match *value.node {
        Node::Const(v) => mk(Node::Named(name.into(), v), width),
        _ => panic!("named constants are at most 128 bits"),
    }
}

/// Concatenation, most significant first.
pub fn cat(parts: &[E]) -> E {
    let w = parts.iter().map(|p| p.width).sum();
    if parts.len() == 1 {
        return parts[0].clone();
    }
    mk(Node::Concat(parts.to_vec()), w)
}

/// `c ? a : b`
pub fn mux(c: &E, a: &E, b: &E) -> E {
    assert_eq!(c.width, 1, "mux select must be 1 bit");
    assert_eq!(a.width, b.width, "mux arms differ in width");
    mk(Node::Mux(c.clone(), a.clone(), b.clone()), a.width)
}

/// A balanced tree of the binary `op` over `terms` (adders, comparators), level by level:
/// neighbours pair up and an odd last term passes on alone. [`Module::tree`] names each
/// level's results as wires.
///
/// [`Module::tree`]: super::Module::tree
pub fn tree(terms: Vec<E>, op: impl Fn(&E, &E) -> E) -> E {
    tree_with(terms, op, |_, _, v| v)
}

/// [`tree`], each result `j` of level `level` passed through `node(level, j, result)`.
pub(super) fn tree_with(
    mut terms: Vec<E>,
    op: impl Fn(&E, &E) -> E,
    mut node: impl FnMut(u32, usize, E) -> E,
) -> E {
    assert!(!terms.is_empty(), "a tree of no terms");
    let mut level = 0;
    while terms.len() > 1 {
        terms = terms
            .chunks(2)
            .enumerate()
            .map(|(j, pair)| {
                let v = match pair {
                    [x, y] => op(x, y),
                    [x] => x.clone(),
                    _ => unreachable!("chunks of two"),
                };
                node(level, j, v)
            })
            .collect();
        level += 1;
    }
    terms.remove(0)
}

impl E {
    fn bin(&self, op: BinOp, o: &E) -> E {
        assert_eq!(
            self.width, o.width,
            "{op:?} of {} and {} bits",
            self.width, o.width
        );
        mk(Node::Bin(op, self.clone(), o.clone()), self.width)
    }
    pub(super) fn cmp(&self, op: CmpOp, o: &E) -> E {
        assert_eq!(
            self.width, o.width,
            "{op:?} of {} and {} bits",
            self.width, o.width
        );
        mk(Node::Cmp(op, self.clone(), o.clone()), 1)
    }
    pub fn add(&self, o: &E) -> E {
        self.bin(BinOp::Add, o)
    }
    pub fn sub(&self, o: &E) -> E {
        self.bin(BinOp::Sub, o)
    }
    pub fn and(&self, o: &E) -> E {
        self.bin(BinOp::And, o)
    }
    pub fn or(&self, o: &E) -> E {
        self.bin(BinOp::Or, o)
    }
    pub fn xor(&self, o: &E) -> E {
        self.bin(BinOp::Xor, o)
    }
    pub fn not(&self) -> E {
        mk(Node::Not(self.clone()), self.width)
    }
    /// Full unsigned product: width = sum of the widths.
    pub fn mul_full(&self, o: &E) -> E {
        let w = self.width + o.width;
        self.zext(w).bin(BinOp::Mul, &o.zext(w))
    }
    /// Full signed product: width = sum of the widths.
    pub fn smul_full(&self, o: &E) -> E {
        let w = self.width + o.width;
        self.sext(w).bin(BinOp::SMul, &o.sext(w))
    }
    pub fn eq(&self, o: &E) -> E {
        self.cmp(CmpOp::Eq, o)
    }
    pub fn ne(&self, o: &E) -> E {
        self.cmp(CmpOp::Ne, o)
    }
    pub fn lt(&self, o: &E) -> E {
        self.cmp(CmpOp::Lt, o)
    }
    pub fn le(&self, o: &E) -> E {
        self.cmp(CmpOp::Le, o)
    }
    pub fn gt(&self, o: &E) -> E {
        self.cmp(CmpOp::Gt, o)
    }
    pub fn ge(&self, o: &E) -> E {
        self.cmp(CmpOp::Ge, o)
    }
    pub fn slt(&self, o: &E) -> E {
        self.cmp(CmpOp::SLt, o)
    }
    pub fn sle(&self, o: &E) -> E {
        self.cmp(CmpOp::SLe, o)
    }
    pub fn sgt(&self, o: &E) -> E {
        self.cmp(CmpOp::SGt, o)
    }
    pub fn sge(&self, o: &E) -> E {
        self.cmp(CmpOp::SGe, o)
    }
    /// Equal to a constant.
    pub fn eq_k(&self, v: u128) -> E {
        self.eq(&konst(self.width, v))
    }
    pub(super) fn shift(&self, op: ShiftOp, amount: &E) -> E {
        mk(Node::Shift(op, self.clone(), amount.clone()), self.width)
    }
    pub fn shl(&self, amount: &E) -> E {
        self.shift(ShiftOp::Shl, amount)
    }
    pub fn shr(&self, amount: &E) -> E {
        self.shift(ShiftOp::Shr, amount)
    }
    pub fn sar(&self, amount: &E) -> E {
        self.shift(ShiftOp::Sar, amount)
    }
    pub fn any(&self) -> E {
        mk(Node::Reduce(ReduceOp::Or, self.clone()), 1)
    }
    pub fn all(&self) -> E {
        mk(Node::Reduce(ReduceOp::And, self.clone()), 1)
    }
    pub fn parity(&self) -> E {
        mk(Node::Reduce(ReduceOp::Xor, self.clone()), 1)
    }
    /// Bits `[hi:lo]`.
    pub fn bits(&self, hi: u32, lo: u32) -> E {
        assert!(
            hi >= lo && hi < self.width,
            "[{hi}:{lo}] of {} bits",
            self.width
        );
        if lo == 0 && hi + 1 == self.width {
            return self.clone();
        }
        let w = hi - lo + 1;
        if let Node::Const(v) | Node::Named(_, v) = *self.node {
            let mask = if w == 128 {
                u128::MAX
            } else {
                (1u128 << w) - 1
            };
            return konst(w, (v >> lo) & mask);
        }
        // A slice of a slice is one slice of the signal.
        if let Node::Slice(x, _, inner_lo) = &*self.node {
            return x.bits(inner_lo + hi, inner_lo + lo);
        }
        mk(Node::Slice(self.clone(), hi, lo), w)
    }
    pub fn bit(&self, i: u32) -> E {
        self.bits(i, i)
    }
    pub fn msb(&self) -> E {
        self.bit(self.width - 1)
    }
    /// The low `w` bits.
    pub fn low(&self, w: u32) -> E {
        self.bits(w - 1, 0)
    }
    /// The high `w` bits.
    pub fn high(&self, w: u32) -> E {
        self.bits(self.width - 1, self.width - w)
    }
    /// Zero-extended to `w` bits (w >= width).
    pub fn zext(&self, w: u32) -> E {
        assert!(w >= self.width);
        if w == self.width {
            return self.clone();
        }
        cat(&[konst(w - self.width, 0), self.clone()])
    }
    /// Sign-extended to `w` bits (w >= width).
    pub fn sext(&self, w: u32) -> E {
        assert!(w >= self.width);
        if w == self.width {
            return self.clone();
        }
        let ext = if w - self.width == 1 {
            self.msb()
        } else {
            mk(Node::Repeat(self.msb(), w - self.width), w - self.width)
        };
        cat(&[ext, self.clone()])
    }
    /// Resized: truncated to the low bits or zero-extended.
    pub fn resize(&self, w: u32) -> E {
        if w <= self.width {
            self.low(w)
        } else {
            self.zext(w)
        }
    }
    /// The signal this expression is, if it is one.
    pub fn sig(&self) -> Option<SigId> {
        match *self.node {
            Node::Sig(s) => Some(s),
            _ => None,
        }
    }
}
