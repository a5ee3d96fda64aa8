#!/usr/bin/env python3
"""Renders the run records of scripts/fpga-sweep.sh into the tables of docs/fpga.md.

Usage: fpga-render.py RUNS DOC [RESULTS_DIR]
       fpga-render.py --check RUNS DOC
       fpga-render.py --madd     (the multiply-add units, one "unit format" a line, for
                                  scripts/fpga-sweep.sh madd)
       fpga-render.py --mx       (the MX designs, one "key-stem unit format targets-of-stages-0
                                  [args]" a line, for scripts/fpga-sweep.sh mx)

RUNS (docs/fpga-runs.jsonl) is the committed record of every run, one JSON object a line:
lpgen synth's --json object with a "key", or {"key", "error"} for a run that failed. The
results cached in RESULTS_DIR by the sweep are merged into it (a key in the cache replaces
its record, but a "not run" estimate never replaces a measured outcome), RUNS is rewritten,
and the text between the markers <!-- sweep:begin --> and <!-- sweep:end --> of DOC is
replaced (appended if absent); the prose around them is kept. A large ECP5 array takes up to
two hours and more to run, so the records live in the repository, not only in a machine's
cache. --check writes nothing and exits 1 when DOC's tables are not what
RUNS renders to. Standard library only.
"""
import json
import math
import os
import re
import sys

# Reference points of issue 6 (same flow: yosys 0.23, nextpnr-ice40 0.4, UP5K sg48, serial
# wrapper, seed 1): (unit, format, what, LC, DSP, MHz).
REFS = [
    ("posit-add", "posit:8:1", "posit(8,1) adder", 342, 0, 7.95),
    ("posit-add", "posit:16:1", "posit(16,1) adder", 767, 0, 6.5),
    ("posit-add", "posit:32:2", "posit(32,2) adder", 1675, 0, 5.2),
    ("posit-mul", "posit:16:1", "posit(16,1) multiplier", 512, 1, 10.4),
    ("posit-mac", "posit:16:1", "posit(16,1) quire MAC", 2943, 1, 6.4),
]

# Each family's multiply-add at 8 and 16 bits (issue 32): a float fused multiply-add, the posit
# quire MAC and the LNS Kahan MAC, words of the same width (lns:3:3 and lns:5:9 are 8 and 16
# bits: 2+I+F). scripts/fpga-sweep.sh madd runs these at stages 0 and the deepest.
MADD = [
    (8, "float-fma", "fp8:e4m3"), (8, "float-fma", "fp8:e5m2"), (8, "posit-mac", "posit:8"),
    (8, "lns-kahan", "lns:3:3"),
    (16, "float-fma", "f16"), (16, "float-fma", "bf16"), (16, "posit-mac", "posit:16"),
    (16, "lns-kahan", "lns:5:9"),
]
TARGETS = ["ice40-up5k", "ice40-hx8k", "ecp5-85k"]

# The MX units (issue 33): mx-dot and mx-enc for every element type at the specification's block
# size 32 and at 8 (small enough for the iCE40s), the array's mx PE as a 1x1 for two element
# types, and beside them the q8 encoder (seed 003) on f32 words. scripts/fpga-sweep.sh mx runs
# each at stages 0 and its deepest, but the K = 32 units on the ECP5 at their deepest only
# (each such run takes 1.5-2 min on the shared machine, and the sweep was to stay well under
# 90 minutes); their table is mx_table's, not the units tables'.
MX_ELEMS = ["fp8:e4m3", "fp8:e5m2", "fp6:e3m2", "fp6:e2m3", "fp4:e2m1", "int8"]
MX_BLOCKS = [8, 32]
MX_ARRAY = [("fp8:e4m3", 8), ("fp4:e2m1", 8)]
MX_Q8 = ("q8-enc", "f32", "q8:dynamic-tree")
MX_UNITS = ["mx-dot", "mx-enc", "q8-enc"]  # rendered by mx_table only

UNIT_ORDER = ["posit-add", "posit-mul", "posit-mac", "lns-add", "lns-mul", "lns-kahan", "fix-mac"]
FORMAT_ORDER = ["posit:8:1", "posit:16:1", "posit:32:2", "posit:8", "posit:16",
                "lns:5:6", "lns:4:4", "fix:7:8"]


def load_cache(resdir):
    """The sweep's cache: KEY.json (lpgen synth --json) and KEY.err (the one-line reason).

    Returns the runs and the failures by key; a failure is a record {"error": reason, ...}."""
    ok, err = {}, {}
    if not os.path.isdir(resdir):
        return ok, err
    for name in sorted(os.listdir(resdir)):
        path = os.path.join(resdir, name)
        key, ext = os.path.splitext(name)
        if ext == ".json":
            try:
                with open(path) as f:
                    ok[key] = json.load(f)
            except (OSError, ValueError):
                continue
        elif ext == ".err":
            with open(path) as f:
                err[key] = {"error": f.read().strip().replace("lpgen: error: ", "")}
    return ok, err


def load_runs(path):
    ok, err = {}, {}
    if not os.path.exists(path):
        return ok, err
    with open(path) as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
                key = rec.pop("key")
            except (ValueError, KeyError):
                sys.exit(f"{path}:{n}: not a run record (a JSON object with a \"key\")")
            (err if "error" in rec else ok)[key] = rec
    return ok, err


def merge(runs, cache):
    """Records of RUNS with the cache's on top: a key's newest outcome, success or failure."""
    ok, err = dict(runs[0]), dict(runs[1])
    for key, rec in cache[0].items():
        rec = {k: v for k, v in rec.items() if k != "work"}  # a path on the machine that ran it
        ok[key] = rec
        err.pop(key, None)
    for key, e in cache[1].items():
        # "not run: ..." is the sweep's prediction: it never replaces a measured outcome.
        measured = key in ok or (key in err and not err[key]["error"].startswith("not run"))
        if key in cache[0] or (e["error"].startswith("not run") and measured):
            continue
        err[key] = e
        ok.pop(key, None)
    return ok, err


def save_runs(path, ok, err):
    lines = [json.dumps({"key": k, **(ok[k] if k in ok else err[k])}, ensure_ascii=False)
             for k in sorted(set(ok) | set(err))]
    with open(path + ".tmp", "w") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(path + ".tmp", path)


def mhz_per_klc(r):
    f = r.get("fmax_mhz")
    return f / r["lc"] * 1000 if f and r["lc"] else None


def fmt(x, nd=2):
    return "–" if x is None else f"{x:.{nd}f}"


def unit_rows(ok, err, target):
    runs = {}
    for key, r in ok.items():
        if r["target"] == target and r["unit"] not in ["array"] + MX_UNITS:
            runs.setdefault((r["unit"], r["format"]), []).append(r)
    failed = {}
    for key, e in err.items():
        m = re.match(rf"{re.escape(target)}_([a-z-]+)_(.+)_s(\d+)$", key)
        if m and m.group(1) not in ["array"] + MX_UNITS:
            failed.setdefault(m.group(1), []).append((m.group(2), int(m.group(3)), e["error"]))
    return runs, failed


def sort_key(uf):
    u, f = uf
    ui = UNIT_ORDER.index(u) if u in UNIT_ORDER else 99
    fi = FORMAT_ORDER.index(f) if f in FORMAT_ORDER else 99
    return (ui, fi)


def best(rs):
    """The run with the highest Fmax (ties: fewer LCs)."""
    c = [r for r in rs if r.get("fmax_mhz")]
    return max(c, key=lambda r: (r["fmax_mhz"], -r["lc"])) if c else None


def units_table(ok, err, target):
    runs, failed = unit_rows(ok, err, target)
    out = [f"### Units on `{target}` (serial wrapper, seed 1)", "",
           "| unit | format | LC s0 | FF s0 | DSP s0 | Fmax s0 (MHz) | best S | LC | FF | DSP | BRAM | Fmax (MHz) | MHz/kLC | depths tried |",
           "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    for uf in sorted(runs, key=sort_key):
        rs = sorted(runs[uf], key=lambda r: r["stages"])
        s0 = next((r for r in rs if r["stages"] == 0), None)
        b = best(rs)
        tried = ",".join(str(r["stages"]) for r in rs)
        c0 = [str(s0["lc"]), str(s0["ff"]), str(s0["dsp"]), fmt(s0["fmax_mhz"])] if s0 else ["–"] * 4
        cb = ([str(b["stages"]), str(b["lc"]), str(b["ff"]), str(b["dsp"]), str(b["bram"]),
               fmt(b["fmax_mhz"]), fmt(mhz_per_klc(b), 1)] if b else ["–"] * 7)
        out.append(f"| {uf[0]} | {uf[1]} | " + " | ".join(c0 + cb) + f" | {tried} |")
    fails = [(u, f, s, e) for u, l in failed.items() for (f, s, e) in l]
    if fails:
        out += ["", "Runs that failed:", ""]
        for u, f, s, e in sorted(fails):
            out.append(f"- `{u}` `{f.replace('_', ':')}` stages {s}: {e}")
    return out


def find(ok, target, unit, fmt_, stages=None):
    rs = [r for r in ok.values()
          if r["target"] == target and r["unit"] == unit and r["format"] == fmt_]
    if stages is not None:
        rs = [r for r in rs if r["stages"] == stages]
    return rs


def refs_table(ok):
    t = "ice40-up5k"
    out = ["### Against the reference points (iCE40 UP5K sg48, serial wrapper, seed 1)", "",
           "| reference | ref LC | ref DSP | ref MHz | ref MHz/kLC | ours s0 LC | DSP | MHz | LC ratio (ours/ref) | ours best S | LC | MHz | MHz/kLC | throughput/LC vs ref |",
           "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for unit, f, what, lc, dsp, mhz in REFS:
        ref_eff = mhz / lc * 1000
        s0 = find(ok, t, unit, f, 0)
        b = best(find(ok, t, unit, f))
        row = [f"{what} (`{unit} {f}`)", str(lc), str(dsp), fmt(mhz), fmt(ref_eff, 1)]
        if s0:
            r = s0[0]
            row += [str(r["lc"]), str(r["dsp"]), fmt(r["fmax_mhz"]), fmt(r["lc"] / lc)]
        else:
            row += ["not run"] + ["–"] * 3
        if b:
            row += [str(b["stages"]), str(b["lc"]), fmt(b["fmax_mhz"]), fmt(mhz_per_klc(b), 1),
                    fmt(mhz_per_klc(b) / ref_eff) + "×"]
        else:
            row += ["–"] * 5
        out.append("| " + " | ".join(row) + " |")
    return out


def kahan_vs_mac(ok):
    t = "ice40-up5k"
    out = ["### lns-kahan (lns:5:6) against posit-mac (posit:16:1), same depth", "",
           "| stages | lns-kahan LC | lns-kahan BRAM | posit-mac LC | DSP (kahan / mac) | ratio | goal ≤ 0.33 |",
           "| ---: | ---: | ---: | ---: | --- | ---: | --- |"]
    for s in range(0, 9):
        k = find(ok, t, "lns-kahan", "lns:5:6", s)
        m = find(ok, t, "posit-mac", "posit:16:1", s)
        if k and m:
            ratio = k[0]["lc"] / m[0]["lc"]
            out.append(f"| {s} | {k[0]['lc']} | {k[0]['bram']} | {m[0]['lc']} | {k[0]['dsp']} / {m[0]['dsp']} | "
                       f"{ratio:.2f} | {'met' if ratio <= 1 / 3 else 'not met'} |")
    return out


def madd_table(ok, err):
    out = ["### Multiply-add per family at 8 and 16 bits (serial wrapper, seed 1)", "",
           "float-fma rounds a·b + c once; posit-mac accumulates exact products in the quire and "
           "rounds at read-out; lns-kahan multiplies in the log domain and accumulates with a "
           "Kahan-compensated LNS sum. \"best S\" is the depth with the highest Fmax among those "
           "run (`scripts/fpga-sweep.sh madd` runs 0 and the deepest).", "",
           "| device | bits | unit | format | LC s0 | DSP s0 | Fmax s0 (MHz) | best S | LC | FF | DSP | BRAM | Fmax (MHz) | MHz/kLC |",
           "| --- | ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    fails = []
    for t in TARGETS:
        for bits, unit, f in MADD:
            rs = sorted(find(ok, t, unit, f), key=lambda r: r["stages"])
            failed = [e["error"] for k, e in err.items()
                      if re.match(rf"{re.escape(t)}_{re.escape(unit)}_{re.escape(f.replace(':', '_'))}_s\d+$", k)]
            fails += [f"- `{t}` `{unit} {f}`: {e[:110]}" for e in failed]
            if not rs:
                continue
            s0 = next((r for r in rs if r["stages"] == 0), None)
            b = best(rs)
            c0 = ([str(s0["lc"]), str(s0["dsp"]), fmt(s0["fmax_mhz"])] if s0 else ["–"] * 3)
            cb = ([str(b["stages"]), str(b["lc"]), str(b["ff"]), str(b["dsp"]), str(b["bram"]),
                   fmt(b["fmax_mhz"]), fmt(mhz_per_klc(b), 1)] if b else ["–"] * 7)
            out.append(f"| {t} | {bits} | {unit} | {f} | " + " | ".join(c0 + cb) + " |")
    if fails:
        out += ["", "Runs that failed:", ""] + fails
    return out


def mx_designs():
    """The MX sweep's designs: (unit, format, extra "lpgen synth" arguments, key stem, K, the
    targets on which stages 0 is run)."""
    units, rest = [], []
    for k in MX_BLOCKS:
        for unit in ["mx-dot", "mx-enc"]:
            for e in MX_ELEMS:
                s0 = TARGETS if k != 32 else TARGETS[:2]
                units.append((unit, f"mx:{e}:b{k}", "", f"{unit}_mx_{e.replace(':', '_')}_b{k}", k, s0))
    for e, k in MX_ARRAY:
        rest.append(("array", f"mx:{e}:b{k}", "", f"array_mx_mx_{e.replace(':', '_')}_b{k}_1x1", k,
                     TARGETS))
    u, f, q8 = MX_Q8
    rest.append((u, f, f"--q8 {q8}", f"{u}_{f}_{q8[3:]}", 1, TARGETS))
    # The sweep's order: the small blocks, the array PE and q8-enc, then the long K = 32 runs.
    n8 = sum(1 for d in units if d[4] == 8)
    return units[:n8] + rest + units[n8:]


RESOURCE = {"ICESTORM_LC": "LC", "TRELLIS_COMB": "LUT", "TRELLIS_SLICE": "slice",
            "ICESTORM_DSP": "DSP", "MULT18X18D": "DSP", "ICESTORM_RAM": "BRAM", "DP16KD": "BRAM"}


def failure_text(e):
    """A failed run's cell: "does not fit (N of M LC)", "not run", or "failed"."""
    m = re.search(r"does not fit .*?\((\w+) (\d+) of (\d+)\)", e)
    if m:
        return f"does not fit ({m.group(2)} of {m.group(3)} {RESOURCE.get(m.group(1), m.group(1))})"
    return "not run" if e.startswith("not run") else "failed"


def mx_runs(ok, err, t, stem):
    """The runs of one design on target t: {stages: record or {"error": ...}}; a run with
    multipliers in logic (_nodsp) stands for the one that ran out of DSPs."""
    out = {}
    for key, rec in sorted(list(ok.items()) + list(err.items())):
        m = re.match(rf"{re.escape(t)}_{re.escape(stem)}(?:_s(\d+))?(_nodsp)?$", key)
        if m and (m.group(2) or int(m.group(1) or 0) not in out):
            out[int(m.group(1) or 0)] = rec
    return out


def mx_order(d):
    """The table's order: mx-dot, mx-enc, the array PE, q8-enc; by K, then element type."""
    unit, f, _, _, k, _ = d
    elem = f[3:].rsplit(":b", 1)[0]
    return (["mx-dot", "mx-enc", "array", "q8-enc"].index(unit), k,
            MX_ELEMS.index(elem) if elem in MX_ELEMS else 0)


def mx_table(ok, err):
    out = ["### MX units (issue 33) beside the q8 encoder (serial wrapper, seed 1)", "",
           "`scripts/fpga-sweep.sh mx`: mx-dot (two blocks in, the exact block dot product out) "
           "and mx-enc (K f32 words in, the E8M0 scale and K element codes out) per element type at "
           "K = 8 and the specification's K = 32, the array's `mx` PE as a 1×1 array (f32 "
           "accumulation), and seed 003's q8-enc on one f32 word (dynamic tree; its K is 1), each "
           "at stages 0 and its deepest (S); on the ECP5 the K = 32 units at their deepest only (a run "
           "there takes 1.5 to 2 minutes on the shared machine). LC/elem is the deepest run's LCs (LUT4s on the ECP5) "
           "over K, the serial wrapper included. A run that does not fit says how many cells it "
           "needed; a deeper run after one that did not fit is not run (registers only add).", "",
           "| device | unit | element | K | LC s0 | FF s0 | DSP s0 | Fmax s0 (MHz) | S | LC | FF | DSP | BRAM | Fmax (MHz) | LC/elem |",
           "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    fails = []
    for t in TARGETS:
        for unit, f, extra, stem, k, _ in sorted(mx_designs(), key=mx_order):
            runs = mx_runs(ok, err, t, stem)
            if not runs:
                continue
            elem = f[3:].rsplit(":b", 1)[0] if f.startswith("mx:") else f"{f}, {extra.split()[-1]}"
            name = "array (mx PE, 1×1)" if unit == "array" else unit
            cells = []
            deep = max(runs)
            for s, n in ((0, 4), (deep, 6)):
                r = runs.get(s)
                if s == deep:
                    cells.append(str(deep))
                if r is None:
                    cells += ["–"] * (n - (s == deep))
                elif "error" in r:
                    cells += [failure_text(r["error"])] + ["–"] * (n - 1 - (s == deep))
                    if failure_text(r["error"]) == "failed":
                        fails.append(f"- `{t}` `{unit} {f}` stages {s}: {r['error'][:160]}")
                else:
                    cells += [str(r["lc"]), str(r["ff"]), dsp_text(r)]
                    if s == deep:
                        cells.append(str(r["bram"]))
                    cells.append(fmt(r["fmax_mhz"]))
            d = runs.get(deep)
            cells.append(f"{d['lc'] / k:.0f}" if d and "error" not in d else "–")
            out.append(f"| {t} | {name} | {elem} | {k} | " + " | ".join(cells) + " |")
    if fails:
        out += ["", "Runs that failed for another reason than size:", ""] + fails
    return out


def dsp_text(r):
    """DSP count, or 'logic' when multipliers were kept out of DSPs (--no-dsp)."""
    return str(r["dsp"]) if r.get("dsp_inference", True) else f"{r['dsp']} (--no-dsp)"


def stages_text(stages, floorplan):
    """An array run's stages column: the count, and whether its DSPs were floorplanned."""
    return f"{stages}, floorplan" if floorplan else str(stages)


def array_error_groups(err):
    """Failed or skipped array runs by (target, PE, format key, stages): [(size, reason)]."""
    groups = {}
    for k, e in err.items():
        m = re.match(r"^(ice40-up5k|ice40-hx8k|ecp5-85k)_array_([a-z-]+)_(.+)_(\d+x\d+)(?:_s(\d+))?(_fp)?(_nodsp)?$", k)
        if m and m.group(2) != "mx":
            t, pe, fkey, size, stages, fp, nodsp = m.groups()
            groups.setdefault((t, pe, fkey, stages_text(int(stages or 0), bool(fp))), []).append(
                (size + (nodsp or ""), e["error"]))
    return groups


def arrays_table(ok, err):
    rows = {}
    for key, r in ok.items():
        if r["unit"] == "array" and r["pe"] != "mx":
            key = (r["target"], r["pe"], r["format"], stages_text(r["stages"], r.get("floorplan", False)))
            rows.setdefault(key, []).append(r)
    errors = array_error_groups(err)
    out = ["### Largest arrays (serial wrapper, seed 1)", "",
           "MAC/s = rows × cols × Fmax (one MAC per PE per cycle). LC/PE is the largest run's LCs "
           "(wrapper included) per PE; the estimate is the largest square whose LCs fit 92 % of the "
           "device at that rate, ignoring DSPs, routing and Fmax: a prediction, not a measurement. "
           "Stages 0 are the flat searches of issue 6 (`scripts/fpga-sweep.sh arrays`); deeper rows are "
           "`scripts/fpga-sweep.sh arrays-deep`, each PE kind at its deepest stages with its PE module "
           "kept (`--keep-hierarchy`) behind the pipelined XOR tree of the wrapper. Rows whose stages say "
           "\"floorplan\" had their multipliers locked to DSP sites (`--floorplan`).", "",
           "| target | PE | format | stages | largest R×C run | LC | FF | DSP | BRAM | Fmax (MHz) | GMAC/s | LC/PE | est. largest n×n (LC only) | other sizes that failed or were not run |",
           "| --- | --- | --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    for (t, pe, f, st), rs in sorted(rows.items()):
        big = max(rs, key=lambda r: (r["rows"] * r["cols"], r["rows"]))
        macs = big["rows"] * big["cols"] * big["fmax_mhz"] / 1000 if big["fmax_mhz"] else None
        nxt = errors.get((t, pe, f.replace(":", "_"), st), [])
        nxt_s = "; ".join(f"{size}: {why[:110]}" for size, why in sorted(nxt))
        per_pe = big["lc"] / (big["rows"] * big["cols"])
        est = int(math.sqrt(0.92 * big["lc_available"] / per_pe))
        out.append(f"| {t} | {pe} | {f} | {st} | {big['rows']}×{big['cols']} | {big['lc']} / {big['lc_available']} | "
                   f"{big.get('ff', '–')} | {dsp_text(big)} | {big['bram']} | {fmt(big['fmax_mhz'])} | {fmt(macs, 3)} | "
                   f"{per_pe:.0f} | {est}×{est} | {nxt_s or '–'} |")
    out += ["", "Every array run:", "",
            "| target | PE | format | stages | R×C | LC | DSP | BRAM | Fmax (MHz) |",
            "| --- | --- | --- | ---: | --- | ---: | ---: | ---: | ---: |"]
    for (t, pe, f, st), rs in sorted(rows.items()):
        for r in sorted(rs, key=lambda r: (r["rows"] * r["cols"], r["rows"])):
            out.append(f"| {t} | {pe} | {f} | {st} | {r['rows']}×{r['cols']} | {r['lc']} | {dsp_text(r)} | {r['bram']} | {fmt(r['fmax_mhz'])} |")
    return out


def render(ok, err):
    body = ["<!-- sweep:begin -->",
            f"<!-- generated by scripts/fpga-sweep.sh render from {len(ok)} runs "
            "(docs/fpga-runs.jsonl); do not edit by hand -->", ""]
    body += refs_table(ok) + [""] + kahan_vs_mac(ok) + [""] + madd_table(ok, err) + [""]
    body += mx_table(ok, err) + [""]
    for t in ["ice40-up5k", "ice40-hx8k", "ecp5-85k"]:
        if any(r["target"] == t and r["unit"] not in ["array"] + MX_UNITS for r in ok.values()):
            body += units_table(ok, err, t) + [""]
    body += arrays_table(ok, err) + ["", "<!-- sweep:end -->"]
    return "\n".join(body)


def replace_section(text, new):
    m = re.search(r"<!-- sweep:begin -->.*<!-- sweep:end -->", text, re.S)
    return text[:m.start()] + new + text[m.end():] if m else text.rstrip() + "\n\n" + new + "\n"


def main():
    args = sys.argv[1:]
    if args == ["--madd"]:
        print("\n".join(f"{u} {f}" for _, u, f in MADD))
        return
    if args == ["--mx"]:
        print("\n".join(f"{stem} {unit} {f} {','.join(s0)} {extra}".rstrip()
                         for unit, f, extra, stem, _, s0 in mx_designs()))
        return
    check = args[:1] == ["--check"]
    if check:
        args = args[1:]
    if len(args) not in (2, 3) or (check and len(args) != 2):
        sys.exit("usage: fpga-render.py RUNS DOC [RESULTS_DIR] | fpga-render.py --check RUNS DOC")
    runs_path, doc = args[0], args[1]
    ok, err = load_runs(runs_path)
    if len(args) == 3:
        ok, err = merge((ok, err), load_cache(args[2]))
    text = open(doc).read() if os.path.exists(doc) else "# FPGA results\n\n"
    new = replace_section(text, render(ok, err))
    if check:
        if new != text:
            sys.exit(f"{doc}: its tables differ from what {runs_path} renders to: "
                     "run scripts/fpga-sweep.sh render (never edit them by hand)")
        print(f"{doc}: tables match {runs_path} ({len(ok)} runs, {len(err)} failures)")
        return
    save_runs(runs_path, ok, err)
    with open(doc + ".tmp", "w") as f:
        f.write(new)
    os.replace(doc + ".tmp", doc)
    print(f"{doc}: {len(ok)} runs, {len(err)} failures")


if __name__ == "__main__":
    main()
