"""The registry through `lpgen.formats()`, `lpgen.Format`'s attributes, and bad input: a
`ValueError` with the command line's one-line message."""

import numpy as np
import pytest

import lpgen
from conftest import FORMATS, all_format_strings


def test_the_format_table_covers_every_registry_family():
    names = [f["name"] for f in lpgen.formats()]
    assert len(names) == len(set(names))
    missing = set(names) - set(FORMATS)
    assert not missing, (
        f"python/tests/conftest.py FORMATS has no format strings for {sorted(missing)}"
    )


def test_formats_describe_the_registry():
    for f in lpgen.formats():
        assert set(f) == {"name", "syntax", "modes", "pes", "lanes", "q8_word_rule"}
        assert f["name"] in f["syntax"]
        assert f["modes"] and set(f["modes"]) <= {"naive", "kahan", "pairwise", "quire", "fdpa"}
        for pe in f["pes"]:
            assert set(pe) == {"name", "mode", "about"}
            assert pe["mode"] in f["modes"], (f["name"], pe)
        for spec in FORMATS[f["name"]]:
            fmt = lpgen.Format(spec)
            assert fmt.family == f["name"]
            assert fmt.modes == f["modes"]


@pytest.mark.parametrize("spec", all_format_strings())
def test_a_format_prints_its_string_and_has_words_of_its_width(spec, cli):
    fmt = lpgen.Format(spec)
    assert str(fmt) == spec
    assert repr(fmt) == f"lpgen.Format('{spec}')"
    assert fmt == lpgen.Format(spec) and hash(fmt) == hash(lpgen.Format(spec))
    expected = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}
    dtype = next(expected[b] for b in sorted(expected) if fmt.width <= b)
    assert fmt.dtype == dtype
    assert fmt.encode([0.0]).dtype == dtype
    # The width is the command line's: its words print in ceil(width / 4) hex digits.
    args = ["golden", spec, "add", "0", "0"] + (["--scale", "0"] if fmt.family == "dfix" else [])
    out = cli.run(args).stdout.split()[0]
    assert len(out) - 2 == -(-fmt.width // 4)


BAD_FORMATS = ["posit:2", "posit:8:6", "posit:33:2", "lns:5:0", "lns:12:6", "fix:20:20",
               "fix:7:8:u", "float", "dfix:1", "f32:u", "posit:x", "", "q8:linear"]


@pytest.mark.parametrize("spec", BAD_FORMATS)
def test_a_bad_format_raises_the_command_lines_message(spec, cli):
    with pytest.raises(ValueError) as e:
        lpgen.Format(spec)
    assert str(e.value) == cli.error(["golden", spec, "add", "1", "2"])
    assert "\n" not in str(e.value)


def test_bad_modes_and_words_raise_the_command_lines_messages(cli):
    lns = lpgen.Format("lns:5:6")
    with pytest.raises(ValueError) as e:
        lns.dot([1], [1], mode="quire")
    assert str(e.value) == cli.error(["golden", "lns:5:6", "dot", "--mode", "quire", "1,1"])
    with pytest.raises(ValueError) as e:
        lns.sum([1], mode="quire")
    assert str(e.value) == cli.error(["golden", "lns:5:6", "sum", "--mode", "quire", "1"])
    p = lpgen.Format("posit:8:2")
    with pytest.raises(ValueError) as e:
        p.dot([1], [1], mode="fast")
    assert str(e.value) == cli.error(["golden", "posit:8:2", "dot", "--mode", "fast", "1,1"])
    with pytest.raises(ValueError) as e:
        p.add([1, 0x100], [1, 1])
    assert str(e.value) == cli.error(["golden", "posit:8:2", "add", "0x100", "1"])
    with pytest.raises(ValueError) as e:
        lpgen.Format("f32").decode([2**32])
    assert str(e.value) == cli.error(["golden", "f32", "abs", "0x100000000"])


def test_words_must_be_unsigned_integers():
    p = lpgen.Format("posit:8:2")
    with pytest.raises(ValueError, match="negative"):
        p.decode([-1])
    with pytest.raises(ValueError, match="not float64 values"):
        p.decode(np.array([1.0]))
    # Any integer type and any array-like of integers is taken.
    for w in ([64, 65], np.array([64, 65], dtype=np.int16), np.array([64, 65], dtype=np.uint64)):
        assert (p.decode(w) == [1.0, 1.125]).all()


def test_rounding_choices():
    p = lpgen.Format("posit:8:2")
    assert p.encode(1.0, rounding="nearest") == 64
    with pytest.raises(ValueError, match="stochastic rounding is not defined for posit:8:2"):
        p.encode([1.0], rounding="stochastic:8", seed=1)
    with pytest.raises(ValueError, match="stochastic rounding is not defined for posit:8:2"):
        p.quantize([1.0], rounding="stochastic:8")
    with pytest.raises(ValueError, match="unknown rounding"):
        p.encode([1.0], rounding="up")
    with pytest.raises(ValueError, match="seed applies to rounding='stochastic:R' only"):
        p.encode([1.0], seed=3)


def test_fma_refusal_names_issue_32():
    for spec in ["f32", "lns:5:6", "fix:0:7"]:
        with pytest.raises(NotImplementedError, match="issue 32"):
            lpgen.Format(spec).fma([0], [0], [0])
