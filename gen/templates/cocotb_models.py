"""Unit models of the cocotb bench test_@TOP@.py (written by `lpgen rtl ... --testbench
cocotb`): for each unit, the cycles to drive and the outputs expected, every result from the
lpgen Python package (the golden model).

Each model returns a list of cycles (inputs, expected): inputs a dict of every input port but
clk/rst (without `in_valid` for stateless units, which `with_bubbles` gives bubbles),
expected None (no result: out_valid must stay low) or a dict of every output but out_valid.
"""

import json
import pathlib
from collections import deque

import lpgen
import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
MANIFEST = json.loads((HERE / "@TOP@.json").read_text())
# A wrapper (`--wrap axis`) names the unit it wraps, whose manifest lies beside its own.
WRAPS = MANIFEST.get("wraps")
UNIT = json.loads((HERE / f"{WRAPS}.json").read_text()) if WRAPS else MANIFEST
# A wrapper's bench streams beats, not cycles: the models of units that interleave
# accumulations by cycle (lns-kahan, arrays) then give every cycle a step (beat n in slot
# n mod P) and leave out the waits a `last` needs (the wrapper holds its stream for them).
STREAM = bool(WRAPS)
# An array's host protocol, rendered by `lpgen rtl` from its one description in Rust
# (lpgen_hdl::units::array_protocol; docs/rtl.md, `array`): the shape, P interleaved
# accumulations (cycle t belongs to t mod P), the fewest cycles between two `last` steps, the
# step that carries `clear`, and the PEs (r, c) in the order of their words on c_out (and
# bits on the flag buses; the dfix monitor takes them in that order). None for other units.
ARRAY_PROTOCOL = @ARRAY_PROTOCOL@


def has_port(name):
    return any(p["name"] == name for p in UNIT["ports"])


def port_width(name):
    for p in UNIT["ports"]:
        if p["name"] == name:
            return p["width"]
    raise KeyError(f"{UNIT['top']} has no port {name}")


def corner_words(fmt):
    """Corner-case words: the encodings of special and extreme values (by the golden model)
    and bit patterns at the edges of the word (zero, one, the sign bit and its neighbours,
    all ones)."""
    w = fmt.width
    top = 1 << (w - 1)
    values = [0.0, 1.0, -1.0, 0.5, -2.0, 3.0, 1e300, -1e300, 1e-300, -1e-300, np.nan]
    words = [int(x) for x in fmt.encode(values)]
    words += [0, 1, 2, top - 1, top, top + 1, (1 << w) - 1, (1 << w) - 2]
    return sorted(set(words))


def random_words(rng, fmt, n):
    """n words: half any bit pattern, half the encodings of moderate random values."""
    w = fmt.width
    raw = [rng.getrandbits(w) for _ in range(n)]
    vals = [rng.gauss(0.0, 1.0) * 2.0 ** rng.randint(-6, 6) for _ in range(n)]
    enc = [int(x) for x in fmt.encode(vals)]
    return [raw[i] if rng.random() < 0.5 else enc[i] for i in range(n)]


def operand_pairs(rng, fmt, n):
    """Every pair of corner words, then n random pairs: a quarter of them neighbours (b = a ±
    a few, where adders cancel and round), a tenth two values of one sign within a factor 4
    of the largest finite value (sums and products that overflow or saturate)."""
    cs = corner_words(fmt)
    pairs = [(a, b) for a in cs for b in cs]
    mask = (1 << fmt.width) - 1
    xs = random_words(rng, fmt, n)
    ys = random_words(rng, fmt, n)
    values = fmt.decode(as_u64(cs))
    big = float(np.max(np.abs(values[np.isfinite(values)])))
    for a, b in zip(xs, ys):
        r = rng.random()
        if r < 0.25:
            b = (a + rng.randint(-3, 3)) & mask
        elif r < 0.35:
            sign = rng.choice([-1.0, 1.0])
            a, b = (int(fmt.encode(sign * big * 2.0 ** -rng.uniform(0, 2))) for _ in range(2))
        pairs.append((a, b))
    return pairs


def isnan_words(fmt, words):
    return np.isnan(fmt.decode(np.asarray(words, dtype=np.uint64)))


def as_u64(words):
    return np.asarray(words, dtype=np.uint64)


# Each unit model returns a list of cycles: (inputs, expected), inputs a dict of every input
# port but clk/rst, expected None (no result: out_valid must stay low D reads later) or a dict
# of the outputs compared (out_valid must be high).


def binary_unit(rng, n, flag, op):
    """Two-operand units: a, b (and the flag port `flag` when there is one) -> y, its NaN or
    NaR flag, and (LNS) the overflow flag. op(fmt, a, b, flagbits, flags) gives the golden
    result words, with flags (words, overflow)."""
    fmt = lpgen.Format(UNIT["format"])
    pairs = operand_pairs(rng, fmt, n)
    flags = [False, True] if flag else [False]
    cases = [(a, b, f) for (a, b) in pairs[: len(pairs) - n] for f in flags]
    cases += [(a, b, flag is not None and rng.random() < 0.5) for (a, b) in pairs[-n:]]
    a = as_u64([c[0] for c in cases])
    b = as_u64([c[1] for c in cases])
    f = np.array([c[2] for c in cases], dtype=bool)
    flagged = has_port("overflow")
    y, over = op(fmt, a, b, f, True) if flagged else (op(fmt, a, b, f, False), None)
    nan = isnan_words(fmt, y)
    nan_port = "nar" if has_port("nar") else "nan"
    cycles = []
    for i in range(len(cases)):
        ins = {"a": int(a[i]), "b": int(b[i])}
        if flag:
            ins[flag] = int(f[i])
        exp = {"y": int(y[i]), nan_port: int(nan[i])}
        if flagged:
            exp["overflow"] = int(over[i])
        cycles.append((ins, exp))
    return cycles


def fma_unit(rng, n):
    """float-fma: a, b, c -> y = a*b + c rounded once, and its NaN flag. The corner pairs with
    a corner or random c, then n random triples (a quarter with c near -(a*b), where the sum
    cancels)."""
    fmt = lpgen.Format(UNIT["format"])
    pairs = operand_pairs(rng, fmt, n)
    cs = corner_words(fmt)
    cases = []
    for a, b in pairs:
        if rng.random() < 0.25:
            c = int(fmt.neg(fmt.mul(a, b)))
        elif rng.random() < 0.5:
            c = rng.choice(cs)
        else:
            c = random_words(rng, fmt, 1)[0]
        cases.append((a, b, c))
    a, b, c = (as_u64([x[i] for x in cases]) for i in range(3))
    y = fmt.fma(a, b, c, rounder=rounder())
    nan = isnan_words(fmt, y)
    return [
        ({"a": int(a[i]), "b": int(b[i]), "c": int(c[i])}, {"y": int(y[i]), "nan": int(nan[i])})
        for i in range(len(cases))
    ]


def either(flag, when, otherwise, flags):
    """`when` where flag is set, else `otherwise`: words, or with flags (words, overflow)."""
    if not flags:
        return np.where(flag, when, otherwise)
    return tuple(np.where(flag, w, o) for w, o in zip(when, otherwise))


def rounder():
    """The unit's stochastic rounding stream as it resets (`lpgen.Rounder`, the golden
    xorshift32 generator: one draw per operation in order), or None for nearest."""
    par = UNIT["parameters"]
    return lpgen.Rounder(par["rounding"], par["rounding_seed"]) if par.get("rounding") else None


def add_or_sub(fmt, a, b, sub, flags):
    r = rounder()
    if r is not None:  # one operation at a time: add and sub draw from one stream in order
        return as_u64([int((fmt.sub if s else fmt.add)(x, y, rounder=r)) for x, y, s in zip(a, b, sub)])
    return either(sub, fmt.sub(a, b, flags=flags), fmt.add(a, b, flags=flags), flags)


def mul_or_div(fmt, a, b, div, flags):
    return either(div, fmt.div(a, b, flags=flags), fmt.mul(a, b, flags=flags), flags)


def mul_only(fmt, a, b, _, flags):
    r = rounder()
    return fmt.mul(a, b, rounder=r) if r is not None else fmt.mul(a, b, flags=flags)


def pe_mode(fmt, pe):
    """The accumulation of the array's PE kind, from the family registry."""
    for fam in lpgen.formats():
        if fam["name"] == fmt.family:
            for kind in fam["pes"]:
                if kind["name"] == pe:
                    return kind["mode"]
    raise ValueError(f"PE kind {pe} is not registered for {fmt}")


class WordOperands:
    """The operands of a number format's array PE: words of the format in and out; each
    `last` expects the dot products so far in the PE's accumulation mode (the float PE with
    `--acc A`: `Format.acc_dot`)."""

    def __init__(self, par):
        self.fmt = lpgen.Format(UNIT["format"])
        self.mode = pe_mode(self.fmt, par["pe"])
        self.acc = par.get("acc")
        self.width_in = self.width_out = self.fmt.width
        self.zero = int(self.fmt.encode(0.0))
        self.dtype = np.uint64

    def random(self, rng, n):
        return as_u64(random_words(rng, self.fmt, n))

    def expect(self, a, b):
        """c[r, c] = sum over the steps of a[., r] * b[., c], row-major."""
        ta, tb = a.T[:, None, :], b.T[None, :, :]
        if self.acc:
            return self.fmt.acc_dot(ta, tb, acc=self.acc).reshape(-1)
        return self.fmt.dot(ta, tb, mode=self.mode).reshape(-1)


def read_out(x, width):
    """The PEs' values x (rows x cols) packed as the array reads them out: PE number i of the
    protocol's read-out order at bits width*i."""
    x = np.asarray(x).reshape(ARRAY_PROTOCOL["rows"], ARRAY_PROTOCOL["cols"])
    order = ARRAY_PROTOCOL["read_out_order"]
    return sum(int(x[r, c]) << (width * i) for i, (r, c) in enumerate(order))


def array_unit(rng, n):
    """The systolic array: random tiles (every other one smaller than the array, zero words
    outside it) of K = 1..24 steps, bubbles with random operands and controls inside a tile,
    sometimes a snapshot (`last`) in the middle. PEs that interleave P accumulations by cycle
    (`accumulations` in the manifest) get P streams of tiles, step t of the stream belonging
    to slot t mod P, each slot with its own tiles; a `last` step waits (its slot gets a
    bubble) until R + C - 1 cycles after the previous `last` of any slot. Each `last` expects
    every PE's result so far on c_out (in the protocol's read-out order, `read_out`), as the
    operand kind says (`WordOperands`; the mx PE's `MxOperands`, the fdpa PE's
    `FdpaOperands`, the nvfp4 PE's `Nvfp4Operands`); the dfix PE's at a random read-out shift given with `last`, with both
    overflow flags (`dfix_array_readout`). P, the spacing, the step with `clear` and the
    read-out order are the design's ARRAY_PROTOCOL."""
    par = UNIT["parameters"]
    kinds = {"mx": MxOperands, "fdpa": FdpaOperands, "nvfp4": Nvfp4Operands}
    ops = kinds.get(par["pe"], WordOperands)(par)
    fmt = None if par["pe"] in ("mx", "nvfp4") else ops.fmt
    proto = ARRAY_PROTOCOL
    rows, cols, w, wout = proto["rows"], proto["cols"], ops.width_in, ops.width_out
    slots = proto["accumulations"]
    zero = ops.zero
    spacing = proto["last_spacing"]
    dfix = has_port("shift")  # the dfix PE's read-out shift, given with `last`

    def garbage_shift():
        return {"shift": rng.getrandbits(port_width("shift"))} if dfix else {}

    def bubble():
        return {
            "in_valid": 0,
            "a_in": rng.getrandbits(w * rows),
            "b_in": rng.getrandbits(w * cols),
            "clear": rng.getrandbits(1),
            "last": rng.getrandbits(1),
        } | garbage_shift()

    tiles = [0]

    def tile():
        """One tile's events: None for a bubble, else (inputs, expected or None)."""
        full = tiles[0] % 2 == 0
        tiles[0] += 1
        m = rows if full else rng.randint(1, rows)
        nn = cols if full else rng.randint(1, cols)
        k = rng.randint(1, 24)
        split = rng.randint(1, k - 1) if k >= 2 else k
        snapshot = rng.random() < 1 / 3
        a = np.full((k, rows), zero, dtype=ops.dtype)
        b = np.full((k, cols), zero, dtype=ops.dtype)
        a[:, :m] = ops.random(rng, k * m).reshape(k, m)
        b[:, :nn] = ops.random(rng, k * nn).reshape(k, nn)
        events = []
        for kk in range(k):
            if kk == split:
                events += [None] * rng.randint(0, 3)
            last = kk + 1 == k or (snapshot and kk + 1 == split)
            exp = None
            shift = garbage_shift()
            if last and dfix:
                s, exp = dfix_array_readout(rng, fmt, a[: kk + 1], b[: kk + 1])
                shift = {"shift": shift_bits(s)}
            elif last:
                exp = {"c_out": read_out(ops.expect(a[: kk + 1], b[: kk + 1]), wout)}
            ins = shift | {
                "in_valid": 1,
                "a_in": sum(int(x) << (w * i) for i, x in enumerate(a[kk])),
                "b_in": sum(int(x) << (w * i) for i, x in enumerate(b[kk])),
                "clear": int(kk == proto["clear_step"]),
                "last": int(last),
            }
            events.append((ins, exp))
        return events

    queues = [deque() for _ in range(slots)]
    cycles = []
    last_at = -(10**9)
    while len(cycles) < n or (any(queues) and not STREAM):
        t = len(cycles)
        q = queues[t % slots]
        if not q and t >= n:
            cycles.append((bubble(), None))
            continue
        if not q:
            q.extend(tile())
        ev = q[0]
        if not STREAM and ev is not None and ev[0]["last"] and t - last_at < spacing:
            cycles.append((bubble(), None))
            continue
        q.popleft()
        if ev is None and STREAM:
            continue
        if ev is None:
            cycles.append((bubble(), None))
            continue
        if ev[0]["last"]:
            last_at = t
        cycles.append(ev)
    return cycles


def negated(fmt, a, b):
    """(a', b') with a'*b' = -(a*b) exactly, by the golden negation of a or else of b (a
    word whose negation is not exact, the most negative fix word, is left as it is); None
    when neither negates exactly."""
    for x, other, first in ((a, b, True), (b, a, False)):
        n = int(fmt.neg(x))
        vx, vn = fmt.decode([x, n])
        if vn == -vx or (np.isnan(vx) and np.isnan(vn)):
            return (n, other) if first else (other, n)
    return None


def prefix_dots(fmt, a, b, mode):
    """The golden dot products of every prefix of a, b: one call per prefix (a Kahan sum
    is not a zero-padded one)."""
    return [int(fmt.dot(as_u64(a[: k + 1]), as_u64(b[: k + 1]), mode=mode)) for k in range(len(a))]


def mac_unit(rng, n):
    """posit-mac (quire) and fix-mac (wide accumulator): op 0 acc += a*b, 1 acc -= a*b, 2 clear
    then acc = a*b, 3 clear only; y after every step is the golden dot product in mode quire
    of the products since the last clear (a subtraction as the product of a negated word)."""
    fmt = lpgen.Format(UNIT["format"])
    # fix-mac flags a saturated read-out; posit-mac flags NaR instead.
    flagged = has_port("overflow")
    zero = int(fmt.dot(as_u64([]), as_u64([]), mode="quire"))
    cycles = []
    while len(cycles) < n:
        k = rng.randint(1, 40)
        a, b = random_words(rng, fmt, k), random_words(rng, fmt, k)
        ops = [2] + [rng.choice([0, 0, 0, 1]) for _ in range(k - 1)]
        if rng.random() < 0.1:
            ops[0] = 3  # clear only: the first product is not accumulated
        ea, eb = [], []  # the products accumulated, subtractions as negated words
        count = []  # products accumulated after each step
        for i in range(k):
            if ops[i] == 1:
                neg = negated(fmt, a[i], b[i])
                if neg is None:
                    ops[i] = 0
            if ops[i] == 1:
                ea.append(neg[0])
                eb.append(neg[1])
            elif ops[i] != 3:
                ea.append(a[i])
                eb.append(b[i])
            count.append(len(ea))
        # The running read-outs (fix: with their saturation flags, the `overflow` output).
        ys, overs = [zero], [0]
        if ea:
            run = fmt.cumdot(as_u64(ea), as_u64(eb), mode="quire", flags=flagged)
            ys += [int(y) for y in (run[0] if flagged else run)]
            overs += [int(o) for o in run[1]] if flagged else [0] * len(ea)
        for i in range(k):
            y = ys[count[i]]
            if flagged:
                exp = {"y": y, "overflow": overs[count[i]]}
            else:
                exp = {"y": y, "nar": int(isnan_words(fmt, [y])[0])}
            cycles.append(({"a": a[i], "b": b[i], "op": ops[i]}, exp))
    return cycles


def kahan_unit(rng, n):
    """lns-kahan: P = max(1, stages) accumulations interleaved round-robin by cycle
    (docs/rtl.md); every slot carries its own dot products of 1..50 steps (clear at the
    first, except sometimes each slot's first, from the reset state), and about one cycle in
    seven is a bubble with random operands and clear (its slot waits). sum, overflow and nan
    after every step are the golden running Kahan dot product with its step flags
    (`cumdot(mode="kahan", flags=True)`)."""
    fmt = lpgen.Format(UNIT["format"])
    slots = max(1, UNIT["latency"])
    w = fmt.width
    queues = [deque() for _ in range(slots)]
    started = [False] * slots

    def bubble():
        return {"in_valid": 0, "a": rng.getrandbits(w), "b": rng.getrandbits(w),
                "clear": rng.getrandbits(1)}

    def dot_product(s):
        k = rng.randint(1, 50)
        a, b = random_words(rng, fmt, k), random_words(rng, fmt, k)
        clear0 = started[s] or rng.random() < 0.5
        started[s] = True
        sums, over = fmt.cumdot(as_u64(a), as_u64(b), mode="kahan", flags=True)
        nan = isnan_words(fmt, sums)
        return [
            ({"in_valid": 1, "a": a[i], "b": b[i], "clear": int(i == 0 and clear0)},
             {"sum": int(sums[i]), "overflow": int(over[i]), "nan": int(nan[i])})
            for i in range(k)
        ]

    cycles = []
    while len(cycles) < n or (any(queues) and not STREAM):
        s = len(cycles) % slots
        if not STREAM and (rng.random() < 1 / 7 or (len(cycles) >= n and not queues[s])):
            cycles.append((bubble(), None))
            continue
        if not queues[s]:
            queues[s].extend(dot_product(s))
        cycles.append(queues[s].popleft())
    return cycles


def convert_unit(rng, n):
    """convert: x (a word of the format) -> y (the word of `to`), by `Format.convert`: every
    corner word, then n random words."""
    fmt = lpgen.Format(UNIT["format"])
    to = lpgen.Format(UNIT["parameters"]["to"])
    xs = corner_words(fmt) + random_words(rng, fmt, n)
    y = fmt.convert(as_u64(xs), to, rounder=rounder())
    return [({"x": xs[i]}, {"y": int(y[i])}) for i in range(len(xs))]


def lane_unit(rng, n):
    """alu and vector (L lanes sharing the opcode): op, a, b, sel, t_in -> y, t_out, cmp, nan
    of every lane by `Format.alu` (the golden lane); lane i's words at bits i*W of each port
    (sel and nan: bit i, cmp: bits 2i+1..2i). All 16 opcodes on pairs of corner words, then
    n random operations."""
    fmt = lpgen.Format(UNIT["format"])
    if has_port("shift"):  # dfix lanes: the result's runtime shift
        return dfix_lane_unit(rng, n)
    to = lpgen.Format(UNIT["parameters"]["to"])
    lanes = UNIT["parameters"].get("lanes", 1)
    w, wt = fmt.width, to.width
    cs = corner_words(fmt)
    ops = [op for op in range(16) for _ in range(len(cs))]
    ops += [rng.choice([rng.randrange(16), 10, 9]) for _ in range(n)]
    k = len(ops)
    a = as_u64([[cs[(i + j) % len(cs)] if i < 16 * len(cs) else rng.getrandbits(w)
                 for j in range(lanes)] for i in range(k)])
    pairs = operand_pairs(rng, fmt, k * lanes)[-k * lanes:]
    b = as_u64([p[1] for p in pairs]).reshape(k, lanes)
    sel = np.array([[rng.getrandbits(1) for _ in range(lanes)] for _ in range(k)])
    t_in = as_u64(random_words(rng, to, k * lanes)).reshape(k, lanes)
    op = np.array(ops)[:, None]
    y, t_out, cmp, nan = fmt.alu(op, a, b, sel, t_in, to=to)

    def packed(x, width):
        return sum(int(v) << (width * j) for j, v in enumerate(x))

    return [
        (
            {"op": ops[i], "a": packed(a[i], w), "b": packed(b[i], w),
             "sel": packed(sel[i], 1), "t_in": packed(t_in[i], wt)},
            {"y": packed(y[i], w), "t_out": packed(t_out[i], wt), "cmp": packed(cmp[i], 2),
             "nan": packed(nan[i], 1)},
        )
        for i in range(k)
    ]


def q8_corner_scales(fmt, rng):
    return corner_words(fmt) + random_words(rng, fmt, 8)


def q8_enc_unit(rng, n):
    """q8-enc: x, scale -> code, by the golden word rule (`Format.q8_encode_words`): every
    corner x with every corner scale, then n random pairs."""
    fmt = lpgen.Format(UNIT["format"])
    ty = UNIT["parameters"]["q8"]
    scales = q8_corner_scales(fmt, rng)
    xs = corner_words(fmt)
    cases = [(x, s) for x in xs for s in scales]
    cases += list(zip(random_words(rng, fmt, n), [rng.choice(scales) for _ in range(n)]))
    x = as_u64([c[0] for c in cases])
    s = as_u64([c[1] for c in cases])
    code = fmt.q8_encode_words(x, s, ty)
    return [({"x": int(x[i]), "scale": int(s[i])}, {"code": int(code[i])}) for i in range(len(cases))]


def q8_dec_unit(rng, n):
    """q8-dec: code, scale -> y and its flag, by the golden word rule
    (`Format.q8_decode_words`): every code with every corner scale, then n random pairs."""
    fmt = lpgen.Format(UNIT["format"])
    ty = UNIT["parameters"]["q8"]
    scales = q8_corner_scales(fmt, rng)
    cases = [(c, s) for c in range(256) for s in scales[:: max(1, len(scales) // 4)]]
    cases += [(rng.getrandbits(8), rng.choice(scales)) for _ in range(n)]
    c = as_u64([x[0] for x in cases])
    s = as_u64([x[1] for x in cases])
    y, flag = fmt.q8_decode_words(c, s, ty)
    flag_port = [p["name"] for p in UNIT["ports"] if p["direction"] == "output"][1]
    return [
        ({"code": int(c[i]), "scale": int(s[i])}, {"y": int(y[i]), flag_port: int(flag[i])})
        for i in range(len(cases))
    ]
