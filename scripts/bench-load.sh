#!/usr/bin/env bash
# Loading time against program size (issue 26): `weft check`, `weft build`
# and `weft run x.pb` of generated programs of N = 10k, 20k, 40k, 80k units,
# for one or more weft binaries (an A/B of two builds: the same programs,
# interleaved). Loading must be linear: the time per unit stays flat as N
# doubles (the `x2` column, the time over the time at half the size, stays
# near 2).
#
#   scripts/bench-load.sh                          # target/release/weft
#   scripts/bench-load.sh OLD/weft target/release/weft
#   SIZES="10000 20000" SHAPES="stmts list" TIMEOUT=60 scripts/bench-load.sh
#
# Shapes: `stmts` (one function of N statements `x = x + k`), `list` (a
# list literal of N elements on one line), `elseif` (an else-if chain of N
# links), `switch` (a switch of N cases), `chain` (`x + x + ... + x`, N
# terms). Each time is the best of RUNS (default 1) runs, in seconds; a run
# past TIMEOUT seconds (default 60) shows as `>T`, one that fails as `fail`.
# The programs print their result, so `run` includes running them (a few
# milliseconds at most). Prints a markdown table.
set -euo pipefail
cd "$(dirname "$0")/.."
SIZES=${SIZES:-10000 20000 40000 80000}
SHAPES=${SHAPES:-stmts list elseif switch chain}
RUNS=${RUNS:-1}
TIMEOUT=${TIMEOUT:-60}
if [ $# -eq 0 ]; then
    cargo build --release -p weft --quiet
    set -- target/release/weft
fi
OUT=target/bench-load
mkdir -p "$OUT"
python3 - "$OUT" "$RUNS" "$TIMEOUT" "$SIZES" "$SHAPES" "$@" <<'PY'
import os, subprocess, sys, time

out, runs, timeout = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
sizes = [int(n) for n in sys.argv[4].split()]
shapes = sys.argv[5].split()
bins = sys.argv[6:]

def program(shape, n):
    if shape == "stmts":
        body = "".join(f"\tx = x + {i % 7 + 1}\n" for i in range(n))
        return f"func main() {{\n\tx := 0\n{body}\tprint(x)\n}}\n"
    if shape == "list":
        elems = ", ".join(str(i % 10) for i in range(n))
        return f"func main() {{\n\tl := []int{{{elems}}}\n\tprint(len(l))\n}}\n"
    if shape == "elseif":
        s = "\tif x == 0 {\n\t\tprint(0)\n\t}"
        s += "".join(f" else if x == {i} {{\n\t\tprint({i})\n\t}}" for i in range(1, n))
        return f"func main() {{\n\tx := {n - 1}\n{s} else {{\n\t\tprint(-1)\n\t}}\n}}\n"
    if shape == "switch":
        cases = "".join(f"\tcase {i}:\n\t\tprint({i})\n" for i in range(n))
        return f"func main() {{\n\tx := {n - 1}\n\tswitch x {{\n{cases}\t}}\n}}\n"
    if shape == "chain":
        terms = " + ".join(["x"] * n)
        return f"func main() {{\n\tx := 1\n\ty := {terms}\n\tprint(y)\n}}\n"
    raise SystemExit(f"unknown shape {shape}")

def timed(cmd):
    best = None
    for _ in range(runs):
        t = time.perf_counter()
        try:
            r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=timeout)
        except subprocess.TimeoutExpired:
            return f">{timeout:g}", None
        dt = time.perf_counter() - t
        if r.returncode != 0:
            return "fail", None
        best = dt if best is None else min(best, dt)
    return f"{best:.3f}", best

print(f"| binary | shape | N | check s | build s | run .pb s | run µs/unit | x2 |")
print(f"|---|---|---:|---:|---:|---:|---:|---:|")
for shape in shapes:
    prev = {}
    for n in sizes:
        src = os.path.join(out, f"{shape}_{n}.weft")
        with open(src, "w") as f:
            f.write(program(shape, n))
        for b in bins:
            pb = os.path.join(out, f"{shape}_{n}.{bins.index(b)}.pb")
            if os.path.exists(pb):
                os.remove(pb)
            check, _ = timed([b, "check", src])
            build, _ = timed([b, "build", src, "-o", pb])
            run, secs = (timed([b, "run", pb]) if os.path.exists(pb) else ("-", None))
            per = f"{secs / n * 1e6:.1f}" if secs else "-"
            ratio = f"{secs / prev[b]:.2f}" if secs and prev.get(b) else "-"
            prev[b] = secs
            print(f"| {b} | {shape} | {n} | {check} | {build} | {run} | {per} | {ratio} |", flush=True)
PY
