"""Shared fixtures: the `lpgen` command line (the reference every test compares against), the
format strings per registry family, and inputs (corner and random values and words)."""

import os
import subprocess
import zlib
from decimal import Decimal
from pathlib import Path

import numpy as np
import pytest

import lpgen

ROOT = Path(__file__).resolve().parents[2]

# One to three format strings per family of the registry; test_formats.py asserts that every
# family of lpgen.formats() has a row, so a new family fails there until it has one. A row of a
# family that is not registered (yet) is left out of the tests.
FORMATS = {
    "lns": ["lns:5:6", "lns:2:3"],
    "posit": ["posit:8:2", "posit:16", "posit:6:1:u"],
    "fix": ["fix:3:4", "fix:7:8"],
    "dfix": ["dfix:10"],
    "f32": ["f32"],
    "float": ["fp8:e4m3", "bf16", "fp8:e5m2:sat:ftz"],
    "takum": ["takum:8", "takum:16"],
}

# dfix formats are checked at these scale exponents (the command line's --scale).
DFIX_SCALES = [-4, 0, 3]


REGISTERED = [f["name"] for f in lpgen.formats()]


def all_format_strings():
    return [s for fam in REGISTERED for s in FORMATS.get(fam, [])]


def word_format_strings():
    """The formats whose command line takes --stdin batches (every family but dfix)."""
    return [s for fam in REGISTERED if fam != "dfix" for s in FORMATS.get(fam, [])]


def _build_cli():
    """The lpgen binary: $LPGEN_BIN, or target/debug/lpgen built now with the test profile
    (what `cargo test --workspace` builds, so that after it this is quick)."""
    given = os.environ.get("LPGEN_BIN")
    if given:
        return Path(given)
    subprocess.run(
        ["cargo", "build", "--quiet", "--profile", "test", "-p", "lpgen", "--bin", "lpgen"],
        cwd=ROOT,
        check=True,
    )
    return ROOT / "target" / "debug" / "lpgen"


def parse_value(text):
    return float("nan") if text in ("NaN", "NaR") else float(text)


class Cli:
    """`lpgen golden …` runs, parsed."""

    def __init__(self, path):
        self.path = str(path)

    def run(self, args, stdin=None):
        return subprocess.run(
            [self.path, *args], input=stdin, capture_output=True, text=True
        )

    def batch(self, fmt, op, lines, mode=None):
        """One `op` per line of operands, through --stdin: (bits, values) arrays."""
        args = ["golden", fmt, op, "--stdin"]
        if mode is not None:
            args += ["--mode", mode]
        p = self.run(args, stdin="".join(line + "\n" for line in lines))
        assert p.returncode == 0, p.stderr
        out = p.stdout.splitlines()
        assert len(out) == len(lines), (len(out), len(lines), p.stderr)
        bits = np.array([int(o.split()[0], 16) for o in out], dtype=np.uint64)
        values = np.array([parse_value(o.split()[1]) for o in out])
        return bits, values

    def dfix(self, fmt, op, scale, operands):
        """One dfix operation (no --stdin for dfix): (bits, value)."""
        p = self.run(["golden", fmt, op, "--scale", str(scale), *operands])
        assert p.returncode == 0, p.stderr
        fields = p.stdout.split()
        return int(fields[0], 16), parse_value(fields[1])

    def error(self, args):
        """The one-line message of a refused command (exit status 2)."""
        p = self.run(args)
        assert p.returncode == 2, (args, p.stdout, p.stderr)
        lines = p.stderr.splitlines()
        assert len(lines) == 1, p.stderr
        prefix = "lpgen: error: "
        assert lines[0].startswith(prefix), lines[0]
        return lines[0][len(prefix):]


@pytest.fixture(scope="session")
def cli():
    return Cli(_build_cli())


def decimal(x):
    """The exact decimal of a float64 (the command line parses decimals exactly), or a name."""
    x = float(x)
    if np.isnan(x):
        return "nan"
    if np.isinf(x):
        return "inf" if x > 0 else "-inf"
    if x == 0:
        return "-0" if np.signbit(x) else "0"
    return str(Decimal(x))


def hexw(w):
    return f"0x{int(w):x}"


def all_words(fmt):
    return np.arange(2**fmt.width, dtype=np.uint64)


def sample_words(fmt, n, rng):
    """Random words over the whole bit-pattern space, plus the words of corner values."""
    w = rng.integers(0, 2**fmt.width, size=n, dtype=np.uint64)
    return np.concatenate([w, corner_words(fmt)])


def corner_words(fmt):
    vals = [0.0, 1.0, -1.0, 2.0, -0.5, 3.0, 1e300, -1e300, 1e-300, -1e-300, np.inf, -np.inf]
    if fmt.nan is not None:
        vals.append(np.nan)
    w = fmt.encode(vals).astype(np.uint64)
    top = 2**fmt.width - 1
    extra = [0, 1, 2, top, top - 1, top >> 1, (top >> 1) + 1, (top >> 1) - 1]
    return np.unique(np.concatenate([w, np.array(extra, dtype=np.uint64)]))


def corner_values(fmt, rng, n_random=1500):
    """Values that test a rounding: every representable value (or a sample), the midpoints
    between neighbours (ties) and the floats just beside them, beyond the range, zeros, the
    infinities and NaN (where the format has one), and random values over the range."""
    words = all_words(fmt) if fmt.width <= 12 else sample_words(fmt, 3000, rng)
    v = fmt.decode(words)
    v = np.unique(v[np.isfinite(v)])
    mids = (v[:-1] + v[1:]) / 2
    big = np.abs(v).max()
    small = np.abs(v[v != 0]).min()
    special = [0.0, -0.0, np.inf, -np.inf, big * 2, -big * 2, big * 1.01, small / 2,
               -small / 2, small / 3, small * 0.75, 1e300, -1e300, 1e-300, -1e-300, 0.1, -0.3]
    if fmt.nan is not None:
        special.append(np.nan)
    logs = rng.uniform(np.log2(small) - 3, np.log2(big) + 3, size=n_random)
    randoms = rng.choice([-1.0, 1.0], size=n_random) * np.exp2(logs)
    return np.concatenate([
        v, mids, np.nextafter(mids, np.inf), np.nextafter(mids, -np.inf),
        np.array(special), randoms,
    ])


def assert_same_words(ours, theirs, what, fmt=None):
    """Every result word equal, bit for bit (a flipped bit anywhere fails).

    With `fmt` an f32 format, two NaN words count as equal: the golden model computes f32 with
    the machine's f32 operations, and which NaN operand's payload `NaN + NaN` returns depends on
    how the optimiser ordered them (an unoptimised `lpgen` returns the first, an optimised one
    the second), so NaN payloads are not part of what the command line and the package can
    agree on."""
    ours = np.asarray(ours).astype(np.uint64).ravel()
    theirs = np.asarray(theirs).astype(np.uint64).ravel()
    assert ours.shape == theirs.shape, what
    differ = ours != theirs
    if fmt is not None and fmt.family == "f32":
        differ &= ~(np.isnan(fmt.decode(ours)) & np.isnan(fmt.decode(theirs)))
    bad = np.nonzero(differ)[0]
    assert bad.size == 0, (
        f"{what}: {bad.size} of {ours.size} differ; first at {bad[0]}: "
        f"ours 0x{int(ours[bad[0]]):x}, lpgen golden 0x{int(theirs[bad[0]]):x}"
    )


def assert_same_values(ours, theirs, what):
    ours = np.asarray(ours, dtype=np.float64).ravel()
    theirs = np.asarray(theirs, dtype=np.float64).ravel()
    same = (ours == theirs) | (np.isnan(ours) & np.isnan(theirs))
    bad = np.nonzero(~same)[0]
    assert bad.size == 0, (
        f"{what}: {bad.size} values differ; first at {bad[0]}: "
        f"ours {ours[bad[0]]!r}, lpgen golden {theirs[bad[0]]!r}"
    )


@pytest.fixture
def rng(request):
    # A seed per test, from its name, so that each test's inputs are reproducible.
    return np.random.default_rng(zlib.crc32(request.node.name.encode()))
