"""dfix:W (dynamic fixed point): words at a group's scale E, `Format("dfix:W", scale=E)`. Its
command line takes one operation per run (`lpgen golden dfix:W OP --scale E …`: conv add sub
neg mul dot), so these tests compare fewer, chosen cases; div and the rounded dot modes, which
it lacks, are checked against exact rational arithmetic and against compositions of the
package's own add and mul."""

from fractions import Fraction

import numpy as np
import pytest

import lpgen
from conftest import DFIX_SCALES, FORMATS, assert_same_words, decimal, hexw

CASES = [(spec, e) for spec in FORMATS["dfix"] for e in DFIX_SCALES]


def some_words(fmt, rng, n=12):
    top = 2**fmt.width - 1
    corners = [0, 1, top, top >> 1, (top >> 1) + 1, 2, top - 1]
    return np.concatenate([np.array(corners, dtype=np.uint64),
                           rng.integers(0, top + 1, size=n, dtype=np.uint64)])


def to_int(fmt, w):
    w = int(w)
    return w - 2**fmt.width if w >> (fmt.width - 1) else w


def round_into(fmt, q, e):
    """The exact rational q at scale e: round(q·2^−e), ties to even, saturated."""
    y = q / Fraction(2) ** e
    n = round(y)  # Fraction rounds half to even
    lo, hi = -(2 ** (fmt.width - 1)), 2 ** (fmt.width - 1) - 1
    return min(max(n, lo), hi) % 2**fmt.width


@pytest.mark.parametrize("spec,scale", CASES)
def test_conversion_and_values_equal_the_command_line(spec, scale, cli, rng):
    fmt = lpgen.Format(spec, scale=scale)
    assert fmt.scale == scale and fmt.family == "dfix" and str(fmt) == spec
    step = 2.0**scale
    xs = [0.0, -0.0, step / 2, 3 * step / 2, -step / 2, step * 0.7, 1e6, -1e6, 1e-9,
          step * 2 ** (fmt.width - 1), step * (2 ** (fmt.width - 1) - 0.5),
          *rng.normal(0, step * 2 ** (fmt.width - 3), size=10)]
    ours = fmt.encode(xs)
    for x, w in zip(xs, ours):
        bits, value = cli.dfix(spec, "conv", scale, [decimal(x)])
        assert int(w) == bits, (x, int(w), bits)
        assert fmt.decode(w) == value


@pytest.mark.parametrize("op", ["add", "sub", "mul"])
@pytest.mark.parametrize("spec,scale", CASES)
def test_elementwise_ops_equal_the_command_line(spec, scale, op, cli, rng):
    fmt = lpgen.Format(spec, scale=scale)
    w = some_words(fmt, rng)
    a, b = w, rng.permutation(w)
    ours = getattr(fmt, op)(a, b)
    for x, y, r in zip(a, b, ours):
        bits, value = cli.dfix(spec, op, scale, [hexw(x), hexw(y)])
        assert int(r) == bits, (op, hexw(x), hexw(y))
        assert fmt.decode(r) == value


@pytest.mark.parametrize("spec,scale", CASES)
def test_quire_dot_and_fma_equal_the_command_line(spec, scale, cli, rng):
    fmt = lpgen.Format(spec, scale=scale)
    w = some_words(fmt, rng, n=30)
    for k in [1, 3, 8]:
        a = w[: 3 * k].reshape(3, k)
        b = rng.permutation(w)[: 3 * k].reshape(3, k)
        ours = fmt.dot(a, b, mode="quire")
        for ra, rb, r in zip(a, b, ours):
            bits, _ = cli.dfix(spec, "dot", scale, [f"{hexw(x)},{hexw(y)}" for x, y in zip(ra, rb)])
            assert int(r) == bits
    one_exact = fmt.decode(fmt.encode(1.0)) == 1.0
    if not one_exact:
        with pytest.raises(NotImplementedError, match="issue 32"):
            fmt.fma(w, w, w)
        return
    a, b, c = w, rng.permutation(w), rng.permutation(w)
    for x, y, z, r in zip(a, b, c, fmt.fma(a, b, c)):
        bits, _ = cli.dfix(spec, "dot", scale, [f"{hexw(x)},{hexw(y)}", f"{hexw(z)},1"])
        assert int(r) == bits


@pytest.mark.parametrize("spec,scale", CASES)
def test_division_is_the_exact_quotient_rounded_once(spec, scale, rng):
    fmt = lpgen.Format(spec, scale=scale)
    w = some_words(fmt, rng, n=200)
    a, b = w, rng.permutation(w)
    ours = fmt.div(a, b)
    lo, hi = -(2 ** (fmt.width - 1)), 2 ** (fmt.width - 1) - 1
    for x, y, r in zip(a, b, ours):
        ix, iy = to_int(fmt, x), to_int(fmt, y)
        if iy == 0:
            want = (hi if ix > 0 else lo if ix < 0 else 0) % 2**fmt.width
        else:
            want = round_into(fmt, Fraction(ix, iy), scale)
        assert int(r) == want, (hexw(x), hexw(y))


@pytest.mark.parametrize("spec,scale", CASES)
def test_rounded_dot_modes_are_their_definitions(spec, scale, rng):
    # sum.rs: naive s = s + a_k·b_k; Kahan tmp = c + x, t = s + tmp, c = tmp − (t − s), s = t;
    # pairwise: the two halves (n // 2 first) recursively; each product rounded first.
    fmt = lpgen.Format(spec, scale=scale)
    k = 9
    a = some_words(fmt, rng, n=200)[: 20 * k].reshape(20, k)
    b = rng.permutation(a.ravel()).reshape(20, k)
    p = fmt.mul(a, b)
    zero = np.zeros(20, dtype=p.dtype)
    s = zero
    for j in range(k):
        s = fmt.add(s, p[:, j])
    assert_same_words(fmt.dot(a, b, mode="naive"), s, "naive")
    s, c = zero, zero
    for j in range(k):
        tmp = fmt.add(c, p[:, j])
        t = fmt.add(s, tmp)
        c = fmt.sub(tmp, fmt.sub(t, s))
        s = t
    assert_same_words(fmt.dot(a, b, mode="kahan"), s, "kahan")

    def pairwise(cols):
        if cols.shape[1] == 0:
            return zero
        if cols.shape[1] == 1:
            return cols[:, 0]
        h = cols.shape[1] // 2
        return fmt.add(pairwise(cols[:, :h]), pairwise(cols[:, h:]))

    assert_same_words(fmt.dot(a, b, mode="pairwise"), pairwise(p), "pairwise")


def test_scale_is_checked_and_only_for_dfix(cli):
    with pytest.raises(ValueError) as e:
        lpgen.Format("dfix:10", scale=5000)
    assert str(e.value) == cli.error(["golden", "dfix:10", "add", "1", "2", "--scale", "5000"])
    with pytest.raises(ValueError, match="scale applies to dfix:W formats"):
        lpgen.Format("posit:8:2", scale=1)
    assert lpgen.Format("dfix:10").scale == 0
    assert repr(lpgen.Format("dfix:10", scale=-4)) == "lpgen.Format('dfix:10', scale=-4)"
    assert lpgen.Format("dfix:10", scale=-4) != lpgen.Format("dfix:10", scale=-3)
