"""Seed 003's 8-bit codecs (`q8_encode`, `q8_decode`) and seed 001's 1-bit quantizer with error
feedback (`onebit`, `Format.onebit`)."""

import numpy as np
import pytest

import lpgen
from conftest import assert_same_words

Q8_TYPES = ["q8:dynamic-tree", "q8:static-tree", "q8:linear", "q8:mantissa"]


def test_the_papers_example():
    # sw/golden/src/q8.rs: 0.2345678 at absmax 4 -> unit value 0.23671875, decoded 0.946875
    codes, scale = lpgen.q8_encode(np.array([0.2345678 * 4, 4.0, -1.0]), "q8:dynamic-tree")
    assert scale == 4.0 and codes.dtype == np.uint8
    assert lpgen.q8_decode(codes[:1], 1.0, "q8:dynamic-tree")[0] == np.float32(0.23671875)
    values = lpgen.q8_decode(codes, scale, "q8:dynamic-tree")
    assert values.dtype == np.float32
    assert values[0] == np.float32(0.946875) and values[1] == 4.0


@pytest.mark.parametrize("ty", Q8_TYPES)
def test_q8_encodes_to_the_nearest_code(ty, rng):
    x = np.concatenate([rng.standard_normal(50_000) * 3, [0.0, -0.0, np.inf, -np.inf, np.nan]])
    codes, scale = lpgen.q8_encode(x, ty)
    assert codes.shape == x.shape
    x32 = x.astype(np.float32)
    finite = np.abs(x32[np.isfinite(x32)])
    if ty in ("q8:dynamic-tree", "q8:linear"):
        assert scale == finite.max()  # absmax over the finite elements
    else:
        assert scale == np.float32(10.0)  # 10^1, the default exponent offset
    # The reference: the nearest unit magnitude to |x| / scale (ties to the larger), x's sign,
    # as sw/golden/src/q8.rs states it, over the codec's own table.
    units = lpgen.q8_decode(np.arange(256), 1.0, ty).astype(np.float64)
    mags = np.unique(np.abs(units))
    fields = np.array([np.argmax(np.abs(units[:128]) == m) for m in mags])
    mids = (mags[:-1] + mags[1:]) / 2
    a = np.abs(x32.astype(np.float64))
    a[np.isnan(a)] = 0
    idx = np.searchsorted(mids * np.float64(np.float32(scale)), a, side="right")
    sign = np.where(np.signbit(x32) & ~np.isnan(x32), 0x80, 0)
    want = (fields[idx] | sign).astype(np.uint8)
    assert_same_words(codes, want, ty)
    back = lpgen.q8_decode(codes, scale, ty)
    want_values = (units[codes] * np.float64(np.float32(scale))).astype(np.float32)
    assert (back == want_values).all()


def test_q8_options_and_errors(cli):
    codes, scale = lpgen.q8_encode([5.0, -50.0], "q8:static-tree", offset=2)
    assert scale == np.float32(100.0)
    with pytest.raises(ValueError) as e:
        lpgen.q8_encode([1.0], "q8:foo")
    assert str(e.value) == cli.error(["quant", "q8:foo", "--dist", "N(0,1)"])
    with pytest.raises(ValueError, match="offset applies to q8:static-tree and q8:mantissa"):
        lpgen.q8_encode([1.0], "q8:linear", offset=1)
    with pytest.raises(ValueError) as e:
        lpgen.q8_encode([1.0], "q8:mantissa", offset=11)
    assert str(e.value) == cli.error(["quant", "q8:mantissa", "--dist", "N(0,1)", "--offset", "11"])
    with pytest.raises(ValueError, match="more than the 8 bits"):
        lpgen.q8_decode([256], 1.0)
    with pytest.raises(ValueError, match="finite"):
        lpgen.q8_decode([1], float("nan"))


def test_onebit_the_modules_example():
    # sw/golden/src/onebit.rs: g = [1, 3, -2, -4], residual 0 -> bits 1100 (LSB first),
    # reconstruction -3 and 2, new residual [-1, 1, 1, -1]
    bits, recon, r = lpgen.onebit([1.0, 3.0, -2.0, -4.0], [0.0, 0.0, 0.0, 0.0])
    assert bits.tolist() == [True, True, False, False]
    assert recon.tolist() == [2.0, 2.0, -3.0, -3.0]
    assert r.tolist() == [-1.0, 1.0, 1.0, -1.0]
    bits, recon, r = lpgen.onebit([1.0, 3.0, -2.0, -4.0])
    assert r is None and recon.tolist() == [2.0, 2.0, -3.0, -3.0]


def f32_reference(g, r):
    """Seed 001 with error feedback in float32, naive sums in row order, per column."""
    v = (g + r).astype(np.float32)
    bits = v >= 0  # NaN is on the 0 side
    recon = np.zeros_like(v)
    for col in range(v.shape[1]):
        for side in (True, False):
            sel = v[:, col][bits[:, col] == side]
            s = np.float32(0)
            for x in sel:
                s = np.float32(s + x)
            mean = np.float32(s / np.float32(len(sel))) if len(sel) else np.float32(0)
            recon[bits[:, col] == side, col] = mean
    return bits, recon, (v - recon).astype(np.float32)


def test_onebit_in_f32_matches_its_definition(rng):
    g = (rng.standard_normal((37, 5)) * 0.1).astype(np.float32)
    r = (rng.standard_normal((37, 5)) * 0.01).astype(np.float32)
    g[3, 1] = 0.0
    g[4, 2] = -0.0
    bits, recon, new_r = lpgen.onebit(g, r)
    want_bits, want_recon, want_r = f32_reference(g, r)
    assert (bits == want_bits).all()
    assert (recon.astype(np.float32) == want_recon).all()
    assert (new_r.astype(np.float32) == want_r).all()
    # The same on words, through Format.onebit
    f = lpgen.Format("f32")
    wb, wrec, wr = f.onebit(f.encode(g), f.encode(r))
    assert (wb == bits).all()
    assert_same_words(wrec, want_recon.view(np.uint32), "recon words")
    assert_same_words(wr, want_r.view(np.uint32), "residual words")


def test_onebit_formats_modes_and_shapes(cli):
    p = lpgen.Format("posit:16:1")
    g = p.encode([[0.5, -1.0], [1.5, -0.25], [-2.0, 4.0], [0.0, 1.0]])
    bits, recon, r = p.onebit(g, np.zeros_like(g), mode="quire")
    assert bits.shape == recon.shape == r.shape == (4, 2) and recon.dtype == np.uint16
    # column 0: v = [0.5, 1.5, -2, 0] -> positive mean (0.5 + 1.5 + 0) / 3 = 2/3 rounded once
    assert p.decode(recon[0, 0]) == p.decode(p.div(p.encode(2.0), p.encode(3.0)))
    assert p.decode(recon[2, 0]) == -2.0
    bits, recon, r = lpgen.onebit([1.0, -1.0], format="lns:5:6", mode="kahan")
    assert r is None and recon.tolist() == [1.0, -1.0]
    with pytest.raises(ValueError) as e:
        lpgen.onebit([1.0], format="lns:5:6", mode="quire")
    assert str(e.value) == cli.error(["golden", "lns:5:6", "sum", "--mode", "quire", "1"])
    with pytest.raises(ValueError, match="residual has shape"):
        lpgen.onebit([1.0, 2.0], [0.0])
    with pytest.raises(ValueError, match="1-D"):
        lpgen.onebit(np.zeros((2, 2, 2)))


@pytest.mark.parametrize("spec", ["posit:16:1", "fix:7:8", "f32"])
@pytest.mark.parametrize("ty", Q8_TYPES)
def test_q8_word_rule_encodes_to_the_nearest_code(spec, ty, rng):
    # Format.q8_encode_words, the rule of the hardware q8-enc: x's value over the scale's,
    # the nearest unit magnitude (ties to the larger), x's sign; exact rationals here.
    from fractions import Fraction

    f = lpgen.Format(spec)
    units = lpgen.q8_decode(np.arange(256), 1.0, ty).astype(np.float64)
    mags = sorted({Fraction(abs(u)) for u in units})
    fields = {m: int(np.argmax(np.abs(units[:128]) == float(m))) for m in mags}
    mids = [(a + b) / 2 for a, b in zip(mags, mags[1:])]
    x = f.encode(rng.standard_normal(400) * 4.0 ** rng.integers(-3, 4, 400))
    s = f.encode(np.abs(rng.standard_normal(400)) * 4.0 + 0.25)
    codes = f.q8_encode_words(x, s, ty)
    assert codes.dtype == np.uint8 and codes.shape == (400,)
    xv, sv = f.decode(x), f.decode(s)
    for i in range(400):
        q = abs(Fraction(xv[i])) / Fraction(sv[i])
        m = mags[sum(1 for mid in mids if q >= mid)]
        want = fields[m] | (0x80 if xv[i] < 0 else 0)
        assert codes[i] == want, (spec, ty, x[i], s[i], codes[i], want)


@pytest.mark.parametrize("ty", Q8_TYPES)
def test_q8_word_rule_decodes_as_the_tensor_codec_does(ty, rng):
    # f32: Format.q8_decode_words equals q8_decode (a different path: the codebook table).
    f = lpgen.Format("f32")
    codes = np.arange(256)
    for scale in [1.0, 0.375, 3.0e5, float(np.float32(rng.random()))]:
        words, flags = f.q8_decode_words(codes, f.encode(scale), ty)
        assert words.dtype == np.uint32 and flags.dtype == np.bool_
        want = lpgen.q8_decode(codes, scale, ty)
        assert (words == want.view(np.uint32)).all() and not flags.any()
    # A NaN scale word: NaN results, flagged.
    words, flags = f.q8_decode_words(codes, f.nan, ty)
    assert np.isnan(f.decode(words)).all() and flags.all()
    # posit: the code's value times the scale rounded once into the format.
    p = lpgen.Format("posit:16:1")
    s = p.encode(2.5)
    words, flags = p.q8_decode_words(codes, s, ty)
    units = lpgen.q8_decode(codes, 1.0, ty).astype(np.float64)
    assert_same_words(words, p.encode(units * 2.5), f"{ty} at 2.5")
    assert not flags.any()
    with pytest.raises(ValueError, match="more than the 8 bits"):
        p.q8_decode_words([256], s, ty)
    with pytest.raises(ValueError):
        p.q8_encode_words([0], s, "q8:foo")
