

# MX units (mx-dot, mx-enc; docs/rtl.md): one block (pair) per input, golden
# `lpgen.MxFormat` (the golden `MxFormat::dot_block` and `quantize_block`).


def mx_pack(codes, w):
    return sum(int(c) << (w * i) for i, c in enumerate(codes))


def mx_blocks(rng, mx, n):
    """n blocks (scale, codes): a quarter any codes under any scale, the others the
    conversion of random values; one in 16 the NaN scale, one in 10 an extreme scale."""
    k, w = mx.block, mx.elem_width
    out = []
    for _ in range(n):
        if rng.random() < 0.25:
            scale, codes = rng.getrandbits(8), [rng.getrandbits(w) for _ in range(k)]
        else:
            vals = np.array([rng.gauss(0.0, 1.0) for _ in range(k)]) * 2.0 ** rng.randint(-20, 20)
            scale, codes = mx.quantize_block(vals)
            scale, codes = int(scale), [int(c) for c in codes]
        r = rng.random()
        if r < 1 / 16:
            scale = 0xFF
        elif r < 0.16:
            scale = rng.choice([0, 1, 127, 253, 254])
        out.append((scale, codes))
    return out


def mx_dot_unit(rng, n):
    """mx-dot: xa, pa, xb, pb -> acc, exp, nan, inf, inf_neg. Every corner code over a whole
    block against itself under the scale pairs 1·1, 2^-127·2^-127, 2^127·2^127 and the NaN
    scale on either side, then n random block pairs (`mx_blocks`)."""
    mx = lpgen.MxFormat(UNIT["format"])
    k, w = mx.block, mx.elem_width
    accw, expw = port_width("acc"), port_width("exp")
    top = 1 << (w - 1)
    corner = sorted({0, 1, 2, top - 1, top, top + 1, (1 << w) - 2, (1 << w) - 1})
    pairs = [((xa, [c] * k), (xb, [c] * k)) for c in corner
             for xa, xb in [(127, 127), (0, 0), (254, 254), (0xFF, 127), (127, 0xFF)]]
    bl = mx_blocks(rng, mx, 2 * n)
    pairs += list(zip(bl[:n], bl[n:]))
    sa, ca = as_u64([p[0][0] for p in pairs]), as_u64([p[0][1] for p in pairs])
    sb, cb = as_u64([p[1][0] for p in pairs]), as_u64([p[1][1] for p in pairs])
    num, exp, nan, inf, neg = mx.dot_block(sa, ca, sb, cb)
    return [
        ({"xa": int(sa[i]), "xb": int(sb[i]), "pa": mx_pack(ca[i], w), "pb": mx_pack(cb[i], w)},
         {"acc": num[i] % (1 << accw), "exp": int(exp[i]) % (1 << expw), "nan": int(nan[i]),
          "inf": int(inf[i]), "inf_neg": int(neg[i])})
        for i in range(len(pairs))
    ]


def mx_enc_words_unit(rng, n, mx, fmt):
    """mx-enc --input F (bf16, f16, float:E:M, fix:I:F): x (K words of F) -> scale, codes, the
    golden `quantize_block` of the words' values (`Format.decode`: exact in float64). Corner
    blocks (zeros, the sign bit alone (-0 or the most negative fix word), the lowest bit,
    all ones, the largest positive word), then n random blocks: an eighth any bit patterns,
    the others words of either sign with magnitudes of a few bit lengths below a random one."""
    k, w = mx.block, mx.elem_width
    nw = port_width("x") // k
    sign, ones = 1 << (nw - 1), (1 << nw) - 1

    def fill(words):
        return (words * k)[:k]

    blocks = [fill([0]), fill([sign, 0]), [1] + fill([0])[1:], fill([ones, 1]),
              fill([sign - 1, sign]), fill([sign - 1, 1])]
    for _ in range(n):
        if rng.random() < 1 / 8:
            blocks.append([rng.getrandbits(nw) for _ in range(k)])
            continue
        top = rng.randint(0, nw - 1)
        blocks.append([(sign if rng.random() < 0.5 else 0)
                       | rng.getrandbits(max(0, top - rng.randint(0, 2))) for _ in range(k)])
    xs = fmt.decode(as_u64(blocks))
    scales, codes = mx.quantize_block(xs)
    return [
        ({"x": mx_pack(blocks[i], nw)}, {"scale": int(scales[i]), "codes": mx_pack(codes[i], w)})
        for i in range(len(blocks))
    ]


def mx_enc_unit(rng, n):
    """mx-enc: x (K f32 words) -> scale, codes. Corner blocks (zeros of both signs, a
    subnormal, subnormals only, a NaN, +inf, -inf, the largest and smallest normal f32), then n
    random blocks (a block exponent 2^-150..2^127 with elements a few binades below it; an
    eighth any bit patterns). Other input words (`--input`): `mx_enc_words_unit`."""
    mx = lpgen.MxFormat(UNIT["format"])
    k, w = mx.block, mx.elem_width
    if "input" in UNIT["parameters"]:
        return mx_enc_words_unit(rng, n, mx, lpgen.Format(UNIT["parameters"]["input"]))

    def fill(words):
        return (words * k)[:k]

    blocks = [fill([0]), fill([0x80000000, 0]), [1] + fill([0])[1:], fill([1, 2, 0x807FFFFF]),
              fill([0x3F800000, 0x7FC00000]), fill([0x7F800000, 0x40000000]),
              fill([0xFF800000, 0x3F000000]), fill([0x7F7FFFFF, 0xFF7FFFFF]),
              fill([0x00800000, 0x80800000])]
    for _ in range(n):
        if rng.random() < 1 / 8:
            blocks.append([rng.getrandbits(32) for _ in range(k)])
            continue
        e = rng.randint(-150, 127)
        vals = [rng.gauss(0.0, 1.0) * 2.0 ** (e - rng.randint(0, 6)) for _ in range(k)]
        with np.errstate(over="ignore"):
            blocks.append([int(x) for x in np.array(vals, dtype=np.float32).view(np.uint32)])
    xs = np.array(blocks, dtype=np.uint32).view(np.float32).astype(np.float64)
    scales, codes = mx.quantize_block(xs)
    return [
        ({"x": mx_pack(blocks[i], 32)}, {"scale": int(scales[i]), "codes": mx_pack(codes[i], w)})
        for i in range(len(blocks))
    ]


class MxOperands:
    """The array's mx PE: a block in per operand (the scale byte at [7:0], element i at
    [8 + i*w +: w]), an f32 word out; each `last` expects every PE's dot product over the
    blocks so far, each block's exact sum rounded to f32 and added in f32 from +0
    (`MxFormat.dot`, acc "f32": the specification's reference, as the PE accumulates)."""

    def __init__(self, par):
        self.mx = lpgen.MxFormat(UNIT["format"])
        self.k, self.w = self.mx.block, self.mx.elem_width
        self.width_in, self.width_out = 8 + self.k * self.w, 32
        self.zero = 127  # the scale 2^0 over elements +0: a block of zeros
        self.dtype = object  # wider than 64 bits from K = 8 up

    def random(self, rng, n):
        blocks = mx_blocks(rng, self.mx, n)
        return np.array([s | (mx_pack(c, self.w) << 8) for s, c in blocks], dtype=object)

    def unpack(self, words):
        """(scales, codes) of a column of blocks, as MxFormat.dot takes a vector."""
        mask = (1 << self.w) - 1
        scales = [int(x) & 0xFF for x in words]
        codes = [(int(x) >> (8 + i * self.w)) & mask for x in words for i in range(self.k)]
        return as_u64(scales), as_u64(codes)

    def expect(self, a, b):
        out = []
        for r in range(a.shape[1]):
            for c in range(b.shape[1]):
                v = self.mx.dot(*self.unpack(a[:, r]), *self.unpack(b[:, c]), acc="f32")
                out.append(int(np.array(v, dtype=np.float32).view(np.uint32)))
        return out
