#!/usr/bin/env bash
# Weft's channels beside crossbeam-channel (crates/chan/benches/chan.rs), run several
# times in a row, with the ratio weft / crossbeam of each run and their
# median. One run of this bench moves single ratios by up to 2x on a
# 2-vCPU machine, so a claim needs the repeats. For claims, prefer
# `cargo bench -p weft-chan --bench chan_paired` (interleaved pairs with a confidence
# interval; docs/performance.md, "Interleaved pairs").
#
#   scripts/bench-chan.sh              # 3 runs of every scenario
#   RUNS=5 scripts/bench-chan.sh mpmc  # a criterion filter, more runs
#
# Each run is `cargo bench -p weft-chan --bench chan -- --warm-up-time 0.5
# --measurement-time 2 [FILTER]`; the time taken per scenario is
# criterion's median estimate. Prints a markdown table.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-3}
FILTER=${1:-}
OUT=target/bench-chan
mkdir -p "$OUT"
cargo bench -p weft-chan --bench chan --no-run --quiet 2>/dev/null
for r in $(seq 1 "$RUNS"); do
    cargo bench -p weft-chan --bench chan -- --warm-up-time 0.5 --measurement-time 2 $FILTER \
        >"$OUT/run$r.txt" 2>&1
done
python3 - "$OUT" "$RUNS" <<'PY'
import re, sys, statistics
out, runs = sys.argv[1], int(sys.argv[2])
unit = {"ns": 1e-6, "µs": 1e-3, "us": 1e-3, "ms": 1.0, "s": 1e3}
table = {}  # (scenario, cap) -> [(weft, crossbeam) per run]
order = []
for r in range(1, runs + 1):
    text = open(f"{out}/run{r}.txt").read()
    # "chan/NAME/LIB/CAP" then (possibly on the next line) "time: [lo mid hi]"
    for m in re.finditer(r"chan/([\w]+)/(weft|crossbeam)(?:/(\w+))?\s+time:\s+\[\S+ \S+ (\S+) (\S+) \S+ \S+\]", text):
        name, lib, cap, v, u = m.group(1), m.group(2), m.group(3) or "-", float(m.group(4)), m.group(5)
        key = (name, cap)
        if key not in table:
            table[key] = [dict() for _ in range(runs)]
            order.append(key)
        table[key][r - 1][lib] = v * unit[u]
print("| scenario | cap | " + " | ".join(f"run {r} weft / crossbeam (ms)" for r in range(1, runs + 1)) + " | median ratio |")
print("|---|---|" + "---|" * runs + "---:|")
for key in order:
    cells, ratios = [], []
    for d in table[key]:
        if "weft" in d and "crossbeam" in d:
            ratio = d["weft"] / d["crossbeam"]
            ratios.append(ratio)
            cells.append(f"{d['weft']:.3g} / {d['crossbeam']:.3g} = {ratio:.2f}")
        else:
            cells.append("-")
    med = f"**{statistics.median(ratios):.2f}**" if ratios else "-"
    print(f"| {key[0]} | {key[1]} | " + " | ".join(cells) + f" | {med} |")
PY
