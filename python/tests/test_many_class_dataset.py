"""scripts/many-class-dataset.py (the 250-class task of seed 000 Table 4.5's softmax run):
labels and pixels checked against the script's own description, on a small IDX dataset."""

import gzip
import struct
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "many-class-dataset.py"
OFFSETS = [0, 3, 7, 10, 14]


def idx(dims, body):
    return struct.pack(">I", 0x0800 | len(dims)) + struct.pack(">" + "I" * len(dims), *dims) + body


def read(path):
    data = gzip.open(path).read()
    ndim = data[3]
    dims = struct.unpack(">" + "I" * ndim, data[4:4 + 4 * ndim])
    return dims, data[4 + 4 * ndim:]


def lcg_offset(i):
    """The docstring's 'fixed 64-bit LCG over i' (Knuth's MMIX constants), top bits mod 25."""
    return (((i * 6364136223846793005 + 1442695040888963407) % 2**64) >> 33) % 25


def test_labels_and_placement(tmp_path):
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    n = 6
    # Pseudo-random pixels (every 2x2 block sum mod 4 occurs), so a misplaced or misrounded
    # block shows.
    images = bytes(((j * 2654435761) >> 11) & 255 for j in range(n * 784))
    labels = bytes([0, 9, 3, 5, 9, 1])
    for split in ["train", "t10k"]:
        (src / f"{split}-images-idx3-ubyte").write_bytes(idx((n, 28, 28), images))
        (src / f"{split}-labels-idx1-ubyte").write_bytes(idx((n,), labels))
    subprocess.run([sys.executable, str(SCRIPT), str(src), str(out)], check=True, capture_output=True)
    for salt, split in enumerate(["train", "t10k"]):
        (m, rows, cols), pix = read(out / f"{split}-images-idx3-ubyte.gz")
        (ml,), lab = read(out / f"{split}-labels-idx1-ubyte.gz")
        assert (m, rows, cols, ml) == (n, 28, 28, n)
        for i in range(n):
            k = lcg_offset(i + salt * 2**32)
            assert lab[i] == 25 * labels[i] + k
            dy, dx = OFFSETS[k // 5], OFFSETS[k % 5]
            src_px = lambda r, c: images[i * 784 + r * 28 + c]
            for r in range(28):
                for c in range(28):
                    got = pix[i * 784 + r * 28 + c]
                    if dy <= r < dy + 14 and dx <= c < dx + 14:
                        y, x = 2 * (r - dy), 2 * (c - dx)
                        s = src_px(y, x) + src_px(y, x + 1) + src_px(y + 1, x) + src_px(y + 1, x + 1)
                        assert got == (s + 2) // 4, (split, i, r, c)
                    else:
                        assert got == 0, (split, i, r, c)


def test_refuses_labels_above_nine(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    for split in ["train", "t10k"]:
        (src / f"{split}-images-idx3-ubyte").write_bytes(idx((1, 28, 28), bytes(784)))
        (src / f"{split}-labels-idx1-ubyte").write_bytes(idx((1,), bytes([10])))
    r = subprocess.run([sys.executable, str(SCRIPT), str(src), str(tmp_path / "o")], capture_output=True, text=True)
    assert r.returncode != 0 and "labels 0..9" in r.stderr
