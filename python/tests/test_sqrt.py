"""`Format.sqrt` (issue 46, docs/formats.md "Square root"): the package's words equal
`lpgen golden FORMAT sqrt` for every word (formats of at most 16 bits; random words of f32), the
stochastic stream of a `Rounder` equals `--rounding stochastic:R --rounding-seed S`, f16 agrees
with numpy's float16 square root, and bad arguments raise."""

import numpy as np
import pytest

import lpgen
from conftest import all_format_strings, all_words, assert_same_words, hexw, sample_words


@pytest.mark.parametrize("spec", [s for s in all_format_strings() if not s.startswith("dfix")])
def test_every_word_equals_the_command_line(spec, cli, rng):
    fmt = lpgen.Format(spec)
    words = all_words(fmt) if fmt.width <= 16 else sample_words(fmt, 5000, rng)
    ours = fmt.sqrt(words.astype(fmt.dtype))
    theirs, _ = cli.batch(spec, "sqrt", [hexw(w) for w in words])
    assert_same_words(ours, theirs, f"{spec} sqrt", fmt)


@pytest.mark.parametrize("scale", [-4, 0, 3])
def test_dfix_roots_equal_the_command_line(scale, cli):
    fmt = lpgen.Format("dfix:10", scale=scale)
    words = np.array([0, 1, 2, 5, 36, 100, 255, 511, 512, 1023], dtype=np.uint64)
    ours = fmt.sqrt(words.astype(fmt.dtype))
    for w, o in zip(words, ours):
        bits, _ = cli.dfix("dfix:10", "sqrt", scale, [hexw(w)])
        assert int(o) == bits, (scale, hexw(w))


def test_f16_agrees_with_numpy():
    fmt = lpgen.Format("f16")
    words = all_words(fmt).astype(np.uint16)
    x = words.view(np.float16)
    with np.errstate(invalid="ignore"):
        want = np.sqrt(x)
    ours = fmt.sqrt(words)
    nan = np.isnan(want)
    assert np.isnan(fmt.decode(ours))[nan].all()
    assert (ours[~nan] == want[~nan].view(np.uint16)).all()


@pytest.mark.parametrize("spec", ["bf16", "fp8:e4m3", "fix:3:4", "fix:7:8"])
def test_stochastic_roots_equal_the_command_line(spec, cli):
    fmt = lpgen.Format(spec)
    x = np.array([2.0, 3.0, 0.5, 5.0, 7.0, 4.0, 0.0, -1.0] * 4)
    words = fmt.encode(x)
    ours = fmt.sqrt(words, rounder=lpgen.Rounder("stochastic:8", seed=11))
    args = ["golden", spec, "sqrt", "--stdin", "--rounding", "stochastic:8", "--rounding-seed", "11"]
    p = cli.run(args, stdin="".join(hexw(w) + "\n" for w in words))
    assert p.returncode == 0, p.stderr
    theirs = np.array([int(line.split()[0], 16) for line in p.stdout.splitlines()], dtype=np.uint64)
    assert_same_words(ours, theirs, f"{spec} stochastic sqrt")
    # Another seed, another stream; exact roots (4 → 2, 0 → 0) never move.
    other = fmt.sqrt(words, rounder=lpgen.Rounder("stochastic:8", seed=12))
    exact = np.isin(x, [4.0, 0.0])
    assert (other[exact] == ours[exact]).all() and (other != ours).any()


def test_bad_arguments_raise():
    with pytest.raises(ValueError, match="not defined for posit:8"):
        lpgen.Format("posit:8").sqrt(np.array([0x40], dtype=np.uint8), rounder=lpgen.Rounder("stochastic:4"))
    with pytest.raises((ValueError, TypeError)):
        lpgen.Format("posit:8").sqrt(np.array([0x1ff], dtype=np.uint16))
