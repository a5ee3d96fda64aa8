"""Issue 48: the package's whole surface called with arguments a fuzzer would pass (integers
at and beyond 64 bits, negative, huge floats, NaN, ragged and empty lists, arrays of every
dtype, strings, None): every call returns or raises ValueError, TypeError or (fma, issue 32)
NotImplementedError, never OverflowError, a Rust panic or another exception. A fixed seed and
a few thousand calls here; LPGEN_FUZZ_CALLS and LPGEN_FUZZ_SEED run a longer session."""

import inspect
import os
import random
import warnings
from collections import Counter

import numpy as np

import lpgen

ALLOWED = (ValueError, TypeError, NotImplementedError)

SPECS = ["bf16", "posit:8:2", "lns:5:6", "fix:7:8", "dfix:10", "f32", "fp8:e4m3",
         "float:11:52", "posit:6:1:u"]
MX_SPECS = ["mx:fp8:e4m3", "mx:int8:b4", "mx:fp4:e2m1:b2", "mx:fp6:e3m2:b8"]
STRINGS = SPECS + MX_SPECS + [
    "", "x", "naive", "kahan", "pairwise", "quire", "nearest", "stochastic:4", "stochastic:0",
    "stochastic:99", "stochastic:-1", "q8:linear", "q8:mantissa", "q8:dynamic-tree", "f16",
    "posit:99:99", "float:0:0", "float:11:53", "dfix:1", "dfix:99999999999999999999",
    "mx:fp8:e4m3:b0", "mx:int8:b18446744073709551616", "lns:5:6\n", "\u00e9", "add",
]
INTS = [0, 1, -1, 2, 3, 7, 15, 255, 2**31, -(2**31), 2**63 - 1, 2**63, -(2**63), 2**64 - 1,
        2**64, -(2**70), 2**200, True]
FLOATS = [0.0, -0.0, 1.5, -2.25, 1e308, -1e308, 5e-324, float("nan"), float("inf"),
          float("-inf")]


def arrays(rng):
    """Array-likes of many kinds and shapes (all small)."""
    shape = rng.choice([(), (0,), (1,), (3,), (2, 3), (3, 1), (1, 3), (2, 0), (2, 2, 2)])
    n = int(np.prod(shape)) if shape else 1
    kind = rng.randrange(9)
    if kind == 0:
        return np.array([rng.choice(FLOATS) for _ in range(n)]).reshape(shape)
    if kind == 1:
        return np.array([rng.randrange(0, 2**16) for _ in range(n)], dtype=np.uint64).reshape(shape)
    if kind == 2:
        dt = rng.choice([np.int8, np.int64, np.uint8, np.uint32, np.bool_, np.float32,
                         np.complex64, np.float16])
        return np.zeros(shape, dtype=dt)
    if kind == 3:
        return [rng.choice(INTS) for _ in range(rng.randrange(0, 4))]
    if kind == 4:
        return [rng.choice(FLOATS + INTS) for _ in range(rng.randrange(0, 4))]
    if kind == 5:
        return [[1, 2], [3]]  # ragged
    if kind == 6:
        return np.array([rng.choice(INTS) for _ in range(max(n, 1))], dtype=object)
    if kind == 7:
        return rng.choice(["abc", None, {}, b"\x01", rng.choice(INTS), rng.choice(FLOATS)])
    return [rng.randrange(0, 256) for _ in range(rng.randrange(1, 9))]


def value(rng):
    """Any argument."""
    pick = rng.randrange(5)
    if pick == 0:
        return rng.choice(INTS)
    if pick == 1:
        return rng.choice(FLOATS)
    if pick == 2:
        return rng.choice(STRINGS)
    if pick == 3:
        return rng.choice([None, lpgen.Rounder("stochastic:4", seed=1), object()])
    return arrays(rng)


KWARGS = ["rounding", "seed", "mode", "axis", "flags", "rounder", "to", "acc", "shift",
          "residual", "offset", "ty", "scale", "format"]
TEXT = {"spec", "rounding", "mode", "to", "acc", "ty", "format"}
NUMBER = {"seed", "axis", "shift", "offset", "scale", "op", "flags"}


def argument(rng, name):
    """An argument for the parameter `name`: mostly of its kind, sometimes anything."""
    if rng.random() < 0.25:
        return value(rng)
    if name in TEXT:
        return rng.choice(STRINGS)
    if name in NUMBER:
        return rng.choice(INTS + [rng.randrange(-20, 20)])
    if name == "rounder":
        return lpgen.Rounder("stochastic:4", seed=rng.randrange(3))
    return arrays(rng)


def call(rng, f):
    """`f` with its own parameters (from its signature) most of the time, any otherwise."""
    try:
        params = list(inspect.signature(f).parameters.values())
    except (TypeError, ValueError):
        params = None
    if params is None or rng.random() < 0.1:
        args = [value(rng) for _ in range(rng.randrange(0, 6))]
        kwargs = {k: value(rng) for k in rng.sample(KWARGS, rng.randrange(0, 3))}
        return f(*args, **kwargs)
    required = [p for p in params if p.default is p.empty]
    optional = [p for p in params if p.default is not p.empty]
    args = [argument(rng, p.name) for p in required]
    chosen = rng.sample(optional, rng.randrange(0, len(optional) + 1))
    return f(*args, **{p.name: argument(rng, p.name) for p in chosen})


def targets(rng):
    """A callable of the package's surface, with an object made from fuzzed arguments."""
    pick = rng.randrange(6)
    if pick == 0:
        return lpgen.Format
    if pick == 1:
        return lpgen.Rounder
    if pick == 2:
        return rng.choice([lpgen.q8_encode, lpgen.q8_decode, lpgen.onebit, lpgen.MxFormat])
    if pick == 3:
        fmt = lpgen.MxFormat(rng.choice(MX_SPECS))
        return getattr(fmt, rng.choice([m for m in dir(fmt) if not m.startswith("_")]))
    spec = rng.choice(SPECS)
    fmt = lpgen.Format(spec, scale=rng.choice([-4, 0, 3])) if spec.startswith("dfix") \
        else lpgen.Format(spec)
    name = rng.choice([m for m in dir(fmt) if not m.startswith("_")])
    return getattr(fmt, name)


def test_the_surface_raises_only_value_type_or_not_implemented_errors():
    calls = int(os.environ.get("LPGEN_FUZZ_CALLS", "3000"))
    rng = random.Random(int(os.environ.get("LPGEN_FUZZ_SEED", "48"), 0))
    tally = Counter()
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        # numpy's casts of the fuzzed arrays warn (complex to real, overflow); not ours.
        warnings.simplefilter("ignore")
        run(rng, calls, tally)
    print(f"{calls} calls: {dict(tally)}")
    assert tally["returned"] > 0 and tally["ValueError"] > 0


def run(rng, calls, tally):
    for i in range(calls):
        f = targets(rng)
        try:
            if callable(f):
                call(rng, f)
            tally["returned"] += 1
        except ALLOWED as e:
            tally[type(e).__name__] += 1
            assert "\n" not in str(e), f"call {i}: {e!r}"
        except BaseException as e:  # noqa: BLE001 - a Rust panic is a BaseException
            raise AssertionError(f"call {i} of {f!r}: {type(e).__name__}: {e}") from e
