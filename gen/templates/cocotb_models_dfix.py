

# --- dfix lanes, the dfix array's read-out, dfix-monitor and quant1 (the second part of the
# models: gen/templates/cocotb_models_dfix.py) ---


def shift_bits(s):
    """A shift as the `shift` port's two's-complement bits."""
    return s & ((1 << port_width("shift")) - 1)


def dfix_int(fmt, w):
    """The integer a dfix word holds (its value at scale 0, by the golden decode)."""
    return int(fmt.decode(np.uint64(w)))


def dfix_readout_shift(rng, fmt, largest, acc_bits):
    """A read-out shift for sums of largest magnitude `largest`: mostly near the one that puts
    it at the top of the word (some outputs overflow at the scale, some only at its half),
    also anywhere in the accumulator's range and at its ends, and far beyond (±3000)."""
    w = fmt.width
    natural = largest.bit_length() - (w - 1)
    r = rng.random()
    if r < 0.5:
        return natural + rng.randint(-2, 2)
    if r < 0.65:
        return rng.randint(-(w + 3), acc_bits + 3)
    if r < 0.75:
        return rng.choice([acc_bits - 1, acc_bits, acc_bits + 1, -(w + 1), -w, 3000, -3000, 0])
    return rng.randint(-4, 12)


def dfix_lane_unit(rng, n):
    """alu and vector on dfix:W: op, shift, a, b -> y, overflow, overflow_half, cmp of every
    lane by `Format.dfix_lane` (the golden `DfixFormat::lane`): every opcode (the unassigned
    5..7 too) on corner words at random shifts, then n random operations with shifts mostly
    near the top of the result, also anywhere and at ±1000."""
    fmt = lpgen.Format(UNIT["format"])
    lanes = UNIT["parameters"].get("lanes", 1)
    w = fmt.width
    cs = corner_words(fmt)
    ops = [op for op in range(8) for _ in range(len(cs))]
    ops += [rng.randrange(8) for _ in range(n)]
    k = len(ops)
    a = as_u64([[cs[(i + j) % len(cs)] if i < 8 * len(cs) else random_words(rng, fmt, 1)[0]
                 for j in range(lanes)] for i in range(k)])
    b = as_u64(random_words(rng, fmt, k * lanes)).reshape(k, lanes)
    shifts = []
    for op in ops:
        natural = w - 1 if op == 0 else 1
        r = rng.random()
        shifts.append(natural + rng.randint(-3, 3) if r < 0.5 else
                      rng.randint(-(w + 4), 2 * w + 4) if r < 0.8 else
                      rng.choice([-1000, 1000, 2 * w + 2, -(2 * w + 2), 0]))
    y, over, half, cmp = fmt.dfix_lane(np.array(ops)[:, None], a, b, np.array(shifts)[:, None])

    def packed(x, width):
        return sum(int(v) << (width * j) for j, v in enumerate(x))

    return [
        ({"op": ops[i], "shift": shift_bits(shifts[i]), "a": packed(a[i], w), "b": packed(b[i], w)},
         {"y": packed(y[i], w), "overflow": packed(over[i], 1),
          "overflow_half": packed(half[i], 1), "cmp": packed(cmp[i], 2)})
        for i in range(k)
    ]


def dfix_array_readout(rng, fmt, a, b):
    """The dfix array's read-out of the steps a (k x rows), b (k x cols) at a random shift:
    (the shift, expected c_out, overflow, overflow_half), each PE at its word/bit of the
    protocol's read-out order (`read_out`), by `Format.dfix_dot` (the golden
    `DfixFormat::dot`)."""
    rows, cols, w = a.shape[1], b.shape[1], fmt.width
    ai = [[dfix_int(fmt, x) for x in row] for row in a]
    bi = [[dfix_int(fmt, x) for x in row] for row in b]
    largest = max(abs(sum(ai[k][r] * bi[k][c] for k in range(len(ai))))
                  for r in range(rows) for c in range(cols))
    s = dfix_readout_shift(rng, fmt, largest, 2 * w + 16)
    y, over, half = fmt.dfix_dot(a.T[:, None, :], b.T[None, :, :], s)
    return s, {"c_out": read_out(y, w), "overflow": read_out(over, 1),
               "overflow_half": read_out(half, 1)}


def monitor_unit(rng, n):
    """dfix-monitor: in_valid (a read-out), clear, mask, overflow, overflow_half -> the
    saturating counts seen, overflows, overflows_half (counter_bits each). The flags are
    golden read-outs of random dot products (`Format.dfix_dot` at a random shift) or any
    pattern; masks all ones, a smaller tile's rectangle or random; bubbles carry garbage flags;
    clear comes now and then, with a read-out or alone. Each read-out expects the counts so
    far, as a host counts the flags: popcounts of mask & flags, saturated at all ones."""
    fmt = lpgen.Format(UNIT["format"])
    par = UNIT["parameters"]
    rows, cols, cb = par["rows"], par["cols"], par["counter_bits"]
    outs = rows * cols
    top = (1 << cb) - 1
    counts = [0, 0, 0]
    cycles = []
    while len(cycles) < n:
        r = rng.random()
        if r < 0.5:
            k = rng.randint(1, 6)
            a = as_u64(random_words(rng, fmt, k * rows)).reshape(k, rows)
            b = as_u64(random_words(rng, fmt, k * cols)).reshape(k, cols)
            _, exp = dfix_array_readout(rng, fmt, a, b)
            over, half = exp["overflow"], exp["overflow_half"]
        else:
            over, half = rng.getrandbits(outs), rng.getrandbits(outs)
        m = rng.random()
        if m < 0.5:
            mask = (1 << outs) - 1
        elif m < 0.8:
            rr, cc = rng.randint(1, rows), rng.randint(1, cols)
            inside = [[int(i < rr and j < cc) for j in range(cols)] for i in range(rows)]
            mask = read_out(inside, 1)
        else:
            mask = rng.getrandbits(outs)
        valid = rng.random() < 0.8
        clear = rng.random() < 0.06
        if clear:
            counts = [0, 0, 0]
        if valid:
            adds = [bin(mask).count("1"), bin(mask & over).count("1"), bin(mask & half).count("1")]
            counts = [min(c + x, top) for c, x in zip(counts, adds)]
        ins = {"in_valid": int(valid), "clear": int(clear), "mask": mask, "overflow": over,
               "overflow_half": half}
        exp = dict(zip(["seen", "overflows", "overflows_half"], counts)) if valid else None
        cycles.append((ins, exp))
    return cycles


def quant1_column(rng, fmt, rows):
    """A random column's words (g, r): mixed signs, non-negative, negative, zeros, extreme
    words, small integers (means that tie) or zero residuals."""
    n = rng.choice([1, rows] + [rng.randint(1, rows)] * 6)
    w = fmt.width
    top = 1 << (w - 1)
    kind = rng.randrange(7)

    def word():
        any_ = rng.getrandbits(w)
        return [any_, any_ >> 1, (any_ >> 1) | top, 0,
                rng.choice([top, top + 1, (1 << w) - 1, 0, 1, top - 2, top - 1]),
                int(fmt.encode(float(rng.randint(-4, 4)))), any_][kind]

    g = [word() for _ in range(n)]
    r = [0 if kind == 6 else word() for _ in range(n)]
    return g, r


def quant1_unit(rng, n):
    """quant1 (docs/rtl.md): columns of 1..rows words streamed twice. Pass 1 (replay 0,
    first/last marking the column): onebit and r_out = v = g + r (`fmt.add`), neg/pos the
    previous column's means (zero after reset); then a wait for the dividers (W + log2(rows)
    + 8 cycles, more than the unit's gap); pass 2 (replay 1, first/last garbage, sometimes
    left out): onebit, the new residual on r_out, this column's means. Golden: `fmt.onebit`
    of the column with its residuals in mode quire (the means as the reconstruction words of
    each side; an empty side's is zero). Bubbles carry garbage; busy is low at every result."""
    fmt = lpgen.Format(UNIT["format"])
    rows = UNIT["parameters"]["rows"]
    w = fmt.width
    zero = int(fmt.encode(0.0))
    held = (zero, zero)
    gap = w + rows.bit_length() + 8
    cycles = []

    def bubble():
        return ({"in_valid": 0, "replay": rng.getrandbits(1), "first": rng.getrandbits(1),
                 "last": rng.getrandbits(1), "g": rng.getrandbits(w), "r": rng.getrandbits(w)},
                None)

    while len(cycles) < n:
        g, r = quant1_column(rng, fmt, rows)
        k = len(g)
        bits, recon, resid = fmt.onebit(as_u64(g), residual=as_u64(r), mode="quire")
        v = fmt.add(as_u64(g), as_u64(r))
        sides = {bool(b): int(x) for b, x in zip(bits, recon)}
        means = (sides.get(False, zero), sides.get(True, zero))
        for i in range(k):
            if rng.random() < 1 / 8:
                cycles.append(bubble())
            cycles.append((
                {"in_valid": 1, "replay": 0, "first": int(i == 0), "last": int(i + 1 == k),
                 "g": g[i], "r": r[i]},
                {"onebit": int(bits[i]), "r_out": int(v[i]), "neg": held[0], "pos": held[1],
                 "busy": 0}))
        held = means
        cycles += [bubble() for _ in range(gap + rng.randint(0, 2))]
        if rng.random() < 1 / 8:
            continue  # no error feedback: no pass 2
        for i in range(k):
            if rng.random() < 1 / 8:
                cycles.append(bubble())
            cycles.append((
                {"in_valid": 1, "replay": 1, "first": rng.getrandbits(1),
                 "last": rng.getrandbits(1), "g": g[i], "r": r[i]},
                {"onebit": int(bits[i]), "r_out": int(resid[i]), "neg": held[0],
                 "pos": held[1], "busy": 0}))
    return cycles


UNITS = {
    "posit-add": lambda rng, n: binary_unit(rng, n, "sub", add_or_sub),
    "posit-mul": lambda rng, n: binary_unit(rng, n, None, mul_only),
    "lns-add": lambda rng, n: binary_unit(rng, n, "sub", add_or_sub),
    "lns-mul": lambda rng, n: binary_unit(rng, n, "div", mul_or_div),
    "float-add": lambda rng, n: binary_unit(rng, n, "sub", add_or_sub),
    "float-mul": lambda rng, n: binary_unit(rng, n, None, mul_only),
    "float-fma": fma_unit,
    "posit-mac": mac_unit,
    "fix-mac": mac_unit,
    "lns-kahan": kahan_unit,
    "array": array_unit,
    "convert": convert_unit,
    "alu": lane_unit,
    "vector": lane_unit,
    "q8-enc": q8_enc_unit,
    "q8-dec": q8_dec_unit,
    "dfix-monitor": monitor_unit,
    "quant1": quant1_unit,
    "mx-dot": mx_dot_unit,
    "mx-enc": mx_enc_unit,
    "nvfp4-enc": nvfp4_enc_unit,
    "nvfp4-dot": nvfp4_dot_unit,
    "fdpa": fdpa_unit,
}


def with_bubbles(rng, cycles):
    """Stateless units: a bubble (in_valid low, random operands) before about one input in
    four."""
    out = []
    for ins, exp in cycles:
        if "in_valid" not in ins:
            while rng.random() < 0.25:
                out.append(({k: rng.getrandbits(port_width(k)) for k in ins} | {"in_valid": 0}, None))
            ins = ins | {"in_valid": 1}
        out.append((ins, exp))
    return out


