"""Every word format of the registry: the package's results equal `lpgen golden`'s, bit for bit,
on corner and random inputs (dfix, whose command line has no --stdin, is in test_dfix.py)."""

import numpy as np
import pytest

import lpgen
from conftest import (
    all_words,
    assert_same_values,
    assert_same_words,
    corner_values,
    decimal,
    hexw,
    sample_words,
    word_format_strings,
)

WORD_FORMATS = word_format_strings()


def operand_pairs(fmt, rng):
    """All pairs of words for widths up to 8, else random and corner pairs."""
    if fmt.width <= 8:
        w = all_words(fmt)
        a, b = np.meshgrid(w, w, indexing="ij")
        return a.ravel(), b.ravel()
    w = sample_words(fmt, 3000, rng)
    a = np.concatenate([w, rng.permutation(w)])
    b = np.concatenate([rng.permutation(w), w])
    return a, b


@pytest.mark.parametrize("spec", WORD_FORMATS)
def test_encode_and_decode_equal_the_command_line(spec, cli, rng):
    fmt = lpgen.Format(spec)
    x = corner_values(fmt, rng)
    ours = fmt.encode(x)
    assert ours.dtype == fmt.dtype and ours.shape == x.shape
    # `max x x` is x rounded into the format: the command line's conversion of a decimal.
    lines = [f"{decimal(v)} {decimal(v)}" for v in x]
    bits, values = cli.batch(spec, "max", lines)
    assert_same_words(ours, bits, f"{spec} encode")
    assert_same_values(fmt.decode(ours), values, f"{spec} decode")
    assert_same_values(fmt.quantize(x), values, f"{spec} quantize")


@pytest.mark.parametrize("spec", WORD_FORMATS)
def test_decode_of_every_word_equals_the_command_line(spec, cli, rng):
    fmt = lpgen.Format(spec)
    w = all_words(fmt) if fmt.width <= 16 else sample_words(fmt, 20000, rng)
    # (`max w w` prints w's value; its bits are w's except that f32 NaNs come out canonical.)
    _, values = cli.batch(spec, "max", [f"{hexw(x)} {hexw(x)}" for x in w])
    assert_same_values(fmt.decode(w), values, f"{spec} decode")


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "max", "min"])
@pytest.mark.parametrize("spec", WORD_FORMATS)
def test_elementwise_ops_equal_the_command_line(spec, op, cli, rng):
    fmt = lpgen.Format(spec)
    a, b = operand_pairs(fmt, rng)
    ours = getattr(fmt, op)(a, b)
    assert ours.dtype == fmt.dtype
    bits, values = cli.batch(spec, op, [f"{hexw(x)} {hexw(y)}" for x, y in zip(a, b)])
    assert_same_words(ours, bits, f"{spec} {op}", fmt)
    assert_same_values(fmt.decode(ours), values, f"{spec} {op} values")


@pytest.mark.parametrize("op", ["neg", "abs", "exp", "ln"])
@pytest.mark.parametrize("spec", WORD_FORMATS)
def test_one_operand_ops_equal_the_command_line(spec, op, cli, rng):
    fmt = lpgen.Format(spec)
    w = all_words(fmt) if fmt.width <= 8 else sample_words(fmt, 300, rng)
    ours = getattr(fmt, op)(w)
    assert ours.dtype == fmt.dtype and ours.shape == w.shape
    bits, values = cli.batch(spec, op, [hexw(x) for x in w])
    assert_same_words(ours, bits, f"{spec} {op}", fmt)
    assert_same_values(fmt.decode(ours), values, f"{spec} {op} values")


def dot_lines(a, b):
    return [" ".join(f"{hexw(x)},{hexw(y)}" for x, y in zip(ra, rb)) for ra, rb in zip(a, b)]


@pytest.mark.parametrize("spec", WORD_FORMATS)
def test_dot_and_sum_in_every_offered_mode_equal_the_command_line(spec, cli, rng):
    fmt = lpgen.Format(spec)
    assert fmt.modes == next(f["modes"] for f in lpgen.formats() if f["name"] == fmt.family)
    for k in [1, 2, 7, 33]:
        lanes = 300
        # Words of moderate values (random values rounded in), and some raw random words.
        x = rng.standard_normal((2, lanes, k)) * rng.choice([0.01, 1, 30], size=(2, lanes, 1))
        a, b = fmt.encode(x[0]), fmt.encode(x[1])
        raw = sample_words(fmt, 40 * k, rng)[: 40 * k].reshape(40, k)
        a = np.concatenate([a, raw.astype(a.dtype)])
        b = np.concatenate([b, raw[::-1].astype(b.dtype)])
        # fdpa (a kind of modes, `fdpa:…`, with binary32 results): test_fdpa.py.
        for mode in (m for m in fmt.modes if m != "fdpa"):
            ours = fmt.dot(a, b, mode=mode)
            assert ours.shape == (a.shape[0],)
            bits, _ = cli.batch(spec, "dot", dot_lines(a, b), mode=mode)
            assert_same_words(ours, bits, f"{spec} dot {mode} k={k}", fmt)
            # The same along axis 0 of the transposed operands.
            assert_same_words(fmt.dot(a.T, b.T, mode=mode, axis=0), bits, f"{spec} dot axis 0", fmt)
            ours = fmt.sum(a, mode=mode)
            bits, _ = cli.batch(spec, "sum", [" ".join(hexw(x) for x in r) for r in a], mode=mode)
            assert_same_words(ours, bits, f"{spec} sum {mode} k={k}", fmt)


@pytest.mark.parametrize("spec", WORD_FORMATS)
def test_fma_is_the_quire_dot_of_two_terms_or_not_implemented(spec, cli, rng):
    fmt = lpgen.Format(spec)
    if "quire" not in fmt.modes or fmt.decode(fmt.encode(1.0)) != 1.0:
        with pytest.raises(NotImplementedError, match="issue 32"):
            fmt.fma([0], [0], [0])
        return
    w = sample_words(fmt, 2000, rng)
    a, b, c = w, rng.permutation(w), rng.permutation(w)
    ours = fmt.fma(a, b, c)
    lines = [f"{hexw(x)},{hexw(y)} {hexw(z)},1" for x, y, z in zip(a, b, c)]
    bits, _ = cli.batch(spec, "dot", lines, mode="quire")
    if fmt.family != "float":
        assert_same_words(ours, bits, f"{spec} fma", fmt)
        return
    # Floats: IEEE's fused multiply-add (the float-fma unit's), which equals the quire's
    # one rounding but for the sign of an exact zero: +0 unless a·b and c are both −0
    # (a quire has one zero).
    differ = np.flatnonzero(np.asarray(ours) != np.asarray(bits))
    va, vb, vc, vy = (fmt.decode(x) for x in (a, b, c, ours))
    for i in differ:
        assert vy[i] == 0 and fmt.decode(bits[i]) == 0, (spec, hexw(a[i]), hexw(b[i]), hexw(c[i]))
    zero = np.flatnonzero(vy == 0)
    neg_zero = np.signbit(vy[zero])
    both_neg = np.signbit(va[zero] * vb[zero]) & (vc[zero] == 0) & np.signbit(vc[zero])
    exact_zero = (va[zero] * vb[zero] == 0) & (vc[zero] == 0)
    assert (neg_zero[exact_zero] == both_neg[exact_zero]).all(), spec


@pytest.mark.parametrize("spec", ["posit:8:0", "posit:6:1", "fix:3:4"])
def test_fma_rounds_the_exact_result_once(spec, rng):
    # Words of these formats have few significant bits, so a·b + c is exact in float64 and
    # encode() rounds it once: fma must equal that for every pair (a, b), and differ from
    # rounding the product first somewhere.
    fmt = lpgen.Format(spec)
    w = all_words(fmt)
    a, b = (g.ravel() for g in np.meshgrid(w, w, indexing="ij"))
    c = rng.permutation(np.concatenate([w] * (a.size // w.size)))
    va, vb, vc = fmt.decode(a), fmt.decode(b), fmt.decode(c)
    exact = va * vb + vc
    assert_same_words(fmt.fma(a, b, c), fmt.encode(exact), f"{spec} fma vs exact")
    assert (fmt.fma(a, b, c) != fmt.add(fmt.mul(a, b), c)).any()


def test_dot_with_an_empty_axis_is_zero(cli):
    f = lpgen.Format("posit:8:2")
    out = f.dot(np.zeros((3, 0), dtype=np.uint8), np.zeros((3, 0), dtype=np.uint8))
    assert out.shape == (3,) and (out == 0).all()
    bits, _ = cli.batch("posit:8:2", "dot", [""])
    assert bits[0] == 0
