"""`lpgen.Rounder` (stochastic add/sub/mul/div/fma: the golden xorshift32 stream, one draw per
element in C order, running on across calls), `Format.acc_dot` (the float array PE's read-out
with `--acc A`) and `lpgen.MxFormat` (OCP MX blocks): against `lpgen golden`, against the
rules' own words, and bad input raises ValueError."""

from fractions import Fraction

import numpy as np
import pytest

import lpgen


def cli_ops(cli, spec, op, a, b, bits, seed):
    """`lpgen golden SPEC OP --stdin --rounding stochastic:R --seed S`: one stream."""
    lines = "".join(f"{x:#x} {y:#x}\n" for x, y in zip(a, b))
    p = cli.run(["golden", spec, op, "--stdin", "--rounding", f"stochastic:{bits}", "--seed",
                 str(seed)], stdin=lines)
    assert p.returncode == 0, p.stderr
    return [int(line.split()[0], 16) for line in p.stdout.splitlines()]


@pytest.mark.parametrize("spec", ["fp8:e4m3", "bf16", "fp8:e5m2:sat:ftz"])
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div"])
def test_rounded_ops_equal_the_command_lines_stream(cli, spec, op):
    fmt = lpgen.Format(spec)
    rng = np.random.default_rng(5)
    a = rng.integers(0, 1 << fmt.width, 200)
    b = rng.integers(0, 1 << fmt.width, 200)
    r = lpgen.Rounder("stochastic:5", seed=11)
    # two calls: the stream runs on from the first into the second
    got = list(getattr(fmt, op)(a[:77], b[:77], rounder=r)) + list(
        getattr(fmt, op)(a[77:], b[77:], rounder=r))
    assert got == cli_ops(cli, spec, op, a, b, 5, 11)
    # nearest differs somewhere (the stream is used)
    assert got != list(getattr(fmt, op)(a, b))


def test_the_documented_stream():
    # docs/rtl.md: fp8:e4m3, R = 4, S = 7, the pair 0x39 0x31 four times: 0x33, 0x32, 0x32, 0x32
    r = lpgen.Rounder("stochastic:4", seed=7)
    f = lpgen.Format("fp8:e4m3")
    assert list(f.mul([0x39] * 4, [0x31] * 4, rounder=r)) == [0x33, 0x32, 0x32, 0x32]
    # seed 7 resets the generator to 0x63cbe1e4 (docs/rtl.md); four draws moved it on
    assert lpgen.Rounder("stochastic:4", seed=7).state == 0x63CBE1E4 != r.state
    assert r.rounding == "stochastic:4"


def test_fma_with_a_zero_addend_rounds_as_the_product():
    # a*b + (+0) is the exact product, rounded once with the same draw as mul
    f = lpgen.Format("bf16")
    rng = np.random.default_rng(3)
    vals = rng.normal(size=300) * 2.0 ** rng.integers(-20, 20, 300)
    a, b = f.encode(vals[:150]), f.encode(vals[150:])
    y = f.fma(a, b, np.zeros(150, dtype=np.uint64), rounder=lpgen.Rounder("stochastic:8", 3))
    m = f.mul(a, b, rounder=lpgen.Rounder("stochastic:8", 3))
    assert list(y) == list(m)


@pytest.mark.parametrize("call", [
    lambda: lpgen.Rounder("nearest"),
    lambda: lpgen.Rounder("stochastic:0"),
    lambda: lpgen.Format("posit:8:0").add([1], [2], rounder=lpgen.Rounder("stochastic:4")),
    lambda: lpgen.Format("fix:7:8").fma([1], [2], [3], rounder=lpgen.Rounder("stochastic:4")),
    lambda: lpgen.Format("lns:4:4").add([1], [2], flags=True,
                                           rounder=lpgen.Rounder("stochastic:4")),
    lambda: lpgen.Format("fp8:e4m3").acc_dot([1], [2], acc="posit:16"),
    lambda: lpgen.Format("posit:8:0").acc_dot([1], [2], acc="bf16"),
])
def test_bad_rounders_and_accumulators_raise_value_error(call):
    with pytest.raises(ValueError):
        call()


@pytest.mark.parametrize("spec,acc", [("fp8:e4m3", "bf16"), ("fp8:e5m2", "float:8:23")])
def test_acc_dot_is_the_wide_fma_chain_then_one_conversion(spec, acc):
    # docs/rtl.md: s = A.fma(a, b, s) on the words widened to A from +0, then A.convert(F, s)
    f, w = lpgen.Format(spec), lpgen.Format(acc)
    rng = np.random.default_rng(9)
    a = rng.integers(0, 256, (40, 12))
    b = rng.integers(0, 256, (40, 12))
    got = f.acc_dot(a, b, acc=acc)
    assert got.shape == (40,)
    for i in range(40):
        s = w.encode(0.0)
        for k in range(12):
            s = w.fma(f.convert(a[i, k], w), f.convert(b[i, k], w), s)
        assert got[i] == w.convert(s, f)
    # along axis 0 as well
    assert list(f.acc_dot(a.T, b.T, acc=acc, axis=0)) == list(got)


def test_mx_quantize_block_by_hand():
    # [1, 2.5, -3, 0.1] in E4M3 (emax 8): e = floor(log2 3) - 8 = -7, scale byte 127 - 7;
    # V / 2^-7 = 128 (2^7: 0x70), 320 (1.25·2^8: 0x7A), -384 (-1.5·2^8: 0xFC), 12.8 (to
    # nearest 13 = 1.625·2^3: 0x55)
    mx = lpgen.MxFormat("mx:fp8:e4m3:b4")
    assert (mx.block, mx.elem, mx.elem_width, str(mx)) == (4, "fp8:e4m3", 8, "mx:fp8:e4m3:b4")
    s, c = mx.quantize_block([1.0, 2.5, -3.0, 0.1])
    assert s == 120 and list(c) == [0x70, 0x7A, 0xFC, 0x55]
    assert list(mx.dequantize_block(s, c)) == [1.0, 2.5, -3.0, 13 / 128]
    # a NaN anywhere: the NaN scale, codes 0
    s, c = mx.quantize_block([1.0, np.nan])
    assert s == 0xFF and list(c) == [0, 0]
    assert np.isnan(mx.dequantize_block(s, c)).all()


def test_mx_dot_block_is_exact():
    mx = lpgen.MxFormat("mx:fp4:e2m1:b8")
    rng = np.random.default_rng(1)
    x = rng.normal(size=(50, 8)) * 2.0 ** rng.integers(-30, 30, (50, 1))
    y = rng.normal(size=(50, 8))
    sa, ca = mx.quantize_block(x)
    sb, cb = mx.quantize_block(y)
    assert sa.shape == (50,) and ca.shape == (50, 8)
    num, exp, nan, inf, neg = mx.dot_block(sa, ca, sb, cb)
    va, vb = mx.dequantize_block(sa, ca), mx.dequantize_block(sb, cb)
    for i in range(50):
        want = sum(Fraction(p) * Fraction(q) for p, q in zip(va[i], vb[i]))
        assert Fraction(num[i]) * Fraction(2) ** int(exp[i]) == want
        assert not (nan[i] or inf[i] or neg[i])
    # one pair: scalars; a NaN scale: NaN
    one = mx.dot_block(int(sa[0]), ca[0], int(sb[0]), cb[0])
    assert one == (num[0], int(exp[0]), False, False, False)
    assert mx.dot_block(0xFF, ca[0], int(sb[0]), cb[0])[2] is True


def test_mx_vector_quantize_and_dot_over_many_blocks():
    # A vector of 19 values in blocks of 8: 8, 8 and 3, each block as quantize_block gives it.
    mx = lpgen.MxFormat("mx:fp4:e2m1:b8")
    rng = np.random.default_rng(2)
    # Blocks of very different scales: f32 accumulation loses the small blocks, exact not.
    x = rng.normal(size=19) * np.repeat([2.0 ** 20, 2.0 ** -10, 1.0], [8, 8, 3])
    y = rng.normal(size=19)
    sx, cx = mx.quantize(x)
    sy, cy = mx.quantize(y)
    assert sx.shape == (3,) and cx.shape == (19,)
    for i, lo in enumerate([0, 8, 16]):
        s, c = mx.quantize_block(x[lo:lo + 8])
        assert s == sx[i] and list(c) == list(cx[lo:lo + 8])
    vx, vy = mx.dequantize(sx, cx), mx.dequantize(sy, cy)
    assert list(vx[16:]) == list(mx.dequantize_block(int(sx[2]), cx[16:]))
    # The specification's reference (§6.4 and its f32 accumulation), written here from its
    # words: each block's exact sum (exact in float64 for FP4 elements) rounded to f32, added
    # to an f32 accumulator from +0 in block order; "exact": everything added exactly.
    parts = [sum(Fraction(p) * Fraction(q) for p, q in zip(vx[lo:lo + 8], vy[lo:lo + 8]))
             for lo in [0, 8, 16]]
    acc = np.float32(0.0)
    for part in parts:
        assert Fraction(float(part)) == part
        acc = np.float32(acc + np.float32(float(part)))
    assert mx.dot(sx, cx, sy, cy) == float(acc)
    assert mx.dot(sx, cx, sy, cy, acc="exact") == float(sum(parts))
    assert float(acc) != float(sum(parts))


@pytest.mark.parametrize("call", [
    lambda mx: mx.quantize(np.zeros((2, 2))),
    lambda mx: mx.quantize([]),
    lambda mx: mx.dequantize([127], np.zeros(9, dtype=np.uint8)),      # 9 codes are 2 blocks
    lambda mx: mx.dequantize([127, 127], np.zeros((2, 8), dtype=np.uint8)),
    lambda mx: mx.dot([127], [1, 2], [127], [1, 2, 3]),                 # 2 and 3 elements
    lambda mx: mx.dot([127], [1, 2], [127], [1, 2], acc="f16"),
])
def test_bad_mx_vector_input_raises_value_error(call):
    with pytest.raises(ValueError):
        call(lpgen.MxFormat("mx:fp4:e2m1:b8"))


@pytest.mark.parametrize("call", [
    lambda mx: lpgen.MxFormat("mx:fp9:e4m3"),
    lambda mx: lpgen.MxFormat("mx:fp4:e2m1:b0"),
    lambda mx: mx.quantize_block(np.zeros(9)),                     # longer than K = 8
    lambda mx: mx.quantize_block(np.zeros((2, 2, 2))),
    lambda mx: mx.dequantize_block(127, [16]),                     # beyond 4 bits
    lambda mx: mx.dequantize_block([127, 127], [[1, 2]]),          # two scales, one block
    lambda mx: mx.dot_block(127, [1, 2], 127, [1, 2, 3]),          # 2 and 3 elements
    lambda mx: mx.dot_block(127, [1, 2], 256, [1, 2]),             # scale beyond a byte
])
def test_bad_mx_input_raises_value_error(call):
    with pytest.raises(ValueError):
        call(lpgen.MxFormat("mx:fp4:e2m1:b8"))


def xorshift_draws(state, bits, n):
    """The stream's next n draws from `state`, by its documented step (13, 17, 5)."""
    out = []
    for _ in range(n):
        state ^= (state << 13) & 0xFFFFFFFF
        state ^= state >> 17
        state ^= (state << 5) & 0xFFFFFFFF
        out.append(state >> (32 - bits))
    return out


def test_stochastic_convert_steps_by_the_rule():
    # bf16 words into fp8:e4m3 (the `convert` unit with --rounding stochastic:6): of the two
    # E4M3 neighbours, the one farther from zero iff d + r >= 2^6 (d: the top 6 bits of the
    # distance past the nearer one, in steps; r: the draw); neighbours from E4M3's own values
    f, t = lpgen.Format("bf16"), lpgen.Format("fp8:e4m3")
    mags = sorted({Fraction(float(t.decode(w))) for w in range(0x7F)})
    rng = np.random.default_rng(8)
    vals = rng.normal(size=2000) * 2.0 ** rng.integers(-12, 8, 2000)
    words = f.encode(np.clip(vals, -440, 440))
    r = lpgen.Rounder("stochastic:6", seed=4)
    draws = xorshift_draws(r.state, 6, len(words))
    got = f.convert(words, t, rounder=r)
    ups = 0
    for w, y, draw in zip(words, got, draws):
        x = Fraction(float(f.decode(w)))
        i = max(k for k, m in enumerate(mags) if m <= abs(x))
        lo, hi = mags[i], mags[min(i + 1, len(mags) - 1)]
        d = int((abs(x) - lo) / (hi - lo) * 64) if hi > lo else 0
        up = d + draw >= 64
        ups += up
        mag = hi if up else lo
        assert y == t.encode(float(mag) if x >= 0 else -float(mag)) | (0x80 if x < 0 else 0), \
            (hex(int(w)), hex(int(y)), d, draw)
    assert 100 < ups < 1500
    # nearest without a rounder; stochastic only into floats
    assert list(f.convert(words, t)) != list(got)
    for src, dst in [("bf16", "fix:7:8"), ("posit:16:1", "posit:8:2")]:
        with pytest.raises(ValueError):
            lpgen.Format(src).convert([1], dst, rounder=lpgen.Rounder("stochastic:4"))


def test_mx_quantize_words_by_hand():
    """Blocks of words (`mx-enc --input`), worked out from §6.3 by hand. fix:7:8 into INT8:
    -128, 1, -1, 0.5; max 2^7, e = 7 (scale 134); k = x/2^7*64: -64 (0xC0), 0.5 and -0.5 tie
    to 0, 0.25 gives 0. f16 subnormals into E4M3: 2^-24, 3*2^-24, 0, -2^-23; max 1.5*2^-23,
    e = -23 - 8 = -31 (scale 96); elements 2^7 (0x70), 1.5*2^8 (0x7C), 0, -2^8 (0xF8)."""
    scale, codes = lpgen.MxFormat("mx:int8:b4").quantize_words([0x8000, 0x100, 0xFF00, 0x80],
                                                               "fix:7:8")
    assert (scale, list(codes)) == (134, [0xC0, 0, 0, 0])
    scale, codes = lpgen.MxFormat("mx:fp8:e4m3:b4").quantize_words([1, 3, 0, 0x8002], "f16")
    assert (scale, list(codes)) == (96, [0x70, 0x7C, 0, 0xF8])
    # bf16 words, two blocks: [1, 2.5, 0, -tiny] (e = 1: 32, 80, 0, 0) and one with +inf.
    scales, codes = lpgen.MxFormat("mx:int8:b4").quantize_words(
        np.array([[0x3F80, 0x4020, 0, 0x8001], [0x7F80, 0, 0, 0]], dtype=np.uint16), "bf16")
    assert list(scales) == [128, 255] and codes.tolist() == [[32, 80, 0, 0], [0, 0, 0, 0]]


@pytest.mark.parametrize("words,inp", [([1, 2], "posit:8:0"), ([1, 2], "float:9:23"),
                                       ([0x10000, 2], "bf16"), ([1] * 5, "bf16"),
                                       ([1, 2], "fp8:e4m3")])
def test_bad_mx_words_raise_value_error(words, inp):
    with pytest.raises(ValueError):
        lpgen.MxFormat("mx:int8:b4").quantize_words(words, inp)
