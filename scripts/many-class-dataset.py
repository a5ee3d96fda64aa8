#!/usr/bin/env python3
"""A many-class image task from Fashion-MNIST, for seed 000 Table 4.5's softmax question.

The thesis' TIMIT softmax ran over 1,943 frame classes; Fashion-MNIST has ten, a sum too short
for a 7-bit significand to lose terms in. This writes "Fashion-MNIST-250": every image is
halved to 14x14 (the mean of each 2x2 block, rounded half up) and placed on an empty 28x28
canvas at one of 5 x 5 offsets (rows and columns 0, 3, 7, 10, 14); its label is
25 * garment + offset, 250 classes (IDX labels are bytes: 256 at most). The offset of image i
comes from a fixed 64-bit LCG over i, so the files are the same on every machine.

    python3 scripts/many-class-dataset.py SRC_DIR OUT_DIR

SRC_DIR holds Fashion-MNIST's four IDX files (gzip or not); OUT_DIR gets four IDX files of the
same names, gzip-compressed. Standard library only.
"""

import gzip
import os
import struct
import sys

OFFSETS = [0, 3, 7, 10, 14]
SPLITS = ["train", "t10k"]


def read_idx(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    magic, = struct.unpack(">I", data[:4])
    ndim = magic & 0xFF
    dims = struct.unpack(">" + "I" * ndim, data[4:4 + 4 * ndim])
    return dims, data[4 + 4 * ndim:]


def find(src, split, kind):
    for name in (f"{split}-{kind}-idx{3 if kind == 'images' else 1}-ubyte", ):
        for ext in (".gz", ""):
            p = os.path.join(src, name + ext)
            if os.path.exists(p):
                return p
    sys.exit(f"many-class-dataset: {src} has no {split} {kind} IDX file")


def offset_of(i):
    """Offset index 0..24 of image i (split-specific streams differ by a salt)."""
    x = (i * 6364136223846793005 + 1442695040888963407) % (1 << 64)
    return (x >> 33) % 25


def place(img):
    small = bytearray(196)
    for r in range(14):
        for c in range(14):
            a = 2 * r * 28 + 2 * c
            s = img[a] + img[a + 1] + img[a + 28] + img[a + 29]
            small[r * 14 + c] = (s + 2) // 4
    return small


def write_idx(path, dims, body):
    head = struct.pack(">I", 0x0800 | len(dims)) + struct.pack(">" + "I" * len(dims), *dims)
    tmp = path + ".tmp"
    with gzip.open(tmp, "wb", compresslevel=6) as f:
        f.write(head + bytes(body))
    os.replace(tmp, path)


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: many-class-dataset.py SRC_DIR OUT_DIR")
    src, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    for salt, split in enumerate(SPLITS):
        (n, rows, cols), pixels = read_idx(find(src, split, "images"))
        (nl,), labels = read_idx(find(src, split, "labels"))
        if (rows, cols) != (28, 28) or nl != n or max(labels) > 9:
            sys.exit(f"many-class-dataset: {src} is not 28x28 images with labels 0..9")
        images = bytearray(n * 784)
        new_labels = bytearray(n)
        for i in range(n):
            k = offset_of(i + salt * (1 << 32))
            dy, dx = OFFSETS[k // 5], OFFSETS[k % 5]
            small = place(pixels[i * 784:(i + 1) * 784])
            base = i * 784 + dy * 28 + dx
            for r in range(14):
                images[base + r * 28:base + r * 28 + 14] = small[r * 14:(r + 1) * 14]
            new_labels[i] = 25 * labels[i] + k
        write_idx(os.path.join(out, f"{split}-images-idx3-ubyte.gz"), (n, 28, 28), images)
        write_idx(os.path.join(out, f"{split}-labels-idx1-ubyte.gz"), (n,), new_labels)
        print(f"{split}: {n} images in {len(set(new_labels))} classes", file=sys.stderr)


if __name__ == "__main__":
    main()
