"""Stochastic rounding in `encode` and `quantize` (docs/formats.md "Stochastic rounding"): the
package's words equal `lpgen golden FORMAT encode --stdin --rounding stochastic:R --seed S`,
one draw per element in C order, and bad roundings raise ValueError."""

import numpy as np
import pytest

import lpgen
from conftest import corner_values, decimal

# Float and fix formats: the families that define stochastic rounding.
FORMATS = ["fp8:e4m3", "bf16", "f16", "fp8:e5m2:sat:ftz", "fix:3:4", "fix:7:8"]


def cli_encode(cli, spec, xs, rounding, seed):
    """The command line's words of xs, one per --stdin line: one stream, one draw per line."""
    args = ["golden", spec, "encode", "--stdin", "--rounding", rounding, "--seed", str(seed)]
    p = cli.run(args, stdin="".join(decimal(x) + "\n" for x in xs))
    assert p.returncode == 0, p.stderr
    return np.array([int(line.split()[0], 16) for line in p.stdout.splitlines()], dtype=np.uint64)


@pytest.mark.parametrize("spec", FORMATS)
@pytest.mark.parametrize("bits", [3, 8, 32])
def test_encode_equals_the_command_line(spec, bits, cli, rng):
    fmt = lpgen.Format(spec)
    x = corner_values(fmt, rng)
    rounding = f"stochastic:{bits}"
    ours = fmt.encode(x, rounding=rounding, seed=7)
    assert ours.dtype == fmt.dtype and ours.shape == x.shape
    assert (ours.astype(np.uint64) == cli_encode(cli, spec, x, rounding, 7)).all()
    # quantize is decode(encode) with the same stream.
    q = fmt.quantize(x, rounding=rounding, seed=7)
    assert np.array_equal(q, fmt.decode(ours), equal_nan=True)
    # Another seed gives another stream: some words differ.
    assert (fmt.encode(x, rounding=rounding, seed=8) != ours).any()


def test_exact_values_never_move(rng):
    # Every float64 is a word of float:11:52 (binary64's shape): d = 0, nearest's words.
    fmt = lpgen.Format("float:11:52")
    x = rng.standard_normal(10_000) * np.exp2(rng.integers(-1070, 1020, 10_000))
    assert (fmt.encode(x, rounding="stochastic:32", seed=3) == fmt.encode(x)).all()


def test_the_stream_runs_in_c_order_and_nearest_is_unchanged():
    fmt = lpgen.Format("bf16")
    x = np.random.default_rng(3).standard_normal((7, 9))
    w = fmt.encode(x, rounding="stochastic:8", seed=1)
    assert w.shape == (7, 9)
    assert (w.ravel() == fmt.encode(x.ravel(), rounding="stochastic:8", seed=1)).all()
    assert (w.T.ravel() != fmt.encode(x.T.ravel(), rounding="stochastic:8", seed=1)).any()
    assert (fmt.encode(x, rounding="nearest") == fmt.encode(x)).all()


def test_stochastic_quantize_is_unbiased():
    # 1 + 1/3 of bf16's last place: nearest always gives 1; the mean of 10^5 stochastic
    # roundings is within 0.01 last places of x (its standard error is 0.0015).
    fmt, ulp = lpgen.Format("bf16"), 2.0**-7
    x = np.full(100_000, 1 + ulp / 3)
    assert abs((fmt.quantize(x, rounding="stochastic:16", seed=5).mean() - x[0]) / ulp) < 0.01
    assert abs((fmt.quantize(x).mean() - x[0]) / ulp) > 0.3


@pytest.mark.parametrize(
    "spec, rounding, seed, message",
    [
        ("bf16", "stochastic:0", None, "R must be a whole number of random bits from 1 to 32"),
        ("bf16", "stochastic:99", 1, "R must be a whole number"),
        ("fix:7:8", "stochastic:x", 1, "R must be a whole number"),
        ("bf16", "foo", None, "unknown rounding"),
        ("bf16", "nearest", 3, "seed applies to rounding='stochastic:R' only"),
        ("posit:16", "stochastic:8", 1, "not defined for posit:16"),
        ("lns:5:6", "stochastic:8", 1, "not defined for lns:5:6"),
        ("f32", "stochastic:8", 1, "not defined for f32"),
        ("dfix:10", "stochastic:8", 1, "not defined for dfix:10"),
    ],
)
def test_bad_roundings_raise_value_error(spec, rounding, seed, message):
    fmt = lpgen.Format(spec)
    for f in (fmt.encode, fmt.quantize):
        with pytest.raises(ValueError, match=message):
            f([1.0, 2.0], rounding=rounding, seed=seed)


@pytest.mark.parametrize("seed", [-1, 2**64])
def test_bad_seeds_raise_value_error(seed):
    fmt = lpgen.Format("bf16")
    with pytest.raises(ValueError, match="seed must be an integer from 0 to 2"):
        fmt.encode([1.0], rounding="stochastic:8", seed=seed)
    # The largest seed is taken.
    fmt.encode([1.0], rounding="stochastic:8", seed=2**64 - 1)


@pytest.mark.parametrize("seed", [1.5, "x"])
def test_seeds_of_another_type_raise_type_error(seed):
    # The house rule (issue 48): a wrong Python type is a TypeError, a bad value a ValueError.
    fmt = lpgen.Format("bf16")
    with pytest.raises(TypeError, match="cannot be interpreted as an integer"):
        fmt.encode([1.0], rounding="stochastic:8", seed=seed)
