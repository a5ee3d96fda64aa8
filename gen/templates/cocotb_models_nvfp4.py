

# NVFP4 units (nvfp4-enc, nvfp4-dot; docs/rtl.md): one block (pair) per input, golden
# `lpgen.Scaled` (the golden `ScaledFormat::quantize`) and the golden decodings of E2M1 and
# UE4M3 (`lpgen.Format`).

from fractions import Fraction  # noqa: E402 (the models are one file, sections in order)

NVFP4_E2M1 = "float:2:1:nonan"
NVFP4_UE4M3 = "float:4:3:fn:sat"


def nvfp4_enc_unit(rng, n):
    """nvfp4-enc: x (K f32 words), s_enc -> scale, codes. Each block is quantized by the golden
    `Scaled.quantize` under a tensor amax A; its tensor scale is s_enc. Corner blocks (zeros of
    both signs, a subnormal, +-max f32, E2M1's grid and ties under A = the block amax), then n
    random blocks (a block exponent 2^-150..2^127, elements a few binades below it; A from
    2^-4 to 2^24 times the block amax: saturated, subnormal and zero scales)."""
    sc = lpgen.Scaled(UNIT["format"])
    k = port_width("x") // 32

    def fill(words):
        return (words * k)[:k]

    blocks = [fill([0]), fill([0x80000000, 0]), [1] + fill([0])[1:], fill([0x7F7FFFFF, 0xFF7FFFFF]),
              fill([0x40C00000, 0x3F800000, 0xBF400000, 0x40200000, 0x3E800000])]
    for _ in range(n):
        e = rng.randint(-150, 127)
        vals = [rng.gauss(0.0, 1.0) * 2.0 ** (e - rng.randint(0, 6)) for _ in range(k)]
        with np.errstate(over="ignore"):
            words = [int(x) for x in np.array(vals, dtype=np.float32).view(np.uint32)]
        blocks.append([w if (w >> 23) & 0xFF != 0xFF else 0 for w in words])
    out = []
    for i, b in enumerate(blocks):
        xs = np.array(b, dtype=np.uint32).view(np.float32).astype(np.float64)
        amax = float(np.max(np.abs(xs)))
        a = amax if i < 5 else amax * 2.0 ** rng.randint(-4, 24)
        if not np.isfinite(a):
            a = amax
        ts, scales, codes, _ = sc.quantize(xs.reshape(1, k), tensor_amax=a)
        s_enc = int(np.array([ts], dtype=np.float32).view(np.uint32)[0])
        out.append(({"x": mx_pack(b, 32), "s_enc": s_enc},
                    {"scale": int(scales[0][0]), "codes": mx_pack(codes[0], 4)}))
    return out


def nvfp4_dot_unit(rng, n):
    """nvfp4-dot: xa, pa, xb, pb -> acc, exp, nan. The exact S_a * S_b * sum q_a,i * q_b,i from
    the golden decodings, as acc * 2^exp with exp = e_a + e_b - 2 (S = m * 2^e: e the exponent
    of the UE4M3 scale's last place, max(field, 1) - 10). The NaN scale 0x7F and bytes >= 0x80
    give nan. Every code over a whole block under 1*1, 0*1, the smallest subnormal and 448
    scales, then n random block pairs (scales random, extreme, NaN or refused)."""
    k = port_width("pa") // 4
    accw, expw = port_width("acc"), port_width("exp")
    e2m1, ue4m3 = lpgen.Format(NVFP4_E2M1), lpgen.Format(NVFP4_UE4M3)
    pairs = [((xa, [c] * k), (xb, [c] * k)) for c in range(16)
             for xa, xb in [(0x38, 0x38), (0, 0x38), (1, 1), (0x7E, 0x7E)]]
    for _ in range(n):
        s = [rng.choice([0, 1, 8, 0x7E, 0x7F, 0x80 | rng.getrandbits(7)]) if rng.random() < 0.2
             else rng.randint(0, 0x7E) for _ in range(2)]
        pairs.append(((s[0], [rng.getrandbits(4) for _ in range(k)]),
                      (s[1], [rng.getrandbits(4) for _ in range(k)])))
    out = []
    for (xa, ca), (xb, cb) in pairs:
        ins = {"xa": xa, "xb": xb, "pa": mx_pack(ca, 4), "pb": mx_pack(cb, 4)}
        if xa >= 0x7F or xb >= 0x7F:
            out.append((ins, {"acc": 0, "exp": 0, "nan": 1}))
            continue
        qa, qb = e2m1.decode(as_u64(ca)), e2m1.decode(as_u64(cb))
        sa, sb = ue4m3.decode(as_u64([xa, xb]))
        exp = max(xa >> 3, 1) - 10 + max(xb >> 3, 1) - 10 - 2
        total = Fraction(float(sa)) * Fraction(float(sb)) * sum(
            Fraction(float(x)) * Fraction(float(y)) for x, y in zip(qa, qb))
        acc = total / Fraction(2) ** exp
        assert acc.denominator == 1, "the block's exact value is a multiple of 2^exp"
        out.append((ins, {"acc": int(acc) % (1 << accw), "exp": exp % (1 << expw), "nan": 0}))
    return out


class Nvfp4Operands:
    """The array's nvfp4 PE: a block in per operand (the UE4M3 scale byte at [7:0], E2M1
    element i at [8 + 4*i +: 4]), an f32 word out; each `last` expects every PE's sum over the
    blocks so far as the golden `scale::dot::dot_unscaled_f32` defines it: each block pair's
    exact S_a * S_b * sum q_a,i * q_b,i (from the golden decodings; at most 20 significant
    bits, so exact in f64 and f32) added in f32 from +0, each addition rounded to nearest even
    (numpy's float32). A scale byte >= 0x7F (NaN, or no UE4M3 scale) makes the sum f32's
    canonical NaN 0x7fc00000. The tensor scales are the host's (not the array's)."""

    def __init__(self, par):
        self.k = (port_width("a_in") // ARRAY_PROTOCOL["rows"] - 8) // 4
        self.width_in, self.width_out = 8 + 4 * self.k, 32
        self.zero = 0  # the scale 0 over codes +0: a block of zeros
        self.dtype = object  # 72 bits at K = 16
        self.e2m1, self.ue4m3 = lpgen.Format(NVFP4_E2M1), lpgen.Format(NVFP4_UE4M3)

    def random(self, rng, n):
        """n blocks: scales near 1, subnormal, up to 448 or any; 1 in 40 NaN or refused."""
        out = []
        for _ in range(n):
            u = rng.random()
            if u < 0.025:
                s = rng.choice([0x7F, 0x80 | rng.getrandbits(7)])
            elif u < 0.25:
                s = rng.choice([0, 1, 7, 8, 0x7E])
            else:
                s = rng.randint(0, 0x7E)
            out.append(s | (rng.getrandbits(4 * self.k) << 8))
        return np.array(out, dtype=object)

    def term(self, x, y):
        """The block pair's exact dot product (a Fraction), None for NaN."""
        xa, xb = int(x) & 0xFF, int(y) & 0xFF
        if xa >= 0x7F or xb >= 0x7F:
            return None
        ca = [(int(x) >> (8 + 4 * i)) & 15 for i in range(self.k)]
        cb = [(int(y) >> (8 + 4 * i)) & 15 for i in range(self.k)]
        qa, qb = self.e2m1.decode(as_u64(ca)), self.e2m1.decode(as_u64(cb))
        sa, sb = self.ue4m3.decode(as_u64([xa, xb]))
        return Fraction(float(sa)) * Fraction(float(sb)) * sum(
            Fraction(float(p)) * Fraction(float(q)) for p, q in zip(qa, qb))

    def expect(self, a, b):
        out = []
        for r in range(a.shape[1]):
            for c in range(b.shape[1]):
                acc = np.float32(0.0)
                for x, y in zip(a[:, r], b[:, c]):
                    t = self.term(x, y)
                    if t is None:
                        acc = np.float32(np.nan)
                        continue
                    assert np.float32(float(t)) == t, "a block's exact sum fits f32"
                    acc = np.float32(acc + np.float32(float(t)))
                word = 0x7FC00000 if np.isnan(acc) else int(np.array(acc).view(np.uint32))
                out.append(word)
        return out
