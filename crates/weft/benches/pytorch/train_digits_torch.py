"""The digits MLP of examples/train_digits.weft as a plain PyTorch loop.

Same data, split rule, model (nn.Linear 64-128, ReLU, nn.Linear 128-10,
cross-entropy), batch 32, SGD lr 0.1 and epoch count as the Weft program.
Each epoch's time includes reading: shuffling, gathering and scaling every
batch. Needs `torch` (CPU wheel); bench.sh skips it when torch is missing.
With `--device cuda` the model and each batch live on the GPU (the batch
is gathered on the host and copied, as Weft's transfer task does), the
anchor scripts/gpu-check.sh reports.

    python3 crates/weft/benches/pytorch/train_digits_torch.py [--epochs 40] [--seed 1] [--threads 1] [--device cpu|cuda]
"""

import argparse
import gzip
import os
import time

import numpy as np
import torch
from torch import nn

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "..", "..", "..", "data", "digits.csv.gz")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=40)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--device", default="cpu")
    a = ap.parse_args()
    dev = torch.device(a.device)
    # One intra-op thread: at batch 32 more threads do not help, and on a
    # busy machine their spin-waiting makes epochs 20 times slower.
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    with gzip.open(DATA, "rt") as f:
        rows = torch.from_numpy(np.loadtxt(f, delimiter=",", dtype=np.float32))
    x, y = rows[:, :64], rows[:, 64].long()
    order = torch.randperm(len(y))
    test, train = order[:360], order[360:]
    xtest, ytest = x[test] / 16.0, y[test]
    xtrain, ytrain = x[train], y[train]
    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10)).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    loss_fn = nn.CrossEntropyLoss()
    n, bs = len(ytrain), 32
    times = []
    for e in range(a.epochs):
        t0 = time.perf_counter()
        perm = torch.randperm(n)
        total, steps = 0.0, 0
        for s in range(0, n - bs + 1, bs):
            idx = perm[s : s + bs]
            xb, yb = (xtrain[idx] / 16.0).to(dev), ytrain[idx].to(dev)
            loss = loss_fn(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item()
            steps += 1
        ms = (time.perf_counter() - t0) * 1000
        times.append(ms)
        print(f"epoch {e + 1} loss {total / steps:.4f} ms {ms:.3f}")
    with torch.no_grad():
        pred = model(xtest.to(dev)).argmax(dim=1).cpu()
    print(f"accuracy {(pred == ytest).float().mean().item():.4f}")
    print(f"pytorch per epoch ms {sum(times) / len(times):.3f} (min {min(times):.3f})")


if __name__ == "__main__":
    main()
