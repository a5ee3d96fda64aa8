"""The fast paths of encode, decode, quantize, add, sub and mul (floats of at most 16 bits,
C-contiguous float64 values and words of the format's dtype; python/src/fast.rs and the golden
`kernel::elementwise`) give the same bits as the general path, which computes element by
element with the golden operations (`lpgen._fast_paths(False)`)."""

import numpy as np
import pytest

import lpgen

FORMATS = ["bf16", "f16", "fp8:e4m3", "fp8:e5m2", "bf16:sat", "fp8:e4m3:sat",
           "float:3:2:nonan", "float:2:1", "float:6:9", "float:7:8"]


@pytest.fixture
def general():
    """Runs a callable with the fast paths off, then turns them back on."""
    def run(f):
        was = lpgen._fast_paths(False)
        try:
            return f()
        finally:
            lpgen._fast_paths(was)
    yield run
    lpgen._fast_paths(True)


def same_bits(x, y):
    x, y = np.asarray(x), np.asarray(y)
    assert x.dtype == y.dtype and x.shape == y.shape
    if x.dtype == np.float64:
        x, y = x.view(np.uint64), y.view(np.uint64)
    return np.array_equal(x, y)


def all_words(f):
    return np.arange(2 ** f.width, dtype=np.uint64).astype(f.dtype)


def stress_values(f, rng, n=20_000):
    """Every word's value, the midpoints between neighbouring values (ties) and the float64s
    next to them, random values over and past the range, and ±0, ±inf, NaN."""
    with np.errstate(all="ignore"):
        v = f.decode(all_words(f))
        v = np.unique(v[np.isfinite(v)])
        mid = (v[:-1] + v[1:]) / 2
        big = np.max(np.abs(v))
        tiny = np.min(np.abs(v[v != 0]))
        rand = 2.0 ** rng.uniform(np.log2(tiny) - 3, np.log2(big) + 2, n)
        xs = np.concatenate([v, mid, np.nextafter(mid, np.inf), np.nextafter(mid, -np.inf),
                             rand, rng.standard_normal(n), [0.0, np.inf, np.nan, big * 1.5]])
    return np.concatenate([xs, -xs])


@pytest.mark.parametrize("spec", FORMATS)
def test_encode_quantize_decode_as_the_general_path(spec, general):
    f = lpgen.Format(spec)
    xs = stress_values(f, np.random.default_rng(7))
    for op in (f.encode, f.quantize):
        assert same_bits(op(xs), general(lambda: op(xs))), (spec, op.__name__)
    # Shapes are kept (2-D, C order).
    x2 = xs[: xs.size // 6 * 6].reshape(-1, 6)
    assert same_bits(f.encode(x2), general(lambda: f.encode(x2)))
    w = all_words(f)
    assert same_bits(f.decode(w), general(lambda: f.decode(w)))


@pytest.mark.parametrize("spec", FORMATS)
def test_add_sub_mul_as_the_general_path(spec, general):
    f = lpgen.Format(spec)
    rng = np.random.default_rng(11)
    w = all_words(f)
    if f.width <= 8:
        a, b = (g.ravel() for g in np.meshgrid(w, w))  # every pair
    else:
        n = 60_000
        a = rng.integers(0, 2 ** f.width, n, dtype=np.uint64).astype(f.dtype)
        near = (a.astype(np.int64) + rng.integers(-40, 40, n)) % 2 ** f.width
        sign = rng.integers(0, 2, n) << (f.width - 1)
        b = np.concatenate([rng.permutation(a)[: n // 2], (near ^ sign)[: n // 2]]).astype(f.dtype)
        # Every word against ±0, ±1, the largest finite word, ∞ and NaN.
        corners = f.encode([0.0, -0.0, 1.0, -1.0, 3.0, np.inf, np.nan, 1e300, -1e-300])
        a = np.concatenate([a, np.repeat(w, corners.size)])
        b = np.concatenate([b, np.tile(corners, w.size)])
    for op in (f.add, f.sub, f.mul):
        assert same_bits(op(a, b), general(lambda: op(a, b))), (spec, op.__name__)


def test_other_inputs_take_the_general_path_with_the_same_results():
    f = lpgen.Format("bf16")
    x = np.random.default_rng(3).standard_normal(1000) * 100
    w = f.encode(x)
    wide = w.astype(np.uint64)
    assert same_bits(f.encode(x[::2]), f.encode(x[::2].copy()))  # strided
    assert same_bits(f.encode(list(x)), w)  # a list
    assert same_bits(f.encode(x.astype(np.float32)), f.encode(x.astype(np.float32).astype(np.float64)))
    assert same_bits(f.add(wide, wide), f.add(w, w))  # other word dtypes
    assert same_bits(f.mul(w, w[:1]), f.mul(w, np.repeat(w[:1], w.size)))  # broadcasting
    assert same_bits(f.decode(w[::-1]), f.decode(w)[::-1])
    assert same_bits(f.encode(x, rounding="stochastic:8"), f.encode(list(x), rounding="stochastic:8"))


def test_words_beyond_the_width_are_refused_on_the_fast_path_too():
    f = lpgen.Format("float:3:2:nonan")  # six bits, uint8 words
    bad = np.array([1, 64], dtype=np.uint8)
    for call in (lambda: f.decode(bad), lambda: f.add(bad, bad), lambda: f.mul(bad, bad)):
        with pytest.raises(ValueError, match="more than the 6 bits"):
            call()


def test_the_switch_reports_its_previous_state():
    assert lpgen._fast_paths(True) is True
    assert lpgen._fast_paths(False) is True
    assert lpgen._fast_paths(True) is False
