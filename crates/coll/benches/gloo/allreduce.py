"""All-reduce timing with PyTorch's Gloo backend, the Gloo column of
scripts/bench-coll.sh (docs/performance.md, "Collectives").

    python3 allreduce.py --members 4 [--seconds 0.5]

Starts one process per member (torch.multiprocessing, rendezvous on a
file:// store), each with one intra-op thread. For each size (one int64;
float32 tensors of 4 KB, 1 MB, 16 MB) it times `dist.all_reduce` (sum)
on a copy of the input, as Weft's `allreduce_sum` leaves its input alone
and makes a new tensor (the clone is part of the time; `--in-place`
leaves it out). Iterations: 3 warm-up calls, a calibration run whose
time (the slowest rank's) sets the count for about `--seconds`, then the
timed loop between barriers. Rank 0 prints one line per size:
`gloo <bytes> <members> <seconds per all-reduce>`.
"""

import argparse
import os
import tempfile
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

SIZES = [8, 4 << 10, 1 << 20, 16 << 20]


def timed(x, iters, in_place):
    dist.barrier()
    t0 = time.perf_counter()
    for _ in range(iters):
        y = x if in_place else x.clone()
        dist.all_reduce(y, op=dist.ReduceOp.SUM)
    mine = torch.tensor([time.perf_counter() - t0], dtype=torch.float64)
    dist.all_reduce(mine, op=dist.ReduceOp.MAX)
    return mine.item()


def member(rank, members, store, seconds, in_place):
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method="file://" + store, rank=rank, world_size=members)
    for size in SIZES:
        if size == 8:
            x = torch.tensor([rank], dtype=torch.int64)
        else:
            x = torch.arange(size // 4, dtype=torch.float32) + rank
        timed(x, 3, in_place)
        probe = timed(x, 5, in_place) / 5
        iters = int(min(200000, max(5, seconds / max(probe, 1e-9))))
        total = timed(x, iters, in_place)
        if rank == 0:
            print(f"gloo {size} {members} {total / iters:.9f}", flush=True)
    dist.barrier()
    dist.destroy_process_group()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--members", type=int, required=True)
    p.add_argument("--seconds", type=float, default=0.5)
    p.add_argument("--in-place", action="store_true")
    a = p.parse_args()
    with tempfile.TemporaryDirectory() as d:
        store = os.path.join(d, "store")
        mp.spawn(member, args=(a.members, store, a.seconds, a.in_place), nprocs=a.members)


if __name__ == "__main__":
    main()
