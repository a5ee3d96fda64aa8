"""`lpgen.Scaled`, `lpgen.quantize_nvfp4` and `lpgen.DelayedScaling` (scaled formats, NVFP4,
issue 50): against `lpgen golden nvfp4 quantize`, against NVFP4's rule written here with
Python's exact Fractions, against `lpgen.MxFormat` (MX as a scaled format), against a
hand-kept amax history; bad input raises ValueError."""

from fractions import Fraction

import numpy as np
import pytest

import lpgen

E2M1 = [Fraction(v) for v in ("0", "0.5", "1", "1.5", "2", "3", "4", "6")]


def e4m3(c):
    """An E4M3 code's value (0..0x7e), from its fields."""
    e, m = (c >> 3) & 15, c & 7
    return Fraction(m, 512) if e == 0 else Fraction(8 + m, 8) * Fraction(2) ** (e - 7)


UE4M3 = [e4m3(c) for c in range(0x7F)]


def nearest(r, values):
    """The index of the value nearest to r >= 0, ties to the even index; past the last, the last."""
    best = 0
    for i, v in enumerate(values):
        d, bd = abs(v - r), abs(values[best] - r)
        if d < bd or (d == bd and i % 2 == 0):
            best = i
    return best


def f32(r):
    """r > 0 rounded to nearest f32 (ties to even), saturating, as a Fraction."""
    x = np.float32(float(r))  # a first guess; then the neighbours decide exactly
    cands = [Fraction(float(v)) for v in (np.nextafter(x, np.float32(0)), x,
                                           np.nextafter(x, np.float32(np.inf)))
             if np.isfinite(v)]
    best = min(cands, key=lambda c: (abs(c - r),
                                     int(np.float32(float(c)).view(np.uint32)) & 1))
    return best


def reference(xs, amax):
    """NVFP4 of one block of 16 by SPEC.md §3: (s_enc, scale code, codes, values)."""
    s = Fraction(1) if amax == 0 else f32(Fraction(6 * 448) / Fraction(amax))
    if s == 0:
        s = Fraction(1)
    bmax = max(abs(Fraction(x)) for x in xs)
    sc = nearest(bmax / 6 * s, UE4M3)
    big_s = UE4M3[sc]
    codes, values = [], []
    for x in xs:
        if big_s == 0:
            codes.append(0)
            values.append(0.0)
            continue
        q = nearest(abs(Fraction(x) * s / big_s), E2M1)
        neg = np.signbit(x)
        codes.append(q | (8 if neg else 0))
        v = float(E2M1[q] * big_s / s)  # Fraction -> float rounds to nearest
        values.append(-v if neg else v)
    return float(s), sc, codes, values


def random_blocks(n, seed):
    rng = np.random.default_rng(seed)
    for _ in range(n):
        base = rng.integers(-30, 30)
        xs = rng.standard_normal(16) * 2.0 ** (base + rng.integers(0, 6, 16))
        xs[rng.random(16) < 0.1] = 0.0
        amax = float(np.max(np.abs(xs)))
        kind = rng.integers(0, 4)
        a = [amax, amax * 2.0 ** rng.integers(0, 25), amax * rng.random(), 0.0][kind]
        yield xs, a


def test_nvfp4_equals_the_fraction_reference():
    for xs, a in random_blocks(300, 50):
        ts, scales, codes, values = lpgen.quantize_nvfp4(xs, tensor_amax=a)
        s, sc, want_codes, want_values = reference(xs, a)
        assert ts == s
        assert scales.dtype == np.uint8 and codes.dtype == np.uint8
        assert list(scales) == [sc]
        assert list(codes) == want_codes
        assert [v.hex() for v in values] == [v.hex() for v in want_values], (xs, a)


def test_nvfp4_equals_the_command_line(cli):
    for xs, a in random_blocks(40, 7):
        p = cli.run(["golden", "nvfp4", "quantize", "--tensor-amax", repr(float(a)), "--",
                     *(repr(float(x)) for x in xs)])
        assert p.returncode == 0, p.stderr
        lines = p.stdout.splitlines()
        ts, scales, codes, values = lpgen.quantize_nvfp4(xs, tensor_amax=a)
        assert lines[0].split()[1] == f"0x{np.float32(ts).view(np.uint32):08x}"
        assert lines[1].split()[1] == f"0x{scales[0]:02x}"
        assert lines[2].split()[1:] == [f"0x{c:x}" for c in codes]
        assert [float(v) for v in lines[3].split()[1:]] == list(values)


def test_shapes_of_a_matrix():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((3, 64))
    ts, scales, codes, values = lpgen.quantize_nvfp4(x)
    assert scales.shape == (3, 4) and codes.shape == (3, 64) and values.shape == (3, 64)
    # every block against its own reference, the tensor amax the whole matrix's
    a = float(np.max(np.abs(x)))
    for i in range(3):
        for b in range(4):
            s, sc, cs, _ = reference(x[i, 16 * b:16 * b + 16], a)
            assert ts == s and scales[i, b] == sc
            assert list(codes[i, 16 * b:16 * b + 16]) == cs
    # dequantized values are close: within half an E2M1 step of the block's scale
    assert np.max(np.abs(values - x)) <= np.max(np.abs(x)) / 2


@pytest.mark.parametrize("spec", ["nvfp4", "scaled/fp8:e4m3/tensor/f32",
                                  "scaled/posit:8/row/e8m0/t", "scaled/fp6:e2m3/b8/ue5m3"])
def test_dequantize_gives_back_quantizes_values(spec):
    sc = lpgen.Scaled(spec)
    x = np.random.default_rng(4).standard_normal((4, 32)) * 10
    ts, scales, codes, values = sc.quantize(x)
    got = sc.dequantize(ts, scales, codes)
    assert got.shape == (4, 32)
    assert [v.hex() for v in got.ravel()] == [v.hex() for v in values.ravel()]
    ts1, s1, c1, v1 = sc.quantize(x[0])
    assert [v.hex() for v in sc.dequantize(ts1, s1, c1)] == [v.hex() for v in v1]
    with pytest.raises(ValueError, match="scales"):
        sc.dequantize(ts, np.ravel(scales)[:-1], codes)
    with pytest.raises(ValueError, match="tensor scale"):
        sc.dequantize(0.1, scales, codes)


def test_mx_is_a_scaled_format():
    mx = lpgen.MxFormat("mx:fp8:e4m3")
    sc = lpgen.Scaled("scaled/fp8:e4m3/b32/e8m0")
    assert (sc.elem, sc.scale, sc.granularity, sc.tensor_scale) == (
        "fp8:e4m3:sat", "e8m0", "b32", False)
    rng = np.random.default_rng(9)
    x = rng.standard_normal((5, 32)) * 2.0 ** rng.integers(-40, 40, (5, 1))
    scale, codes = mx.quantize_block(x)
    ts, scales, codes2, _ = sc.quantize(x)
    assert ts == 1.0
    assert list(scales.ravel()) == list(scale) and (codes2 == codes).all()


def test_delayed_scaling_keeps_a_history():
    d = lpgen.DelayedScaling("scaled/fp8:e4m3/tensor/f32", history=2)
    steps = [[448.0, -224.0], [896.0, 1.0], [896.0, 1.0], [1.0, 1.0], [1.0, 1.0]]
    # S = f32(max(last 2 amaxes) / 448), 1 at the start
    want_s = [1.0, 1.0, 2.0, 2.0]
    hist = []
    for x, s in zip(steps[:4], want_s):
        ts, scales, codes, values = d.quantize(x)
        assert ts == 1.0 and scales.dtype == np.uint32
        assert np.uint32(scales[0]).view(np.float32) == s
        hist.append(max(abs(v) for v in x))
        assert d.history() == hist[-2:]
    # the fifth step still has 896 in its history (S = 2); after it, only amaxes of 1:
    # S = f32(1/448)
    ts, scales, _, _ = d.quantize(steps[4])
    assert np.uint32(scales[0]).view(np.float32) == 2.0
    ts, scales, _, _ = d.quantize(steps[4])
    assert float(np.uint32(scales[0]).view(np.float32)) == float(np.float32(1 / 448))
    nv = lpgen.DelayedScaling("nvfp4", history=4, margin=1)
    ts, _, _, _ = nv.quantize(np.ones(16))
    assert ts == 1.0
    ts, _, _, _ = nv.quantize(np.ones(16))
    assert ts == 6 * 448 / 2


def test_nvfp4_dot_equals_the_command_line_and_the_dequantized_values(cli):
    rng = np.random.default_rng(11)
    for n in (1, 3):
        a, b = rng.standard_normal(16 * n), rng.standard_normal(16 * n) * 100
        p = cli.run(["golden", "nvfp4", "dot", "--",
                     *(f"{float(x)!r},{float(y)!r}" for x, y in zip(a, b))])
        assert p.returncode == 0, p.stderr
        lines = p.stdout.splitlines()
        exact, f32 = float(lines[-2].split()[1]), float(lines[-1].split()[1])
        assert lpgen.nvfp4_dot(a, b, acc="exact") == exact
        assert lpgen.nvfp4_dot(a, b) == f32
        # the exact total, Σ q_a·S_a·q_b·S_b / (s_a·s_b) with Fractions, rounded once
        ta, sa, ca, va = lpgen.quantize_nvfp4(a)
        tb, sb, cb, vb = lpgen.quantize_nvfp4(b)
        tot = Fraction(0)
        for i in range(16 * n):
            qa = E2M1[ca[i] & 7] * (-1 if ca[i] & 8 else 1) * UE4M3[sa[i // 16]]
            qb = E2M1[cb[i] & 7] * (-1 if cb[i] & 8 else 1) * UE4M3[sb[i // 16]]
            tot += qa * qb
        assert float(tot / (Fraction(ta) * Fraction(tb))) == exact
        # and close to the dot product of the dequantized values (each rounded to float64)
        assert abs(float(np.dot(va, vb)) - exact) <= 1e-9 * max(1.0, abs(exact))


def test_stochastic_rounding_draws_once_per_element_in_c_order():
    """`rounding="stochastic:R"`: each element is x·s/S rounded stochastically into E2M1 by
    the golden rule, one draw per element in C order from the stream seeded by `seed`, the
    scales as to nearest. Blocks built so that s and every S are powers of two (x·s/S exact
    in float64), so the reference is `Format(elem).encode` of those quotients with the
    same rounding and seed (`float:2:1:nonan`, the element format)."""
    rng = np.random.default_rng(8)
    k = 5  # s_enc = 6·448/amax = 2^5, amax given as the tensor's (the history's, say)
    amax = 6 * 448 / 2 ** k
    x = rng.uniform(-1, 1, (3, 64))
    big = np.zeros((3, 4))
    for i in range(3):
        for b in range(4):
            j = int(rng.integers(-3, 4))
            block = x[i, 16 * b:16 * b + 16]
            block *= 6 * 2.0 ** (j - k) / np.max(np.abs(block))  # block max: 6·2^(j−k)
            big[i, b] = 2.0 ** j  # its scale S = ue4m3(2^j) = 2^j
    quotients = x * 2.0 ** k / np.repeat(big, 16, axis=1)
    for rounding, seed in [("stochastic:8", 5), ("stochastic:32", 2**64 - 1)]:
        ts, scales, codes, values = lpgen.quantize_nvfp4(x, amax, rounding=rounding, seed=seed)
        nts, nscales, ncodes, _ = lpgen.quantize_nvfp4(x, amax)
        assert ts == 2.0 ** k and np.array_equal(scales, nscales)
        assert [e4m3(int(c)) for c in np.ravel(scales)] == [Fraction(v) for v in big.ravel()]
        elem = lpgen.Format(lpgen.Scaled("nvfp4").elem)
        want = elem.encode(quotients, rounding=rounding, seed=seed)
        assert np.array_equal(codes, want)
        assert not np.array_equal(codes, ncodes)  # some element rounded away from nearest
        again = lpgen.Scaled("nvfp4").quantize(x, amax, rounding=rounding, seed=seed)
        assert np.array_equal(again[2], codes)
    with pytest.raises(ValueError, match="seed"):
        lpgen.quantize_nvfp4(x, seed=1)
    with pytest.raises(ValueError, match="not defined for lns"):
        lpgen.Scaled("scaled/lns:4:3/b16/e8m0").quantize(x, rounding="stochastic:8")


@pytest.mark.parametrize("call, match", [
    (lambda: lpgen.quantize_nvfp4(np.ones(15)), "block size 16 does not divide K = 15"),
    (lambda: lpgen.Scaled("scaled/fp4:e2m1/b16/f32"), "at most 16 bits"),
    (lambda: lpgen.DelayedScaling("nvfp4", history=0), "history of 0"),
    (lambda: lpgen.DelayedScaling("scaled/fp4:e2m1/b16/ue4m3"), "delayed amax is a tensor's"),
    (lambda: lpgen.quantize_nvfp4([np.nan] * 16), "finite"),
    (lambda: lpgen.quantize_nvfp4(np.ones(16), tensor_amax=-1.0), "amax"),
    (lambda: lpgen.quantize_nvfp4(np.ones((2, 2, 16))), "dimensions"),
    (lambda: lpgen.Scaled("nvfp4:b8"), "nvfp4"),
    (lambda: lpgen.Scaled("scaled/fp4:e2m1/b16/ue9m9"), "scale format"),
    (lambda: lpgen.Format("nvfp4"), "scaled format"),
    (lambda: lpgen.nvfp4_dot(np.ones(16), np.ones(32)), "one length"),
    (lambda: lpgen.nvfp4_dot(np.ones(16), np.ones(16), acc="f16"), "accumulation"),
    (lambda: lpgen.nvfp4_dot(np.ones(8), np.ones(8)), "does not divide"),
])
def test_bad_input_raises_value_error(call, match):
    with pytest.raises(ValueError, match=match):
        call()
