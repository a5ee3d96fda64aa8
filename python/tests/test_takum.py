"""takum:N through the package: the registry's family, with nothing takum-specific in Python."""

import numpy as np
import pytest

import lpgen


def test_takum_words_round_by_the_golden_rule():
    f = lpgen.Format("takum:8")
    # 0.3 between 0.296875 and 0.3125 (4 fraction bits at c = -2) goes up; 1e9 saturates to
    # the nearest word 2^29 (c = 29 has 1 fraction bit here); 1e-80 never rounds to zero.
    got = f.quantize([0.3, 1e9, 1e-80, -2.5, 0.0])
    assert got[0] == 0.3125 and got[1] == 2.0**29 and got[3] == -2.5 and got[4] == 0.0
    assert 0 < got[2] < 1e-70


def test_takum_quire_dot_is_exact_then_rounded_once():
    f = lpgen.Format("takum:16")
    a, b = f.encode([1, 2, 3]), f.encode([4, 5, 6])
    assert f.decode([f.dot(a, b, mode="quire")])[0] == 32.0


def test_bad_takum_widths_are_value_errors():
    for bad in ["takum:5", "takum:33", "takum:16:2"]:
        with pytest.raises(ValueError, match="takum"):
            lpgen.Format(bad)
