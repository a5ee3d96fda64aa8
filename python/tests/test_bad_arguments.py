"""Issue 48, items 4 and 5: every bad argument is a ValueError (a TypeError for a wrong Python
type) with the command line's one-line message, integers out of range included; never an
OverflowError. And the word lists the docs call valid (an empty list, Python integers numpy
makes float64 of) are words."""

import numpy as np
import pytest

import lpgen


def refused(call, match):
    """`call()` raises ValueError (not OverflowError, whatever the integer) matching `match`."""
    with pytest.raises(ValueError, match=match) as e:
        call()
    assert not isinstance(e.value, OverflowError)
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("seed", [-1, 2**64, -(2**70), 2**200])
def test_a_seed_out_of_range_is_a_value_error(seed):
    want = "seed must be an integer from 0 to 2\\*\\*64 - 1, not " + str(seed)
    refused(lambda: lpgen.Rounder("stochastic:4", seed=seed), want)
    bf16 = lpgen.Format("bf16")
    refused(lambda: bf16.encode([1.0], rounding="stochastic:4", seed=seed), want)
    refused(lambda: bf16.quantize([1.0], rounding="stochastic:4", seed=seed), want)


def test_a_seed_of_another_type_is_a_type_error_and_in_range_seeds_work():
    with pytest.raises(TypeError):
        lpgen.Rounder("stochastic:4", seed="5")
    with pytest.raises(TypeError):
        lpgen.Rounder("stochastic:4", seed=1.5)
    assert lpgen.Rounder("stochastic:4", seed=2**64 - 1).state == lpgen.Rounder(
        "stochastic:4", seed=np.uint64(2**64 - 1)
    ).state
    assert lpgen.Rounder("stochastic:4").state == lpgen.Rounder("stochastic:4", seed=0).state


@pytest.mark.parametrize("scale", [2**63, -(2**63) - 1, -(2**70), 1001])
def test_a_dfix_scale_out_of_range_is_a_value_error(scale):
    refused(
        lambda: lpgen.Format("dfix:8", scale=scale),
        f"scale {scale} is out of range: give -1000..=1000",
    )


@pytest.mark.parametrize("scale", [-(2**70), 2**63, 0])
def test_a_scale_of_another_family_says_scale_applies_to_dfix(scale):
    refused(
        lambda: lpgen.Format("bf16", scale=scale),
        "scale applies to dfix:W formats, not \"bf16\"",
    )


@pytest.mark.parametrize("axis", [2**63, -(2**63) - 1, 2**100, 2, -3])
def test_an_axis_out_of_range_is_out_of_bounds(axis):
    fmt = lpgen.Format("bf16")
    w = fmt.encode(np.ones((2, 3)))
    want = f"axis {axis} is out of bounds for an array of dimension 2"
    refused(lambda: fmt.sum(w, axis=axis), want)
    refused(lambda: fmt.dot(w, w, axis=axis), want)
    refused(lambda: fmt.cumdot(w, w, axis=axis), want)
    refused(lambda: fmt.acc_dot(w, w, "float:8:16", axis=axis), want)
    d = lpgen.Format("dfix:8")
    refused(lambda: d.dfix_dot([[1, 2, 3]] * 2, [[1, 2, 3]] * 2, 0, axis=axis), want)
    with pytest.raises(TypeError):
        fmt.sum(w, axis=1.0)


@pytest.mark.parametrize("shift", [2**63, -(2**63), -(2**63) - 1, 3001])
def test_a_dfix_dot_shift_out_of_range_is_a_value_error(shift):
    # -2**63 fits int64, and its absolute value did not: it passed the range check.
    refused(
        lambda: lpgen.Format("dfix:8").dfix_dot([1], [1], shift),
        f"shift {shift} is out of range: give -3000..=3000",
    )


@pytest.mark.parametrize("offset", [2**31, -(2**31), 2**70])
def test_a_q8_offset_out_of_range_is_a_value_error(offset):
    refused(
        lambda: lpgen.q8_encode([1.0], "q8:mantissa", offset=offset),
        f"exponent offset {offset} is out of range: use -10..=10",
    )


def test_a_value_beyond_float64_is_a_value_error():
    refused(lambda: lpgen.q8_decode([1], 10**400), "is not a finite float32")
    refused(lambda: lpgen.Format("bf16").encode([10**400]), "does not fit a float")
    refused(lambda: lpgen.Format("bf16").quantize(10**400), "does not fit a float")
    refused(lambda: lpgen.q8_encode([10**400]), "does not fit a float")


def test_documented_word_lists_are_words():
    # numpy makes float64 of an empty list and of [2**63, 1]: they are words all the same.
    bf16 = lpgen.Format("bf16")
    got = bf16.neg([])
    assert got.shape == (0,) and got.dtype == np.uint16
    assert bf16.add([], []).shape == (0,)
    f64 = lpgen.Format("float:11:52")
    np.testing.assert_array_equal(
        f64.neg([2**63, 1]), np.array([0, 2**63 + 1], dtype=np.uint64)
    )
    np.testing.assert_array_equal(
        f64.neg([[2**63], [1]]), np.array([[0], [2**63 + 1]], dtype=np.uint64)
    )
    # The same refusals as for a numpy array of integers.
    refused(lambda: f64.neg([2**64, 1]), "has more than the 64 bits of float:11:52")
    refused(lambda: f64.neg([-1, 2**63]), "word -1 is negative")
    refused(lambda: bf16.neg([2**63, 1]), 'bit pattern "0x8000000000000000" has more than the 16 bits')
    # Floats are still values, not words, in a list as in an array.
    refused(lambda: bf16.neg([1.5, 2**63]), "unsigned integer bit patterns, not float values")
    refused(lambda: bf16.neg(np.array([1.5])), "unsigned integer bit patterns, not float64 values")


@pytest.mark.parametrize("shift", [2**63, -(2**63), 2**31, [2**70, 1], np.array([2**64 - 1], dtype=np.uint64)])
def test_a_dfix_lane_shift_out_of_range_is_a_value_error(shift):
    # Found by test_fuzz_arguments.py: numpy's int64 conversion raised OverflowError, and
    # -2**63 passed the range check (its absolute value wrapped).
    refused(
        lambda: lpgen.Format("dfix:8").dfix_lane(0, [1], [2], shift),
        "is out of range: give -2147483647..=2147483647",
    )


def test_a_dfix_lane_shift_takes_integers_only():
    # A float shift was truncated to an integer silently.
    d = lpgen.Format("dfix:8")
    refused(lambda: d.dfix_lane(0, [1], [2], [1.5]), "shift takes integers, not float values")
    refused(lambda: d.dfix_lane(0, [1], [2], np.array([1.5])), "not float64 values")
    assert d.dfix_lane(0, [1], [2], np.int8(-2))[0].tolist() == d.dfix_lane(0, [1], [2], -2)[0].tolist()
