"""The digits MLP of examples/train_digits.weft written by hand in numpy.

Same data (data/digits.csv.gz), split (360 test rows picked by a seeded
permutation), model (64-128-10, ReLU, softmax cross-entropy), batch 32,
SGD lr 0.1 and epoch count as the Weft program. Each epoch's time includes
reading: shuffling, gathering and scaling every batch. Prints one line per
epoch, the test accuracy, and the mean epoch time.

    python3 crates/weft/benches/pytorch/train_digits_numpy.py [--epochs 40] [--seed 1]
"""

import argparse
import gzip
import os
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "..", "..", "..", "data", "digits.csv.gz")


def load():
    with gzip.open(DATA, "rt") as f:
        rows = np.loadtxt(f, delimiter=",", dtype=np.float32)
    return rows[:, :64], rows[:, 64].astype(np.int64)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=40)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)
    x, y = load()
    order = rng.permutation(len(y))
    test, train = order[:360], order[360:]
    xtest, ytest = x[test] / 16.0, y[test]
    xtrain, ytrain = x[train], y[train]
    w1 = (rng.standard_normal((64, 128)) * 0.177).astype(np.float32)
    b1 = np.zeros(128, np.float32)
    w2 = (rng.standard_normal((128, 10)) * 0.088).astype(np.float32)
    b2 = np.zeros(10, np.float32)
    eye = np.eye(10, dtype=np.float32)
    n, bs, lr = len(ytrain), 32, np.float32(0.1)
    times = []
    for e in range(a.epochs):
        t0 = time.perf_counter()
        perm = rng.permutation(n)
        total, steps = 0.0, 0
        for s in range(0, n - bs + 1, bs):
            idx = perm[s : s + bs]
            xb = xtrain[idx] / np.float32(16.0)
            yb = eye[ytrain[idx]]
            h0 = xb @ w1 + b1
            h = np.maximum(h0, 0)
            z = h @ w2 + b2
            z = z - z.max(axis=1, keepdims=True)
            p = np.exp(z)
            p /= p.sum(axis=1, keepdims=True)
            total += float(-(np.log(p + 1e-7) * yb).sum() / bs)
            dz = (p - yb) / bs
            dh = (dz @ w2.T) * (h0 > 0)
            w2 -= lr * (h.T @ dz)
            b2 -= lr * dz.sum(axis=0)
            w1 -= lr * (xb.T @ dh)
            b1 -= lr * dh.sum(axis=0)
            steps += 1
        ms = (time.perf_counter() - t0) * 1000
        times.append(ms)
        print(f"epoch {e + 1} loss {total / steps:.4f} ms {ms:.3f}")
    pred = (np.maximum(xtest @ w1 + b1, 0) @ w2 + b2).argmax(axis=1)
    print(f"accuracy {(pred == ytest).mean():.4f}")
    print(f"numpy per epoch ms {np.mean(times):.3f} (min {min(times):.3f})")


if __name__ == "__main__":
    main()
