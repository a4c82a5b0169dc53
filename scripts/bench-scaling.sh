#!/usr/bin/env bash
# How tasks doing tensor work scale over the cores: K tasks, each running N
# small tensor ops on its own tensors (crates/weft/benches/scaling/
# tensor_tasks.weft), for K = 1, 2, 4, ... up to the number of CPUs. With
# nothing shared between the tasks the wall time should stay flat; the last
# column is the wall time over K=1's (1.0 is perfect scaling, K is fully
# serial). Prints the markdown table of docs/performance.md ("Eighteenth
# session").
#
#   scripts/bench-scaling.sh                 # N=50000, median of 3 runs
#   N=20000 RUNS=5 scripts/bench-scaling.sh
#   WEFT=path/to/weft scripts/bench-scaling.sh   # another build
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-50000}
RUNS=${RUNS:-3}
WEFT=${WEFT:-target/release/weft}
if [ "$WEFT" = target/release/weft ]; then
    cargo build --release -q -p weft
fi
PROG=crates/weft/benches/scaling/tensor_tasks.weft
cpus=$(nproc)
ks=()
for ((k = 1; k < cpus; k *= 2)); do ks+=("$k"); done
ks+=("$cpus")

median() { sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }

echo "| tasks | wall ms | µs per op in a task | wall / 1 task's |"
echo "|---|---|---|---|"
base=""
for k in "${ks[@]}"; do
    walls=() ops=()
    for ((r = 0; r < RUNS; r++)); do
        line=$("$WEFT" run "$PROG" -- "$k" "$N" --times | grep '^wall ms')
        walls+=("$(awk '{print $3}' <<<"$line")")
        ops+=("$(awk '{print $7}' <<<"$line")")
    done
    w=$(printf '%s\n' "${walls[@]}" | median)
    o=$(printf '%s\n' "${ops[@]}" | median)
    base=${base:-$w}
    awk -v k="$k" -v w="$w" -v o="$o" -v b="$base" \
        'BEGIN { printf "| %d | %.1f | %.2f | %.2f |\n", k, w, o, w / b }'
done
