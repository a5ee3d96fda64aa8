"""Overflow flags (`flags=True` of add/sub/mul/div, `cumdot`) and the dfix lane and read-out
(`Format.dfix_lane`, `Format.dfix_dot`), against references written here from the rules in
docs/formats.md and docs/rtl-dfix.md: LNS "results whose rounded log exceeds the largest code
saturate to it"; fix's accumulator read-out "rounded once, saturated"; dfix "a conversion
overflows when the rounded integer lies outside the word"."""

import math
from fractions import Fraction

import numpy as np
import pytest

import lpgen


def lns_code_max(spec):
    _, i, f = spec.split(":")
    return 2 ** (int(i) + int(f)) - 1, int(f)


def rounded_code(x, frac):
    """round(log2|x|·2^F), or None within 1e-6 of a rounding boundary (f64 cannot decide)."""
    t = math.log2(abs(x)) * 2**frac
    return None if abs(t - math.floor(t) - 0.5) < 1e-6 else round(t)


@pytest.mark.parametrize("spec", ["lns:2:2", "lns:3:3"])
def test_lns_flags_say_the_rounded_log_passed_the_largest_code(spec):
    fmt = lpgen.Format(spec)
    cmax, frac = lns_code_max(spec)
    w = np.arange(1 << fmt.width, dtype=np.uint64)
    a, b = np.repeat(w, w.size), np.tile(w, w.size)
    va, vb = fmt.decode(a), fmt.decode(b)
    number = ~np.isnan(va) & ~np.isnan(vb) & (va != 0) & (vb != 0)
    flagged = 0
    with np.errstate(divide="ignore", invalid="ignore"):
        exact = {"add": va + vb, "sub": va - vb, "mul": va * vb, "div": va / vb}
    for op, x in exact.items():
        y, over = getattr(fmt, op)(a, b, flags=True)
        assert over.dtype == bool and over.shape == a.shape
        assert (y == getattr(fmt, op)(a, b)).all(), op
        for i in range(a.size):
            if not number[i] or x[i] == 0:
                assert not over[i], (op, hex(a[i]), hex(b[i]))
                continue
            c = rounded_code(x[i], frac)
            if c is not None:
                assert over[i] == (c > cmax), (op, hex(a[i]), hex(b[i]), x[i])
        flagged += int(over.sum())
    assert flagged > 50


def test_dfix_flags_say_the_integer_left_the_word(rng):
    fmt = lpgen.Format("dfix:6", scale=-2)
    w = np.arange(64, dtype=np.uint64)
    a, b = np.repeat(w, 64), np.tile(w, 64)
    ints = lambda v: np.where(v >= 32, v.astype(np.int64) - 64, v.astype(np.int64))
    x, y = ints(a), ints(b)
    for op, exact in {"add": x + y, "sub": x - y}.items():
        _, over = getattr(fmt, op)(a, b, flags=True)
        assert (over == ((exact > 31) | (exact < -32))).all(), op
    # mul at scale e: x·y·2^(2e) read into scale e: round(x·y·2^e), ties to even
    _, over = fmt.mul(a, b, flags=True)
    q = np.array([round(Fraction(int(p), 4)) for p in x * y])
    assert (over == ((q > 31) | (q < -32))).all()


@pytest.mark.parametrize("spec", ["posit:8:0", "f32", "fix:3:4", "bf16"])
def test_families_without_an_elementwise_flag_refuse_it(spec):
    fmt = lpgen.Format(spec)
    with pytest.raises(ValueError, match="flags=True"):
        fmt.add([0], [0], flags=True)


@pytest.mark.parametrize("spec,mode", [
    ("lns:4:4", "naive"), ("lns:4:4", "kahan"), ("lns:4:4", "pairwise"),
    ("posit:8:0", "quire"), ("posit:8:0", "kahan"), ("fix:3:4", "quire"), ("fix:3:4", "naive"),
    ("bf16", "quire"), ("dfix:8", "quire"),
])
def test_cumdot_is_the_dot_product_of_every_prefix(spec, mode, rng):
    fmt = lpgen.Format(spec)
    a = rng.integers(0, 1 << fmt.width, size=(3, 17), dtype=np.uint64)
    b = rng.integers(0, 1 << fmt.width, size=(3, 17), dtype=np.uint64)
    got = fmt.cumdot(a, b, mode=mode)
    assert got.shape == a.shape and got.dtype == fmt.dtype
    for k in range(17):
        assert (got[:, k] == fmt.dot(a[:, : k + 1], b[:, : k + 1], mode=mode)).all(), k
    # along axis 0: the transposed problem
    assert (fmt.cumdot(a.T, b.T, mode=mode, axis=0) == got.T).all()


def test_lns_cumdot_flags_are_each_steps_operations(rng):
    """Kahan (seed 000 §2.6.1): tmp = c + x; t = s + tmp; c = tmp − (t − s), x = a·b; the
    step's flag is set when one of its five roundings saturated. Naive: s + a·b."""
    fmt = lpgen.Format("lns:3:4")
    a = rng.integers(0, 1 << fmt.width, size=40, dtype=np.uint64)
    b = rng.integers(0, 1 << fmt.width, size=40, dtype=np.uint64)
    sums, over = fmt.cumdot(a, b, mode="kahan", flags=True)
    s = c = fmt.encode(0.0)
    for k in range(40):
        x, o1 = fmt.mul(a[k], b[k], flags=True)
        tmp, o2 = fmt.add(c, x, flags=True)
        t, o3 = fmt.add(s, tmp, flags=True)
        u, o4 = fmt.sub(t, s, flags=True)
        c, o5 = fmt.sub(tmp, u, flags=True)
        s = t
        assert sums[k] == s and over[k] == bool(o1 | o2 | o3 | o4 | o5), k
    assert over.any() and not over.all()
    sums, over = fmt.cumdot(a, b, mode="naive", flags=True)
    s = fmt.encode(0.0)
    for k in range(40):
        x, o1 = fmt.mul(a[k], b[k], flags=True)
        s, o2 = fmt.add(s, x, flags=True)
        assert sums[k] == s and over[k] == bool(o1 | o2), k


def test_fix_cumdot_flags_the_saturated_read_out(rng):
    """fix-mac's overflow: the exact sum of the products rounded once (ties to even) lies
    outside the word's integers."""
    fmt = lpgen.Format("fix:2:3")
    lo, hi = -(2**5), 2**5 - 1
    a = rng.integers(0, 64, size=(50, 12), dtype=np.uint64)
    b = rng.integers(0, 64, size=(50, 12), dtype=np.uint64)
    ys, over = fmt.cumdot(a, b, mode="quire", flags=True)
    ints = lambda v: int(v) - 64 if v >= 32 else int(v)
    for r in range(50):
        acc = 0
        for k in range(12):
            acc += ints(a[r, k]) * ints(b[r, k])
            q = round(Fraction(acc, 2**3))
            assert over[r, k] == (q < lo or q > hi), (r, k)
            assert ys[r, k] == min(max(q, lo), hi) % 64
    assert over.any() and not over.all()


def test_cumdot_flags_where_undefined_are_refused():
    with pytest.raises(ValueError, match="no overflow flag in mode 'pairwise'"):
        lpgen.Format("lns:4:4").cumdot([1], [1], mode="pairwise", flags=True)
    with pytest.raises(ValueError, match="no overflow flag"):
        lpgen.Format("posit:8:0").cumdot([1], [1], mode="quire", flags=True)
    with pytest.raises(ValueError, match="not offered"):
        lpgen.Format("lns:4:4").cumdot([1], [1], mode="quire")


def read(x, s, w):
    """x·2^−s rounded to nearest even, and whether it left the W-bit word."""
    q = x * 2 ** (-s) if s <= 0 else round(Fraction(x, 2**s))
    lo, hi = -(2 ** (w - 1)), 2 ** (w - 1) - 1
    return min(max(q, lo), hi) % 2**w, q < lo or q > hi


def test_dfix_lane_reads_out_each_opcodes_integer(rng):
    w = 5
    fmt = lpgen.Format(f"dfix:{w}")
    ints = lambda v: int(v) - 2**w if v >= 2 ** (w - 1) else int(v)
    n = 3000
    op = rng.integers(0, 8, n)
    a = rng.integers(0, 2**w, n, dtype=np.uint64)
    b = rng.integers(0, 2**w, n, dtype=np.uint64)
    shift = rng.integers(-9, 12, n)
    y, over, half, cmp = fmt.dfix_lane(op, a, b, shift)
    for i in range(n):
        x, z = ints(a[i]), ints(b[i])
        v = {0: x * z, 1: x + z, 2: x - z, 3: x, 4: -x}.get(int(op[i]))
        if v is None:
            assert (y[i], over[i], half[i]) == (0, False, False)
        else:
            word, o = read(v, int(shift[i]), w)
            assert (y[i], over[i], half[i]) == (word, o, read(v, int(shift[i]) - 1, w)[1]), i
        assert cmp[i] == (0 if x == z else 1 if x < z else 2)
    assert over.any() and half.sum() > over.sum()
    with pytest.raises(ValueError, match="dfix:W"):
        lpgen.Format("posit:8:0").dfix_lane(0, 1, 1, 0)


def test_dfix_dot_reads_out_the_exact_sum(rng):
    w = 6
    fmt = lpgen.Format(f"dfix:{w}")
    ints = lambda v: int(v) - 2**w if v >= 2 ** (w - 1) else int(v)
    a = rng.integers(0, 2**w, size=(200, 9), dtype=np.uint64)
    b = rng.integers(0, 2**w, size=(200, 9), dtype=np.uint64)
    for s in [-3, 0, 4, 7, 9, 12]:
        y, over, half = fmt.dfix_dot(a, b, s)
        assert y.shape == (200,)
        for r in range(200):
            x = sum(ints(p) * ints(q) for p, q in zip(a[r], b[r]))
            word, o = read(x, s, w)
            assert (y[r], over[r], half[r]) == (word, o, read(x, s - 1, w)[1]), (s, r)
    with pytest.raises(ValueError, match="out of range"):
        fmt.dfix_dot(a, b, 10**6)
