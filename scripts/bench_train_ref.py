#!/usr/bin/env python3
"""A numpy reference for `lpgen train --backend f32`: the same MLP training algorithm
(sw/train/src/net.rs, layers.rs, optim.rs, model.rs, trainer.rs, data.rs), written independently with float32 arrays and
`@` products, to measure how fast a BLAS does what lpgen's f32 backend does.

    bench_train_ref.py --dataset ../shared/datasets/mnist-10k --hidden 512 --epochs 1 --threads 1

Prints one JSON line per epoch with lpgen's metrics fields (epoch, backend, lr, steps,
train_loss, train_acc, test_loss, test_acc, seconds, samples_per_s): `seconds` is the wall time
of the epoch with the test pass, `samples_per_s` counts the training batches only.

What is the same as lpgen: IDX (gzip) loading; per-pixel normalisation x/255 with the mean
and deviation of the training set computed in float64 (deviation 1 where the variance is
<= 1e-12), inputs rounded to float32; layers 784-H-...-10, sigmoid (or relu) hidden units;
hidden weights uniform in +-4*sqrt(6/(fan_in+fan_out)) (sigmoid; +-sqrt(...) for relu), hidden
biases 0, softmax layer 0; batches of 20 in a fresh shuffle each epoch (the last batch of
MNIST-10k's 8004 samples holds 4); softmax with the row max subtracted; output error
p - onehot; gradients delta^T A and sum(delta); backward e = delta W times h(1-h) or (z>0),
with the weights before the update; v = mu*v - (lr/batch)*g, w = w + v with mu = 0 before
--momentum-from; loss and accuracy from the probabilities in float64 (argmax ties go to the
last class, as Rust's max_by). What differs: the random numbers (numpy's PCG64, not
rand_pcg's streams), the order of the additions inside BLAS products, and libm's exp.
"""

import argparse
import gzip
import json
import os
import struct
import sys
import time


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dataset", required=True, help="directory with IDX files (e.g. ../shared/datasets/mnist-10k)")
    p.add_argument("--hidden", default="512", help="hidden widths, comma separated")
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--threads", type=int, default=1, help="BLAS threads")
    p.add_argument("--activation", choices=["sigmoid", "relu"], default="sigmoid")
    p.add_argument("--batch", type=int, default=20)
    p.add_argument("--lr", type=float, default=0.1)
    p.add_argument("--momentum", type=float, default=0.5)
    p.add_argument("--momentum-from", type=int, default=2)
    p.add_argument("--max-steps", type=int, default=None, help="at most this many batches per epoch")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--blas", action="store_true", help="print the BLAS numpy uses (one line) and exit")
    a = p.parse_args()
    if a.threads < 1 or a.batch < 1 or a.epochs < 1:
        p.error("--threads, --batch and --epochs must be at least 1")
    return a


ARGS = parse_args()
# The thread count must be in the environment before numpy loads its BLAS.
for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS"):
    os.environ[var] = str(ARGS.threads)

import numpy as np  # noqa: E402

try:
    import threadpoolctl  # noqa: E402
except ImportError:
    threadpoolctl = None

F32 = np.float32


def blas_line():
    """One line: numpy's version and the BLAS it runs (threadpoolctl's runtime view if
    installed, else numpy's build configuration)."""
    if threadpoolctl is not None:
        pools = [i for i in threadpoolctl.threadpool_info() if i.get("user_api") == "blas"]
        if pools:
            parts = []
            for i in pools:
                arch = f", {i['architecture']}" if i.get("architecture") else ""
                parts.append(
                    f"{i.get('internal_api')} {i.get('version')}{arch}, {i.get('num_threads')} thread(s),"
                    f" {os.path.basename(i.get('filepath', ''))}"
                )
            return f"numpy {np.__version__}: " + "; ".join(parts)
    try:
        cfg = np.show_config(mode="dicts")
        blas = cfg["Build Dependencies"]["blas"]
        return f"numpy {np.__version__}: {blas.get('name')} {blas.get('version')} (build configuration)"
    except Exception as e:  # older numpy: no dict mode
        return f"numpy {np.__version__}: BLAS unknown ({e})"


def read_idx(path, ndim):
    """An IDX file (gzip or not) with `ndim` dimensions of u8: (dims, array)."""
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)  # every member, like data.rs
    if len(raw) < 4 + 4 * ndim or raw[:4] != bytes([0, 0, 8, ndim]):
        sys.exit(f"{path}: not an IDX file of u8 with {ndim} dimension(s)")
    dims = struct.unpack(">" + "I" * ndim, raw[4 : 4 + 4 * ndim])
    body = np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * ndim)
    if body.size != int(np.prod(dims, dtype=np.int64)):
        sys.exit(f"{path}: header dimensions {dims} do not match {body.size} bytes of data")
    return dims, body.reshape(dims)


def find(d, prefix, kind, ndim):
    base = os.path.join(d, f"{prefix}-{kind}-idx{ndim}-ubyte")
    for p in (base + ".gz", base):
        if os.path.isfile(p):
            return p
    sys.exit(f"dataset {d}: no {base}.gz or {base}")


def load(d, prefix):
    _, images = read_idx(find(d, prefix, "images", 3), 3)
    _, labels = read_idx(find(d, prefix, "labels", 1), 1)
    if images.shape[0] != labels.shape[0]:
        sys.exit(f"dataset {d}: {images.shape[0]} images but {labels.shape[0]} labels")
    return images.reshape(images.shape[0], -1), labels.astype(np.int64)


def moments(images):
    """data.rs `moments`: per-pixel mean and deviation of x/255 in float64 (E[x^2] - E[x]^2;
    deviation 1 where the variance is <= 1e-12)."""
    x = images.astype(np.float64) / 255.0
    n = x.shape[0]
    mean = x.sum(axis=0) / n
    var = (x * x).sum(axis=0) / n - mean * mean
    sd = np.where(var > 1e-12, np.sqrt(np.maximum(var, 0.0)), 1.0)
    return mean, sd


def normalise(images, mean, sd):
    return ((images.astype(np.float64) / 255.0 - mean) / sd).astype(F32)


def init(layers, activation, seed):
    """model.rs `Model::init`: W (out x in) uniform in +-gain*sqrt(6/(fan_in+fan_out)) drawn in
    float64 and rounded to float32, hidden biases 0, the softmax layer all 0."""
    rng = np.random.default_rng(seed)
    gain = 4.0 if activation == "sigmoid" else 1.0
    model = []
    for i, (fan_in, fan_out) in enumerate(zip(layers[:-1], layers[1:])):
        if i + 2 == len(layers):
            w = np.zeros((fan_out, fan_in), F32)
        else:
            r = gain * np.sqrt(6.0 / (fan_in + fan_out))
            w = rng.uniform(-r, r, size=(fan_out, fan_in)).astype(F32)
        b = np.zeros(fan_out, F32)
        model.append({"w": w, "b": b, "vw": np.zeros_like(w), "vb": np.zeros_like(b)})
    return model


def forward(model, x, activation):
    """Each layer's input (A_0 = X), each pre-activation Z, and the softmax probabilities."""
    inputs, pre = [x], []
    a = x
    for i, layer in enumerate(model):
        z = a @ layer["w"].T
        z += layer["b"]
        pre.append(z)
        if i + 1 < len(model):
            if activation == "sigmoid":
                with np.errstate(over="ignore"):
                    a = F32(1.0) / (F32(1.0) + np.exp(-z))
            else:
                a = np.maximum(z, F32(0.0))
            inputs.append(a)
    z = pre[-1]
    e = np.exp(z - z.max(axis=1, keepdims=True))
    probs = e / e.sum(axis=1, keepdims=True)
    return inputs, pre, probs


def step(model, x, labels, lr, momentum, activation):
    """net.rs `Net::step`: forward, backward (with the weights before the update), momentum
    and update, in place. Returns the probabilities."""
    inputs, pre, probs = forward(model, x, activation)
    batch = labels.shape[0]
    delta = probs.copy()
    delta[np.arange(batch), labels] -= F32(1.0)
    grads = []
    for i in range(len(model) - 1, -1, -1):
        grads.append((delta.T @ inputs[i], delta.sum(axis=0)))
        if i == 0:
            break
        e = delta @ model[i]["w"]
        if activation == "sigmoid":
            h = inputs[i]
            delta = e * (h * (F32(1.0) - h))
        else:
            delta = e * (pre[i - 1] > 0).astype(F32)
    grads.reverse()
    rate = F32(lr / batch)
    mu = F32(momentum)
    for layer, (gw, gb) in zip(model, grads):
        for w, v, g in ((layer["w"], layer["vw"], gw), (layer["b"], layer["vb"], gb)):
            g *= rate  # (lr/batch)*g
            v *= mu  # mu*v
            v -= g  # v = mu*v - (lr/batch)*g
            w += v
    return probs


def score(probs, labels):
    """trainer.rs `score`: summed cross-entropy (natural log, p floored at 1e-30) and the
    correct count, in float64; an argmax tie goes to the last class."""
    p = probs.astype(np.float64)
    pl = p[np.arange(labels.shape[0]), labels]
    loss = -np.log(np.where(pl > 1e-30, pl, 1e-30)).sum()
    best = p.shape[1] - 1 - np.argmax(p[:, ::-1], axis=1)
    return float(loss), int((best == labels).sum())


def evaluate(model, x, labels, batch, activation):
    loss, correct = 0.0, 0
    for s in range(0, x.shape[0], batch):
        _, _, probs = forward(model, x[s : s + batch], activation)
        l, c = score(probs, labels[s : s + batch])
        loss += l
        correct += c
    return loss / x.shape[0], correct / x.shape[0]


def main():
    a = ARGS
    if a.blas:
        print(blas_line())
        return
    train_img, train_lab = load(a.dataset, "train")
    test_img, test_lab = load(a.dataset, "t10k")
    mean, sd = moments(train_img)
    # Normalised once at load time (lpgen does the same arithmetic per batch inside its epoch;
    # for numpy that is about 20 ms an epoch).
    xtr, xte = normalise(train_img, mean, sd), normalise(test_img, mean, sd)
    hidden = [int(h) for h in a.hidden.split(",") if h]
    layers = [xtr.shape[1]] + hidden + [10]
    model = init(layers, a.activation, a.seed)
    n = xtr.shape[0]
    for epoch in range(1, a.epochs + 1):
        start = time.perf_counter()
        order = np.random.default_rng([a.seed, epoch]).permutation(n)
        batches = [order[s : s + a.batch] for s in range(0, n, a.batch)]
        if a.max_steps is not None:
            batches = batches[: a.max_steps]
        momentum = a.momentum if epoch >= a.momentum_from else 0.0
        loss, correct, seen = 0.0, 0, 0
        for idx in batches:
            labels = train_lab[idx]
            probs = step(model, xtr[idx], labels, a.lr, momentum, a.activation)
            l, c = score(probs, labels)
            loss += l
            correct += c
            seen += idx.shape[0]
        train_secs = time.perf_counter() - start
        test_loss, test_acc = evaluate(model, xte, test_lab, a.batch, a.activation)
        print(
            json.dumps(
                {
                    "epoch": epoch,
                    "backend": "numpy",
                    "lr": a.lr,
                    "steps": len(batches),
                    "train_loss": loss / max(seen, 1),
                    "train_acc": correct / max(seen, 1),
                    "test_loss": test_loss,
                    "test_acc": test_acc,
                    "seconds": time.perf_counter() - start,
                    "samples_per_s": seen / train_secs,
                    "threads": a.threads,
                }
            ),
            flush=True,
        )


if __name__ == "__main__":
    main()
