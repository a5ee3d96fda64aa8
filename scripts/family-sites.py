#!/usr/bin/env python3
"""Counts, per crate, the match arms that name a number family (`Format::X`, `Calc::X`,
`PeKind::X` before `=>`) in source outside tests (code after `#[cfg(test)]`, and files of tests
such as `tests.rs`, are left out): how many places a new family must touch.
`scripts/family-sites.py [REV]` counts the files of a git revision instead of the work tree."""
import re, subprocess, sys

CRATES = ["sw/golden", "sw/train", "sw/comm", "hdl", "verif", "fpga", "gen"]
ARM = re.compile(r"(Format|Calc|PeKind)::\w+.*=>")

def files(rev):
    out = subprocess.run(["git", "ls-files"] if rev is None else ["git", "ls-tree", "-r", "--name-only", rev],
                         capture_output=True, text=True, check=True).stdout.split()
    return [f for f in out if f.endswith(".rs") and "/src/" in f and not is_test(f)]

def is_test(f):
    """A file of tests: `tests.rs`, `*_tests.rs`, or under a `tests/` folder of src/."""
    name = f.rsplit("/", 1)[-1]
    return name == "tests.rs" or name.endswith("_tests.rs") or "/tests/" in f.split("/src/", 1)[1]

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

rev = sys.argv[1] if len(sys.argv) > 1 else None
total = 0
for c in CRATES:
    k = sum(count(text(rev, f)) for f in files(rev) if f.startswith(c + "/"))
    total += k
    print(f"{c}: {k}")
print(f"total: {total}")
