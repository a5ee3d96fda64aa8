"""`Format.matmul` (the golden kernels): element (i, j) is `dot(a[i, :], b[:, j], mode)` bit for
bit in every family and mode, including special words, long K and shapes with an empty side;
bad shapes raise ValueError."""

import numpy as np
import pytest

import lpgen

CASES = [
    ("posit:8:2", ["naive", "kahan", "pairwise", "quire"]),
    ("posit:16:1", ["naive", "quire"]),
    ("bf16", ["naive", "kahan", "quire"]),
    ("fp8:e4m3", ["naive", "quire"]),
    ("fix:7:8", ["naive", "quire"]),
    ("lns:5:6", ["naive", "kahan"]),
    ("f32", ["naive"]),
]


def reference(fmt, a, b, mode):
    # The per-element golden dot products, through broadcasting: (m, 1, k) with (1, n, k).
    return fmt.dot(a[:, None, :], b.T[None, :, :], mode=mode, axis=-1)


@pytest.mark.parametrize("spec,modes", CASES)
def test_matmul_is_dot_of_rows_and_columns(spec, modes):
    fmt = lpgen.Format(spec)
    rng = np.random.default_rng(45)
    for m, k, n in [(1, 1, 1), (3, 5, 2), (17, 33, 9), (40, 300, 3)]:
        # Every bit pattern the format has (specials included), and ordinary values.
        for a, b in [
            (rng.integers(0, 2**min(fmt.width, 16), size=(m, k)),
             rng.integers(0, 2**min(fmt.width, 16), size=(k, n))),
            (fmt.encode(rng.normal(size=(m, k))), fmt.encode(rng.normal(size=(k, n)))),
        ]:
            a = np.asarray(a, dtype=fmt.dtype)
            b = np.asarray(b, dtype=fmt.dtype)
            for mode in modes:
                got = fmt.matmul(a, b, mode=mode)
                assert got.shape == (m, n) and got.dtype == fmt.dtype
                np.testing.assert_array_equal(got, reference(fmt, a, b, mode),
                                              err_msg=f"{spec} {mode} {m}x{k}x{n}")


def test_matmul_of_empty_sides():
    p = lpgen.Format("posit:8:2")
    assert p.matmul(np.zeros((0, 3), np.uint8), np.zeros((3, 4), np.uint8)).shape == (0, 4)
    assert p.matmul(np.zeros((2, 3), np.uint8), np.zeros((3, 0), np.uint8)).shape == (2, 0)
    np.testing.assert_array_equal(
        p.matmul(np.zeros((2, 0), np.uint8), np.zeros((0, 3), np.uint8), mode="quire"),
        np.zeros((2, 3), np.uint8))


def test_matmul_refuses_bad_shapes_and_modes():
    p = lpgen.Format("posit:8:2")
    with pytest.raises(ValueError, match="inner sizes differ"):
        p.matmul(np.zeros((2, 3), np.uint8), np.zeros((4, 2), np.uint8))
    with pytest.raises(ValueError, match="2-D"):
        p.matmul(np.zeros(3, np.uint8), np.zeros((3, 2), np.uint8))
    with pytest.raises(ValueError, match="fdpa products are"):
        lpgen.Format("fp8:e4m3").matmul(np.zeros((1, 1), np.uint8), np.zeros((1, 1), np.uint8),
                                        mode="fdpa:hopper")
    with pytest.raises(ValueError, match="mode"):
        lpgen.Format("lns:5:6").matmul(np.zeros((1, 1), np.uint16), np.zeros((1, 1), np.uint16),
                                       mode="quire")
