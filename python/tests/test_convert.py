"""`Format.convert`: words of one format converted to another of the same family, or between
float (f32 too) and fix formats (the golden ALU's conversion, which the hardware `convert` unit
and the ALU lane's `t_out` implement)."""

import numpy as np
import pytest

import lpgen
from conftest import assert_same_words


def words(fmt, rng, n=4000):
    if fmt.width <= 16:
        return np.arange(1 << fmt.width, dtype=np.uint64)
    return rng.integers(0, 1 << fmt.width, n, dtype=np.uint64)


@pytest.mark.parametrize("src,dst", [
    ("posit:16:1", "posit:8:0"), ("posit:8:0", "posit:16:1"), ("posit:8:2", "posit:8:0"),
    ("posit:32:2", "posit:16:1"), ("fix:7:8", "fix:3:4"), ("fix:3:4", "fix:15:16"),
    ("fix:7:8", "fix:7:2"),
])
def test_posit_and_fix_round_the_value_once(src, dst, rng):
    # docs/formats.md: posit and fix conversion is the value rounded to the nearest word of
    # the target (ties to even), saturated (fix) or to maxpos/minpos (posit), NaR to NaR.
    f, t = lpgen.Format(src), lpgen.Format(dst)
    x = words(f, rng)
    got = f.convert(x, t)
    assert got.dtype == t.dtype and got.shape == x.shape
    assert_same_words(got, t.encode(f.decode(x)), f"{src} -> {dst}")
    assert_same_words(f.convert(x, dst), got, "a format string as the target")


@pytest.mark.parametrize("narrow,wide", [("lns:4:3", "lns:5:6"), ("lns:2:3", "lns:4:4")])
def test_lns_widening_keeps_the_value_and_narrowing_undoes_it(narrow, wide):
    n, w = lpgen.Format(narrow), lpgen.Format(wide)
    x = np.arange(1 << n.width, dtype=np.uint64)
    up = n.convert(x, w)
    vx, vu = n.decode(x), w.decode(up)
    assert ((vx == vu) | (np.isnan(vx) & np.isnan(vu))).all()
    assert_same_words(w.convert(up, n), n.encode(vx), f"{wide} -> {narrow} of widened words")


def test_convert_refuses_another_family():
    with pytest.raises(ValueError, match="convert converts within one family.* not posit:8:0 to lns:4:4"):
        lpgen.Format("posit:8:0").convert([0], "lns:4:4")
    with pytest.raises(ValueError):
        lpgen.Format("posit:8:0").convert([0], "posit:1")


@pytest.mark.parametrize("src,dst", [("posit:8:0", "posit:16:1"), ("lns:4:4", "lns:3:2"),
                                     ("fix:4:4", "fix:7:8")])
def test_alu_lane_follows_its_definition(src, dst, rng):
    # sw/golden/src/alu.rs's words: y the opcode's F result (11..15: zero), t_out = a
    # converted to T, cmp how a compares with b (0 =, 1 <, 2 >, 3 unordered), nan = y is NaN.
    f, t = lpgen.Format(src), lpgen.Format(dst)
    n = 3000
    a = rng.integers(0, 1 << f.width, n, dtype=np.uint64)
    b = np.where(rng.random(n) < 0.2, a, rng.integers(0, 1 << f.width, n, dtype=np.uint64))
    sel = rng.integers(0, 2, n)
    t_in = rng.integers(0, 1 << t.width, n, dtype=np.uint64)
    va, vb = f.decode(a), f.decode(b)
    zero, one = f.encode(0.0), f.encode(1.0)
    want = {0: f.add(a, b), 1: f.sub(a, b), 2: f.mul(a, b), 3: f.div(a, b), 4: f.max(a, b),
            5: f.min(a, b), 7: f.neg(a), 8: f.abs(a), 9: np.where(sel == 1, a, b),
            10: t.convert(t_in, f)}
    ordered = ~np.isnan(va) & ~np.isnan(vb)
    for op in range(16):
        y, t_out, cmp, nan = f.alu(op, a, b, sel, t_in, to=t)
        assert_same_words(t_out, f.convert(a, t), f"{src} t_out")
        assert (nan == np.isnan(f.decode(y))).all()
        o = ordered
        assert (cmp[o] == np.select([va[o] == vb[o], va[o] < vb[o]], [0, 1], 2)).all()
        if op == 6:
            assert (y[o] == np.where(va[o] < vb[o], one, zero)).all()
        elif op in want:
            assert_same_words(y, want[op], f"{src} op {op}")
        else:
            assert (y == zero).all(), f"unassigned op {op}"
    with pytest.raises(ValueError, match="an ALU lane converts within one family"):
        f.alu(0, a, b, sel, 0, to="f32")


def test_f32_to_bf16_is_the_classic_round_to_nearest_even(rng):
    # the hardware `convert --format f32 --to bf16`: bf16 = the top 16 bits of the f32 word
    # after adding 0x7fff plus the kept lowest bit (ties to even), for finite words that do not
    # round past bf16's largest value
    u = rng.integers(0, 1 << 32, 20000, dtype=np.uint64)
    u = u[(u & 0x7F800000) != 0x7F800000]
    want = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    want = want[(want & 0x7F80) != 0x7F80]
    u = u[((u + 0x7FFF + ((u >> 16) & 1)) >> 16 & 0x7F80) != 0x7F80]
    got = lpgen.Format("f32").convert(u, "bf16")
    assert (got == want).all()


def test_float_and_fix_convert_both_ways():
    # fix:7:8 words are v/256 (up to 15 bits of magnitude, f16 keeps 11): into f16 as the
    # value rounded once (the f64 path of encode), and back from f16 to the nearest fix word
    fx, h = lpgen.Format("fix:7:8"), lpgen.Format("f16")
    x = np.arange(1 << 16, dtype=np.uint64)
    assert_same_words(fx.convert(x, h), h.encode(fx.decode(x)), "fix:7:8 -> f16")
    y = h.convert(np.arange(1 << 16, dtype=np.uint64), fx)
    v = h.decode(np.arange(1 << 16, dtype=np.uint64))
    finite = np.isfinite(v)
    assert_same_words(y[finite], fx.encode(v[finite]), "f16 -> fix:7:8")
