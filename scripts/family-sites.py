#!/usr/bin/env python3
"""Counts the match arms that name a number family (`Format::X`, `Calc::X`, `PeKind::X` before
`=>`) in source outside tests (code after `#[cfg(test)]`, and files of tests such as
`tests.rs`, are left out): how many places a new family must touch.

The arms are counted in three kinds (issue 47's target: at most 20 outside the first two):
- registrations: the files whose job is to say, per family, what goes together (REGISTRATIONS);
- single-family units: files in a family's own folder or named after one (a `float/` unit
  names float's formats; a new family does not touch it);
- outside: every other arm, listed by file with `-v`.
`scripts/family-sites.py [-v] [REV]` counts the files of a git revision instead of the work tree."""
import re, subprocess, sys

CRATES = ["sw/golden", "sw/train", "sw/comm", "hdl", "verif", "fpga", "gen", "python"]
ARM = re.compile(r"(Format|Calc|PeKind)::\w+.*=>")
# Folder or file stems that belong to one family (or one family's unit).
FAMILIES = {"lns", "posit", "fix", "fixed", "float", "float_words", "dfix", "q8", "mx", "takum",
            "quant1", "onebit", "tapered", "binary32", "nvfp4", "fdpa"}
# File: the reason it is a registration.
REGISTRATIONS = {
    "hdl/src/units/family.rs": "the generators' family table: each family's units and PEs",
    "verif/src/drivers/mod.rs": "the drivers' registry: each unit's driver, and the array PE "
                                "kinds whose arrays have drivers of their own (dfix, MX, fdpa, NVFP4)",
}

def files(rev):
    out = subprocess.run(["git", "ls-files"] if rev is None else ["git", "ls-tree", "-r", "--name-only", rev],
                         capture_output=True, text=True, check=True).stdout.split()
    return [f for f in out if f.endswith(".rs") and "/src/" in f and not is_test(f)]

def is_test(f):
    """A file of tests: `tests.rs`, `*_tests.rs`, or under a `tests/` folder of src/."""
    name = f.rsplit("/", 1)[-1]
    return name == "tests.rs" or name.endswith("_tests.rs") or "/tests/" in f.split("/src/", 1)[1]

def single_family(f):
    parts = f.split("/src/", 1)[1][:-3].split("/")
    return any(p in FAMILIES or p.split("_")[0] in FAMILIES for p in parts)

def text(rev, f):
    if rev is None:
        return open(f).read()
    return subprocess.run(["git", "show", f"{rev}:{f}"], capture_output=True, text=True, check=True).stdout

def count(src):
    n = 0
    for line in src.split("#[cfg(test)]")[0].splitlines():
        if ARM.search(line) and not line.strip().startswith("//"):
            n += 1
    return n

args = [a for a in sys.argv[1:] if a != "-v"]
verbose = "-v" in sys.argv[1:]
rev = args[0] if args else None
kinds = {"registrations": 0, "single-family units": 0, "outside": 0}
per_crate, outside = {}, []
for f in files(rev):
    crate = next((c for c in CRATES if f.startswith(c + "/")), None)
    if crate is None:
        continue
    k = count(text(rev, f))
    if not k:
        continue
    per_crate[crate] = per_crate.get(crate, 0) + k
    if f in REGISTRATIONS:
        kinds["registrations"] += k
    elif single_family(f):
        kinds["single-family units"] += k
    else:
        kinds["outside"] += k
        outside.append((k, f))
for c in CRATES:
    print(f"{c}: {per_crate.get(c, 0)}")
print(f"total: {sum(per_crate.values())}")
for kind, k in kinds.items():
    print(f"  {kind}: {k}")
if verbose:
    for k, f in sorted(outside, reverse=True):
        print(f"    {k:3} {f}")
