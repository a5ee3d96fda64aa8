"""`Format.convert`: words of one format converted to another of the same family (the golden
ALU's conversion, which the hardware `convert` unit and the ALU lane's `t_out` implement)."""

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
    with pytest.raises(ValueError, match="convert converts within one family, not posit:8:0 to lns:4:4"):
        lpgen.Format("posit:8:0").convert([0], "lns:4:4")
    with pytest.raises(ValueError):
        lpgen.Format("posit:8:0").convert([0], "posit:1")
