"""Arrays in and out: shapes, numpy broadcasting, input types and layouts, large arrays (split
over threads) equal to small ones, and that the comparisons of the other tests catch a single
flipped bit."""

import numpy as np
import pytest

import lpgen
from conftest import assert_same_words, sample_words


def test_shapes_and_scalars_round_trip():
    f = lpgen.Format("posit:16:1")
    x = np.linspace(-3, 3, 24).reshape(2, 3, 4)
    w = f.encode(x)
    assert w.shape == (2, 3, 4) and w.dtype == np.uint16
    assert f.decode(w).shape == (2, 3, 4)
    assert f.encode(1.5).shape == () and f.decode(f.encode(1.5)) == 1.5
    assert f.encode([]).shape == (0,)
    assert (f.quantize(x) == f.decode(w)).all()
    # float32 and integer inputs are converted exactly to float64 first
    assert (f.encode(x.astype(np.float32)) == f.encode(x.astype(np.float32).astype(np.float64))).all()
    assert (f.encode([1, 2, 3]) == f.encode([1.0, 2.0, 3.0])).all()


def test_elementwise_ops_broadcast_as_numpy(rng):
    f = lpgen.Format("lns:5:6")
    a = sample_words(f, 5, rng)[:5].astype(f.dtype)
    b = sample_words(f, 7, rng)[:7].astype(f.dtype)
    out = f.mul(a[:, None], b[None, :])
    assert out.shape == (5, 7)
    for i in range(5):
        assert_same_words(out[i], f.mul(np.full(7, a[i]), b), "row")
    assert_same_words(f.add(a, a[0]), f.add(a, np.full(5, a[0])), "scalar")
    c = sample_words(f, 3, rng)[:3].astype(f.dtype)
    out = f.fma(a[:, None, None], b[None, :, None], c) if "quire" in f.modes else None
    assert out is None  # LNS has no quire: fma is refused (issue 32)
    with pytest.raises(ValueError, match="could not be broadcast together with shapes"):
        f.add(a, b)


def test_fma_and_dot_broadcast(rng):
    f = lpgen.Format("posit:8:2")
    a = rng.integers(0, 256, size=(4, 1), dtype=np.uint8)
    b = rng.integers(0, 256, size=(1, 6), dtype=np.uint8)
    c = rng.integers(0, 256, size=(6,), dtype=np.uint8)
    out = f.fma(a, b, c)
    assert out.shape == (4, 6)
    full = [np.broadcast_to(v, (4, 6)).ravel() for v in (a, b, c)]
    assert_same_words(out, f.fma(*full), "fma broadcast")
    x = rng.integers(0, 256, size=(3, 5, 8), dtype=np.uint8)
    y = rng.integers(0, 256, size=(8,), dtype=np.uint8)
    d = f.dot(x, y, mode="quire")
    assert d.shape == (3, 5)
    assert_same_words(d, f.dot(x, np.broadcast_to(y, x.shape).copy(), mode="quire"), "dot")
    d1 = f.dot(x, x, mode="kahan", axis=1)
    assert d1.shape == (3, 8)
    assert_same_words(d1, f.dot(np.moveaxis(x, 1, -1), np.moveaxis(x, 1, -1), mode="kahan"), "axis")
    with pytest.raises(ValueError, match="out of bounds"):
        f.dot(x, x, axis=3)
    with pytest.raises(ValueError, match="at least one dimension"):
        f.dot(1, 1)


def test_non_contiguous_inputs(rng):
    f = lpgen.Format("fix:7:8")
    w = rng.integers(0, 2**16, size=(40, 30), dtype=np.uint16)
    view = w[::3, ::-2].T
    assert not view.flags.c_contiguous
    assert_same_words(f.add(view, view), f.add(view.copy(), view.copy()), "strided")
    x = rng.standard_normal((50, 20))[:, ::4]
    assert (f.encode(x) == f.encode(np.ascontiguousarray(x))).all()


@pytest.mark.parametrize("spec", ["posit:8:2", "lns:5:6", "f32"])
def test_large_arrays_split_over_threads_equal_small_pieces(spec, rng):
    f = lpgen.Format(spec)
    n = 200_003  # several threads' chunks, and a ragged end
    x = rng.standard_normal(n) * 10
    w = f.encode(x)
    pieces = np.concatenate([f.encode(x[i:i + 1000]) for i in range(0, n, 1000)])
    assert_same_words(w, pieces, "encode")
    s = f.add(w, w[::-1])
    pieces = np.concatenate([f.add(w[i:i + 1000], w[::-1][i:i + 1000]) for i in range(0, n, 1000)])
    assert_same_words(s, pieces, "add")
    lanes = w[: 100_000].reshape(50_000, 2)
    d = f.dot(lanes, lanes, mode="naive")
    # naive: (0 + a0·a0) + a1·a1, and 0 + a square is the square
    squares = f.mul(lanes, lanes)
    assert_same_words(d, f.add(squares[:, 0], squares[:, 1]), "dot lanes")


def test_a_flipped_result_bit_fails_the_comparison(rng):
    # The comparison every test uses is bit for bit: flipping any one bit of any one result
    # word makes it fail.
    f = lpgen.Format("posit:16:1")
    w = sample_words(f, 100, rng)
    ours = f.add(w, w[::-1])
    for bit in range(f.width):
        flipped = ours.copy()
        flipped[37] ^= np.uint16(1 << bit)
        with pytest.raises(AssertionError):
            assert_same_words(flipped, ours, "flipped")
    assert_same_words(ours, ours.copy(), "same")
