#!/usr/bin/env bash
# Weft across processes against raw MPI (docs/distributed.md, "Speed"):
# all-reduce over world() vs MPI_Allreduce (8 B, 1 MB, 16 MB; 2 and 4
# processes), ping-pong over an unbuffered remote channel vs MPI_Send /
# MPI_Recv (8 B), streaming 1 MB tensors over a buffered remote channel
# (their floats attached to the payloads, as the interpreter sends a large
# tensor; builds before 2026-11-28 sent the bytes copied into each
# payload, `bench_world streambytes` now) vs MPI_Send / MPI_Recv of the
# same messages, and the CPU an idle process
# uses. Each measurement runs the baseline and Weft back to back (best of
# 3 inside each). Needs MPI and libclang (docs/distributed.md, "Install").
# Prints a markdown table, with the load average before and after.
# NPS="2" runs the all-reduces with 2 processes only (default "2 4": the
# 4-process rows oversubscribe a 2-core machine and take minutes).
# WEFT=PATH measures another build of bench_world (an A/B comparison).
set -euo pipefail
cd "$(dirname "$0")/.."

MPIRUN=(mpirun)
if mpirun --version 2>&1 | grep -q "Open MPI"; then
  MPIRUN+=(--oversubscribe)
  [ "$(id -u)" = 0 ] && MPIRUN+=(--allow-run-as-root)
fi

mkdir -p target/bench-mpi
mpicc -O2 -o target/bench-mpi/baseline crates/mpi/benches/baseline.c
cargo build --release -q -p weft-mpi --features mpi --example bench_world
BASE=target/bench-mpi/baseline
WEFT=${WEFT:-${CARGO_TARGET_DIR:-target}/release/examples/bench_world}

# value NAME KEY LINE: the number after KEY= in LINE.
val() { sed -n "s/.*$1=\([0-9.]*\).*/\1/p" <<<"$2"; }

echo "load average before: $(cut -d" " -f1-3 /proc/loadavg)"
echo
echo "| measurement | processes | MPI | Weft | Weft / MPI |"
echo "|---|---|---|---|---|"
for np in ${NPS:-2 4}; do
  for spec in "8 20000" "1048576 200" "16777216 20"; do
    set -- $spec
    b=$(val us "$("${MPIRUN[@]}" -np "$np" "$BASE" allreduce "$1" "$2")")
    w=$(val us "$("${MPIRUN[@]}" -np "$np" "$WEFT" allreduce "$1" "$2")")
    printf "| all-reduce %s B (µs) | %s | %s | %s | %.2f |\n" "$1" "$np" "$b" "$w" "$(echo "$w / $b" | bc -l)"
  done
done
b=$(val us "$("${MPIRUN[@]}" -np 2 "$BASE" pingpong 8 20000)")
w=$(val us "$("${MPIRUN[@]}" -np 2 "$WEFT" pingpong 8 20000)")
printf "| ping-pong 8 B, one way (µs) | 2 | %s | %s | %.2f |\n" "$b" "$w" "$(echo "$w / $b" | bc -l)"
b=$(val gbps "$("${MPIRUN[@]}" -np 2 "$BASE" stream 1048576 300)")
w=$(val gbps "$("${MPIRUN[@]}" -np 2 "$WEFT" stream 1048576 300)")
printf "| stream 1 MB values (GB/s) | 2 | %s | %s | %.2f (MPI / Weft) |\n" "$b" "$w" "$(echo "$b / $w" | bc -l)"
idle=$("${MPIRUN[@]}" -np 2 "$WEFT" idle 10 | sed -n 's/.*cpu_percent=\([0-9.]*\).*/\1/p' | sort -n | tail -1)
printf "| idle process, CPU (%%) | 2 | - | %s | - |\n" "$idle"
echo
echo "load average after: $(cut -d" " -f1-3 /proc/loadavg)"
