"""`Format.dot(a, b, mode="fdpa:…", init=C)` (issue 49): a GPU matrix unit's output words
(binary32 as uint32, binary16 as uint16) equal `lpgen golden FORMAT dot --mode fdpa:… --init C`,
bit for bit; refusals are ValueErrors."""

import numpy as np
import pytest

import lpgen
from conftest import hexw, sample_words

CASES = [
    ("fp8:e4m3", "fdpa:hopper"),
    ("fp8:e5m2", "fdpa:hopper:promote64"),
    ("fp8:e4m3", "fdpa:blackwell"),
    ("bf16", "fdpa:ampere"),
    ("f16", "fdpa:volta"),
    ("f16", "fdpa:8:30:rne-f16"),
]


@pytest.mark.parametrize("spec,mode", CASES)
def test_fdpa_words_equal_the_command_line(spec, mode, cli, rng):
    fmt = lpgen.Format(spec)
    k = 40
    # Random and corner words (corners shuffled in), 30 rows of k.
    a, b = (rng.permutation(sample_words(fmt, 30 * k, rng))[: 30 * k].reshape(30, k) for _ in "ab")
    out16 = mode.endswith("rne-f16")
    for init in [0, 0x3F800000, 0x80000001] if not out16 else [0, 0x3C00, 0x8001]:
        ours = fmt.dot(a, b, mode=mode, init=init)
        assert ours.dtype == (np.uint16 if out16 else np.uint32) and ours.shape == (30,)
        lines = [" ".join(f"{hexw(x)},{hexw(y)}" for x, y in zip(ra, rb)) for ra, rb in zip(a, b)]
        p = cli.run(
            ["golden", spec, "dot", "--stdin", "--mode", mode, "--init", hexw(init)],
            stdin="".join(line + "\n" for line in lines),
        )
        assert p.returncode == 0, p.stderr
        theirs = [int(line.split()[0], 16) for line in p.stdout.splitlines()]
        assert [int(w) for w in ours] == theirs, (spec, mode, init)


def test_fdpa_examples_and_broadcast_init():
    f = lpgen.Format("fp8:e4m3")
    ones = np.full(32, f.encode(1.0), dtype=np.uint8)
    # 2^24 + 32 ones: truncated away on Hopper (F = 13), counted on Blackwell (F = 25).
    assert int(f.dot(ones, ones, mode="fdpa:hopper", init=0x4B800000)) == 0x4B800000
    assert int(f.dot(ones, ones, mode="fdpa:blackwell", init=0x4B800000)) == 0x4B800010
    many = np.full(256, ones[0], dtype=np.uint8)
    assert int(f.dot(many, many, mode="fdpa:hopper:promote128", init=0x4B800000)) == 0x4B800080
    # init broadcast over the rows; without it C = +0.
    rows = np.stack([ones, ones])
    got = f.dot(rows, ones, mode="fdpa:hopper", init=[0, 0x3F800000])
    assert [int(w) for w in got] == [0x42000000, 0x42040000]
    assert int(f.dot(ones, ones, mode="fdpa:hopper")) == 0x42000000
    # Other modes are as before.
    assert int(f.dot(ones, ones, mode="quire")) == int(f.encode(32.0))


@pytest.mark.parametrize(
    "spec,kwargs,needle",
    [
        ("posit:8:2", {"mode": "fdpa:hopper"}, "'fdpa' is for float formats"),
        ("lns:5:6", {"mode": "fdpa:hopper"}, "'fdpa' is for float formats"),
        ("bf16", {"mode": "fdpa:4:0:rz-f32"}, 'F = "0"'),
        ("bf16", {"mode": "fdpa:0:13:rz-f32"}, 'L = "0"'),
        ("bf16", {"mode": "fdpa:nvidia"}, "unknown preset"),
        ("float:8:10", {"mode": "fdpa:ada"}, "ada takes f16, bf16 or fp8"),
        ("bf16", {"init": 1}, "init is the addend C"),
        ("bf16", {"mode": "fdpa:hopper", "init": [1, 2, 3]}, "must broadcast"),
    ],
)
def test_bad_fdpa_arguments_are_value_errors(spec, kwargs, needle):
    f = lpgen.Format(spec)
    with pytest.raises(ValueError, match=needle):
        f.dot([0, 0], [0, 0], **kwargs)
