#!/usr/bin/env bash
# Weft's in-process all-reduce (crates/coll/benches/allreduce.rs) beside
# MPI_Allreduce (MPICH, crates/coll/benches/mpi/allreduce.c) and PyTorch's
# Gloo backend (crates/coll/benches/gloo/allreduce.py), one process per
# member for both, and the memory floor; prints the markdown table of
# docs/performance.md ("Collectives").
#
#   scripts/bench-coll.sh            # everything (a few minutes)
#   SECONDS_PER_SIZE=1 scripts/bench-coll.sh
#   SKIP_GLOO=1 scripts/bench-coll.sh
#
# Weft: criterion's median (target/criterion/weft/SIZE/N). Floor: every
# input read once and the one shared output written once, (N + 1) * SIZE
# bytes, at this machine's copy bandwidth (the faster of criterion's
# medians for a 64 MiB memcpy on 1 and on 2 threads,
# target/criterion/floor/copy64MB/{1,2}).
# MPI and Gloo: the mean over a timed loop of about SECONDS_PER_SIZE per
# size, the slowest rank's time. Groups of 4 and 8 processes are
# oversubscribed on a 2-core machine (Weft runs its members as tasks on 2
# worker threads). Needs mpicc/mpirun (apt: mpich) and, for Gloo, python3
# with torch.
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${SECONDS_PER_SIZE:-0.5}
OUT=target/bench-coll
mkdir -p "$OUT"
: >"$OUT/peers.txt"

mpicc -O2 -o "$OUT/mpi_allreduce" crates/coll/benches/mpi/allreduce.c
for n in 2 4 8; do
    mpirun -np "$n" -bind-to none "$OUT/mpi_allreduce" "$SECS" >>"$OUT/peers.txt"
done

if [ -z "${SKIP_GLOO:-}" ] && python3 -c "import torch" 2>/dev/null; then
    for n in 2 4 8; do
        python3 crates/coll/benches/gloo/allreduce.py --members "$n" --seconds "$SECS" \
            >>"$OUT/peers.txt"
    done
else
    echo "no torch (or SKIP_GLOO): the Gloo column is empty" >&2
fi

cargo bench -p weft-coll --bench allreduce -- --noplot >"$OUT/criterion.txt" 2>&1

python3 - "$OUT/peers.txt" <<'PY'
import json, sys
peers = {}
for line in open(sys.argv[1]):
    who, size, n, secs = line.split()
    peers[(who, int(size), int(n))] = float(secs)
sizes = [("8B", 8), ("4KB", 4 << 10), ("1MB", 1 << 20), ("16MB", 16 << 20)]

def crit(group, label, n):
    try:
        with open(f"target/criterion/{group}/{label}/{n}/new/estimates.json") as f:
            return json.load(f)["median"]["point_estimate"] * 1e-9
    except OSError:
        return None

def fmt(t):
    if t is None:
        return "-"
    for unit, scale in (("s", 1), ("ms", 1e-3), ("µs", 1e-6)):
        if t >= scale:
            return f"{t / scale:.3g} {unit}"
    return f"{t / 1e-9:.3g} ns"

def ratio(a, b):
    return "-" if a is None or b is None else f"{a / b:.2f}"

copy = [t for t in (crit("floor", "copy64MB", k) for k in (1, 2)) if t]
bw = 2 * (64 << 20) / min(copy) if copy else None  # bytes read + written per second
if bw:
    print(f"Copy bandwidth: {bw / 1e9:.1f} GB/s (read + written; 64 MiB memcpy, "
          f"1 thread {fmt(copy[0])}, 2 threads {fmt(copy[-1])})\n")
print("| size | members | weft | MPI | Gloo | floor | weft/floor | MPI/weft | Gloo/weft |")
print("|---|---|---|---|---|---|---|---|---|")
for label, size in sizes:
    for n in (2, 4, 8):
        w = crit("weft", label, n)
        fl = (n + 1) * size / bw if bw else None
        m = peers.get(("mpi", size, n))
        g = peers.get(("gloo", size, n))
        print(f"| {label} | {n} | {fmt(w)} | {fmt(m)} | {fmt(g)} | {fmt(fl)} | "
              f"{ratio(w, fl)} | {ratio(m, w)} | {ratio(g, w)} |")
PY
