

# The fdpa unit and the array's fdpa PE (issue 49): every result from `Format.dot` in the
# design's fdpa mode (D = sum of a_k*b_k + C as the output words), the PE's read-out D
# converted to the format (`Format.convert`, to nearest even).


def fdpa_mode():
    """The manifest's chunking as a golden mode string, `fdpa:L:F:RHO[:promoteN]`; binary32
    words read as tf32 (`:tf32`) are Ampere's preset's, the only chunking that reads them so."""
    shown = UNIT["parameters"]["fdpa"]
    fields = shown.split(":")
    if "tf32" in fields:
        return ":".join(["fdpa", "ampere", *[f for f in fields if f.startswith("promote")]])
    return "fdpa:" + shown


def fdpa_output():
    """The format of the mode's output words: binary32, or binary16 for rne-f16."""
    return lpgen.Format("float:5:10" if ":rne-f16" in fdpa_mode() else "float:8:23")


def fdpa_words(rng, fmt, n):
    """n operand words: a corner word one time in ten, else `random_words`' (any bit
    pattern, or the encoding of a moderate value)."""
    corner = corner_words(fmt)
    return [rng.choice(corner) if rng.random() < 0.1 else w for w in random_words(rng, fmt, n)]


def pack(words, w):
    """Words of w bits side by side, word i at bits [i*w +: w]."""
    return sum(int(x) << (w * i) for i, x in enumerate(words))


def fdpa_unit(rng, n):
    """fdpa: a, b (L words each), c (an output word) -> y = D, nan (y is the NaN word). Every
    corner word of the format filling a chunk against a random one, C +0; every corner word
    of the output format as C of a random chunk; then n random chunks with C +0, any output
    word, or the chunk's own D negated (cancellation)."""
    fmt, out, mode = lpgen.Format(UNIT["format"]), fdpa_output(), fdpa_mode()
    w, wo = fmt.width, port_width("y")
    l = port_width("a") // w
    nan_word = (1 << (wo - 1)) - 1
    cases = [([x] * l, fdpa_words(rng, fmt, l), 0) for x in corner_words(fmt)]
    cases += [(fdpa_words(rng, fmt, l), fdpa_words(rng, fmt, l), c) for c in corner_words(out)]
    for _ in range(n):
        a, b = fdpa_words(rng, fmt, l), fdpa_words(rng, fmt, l)
        kind = rng.randrange(3)
        if kind == 0:
            c = 0
        elif kind == 1:
            c = rng.getrandbits(wo)
        else:
            c = int(out.neg(fmt.dot(as_u64(a), as_u64(b), mode=mode)))
        cases.append((a, b, c))
    a = as_u64([x[0] for x in cases])
    b = as_u64([x[1] for x in cases])
    c = as_u64([x[2] for x in cases])
    y = fmt.dot(a, b, mode=mode, init=c)
    return [
        ({"a": pack(cases[i][0], w), "b": pack(cases[i][1], w), "c": int(c[i])},
         {"y": int(y[i]), "nan": int(int(y[i]) == nan_word)})
        for i in range(len(cases))
    ]


class FdpaOperands:
    """The array's fdpa PE: a chunk of L words in per operand (word i at [i*N +: N]), a word of
    the format out; each `last` expects every PE's golden fdpa dot product over the chunks so
    far, words in order (`Format.dot` in the mode), D converted to the format."""

    def __init__(self, par):
        self.fmt = lpgen.Format(UNIT["format"])
        self.mode, self.out = fdpa_mode(), fdpa_output()
        self.n = self.fmt.width
        self.l = port_width("a_in") // par["rows"] // self.n
        self.width_in, self.width_out = self.l * self.n, self.n
        self.zero = 0  # a chunk of +0 words
        self.dtype = object  # wider than 64 bits from L*N > 64

    def random(self, rng, n):
        return np.array([pack(fdpa_words(rng, self.fmt, self.l), self.n) for _ in range(n)],
                        dtype=object)

    def unpack(self, chunks):
        """The words of a column of chunks, in order."""
        mask = (1 << self.n) - 1
        return as_u64([(int(x) >> (i * self.n)) & mask for x in chunks for i in range(self.l)])

    def expect(self, a, b):
        out = []
        for r in range(a.shape[1]):
            for c in range(b.shape[1]):
                d = self.fmt.dot(self.unpack(a[:, r]), self.unpack(b[:, c]), mode=self.mode)
                out.append(int(self.out.convert(as_u64([int(d)]), self.fmt)[0]))
        return out
